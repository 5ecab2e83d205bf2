"""Known-answer tests for assessments.metrics.agreement.

The expected numbers are either published values computed from published input tables, or results of a
reference implementation run inside the test (scikit-learn, statsmodels, krippendorff). None of them was
copied from our own output (STYLE.md §12). The reference libraries are only used by the tests. The module
under test must not import them, and a subprocess test below checks that.
"""

import math
import subprocess
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from assessments.metrics.agreement import (
    DimensionAgreement,
    agreement_report,
    binary_collapse,
    cohen_kappa,
    disagreement,
    flag_raters,
    fleiss_kappa,
    krippendorff_alpha,
    rater_agreement,
)

REPO = Path(__file__).resolve().parents[2]


def from_counts(table):
    """Turn Fleiss' published form (per item, how many raters chose each category) into item -> rater -> label.

    Fleiss' kappa does not depend on which rater gave which label (in Fleiss' study the six psychiatrists
    differed from patient to patient), so the raters are simply numbered.
    """
    ratings = {}
    for item, row in enumerate(table):
        labels = [category for category, n in enumerate(row) for _ in range(n)]
        ratings[item] = dict(enumerate(labels))
    return ratings


def from_rows(rows):
    """Turn a raters × items table (None = missing), as Krippendorff prints reliability data, into our mapping."""
    return {
        unit: {rater: row[unit] for rater, row in enumerate(rows) if row[unit] is not None}
        for unit in range(len(rows[0]))
    }


# --- Fleiss' kappa: published tables -----------------------------------------------------------------------

# Fleiss (1971), Table 1: 30 patients, each diagnosed by 6 of a larger group of psychiatrists, giving the
# number who chose depression, personality disorder, schizophrenia, neurosis, other. We could not consult the
# paper's scan. These rows are the counts of the rater-level transcription in R's irr package (``diagnoses``,
# also in statsmodels' test_inter_rater.py). Their column totals 26, 26, 30, 55, 43 of 180 give the category
# proportions .144, .144, .167, .306, .239 and kappa .430 that Fleiss reports.
FLEISS_1971 = [
    (0, 0, 0, 6, 0),
    (0, 3, 0, 0, 3),
    (0, 1, 4, 0, 1),
    (0, 0, 0, 0, 6),
    (0, 3, 0, 3, 0),
    (2, 0, 4, 0, 0),
    (0, 0, 4, 0, 2),
    (2, 0, 3, 1, 0),
    (2, 0, 0, 4, 0),
    (0, 0, 0, 0, 6),
    (1, 0, 0, 5, 0),
    (1, 1, 0, 4, 0),
    (0, 3, 3, 0, 0),
    (1, 0, 0, 5, 0),
    (0, 2, 0, 3, 1),
    (0, 0, 5, 0, 1),
    (3, 0, 0, 1, 2),
    (5, 1, 0, 0, 0),
    (0, 2, 0, 4, 0),
    (1, 0, 2, 0, 3),
    (0, 0, 0, 0, 6),
    (0, 1, 0, 5, 0),
    (0, 2, 0, 1, 3),
    (2, 0, 0, 4, 0),
    (1, 0, 0, 4, 1),
    (0, 5, 0, 1, 0),
    (4, 0, 0, 0, 2),
    (0, 2, 0, 4, 0),
    (1, 0, 5, 0, 0),
    (0, 0, 0, 0, 6),
]

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories; P̄ = 0.378, P_e = 0.213,
# κ = 0.210 (0.2099 to four places).
WIKIPEDIA_FLEISS = [
    (0, 0, 0, 0, 14),
    (0, 2, 6, 4, 2),
    (0, 0, 3, 5, 6),
    (0, 3, 9, 2, 0),
    (2, 2, 8, 1, 1),
    (7, 7, 0, 0, 0),
    (3, 2, 6, 3, 0),
    (2, 5, 3, 2, 2),
    (6, 5, 2, 1, 0),
    (0, 2, 2, 3, 7),
]


def test_fleiss_kappa_reproduces_fleiss_1971():
    assert sum(map(sum, FLEISS_1971)) == 180
    assert fleiss_kappa(from_counts(FLEISS_1971)) == pytest.approx(0.4302, abs=5e-5)


def test_fleiss_kappa_reproduces_the_wikipedia_example():
    assert fleiss_kappa(from_counts(WIKIPEDIA_FLEISS)) == pytest.approx(0.2099, abs=5e-5)


def test_fleiss_kappa_uses_only_items_with_the_modal_number_of_raters():
    # Ten 6-rater items from Fleiss (1971), plus three 3-rater items that must not change the result.
    ratings = from_counts(FLEISS_1971[:10])
    ratings.update({f"extra{i}": {"alice": 0, "bob": 1, "carol": 2} for i in range(3)})
    expected = statsmodels_fleiss_kappa(np.array(FLEISS_1971[:10]))
    assert fleiss_kappa(ratings) == pytest.approx(expected, abs=1e-12)


def test_fleiss_kappa_breaks_a_tie_between_panel_sizes_towards_more_raters():
    three = {f"t{i}": dict(enumerate(labels)) for i, labels in enumerate([(0, 0, 1), (1, 1, 1)])}
    two = {f"p{i}": dict(enumerate(labels)) for i, labels in enumerate([(0, 1), (0, 1)])}
    expected = statsmodels_fleiss_kappa(np.array([(2, 1), (0, 3)]))
    assert fleiss_kappa({**two, **three}) == pytest.approx(expected, abs=1e-12)


# --- Krippendorff's alpha: published reliability data ------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with missing values: four
# observers, twelve units. Unit 12 has a single value and so adds nothing.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(
    ("level", "published"),
    [
        # Published to three places. To four they are 0.7434, 0.8154 and 0.8491 (the krippendorff package
        # agrees): ordinal is 0.81539, so the published figure is .815, not .816.
        ("nominal", 0.743),
        ("ordinal", 0.815),
        ("interval", 0.849),
    ],
)
def test_krippendorff_alpha_reproduces_krippendorff_2011(level, published):
    ratings = from_rows(KRIPPENDORFF_2011)
    alpha = krippendorff_alpha(ratings, level=level)
    assert round(alpha, 3) == published
    reference = krippendorff.alpha(
        reliability_data=np.array(KRIPPENDORFF_2011, dtype=float), level_of_measurement=level
    )
    assert alpha == pytest.approx(reference, abs=1e-12)


# --- Cohen's kappa: scikit-learn's, SAS's and R irr's published examples ---------------------------------


def test_cohen_kappa_reproduces_artstein_and_poesio_table_1():
    # sklearn test_cohen_kappa: contingency [[20, 20], [10, 50]] from Artstein & Poesio (2008), Table 1.
    a = [0] * 40 + [1] * 60
    b = [0] * 20 + [1] * 20 + [0] * 10 + [1] * 50
    assert cohen_kappa(a, b) == pytest.approx(0.348, abs=5e-4)
    assert cohen_kappa(a, b) == cohen_kappa(b, a)


def test_cohen_kappa_reproduces_artstein_and_poesio_table_4():
    a = [0] * 46 + [1] * 44 + [2] * 10
    b = [0] * 52 + [1] * 32 + [2] * 16
    assert cohen_kappa(a, b) == pytest.approx(0.8013, abs=5e-5)


@pytest.mark.parametrize(("weights", "expected"), [(None, 0.9315), ("linear", 0.9412), ("quadratic", 0.9541)])
def test_cohen_kappa_reproduces_sklearns_weighted_example(weights, expected):
    a = [0] * 46 + [1] * 44 + [2] * 10
    b = [0] * 50 + [1] * 40 + [2] * 10
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(expected, abs=5e-5)


def table_to_sequences(table):
    pairs = [(i, j) for i, row in enumerate(table) for j, n in enumerate(row) for _ in range(n)]
    return [i for i, _ in pairs], [j for _, j in pairs]


@pytest.mark.parametrize(("weights", "expected"), [(None, 0.4842), ("linear", 0.4701)])
def test_cohen_kappa_reproduces_the_sas_example(weights, expected):
    # SAS PROC FREQ printout quoted in statsmodels' test_inter_rater.py (simple and Cicchetti–Allison kappa).
    a, b = table_to_sequences([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(expected, abs=5e-5)


@pytest.mark.parametrize(
    ("weights", "expected"), [(None, -0.006289308), ("linear", 0.1459075), ("quadratic", 0.2520325)]
)
def test_cohen_kappa_reproduces_r_irr_on_the_anxiety_data(weights, expected):
    # irr::kappa2(anxiety[, 2:3], "unweighted" / "equal" / "squared"), quoted in statsmodels' tests. Nobody
    # used rating 5, and irr leaves it out of the scale, as our default (the observed labels) does.
    rater2 = [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4]
    rater3 = [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2]
    assert cohen_kappa(rater2, rater3, weights=weights) == pytest.approx(expected, abs=1e-7)


def test_cohen_kappa_skips_items_either_rater_left_unlabelled():
    assert cohen_kappa([0, 1, None, 1, 2], [0, 1, 2, None, 2]) == 1.0


# --- Cross-checks against the reference libraries on random data ------------------------------------------


def random_ratings(seed, *, n_items, n_raters, categories, missing):
    """Ratings that agree more than by chance: each rater copies a hidden true label or guesses."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(len(categories), size=n_items)
    ratings = {}
    for item in range(n_items):
        by_rater = {}
        for rater in range(n_raters):
            if rng.random() < missing:
                continue
            code = truth[item] if rng.random() < 0.6 else rng.integers(len(categories))
            by_rater[f"r{rater}"] = categories[code]
        ratings[("topic", f"doc{item}")] = by_rater
    return ratings


CASES = [
    pytest.param(1, 25, 3, (0, 1, 2), 0.2, id="25x3"),
    pytest.param(2, 300, 5, (-2, 0, 1, 2), 0.35, id="300x5-with-spam"),
    pytest.param(3, 2000, 10, (0, 1, 2), 0.5, id="2000x10"),
]


@pytest.mark.parametrize(("seed", "n_items", "n_raters", "categories", "missing"), CASES)
def test_cohen_kappa_matches_sklearn(seed, n_items, n_raters, categories, missing):
    ratings = random_ratings(seed, n_items=n_items, n_raters=n_raters, categories=categories, missing=missing)
    raters = sorted({rater for by_rater in ratings.values() for rater in by_rater})
    for a, b in combinations(raters, 2):
        ours = [by_rater.get(a) for by_rater in ratings.values()], [by_rater.get(b) for by_rater in ratings.values()]
        shared = [(x, y) for x, y in zip(*ours) if x is not None and y is not None]
        for weights in (None, "linear", "quadratic"):
            expected = cohen_kappa_score(*zip(*shared), labels=list(categories), weights=weights)
            assert cohen_kappa(*ours, weights=weights, categories=categories) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("seed", "n_items", "n_raters", "categories", "missing"), CASES)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_matches_the_krippendorff_package(seed, n_items, n_raters, categories, missing, level):
    ratings = random_ratings(seed, n_items=n_items, n_raters=n_raters, categories=categories, missing=missing)
    raters = sorted({rater for by_rater in ratings.values() for rater in by_rater})
    data = np.array(
        [[by_rater.get(rater, np.nan) for by_rater in ratings.values()] for rater in raters], dtype=float
    )
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=categories)
    assert krippendorff_alpha(ratings, level=level, categories=categories) == pytest.approx(expected, abs=1e-12)


def modal_table(ratings, categories):
    """Fleiss' count table of the items that have the modal number (≥ 2) of raters, ties to the larger."""
    sizes = Counter(len(by_rater) for by_rater in ratings.values() if len(by_rater) >= 2)
    modal = max(sizes, key=lambda m: (sizes[m], m))
    return np.array(
        [
            [list(by_rater.values()).count(category) for category in categories]
            for by_rater in ratings.values()
            if len(by_rater) == modal
        ]
    )


@pytest.mark.parametrize(("seed", "n_items", "n_raters", "categories", "missing"), CASES)
def test_fleiss_kappa_matches_statsmodels(seed, n_items, n_raters, categories, missing):
    # Few missing labels, so that the modal panel is large enough to be a meaningful check.
    ratings = random_ratings(seed, n_items=n_items, n_raters=n_raters, categories=categories, missing=0.05)
    expected = statsmodels_fleiss_kappa(modal_table(ratings, categories))
    assert fleiss_kappa(ratings, categories=categories) == pytest.approx(expected, abs=1e-12)


def test_string_labels_give_the_same_coefficients_as_their_codes():
    stances = ("PRO", "CON", "NEUTRAL", "NO")
    coded = random_ratings(4, n_items=200, n_raters=4, categories=(0, 1, 2, 3), missing=0.3)
    named = {item: {r: stances[label] for r, label in by_rater.items()} for item, by_rater in coded.items()}
    assert krippendorff_alpha(named, level="nominal", categories=stances) == pytest.approx(
        krippendorff_alpha(coded, level="nominal", categories=(0, 1, 2, 3)), abs=1e-12
    )
    assert fleiss_kappa(named, categories=stances) == pytest.approx(
        fleiss_kappa(coded, categories=(0, 1, 2, 3)), abs=1e-12
    )


# --- The report ----------------------------------------------------------------------------------------------


@pytest.fixture
def relevance():
    """Training-topic relevance labels from three assessors. Document d5 was judged by alice only."""
    return {
        ("t1", "d1"): {"alice": 2, "bob": 2, "carol": 1},
        ("t1", "d2"): {"alice": 0, "bob": 0, "carol": 0},
        ("t1", "d3"): {"alice": 1, "bob": 2, "carol": 1},
        ("t1", "d4"): {"alice": 0, "bob": 1},
        ("t1", "d5"): {"alice": 2},
        ("t1", "d6"): {"alice": 1, "bob": 1, "carol": 2},
        ("t1", "d7"): {"alice": 2, "bob": 2, "carol": 2},
    }


def test_report_counts_only_items_with_two_or_more_raters(relevance):
    report = agreement_report(relevance, ordinal=True, categories=(0, 1, 2))
    assert report.n_items == 6
    assert report.fleiss_items == 5  # d4 has two raters, the modal panel has three


def test_report_lists_each_pair_with_sklearns_kappas_and_its_confusion_table(relevance):
    report = agreement_report(relevance, ordinal=True, categories=(0, 1, 2))
    assert [(p.rater_a, p.rater_b, p.n_items) for p in report.cohen] == [
        ("alice", "bob", 6),
        ("alice", "carol", 5),
        ("bob", "carol", 5),
    ]
    for pair in report.cohen:
        shared = [
            (by_rater[pair.rater_a], by_rater[pair.rater_b])
            for by_rater in relevance.values()
            if pair.rater_a in by_rater and pair.rater_b in by_rater
        ]
        a, b = zip(*shared)
        assert pair.unweighted == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2]), abs=1e-12)
        assert pair.linear == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2], weights="linear"), abs=1e-12)
    # alice's labels are the rows, bob's the columns: d1 (2,2), d2 (0,0), d3 (1,2), d4 (0,1), d6 (1,1), d7 (2,2).
    assert report.confusion[("alice", "bob")] == [[1, 1, 0], [0, 1, 1], [0, 0, 2]]


def test_report_matches_the_reference_libraries_on_the_whole_dimension(relevance):
    report = agreement_report(relevance, ordinal=True, categories=(0, 1, 2))
    assert report.fleiss == pytest.approx(statsmodels_fleiss_kappa(modal_table(relevance, (0, 1, 2))), abs=1e-12)
    raters = ("alice", "bob", "carol")
    data = np.array([[by.get(r, np.nan) for by in relevance.values()] for r in raters], dtype=float)
    expected_alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=(0, 1, 2))
    assert report.alpha == pytest.approx(expected_alpha, abs=1e-12)
    collapsed = {item: {r: binary_collapse(label) for r, label in by.items()} for item, by in relevance.items()}
    assert report.binary_kappa == pytest.approx(
        statsmodels_fleiss_kappa(modal_table(collapsed, (0, 1))), abs=1e-12
    )


def test_report_on_stance_is_nominal():
    stance = {
        ("t1", "d1"): {"alice": "PRO", "bob": "PRO"},
        ("t1", "d2"): {"alice": "CON", "bob": "NEUTRAL"},
        ("t1", "d3"): {"alice": "NO", "bob": "NO"},
    }
    report = agreement_report(stance, ordinal=False, categories=("PRO", "CON", "NEUTRAL", "NO"))
    (pair,) = report.cohen
    assert pair.linear is None
    assert report.binary_kappa is None
    assert pair.unweighted == pytest.approx(
        cohen_kappa_score(["PRO", "CON", "NO"], ["PRO", "NEUTRAL", "NO"]), abs=1e-12
    )
    assert report.confusion[("alice", "bob")] == [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1]]


def test_undefined_agreement_is_none_not_nan():
    # Everyone said "not relevant" to everything: no coefficient is defined.
    ratings = {doc: {"alice": 0, "bob": 0, "carol": 0} for doc in ("d1", "d2", "d3")}
    report = agreement_report(ratings, ordinal=True, categories=(0, 1, 2))
    assert (report.fleiss, report.alpha, report.binary_kappa) == (None, None, None)
    assert all(p.unweighted is None and p.linear is None for p in report.cohen)
    assert fleiss_kappa(ratings) is None
    assert krippendorff_alpha(ratings, level="ordinal") is None
    assert cohen_kappa([1, 1], [1, 1]) is None


def test_nothing_to_compare_gives_an_empty_report():
    report = agreement_report({"d1": {"alice": 1}, "d2": {"bob": 2}}, ordinal=True, categories=(0, 1, 2))
    assert report == DimensionAgreement(
        n_items=0,
        cohen=[],
        fleiss=None,
        alpha=None,
        binary_kappa=None,
        confusion={},
        categories=(0, 1, 2),
        ordinal=True,
        fleiss_items=0,
    )
    assert cohen_kappa([1, None], [None, 2]) is None
    assert krippendorff_alpha({}, level="nominal") is None


def test_no_coefficient_is_ever_nan():
    for seed in range(20):
        ratings = random_ratings(seed, n_items=4, n_raters=3, categories=(0, 1), missing=0.4)
        report = agreement_report(ratings, ordinal=True, categories=(0, 1))
        values = [report.fleiss, report.alpha, report.binary_kappa]
        values += [v for p in report.cohen for v in (p.unweighted, p.linear)]
        assert not any(v is not None and math.isnan(v) for v in values)


# --- Flagging raters ----------------------------------------------------------------------------------------


def test_flag_raters_names_the_assessor_who_misread_the_guidelines():
    # alice, bob and carol agree. dave gives every document the opposite relevance.
    truth = [0, 1, 2, 2, 1, 0, 0, 2, 1, 2]
    ratings = {
        f"d{i}": {"alice": label, "bob": label, "carol": label, "dave": 2 - label} for i, label in enumerate(truth)
    }
    report = agreement_report(ratings, ordinal=True, categories=(0, 1, 2))
    assert [r.rater for r in flag_raters(report, threshold=0.4)] == ["dave"]
    by_rater = {r.rater: r for r in rater_agreement(report)}
    assert by_rater["alice"].n_pairs == 3
    # alice has kappa 1 with bob and carol and the same (negative) linear kappa with dave as they do.
    dave = cohen_kappa(truth, [2 - label for label in truth], weights="linear")
    assert by_rater["alice"].mean_kappa == pytest.approx((1 + 1 + dave) / 3)
    assert by_rater["dave"].mean_kappa == pytest.approx(dave)


def test_flag_raters_lists_undefined_kappas_first_then_worst_first():
    ratings = {
        "d1": {"alice": "PRO", "bob": "CON", "carol": "PRO"},
        "d2": {"alice": "CON", "bob": "PRO", "carol": "CON"},
        "d3": {"alice": "PRO", "bob": "PRO", "carol": "CON"},
        "d4": {"erin": "NO", "frank": "NO"},
    }
    report = agreement_report(ratings, ordinal=False, categories=("PRO", "CON", "NEUTRAL", "NO"))
    flagged = flag_raters(report, threshold=0.99)
    assert [r.rater for r in flagged[:2]] == ["erin", "frank"]
    assert [r.mean_kappa for r in flagged[:2]] == [None, None]
    means = [r.mean_kappa for r in flagged[2:]]
    assert means == sorted(means)


# --- Small helpers --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "threshold", "expected"),
    [(-2, 1, 0), (0, 1, 0), (1, 1, 1), (2, 1, 1), (1, 2, 0), (2, 2, 1)],
)
def test_binary_collapse(label, threshold, expected):
    assert binary_collapse(label, threshold) == expected


@pytest.mark.parametrize(
    ("labels", "ordinal", "categories", "expected"),
    [
        ({"alice": 1}, True, None, 0.0),
        ({"alice": 1, "bob": 1}, True, None, 0.0),
        ({"alice": 0, "bob": 2, "carol": 1}, True, None, 2.0),
        ({"alice": -2, "bob": 2}, True, None, 4.0),
        ({"alice": 0, "bob": 2}, True, (0, 1, 2), 1.0),
        ({"alice": 0, "bob": 1}, True, (-2, 0, 1, 2), 1 / 3),
        ({"alice": "PRO", "bob": "CON", "carol": "PRO"}, False, None, 1.0),
        ({"alice": "PRO", "bob": "CON"}, False, ("PRO", "CON", "NEUTRAL", "NO"), 1.0),
        ({"alice": "PRO", "bob": "CON", "carol": "PRO"}, False, ("PRO", "CON", "NEUTRAL", "NO"), 0.5),
        ({"a": "PRO", "b": "CON", "c": "NO", "d": "NEUTRAL", "e": "NO"}, False, ("PRO", "CON", "NEUTRAL", "NO"), 1.0),
    ],
)
def test_disagreement(labels, ordinal, categories, expected):
    assert disagreement(labels, ordinal=ordinal, categories=categories) == pytest.approx(expected)


# --- Bad input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fleiss_kappa({"d1": {"alice": 3, "bob": 1}}, categories=(0, 1, 2)), "label 3 is not one of"),
        (lambda: krippendorff_alpha({"d1": {"alice": 0}}, level="nominal", categories=(0, 0, 1)), "categories repeat"),
        (lambda: krippendorff_alpha({}, level="ratio"), "unknown level"),
        (lambda: krippendorff_alpha({"d1": {"alice": "PRO"}}, level="interval"), "numeric labels"),
        (lambda: cohen_kappa([0, 1], [0, 1], weights="cubic"), "unknown weights"),
        (lambda: cohen_kappa([0, 1], [0]), "shorter"),
    ],
)
def test_it_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_importing_the_module_pulls_in_neither_django_nor_the_reference_libraries():
    code = (
        "import sys, assessments.metrics.agreement; "
        "print(sorted({'django', 'sklearn', 'statsmodels', 'krippendorff'} & {m.split('.')[0] for m in sys.modules}))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
