"""Agreement and adjudication on an image campaign's training topic (Touché Task 3), question by question.

Three assessors judge the same images as the assessor API does (services.judging.judge_entry). The agreement
command and page give each question's Cohen's kappa per pair, Fleiss' kappa and Krippendorff's alpha as
scikit-learn, statsmodels and the krippendorff package compute them on the answers a qrels file would hold: PRO and
CON are asked only of an on-topic image, and where they were not asked, or were left unmarked, the answer is no
(the scheme's `otherwise` and `unanswered`). A disagreement on ONTOPIC or PRO is listed for adjudication, and the
adjudicated answers are what the lab's qrels file exports under the adjudicated rule."""

import json
from itertools import combinations

import krippendorff
import numpy as np
import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from assessments.formats.image_runs import write_image_run
from assessments.models import Assignment, Campaign, PoolEntry
from assessments.selectors.agreement import Scope, list_disagreements
from assessments.services.judging import Labels, judge_entry

pytestmark = pytest.mark.django_db

QUESTIONS = ("ONTOPIC", "PRO", "CON")
ASSESSORS = ("alice", "bob", "carol")


def image(n: int) -> str:
    return f"I{n:016x}"


# What alice, bob and carol mark per image: 0 (off topic), or 1 (on topic) and the sides they answer ("PRO": marked
# yes, "PRO=0": marked no; a side not listed is left unmarked). None: not judged (carol leaves image 10 alone, so
# alpha has a missing value and her kappas are on nine images).
MARKS = {
    1: ((1, "PRO"), (1, "PRO"), (1, "PRO", "CON=0")),
    2: ((1, "CON"), (1, "PRO=0", "CON"), (0,)),
    3: ((0,), (0,), (0,)),
    4: ((1, "PRO", "CON"), (1, "PRO"), (1, "CON")),
    5: ((0,), (1, "PRO"), (0,)),  # on topic? bob says yes, the others no
    6: ((1, "PRO"), (1,), (1, "PRO")),  # pro? bob leaves it unmarked: a no
    7: ((1, "CON"), (1, "CON"), (1, "CON")),
    8: ((0,), (0,), (1,)),
    9: ((1, "PRO"), (1, "PRO"), (1, "PRO")),
    10: ((1,), (0,), None),
}


def labels_of(mark: tuple) -> dict[str, int]:
    """The labels an assessor saves: ONTOPIC, and on an on-topic image the sides they answered."""
    labels = {"ONTOPIC": mark[0]}
    for side in mark[1:]:
        name, _, value = side.partition("=")
        labels[name] = int(value or 1)
    return labels


def answers(mark: tuple) -> dict[str, int]:
    """The three answers of one judgment as the lab's qrels read it: a side not asked (off topic) or not marked is 0."""
    labels = labels_of(mark)
    on_topic = labels["ONTOPIC"]
    return {"ONTOPIC": on_topic, "PRO": labels.get("PRO", 0) if on_topic else 0, "CON": labels.get("CON", 0) if on_topic else 0}


def reference(question: str) -> np.ndarray:
    """assessors × images, the answers to `question`, NaN where an assessor did not judge the image."""
    return np.array([
        [np.nan if marks[i] is None else answers(marks[i])[question] for marks in MARKS.values()]
        for i in range(len(ASSESSORS))
    ])


def reference_kappa(question: str, a: str, b: str) -> float:
    """scikit-learn's Cohen's kappa of two assessors' answers to `question`, on the images both judged."""
    ratings = reference(question)
    x, y = ratings[ASSESSORS.index(a)], ratings[ASSESSORS.index(b)]
    both = ~np.isnan(x) & ~np.isnan(y)
    return cohen_kappa_score(x[both], y[both])


@pytest.fixture
def campaign(db, command, tmp_path):
    """An image campaign whose topic 1 is a training topic that alice, bob and carol judge: its ten images pooled
    from a run's PRO and CON lists (the collection has none of them: they are pooled as stubs)."""
    assert command("create_campaign", "img-agree", "--name", "Image agreement", "--preset", "touche-2023-task3").code == 0
    (tmp_path / "topics.tsv").write_text("1\tShould teachers get tenure?\n2\tIs vaping with e-cigarettes safe?\n")
    assert command("import_topics", "img-agree", tmp_path / "topics.tsv").code == 0
    lines = [("1", "PRO" if n <= 5 else "CON", image(n), (n - 1) % 5 + 1, 1.0 / n) for n in MARKS]
    (tmp_path / "run.txt").write_text(write_image_run(lines, tag="baseline"))
    assert command("import_runs", "img-agree", tmp_path / "run.txt").code == 0
    assert command("build_pool", "img-agree", "--depth", "10").code == 0
    for name in ASSESSORS:
        assert command("create_user", name, "--role", "assessor", "--password", f"images-{name}-password").code == 0
    assert command("assign_topics", "img-agree", "--mark-training", "--topics", "1").code == 0
    done = command("assign_topics", "img-agree", "--assessors", ",".join(ASSESSORS), "--topics", "1", "--phase", "training")
    assert done.code == 0, done.err
    return Campaign.objects.get(slug="img-agree")


@pytest.fixture
def judged(campaign):
    entries = {e.document.doc_id: e for e in PoolEntry.objects.filter(topic__campaign=campaign).select_related("document")}
    for i, name in enumerate(ASSESSORS):
        assignment = Assignment.objects.select_related("topic__campaign", "assessor").get(assessor__username=name, phase="training")
        for n, marks in MARKS.items():
            if marks[i] is not None:
                judge_entry(assignment=assignment, entry=entries[image(n)], labels=Labels(labels_of(marks[i])), time_spent_ms=4000)
    return campaign


def test_the_command_gives_each_questions_kappas_and_alpha_as_the_reference_tools(judged, command):
    done = command("agreement", "img-agree", "--phase", "training", "--format", "json")
    assert done.code == 0, done.err
    figures = json.loads(done.out)["dimensions"]

    assert list(figures) == list(QUESTIONS)
    for question in QUESTIONS:
        ratings = reference(question)
        got = figures[question]
        assert got["n_items"] == len(MARKS) and got["alpha_level"] == "nominal", question
        pairs = {(p["a"], p["b"]): p for p in got["cohen"]}
        assert set(pairs) == set(combinations(ASSESSORS, 2)), question
        for (a, b), pair in pairs.items():
            assert pair["n_items"] == (len(MARKS) - 1 if "carol" in (a, b) else len(MARKS))
            assert pair["unweighted"] == pytest.approx(reference_kappa(question, a, b)), (question, a, b)
        alpha = krippendorff.alpha(reliability_data=ratings, level_of_measurement="nominal", value_domain=[0, 1])
        assert got["alpha"] == pytest.approx(alpha), question
        full = ratings[:, ~np.isnan(ratings).any(axis=0)].T.astype(int)
        assert got["fleiss"] == pytest.approx(fleiss_kappa(aggregate_raters(full, n_cat=2)[0])), question
        assert got["fleiss_items"] == len(full)


def test_the_page_shows_the_same_figures_per_question(judged, client, admin_user, command):
    client.force_login(admin_user)
    response = client.get(reverse("assessments:agreement", args=["img-agree"]), {"phase": "training"})

    assert response.status_code == 200
    shown = response.context["board"].agreement.dimensions
    by_command = json.loads(command("agreement", "img-agree", "--phase", "training", "--format", "json").out)["dimensions"]
    assert {q: shown[q].to_json() for q in shown} == by_command
    for question in QUESTIONS:
        assert shown[question].title in response.content.decode()


def test_a_side_not_asked_counts_as_a_no_and_one_left_unmarked_too(judged, command):
    # Image 3: all off topic, so nobody was asked PRO, yet all three agree it supports neither side; image 6: bob
    # left PRO unmarked on an on-topic image, a no beside the others' yes.
    rows = {(row.doc_id, name): spread for row in list_disagreements(campaign=judged, scope=Scope("training")).page
            for name, spread in row.spread.items()}
    assert (image(3), "PRO") not in rows
    assert rows[(image(6), "PRO")] == 1.0 and rows[(image(6), "ONTOPIC")] == 0.0


def test_disagreements_on_ontopic_and_pro_are_adjudicated_into_the_lab_qrels(judged, client, admin_user, command):
    disputed = {row.doc_id: row for row in list_disagreements(campaign=judged, scope=Scope("training")).page}
    assert {image(5), image(6)} <= set(disputed)
    assert disputed[image(5)].spread["ONTOPIC"] == 1.0 and disputed[image(6)].spread["PRO"] == 1.0

    def qrels(rule: str) -> dict[tuple[str, str], int]:
        done = command("export_qrels", "img-agree", "--phase", "training", "--rule", rule)
        assert done.code == 0, done.err
        return {(doc, question): int(value) for _, question, doc, value in (line.split() for line in done.out.splitlines())}

    before = qrels("majority")
    assert [before[(image(5), q)] for q in QUESTIONS] == [0, 0, 0]  # two of three say off topic
    assert [before[(image(6), q)] for q in QUESTIONS] == [1, 1, 0]  # two of three say pro

    client.force_login(admin_user)
    page = reverse("assessments:disagreements", args=["img-agree"])
    assert client.get(page, {"phase": "training"}).status_code == 200
    off_topic_but_pro = {"ONTOPIC": "0", "PRO": "1", "CON": "", "reason": "looked again"}
    refused = client.post(reverse("assessments:adjudicate", args=["img-agree", "1", disputed[image(5)].document_id]), off_topic_but_pro)
    assert refused.status_code == 400 and "PRO is asked only when ONTOPIC ≥ 1" in refused.content.decode()
    for n, decision in ((5, {"ONTOPIC": "1", "PRO": "1"}), (6, {"ONTOPIC": "1", "PRO": "0", "CON": "0"})):
        url = reverse("assessments:adjudicate", args=["img-agree", "1", disputed[image(n)].document_id])
        response = client.post(f"{url}?phase=training", {"CON": "", **decision, "reason": "looked again at the image"})
        assert response.status_code == 302, response.content.decode()

    after = qrels("adjudicated")
    assert [after[(image(5), q)] for q in QUESTIONS] == [1, 1, 0]  # CON left undecided on an on-topic image: a no
    assert [after[(image(6), q)] for q in QUESTIONS] == [1, 0, 0]
    assert {key: value for key, value in after.items() if key[0] not in (image(5), image(6))} == {
        key: value for key, value in before.items() if key[0] not in (image(5), image(6))
    }


def test_assessors_are_flagged_per_question_by_their_mean_pairwise_kappa(judged, command):
    data = json.loads(command("agreement", "img-agree", "--phase", "training", "--format", "json").out)

    flagged = {}
    for question in QUESTIONS:
        means = {name: np.mean([reference_kappa(question, name, other) for other in ASSESSORS if other != name]) for name in ASSESSORS}
        shown = {row["assessor"]: row for row in data["dimensions"][question]["assessors"]}
        assert {name: row["mean_kappa"] for name, row in shown.items()} == pytest.approx(means), question
        flagged[question] = {name for name, row in shown.items() if row["flagged"]}
        assert flagged[question] == {name for name, mean in means.items() if mean < data["threshold"]}, question
    # Bob and carol fall below the pass mark on the on-topic question only: a flag names its question.
    assert flagged == {"ONTOPIC": {"bob", "carol"}, "PRO": set(), "CON": set()}
    text = command("agreement", "img-agree", "--phase", "training").out
    for question in QUESTIONS:
        assert f"{question} (nominal: 1, 0): {len(MARKS)} documents judged by two or more assessors" in text


def test_the_adjudicator_sees_the_image_beside_the_disagreement(judged, client, admin_user):
    entry = PoolEntry.objects.select_related("document").get(topic__campaign=judged, document__doc_id=image(5))
    entry.document.metadata = {"image": {"file": "img-agree/I5.png", "content_type": "image/png", "width": 640, "height": 480}}
    entry.document.save(update_fields=["metadata"])
    client.force_login(admin_user)

    listed = client.get(reverse("assessments:disagreements", args=["img-agree"]), {"phase": "training"}).content.decode()
    shown = client.get(reverse("assessments:agreement_document", args=["img-agree", entry.document_id])).content.decode()

    assert reverse("assessments:image_thumbnail", args=["img-agree", entry.document_id]) in listed
    decided = client.get(reverse("assessments:adjudicate", args=["img-agree", "1", entry.document_id])).content.decode()
    for page in (shown, decided):
        assert f'src="{reverse("assessments:image", args=["img-agree", entry.document_id])}"' in page
        assert "no text for this document" not in page
