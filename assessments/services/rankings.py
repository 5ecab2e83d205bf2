"""Reading stored runs (models.Ranking) back as the (doc, rank, score) lines the pure metrics take.

A Ranking holds one run's lines for one topic as parallel lists in trec_eval's score order, with the rank
column's order as indices into them (`by_rank`, null when both orders agree). Pooling and evaluation mostly
need the first k lines under one or both orders: on PostgreSQL the lists are sliced in the query, so a depth-5
pool of 4,200 rankings reads 5 to a few dozen elements of each instead of a thousand. SQLite (the demo) reads
whole lists and slices them here; what is picked is the same Python on both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat

from django.db import connection
from django.db.models import Max

from assessments.metrics.evaluation import single_precision_cut, single_precision_order
from assessments.models import Ranking

Line = tuple[str, int, float, "str | None"]
"""One run line: (document id, rank column, score, stance or None)."""

_TABLE = Ranking._meta.db_table
_LISTS = ("docs", "ranks", "scores", "stances")


def top_lines(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int, orders: Iterable[str]
) -> Iterator[tuple[int, int, list[Line]]]:
    """(run id, topic id, lines) per stored ranking: the lines within the first `depth` under any of `orders`
    ("score", "rank"), each once, in score order."""
    orders = frozenset(orders)
    for run_id, topic_id, by_rank, lists, _ in _heads_of_lists(run_ids, topic_ids, depth=depth, orders=orders, lists=_LISTS):
        yield run_id, topic_id, _picked(lists, by_rank, depth=depth, orders=orders)


def heads(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int, orders: Sequence[str]
) -> Iterator[tuple[int, int, dict[str, list[str]]]]:
    """(run id, topic id, order -> the first `depth` doc ids under it) per stored ranking, for each of `orders`
    ("rank", "score") in the order given: what a depth pool needs, without ranks, scores or stances."""
    for run_id, topic_id, by_rank, (docs,), _ in _heads_of_lists(run_ids, topic_ids, depth=depth, orders=orders, lists=("docs",)):
        yield run_id, topic_id, _heads(docs, by_rank, depth=depth, orders=orders)


def _heads_of_lists(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int | None, orders: Iterable[str], lists: Sequence[str],
    margin: int = 0, pairs: Sequence[tuple[int, int]] | None = None,
) -> Iterator[tuple[int, int, list[int] | None, list[list], int]]:
    """(run id, topic id, by_rank, the `lists` columns, length) per stored ranking, long enough for the first `depth`
    lines under each of `orders` plus `margin` more in score order (whole lists with `depth` None): sliced in the
    query on PostgreSQL, whole on SQLite. `pairs` keeps only those (run id, topic id) rankings."""
    if not run_ids or not topic_ids:
        return
    if connection.vendor == "postgresql":
        params: dict = {"k": depth, "n": (depth or 0) + margin, "runs": list(run_ids), "topics": list(topic_ids)}
        if depth is None:
            reach, heads = "length", "by_rank"
        else:
            # Enough of each list to reach the deepest index the rank order's first `depth` refers to.
            deepest = "greatest(%(n)s, (SELECT max(i) FROM unnest(by_rank[1:%(k)s]) i))" if "rank" in orders else "%(n)s"
            reach, heads = f"CASE WHEN by_rank IS NULL THEN %(n)s ELSE {deepest} END", "by_rank[1:%(k)s]"
        only = ""
        if pairs is not None:
            only = " AND (run_id, topic_id) IN (SELECT * FROM unnest(%(pair_runs)s::integer[], %(pair_topics)s::integer[]))"
            params.update(pair_runs=[run for run, _ in pairs], pair_topics=[topic for _, topic in pairs])
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT run_id, topic_id, {heads}, {', '.join(f'{column}[1:n]' for column in lists)}, length
                    FROM (SELECT run_id, topic_id, by_rank, length, {', '.join(lists)}, {reach} AS n
                          FROM {_TABLE} WHERE run_id = ANY(%(runs)s) AND topic_id = ANY(%(topics)s){only}) r""",
                params,
            )
            for run_id, topic_id, by_rank, *values, length in cursor:
                yield run_id, topic_id, by_rank, values, length
        return
    rows = Ranking.objects.filter(run_id__in=run_ids, topic_id__in=topic_ids).values_list("run_id", "topic_id", "by_rank", *lists)
    wanted = None if pairs is None else set(pairs)
    for run_id, topic_id, by_rank, *values in rows.iterator(chunk_size=200):
        if wanted is None or (run_id, topic_id) in wanted:
            yield run_id, topic_id, by_rank, values, len(values[0])


def _heads(docs: list[str], by_rank: list[int] | None, *, depth: int, orders: Sequence[str]) -> dict[str, list[str]]:
    by_score = docs[:depth]
    return {
        order: by_score if order == "score" or by_rank is None else [docs[i - 1] for i in by_rank[:depth]]
        for order in orders
    }


def _picked(lists: list, by_rank: list[int] | None, *, depth: int, orders: frozenset[str]) -> list[Line]:
    docs, ranks, scores, stances = lists
    head = range(min(depth, len(docs)))
    picked: Iterable[int] = head if "score" in orders else ()
    if "rank" in orders and by_rank is not None:
        by_rank_head = [i - 1 for i in by_rank[:depth]]
        picked = sorted(set(picked).union(by_rank_head)) if picked else by_rank_head
    elif "rank" in orders:
        picked = head
    stances = stances or [None] * len(docs)
    return [(docs[i], ranks[i], scores[i], stances[i]) for i in picked]


def ordered_lines(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int | None, order: str, versions: Sequence[int] = (10,)
) -> Iterator[tuple[int, int, dict[int, list[Line]]]]:
    """(run id, topic id, trec_eval version -> lines best first) per stored ranking: its first `depth` lines (all
    of them with None) under `order` ("score" or "rank") as each of `versions` orders them (10: the stored order;
    9: scores compared in single precision, see metrics.evaluation). Where two versions order a ranking's first
    `depth` alike they share one list, so `is` tells a caller whether they differ.

    trec_eval 9's first `depth` depend on every line whose rounded score equals that of line `depth`, so the
    heads are read `depth + _MARGIN` lines further; the few rankings whose run of equal rounded scores goes on
    past that are read whole in a second query.
    """
    versions = tuple(versions)
    single = order == "score" and 9 in versions
    margin = depth + _MARGIN if single and depth else 0
    deeper: list[tuple[int, int]] = []
    for run_id, topic_id, by_rank, lists, length in _heads_of_lists(
        run_ids, topic_ids, depth=depth, orders=[order], lists=_LISTS, margin=margin
    ):
        picked = _in_order(lists, by_rank, length, depth=depth, order=order, versions=versions)
        if picked is None:
            deeper.append((run_id, topic_id))
        else:
            yield run_id, topic_id, picked
    if deeper:
        for run_id, topic_id, by_rank, lists, length in _heads_of_lists(
            run_ids, topic_ids, depth=None, orders=[order], lists=_LISTS, pairs=deeper
        ):
            picked = _in_order(lists, by_rank, length, depth=depth, order=order, versions=versions)
            assert picked is not None  # a whole list always suffices
            yield run_id, topic_id, picked


_MARGIN = 16


def _in_order(
    lists: list, by_rank: list[int] | None, length: int, *, depth: int | None, order: str, versions: tuple[int, ...]
) -> dict[int, list[Line]] | None:
    """version -> the first `depth` lines in its order, or None when `lists` end too early to know trec_eval 9's."""
    docs, _, scores, stances = lists
    lines = list(zip(*lists[:3], stances or repeat(None)))
    if order == "rank":
        if by_rank is not None:
            lines = [lines[i - 1] for i in by_rank]
        return dict.fromkeys(versions, lines[:depth])
    head = lines[:depth]
    picked = {version: head for version in versions}
    if 9 in versions:
        cut = len(lines) if depth is None else single_precision_cut(scores, depth)
        if cut == len(lines) < length:
            return None
        reordered = single_precision_order(docs[:cut], scores[:cut])
        if reordered is not None:
            nine = [lines[i] for i in reordered[:depth]]
            picked[9] = head if nine == head else nine
    return picked


def all_lines(run_ids: Sequence[int], topic_ids: Sequence[int]) -> Iterator[tuple[int, int, list[Line]]]:
    """(run id, topic id, every line in score order) per stored ranking: for strategies that may go any depth."""
    rows = Ranking.objects.filter(run_id__in=run_ids, topic_id__in=topic_ids).values_list("run_id", "topic_id", *_LISTS)
    for run_id, topic_id, docs, ranks, scores, stances in rows.iterator(chunk_size=200):
        yield run_id, topic_id, list(zip(docs, ranks, scores, stances or [None] * len(docs)))


def positions(run_ids: Sequence[int]) -> dict[tuple[int, int, str], tuple[int, int]]:
    """(run id, topic id, doc id) -> the line's 1-based (rank order, score order) positions, for every line."""
    found: dict[tuple[int, int, str], tuple[int, int]] = {}
    rows = Ranking.objects.filter(run_id__in=run_ids).values_list("run_id", "topic_id", "docs", "by_rank")
    for run_id, topic_id, docs, by_rank in rows.iterator(chunk_size=200):
        by_rank = by_rank or range(1, len(docs) + 1)
        rank_position = {index: position for position, index in enumerate(by_rank, 1)}
        for index, doc in enumerate(docs, 1):
            found[run_id, topic_id, doc] = (rank_position[index], index)
    return found


def longest(run_ids: Sequence[int], topic_ids: Sequence[int]) -> dict[int, int]:
    """topic id -> the most lines any of the runs has for it."""
    rows = Ranking.objects.filter(run_id__in=run_ids, topic_id__in=topic_ids).values("topic_id")
    return dict(rows.annotate(longest=Max("length")).values_list("topic_id", "longest"))
