"""The one place that scopes lookups to what a user may see.

Every view that takes an id from a URL resolves it here, so an assessor can never reach a topic,
document or judgment that is not assigned to them (anything else is a 404, not a 403, so ids
of other campaigns are not confirmed to exist).
"""

from django.http import Http404

from accounts.models import User

from .models import Assignment, AssignmentItem, Campaign, Document, Job, Judgment, PoolEntry


def get_campaign_for_organiser(user: User, slug: str) -> Campaign:
    if not user.is_organiser:
        raise Http404("No such campaign")
    try:
        return Campaign.objects.select_related("collection").get(slug=slug)
    except Campaign.DoesNotExist:
        raise Http404("No such campaign") from None


def get_assignment_for_assessor(user: User, assignment_id: int) -> Assignment:
    """The user's own active assignment, with its topic and campaign; 404 for anything else.

    Organisers get no exception here: they judge only what is assigned to them like anyone else,
    so a judge page never shows a topic its viewer was not given.
    """
    if not user.is_authenticated:
        raise Http404("No such assignment")
    try:
        assignment = Assignment.objects.select_related("topic", "topic__campaign").get(
            pk=assignment_id, assessor=user, active=True
        )
    except Assignment.DoesNotExist:
        raise Http404("No such assignment") from None
    assignment.assessor = user  # the same row, so saving a label does not load it again
    return assignment


def get_entry_for_assignment(assignment: Assignment, entry_id: int) -> PoolEntry:
    """A pool entry of the assignment's topic, with its document; 404 for anything else.

    An overlap assignment covers only its AssignmentItem slice of the pool, not the whole topic.
    The document's body is left in the database (saving a label does not need it; reading
    `entry.document.body` fetches it).
    """
    entries = PoolEntry.objects.select_related("document").defer("document__body").filter(
        pk=entry_id, topic_id=assignment.topic_id
    )
    if assignment.scope == Assignment.Scope.OVERLAP:
        entries = entries.filter(pk__in=AssignmentItem.objects.filter(assignment=assignment).values("entry_id"))
    try:
        return entries.get()  # get(), not first(): first() would order by Meta.ordering, joining topic and campaign
    except PoolEntry.DoesNotExist:
        raise Http404("No such document in this assignment") from None


def get_campaign_for_admin(user: User, slug: str) -> Campaign:
    """A campaign for a training admin (agreement, disagreements, the monitoring dashboard); 404 for anyone else.

    Those pages put named assessors' labels side by side, so neither assessors nor organisers reach them.
    """
    if not user.is_campaign_admin:
        raise Http404("No such campaign")
    return get_campaign_for_organiser(user, slug)


def get_document_for_campaign(campaign: Campaign, document_id: int) -> Document:
    """A document of the campaign's collection; 404 for anything else."""
    document = Document.objects.filter(pk=document_id, collection_id=campaign.collection_id).first()
    if document is None:
        raise Http404("No such document")
    return document


def get_job_for_organiser(user: User, job_id: int, *, campaign: Campaign | None = None) -> Job:
    """A job (import, pool build …) for an organiser, optionally only within `campaign`; 404 for anyone else.

    Jobs carry file names, errors and summaries of a campaign's material, so assessors never see them.
    """
    if not user.is_authenticated or not user.is_organiser:
        raise Http404("No such job")
    jobs = Job.objects.filter(pk=job_id)
    if campaign is not None:
        jobs = jobs.filter(campaign=campaign)
    job = jobs.select_related("campaign", "created_by").first()
    if job is None:
        raise Http404("No such job")
    return job


def own_judgment(assignment: Assignment, document_id: int) -> Judgment | None:
    """The assignment's assessor's own current judgment of a document, never anyone else's."""
    return Judgment.objects.filter(
        assessor_id=assignment.assessor_id, topic_id=assignment.topic_id, document_id=document_id
    ).first()
