"""Confidence intervals and significance tests over topics, as overview papers report them.

Pure numpy (plus SciPy's Student t distribution), no Django import. Every function takes a matrix of per-topic
scores, one row per topic and one column per run, all runs over the same topics, and works on all runs or all
pairs at once: 84 runs mean 3,486 pairs, and 10,000 resamples of each are a few matrix products, not loops.

* ``bootstrap_ci``: percentile bootstrap of each run's mean over topics (Efron and Tibshirani 1993, ch. 13):
  topics are drawn with replacement, the same draws for every run, from a seeded generator.
* ``paired_t_test``: the two-sided paired t-test (SciPy's ``ttest_rel``).
* ``paired_permutation_test``: the two-sided paired randomisation test of Smucker, Allan and Carterette (CIKM
  2007): under the null hypothesis each topic's pair of scores is exchangeable, so the sign of its difference is
  a coin flip. The p-value is the share of sign flips whose mean difference is at least as far from 0 as the
  observed one. When 2^topics is no more than the permutations asked for, every flip is enumerated (an exact
  test); otherwise the flips are drawn and the observed one is counted in, p = (hits + 1) / (draws + 1)
  (Phipson and Smyth 2010), as SciPy's ``permutation_test`` does.
* ``holm``: Holm–Bonferroni adjusted p-values (statsmodels' ``multipletests(method="holm")``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 10_000
DEFAULT_SEED = 2020
"""The generator's seed unless one is given: any fixed number makes a table reproducible; it is reported."""
ALPHA = 0.05
_PAIR_CHUNK = 256  # pairs compared at once: 10,000 × 256 doubles = 20 MB
# A flip's mean difference counts as "as extreme" when within this of the observed one: sums of the same numbers
# in another order differ in the last bits, and a genuine tie must not fall on either side by chance.
_TIE = 1e-12

Pairs = Sequence[tuple[int, int]]


def _matrix(scores) -> np.ndarray:
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError("scores must be a topics × runs matrix with at least one topic")
    return matrix


def bootstrap_ci(
    scores, *, level: float = 0.95, resamples: int = RESAMPLES, seed: int = DEFAULT_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) percentile-bootstrap bounds of each run's mean at confidence ``level``.

    Each resample draws as many topics as there are, with replacement; a run's mean over the draw is its count
    vector times its scores, so all resamples of all runs are one (resamples × topics) @ (topics × runs) product.
    Percentiles interpolate linearly (numpy's default, as SciPy's ``bootstrap``).
    """
    matrix = _matrix(scores)
    if not 0 < level < 1:
        raise ValueError(f"confidence level must lie between 0 and 1, got {level}")
    topics = matrix.shape[0]
    draws = np.random.default_rng(seed).integers(0, topics, size=(resamples, topics))
    offsets = (np.arange(resamples) * topics)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=resamples * topics).reshape(resamples, topics)
    means = counts @ matrix / topics
    low, high = np.percentile(means, [50 * (1 - level), 50 * (1 + level)], axis=0)
    return low, high


def _differences(matrix: np.ndarray, pairs: Pairs) -> np.ndarray:
    index = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    return matrix[:, index[:, 0]] - matrix[:, index[:, 1]]


def paired_t_test(scores, pairs: Pairs) -> np.ndarray:
    """Two-sided p-value of the paired t-test for each (a, b) pair of columns, as ``scipy.stats.ttest_rel``.

    Where ttest_rel has no answer, these are defined: identical scores on every topic give 1 (no evidence of a
    difference), the same nonzero difference on every topic gives 0, and a single topic gives 1.
    """
    from scipy.special import stdtr  # SciPy takes longer to import than most commands take to run: only when testing

    differences = _differences(_matrix(scores), pairs)
    topics = differences.shape[0]
    if topics < 2:
        return np.ones(differences.shape[1])
    mean = differences.mean(axis=0)
    spread = differences.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (spread / np.sqrt(topics))
        p = 2 * stdtr(topics - 1, -np.abs(t))
    constant = spread == 0
    p[constant] = np.where(mean[constant] == 0, 1.0, 0.0)
    return p


def sign_flips(topics: int, *, permutations: int = RESAMPLES, seed: int = DEFAULT_SEED) -> tuple[np.ndarray, bool]:
    """(flips × topics matrix of ±1, exact): every sign vector when there are no more than ``permutations``,
    else ``permutations`` drawn from a seeded generator."""
    if 2**topics <= permutations:
        bits = (np.arange(2**topics)[:, None] >> np.arange(topics)) & 1
        return 1.0 - 2.0 * bits, True
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(permutations, topics)), False


def paired_permutation_test(
    scores, pairs: Pairs, *, permutations: int = RESAMPLES, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """Two-sided p-value of the paired randomisation test for each (a, b) pair of columns.

    The same sign flips serve every pair: flipping topic t's difference of a and b is flipping t's score in both,
    so each flip's mean difference for every pair comes from one (flips × topics) @ (topics × runs) product.
    """
    matrix = _matrix(scores)
    topics = matrix.shape[0]
    flips, exact = sign_flips(topics, permutations=permutations, seed=seed)
    flipped = flips @ matrix / topics
    observed = np.abs(_differences(matrix, pairs).mean(axis=0))
    index = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    hits = np.empty(len(index))
    for start in range(0, len(index), _PAIR_CHUNK):
        chunk = index[start:start + _PAIR_CHUNK]
        null = np.abs(flipped[:, chunk[:, 0]] - flipped[:, chunk[:, 1]])
        threshold = observed[start:start + _PAIR_CHUNK] * (1 - _TIE) - _TIE
        hits[start:start + len(chunk)] = (null >= threshold).sum(axis=0)
    adjustment = 0 if exact else 1
    return (hits + adjustment) / (len(flips) + adjustment)


def holm(p_values) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values: the i-th smallest times (m − i + 1), made monotone, capped at 1.
    A hypothesis is rejected at level α when its adjusted p-value is at most α."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return adjusted


# Runs over different topics. trec_eval averages a run over the qrels topics it answers, so two runs can differ
# in their topics; the tests below pair runs on the topics both have, and the bootstrap resamples each run's own.
# Runs with the same topics (nearly always all of them) are handled together, one matrix per group.

TESTS = ("t", "permutation")


@dataclass(frozen=True)
class PairTest:
    """Run ``a`` against run ``b`` (indices into the per-topic list given), on the topics both have."""

    a: int
    b: int
    mean_diff: float  # mean of a − b over those topics
    p_value: float
    p_holm: float
    significant: bool  # p_holm ≤ α


def _groups(per_topic: Sequence[Mapping[str, float]]) -> dict[frozenset[str], list[int]]:
    groups: dict[frozenset[str], list[int]] = {}
    for index, scores in enumerate(per_topic):
        groups.setdefault(frozenset(scores), []).append(index)
    return groups


def _columns(per_topic: Sequence[Mapping[str, float]], runs: Sequence[int], topics: Sequence[str]) -> np.ndarray:
    return np.array([[per_topic[run][topic] for run in runs] for topic in topics], dtype=np.float64).reshape(len(topics), len(runs))


def confidence_intervals(
    per_topic: Sequence[Mapping[str, float]], *, level: float = 0.95, resamples: int = RESAMPLES, seed: int = DEFAULT_SEED
) -> list[tuple[float, float] | None]:
    """``bootstrap_ci`` of each run (topic -> score), None for a run without topics."""
    intervals: list[tuple[float, float] | None] = [None] * len(per_topic)
    for topics, runs in _groups(per_topic).items():
        if topics:
            ordered = sorted(topics)
            low, high = bootstrap_ci(_columns(per_topic, runs, ordered), level=level, resamples=resamples, seed=seed)
            for run, lo, hi in zip(runs, low.tolist(), high.tolist()):
                intervals[run] = (lo, hi)
    return intervals


def compare_all(
    per_topic: Sequence[Mapping[str, float]], *, test: str = "t", permutations: int = RESAMPLES, seed: int = DEFAULT_SEED,
    alpha: float = ALPHA,
) -> list[PairTest]:
    """Every pair (a < b) of runs (topic -> score), tested by ``test`` ("t" or "permutation") on their common
    topics, with Holm–Bonferroni over all pairs at ``alpha``. A pair without a common topic gets p = 1."""
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}: use t or permutation")
    groups = list(_groups(per_topic).items())
    found: dict[tuple[int, int], tuple[float, float]] = {}
    for first, (topics_a, runs_a) in enumerate(groups):
        for topics_b, runs_b in groups[first:]:
            pairs = sorted({(min(a, b), max(a, b)) for a in runs_a for b in runs_b if a != b})
            if not pairs:
                continue
            common = sorted(topics_a & topics_b)
            if not common:
                found.update(dict.fromkeys(pairs, (0.0, 1.0)))
                continue
            runs = sorted(set(runs_a) | set(runs_b))
            local = {run: i for i, run in enumerate(runs)}
            matrix = _columns(per_topic, runs, common)
            local_pairs = [(local[a], local[b]) for a, b in pairs]
            if test == "t":
                p = paired_t_test(matrix, local_pairs)
            else:
                p = paired_permutation_test(matrix, local_pairs, permutations=permutations, seed=seed)
            diffs = _differences(matrix, local_pairs).mean(axis=0)
            found.update(zip(pairs, zip(diffs.tolist(), p.tolist())))
    pairs = sorted(found)
    adjusted = holm([found[pair][1] for pair in pairs]).tolist() if pairs else []
    return [
        PairTest(a=a, b=b, mean_diff=found[a, b][0], p_value=found[a, b][1], p_holm=p_holm, significant=p_holm <= alpha)
        for (a, b), p_holm in zip(pairs, adjusted)
    ]


def not_worse_than_best(tests: Sequence[PairTest], best: int) -> set[int]:
    """The runs that no test found significantly different from run ``best``, ``best`` included."""
    different = {test.a if test.b == best else test.b for test in tests if best in (test.a, test.b) and test.significant}
    runs = {test.a for test in tests} | {test.b for test in tests} | {best}
    return runs - different


def leaderboard_statistics(
    per_topic: Sequence[Mapping[str, float]], means: Sequence[float], *, level: float | None = None, test: str | None = None,
    seed: int = DEFAULT_SEED,
) -> tuple[list[tuple[float, float] | None] | None, set[int] | None]:
    """What a leaderboard shows beside its means, for any measure: each run's interval at ``level`` (None when no
    level is asked), and the runs no paired ``test`` tells from the best mean (None when no test is asked; the
    first of equal means is the best)."""
    intervals = confidence_intervals(per_topic, level=level, seed=seed) if level is not None else None
    group = None
    if test is not None and means:
        best = max(range(len(means)), key=lambda i: means[i])
        group = not_worse_than_best(compare_all(per_topic, test=test, seed=seed), best)
    return intervals, group
