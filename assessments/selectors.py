"""Read queries shared by several views and the API."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, Count, Exists, F, Func, IntegerField, OuterRef, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from accounts.models import User

from .models import Assignment, AssignmentItem, Campaign, Judgment, PoolEntry


def campaigns_for_organiser() -> QuerySet[Campaign]:
    return (
        Campaign.objects.select_related("collection")
        .annotate(topic_count=Count("topics", distinct=True), run_count=Count("runs", distinct=True))
        .order_by("-created_at", "slug")
    )


def active_assignments(user: User) -> QuerySet[Assignment]:
    """The assessor's topics, training first, in campaign then topic order."""
    return (
        Assignment.objects.filter(assessor=user, active=True)
        .select_related("topic", "topic__campaign")
        .order_by("-phase", "topic__campaign__name", "topic__position", "topic__number")
    )


def _count(queryset: QuerySet) -> Coalesce:
    """A correlated COUNT(*) subquery (no GROUP BY, so it yields exactly one row)."""
    counted = queryset.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def work_for_assessor(user: User) -> QuerySet[Assignment]:
    """The assessor's active assignments, training first, each with `pool_size` and `judged`.

    `pool_size` counts the entries the assignment covers (the whole pool, or the overlap slice)
    and `judged` those of them the assessor has labelled, in one query however many topics.
    """
    whole = PoolEntry.objects.filter(topic=OuterRef("topic"))
    sliced = whole.filter(pk__in=AssignmentItem.objects.filter(assignment=OuterRef(OuterRef("pk"))).values("entry_id"))
    mine = Exists(Judgment.objects.filter(assessor=user, topic=OuterRef("topic"), document=OuterRef("document")))
    overlap = When(scope=Assignment.Scope.OVERLAP, then=_count(sliced))
    overlap_judged = When(scope=Assignment.Scope.OVERLAP, then=_count(sliced.filter(mine)))
    return active_assignments(user).annotate(
        pool_size=Case(overlap, default=_count(whole), output_field=IntegerField()),
        judged=Case(overlap_judged, default=_count(whole.filter(mine)), output_field=IntegerField()),
    )


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One document of an assignment's queue, with the assessor's own labels if they gave any."""

    entry_id: int
    document_id: int
    relevance: int | None = None
    quality: int | None = None
    stance: str = ""
    note: str = ""
    flagged: bool = False
    time_spent_ms: int = 0
    source: str = ""
    judged_at: datetime | None = None

    @property
    def judged(self) -> bool:
        return self.relevance is not None


def assignment_queue(assignment: Assignment) -> list[QueueEntry]:
    """The assignment's entries in presentation order (pool `order`, then id) with own labels.

    Two index scans whatever the pool size: the entries, and the assessor's judgments on the
    topic. Only the assignment's own assessor's labels are read, so training never shows
    another assessor's labels.
    """
    entries = PoolEntry.objects.filter(topic_id=assignment.topic_id)
    if assignment.scope == Assignment.Scope.OVERLAP:
        entries = entries.filter(pk__in=AssignmentItem.objects.filter(assignment=assignment).values("entry_id"))
    own = {
        row[0]: row[1:]
        for row in Judgment.objects.filter(assessor_id=assignment.assessor_id, topic_id=assignment.topic_id).values_list(
            "document_id", "relevance", "quality", "stance", "note", "flagged", "time_spent_ms", "source", "updated_at"
        )
    }
    queue = []
    for entry_id, document_id in entries.order_by("order", "pk").values_list("pk", "document_id"):
        labels = own.get(document_id)
        queue.append(QueueEntry(entry_id, document_id, *labels) if labels else QueueEntry(entry_id, document_id))
    return queue
