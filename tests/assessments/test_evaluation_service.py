"""Evaluating a campaign's runs from the database: nDCG@k checked against pytrec_eval (trec_eval's own code),
stance scores against scikit-learn, judged@k by hand; the leaderboard page, its CSV, the command and the API."""

import io
import json
from pathlib import Path

import pytest
import pytrec_eval
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient
from sklearn.metrics import accuracy_score, f1_score

from accounts.models import Role
from assessments.formats.qrels import parse_qrels
from assessments.labels import LabelScheme
from assessments.models import Run
from assessments.services.adjudication import Decision, adjudicate
from assessments.services.evaluation import EvaluationError, compare_runs, evaluate_runs
from assessments.services.exports import export_qrels
from assessments.services.judging import Labels, record_judgment
from tests.factories import CampaignFactory, DocumentFactory, MembershipFactory, TopicFactory, UserFactory
from tests.rankings import store_ranking

pytestmark = pytest.mark.django_db


def add_run(campaign, tag, lines, *, team="", stance=False):
    """lines: topic number -> [(doc, rank, score[, stance])]; orders are worked out in tests/rankings.py."""
    run = Run.objects.create(campaign=campaign, tag=tag, team=team, has_stance=stance)
    for number, entries in lines.items():
        topic = campaign.topics.filter(number=number).first() or TopicFactory(campaign=campaign, number=number)
        assert len({e[1] for e in entries}) == len(entries), "keep ranks distinct in these hand cases"
        store_ranking(run, topic, entries)
    return run


def judge_all(campaign, assessor, labels, phase="main"):
    """labels: topic number -> {doc: relevance or (relevance, quality, stance)}."""
    for number, docs in labels.items():
        topic = campaign.topics.filter(number=number).first() or TopicFactory(campaign=campaign, number=number)
        for doc_id, label in docs.items():
            document = campaign.collection.documents.filter(doc_id=doc_id).first() or DocumentFactory(
                collection=campaign.collection, doc_id=doc_id)
            relevance, quality, stance = label if isinstance(label, tuple) else (label, None, None)
            values = {"relevance": relevance, "quality": quality, "stance": stance}
            record_judgment(topic=topic, document=document, assessor=assessor, phase=phase,
                            labels=Labels({name: value for name, value in values.items() if value not in (None, "")}))


def trec_eval_ndcg(qrels, runs_lines, k=5, by_rank=False):
    """pytrec_eval's ndcg_cut_k per topic for each run; by_rank scores each line by -rank, so trec_eval's
    order is the rank column's."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"})
    result = {}
    for tag, lines in runs_lines.items():
        scored = {t: {e[0]: float(-e[1] if by_rank else e[2]) for e in entries} for t, entries in lines.items()}
        result[tag] = {t: v[f"ndcg_cut_{k}"] for t, v in evaluator.evaluate(scored).items()}
    return result


QRELS = {
    # −2 (spam) gives no gain; topic 3 has no relevant document and scores 0.
    "1": {"a": 2, "b": 1, "c": 0, "d": -2, "e": 2, "f": 1, "unretrieved": 2},
    "2": {"a": 1, "x": 2, "y": 0},
    "3": {"a": 0, "b": -2},
    "10": {"p": 1},
}
RUNS = {
    "tied": {
        # Tied scores: trec_eval takes the larger doc id first among equals.
        "1": [("a", 1, 5.0), ("b", 2, 5.0), ("c", 3, 5.0), ("d", 4, 4.0), ("e", 5, 3.0), ("f", 6, 3.0), ("g", 7, 1.0)],
        "2": [("y", 1, 0.5), ("x", 2, -1.5), ("a", 3, -2.0)],  # negative scores
        "3": [("a", 1, 1.0), ("b", 2, 0.5)],
        "99": [("a", 1, 1.0)],  # no qrels: ignored
    },
    "disagrees": {
        # The rank column disagrees with the scores.
        "1": [("e", 1, 0.1), ("a", 2, 0.9), ("f", 3, 0.8), ("z", 4, 0.7), ("b", 5, 0.6), ("c", 6, 0.95)],
        "10": [("q", 0, 2.0), ("p", 1, 1.0)],  # ranks from 0
    },
}


@pytest.fixture
def spam_campaign(db):
    campaign = CampaignFactory(slug="t20", preset="touche-2020-task1")
    for i, number in enumerate(("1", "2", "3", "10", "99")):
        TopicFactory(campaign=campaign, number=number, position=i)
    judge_all(campaign, UserFactory(username="anna"), QRELS)
    for tag, lines in RUNS.items():
        add_run(campaign, tag, lines, team=f"team-{tag}")
    return campaign


@pytest.fixture
def organiser(spam_campaign):
    """olivia runs the spam campaign in this module's page and API tests."""
    return MembershipFactory(campaign=spam_campaign, user=UserFactory(username="olivia", role=Role.ORGANISER)).user


@pytest.mark.parametrize("order", ["score", "rank"])
def test_ndcg_at_5_is_trec_evals_for_every_topic(spam_campaign, order):
    board = evaluate_runs(campaign=spam_campaign, order=order)
    expected = trec_eval_ndcg(QRELS, RUNS, by_rank=order == "rank")
    for result in board.results:
        scores = result.scores["relevance"]
        assert scores.per_topic.keys() == expected[result.tag].keys()
        for topic, value in expected[result.tag].items():
            assert scores.per_topic[topic] == pytest.approx(value, abs=1e-12), (result.tag, topic)
        assert scores.mean == pytest.approx(sum(expected[result.tag].values()) / len(expected[result.tag]), abs=1e-12)
    tied = next(result for result in board.results if result.tag == "tied")
    assert tied.scores["relevance"].per_topic["3"] == 0.0  # judged, but nothing relevant
    # Best first.
    means = [result.scores["relevance"].mean for result in board.results]
    assert means == sorted(means, reverse=True)


def test_the_two_orders_differ_where_ranks_and_scores_disagree(spam_campaign):
    by_score = {r.tag: r.scores["relevance"].mean for r in evaluate_runs(campaign=spam_campaign, order="score").results}
    by_rank = {r.tag: r.scores["relevance"].mean for r in evaluate_runs(campaign=spam_campaign, order="rank").results}
    assert by_score["disagrees"] != pytest.approx(by_rank["disagrees"])


def test_ndcg_at_other_cutoffs(spam_campaign):
    board = evaluate_runs(campaign=spam_campaign, measure="nDCG@3")
    expected = trec_eval_ndcg(QRELS, RUNS, k=3)
    assert board.measure == "nDCG@3"
    for result in board.results:
        assert result.scores["relevance"].per_topic == pytest.approx(expected[result.tag], abs=1e-12)


def test_judged_at_k_shows_holes_in_the_pool(spam_campaign):
    board = {r.tag: r.scores["relevance"] for r in evaluate_runs(campaign=spam_campaign).results}
    # "disagrees", by score: topic 1 top 5 = c a f z b (z unjudged) -> 4/5; topic 10: q p, only p judged -> 1/5.
    assert board["disagrees"].judged_at_k == pytest.approx((4 / 5 + 1 / 5) / 2)
    # "tied": topic 1 top 5 all judged; topic 2 has 3 judged of 3 lines -> 3/5; topic 3: 2/5.
    assert board["tied"].judged_at_k == pytest.approx((1 + 3 / 5 + 2 / 5) / 3)


def test_quality_is_scored_against_the_quality_labels(campaign, alice):
    judge_all(campaign, alice, {"1": {"a": (2, 0, ""), "b": (1, 2, ""), "c": (0, None, "")}})
    add_run(campaign, "r", {"1": [("a", 1, 3.0), ("b", 2, 2.0), ("c", 3, 1.0)]})
    board = evaluate_runs(campaign=campaign, kinds=("relevance", "quality"))
    [result] = board.results
    quality_qrels = {"1": {"a": 0, "b": 2}}  # c carries no quality label: not in the quality qrels
    expected = trec_eval_ndcg(quality_qrels, {"r": {"1": [("a", 1, 3.0), ("b", 2, 2.0), ("c", 3, 1.0)]}})
    assert result.scores["quality"].per_topic == pytest.approx(expected["r"], abs=1e-12)
    assert result.scores["quality"].judged_at_k == pytest.approx(2 / 5)
    assert result.scores["relevance"].judged_at_k == pytest.approx(3 / 5)


def test_several_assessors_are_combined_by_the_same_rules_as_the_export(campaign, alice, bob):
    judge_all(campaign, alice, {"1": {"a": 2, "b": 0, "c": 1}}, phase="training")
    judge_all(campaign, bob, {"1": {"a": 1, "b": 2}}, phase="training")
    lines = {"1": [("a", 1, 3.0), ("b", 2, 2.0), ("c", 3, 1.0)]}
    add_run(campaign, "r", lines)
    for rule in ("majority", "max", "mean", "assessor:bob"):
        exported = b"".join(export_qrels(campaign=campaign, kind="relevance", phase="training", rule=rule)).decode()
        qrels = {}
        for topic, doc, label in parse_qrels(exported.splitlines(), source="export", dimension=campaign.label_scheme.dimension("relevance")):
            qrels.setdefault(topic, {})[doc] = label
        [result] = evaluate_runs(campaign=campaign, phase="training", rule=rule).results
        assert result.scores["relevance"].per_topic == pytest.approx(trec_eval_ndcg(qrels, {"r": lines})["r"], abs=1e-12), rule
    assert evaluate_runs(campaign=campaign).results[0].scores["relevance"].per_topic == {}  # no main-phase labels yet


def test_the_table_follows_the_judgments_as_they_arrive(campaign, alice):
    add_run(campaign, "r", {"1": [("a", 1, 2.0), ("b", 2, 1.0)]})
    judge_all(campaign, alice, {"1": {"a": 0, "b": 1}})
    before = evaluate_runs(campaign=campaign).results[0].scores["relevance"]
    judge_all(campaign, alice, {"1": {"a": 2}})
    after = evaluate_runs(campaign=campaign).results[0].scores["relevance"]
    assert before.mean < after.mean == 1.0


def test_stance_accuracy_and_macro_f1_match_scikit_learn(campaign, alice):
    truth = {
        "1": {"a": (2, 1, "FIRST"), "b": (1, 1, "SECOND"), "c": (2, 2, "NEUTRAL"), "d": (0, None, ""), "e": (1, 0, "NO")},
        "2": {"a": (1, 1, "SECOND"), "x": (2, 2, "FIRST"), "deep": (1, 1, "FIRST")},
    }
    judge_all(campaign, alice, truth)
    lines = {
        "1": [("a", 1, 9.0, "FIRST"), ("b", 2, 8.0, "FIRST"), ("c", 3, 7.0, "NO"), ("d", 4, 6.0, "SECOND"),
              ("e", 5, 5.0, ""), ("f", 6, 4.0, "FIRST")],
        "2": [("x", 1, 9.0, "FIRST"), ("a", 2, 8.0, "SECOND"), ("u1", 3, 7.0, "NO"), ("u2", 4, 6.0, "NO"),
              ("u3", 5, 5.0, "NO"), ("deep", 6, 4.0, "SECOND")],  # "deep" is below the top 5
    }
    add_run(campaign, "stance-run", lines, stance=True)
    add_run(campaign, "no-stance", {"1": [("a", 1, 1.0)]})
    # Scored: the top 5 documents that have a stance judgment and a prediction ("e" predicted nothing).
    y_true = ["FIRST", "SECOND", "NEUTRAL", "FIRST", "SECOND"]
    y_pred = ["FIRST", "FIRST", "NO", "FIRST", "SECOND"]
    board = evaluate_runs(campaign=campaign)
    results = {r.tag: r for r in board.results}
    stance = results["stance-run"].stance
    assert stance.n == 5
    assert stance.accuracy == pytest.approx(accuracy_score(y_true, y_pred))
    assert stance.macro_f1 == pytest.approx(f1_score(y_true, y_pred, average="macro"))
    assert results["no-stance"].stance is None
    rows = {row["run"]: row for row in board.as_json()}
    assert rows["stance-run"]["macro_f1"] == stance.macro_f1 and "accuracy" not in rows["no-stance"]


def test_queries_do_not_grow_with_the_number_of_runs(spam_campaign, django_assert_num_queries, client, organiser):
    client.force_login(organiser)
    client.get("/campaigns/t20/results/")  # session and user cached from here on
    with CaptureQueriesContext(connection) as two_runs:
        evaluate_runs(campaign=spam_campaign)
    with CaptureQueriesContext(connection) as page_two_runs:
        assert client.get("/campaigns/t20/results/").status_code == 200
    for i in range(6):
        add_run(spam_campaign, f"more-{i}", RUNS["tied"], team=f"team{i}")
    with django_assert_num_queries(len(two_runs.captured_queries)):
        assert len(evaluate_runs(campaign=spam_campaign).results) == 8
    with django_assert_num_queries(len(page_two_runs.captured_queries)):
        page = client.get("/campaigns/t20/results/")
    assert page.content.decode().count("<tr>") == 1 + 8


# --- Command, page, CSV and API -----------------------------------------------------------------------------


def test_the_command_prints_json_with_one_object_per_run_and_measure(spam_campaign):
    out = io.StringIO()
    call_command("evaluate_runs", "t20", "--format", "json", "--kind", "relevance", "--kind", "quality", stdout=out)
    rows = json.loads(out.getvalue())
    assert len(rows) == 4
    keys = {"run", "team", "kind", "measure", "trec_eval", "judged", "mean", "judged_at_k", "per_topic"}
    assert all(set(row) == keys | ({"message"} if row["kind"] == "quality" else set()) for row in rows)
    assert {(row["run"], row["team"], row["kind"], row["measure"]) for row in rows} == {
        (tag, f"team-{tag}", kind, "nDCG@5") for tag in RUNS for kind in ("relevance", "quality")
    }
    tied = next(row for row in rows if row["run"] == "tied" and row["kind"] == "relevance")
    expected = trec_eval_ndcg(QRELS, RUNS)["tied"]
    assert tied["per_topic"] == pytest.approx(expected, abs=1e-12)
    assert tied["mean"] == pytest.approx(sum(expected.values()) / 3, abs=1e-12)
    # No quality labels were given: nothing to score against, and the rows say so rather than score 0.
    assert all(
        (row["judged"], row["mean"], row["judged_at_k"], row["per_topic"], row["message"])
        == (False, None, None, {}, "no main-phase quality judgments")
        for row in rows if row["kind"] == "quality"
    )
    assert all(row["judged"] is True for row in rows if row["kind"] == "relevance")


def test_the_command_prints_a_table_and_csv(spam_campaign):
    table = io.StringIO()
    call_command("evaluate_runs", "t20", stdout=table)
    lines = table.getvalue().splitlines()
    assert lines[0].split()[:3] == ["team", "run", "relevance"]
    expected = {tag: sum(v.values()) / len(v) for tag, v in trec_eval_ndcg(QRELS, RUNS).items()}
    best = max(expected, key=expected.get)
    assert lines[1].split() == [f"team-{best}", best, f"{expected[best]:.4f}", lines[1].split()[3]]  # best first
    csv_out = io.StringIO()
    call_command("evaluate_runs", "t20", "--format", "csv", "--order", "rank", stdout=csv_out)
    rows = csv_out.getvalue().splitlines()
    assert rows[0] == "run,team,kind,measure,order,trec_eval,topic,value,judged@5"
    assert "tied,team-tied,relevance,nDCG@5,rank,10,1," in "\n".join(rows)
    assert rows.index(next(r for r in rows if r.startswith("tied,team-tied,relevance,nDCG@5,rank,10,all,"))) == (
        rows.index(next(r for r in rows if r.startswith("tied,team-tied,relevance,nDCG@5,rank,10,3,"))) + 1
    )


@pytest.mark.parametrize(("options", "message"), [
    (["--measure", "ERR@5"], "unknown measure 'ERR@5'"),
    (["--rule", "assessor:nobody"], "no assessor named 'nobody'"),
])
def test_the_command_refuses_what_it_cannot_compute(spam_campaign, options, message):
    err = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("evaluate_runs", "t20", *options, stdout=io.StringIO(), stderr=err)
    assert err.getvalue().startswith("error: ") and message in err.getvalue()


def test_the_leaderboard_page_sorts_by_any_column(client, organiser, spam_campaign):
    client.force_login(organiser)
    expected = {tag: sum(v.values()) / len(v) for tag, v in trec_eval_ndcg(QRELS, RUNS).items()}
    best, worst = sorted(expected, key=expected.get, reverse=True)
    page = client.get("/campaigns/t20/results/").content.decode()
    assert page.index(f"team-{best}") < page.index(f"team-{worst}")  # nDCG@5, best first
    assert 'aria-sort="descending"' in page
    ascending = client.get("/campaigns/t20/results/", {"sort": "relevance", "dir": "asc"}).content.decode()
    assert ascending.index(f"team-{worst}") < ascending.index(f"team-{best}")
    by_team = client.get("/campaigns/t20/results/", {"sort": "team", "dir": "asc"}).content.decode()
    assert by_team.index("team-disagrees") < by_team.index("team-tied")
    partial = client.get("/campaigns/t20/results/", HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="results"') and "<html" not in partial


def test_the_leaderboard_can_show_each_teams_best_run(client, organiser, spam_campaign):
    add_run(spam_campaign, "tied-but-worse", {"1": [("c", 1, 1.0)]}, team="team-tied")
    client.force_login(organiser)
    everything = client.get("/campaigns/t20/results/").content.decode()
    best = client.get("/campaigns/t20/results/", {"best": "on"}).content.decode()
    assert "tied-but-worse" in everything and "tied-but-worse" not in best
    assert best.count("<tr>") == 1 + 2 and "best run of each team (2 of 3 runs)" in best


def test_the_per_topic_csv_download(client, organiser, spam_campaign):
    client.force_login(organiser)
    response = client.get("/campaigns/t20/results/per-topic.csv", {"order": "score"})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="t20-nDCG@5-score-trec_eval10-per-topic.csv"' in response["Content-Disposition"]
    rows = response.content.decode().splitlines()
    expected = trec_eval_ndcg(QRELS, RUNS)
    assert f"tied,team-tied,relevance,nDCG@5,score,10,2,{expected['tied']['2']:.4f}," in rows


def test_the_results_api_returns_the_json_of_the_command(organiser, spam_campaign):
    api = APIClient()
    api.force_authenticate(organiser)
    response = api.get("/api/campaigns/t20/results/", {"kind": ["relevance", "quality"], "order": "rank"})
    assert response.status_code == 200
    out = io.StringIO()
    call_command("evaluate_runs", "t20", "--format", "json", "--kind", "relevance", "--kind", "quality", "--order", "rank", stdout=out)
    assert response.json() == json.loads(out.getvalue())
    assert api.get("/api/campaigns/t20/results/", {"measure": "ERR@5"}).status_code == 400


@pytest.mark.parametrize(
    ("who", "page", "api"), [("alice", 404, 403), ("mallory", 404, 403), ("oscar", 404, 404), ("olivia", 200, 200)]
)
def test_results_are_for_the_campaigns_organisers(who, page, api, client, alice, mallory, oscar, organiser, spam_campaign):
    user = {"alice": alice, "mallory": mallory, "oscar": oscar, "olivia": organiser}[who]
    client.force_login(user)
    assert client.get("/campaigns/t20/results/").status_code == page
    assert client.get("/campaigns/t20/results/per-topic.csv").status_code == page
    api_client = APIClient()
    api_client.force_authenticate(user)
    assert api_client.get("/api/campaigns/t20/results/").status_code == api


def test_an_unknown_measure_is_an_error_not_a_guess(campaign):
    with pytest.raises(EvaluationError, match="unknown measure"):
        evaluate_runs(campaign=campaign, measure="nDCG")
    with pytest.raises(EvaluationError, match="unknown label dimension 'coherence'"):
        evaluate_runs(campaign=campaign, kinds=("coherence",))
    with pytest.raises(EvaluationError, match="stance is a category: a measure scores graded labels"):
        compare_runs(campaign=campaign, kind="stance")


def test_a_category_kind_is_compared_with_the_stance_column_and_the_primary_dimension_is_scored(campaign, alice):
    judge_all(campaign, alice, {"1": {"a": (2, 1, "FIRST"), "b": (1, 1, "SECOND")}})
    add_run(campaign, "r", {"1": [("a", 1, 2.0, "FIRST"), ("b", 2, 1.0, "FIRST")]}, stance=True)
    board = evaluate_runs(campaign=campaign, kinds=("stance",))
    assert (board.kinds, board.stance_kind) == (("relevance",), "stance")
    assert (board.results[0].stance.accuracy, board.results[0].stance.n) == (0.5, 2)
    assert board.as_json()[0]["stance_kind"] == "stance"
    assert board.results[0].scores["relevance"].mean == evaluate_runs(campaign=campaign).results[0].scores["relevance"].mean


def test_a_dimensions_otherwise_counts_as_its_qrels_export_reads_it(alice):
    """Touché 2023's causal task: a document of the wrong direction has relevance 0 (the dimension's `otherwise`)
    without a relevance label; the stance column is compared with the scheme's stance, not its direction."""
    causal = CampaignFactory(slug="causal", preset="touche-2023-task2")
    topic = TopicFactory(campaign=causal, number="1")
    given = {
        "a": {"direction": "CAUSE_EFFECT", "relevance": 2, "stance": "SUPPORT"},
        "b": {"direction": "CAUSE_EFFECT", "relevance": 1, "stance": "REFUTE"},
        "w": {"direction": "WRONG"},
    }
    for doc_id, values in given.items():
        record_judgment(topic=topic, document=DocumentFactory(collection=causal.collection, doc_id=doc_id),
                        assessor=alice, phase="main", labels=Labels(values))
    lines = {"1": [("w", 1, 3.0, "SUPPORT"), ("a", 2, 2.0, "SUPPORT"), ("b", 3, 1.0, "SUPPORT")]}
    add_run(causal, "r", lines, stance=True)
    exported = b"".join(export_qrels(campaign=causal, kind="relevance")).decode()
    qrels = {"1": {doc: int(label) for _, _, doc, label in (line.split() for line in exported.splitlines())}}
    assert qrels == {"1": {"a": 2, "b": 1, "w": 0}}

    board = evaluate_runs(campaign=causal)
    result = board.results[0]
    assert board.kinds == ("relevance",) and board.stance_kind == "stance"
    assert result.scores["relevance"].per_topic == pytest.approx(trec_eval_ndcg(qrels, {"r": lines})["r"], abs=1e-12)
    assert result.scores["relevance"].judged_at_k == pytest.approx(3 / 5)
    assert (result.stance.n, result.stance.accuracy) == (2, 0.5)  # w has no stance; a is right, b wrong
    # An adjudicator decides b is of the wrong direction: relevance 0 by `otherwise`, and no stance left to compare.
    adjudicate(topic=topic, document=causal.collection.documents.get(doc_id="b"),
               decision=Decision({"direction": "WRONG"}, reason="effect causes cause"), by=alice)
    adjudicated = evaluate_runs(campaign=causal, rule="adjudicated").results[0]
    decided = {"1": {**qrels["1"], "b": 0}}
    assert adjudicated.scores["relevance"].per_topic == pytest.approx(trec_eval_ndcg(decided, {"r": lines})["r"], abs=1e-12)
    assert (adjudicated.stance.n, adjudicated.stance.accuracy) == (1, 1.0)
    assert evaluate_runs(campaign=causal).results[0].scores["relevance"].per_topic == result.scores["relevance"].per_topic


def test_a_question_dimension_is_scored_as_trec_eval_scores_binary_labels(db):
    """A yes/no dimension (1/0) is binary relevance: P@k equal to pytrec_eval's, on the README's custom scheme."""
    scheme = LabelScheme.from_json(json.loads((Path(__file__).parent.parent / "data/schemes/four-dimensions.json").read_text()))
    campaign = CampaignFactory(slug="custom", preset="custom", scheme=scheme.to_json())
    assessor = UserFactory(username="quinn")
    on_topic = {"1": {"a": 1, "b": 0, "c": 1, "d": 0}, "2": {"x": 0, "y": 1}}
    for number, docs in on_topic.items():
        topic = TopicFactory(campaign=campaign, number=number)
        for doc_id, answer in docs.items():
            record_judgment(topic=topic, document=DocumentFactory(collection=campaign.collection, doc_id=doc_id),
                            assessor=assessor, phase="main", labels=Labels({"ONTOPIC": answer}))
    runs = {"r1": {"1": [("a", 1, 3.0), ("b", 2, 2.0), ("c", 3, 1.0)], "2": [("y", 1, 2.0), ("z", 2, 1.0)]},
            "r2": {"1": [("d", 1, 3.0), ("c", 2, 2.0)], "2": [("x", 1, 1.0)]}}
    for tag, lines in runs.items():
        add_run(campaign, tag, lines)
    board = evaluate_runs(campaign=campaign, measure="P@2", kinds=("ONTOPIC",))
    evaluator = pytrec_eval.RelevanceEvaluator(on_topic, {"P.2"})
    for result in board.results:
        expected = evaluator.evaluate({t: {d: s for d, _, s in entries} for t, entries in runs[result.tag].items()})
        assert result.scores["ONTOPIC"].per_topic == pytest.approx({t: v["P_2"] for t, v in expected.items()}, abs=1e-12)
