"""Known-answer tests for Gwet's AC1 (assessments.metrics.agreement.gwet_ac1 and DimensionAgreement.ac1).

The reference is the irrCAC package (Python port of Gwet's R package of the same name), run inside the test on
the same ratings, plus the value printed in irrCAC's own documentation for Gwet's (2014) raw_4raters example and
values worked out by hand from Gwet's formula. irrCAC rounds its coefficients to ``digits`` decimals (5 by
default), so the cross-checks ask it for 15 and compare to 1e-12; the documented 0.77544 is compared at its five
decimals. On the same random designs, fleiss_kappa and krippendorff_alpha (nominal) are checked again against
statsmodels and the krippendorff package, since test_agreement.py's designs have neither two raters nor a
dominant category.
"""

import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from irrCAC.datasets import raw_4raters, raw_5observers, raw_ben_gerry, raw_g1g2, raw_gender
from irrCAC.raw import CAC
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from assessments.metrics.agreement import agreement_report, fleiss_kappa, gwet_ac1, krippendorff_alpha

REPO = Path(__file__).resolve().parents[2]


def raters_of(ratings):
    return sorted({rater for by_rater in ratings.values() for rater in by_rater}, key=str)


def irrcac_ac1(ratings, categories=None):
    """irrCAC's AC1 on our mapping, as its items × raters frame with NaN for a missing label, unrounded."""
    raters = raters_of(ratings)
    frame = pd.DataFrame([[by_rater.get(r, np.nan) for r in raters] for by_rater in ratings.values()], columns=raters)
    scale = None if categories is None else list(categories)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its confidence interval warns on degenerate designs; we read the estimate
        return float(CAC(frame, categories=scale, digits=15).gwet()["est"]["coefficient_value"])


def from_frame(frame):
    """irrCAC's items × raters frame (NaN or None = missing) as our item -> rater -> label mapping."""
    return {
        unit: {rater: label for rater, label in row.items() if not pd.isna(label)} for unit, row in frame.iterrows()
    }


def as_int(ratings):
    return {item: {rater: int(label) for rater, label in by_rater.items()} for item, by_rater in ratings.items()}


# --- Gwet's examples, as irrCAC ships them -------------------------------------------------------------------


def test_reproduces_the_documented_ac1_of_gwets_four_raters():
    # irrCAC's raw.py docstring: CAC(raw_4raters()).gwet() gives AC1 0.77544 (5 decimals, irrCAC's rounding).
    # 12 units, 4 raters, 5 categories, no rater labels every unit, and unit 12 has a single label.
    ratings = as_int(from_frame(raw_4raters()))
    assert round(gwet_ac1(ratings), 5) == 0.77544
    assert gwet_ac1(ratings) == pytest.approx(irrcac_ac1(ratings), abs=1e-12)


def test_an_item_one_rater_labelled_counts_for_the_category_shares_only():
    # Gwet's π_k averages over every labelled unit, p_a only over units with two labels or more: leaving out
    # unit 12 (Rater3's lone 3) changes AC1, as it does in irrCAC, though it cannot add to p_a.
    ratings = as_int(from_frame(raw_4raters()))
    without = {unit: by_rater for unit, by_rater in ratings.items() if unit != 12}
    assert gwet_ac1(without) == pytest.approx(irrcac_ac1(without), abs=1e-12)
    assert round(gwet_ac1(without), 5) == 0.77515 != round(gwet_ac1(ratings), 5)


@pytest.mark.parametrize("dataset", [raw_5observers, raw_g1g2, raw_ben_gerry, raw_gender])
def test_matches_irrcac_on_gwets_other_datasets(dataset):
    # Numeric (raw_5observers, 0–3) and letter labels (the others), with missing labels in all but raw_gender.
    ratings = from_frame(dataset())
    if dataset is raw_5observers:
        ratings = as_int(ratings)
    assert gwet_ac1(ratings) == pytest.approx(irrcac_ac1(ratings), abs=1e-12)


# --- Random designs ----------------------------------------------------------------------------------------


def random_ratings(seed, *, n_items, n_raters, categories, missing, weights=None, accuracy=0.6):
    """Each rater copies a hidden true label with probability ``accuracy`` and otherwise guesses.

    True labels and guesses are drawn with ``weights`` (None: uniformly), so a skewed ``weights`` makes one
    category dominate. Each label is missing with probability ``missing``, which leaves some items with one
    label and some with none.
    """
    rng = np.random.default_rng(seed)
    k = len(categories)
    truth = rng.choice(k, size=n_items, p=weights)
    ratings = {}
    for item in range(n_items):
        by_rater = {}
        for rater in range(n_raters):
            if rng.random() < missing:
                continue
            code = truth[item] if rng.random() < accuracy else rng.choice(k, p=weights)
            by_rater[f"r{rater}"] = categories[code]
        ratings[("topic", f"doc{item}")] = by_rater
    return ratings


DESIGNS = [
    pytest.param(dict(seed=11, n_items=60, n_raters=2, categories=(0, 1), missing=0.0), id="2x2"),
    pytest.param(dict(seed=12, n_items=80, n_raters=2, categories=(0, 1, 2), missing=0.25), id="2x3-missing"),
    pytest.param(dict(seed=13, n_items=100, n_raters=3, categories=(0, 1), missing=0.2), id="3x2-missing"),
    pytest.param(dict(seed=14, n_items=150, n_raters=3, categories=(-2, 0, 1, 2), missing=0.3), id="3x4-missing"),
    pytest.param(
        dict(seed=15, n_items=120, n_raters=3, categories=(0, 1, 2, 3), missing=0.1, weights=(0.6, 0.4, 0, 0)),
        id="3x4-two-unused",
    ),
    pytest.param(
        dict(seed=16, n_items=400, n_raters=2, categories=(0, 1), missing=0.0, weights=(0.95, 0.05), accuracy=0.3),
        id="2x2-dominant",
    ),
    pytest.param(
        dict(
            seed=17,
            n_items=400,
            n_raters=3,
            categories=(0, 1, 2),
            missing=0.15,
            weights=(0.97, 0.02, 0.01),
            accuracy=0.3,
        ),
        id="3x3-dominant-missing",
    ),
]


@pytest.mark.parametrize("design", DESIGNS)
def test_matches_irrcac_on_random_designs(design):
    ratings = random_ratings(**design)
    categories = design["categories"]
    assert gwet_ac1(ratings, categories=categories) == pytest.approx(irrcac_ac1(ratings, categories), abs=1e-12)


def modal_table(ratings, categories):
    """Fleiss' count table of the items with the modal number (≥ 2) of raters, ties to the larger."""
    sizes = Counter(len(by_rater) for by_rater in ratings.values() if len(by_rater) >= 2)
    modal = max(sizes, key=lambda m: (sizes[m], m))
    rows = [list(by_rater.values()) for by_rater in ratings.values() if len(by_rater) == modal]
    return np.array([[row.count(category) for category in categories] for row in rows])


@pytest.mark.parametrize("design", DESIGNS)
def test_fleiss_kappa_and_nominal_alpha_still_match_their_references_on_these_designs(design):
    ratings = random_ratings(**design)
    categories = design["categories"]
    assert fleiss_kappa(ratings, categories=categories) == pytest.approx(
        statsmodels_fleiss_kappa(modal_table(ratings, categories)), abs=1e-12
    )
    data = np.array([[by_rater.get(r, np.nan) for by_rater in ratings.values()] for r in raters_of(ratings)], float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal", value_domain=categories)
    assert krippendorff_alpha(ratings, level="nominal", categories=categories) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("design", [d for d in DESIGNS if "dominant" in d.id])
def test_ac1_stays_high_where_a_dominant_category_collapses_kappa(design):
    ratings = random_ratings(**design)
    categories = design["categories"]
    pairs = [
        (x, y)
        for by_rater in ratings.values()
        for i, x in enumerate(by_rater.values())
        for y in list(by_rater.values())[i + 1 :]
    ]
    raw_agreement = sum(x == y for x, y in pairs) / len(pairs)
    ac1 = gwet_ac1(ratings, categories=categories)
    kappa = fleiss_kappa(ratings, categories=categories)
    alpha = krippendorff_alpha(ratings, level="nominal", categories=categories)
    # The raters agree on over 90% of the pairs, mostly on the dominant category. Kappa and alpha take that as
    # chance (both under .3, an agreement Landis & Koch would call "fair" at best); AC1 stays near the raw rate.
    assert raw_agreement > 0.9
    assert kappa < 0.3 and alpha < 0.3
    assert ac1 > 0.9 and ac1 - kappa > 0.6


def test_ac1_is_high_even_when_the_raters_never_agree_on_the_rare_category():
    # The caveat in gwet_ac1's docstring. 100 documents: alice finds d0–d4 relevant, bob d5–d9, nobody else.
    # p_a = 90/100, π_1 = 10/200 = .05, p_e = 2 · .05 · .95 / 1 = .095, AC1 = .805 / .905 = 161/181.
    # Kappa: P_e = .95² + .05² = .905, κ = (.9 − .905) / .095 = −1/19.
    ratings = {f"d{i}": {"alice": int(i < 5), "bob": int(5 <= i < 10)} for i in range(100)}
    assert gwet_ac1(ratings) == pytest.approx(161 / 181, abs=1e-12)
    assert gwet_ac1(ratings) == pytest.approx(irrcac_ac1(ratings), abs=1e-12)
    assert fleiss_kappa(ratings) == pytest.approx(-1 / 19, abs=1e-12)


def test_string_labels_give_the_same_ac1_as_their_codes():
    stances = ("PRO", "CON", "NEUTRAL", "NO")
    coded = random_ratings(18, n_items=200, n_raters=4, categories=(0, 1, 2, 3), missing=0.3)
    named = {item: {r: stances[label] for r, label in by_rater.items()} for item, by_rater in coded.items()}
    assert gwet_ac1(named, categories=stances) == pytest.approx(gwet_ac1(coded, categories=(0, 1, 2, 3)), abs=1e-12)


def test_an_item_nobody_labelled_changes_nothing():
    ratings = random_ratings(19, n_items=50, n_raters=3, categories=(0, 1, 2), missing=0.2)
    assert gwet_ac1({**ratings, "empty": {}}, categories=(0, 1, 2)) == gwet_ac1(ratings, categories=(0, 1, 2))


# --- Edge cases (irrCAC cannot serve here: it fails on one item and fudges a one-category scale) -----------------


def test_unanimous_labels_give_1_on_a_scale_of_two_or_more_where_kappa_and_alpha_are_undefined():
    ratings = {doc: {"alice": 0, "bob": 0, "carol": 0} for doc in ("d1", "d2", "d3")}
    # π = (1, 0, 0), so p_e = 0 and AC1 = p_a = 1. irrCAC agrees when given the scale.
    assert gwet_ac1(ratings, categories=(0, 1, 2)) == 1.0 == irrcac_ac1(ratings, (0, 1, 2))
    assert fleiss_kappa(ratings, categories=(0, 1, 2)) is None
    assert krippendorff_alpha(ratings, level="nominal", categories=(0, 1, 2)) is None
    report = agreement_report(ratings, ordinal=True, categories=(0, 1, 2))
    assert (report.ac1, report.fleiss, report.alpha) == (1.0, None, None)


def test_a_scale_of_one_category_is_undefined():
    # p_e = Σ π(1 − π) / (q(q − 1)) has no value for q = 1. irrCAC sets p_e = 1 − 1e-15 and reports 1.0; we say None.
    ratings = {doc: {"alice": 0, "bob": 0} for doc in ("d1", "d2")}
    assert gwet_ac1(ratings) is None
    assert gwet_ac1(ratings, categories=(0,)) is None


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        # p_a = 1, π = (1, 0), p_e = 0.
        ({"alice": 0, "bob": 0}, 1.0),
        # p_a = 0, π = (.5, .5), p_e = .5: AC1 = −.5 / .5.
        ({"alice": 0, "bob": 1}, -1.0),
        # p_a = 2·1 / (3·2) = 1/3, π = (2/3, 1/3), p_e = 2 · 2/9 = 4/9: AC1 = (1/3 − 4/9) / (5/9) = −1/5.
        ({"alice": 0, "bob": 0, "carol": 1}, -0.2),
    ],
)
def test_a_single_item(labels, expected):
    assert gwet_ac1({"d1": labels}, categories=(0, 1)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("ratings", [{}, {"d1": {"alice": 0}, "d2": {"bob": 1}}, {"d1": {}}])
def test_no_item_with_two_labels_is_undefined(ratings):
    assert gwet_ac1(ratings, categories=(0, 1)) is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gwet_ac1({"d1": {"alice": 3, "bob": 1}}, categories=(0, 1, 2)), "label 3 is not one of"),
        (lambda: gwet_ac1({"d1": {"alice": 0}}, categories=(0, 0, 1)), "categories repeat"),
    ],
)
def test_it_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- In the agreement report ------------------------------------------------------------------------------


def test_the_report_gives_nominal_dimensions_their_ac1():
    stances = ("PRO", "CON", "NEUTRAL", "NO")
    coded = random_ratings(20, n_items=150, n_raters=3, categories=(0, 1, 2, 3), missing=0.3)
    named = {item: {r: stances[label] for r, label in by_rater.items()} for item, by_rater in coded.items()}
    report = agreement_report(named, ordinal=False, categories=stances)
    assert report.ac1 == gwet_ac1(named, categories=stances)
    assert report.ac1 == pytest.approx(irrcac_ac1(coded, (0, 1, 2, 3)), abs=1e-12)


def test_the_report_gives_ordinal_dimensions_the_nominal_ac1_of_their_labels():
    # Touché's relevance scale with −2 for spam. The single-label items count for the shares here too.
    ratings = random_ratings(21, n_items=150, n_raters=3, categories=(-2, 0, 1, 2), missing=0.4)
    assert any(len(by_rater) == 1 for by_rater in ratings.values())
    report = agreement_report(ratings, ordinal=True, categories=(-2, 0, 1, 2))
    assert report.ac1 == gwet_ac1(ratings, categories=(-2, 0, 1, 2))
    assert report.ac1 == pytest.approx(irrcac_ac1(ratings, (-2, 0, 1, 2)), abs=1e-12)


def test_importing_the_module_pulls_in_neither_irrcac_nor_pandas():
    code = (
        "import sys, assessments.metrics.agreement; "
        "print(sorted({'irrCAC', 'pandas', 'scipy'} & {m.split('.')[0] for m in sys.modules}))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
