"""What a pool build would cost before it is started: the documents it would add per topic, and the judging
hours of the usual alternatives (depth 5, 10 and 20, and RBP), for the organiser to choose between.

It reads runs and pools through the functions the build itself uses (services.pooling), so a preview and the
build that follows it agree.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from assessments.metrics import pooling as pooling_metrics
from assessments.models import Campaign, PoolEntry, Topic
from assessments.services import rankings
from assessments.services.pooling import (
    RBP_PERSISTENCE,
    PoolSpec,
    TopicCount,
    existing_pool,
    run_heads,
    select_runs,
)

PREVIEW_DEPTHS = (5, 10, 20)


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
    spec = spec.for_campaign(campaign)  # an image campaign's depth pools are per stance
    runs = select_runs(campaign, spec.runs)
    topics = list(campaign.topics.order_by("position", "number"))
    existing = existing_pool(campaign)
    current = {t.pk: len(existing[t.pk].docs) if t.pk in existing else 0 for t in topics}
    depths = sorted({*PREVIEW_DEPTHS, *([spec.depth] if spec.strategy == "depth" else [])})
    by_topic = run_heads(runs, topics, depth=depths[-1], orders=spec.orders)
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
        chosen = _fillable(campaign, runs, topics, {t.pk: spec.topic_budget for t in topics}, current)
    seconds = campaign.seconds_per_judgment
    base = sum(current.values())

    def option(label: str, added: Mapping[int, int], is_chosen: bool) -> CostOption:
        total_added = sum(added.values())
        return CostOption(label, total_added, base + total_added, round(total_added * seconds / 3600, 1), is_chosen)

    options = [
        option(f"depth {d} per stance" if spec.per_stance else f"depth {d} ({' ∪ '.join(spec.orders)})", depth_added[d],
               spec.strategy == "depth" and d == spec.depth)
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
