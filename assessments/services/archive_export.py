"""A whole campaign in one file (formats.archive): its settings and label scheme, members, topics, the documents it
pooled or judged (with their text), runs, pool, assignments, every judgment with its full history and replies,
adjudications with theirs, machine judges with their prompt versions, every machine label with its provenance and
each showing of one to an assessor, qrels snapshots and the audit trail. `import_campaign`
(services.archive_import) reads it back into this install or another.

Memory stays flat whatever the campaign's size: every member is written as its rows arrive from a server-side
cursor (`.iterator()`), and a record's children (a judgment's history and replies, an entry's sources) are
merged in from a second cursor ordered by the parent's id. Everything is read in one REPEATABLE READ
transaction, so the archive is the campaign at one instant even while assessors go on judging.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.db import connection, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.models import User
from assessments.formats.archive import MEMBERS, ArchiveWriter, snapshot_file
from assessments.models import (
    Adjudication,
    AdjudicationEvent,
    Assignment,
    AssignmentItem,
    AuditEvent,
    Campaign,
    Document,
    JudgePrompt,
    Judgment,
    JudgmentEvent,
    MachineExposure,
    MachineJudge,
    MachineLabel,
    Membership,
    PoolEntry,
    PoolSource,
    QrelsSnapshot,
    QrelsSnapshotPart,
    Ranking,
    Reply,
    Run,
    Topic,
)
from assessments.services import audit
from assessments.services.jobs import NoProgress, Progress

ROWS_PER_FETCH = 2000
_JUDGMENT_LABELS = ("labels", "note", "flagged", "time_spent_ms", "source")


@dataclass(frozen=True)
class ExportedArchive:
    path: Path
    bytes: int
    sha256: str
    records: dict[str, int]  # member -> records (lines) written

    @property
    def text(self) -> str:
        names = {"topics.jsonl": "topics", "judgments.jsonl": "judgments", "audit.jsonl": "audit events"}
        counts = ", ".join(f"{self.records[member]:,} {name}" for member, name in names.items())
        return f"wrote {self.path} ({self.bytes:,} bytes, sha256 {self.sha256}): {counts}"


def export_campaign(*, campaign: Campaign, path: Path, by: User | None = None, progress: Progress | None = None) -> ExportedArchive:
    """Write the campaign's archive to `path` and record the export in the audit trail (with the file's sha256,
    which the import of the file records too, so the two can be matched).

    The file appears only once complete: it is written beside `path` under a temporary name and renamed.
    """
    progress = progress or NoProgress()
    path = Path(path)
    descriptor, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as stream, _one_instant():
            manifest = _write(campaign, ArchiveWriter(stream), progress)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    with open(path, "rb") as written:
        sha256 = hashlib.file_digest(written, "sha256").hexdigest()
    records = {member["name"]: member["records"] for member in manifest["members"] if member["name"] in MEMBERS}
    exported = ExportedArchive(path=path, bytes=path.stat().st_size, sha256=sha256, records=records)
    with transaction.atomic():
        audit.record(
            campaign=campaign, action=audit.Action.EXPORTED, by=by, subject=path.name,
            details={"file": path.name, "bytes": exported.bytes, "sha256": sha256, "records": records},
        )
    return exported


@contextmanager
def _one_instant() -> Iterator[None]:
    """A transaction that sees the database as it was at its first query (PostgreSQL's REPEATABLE READ), unless
    the caller's transaction is open already (its own snapshot then holds). SQLite transactions see one state."""
    fresh = not connection.in_atomic_block
    with transaction.atomic():
        if fresh and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def _write(campaign: Campaign, writer: ArchiveWriter, progress: Progress) -> dict:
    campaign = Campaign.objects.select_related("collection").get(pk=campaign.pk)  # as of this transaction's instant
    members = _members(campaign)
    total = sum(query.count() for query in _counted(campaign))
    done = 0
    for name in MEMBERS:
        with writer.member(name) as member:
            for value in members[name]:
                member.write(value)
                done += 1
                if done % 1000 == 0:
                    progress.advance(done, total)
    for number, pk in QrelsSnapshot.objects.filter(campaign=campaign).order_by("number").values_list("number", "pk"):
        with writer.member(snapshot_file(number)) as member:
            # One part (a megabyte) per fetch.
            for data in QrelsSnapshotPart.objects.filter(snapshot_id=pk).order_by("index").values_list("data", flat=True).iterator(chunk_size=1):
                member.write_bytes(bytes(data))
    progress.advance(total, total)
    migration = MigrationRecorder.Migration.objects.filter(app="assessments").order_by("-id").values_list("name", flat=True).first()
    return writer.finish(campaign=campaign.slug, exported_at=timezone.now(), schema=f"assessments.{migration}")


def _counted(campaign: Campaign) -> list[QuerySet]:
    """The queries whose rows become records, for the progress bar's total."""
    return [
        _users(campaign), Membership.objects.filter(campaign=campaign), Topic.objects.filter(campaign=campaign),
        _documents(campaign), Run.objects.filter(campaign=campaign), Ranking.objects.filter(run__campaign=campaign),
        PoolEntry.objects.filter(topic__campaign=campaign), Assignment.objects.filter(topic__campaign=campaign),
        Judgment.objects.filter(topic__campaign=campaign), Adjudication.objects.filter(topic__campaign=campaign),
        MachineJudge.objects.filter(campaign=campaign), MachineLabel.objects.filter(judge__campaign=campaign),
        MachineExposure.objects.filter(label__judge__campaign=campaign), QrelsSnapshot.objects.filter(campaign=campaign),
        AuditEvent.objects.filter(campaign=campaign),
    ]


def _members(campaign: Campaign) -> dict[str, Iterable[dict]]:
    """Each member's records, as lazy iterators: nothing is read before its member is written."""
    c = campaign
    machine_labels, machine_exposures = _machine_labels(c)
    return {
        "campaign.jsonl": [_campaign(c)],
        "users.jsonl": _rows(_users(c).order_by("username"), "username", "role", "first_name", "last_name"),
        "memberships.jsonl": _rows(
            Membership.objects.filter(campaign=c).order_by("user__username"),
            user="user__username", role="role", added_by="added_by__username", created_at="created_at",
        ),
        "topics.jsonl": _rows(
            Topic.objects.filter(campaign=c).order_by("position", "number"),
            "number", "title", "description", "narrative", "compared_objects", "cause", "effect", "is_training", "pool_seed", "position",
            "metadata",
        ),
        "documents.jsonl": _rows(
            _documents(c).order_by("doc_id"), "doc_id", "title", "body", "is_html", "url", "metadata", "has_text", "text_hash",
            fetch=200,  # bodies are long
        ),
        "runs.jsonl": _rows(
            Run.objects.filter(campaign=c).order_by("tag"),
            "tag", "team", "file_name", "has_stance", "line_count", "warnings", uploaded_by="uploaded_by__username",
            uploaded_at="uploaded_at", predictions="predictions",
        ),
        "rankings.jsonl": _rows(
            Ranking.objects.filter(run__campaign=c).order_by("run__tag", "topic__position", "topic__number"),
            "length", "docs", "ranks", "scores", "stances", "by_rank", "by_single", run="run__tag", topic="topic__number",
            fetch=100,  # a thousand lines each
        ),
        "pool.jsonl": _nested(
            _rows(
                PoolEntry.objects.filter(topic__campaign=c).order_by("pk"),
                "order", "strategy", "added_at", _id="pk", topic="topic__number", doc="document__doc_id",
                duplicate_of="duplicate_of__document__doc_id",
            ),
            sources=_rows(
                PoolSource.objects.filter(entry__topic__campaign=c).order_by("entry_id", "run__tag"),
                "rank_position", "score_position", _parent="entry_id", run="run__tag",
            ),
        ),
        "assignments.jsonl": _nested(
            _rows(
                Assignment.objects.filter(topic__campaign=c).order_by("pk"),
                "phase", "scope", "round", "active", "created_at", _id="pk", topic="topic__number",
                assessor="assessor__username", assigned_by="assigned_by__username",
            ),
            items=(
                (parent, doc) for parent, doc in
                AssignmentItem.objects.filter(assignment__topic__campaign=c).order_by("assignment_id", "entry__order", "entry_id")
                .values_list("assignment_id", "entry__document__doc_id").iterator(chunk_size=ROWS_PER_FETCH)
            ),
        ),
        "judgments.jsonl": _nested(
            _rows(
                Judgment.objects.filter(topic__campaign=c).order_by("pk"),
                "phase", *_JUDGMENT_LABELS, "revision", "created_at", "updated_at",
                _id="pk", topic="topic__number", doc="document__doc_id", assessor="assessor__username",
            ),
            history=_rows(
                JudgmentEvent.objects.filter(judgment__topic__campaign=c).order_by("judgment_id", "revision"),
                "revision", *_JUDGMENT_LABELS, "at", _parent="judgment_id", assessor="assessor__username",
            ),
            replies=_rows(
                Reply.objects.filter(judgment__topic__campaign=c).order_by("judgment_id", "created_at", "pk"),
                "text", "resolves", "created_at", _parent="judgment_id", author="author__username",
            ),
        ),
        "adjudications.jsonl": _nested(
            _rows(
                Adjudication.objects.filter(topic__campaign=c).order_by("pk"),
                "labels", "reason", "revision", "created_at", "updated_at",
                _id="pk", topic="topic__number", doc="document__doc_id", adjudicator="adjudicator__username",
            ),
            history=_rows(
                AdjudicationEvent.objects.filter(adjudication__topic__campaign=c).order_by("adjudication_id", "revision"),
                "revision", "labels", "reason", "at", _parent="adjudication_id", adjudicator="adjudicator__username",
            ),
        ),
        "machine_judges.jsonl": _nested(
            _rows(
                MachineJudge.objects.filter(campaign=c).order_by("pk"),
                "name", "kind", "base_url", "model", "key_name", "parameters", "in_flight", "per_minute", "max_attempts",
                "thresholds", "created_at", _id="pk", created_by="created_by__username",
            ),
            prompts=_rows(
                JudgePrompt.objects.filter(judge__campaign=c).order_by("judge_id", "dimension", "version"),
                "dimension", "version", "system", "template", "answers", "created_at", _parent="judge_id",
                created_by="created_by__username",
            ),
        ),
        "machine_labels.jsonl": machine_labels,
        "machine_exposures.jsonl": machine_exposures,
        "snapshots.jsonl": (
            {**row, "file": snapshot_file(row["number"])}
            for row in _rows(
                QrelsSnapshot.objects.filter(campaign=c).order_by("number"),
                "number", "kind", "phase", "rule", "line_count", "sha256", "created_at", created_by="created_by__username",
            )
        ),
        # In the order things happened; imported in the same order, the timeline reads the same.
        "audit.jsonl": _rows(
            AuditEvent.objects.filter(campaign=c).order_by("at", "pk"),
            "at", "action", "subject", "before", "after", "details", actor="actor__username",
        ),
    }


def _campaign(campaign: Campaign) -> dict:
    fields = (
        "slug", "name", "preset", "scheme", "guidelines", "phase", "training_round", "propagate_to_duplicates",
        "seconds_per_judgment", "agreement_threshold", "overlap_share", "stance_codes", "kind", "reveal_machine_labels",
        "machine_disagreement", "created_at", "archived_at",
    )
    collection = campaign.collection
    return {**{name: getattr(campaign, name) for name in fields}, "collection": {"slug": collection.slug, "name": collection.name}}


def _machine_labels(campaign: Campaign) -> tuple[Iterator[dict], Iterator[dict]]:
    """The records of machine_labels.jsonl and of machine_exposures.jsonl, which names the label an assessor was
    shown by its line in machine_labels.jsonl: the lines of the labels shown to someone are noted as the labels are
    written, before the exposures, so that no other label's line is held."""
    lines: dict[int, int] = {}

    def labels() -> Iterator[dict]:
        shown = set(MachineExposure.objects.filter(label__judge__campaign=campaign).values_list("label_id", flat=True))
        rows = _rows(
            MachineLabel.objects.filter(judge__campaign=campaign).order_by("pk"),
            "dimension", "prompt_version", "status", "labels", "model", "parameters", "raw_answer", "reason", "error",
            "attempts", "prompt_tokens", "completion_tokens", "duration_ms", "at",
            _id="pk", judge="judge__name", topic="topic__number", doc="document__doc_id",
        )
        for line, label in enumerate(rows, 1):
            if (pk := label.pop("_id")) in shown:
                lines[pk] = line
            yield label

    def exposures() -> Iterator[dict]:
        for exposure in _rows(
            MachineExposure.objects.filter(label__judge__campaign=campaign).order_by("pk"),
            "at", _label="label_id", assessor="assessor__username", topic="topic__number", doc="document__doc_id",
        ):
            exposure["label"] = lines[exposure.pop("_label")]
            yield exposure

    return labels(), exposures()


def _users(campaign: Campaign) -> QuerySet[User]:
    """Everyone a record of the campaign names: members, assessors, adjudicators, authors and actors."""
    c = campaign
    named_by = [
        Membership.objects.filter(campaign=c).values("user"), Membership.objects.filter(campaign=c).values("added_by"),
        Assignment.objects.filter(topic__campaign=c).values("assessor"),
        Assignment.objects.filter(topic__campaign=c).values("assigned_by"),
        Judgment.objects.filter(topic__campaign=c).values("assessor"),
        JudgmentEvent.objects.filter(judgment__topic__campaign=c).values("assessor"),
        Reply.objects.filter(judgment__topic__campaign=c).values("author"),
        AdjudicationEvent.objects.filter(adjudication__topic__campaign=c).values("adjudicator"),
        Adjudication.objects.filter(topic__campaign=c).values("adjudicator"),
        Run.objects.filter(campaign=c).values("uploaded_by"), QrelsSnapshot.objects.filter(campaign=c).values("created_by"),
        MachineJudge.objects.filter(campaign=c).values("created_by"), JudgePrompt.objects.filter(judge__campaign=c).values("created_by"),
        MachineExposure.objects.filter(label__judge__campaign=c).values("assessor"), AuditEvent.objects.filter(campaign=c).values("actor"),
    ]
    where = Q()
    for ids in named_by:
        where |= Q(pk__in=ids)
    return User.objects.filter(where)


def _documents(campaign: Campaign) -> QuerySet[Document]:
    """The collection's documents the campaign pooled, judged, adjudicated or had a machine judge label or show
    (runs name documents by id only)."""
    c = campaign
    return Document.objects.filter(
        Q(pk__in=PoolEntry.objects.filter(topic__campaign=c).values("document"))
        | Q(pk__in=Judgment.objects.filter(topic__campaign=c).values("document"))
        | Q(pk__in=Adjudication.objects.filter(topic__campaign=c).values("document"))
        | Q(pk__in=MachineLabel.objects.filter(judge__campaign=c).values("document"))
        | Q(pk__in=MachineExposure.objects.filter(label__judge__campaign=c).values("document"))
    )


def _rows(query: QuerySet, *fields: str, fetch: int = ROWS_PER_FETCH, **renamed: str) -> Iterator[dict]:
    """The query's rows as records: `fields` under their own names, `renamed` as key=lookup (`_id` and `_parent`
    carry the keys `_nested` merges by and are not written)."""
    keys = (*fields, *renamed)
    for row in query.values_list(*fields, *renamed.values()).iterator(chunk_size=fetch):
        yield dict(zip(keys, row))


def _nested(parents: Iterator[dict], **children: Iterable) -> Iterator[dict]:
    """Each parent (ordered by `_id`) with its children under the given keys: lists of records (with `_parent`)
    or of values (from (parent id, value) pairs), each stream ordered by parent id. One pass over every stream."""
    heads = {key: _Children(rows) for key, rows in children.items()}
    for parent in parents:
        pk = parent.pop("_id")
        for key, stream in heads.items():
            parent[key] = stream.of(pk)
        yield parent


class _Children:
    def __init__(self, rows: Iterable) -> None:
        self._rows = iter(rows)
        self._next = next(self._rows, None)

    def of(self, parent: int) -> list:
        found = []
        while self._next is not None:
            row = self._next
            key = row["_parent"] if isinstance(row, dict) else row[0]
            if key > parent:
                break
            if key == parent:
                if isinstance(row, dict):
                    del row["_parent"]
                    found.append(row)
                else:
                    found.append(row[1])
            self._next = next(self._rows, None)
        return found
