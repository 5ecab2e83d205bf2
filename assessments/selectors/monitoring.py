"""The agreement dashboard's monitoring figures: each assessor's label mix, time per judgment, activity over
time and progress per assignment, aggregated in SQL in a fixed handful of queries however many assessors and
topics; and the dashboard itself, with the agreement figures of selectors.agreement."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, Max, Min, Q, Sum
from django.db.models.functions import Trunc
from django.utils import timezone

from assessments.labels import LabelValue
from assessments.models import Assignment, Campaign, Judgment, JudgmentEvent, Phase, Topic
from assessments.selectors.agreement import Agreement, Scope, compute_agreement, label_columns, training_rounds
from assessments.services.assignments import workload_count

# What makes an assessor stand out on the dashboard. Judging a document in under 3 seconds (the first time
# bucket's edge) means it was not read, so a median under that is suspicious. A total variation distance of 0.3
# between an assessor's labels and everyone else's means that at least 30 % of the assessor's labels would have
# to change to match the others.
SKEWED_DISTANCE = 0.3
MIN_JUDGMENTS = 10  # below this a share is noise, so nobody is highlighted
TIME_EDGES_S = (3, 10, 30, 60, 120)
TIME_BUCKETS = ("< 3 s", "3–10 s", "10–30 s", "30–60 s", "1–2 min", "> 2 min")
# The activity charts' time buckets, finest first, with the unit Trunc takes before the buckets are counted: the
# finest that gives at most MAX_BUCKETS buckets is used, so ten minutes of judging is drawn by the minute, a day by
# the quarter hour, three days by the hour and two months by the day, instead of one bucket that fills the chart
# (or a thousand thin ones).
BUCKET_SIZES = (
    ("minute", timedelta(minutes=1), "minute"), ("5 minutes", timedelta(minutes=5), "minute"),
    ("15 minutes", timedelta(minutes=15), "minute"), ("hour", timedelta(hours=1), "hour"),
    ("day", timedelta(days=1), "day"), ("week", timedelta(days=7), "day"),
)
MAX_BUCKETS = 72


@dataclass(frozen=True)
class LabelMix:
    """One assessor's labels on one dimension (the row "everyone" has no assessor)."""

    assessor: str
    total: int
    shares: list[tuple[Hashable, str, float]]  # (label, label name, share), in scale order
    distance: float | None = None  # total variation distance to everyone else's labels
    stands_out: bool = False


@dataclass(frozen=True)
class Timing:
    assessor: str
    timed: int  # judgments with a recorded time (made on the judge page or through the API)
    mean_s: float | None
    buckets: list[int]  # counts per TIME_BUCKETS
    fast: bool  # median under the first time edge (3 s)


@dataclass(frozen=True)
class Activity:
    """New judgments per time bucket (first label of a document, from JudgmentEvent), over a continuous axis."""

    unit: str  # the bucket's size in words: "minute", "5 minutes", …, "day", "week" (BUCKET_SIZES)
    starts: list[datetime]  # each bucket's start; the last one ends at starts[-1] + step
    by_assessor: dict[str, list[int]]
    by_topic: dict[str, list[int]]
    by_pair: dict[tuple[str, str], list[int]]  # (assessor, topic number) -> counts
    step: timedelta = timedelta(hours=1)

    @property
    def totals(self) -> list[int]:
        return [sum(column) for column in zip(*self.by_assessor.values())] if self.by_assessor else []


@dataclass(frozen=True)
class ProgressRow:
    assessor: str
    topic: str
    phase: str
    scope: str
    active: bool
    judged: int
    expected: int

    @property
    def share(self) -> float:
        return min(1.0, self.judged / self.expected) if self.expected else 0.0


@dataclass(frozen=True)
class Monitoring:
    label_mix: dict[str, list[LabelMix]]  # dimension -> everyone first, then each assessor
    timing: list[Timing]
    activity: Activity
    progress: list[ProgressRow]
    topics: list[str] = field(default_factory=list)  # topic numbers in the scope, in campaign order


def _shares(counter: Counter, values: Sequence[LabelValue]) -> list[tuple[Hashable, str, float]]:
    total = sum(counter.values())
    return [(v.value, v.name, counter[v.value] / total if total else 0.0) for v in values]


def _label_mix(campaign: Campaign, counts: dict[str, dict[str, Counter]]) -> dict[str, list[LabelMix]]:
    """Each assessor's share of every label, beside everyone's, and how far it is from everyone else's."""
    scheme = campaign.label_scheme
    result = {}
    for dimension in scheme.dimensions:
        name, values = dimension.name, dimension.values
        per_assessor = counts[name]
        everyone = sum(per_assessor.values(), Counter())
        rows = [LabelMix("", sum(everyone.values()), _shares(everyone, values))]
        for assessor, own in sorted(per_assessor.items()):
            others = everyone - own
            n_own, n_others = sum(own.values()), sum(others.values())
            distance = None
            if n_own and n_others:
                distance = sum(abs(own[v.value] / n_own - others[v.value] / n_others) for v in values) / 2
            stands_out = (
                distance is not None
                and distance >= SKEWED_DISTANCE
                and min(n_own, n_others) >= MIN_JUDGMENTS
            )
            rows.append(LabelMix(assessor, n_own, _shares(own, values), distance, stands_out))
        result[name] = rows
    return result


def _tallies(campaign: Campaign, scope: Scope) -> tuple[dict[str, list[LabelMix]], list[Timing], dict[tuple, int]]:
    """Label counts and time buckets per assessor, and judged counts per assessor and topic, in two GROUP BYs.

    Two passes over the judgments, not one: grouping by assessor, topic and all the labels at once makes
    tens of thousands of groups at 100,000 judgments and takes twice as long (bench/agreement_db.py). The first
    groups by every dimension's value (selectors.agreement.label_columns); a label that was not given is not counted.
    """
    scheme = campaign.label_scheme
    timed = Q(time_spent_ms__gt=0, source__in=[Judgment.Source.WEB, Judgment.Source.API])
    under = {f"under_{s}": Count("pk", filter=timed & Q(time_spent_ms__lt=s * 1000)) for s in TIME_EDGES_S}
    rows = (
        Judgment.objects.filter(scope.judgments(campaign))
        .values_list("assessor__username", *label_columns(scheme))
        .annotate(n=Count("pk"), timed=Count("pk", filter=timed), time_ms=Sum("time_spent_ms", filter=timed), **under)
        .order_by()
    )
    counts: dict[str, dict[str, Counter]] = {name: defaultdict(Counter) for name in scheme.names}
    per_dimension = list(counts.values())
    times: dict[str, list[int]] = defaultdict(lambda: [0] * (2 + len(TIME_EDGES_S)))
    for assessor, *row in rows:
        values, (n, n_timed, time_ms, *below) = row[: len(per_dimension)], row[len(per_dimension):]
        for by_assessor, value in zip(per_dimension, values):
            if value is not None:
                by_assessor[assessor][value] += n
        tally = times[assessor]
        tally[0] += n_timed
        tally[1] += time_ms or 0
        for i, count in enumerate(below):
            tally[2 + i] += count
    timing = []
    for assessor, (n_timed, time_ms, *below) in sorted(times.items()):
        cumulative = [*below, n_timed]
        buckets = [cumulative[0]] + [b - a for a, b in zip(cumulative, cumulative[1:])]
        timing.append(
            Timing(
                assessor=assessor,
                timed=n_timed,
                mean_s=time_ms / n_timed / 1000 if n_timed else None,
                buckets=buckets,
                # The median is under 3 s exactly when more than half the timed judgments are.
                fast=n_timed >= MIN_JUDGMENTS and 2 * below[0] > n_timed,
            )
        )
    judged = {
        (assessor, topic): n
        for assessor, topic, n in Judgment.objects.filter(scope.judgments(campaign))
        .values_list("assessor__username", "topic__number")
        .annotate(n=Count("pk"))
        .order_by()
    }
    return _label_mix(campaign, counts), timing, judged


def _activity(campaign: Campaign, scope: Scope) -> Activity:
    """First labels per time bucket (BUCKET_SIZES: the finest that covers the judging in at most MAX_BUCKETS), per
    assessor and topic, from the history. Imports and twins' copies are no one's work."""
    events = (
        JudgmentEvent.objects.filter(scope.judgments(campaign, prefix="judgment__"), revision=1)
        .exclude(source__in=[Judgment.Source.IMPORT, Judgment.Source.DUPLICATE])
    )
    span = events.aggregate(first=Min("at"), last=Max("at"))
    if span["first"] is None:
        return Activity(unit="hour", starts=[], by_assessor={}, by_topic={}, by_pair={})
    zone = timezone.get_current_timezone()
    unit, step, kind = _bucket_size(span["first"].astimezone(zone), span["last"].astimezone(zone))
    rows = list(
        events.annotate(bucket=Trunc("at", kind))
        .values_list("bucket", "assessor__username", "judgment__topic__number")
        .annotate(n=Count("pk"))
        .order_by("bucket")
    )
    first = _bucket_start(rows[0][0], step)
    count = _index(rows[-1][0], first, step) + 1
    by_assessor: dict[str, list[int]] = defaultdict(lambda: [0] * count)
    by_topic: dict[str, list[int]] = defaultdict(lambda: [0] * count)
    by_pair: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * count)
    for at, assessor, topic, n in rows:
        index = _index(at, first, step)
        by_assessor[assessor][index] += n
        by_topic[topic][index] += n
        by_pair[assessor, topic][index] += n
    return Activity(
        unit=unit,
        starts=[first + i * step for i in range(count)],
        by_assessor=dict(sorted(by_assessor.items())),
        by_topic=dict(by_topic),
        by_pair=dict(by_pair),
        step=step,
    )


def _bucket_start(at: datetime, step: timedelta) -> datetime:
    """The start of the bucket `at` (already truncated to the step's Trunc unit) falls in: 14:07 in 5-minute
    buckets is 14:05, in 15-minute buckets 14:00; hours start on the hour, days and weeks at the first day judged."""
    if step < timedelta(hours=1):
        minutes = step // timedelta(minutes=1)
        return at.replace(minute=at.minute - at.minute % minutes, second=0, microsecond=0)
    if step < timedelta(days=1):
        hours = step // timedelta(hours=1)
        return at.replace(hour=at.hour - at.hour % hours, minute=0, second=0, microsecond=0)
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def _index(at: datetime, first: datetime, step: timedelta) -> int:
    """The bucket of `at`, counted from the bucket that starts at `first`; days and weeks by the calendar, so a day
    of 23 or 25 hours (a change of summer time) is still one day."""
    if step >= timedelta(days=1):
        return (at.date() - first.date()).days // step.days
    return math.floor((at - first) / step)


def _bucket_size(first: datetime, last: datetime) -> tuple[str, timedelta, str]:
    """The finest of BUCKET_SIZES that counts the time from `first` to `last` in at most MAX_BUCKETS buckets."""
    for unit, step, kind in BUCKET_SIZES:
        if _index(last, _bucket_start(first, step), step) + 1 <= MAX_BUCKETS:
            return unit, step, kind
    return BUCKET_SIZES[-1]


def _progress(campaign: Campaign, scope: Scope, judged: dict[tuple, int]) -> tuple[list[ProgressRow], list[str]]:
    """Judged against expected for every assignment in the scope (deactivated ones too: their work counts)."""
    assignments = Assignment.objects.filter(topic__campaign=campaign)
    topics = Topic.objects.filter(campaign=campaign)
    if scope.phase != "all":
        assignments = assignments.filter(phase=scope.phase)
        topics = topics.filter(is_training=scope.phase == Phase.TRAINING)
    if scope.round is not None:
        assignments = assignments.filter(round=scope.round)
        topics = topics.filter(pk__in=assignments.values("topic_id"))
    if scope.topic is not None:
        assignments = assignments.filter(topic__number=scope.topic)
        topics = topics.filter(number=scope.topic)
    workload = dict(
        topics.annotate(n=workload_count(campaign)).order_by("position", "number").values_list("number", "n")
    )
    rows = [
        ProgressRow(
            assessor=username, topic=number, phase=phase, scope=kind, active=active,
            judged=judged.get((username, number), 0),
            expected=items if kind == Assignment.Scope.OVERLAP else workload.get(number, 0),
        )
        for username, number, phase, kind, active, items in assignments.annotate(item_count=Count("items"))
        .order_by("assessor__username", "topic__position", "topic__number")
        .values_list("assessor__username", "topic__number", "phase", "scope", "active", "item_count")
    ]
    return rows, list(workload)


def monitoring(*, campaign: Campaign, scope: Scope) -> Monitoring:
    """The dashboard's monitoring figures in five queries: two judgment tallies, activity, workloads, assignments."""
    label_mix, timing, judged = _tallies(campaign, scope)
    progress, topics = _progress(campaign, scope, judged)
    return Monitoring(
        label_mix=label_mix, timing=timing, activity=_activity(campaign, scope), progress=progress, topics=topics
    )


@dataclass(frozen=True)
class Dashboard:
    scope: Scope
    agreement: Agreement
    monitoring: Monitoring
    rounds: list[int]


def dashboard(*, campaign: Campaign, scope: Scope) -> Dashboard:
    """Agreement and monitoring for the admin's page: nine queries, however many assessors and topics."""
    return Dashboard(
        scope=scope,
        agreement=compute_agreement(campaign=campaign, scope=scope),
        monitoring=monitoring(campaign=campaign, scope=scope),
        rounds=training_rounds(campaign),
    )
