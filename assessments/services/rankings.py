"""Reading stored runs (models.Ranking) back as the (doc, rank, score) lines the pure metrics take.

A Ranking holds one run's lines for one topic as parallel lists in trec_eval's score order, with the rank
column's order and trec_eval 9's as indices into them (`by_rank`, `by_single`, null when they agree with the
score order). Pooling and evaluation mostly need the first k lines under one or two orders: on PostgreSQL the
lists are sliced in the query, so a depth-5 pool of 4,200 rankings reads 5 to a few dozen elements of each
instead of a thousand, and evaluation reads document ids only. SQLite (the demo) reads
whole lists and slices them here; what is picked is the same Python on both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack

from django.db import connection, transaction
from django.db.models import Max

from assessments.models import Ranking

Line = tuple[str, int, float, "str | None"]
"""One run line: (document id, rank column, score, stance or None)."""

_TABLE = Ranking._meta.db_table
_LISTS = ("docs", "ranks", "scores", "stances")  # a line, as all_lines gives it


def heads(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int, orders: Sequence[str]
) -> Iterator[tuple[int, int, dict[str, list[str]]]]:
    """(run id, topic id, order -> the first `depth` doc ids under it) per stored ranking, for each of `orders`
    ("rank", "score") in the order given: what a depth pool needs, without ranks, scores or stances."""
    permutations = ("by_rank",) if "rank" in orders else ()
    for run_id, topic_id, indices, (docs,) in _heads_of_lists(run_ids, topic_ids, depth=depth, permutations=permutations, lists=("docs",)):
        by_score = docs[:depth]
        yield run_id, topic_id, {
            order: by_score if order == "score" else _permuted(docs, indices["by_rank"], depth) for order in orders
        }


def ordered_docs(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int | None, order: str, versions: Sequence[int] = (10,),
    stances: bool = False,
) -> Iterator[tuple[int, int, dict[int, list[str]], dict[str, str] | None]]:
    """(run id, topic id, trec_eval version -> doc ids best first, doc id -> stance) per stored ranking, a run's
    rankings one after another (runs in id order): its first `depth` documents (all of them with None) under
    `order` ("score" or "rank") as each of `versions` orders them (10: the stored score order; 9: `by_single`, see
    models.Ranking). Where two versions order a ranking's first `depth` alike they share one list, so `is` tells a
    caller whether they differ. The stances (of the documents read, when `stances` is set and the ranking has any)
    come as a mapping, else None. Rows are fetched as they are consumed, so a caller that keeps one run at a time
    holds one run's lists, whatever the number of runs.
    """
    versions = tuple(versions)
    permutations = ("by_rank",) if order == "rank" else ("by_single",) if 9 in versions else ()
    lists = ("docs", "stances") if stances else ("docs",)
    for run_id, topic_id, indices, values in _heads_of_lists(
        run_ids, topic_ids, depth=depth, permutations=permutations, lists=lists, by_run=True
    ):
        docs = values[0]
        if order == "rank":
            picked = dict.fromkeys(versions, _permuted(docs, indices["by_rank"], depth))
        else:
            ten = docs if depth is None else docs[:depth]
            picked = dict.fromkeys(versions, ten)
            if 9 in versions:
                nine = _permuted(docs, indices["by_single"], depth)
                picked[9] = ten if nine == ten else nine
        yield run_id, topic_id, picked, dict(zip(docs, values[1])) if stances and values[1] else None


def _permuted(docs: list[str], indices: list[int] | None, depth: int | None) -> list[str]:
    """The first `depth` of `docs` in the order `indices` (1-based, null: the stored order) gives."""
    if indices is None:
        return docs if depth is None else docs[:depth]
    return [docs[i - 1] for i in (indices if depth is None else indices[:depth])]


_ROWS_PER_FETCH = 100  # of rows read by run (by_run): a hundred rankings of a thousand lines are a few MB


def _heads_of_lists(
    run_ids: Sequence[int], topic_ids: Sequence[int], *, depth: int | None, permutations: Sequence[str], lists: Sequence[str],
    by_run: bool = False,
) -> Iterator[tuple[int, int, dict[str, list[int] | None], list[list]]]:
    """(run id, topic id, permutation -> its first `depth` indices, the `lists` columns) per stored ranking, the lists
    long enough for the first `depth` lines in score order and in the order of each of `permutations` ("by_rank",
    "by_single"); whole with `depth` None. On PostgreSQL the lists are sliced in the query; SQLite reads them whole.
    With `by_run`, rankings come run by run and are fetched a few at a time as they are consumed (a server-side
    cursor, in a transaction of its own: a read), so memory does not grow with the number of runs."""
    if not run_ids or not topic_ids:
        return
    if connection.vendor == "postgresql":
        if depth is None:
            heads, columns = ", ".join(permutations), ", ".join(lists)
        else:
            # Enough of each list to reach the deepest index the first `depth` of each permutation refers to
            # (greatest() skips the nulls of permutations a ranking does not need).
            deepest = "".join(f", (SELECT max(i) FROM unnest({p}[1:%(k)s]) i)" for p in permutations)
            heads = ", ".join(f"{p}[1:%(k)s]" for p in permutations)
            columns = ", ".join(f"{column}[1:greatest(%(k)s{deepest})]" for column in lists)
        select = ", ".join(part for part in ("run_id, topic_id", heads, columns) if part)
        query = f"SELECT {select} FROM {_TABLE} WHERE run_id = ANY(%(runs)s) AND topic_id = ANY(%(topics)s)"
        params = {"k": depth, "runs": list(run_ids), "topics": list(topic_ids)}
        with ExitStack() as stack:
            if by_run:
                stack.enter_context(transaction.atomic())  # a named cursor lives in a transaction
                cursor = stack.enter_context(connection.chunked_cursor())
                cursor.cursor.itersize = _ROWS_PER_FETCH
                query += " ORDER BY run_id"
            else:
                cursor = stack.enter_context(connection.cursor())
            cursor.execute(query, params)
            for run_id, topic_id, *values in cursor:
                yield run_id, topic_id, dict(zip(permutations, values)), values[len(permutations):]
        return
    rows = Ranking.objects.filter(run_id__in=run_ids, topic_id__in=topic_ids).values_list("run_id", "topic_id", *permutations, *lists)
    if by_run:
        rows = rows.order_by("run_id")
    for run_id, topic_id, *values in rows.iterator(chunk_size=200):
        yield run_id, topic_id, dict(zip(permutations, values)), values[len(permutations):]


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
