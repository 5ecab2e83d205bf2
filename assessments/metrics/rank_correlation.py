"""How far two leaderboards agree: Kendall's τ-b over all runs, τ among the top runs only, and τ_AP.

Pure Python and numpy, no Django import. Each function takes two score lists over the same runs, index-aligned
(``truth[i]`` and ``estimate[i]`` are run i's scores under the reference labels and under the labels being
judged), best = highest.

* Kendall's τ-b counts every pair of runs alike, so two leaderboards that swap only their two best runs score
  as high as two that swap their two worst ones. Ties are handled as SciPy's ``kendalltau`` default (τ-b).
* Top-k τ is τ-b over the k runs the reference ranks best: whether the runs people read about agree.
* τ_AP (Yilmaz, Aslam & Robertson, SIGIR 2008, "A new rank correlation coefficient for information retrieval")
  weighs a swap by how high it is in the estimated ranking, as average precision weighs an error: it is the
  measure for "does the model judge pick the same winners". It is asymmetric: the estimate is compared against
  the truth, never the other way round.

τ-b treats ties as ties. Top-k τ's choice of the k runs and τ_AP need an order with no ties: there a tie is
broken by position in the input (the earlier run first), so a caller passes runs in the order that should win
ties (services.judge_impact passes them by run tag, as the leaderboard lists equal scores). Under that rule two
identical score lists are always identical rankings, so τ_AP is 1 for them whatever their ties.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b of two score lists (SciPy's ``kendalltau`` default), None when either is constant or there
    are fewer than two items.

    τ-b = (concordant − discordant) / sqrt((pairs − pairs tied in x) · (pairs − pairs tied in y)).
    """
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(a) != len(b):
        raise ValueError("both rankings must score the same runs")
    upper = np.triu_indices(len(a), k=1)
    da = np.sign(a[:, None] - a[None, :])[upper]
    db = np.sign(b[:, None] - b[None, :])[upper]
    untied_a, untied_b = np.count_nonzero(da), np.count_nonzero(db)
    if not untied_a or not untied_b:
        return None
    return float(np.sum(da * db) / np.sqrt(untied_a * untied_b))


def competition_ranks(scores: Sequence[float]) -> list[int]:
    """1-based ranks, best (highest) first; equal scores share the better rank ("1224")."""
    return [1 + sum(other > score for other in scores) for score in scores]


def ranking(scores: Sequence[float]) -> list[int]:
    """The indices of ``scores`` best first, ties by index (the module docstring's tie rule)."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def top_k_tau(truth: Sequence[float], estimate: Sequence[float], k: int) -> float | None:
    """Kendall's τ-b between ``truth`` and ``estimate`` over the ``k`` runs ``truth`` ranks best (all runs when
    there are fewer). A tie at the k-th place is broken by position in the input. None as `kendall_tau`."""
    if len(truth) != len(estimate):
        raise ValueError("both rankings must score the same runs")
    if k < 2:
        raise ValueError(f"τ among the top k runs needs k of 2 or more, not {k}")
    top = ranking(truth)[:k]
    return kendall_tau([truth[i] for i in top], [estimate[i] for i in top])


def tau_ap(estimate: Sequence[float], truth: Sequence[float]) -> float | None:
    """τ_AP of the ranking ``estimate`` makes against the one ``truth`` makes (Yilmaz et al. 2008, eq. 3), both
    with ties broken by position in the input; None with fewer than two items.

    τ_AP = 2/(N − 1) · Σ_{i=2..N} C(i)/(i − 1) − 1, where C(i) counts the items above rank i in the estimated
    ranking that the true ranking also puts above the item at rank i. 1: the same order; −1: reversed.
    """
    if len(truth) != len(estimate):
        raise ValueError("both rankings must score the same runs")
    n = len(truth)
    if n < 2:
        return None
    position = {item: place for place, item in enumerate(ranking(truth))}
    estimated = [position[item] for item in ranking(estimate)]  # each estimated place's true place
    total = 0.0
    for i in range(1, n):
        correct = sum(above < estimated[i] for above in estimated[:i])
        total += correct / i
    return 2 * total / (n - 1) - 1
