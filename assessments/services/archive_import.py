"""A campaign archive (formats.archive, written by services.archive_export) stored into this install.

Checks first, then one transaction. Every member is read against the manifest (size, record count, sha256)
before anything is stored; then every record is checked as it is stored: its fields, the users, topics,
documents, runs and pool entries it names (which earlier members, or this install's collection, must hold),
labels against the archived scheme (a machine label's and a judge's prompt's too), and a history that ends at its
judgment's revision with its labels. The first wrong record raises FormatError(`archive:member`, line, what is
wrong) and the transaction stores nothing.
An archive of an earlier format version arrives here already read as the current one (formats.archive: version 1's
label columns as `labels`, its scheme upgraded), so it imports as it would have before.

People are matched by username: a user of this install with the archived name is taken to be that person (their
role, names and password stay as they are here); a name the install lacks becomes an inactive placeholder with
no usable password, which an admin activates. The collection is matched by slug the same way: its documents are
reused by id, those it lacks are added with the archived text, stubs get the archived text, and a document whose
text here differs from the archive's keeps this install's (a warning counts them).

Rows are stored as archived: timestamps, revisions and authors included. They go in with COPY, ids taken from
the tables' sequences first so that a judgment's history and replies, an entry's sources, an assignment's items and
a judge's prompts are written beside it. The database's rules for the record are not switched off: history rows,
prompt versions, machine labels and their showings are only ever inserted (each as it will stay: their tables refuse
any UPDATE), and each judgment arrives with the history row of its current revision, which the deferred trigger of
migration 0008 checks before the import commits, as for any write. PostgreSQL only (COPY).
"""

from __future__ import annotations

import hashlib
import json
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import SimpleNamespace

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Model

from accounts.models import User
from assessments import prompts
from assessments.formats.archive import MEMBERS, ArchiveReader
from assessments.formats.errors import FormatError
from assessments.labels import LabelScheme
from assessments.models import (
    Adjudication,
    AdjudicationEvent,
    Assignment,
    AssignmentItem,
    AuditEvent,
    Campaign,
    Collection,
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
from assessments.services import audit, bulk
from assessments.services.campaigns import CampaignError, check_stance_codes
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.jobs import NoProgress, Progress

BATCH = 2000  # records per COPY
_SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")
_JUDGMENT_LABELS = ("labels", "note", "flagged")  # what the history row of the current revision must repeat
_DOCUMENTS = "touchstone_archive_documents"  # temporary
_PROMPT = ("dimension", "version", "system", "template", "answers", "created_at")  # a prompt version's columns


@dataclass
class _Batch:
    """The rows of some records for one table, with the archive line each row came from."""

    model: type[Model]
    columns: tuple[str, ...]
    rows: list[tuple]
    lines: list[int]
    table: str = ""  # default: the model's

    @property
    def into(self) -> str:
        return self.table or self.model._meta.db_table


def import_campaign(
    *, path: Path, slug: str | None = None, by: User | None = None, progress: Progress | None = None, name: str | None = None
) -> ImportSummary:
    """Store the archive at `path` as a new campaign (under `slug`, else the archived one) and record the import in
    its audit trail, after the archived trail. `name` is how errors name the file (default: its name).

    Raises FormatError for an archive that is corrupt, changed after export or inconsistent, ImportProblem when the
    slug is taken; either way nothing is stored.
    """
    if not bulk.is_postgresql():
        raise ImportProblem("importing a campaign archive needs PostgreSQL (it stores rows with COPY)")
    if slug is not None and not _SLUG.fullmatch(slug):
        raise ImportProblem(f"{slug!r} is not a slug (letters, digits, - and _, at most 64)")
    progress = progress or NoProgress()
    path = Path(path)
    with open(path, "rb") as stream:
        sha256 = hashlib.file_digest(stream, "sha256").hexdigest()
        stream.seek(0)
        reader = ArchiveReader(stream, source=name or path.name)
        total = 2 * sum(member["records"] for member in reader.manifest["members"])
        reader.verify(lambda done, _: progress.advance(done, total))
        with transaction.atomic(), connection.cursor() as cursor:
            restore = _Restore(reader, cursor, progress, done=total // 2, total=total)
            campaign = restore.run(slug)
            audit.record(
                campaign=campaign, action=audit.Action.IMPORTED, by=by, subject=path.name,
                details={
                    "file": path.name, "bytes": path.stat().st_size, "sha256": sha256, "from": reader.manifest.get("campaign"),
                    "exported_at": reader.manifest.get("exported_at"), "records": restore.counts,
                    "placeholders": restore.placeholders,
                },
            )
    progress.advance(total, total)
    counts = restore.counts
    text = (
        f"imported campaign {campaign.slug} from {path.name}: {counts['topics.jsonl']:,} topics, {counts['pool.jsonl']:,} pool "
        f"entries, {counts['judgments.jsonl']:,} judgments with {restore.history:,} history rows, "
        f"{counts['adjudications.jsonl']:,} adjudications, {counts['snapshots.jsonl']:,} qrels snapshots, "
        f"{counts['audit.jsonl']:,} audit events"
    )
    if restore.placeholders:
        text += f"; {len(restore.placeholders)} users created inactive: {', '.join(restore.placeholders)}"
    return ImportSummary(text=text, warnings=restore.warnings, counts={"campaign": campaign.slug, **counts})


class _Restore:
    """One import's state: the ids of what earlier members stored (users, topics, runs, judges and their prompts:
    few; machine labels, eight bytes each), and the counts."""

    def __init__(self, reader: ArchiveReader, cursor, progress: Progress, *, done: int, total: int) -> None:
        self.reader, self.cursor, self.progress, self.done, self.total = reader, cursor, progress, done, total
        self.users: dict[str, int] = {}
        self.topics: dict[str, int] = {}
        self.runs: dict[str, int] = {}
        self.judges: dict[str, int] = {}
        self.prompts: dict[tuple[str, str, int], int] = {}  # (judge, dimension, version) -> id
        self.machine_labels = array("q")  # the id of each line's label, for the exposures that name it by its line
        self.counts: dict[str, int] = {}
        self.placeholders: list[str] = []
        self.warnings: list[str] = []
        self.history = 0
        self.twins: list[tuple[int, int, int, str]] = []  # (entry id, line, topic id, doc id of the entry it twins)

    def run(self, slug: str | None) -> Campaign:
        campaign = self._campaign(slug)
        self.campaign_id, self.collection_id = campaign.pk, campaign.collection_id
        self.scheme = campaign.label_scheme
        bulk.temporary_table(
            self.cursor, _DOCUMENTS,
            "doc_id text UNIQUE, title text, body text, is_html boolean, url text, metadata jsonb, has_text boolean, text_hash text",
        )
        steps = {
            "users.jsonl": self._users, "memberships.jsonl": self._memberships, "topics.jsonl": self._topics,
            "documents.jsonl": self._documents, "runs.jsonl": self._runs, "rankings.jsonl": self._rankings,
            "pool.jsonl": self._pool, "assignments.jsonl": self._assignments, "judgments.jsonl": self._judgments,
            "adjudications.jsonl": self._adjudications, "machine_judges.jsonl": self._machine_judges,
            "machine_labels.jsonl": self._machine_labels, "machine_exposures.jsonl": self._machine_exposures,
            "snapshots.jsonl": self._snapshots, "audit.jsonl": self._audit,
        }
        after = {"documents.jsonl": self._merge_documents, "pool.jsonl": self._link_twins}
        for member in MEMBERS[1:]:  # in the archive's order: a record names only what earlier members hold
            store, self.member = steps[member], member
            self.counts[member] = 0
            for batch in _batches(self.reader.records(member)):
                store(batch)
                self.counts[member] += len(batch)
                self.done += len(batch)
                self.progress.advance(self.done, self.total)
            if member in after:
                after[member]()
        try:
            # The deferred checks (foreign keys, each judgment's history row) now, so a failure is reported here.
            self.cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        except IntegrityError as exc:
            raise FormatError(self.reader.source, None, f"the archive's records do not hold together: {_said(exc)}") from None
        return campaign

    # --- Lookups and errors -------------------------------------------------------------------------------

    def wrong(self, line: int | None, reason: str) -> FormatError:
        return FormatError(self.reader.where(self.member), line, reason)

    def user(self, line: int, name: str | None, *, key: str) -> int | None:
        if name is None:
            return None
        if name not in self.users:
            raise self.wrong(line, f"{key}: user {name!r} is not in users.jsonl")
        return self.users[name]

    def not_a_dimension(self, name: str) -> str | None:
        if self.scheme.has(name):
            return None
        return f"{name!r} is not a dimension of the campaign's scheme ({', '.join(self.scheme.names)})"

    def topic(self, line: int, number: str) -> int:
        if number not in self.topics:
            raise self.wrong(line, f"topic {number!r} is not in topics.jsonl")
        return self.topics[number]

    def documents(self, batch: list[tuple[int, dict]]) -> dict[str, int]:
        """doc id -> Document id for the documents the batch names, one query per batch (a campaign may name a
        million documents: they are never all held); an id the collection lacks is an error at its line."""
        wanted = {record["doc"] for _, record in batch}
        self.cursor.execute(
            f"SELECT doc_id, id FROM {Document._meta.db_table} WHERE collection_id = %s AND doc_id = ANY(%s)",
            [self.collection_id, list(wanted)],
        )
        found = dict(self.cursor.fetchall())
        for line, record in batch:
            if record["doc"] not in found:
                raise self.wrong(line, f"document {record['doc']!r} is neither in documents.jsonl nor in the collection")
        return found

    def store(self, batch: _Batch, *, unique: Sequence[str] = ()) -> None:
        """COPY the batch inside a savepoint. A value longer than its column, or a row whose `unique` columns repeat
        one stored before, is reported at its line; any other refusal names the lines of the batch."""
        if not batch.rows:
            return
        self._check_lengths(batch)
        try:
            with transaction.atomic():
                bulk.copy_values(self.cursor, batch.into, batch.columns, batch.rows)
        except DatabaseError as exc:
            if unique and (line := self._repeated(batch, unique)):
                raise self.wrong(line, f"a second record with the same {', '.join(c.removesuffix('_id') for c in unique)}") from None
            where = batch.lines[0] if len(batch.lines) == 1 else None
            span = "" if where else f" (in lines {batch.lines[0]}–{batch.lines[-1]})"
            raise self.wrong(where, f"refused by the database: {_said(exc)}{span}") from None

    def _check_lengths(self, batch: _Batch) -> None:
        limits = []
        for i, column in enumerate(batch.columns):
            if limit := getattr(batch.model._meta.get_field(column), "max_length", None):
                limits.append((i, column, limit))
        for row, line in zip(batch.rows, batch.lines):
            for i, column, limit in limits:
                if isinstance(row[i], str) and len(row[i]) > limit:
                    raise self.wrong(line, f"{column}: longer than {limit} characters")

    def _repeated(self, batch: _Batch, unique: Sequence[str]) -> int | None:
        """The line of the first row whose `unique` values an earlier row of the batch or a stored row has."""
        at = [batch.columns.index(column) for column in unique]
        keys = [tuple(row[i] for i in at) for row in batch.rows]
        columns = ", ".join(unique)
        values = ", ".join(["(" + ", ".join(["%s"] * len(unique)) + ")"] * len(keys))
        self.cursor.execute(
            f"SELECT {columns} FROM {batch.into} WHERE ({columns}) IN (VALUES {values})",
            [value for key in keys for value in key],
        )
        seen = set(self.cursor.fetchall())
        for key, line in zip(keys, batch.lines):
            if key in seen:
                return line
            seen.add(key)
        return None

    def new_ids(self, model: type[Model], count: int) -> list[int]:
        return bulk.new_ids(self.cursor, model._meta.db_table, count)

    # --- The members, in order ------------------------------------------------------------------------------

    def _campaign(self, slug: str | None) -> Campaign:
        self.member = "campaign.jsonl"
        records = list(islice(self.reader.records(self.member), 2))
        if len(records) != 1:
            raise self.wrong(None, f"holds {len(records)} records where it must hold one")
        line, c = records[0]
        slug = slug or c["slug"]
        if not _SLUG.fullmatch(slug):
            raise self.wrong(line, f"slug: {slug!r} is not a slug")
        if Campaign.objects.filter(slug=slug).exists():
            raise ImportProblem(f"a campaign {slug!r} exists already: import under another slug (--slug NEW)")
        try:
            scheme = LabelScheme.from_json(c["scheme"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self.wrong(line, f"scheme: not a label scheme ({exc})") from None
        try:
            codes = check_stance_codes(scheme, c["stance_codes"])
        except CampaignError as exc:
            raise self.wrong(line, str(exc)) from None
        collection, _ = Collection.objects.get_or_create(slug=c["collection"]["slug"], defaults={"name": c["collection"]["name"]})
        fields = {key: value for key, value in c.items() if key not in ("slug", "scheme", "collection")}
        fields["stance_codes"] = json.dumps(codes)
        (pk,) = self.new_ids(Campaign, 1)
        columns = ("id", "slug", "scheme", "collection_id", *fields)
        self.store(_Batch(Campaign, columns, [(pk, slug, json.dumps(scheme.to_json()), collection.pk, *fields.values())], [line]))
        self.counts[self.member] = 1
        return Campaign.objects.select_related("collection").get(pk=pk)

    def _users(self, batch: list[tuple[int, dict]]) -> None:
        names = ("username", "first_name", "last_name")
        self._check_lengths(_Batch(User, names, [tuple(r[k] for k in names) for _, r in batch], _lines(batch)))
        known = dict(User.objects.filter(username__in=[r["username"] for _, r in batch]).values_list("username", "pk"))
        for line, record in batch:
            name = record["username"]
            if name in self.users:
                raise self.wrong(line, f"user {name!r} is listed twice")
            if name not in known:
                placeholder = User(username=name, role=record["role"], first_name=record["first_name"],
                                   last_name=record["last_name"], is_active=False)
                placeholder.set_unusable_password()
                placeholder.save()
                known[name] = placeholder.pk
                self.placeholders.append(name)
            self.users[name] = known[name]

    def _memberships(self, batch: list[tuple[int, dict]]) -> None:
        rows = [
            (self.campaign_id, self.user(line, r["user"], key="user"), r["role"], self.user(line, r["added_by"], key="added_by"), r["created_at"])
            for line, r in batch
        ]
        columns = ("campaign_id", "user_id", "role", "added_by_id", "created_at")
        self.store(_Batch(Membership, columns, rows, _lines(batch)), unique=("campaign_id", "user_id"))

    def _topics(self, batch: list[tuple[int, dict]]) -> None:
        ids = self.new_ids(Topic, len(batch))
        for pk, (line, record) in zip(ids, batch):
            if record["number"] in self.topics:
                raise self.wrong(line, f"topic {record['number']!r} is listed twice")
            self.topics[record["number"]] = pk
        fields = tuple(batch[0][1])
        rows = [(pk, self.campaign_id, *_jsoned(r, "compared_objects", "metadata").values()) for pk, (_, r) in zip(ids, batch)]
        self.store(_Batch(Topic, ("id", "campaign_id", *fields), rows, _lines(batch)))

    def _documents(self, batch: list[tuple[int, dict]]) -> None:
        """Spooled into a temporary table (lengths checked against Document's), merged by _merge_documents."""
        rows = [tuple(_jsoned(r, "metadata").values()) for _, r in batch]
        self.store(_Batch(Document, tuple(batch[0][1]), rows, _lines(batch), table=_DOCUMENTS), unique=("doc_id",))

    def _runs(self, batch: list[tuple[int, dict]]) -> None:
        ids = self.new_ids(Run, len(batch))
        for pk, (line, record) in zip(ids, batch):
            if record["tag"] in self.runs:
                raise self.wrong(line, f"run {record['tag']!r} is listed twice")
            self.runs[record["tag"]] = pk
        rows = [
            (pk, self.campaign_id, *_jsoned(r, "warnings", "predictions", without=("uploaded_by",)).values(), self.user(line, r["uploaded_by"], key="uploaded_by"))
            for pk, (line, r) in zip(ids, batch)
        ]
        fields = tuple(k for k in batch[0][1] if k != "uploaded_by")
        self.store(_Batch(Run, ("id", "campaign_id", *fields, "uploaded_by_id"), rows, _lines(batch)))

    def _rankings(self, batch: list[tuple[int, dict]]) -> None:
        rankings = []
        for line, r in batch:
            if r["run"] not in self.runs:
                raise self.wrong(line, f"run {r['run']!r} is not in runs.jsonl")
            n = r["length"]
            if any(len(r[key]) != n for key in ("docs", "ranks", "scores")) or (r["stances"] is not None and len(r["stances"]) != n):
                raise self.wrong(line, f"docs, ranks, scores and stances must each hold length ({n}) values")
            for key in ("by_rank", "by_single"):
                if r[key] is not None and sorted(r[key]) != list(range(1, n + 1)):
                    raise self.wrong(line, f"{key}: not an order of positions 1 to {n}")
            if any(not doc or doc.split() != [doc] for doc in r["docs"]):
                raise self.wrong(line, "docs: a document id is empty or holds white space")
            topic_id = self.topic(line, r["topic"])
            rankings.append((self.runs[r["run"]], SimpleNamespace(**{**r, "topic_id": topic_id})))
        try:
            with transaction.atomic():
                bulk.store_rankings(rankings)
        except DatabaseError as exc:
            keys = _Batch(Ranking, ("run_id", "topic_id"), [(run_id, r.topic_id) for run_id, r in rankings], _lines(batch))
            if repeated := self._repeated(keys, keys.columns):
                raise self.wrong(repeated, "a second ranking of the same run and topic") from None
            raise self.wrong(None, f"refused by the database: {_said(exc)} (in lines {batch[0][0]}–{batch[-1][0]})") from None

    def _pool(self, batch: list[tuple[int, dict]]) -> None:
        documents = self.documents(batch)
        ids = self.new_ids(PoolEntry, len(batch))
        entries, sources = [], []
        for pk, (line, r) in zip(ids, batch):
            entries.append((pk, self.topic(line, r["topic"]), documents[r["doc"]], r["order"], r["strategy"], r["added_at"]))
            for source in r["sources"]:
                if source["run"] not in self.runs:
                    raise self.wrong(line, f"sources: run {source['run']!r} is not in runs.jsonl")
                sources.append((pk, self.runs[source["run"]], source["rank_position"], source["score_position"]))
        columns = ("id", "topic_id", "document_id", "order", "strategy", "added_at")
        self.store(_Batch(PoolEntry, columns, entries, _lines(batch)), unique=("topic_id", "document_id"))
        self.store(_Batch(PoolSource, ("entry_id", "run_id", "rank_position", "score_position"), sources, _lines(batch)), unique=("entry_id", "run_id"))
        # Most entries have no twin; a twin may point at an entry of a later line, so they are linked at the end.
        self.twins += [(pk, line, self.topics[r["topic"]], r["duplicate_of"]) for pk, (line, r) in zip(ids, batch) if r["duplicate_of"]]

    def _link_twins(self) -> None:
        for start in range(0, len(self.twins), BATCH):
            twins = self.twins[start : start + BATCH]
            found = self._entries([(line, topic_id, doc) for _, line, topic_id, doc in twins], what="duplicate_of")
            bulk.set_duplicate_of([(pk, found[topic_id, doc][1]) for pk, _, topic_id, doc in twins])

    def _entries(self, wanted: list[tuple[int, int, str]], *, what: str) -> dict[tuple[int, str], tuple[int, int, int]]:
        """(topic id, doc id) -> the pool entry's (order, id, document id) for each (line, topic id, doc id), one
        query; an entry not in the pool of its topic is an error at its line."""
        self.cursor.execute(
            f"""SELECT e.topic_id, d.doc_id, e."order", e.id, e.document_id FROM {PoolEntry._meta.db_table} e
                JOIN {Document._meta.db_table} d ON d.id = e.document_id
                WHERE e.topic_id = ANY(%s) AND d.collection_id = %s AND d.doc_id = ANY(%s)""",
            [list({t for _, t, _ in wanted}), self.collection_id, list({d for _, _, d in wanted})],
        )
        found = {(topic_id, doc): entry for topic_id, doc, *entry in self.cursor.fetchall()}
        for line, topic_id, doc in wanted:
            if (topic_id, doc) not in found:
                raise self.wrong(line, f"{what}: document {doc!r} is not in the pool of its topic")
        return found

    def _assignments(self, batch: list[tuple[int, dict]]) -> None:
        ids = self.new_ids(Assignment, len(batch))
        rows, wanted = [], []
        for pk, (line, r) in zip(ids, batch):
            topic_id = self.topic(line, r["topic"])
            rows.append((
                pk, topic_id, self.user(line, r["assessor"], key="assessor"), r["phase"], r["scope"], r["round"], r["active"],
                self.user(line, r["assigned_by"], key="assigned_by"), r["created_at"],
            ))
            if len(set(r["items"])) != len(r["items"]):
                raise self.wrong(line, "items: a document is listed twice")
            wanted += [(line, topic_id, doc) for doc in r["items"]]
        columns = ("id", "topic_id", "assessor_id", "phase", "scope", "round", "active", "assigned_by_id", "created_at")
        self.store(_Batch(Assignment, columns, rows, _lines(batch)), unique=("topic_id", "assessor_id", "phase"))
        if wanted:
            entries = self._entries(wanted, what="items")
            # An item's queue position and document (AssignmentItem) come from its entry, not from the archive: the
            # items of each assignment numbered in pool order (rows of one assignment share its line).
            items = []
            for pk, (_, r) in zip(ids, batch):
                listed = sorted(entries[self.topics[r["topic"]], doc] for doc in r["items"])  # (order, id, document)
                items += [(pk, entry_id, position, document_id) for position, (_, entry_id, document_id) in enumerate(listed, 1)]
            self.store(_Batch(AssignmentItem, ("assignment_id", "entry_id", "queue_position", "entry_document_id"), items,
                              [line for line, _, _ in wanted]))

    def _judgments(self, batch: list[tuple[int, dict]]) -> None:
        documents = self.documents(batch)
        ids = self.new_ids(Judgment, len(batch))
        judgments, events, replies = [], [], []
        for pk, (line, r) in zip(ids, batch):
            self._check_history(line, r, labels=_JUDGMENT_LABELS)
            judgments.append((
                pk, self.topic(line, r["topic"]), documents[r["doc"]], self.user(line, r["assessor"], key="assessor"),
                r["phase"], *_jsoned_values(r, "labels", only=(*_JUDGMENT_LABELS, "time_spent_ms", "source", "revision", "created_at", "updated_at")),
            ))
            for h in r["history"]:
                events.append((pk, self.user(line, h["assessor"], key="history: assessor"),
                               *_jsoned_values(h, "labels", only=("revision", *_JUDGMENT_LABELS, "time_spent_ms", "source", "at"))))
            for reply in r["replies"]:
                replies.append((pk, self.user(line, reply["author"], key="replies: author"), reply["text"], reply["resolves"], reply["created_at"]))
        self.history += len(events)
        labels = (*_JUDGMENT_LABELS, "time_spent_ms", "source")
        self.store(
            _Batch(Judgment, ("id", "topic_id", "document_id", "assessor_id", "phase", *labels, "revision", "created_at", "updated_at"),
                   judgments, _lines(batch)),
            unique=("assessor_id", "topic_id", "document_id"),
        )
        self.store(_Batch(JudgmentEvent, ("judgment_id", "assessor_id", "revision", *labels, "at"), events, _lines(batch)))
        self.store(_Batch(Reply, ("judgment_id", "author_id", "text", "resolves", "created_at"), replies, _lines(batch)))

    def _check_history(self, line: int, r: dict, *, labels: Sequence[str]) -> None:
        """What the database would refuse without saying which line: labels outside the scheme, and a history that
        does not end at the record's revision with its labels (revisions 1, 2, 3 … with no gap)."""
        # Not the scheme's conditions: they bind saves from the judge page, and imported qrels may not follow them.
        if problems := self.scheme.errors(r["labels"], conditions=False):
            raise self.wrong(line, "; ".join(problems))
        revisions = [h["revision"] for h in r["history"]]
        if not revisions:
            raise self.wrong(line, "history: empty, but every label has its history row")
        if revisions != list(range(1, len(revisions) + 1)):  # the database (migration 0024) takes no gap either
            raise self.wrong(line, f"history: revisions {revisions} are not 1, 2, 3 … in order")
        if revisions[-1] != r["revision"]:
            raise self.wrong(line, f"history: ends at revision {revisions[-1]} but the record is at revision {r['revision']}")
        if any(r["history"][-1][k] != r[k] for k in labels):
            raise self.wrong(line, f"history: revision {r['revision']} holds other labels than the record")

    def _adjudications(self, batch: list[tuple[int, dict]]) -> None:
        documents = self.documents(batch)
        ids = self.new_ids(Adjudication, len(batch))
        adjudications, events = [], []
        for pk, (line, r) in zip(ids, batch):
            self._check_history(line, r, labels=("labels", "reason"))
            adjudications.append((
                pk, self.topic(line, r["topic"]), documents[r["doc"]], *_jsoned_values(r, "labels", only=("labels", "reason")),
                self.user(line, r["adjudicator"], key="adjudicator"), r["revision"], r["created_at"], r["updated_at"],
            ))
            for h in r["history"]:
                events.append((pk, self.user(line, h["adjudicator"], key="history: adjudicator"),
                               *_jsoned_values(h, "labels", only=("revision", "labels", "reason", "at"))))
        columns = ("id", "topic_id", "document_id", "labels", "reason", "adjudicator_id", "revision", "created_at", "updated_at")
        self.store(_Batch(Adjudication, columns, adjudications, _lines(batch)), unique=("topic_id", "document_id"))
        self.store(_Batch(AdjudicationEvent, ("adjudication_id", "adjudicator_id", "revision", "labels", "reason", "at"), events, _lines(batch)))

    def _machine_judges(self, batch: list[tuple[int, dict]]) -> None:
        ids = self.new_ids(MachineJudge, len(batch))
        prompt_ids = iter(self.new_ids(JudgePrompt, sum(len(r["prompts"]) for _, r in batch)))
        judges, versions, lines = [], [], []
        for pk, (line, r) in zip(ids, batch):
            if r["name"] in self.judges:
                raise self.wrong(line, f"judge {r['name']!r} is listed twice")
            self.judges[r["name"]] = pk
            judges.append((pk, self.campaign_id, *_jsoned(r, "parameters", "thresholds", without=("created_by", "prompts")).values(),
                           self.user(line, r["created_by"], key="created_by")))
            for i, prompt in enumerate(r["prompts"]):
                if problem := self._prompt_problem(prompt):
                    raise self.wrong(line, f"prompts[{i}]: {problem}")
                key = (r["name"], prompt["dimension"], prompt["version"])
                if key in self.prompts:
                    raise self.wrong(line, f"prompts[{i}]: version {prompt['version']} of {prompt['dimension']} is listed twice")
                self.prompts[key] = next(prompt_ids)
                versions.append((self.prompts[key], pk, *_jsoned_values(prompt, "answers", only=_PROMPT),
                                 self.user(line, prompt["created_by"], key=f"prompts[{i}]: created_by")))
                lines.append(line)
        fields = tuple(k for k in batch[0][1] if k not in ("created_by", "prompts"))
        self.store(_Batch(MachineJudge, ("id", "campaign_id", *fields, "created_by_id"), judges, _lines(batch)))
        self.store(_Batch(JudgePrompt, ("id", "judge_id", *_PROMPT, "created_by_id"), versions, lines))

    def _prompt_problem(self, prompt: dict) -> str | None:
        """What is wrong with a prompt version for this campaign: a dimension outside the scheme, or answers that
        map to no value of it (as a changed prompt is checked, services.machine_judges)."""
        if problem := self.not_a_dimension(prompt["dimension"]):
            return f"dimension: {problem}"
        try:
            prompts.check_answers(self.scheme.dimension(prompt["dimension"]), prompt["answers"])
        except ValueError as exc:
            return f"answers: {exc}"
        return None

    def _machine_labels(self, batch: list[tuple[int, dict]]) -> None:
        documents = self.documents(batch)
        ids = self.new_ids(MachineLabel, len(batch))
        rows = []
        for pk, (line, r) in zip(ids, batch):
            self._check_machine_label(line, r)
            if r["judge"] not in self.judges:
                raise self.wrong(line, f"judge {r['judge']!r} is not in machine_judges.jsonl")
            prompt = None
            if r["prompt_version"]:  # 0: made without a prompt (the local judge's thresholds)
                prompt = self.prompts.get((r["judge"], r["dimension"], r["prompt_version"]))
                if prompt is None:
                    raise self.wrong(line, f"prompt_version: judge {r['judge']} has no version {r['prompt_version']} of its "
                                           f"{r['dimension']} prompt in machine_judges.jsonl")
            rows.append((pk, self.judges[r["judge"]], prompt, self.topic(line, r["topic"]), documents[r["doc"]],
                         *_jsoned(r, "labels", "parameters", without=("judge", "topic", "doc")).values()))
        fields = tuple(k for k in batch[0][1] if k not in ("judge", "topic", "doc"))
        self.store(_Batch(MachineLabel, ("id", "judge_id", "prompt_id", "topic_id", "document_id", *fields), rows, _lines(batch)))
        self.machine_labels.extend(ids)

    def _check_machine_label(self, line: int, r: dict) -> None:
        """The scheme's values for its dimension (as the database checks, without saying which line), and the
        shape a call's outcome has: a label holds its dimension's value, a failure none."""
        if problem := self.not_a_dimension(r["dimension"]):
            raise self.wrong(line, f"dimension: {problem}")
        if problems := self.scheme.errors(r["labels"], conditions=False):
            raise self.wrong(line, "; ".join(problems))
        wanted = {r["dimension"]} if r["status"] == MachineLabel.Status.OK else set()
        if set(r["labels"]) != wanted:
            shape = f"the value of {r['dimension']} only" if wanted else "no label"
            raise self.wrong(line, f"labels: a machine label of status {r['status']} holds {shape}")

    def _machine_exposures(self, batch: list[tuple[int, dict]]) -> None:
        documents = self.documents(batch)
        rows = []
        for line, r in batch:
            if not 1 <= r["label"] <= len(self.machine_labels):
                raise self.wrong(line, f"label: machine_labels.jsonl has no line {r['label']}")
            rows.append((self.user(line, r["assessor"], key="assessor"), self.topic(line, r["topic"]), documents[r["doc"]],
                         self.machine_labels[r["label"] - 1], r["at"]))
        self.store(_Batch(MachineExposure, ("assessor_id", "topic_id", "document_id", "label_id", "at"), rows, _lines(batch)))

    def _snapshots(self, batch: list[tuple[int, dict]]) -> None:
        for line, r in batch:
            if r["file"] not in self.reader.listed:
                raise self.wrong(line, f"file: {r['file']!r} is not a member of the archive")
            if problem := self.not_a_dimension(r["kind"]):
                raise self.wrong(line, f"kind: {problem}")
            (pk,) = self.new_ids(QrelsSnapshot, 1)
            columns = ("id", "campaign_id", "number", "kind", "phase", "rule", "line_count", "sha256", "created_by_id", "created_at")
            row = (pk, self.campaign_id, *(r[k] for k in columns[2:8]), self.user(line, r["created_by"], key="created_by"), r["created_at"])
            self.store(_Batch(QrelsSnapshot, columns, [row], [line]), unique=("campaign_id", "number"))
            sha256 = hashlib.sha256()
            for index, data in enumerate(self.reader.chunks(r["file"])):  # a megabyte per row, as exports store them
                sha256.update(data)
                self.store(_Batch(QrelsSnapshotPart, ("snapshot_id", "index", "data"), [(pk, index, data)], [line]))
            if sha256.hexdigest() != r["sha256"]:
                # Kept as it was: the download refuses it, as it did where it was exported.
                self.warnings.append(f"{self.reader.where(self.member)}:{line}: qrels snapshot #{r['number']} does not match its checksum")

    def _audit(self, batch: list[tuple[int, dict]]) -> None:
        rows = [
            (self.campaign_id, r["at"], self.user(line, r["actor"], key="actor"), r["action"], r["subject"],
             *(None if r[k] is None else json.dumps(r[k]) for k in ("before", "after")), json.dumps(r["details"]))
            for line, r in batch
        ]
        columns = ("campaign_id", "at", "actor_id", "action", "subject", "before", "after", "details")
        self.store(_Batch(AuditEvent, columns, rows, _lines(batch)))

    def _merge_documents(self) -> None:
        """Add the spooled documents the collection lacks, give its stubs their text, and count the documents
        whose text here differs from the archive's (this install's is kept)."""
        table, c = Document._meta.db_table, self.cursor
        columns = "doc_id, title, body, is_html, url, metadata, has_text, text_hash"
        c.execute(
            f"""INSERT INTO {table} (collection_id, {columns}) SELECT %s, {columns} FROM {_DOCUMENTS}
                ON CONFLICT (collection_id, doc_id) DO NOTHING""",
            [self.collection_id],
        )
        texts = "title, body, is_html, url, metadata, has_text, text_hash"
        c.execute(
            f"""UPDATE {table} d SET ({texts}) = (a.title, a.body, a.is_html, a.url, a.metadata, true, a.text_hash)
                FROM {_DOCUMENTS} a WHERE d.collection_id = %s AND d.doc_id = a.doc_id AND NOT d.has_text AND a.has_text""",
            [self.collection_id],
        )
        c.execute(
            f"""SELECT count(*) FROM {table} d JOIN {_DOCUMENTS} a ON d.collection_id = %s AND d.doc_id = a.doc_id
                WHERE a.has_text AND (d.title, d.body) IS DISTINCT FROM (a.title, a.body)""",
            [self.collection_id],
        )
        if differing := c.fetchone()[0]:
            self.warnings.append(f"{differing:,} documents have another text in this install's collection than in the archive; "
                                 "the install's texts were kept")
        c.execute(f"DROP TABLE {_DOCUMENTS}")


def _batches(records: Iterator[tuple[int, dict]]) -> Iterator[list[tuple[int, dict]]]:
    while batch := list(islice(records, BATCH)):
        yield batch


def _lines(batch: list[tuple[int, dict]]) -> list[int]:
    return [line for line, _ in batch]


def _jsoned(record: dict, *keys: str, without: Iterable[str] = ()) -> dict:
    """The record with its JSON columns as JSON text, for COPY."""
    return {k: json.dumps(v) if k in keys else v for k, v in record.items() if k not in without}


def _jsoned_values(record: dict, *keys: str, only: Sequence[str]) -> list:
    """The record's values of `only`, in that order, its JSON columns `keys` as JSON text, for COPY."""
    return [json.dumps(record[k]) if k in keys else record[k] for k in only]


def _said(exc: DatabaseError) -> str:
    """PostgreSQL's message and detail, on one line."""
    diag = getattr(exc.__cause__, "diag", None)
    if diag is not None and diag.message_primary:
        return diag.message_primary + (f" ({diag.message_detail})" if diag.message_detail else "")
    return str(exc).strip().splitlines()[0]

