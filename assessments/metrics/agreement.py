"""Agreement between assessors: the training phase's kappa test and the organiser's agreement page.

Pure Python and numpy, with no Django import. selectors.agreement reads judgments from the database and
passes in one label dimension at a time as a plain mapping, item -> rater -> label::

    {("t1", "doc-7"): {"alice": 2, "bob": 1}, ("t1", "doc-9"): {"alice": 0}, ...}

Item and rater keys may be any hashable values. A missing label is simply absent. Labels are ints for the
ordinal dimensions (a scheme's graded ones, such as Touché's relevance 0–2 with 2020's −2 for "spam / no
argument") and strings or ints for the nominal ones (categories such as a stance, yes/no questions as 1/0).

``categories`` is the label scale, in order. Ordinal statistics (weighted kappa, ordinal alpha) use a label's
position in this sequence, not its numeric value, so −2, 0, 1, 2 are four equally spaced steps. By default the
scale is the sorted set of labels that occur. Pass the campaign's scale anyway: a category nobody used still
changes the ordinal distances and the size of the confusion matrices.

Every coefficient is 1 for perfect agreement and 0 for chance-level agreement. Each one is undefined when the
disagreement expected by chance is zero, which happens when all raters used one and the same category. In
that case, and when there is nothing to compare, the functions return None rather than NaN. NaN would
spread silently through means and sort unpredictably in a table, while None makes the caller decide what to
show. Gwet's AC1 is the exception: its chance agreement is 0 when everyone used one category of a scale of two
or more, so unanimous labels give 1, and it is undefined only on a scale of fewer than two categories.

Sources for the formulas:

* Cohen's kappa: J. Cohen (1960), "A coefficient of agreement for nominal scales", Educational and
  Psychological Measurement 20(1). Weighted kappa: J. Cohen (1968), "Weighted kappa", Psychological Bulletin
  70(4).
* Fleiss' kappa: J. L. Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychological
  Bulletin 76(5).
* Krippendorff's alpha: K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg
  School for Communication Departmental Papers 43 (the coincidence-matrix formulation and the difference
  functions for each level of measurement).
* Mean pairwise kappa per rater: R. J. Light (1971), "Measures of response agreement for qualitative data",
  Psychological Bulletin 76(5).
* Gwet's AC1: K. L. Gwet (2008), "Computing inter-rater reliability and its variance in the presence of high
  agreement", British Journal of Mathematical and Statistical Psychology 61(1), and for many raters with missing
  labels K. L. Gwet (2014), "Handbook of Inter-Rater Reliability", 4th ed. The paradox it answers: A. R. Feinstein
  & D. V. Cicchetti (1990), "High agreement but low kappa: I", Journal of Clinical Epidemiology 43(6).

Labels are converted to integer codes once (``_encode``). After that every statistic is a few numpy operations
on count matrices, so a full report on 10 assessors × 10,000 documents takes milliseconds
(``bench/agreement.py``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from numbers import Real
from typing import Literal, TypeVar, cast

import numpy as np

Label = int | str
Item = TypeVar("Item", bound=Hashable)
Rater = TypeVar("Rater", bound=Hashable)
Ratings = Mapping[Item, Mapping[Rater, Label]]
"""item -> rater -> label. An item a rater did not judge has no entry for that rater."""
Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval"]

_MISSING = -1  # the code for "this rater gave no label to this item"


@dataclass(frozen=True)
class _Coded:
    """The ratings as an items × raters matrix of category positions, with ``_MISSING`` where there is no label."""

    codes: np.ndarray
    raters: tuple[Hashable, ...]
    categories: tuple[Label, ...]


def _scale(labels: Iterable[Label], categories: Sequence[Label] | None) -> tuple[Label, ...]:
    if categories is None:
        return tuple(sorted(set(labels)))
    scale = tuple(categories)
    if len(set(scale)) != len(scale):
        raise ValueError(f"categories repeat: {list(scale)}")
    return scale


def _positions(labels: Iterable[Label], scale: tuple[Label, ...]) -> list[int]:
    position = {label: i for i, label in enumerate(scale)}
    try:
        return [position[label] for label in labels]
    except KeyError as error:
        raise ValueError(f"label {error.args[0]!r} is not one of the categories {list(scale)}") from None


def _encode(ratings: Ratings[Item, Rater], categories: Sequence[Label] | None) -> _Coded:
    """Code every label once. Items keep the mapping's order and raters the order in which they first appear."""
    raters: dict[Hashable, int] = {}
    rows: list[int] = []
    columns: list[int] = []
    labels: list[Label] = []
    for row, by_rater in enumerate(ratings.values()):
        for rater, label in by_rater.items():
            rows.append(row)
            columns.append(raters.setdefault(rater, len(raters)))
            labels.append(label)
    scale = _scale(labels, categories)
    codes = np.full((len(ratings), len(raters)), _MISSING, dtype=np.intp)
    codes[np.asarray(rows, dtype=np.intp), np.asarray(columns, dtype=np.intp)] = _positions(labels, scale)
    return _Coded(codes=codes, raters=tuple(raters), categories=scale)


def _counts(codes: np.ndarray, k: int) -> np.ndarray:
    """The items × categories table of how many raters chose each category for each item (Fleiss' n_ij)."""
    rows, columns = np.nonzero(codes != _MISSING)
    flat = np.bincount(rows * k + codes[rows, columns], minlength=codes.shape[0] * k)
    return flat.reshape(codes.shape[0], k)


def _confusion(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """k × k table of co-occurring codes: rows are ``a``'s labels, columns are ``b``'s."""
    return np.bincount(a * k + b, minlength=k * k).reshape(k, k)


def _kappa(confusion: np.ndarray, weights: Weights) -> float | None:
    """Cohen's kappa from a confusion table, in its disagreement form 1 − Σ w·observed / Σ w·expected.

    This is Cohen's (1968) weighted kappa. With 0/1 weights it is exactly the (p_o − p_e) / (1 − p_e) of Cohen
    (1960). The weights are distances between category positions: |i − j| for linear, (i − j)² for quadratic.
    This matches scikit-learn's ``cohen_kappa_score``.
    """
    k = len(confusion)
    i, j = np.indices((k, k))
    if weights is None:
        distance = (i != j).astype(float)
    elif weights == "linear":
        distance = np.abs(i - j).astype(float)
    elif weights == "quadratic":
        distance = ((i - j) ** 2).astype(float)
    else:
        raise ValueError(f"unknown weights {weights!r}: expected None, 'linear' or 'quadratic'")
    n = confusion.sum()
    if n == 0:
        return None
    expected = np.outer(confusion.sum(1), confusion.sum(0)) / n
    chance = (distance * expected).sum()
    if chance == 0:
        return None
    return float(1 - (distance * confusion).sum() / chance)


def cohen_kappa(
    a: Sequence[Label | None],
    b: Sequence[Label | None],
    *,
    weights: Weights = None,
    categories: Sequence[Label] | None = None,
) -> float | None:
    """Cohen's kappa of two raters, where ``a[i]`` and ``b[i]`` are their labels for item i.

    None in either sequence means that rater did not label the item, and the item is skipped. The kappa is
    computed over the items both raters labelled. ``weights`` gives Cohen's (1968) weighted kappa, with
    distances between positions in ``categories``. Leave it at None for nominal labels.

    Returns None when no item was labelled by both raters, or when kappa is undefined because the expected
    disagreement is zero (both raters used only one and the same category). Raises ValueError if the
    sequences differ in length or a label is not in ``categories``.
    """
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    labels = [label for pair in pairs for label in pair]
    scale = _scale(labels, categories)
    codes = np.asarray(_positions(labels, scale), dtype=np.intp).reshape(-1, 2)
    return _kappa(_confusion(codes[:, 0], codes[:, 1], len(scale)), weights)


def _fleiss(counts: np.ndarray) -> tuple[float | None, int]:
    """Fleiss' kappa on the items that have the modal number of raters, and how many items that is.

    Fleiss (1971) defines kappa for a fixed number m of ratings per item:
    P̄ = mean over items of Σ_j n_ij(n_ij − 1) / (m(m − 1)), P_e = Σ_j p_j², and κ = (P̄ − P_e) / (1 − P_e).
    """
    per_item = counts.sum(1)
    tally = np.bincount(per_item[per_item >= 2])
    if not tally.any():
        return None, 0
    # On a tie the larger panel wins: more raters per item give a better estimate of the agreement.
    m = len(tally) - 1 - int(np.argmax(tally[::-1]))
    table = counts[per_item == m]
    agreement = ((table * (table - 1)).sum(1) / (m * (m - 1))).mean()
    chance = ((table.sum(0) / table.sum()) ** 2).sum()
    if chance == 1:
        return None, len(table)
    return float((agreement - chance) / (1 - chance)), len(table)


def fleiss_kappa(ratings: Ratings[Item, Rater], *, categories: Sequence[Label] | None = None) -> float | None:
    """Fleiss' (1971) kappa for nominal labels from any number of raters.

    Fleiss' formula assumes that every item has the same number m of ratings. Here m is the most common number
    of raters per item, among items with at least two, and only items with exactly m ratings are used. On a
    tie, the larger m is used. Items with more or fewer raters are left out; ``agreement_report`` reports how
    many items were used. We do not use one of the generalisations to varying m, for three reasons. First,
    they do not agree with each other: Fleiss, Levin & Paik (2003) give one for binary labels only,
    and Gwet (2014) weights items differently from a pooled version. Second, none of them is what statsmodels
    or R's irr compute, so none can be checked against a standard tool. Third, Krippendorff's alpha
    (``krippendorff_alpha``) already handles missing labels in a principled way. In a Touché training phase
    every assessor judges the same topic, so the modal panel is normally everyone and nothing is lost.

    Returns None when no item has two or more ratings, or when all the used ratings are in one category.
    """
    coded = _encode(ratings, categories)
    return _fleiss(_counts(coded.codes, len(coded.categories)))[0]


def _difference(level: Level, totals: np.ndarray, categories: tuple[Label, ...]) -> np.ndarray:
    """Krippendorff's squared difference δ²(c, k) between category positions c and k, for one level."""
    k = len(categories)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        # δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k) / 2)², which is the squared distance between the mid-ranks
        # cumsum(n)_g − n_g / 2 of c and k.
        mid_rank = np.cumsum(totals) - totals / 2
        return (mid_rank[:, None] - mid_rank[None, :]) ** 2
    values = np.asarray(categories, dtype=float)
    return (values[:, None] - values[None, :]) ** 2


def _alpha(counts: np.ndarray, categories: tuple[Label, ...], level: Level) -> float | None:
    """Krippendorff's alpha from the items × categories count table.

    Each item u with m_u ≥ 2 values adds (n_uc·n_uk − [c = k]·n_uc) / (m_u − 1) to the coincidence o_ck.
    With n_c = Σ_k o_ck and n = Σ_c n_c, α = 1 − (n − 1)·Σ o_ck δ²_ck / Σ n_c n_k δ²_ck. Items with a
    single value cannot be paired, so they add nothing.
    """
    pairable = counts.sum(1)
    counts = counts[pairable >= 2]
    if not len(counts):
        return None
    share = counts / (pairable[pairable >= 2] - 1)[:, None]
    coincidences = share.T @ counts - np.diag(share.sum(0))
    totals = coincidences.sum(1)
    difference = _difference(level, totals, categories)
    expected = (np.outer(totals, totals) * difference).sum()
    if expected == 0:
        return None
    return float(1 - (totals.sum() - 1) * (coincidences * difference).sum() / expected)


def krippendorff_alpha(
    ratings: Ratings[Item, Rater], *, level: Level, categories: Sequence[Label] | None = None
) -> float | None:
    """Krippendorff's (2011) alpha, which allows any number of raters per item and missing labels.

    ``level`` picks the difference function. ``"nominal"`` counts any disagreement as 1. ``"ordinal"`` uses
    ranks, with positions in ``categories`` as the order, and weights each step by how often its categories
    were used. ``"interval"`` uses squared differences of the label values, which must be numbers.

    Returns None when fewer than two labels can be paired (no item has two raters), or when only one category
    occurs among the pairable labels. Raises ValueError for an unknown level, non-numeric interval labels,
    or a label not in ``categories``.
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"unknown level {level!r}: expected 'nominal', 'ordinal' or 'interval'")
    coded = _encode(ratings, categories)
    if level == "interval" and not all(isinstance(c, Real) and not isinstance(c, bool) for c in coded.categories):
        raise ValueError(f"interval alpha needs numeric labels, got {list(coded.categories)}")
    return _alpha(_counts(coded.codes, len(coded.categories)), coded.categories, level)


def _ac1(counts: np.ndarray) -> float | None:
    """Gwet's AC1 from the items × categories count table, where item i has r_i = Σ_k r_ik labels.

    p_a is the mean over items with r_i ≥ 2 of Σ_k r_ik(r_ik − 1) / (r_i(r_i − 1)). π_k is the mean of r_ik / r_i
    over every item with a label: an item only one rater labelled still shows how often a category is used.
    p_e = Σ_k π_k(1 − π_k) / (q − 1) and AC1 = (p_a − p_e) / (1 − p_e). As Σ_k π_k(1 − π_k) ≤ 1 − 1/q, p_e ≤ 1/q:
    with q ≥ 2 categories the denominator is never 0.
    """
    per_item = counts.sum(1)
    pairable, labelled = per_item >= 2, per_item >= 1
    q = counts.shape[1]
    if q < 2 or not pairable.any():
        return None
    table, panel = counts[pairable], per_item[pairable]
    agreement = ((table * (table - 1)).sum(1) / (panel * (panel - 1))).mean()
    shares = (counts[labelled] / per_item[labelled, None]).mean(0)
    chance = (shares * (1 - shares)).sum() / (q - 1)
    return float((agreement - chance) / (1 - chance))


def gwet_ac1(ratings: Ratings[Item, Rater], *, categories: Sequence[Label] | None = None) -> float | None:
    """Gwet's AC1 for nominal labels from any number of raters, missing labels allowed.

    Kappa and alpha take chance agreement from how often each category is used. When one category dominates, as
    "not relevant" does in a pool, chance agreement nears 1 and they fall to 0 or below although the raters agree
    on nearly every item (Feinstein & Cicchetti 1990). AC1 counts as chance only guessing on items that are hard
    to classify, which shrinks as labels grow skewed, so it stays near the raw agreement. Read it beside alpha,
    not instead of it: on skewed labels it is high even if the raters never agree on the rare category.

    Items with two or more labels count for p_a and items with one or more for the category shares (``_ac1``),
    so unlike ``fleiss_kappa`` no item is dropped for its number of raters. q is ``len(categories)``: as in Gwet
    (2014), an unused category lowers chance agreement.

    Returns None when no item has two labels, or when the scale has fewer than two categories (by default, when
    only one label occurs). When everyone used the same one of two or more categories, AC1 is 1.
    """
    coded = _encode(ratings, categories)
    return _ac1(_counts(coded.codes, len(coded.categories)))


def binary_collapse(label: int, threshold: int = 1) -> int:
    """1 if ``label`` counts as relevant (label ≥ ``threshold``), otherwise 0.

    This is how IR papers report binary agreement and how trec_eval binarises graded qrels (its ``-l`` option
    gives the minimum relevant level, 1 by default). Touché's 0 and −2 (spam / no argument) therefore become 0,
    and 1 and 2 become 1.
    """
    return int(label >= threshold)


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of two raters over the ``n_items`` items they both labelled. None where it is undefined."""

    rater_a: Hashable
    rater_b: Hashable
    n_items: int
    unweighted: float | None
    linear: float | None  # None for nominal dimensions, whose labels have no distances


@dataclass(frozen=True)
class DimensionAgreement:
    """Agreement on one label dimension, over the ``n_items`` items that at least two raters labelled.

    ``cohen`` has one entry for each pair of raters who share at least one item, and ``confusion`` has the
    matching table. Its rows are ``rater_a``'s labels and its columns ``rater_b``'s, both in ``categories``
    order. ``fleiss`` is Fleiss' kappa on the ``fleiss_items`` items that have the modal number of raters
    (see ``fleiss_kappa``). ``alpha`` is Krippendorff's alpha over all ``n_items`` items, ordinal or nominal
    to match the dimension. ``binary_kappa`` is Fleiss' kappa on the same ``fleiss_items`` items after
    ``binary_collapse`` (relevant or not). It is None for nominal dimensions. ``ac1`` is Gwet's AC1
    (``gwet_ac1``) with the labels taken as nominal, also for ordinal dimensions. As Gwet defines it, its
    category shares also count items that only one rater labelled. Any coefficient is None where it is undefined.
    """

    n_items: int
    cohen: list[PairKappa]
    fleiss: float | None
    alpha: float | None
    binary_kappa: float | None
    confusion: dict[tuple[Hashable, Hashable], list[list[int]]]
    categories: tuple[Label, ...]
    ordinal: bool
    fleiss_items: int
    ac1: float | None = None  # defaulted, so that code building a report without it still works


def agreement_report(
    ratings: Ratings[Item, Rater], *, ordinal: bool, categories: Sequence[Label]
) -> DimensionAgreement:
    """Compute every agreement figure for one dimension: a graded one (``ordinal=True``, int labels) or a
    category or question (``ordinal=False``).

    Only items with at least two raters count. Raters appear in the order of their first label in
    ``ratings``, and each pair of raters is listed once, in that order. For ordinal dimensions the pairs
    also get a linearly weighted kappa (adjacent levels such as 1 and 2 count as a near miss), and the
    binary kappa uses trec_eval's default relevance threshold of 1.
    """
    coded = _encode(ratings, categories)
    k = len(coded.categories)
    every = _counts(coded.codes, k)
    pairable = every.sum(1) >= 2
    codes = coded.codes[pairable]
    rated = codes != _MISSING
    cohen: list[PairKappa] = []
    confusion: dict[tuple[Hashable, Hashable], list[list[int]]] = {}
    for a, b in combinations(range(len(coded.raters)), 2):
        both = rated[:, a] & rated[:, b]
        if not both.any():
            continue
        table = _confusion(codes[both, a], codes[both, b], k)
        pair = (coded.raters[a], coded.raters[b])
        cohen.append(
            PairKappa(
                rater_a=pair[0],
                rater_b=pair[1],
                n_items=int(both.sum()),
                unweighted=_kappa(table, None),
                linear=_kappa(table, "linear") if ordinal else None,
            )
        )
        confusion[pair] = table.tolist()

    counts = every[pairable]
    fleiss, fleiss_items = _fleiss(counts)
    binary_kappa = None
    if ordinal:
        # Ordinal categories are int labels (the contract above).
        relevant = np.array([binary_collapse(cast(int, c)) for c in coded.categories], dtype=np.bool_)
        binary_kappa, _ = _fleiss(np.stack([counts[:, ~relevant].sum(1), counts[:, relevant].sum(1)], axis=1))
    return DimensionAgreement(
        n_items=len(codes),
        cohen=cohen,
        fleiss=fleiss,
        alpha=_alpha(counts, coded.categories, "ordinal" if ordinal else "nominal"),
        binary_kappa=binary_kappa,
        confusion=confusion,
        categories=coded.categories,
        ordinal=ordinal,
        fleiss_items=fleiss_items,
        ac1=_ac1(every),
    )


def disagreement(labels: Mapping[Rater, Label], *, ordinal: bool, categories: Sequence[Label] | None = None) -> float:
    """How far the raters of one item disagree, as a key for sorting the disagreement view (0 = unanimous).

    The spread is max − min for ordinal labels and the number of distinct labels − 1 for nominal ones.
    Without ``categories`` it is in label units (0–2 for two raters on a 0–2 scale). With the scale given it
    is normalised to [0, 1], so that dimensions can be shown side by side. In that case, ordinal spread is
    measured in positions and divided by the widest possible spread (len(categories) − 1), and nominal spread
    is divided by the most distinct labels this many raters could give (min(raters, categories) − 1).
    Fewer than two labels give 0.0.
    """
    values = list(labels.values())
    if len(values) < 2:
        return 0.0
    if categories is None:
        if ordinal:  # ordinal labels are ints
            levels = cast("list[int]", values)
            return float(max(levels) - min(levels))
        return float(len(set(values)) - 1)
    positions = _positions(values, _scale(values, categories))
    if ordinal:
        spread, widest = max(positions) - min(positions), len(categories) - 1
    else:
        spread, widest = len(set(positions)) - 1, min(len(positions), len(categories)) - 1
    # A non-zero spread implies at least two categories and two raters, so ``widest`` is positive.
    return spread / widest if spread else 0.0


@dataclass(frozen=True)
class RaterAgreement:
    """A rater's mean Cohen's kappa with every other rater, over the ``n_pairs`` pairs where it is defined."""

    rater: Hashable
    mean_kappa: float | None
    n_pairs: int


def rater_agreement(report: DimensionAgreement) -> list[RaterAgreement]:
    """Each rater's mean pairwise kappa with the others, in the order raters appear in ``report.cohen``.

    For each rater this is Light's (1971) mean of pairwise kappas, restricted to the pairs that include the
    rater. Ordinal dimensions use the linearly weighted kappa and nominal ones the unweighted kappa. A rater
    who shares no item with anyone else is not in the report and so is not listed.
    """
    kappas: dict[Hashable, list[float]] = {}
    for pair in report.cohen:
        kappa = pair.linear if report.ordinal else pair.unweighted
        for rater in (pair.rater_a, pair.rater_b):
            defined = kappas.setdefault(rater, [])
            if kappa is not None:
                defined.append(kappa)
    return [
        RaterAgreement(
            rater=rater,
            mean_kappa=math.fsum(defined) / len(defined) if defined else None,
            n_pairs=len(defined),
        )
        for rater, defined in kappas.items()
    ]


def flag_raters(report: DimensionAgreement, *, threshold: float) -> list[RaterAgreement]:
    """Raters who fail the kappa test: their mean pairwise kappa (``rater_agreement``) is below ``threshold``.

    We use the mean pairwise Cohen's kappa rather than an alpha for each rater, for two reasons. The Touché
    training phase is described as a "kappa test" (2023 lab overview), so the pass mark is set in kappa
    units. And the organiser can trace the figure back to the pairwise kappas listed on the same page. A
    rater whose kappas are all undefined is flagged as well, because they cannot be shown to pass. This
    happens when the rater and each partner gave all their shared documents one and the same label, which
    usually means the training documents do not test that dimension. The result lists raters with an
    undefined kappa first, then the rest from the lowest mean up.
    """
    failed = [r for r in rater_agreement(report) if r.mean_kappa is None or r.mean_kappa < threshold]
    return sorted(failed, key=lambda r: (r.mean_kappa is not None, r.mean_kappa or 0.0))
