"""Adjudication: the final label of a document its assessors disagreed on (or flagged), decided by an adjudicator.

The only write path for Adjudication: every decision appends an AdjudicationEvent (its history) and an audit
event, in one transaction. The assessors' own judgments are never touched, so both histories stay whole and the
qrels can be exported with or without the decisions (rules ``adjudicated`` and ``majority``).
"""

from dataclasses import dataclass

from django.db import transaction

from accounts.models import User
from assessments.models import Adjudication, AdjudicationEvent, Document, Judgment, Topic
from assessments.services import audit

_LABELS = ("relevance", "quality", "stance")


class AdjudicationError(ValueError):
    """A decision that cannot be recorded as given (the message says why)."""


@dataclass(frozen=True)
class Decision:
    relevance: int
    quality: int | None = None
    stance: str = ""
    reason: str = ""


@transaction.atomic
def adjudicate(*, topic: Topic, document: Document, decision: Decision, by: User) -> Adjudication:
    """Record (or revise) the final label of `document` for `topic`.

    The caller has checked that `by` adjudicates the campaign (assessments.access). A document nobody judged has
    nothing to decide; labels follow the campaign's scheme and rules as an assessor's would; the reason is
    required, because the decision will be questioned later. Saving the same decision again changes nothing.
    """
    campaign = topic.campaign
    reason = decision.reason.strip()
    problems = campaign.label_scheme.errors(relevance=decision.relevance, quality=decision.quality, stance=decision.stance)
    if campaign.ask_details_only_if_relevant and decision.relevance <= 0 and (decision.quality is not None or decision.stance):
        problems.append("quality and stance are given only for relevant documents (relevance above 0)")
    if not reason:
        problems.append("give a reason for the decision")
    if problems:
        raise AdjudicationError("; ".join(problems))
    if not Judgment.objects.filter(topic=topic, document=document).exists():
        raise AdjudicationError(f"nobody judged {document.doc_id} for topic {topic.number}: there is nothing to adjudicate")

    labels = {"relevance": decision.relevance, "quality": decision.quality, "stance": decision.stance}
    current = Adjudication.objects.select_for_update().filter(topic=topic, document=document).first()
    before = {name: getattr(current, name) for name in _LABELS} | {"reason": current.reason} if current else None
    if current is None:
        current = Adjudication.objects.create(topic=topic, document=document, reason=reason, adjudicator=by, **labels)
    elif before == {**labels, "reason": reason}:
        return current
    else:
        for name, value in {**labels, "reason": reason, "adjudicator": by}.items():
            setattr(current, name, value)
        current.revision += 1
        current.save(update_fields=[*_LABELS, "reason", "adjudicator", "revision", "updated_at"])
    AdjudicationEvent.objects.create(adjudication=current, adjudicator=by, revision=current.revision, reason=reason, **labels)
    audit.record(
        campaign=campaign, action=audit.Action.ADJUDICATED, by=by, subject=f"topic {topic.number}, {document.doc_id}",
        before=before, after={**labels, "reason": reason}, details={"revision": current.revision},
    )
    return current
