"""Building each topic's judgment pool from the runs, grouping its duplicates, and reporting on it.

What to pool is decided by the pure modules (assessments.metrics.pooling and .duplicates); this module reads
the rows they need, writes PoolEntry and PoolSource in bulk (PostgreSQL COPY into a temporary table, then one
INSERT … SELECT per table), and keeps the pool's rules:

* A build only adds. An entry is never removed automatically, even when a later build with a smaller depth or
  fewer runs would not select it: it may already be assigned, judged or half-judged, and the judgments made on
  it are still valid evidence. Entries that a depth build no longer justifies are counted in its summary so the
  organiser can decide.
* Assessors see entries in `PoolEntry.order`: a shuffle seeded by `Topic.pool_seed` (drawn once from the system's
  random source), so the order hides run, rank and score and can be reproduced. The first build of a topic is
  exactly `presentation_order(pool, seed=pool_seed)`; documents added later are shuffled among themselves (seed
  `pool_seed + first new order`) and appended, so no assessor's queue is reordered under them.
* Every pooled document id gets a Document row; ids missing from the collection get a stub (has_text=False) so
  they can be judged once their text arrives, and they are listed, never dropped.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import secrets
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

from django.db import connection, transaction
from django.db.models import Q
from lxml import etree
from lxml import html as lxml_html

from accounts.models import User
from assessments.collector import collector_paused
from assessments.metrics import duplicates as duplicate_metrics
from assessments.metrics import pooling as pooling_metrics
from assessments.metrics.evaluation import order_run
from assessments.models import (
    Campaign,
    Document,
    Job,
    Judgment,
    Phase,
    PoolEntry,
    PoolSource,
    Run,
    Topic,
)
from assessments.services import jobs, rankings
from assessments.services.campaigns import lock_campaign
from assessments.services.jobs import Progress
from assessments.services.judging import copy_judgment

STRATEGIES = {
    "depth": "Depth-k: every run's top k",
    "rbp": "RBP priority up to a per-topic budget",
    "maxmean": "Bandit (MaxMean): add N per topic from the judgments so far",
    "mtf": "Bandit (Move-to-Front): add N per topic from the judgments so far",
}
ORDERS = {
    "both": "Rank column and score (union)",
    "rank": "Rank column (Touché)",
    "score": "Score (trec_eval)",
}
BUDGET_STRATEGIES = ("rbp", "maxmean", "mtf")
# The persistence metrics.pooling.rbp_pool defaults to (Moffat & Zobel 2008 report p = 0.5, 0.8 and 0.95).
RBP_PERSISTENCE = 0.8
PREVIEW_DEPTHS = (5, 10, 20)
MAX_DEPTH = 1000  # Touché runs hold at most 1,000 documents per topic
MISSING_LISTED = 1000  # missing ids kept in a job's result; the page and export_pool list them all

_POOL_LOCK = 0x706F6F6C  # "pool": first key of the advisory lock that serialises builds of one campaign

_POOLENTRY = PoolEntry._meta.db_table
_POOLSOURCE = PoolSource._meta.db_table
_DOCUMENT = Document._meta.db_table
_TOPIC = Topic._meta.db_table
_JUDGMENT = Judgment._meta.db_table
_RUN = Run._meta.db_table


class PoolingError(ValueError):
    """A pool that cannot be built as asked (the message says why); nothing was changed."""


@dataclass(frozen=True)
class PoolSpec:
    """What to pool: a strategy, its depth or budget, the order runs are read in, and which runs.

    `budget` means the pool size each topic is filled up to for "rbp", and the number of documents added per
    topic for the bandits (they top up a pool that already has judgments). `runs` empty means every run.
    """

    strategy: str = "depth"
    depth: int = 5
    budget: int | None = None
    order: str = "both"
    runs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise PoolingError(f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}")
        if self.order not in ORDERS:
            raise PoolingError(f"unknown order {self.order!r}; choose one of {', '.join(ORDERS)}")
        if not 1 <= self.depth <= MAX_DEPTH:
            raise PoolingError(f"depth must be between 1 and {MAX_DEPTH}, got {self.depth}")
        if self.strategy in BUDGET_STRATEGIES and (self.budget is None or self.budget < 1):
            raise PoolingError(f"the {self.strategy} strategy needs a positive budget (documents per topic)")

    @classmethod
    def from_params(cls, params: Mapping) -> PoolSpec:
        """Read a spec from a job's params or an API payload, with clear errors for bad values."""
        blank = (None, "")
        try:
            depth = int(params["depth"]) if params.get("depth") not in blank else 5
            budget = int(params["budget"]) if params.get("budget") not in blank else None
        except (TypeError, ValueError):
            raise PoolingError("depth and budget must be whole numbers") from None
        return cls(
            strategy=params.get("strategy") or "depth",
            depth=depth,
            budget=budget,
            order=params.get("order") or "both",
            runs=tuple(params.get("runs") or ()),
        )

    def as_params(self) -> dict:
        return {**asdict(self), "runs": list(self.runs)}

    @property
    def orders(self) -> tuple[str, ...]:
        """The orders a depth pool takes its top k under."""
        return ("rank", "score") if self.order == "both" else (self.order,)

    @property
    def single_order(self) -> str:
        """The order RBP and the bandits read runs in: they walk one ranking, so "both" means trec_eval's."""
        return "score" if self.order == "both" else self.order

    @property
    def label(self) -> str:
        if self.strategy == "depth":
            return f"depth {self.depth} ({' ∪ '.join(self.orders)})"
        if self.strategy == "rbp":
            return f"RBP p={RBP_PERSISTENCE} up to {self.budget} per topic ({self.single_order})"
        return f"{self.strategy} +{self.budget} per topic ({self.single_order})"

    @property
    def tag(self) -> str:
        """Stored in PoolEntry.strategy, so the stats can tell which build added an entry."""
        if self.strategy == "depth":
            return f"depth-{self.depth}-{self.order}"
        if self.strategy == "rbp":
            return f"rbp-{self.budget}-{self.single_order}"
        return f"{self.strategy}+{self.budget}-{self.single_order}"


@dataclass(frozen=True)
class TopicCount:
    number: str
    before: int
    added: int
    after: int
    missing: int = 0
    unjustified: int = 0  # entries the depth build would not select any more (kept, see the module docstring)


@dataclass
class PoolSummary:
    spec: str
    topics: list[TopicCount]
    added: int
    total: int
    missing_total: int
    missing: list[tuple[str, str]]  # (topic number, doc id), the first MISSING_LISTED
    stubs_created: int
    unjustified: int
    duplicate_groups: int = 0
    twins: int = 0
    labels_copied: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        text = f"{self.spec}: added {self.added} documents, {self.total} in the pool over {len(self.topics)} topics"
        if self.twins:
            text += f"; {self.twins} duplicates in {self.duplicate_groups} groups"
        return text

    def as_result(self) -> dict:
        return {**asdict(self), "summary": self.text}


# --------------------------------------------------------------------------------------------------------------
# Building


def build_pool(*, campaign: Campaign, spec: PoolSpec, progress: Progress | None = None) -> PoolSummary:
    """Add the documents `spec` selects to every topic's pool, record their sources, and group duplicates.

    Reads and computes first (reporting progress), then stores everything in one short transaction, then groups
    duplicates (reading document texts) in a second one. Builds of the same campaign are serialised by an
    advisory lock; a second one started meanwhile fails at once instead of waiting. Raises PoolingError.
    """
    progress = progress or _NoProgress()
    if campaign.phase == Phase.CLOSED:
        raise PoolingError("the campaign is closed; its pool can no longer change")
    with _build_lock(campaign):
        runs = _select_runs(campaign, spec.runs)
        topics = list(campaign.topics.order_by("position", "number"))
        _ensure_seeds(topics)
        with collector_paused():
            counts, stubs, warnings = _plan_and_store(campaign, spec=spec, runs=runs, topics=topics, progress=progress)
            grouped = group_duplicates(campaign=campaign, progress=_Offset(progress, len(topics), 2 * len(topics)))
    missing_per_topic = _missing_per_topic(campaign)
    counts = [TopicCount(**{**asdict(c), "missing": missing_per_topic.get(c.number, 0)}) for c in counts]
    missing_total = sum(missing_per_topic.values())
    missing = _missing_listed(campaign, missing_per_topic, limit=MISSING_LISTED) if missing_total else []
    if missing_total:
        warnings.append(
            f"{missing_total} pooled documents are not in the collection {campaign.collection.slug!r}; "
            "stubs hold their ids until their text is imported"
        )
    unjustified = sum(c.unjustified for c in counts)
    if unjustified:
        warnings.append(
            f"{unjustified} entries are not selected by {spec.label}; they were kept (a build never removes entries)"
        )
    return PoolSummary(
        spec=spec.label,
        topics=counts,
        added=sum(c.added for c in counts),
        total=sum(c.after for c in counts),
        missing_total=missing_total,
        missing=missing,
        stubs_created=stubs,
        unjustified=unjustified,
        duplicate_groups=grouped.groups,
        twins=grouped.twins,
        labels_copied=grouped.labels_copied,
        warnings=warnings,
    )


def _plan_and_store(
    campaign: Campaign, *, spec: PoolSpec, runs: dict[int, str], topics: list[Topic], progress: Progress
) -> tuple[list[TopicCount], int, list[str]]:
    """The plan and everything read for it live only in here: freed when this returns, still inside the caller's
    pause of the collector, they never reach a collection that would scan them all once more."""
    existing = _existing_pool(campaign)
    plan, warnings = _plan(spec, runs=runs, topics=topics, existing=existing, progress=progress, steps=2 * len(topics))
    with transaction.atomic():
        counts, stubs = _store(campaign, spec=spec, topics=topics, runs=runs, plan=plan, existing=existing)
    return counts, stubs, warnings


@jobs.handler("build_pool")
def _run_build_job(job: Job, progress: Progress) -> dict:
    return build_pool(campaign=job.campaign, spec=PoolSpec.from_params(job.params), progress=progress).as_result()


def start_build(*, campaign: Campaign, spec: PoolSpec, user: User | None) -> Job:
    """Queue a build as a Job (the page and the API call this; the command calls build_pool itself)."""
    if campaign.phase == Phase.CLOSED:
        raise PoolingError("the campaign is closed; its pool can no longer change")
    _select_runs(campaign, spec.runs)  # unknown tags fail now, not in the worker
    return jobs.create_job(kind="build_pool", campaign=campaign, params=spec.as_params(), created_by=user)


class _NoProgress:
    def advance(self, done: int, total: int | None = None) -> None:
        pass


class _Offset:
    """Reports a later stage's progress as a continuation of one bar."""

    def __init__(self, progress: Progress, offset: int, total: int) -> None:
        self.progress, self.offset, self.total = progress, offset, total

    def advance(self, done: int, total: int | None = None) -> None:
        self.progress.advance(self.offset + done, self.total)


@contextmanager
def _build_lock(campaign: Campaign) -> Iterator[None]:
    """A session-level advisory lock, held across the read, store and grouping steps of one build (a transaction
    cannot be: progress is reported between them). SQLite (the demo) serialises writers itself: no lock there."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_POOL_LOCK, campaign.pk])
        if not cursor.fetchone()[0]:
            raise PoolingError("another pool build for this campaign is running; try again when it has finished")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_POOL_LOCK, campaign.pk])


def _select_runs(campaign: Campaign, tags: Iterable[str]) -> dict[int, str]:
    """Run id -> tag of the runs to pool (all of the campaign's when `tags` is empty)."""
    runs = dict(campaign.runs.values_list("id", "tag"))
    wanted = list(dict.fromkeys(tags))
    if wanted:
        unknown = sorted(set(wanted) - set(runs.values()))
        if unknown:
            raise PoolingError(f"unknown run tags for campaign {campaign.slug!r}: {', '.join(unknown)}")
        runs = {run_id: tag for run_id, tag in runs.items() if tag in wanted}
    if not runs:
        raise PoolingError(f"campaign {campaign.slug!r} has no runs to pool; import runs first")
    return runs


@dataclass
class _TopicPool:
    docs: set[str] = field(default_factory=set)
    next_order: int = 0


def _existing_pool(campaign: Campaign) -> dict[int, _TopicPool]:
    pools: dict[int, _TopicPool] = defaultdict(_TopicPool)
    rows = PoolEntry.objects.filter(topic__campaign=campaign).values_list("topic_id", "document__doc_id", "order")
    for topic_id, doc_id, order in rows.iterator(chunk_size=20_000):
        pool = pools[topic_id]
        pool.docs.add(doc_id)
        pool.next_order = max(pool.next_order, order + 1)
    return pools


@dataclass
class _Planned:
    """topic id -> the documents to pool, each with its sources (metrics.pooling.Pool), and for a depth build
    the documents it selects per topic (to report entries it no longer justifies)."""

    selected: dict[int, pooling_metrics.Pool]
    justified: dict[int, set[str]] | None


def _plan(
    spec: PoolSpec,
    *,
    runs: dict[int, str],
    topics: list[Topic],
    existing: dict[int, _TopicPool],
    progress: Progress,
    steps: int,
) -> tuple[_Planned, list[str]]:
    """Choose every topic's documents (no writes); for the bandits, warn about topics without feedback yet."""
    warnings: list[str] = []
    selected: dict[int, pooling_metrics.Pool] = {}
    if spec.strategy == "depth":
        by_topic = _heads(runs, topics, depth=spec.depth, orders=spec.orders)
        for done, topic in enumerate(topics, 1):
            selected[topic.pk] = pooling_metrics.pool_of_heads(by_topic.pop(topic.pk, {}), depth=spec.depth)
            progress.advance(done, steps)
        return _Planned(selected, {t: set(docs) for t, docs in selected.items()}), warnings

    judged = _judged_labels(topics) if spec.strategy != "rbp" else {}
    order = spec.single_order
    for done, topic in enumerate(topics, 1):
        topic_runs = _all_entries(topic, runs)
        pooled = existing[topic.pk].docs if topic.pk in existing else set()
        if spec.strategy == "rbp":
            # Ask for enough to skip what is pooled already: the first `room` unpooled documents by priority.
            room = max(spec.budget - len(pooled), 0)
            ranked = (
                pooling_metrics.rbp_pool(topic_runs, budget=room + len(pooled), p=RBP_PERSISTENCE, order=order)
                if room
                else []
            )
        else:
            topic_judged = judged.get(topic.pk, {})
            if topic_runs and not topic_judged:
                warnings.append(f"topic {topic.number} has no judgments yet: the bandit chose without feedback")
            # Pooled but unjudged documents are pending pulls: asking for that many more and skipping them gives
            # exactly the next `budget` documents the bandit would pull after them.
            room = spec.budget
            pending = len(pooled - topic_judged.keys())
            ranked = (
                pooling_metrics.next_documents(
                    topic_runs, topic_judged, n=room + pending, seed=topic.pool_seed, strategy=spec.strategy, order=order
                )
                if topic_runs
                else []
            )
        chosen = [doc for doc in ranked if doc not in pooled][:room]
        selected[topic.pk] = _sources_of(chosen, topic_runs, order=order)
        progress.advance(done, steps)
    return _Planned(selected, None), warnings


def _heads(runs: dict[int, str], topics: list[Topic], *, depth: int, orders: tuple[str, ...]) -> dict[int, dict[str, dict]]:
    """topic id -> run tag -> order -> the run's first `depth` doc ids under it.

    The stored rankings hold both orders (computed at import with metrics.evaluation.order_run), so only the heads
    of the lists are read, not every line of every run, and nothing is sorted again.
    """
    by_topic: dict[int, dict[str, dict]] = defaultdict(dict)
    for run_id, topic_id, heads in rankings.heads(list(runs), [t.pk for t in topics], depth=depth, orders=orders):
        by_topic[topic_id][runs[run_id]] = heads
    return by_topic


def _placeholders(values) -> str:
    """`(%s, …)` for a list of ids, the spelling both PostgreSQL and SQLite accept (`(NULL)` matches nothing when
    the list is empty, where `()` would be a syntax error)."""
    return f"({', '.join(['%s'] * len(values)) or 'NULL'})"


def _all_entries(topic: Topic, runs: dict[int, str]) -> dict[str, list]:
    """Run tag -> every (doc, rank, score) of one topic: RBP and the bandits may reach any depth."""
    return {runs[run_id]: [line[:3] for line in lines] for run_id, _, lines in rankings.all_lines(list(runs), [topic.pk])}


def _sources_of(docs: list[str], topic_runs: Mapping[str, list], *, order: str) -> pooling_metrics.Pool:
    """Each chosen document's sources: every run that retrieved it, at its position in `order`."""
    wanted = set(docs)
    sources: dict[str, list[pooling_metrics.Contribution]] = {doc: [] for doc in docs}
    for tag in sorted(topic_runs):
        for position, doc in enumerate(order_run(topic_runs[tag], by=order), 1):
            if doc in wanted:
                sources[doc].append(pooling_metrics.Contribution(tag, order, position))
    return sources


def _judged_labels(topics: list[Topic]) -> dict[int, dict[str, int]]:
    """topic id -> doc id -> the highest relevance any assessor gave: the bandit's reward is "someone found it
    relevant", so a disagreement does not hide a run's relevant documents."""
    labels: dict[int, dict[str, int]] = defaultdict(dict)
    rows = Judgment.objects.filter(topic__in=topics).values_list("topic_id", "document__doc_id", "relevance")
    for topic_id, doc, relevance in rows.iterator(chunk_size=20_000):
        topic_labels = labels[topic_id]
        topic_labels[doc] = max(relevance, topic_labels.get(doc, relevance))
    return labels


def _store(
    campaign: Campaign,
    *,
    spec: PoolSpec,
    topics: list[Topic],
    runs: dict[int, str],
    plan: _Planned,
    existing: dict[int, _TopicPool],
) -> tuple[list[TopicCount], int]:
    """Write the plan: stubs for unknown documents, new entries in presentation order, and every source.

    Call inside a transaction, with the topics' seeds set. Takes the campaign's lock, as imports do: no topic
    changes under the entries being written (the database does not check their keys, see PoolEntry). Sources of
    documents that were pooled already are added too (a late run that retrieved them is recorded), and a source
    recorded before is left as it is.
    """
    new_rows = []
    counts = []
    for topic in topics:
        pool = existing.get(topic.pk, _TopicPool())
        selected = plan.selected.get(topic.pk, {})
        new_docs = [doc for doc in selected if doc not in pool.docs]
        start = pool.next_order
        # The first batch is the plain seeded shuffle; later batches vary the seed so they are not all shuffled
        # by the same permutation.
        for offset, doc in enumerate(pooling_metrics.presentation_order(new_docs, seed=topic.pool_seed + start)):
            new_rows.append((topic.pk, doc, start + offset))
        unjustified = len(pool.docs - plan.justified.get(topic.pk, set())) if plan.justified is not None else 0
        counts.append(TopicCount(topic.number, len(pool.docs), len(new_docs), len(pool.docs) + len(new_docs), 0, unjustified))

    source_rows = _source_rows(plan.selected, {tag: run_id for run_id, tag in runs.items()})
    lock_campaign(campaign)
    if connection.vendor == "postgresql":
        stubs = _write_copied(campaign.collection_id, spec.tag, new_rows, source_rows)
    else:
        stubs = _write_orm(campaign.collection_id, spec.tag, new_rows, source_rows)
    return counts, stubs


def _source_rows(selected: dict[int, pooling_metrics.Pool], run_ids: Mapping[str, int]) -> Iterator[tuple]:
    """(topic id, doc, run id, rank position, score position): one row per document and run, from the contributions
    (one per order) that metrics.pooling lists by run."""
    for topic_id, docs in selected.items():
        for doc, contributions in docs.items():
            positions: dict[str, list] = {}
            for run, order, position in contributions:
                positions.setdefault(run, [None, None])[order == "score"] = position
            for run, (by_rank, by_score) in positions.items():
                yield topic_id, doc, run_ids[run], by_rank, by_score


def _write_copied(collection_id: int, tag: str, new_rows: list[tuple], source_rows: Iterable[tuple]) -> int:
    """Store stubs, entries and sources on PostgreSQL. Returns the number of stubs created.

    New entries are inserted from a COPY-filled temporary table, and their ids come back with the insert. Their
    sources cannot exist yet, so they are copied straight into the table by entry id (a depth-100 pool of 84 runs
    has 420,000 of them); only sources of entries pooled before go through a temporary table and an upsert.
    """
    with connection.cursor() as cursor:
        _copy_into_temp(cursor, "pool_new", "topic_id bigint, doc_id text, ord integer", new_rows)
        # Stubs for ids the collection does not have, so the ids can be pooled, listed and judged later. Conflicts
        # are left to the unique index rather than a NOT EXISTS: an anti-join against the table being filled can be
        # planned as a scan per row (quadratic) while its statistics still say it is empty.
        cursor.execute(
            f"""INSERT INTO {_DOCUMENT} (collection_id, doc_id, title, body, is_html, url, metadata, has_text, text_hash)
                SELECT %s, doc_id, '', '', false, '', '{{}}', false, '' FROM (SELECT DISTINCT doc_id FROM pool_new) p
                ON CONFLICT (collection_id, doc_id) DO NOTHING""",
            [collection_id],
        )
        stubs = cursor.rowcount
        cursor.execute(
            f"""INSERT INTO {_POOLENTRY} (topic_id, document_id, "order", duplicate_of_id, strategy, added_at)
                SELECT n.topic_id, d.id, n.ord, NULL, %s, now()
                FROM pool_new n JOIN {_DOCUMENT} d ON d.collection_id = %s AND d.doc_id = n.doc_id
                RETURNING topic_id, "order", id""",
            [tag, collection_id],
        )
        # A new entry is known by its topic and place in the queue, both unique among the new rows.
        doc_at = {(topic_id, order): doc for topic_id, doc, order in new_rows}
        added = {(topic_id, doc_at[topic_id, order]): entry_id for topic_id, order, entry_id in cursor.fetchall()}
        earlier = []
        cursor.copy_expert(
            f"COPY {_POOLSOURCE} (entry_id, run_id, rank_position, score_position) FROM STDIN",
            _SourceCopy(source_rows, added, earlier),
            1 << 20,
        )
        if earlier:
            _copy_into_temp(cursor, "pool_plan", "topic_id bigint, doc_id text, run_id bigint, by_rank integer, by_score integer", earlier)
            # A position recorded before is kept; one the earlier builds did not read (the other order) is filled in.
            cursor.execute(
                f"""INSERT INTO {_POOLSOURCE} AS s (entry_id, run_id, rank_position, score_position)
                    SELECT e.id, p.run_id, p.by_rank, p.by_score
                    FROM pool_plan p
                    JOIN {_DOCUMENT} d ON d.collection_id = %s AND d.doc_id = p.doc_id
                    JOIN {_POOLENTRY} e ON e.topic_id = p.topic_id AND e.document_id = d.id
                    ON CONFLICT (entry_id, run_id) DO UPDATE
                       SET rank_position = COALESCE(s.rank_position, EXCLUDED.rank_position),
                           score_position = COALESCE(s.score_position, EXCLUDED.score_position)
                     WHERE (s.rank_position IS NULL AND EXCLUDED.rank_position IS NOT NULL)
                        OR (s.score_position IS NULL AND EXCLUDED.score_position IS NOT NULL)""",
                [collection_id],
            )
            cursor.execute("DROP TABLE pool_plan")
        cursor.execute("DROP TABLE pool_new")
    return stubs


class _SourceCopy:
    """The sources of new entries as COPY text (entry id, run id, positions), made as PostgreSQL reads them; the
    sources of entries pooled before are set aside in `earlier`."""

    def __init__(self, rows: Iterable[tuple], added: Mapping[tuple[int, str], int], earlier: list[tuple]) -> None:
        self.rows, self.added, self.earlier = iter(rows), added, earlier

    def read(self, size: int = -1) -> bytes:
        lines: list[str] = []
        while not lines:  # an empty answer would end the COPY
            chunk = list(itertools.islice(self.rows, 20_000))
            if not chunk:
                return b""
            for row in chunk:
                topic_id, doc, run_id, by_rank, by_score = row
                entry_id = self.added.get((topic_id, doc))
                if entry_id is None:
                    self.earlier.append(row)
                else:
                    lines.append(f"{entry_id}\t{run_id}\t{_NULL if by_rank is None else by_rank}\t{_NULL if by_score is None else by_score}\n")
        return "".join(lines).encode()


_NULL = "\\N"  # COPY's null


def _write_orm(collection_id: int, tag: str, new_rows: list[tuple], source_rows: Iterable[tuple]) -> int:
    """The same writes through the ORM, for SQLite (the demo), where there is no COPY. Returns the stubs created."""
    plan = list(source_rows)
    stored = Document.objects.filter(collection_id=collection_id)
    before = stored.count()
    Document.objects.bulk_create(
        [Document(collection_id=collection_id, doc_id=doc, has_text=False) for doc in dict.fromkeys(row[1] for row in plan)],
        batch_size=_BATCH,
        ignore_conflicts=True,
    )
    stubs = stored.count() - before
    documents = _document_ids(collection_id, {row[1] for row in plan})
    PoolEntry.objects.bulk_create(
        [PoolEntry(topic_id=topic_id, document_id=documents[doc], order=order, strategy=tag) for topic_id, doc, order in new_rows],
        batch_size=_BATCH,
    )
    rows = PoolEntry.objects.filter(topic_id__in={row[0] for row in plan}).values_list("topic_id", "document_id", "id")
    entries = {(topic_id, document_id): pk for topic_id, document_id, pk in rows}
    known = {(source.entry_id, source.run_id): source for source in PoolSource.objects.filter(entry__topic_id__in={row[0] for row in plan})}
    added, filled = [], []
    for topic_id, doc, run_id, by_rank, by_score in plan:
        entry_id = entries[(topic_id, documents[doc])]
        source = known.get((entry_id, run_id))
        if source is None:
            added.append(PoolSource(entry_id=entry_id, run_id=run_id, rank_position=by_rank, score_position=by_score))
        elif (source.rank_position is None and by_rank) or (source.score_position is None and by_score):
            source.rank_position = source.rank_position or by_rank
            source.score_position = source.score_position or by_score
            filled.append(source)
    PoolSource.objects.bulk_create(added, batch_size=_BATCH)
    PoolSource.objects.bulk_update(filled, ["rank_position", "score_position"], batch_size=_BATCH)
    return stubs


_BATCH = 500  # rows per INSERT in the ORM paths: below SQLite's limit on bound parameters


def _document_ids(collection_id: int, doc_ids: set[str]) -> dict[str, int]:
    """doc id -> Document id, read in batches (SQLite bounds the parameters of one query)."""
    wanted = sorted(doc_ids)
    found: dict[str, int] = {}
    for start in range(0, len(wanted), _BATCH):
        rows = Document.objects.filter(collection_id=collection_id, doc_id__in=wanted[start : start + _BATCH])
        found.update(rows.values_list("doc_id", "id"))
    return found


def _ensure_seeds(topics: list[Topic]) -> None:
    """Give each topic without one a presentation seed from the system's random source, once (before planning:
    the bandits break ties between runs with it)."""
    for topic in topics:
        if topic.pool_seed == 0:
            seed = secrets.randbits(62) or 1
            # The filter keeps a seed another process set meanwhile; the topic then reads that one.
            if Topic.objects.filter(pk=topic.pk, pool_seed=0).update(pool_seed=seed):
                topic.pool_seed = seed
            else:
                topic.refresh_from_db(fields=["pool_seed"])


def _copy_into_temp(cursor, table: str, columns: str, rows: Iterable[tuple]) -> None:
    """Create a temporary table and fill it with COPY, in chunks so a million rows never sit in one buffer."""
    cursor.execute(f"DROP TABLE IF EXISTS {table}")
    cursor.execute(f"CREATE TEMPORARY TABLE {table} ({columns}) ON COMMIT DROP")
    rows = iter(rows)
    while chunk := list(itertools.islice(rows, 200_000)):
        buffer = io.StringIO()
        csv.writer(buffer).writerows(chunk)
        buffer.seek(0)
        cursor.copy_expert(f"COPY {table} FROM STDIN WITH (FORMAT csv)", buffer)


def _missing_per_topic(campaign: Campaign) -> dict[str, int]:
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
    per_topic = _missing_per_topic(campaign)
    return sum(per_topic.values()), _missing_listed(campaign, per_topic, limit=limit)


def _missing_listed(campaign: Campaign, per_topic: dict[str, int], *, limit: int | None) -> list[tuple[str, str]]:
    """The first `limit` missing documents by topic, then doc id; only the topics that hold them are read."""
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


# --------------------------------------------------------------------------------------------------------------
# Duplicates


@dataclass(frozen=True)
class DuplicateSummary:
    groups: int
    twins: int
    labels_copied: int


@collector_paused()
def group_duplicates(*, campaign: Campaign, progress: Progress | None = None) -> DuplicateSummary:
    """Point every twin entry at its group's canonical entry (`duplicate_of`), topic by topic.

    Groups are identical texts (the same `Document.text_hash`, or the same normalised text) and near-duplicates
    (S3 on word 8-grams ≥ 0.82, as CopyCat), computed by metrics.duplicates over the topic's documents with text.
    The canonical entry is one that already was (so rebuilding moves nothing), else one that has a judgment, else
    the one assessors meet first. A twin that joins a group whose canonical is judged already gets those labels
    (source "duplicate") when the campaign propagates to duplicates, so it is not left without a judgment.
    """
    progress = progress or _NoProgress()
    topic_ids = list(campaign.topics.order_by("position", "number").values_list("id", flat=True))
    entries: dict[int, list[_GroupEntry]] = defaultdict(list)
    # Entries without text are never grouped: only those already pointing at a canonical could change (if their
    # document lost its group), so a pool of stubs waiting for --only-pooled texts costs nothing here.
    rows = PoolEntry.objects.filter(
        Q(document__has_text=True) | Q(duplicate_of__isnull=False), topic__campaign=campaign
    ).values_list(
        "id", "topic_id", "document_id", "document__doc_id", "document__text_hash", "document__has_text", "order",
        "duplicate_of_id",
    )
    for row in rows.iterator(chunk_size=20_000):
        entries[row[1]].append(_GroupEntry(*row))
    judged = set(Judgment.objects.filter(topic_id__in=topic_ids).values_list("topic_id", "document_id").distinct())

    wanted: dict[int, int | None] = {}
    for done, topic_id in enumerate(topic_ids, 1):
        topic_entries = entries.get(topic_id, [])
        canonical_now = {e.duplicate_of_id for e in topic_entries}
        for group in _groups_of(topic_entries):
            canonical = min(
                group, key=lambda e: (e.id not in canonical_now, (topic_id, e.document_id) not in judged, e.order)
            )
            for entry in group:
                wanted[entry.id] = None if entry is canonical else canonical.id
        progress.advance(done, len(topic_ids))

    changes = [
        (e.id, wanted.get(e.id)) for topic_entries in entries.values() for e in topic_entries if wanted.get(e.id) != e.duplicate_of_id
    ]
    with transaction.atomic():
        if changes:
            _set_canonicals(changes)
        copied = _copy_labels_to_new_twins(campaign, [entry_id for entry_id, canonical in changes if canonical])
    twins = sum(1 for canonical in wanted.values() if canonical)
    return DuplicateSummary(groups=len(wanted) - twins, twins=twins, labels_copied=copied)


def _set_canonicals(changes: list[tuple[int, int | None]]) -> None:
    """Set `duplicate_of` of each (entry id, canonical id): one UPDATE from arrays on PostgreSQL, one per
    canonical elsewhere (SQLite has no arrays; the demo's groups are few)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"""UPDATE {_POOLENTRY} e SET duplicate_of_id = v.canonical
                    FROM unnest(%s::bigint[], %s::bigint[]) AS v(id, canonical) WHERE e.id = v.id""",
                [[c[0] for c in changes], [c[1] for c in changes]],
            )
        return
    by_canonical: dict[int | None, list[int]] = defaultdict(list)
    for entry_id, canonical in changes:
        by_canonical[canonical].append(entry_id)
    for canonical, entry_ids in by_canonical.items():
        for start in range(0, len(entry_ids), _BATCH):
            PoolEntry.objects.filter(pk__in=entry_ids[start : start + _BATCH]).update(duplicate_of_id=canonical)


@dataclass(frozen=True)
class _GroupEntry:
    id: int
    topic_id: int
    document_id: int
    doc_id: str
    text_hash: str
    has_text: bool
    order: int
    duplicate_of_id: int | None


def _groups_of(entries: list[_GroupEntry]) -> list[list[_GroupEntry]]:
    """Connected groups of one topic's entries: same text hash, or grouped by metrics.duplicates.

    Of several entries with one text hash only the first is read and compared, so exact copies cost nothing.
    """
    with_text = [e for e in entries if e.has_text]
    by_doc = {e.doc_id: e for e in with_text}
    parent = {e.doc_id: e.doc_id for e in with_text}
    representatives: dict[str, str] = {}
    for entry in sorted(with_text, key=lambda e: e.doc_id):
        if entry.text_hash:
            first = representatives.setdefault(entry.text_hash, entry.doc_id)
            _union(parent, first, entry.doc_id)
    compared = [e for e in with_text if not e.text_hash or representatives[e.text_hash] == e.doc_id]
    texts = dict(_texts(compared))
    for group in duplicate_metrics.near_duplicate_groups(texts):
        for doc in group[1:]:
            _union(parent, group[0], doc)
    groups: dict[str, list[_GroupEntry]] = defaultdict(list)
    for doc, entry in by_doc.items():
        groups[_find(parent, doc)].append(entry)
    return [group for group in groups.values() if len(group) > 1]


def _texts(entries: list[_GroupEntry]) -> Iterator[tuple[str, str]]:
    """(doc id, plain text) of the entries' documents, read in chunks; HTML is reduced to its text first, so
    markup shared by every page of a site does not make them near-duplicates."""
    documents = Document.objects.filter(pk__in=[e.document_id for e in entries]).values_list("doc_id", "title", "body", "is_html")
    for doc, title, body, is_html in documents.iterator(chunk_size=2_000):
        yield doc, f"{title}\n{_html_text(body) if is_html else body}"


# Elements whose content is not text a reader sees (assessments cannot use assessments.rendering: that app
# depends on this one).
_NOT_TEXT = ("script", "style", "noscript", "template", "head")


def _html_text(body: str) -> str:
    """The text a reader sees in an HTML body, with a space between elements so words never run together."""
    try:
        tree = lxml_html.document_fromstring(body)
    except (etree.ParserError, ValueError):  # empty, or only a comment: no text
        return ""
    for element in list(tree.iter(*_NOT_TEXT)):
        element.drop_tree()
    return " ".join(tree.itertext())


def _find(parent: dict[str, str], x: str) -> str:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _union(parent: dict[str, str], a: str, b: str) -> None:
    ra, rb = _find(parent, a), _find(parent, b)
    if ra != rb:
        parent[max(ra, rb)] = min(ra, rb)


def _copy_labels_to_new_twins(campaign: Campaign, twin_ids: list[int]) -> int:
    """Give twins that just joined a group the judgments their canonical has, where the twin has none yet from
    that assessor (a label the assessor gave the twin themselves is theirs and is kept)."""
    if not campaign.propagate_to_duplicates or not twin_ids:
        return 0
    twins = PoolEntry.objects.filter(pk__in=twin_ids).select_related("topic__campaign", "document", "duplicate_of")
    by_canonical: dict[tuple[int, int], list[PoolEntry]] = defaultdict(list)
    for twin in twins:
        by_canonical[(twin.topic_id, twin.duplicate_of.document_id)].append(twin)
    canonical_judgments = Judgment.objects.filter(
        topic_id__in={t for t, _ in by_canonical}, document_id__in={d for _, d in by_canonical}
    ).select_related("topic__campaign", "assessor")
    already = set(
        Judgment.objects.filter(topic_id__in={t.topic_id for t in twins}, document_id__in={t.document_id for t in twins})
        .values_list("topic_id", "document_id", "assessor_id")
    )
    copied = 0
    for judgment in canonical_judgments:
        for twin in by_canonical.get((judgment.topic_id, judgment.document_id), []):
            if (twin.topic_id, twin.document_id, judgment.assessor_id) not in already:
                copy_judgment(judgment, twin)
                copied += 1
    return copied


# --------------------------------------------------------------------------------------------------------------
# Preview: what a build would cost before it is started


@dataclass(frozen=True)
class CostOption:
    label: str
    added: int
    total: int
    hours: float
    chosen: bool = False


@dataclass(frozen=True)
class PoolPreview:
    spec: str
    topics: list[TopicCount]
    before: int
    added: int
    total: int
    hours: float
    options: list[CostOption]


def preview_pool(*, campaign: Campaign, spec: PoolSpec) -> PoolPreview:
    """How many documents `spec` would add per topic, and what depth 5/10/20 and RBP would cost, in judgments
    and hours (documents × Campaign.seconds_per_judgment). Writes nothing.

    Depth pools are computed exactly from the top rows. RBP and the bandits fill up to their budget while a
    topic's runs have unpooled documents, so their cost is the budget capped by those (see `_fillable`; no line
    is read when the runs are long enough). Duplicates are not subtracted: finding them needs the texts.
    """
    runs = _select_runs(campaign, spec.runs)
    topics = list(campaign.topics.order_by("position", "number"))
    existing = _existing_pool(campaign)
    current = {t.pk: len(existing[t.pk].docs) if t.pk in existing else 0 for t in topics}
    depths = sorted({*PREVIEW_DEPTHS, *([spec.depth] if spec.strategy == "depth" else [])})
    by_topic = _heads(runs, topics, depth=depths[-1], orders=spec.orders)
    depth_added: dict[int, dict[int, int]] = {}
    depth_sizes: dict[int, list[int]] = {}
    for depth in depths:
        depth_added[depth], depth_sizes[depth] = {}, []
        for topic in topics:
            pool = pooling_metrics.pool_of_heads(by_topic.get(topic.pk, {}), depth=depth)
            pooled = existing[topic.pk].docs if topic.pk in existing else set()
            depth_added[depth][topic.pk] = sum(1 for doc in pool if doc not in pooled)
            depth_sizes[depth].append(len(pool))
    # Without a budget, RBP is priced at the mean size of the depth pool being previewed: the same judging cost,
    # spent by priority instead of by depth.
    base_depth = spec.depth if spec.strategy == "depth" else PREVIEW_DEPTHS[0]
    rbp_budget = spec.budget or max(1, math.ceil(sum(depth_sizes[base_depth]) / max(len(topics), 1)))
    rbp_added = _fillable(campaign, runs, topics, {t.pk: max(rbp_budget - current[t.pk], 0) for t in topics}, current)

    if spec.strategy == "depth":
        chosen = depth_added[spec.depth]
    elif spec.strategy == "rbp":
        chosen = rbp_added
    else:
        # At most: a document judged without being pooled (imported qrels) is not pulled again.
        chosen = _fillable(campaign, runs, topics, {t.pk: spec.budget for t in topics}, current)
    seconds = campaign.seconds_per_judgment
    base = sum(current.values())

    def option(label: str, added: Mapping[int, int], is_chosen: bool) -> CostOption:
        total_added = sum(added.values())
        return CostOption(label, total_added, base + total_added, round(total_added * seconds / 3600, 1), is_chosen)

    options = [
        option(f"depth {d} ({' ∪ '.join(spec.orders)})", depth_added[d], spec.strategy == "depth" and d == spec.depth)
        for d in depths
    ]
    options.append(
        option(f"RBP p={RBP_PERSISTENCE} up to {rbp_budget} per topic ({spec.single_order})", rbp_added, spec.strategy == "rbp")
    )
    counts = [TopicCount(t.number, current[t.pk], chosen[t.pk], current[t.pk] + chosen[t.pk]) for t in topics]
    added = sum(chosen.values())
    return PoolPreview(spec.label, counts, base, added, base + added, round(added * seconds / 3600, 1), options)


def _fillable(campaign: Campaign, runs: dict[int, str], topics: list[Topic], room: Mapping[int, int], current: Mapping[int, int]) -> dict[int, int]:
    """topic id -> min(room, documents the runs retrieved that are not pooled yet): what a budget strategy adds.

    A run with L lines for a topic has at least L - (pooled documents) unpooled ones, so when the topic's longest
    run is long enough the answer is `room` without reading any line: the stored rankings know their lengths.
    Only topics whose runs are all too short are counted exactly.
    """
    wanted = [t.pk for t in topics if room[t.pk] > 0]
    if not wanted:
        return {t.pk: 0 for t in topics}
    longest = rankings.longest(list(runs), wanted)
    short = [t for t in wanted if longest.get(t, 0) - current[t] < room[t]]
    unpooled: dict[int, int] = {}
    if short:
        retrieved: dict[int, set[str]] = defaultdict(set)
        for _, topic_id, lines in rankings.all_lines(list(runs), short):
            retrieved[topic_id].update(line[0] for line in lines)
        pooled = PoolEntry.objects.filter(topic_id__in=short).values_list("topic_id", "document__doc_id")
        for topic_id, doc in pooled.iterator(chunk_size=20_000):
            retrieved[topic_id].discard(doc)
        unpooled = {topic_id: len(docs) for topic_id, docs in retrieved.items()}
    return {t.pk: min(room[t.pk], unpooled.get(t.pk, 0)) if t.pk in short else room[t.pk] for t in topics}


# --------------------------------------------------------------------------------------------------------------
# Statistics


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
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT t.number, t.title, t.is_training, COUNT(e.id),
                  COUNT(e.id) FILTER (WHERE EXISTS (
                      SELECT 1 FROM {_JUDGMENT} j WHERE j.topic_id = e.topic_id AND j.document_id = e.document_id)),
                  COUNT(e.id) FILTER (WHERE NOT d.has_text),
                  COUNT(e.id) FILTER (WHERE e.duplicate_of_id IS NOT NULL),
                  COUNT(e.id) FILTER (WHERE NOT EXISTS (SELECT 1 FROM {_POOLSOURCE} s WHERE s.entry_id = e.id)),
                  COUNT(e.id) FILTER (WHERE NOT EXISTS (
                      SELECT 1 FROM {_JUDGMENT} j WHERE j.topic_id = e.topic_id AND j.document_id = e.document_id)
                      AND (e.duplicate_of_id IS NULL OR NOT %s))
                FROM {_TOPIC} t LEFT JOIN {_POOLENTRY} e ON e.topic_id = t.id
                LEFT JOIN {_DOCUMENT} d ON d.id = e.document_id
                WHERE t.campaign_id = %s GROUP BY t.id ORDER BY t.position, t.number""",
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
        jaccard, shared, other = closest.get(tag, (None, 0, None))
        unique = (mask & only_one).bit_count()
        runs.append(RunStats(tag, contributed[tag], unique, other, shared, None if jaccard is None else round(jaccard, 3)))
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
