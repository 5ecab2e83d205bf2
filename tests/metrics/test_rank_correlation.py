"""Rank correlations between leaderboards: τ-b and top-k τ against SciPy's kendalltau, τ_AP against a transcription
of its definition (Yilmaz, Aslam & Robertson, SIGIR 2008), on generated leaderboards with ties, and small cases
worked by hand."""

import numpy as np
import pytest
from scipy import stats

from assessments.metrics.rank_correlation import kendall_tau, tau_ap, top_k_tau


def leaderboards(seed: int, runs: int = 40) -> tuple[list[float], list[float]]:
    """Human-like and machine-like means of the same runs, both with ties (scores on a coarse grid)."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 12, size=runs) / 12
    machine = np.round(human + rng.normal(0, 0.15, size=runs), 1)
    return human.tolist(), machine.tolist()


def ranked_list(scores: list[float]) -> list[int]:
    """The runs best first; a tie goes to the run listed first (the contract the module states)."""
    return sorted(range(len(scores)), key=lambda run: (-scores[run], run))


def tau_ap_by_definition(estimate: list[float], truth: list[float]) -> float:
    """Yilmaz et al. 2008, eq. 3: τ_AP = 2/(N−1) · Σ_{i=2}^{N} C(i)/(i−1) − 1, C(i) the items above rank i in the
    estimated list that the true list also ranks above the item at rank i."""
    system, actual = ranked_list(estimate), ranked_list(truth)
    n = len(system)
    total = 0.0
    for i in range(2, n + 1):
        item = system[i - 1]
        c = len([other for other in system[: i - 1] if actual.index(other) < actual.index(item)])
        total += c / (i - 1)
    return 2 / (n - 1) * total - 1


@pytest.mark.parametrize("seed", range(6))
def test_kendall_tau_is_scipys_tau_b_on_leaderboards_with_ties(seed):
    human, machine = leaderboards(seed)
    assert len(set(human)) < len(human) and len(set(machine)) < len(machine)  # ties on both sides
    assert kendall_tau(human, machine) == pytest.approx(stats.kendalltau(human, machine).statistic, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [2, 5, 10, 40, 100])
def test_top_k_tau_is_scipys_tau_b_over_the_human_top_k(seed, k):
    human, machine = leaderboards(seed)
    top = ranked_list(human)[:k]
    expected = stats.kendalltau([human[i] for i in top], [machine[i] for i in top]).statistic
    found = top_k_tau(human, machine, k)
    if np.isnan(expected):
        assert found is None
    else:
        assert found == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_tau_ap_is_its_definition_on_leaderboards_with_ties(seed):
    human, machine = leaderboards(seed)
    assert tau_ap(machine, human) == pytest.approx(tau_ap_by_definition(machine, human), abs=1e-12)
    assert tau_ap(human, machine) == pytest.approx(tau_ap_by_definition(human, machine), abs=1e-12)


def test_identical_and_reversed_leaderboards():
    scores = [0.9, 0.7, 0.7, 0.4, 0.1]
    assert kendall_tau(scores, scores) == 1.0 and top_k_tau(scores, scores, 3) == 1.0 and tau_ap(scores, scores) == 1.0
    distinct = [0.9, 0.7, 0.5, 0.4, 0.1]
    reversed_ = [-s for s in distinct]
    assert kendall_tau(distinct, reversed_) == -1.0 and top_k_tau(distinct, reversed_, 3) == -1.0
    assert tau_ap(reversed_, distinct) == -1.0


def test_tau_ap_punishes_a_swap_at_the_top_more_than_one_at_the_bottom():
    # Four runs a > b > c > d. Worked by hand from eq. 3: swapping a and b gives C = 0, 2, 3 over i − 1 = 1, 2, 3,
    # so 2/3 · (0 + 1 + 1) − 1 = 1/3; swapping c and d gives C = 1, 2, 2, so 2/3 · (1 + 1 + 2/3) − 1 = 7/9.
    # τ is 2/3 for both: one discordant pair of six.
    truth = [4.0, 3.0, 2.0, 1.0]
    top_swapped, bottom_swapped = [3.0, 4.0, 2.0, 1.0], [4.0, 3.0, 1.0, 2.0]
    assert tau_ap(top_swapped, truth) == pytest.approx(1 / 3)
    assert tau_ap(bottom_swapped, truth) == pytest.approx(7 / 9)
    assert kendall_tau(top_swapped, truth) == kendall_tau(bottom_swapped, truth) == pytest.approx(2 / 3)


def test_undefined_figures_are_none_and_bad_input_is_refused():
    assert kendall_tau([0.5, 0.5, 0.5], [0.1, 0.2, 0.3]) is None  # a constant leaderboard
    assert tau_ap([1.0], [1.0]) is None
    with pytest.raises(ValueError, match="same runs"):
        tau_ap([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="k of 2 or more"):
        top_k_tau([1.0, 2.0], [1.0, 2.0], 1)
