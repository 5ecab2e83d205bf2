"""Reads about a campaign's pool: statistics for the pool page, the pooled documents still without text, and
the pool as `qid doc` lines for judging elsewhere."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db import connection

from assessments.models import Campaign, Document, Judgment, PoolEntry, PoolSource, Run, Topic
from assessments.selectors.queues import complete_sql

_POOLENTRY = PoolEntry._meta.db_table
_POOLSOURCE = PoolSource._meta.db_table
_DOCUMENT = Document._meta.db_table
_TOPIC = Topic._meta.db_table
_JUDGMENT = Judgment._meta.db_table
_RUN = Run._meta.db_table


@dataclass(frozen=True)
class TopicStats:
    number: str
    title: str
    is_training: bool
    size: int
    judged: int
    missing: int
    twins: int
    unsourced: int  # no run contributes it any more (its run was deleted)


@dataclass(frozen=True)
class RunStats:
    tag: str
    contributed: int
    unique: int
    closest: str | None
    closest_overlap: int
    closest_jaccard: float | None


@dataclass(frozen=True)
class PoolStatistics:
    topics: list[TopicStats]
    runs: list[RunStats]
    overlap: list[tuple[str, str, int]]  # (run a, run b, documents both contributed) for every pair, a < b
    missing: list[tuple[str, str]]
    missing_total: int
    size: int
    judged: int
    twins: int
    to_judge: int  # entries an assessor still has to open: not judged, and not a twin when labels propagate
    hours_total: float
    hours_remaining: float


def pool_statistics(*, campaign: Campaign, missing_limit: int = 200) -> PoolStatistics:
    """The pool at a glance, in five queries whatever its size: per topic, the runs, who contributed what, and
    the missing ids (list and count).

    Contributions are read as (entry, run) pairs and counted here with one bit mask per run: a self-join of
    PoolSource in SQL grows with the square of the runs per document (13 s for 84 runs at depth 100), while an
    AND and a popcount per pair of runs take milliseconds. Judging effort counts entries × Campaign.seconds_per_judgment; twins are
    left out when the campaign propagates labels to duplicates, since the assessor never opens them.
    """
    propagate = campaign.propagate_to_duplicates
    # Judged: someone's judgment of it is complete by the scheme (a flag or a note alone leaves it to judge).
    judged = f"""SELECT 1 FROM {_JUDGMENT} j WHERE j.topic_id = e.topic_id AND j.document_id = e.document_id
                   AND {complete_sql("j.labels", "c.scheme", connection.vendor)}"""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT t.number, t.title, t.is_training, COUNT(e.id),
                  COUNT(e.id) FILTER (WHERE EXISTS ({judged})),
                  COUNT(e.id) FILTER (WHERE NOT d.has_text),
                  COUNT(e.id) FILTER (WHERE e.duplicate_of_id IS NOT NULL),
                  COUNT(e.id) FILTER (WHERE NOT EXISTS (SELECT 1 FROM {_POOLSOURCE} s WHERE s.entry_id = e.id)),
                  COUNT(e.id) FILTER (WHERE NOT EXISTS ({judged}) AND (e.duplicate_of_id IS NULL OR NOT %s))
                FROM {_TOPIC} t JOIN {Campaign._meta.db_table} c ON c.id = t.campaign_id
                LEFT JOIN {_POOLENTRY} e ON e.topic_id = t.id
                LEFT JOIN {_DOCUMENT} d ON d.id = e.document_id
                WHERE t.campaign_id = %s GROUP BY t.id, c.id ORDER BY t.position, t.number""",
            [propagate, campaign.pk],
        )
        topic_rows = cursor.fetchall()
        cursor.execute(f"SELECT id, tag FROM {_RUN} WHERE campaign_id = %s ORDER BY tag", [campaign.pk])
        tags = dict(cursor.fetchall())
        cursor.execute(f"SELECT entry_id, run_id FROM {_POOLSOURCE} WHERE run_id IN {_placeholders(tags)}", [*tags])
        members = _run_members(cursor.fetchall(), list(tags))
    missing_total, missing = missing_documents(campaign=campaign, limit=missing_limit)

    # Bit i of a run's mask is set when the run contributed entry i; "once" and "twice or more" masks give the
    # entries exactly one run contributed.
    once = more = 0
    for mask in members.values():
        more |= once & mask
        once |= mask
    only_one = once & ~more
    overlap = [(tags[a], tags[b], (members[a] & members[b]).bit_count()) for a, b in itertools.combinations(members, 2)]
    contributed = {tags[run_id]: mask.bit_count() for run_id, mask in members.items()}
    closest: dict[str, tuple[float, int, str]] = {}
    for a, b, shared in overlap:
        if shared:
            jaccard = shared / (contributed[a] + contributed[b] - shared)
            for run, other in ((a, b), (b, a)):
                if run not in closest or (jaccard, shared) > closest[run][:2]:
                    closest[run] = (jaccard, shared, other)
    runs = []
    for run_id, mask in members.items():
        tag = tags[run_id]
        unique = (mask & only_one).bit_count()
        if tag in closest:
            jaccard, shared, other = closest[tag]
            runs.append(RunStats(tag, contributed[tag], unique, other, shared, round(jaccard, 3)))
        else:
            runs.append(RunStats(tag, contributed[tag], unique, None, 0, None))
    topics = [TopicStats(*row[:8]) for row in topic_rows]
    to_judge = sum(row[8] for row in topic_rows)
    size = sum(t.size for t in topics)
    effort = size - (sum(t.twins for t in topics) if propagate else 0)
    seconds = campaign.seconds_per_judgment
    return PoolStatistics(
        topics=topics,
        runs=runs,
        overlap=overlap,
        missing=missing,
        missing_total=missing_total,
        size=size,
        judged=sum(t.judged for t in topics),
        twins=sum(t.twins for t in topics),
        to_judge=to_judge,
        hours_total=round(effort * seconds / 3600, 1),
        hours_remaining=round(to_judge * seconds / 3600, 1),
    )


def _run_members(pairs: Iterable[tuple[int, int]], run_ids: list[int]) -> dict[int, int]:
    """run id -> bit mask of the entries it contributed (entries numbered densely in order of appearance)."""
    number: dict[int, int] = {}
    indices: dict[int, list[int]] = {run_id: [] for run_id in run_ids}
    for entry_id, run_id in pairs:
        indices[run_id].append(number.setdefault(entry_id, len(number)))
    masks = {}
    for run_id, entries in indices.items():
        bits = bytearray((len(number) + 7) // 8)
        for i in entries:
            bits[i >> 3] |= 1 << (i & 7)
        masks[run_id] = int.from_bytes(bits, "little")
    return masks


def _placeholders(values) -> str:
    """`(%s, …)` for a list of ids, the spelling both PostgreSQL and SQLite accept (`(NULL)` matches nothing when
    the list is empty, where `()` would be a syntax error)."""
    return f"({', '.join(['%s'] * len(values)) or 'NULL'})"


def missing_per_topic(*, campaign: Campaign) -> dict[str, int]:
    """Topic number -> pooled documents without text, in topic order. Each entry looks its document up by primary
    key: as a join, right after a build has added tens of thousands of entries and stubs the statistics have not
    seen yet, the planner expects one stub and one entry and can choose a nested loop that scans the documents once
    per topic (5 s instead of 0.15 s at depth 100 in bench/pooling.py)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT t.number, (
                  SELECT COUNT(*) FROM {_POOLENTRY} e
                  WHERE e.topic_id = t.id AND NOT (SELECT d.has_text FROM {_DOCUMENT} d WHERE d.id = e.document_id))
                FROM {_TOPIC} t WHERE t.campaign_id = %s ORDER BY t.position, t.number""",
            [campaign.pk],
        )
        return {number: missing for number, missing in cursor.fetchall() if missing}


def missing_documents(*, campaign: Campaign, limit: int | None = None) -> tuple[int, list[tuple[str, str]]]:
    """(how many, the first `limit` as (topic number, doc id)) of pooled documents with no text in the collection."""
    per_topic = missing_per_topic(campaign=campaign)
    return sum(per_topic.values()), missing_listed(campaign=campaign, per_topic=per_topic, limit=limit)


def missing_listed(*, campaign: Campaign, per_topic: dict[str, int], limit: int | None) -> list[tuple[str, str]]:
    """The first `limit` missing documents by topic, then doc id; only the topics that hold them are read.
    `per_topic` is missing_per_topic's answer."""
    topics, covered = [], 0
    for number, missing in per_topic.items():
        if limit is not None and covered >= limit:
            break
        topics.append(number)
        covered += missing
    entries = PoolEntry.objects.filter(topic__campaign=campaign, topic__number__in=topics, document__has_text=False)
    rows = entries.order_by("topic__position", "topic__number", "document__doc_id").values_list(
        "topic__number", "document__doc_id"
    )
    return list(rows[:limit] if limit is not None else rows)


def export_lines(*, campaign: Campaign, missing_only: bool = False) -> Iterator[str]:
    """Yield one `qid doc` line per pool entry (topics in file order, documents by id), for judging elsewhere."""
    entries = PoolEntry.objects.filter(topic__campaign=campaign)
    if missing_only:
        entries = entries.filter(document__has_text=False)
    rows = entries.order_by("topic__position", "topic__number", "document__doc_id").values_list(
        "topic__number", "document__doc_id"
    )
    for number, doc in rows.iterator(chunk_size=20_000):
        yield f"{number} {doc}\n"
