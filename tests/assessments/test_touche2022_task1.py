"""Touché 2022 Task 1 (argument gists) end to end from the command line: args.me sentences, runs of sentence pairs,
a pool whose pairs show their two sentences, three dimensions judged through the assessor API, the three qrels
files written line-aligned as the lab published them, and coherence nDCG@5 as trec_eval (pytrec_eval) computes it
on the exported file.

The files are tests/data/touche2022-task1: five arguments of the processed args.me corpus (args_processed.csv, as
the lab shipped it; the fourth argument repeats the third under other ids, as args.me repeats arguments), two
topics, and two runs of pairs; one pair of run gistB names a sentence the corpus does not have.
"""

import io
import json
from html import escape
from pathlib import Path

import pytest
import pytrec_eval
from django.core.management import call_command
from django.urls import reverse
from ir_datasets.formats.touche import ToucheQualityCoherenceQrels

from accounts.models import User
from assessments.models import Assignment, Campaign, Document, Judgment, PoolEntry
from assessments.services.judging import Labels, record_judgment
from assessments.services.pairs import pair_parts, pair_text

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parents[1] / "data" / "touche2022-task1"
RUNS = [DATA / "touche22-gistA.txt", DATA / "touche22-gistB.txt"]
A1, A2, A3, A4, A5 = (f"S{source}-A0000000{n}" for source, n in (
    ("a1b2c3d4", 1), ("a1b2c3d4", 2), ("b5e6f7a8", 3), ("b5e6f7a8", 4), ("c9d0e1f2", 5)))
MISSING = f"Sdeadbeef-A0000000f__PREMISE__1,{A3}__CONC__1"


class _Source:
    """A file as ir_datasets' qrels readers take one (its download cache's interface)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def path(self) -> str:
        return str(self._path)

    def stream(self):
        return open(self._path, "rb")


def pair(first: str, second: str) -> str:
    return f"{first},{second}"


# What alice says of each pair she opens (relevance, quality, coherence); quality and coherence are asked of relevant
# pairs only, so a pair she finds not relevant gets relevance alone.
VERDICTS = {
    ("1", pair(f"{A1}__CONC__1", f"{A1}__PREMISE__1")): (2, 2, 2),
    ("1", pair(f"{A1}__CONC__1", f"{A1}__PREMISE__2")): (1, 1, 1),
    ("1", pair(f"{A2}__CONC__1", f"{A2}__PREMISE__1")): (2, 1, 2),
    ("1", pair(f"{A2}__CONC__1", f"{A2}__PREMISE__2")): (1, 2, 0),
    ("1", pair(f"{A1}__PREMISE__3", f"{A1}__CONC__1")): (1, 0, 1),
    ("1", pair(f"{A1}__CONC__1", f"{A1}__PREMISE__3")): (2, 1, 2),
    ("1", pair(f"{A1}__PREMISE__1", f"{A1}__PREMISE__2")): (0,),
    ("2", pair(f"{A3}__CONC__1", f"{A3}__PREMISE__1")): (2, 2, 2),
    ("2", pair(f"{A5}__CONC__1", f"{A5}__PREMISE__1")): (1, 1, 2),
    ("2", pair(f"{A3}__CONC__1", f"{A3}__PREMISE__2")): (1, 2, 1),
    ("2", pair(f"{A3}__PREMISE__1", f"{A3}__PREMISE__2")): (0,),
    ("2", pair(f"{A5}__PREMISE__1", f"{A3}__CONC__1")): (1, 0, 0),
    ("2", pair(f"{A4}__CONC__1", f"{A4}__PREMISE__1")): (2, 2, 2),  # the same text as A3's: a twin, never opened
    ("2", pair(f"{A4}__CONC__1", f"{A4}__PREMISE__2")): (1, 2, 1),
}


def command(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def shown(text: str) -> str:
    """A sentence as the judge page shows plain text: escaped, a line break as <br>."""
    return escape(text).replace("\n", "<br>")


def qrels_rows(path: Path) -> list[tuple[str, str, int]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        topic, zero, doc, label = line.split(" ")
        assert zero == "0"
        rows.append((topic, doc, int(label)))
    return rows


@pytest.fixture
def campaign(db, tmp_path, settings) -> Campaign:
    settings.MEDIA_ROOT = tmp_path / "media"
    command("create_user", "olivia", "--role", "organiser", "--password", "gists-2022-olivia-pass")
    command("create_user", "alice", "--role", "assessor", "--password", "gists-2022-alice-pass")
    command("create_campaign", "gists22", "--name", "Touché 2022 Task 1", "--preset", "touche-2022-task1", "--organisers", "olivia")
    out, _ = command("import_documents", "gists22", str(DATA / "args_processed.csv"))
    assert "15 documents read, 15 new" in out
    command("import_topics", "gists22", str(DATA / "topics.tsv"))
    command("import_runs", "gists22", *map(str, RUNS))
    return Campaign.objects.get(slug="gists22")


def test_the_sentences_are_documents_with_their_arguments_conclusion(campaign):
    sentence = Document.objects.get(collection=campaign.collection, doc_id=f"{A2}__PREMISE__1")

    assert (sentence.title, sentence.body, sentence.metadata, sentence.has_text) == (
        "School uniforms should not be mandatory", "Children express who they are through the clothes they choose.",
        {"argument": A2}, True,
    )
    assert Document.objects.filter(collection=campaign.collection).count() == 15
    assert set(campaign.runs.values_list("tag", flat=True)) == {"gistA", "gistB"}


def test_the_pool_shows_each_pair_as_its_two_sentences_in_the_runs_order_and_names_a_missing_sentence(campaign):
    out, err = command("build_pool", "gists22", "--depth", "5")

    assert f"warning: pair {MISSING}: sentence Sdeadbeef-A0000000f__PREMISE__1 is not in the collection" in err
    assert "missing from the collection (1):" in out and f"2 {MISSING}" in out
    documents = {d.doc_id: d for d in Document.objects.filter(pool_entries__topic__campaign=campaign)}
    assert len(documents) == 15  # 7 pairs for topic 1, 8 for topic 2
    reversed_pair = documents[pair(f"{A1}__PREMISE__3", f"{A1}__CONC__1")]
    assert reversed_pair.has_text and reversed_pair.body == pair_text(
        ("A uniform makes it plain who belongs on the school grounds.", "School uniforms should be mandatory"),
        ("School uniforms should be mandatory.", "School uniforms should be mandatory"),
    )
    assert reversed_pair.metadata == {
        "pair": [f"{A1}__PREMISE__3", f"{A1}__CONC__1"], "arguments": [A1, A1],
        "conclusions": ["School uniforms should be mandatory"] * 2,
    }
    across = documents[pair(f"{A5}__PREMISE__1", f"{A3}__CONC__1")]
    assert across.body.index("Chernobyl") < across.body.index("Nuclear energy is a good idea.")
    assert "Conclusion of its argument: Nuclear power is too dangerous" in across.body
    assert not documents[MISSING].has_text  # a stub until its sentence arrives, as any missing document
    # Pairs of the same text (A3's and A4's, the same argument posted twice) are twins, whose labels are copied.
    for n in (1, 2):
        a3, a4 = (PoolEntry.objects.get(topic__campaign=campaign, document__doc_id=pair(f"{a}__CONC__1", f"{a}__PREMISE__{n}"))
                  for a in (A3, A4))
        assert sorted([a3.duplicate_of_id, a4.duplicate_of_id], key=str) in ([a3.pk, None], [a4.pk, None])
    assert PoolEntry.objects.filter(topic__campaign=campaign, duplicate_of__isnull=False).count() == 2


def test_importing_the_sentences_after_the_pool_fills_the_pairs_in(db, tmp_path):
    command("create_campaign", "late22", "--name", "Late", "--preset", "touche-2022-task1")
    command("import_topics", "late22", str(DATA / "topics.tsv"))
    command("import_runs", "late22", *map(str, RUNS))
    command("build_pool", "late22", "--depth", "5")
    campaign = Campaign.objects.get(slug="late22")
    assert not Document.objects.filter(collection=campaign.collection, has_text=True).exists()

    out, err = command("import_documents", "late22", str(DATA / "args_processed.csv"), "--only-pooled")

    assert "14 pooled pairs of sentences given their text" in out
    assert f"warning: pair {MISSING}: sentence Sdeadbeef-A0000000f__PREMISE__1 is not in the collection" in err
    pairs = Document.objects.filter(collection=campaign.collection, doc_id__contains=",")
    assert sorted(pairs.values_list("has_text", flat=True)) == [False] + [True] * 14
    # Only the sentences the pooled pairs are made of were kept.
    needed = {part for doc_id in pairs.values_list("doc_id", flat=True) for part in pair_parts(doc_id) or ()}
    assert set(Document.objects.filter(collection=campaign.collection).exclude(doc_id__contains=",")
               .values_list("doc_id", flat=True)) == needed - {"Sdeadbeef-A0000000f__PREMISE__1"}
    # Importing again changes nothing.
    again, _ = command("import_documents", "late22", str(DATA / "args_processed.csv"), "--only-pooled")
    assert "pairs of sentences given" not in again


def test_a_2022_task1_campaign_runs_end_to_end_to_three_aligned_qrels_and_coherence_ndcg(campaign, client, tmp_path):
    command("build_pool", "gists22", "--depth", "5")
    command("assign_topics", "gists22", "--auto", "--assessors", "alice")
    Campaign.objects.filter(pk=campaign.pk).update(phase="main")  # main-phase topics open with the main phase

    # alice judges every pair she is given to open, through the assessor API, three dimensions at once.
    client.force_login(User.objects.get(username="alice"))
    opened = 0
    for assignment in Assignment.objects.filter(topic__campaign=campaign, assessor__username="alice"):
        entries = PoolEntry.objects.filter(topic=assignment.topic, duplicate_of__isnull=True, document__has_text=True)
        for entry in entries.select_related("document", "topic"):
            page = client.get(reverse("annotation:document", args=[assignment.pk, entry.document_id]), follow=True)
            assert page.status_code == 200
            first, second = (Document.objects.get(collection=campaign.collection, doc_id=part).body
                             for part in pair_parts(entry.document.doc_id) or ())
            html = page.content.decode()
            html = html[html.index('id="doc-rich"'):]  # the document as the judge page shows it
            assert html.index(shown(first)) < html.index(shown(second)), entry.document.doc_id  # the run's order
            verdict = VERDICTS[(entry.topic.number, entry.document.doc_id)]
            labels = dict(zip(("relevance", "quality", "coherence"), verdict))
            response = client.put(reverse("work-judgment", args=[assignment.pk, entry.pk]), {"labels": labels},
                                  content_type="application/json")
            assert response.status_code == 200, response.content
            opened += 1
    assert opened == 12  # 14 pairs with text, two of them twins
    # The twins (A3's pairs and A4's, one of each two opened) got the labels of the one alice opened.
    twins = set(PoolEntry.objects.filter(topic__campaign=campaign, duplicate_of__isnull=False).values_list("document__doc_id", flat=True))
    copied = Judgment.objects.filter(topic__campaign=campaign, source="duplicate").values_list("document__doc_id", flat=True)
    assert set(copied) == twins and len(twins) == 2 and {doc[:19] for doc in twins} <= {A3, A4}

    out, err = command("export_qrels", "gists22", "--aligned", "--output-dir", str(tmp_path / "qrels"))

    files = {kind: tmp_path / "qrels" / f"gists22-{kind}.qrels" for kind in ("relevance", "quality", "coherence")}
    rows = {kind: qrels_rows(path) for kind, path in files.items()}
    assert "3 aligned files of 14 lines each" in out
    assert "warning" not in err
    assert len(rows["relevance"]) == len(rows["quality"]) == len(rows["coherence"]) == 14
    keys = [[(topic, doc) for topic, doc, _ in rows[kind]] for kind in files]
    assert keys[0] == keys[1] == keys[2]
    assert MISSING not in {doc for _, doc in keys[0]}  # never judged: a stub
    by_pair = {(topic, doc): tuple(rows[kind][i][2] for kind in files) for i, (topic, doc) in enumerate(keys[0])}
    for key, verdict in VERDICTS.items():
        assert by_pair[key] == (verdict if len(verdict) == 3 else (0, 0, 0)), key  # not relevant: quality and coherence 0
    # ir_datasets reads the lab's three files by zipping their lines and refusing any line whose topic or pair differs.
    zipped = ToucheQualityCoherenceQrels(*(_Source(files[kind]) for kind in ("relevance", "quality", "coherence")), {})
    assert [(q.query_id, q.doc_id, (q.relevance, q.quality, q.coherence)) for q in zipped.qrels_iter()] == [
        (topic, doc, by_pair[topic, doc]) for topic, doc in keys[0]]
    # Each file is also the plain export of its dimension, and was kept as a snapshot.
    for kind, path in files.items():
        plain, _ = command("export_qrels", "gists22", "--kind", kind)
        assert plain == path.read_text(encoding="utf-8"), kind
    assert sorted(campaign.qrels_snapshots.values_list("kind", "line_count")) == sorted(
        [("coherence", 14), ("quality", 14), ("relevance", 14)] * 2)

    out, _ = command("evaluate_runs", "gists22", "--kind", "coherence", "--measure", "nDCG@5", "--format", "json")

    qrels: dict[str, dict[str, int]] = {}
    for topic, doc, label in rows["coherence"]:
        qrels.setdefault(topic, {})[doc] = label
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5"})
    results = {row["run"]: row for row in json.loads(out)}
    assert set(results) == {"gistA", "gistB"}
    for path in RUNS:
        run: dict[str, dict[str, float]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            topic, _, doc, _rank, score, tag = line.split()
            run.setdefault(topic, {})[doc] = float(score)
        expected = {topic: values["ndcg_cut_5"] for topic, values in evaluator.evaluate(run).items()}
        row = results[tag]
        assert (row["kind"], row["measure"]) == ("coherence", "nDCG@5")
        assert row["per_topic"] == pytest.approx(expected, abs=1e-12)
        assert row["mean"] == pytest.approx(sum(expected.values()) / len(expected), abs=1e-12)
        assert 0 < row["mean"] < 1 and len(set(expected.values())) == 2  # graded, not all or nothing


def test_an_aligned_export_leaves_out_a_pair_still_lacking_a_label_with_a_warning(campaign, tmp_path):
    command("build_pool", "gists22", "--depth", "5")
    alice = User.objects.get(username="alice")
    topic = campaign.topics.get(number="1")
    for doc_id, labels in ((pair(f"{A1}__CONC__1", f"{A1}__PREMISE__1"), {"relevance": 2, "quality": 1, "coherence": 2}),
                           (pair(f"{A1}__CONC__1", f"{A1}__PREMISE__2"), {"relevance": 2, "quality": 1}),
                           (pair(f"{A1}__PREMISE__1", f"{A1}__PREMISE__2"), {"relevance": 0})):
        document = Document.objects.get(collection=campaign.collection, doc_id=doc_id)
        record_judgment(topic=topic, document=document, assessor=alice, phase="main", labels=Labels(labels))

    out, err = command("export_qrels", "gists22", "--aligned", "--output-dir", str(tmp_path))

    incomplete = pair(f"{A1}__CONC__1", f"{A1}__PREMISE__2")
    assert f"warning: topic 1 document {incomplete}: left out of every file, it has no coherence label" in err
    assert (tmp_path / "gists22-coherence.qrels").read_text() == (
        f"1 0 {pair(f'{A1}__CONC__1', f'{A1}__PREMISE__1')} 2\n1 0 {pair(f'{A1}__PREMISE__1', f'{A1}__PREMISE__2')} 0\n"
    )
    assert (tmp_path / "gists22-quality.qrels").read_text().count("\n") == 2
    assert not list(tmp_path.glob(".*.part"))


def test_a_judged_pair_keeps_its_text_when_its_sentences_change_and_an_unjudged_one_follows_them(campaign, tmp_path):
    command("build_pool", "gists22", "--depth", "5")
    judged_pair = pair(f"{A1}__CONC__1", f"{A1}__PREMISE__1")
    unjudged_pair = pair(f"{A1}__PREMISE__1", f"{A1}__PREMISE__2")
    before = {d.doc_id: d.body for d in Document.objects.filter(doc_id__in=[judged_pair, unjudged_pair])}
    record_judgment(topic=campaign.topics.get(number="1"), assessor=User.objects.get(username="alice"), phase="main",
                    document=Document.objects.get(collection=campaign.collection, doc_id=judged_pair),
                    labels=Labels({"relevance": 2, "quality": 2, "coherence": 2}))
    changed = tmp_path / "args_processed.csv"
    text = (DATA / "args_processed.csv").read_text(encoding="utf-8")
    changed.write_text(text.replace("whatever their parents earn", "whatever their parents make"), encoding="utf-8")

    out, err = command("import_documents", "gists22", str(changed))

    assert "1 updated" in out and "1 pooled pairs of sentences given their text" in out
    assert f"warning: pair {judged_pair} has judgments, so it keeps the text they were given to" in err
    after = {d.doc_id: d.body for d in Document.objects.filter(doc_id__in=[judged_pair, unjudged_pair])}
    assert after[judged_pair] == before[judged_pair]
    assert "whatever their parents make" in after[unjudged_pair] and after[unjudged_pair] != before[unjudged_pair]
