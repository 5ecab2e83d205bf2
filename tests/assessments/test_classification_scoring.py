"""Submissions of a classification campaign (Touché 2023 Task 4, CoFE) from the command line: imported with
import_runs, scored with evaluate_runs, the decided labels written with export_gold.

Every figure is checked against the organisers' own evaluation.py, run in a subprocess on the truth file (the lab's
toy truth, or our gold export) and the submission file: none of the expected values comes from our code. The gold
is the default rule's (adjudicated: an adjudicator's label where there is one, else the majority of the
judgments), which for the toy campaign, judged by its import source alone, is the source's truth.
"""

import csv
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from sklearn.metrics import precision_recall_fscore_support

from accounts.models import Role
from assessments.formats.cofe import parse_comments
from assessments.metrics import classification_significance as resampling
from assessments.metrics.classification import MEASURES, scores
from assessments.models import AuditEvent, Campaign, Document, Run, Topic
from assessments.services import classification
from assessments.services.adjudication import Decision, adjudicate
from assessments.services.judging import Labels, record_judgment
from tests.factories import UserFactory
from tests.task4_scorer import organisers_scores

pytestmark = pytest.mark.django_db

LABELS = ("In favor", "Against", "Other")
LANGUAGES = ("en", "fr", "de", "it", "el", "hu")
HEADER = ("id", "id_prop", "alignment", "comment", "depth", "thread_id", "last_comment_in_thread", "upvote", "downvote",
          "Topic", "lan", "time", "label")


@pytest.fixture
def cofe(db, command) -> Campaign:
    made = command("create_campaign", "cofe23", "--name", "CoFE stance", "--preset", "touche-2023-task4")
    assert made.code == 0, made.err
    return Campaign.objects.get(slug="cofe23")


@pytest.fixture
def toy(cofe, command, touche_data) -> Path:
    """The toy comments as items, the toy truth as the prior labels of the import source cofe-truth."""
    folder = touche_data / "2023-task4-toy"
    assert command("import_items", "cofe23", folder / "toy-input" / "data.tsv").code == 0
    assert command("import_items", "cofe23", folder / "toy-truth" / "data.tsv", "--assessor", "cofe-truth").code == 0
    return folder


def truth_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))


def write_run(path: Path, ids: list[str], labels: list[str]) -> Path:
    path.write_text("".join(f"{i}\t{label}\n" for i, label in zip(ids, labels, strict=True)), encoding="utf-8")
    return path


def evaluate(command, *options) -> list[dict]:
    done = command("evaluate_runs", "cofe23", "--format", "json", *options)
    assert done.code == 0, done.err
    return json.loads(done.out)


def assert_equal_to_the_organisers(command, touche_data, truth: Path, runs: dict[str, Path], tmp_path: Path, *rule):
    """evaluate_runs --by language, every measure, against evaluation.py on each run, to its 4 decimals."""
    expected = {tag: organisers_scores(touche_data, truth, path, tmp_path / f"{tag}.prototext") for tag, path in runs.items()}
    for measure in MEASURES:
        rows = {row["run"]: row for row in evaluate(command, "--measure", measure, "--by", "language", *rule)}
        assert set(rows) == set(runs)
        for tag, figures in expected.items():
            row = rows[tag]
            ours = {f"all-{measure.lower()}": round(row["value"], 4)}
            ours.update({f"{lang}-{measure.lower()}": round(v, 4) for lang, v in row["per_language"].items()})
            theirs = {key: value for key, value in figures.items() if key.endswith(f"-{measure.lower()}")}
            assert ours == theirs, (tag, measure)
            assert row["convention"] == "touche"


# ---------------------------------------------------------------------------------------------------------
# The lab's toy data


def test_the_toy_run_and_generated_runs_score_as_the_organisers_script_scores_them(toy, command, touche_data, tmp_path):
    truth = toy / "toy-truth" / "data.tsv"
    rows = truth_rows(truth)
    ids, gold = [r["id"] for r in rows], [r["label"] for r in rows]
    rng = random.Random(23)
    runs = {
        "run": toy / "toy-run" / "run.tsv",  # the lab's own: all ten right
        "uniform": write_run(tmp_path / "uniform.tsv", ids, [rng.choice(LABELS) for _ in ids]),
        "never-against": write_run(tmp_path / "never-against.tsv", ids, [rng.choice(("In favor", "Other")) for _ in ids]),
        "baseline": write_run(tmp_path / "baseline.tsv", ids, ["In favor"] * len(ids)),
        # In another order than the truth: the figures do not depend on it.
        "shuffled": write_run(tmp_path / "shuffled.tsv", ids[::-1], [g if i % 3 else "Other" for i, g in enumerate(gold)][::-1]),
    }

    imported = command("import_runs", "cofe23", *runs.values())

    assert imported.code == 0, imported.err
    assert "run.tsv: 1 run with 10 lines stored (1 new, 0 replaced); run run predicts 10 of the 10 comments" in imported.out
    assert Run.objects.get(tag="run").predictions == dict(line.split("\t") for line in (toy / "toy-run" / "run.tsv").read_text().splitlines())
    event = AuditEvent.objects.get(action=AuditEvent.Action.RUNS_IMPORTED)
    assert [r["tag"] for r in event.details["runs"]] == list(runs)
    # The organisers' script wants the truth's order; ours reads any.
    in_order = {**runs, "shuffled": write_run(tmp_path / "ordered.tsv", ids, [g if i % 3 else "Other" for i, g in enumerate(gold)])}
    assert_equal_to_the_organisers(command, touche_data, truth, in_order, tmp_path)
    # Naming the source gives the same gold here, since nobody else judged.
    assert evaluate(command, "--rule", "assessor:cofe-truth") == [
        {**row, "rule": "assessor:cofe-truth"} for row in evaluate(command)
    ]


def test_the_table_is_a_leaderboard_that_names_its_convention(toy, command, tmp_path):
    ids = [r["id"] for r in truth_rows(toy / "toy-truth" / "data.tsv")]
    command("import_runs", "cofe23", toy / "toy-run" / "run.tsv", write_run(tmp_path / "baseline.tsv", ids, ["In favor"] * 10))

    table = command("evaluate_runs", "cofe23", "--by", "language", "--ci", "0.95", "--test", "permutation").out.splitlines()

    assert table[0].split()[:3] == ["team", "run", "Macro"] and table[0].split()[-4:] == ["de", "en", "es", "fr"]
    assert [line.split()[0] for line in table[1:3]] == ["run", "baseline"]  # best first (no team: the tag leads)
    assert "convention touche: as the organisers' evaluation.py: a label never predicted has precision 1" in table
    assert any(line.startswith("intervals: percentile bootstrap over comments, 1,000 resamples") for line in table)
    sklearn = command("evaluate_runs", "cofe23", "--convention", "sklearn").out
    assert "convention sklearn: as scikit-learn with zero_division=0" in sklearn


def test_the_sklearn_convention_gives_precision_0_to_a_label_never_predicted(toy, command, tmp_path):
    rows = truth_rows(toy / "toy-truth" / "data.tsv")
    ids, gold = [r["id"] for r in rows], [r["label"] for r in rows]
    command("import_runs", "cofe23", write_run(tmp_path / "baseline.tsv", ids, ["In favor"] * len(ids)))
    assert "Against" in gold  # and never predicted

    touche = evaluate(command, "--measure", "Macro Precision")[0]["value"]
    sklearn = evaluate(command, "--measure", "Macro Precision", "--convention", "sklearn")[0]["value"]

    precision, *_ = precision_recall_fscore_support(gold, ["In favor"] * len(ids), average="macro", zero_division=0)
    assert sklearn == pytest.approx(precision) and touche == pytest.approx(precision + 0.5)
    assert evaluate(command, "--measure", "macro f1-score", "--convention", "sklearn")[0]["convention"] == "sklearn"


def test_intervals_and_the_group_of_the_best_are_given_per_row(toy, command, tmp_path):
    rows = truth_rows(toy / "toy-truth" / "data.tsv")
    ids = [r["id"] for r in rows]
    command("import_runs", "cofe23", toy / "toy-run" / "run.tsv", write_run(tmp_path / "other.tsv", ids, ["Other"] * 10))

    found = {row["run"]: row for row in evaluate(command, "--ci", "0.9", "--test", "permutation", "--seed", "7")}

    assert found["run"]["ci_low"] == found["run"]["ci_high"] == 1.0  # every draw of a perfect run is perfect
    assert found["other"]["ci_high"] == 0.0
    assert (found["run"]["ci_level"], found["run"]["ci_seed"], found["run"]["ci_resamples"]) == (0.9, 7, 1000)
    # All ten differ: 1,024 swaps are more than the 1,000 drawn, p = 1/1001 at most for the observed extreme.
    assert found["run"]["top_group"] and not found["other"]["top_group"]
    refused = command("evaluate_runs", "cofe23", "--test", "t")
    assert refused.code == 1 and "use permutation" in refused.err


# ---------------------------------------------------------------------------------------------------------
# Refusals: nothing is stored


@pytest.mark.parametrize("change, error", [
    (lambda lines: [*lines[:2], "comment_1\tIn favor", *lines[3:]], "bad.tsv:3: 'comment_1' is not an item of campaign cofe23"),
    (lambda lines: lines[:-1], "bad.tsv: 1 of the 10 comments with a decided label (rule adjudicated) have no prediction: comment_1390"),
    (lambda lines: [lines[0].replace("In favor", "Neutral"), *lines[1:]], "bad.tsv:1: label 'Neutral' of comment_886 is not one of the campaign's: In favor, Against, Other"),
    (lambda lines: [*lines, lines[4]], "bad.tsv:11: comment_242 appears twice (first on line 5)"),
    (lambda lines: [lines[0] + "\tx", *lines[1:]], "bad.tsv:1: expected comment_id<TAB>label"),
])
def test_a_bad_submission_is_refused_with_its_file_and_line(toy, command, tmp_path, change, error):
    lines = (toy / "toy-run" / "run.tsv").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.tsv"
    bad.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")
    good = tmp_path / "good.tsv"
    good.write_text("\n".join(lines) + "\n", encoding="utf-8")

    refused = command("import_runs", "cofe23", good, bad)

    assert refused.code == 1 and refused.err.startswith("error: "), refused.err
    assert error in refused.err
    assert not Run.objects.exists() and not AuditEvent.objects.filter(action=AuditEvent.Action.RUNS_IMPORTED).exists()


def test_a_tag_names_one_run_and_a_submission_is_never_replaced(toy, command, tmp_path):
    run = toy / "toy-run" / "run.tsv"
    assert command("import_runs", "cofe23", run).code == 0
    before = Run.objects.get().predictions
    changed = tmp_path / "run.tsv"
    changed.write_text(run.read_text().replace("Against", "Other"), encoding="utf-8")

    again = command("import_runs", "cofe23", changed)
    twice = command("import_runs", "cofe23", tmp_path / "run.tsv", tmp_path / "run.tsv")

    assert again.code == 1 and "run run is already in campaign cofe23 (from run.tsv); a tag names one run" in again.err
    assert twice.code == 1 and "run run is also in" in twice.err
    assert Run.objects.get().predictions == before and Run.objects.count() == 1


def test_a_submission_before_any_decided_label_is_checked_against_the_items(cofe, command, touche_data):
    folder = touche_data / "2023-task4-toy"
    assert "has no items yet" in command("import_runs", "cofe23", folder / "toy-run" / "run.tsv").err
    command("import_items", "cofe23", folder / "toy-input" / "data.tsv")

    done = command("import_runs", "cofe23", folder / "toy-run" / "run.tsv")

    assert done.code == 0 and "predicts 0 of the 0 comments with a decided label" in done.out
    nothing = command("evaluate_runs", "cofe23")
    assert nothing.code == 1 and "no comment with a decided label" in nothing.err
    board = classification.score_submissions(Campaign.objects.get(slug="cofe23"), ci=0.95, test="permutation")
    assert board.unjudged and board.as_json()[0]["value"] is None and "no comment has a decided label" in board.as_json()[0]["message"]


# ---------------------------------------------------------------------------------------------------------
# The gold export


def test_the_gold_export_reads_back_as_the_items_with_their_decided_labels(toy, command, tmp_path):
    out = tmp_path / "gold.tsv"

    done = command("export_gold", "cofe23", "--output", out)

    assert done.code == 0 and "10 comments, 10 with a label" in done.err
    items = parse_comments((toy / "toy-input" / "data.tsv").read_bytes(), source="input")
    truth = parse_comments((toy / "toy-truth" / "data.tsv").read_bytes(), source="truth")
    exported = parse_comments(out.read_bytes(), source="gold")
    assert [(c.id, c.text, c.language, c.proposal) for c in exported] == [(c.id, c.text, c.language, c.proposal) for c in items]
    assert [c.label for c in exported] == [c.label for c in truth]
    assert [c.fields for c in exported] == [c.fields for c in truth]  # the columns as last imported (the truth's)
    assert out.read_text(encoding="utf-8").splitlines()[0].split("\t") == list(HEADER)
    # To stdout, the same bytes; and they are the lab's own truth file, byte for byte.
    assert command("export_gold", "cofe23").out == out.read_text(encoding="utf-8")
    assert out.read_bytes() == (toy / "toy-truth" / "data.tsv").read_bytes()


def test_the_gold_export_marks_undecided_comments_and_says_how_many(cofe, command, touche_data):
    command("import_items", "cofe23", touche_data / "2023-task4-toy" / "toy-input" / "data.tsv")

    done = command("export_gold", "cofe23", "--rule", "majority")

    assert "warning: 10 of 10 comments have no decided label: written as ---" in done.err
    assert {c.label for c in parse_comments(done.out.encode(), source="gold")} == {None}
    bad = command("export_gold", "cofe23", "--rule", "mean")
    assert bad.code == 1 and "needs numeric labels" in bad.err


# ---------------------------------------------------------------------------------------------------------
# Gold from three human coders, a tie adjudicated


def comments_file(path: Path, rng: random.Random, n: int = 600) -> tuple[list[str], list[str]]:
    ids = [f"comment_{i * 7 + 3}" for i in range(n)]
    languages = [LANGUAGES[i % len(LANGUAGES)] for i in range(n)]
    rng.shuffle(languages)
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, delimiter="\t", lineterminator="\n")
        writer.writerow(HEADER)
        for i, (ident, lan) in enumerate(zip(ids, languages)):
            writer.writerow([ident, str(300 + i % 9), "---", f'Comment {i}, "quoted",\nover two lines.', "0.0", "", "False",
                             str(i % 5), "0", "Migration", lan, "2021-04-21T15:10:21+02:00", "---"])
    return ids, languages


@pytest.fixture
def coded(cofe, command, tmp_path) -> dict:
    """600 comments in six languages, each labelled by three human coders; where all three differ, an adjudicator
    decides. Returns the expected gold (worked out here, not by the code under test) and the coders' agreement."""
    rng = random.Random(2023)
    ids, languages = comments_file(tmp_path / "comments.tsv", rng)
    assert command("import_items", "cofe23", tmp_path / "comments.tsv").code == 0
    coders = [UserFactory(username=name) for name in ("cora", "cody", "cleo")]
    judge = UserFactory(username="ada-adjudicator", role=Role.ORGANISER)
    documents = {d.doc_id: d for d in Document.objects.filter(collection=cofe.collection)}
    topics = {t.number: t for t in Topic.objects.filter(campaign=cofe)}
    gold, unanimous, ties = {}, 0, 0
    for i, ident in enumerate(ids):
        truth = rng.choices(LABELS, (5, 3, 2))[0]
        given = [truth if rng.random() < 0.75 else rng.choice(LABELS) for _ in coders]
        if i % 50 == 7:  # a few three-way splits for certain
            given = list(LABELS)
        topic, document = topics[str(300 + i % 9)], documents[ident]
        for coder, label in zip(coders, given):
            record_judgment(topic=topic, document=document, assessor=coder, phase="main",
                            labels=Labels(values={"stance": label}))
        top, votes = Counter(given).most_common(1)[0]
        if votes == 1:
            ties += 1
            adjudicate(topic=topic, document=document, by=judge,
                       decision=Decision(labels={"stance": truth}, reason="read the proposal again"))
            gold[ident] = truth
        else:
            gold[ident] = top
        unanimous += votes == 3
    assert ties >= 12 and unanimous > 100
    return {"ids": ids, "languages": languages, "gold": gold, "unanimous": unanimous, "ties": ties, "rng": rng}


def test_runs_score_as_the_organisers_script_scores_them_on_the_exported_gold(coded, command, touche_data, tmp_path):
    truth = tmp_path / "gold.tsv"
    exported = command("export_gold", "cofe23", "--output", truth)
    assert exported.code == 0 and "600 comments, 600 with a label" in exported.err and "warning" not in exported.err
    ids, gold = coded["ids"], coded["gold"]
    assert {c.id: c.label for c in parse_comments(truth.read_bytes(), source="gold")} == gold
    rng = coded["rng"]
    labels = [gold[i] for i in ids]
    runs = {
        "mostly-right": write_run(tmp_path / "mostly-right.tsv", ids, [g if rng.random() < 0.7 else rng.choice(LABELS) for g in labels]),
        "uniform": write_run(tmp_path / "uniform.tsv", ids, [rng.choice(LABELS) for _ in ids]),
        "never-other": write_run(tmp_path / "never-other.tsv", ids, [rng.choice(LABELS[:2]) for _ in ids]),
        "greek-in-favor": write_run(tmp_path / "greek-in-favor.tsv", ids, [
            "In favor" if lan == "el" else g for g, lan in zip(labels, coded["languages"])
        ]),
    }
    assert command("import_runs", "cofe23", *runs.values()).code == 0

    assert_equal_to_the_organisers(command, touche_data, truth, runs, tmp_path)


def test_min_agreement_keeps_the_labels_enough_human_coders_gave(coded, command):
    everyone = command("export_gold", "cofe23", "--min-agreement", "1")
    two_thirds = command("export_gold", "cofe23", "--min-agreement", "0.6")

    kept = {c.id: c.label for c in parse_comments(everyone.out.encode(), source="gold") if c.label}
    assert len(kept) == coded["unanimous"] and all(coded["gold"][i] == label for i, label in kept.items())
    assert f"warning: {600 - coded['unanimous']} comments with a decided label have too little agreement" in everyone.err
    # The adjudicated three-way splits have one coder in three behind their label: below 0.6.
    ties = sum(1 for c in parse_comments(two_thirds.out.encode(), source="gold") if c.label is None)
    assert ties == coded["ties"]
    assert command("export_gold", "cofe23", "--min-agreement", "0").out == command("export_gold", "cofe23").out
    too_much = command("export_gold", "cofe23", "--min-agreement", "1.5")
    assert too_much.code == 1 and "error: the minimum agreement is a share between 0 and 1, not 1.5" in too_much.err


def test_an_import_sources_labels_alone_have_no_human_agreement(toy, command):
    done = command("export_gold", "cofe23", "--min-agreement", "0.5")
    assert "10 comments with a decided label have too little agreement among their human coders: written as --- (10 of them have no human coder)" in done.err


# ---------------------------------------------------------------------------------------------------------
# The service: queries, resampling


def test_scoring_reads_the_database_a_fixed_number_of_times(coded, django_assert_max_num_queries, tmp_path):
    ids = coded["ids"]
    campaign = Campaign.objects.get(slug="cofe23")
    rng = random.Random(1)
    for n in range(6):
        Run.objects.create(campaign=campaign, tag=f"r{n}", predictions={i: rng.choice(LABELS) for i in ids})

    with django_assert_max_num_queries(4):
        board = classification.score_submissions(campaign, by="language")

    assert len(board.results) == 6 and board.items == 600 and list(board.languages) == sorted(LANGUAGES)
    assert [r.value("Macro F1-Score") for r in board.results] == sorted((r.value("Macro F1-Score") for r in board.results), reverse=True)


def test_a_run_without_a_prediction_for_a_decided_comment_is_listed_unscored(toy):
    campaign = Campaign.objects.get(slug="cofe23")
    Run.objects.create(campaign=campaign, tag="partial", predictions={"comment_886": "In favor"})
    board = classification.score_submissions(campaign)
    row = board.as_json()[0]
    assert row["value"] is None and row["missing"] == 9 and "no prediction for 9 comments" in row["message"]


def test_each_bootstrap_draw_is_scored_as_the_scorer_scores_that_list():
    rng = random.Random(5)
    gold = [rng.choice(LABELS) for _ in range(40)]
    runs = [[rng.choice(LABELS[:2]) for _ in gold], list(gold)]
    coded = resampling.Coded(gold, runs)
    picks = [[rng.randrange(len(gold)) for _ in gold] for _ in range(5)] + [[0] * len(gold)]
    for pick in picks:
        counts = sum(coded.one_hot(0)[i] for i in pick)
        found = resampling.measure_arrays(counts, len(coded.labels))
        expected = scores([gold[i] for i in pick], [runs[0][i] for i in pick])
        assert {name: float(value) for name, value in found.items()} == pytest.approx(expected, abs=1e-12)


def test_the_permutation_test_is_exact_on_few_differences_and_symmetric():
    gold = ["In favor"] * 6 + ["Against"] * 4
    a = list(gold)
    b = gold[:7] + ["In favor"] * 3  # differs on 3 items: 8 swaps, enumerated
    diff, p = resampling.paired_permutation_test(gold, a, b, measure="Accuracy")
    # Accuracy differences over the 8 swaps: |k − (3 − k)|/10 for k swapped back; 0.3 is reached by 2 of 8.
    assert diff == pytest.approx(0.3) and p == pytest.approx(2 / 8)
    assert resampling.paired_permutation_test(gold, b, a, measure="Accuracy") == pytest.approx((-0.3, 2 / 8))
    assert resampling.paired_permutation_test(gold, a, a, measure="Macro F1-Score") == (0.0, 1.0)


def test_a_classification_campaign_scores_on_its_results_page_and_api(toy, command, client, tmp_path):
    from rest_framework.test import APIClient

    from accounts.models import User
    from tests.factories import MembershipFactory

    command("import_runs", "cofe23", toy / "toy-run" / "run.tsv")
    olivia = User.objects.create_user("olivia", password="x-long-enough-password", role=Role.ORGANISER)
    MembershipFactory(campaign=Campaign.objects.get(slug="cofe23"), user=olivia)
    client.force_login(olivia)
    api = APIClient()
    api.force_authenticate(olivia)

    page = client.get("/campaigns/cofe23/results/", {"by": "language"})
    rows = api.get("/api/campaigns/cofe23/results/", {"measure": "Accuracy", "by": "language"}).json()

    assert page.status_code == 200
    text = page.content.decode()
    assert "Macro F1-Score (fr)" in text and "convention touche: as the organisers&#x27; evaluation.py" in text
    assert text.count(">1.0000</td>") == 7 + 4  # every measure overall, the sorted one per language
    assert rows == [{**rows[0], "run": "run", "measure": "Accuracy", "value": 1.0, "convention": "touche"}]
    assert rows[0]["per_language"] == {"de": 1.0, "en": 1.0, "es": 1.0, "fr": 1.0}


def test_submissions_uploaded_through_the_api_are_imported_by_the_runs_job(toy, command, tmp_path, client, upload_root,
                                                                          django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from assessments.models import Job
    from tests.factories import MembershipFactory

    olivia = UserFactory(username="olivia", role=Role.ORGANISER)
    MembershipFactory(campaign=Campaign.objects.get(slug="cofe23"), user=olivia)
    client.force_login(olivia)
    good = (toy / "toy-run" / "run.tsv").read_bytes()
    bad = good.replace(b"comment_920\tAgainst", b"comment_920\tNeutral")

    with django_capture_on_commit_callbacks(execute=True):
        accepted = client.post("/api/campaigns/cofe23/runs/", {"file": [SimpleUploadedFile("team-a.tsv", good)], "team": "A"})
        refused = client.post("/api/campaigns/cofe23/runs/", {"file": [SimpleUploadedFile("team-b.tsv", bad)]})

    assert (accepted.status_code, refused.status_code) == (202, 202)
    done, failed = Job.objects.get(pk=accepted.json()["id"]), Job.objects.get(pk=refused.json()["id"])
    assert done.status == "succeeded" and "team-a.tsv: 1 run with 10 lines stored" in done.result["summary"]
    assert failed.status == "failed" and "team-b.tsv:7: label 'Neutral' of comment_920" in failed.message
    run = Run.objects.get()
    assert (run.tag, run.team, run.uploaded_by, len(run.predictions)) == ("team-a", "A", olivia, 10)


def test_the_resampling_module_imports_no_django():
    import subprocess
    import sys

    code = "import sys, assessments.metrics.classification_significance; sys.exit('django' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2]).returncode == 0
