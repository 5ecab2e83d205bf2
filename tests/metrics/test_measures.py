"""assessments.metrics.measures and the trec_eval 9 / 10 orders, checked against independent references.

References: values worked out by hand (written next to each case), pytrec_eval (trec_eval 9.0.x's C code, run
here: it holds scores in a C float, which the first test pins down), and trec_eval's own ``-q -m all_trec``
output for the real Touché 2020 Task 1 runs. trec_eval 10 is not installed; its answers are derived by hand,
and on random runs by giving pytrec_eval scores that keep the doubles' order exactly (each distinct double
replaced by its dense rank, which a float holds exactly), which is what reading doubles amounts to.
"""

import math
import random

import pytest
import pytrec_eval

from assessments.metrics.evaluation import (
    evaluate_run,
    order_run,
    single_precision,
    single_precision_cut,
    single_precision_order,
)
from assessments.metrics.measures import (
    Measure,
    average_precision,
    bpref,
    condensed_ndcg_at_k,
    judged_at_k,
    parse_measure,
    precision_at_k,
    reciprocal_rank,
)
from tests.metrics.test_evaluation import read_qrels, read_reference, shanks_run

LOG2_3 = math.log2(3)
NEAR = 1 + 2**-30  # a different double from 1.0, the same C float


def test_pytrec_eval_holds_scores_in_single_precision():
    """The rule trec_eval=9 follows, observed on pytrec_eval itself: a score is rounded to the nearest float."""
    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a": 1, "b": 0}}, {"recip_rank"})

    def first_is_a(a_score: float) -> bool:
        return evaluator.evaluate({"q": {"a": a_score, "b": 1.0}})["q"]["recip_rank"] == 1.0

    # Half a float step above 1 is 2**-24 ≈ 5.96e-8: above it rounds up to 1 + 2**-23, below it down to 1.
    assert [first_is_a(1 + d) for d in (1e-6, 6e-8, 5e-8, 1e-8, NEAR - 1)] == [True, True, False, False, False]
    assert single_precision([1 + 6e-8, 1 + 5e-8, NEAR]) == [1 + 2**-23, 1.0, 1.0]


def test_single_precision_rounds_like_the_c_conversion():
    assert single_precision([0.1, -0.1]) == [0.10000000149011612, -0.10000000149011612]
    # Out of float's range: infinity and zero, with no warning or error.
    assert single_precision([1e300, -1e300, 1e-50]) == [math.inf, -math.inf, 0.0]
    assert single_precision([]) == []


# ---------------------------------------------------------------------------------------------------------
# Hand-derived known answers


QRELS = {"r2": 2, "r1": 1, "n": 0, "spam": -2, "unret": 1}  # R = 3 relevant, N = 1 judged non-relevant


@pytest.mark.parametrize(
    ("ranking", "expected"),
    [
        # P@3: r2 and r1 are relevant (label >= 1); spam and n are not.
        (["r2", "spam", "r1", "n"], {"P3": 2 / 3, "AP": (1 + 2 / 3) / 3, "RR": 1.0}),
        # Nothing relevant: all zero.
        (["n", "x", "spam"], {"P3": 0.0, "AP": 0.0, "RR": 0.0}),
        # First relevant at 4; AP = (1/4 + 2/5) / 3.
        (["x", "n", "spam", "r1", "unret"], {"P3": 0.0, "AP": (1 / 4 + 2 / 5) / 3, "RR": 0.25}),
        # A short ranking: P divides by k all the same.
        (["r1"], {"P3": 1 / 3, "AP": 1 / 3, "RR": 1.0}),
    ],
)
def test_binary_measures_known_answers(ranking, expected):
    assert precision_at_k(ranking, QRELS, 3) == pytest.approx(expected["P3"], abs=1e-15)
    assert average_precision(ranking, QRELS) == pytest.approx(expected["AP"], abs=1e-15)
    assert reciprocal_rank(ranking, QRELS) == pytest.approx(expected["RR"], abs=1e-15)


@pytest.mark.parametrize(
    ("ranking", "expected"),
    [
        # r2 above every judged non-relevant: +1; r1 after n: 1 - min(1, 3) / min(1, 3) = 0. (1 + 0) / 3.
        (["r2", "n", "r1"], 1 / 3),
        # spam (−2) and unjudged x are skipped, not counted as non-relevant: r2 and r1 both +1.
        (["spam", "x", "r2", "r1", "n"], 2 / 3),
        (["n", "r2", "r1", "unret"], 0.0),
        ([], 0.0),
    ],
)
def test_bpref_known_answers(ranking, expected):
    assert bpref(ranking, QRELS) == pytest.approx(expected, abs=1e-15)


def test_bpref_of_a_topic_without_relevant_documents_is_zero():
    assert bpref(["n", "x"], {"n": 0}) == 0.0


def test_condensed_ndcg_drops_unjudged_and_negative_labels_before_the_cut():
    qrels = {"a": 2, "b": 0, "s": -2}
    # Condensed: [b, a] (x, y unjudged; s is -2, which trec_eval -J drops too). DCG@2 = 2/log2(3); ideal 2.
    assert condensed_ndcg_at_k(["x", "s", "b", "y", "a"], qrels, 2) == pytest.approx(1 / LOG2_3, abs=1e-15)
    assert judged_at_k(["x", "s", "b", "y", "a"], qrels, 2) == 0.5  # s is judged for judged@k


@pytest.mark.parametrize(
    ("text", "family", "k", "trec_eval", "depth"),
    [
        ("nDCG@5", "nDCG", 5, "ndcg_cut_5", 5),
        ("ndcg'@10", "nDCG'", 10, "ndcg_cut_10 (-J)", None),
        ("P@20", "P", 20, "P_20", 20),
        ("MAP", "AP", None, "map", None),
        ("ap", "AP", None, "map", None),
        ("MRR", "RR", None, "recip_rank", None),
        ("bpref", "bpref", None, "bpref", None),
        (" judged@5 ", "judged", 5, "judged_5", 5),
    ],
)
def test_measure_names(text, family, k, trec_eval, depth):
    measure = parse_measure(text)
    assert (measure.family, measure.k, measure.trec_eval, measure.depth) == (family, k, trec_eval, depth)
    assert parse_measure(str(measure)) == measure == Measure(family, k)


@pytest.mark.parametrize("text", ["nDCG", "nDCG@0", "P@", "ERR@5", "map@5", ""])
def test_unknown_measures_are_refused_with_the_accepted_names(text):
    with pytest.raises(ValueError, match="nDCG@k, nDCG'@k"):
        parse_measure(text)


# ---------------------------------------------------------------------------------------------------------
# trec_eval 9 and 10 on near-tied scores, derived by hand


def test_a_near_tie_decides_every_measure_differently_in_the_two_versions():
    # a's score is above b's as a double, equal as a float. trec_eval 10: a, b. trec_eval 9: tie, doc id
    # descending: b, a.
    run = {"1": [("a", 1, NEAR), ("b", 2, 1.0)]}
    qrels = {"1": {"a": 1, "b": 0}}
    assert order_run(run["1"]) == ["a", "b"]
    assert order_run(run["1"], trec_eval=9) == ["b", "a"]
    expected = {
        # measure: (trec_eval 10, trec_eval 9)
        "P@1": (1.0, 0.0),
        "AP": (1.0, 0.5),
        "RR": (1.0, 0.5),
        "nDCG@1": (1.0, 0.0),
        "nDCG@2": (1.0, 1 / LOG2_3),
        # 10: a (relevant) before any non-relevant: 1. 9: b (non-relevant) first: 1 - min(1,1)/min(1,1) = 0.
        "bpref": (1.0, 0.0),
        "judged@1": (1.0, 1.0),
    }
    for measure, (ten, nine) in expected.items():
        assert evaluate_run(run, qrels, measure=measure).mean == pytest.approx(ten, abs=1e-15), measure
        assert evaluate_run(run, qrels, measure=measure, trec_eval=9).mean == pytest.approx(nine, abs=1e-15), measure


def test_a_near_tie_across_the_cut_changes_which_documents_make_the_top_5():
    # Touché 2022 Task 2 in small: passages of one page scored alike. Positions 5 and 6 differ by 2**-40 at 0.5.
    near = 0.5 + 2**-40
    entries = [("d1", 1, 0.9), ("d2", 2, 0.8), ("d3", 3, 0.7), ("d4", 4, 0.6), ("p1", 5, near), ("p2", 6, 0.5)]
    qrels = {"1": {"d1": 1, "p1": 2, "p2": 0}}
    # 10: d1..d4, p1: DCG = 1 + 2/log2(6); ideal 2 + 1/log2(3).
    # 9: p1 and p2 tie as floats, p2 (larger id) first, p1 drops out: DCG = 1.
    ideal = 2 + 1 / LOG2_3
    assert evaluate_run({"1": entries}, qrels).mean == pytest.approx((1 + 2 / math.log2(6)) / ideal, abs=1e-15)
    assert evaluate_run({"1": entries}, qrels, trec_eval=9).mean == pytest.approx(1 / ideal, abs=1e-15)
    # An exact tie is a tie in both: nothing differs.
    exact = [*entries[:4], ("p1", 5, 0.5), ("p2", 6, 0.5)]
    assert evaluate_run({"1": exact}, qrels).mean == evaluate_run({"1": exact}, qrels, trec_eval=9).mean == 1 / ideal


def test_the_rank_order_does_not_depend_on_the_version():
    entries = [("a", 2, NEAR), ("b", 1, 1.0)]
    assert order_run(entries, by="rank") == order_run(entries, by="rank", trec_eval=9) == ["b", "a"]


def test_it_refuses_an_unknown_trec_eval_version():
    with pytest.raises(ValueError, match="9 or 10"):
        order_run([], trec_eval=8)


def near_tied_entries(rng: random.Random, n: int) -> list[tuple[str, int, float]]:
    """Scores on a few float steps, each nudged by a few units of the double's last place: near ties
    everywhere, exact ties too, and steps that rounding keeps apart."""
    base = [1.0, 0.5, 0.25 + 2**-25, 3.0, -1.0]
    docs = rng.sample(range(10_000), n)
    return [(f"d{d}", i, rng.choice(base) * (1 + rng.randrange(4) * 2**-45)) for i, d in enumerate(docs)]


@pytest.mark.parametrize("seed", range(20))
def test_single_precision_order_and_cut_agree_with_order_run(seed):
    rng = random.Random(seed)
    entries = near_tied_entries(rng, rng.randrange(1, 60))
    ten = order_run(entries)
    by_doc = {doc: (rank, score) for doc, rank, score in entries}
    scores = [by_doc[doc][1] for doc in ten]
    nine = order_run(entries, trec_eval=9)
    order = single_precision_order(ten, scores)
    assert [ten[i] for i in order] == nine if order is not None else ten == nine
    for depth in (1, 3, 5, 10, 100):
        # The lines up to the cut, reordered, give 9's head; cutting there is never too early.
        cut = single_precision_cut(scores, depth)
        assert cut >= min(depth, len(ten))
        head_order = single_precision_order(ten[:cut], scores[:cut])
        head = [ten[:cut][i] for i in head_order] if head_order is not None else ten[:cut]
        assert head[:depth] == nine[:depth]


# ---------------------------------------------------------------------------------------------------------
# pytrec_eval on random runs with near ties: every measure under trec_eval 9, and under 10 through scores that
# keep the doubles' order.


PYTREC = {"P@5": "P_5", "P@10": "P_10", "AP": "map", "RR": "recip_rank", "bpref": "bpref", "nDCG@5": "ndcg_cut_5",
          "nDCG@10": "ndcg_cut_10"}


def random_case(rng: random.Random):
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, int, float]]] = {}
    for topic in map(str, range(1, 11)):
        entries = near_tied_entries(rng, rng.randrange(1, 40))
        docs = [doc for doc, _, _ in entries] + [f"u{i}" for i in range(5)]
        judged = rng.sample(docs, rng.randrange(1, len(docs)))
        labels = (-2, 0) if topic == "4" else (-2, 0, 0, 1, 2, 3)
        qrels[topic] = {doc: rng.choice(labels) for doc in judged}
        # trec_eval sizes its label table from the topic's largest label: a topic judged only -2 crashes it.
        qrels[topic][judged[0]] = max(0, qrels[topic][judged[0]])
        if topic != "7":
            run[topic] = entries
    return qrels, run


def dense_ranks(entries) -> dict[str, float]:
    """Each distinct double replaced by its rank among them: the same order and the same ties, held exactly
    by a float."""
    distinct = sorted({score for _, _, score in entries})
    rank = {score: float(i) for i, score in enumerate(distinct)}
    return {doc: rank[score] for doc, _, score in entries}


def pytrec(qrels, scored, *, judged_only=False):
    names = {"P.5,10", "map", "recip_rank", "bpref", "ndcg_cut.5,10"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, names, judged_docs_only_flag=int(judged_only))
    return evaluator.evaluate(scored)


@pytest.mark.parametrize("seed", range(15))
def test_every_measure_matches_pytrec_eval_under_both_versions(seed):
    qrels, run = random_case(random.Random(seed))
    as_floats = {t: {doc: score for doc, _, score in es} for t, es in run.items()}
    as_doubles = {t: dense_ranks(es) for t, es in run.items()}
    # judged@k is P@k against qrels where every judged document (any label) is relevant.
    everything_relevant = {t: dict.fromkeys(labels, 1) for t, labels in qrels.items()}
    for version, scored in ((9, as_floats), (10, as_doubles)):
        expected = pytrec(qrels, scored)
        condensed = pytrec(qrels, scored, judged_only=True)
        judged = pytrec(everything_relevant, scored)
        for measure, name in PYTREC.items():
            ours = evaluate_run(run, qrels, measure=measure, trec_eval=version)
            assert ours.per_topic.keys() == expected.keys()
            for topic, value in ours.per_topic.items():
                assert value == pytest.approx(expected[topic][name], abs=1e-12), (version, measure, topic)
        for k in (5, 10):
            ours = evaluate_run(run, qrels, measure=f"nDCG'@{k}", trec_eval=version)
            for topic, value in ours.per_topic.items():
                assert value == pytest.approx(condensed[topic][f"ndcg_cut_{k}"], abs=1e-12), (version, k, topic)
            ours = evaluate_run(run, qrels, measure=f"judged@{k}", trec_eval=version)
            for topic, value in ours.per_topic.items():
                assert value == pytest.approx(judged[topic][f"P_{k}"], abs=1e-12), (version, k, topic)


def test_the_random_cases_do_tell_the_versions_apart():
    # Without this, the test above could pass with one order used for both versions.
    differing = 0
    for seed in range(15):
        qrels, run = random_case(random.Random(seed))
        differing += sum(
            evaluate_run(run, qrels, measure="AP").per_topic[t] != evaluate_run(run, qrels, measure="AP", trec_eval=9).per_topic[t]
            for t in run if t in qrels
        )
    assert differing > 20


# ---------------------------------------------------------------------------------------------------------
# The real Touché 2020 Task 1 runs against trec_eval's own per-topic output


REFERENCED = {"P@5": "P_5", "P@10": "P_10", "P@20": "P_20", "P@100": "P_100", "AP": "map", "RR": "recip_rank",
              "bpref": "bpref", "nDCG@5": "ndcg_cut_5", "nDCG@10": "ndcg_cut_10", "nDCG@20": "ndcg_cut_20",
              "nDCG@1000": "ndcg_cut_1000"}


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("version", [9, 10])
def test_every_measure_reproduces_trec_evals_output_for_the_real_runs(touche_data, n, version):
    # These runs hold no near ties (scores of six decimals a float step apart or more), so both versions must
    # print what trec_eval printed.
    reference = read_reference(touche_data, n)
    qrels = read_qrels(touche_data / "2020-task1" / "qrels-relevance.txt")
    run = shanks_run(touche_data, n)
    for measure, name in REFERENCED.items():
        evaluation = evaluate_run(run, qrels, measure=measure, trec_eval=version)
        printed = dict(reference[name])
        assert f"{evaluation.mean:.4f}" == printed.pop("all"), measure
        assert {topic: f"{value:.4f}" for topic, value in evaluation.per_topic.items()} == printed, measure
