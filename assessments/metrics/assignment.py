"""Sharing topics among assessors: balancing the expected workload, and drawing the overlap slice.

Pure Python, no Django import. The assignment service (assessments.services.assignments) counts each topic's
pool, passes plain mappings in and stores the result as Assignment rows.

In Touché's main phase "each topic will be judged by one annotator only" (2023 lab overview), so assigning
topics is scheduling whole jobs (topics, sized by their pools) on identical machines (assessors). Finding the
schedule with the smallest maximum load is NP-hard, and the greedy rule here is Graham's (1969)
longest-processing-time first: take the topics from the largest down, and give each to the assessor with the
least work so far. Its largest load is at most (4/3 − 1/(3m)) times the optimum for m assessors. R. L. Graham
(1969), "Bounds on multiprocessing timing anomalies", SIAM Journal on Applied Mathematics 17(2).
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Job = TypeVar("Job", bound=Hashable)
Worker = TypeVar("Worker", bound=Hashable)
Entry = TypeVar("Entry", bound=Hashable)


@dataclass(frozen=True)
class Balance(Generic[Job, Worker]):
    """Which assessor takes each topic, and every assessor's resulting load (including any initial load)."""

    owner: dict[Job, Worker]
    load: dict[Worker, float]


def balance_workload(
    workload: Mapping[Job, float],
    assessors: Sequence[Worker],
    *,
    initial_load: Mapping[Worker, float] | None = None,
    excluded: Mapping[Job, Collection[Worker]] | None = None,
) -> Balance[Job, Worker]:
    """Give each topic in ``workload`` (topic -> expected judgments) to one of ``assessors``, greedily by LPT.

    Topics are taken from the largest workload down, and each goes to the assessor with the least load so far.
    Ties are broken by order, so the result is reproducible: among equal topics the one listed first in
    ``workload`` goes first, and among equally loaded assessors the one listed first in ``assessors`` wins.
    ``initial_load`` is work an assessor already has (topics assigned earlier), so that a second batch evens
    out the totals rather than the batch alone. ``excluded`` lists, per topic, assessors who may not take it
    (the overlap slice must go to someone other than the topic's own assessor).

    Raises ValueError when there are no assessors, an assessor is listed twice, a workload is negative, or
    every assessor is excluded from some topic.
    """
    if not assessors:
        raise ValueError("no assessors to share the topics among")
    if len(set(assessors)) != len(assessors):
        raise ValueError("an assessor is listed more than once")
    negative = [topic for topic, size in workload.items() if size < 0]
    if negative:
        raise ValueError(f"negative workload for {negative[0]!r}")
    initial_load = initial_load or {}
    excluded = excluded or {}
    load = {assessor: float(initial_load.get(assessor, 0)) for assessor in assessors}
    rank = {assessor: i for i, assessor in enumerate(assessors)}
    owner: dict[Job, Worker] = {}
    # sorted() is stable, so topics of equal size keep their order in ``workload``.
    for topic in sorted(workload, key=lambda t: -workload[t]):
        barred = excluded.get(topic, ())
        eligible = [assessor for assessor in assessors if assessor not in barred]
        if not eligible:
            raise ValueError(f"every assessor is excluded from {topic!r}")
        chosen = min(eligible, key=lambda a: (load[a], rank[a]))
        owner[topic] = chosen
        load[chosen] += workload[topic]
    return Balance(owner=owner, load=load)


def overlap_size(n_entries: int, share: float) -> int:
    """How many of a topic's ``n_entries`` a second assessor judges: ``share`` of them, rounded up.

    Rounding up gives every topic with a pool at least one shared document, so agreement can be watched on
    each topic, even a small one, at the cost of a share slightly above the nominal one on small pools.
    """
    if not 0 <= share <= 1:
        raise ValueError(f"overlap share {share} is not between 0 and 1")
    # The epsilon keeps float noise from rounding up a whole number: 0.07 * 100 is 7.000000000000001.
    return min(n_entries, math.ceil(n_entries * share - 1e-9))


def overlap_sample(entries: Sequence[Entry], *, share: float, seed: str) -> list[Entry]:
    """The entries of one topic that a second assessor also judges: ``overlap_size`` of them, drawn at random.

    The draw depends only on ``entries`` (in the given order) and ``seed``, so it can be repeated. Python seeds
    ``random.Random`` with a string through SHA-512, which is the same in every process, unlike ``hash()``.
    The chosen entries come back in their original order, which is the order the second assessor sees them in.
    """
    k = overlap_size(len(entries), share)
    chosen = set(random.Random(seed).sample(range(len(entries)), k))
    return [entry for i, entry in enumerate(entries) if i in chosen]
