"""Confidence intervals and paired tests for classification submissions (Touché 2023 Task 4), over items.

metrics.significance resamples topics because a ranking measure is a mean of per-topic values. Macro-F1 is not a
mean of per-item values: a comment's contribution depends on every other comment's label. So the bootstrap here
draws ITEMS with replacement and scores each draw again from scratch, and the paired test swaps the two
submissions' predictions of an item (not the sign of a per-item difference) and scores both again.

Every figure of metrics.classification comes from a submission's confusion counts, so a draw is scored from its
counts: each item is a code (gold label, predicted label), and the counts of a batch of draws are one matrix
product of (draws × items) multiplicities with the (items × codes) one-hot matrix, for all draws at once. Each
draw is scored as the organisers' scorer would score that list of comments: the labels averaged over are those in
the draw's gold or predictions (`measure_arrays` equals metrics.classification.scores on every draw, tested).

Pure numpy, no Django import. The generator and its seed are metrics.significance's, so a table states one seed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .classification import CONVENTIONS, MEASURES
from .significance import ALPHA, DEFAULT_SEED, PairTest, holm, sign_flips

RESAMPLES = 1000
"""Bootstrap draws unless asked otherwise: each is a full scoring of every submission, so fewer than the 10,000
topic resamples of ranking runs; the interval's ends move in the third decimal between seeds at this count."""
PERMUTATIONS = 1000
_BATCH = 100  # draws scored at once: 100 × 10,000 items of doubles = 8 MB
_TIE = 1e-12  # as metrics.significance: a null difference this close to the observed one counts as reaching it
_NEVER_PREDICTED_PRECISION = {"touche": 1.0, "sklearn": 0.0}


class Coded:
    """Gold labels and several submissions' predictions for the same items, as integer codes.

    ``labels`` are all labels seen (gold or predicted by any submission), sorted; ``codes[s][i]`` is
    ``gold * L + predicted`` of item i in submission s, L = len(labels).
    """

    def __init__(self, gold: Sequence[str], predictions: Sequence[Sequence[str]]) -> None:
        if not gold:
            raise ValueError("nothing to score: no gold labels")
        for predicted in predictions:
            if len(predicted) != len(gold):
                raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
        self.labels = sorted(set(gold).union(*map(set, predictions)))
        index = {label: i for i, label in enumerate(self.labels)}
        size = len(self.labels)
        gold_codes = np.fromiter((index[label] for label in gold), dtype=np.intp, count=len(gold)) * size
        self.codes = [
            gold_codes + np.fromiter((index[label] for label in predicted), dtype=np.intp, count=len(gold))
            for predicted in predictions
        ]
        self.items = len(gold)

    @property
    def cells(self) -> int:
        return len(self.labels) ** 2

    def one_hot(self, submission: int, items: np.ndarray | None = None) -> np.ndarray:
        """(items × cells) indicator of each item's code in ``submission`` (all items, or those given)."""
        codes = self.codes[submission] if items is None else self.codes[submission][items]
        matrix = np.zeros((len(codes), self.cells))
        matrix[np.arange(len(codes)), codes] = 1.0
        return matrix

    def counts(self, submission: int) -> np.ndarray:
        """The submission's confusion counts over all items, flattened (cells)."""
        return np.bincount(self.codes[submission], minlength=self.cells).astype(np.float64)


def measure_arrays(confusions: np.ndarray, labels: int, *, convention: str = "touche") -> dict[str, np.ndarray]:
    """Every measure of MEASURES for each confusion matrix in ``confusions`` (… × labels², counts[gold, predicted]
    flattened), the arithmetic of metrics.classification: a label counts in the macro averages when it occurs in
    that matrix's gold or predictions."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}: expected one of {', '.join(CONVENTIONS)}")
    matrix = confusions.reshape(*confusions.shape[:-1], labels, labels)
    tp = np.diagonal(matrix, axis1=-2, axis2=-1)
    gold = matrix.sum(axis=-1)
    predicted = matrix.sum(axis=-2)
    present = (gold + predicted) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(gold > 0, tp / gold, 0.0)
        precision = np.where(predicted > 0, tp / predicted, _NEVER_PREDICTED_PRECISION[convention])
        f1 = np.where(precision + recall == 0, 0.0, 2 * precision * recall / (precision + recall))
        kinds = present.sum(axis=-1)
        total = gold.sum(axis=-1)
        accuracy = tp.sum(axis=-1) / total

        def macro(values: np.ndarray) -> np.ndarray:
            return np.where(present, values, 0.0).sum(axis=-1) / kinds

        micro_f1 = np.where(accuracy == 0, 0.0, 2 * accuracy * accuracy / (accuracy + accuracy))
    values = (accuracy, accuracy, micro_f1, macro(recall), macro(precision), macro(f1), accuracy)
    return dict(zip(MEASURES, values))


def bootstrap_intervals(
    gold: Sequence[str],
    predictions: Sequence[Sequence[str]],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    convention: str = "touche",
) -> list[dict[str, tuple[float, float]]]:
    """Per submission, measure -> (low, high): the percentile-bootstrap interval over items at ``level``.

    Every submission is scored on the same draws (items drawn with replacement, as many as there are, from a
    generator seeded with ``seed``), so intervals of two submissions rest on the same samples. Percentiles
    interpolate linearly, as metrics.significance.bootstrap_ci.
    """
    if not 0 < level < 1:
        raise ValueError(f"confidence level must lie between 0 and 1, got {level}")
    coded = Coded(gold, predictions)
    items = coded.items
    rng = np.random.default_rng(seed)
    one_hots = [coded.one_hot(s) for s in range(len(predictions))]
    values: list[dict[str, list[np.ndarray]]] = [{name: [] for name in MEASURES} for _ in predictions]
    for start in range(0, resamples, _BATCH):
        batch = min(_BATCH, resamples - start)
        draws = rng.integers(0, items, size=(batch, items))
        offsets = (np.arange(batch) * items)[:, None]
        multiplicity = np.bincount((draws + offsets).ravel(), minlength=batch * items).reshape(batch, items).astype(np.float64)
        for submission, one_hot in enumerate(one_hots):
            found = measure_arrays(multiplicity @ one_hot, len(coded.labels), convention=convention)
            for name, array in found.items():
                values[submission][name].append(array)
    intervals = []
    for by_measure in values:
        bounds = {}
        for name, arrays in by_measure.items():
            low, high = np.percentile(np.concatenate(arrays), [50 * (1 - level), 50 * (1 + level)])
            bounds[name] = (float(low), float(high))
        intervals.append(bounds)
    return intervals


def paired_permutation_test(
    gold: Sequence[str],
    a: Sequence[str],
    b: Sequence[str],
    *,
    measure: str,
    permutations: int = PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    convention: str = "touche",
) -> tuple[float, float]:
    """(a's measure − b's, two-sided p-value) of the paired randomisation test over items.

    Under the null hypothesis the two submissions are exchangeable on each item, so each item's pair of
    predictions is swapped by a coin flip and both are scored again; p is the share of flips whose difference is at
    least as far from 0 as the observed one. Only items the two predict differently can change anything, so only
    they are flipped: every flip is enumerated when 2^(such items) is no more than ``permutations`` (an exact
    test), else the flips are drawn from a generator seeded with ``seed`` and the observed one is counted in,
    p = (hits + 1) / (draws + 1), as metrics.significance.paired_permutation_test.
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}: expected one of {', '.join(MEASURES)}")
    coded = Coded(gold, [a, b])
    size = len(coded.labels)
    base_a, base_b = coded.counts(0), coded.counts(1)
    observed = measure_arrays(np.stack([base_a, base_b]), size, convention=convention)[measure]
    difference = float(observed[0] - observed[1])
    differing = np.flatnonzero(coded.codes[0] != coded.codes[1])
    if not len(differing):
        return difference, 1.0
    flips, exact = sign_flips(len(differing), permutations=permutations, seed=seed)
    swapped = (flips < 0).astype(np.float64)
    # Swapping an item moves its count from a's code to b's in a's matrix, and back in b's.
    delta = swapped @ (coded.one_hot(1, differing) - coded.one_hot(0, differing))
    null_a = measure_arrays(base_a + delta, size, convention=convention)[measure]
    null_b = measure_arrays(base_b - delta, size, convention=convention)[measure]
    hits = int((np.abs(null_a - null_b) >= abs(difference) * (1 - _TIE) - _TIE).sum())
    adjustment = 0 if exact else 1
    return difference, (hits + adjustment) / (len(flips) + adjustment)


def compare_pairs(
    gold: Sequence[str],
    predictions: Sequence[Sequence[str]],
    pairs: Sequence[tuple[int, int]] | None = None,
    *,
    measure: str,
    permutations: int = PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    alpha: float = ALPHA,
    convention: str = "touche",
) -> list[PairTest]:
    """The ``pairs`` of submissions (indices into ``predictions``; None: every pair a < b) by
    `paired_permutation_test`, Holm–Bonferroni over the pairs compared at ``alpha`` (metrics.significance.PairTest:
    ``mean_diff`` is the difference of the measure).

    A test costs flips × items the two predict differently, so all pairs of 100 submissions of 10,000 items
    (4,950 tests) take minutes; the best against each other (99) takes seconds.
    """
    if pairs is None:
        pairs = [(a, b) for a in range(len(predictions)) for b in range(a + 1, len(predictions))]
    found = [
        paired_permutation_test(
            gold, predictions[a], predictions[b], measure=measure, permutations=permutations, seed=seed,
            convention=convention,
        )
        for a, b in pairs
    ]
    adjusted = holm([p for _, p in found]).tolist() if pairs else []
    return [
        PairTest(a=a, b=b, mean_diff=diff, p_value=p, p_holm=p_holm, significant=p_holm <= alpha)
        for (a, b), (diff, p), p_holm in zip(pairs, found, adjusted)
    ]
