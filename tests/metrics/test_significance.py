"""assessments.metrics.significance and .reusability against SciPy, statsmodels and hand-worked answers."""

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from assessments.metrics.reusability import competition_ranks, kendall_tau, leave_one_team_out
from assessments.metrics.significance import (
    bootstrap_ci,
    compare_all,
    confidence_intervals,
    holm,
    paired_permutation_test,
    paired_t_test,
)
from tests.metrics.test_evaluation import REPO_ROOT


def all_pairs(runs: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(runs) for b in range(a + 1, runs)]


def scores(seed: int, topics: int, runs: int) -> np.ndarray:
    """Per-topic scores in [0, 1] with runs of different strength, like an nDCG table."""
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(np.linspace(0.3, 0.6, runs), 0.2, size=(topics, runs)), 0, 1)


# ---------------------------------------------------------------------------------------------------------
# Paired t-test


@pytest.mark.parametrize("seed", range(3))
def test_t_test_p_values_are_scipys_ttest_rel(seed):
    matrix = scores(seed, 50, 12)
    pairs = all_pairs(12)
    expected = [stats.ttest_rel(matrix[:, a], matrix[:, b]).pvalue for a, b in pairs]
    assert paired_t_test(matrix, pairs) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_t_test_where_scipy_has_no_answer():
    matrix = np.array([[0.5, 0.5, 0.75], [0.25, 0.25, 0.5], [0.875, 0.875, 1.125]])  # exact in binary
    # Identical scores: no evidence (SciPy: nan). The same difference on every topic: certain (SciPy: 0 or nan).
    assert paired_t_test(matrix, [(0, 1), (0, 2)]).tolist() == [1.0, 0.0]
    assert paired_t_test(matrix[:1], [(0, 2)]).tolist() == [1.0]


# ---------------------------------------------------------------------------------------------------------
# Paired randomisation test


def scipy_permutation_p(a, b, **options) -> float:
    def mean_distance(x, axis):
        return np.abs(np.mean(x, axis=axis))

    result = stats.permutation_test((a - b,), mean_distance, permutation_type="samples", alternative="greater",
                                    vectorized=True, **options)
    return result.pvalue


def test_permutation_test_with_every_sign_flip_is_scipys_exact_test():
    # Ten topics: 1,024 flips, all enumerated by both. Scores in eighths keep every sum exact, so ties between a
    # flip and the observed difference are real ties on both sides.
    rng = np.random.default_rng(4)
    matrix = rng.integers(0, 9, size=(10, 6)) / 8
    pairs = all_pairs(6)
    expected = [scipy_permutation_p(matrix[:, a], matrix[:, b]) for a, b in pairs]
    assert paired_permutation_test(matrix, pairs).tolist() == expected


def test_permutation_test_hand_worked():
    # Differences 1, 2, -0.5, 3, 0.25 (eighths): of the 32 flips, 6 have a sum at least 5.75 from 0.
    a = np.array([1, 2, 0, 3, 0.25]) / 8
    b = np.array([0, 0, 0.5, 0, 0]) / 8
    assert paired_permutation_test(np.column_stack([a, b]), [(0, 1)]).tolist() == [6 / 32]


def test_permutation_test_with_drawn_flips_agrees_with_scipy_within_sampling_error():
    matrix = scores(1, 50, 8)
    pairs = all_pairs(8)
    ours = paired_permutation_test(matrix, pairs, seed=7)
    theirs = [scipy_permutation_p(matrix[:, a], matrix[:, b], n_resamples=10_000, rng=11) for a, b in pairs]
    # Each estimate's standard error is at most 0.005 (p = 0.5, 10,000 draws).
    assert np.abs(ours - theirs).max() < 0.025
    # Seeded: the same seed gives the same p-values, another seed slightly different ones.
    assert paired_permutation_test(matrix, pairs, seed=7).tolist() == ours.tolist()
    assert paired_permutation_test(matrix, pairs, seed=8).tolist() != ours.tolist()
    assert ours.min() >= 1 / 10_001  # the observed flip is counted in: never 0


def test_both_tests_agree_on_clear_cases():
    matrix = scores(2, 50, 2)
    matrix[:, 1] = np.clip(matrix[:, 0] + 0.3, 0, 1.3)
    assert paired_t_test(matrix, [(0, 1)])[0] < 1e-6
    assert paired_permutation_test(matrix, [(0, 1)])[0] == pytest.approx(1 / 10_001)


# ---------------------------------------------------------------------------------------------------------
# Holm–Bonferroni


@pytest.mark.parametrize("seed", range(3))
def test_holm_is_statsmodels(seed):
    p = np.random.default_rng(seed).uniform(0, 0.1, size=40) ** 2
    reject, expected, _, _ = multipletests(p, alpha=0.05, method="holm")
    assert holm(p) == pytest.approx(expected, abs=1e-15)
    assert ((holm(p) <= 0.05) == reject).all()


def test_holm_hand_worked():
    # Sorted 0.01, 0.02, 0.04: times 3, 2, 1 = 0.03, 0.04, 0.04 (made monotone).
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


# ---------------------------------------------------------------------------------------------------------
# Bootstrap


def test_bootstrap_agrees_with_scipys_percentile_bootstrap_within_sampling_error():
    matrix = scores(3, 50, 5)
    low, high = bootstrap_ci(matrix, level=0.95, seed=1)
    for run in range(5):
        theirs = stats.bootstrap((matrix[:, run],), np.mean, method="percentile", confidence_level=0.95,
                                 n_resamples=10_000, rng=2).confidence_interval
        assert low[run] == pytest.approx(theirs.low, abs=0.006)
        assert high[run] == pytest.approx(theirs.high, abs=0.006)
        assert low[run] < matrix[:, run].mean() < high[run]


def test_bootstrap_is_reproducible_and_narrows_with_the_level():
    matrix = scores(5, 50, 3)
    first = bootstrap_ci(matrix, seed=3)
    assert [bound.tolist() for bound in bootstrap_ci(matrix, seed=3)] == [bound.tolist() for bound in first]
    assert bootstrap_ci(matrix, seed=4)[0].tolist() != first[0].tolist()
    narrow = bootstrap_ci(matrix, level=0.5, seed=3)
    assert (narrow[0] > first[0]).all() and (narrow[1] < first[1]).all()


def test_bootstrap_of_a_constant_run_is_that_constant():
    low, high = bootstrap_ci(np.full((20, 1), 0.25))
    assert (low.tolist(), high.tolist()) == ([0.25], [0.25])


def test_bootstrap_refuses_an_impossible_level_and_an_empty_table():
    with pytest.raises(ValueError, match="between 0 and 1"):
        bootstrap_ci(np.ones((3, 1)), level=95)
    with pytest.raises(ValueError, match="at least one topic"):
        bootstrap_ci(np.ones((0, 1)))


# ---------------------------------------------------------------------------------------------------------
# Reusability


@pytest.mark.parametrize("seed", range(4))
def test_kendall_tau_is_scipys_tau_b(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=30) / 5  # ties on both sides
    y = x + rng.normal(0, 0.2, size=30).round(1)
    assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_tau_of_identical_reversed_and_constant_rankings():
    assert kendall_tau([3, 2, 1], [3, 2, 1]) == 1.0
    assert kendall_tau([3, 2, 1], [1, 2, 3]) == -1.0
    assert kendall_tau([1, 1], [1, 2]) is None


def test_competition_ranks():
    assert competition_ranks([0.5, 0.9, 0.5, 0.1]) == [2, 1, 2, 4]


def test_leave_one_team_out_hand_worked():
    # Topic 1. Team A's runs a1, a2 alone pooled "x" (relevant); team B's b1 alone pooled "y" (relevant);
    # both pooled "z" (relevant); "n" (non-relevant) came from A. Run c1 (team C) was never pooled.
    qrels = {"1": {"x": 1, "y": 1, "z": 1, "n": 0, "old": 1}}  # "old" was judged without being pooled
    contributors = {("1", "x"): frozenset({"A"}), ("1", "y"): frozenset({"B"}), ("1", "z"): frozenset({"A", "B"}),
                    ("1", "n"): frozenset({"A"})}
    rankings = {
        "a1": {"1": ["x", "z"]},  # P@2 full 1; without A's unique x and n: 1/2
        "a2": {"1": ["n", "x"]},  # full 1/2; reduced 0
        "b1": {"1": ["y", "q"]},  # full 1/2; reduced 0
        "c1": {"1": ["old", "y"]},  # full 1; C brought nothing: reduced 1
    }
    teams = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
    report = leave_one_team_out(rankings, teams, qrels, contributors, measure="P@2")
    rows = {row.run: row for row in report.runs}
    assert [row.run for row in report.runs] == ["a1", "c1", "a2", "b1"]  # full score, ties by name
    assert {run: (row.full, row.reduced, row.delta) for run, row in rows.items()} == {
        "a1": (1.0, 0.5, -0.5), "a2": (0.5, 0.0, -0.5), "b1": (0.5, 0.0, -0.5), "c1": (1.0, 1.0, 0.0)}
    assert {run: (row.rank_full, row.rank_reduced) for run, row in rows.items()} == {
        "a1": (1, 2), "c1": (1, 1), "a2": (3, 3), "b1": (3, 3)}
    assert {run: row.pooled for run, row in rows.items()} == {"a1": True, "a2": True, "b1": True, "c1": False}
    # judged@2: a1 has both judged, then only z; c1 both, before and after.
    assert (rows["a1"].judged_full, rows["a1"].judged_reduced, rows["c1"].judged_reduced) == (1.0, 0.5, 1.0)
    assert report.unique == {"A": 2, "B": 1, "C": 0}
    # Full (1, 1, .5, .5) against reduced (.5, 1, 0, 0): SciPy's tau-b as the reference.
    assert report.kendall_tau == pytest.approx(stats.kendalltau([1, 1, 0.5, 0.5], [0.5, 1, 0, 0]).statistic)


def test_the_statistics_modules_import_without_django():
    code = "import sys, assessments.metrics.significance, assessments.metrics.reusability; sys.exit('django' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT).returncode == 0


def test_runs_over_different_topics_are_compared_on_the_topics_both_have():
    rng = np.random.default_rng(9)
    topics = [str(t) for t in range(12)]
    full = [dict(zip(topics, rng.uniform(0, 1, 12).tolist())) for _ in range(3)]
    partial = dict(list(full[2].items())[:8])  # a run that answered only 8 topics
    per_topic = [full[0], full[1], partial]
    tests = {(t.a, t.b): t for t in compare_all(per_topic, test="t")}
    assert set(tests) == {(0, 1), (0, 2), (1, 2)}
    common = topics[:8]
    expected = stats.ttest_rel([full[0][t] for t in common], [partial[t] for t in common]).pvalue
    assert tests[0, 2].p_value == pytest.approx(expected, rel=1e-9)
    assert tests[0, 2].mean_diff == pytest.approx(np.mean([full[0][t] - partial[t] for t in common]))
    assert tests[0, 1].p_value == pytest.approx(stats.ttest_rel(list(full[0].values()), list(full[1].values())).pvalue)
    # Holm over the three pairs, whichever group each came from.
    assert [t.p_holm for t in tests.values()] == pytest.approx(holm([t.p_value for t in tests.values()]).tolist())
    intervals = confidence_intervals([full[0], {}, partial], seed=1)
    assert intervals[1] is None
    low, high = bootstrap_ci(np.array([[partial[t]] for t in sorted(partial)]), seed=1)
    assert intervals[2] == (low[0], high[0])
