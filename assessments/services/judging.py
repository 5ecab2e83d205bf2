"""Recording labels. The only write path for Judgment, so every change is kept in its history."""

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from accounts.models import User
from assessments.models import Document, Judgment, JudgmentEvent, Topic


class JudgmentError(ValueError):
    """Labels the campaign's scheme does not allow (the message lists what is wrong)."""


@dataclass(frozen=True)
class Labels:
    relevance: int
    quality: int | None = None
    stance: str = ""
    note: str = ""
    flagged: bool = False


_LABEL_FIELDS = ("relevance", "quality", "stance", "note", "flagged")


@transaction.atomic
def record_judgment(
    *,
    topic: Topic,
    document: Document,
    assessor: User,
    labels: Labels,
    phase: str,
    time_spent_ms: int = 0,
    source: str = Judgment.Source.WEB,
) -> Judgment:
    """Store the assessor's current labels and append a JudgmentEvent when anything changed.

    Idempotent: saving the same labels again (a client retrying after a network failure) adds no
    revision. `time_spent_ms` is the client's running total of active time on the document, so a
    retry cannot count the same seconds twice; the larger total wins. The caller has checked that
    the assessor may judge this document (assessments.access).
    """
    problems = topic.campaign.label_scheme.errors(relevance=labels.relevance, quality=labels.quality, stance=labels.stance)
    if problems:
        raise JudgmentError("; ".join(problems))
    judgment = Judgment.objects.select_for_update().filter(topic=topic, document=document, assessor=assessor).first()
    if judgment is None:
        try:
            with transaction.atomic():
                judgment = Judgment.objects.create(
                    topic=topic, document=document, assessor=assessor, phase=phase,
                    time_spent_ms=time_spent_ms, source=source, revision=1, **_as_fields(labels),
                )
        except IntegrityError:
            # A concurrent first save of the same judgment won the race: update it instead.
            judgment = Judgment.objects.select_for_update().get(topic=topic, document=document, assessor=assessor)
        else:
            _append_event(judgment, assessor)
            return judgment

    changed = [f for f, v in _as_fields(labels).items() if getattr(judgment, f) != v]
    longer = time_spent_ms > judgment.time_spent_ms
    if not changed and not longer:
        return judgment
    update = ["time_spent_ms", "updated_at"]
    judgment.time_spent_ms = max(judgment.time_spent_ms, time_spent_ms)
    if changed:
        for field in changed:
            setattr(judgment, field, getattr(labels, field))
        judgment.revision += 1
        judgment.source = source
        update += [*changed, "revision", "source"]
    judgment.save(update_fields=update)
    if changed:
        _append_event(judgment, assessor)
    return judgment


def _as_fields(labels: Labels) -> dict:
    return {f: getattr(labels, f) for f in _LABEL_FIELDS}


def _append_event(judgment: Judgment, assessor: User) -> None:
    JudgmentEvent.objects.create(
        judgment=judgment, assessor=assessor, revision=judgment.revision, time_spent_ms=judgment.time_spent_ms,
        source=judgment.source, **{f: getattr(judgment, f) for f in _LABEL_FIELDS},
    )
