"""The real check: Team Shanks' runs on the Touché 2020 Task 1 topics, imported like any campaign's runs, and
the official corrected qrels imported with import_qrels, evaluated by `evaluate_runs --format json`.

The expected numbers are trec_eval's own output (`trec_eval -q -m all_trec`, run by the team; see the data
README), read from the reference files, and pytrec_eval (trec_eval's code, run here) where no reference exists:
run 4's reference file is a mislabelled copy of run 3's, so run 4 is checked against pytrec_eval only.
"""

import io
import json

import pytest
import pytrec_eval
from django.core.management import call_command

from assessments.models import Campaign
from assessments.services.evaluation import evaluate_runs
from assessments.services.imports.runs import import_runs
from tests.factories import CampaignFactory, TopicFactory

pytestmark = pytest.mark.django_db
REFERENCED_RUNS = (1, 2, 3, 5)


@pytest.fixture
def shanks(touche_data, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    campaign = CampaignFactory(slug="touche20-task1", preset="touche-2020-task1")
    for position, number in enumerate(range(1, 51)):
        TopicFactory(campaign=campaign, number=str(number), position=position)
    folder = touche_data / "2020-task1"
    runs = [folder / "runs-shanks-posthoc" / f"shanks-run-{n}.txt" for n in range(1, 6)]
    import_runs(campaign=campaign, paths=runs, team="Shanks")
    call_command("import_qrels", campaign.slug, str(folder / "qrels-relevance.txt"), "--kind", "relevance",
                 "--assessor", "touche2020", stdout=io.StringIO(), stderr=io.StringIO())
    return folder


def reference_ndcg_cut_5(folder, n: int) -> dict[str, str]:
    """qid (or "all") -> ndcg_cut_5 exactly as trec_eval printed it."""
    values = {}
    for line in (folder / "reference-trec-eval" / f"run{n}.trec_eval-q.txt").read_text().splitlines():
        measure, qid, value = (field.strip() for field in line.split("\t"))
        if measure == "ndcg_cut_5":
            values[qid] = value
    return values


def run_lines(path) -> dict[str, list[tuple[str, int, float]]]:
    lines: dict[str, list[tuple[str, int, float]]] = {}
    for line in path.read_text().splitlines():
        topic, _, doc, rank, score, _tag = line.split()
        lines.setdefault(topic, []).append((doc, int(rank), float(score)))
    return lines


def pytrec_ndcg_cut_5(folder, n: int, *, by_rank: bool = False) -> dict[str, float]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels-relevance.txt").read_text().splitlines():
        topic, _, doc, label = line.split()
        qrels.setdefault(topic, {})[doc] = int(label)
    lines = run_lines(folder / "runs-shanks-posthoc" / f"shanks-run-{n}.txt")
    scored = {t: {doc: float(-rank if by_rank else score) for doc, rank, score in entries} for t, entries in lines.items()}
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5"}).evaluate(scored)
    return {topic: values["ndcg_cut_5"] for topic, values in evaluated.items()}


def test_evaluate_runs_reproduces_trec_evals_ndcg_cut_5_for_every_topic(shanks):
    out = io.StringIO()
    call_command("evaluate_runs", "touche20-task1", "--format", "json", stdout=out)
    rows = {row["run"]: row for row in json.loads(out.getvalue())}
    assert set(rows) == {f"shanks-run-{n}" for n in range(1, 6)}
    for n in REFERENCED_RUNS:
        row, reference = rows[f"shanks-run-{n}"], reference_ndcg_cut_5(shanks, n)
        assert (row["team"], row["kind"], row["measure"]) == ("Shanks", "relevance", "nDCG@5")
        assert {topic: f"{value:.4f}" for topic, value in row["per_topic"].items()} == {
            topic: value for topic, value in reference.items() if topic != "all"
        }, n
        assert f"{row['mean']:.4f}" == reference["all"]
    # The data README's means, as a last look at the whole: runs 1 and 3 score alike.
    assert [round(rows[f"shanks-run-{n}"]["mean"], 4) for n in REFERENCED_RUNS] == [0.6407, 0.6213, 0.6407, 0.4513]
    # Run 4 has no reference of its own: trec_eval's code, run here, is the reference.
    expected = pytrec_ndcg_cut_5(shanks, 4)
    assert rows["shanks-run-4"]["per_topic"] == pytest.approx(expected, abs=1e-12)


def test_the_rank_column_order_and_judged_at_5(shanks):
    qrels = {tuple(line.split()[::2]) for line in (shanks / "qrels-relevance.txt").read_text().splitlines()}
    board = evaluate_runs(campaign=Campaign.objects.get(slug="touche20-task1"), order="rank")
    results = {result.tag: result.scores["relevance"] for result in board.results}
    for n in range(1, 6):
        scores = results[f"shanks-run-{n}"]
        assert scores.per_topic == pytest.approx(pytrec_ndcg_cut_5(shanks, n, by_rank=True), abs=1e-12)
        # judged@5 by hand: the share of each topic's five best-ranked documents that the qrels hold.
        lines = run_lines(shanks / "runs-shanks-posthoc" / f"shanks-run-{n}.txt")
        judged = [
            sum((topic, doc) in qrels for doc, _, _ in sorted(entries, key=lambda e: e[1])[:5]) / 5
            for topic, entries in lines.items() if topic in scores.per_topic
        ]
        assert scores.judged_at_k == pytest.approx(sum(judged) / len(judged))
