"""Decide which run documents get judged, and in which order assessors see them.

Pure Python with no Django import: ``services/pooling.py`` reads a topic's stored rankings and passes them in,
as ``runs`` (run tag -> that run's ``(doc_id, rank, score)`` entries for the topic) or, for depth pools, as the
heads of both orders computed at import (``Heads``).

Orders. A run can be read in two orders, and they can give different top-k lists in real Touché runs (tied
scores, ranks that disagree with scores, ranks starting at 0):

* ``"score"``: trec_eval's order, score descending with ties broken by document id descending. The rank column is
  ignored.
* ``"rank"``: the submitted rank column ascending, which is how Touché pooled and evaluated. Ties on rank are
  broken by document id descending.

Both come from ``evaluation.order_run``, the same function that evaluation uses. This guarantees that the
top-k a run is evaluated on is the top-k it was pooled from. If the two had their own tie-breaks, a tie at the
cut could leave an evaluated document unjudged. Positions are 1-based in the chosen order, whatever the rank
column starts at.

Strategies:

* ``depth_pool``: the classic TREC/Touché depth-k pool, by default the union over both orders, so evaluation
  can later pick either order and still find every top-k document judged. ``pool_of_heads`` is the same for
  runs whose orders were computed already, and for Touché Task 3's image runs, whose two stance lists it cuts at
  k each (a run's lists are then named by stance instead of by order). ``pool_positions`` is that pool as a build
  stores it: per document, one (run, rank position, score position) for each run that pooled it.
* ``rbp_pool``: a fixed budget filled by rank-biased priority (Moffat, Webber & Zobel, 2007).
* ``next_documents``: adaptive selection that uses the judgments made so far, after Losada, Parapar & Barreiro
  (multi-armed bandits, 2016/2017) and Cormack, Palmer & Clarke's Move-to-Front (1998).
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeVar

from assessments.collector import collector_paused

from .evaluation import Entry, Order, order_run

Runs = Mapping[str, Sequence[Entry]]
"""One topic's runs: run tag -> that run's (doc id, rank, score) entries for the topic, in any order."""


class Contribution(NamedTuple):
    """Why a document is in a depth pool: ``run`` had it at ``position`` (1-based) when read in ``order``."""

    run: str
    order: Order
    position: int


Pool = Mapping[str, Sequence[Contribution]]
"""A depth pool as ``depth_pool`` returns it: doc id -> its contributions."""


def top_k(entries: Iterable[Entry], k: int, *, order: Order) -> list[tuple[str, int]]:
    """Return the first ``k`` (doc_id, position) pairs of one run's entries for one topic, read in ``order``.

    ``order`` is ``"score"`` (trec_eval) or ``"rank"`` (the rank column). See the module docstring for the
    tie-breaks. A run with fewer than ``k`` entries gives them all. Raises ValueError if ``k < 1``, if ``order`` is
    unknown, or if a document id occurs twice among the returned entries. trec_eval refuses such a run, and the
    importer rejects it.
    """
    return list(_with_positions(order_run(entries, by=order, depth=k)))


def _with_positions(ranking: Iterable[str]) -> Iterator[tuple[str, int]]:
    return ((doc, position) for position, doc in enumerate(ranking, start=1))


def depth_pool(
    runs: Runs, *, depth: int = 5, orders: Sequence[Order] = ("rank", "score")
) -> dict[str, list[Contribution]]:
    """Return the union of every run's top ``depth`` documents under each of ``orders``.

    The result maps doc id -> its contributions, in doc id order. Each document's contributions are listed by run
    tag, then in the order given in ``orders``. The result depends only on the entries, not on the order of rows
    or runs, and each run is pooled on its own. To add a late run, call ``depth_pool({tag: entries})`` and merge
    the contributions into the stored pool: documents not already there are the new ones to judge. The result is
    the same as re-pooling all runs.
    """
    # dict.fromkeys drops a repeated order without reordering, so ("rank", "rank") cannot list a run twice.
    heads: Heads = {run: {order: order_run(entries, by=order, depth=depth) for order in dict.fromkeys(orders)} for run, entries in runs.items()}
    return pool_of_heads(heads, depth=depth)


Heads = Mapping[str, Mapping[str, Sequence[str]]]
"""One topic's runs already read in order: run tag -> list -> doc ids from the top, at least ``depth`` of them or
the whole list. A list is named by its order (``"rank"``, ``"score"``: ``order_run``'s output), or, for a Touché
Task 3 run, by its stance (``"PRO"``, ``"CON"``: that stance's images by their rank)."""


@collector_paused()
def pool_of_heads(heads: Heads, *, depth: int) -> dict[str, list[Contribution]]:
    """``depth_pool`` for runs whose orders are known already (stored at import): the union of the first ``depth``
    documents of every list, with the same contributions in the same order, without sorting any run again.

    A stance list's contributions are by ``"rank"`` at the image's position in that list, so a depth-k pool of
    image runs is exactly each run's top k of each stance. A run may list an image for both stances: the image
    then has one contribution per list, both by ``"rank"``."""
    pool: dict[str, list[Contribution]] = {}
    for run in sorted(heads):
        for name, ranking in heads[run].items():
            order = name if name in ("rank", "score") else "rank"
            # tuple.__new__ skips NamedTuple's Python-level constructor: three times faster for 840,000 contributions.
            positions = zip(itertools.repeat(run), itertools.repeat(order), itertools.count(1))
            contributions = map(tuple.__new__, itertools.repeat(Contribution), positions)
            for doc, contribution in zip(ranking[:depth], contributions):
                pool.setdefault(doc, []).append(contribution)
    return {doc: pool[doc] for doc in sorted(pool)}


RunKey = TypeVar("RunKey", str, int)


@collector_paused()
def pool_positions(
    heads: Mapping[RunKey, Mapping[str, Sequence[str]]], *, depth: int
) -> dict[str, list[tuple[RunKey, int | None, int | None]]]:
    """``pool_of_heads`` as a pool build stores it: doc id -> one (run, rank position, score position) per run that
    pooled it, runs in order, doc ids in order; a position is None where the run did not pool the document by that
    order. Each run's contributions by the two orders are merged into one, and an image that both stance lists of a
    run hold keeps its better position there (stance lists are read by rank). Runs may be named by tag or by id.

    The same pool as ``pool_of_heads`` and the same positions, without a Contribution per list and document: a
    depth-100 pool of 84 runs has 840,000 of them."""
    pool: dict[str, list[tuple[RunKey, int | None, int | None]]] = {}
    add = pool.setdefault
    for run in sorted(heads):
        lists = heads[run]
        if not lists.keys() <= {"rank", "score"}:  # stance lists
            best: dict[str, int] = {}
            for ranking in lists.values():
                for position, doc in enumerate(ranking[:depth], 1):
                    if position < best.get(doc, position + 1):
                        best[doc] = position
            for doc, position in best.items():
                add(doc, []).append((run, position, None))
            continue
        by_rank, by_score = lists.get("rank"), lists.get("score")
        rank = by_rank[:depth] if by_rank is not None else []
        score = by_score[:depth] if by_score is not None else []
        if by_rank is not None and by_score is not None and rank == score:  # ranks that agree with the scores
            for position, doc in enumerate(rank, 1):
                add(doc, []).append((run, position, position))
            continue
        at_score = dict(zip(score, range(1, len(score) + 1)))
        for position, doc in enumerate(rank, 1):
            add(doc, []).append((run, position, at_score.pop(doc, None)))
        for doc, position in at_score.items():
            add(doc, []).append((run, None, position))
    return {doc: pool[doc] for doc in sorted(pool)}


def rbp_priorities(runs: Runs, *, p: float = 0.8, order: Order = "score") -> dict[str, float]:
    """Return each document's rank-biased priority: the sum over runs of ``(1 - p) * p ** (position - 1)``.

    This is the weight that RBP (Moffat & Zobel, 2008) gives each position, with persistence ``p``. Every document
    of every run gets a priority, however deep it is. Raises ValueError unless ``0 < p < 1``.
    """
    if not 0 < p < 1:
        raise ValueError(f"RBP persistence p must be between 0 and 1 (exclusive), got {p}")
    weights: list[float] = []
    priorities: dict[str, float] = {}
    for run in sorted(runs):  # a fixed summation order gives the same floats on every call
        for doc, position in _with_positions(order_run(runs[run], by=order)):
            while len(weights) < position:
                weights.append((1 - p) * p ** len(weights))
            priorities[doc] = priorities.get(doc, 0.0) + weights[position - 1]
    return priorities


def rbp_pool(runs: Runs, *, budget: int, p: float = 0.8, order: Order = "score") -> list[str]:
    """Return up to ``budget`` documents, highest ``rbp_priorities`` first. This is also the order to judge them in.

    Equal priorities are broken by document id (ascending), and priorities are compared after rounding to 12
    decimals. Without the rounding, two priorities that are equal on paper but were summed in different orders
    could fall either way.

    Unlike a depth pool, this does not guarantee that every run's top k is judged. A document at position 6 in two
    runs (2 * 0.2 * 0.8**5 = 0.131) comes before one at position 5 in a single run (0.2 * 0.8**4 = 0.082).
    Documents that many runs rank fairly high are worth more than the bottom of one run's top k. That is the point
    of the method, but it also means a budget equal to the depth-k pool's size does not reproduce that pool.
    """
    if budget < 0:
        raise ValueError(f"budget must not be negative, got {budget}")
    priorities = rbp_priorities(runs, p=p, order=order)
    return heapq.nsmallest(budget, priorities, key=lambda doc: (-round(priorities[doc], 12), doc))


def pool_cost(
    runs_per_topic: Mapping[Hashable, Runs], *, strategy: Literal["depth", "rbp"], **params: Any
) -> dict[Hashable, int]:
    """Return how many documents ``strategy`` would put in each topic's pool.

    This answers how many judgments each option costs before one is chosen. ``params`` are passed on to
    ``depth_pool`` (``depth``, ``orders``) or ``rbp_pool`` (``budget``, ``p``, ``order``). For RBP the count is
    ``min(budget, distinct documents)``. It is still worth asking, because short runs can leave a topic below the
    budget. Near-duplicates are not subtracted: grouping them needs the document texts.
    """
    if strategy == "depth":
        return {topic: len(depth_pool(runs, **params)) for topic, runs in runs_per_topic.items()}
    if strategy == "rbp":
        return {topic: len(rbp_pool(runs, **params)) for topic, runs in runs_per_topic.items()}
    raise ValueError(f"unknown pooling strategy {strategy!r}: expected 'depth' or 'rbp'")


def presentation_order(doc_ids: Iterable[str], *, seed: int) -> list[str]:
    """Return the distinct ``doc_ids`` shuffled reproducibly by ``seed``, the order assessors judge a topic in.

    A random order hides run and rank from the assessor, so the first documents are not always the "best" ones.
    The ids are sorted before shuffling, so the order of database rows does not matter. The shuffle is a
    Fisher-Yates shuffle driven by ``Random(seed).random()``. Python guarantees that ``random()`` produces the same
    sequence for an integer seed across versions, but not ``Random.shuffle``, so this gives the same order after
    an upgrade. The topic's stored seed therefore keeps reproducing it.
    """
    return _shuffled(sorted(set(doc_ids)), seed)


def _shuffled(items: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]
    return items


def unique_contributions(pool: Pool) -> dict[str, int]:
    """Return, for each run in ``pool``, how many pooled documents no other run contributed.

    Runs that contributed no unique document are listed with 0. A run with a high count found documents nobody
    else did. A pool where many runs have such documents is likely to be less reusable for runs that were not
    pooled.
    """
    counts: dict[str, int] = {}
    for contributions in pool.values():
        runs = {c.run for c in contributions}
        for run in runs:
            counts.setdefault(run, 0)
        if len(runs) == 1:
            counts[runs.pop()] += 1
    return dict(sorted(counts.items()))


def run_overlap(pool: Pool) -> dict[tuple[str, str], int]:
    """Return, for each pair of runs in ``pool`` (``run_a < run_b``), how many pooled documents both contributed.

    This gives counts, not Jaccard. Counts are integers that add up across topics, and Jaccard can be derived from
    them: ``overlap / (pooled[a] + pooled[b] - overlap)``, where ``pooled[r]`` is the number of documents run ``r``
    contributed. Jaccard values cannot be summed or averaged across topics without weighting. Pairs that share
    nothing are listed with 0, so the result fills a whole matrix.
    """
    runs = sorted({c.run for contributions in pool.values() for c in contributions})
    overlap = dict.fromkeys(itertools.combinations(runs, 2), 0)
    for contributions in pool.values():
        for pair in itertools.combinations(sorted({c.run for c in contributions}), 2):
            overlap[pair] += 1
    return overlap


def next_documents(
    runs: Runs,
    judged: Mapping[str, int],
    *,
    n: int,
    seed: int,
    strategy: Literal["maxmean", "mtf"] = "maxmean",
    order: Order = "score",
    depth: int | None = None,
) -> list[str]:
    """Return up to ``n`` unjudged documents to judge next, chosen adaptively from the judgments so far.

    This is pooling as a multi-armed bandit (Losada, Parapar & Barreiro, "Feeling lucky?", SAC 2016; IP&M 53(5),
    2017). Each run is an arm, and pulling an arm takes that run's next document in ``order``, cut at ``depth`` if
    given. The reward is 1 when the label is relevant (``judged[doc] > 0``). Touché's -2 ("spam / non-argument")
    and 0 count as non-relevant.

    * ``"maxmean"``: Losada et al.'s MaxMean. Each arm has a Beta(1, 1) prior over its probability of relevance
      and is scored by the posterior mean ``(1 + rel) / (2 + rel + nonrel)``. The arm with the highest mean is
      pulled. This is the stationary variant.
    * ``"mtf"``: Move-to-Front (Cormack, Palmer & Clarke, SIGIR 1998). All runs start at equal priority. The
      current run is followed while it yields relevant documents. A non-relevant one lowers its priority by 1,
      and the highest-priority run takes over.

    The function keeps no state, so a service can call it after every saved judgment. It replays the policy from
    the start each time. A pull that reaches a document already in ``judged`` is free and just gives its reward.
    The first unjudged document reached is selected. When judgments were made in the order this function
    proposed, the replay follows the same path as a live bandit. Judgments from elsewhere, such as an earlier
    depth pool, count as free evidence.

    For ``n > 1``, the remaining documents are the next pulls as if the selected ones had no label yet. Selected
    documents give no reward, and a selected document that another run reaches again is skipped. Ties between
    arms are broken by a fixed shuffle of the run tags from ``seed``, so no run is favoured for sorting first
    alphabetically. Fewer than ``n`` documents are returned when the runs run out.

    Not implemented: the non-stationary variant (MM-NS), and the changes NIST made for the TREC 2017 Common Core
    track (Voorhees, 2018). Those were judging time to learn a topic and splitting the budget across topics.
    Budgets per topic are the service's decision.
    """
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    if strategy not in ("maxmean", "mtf"):
        raise ValueError(f"unknown bandit strategy {strategy!r}: expected 'maxmean' or 'mtf'")
    tags = _shuffled(sorted(runs), seed)
    rankings = [order_run(runs[tag], by=order, depth=depth) for tag in tags]
    cursor = [0] * len(tags)
    relevant = [0] * len(tags)
    nonrelevant = [0] * len(tags)

    def key(arm: int) -> tuple[float, int]:
        # heapq pops the smallest: negate so the best arm comes first, ties going to the earlier shuffled tag.
        if strategy == "maxmean":
            return -(1 + relevant[arm]) / (2 + relevant[arm] + nonrelevant[arm]), arm
        return nonrelevant[arm], arm  # MTF's priority starts equal for all and drops by one per non-relevant pull

    # Lazy heap: an arm's key only changes when it gets a reward, so it is re-pushed then, and stale entries are
    # skipped when they reach the top.
    heap = [key(arm) for arm in range(len(tags)) if rankings[arm]]
    heapq.heapify(heap)
    selected: list[str] = []
    pending: set[str] = set()
    current: int | None = None  # MTF stays on one run until it yields a non-relevant document
    while len(selected) < n:
        if current is None:
            while heap and (heap[0] != key(heap[0][1]) or cursor[heap[0][1]] == len(rankings[heap[0][1]])):
                heapq.heappop(heap)
            if not heap:
                break
            current = heap[0][1]
        arm = current
        doc = rankings[arm][cursor[arm]]
        cursor[arm] += 1
        if strategy == "maxmean" or cursor[arm] == len(rankings[arm]):
            current = None
        if doc in pending:
            continue
        label = judged.get(doc)
        if label is None:
            selected.append(doc)
            pending.add(doc)
            continue
        if label > 0:
            relevant[arm] += 1
        else:
            nonrelevant[arm] += 1
            current = None
        if strategy == "maxmean" or label <= 0:  # the arm's key changed
            heapq.heappush(heap, key(arm))
    return selected
