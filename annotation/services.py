"""Saving a label from the assessor's workspace (judge page or API client)."""

from functools import partial

from django.db import transaction

from assessments.models import Assignment, Judgment, Phase, PoolEntry
from assessments.services import pooling
from assessments.services.judging import JudgmentError, Labels, record_judgment


class JudgingClosed(ValueError):
    """The campaign no longer takes labels (it is closed)."""


def judge_entry(
    *, assignment: Assignment, entry: PoolEntry, labels: Labels, time_spent_ms: int, source: str = Judgment.Source.WEB
) -> Judgment:
    """Record the assessor's labels for one entry of their assignment and copy them to its twins
    (exact or near duplicates in the pool, when the campaign propagates labels to duplicates).

    The caller resolved `assignment` and `entry` through assessments.access (so the assessor may
    judge this entry). Quality and stance are refused for non-relevant documents when the
    campaign asks them only of relevant ones, as Touché did: a stance on an off-topic page is
    meaningless, and a client that sends one has misread the scheme. Safe to repeat
    (record_judgment is idempotent), which is what the judge page's retries rely on.
    """
    campaign = assignment.topic.campaign
    if campaign.phase == Phase.CLOSED:
        raise JudgingClosed(f"campaign {campaign.name!r} is closed and takes no more labels")
    if campaign.ask_details_only_if_relevant and labels.relevance <= 0 and (labels.quality is not None or labels.stance):
        raise JudgmentError("quality and stance are asked only of relevant documents (relevance above 0)")
    record = partial(
        record_judgment, topic=assignment.topic, document=entry.document, assessor=assignment.assessor, labels=labels,
        phase=assignment.phase, time_spent_ms=time_spent_ms, source=source,
    )
    if not campaign.propagate_to_duplicates:
        return record()  # its own transaction; no savepoint round trips on the hottest write
    with transaction.atomic():  # the twins get the label with the original, or none of them does
        judgment = record()
        judgment.topic, judgment.assessor = assignment.topic, assignment.assessor  # loaded already: no queries again
        pooling.propagate_to_twins(judgment=judgment, entry=entry)
    return judgment
