"""Adjudication: the final label of a document its assessors disagreed on (or flagged), decided by an adjudicator.

The only write path for Adjudication: every decision appends an AdjudicationEvent (its history) and an audit
event, in one transaction. The assessors' own judgments are never touched, so both histories stay whole and the
qrels can be exported with or without the decisions (rules ``adjudicated`` and ``majority``).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db import transaction

from accounts.models import User
from assessments.labels import Value
from assessments.models import Adjudication, AdjudicationEvent, Document, Judgment, Topic
from assessments.services import audit


class AdjudicationError(ValueError):
    """A decision that cannot be recorded as given (the message says why)."""


@dataclass(frozen=True)
class Decision:
    """The final labels (dimension of the campaign's scheme -> value; a dimension left undecided is absent) and why."""

    labels: Mapping[str, Value] = field(default_factory=dict)
    reason: str = ""


@transaction.atomic
def adjudicate(*, topic: Topic, document: Document, decision: Decision, by: User) -> Adjudication:
    """Record (or revise) the final label of `document` for `topic`.

    The caller has checked that `by` adjudicates the campaign (assessments.access). A document nobody judged has
    nothing to decide; the labels follow the campaign's scheme as an assessor's saved on the judge page do (its
    values and its conditions: no quality for a document decided not relevant), and they must be complete (every
    required dimension that is asked), since the decision replaces the assessors' labels in the adjudicated qrels;
    the reason is required, because the decision will be questioned later. Saving the same decision again changes
    nothing.
    """
    campaign = topic.campaign
    scheme = campaign.label_scheme
    labels = dict(decision.labels)
    reason = decision.reason.strip()
    problems = scheme.errors(labels, conditions=True)
    if not problems and not scheme.complete(labels):
        missing = [d.title for d in scheme.asked(labels) if d.required and d.name not in labels]
        problems.append(f"decide {', '.join(missing)}")
    if not reason:
        problems.append("give a reason for the decision")
    if problems:
        raise AdjudicationError("; ".join(problems))
    if not Judgment.objects.filter(topic=topic, document=document).exists():
        raise AdjudicationError(f"nobody judged {document.doc_id} for topic {topic.number}: there is nothing to adjudicate")

    decided = {"labels": labels, "reason": reason}
    current = Adjudication.objects.select_for_update().filter(topic=topic, document=document).first()
    before = {"labels": current.labels, "reason": current.reason} if current else None
    if current is None:
        current = Adjudication.objects.create(topic=topic, document=document, adjudicator=by, **decided)
    elif before == decided:
        return current
    else:
        current.labels, current.reason, current.adjudicator = labels, reason, by
        current.revision += 1
        current.save(update_fields=["labels", "reason", "adjudicator", "revision", "updated_at"])
    AdjudicationEvent.objects.create(adjudication=current, adjudicator=by, revision=current.revision, **decided)
    audit.record(
        campaign=campaign, action=audit.Action.ADJUDICATED, by=by, subject=f"topic {topic.number}, {document.doc_id}",
        before=before, after=decided, details={"revision": current.revision},
    )
    return current
