"""Recording labels. The only write path for Judgment, so every change is kept in its history.

`judge_entry` is what an assessor's save goes through (the judge page and API clients): it applies the
campaign's judging rules, then `record_judgment` stores the labels and appends their history row, and the labels
are copied to the entry's twins. Twin copies call `record_judgment` directly; imports of many labels at once (a
qrels file) go through its bulk form, `record_judgments_in_bulk`, which writes the same rows set by set.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from typing import IO, Any, cast

from django.db import IntegrityError, connection, transaction
from django.db.models import Field, Q
from django.utils import timezone

from accounts.models import User
from assessments.labels import Dimension, Value
from assessments.models import Assignment, Campaign, Document, Judgment, JudgmentEvent, Phase, PoolEntry, Topic
from assessments.models.fields import max_length
from assessments.services import bulk
from touchstone.model_rows import ModelColumns


class JudgmentError(ValueError):
    """Labels the campaign's scheme does not allow (the message lists what is wrong)."""


class JudgingClosed(ValueError):
    """The campaign no longer takes labels (it is closed)."""


class JudgingNotStarted(ValueError):
    """A main-phase topic before its campaign's main phase: it takes labels once the organisers start that phase."""


def awaits_main_phase(assignment: Assignment) -> bool:
    """Whether the assignment is a main-phase topic of a campaign still in setup or training.

    The main phase starts for everyone at once, after training has settled how the guidelines are read: labels given
    before would be judged by a reading training may still change (issue 23). Training topics are judged in setup
    and training alike. The judge page refuses to open such a topic and judge_entry to store a label for it.
    """
    return assignment.phase == Phase.MAIN and assignment.topic.campaign.phase in (Phase.SETUP, Phase.TRAINING)


def not_started_message(campaign: Campaign) -> str:
    """What an assessor is told of a main-phase topic that awaits_main_phase (the page and the API say the same)."""
    return (
        f"the main phase of campaign {campaign.name!r} has not started (it is in {campaign.get_phase_display().lower()}): "
        "its main-phase topics open when the organisers start it"
    )


class StaleRevision(Exception):
    """The save was made from an older revision than the stored one: another tab, device or client changed the
    judgment after this one last saw it. Nothing was stored; `judgment` is the stored one (None if there is none)."""

    def __init__(self, judgment: Judgment | None):
        super().__init__("this judgment was changed elsewhere since you last saw it")
        self.judgment = judgment


@dataclass(frozen=True)
class Labels:
    """What an assessor says of a document: `values` maps dimensions of the campaign's scheme to their values (a
    dimension without a value is absent), beside a free note and the "unsure / needs discussion" flag."""

    values: Mapping[str, Value] = field(default_factory=dict)
    note: str = ""
    flagged: bool = False


# What a save may change: `labels` (a mapping of dimension to value, None clearing it), the note and the flag.
CHANGEABLE = ("labels", "note", "flagged")


@transaction.atomic
def record_judgment(
    *,
    topic: Topic,
    document: Document,
    assessor: User,
    phase: str,
    labels: Labels | None = None,
    changes: Mapping[str, Any] | None = None,
    base_revision: int | None = None,
    conditions: bool = False,
    time_spent_ms: int = 0,
    source: str = Judgment.Source.WEB,
    after: Callable[[Judgment], object] | None = None,
) -> Judgment:
    """Store the assessor's labels and append a JudgmentEvent when anything changed.

    Give either all `labels` (a replacement) or only the `changes` (some of CHANGEABLE; `labels` among them changes
    only the dimensions it names, None clearing one, and everything else keeps its stored value, so a client never
    resends a label it did not touch). With `base_revision` (0: the client saw
    no judgment) the save is refused with StaleRevision when the stored revision differs and the save would
    change a label, so two tabs never overwrite each other unseen; without it the last writer wins.

    Idempotent: a save that changes no label (a client retrying after a lost response, whatever revision it
    started from) adds no revision. `time_spent_ms` is the client's running total of active time on the
    document, so a retry cannot count the same seconds twice; the larger total wins. `conditions` refuses a value
    for a dimension that the scheme's conditions do not ask (checked on the labels as they would be stored).
    `after(judgment)` runs in the same transaction once the judgment is stored (judge_entry copies it to the
    entry's twins there: one transaction, without the savepoints a caller's own would cost). The caller has
    checked that the assessor may judge this document (assessments.access).
    """
    if (labels is None) == (changes is None):
        raise TypeError("record_judgment takes either labels or changes")
    judgment = _locked_judgment(topic=topic, document=document, assessor=assessor)
    created = False
    if judgment is None:
        if base_revision:
            raise StaleRevision(None)
        wanted = _wanted(labels, changes, None)
        _check(topic, wanted, conditions)
        try:
            with transaction.atomic():
                judgment = Judgment.objects.create(
                    topic=topic, document=document, assessor=assessor, phase=phase,
                    time_spent_ms=time_spent_ms, source=source, revision=1, **_as_fields(wanted),
                )
        except IntegrityError:
            # A concurrent first save of the same judgment won the race: this one is a change to it.
            judgment = _locked_judgment(topic=topic, document=document, assessor=assessor)
            assert judgment is not None  # the row the insert collided with, committed by the other save
        else:
            _append_event(judgment)
            created = True
    if not created:
        wanted = _wanted(labels, changes, judgment)
        _change(judgment, wanted, base_revision=base_revision, time_spent_ms=time_spent_ms, source=source,
                check=partial(_check, topic, wanted, conditions))
    if after is not None:
        after(judgment)
    return judgment


# Every label save starts by locking its judgment: written in SQL, not compiled by the ORM on each save (it was a
# fifth of a save's CPU; touchstone.model_rows).
_JUDGMENT = ModelColumns(Judgment, "j")


def _locked_judgment(*, topic: Topic, document: Document, assessor: User) -> Judgment | None:
    """The assessor's judgment of the document, locked until the transaction ends (FOR UPDATE, where the database
    has it), or None. Call inside a transaction."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT {_JUDGMENT.sql()} FROM {Judgment._meta.db_table} j
                WHERE j.topic_id = %s AND j.document_id = %s AND j.assessor_id = %s{lock}""",
            [topic.pk, document.pk, assessor.pk],
        )
        row = cursor.fetchone()
    return None if row is None else _JUDGMENT.instance(row)


def _change(judgment: Judgment, wanted: Labels, *, base_revision: int | None, time_spent_ms: int, source: str,
            check: Callable[[], None]) -> None:
    """Update a stored (locked) judgment to `wanted`, with its history row; see record_judgment."""
    fields = _as_fields(wanted)
    changed = [f for f, v in fields.items() if getattr(judgment, f) != v]
    if changed and base_revision is not None and base_revision != judgment.revision:
        raise StaleRevision(judgment)
    if not changed and time_spent_ms <= judgment.time_spent_ms:
        return
    update = ["time_spent_ms", "updated_at"]
    judgment.time_spent_ms = max(judgment.time_spent_ms, time_spent_ms)
    if changed:
        check()
        for name in changed:
            setattr(judgment, name, fields[name])
        judgment.revision += 1
        judgment.source = source
        update += [*changed, "revision", "source"]
    _write(judgment, update)
    if changed:
        _append_event(judgment)


def _wanted(labels: Labels | None, changes: Mapping[str, Any] | None, stored: Judgment | None) -> Labels:
    """The labels a save asks for: all given, or the changes applied to the stored ones."""
    if labels is not None:
        return labels
    assert changes is not None  # record_judgment takes one of the two
    unknown = set(changes) - set(CHANGEABLE)
    if unknown:
        raise JudgmentError(f"a save changes only {', '.join(CHANGEABLE)}, not {', '.join(sorted(unknown))}")
    base = Labels() if stored is None else stored_labels(stored)
    values = dict(base.values)
    for name, value in (changes.get("labels") or {}).items():
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value
    return Labels(values=values, note=changes.get("note", base.note), flagged=changes.get("flagged", base.flagged))


def stored_labels(judgment: Judgment) -> Labels:
    return Labels(values=dict(judgment.labels), note=judgment.note, flagged=judgment.flagged)


def _check(topic: Topic, labels: Labels, conditions: bool) -> None:
    problems = topic.campaign.label_scheme.errors(labels.values, conditions=conditions)
    if problems:
        raise JudgmentError("; ".join(problems))


def _as_fields(labels: Labels) -> dict:
    return {"labels": dict(labels.values), "note": labels.note, "flagged": labels.flagged}


def _write(judgment: Judgment, fields: list[str]) -> None:
    """`judgment.save(update_fields=fields)`, updated_at among them set to now, in SQL written here: the ORM's
    compiling was a quarter of a changed label's save (as for _locked_judgment). Nothing listens to Judgment's
    signals."""
    judgment.updated_at = timezone.now()
    sql, columns = _update_sql(tuple(fields))
    with connection.cursor() as cursor:
        cursor.execute(sql, [*(f.get_db_prep_save(getattr(judgment, f.attname), connection) for f in columns), judgment.pk])


@cache
def _update_sql(fields: tuple[str, ...]) -> tuple[str, list[Field]]:
    columns = [cast(Field, Judgment._meta.get_field(name)) for name in fields]
    assignments = ", ".join(f"{connection.ops.quote_name(cast(str, f.column))} = %s" for f in columns)
    return f"UPDATE {Judgment._meta.db_table} SET {assignments} WHERE id = %s", columns


# JudgmentEvent's columns in _EVENT_COLUMNS' order.
_EVENT_FIELDS = ("judgment", "assessor", "revision", "labels", "note", "flagged", "time_spent_ms", "source", "at")


def _append_event(judgment: Judgment) -> None:
    """The judgment's history row for its current revision, inserted by SQL written here (see _write)."""
    values = [getattr(judgment, name) for name in ("pk", "assessor_id", *_EVENT_FIELDS[2:-1])] + [timezone.now()]
    fields = [cast(Field, JudgmentEvent._meta.get_field(name)) for name in _EVENT_FIELDS]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {JudgmentEvent._meta.db_table} ({_EVENT_COLUMNS}) VALUES ({', '.join(['%s'] * len(fields))})",
            [field.get_db_prep_save(value, connection) for field, value in zip(fields, values, strict=True)],
        )


def judge_entry(
    *,
    assignment: Assignment,
    entry: PoolEntry,
    labels: Labels | None = None,
    changes: Mapping[str, Any] | None = None,
    base_revision: int | None = None,
    time_spent_ms: int,
    source: str = Judgment.Source.WEB,
) -> Judgment:
    """Record the assessor's labels (all of them, or only the `changes`) for one entry of their assignment and
    copy the result to its twins (exact or near duplicates in the pool, when the campaign propagates labels).

    The caller resolved `assignment` and `entry` through assessments.access (so the assessor may judge this
    entry). A value for a dimension that the scheme's conditions do not ask is refused (Touché asked its detail
    dimensions only of relevant documents: a stance on an off-topic page is meaningless, and a client that sends
    one has misread the scheme). `base_revision` guards against overwriting a change made elsewhere (record_judgment
    raises StaleRevision). Safe to repeat (record_judgment is idempotent), which is what the judge page's
    retries rely on.
    """
    campaign = assignment.topic.campaign
    if campaign.phase == Phase.CLOSED:
        raise JudgingClosed(f"campaign {campaign.name!r} is closed and takes no more labels")
    if campaign.is_archived:
        raise JudgingClosed(f"campaign {campaign.name!r} is archived and takes no labels")
    if awaits_main_phase(assignment):
        raise JudgingNotStarted(not_started_message(campaign))

    def copy_to_twins(judgment: Judgment) -> None:
        judgment.topic, judgment.assessor = assignment.topic, assignment.assessor  # loaded already: no queries again
        propagate_to_twins(judgment=judgment, entry=entry)

    # The twins get the label with the original, or none of them does (one transaction).
    return record_judgment(
        topic=assignment.topic, document=entry.document, assessor=assignment.assessor, labels=labels,
        changes=changes, base_revision=base_revision, conditions=True,
        phase=assignment.phase, time_spent_ms=time_spent_ms, source=source,
        after=copy_to_twins if campaign.propagate_to_duplicates else None,
    )


def propagate_to_twins(*, judgment: Judgment, entry: PoolEntry) -> int:
    """Apply a judgment just saved (on `entry`) to the other members of its duplicate group; return how many.

    Called by judge_entry after each save. Copies go through record_judgment (source "duplicate"), so
    each has its own history; nothing is copied when the campaign has propagation turned off, or when the
    judgment is itself a copy. One query by primary key and twins index finds the group, whichever member was
    judged: this runs on every save, where a subquery for the group's root cost a third of the request.
    """
    if judgment.source == Judgment.Source.DUPLICATE or not judgment.topic.campaign.propagate_to_duplicates:
        return 0
    if entry.duplicate_of_id is None and getattr(entry, "has_twins", True) is False:
        return 0  # a group of one (known from access.get_entry_to_judge): no query
    root = entry.duplicate_of_id or entry.pk
    # Only the twins' document ids: a copy needs no more of a document, and a crawled page's body can be large.
    group = PoolEntry.objects.filter(Q(pk=root) | Q(duplicate_of_id=root)).exclude(pk=entry.pk).select_related("document").only("document__id")
    members = list(group)
    for twin in members:
        copy_judgment(judgment, twin)
    return len(members)


def copy_judgment(judgment: Judgment, entry: PoolEntry) -> None:
    """Give `entry` (a twin) the judgment's labels as the same assessor's, with source "duplicate"."""
    record_judgment(
        topic=judgment.topic,
        document=entry.document,
        assessor=judgment.assessor,
        labels=stored_labels(judgment),
        phase=judgment.phase,
        source=Judgment.Source.DUPLICATE,
    )


# --------------------------------------------------------------------------------------------------------------
# The bulk form


class RowError(JudgmentError):
    """A row of record_judgments_in_bulk that cannot be stored; `key` is the row's key (an imported file's line)."""

    def __init__(self, key: int, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class RecordedInBulk:
    created: int
    updated: int
    stubs: int  # documents the collection did not have, created without text


_ROWS = "touchstone_judgment_rows"  # temporary: the rows as given
_TARGETS = "touchstone_judgment_targets"  # temporary: each row's document id and judgment id (if any)
_DOC_ID_LENGTH = max_length(Document, "doc_id")
_EVENT_COLUMNS = "judgment_id, assessor_id, revision, labels, note, flagged, time_spent_ms, source, at"
_EVENT_VALUES = "id, assessor_id, revision, labels, note, flagged, time_spent_ms, source, %(now)s"
_STORED = "j.id, j.assessor_id, j.revision, j.labels, j.note, j.flagged, j.time_spent_ms, j.source"


def label_not_allowed(dimension: Dimension, label: int | str) -> str:
    """The error for a label the dimension does not allow, listing the values it does."""
    return f"{dimension.name} {label} is not in the campaign's scheme (allowed: {', '.join(str(v.value) for v in dimension.values)})"


@transaction.atomic
def record_judgments_in_bulk(
    *, campaign: Campaign, rows: IO[bytes], dimension: str, assessor: User, phase: str, source: str = Judgment.Source.IMPORT
) -> RecordedInBulk:
    """Set one label `dimension` of `assessor`'s judgments from `rows`: COPY text lines (key, topic id, doc id,
    label), the key being what errors name a row by (an imported file's line). The bulk form of record_judgment,
    for a qrels file of 100,000 lines that would take minutes one judgment at a time.

    It writes the rows record_judgment would: a new judgment at revision 1 holding this one label, with its
    JudgmentEvent; for a judgment the assessor has, only this dimension changed, the revision bumped, `source` set
    and one more event; nothing for a row that changes nothing, so storing the same rows again adds no revision.
    Each label must be one of the dimension's values, or nothing is stored (RowError naming the first bad row).
    Document ids the collection lacks get stubs. PostgreSQL only (COPY); call inside the transaction that holds the
    campaign's lock (bulk.lock_campaign), with topic ids of `campaign`.
    """
    scheme = campaign.label_scheme
    if not scheme.has(dimension):
        raise ValueError(f"unknown label dimension {dimension!r}")
    if not bulk.is_postgresql():
        raise JudgmentError("recording judgments in bulk needs PostgreSQL (it loads the rows with COPY)")
    label = "t.label" if scheme.dimension(dimension).value_type is str else "t.label::integer"
    params: dict[str, Any] = {
        "assessor": assessor.pk, "now": timezone.now(), "phase": phase, "source": source,
        "collection": campaign.collection_id, "dimension": dimension,
    }
    with connection.cursor() as cursor:
        # JIT compiling these few hash joins took longer than running them (the triggers' functions turn it off too);
        # a million rows' sorts and hashes fit in 128 MB (4, the default, spilled them to disk).
        cursor.execute("SET LOCAL jit = off")
        cursor.execute("SET LOCAL work_mem = '128MB'")
        bulk.temporary_table(cursor, _ROWS, f"key integer, topic_id bigint, doc_id varchar({_DOC_ID_LENGTH}), label text")
        bulk.copy_text(cursor, _ROWS, ("key", "topic_id", "doc_id", "label"), rows)
        cursor.execute(f"ANALYZE {_ROWS}")
        _check_labels(cursor, scheme.dimension(dimension))
        stubs = _insert_stubs(cursor, params)
        # Each row with its document and the assessor's judgment of it (if any), found before any judgment is written:
        # an anti-join against the judgments while the same statement inserts them was planned as a scan of the table
        # per row (quadratic) when its statistics said it was empty, as in a new database. (LEFT JOIN: a row without
        # its document would fail the insert below, not vanish from it.)
        cursor.execute(f"DROP TABLE IF EXISTS {_TARGETS}")
        cursor.execute(
            f"""CREATE TEMPORARY TABLE {_TARGETS} ON COMMIT DROP AS
                SELECT t.topic_id, d.id AS document_id, t.label, j.id AS judgment_id
                  FROM {_ROWS} t LEFT JOIN {Document._meta.db_table} d ON d.collection_id = %(collection)s AND d.doc_id = t.doc_id
                  LEFT JOIN {Judgment._meta.db_table} j
                         ON j.assessor_id = %(assessor)s AND j.topic_id = t.topic_id AND j.document_id = d.id""",
            params,
        )
        cursor.execute(f"ANALYZE {_TARGETS}")
        cursor.execute(f"SELECT count(*), count(judgment_id) FROM {_TARGETS}")
        total, judged = cursor.fetchone()
        # Each statement writes the judgments and their history rows together, so the database's history checks
        # (migration 0027) settle them once, at its end, and leave nothing to check at commit. A statement with
        # nothing to write is not run (its joins alone took a second for a million rows).
        updated = created = 0
        if judged:
            cursor.execute(
                f"""WITH changed AS (
                      UPDATE {Judgment._meta.db_table} j
                         SET labels = jsonb_set(j.labels, ARRAY[%(dimension)s], to_jsonb({label})), revision = j.revision + 1,
                             source = %(source)s, updated_at = %(now)s
                        FROM {_TARGETS} t
                       WHERE j.id = t.judgment_id AND j.labels -> %(dimension)s IS DISTINCT FROM to_jsonb({label})
                      RETURNING {_STORED})
                    INSERT INTO {JudgmentEvent._meta.db_table} ({_EVENT_COLUMNS}) SELECT {_EVENT_VALUES} FROM changed""",
                params,
            )
            updated = cursor.rowcount
        if judged < total:
            cursor.execute(
                f"""WITH created AS (
                      INSERT INTO {Judgment._meta.db_table} AS j (topic_id, document_id, assessor_id, phase, labels,
                             note, flagged, time_spent_ms, source, revision, created_at, updated_at)
                      SELECT t.topic_id, t.document_id, %(assessor)s, %(phase)s, jsonb_build_object(%(dimension)s, {label}),
                             '', false, 0, %(source)s, 1, %(now)s, %(now)s
                        FROM {_TARGETS} t WHERE t.judgment_id IS NULL
                      RETURNING {_STORED})
                    INSERT INTO {JudgmentEvent._meta.db_table} ({_EVENT_COLUMNS}) SELECT {_EVENT_VALUES} FROM created""",
                params,
            )
            created = cursor.rowcount
        cursor.execute(f"DROP TABLE {_ROWS}, {_TARGETS}")
    return RecordedInBulk(created=created, updated=updated, stubs=stubs)


def _insert_stubs(cursor, params: dict[str, Any]) -> int:
    """Create a stub Document for each doc id of _ROWS the collection lacks, in doc id order so its unique index
    fills page after page; return how many.

    The ids the collection lacks are a set difference (EXCEPT), which is planned as a hash or a sort, never as the
    scan per row that an anti-join against the table being filled can be (services.bulk.insert_stubs); and they go in
    by a plain INSERT: ON CONFLICT's speculative insertion cost a third more for a million stubs. A collection is
    shared by campaigns whose imports do not wait for each other, though: if one added some of the same ids since,
    the insert is undone and the stubs made as services.bulk makes them, leaving the conflicts to the unique index.
    """
    try:
        with transaction.atomic():
            cursor.execute(
                f"""INSERT INTO {Document._meta.db_table} (collection_id, doc_id, title, body, is_html, url, metadata, has_text, text_hash)
                    SELECT %(collection)s, doc_id, '', '', false, '', '{{}}', false, ''
                      FROM (SELECT doc_id FROM {_ROWS}
                            EXCEPT SELECT doc_id FROM {Document._meta.db_table} WHERE collection_id = %(collection)s) p
                     ORDER BY doc_id""",
                params,
            )
            return cursor.rowcount
    except IntegrityError:
        return bulk.insert_stubs(cursor, collection_id=params["collection"], table=_ROWS)


def _check_labels(cursor, dimension: Dimension) -> None:
    """Raise RowError at the first row whose label the dimension does not allow. The distinct labels are checked, so
    the cost is one pass over the rows whatever their number."""
    cursor.execute(f"SELECT DISTINCT label FROM {_ROWS}")
    problems = {}
    for (text,) in cursor.fetchall():
        label: int | str = text if dimension.value_type is str or not _is_integer(text) else int(text)
        if not dimension.allows(label):
            problems[text] = label_not_allowed(dimension, label)
    if problems:
        cursor.execute(f"SELECT key, label FROM {_ROWS} WHERE label = ANY(%s) ORDER BY key LIMIT 1", [list(problems)])
        key, text = cursor.fetchone()
        raise RowError(key, problems[text])


def _is_integer(text: str) -> bool:
    return text.lstrip("-").isdigit()
