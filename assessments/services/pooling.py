"""Building each topic's judgment pool from the runs.

What to pool is decided by the pure module assessments.metrics.pooling; this module reads the rows it needs,
has services.pool_store write PoolEntry and PoolSource (COPY on PostgreSQL), and keeps the pool's rules:

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
* On an image campaign (Touché Task 3) a depth-k pool takes each run's top k of each stance list, by the stance's
  rank, whatever the order asked for: a run ranks up to ten images per topic and stance, so depth 10 pools every
  image submitted. RBP and the bandits read a run's two lists as stored, interleaved by rank.

After storing, a build groups the pool's duplicates (services.duplicates). What a build would cost is previewed
by selectors.pool_preview, which reads runs and pools through the same functions as the build.
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from django.db import transaction

from accounts.models import User
from assessments.collector import collector_paused
from assessments.labels import LabelScheme
from assessments.metrics import pooling as pooling_metrics
from assessments.metrics.evaluation import Order, order_run
from assessments.models import (
    Campaign,
    Document,
    Job,
    Judgment,
    Phase,
    PoolEntry,
    PoolSource,
    Ranking,
    Topic,
)
from assessments.selectors.pools import missing_listed, missing_per_topic
from assessments.services import audit, bulk, job_queue, jobs, pool_store, rankings
from assessments.services.duplicates import collection_has_text, group_duplicates
from assessments.services.image_campaigns import stance_lists
from assessments.services.jobs import NoProgress, Progress
from assessments.services.pairs import resolve_pairs

Strategy = Literal["depth", "rbp", "maxmean", "mtf"]
PoolOrder = Order | Literal["both"]
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
MAX_DEPTH = 1000  # Touché runs hold at most 1,000 documents per topic
MISSING_LISTED = 1000  # missing ids kept in a job's result; the page and export_pool list them all

_POOL_LOCK = 0x706F6F6C  # "pool": first key of the advisory lock that serialises builds of one campaign

_POOLENTRY = PoolEntry._meta.db_table
_POOLSOURCE = PoolSource._meta.db_table
_DOCUMENT = Document._meta.db_table


class PoolingError(ValueError):
    """A pool that cannot be built as asked (the message says why); nothing was changed."""


@dataclass(frozen=True)
class PoolSpec:
    """What to pool: a strategy, its depth or budget, the order runs are read in, and which runs.

    `budget` means the pool size each topic is filled up to for "rbp", and the number of documents added per
    topic for the bandits (they top up a pool that already has judgments). `runs` empty means every run.
    """

    strategy: Strategy = "depth"  # checked against STRATEGIES
    depth: int = 5
    budget: int | None = None
    order: PoolOrder = "both"  # checked against ORDERS
    runs: tuple[str, ...] = ()
    # Set by for_campaign from the campaign's kind, never asked of the organiser: a depth pool of image runs.
    per_stance: bool = False

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
        """What the organiser asked for (the campaign decides `per_stance` again when the job runs)."""
        params = {**asdict(self), "runs": list(self.runs)}
        del params["per_stance"]
        return params

    def for_campaign(self, campaign: Campaign) -> PoolSpec:
        """The spec as `campaign` builds it: per stance for a depth pool of an image campaign."""
        return replace(self, per_stance=campaign.is_images and self.strategy == "depth")

    @property
    def orders(self) -> tuple[str, ...]:
        """The orders a depth pool takes its top k under."""
        return ("rank", "score") if self.order == "both" else (self.order,)

    @property
    def topic_budget(self) -> int:
        """The budget of RBP and the bandits, which `__post_init__` refuses to create without one."""
        assert self.budget is not None, f"{self.strategy} without a budget"
        return self.budget

    @property
    def single_order(self) -> Order:
        """The order RBP and the bandits read runs in: they walk one ranking, so "both" means trec_eval's."""
        return "score" if self.order == "both" else self.order

    @property
    def label(self) -> str:
        if self.per_stance:
            return f"depth {self.depth} per stance (each run's top {self.depth} of each stance list, by rank)"
        if self.strategy == "depth":
            return f"depth {self.depth} ({' ∪ '.join(self.orders)})"
        if self.strategy == "rbp":
            return f"RBP p={RBP_PERSISTENCE} up to {self.budget} per topic ({self.single_order})"
        return f"{self.strategy} +{self.budget} per topic ({self.single_order})"

    @property
    def tag(self) -> str:
        """Stored in PoolEntry.strategy, so the stats can tell which build added an entry."""
        if self.per_stance:
            return f"depth-{self.depth}-stance"
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


def build_pool(*, campaign: Campaign, spec: PoolSpec, by: User | None = None, progress: Progress | None = None) -> PoolSummary:
    """Add the documents `spec` selects to every topic's pool, record their sources, and group duplicates.

    Reads and computes first (reporting progress), looks up the documents and takes the ids the new rows need,
    then stores everything in one short transaction, then groups duplicates (reading document texts) in a second
    one. Builds of the same campaign are serialised by an advisory lock; a second one started meanwhile fails at
    once instead of waiting. Raises PoolingError.
    """
    progress = progress or NoProgress()
    if campaign.phase == Phase.CLOSED:
        raise PoolingError("the campaign is closed; its pool can no longer change")
    spec = spec.for_campaign(campaign)
    with _build_lock(campaign):
        runs = select_runs(campaign, spec.runs)
        topics = list(campaign.topics.order_by("position", "number"))
        _ensure_seeds(topics)
        with collector_paused():
            counts, stubs, warnings = _plan_and_store(campaign, spec=spec, runs=runs, topics=topics, by=by, progress=progress)
            jobs.committed(progress)  # grouping only adds to what is stored: a cancel can no longer undo the build
            # Pooled pairs of sentences (Touché 2022 Task 1) get their text before grouping, so equal pairs are twins.
            warnings.extend(resolve_pairs(collection_id=campaign.collection_id).warnings)
            grouped = group_duplicates(campaign=campaign, progress=_Offset(progress, len(topics), 2 * len(topics)))
    if collection_has_text(campaign.collection_id):
        missing_by_topic = missing_per_topic(campaign=campaign)
    else:  # every document is a stub, so every entry is missing: 400,000 entries need not be looked up one by one
        missing_by_topic = {c.number: c.after for c in counts if c.after}
    counts = [TopicCount(**{**asdict(c), "missing": missing_by_topic.get(c.number, 0)}) for c in counts]
    missing_total = sum(missing_by_topic.values())
    missing = missing_listed(campaign=campaign, per_topic=missing_by_topic, limit=MISSING_LISTED) if missing_total else []
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
    campaign: Campaign, *, spec: PoolSpec, runs: dict[int, str], topics: list[Topic], by: User | None, progress: Progress
) -> tuple[list[TopicCount], int, list[str]]:
    """Plan topic by topic into a spool, so memory holds one topic's plan (and the pool as it stood, and the doc ids
    of the new entries up to a bound: services.pool_store.prepared_pool), then store the spool in one transaction that
    takes the campaign's lock only for its writes.

    What is read for the plan lives only in here: freed when this returns, still inside the caller's pause of the
    collector, it never reaches a collection that would scan it all once more."""
    existing = existing_pool(campaign)
    warnings: list[str] = []
    counts: list[TopicCount] = []
    planned = _plan(spec, scheme=campaign.label_scheme, runs=runs, topics=topics, existing=existing, warnings=warnings,
                    progress=progress, steps=2 * len(topics))
    rows = _pool_rows(planned, existing=existing, counts=counts)
    with pool_store.prepared_pool(rows, collection_id=campaign.collection_id) as spool, transaction.atomic():
        stubs = pool_store.store_pool(campaign=campaign, tag=spec.tag, spool=spool)
        audit.record(
            campaign=campaign, action=audit.Action.POOL_BUILT, by=by, subject=spec.label,
            details={"spec": spec.as_params(), "runs": sorted(runs.values()), "added": sum(c.added for c in counts),
                     "total": sum(c.after for c in counts), "stubs": stubs,
                     "per_topic": {c.number: c.added for c in counts if c.added}},
        )
    return counts, stubs, warnings


@jobs.handler("build_pool")
def _run_build_job(job: Job, progress: Progress) -> dict:
    return build_pool(campaign=jobs.campaign_of(job), spec=PoolSpec.from_params(job.params), by=job.created_by, progress=progress).as_result()


def start_build(*, campaign: Campaign, spec: PoolSpec, user: User | None) -> Job:
    """Queue a build as a Job (the page and the API call this; the command calls build_pool itself)."""
    if campaign.phase == Phase.CLOSED:
        raise PoolingError("the campaign is closed; its pool can no longer change")
    select_runs(campaign, spec.runs)  # unknown tags fail now, not in the worker
    return job_queue.queue_job(kind="build_pool", campaign=campaign, params=spec.as_params(), created_by=user)


class _Offset:
    """Reports a later stage's progress as a continuation of one bar."""

    def __init__(self, progress: Progress, offset: int, total: int) -> None:
        self.progress, self.offset, self.total = progress, offset, total

    def advance(self, done: int, total: int | None = None) -> None:
        self.progress.advance(self.offset + done, self.total)


@contextmanager
def _build_lock(campaign: Campaign) -> Iterator[None]:
    """Held across the read, store and grouping steps of one build (a transaction cannot be: progress is reported
    between them); a second build of the campaign fails at once instead of waiting."""
    with bulk.session_lock(_POOL_LOCK, campaign.pk) as taken:
        if not taken:
            raise PoolingError("another pool build for this campaign is running; try again when it has finished")
        yield


def select_runs(campaign: Campaign, tags: Iterable[str]) -> dict[int, str]:
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
class TopicPool:
    """What a topic's pool holds already: its documents, and the `order` the next new entry gets."""

    docs: set[str] = field(default_factory=set)
    next_order: int = 0


def existing_pool(campaign: Campaign) -> dict[int, TopicPool]:
    """topic id -> its pool as it stands (topics without entries are missing from the dict)."""
    pools: dict[int, TopicPool] = defaultdict(TopicPool)
    rows = PoolEntry.objects.filter(topic__campaign=campaign).values_list("topic_id", "document__doc_id", "order")
    for topic_id, doc_id, order in rows.iterator(chunk_size=20_000):
        pool = pools[topic_id]
        pool.docs.add(doc_id)
        pool.next_order = max(pool.next_order, order + 1)
    return pools


@dataclass(frozen=True)
class _Planned:
    """One topic's plan: the documents to pool, each with the runs (by id) that brought it and its positions in
    them (metrics.pooling.pool_positions), and for a depth build the documents it selects (to report entries it no
    longer justifies)."""

    topic: Topic
    selected: Mapping[str, list[pool_store.PoolSourceRow]]
    justified: set[str] | None


_TOPICS_PER_READ = 10  # a depth build reads the runs' heads for this many topics at once


def _plan(
    spec: PoolSpec,
    *,
    scheme: LabelScheme,
    runs: dict[int, str],
    topics: list[Topic],
    existing: dict[int, TopicPool],
    warnings: list[str],
    progress: Progress,
    steps: int,
) -> Iterator[_Planned]:
    """Choose every topic's documents, topic by topic (no writes); for the bandits, warn about topics without
    feedback yet."""
    run_ids = {tag: run_id for run_id, tag in runs.items()}
    if spec.strategy == "depth":
        for start in range(0, len(topics), _TOPICS_PER_READ):
            some = topics[start : start + _TOPICS_PER_READ]
            by_topic = run_heads(runs, some, depth=spec.depth, orders=spec.orders)
            for done, topic in enumerate(some, start + 1):
                heads = {run_ids[tag]: lists for tag, lists in by_topic.pop(topic.pk, {}).items()}
                selected = pooling_metrics.pool_positions(heads, depth=spec.depth)
                progress.advance(done, steps)
                yield _Planned(topic, selected, set(selected))
        return

    judged = _judged_labels(topics, scheme) if spec.strategy != "rbp" else {}
    order = spec.single_order
    for done, topic in enumerate(topics, 1):
        topic_runs = _all_entries(topic, runs)
        pooled = existing[topic.pk].docs if topic.pk in existing else set()
        if spec.strategy == "rbp":
            # Ask for enough to skip what is pooled already: the first `room` unpooled documents by priority.
            room = max(spec.topic_budget - len(pooled), 0)
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
            room = spec.topic_budget
            pending = len(pooled - topic_judged.keys())
            ranked = (
                pooling_metrics.next_documents(
                    topic_runs, topic_judged, n=room + pending, seed=topic.pool_seed, strategy=spec.strategy, order=order
                )
                if topic_runs
                else []
            )
        chosen = [doc for doc in ranked if doc not in pooled][:room]
        progress.advance(done, steps)
        yield _Planned(topic, _sources_of(chosen, topic_runs, order=order, run_ids=run_ids), None)


def run_heads(runs: dict[int, str], topics: list[Topic], *, depth: int, orders: tuple[str, ...]) -> dict[int, dict[str, dict]]:
    """topic id -> run tag -> list -> the run's first `depth` doc ids in it (metrics.pooling.Heads), for topics of
    one campaign: a text run's lists are its `orders`; an image run's are its stance lists, whatever `orders`.

    The stored rankings hold both orders (computed at import with metrics.evaluation.order_run), so only the heads
    of the lists are read, not every line of every run, and nothing is sorted again. The campaign is the topics'
    (loaded with them when they come from `campaign.topics`, as the build's and the preview's do).
    """
    by_topic: dict[int, dict[str, dict]] = defaultdict(dict)
    if topics and topics[0].campaign.is_images:
        # An image ranking interleaves its stances (services.image_runs), so no head of it is one stance's top k;
        # it holds at most twenty lines, read whole.
        stored = Ranking.objects.filter(run_id__in=list(runs), topic__in=topics).only("run_id", "topic_id", "docs", "ranks", "stances", "length")
        for ranking in stored:
            lists = stance_lists(ranking)
            by_topic[ranking.topic_id][runs[ranking.run_id]] = {stance: [image for _, image in lists[stance][:depth]] for stance in lists}
        return by_topic
    for run_id, topic_id, heads in rankings.heads(list(runs), [t.pk for t in topics], depth=depth, orders=orders):
        by_topic[topic_id][runs[run_id]] = heads
    return by_topic


def _all_entries(topic: Topic, runs: dict[int, str]) -> dict[str, list]:
    """Run tag -> every (doc, rank, score) of one topic: RBP and the bandits may reach any depth."""
    return {runs[run_id]: [line[:3] for line in lines] for run_id, _, lines in rankings.all_lines(list(runs), [topic.pk])}


def _sources_of(
    docs: list[str], topic_runs: Mapping[str, list], *, order: Order, run_ids: Mapping[str, int]
) -> dict[str, list[pool_store.PoolSourceRow]]:
    """Each chosen document's sources: every run that retrieved it, at its position in `order`."""
    wanted = set(docs)
    sources: dict[str, list[pool_store.PoolSourceRow]] = {doc: [] for doc in docs}
    for tag in sorted(topic_runs):
        run_id = run_ids[tag]
        for position, doc in enumerate(order_run(topic_runs[tag], by=order), 1):
            if doc in wanted:
                sources[doc].append((run_id, None, position) if order == "score" else (run_id, position, None))
    return sources


def _judged_labels(topics: list[Topic], scheme: LabelScheme) -> dict[int, dict[str, int]]:
    """topic id -> doc id -> the highest label of the scheme's primary dimension any assessor gave (as a qrels
    export reads it: a causal document of the wrong direction counts with its `otherwise`): the bandit's reward is
    "someone found it relevant", so a disagreement does not hide a run's relevant documents. A judgment without
    that label (a note alone, a detail) is no feedback: its document stays a pending pull."""
    primary = scheme.primary.name
    labels: dict[int, dict[str, int]] = defaultdict(dict)
    rows = Judgment.objects.filter(topic__in=topics).values_list("topic_id", "document__doc_id", "labels")
    for topic_id, doc, values in rows.iterator(chunk_size=20_000):
        label = scheme.value_for_files(primary, values)
        if isinstance(label, int):  # the primary dimension is graded
            topic_labels = labels[topic_id]
            topic_labels[doc] = max(label, topic_labels.get(doc, label))
    return labels


def _pool_rows(
    planned: Iterable[_Planned], *, existing: dict[int, TopicPool], counts: list[TopicCount]
) -> Iterator[pool_store.PoolRow]:
    """The rows services.pool_store stores for each topic's plan: the new entries in presentation order with their
    places, then the documents pooled already, each with every source (a late run that retrieved a pooled document
    is recorded). Appends each topic's TopicCount to `counts` once its rows are out.

    The topics' seeds must be set. Nothing here checks keys against the database: the store does it under the
    campaign's lock, as imports do (no topic changes under the entries being written, see PoolEntry).
    """
    for plan in planned:
        topic = plan.topic
        topic_id = topic.pk
        pool = existing.get(topic_id, TopicPool())
        new_docs = [doc for doc in plan.selected if doc not in pool.docs]
        start = pool.next_order
        # The first batch is the plain seeded shuffle; later batches vary the seed so they are not all shuffled
        # by the same permutation. The rows go in that order, so the ids pool_store takes for the new entries and
        # their stubs grow with `order` (see pool_store._pool_documents).
        for order, doc in enumerate(pooling_metrics.presentation_order(new_docs, seed=topic.pool_seed + start), start):
            yield topic_id, doc, order, plan.selected[doc]
        for doc, sources in plan.selected.items():
            if doc in pool.docs:
                yield topic_id, doc, None, sources
        unjustified = len(pool.docs - plan.justified) if plan.justified is not None else 0
        counts.append(TopicCount(topic.number, len(pool.docs), len(new_docs), len(pool.docs) + len(new_docs), 0, unjustified))


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
