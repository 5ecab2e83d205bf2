"""trec_eval 9 / 10, more measures, intervals, significance and pool reusability from the database, through the
services, the commands and the pages. Runs go in through the real importer from run files written here, so the
scores are read from text exactly as trec_eval and pytrec_eval read them.

References: pytrec_eval (trec_eval 9's code) fed the same text scores, hand-derived trec_eval 10 values, SciPy's
ttest_rel and statsmodels' Holm correction; the reusability rows are worked out by hand from the pool built here.
"""

import json

import pytest
import pytrec_eval
from django.core.management.base import CommandError
from rest_framework.test import APIClient
from scipy import stats
from statsmodels.stats.multitest import multipletests

from assessments.models import Campaign
from assessments.services import evaluation, reusability
from assessments.services.imports.runs import import_runs
from assessments.services.pooling import PoolSpec, build_pool
from tests.assessments.test_evaluation_service import judge_all
from tests.factories import CampaignFactory, MembershipFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

NEAR_RUN = """\
1 Q0 alpha 1 1.0000000001 near
1 Q0 beta 2 1.0 near
2 Q0 a 1 3.0 near
2 Q0 b 2 2.0 near
"""
OTHER_RUN = """\
1 Q0 beta 1 5.0 other
1 Q0 alpha 2 4.0 other
2 Q0 a 1 3.0 other
2 Q0 b 2 2.0 other
"""
QRELS = {"1": {"alpha": 1, "beta": 0}, "2": {"a": 2, "b": 0}}


@pytest.fixture
def near(tmp_path):
    """Topic 1 of run "near": alpha's score is above beta's as a double, equal as a float, so trec_eval 9 puts
    beta (the larger id) first."""
    campaign = CampaignFactory(slug="near", preset="touche-2021-task2")
    for position, number in enumerate(("1", "2")):
        TopicFactory(campaign=campaign, number=number, position=position)
    paths = []
    for name, text in (("near.txt", NEAR_RUN), ("other.txt", OTHER_RUN)):
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    import_runs(campaign=campaign, paths=paths, team="team")
    judge_all(campaign, UserFactory(username="anna"), QRELS)
    return campaign


def pytrec(run_text: str, measure: str) -> dict[str, float]:
    scored: dict[str, dict[str, float]] = {}
    for line in run_text.splitlines():
        topic, _, doc, _, score, _ = line.split()
        scored.setdefault(topic, {})[doc] = float(score)
    return {topic: values[measure] for topic, values in pytrec_eval.RelevanceEvaluator(QRELS, {measure}).evaluate(scored).items()}


@pytest.mark.parametrize(("measure", "name", "trec_eval_10"), [
    # trec_eval 10, by hand: topic 1 alpha before beta (1, 1, 1); topic 2 a (2) before b: 1 for all three.
    ("P@1", "P_1", {"1": 1.0, "2": 1.0}),
    ("AP", "map", {"1": 1.0, "2": 1.0}),
    ("nDCG@1", "ndcg_cut_1", {"1": 1.0, "2": 1.0}),
])
def test_the_version_decides_the_near_tie_and_trec_eval_9_is_pytrec_evals(near, measure, name, trec_eval_10):
    nine = evaluation.evaluate_runs(campaign=near, measure=measure, trec_eval=9)
    ten = evaluation.evaluate_runs(campaign=near, measure=measure, trec_eval=10)
    by_tag = {result.tag: result for result in nine.results}
    assert by_tag["near"].scores["relevance"].per_topic == pytest.approx(pytrec(NEAR_RUN, name), abs=1e-12)
    assert by_tag["other"].scores["relevance"].per_topic == pytest.approx(pytrec(OTHER_RUN, name), abs=1e-12)
    assert {r.tag: r for r in ten.results}["near"].scores["relevance"].per_topic == trec_eval_10
    # Each board says where the other version differs, for which topic, and the other figure.
    note = {r.tag: r for r in ten.results}["near"].other_version["relevance"]
    assert (note.version, note.topics, note.mean) == (9, ["1"], by_tag["near"].scores["relevance"].mean)
    assert "topic 1" in note.reason and "single precision" in note.reason
    assert {r.tag: r for r in ten.results}["other"].other_version == {}
    assert by_tag["near"].other_version["relevance"].version == 10


def test_the_rank_order_has_no_version_difference(near):
    board = evaluation.evaluate_runs(campaign=near, order="rank", trec_eval=9)
    assert all(result.other_version == {} for result in board.results)


def test_a_run_of_near_ties_longer_than_the_head_read_is_read_whole(tmp_path):
    # 60 documents on one float, 60 different doubles: trec_eval 9's top 5 are the five largest document ids,
    # which trec_eval 10's order puts last.
    campaign = CampaignFactory(slug="long", preset="touche-2021-task2")
    TopicFactory(campaign=campaign, number="1")
    text = "".join(f"1 Q0 d{i:02d} {i} {1 + (60 - i) * 2**-40!r} long\n" for i in range(60))
    (tmp_path / "long.txt").write_text(text)
    import_runs(campaign=campaign, paths=[tmp_path / "long.txt"])
    judge_all(campaign, UserFactory(username="anna"), {"1": {"d59": 1, "d58": 1, "d00": 1}})
    scored = {"1": {line.split()[2]: float(line.split()[4]) for line in text.splitlines()}}
    expected = pytrec_eval.RelevanceEvaluator({"1": {"d59": 1, "d58": 1, "d00": 1}}, {"P.5"}).evaluate(scored)["1"]["P_5"]
    assert expected == pytest.approx(2 / 5)
    assert evaluation.evaluate_runs(campaign=campaign, measure="P@5", trec_eval=9).results[0].scores["relevance"].mean == expected
    assert evaluation.evaluate_runs(campaign=campaign, measure="P@5").results[0].scores["relevance"].mean == 1 / 5


def test_the_command_takes_the_version_and_marks_the_differing_run(near, command):
    result = command("evaluate_runs", "near", "--measure", "P@1", "--trec-eval", "9", "--format", "json")
    rows = {row["run"]: row for row in json.loads(result.out)}
    assert rows["near"]["trec_eval"] == 9 and rows["near"]["per_topic"]["1"] == 0.0
    assert rows["near"]["other_trec_eval"] == {"version": 10, "mean": 1.0, "topics": ["1"]}
    assert "other_trec_eval" not in rows["other"]
    table = command("evaluate_runs", "near", "--measure", "P@1")
    assert "* near (relevance): trec_eval 9: 0.5000" in table.out
    with pytest.raises(CommandError, match="invalid choice: 8"):
        command("evaluate_runs", "near", "--trec-eval", "8")


# ---------------------------------------------------------------------------------------------------------
# Intervals and significance


@pytest.fixture
def ten_runs(tmp_path):
    """Ten runs of one team over 20 topics, of graded strength, judged on three documents per topic."""
    campaign = CampaignFactory(slug="many", preset="touche-2021-task2")
    topics = [TopicFactory(campaign=campaign, number=str(t), position=t) for t in range(1, 21)]
    paths = []
    for r in range(10):
        lines = []
        for t in range(1, 21):
            # Run r puts the relevant document first in topics where (t * 7 + r * 3) % 10 < r.
            first, second = ("good", "bad") if (t * 7 + r * 3) % 10 < r else ("bad", "good")
            lines += [f"{t} Q0 {first} 1 2.0 run{r}", f"{t} Q0 {second} 2 1.0 run{r}", f"{t} Q0 other{r} 3 0.5 run{r}"]
        path = tmp_path / f"run{r}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    import_runs(campaign=campaign, paths=paths, team="")
    judge_all(campaign, UserFactory(username="anna"), {t.number: {"good": 2, "bad": 0, "other0": 1} for t in topics})
    return campaign


def test_intervals_are_in_each_json_row_with_the_seed(ten_runs, command):
    rows = json.loads(command("evaluate_runs", "many", "--ci", "0.95", "--format", "json").out)
    assert len(rows) == 10
    for row in rows:
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
        assert (row["ci_level"], row["ci_seed"], row["ci_resamples"]) == (0.95, 2020, 10_000)
    again = json.loads(command("evaluate_runs", "many", "--ci", "0.95", "--format", "json").out)
    assert [(r["ci_low"], r["ci_high"]) for r in again] == [(r["ci_low"], r["ci_high"]) for r in rows]
    other_seed = json.loads(command("evaluate_runs", "many", "--ci", "0.95", "--seed", "1", "--format", "json").out)
    assert other_seed[0]["ci_seed"] == 1 and [r["ci_low"] for r in other_seed] != [r["ci_low"] for r in rows]
    assert "ci_low" not in json.loads(command("evaluate_runs", "many", "--format", "json").out)[0]
    assert command("evaluate_runs", "many", "--ci", "95").code != 0


def test_compare_runs_t_test_is_scipys_with_holm_over_all_pairs(ten_runs, command):
    per_topic = {row["run"]: row["per_topic"] for row in json.loads(command("evaluate_runs", "many", "--format", "json").out)}
    rows = json.loads(command("compare_runs", "many", "--measure", "nDCG@5", "--kind", "relevance", "--test", "t",
                              "--format", "json").out)
    assert len(rows) == 45
    assert set(rows[0]) == {"run_a", "run_b", "mean_diff", "p_value", "p_holm", "significant"}
    topics = sorted(per_topic["run0"])
    for row in rows:
        a = [per_topic[row["run_a"]][t] for t in topics]
        b = [per_topic[row["run_b"]][t] for t in topics]
        assert row["mean_diff"] == pytest.approx(sum(a) / 20 - sum(b) / 20, abs=1e-12)
        assert row["mean_diff"] >= 0  # run_a is the better one
        if a != b:
            assert row["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
    reject, corrected, _, _ = multipletests([row["p_value"] for row in rows], alpha=0.05, method="holm")
    assert [row["p_holm"] for row in rows] == pytest.approx(list(corrected), abs=1e-12)
    assert [row["significant"] for row in rows] == list(reject)
    assert 0 < sum(reject) < 45


def test_compare_runs_permutation_test_is_seeded(ten_runs, command):
    first = json.loads(command("compare_runs", "many", "--test", "permutation", "--format", "json").out)
    assert first == json.loads(command("compare_runs", "many", "--test", "permutation", "--format", "json").out)
    t_test = json.loads(command("compare_runs", "many", "--test", "t", "--format", "json").out)
    # Two tests of the same differences: they agree where the evidence is clear.
    for perm, t in zip(first, t_test):
        assert (perm["run_a"], perm["run_b"]) == (t["run_a"], t["run_b"])
        if t["p_value"] < 0.001:
            assert perm["p_value"] < 0.01
    table = command("compare_runs", "many")
    assert "45 pairs" in table.out and "Holm" in table.out


def test_the_top_group_holds_the_runs_not_significantly_worse_than_the_best(ten_runs):
    board = evaluation.evaluate_runs(campaign=ten_runs, test="t")
    rows = evaluation.compare_runs(campaign=ten_runs, test="t")
    best = board.results[0].tag
    beaten = {row["run_b"] for row in rows if row["run_a"] == best and row["significant"]}
    group = {result.tag for result in board.results if result.run_id in board.top_group["relevance"]}
    assert group == {result.tag for result in board.results} - beaten
    assert best in group and beaten
    # Quality has no labels here: no intervals, no group, rather than every run "tied with the best" at 0.
    both = evaluation.evaluate_runs(campaign=ten_runs, kinds=("relevance", "quality"), test="t", ci=0.9)
    assert set(both.top_group) == {"relevance"}
    assert all(set(result.ci) == {"relevance"} for result in both.results)


# ---------------------------------------------------------------------------------------------------------
# Pool reusability


@pytest.fixture
def pooled(tmp_path):
    """Teams A (runs a1, a2) and B (b1) pooled at depth 2; run c1 (team C) arrived after the pool was built."""
    campaign = CampaignFactory(slug="pooled", preset="touche-2021-task2")
    TopicFactory(campaign=campaign, number="1")
    runs = {
        "a1": ["x", "z", "n"],
        "a2": ["n", "x", "z"],
        "b1": ["y", "z", "q"],
    }

    def write(tag, docs):
        path = tmp_path / f"{tag}.txt"
        path.write_text("".join(f"1 Q0 {doc} {i} {10 - i} {tag}\n" for i, doc in enumerate(docs, 1)))
        return path

    import_runs(campaign=campaign, paths=[write(t, d) for t, d in runs.items() if t.startswith("a")], team="A")
    import_runs(campaign=campaign, paths=[write("b1", runs["b1"])], team="B")
    build_pool(campaign=campaign, spec=PoolSpec(depth=2))
    import_runs(campaign=campaign, paths=[write("c1", ["y", "x", "w"])], team="C")
    # Pooled: x, n (A only), z (A and B), y (B only). Judged besides: w, never pooled.
    judge_all(campaign, UserFactory(username="anna"), {"1": {"x": 1, "n": 0, "z": 1, "y": 1, "w": 1}})
    return campaign


def test_leave_one_team_out_from_the_recorded_pool_sources(pooled, command):
    report = json.loads(command("reusability", "pooled", "--measure", "P@2", "--kind", "relevance", "--format", "json").out)
    rows = {row["run"]: row for row in report["runs"]}
    # By hand, P@2. a1 (x, z): 1, without A's unique x and n: 1/2. a2 (n, x): 1/2 then 0. b1 (y, z): 1, without
    # y: 1/2. c1 (y, x): 1, and C pooled nothing: 1.
    assert {run: (row["team"], row["full"], row["reduced"], row["delta"]) for run, row in rows.items()} == {
        "a1": ("A", 1.0, 0.5, -0.5), "a2": ("A", 0.5, 0.0, -0.5), "b1": ("B", 1.0, 0.5, -0.5), "c1": ("C", 1.0, 1.0, 0.0)}
    assert {run: (row["rank_full"], row["rank_reduced"]) for run, row in rows.items()} == {
        "a1": (1, 2), "b1": (1, 2), "c1": (1, 1), "a2": (4, 4)}
    assert {run: row["pooled"] for run, row in rows.items()} == {"a1": True, "a2": True, "b1": True, "c1": False}
    assert report["unique"] == {"A": 2, "B": 1, "C": 0}
    # judged@2 for every run, the never-pooled c1 included: y and x are judged.
    assert rows["c1"]["judged_full"] == 1.0 and rows["a2"]["judged_reduced"] == 0.0
    assert report["kendall_tau"] == pytest.approx(stats.kendalltau([1, 1, 1, 0.5], [0.5, 0.5, 1, 0]).statistic)
    assert "Kendall's tau" in command("reusability", "pooled").out


def test_reusability_of_a_campaign_without_runs_or_pool(db):
    campaign = CampaignFactory(slug="empty")
    report = reusability.pool_reusability(campaign=campaign)
    assert (report.runs, report.kendall_tau) == ([], None)


# ---------------------------------------------------------------------------------------------------------
# Pages


def test_the_leaderboard_draws_intervals_groups_and_version_marks(client, organiser, near):
    MembershipFactory(campaign=near, user=organiser)
    client.force_login(organiser)
    page = client.get("/campaigns/near/results/", {"measure": "P@1"}).content.decode()
    assert "95% interval" in page and 'class="ci-bar"' in page
    board = evaluation.evaluate_runs(campaign=near, measure="P@1", ci=0.95)
    low, high = board.results[0].ci["relevance"]
    assert f'<span class="small mono">[{low:.4f}, {high:.4f}]</span>' in page  # the bounds as numbers, not a bare bar
    assert "only 2 topics: a rough interval" in page  # two topics are too few to resample
    assert "≈ best" in page
    assert "†" in page and "trec_eval 9: 0.5000" in page
    plain = client.get("/campaigns/near/results/", {"measure": "P@1", "ci": "", "test": ""}).content.decode()
    assert 'class="ci-bar"' not in plain and "≈ best</span>" not in plain
    nine = client.get("/campaigns/near/results/", {"measure": "P@1", "trec_eval": "9"}).content.decode()
    assert "trec_eval 10: 1.0000" in nine
    assert client.get("/campaigns/near/results/", {"measure": "ERR@5"}).status_code == 400


def test_the_run_comparison_page_lists_topics_and_both_top_lists(client, organiser, near):
    MembershipFactory(campaign=near, user=organiser)
    client.force_login(organiser)
    assert "Choose two runs" in client.get("/campaigns/near/results/compare/").content.decode()
    page = client.get("/campaigns/near/results/compare/", {"a": "near", "b": "other", "measure": "nDCG@2"}).content.decode()
    # nDCG@2 by hand: topic 1 near (alpha, beta) 1, other (beta, alpha) 1/log2(3); topic 2 both (a, b): 1.
    assert page.index(">1</a>") < page.index(">2</a>")  # larger difference first
    assert "0.3691" in page
    lists = client.get("/campaigns/near/results/compare/", {"a": "near", "b": "other", "topic": "1"},
                       HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in lists and "Topic 1" in lists
    assert lists.index("alpha") < lists.index("beta")
    bad = client.get("/campaigns/near/results/compare/", {"a": "near", "b": "other", "topic": "9"})
    assert bad.status_code == 400 and "no relevance judgments" in bad.content.decode()


def test_the_run_comparison_page_tests_the_pair_as_scipy_does(client, ten_runs):
    olivia = UserFactory(username="olivia", role="organiser")
    MembershipFactory(campaign=ten_runs, user=olivia)
    client.force_login(olivia)
    board = evaluation.evaluate_runs(campaign=ten_runs)
    per_topic = {r.tag: r.scores["relevance"].per_topic for r in board.results}
    topics = sorted(per_topic["run9"])
    a, b = [per_topic["run9"][t] for t in topics], [per_topic["run3"][t] for t in topics]
    page = client.get("/campaigns/many/results/compare/", {"a": "run9", "b": "run3"}).content.decode()
    assert f"paired t-test p = {stats.ttest_rel(a, b).pvalue:.4f}" in page
    theirs = stats.permutation_test((a, b), lambda x, y, axis: (x - y).mean(axis=axis), permutation_type="samples",
                                    vectorized=True, n_resamples=20_000, random_state=1).pvalue
    shown = float(page.split("paired randomisation test p = ")[1][:6])
    assert abs(shown - theirs) < 0.015  # two draws of the 2^20 sign flips (10,000 and 20,000), within sampling error
    assert "On the 20 topics both runs answer" in page


def test_the_reusability_page(client, organiser, pooled):
    MembershipFactory(campaign=pooled, user=organiser)
    client.force_login(organiser)
    page = client.get("/campaigns/pooled/results/reusability/", {"measure": "P@2"}).content.decode()
    assert "Kendall" in page and "c1" in page and "A 2, B 1, C 0" in page
    assert "brought documents into the pool:" not in page


def test_the_reusability_page_says_why_one_team_tells_nothing(client, organiser, tmp_path):
    campaign = CampaignFactory(slug="solo", preset="touche-2021-task2")
    TopicFactory(campaign=campaign, number="1")
    for tag, docs in (("a1", ["x", "y"]), ("a2", ["y", "z"])):
        (tmp_path / f"{tag}.txt").write_text("".join(f"1 Q0 {d} {i} {5 - i} {tag}\n" for i, d in enumerate(docs, 1)))
    import_runs(campaign=campaign, paths=[tmp_path / "a1.txt", tmp_path / "a2.txt"], team="A")
    build_pool(campaign=campaign, spec=PoolSpec(depth=2))
    judge_all(campaign, UserFactory(username="anna"), {"1": {"x": 1, "y": 0, "z": 1}})
    MembershipFactory(campaign=campaign, user=organiser)
    client.force_login(organiser)
    page = client.get("/campaigns/solo/results/reusability/", {"measure": "P@2"}).content.decode()
    assert "Only team\n    <strong>A</strong> brought documents into the pool" in page
    assert "Reusability needs a pool built from the runs of two teams or more" in page


@pytest.mark.parametrize("path", ["results/compare/", "results/reusability/"])
def test_the_new_pages_are_for_organisers(client, alice, mallory, organiser, campaign, path):
    for user, status in ((alice, 404), (mallory, 404), (organiser, 200)):
        client.force_login(user)
        assert client.get(f"/campaigns/touche22/{path}").status_code == status


def test_the_pages_queries_do_not_grow_with_the_number_of_runs(client, organiser, ten_runs, django_assert_max_num_queries):
    MembershipFactory(campaign=Campaign.objects.get(slug="many"), user=organiser)
    client.force_login(organiser)
    client.get("/campaigns/many/results/reusability/")
    for path in ("/campaigns/many/results/", "/campaigns/many/results/reusability/",
                 "/campaigns/many/results/compare/?a=run0&b=run9&topic=3"):
        with django_assert_max_num_queries(14):
            assert client.get(path).status_code == 200
    assert Campaign.objects.get(slug="many").runs.count() == 10


def test_the_results_api_takes_the_version_intervals_and_test(organiser, near, command):
    MembershipFactory(campaign=near, user=organiser)
    api = APIClient()
    api.force_authenticate(organiser)
    response = api.get("/api/campaigns/near/results/", {"measure": "P@1", "trec_eval": 9, "ci": 0.9, "test": "t", "seed": 7})
    assert response.status_code == 200
    expected = command("evaluate_runs", "near", "--measure", "P@1", "--trec-eval", "9", "--ci", "0.9", "--test", "t",
                       "--seed", "7", "--format", "json")
    assert response.json() == json.loads(expected.out)
    assert {row["ci_seed"] for row in response.json()} == {7}
    assert api.get("/api/campaigns/near/results/", {"trec_eval": 8}).status_code == 400
