"""The one place that scopes lookups to what a user may see.

Every view that takes an id from a URL resolves it here, so an assessor can never reach a topic,
document or judgment that is not assigned to them, and an organiser never reaches a campaign they are not a
member of (anything else is a 404, not a 403, so ids of other campaigns are not confirmed to exist).

Who reaches a campaign's organiser side:

* admins: every campaign (they run training and watch agreement everywhere);
* organisers: the campaigns they are members of (Membership), and nothing of any other;
* assessors: none (they see only their assignments).

Labels that name the assessor who gave them follow one rule (issue 14), decided here and nowhere else: training
stays blind, so one assessor's training labels are for admins and the campaign's adjudicators (they run training
and decide its disagreements); a plain organiser sees aggregates of training, and main-phase labels by name (the
discussion of a flag, who changed a qrels line). Every page and endpoint that shows labels by name asks
`sees_assessor_labels`; the "Only alice" aggregation rule asks `allows_rule`, and its snapshots are read through
`snapshots_for_user`.
"""

from functools import cache

from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404

from accounts.models import User
from touchstone.model_rows import ModelColumns

from .models import (
    Assignment,
    AssignmentItem,
    Campaign,
    Document,
    Job,
    Judgment,
    Membership,
    Phase,
    PoolEntry,
    QrelsSnapshot,
    Topic,
)
from .selectors.discussion import is_discussed


def campaigns_for_user(user: User) -> QuerySet[Campaign]:
    """The campaigns whose organiser side the user reaches (none for assessors and anonymous visitors), each
    with `member_role`: the user's Membership role in it, or None (an admin who is not a member)."""
    if not user.is_authenticated or not user.is_organiser:
        return Campaign.objects.none()
    role = Membership.objects.filter(campaign=OuterRef("pk"), user=user).values("role")[:1]
    campaigns = Campaign.objects.annotate(member_role=Subquery(role))
    if user.is_campaign_admin:
        return campaigns
    return campaigns.filter(memberships__user=user)


def get_campaign_for_organiser(user: User, slug: str) -> Campaign:
    """A campaign the user runs (a member, or any campaign for an admin), with its collection; 404 otherwise."""
    campaign = campaigns_for_user(user).select_related("collection").filter(slug=slug).first()
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


def can_adjudicate(user: User, campaign: Campaign) -> bool:
    """Admins, and organisers the campaign made adjudicators, record final labels. `campaign` comes from
    get_campaign_for_organiser (it carries the user's `member_role`)."""
    return user.is_campaign_admin or getattr(campaign, "member_role", None) == Membership.Role.ADJUDICATOR


def may_grant_adjudication(user: User) -> bool:
    """Only admins make an organiser an adjudicator: an organiser could otherwise give it to themselves."""
    return user.is_campaign_admin


def sees_assessor_labels(user: User, campaign: Campaign, *, phase: str) -> bool:
    """Whether the user may see labels of `phase` (training, main, or all: both) by the name of the assessor who
    gave them (see the module's docstring). Adjudicators must: deciding a disagreement means reading each side."""
    return phase == Phase.MAIN or can_adjudicate(user, campaign)


def named_label_phases(user: User, campaign: Campaign) -> tuple[str, ...]:
    """The phases whose labels the user sees by assessor: both, or the main phase only."""
    return tuple(phase for phase in (Phase.TRAINING, Phase.MAIN) if sees_assessor_labels(user, campaign, phase=phase))


def allows_rule(user: User, campaign: Campaign, rule: str) -> bool:
    """Whether the user may aggregate with `rule`. ``assessor:NAME`` (that assessor's labels alone) is judged as
    covering training whatever phase is asked: the forms offer rules beside a phase picker, and a qrels file of one
    assessor's labels is a tool for watching that assessor, which is the training admins' and adjudicators' job."""
    return not rule.strip().startswith("assessor:") or sees_assessor_labels(user, campaign, phase="all")


def sees_training_aggregates(user: User, campaign: Campaign) -> bool:
    """Whether the user may see aggregated labels of training topics (a qrels export, a leaderboard, an
    adjudication's labels). Every assessor judges the same training topics, so their majority or maximum is one
    assessor's labels wherever they agree: until the training round closes (the main phase starts) these are for
    those who see training labels by name; a plain organiser sees counts and agreement."""
    return campaign.phase not in (Phase.SETUP, Phase.TRAINING) or sees_assessor_labels(user, campaign, phase="all")


def label_phases(user: User, campaign: Campaign) -> tuple[str, ...]:
    """The phases (and "all") whose aggregated labels the user may ask for now."""
    return ("main", "training", "all") if sees_training_aggregates(user, campaign) else ("main",)


def check_rule(user: User, campaign: Campaign, rule: str, phase: str = "main") -> None:
    """Refuse (403) a rule (allows_rule) or a phase (label_phases) the user may not use, for a page or endpoint
    asked for it directly: the forms do not offer them."""
    if not allows_rule(user, campaign, rule):
        raise PermissionDenied("one assessor's labels are shown to admins and the campaign's adjudicators only")
    if phase not in label_phases(user, campaign):
        raise PermissionDenied(
            "training labels are shown to admins and the campaign's adjudicators until the training round closes; "
            "the agreement page shows how the training goes"
        )


def snapshots_for_user(user: User, campaign: Campaign) -> QuerySet[QrelsSnapshot]:
    """The campaign's qrels snapshots the user may read, newest first: one made with an ``assessor:NAME`` rule is
    that assessor's labels, so it is left out for those not allowed the rule, and one of training labels for those
    who may not see them yet (sees_training_aggregates)."""
    snapshots = QrelsSnapshot.objects.filter(campaign=campaign).select_related("created_by").order_by("-number")
    if not sees_training_aggregates(user, campaign):
        snapshots = snapshots.filter(phase__in=label_phases(user, campaign))
    if allows_rule(user, campaign, "assessor:"):
        return snapshots
    return snapshots.exclude(rule__startswith="assessor:")


def get_snapshot_for_user(user: User, campaign: Campaign, number: int) -> QrelsSnapshot:
    """A snapshot of the campaign the user may read (snapshots_for_user); 404 otherwise."""
    snapshot = snapshots_for_user(user, campaign).filter(number=number).first()
    if snapshot is None:
        raise Http404("No such snapshot")
    return snapshot


def get_campaign_for_adjudicator(user: User, slug: str) -> Campaign:
    """A campaign for an admin or one of its adjudicators (the disagreements, a judged document, adjudication);
    404 for anyone else."""
    campaign = get_campaign_for_organiser(user, slug)
    if not can_adjudicate(user, campaign):
        raise Http404("No such campaign")
    return campaign


def get_assignment_for_assessor(user: User, assignment_id: int, *, closed_training: bool = False) -> Assignment:
    """The user's own active assignment, with its topic and campaign; 404 for anything else.

    `closed_training` also admits the user's training assignments of a round that is closed (they were
    deactivated when it closed), for reading the document and the organisers' replies on the judge page; the
    save path never passes it, so such a topic takes no more labels.

    Organisers get no exception here: they judge only what is assigned to them like anyone else,
    so a judge page never shows a topic its viewer was not given. An archived campaign is put away: its
    assignments are no one's any more.
    """
    row = _assignment_row(user, assignment_id)
    if row is None:
        raise Http404("No such assignment")
    assignment = _assignment_from_row(row, user)
    if not assignment.active and not (closed_training and _round_closed(assignment)):
        raise Http404("No such assignment")
    return assignment


# Every judge page and label save starts here, so these lookups are written in SQL rather than compiled by the
# ORM each time (most of their CPU; touchstone.model_rows). They read the same rows the ORM would.
_ASSIGNMENT, _TOPIC, _CAMPAIGN = ModelColumns(Assignment, "a"), ModelColumns(Topic, "t"), ModelColumns(Campaign, "c")
_LARGEST_ID = 2**63 - 1  # ids are bigint: a larger one from a URL matches nothing (and SQLite could not take it)


@cache
def _assignment_sql(*, with_entry: bool) -> str:
    """The user's assignment (active or not) of a campaign not archived, with its topic and campaign. With
    `with_entry`: only an active one, joined to the pool entry of its topic, and what get_entry_to_judge reads of
    that entry: its document, its root, whether it has twins, whether it is in the assignment's slice (last)."""
    columns = join = where = ""
    if with_entry:
        entries, items = PoolEntry._meta.db_table, AssignmentItem._meta.db_table
        columns = f""", e.document_id, e.duplicate_of_id,
            EXISTS (SELECT 1 FROM {entries} d WHERE d.duplicate_of_id = e.id),
            a.scope <> %(overlap)s OR EXISTS (SELECT 1 FROM {items} i WHERE i.assignment_id = a.id AND i.entry_id = e.id)"""
        join = f"\n  JOIN {entries} e ON e.topic_id = a.topic_id AND e.id = %(entry)s"
        where = " AND a.active"
    return f"""SELECT {_ASSIGNMENT.sql()}, {_TOPIC.sql()}, {_CAMPAIGN.sql()}{columns}
  FROM {Assignment._meta.db_table} a
  JOIN {Topic._meta.db_table} t ON t.id = a.topic_id
  JOIN {Campaign._meta.db_table} c ON c.id = t.campaign_id{join}
 WHERE a.id = %(assignment)s AND a.assessor_id = %(assessor)s AND c.archived_at IS NULL{where}"""


def _assignment_row(user: User, assignment_id: int, entry_id: int | None = None) -> tuple | None:
    ids = (assignment_id,) if entry_id is None else (assignment_id, entry_id)
    if not user.is_authenticated or not all(0 < i <= _LARGEST_ID for i in ids):
        return None
    params = {"assignment": assignment_id, "assessor": user.pk, "entry": entry_id, "overlap": Assignment.Scope.OVERLAP.value}
    with connection.cursor() as cursor:
        cursor.execute(_assignment_sql(with_entry=entry_id is not None), params)
        return cursor.fetchone()


def _assignment_from_row(row: tuple, user: User) -> Assignment:
    assignment, topic = _ASSIGNMENT.instance(row), _TOPIC.instance(row, len(_ASSIGNMENT))
    campaign = _CAMPAIGN.instance(row, len(_ASSIGNMENT) + len(_TOPIC))
    Topic.campaign.field.set_cached_value(topic, campaign)
    Assignment.topic.field.set_cached_value(assignment, topic)
    Assignment.assessor.field.set_cached_value(assignment, user)  # the same row, so saving a label does not load it again
    return assignment


def _round_closed(assignment: Assignment) -> bool:
    campaign = assignment.topic.campaign
    return assignment.phase == Phase.TRAINING and (
        assignment.round < campaign.training_round or campaign.phase in (Phase.MAIN, Phase.CLOSED)
    )


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


def get_entry_to_judge(user: User, assignment_id: int, entry_id: int) -> tuple[Assignment, PoolEntry]:
    """What saving a label needs: get_assignment_for_assessor and get_entry_for_assignment (same rules, same 404s)
    in one query instead of two or three, the save being the request an assessor makes most.

    The entry carries what judging.judge_entry uses and no more: its topic, its document's id (the document's
    other fields are not loaded), its `duplicate_of_id`, and `has_twins` (whether other entries point at it), so
    that a save on an entry without twins looks for none. Fields not loaded are deferred (read on access, as
    with `only()`).
    """
    row = _assignment_row(user, assignment_id, entry_id)
    if row is None or not row[-1]:  # no such active assignment and entry, or the entry is outside its overlap slice
        # The lookups one at a time raise the 404 that says which is missing (or find both, changed meanwhile).
        assignment = get_assignment_for_assessor(user, assignment_id)
        return assignment, get_entry_for_assignment(assignment, entry_id)
    assignment = _assignment_from_row(row, user)
    document_id, duplicate_of_id, has_twins = row[-4:-1]
    db = assignment._state.db
    entry = PoolEntry.from_db(db, ["id", "topic_id", "document_id", "duplicate_of_id"], [entry_id, assignment.topic_id, document_id, duplicate_of_id])
    PoolEntry.topic.field.set_cached_value(entry, assignment.topic)
    PoolEntry.document.field.set_cached_value(entry, Document.from_db(db, ["id"], [document_id]))
    entry.has_twins = bool(has_twins)  # type: ignore[attr-defined]  # read by judging.propagate_to_twins
    return assignment, entry


def get_campaign_for_admin(user: User, slug: str) -> Campaign:
    """A campaign for a training admin (the agreement dashboard, the phase buttons); 404 for anyone else.

    The dashboard puts every assessor's figures side by side and its buttons move the whole campaign through
    training, so neither assessors nor organisers reach it.
    """
    if not user.is_authenticated or not user.is_campaign_admin:
        raise Http404("No such campaign")
    return get_campaign_for_organiser(user, slug)


def get_document_for_campaign(campaign: Campaign, document_id: int) -> Document:
    """A document of the campaign's collection; 404 for anything else."""
    document = Document.objects.filter(pk=document_id, collection_id=campaign.collection_id).first()
    if document is None:
        raise Http404("No such document")
    return document


def jobs_for_user(user: User) -> QuerySet[Job]:
    """The jobs of the campaigns the user runs (imports, pool builds …): they carry file names, errors and
    summaries of a campaign's material."""
    return Job.objects.filter(campaign__in=campaigns_for_user(user).values("pk"))


def get_job_for_organiser(user: User, job_id: int, *, campaign: Campaign | None = None) -> Job:
    """A job of a campaign the user runs, optionally only within `campaign`; 404 for anyone else."""
    jobs = jobs_for_user(user).filter(pk=job_id)
    if campaign is not None:
        jobs = jobs.filter(campaign=campaign)
    job = jobs.select_related("campaign", "created_by").first()
    if job is None:
        raise Http404("No such job")
    return job


def get_judgment_for_discussion(campaign: Campaign, judgment_id: int) -> Judgment:
    """A judgment of the campaign that carries a flag, a note or replies (what the discussion page lists); 404
    otherwise."""
    judgment = (
        Judgment.objects.filter(is_discussed(), pk=judgment_id, topic__campaign=campaign)
        .select_related("topic", "assessor").first()
    )
    if judgment is None:
        raise Http404("No such discussion")
    return judgment


def own_judgment(assignment: Assignment, document_id: int) -> Judgment | None:
    """The assignment's assessor's own current judgment of a document, never anyone else's."""
    return Judgment.objects.filter(
        assessor_id=assignment.assessor_id, topic_id=assignment.topic_id, document_id=document_id
    ).first()
