"""Reads for the discussion: the flagged and noted judgments of a campaign with their replies (the organisers'
page), and the replies an assessor may see (their judge page and My work).

A judgment stays discussed once it has a reply, even after its assessor takes the flag and the note away (as
they do once a question is settled): otherwise the thread would vanish for both sides.

Training stays blind: an assessor sees replies on a training judgment only once its round is closed, since a
reply could tell them how the others labelled it.
"""

from collections.abc import Collection
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from accounts.models import User
from assessments.models import Assignment, Campaign, Judgment, Phase, Reply

STATUSES = ("open", "resolved")


@dataclass(frozen=True)
class DiscussionItem:
    judgment: Judgment  # with assessor, topic and document (its body deferred), and `replies` in order
    show_labels: bool

    @property
    def status(self) -> str:
        replies = self.judgment.replies.all()
        return "resolved" if replies and replies[len(replies) - 1].resolves else "open"


def is_discussed() -> Q:
    """The condition on judgments that makes one a discussion: a flag, a note or a reply."""
    return Q(flagged=True) | ~Q(note="") | Q(Exists(Reply.objects.filter(judgment=OuterRef("pk"))))


def discussed_judgments(campaign: Campaign) -> QuerySet[Judgment]:
    """The campaign's judgments that carry a flag, a note or replies (copies made for duplicates left out: the
    original carries the same), in topic, document and assessor order, with their replies: three queries in all."""
    return (
        Judgment.objects.filter(topic__campaign=campaign)
        .filter(is_discussed())
        .exclude(source=Judgment.Source.DUPLICATE)
        .select_related("assessor", "topic", "document")
        .defer("document__body", "document__metadata")
        .prefetch_related(Prefetch("replies", queryset=Reply.objects.select_related("author").order_by("created_at", "id")))
        .order_by("topic__position", "topic__number", "document__doc_id", "assessor__username")
    )


def discussion(
    *, campaign: Campaign, topic: str = "", assessor: str = "", phase: str = "", status: str = "",
    named_phases: Collection[str],
) -> list[DiscussionItem]:
    """The discussion, narrowed by topic number, assessor name, phase and status (open or resolved).
    `named_phases`: the phases whose labels the viewer may see by assessor (access.named_label_phases)."""
    judgments = discussed_judgments(campaign)
    if topic:
        judgments = judgments.filter(topic__number=topic)
    if assessor:
        judgments = judgments.filter(assessor__username=assessor)
    if phase in (Phase.TRAINING, Phase.MAIN):
        judgments = judgments.filter(phase=phase)
    items = [DiscussionItem(j, show_labels=j.phase in named_phases) for j in judgments]
    return [item for item in items if item.status == status] if status in STATUSES else items


def replies_visible(assignment: Assignment, campaign: Campaign) -> bool:
    """Whether the assessor of `assignment` may read replies on its judgments now (see the module docstring)."""
    if assignment.phase == Phase.MAIN:
        return True
    return assignment.round < campaign.training_round or campaign.phase in (Phase.MAIN, Phase.CLOSED)


def replies_for_judge_page(assignment: Assignment, document_id: int, *, has_replies: bool) -> list[Reply]:
    """The replies to the assessor's own judgment of this document, when they may see them. No query unless it
    has replies (`QueuePosition.has_replies`), so the judge page costs the same otherwise."""
    if not has_replies:
        return []
    if not replies_visible(assignment, assignment.topic.campaign):
        return []
    return list(
        Reply.objects.filter(
            judgment__assessor_id=assignment.assessor_id, judgment__topic_id=assignment.topic_id, judgment__document_id=document_id
        ).select_related("author").order_by("created_at", "id")
    )


@dataclass(frozen=True)
class ReplyNotice:
    reply: Reply
    assignment: Assignment


def replies_for_assessor(user: User) -> list[ReplyNotice]:
    """Replies to the user's judgments that they may read, newest first, each with the assignment to open the
    document in: one query, or two when there are replies."""
    replies = list(
        Reply.objects.filter(judgment__assessor=user)
        .select_related("author", "judgment__topic__campaign", "judgment__document")
        .defer("judgment__document__body", "judgment__document__metadata")
        .order_by("-created_at", "-id")[:50]
    )
    if not replies:
        return []
    assignments = {
        (a.topic_id, a.phase): a
        for a in Assignment.objects.filter(assessor=user, topic_id__in={r.judgment.topic_id for r in replies})
    }
    notices = []
    for r in replies:
        assignment = assignments.get((r.judgment.topic_id, r.judgment.phase))
        if assignment and replies_visible(assignment, r.judgment.topic.campaign):
            notices.append(ReplyNotice(r, assignment))
    return notices
