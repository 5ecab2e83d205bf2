"""Pooling: depth-k pools, RBP budgets, bandit selection, presentation order and pool statistics.

Expected pools are written out by hand or, for the real Touché runs, computed here with plain sorting, never
copied from the module's output.
"""

import itertools
import random
import subprocess
import sys
from operator import itemgetter
from pathlib import Path

import pytest

from assessments.metrics.pooling import (
    depth_pool,
    next_documents,
    pool_cost,
    pool_of_heads,
    presentation_order,
    rbp_pool,
    rbp_priorities,
    run_overlap,
    top_k,
    unique_contributions,
)

# Three runs for one topic with the quirks of real ones.
#   alpha: ranks start at 0 and disagree with the scores.
#   beta: three documents tie on score 5.0; trec_eval breaks the tie by doc id descending: d6, d5, d3.
#   gamma: two documents tie on rank 1; the rank order breaks it by doc id descending too: d9, d8.
# d2 and d3 are retrieved by two runs each.
RUNS = {
    "alpha": [("d1", 0, 1.0), ("d2", 1, 3.0), ("d3", 2, 2.0), ("d4", 3, 0.5)],
    "beta": [("d5", 1, 5.0), ("d3", 2, 5.0), ("d6", 3, 5.0), ("d7", 4, 1.0)],
    "gamma": [("d8", 1, 1.0), ("d9", 1, 0.9), ("d2", 2, 0.8)],
}

# The depth-2 pool of RUNS under both orders, worked out by hand from the comments above.
DEPTH_2_POOL = {
    "d1": [("alpha", "rank", 1)],
    "d2": [("alpha", "rank", 2), ("alpha", "score", 1)],
    "d3": [("alpha", "score", 2), ("beta", "rank", 2)],
    "d5": [("beta", "rank", 1), ("beta", "score", 2)],
    "d6": [("beta", "score", 1)],
    "d8": [("gamma", "rank", 2), ("gamma", "score", 1)],
    "d9": [("gamma", "rank", 1), ("gamma", "score", 2)],
}


@pytest.mark.parametrize(
    "run, order, expected",
    [
        ("alpha", "rank", [("d1", 1), ("d2", 2)]),  # rank 0 is position 1
        ("alpha", "score", [("d2", 1), ("d3", 2)]),  # the rank column is ignored
        ("beta", "score", [("d6", 1), ("d5", 2)]),  # tied scores: doc id descending
        ("beta", "rank", [("d5", 1), ("d3", 2)]),
        ("gamma", "rank", [("d9", 1), ("d8", 2)]),  # tied ranks: doc id descending
        ("gamma", "score", [("d8", 1), ("d9", 2)]),
    ],
)
def test_top_k_reads_each_order_with_its_tie_break(run, order, expected):
    assert top_k(RUNS[run], 2, order=order) == expected


def test_top_k_gives_a_short_run_whole():
    assert top_k(RUNS["gamma"], 10, order="score") == [("d8", 1), ("d9", 2), ("d2", 3)]


@pytest.mark.parametrize(
    "entries, k, order",
    [
        ([("d1", 1, 1.0), ("d1", 2, 0.5)], 2, "score"),  # the same document twice
        (RUNS["alpha"], 0, "score"),
        (RUNS["alpha"], 2, "stance"),
    ],
)
def test_top_k_rejects_bad_input(entries, k, order):
    with pytest.raises(ValueError):
        top_k(entries, k, order=order)


def test_depth_pool_is_the_union_of_both_orders():
    assert depth_pool(RUNS, depth=2) == DEPTH_2_POOL


def test_pool_of_heads_pools_orders_read_before_and_cuts_them_at_the_depth():
    # RUNS read in each order by hand (the tie-breaks as in the comments above), three deep.
    heads = {
        "alpha": {"rank": ["d1", "d2", "d3"], "score": ["d2", "d3", "d1"]},
        "beta": {"rank": ["d5", "d3", "d6"], "score": ["d6", "d5", "d3"]},
        "gamma": {"rank": ["d9", "d8", "d2"], "score": ["d8", "d9", "d2"]},
    }
    assert pool_of_heads(heads, depth=2) == DEPTH_2_POOL
    only_scores = {run: {"score": orders["score"]} for run, orders in heads.items()}
    assert pool_of_heads(only_scores, depth=1) == {"d2": [("alpha", "score", 1)], "d6": [("beta", "score", 1)], "d8": [("gamma", "score", 1)]}


@pytest.mark.parametrize(
    "orders, expected_docs",
    [
        (("rank",), ["d1", "d2", "d3", "d5", "d8", "d9"]),
        (("score",), ["d2", "d3", "d5", "d6", "d8", "d9"]),
        (("rank", "rank"), ["d1", "d2", "d3", "d5", "d8", "d9"]),
    ],
)
def test_depth_pool_with_one_order_misses_what_only_the_other_finds(orders, expected_docs):
    pool = depth_pool(RUNS, depth=2, orders=orders)
    assert list(pool) == expected_docs
    assert all(c.order == orders[0] for contributions in pool.values() for c in contributions)


def test_depth_pool_does_not_depend_on_row_or_run_order():
    rng = random.Random(4)
    shuffled = {}
    for run in reversed(list(RUNS)):
        entries = list(RUNS[run])
        rng.shuffle(entries)
        shuffled[run] = entries
    assert depth_pool(shuffled, depth=2) == DEPTH_2_POOL
    assert list(depth_pool(shuffled, depth=2)) == sorted(DEPTH_2_POOL)


def test_pooling_a_late_run_alone_gives_the_new_documents():
    before = depth_pool({run: RUNS[run] for run in ("alpha", "beta")}, depth=2)
    late = depth_pool({"gamma": RUNS["gamma"]}, depth=2)
    merged = {doc: list(contributions) for doc, contributions in before.items()}
    for doc, contributions in late.items():
        merged.setdefault(doc, []).extend(contributions)
    assert merged == DEPTH_2_POOL
    assert sorted(set(late) - set(before)) == ["d8", "d9"]


def test_pool_statistics_count_unique_documents_and_pairwise_overlap():
    pool = depth_pool(RUNS, depth=2)
    # alpha alone: d1, d2; beta alone: d5, d6; gamma alone: d8, d9; d3 is shared by alpha and beta.
    assert unique_contributions(pool) == {"alpha": 2, "beta": 2, "gamma": 2}
    assert run_overlap(pool) == {("alpha", "beta"): 1, ("alpha", "gamma"): 0, ("beta", "gamma"): 0}


def test_unique_contributions_lists_a_run_without_unique_documents():
    pool = depth_pool({"a": [("x", 1, 1.0)], "b": [("x", 1, 1.0), ("y", 2, 0.5)]}, depth=2)
    assert unique_contributions(pool) == {"a": 0, "b": 1}


# ---------------------------------------------------------------------------------------------------------------
# Real runs: all nine Touché 2021 Task 1 runs at depth 5, against plain sorting done here.


@pytest.fixture
def touche_2021_runs(touche_data) -> dict[str, dict[str, list[tuple[str, int, float]]]]:
    """topic -> run tag -> entries from the nine real 2021 Task 1 runs (TAB-separated ``qid Q0 doc rank score tag``)."""
    topics: dict[str, dict[str, list[tuple[str, int, float]]]] = {}
    for file in sorted((touche_data / "2021-task1" / "runs").glob("*.txt")):
        for line in file.read_text().splitlines():
            qid, _, doc, rank, score, tag = line.split("\t")
            topics.setdefault(qid, {}).setdefault(tag, []).append((doc, int(rank), float(score)))
    return topics


def expected_top(entries, k, order):
    # Two stable sorts, the textbook way to get "primary key, then doc id descending" without building tuples.
    by_doc = sorted(entries, key=itemgetter(0), reverse=True)
    if order == "score":
        by_doc.sort(key=itemgetter(2), reverse=True)
    else:
        by_doc.sort(key=itemgetter(1))
    return [doc for doc, _, _ in by_doc[:k]]


def test_depth_5_pool_of_real_runs_matches_plain_sorting(touche_2021_runs):
    assert len(touche_2021_runs) == 50
    assert all(len(runs) == 9 for runs in touche_2021_runs.values())
    total = only_by_rank = only_by_score = 0
    for topic, runs in touche_2021_runs.items():
        expected: dict[str, set[tuple[str, str, int]]] = {}
        for tag, entries in runs.items():
            for order in ("rank", "score"):
                for position, doc in enumerate(expected_top(entries, 5, order), start=1):
                    expected.setdefault(doc, set()).add((tag, order, position))
        pool = depth_pool(runs, depth=5)
        assert {doc: set(contributions) for doc, contributions in pool.items()} == expected, topic
        total += len(pool)
        only_by_rank += sum(all(c.order == "rank" for c in contributions) for contributions in pool.values())
        only_by_score += sum(all(c.order == "score" for c in contributions) for contributions in pool.values())
    # Totals of the plain-sorting computation above (9 runs x 50 topics x top 5 = 2250 contributions per order).
    assert total == 814
    # Score ties and rank/score disagreement: pooling by one order only would leave two documents unjudged that
    # the other order's evaluation needs.
    assert (only_by_rank, only_by_score) == (2, 2)


def test_rbp_on_real_runs_respects_the_budget_and_fills_it(touche_2021_runs):
    runs = touche_2021_runs["51"]
    distinct = {doc for entries in runs.values() for doc, _, _ in entries}
    assert len(rbp_pool(runs, budget=60)) == 60
    assert set(rbp_pool(runs, budget=len(distinct) + 10)) == distinct
    assert pool_cost(touche_2021_runs, strategy="rbp", budget=60) == dict.fromkeys(touche_2021_runs, 60)


# ---------------------------------------------------------------------------------------------------------------
# RBP


def test_rbp_priorities_are_summed_rbp_weights():
    runs = {
        "A": [("d1", 1, 3.0), ("d2", 2, 2.0), ("d3", 3, 1.0)],
        "B": [("d2", 1, 9.0), ("d4", 2, 8.0)],
        "C": [("d7", 1, 9.0), ("d5", 2, 8.0)],
    }
    # p = 0.5: positions 1, 2, 3 weigh (1 - p) p^0 = 0.5, 0.25, 0.125.
    assert rbp_priorities(runs, p=0.5) == pytest.approx(
        {"d1": 0.5, "d2": 0.25 + 0.5, "d3": 0.125, "d4": 0.25, "d5": 0.25, "d7": 0.5}
    )
    # p = 0.8: 0.2, 0.16, 0.128.
    assert rbp_priorities(runs, p=0.8)["d2"] == pytest.approx(0.16 + 0.2)
    # Ties (d1/d7 at 0.5, d4/d5 at 0.25) go to the smaller doc id.
    assert rbp_pool(runs, budget=10, p=0.5) == ["d2", "d1", "d7", "d4", "d5", "d3"]
    assert rbp_pool(runs, budget=3, p=0.5) == ["d2", "d1", "d7"]
    assert rbp_pool(runs, budget=0, p=0.5) == []


def test_rbp_can_prefer_a_deep_shared_document_to_a_runs_top_document():
    # Depth 1 pools x, y, z (one each). RBP weighs s, second in all three runs, at 3 * 0.16 = 0.48 > 0.2,
    # so a budget the size of the depth-1 pool leaves z out: equal budgets do not mean equal coverage.
    runs = {tag: [(top, 1, 2.0), ("s", 2, 1.0)] for tag, top in (("r1", "x"), ("r2", "y"), ("r3", "z"))}
    assert set(depth_pool(runs, depth=1)) == {"x", "y", "z"}
    assert rbp_pool(runs, budget=3) == ["s", "x", "y"]


@pytest.mark.parametrize("kwargs", [{"budget": -1}, {"budget": 3, "p": 1.0}, {"budget": 3, "p": 0.0}])
def test_rbp_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        rbp_pool(RUNS, **kwargs)


def test_pool_cost_counts_judgments_per_topic():
    runs_per_topic = {"1": RUNS, "2": {"solo": [("x", 1, 1.0)]}}
    assert pool_cost(runs_per_topic, strategy="depth", depth=2) == {"1": 7, "2": 1}
    assert pool_cost(runs_per_topic, strategy="depth", depth=2, orders=("score",)) == {"1": 6, "2": 1}
    # RUNS retrieves d1..d9: a budget above that is not reached.
    assert pool_cost(runs_per_topic, strategy="rbp", budget=5) == {"1": 5, "2": 1}
    assert pool_cost(runs_per_topic, strategy="rbp", budget=50) == {"1": 9, "2": 1}
    with pytest.raises(ValueError):
        pool_cost(runs_per_topic, strategy="bandit")


# ---------------------------------------------------------------------------------------------------------------
# Presentation order


def fisher_yates(items, seed):
    # Durstenfeld's shuffle driven only by Random.random(), written out here as the reference.
    items = sorted(items)
    rng = random.Random(seed)
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]
    return items


def test_presentation_order_is_a_reproducible_shuffle_of_the_sorted_ids():
    docs = [f"doc-{i:02d}" for i in range(30)]
    order = presentation_order(reversed(docs), seed=2021)
    assert order == fisher_yates(docs, 2021)
    assert sorted(order) == docs
    assert order != docs
    assert presentation_order(random.Random(1).sample(docs, len(docs)), seed=2021) == order
    assert presentation_order(docs, seed=2022) != order
    assert presentation_order(docs + docs[:3], seed=2021) == order  # a repeated id is shown once


# ---------------------------------------------------------------------------------------------------------------
# Bandits: each case replays the policy by hand. Ties between runs follow the seed's shuffle of the run tags.

SEED_A_FIRST = next(seed for seed in itertools.count() if fisher_yates(["A", "B"], seed) == ["A", "B"])

TWO_RUNS = {
    "A": [("a1", 1, 3.0), ("a2", 2, 2.0), ("a3", 3, 1.0)],
    "B": [("b1", 1, 3.0), ("b2", 2, 2.0)],
}


@pytest.mark.parametrize(
    "judged, n, expected",
    [
        # Both arms at Beta(1,1) mean 1/2: A (first in the tie order) until it runs out; no new labels meanwhile.
        ({}, 2, ["a1", "a2"]),
        ({}, 5, ["a1", "a2", "a3", "b1", "b2"]),
        # a1 not relevant: A's mean drops to 1/3 < 1/2, so B is pulled.
        ({"a1": 0}, 1, ["b1"]),
        # -2 (spam) is not relevant either.
        ({"a1": -2}, 1, ["b1"]),
        # Both at 1/3: tie, A again.
        ({"a1": 0, "b1": 0}, 1, ["a2"]),
        # a1 relevant (2/3), a2 not (2/4 = 1/2): a tie with B that A wins, so a3; then B.
        ({"a1": 1, "a2": 0}, 3, ["a3", "b1", "b2"]),
        # Everything judged: nothing left.
        (dict.fromkeys(["a1", "a2", "a3", "b1", "b2"], 0), 3, []),
    ],
)
def test_maxmean_pulls_the_run_with_the_highest_posterior_mean(judged, n, expected):
    assert next_documents(TWO_RUNS, judged, n=n, seed=SEED_A_FIRST, strategy="maxmean") == expected


@pytest.mark.parametrize(
    "judged, n, expected",
    [
        ({}, 2, ["a1", "a2"]),
        # a1 relevant keeps A; a2 not relevant moves to B, which is followed until it runs out; then A's a3.
        ({"a1": 1, "a2": 0}, 3, ["b1", "b2", "a3"]),
        # A fails first (priority -1), then B fails too (-1): back to A, first in the tie order.
        ({"a1": 0, "b1": 0}, 1, ["a2"]),
    ],
)
def test_move_to_front_follows_a_run_until_it_fails(judged, n, expected):
    assert next_documents(TWO_RUNS, judged, n=n, seed=SEED_A_FIRST, strategy="mtf") == expected


def test_a_document_shared_by_runs_rewards_every_run_that_reaches_it():
    runs = {"A": [("s", 1, 2.0), ("a2", 2, 1.0)], "B": [("s", 1, 2.0), ("b2", 2, 1.0)]}
    # A reaches s (relevant, free), then a2. A is exhausted; B reaches s (free again) and then b2.
    assert next_documents(runs, {"s": 2}, n=2, seed=SEED_A_FIRST) == ["a2", "b2"]


def test_bandit_never_proposes_a_judged_or_repeated_document():
    judged = {"d2": 1, "d6": 0}
    picked = next_documents(RUNS, judged, n=20, seed=7)
    assert len(picked) == len(set(picked))
    assert not set(picked) & set(judged)
    assert set(picked) | set(judged) == {f"d{i}" for i in range(1, 10)}


def test_bandit_seed_only_changes_ties():
    assert next_documents(TWO_RUNS, {"a1": 0}, n=1, seed=SEED_A_FIRST) == ["b1"]
    b_first = next(seed for seed in itertools.count() if fisher_yates(["A", "B"], seed) == ["B", "A"])
    assert next_documents(TWO_RUNS, {}, n=1, seed=b_first) == ["b1"]
    assert next_documents(TWO_RUNS, {"b1": 0}, n=1, seed=b_first) == ["a1"]


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"n": 1, "strategy": "ucb"}])
def test_bandit_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        next_documents(TWO_RUNS, {}, seed=0, **kwargs)


# ---------------------------------------------------------------------------------------------------------------


def test_metrics_modules_do_not_import_django():
    code = (
        "import sys\n"
        "import assessments.metrics.pooling, assessments.metrics.duplicates\n"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "assert not loaded, loaded\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
