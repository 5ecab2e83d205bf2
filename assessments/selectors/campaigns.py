"""Reads for the organiser's campaign pages: the campaign list, its members, document counts, where the campaign
stands, and recent jobs."""

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from accounts.models import User
from assessments import access
from assessments.models import AuditEvent, Campaign, Document, Job, Judgment, Membership, PoolEntry, QrelsSnapshot


def campaigns_for_organiser(user: User) -> QuerySet[Campaign]:
    """The campaigns the user runs (assessments.access), with their topic and run counts."""
    return (
        access.campaigns_for_user(user).select_related("collection")
        .annotate(topic_count=Count("topics", distinct=True), run_count=Count("runs", distinct=True))
        .order_by("-created_at", "slug")
    )


def members_of(campaign: Campaign) -> QuerySet[Membership]:
    """The people who run the campaign, by name."""
    return Membership.objects.filter(campaign=campaign).select_related("user", "added_by").order_by("user__username")


def document_counts(campaign: Campaign) -> dict[str, int]:
    """Documents of the campaign's collection, and of its pools, with and without text (stubs), in two queries."""
    with_text = Count("pk", filter=Q(has_text=True))
    counts = Document.objects.filter(collection_id=campaign.collection_id).aggregate(total=Count("pk"), with_text=with_text)
    pooled = Document.objects.filter(pk__in=PoolEntry.objects.filter(topic__campaign=campaign).values("document_id")).aggregate(
        pooled=Count("pk"), pooled_with_text=with_text
    )
    return {**counts, **pooled}


def hub_status(campaign: Campaign) -> dict[str, int]:
    """What each step of the campaign's page has to show for itself: topics, runs, documents, the pool and how
    much of it is judged, assignments, snapshots (a query each, whatever the campaign's size)."""
    pool = PoolEntry.objects.filter(topic__campaign=campaign, duplicate_of__isnull=True)
    return {
        "topics": campaign.topics.count(),
        "runs": campaign.runs.count(),
        "documents": Document.objects.filter(collection_id=campaign.collection_id).count(),
        "pooled": pool.count(),
        "judged": pool.filter(Exists(Judgment.objects.filter(topic_id=OuterRef("topic_id"), document_id=OuterRef("document_id")))).count(),
        "assignments": campaign.topics.aggregate(n=Count("assignments", filter=Q(assignments__active=True)))["n"],
        "snapshots": QrelsSnapshot.objects.filter(campaign=campaign).count(),
    }


def recent_jobs(campaign: Campaign, *, kinds, limit: int = 10) -> list[Job]:
    """The campaign's latest jobs of the given kinds, newest first, with who started them."""
    return list(Job.objects.filter(campaign=campaign, kind__in=list(kinds)).select_related("created_by").order_by("-created_at", "-pk")[:limit])


def latest_job(campaign: Campaign, *, kind: str) -> Job | None:
    """The campaign's latest job of `kind` (the pool page follows the last build)."""
    return next(iter(recent_jobs(campaign, kinds=[kind], limit=1)), None)


def timeline(campaign: Campaign, *, action: str = "", training_labels: bool = True) -> QuerySet[AuditEvent]:
    """The campaign's audit events, newest first, with who made them; `action` narrows to one kind or a family
    of kinds by prefix ("import", "member"). Without `training_labels` (access.sees_training_aggregates), the
    adjudications of training topics are left out: their before and after are training labels."""
    events = AuditEvent.objects.filter(campaign=campaign).select_related("actor").order_by("-at", "-id")
    if action:
        events = events.filter(action__startswith=action)
    if not training_labels:
        training = Q()
        for number in campaign.topics.filter(is_training=True).values_list("number", flat=True):
            training |= Q(subject__startswith=f"topic {number},")  # services.adjudication names the topic so
        if training:
            events = events.exclude(Q(action=AuditEvent.Action.ADJUDICATED) & training)
    return events
