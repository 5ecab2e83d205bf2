"""The local judge's thresholds: the fit reproduces as many human labels as the best monotone thresholds can,
checked against trying every set of thresholds."""

import itertools
import random

import pytest

from assessments.metrics.calibration import calibrate, grade_of


def _matches(pairs, cuts, lowest):
    return sum(grade_of(s, cuts, lowest) == g for s, g in pairs)


def _best_by_brute_force(pairs, grades):
    points = sorted({s for s, _ in pairs})
    candidates = [points[0] - 1] + [(a + b) / 2 for a, b in itertools.pairwise(points)] + [points[-1] + 1]
    return max(
        _matches(pairs, list(zip(chosen, grades[1:], strict=True)), grades[0])
        for chosen in itertools.combinations_with_replacement(candidates, len(grades) - 1)
    )


@pytest.mark.parametrize("seed", range(25))
def test_the_fit_is_as_good_as_the_best_thresholds(seed):
    rng = random.Random(seed)
    grades = sorted(rng.sample([-2, 0, 1, 2, 3], rng.choice([2, 3, 4])))
    # Similarities on a coarse grid, so ties occur; grades rise with similarity, with noise.
    pairs = []
    for _ in range(rng.randint(1, 14)):
        s = round(rng.random(), 1)
        index = min(len(grades) - 1, max(0, int(s * len(grades)) + rng.choice([-1, 0, 0, 1])))
        pairs.append((s, grades[index]))
    cuts = calibrate(pairs, grades)
    assert [g for _, g in cuts] == grades[1:]
    given = [t for t, _ in cuts if t is not None]
    assert given == sorted(given) and all(t is None for t, _ in cuts[len(given):])  # thresholds never fall
    assert _matches(pairs, cuts, grades[0]) == _best_by_brute_force(pairs, grades)


def test_separable_labels_are_all_reproduced_with_thresholds_halfway():
    pairs = [(0.1, 0), (0.2, 0), (0.4, 1), (0.5, 1), (0.8, 2)]
    assert calibrate(pairs, [0, 1, 2]) == [(pytest.approx(0.3), 1), (pytest.approx(0.65), 2)]


def test_a_grade_nobody_earned_is_never_given():
    cuts = calibrate([(0.1, 0), (0.9, 1)], [0, 1, 2])
    assert grade_of(1.0, cuts, 0) == 1 and cuts[-1] == (None, 2)


def test_calibration_needs_labels():
    with pytest.raises(ValueError, match="judge some topics first"):
        calibrate([], [0, 1])
