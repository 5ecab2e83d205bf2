"""The judge-impact report and qrels by source on a campaign whose answers are known (judge_impact_campaign):
a judge that agrees with the assessors moves nothing, one that inflates one run's documents favours it and lifts
it; hybrid qrels are the assessors' where they judged; every column is what trec_eval (pytrec_eval) computes from
the file `export_qrels --sources` writes; kappa is scikit-learn's."""

import json

import pytest
import pytrec_eval
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from assessments.formats.qrels import parse_qrels
from assessments.models import AuditEvent, QrelsSnapshot
from assessments.services import exports, qrels_sources
from assessments.services.judge_impact import judge_impact
from tests.assessments.judge_impact_campaign import (
    GRADES,
    OFFSETS,
    TOPICS,
    build_campaign,
    doc,
    human_qrels,
    label,
    local_judge,
    machine_grades,
    run_lines,
)
from tests.assessments.test_evaluation_service import judge_all
from tests.factories import CampaignFactory, DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db
INFLATED = {j: 2 for j in range(15, 20)}  # r5's documents, all judged 0 by the assessor


def trec_eval_means(qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Each run's mean nDCG@5 by pytrec_eval (trec_eval's code) against ``qrels``."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5"})
    means = {}
    for tag in OFFSETS:
        run = {t: {d: score for d, _, score in lines} for t, lines in run_lines(tag).items()}
        per_topic = evaluator.evaluate(run)
        means[tag] = sum(v["ndcg_cut_5"] for v in per_topic.values()) / len(per_topic)
    return means


def test_a_judge_that_agrees_with_the_assessors_moves_no_run(campaign):
    judge = build_campaign(campaign)
    label(judge, machine_grades())
    report = judge_impact(campaign=campaign)

    assert (report.judge, report.kind, report.measure) == ("umbrela", "relevance", "nDCG@5")
    assert [row.run for row in report.runs] == list(OFFSETS)  # r0 best … r5 last, all distinct
    for source in ("machine", "hybrid"):
        assert report.kendall_tau[source] == report.tau_ap[source] == report.top_k_tau[source] == 1.0
    assert all(row.human == row.machine == row.hybrid for row in report.runs)
    assert all(row.shift_machine == row.shift_hybrid == 0 and row.bias == 0 for row in report.runs)
    assert report.moved == [] and report.favoured == [] and report.holes_filled == 0
    assert (report.agreement.documents, report.agreement.kappa, report.agreement.exact) == (60, 1.0, 1.0)


def test_a_judge_that_inflates_one_runs_documents_favours_it_and_lifts_it(campaign):
    judge = build_campaign(campaign)
    label(judge, machine_grades(INFLATED))
    report = judge_impact(campaign=campaign, top_k=3)
    rows = {row.run: row for row in report.runs}

    assert (rows["r5"].rank_human, rows["r5"].rank_machine, rows["r5"].shift_machine) == (6, 1, -5)
    assert report.favoured == ["r5"] and rows["r5"].bias == 2.0 and rows["r5"].compared == 15
    assert "r5" in report.moved and rows["r5"].rank_hybrid == 6  # every document was judged: hybrid is human
    assert report.kendall_tau["hybrid"] == 1.0
    human, machine = [row.human for row in report.runs], [row.machine for row in report.runs]
    assert report.kendall_tau["machine"] == pytest.approx(stats.kendalltau(human, machine).statistic)
    assert report.top_k_tau["machine"] == pytest.approx(stats.kendalltau(human[:3], machine[:3]).statistic)
    # Under the machine r5 ties r0 (both 1.0) and follows it by name: r0 r5 r1 r2 r3 r4. C(i)/(i − 1) for i = 2..6
    # (eq. 3 of Yilmaz et al.): r5 1/1, r1 1/2 (r0 above it, r5 not), r2 2/3, r3 3/4, r4 4/5.
    assert report.tau_ap["machine"] == pytest.approx(2 / 5 * (1 + 1 / 2 + 2 / 3 + 3 / 4 + 4 / 5) - 1)
    # Agreement per topic, against scikit-learn's linearly weighted kappa over the twenty documents of a topic.
    people = GRADES
    model = [INFLATED.get(j, grade) for j, grade in enumerate(GRADES)]
    expected = cohen_kappa_score(people, model, weights="linear", labels=[0, 1, 2])
    assert [(row.topic, row.documents) for row in report.topics] == [(t, 20) for t in TOPICS]
    assert all(row.kappa == pytest.approx(expected) and row.exact == 0.75 for row in report.topics)


def test_hybrid_qrels_are_the_assessors_where_they_judged_and_the_judge_in_the_holes(campaign):
    holes = frozenset({2, 4})
    judge = build_campaign(campaign, holes=holes)
    # The judge disagrees everywhere (0 for every judged document, 2 for the holes), and leaves topic 1's document 4.
    grades = {key: 0 for key in machine_grades()} | {(t, doc(t, j)): 2 for t in TOPICS for j in holes}
    del grades[("11", doc("11", 4))]
    label(judge, grades)
    report = judge_impact(campaign=campaign)

    human, hybrid = report.qrels["human"], report.qrels["hybrid"]
    assert human == human_qrels(holes)
    assert all(hybrid[t][d] == label_ for t, labels in human.items() for d, label_ in labels.items())
    assert {(t, d) for t in hybrid for d in hybrid[t] if d not in human[t]} == {(t, doc(t, j)) for t in TOPICS for j in holes} - {("11", doc("11", 4))}
    assert report.holes_filled == 5
    # r0's top five holds documents 2 and 4, r1's too, r2's document 4: a hole each per topic.
    counts = {row.run: (row.holes, row.filled) for row in report.runs}
    assert counts == {"r0": (6, 5), "r1": (6, 5), "r2": (3, 2), "r3": (0, 0), "r4": (0, 0), "r5": (0, 0)}


def test_a_judges_current_label_is_its_newest_successful_one(campaign):
    judge = build_campaign(campaign)
    label(judge, machine_grades({0: 0}))  # an older label, changed by the next call
    label(judge, machine_grades())
    label(judge, {(t, doc(t, 1)): 0 for t in TOPICS}, status="failed")  # a failed call is no label
    assert judge_impact(campaign=campaign).qrels["machine"] == human_qrels()


def test_machine_labels_of_topics_without_human_labels_stay_out(campaign):
    judge = build_campaign(campaign)
    TopicFactory(campaign=campaign, number="9", is_training=True)
    DocumentFactory(collection=campaign.collection, doc_id="t9-d00")
    label(judge, machine_grades() | {("9", "t9-d00"): 2})
    report = judge_impact(campaign=campaign)
    assert set(report.qrels["machine"]) == set(TOPICS) and report.kendall_tau["machine"] == 1.0


@pytest.mark.parametrize("sources", ["human", "machine", "hybrid"])
def test_each_column_is_trec_evals_on_the_file_export_qrels_writes(campaign, command, tmp_path, sources):
    judge = build_campaign(campaign, holes=frozenset({3}))
    label(judge, machine_grades(INFLATED))
    column = {row.run: getattr(row, sources) for row in judge_impact(campaign=campaign).runs}

    output = tmp_path / f"{sources}.qrels"
    result = command("export_qrels", campaign.slug, "--sources", sources, "--output", output)
    assert result.code == 0, result.err
    written: dict[str, dict[str, int]] = {}
    for topic, doc_id, value in parse_qrels(output.read_text().splitlines(), source=str(output), dimension=campaign.label_scheme.primary):
        written.setdefault(topic, {})[doc_id] = int(value)
    assert written == judge_impact(campaign=campaign).qrels[sources]
    assert trec_eval_means(written) == pytest.approx(column, abs=1e-12)

    snapshot = QrelsSnapshot.objects.get()
    made_by = {"human": "majority", "machine": "machine:umbrela", "hybrid": "majority+machine:umbrela"}[sources]
    assert snapshot.rule == made_by and f"rule {made_by}" in result.err
    details = AuditEvent.objects.get(action=AuditEvent.Action.QRELS_EXPORTED).details
    assert {k: details.get(k) for k in ("sources", "judge", "model")} == (
        {"sources": None, "judge": None, "model": None} if sources == "human"
        else {"sources": sources, "judge": "umbrela", "model": "test-model"})


def test_human_sources_write_what_export_qrels_always_wrote(campaign, command, tmp_path):
    judge = build_campaign(campaign, holes=frozenset({3}))
    label(judge, machine_grades(INFLATED))
    before = b"".join(exports.export_qrels(campaign=campaign))
    assert command("export_qrels", campaign.slug, "--output", tmp_path / "plain.qrels").code == 0
    assert command("export_qrels", campaign.slug, "--sources", "human", "--output", tmp_path / "human.qrels").code == 0
    assert (tmp_path / "plain.qrels").read_bytes() == (tmp_path / "human.qrels").read_bytes() == before
    assert set(QrelsSnapshot.objects.values_list("rule", flat=True)) == {"majority"}


def test_a_dimension_with_an_otherwise_takes_it_where_the_judges_own_condition_fails(command, tmp_path):
    campaign = CampaignFactory(slug="t22", preset="touche-2022-task1")  # quality: 0 where relevance is 0
    topic = TopicFactory(campaign=campaign, number="1")
    judge_all(campaign, UserFactory(username="anna"), {"1": {"a": (2, 2, None), "b": (0, None, None)}})
    judge = local_judge(campaign)
    label(judge, {("1", "a"): 2, ("1", "b"): 0})
    label(judge, {("1", "a"): 1}, dimension="quality")
    assert qrels_sources.machine_qrels(judge, "quality", {topic.pk: "1"}) == {"1": {"a": 1, "b": 0}}
    result = command("export_qrels", "t22", "--kind", "quality", "--sources", "machine", "--output", tmp_path / "q.qrels")
    assert result.code == 0 and (tmp_path / "q.qrels").read_text() == "1 0 a 1\n1 0 b 0\n"


def test_the_command_prints_the_reports_json_and_a_table(campaign, command):
    judge = build_campaign(campaign)
    label(judge, machine_grades(INFLATED))
    result = command("judge_impact", campaign.slug, "--measure", "nDCG@5", "--format", "json", "--top-k", "3")
    assert result.code == 0, result.err
    printed = json.loads(result.out)
    assert printed == json.loads(json.dumps(judge_impact(campaign=campaign, top_k=3).as_json()))
    assert set(printed) >= {"kendall_tau", "tau_ap", "top_k_tau", "runs"}
    assert set(printed["kendall_tau"]) == {"machine", "hybrid"}
    assert set(printed["runs"][0]) >= {"run", "human", "machine", "hybrid", "rank_human", "rank_machine", "rank_hybrid"}
    assert printed["favoured"] == ["r5"]

    table = command("judge_impact", campaign.slug, "--judge", "umbrela")
    assert table.code == 0
    favoured = next(line for line in table.out.splitlines() if line.startswith("+ favoured by the machine judge"))
    assert favoured.endswith(": r5")


@pytest.mark.parametrize(("args", "message"), [
    (["--judge", "nope"], "has no machine judge named 'nope' (its judges: umbrela)"),
    (["--kind", "stance"], "stance is a category"),
    (["--top-k", "1"], "needs k of 2 or more"),
    (["--measure", "nDCG"], "nDCG"),
])
def test_the_command_refuses_what_it_cannot_report(campaign, command, args, message):
    judge = build_campaign(campaign)
    label(judge, machine_grades())
    result = command("judge_impact", campaign.slug, *args)
    assert result.code != 0 and message in result.err


def test_without_a_judge_or_its_labels_there_is_nothing_to_report(campaign, command):
    build_campaign(campaign).delete()
    assert "has no machine judge yet" in command("judge_impact", campaign.slug).err
    assert "has no machine judge yet" in command("export_qrels", campaign.slug, "--sources", "hybrid").err
    local_judge(campaign)
    assert "judge local has no relevance labels" in command("judge_impact", campaign.slug).err
    assert "a judge goes with machine or hybrid sources" in command("export_qrels", campaign.slug, "--judge", "local").err
