"""Giving topics to assessors: by hand, balanced automatically, the overlap slice, and the training rounds.

The only write path for Assignment and AssignmentItem. Four rules hold throughout:

* Judgments belong to assessors, not to assignments. Taking a topic away deactivates the Assignment
  (active=False), which removes it from the assessor's work, and never deletes it. The judgments stay and keep
  naming who made them, and the assignment page lists them per topic.
* In the main phase each topic has one assessor (Touché 2023 lab overview: "each topic will be judged by one
  annotator only"). Assigning a held topic to someone else therefore moves it.
* In training every assessor of a round gets the same topics (the kappa test needs a shared pool). A training
  topic belongs to one round, so a new round needs new training topics.
* The overlap slice is drawn from each topic's `pool_seed`, which also fixes the presentation order, so the same
  pool always gives the same slice.

Expected workload means the judgments an assessor has to make: a topic's pool entries, minus duplicates'
twins when the campaign copies labels to them (the assessor never opens a twin). This is the figure the pool
statistics use too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias, TypedDict

from django.db import transaction
from django.db.models import Count, Q, QuerySet

from accounts.models import User
from assessments.metrics.assignment import balance_workload, overlap_sample
from assessments.models import Assignment, AssignmentItem, Campaign, Judgment, Phase, PoolEntry, Topic
from assessments.services import audit, campaigns

if TYPE_CHECKING:  # django-stubs-ext is a checking tool, not installed in production
    from django_stubs_ext import WithAnnotations


class AssignmentError(ValueError):
    """An assignment that cannot be made as asked (the message says why and what to do instead)."""


class NothingToAssign(AssignmentError):
    """Every topic asked about is held already: nothing to do (a command run twice is not an error)."""


@dataclass(frozen=True)
class Assigned:
    """One assessor given one topic. ``status`` is "new", "reactivated" (an earlier assignment of the same
    person and phase came back) or "kept" (they had it already). ``replaced`` names the main-phase assessors who
    held the topic before. Their assignments were deactivated, and their judgments stay."""

    topic: Topic
    assessor: User
    status: str
    replaced: tuple[str, ...] = ()

    def describe(self) -> str:
        text = f"topic {self.topic.number} → {self.assessor.username} ({self.status})"
        if self.replaced:
            text += f", taken from {', '.join(self.replaced)} (their judgments are kept)"
        return text


# --------------------------------------------------------------------------------------------------------------
# Looking things up by the names people type


def _by_name(names: Iterable[str], what: str, lookup, unknown: str) -> list:
    """The objects ``lookup(names)`` finds (a dict name -> object), in the order given, without repeats; raises
    AssignmentError naming every name not found (``unknown`` is the message, with {names} for them)."""
    wanted = list(dict.fromkeys(str(n).strip() for n in names if str(n).strip()))
    if not wanted:
        raise AssignmentError(f"no {what} given")
    found = lookup(wanted)
    missing = [n for n in wanted if n not in found]
    if missing:
        raise AssignmentError(unknown.format(names=", ".join(missing)))
    return [found[n] for n in wanted]


def find_topics(*, campaign: Campaign, numbers: Iterable[str]) -> list[Topic]:
    """The campaign's topics with these numbers, in the order given. Raises AssignmentError naming any unknown."""
    return _by_name(
        numbers, "topics",
        lambda wanted: {t.number: t for t in Topic.objects.filter(campaign=campaign, number__in=wanted)},
        f"campaign {campaign.slug} has no topic {{names}}",
    )


def find_assessors(*, usernames: Iterable[str]) -> list[User]:
    """Active users with these usernames, in the order given. Raises AssignmentError naming any unknown."""
    return _by_name(
        usernames, "assessors",
        lambda wanted: {u.username: u for u in User.objects.filter(username__in=wanted, is_active=True)},
        "no active user {names} (create one with the create_user command)",
    )


def workload_count(campaign: Campaign) -> Count:
    """An aggregate over Topic: the judgments its pool asks for (twins left out when labels propagate)."""
    if campaign.propagate_to_duplicates:
        return Count("pool_entries", filter=Q(pool_entries__duplicate_of__isnull=True))
    return Count("pool_entries")


# --------------------------------------------------------------------------------------------------------------
# Assigning


@transaction.atomic
def assign_topics(
    *, campaign: Campaign, assessors: Sequence[User], topics: Sequence[Topic], phase: str, assigned_by: User | None
) -> list[Assigned]:
    """Give ``topics`` to ``assessors`` for ``phase``, and return what changed.

    Training topics go to every assessor listed, in the campaign's current training round. A main-phase topic
    goes to exactly one assessor and moves away from whoever held it. An earlier, deactivated assignment of
    the same person is reactivated rather than duplicated (one row per topic, assessor and phase). This also
    turns the assessor's overlap slice of a topic into the whole topic.
    """
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    _check_assignable(campaign, topics, phase, assessors)
    round_ = campaign.training_round if phase == Phase.TRAINING else 1
    rows = {
        (a.topic_id, a.assessor_id): a
        for a in Assignment.objects.select_for_update().select_related("assessor").filter(topic__in=topics, phase=phase)
    }
    wanted = {assessor.pk for assessor in assessors}
    result = []
    for topic in topics:
        replaced: tuple[str, ...] = ()
        if phase == Phase.MAIN:
            holders = [
                a for (topic_id, assessor_id), a in rows.items()
                if topic_id == topic.pk and assessor_id not in wanted and a.active and a.scope == Assignment.Scope.FULL
            ]
            Assignment.objects.filter(pk__in=[a.pk for a in holders]).update(active=False)
            replaced = tuple(a.assessor.username for a in holders)
        for assessor in assessors:
            status = _give(rows.get((topic.pk, assessor.pk)), topic, assessor, phase, round_, assigned_by)
            result.append(Assigned(topic=topic, assessor=assessor, status=status, replaced=replaced))
    changed = [item for item in result if item.status != "kept"]
    if changed:
        audit.record(
            campaign=campaign, action=audit.Action.ASSIGNED, by=assigned_by,
            subject=f"{len(changed)} assignment(s), {phase} phase",
            details={"phase": phase, "round": round_ if phase == Phase.TRAINING else None, "assigned": [
                {"topic": i.topic.number, "assessor": i.assessor.username, "status": i.status, "replaced": list(i.replaced)}
                for i in changed
            ]},
        )
    return result


def _check_assignable(campaign: Campaign, topics: Sequence[Topic], phase: str, assessors: Sequence[User]) -> None:
    if not assessors:
        raise AssignmentError("no assessors given")
    if not topics:
        raise AssignmentError("no topics given")
    if campaign.phase == Phase.CLOSED:
        raise AssignmentError(f"campaign {campaign.slug} is closed")
    foreign = [t.number for t in topics if t.campaign_id != campaign.pk]
    if foreign:
        raise AssignmentError(f"topic {', '.join(foreign)} is not in campaign {campaign.slug}")
    if phase == Phase.TRAINING:
        if campaign.phase not in (Phase.SETUP, Phase.TRAINING):
            raise AssignmentError(f"training is over: campaign {campaign.slug} is in its {campaign.phase} phase")
        not_training = [t.number for t in topics if not t.is_training]
        if not_training:
            raise AssignmentError(
                f"topic {', '.join(not_training)} is not a training topic: mark it as one first"
            )
        earlier = (
            Assignment.objects.filter(topic__in=topics, phase=Phase.TRAINING)
            .exclude(round=campaign.training_round)
            .values_list("topic__number", "round")
            .first()
        )
        if earlier:
            raise AssignmentError(
                f"topic {earlier[0]} was used in training round {earlier[1]}; "
                f"round {campaign.training_round} needs new training topics"
            )
    elif phase == Phase.MAIN:
        training = [t.number for t in topics if t.is_training]
        if training:
            raise AssignmentError(f"topic {', '.join(training)} is a training topic, not a main-phase one")
        if len(assessors) != 1:
            raise AssignmentError(
                "in the main phase each topic has one assessor; draw an overlap slice for a second opinion"
            )
    else:
        raise AssignmentError(f"unknown phase {phase!r}: expected training or main")


def _give(
    row: Assignment | None, topic: Topic, assessor: User, phase: str, round_: int, assigned_by: User | None
) -> str:
    if row is None:
        Assignment.objects.create(
            topic=topic, assessor=assessor, phase=phase, round=round_, scope=Assignment.Scope.FULL,
            assigned_by=assigned_by,
        )
        return "new"
    if row.active and row.scope == Assignment.Scope.FULL:
        return "kept"
    if row.scope == Assignment.Scope.OVERLAP:
        row.items.all().delete()  # the whole pool now; the slice's entries are a subset of it
    row.active, row.scope, row.round, row.assigned_by = True, Assignment.Scope.FULL, round_, assigned_by
    row.save(update_fields=["active", "scope", "round", "assigned_by"])
    return "reactivated"


@dataclass(frozen=True)
class AutoAssignment:
    """The topics handed out, each chosen assessor's expected judgments afterwards (earlier topics included),
    and the numbers of the topics left out because they have no pool yet."""

    assigned: list[Assigned]
    load: dict[str, int]
    skipped: list[str]


@transaction.atomic
def auto_assign(
    *, campaign: Campaign, assessors: Sequence[User], topics: Sequence[Topic] | None = None, assigned_by: User | None
) -> AutoAssignment:
    """Share main-phase topics among ``assessors`` so that their expected workloads come out even.

    By default this takes the topics nobody holds yet. The greedy longest-processing-time rule
    (metrics.assignment.balance_workload) gives the largest pool first to the least-loaded assessor. Work the
    chosen assessors already have on other main-phase topics and overlap slices counts as their starting load.
    Topics without a pool are skipped (and listed in the result): their size, and so the balance, is unknown, and
    a later call can take them once their pool is built. Only when no topic has a pool is the call refused.
    """
    if topics is None:
        held = Assignment.objects.filter(phase=Phase.MAIN, active=True, scope=Assignment.Scope.FULL)
        topics = list(
            Topic.objects.filter(campaign=campaign, is_training=False).exclude(pk__in=held.values("topic_id"))
        )
        if not topics:
            raise NothingToAssign("every main-phase topic has an assessor; name topics to redistribute them")
    if not assessors:
        raise AssignmentError("no assessors given")
    workload = _workloads(campaign, [t.pk for t in topics])
    skipped = [t.number for t in topics if not workload.get(t.pk)]
    topics = [t for t in topics if workload.get(t.pk)]
    if not topics:
        raise AssignmentError(f"topic {', '.join(skipped)} has no pool yet: build the pool first, so its size is known")
    balance = balance_workload(
        {t.pk: workload[t.pk] for t in topics},
        [a.pk for a in assessors],
        initial_load=_main_load(campaign, assessors, exclude_topics=[t.pk for t in topics]),
    )
    by_id = {a.pk: a for a in assessors}
    assigned = []
    for assessor in assessors:
        mine = [t for t in topics if balance.owner[t.pk] == assessor.pk]
        if mine:
            assigned += assign_topics(
                campaign=campaign, assessors=[assessor], topics=mine, phase=Phase.MAIN, assigned_by=assigned_by
            )
    load = {by_id[pk].username: int(load) for pk, load in balance.load.items()}
    return AutoAssignment(assigned=assigned, load=load, skipped=skipped)


def _workloads(campaign: Campaign, topic_ids: Iterable[int]) -> dict[int, int]:
    return dict(
        Topic.objects.filter(pk__in=topic_ids).annotate(n=workload_count(campaign)).values_list("pk", "n")
    )


def _main_load(campaign: Campaign, assessors: Sequence[User], *, exclude_topics: Sequence[int] = ()) -> dict[int, int]:
    """Each assessor's expected judgments on their active main-phase work: whole topics plus overlap slices."""
    active = Assignment.objects.filter(
        topic__campaign=campaign, phase=Phase.MAIN, active=True, assessor__in=assessors
    ).exclude(topic_id__in=exclude_topics)
    held = list(active.filter(scope=Assignment.Scope.FULL).values_list("topic_id", "assessor_id"))
    workload = _workloads(campaign, [topic_id for topic_id, _ in held])
    load: dict[int, int] = defaultdict(int)
    for topic_id, assessor_id in held:
        load[assessor_id] += workload[topic_id]
    slices = active.filter(scope=Assignment.Scope.OVERLAP).values_list("assessor_id").annotate(n=Count("items"))
    for assessor_id, n in slices:
        load[assessor_id] += n
    return dict(load)


@dataclass(frozen=True)
class OverlapSlice:
    topic: Topic
    holder: str
    assessor: str
    entries: int


@dataclass(frozen=True)
class OverlapDraw:
    """The slices drawn, and the topics left alone because they have an active overlap slice already."""

    share: float
    slices: list[OverlapSlice]
    skipped: list[str]


@transaction.atomic
def draw_overlap(
    *,
    campaign: Campaign,
    assigned_by: User | None,
    share: float | None = None,
    assessors: Sequence[User] | None = None,
) -> OverlapDraw:
    """Give a second assessor ``share`` (default Campaign.overlap_share) of every held main-phase topic's pool.

    Per topic, ``ceil(share × entries)`` entries are drawn (twins left out when labels propagate), seeded by
    the topic's pool_seed and number, so drawing again after a withdrawal gives the same slice. Each slice goes
    to the least-loaded of ``assessors`` (default: everyone holding a main-phase topic) other than the topic's
    own assessor, again by metrics.assignment.balance_workload. Topics with an active slice are skipped, so
    this can be run again after more topics are assigned.
    """
    share = campaign.overlap_share if share is None else share
    if not 0 < share <= 1:
        raise AssignmentError(f"overlap share {share} must be above 0 and at most 1 (0.05 = 5 %)")
    holders = dict(
        Assignment.objects.filter(
            topic__campaign=campaign, phase=Phase.MAIN, active=True, scope=Assignment.Scope.FULL
        ).values_list("topic_id", "assessor_id")
    )
    if not holders:
        raise AssignmentError("no main-phase topic has an assessor yet: assign topics first")
    if assessors is None:
        assessors = list(User.objects.filter(pk__in=set(holders.values())).order_by("username"))
    if len(assessors) < 2:
        raise AssignmentError("an overlap slice needs at least two assessors")
    sliced = set(
        Assignment.objects.filter(
            topic_id__in=holders, phase=Phase.MAIN, active=True, scope=Assignment.Scope.OVERLAP
        ).values_list("topic_id", flat=True)
    )
    topics = {t.pk: t for t in Topic.objects.filter(pk__in=holders).order_by("position", "number")}
    entries: dict[int, list[tuple[int, int]]] = defaultdict(list)  # topic -> (entry id, document id) in queue order
    pool = PoolEntry.objects.filter(topic_id__in=set(holders) - sliced)
    if campaign.propagate_to_duplicates:
        pool = pool.filter(duplicate_of__isnull=True)
    for topic_id, entry_id, document_id in pool.order_by("topic_id", "order", "pk").values_list("topic_id", "pk", "document_id"):
        entries[topic_id].append((entry_id, document_id))
    samples = {
        topic_id: overlap_sample(
            entries[topic_id], share=share, seed=f"overlap/{topics[topic_id].pool_seed}/{topics[topic_id].number}"
        )
        for topic_id in topics
        if topic_id not in sliced and entries[topic_id]
    }
    balance = balance_workload(
        {topic_id: len(sample) for topic_id, sample in samples.items()},
        [a.pk for a in assessors],
        initial_load=_main_load(campaign, assessors),
        excluded={topic_id: {holders[topic_id]} for topic_id in samples},
    )
    names = dict(User.objects.filter(pk__in={*holders.values(), *(a.pk for a in assessors)}).values_list("pk", "username"))
    earlier = {
        (a.topic_id, a.assessor_id): a
        for a in Assignment.objects.select_for_update().filter(topic_id__in=samples, phase=Phase.MAIN)
    }
    items, slices = [], []
    for topic_id, sample in samples.items():
        second = balance.owner[topic_id]
        row = earlier.get((topic_id, second))
        if row is None:
            row = Assignment.objects.create(
                topic_id=topic_id, assessor_id=second, phase=Phase.MAIN, scope=Assignment.Scope.OVERLAP,
                assigned_by=assigned_by,
            )
        else:  # a former holder of the topic comes back for the slice only
            row.items.all().delete()
            row.active, row.scope, row.assigned_by = True, Assignment.Scope.OVERLAP, assigned_by
            row.save(update_fields=["active", "scope", "assigned_by"])
        # The slice keeps the pool's order (overlap_sample) and is the row's whole item list (earlier items were
        # deleted above), so each item's queue position is its place in the slice.
        items += [AssignmentItem.for_entry(row, entry, position) for position, entry in enumerate(sample, 1)]
        slices.append(OverlapSlice(topics[topic_id], names[holders[topic_id]], names[second], len(sample)))
    AssignmentItem.objects.bulk_create(items)
    if slices:
        audit.record(
            campaign=campaign, action=audit.Action.OVERLAP_DRAWN, by=assigned_by, subject=f"{share:.0%} of {len(slices)} topic(s)",
            details={"share": share, "slices": [
                {"topic": s.topic.number, "holder": s.holder, "assessor": s.assessor, "documents": s.entries} for s in slices
            ]},
        )
    return OverlapDraw(share=share, slices=slices, skipped=[t.number for pk, t in topics.items() if pk in sliced])


@transaction.atomic
def withdraw_assignment(*, campaign: Campaign, assignment_id: int, by: User | None) -> Assignment:
    """Take a topic (or an overlap slice) away from its assessor. Their judgments stay theirs and stay counted."""
    assignment = (
        Assignment.objects.select_for_update()
        .select_related("topic", "assessor")
        .filter(pk=assignment_id, topic__campaign=campaign)
        .first()
    )
    if assignment is None:
        raise AssignmentError(f"campaign {campaign.slug} has no assignment {assignment_id}")
    if assignment.active:
        audit.record(
            campaign=campaign, action=audit.Action.WITHDRAWN, by=by,
            subject=f"topic {assignment.topic.number} from {assignment.assessor.username}",
            before={"active": True}, after={"active": False},
            details={"phase": assignment.phase, "scope": assignment.scope, "assignment": assignment.pk},
        )
        assignment.active = False
        assignment.save(update_fields=["active"])
    return assignment


# --------------------------------------------------------------------------------------------------------------
# The training phase


@transaction.atomic
def mark_training(*, campaign: Campaign, topics: Sequence[Topic], is_training: bool, by: User | None) -> int:
    """Mark topics as training topics (or as main-phase topics again); return how many changed.

    A topic that someone currently holds for the other phase is refused. Its assessor would otherwise keep a
    topic of the wrong kind.
    """
    other = Phase.MAIN if is_training else Phase.TRAINING
    held = (
        Assignment.objects.filter(topic__in=topics, phase=other, active=True)
        .values_list("topic__number", "assessor__username")
        .first()
    )
    if held:
        raise AssignmentError(
            f"topic {held[0]} is assigned to {held[1]} for the {other} phase: withdraw that assignment first"
        )
    to_change = Topic.objects.filter(pk__in=[t.pk for t in topics], campaign=campaign).exclude(is_training=is_training)
    numbers = list(to_change.order_by("position", "number").values_list("number", flat=True))
    changed = to_change.update(is_training=is_training)
    if changed:
        audit.record(
            campaign=campaign, action=audit.Action.TOPICS_MARKED, by=by,
            subject=f"topic {', '.join(numbers)} → {'training' if is_training else 'main phase'}",
            before={"is_training": not is_training}, after={"is_training": is_training}, details={"topics": numbers},
        )
    for topic in topics:  # so the caller can assign the same objects next without reloading them
        if topic.campaign_id == campaign.pk:
            topic.is_training = is_training
    return changed


@transaction.atomic
def close_training_round(*, campaign: Campaign, then: Literal["next_round", "main"], by: User | None) -> Campaign:
    """Close the current training round, then start the next round or the main phase.

    Closing deactivates the round's training assignments. Assessors stop seeing those topics, and the round's
    agreement figures stop changing while they are discussed. The judgments stay and are counted per round.
    ``then="next_round"`` increments Campaign.training_round, and the admin assigns new training topics for
    it. ``then="main"`` moves the campaign to the main phase (services.campaigns.advance_phase).
    """
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.phase != Phase.TRAINING:
        raise AssignmentError(f"campaign {campaign.slug} is not in training (it is in its {campaign.phase} phase)")
    current = Assignment.objects.filter(topic__campaign=campaign, phase=Phase.TRAINING, round=campaign.training_round)
    if then not in ("next_round", "main"):
        raise AssignmentError(f"unknown step {then!r}: expected next_round or main")
    if then == "next_round" and not current.exists():
        raise AssignmentError(f"training round {campaign.training_round} has no topics assigned yet")
    closed = current.filter(active=True).update(active=False)
    audit.record(
        campaign=campaign, action=audit.Action.ROUND_CLOSED, by=by, subject=f"round {campaign.training_round}",
        details={"round": campaign.training_round, "assignments_closed": closed},
    )
    if then == "main":
        return campaigns.advance_phase(campaign=campaign, to=Phase.MAIN, by=by)
    campaign.training_round += 1
    campaign.save(update_fields=["training_round"])
    audit.record(
        campaign=campaign, action=audit.Action.ROUND_OPENED, by=by, subject=f"round {campaign.training_round}",
        before={"training_round": campaign.training_round - 1}, after={"training_round": campaign.training_round},
    )
    return campaign


# --------------------------------------------------------------------------------------------------------------
# What the assignment page shows


@dataclass(frozen=True)
class TopicAssignments:
    topic: Topic
    workload: int
    current: list[CountedAssignment]  # active, full-pool assignments of either phase
    slices: list[CountedAssignment]  # active overlap slices
    former: list[CountedAssignment]  # deactivated assignments
    judged: list[tuple[str, int, bool]]  # (assessor, judgments, still assigned) for everyone who judged it


@dataclass(frozen=True)
class AssessorLoad:
    username: str
    topics: int
    judgments: int
    hours: float
    share: float  # of the largest load, for the bar


@dataclass(frozen=True)
class AssignmentOverview:
    topics: list[TopicAssignments]
    loads: list[AssessorLoad]
    assessors: list[User]


class _ItemCount(TypedDict):
    item_count: int  # an overlap slice's size


CountedAssignment: TypeAlias = "WithAnnotations[Assignment, _ItemCount]"


def list_assignments(*, campaign: Campaign, active_only: bool = False) -> QuerySet[CountedAssignment]:
    """The campaign's assignments with topic, assessor, who assigned them and ``item_count`` (an overlap's size)."""
    rows = Assignment.objects.filter(topic__campaign=campaign)
    if active_only:
        rows = rows.filter(active=True)
    return (
        rows.select_related("topic", "assessor", "assigned_by")
        .annotate(item_count=Count("items"))
        .order_by("topic__position", "topic__number", "assessor__username")
    )


def assignment_overview(*, campaign: Campaign) -> AssignmentOverview:
    """Every topic with its assessors, former assessors and judgments per assessor, plus each assessor's main-phase
    load: four queries, however many topics and assessors."""
    topics = list(Topic.objects.filter(campaign=campaign).annotate(n=workload_count(campaign)).order_by("position", "number"))
    by_topic: dict[int, list[CountedAssignment]] = defaultdict(list)
    for a in list_assignments(campaign=campaign):
        by_topic[a.topic_id].append(a)
    # Judged: with a value of the scheme's primary dimension (what the pool's judged count goes by), so a judgment
    # that holds only a note or a flag is not counted as done.
    judged: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for topic_id, username, n in (
        Judgment.objects.filter(topic__campaign=campaign, labels__has_key=campaign.label_scheme.primary.name)
        .exclude(source=Judgment.Source.DUPLICATE)
        .values_list("topic_id", "assessor__username")
        .annotate(n=Count("pk"))
        .order_by("topic_id", "assessor__username")
    ):
        judged[topic_id].append((username, n))

    rows = []
    load: defaultdict[str, int] = defaultdict(int)
    topic_count: defaultdict[str, int] = defaultdict(int)
    for topic in topics:
        mine = by_topic[topic.pk]
        current = [a for a in mine if a.active and a.scope == Assignment.Scope.FULL]
        slices = [a for a in mine if a.active and a.scope == Assignment.Scope.OVERLAP]
        active = {a.assessor.username for a in current + slices}
        rows.append(
            TopicAssignments(
                topic=topic, workload=topic.n, current=current, slices=slices,
                former=[a for a in mine if not a.active],
                judged=[(name, n, name in active) for name, n in judged[topic.pk]],
            )
        )
        for a in current:
            if a.phase == Phase.MAIN:
                load[a.assessor.username] += topic.n
                topic_count[a.assessor.username] += 1
        for a in slices:
            load[a.assessor.username] += a.item_count
    largest = max(load.values(), default=0) or 1
    seconds = campaign.seconds_per_judgment
    loads = [
        AssessorLoad(name, topic_count[name], n, round(n * seconds / 3600, 1), n / largest)
        for name, n in sorted(load.items())
    ]
    assessors = list(User.objects.filter(is_active=True).order_by("username"))
    return AssignmentOverview(topics=rows, loads=loads, assessors=assessors)
