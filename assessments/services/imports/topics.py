"""Importing a campaign's topics from a topics file: Touché's XML, or number<TAB>title lines; plain or gzip."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.db.models import Count

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.formats.qrels import topic_sort_key
from assessments.formats.topics import parse_topic_file
from assessments.models import Campaign, Topic
from assessments.models.fields import max_length
from assessments.services import audit, bulk
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.files import input_files, opened
from assessments.services.jobs import NoProgress, Progress

TOPICS_MAX_BYTES = 20_000_000  # far above any real topics file (Touché's are ~100 kB); bounds what is read

_TOPIC_NUMBER_LENGTH = max_length(Topic, "number")
_CONTENT_FIELDS = ("title", "description", "narrative", "compared_objects", "cause", "effect")
_TOPIC_FIELDS = (*_CONTENT_FIELDS, "position")


@dataclass(frozen=True)
class TopicChange:
    """A judged topic that the file would change: its number, how many judgments it has, and field -> (old, new)."""

    number: str
    judgments: int
    fields: dict[str, tuple]

    def describe(self) -> str:
        changes = "; ".join(f"{field} {_shown(old)} → {_shown(new)}" for field, (old, new) in self.fields.items())
        return f"topic {self.number} ({self.judgments} judgment{'s' if self.judgments != 1 else ''}): {changes}"


def changes_digest(changes: list[TopicChange]) -> str:
    """A fingerprint of exactly these changes, values in full (`describe` shortens them), to tie a confirmation
    to the changes that were listed when it was asked for."""
    listed = [[c.number, sorted([field, old, new] for field, (old, new) in c.fields.items())] for c in changes]
    return hashlib.sha256(json.dumps(listed, ensure_ascii=False).encode()).hexdigest()


class JudgedTopicsWouldChange(ImportProblem):
    """The file changes topics that already have judgments, and the organiser has not confirmed it (or confirmed
    other changes than these: the campaign's topics changed since)."""

    def __init__(self, source: str, changes: list[TopicChange], *, stale: bool = False) -> None:
        self.changes = changes
        since = "the judged topics changed since the changes were confirmed: " if stale else ""
        self.problems = [
            f"{source}: {since}{len(changes)} judged topic{'s' if len(changes) != 1 else ''} would change; nothing was "
            "imported. Import again with the changes allowed (--allow-changes, or confirm on the page) to apply them:",
            *(change.describe() for change in changes),
        ]
        self.result = {"confirm": "allow_changes", "changes": [c.number for c in changes], "digest": changes_digest(changes)}
        super().__init__(" ".join(self.problems))


def _shown(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 1]}…"


def import_topics(
    *,
    campaign: Campaign,
    path: str | Path,
    name: str | None = None,
    allow_changes: bool = False,
    confirmed_changes: str | None = None,
    by: User | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Create or update the campaign's topics from a topics file (Touché XML or number<TAB>title lines, plain or
    gzip), matched by number.

    A topic with judgments is never changed silently: its assessors judged what it said. Unless `allow_changes`,
    a file that would change a judged topic's title, description, narrative, objects, cause or effect is
    refused with each change listed (JudgedTopicsWouldChange) and nothing is stored; allowed, each such change is
    an audit event with the values before and after. `confirmed_changes`, the digest of a refusal
    (`result["digest"]`), allows exactly the changes that refusal listed: if they differ now, the import is refused
    again with the changes it would make now. New topics, unchanged ones and topics nobody judged yet
    import as they always did.

    A re-import never deletes: a topic missing from the new file may already have pools and judgments, and
    deleting it would lose them. Such topics are kept and listed in a warning, so the organiser can decide.
    """
    progress = progress or NoProgress()
    source = input_files([path], None if name is None else [name])[0]
    with opened(source) as (_, stream):
        data = stream.read(TOPICS_MAX_BYTES + 1)  # parse_topic_file refuses more: never read (or gunzip) a huge file whole
    progress.advance(0, len(data))
    records = parse_topic_file(data, source=source.name, max_bytes=TOPICS_MAX_BYTES)
    for record in records:
        if len(record.number) > _TOPIC_NUMBER_LENGTH:
            raise FormatError(source.name, record.line, f"topic number {record.number!r} is longer than {_TOPIC_NUMBER_LENGTH} characters")
    progress.advance(len(data), len(data))

    with transaction.atomic():
        bulk.lock_campaign(campaign)
        existing = {topic.number: topic for topic in Topic.objects.select_for_update(no_key=True).filter(campaign=campaign)}
        created, changed, before = [], [], {}
        for position, record in enumerate(records):
            values = {
                "title": record.title, "description": record.description, "narrative": record.narrative,
                "compared_objects": list(record.objects), "cause": record.cause, "effect": record.effect,
                "position": position,
            }
            topic = existing.get(record.number)
            if topic is None:
                created.append(Topic(campaign=campaign, number=record.number, **values))
            elif any(getattr(topic, name) != value for name, value in values.items()):
                before[topic.number] = {name: getattr(topic, name) for name in _CONTENT_FIELDS}
                for name, value in values.items():
                    setattr(topic, name, value)
                changed.append(topic)
        judged = dict(
            Topic.objects.filter(pk__in=[t.pk for t in changed], judgments__isnull=False)
            .annotate(n=Count("judgments")).values_list("number", "n")
        )
        content_changes = [
            TopicChange(topic.number, judged[topic.number], {
                field: (before[topic.number][field], getattr(topic, field))
                for field in _CONTENT_FIELDS if before[topic.number][field] != getattr(topic, field)
            })
            for topic in changed if topic.number in judged
        ]
        content_changes = [c for c in content_changes if c.fields]  # a new position alone changes no meaning
        if content_changes and not allow_changes:
            if confirmed_changes is None or confirmed_changes != changes_digest(content_changes):
                raise JudgedTopicsWouldChange(source.name, content_changes, stale=confirmed_changes is not None)
        Topic.objects.bulk_create(created)
        Topic.objects.bulk_update(changed, _TOPIC_FIELDS)
        for change in content_changes:
            audit.record(
                campaign=campaign, action=audit.Action.TOPIC_CHANGED, by=by, subject=f"topic {change.number}",
                before={field: old for field, (old, _) in change.fields.items()},
                after={field: new for field, (_, new) in change.fields.items()},
                details={"judgments": change.judgments, "file": source.name},
            )
        audit.record(
            campaign=campaign, action=audit.Action.TOPICS_IMPORTED, by=by, subject=source.name,
            details={"files": audit.file_checksums([(source.name, source.path)]), "topics": len(records),
                     "created": [t.number for t in created], "updated": [t.number for t in changed]},
        )

    in_file = {record.number for record in records}
    missing = sorted((number for number in existing if number not in in_file), key=topic_sort_key)
    warnings = [
        f"{source.name}: {change.describe()}: changed as confirmed; check that its judgments still hold"
        for change in sorted(content_changes, key=lambda c: topic_sort_key(c.number))
    ]
    text = (
        f"{source.name}: {len(records)} topics ({len(created)} new, {len(changed)} updated, "
        f"{len(records) - len(created) - len(changed)} unchanged)"
    )
    if missing:
        text += f"; {len(missing)} topics not in the file were kept"
        warnings.append(f"{source.name}: {len(missing)} of the campaign's topics are not in this file and were kept: {', '.join(missing)}")
    return ImportSummary(
        text, warnings, {"topics": len(records), "created": len(created), "updated": len(changed), "kept": missing}
    )
