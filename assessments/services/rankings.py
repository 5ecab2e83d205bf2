"""Reading stored runs (models.Ranking) back as the (doc, rank, score) lines the pure metrics take.

A Ranking holds one run's lines for one topic as parallel lists in trec_eval's score order, with the rank
column's order as indices into them (`by_rank`, null when both orders agree). Pooling and evaluation mostly
need the first k lines under one or both orders: on PostgreSQL the lists are sliced in the query, so a depth-5
pool of 4,200 rankings reads 5 to a few dozen elements of each instead of a thousand. SQLite (the demo) reads
whole lists and slices them here; what is picked is the same Python on both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from django.db import connection
from django.db.models import Max

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
    for run_id, topic_id, by_rank, lists in _heads_of_lists(run_ids, topic_ids, depth=depth, orders=orders, lists=_LISTS):
        yield run_id, topic_id, _picked(lists, by_rank, depth=depth, orders=orders)


def heads(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int, orders: Sequence[str]
) -> Iterator[tuple[int, int, dict[str, list[str]]]]:
    """(run id, topic id, order -> the first `depth` doc ids under it) per stored ranking, for each of `orders`
    ("rank", "score") in the order given: what a depth pool needs, without ranks, scores or stances."""
    for run_id, topic_id, by_rank, (docs,) in _heads_of_lists(run_ids, topic_ids, depth=depth, orders=orders, lists=("docs",)):
        yield run_id, topic_id, _heads(docs, by_rank, depth=depth, orders=orders)


def _heads_of_lists(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int, orders: Iterable[str], lists: Sequence[str]
) -> Iterator[tuple[int, int, list[int] | None, list[list]]]:
    """(run id, topic id, by_rank, the `lists` columns) per stored ranking, long enough for the first `depth` lines
    under each of `orders`: sliced in the query on PostgreSQL, whole on SQLite."""
    if not run_ids or not topic_ids:
        return
    if connection.vendor == "postgresql":
        # Enough of each list to reach the deepest index the rank order's first `depth` refers to.
        reach = "greatest(%(k)s, (SELECT max(i) FROM unnest(by_rank[1:%(k)s]) i))" if "rank" in orders else "%(k)s"
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT run_id, topic_id, by_rank[1:%(k)s], {', '.join(f'{column}[1:n]' for column in lists)}
                    FROM (SELECT run_id, topic_id, by_rank, {', '.join(lists)},
                                 CASE WHEN by_rank IS NULL THEN %(k)s ELSE {reach} END AS n
                          FROM {_TABLE} WHERE run_id = ANY(%(runs)s) AND topic_id = ANY(%(topics)s)) r""",
                {"k": depth, "runs": list(run_ids), "topics": list(topic_ids)},
            )
            for run_id, topic_id, by_rank, *values in cursor:
                yield run_id, topic_id, by_rank, values
        return
    rows = Ranking.objects.filter(run_id__in=run_ids, topic_id__in=topic_ids).values_list("run_id", "topic_id", "by_rank", *lists)
    for run_id, topic_id, by_rank, *values in rows.iterator(chunk_size=200):
        yield run_id, topic_id, by_rank, values


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
