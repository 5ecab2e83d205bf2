"""An assessor's work: their assignments with progress, and their queue of documents seen from one position.

Only the assessor's own labels are ever read here, so training never shows another assessor's labels.

A document counts as judged when the assessor's judgment of it is complete by the campaign's scheme
(`LabelScheme.complete`: every required dimension that its condition asks has a value), so a flag and a note alone
leave it unjudged. Counted in SQL (`_COMPLETE`), from the scheme's JSON, so progress costs no query per document
and My work (many campaigns in one query) counts as the judge page does.
"""

import json
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from accounts.models import User
from assessments.labels import LabelScheme
from assessments.models import Assignment, AssignmentItem, Campaign, Document, Judgment, PoolEntry, Reply, Topic
from touchstone.model_rows import ModelColumns


def active_assignments(user: User) -> QuerySet[Assignment]:
    """The assessor's topics, training first, in campaign then topic order (archived campaigns are put away)."""
    return (
        Assignment.objects.filter(assessor=user, active=True, topic__campaign__archived_at__isnull=True)
        .select_related("topic", "topic__campaign")
        .order_by("-phase", "topic__campaign__name", "topic__position", "topic__number")
    )


def _count(queryset: QuerySet) -> Coalesce:
    """A correlated COUNT(*) subquery (no GROUP BY, so it yields exactly one row)."""
    counted = queryset.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


# `LabelScheme.complete` in SQL over the labels (LABELS) and the scheme's JSON (SCHEME): no required dimension that
# is asked (no condition, or its condition holds) lacks a value. The database's triggers keep every stored value of
# the scheme's type, so a graded value compares as a number and a condition's `in` values as JSON.
_COMPLETE = {
    "postgresql": """NOT EXISTS (
        SELECT 1 FROM jsonb_array_elements((SCHEME)::jsonb -> 'dimensions') AS d(x)
         WHERE coalesce((d.x ->> 'required')::boolean, false) AND NOT LABELS ? (d.x ->> 'name')
           AND (d.x -> 'condition' IS NULL OR CASE WHEN d.x -> 'condition' ? 'min'
                THEN jsonb_typeof(LABELS -> (d.x #>> '{condition,dimension}')) = 'number'
                     AND (LABELS ->> (d.x #>> '{condition,dimension}'))::numeric >= (d.x #>> '{condition,min}')::numeric
                ELSE coalesce(d.x #> '{condition,in}' @> jsonb_build_array(LABELS -> (d.x #>> '{condition,dimension}')), false)
                END))""",
    "sqlite": """NOT EXISTS (
        SELECT 1 FROM json_each(SCHEME, '$.dimensions') AS d
         WHERE coalesce(json_extract(d.value, '$.required'), 0)
           AND json_type(LABELS, '$.' || json_extract(d.value, '$.name')) IS NULL
           AND (json_type(d.value, '$.condition') IS NULL OR CASE WHEN json_type(d.value, '$.condition.min') IS NOT NULL
                THEN json_type(LABELS, '$.' || json_extract(d.value, '$.condition.dimension')) = 'integer'
                     AND json_extract(LABELS, '$.' || json_extract(d.value, '$.condition.dimension')) >= json_extract(d.value, '$.condition.min')
                ELSE EXISTS (SELECT 1 FROM json_each(d.value, '$.condition.in') AS v
                              WHERE v.type = json_type(LABELS, '$.' || json_extract(d.value, '$.condition.dimension'))
                                AND v.value = json_extract(LABELS, '$.' || json_extract(d.value, '$.condition.dimension')))
                END))""",
}


def complete_sql(labels: str, scheme: str, vendor: str) -> str:
    """`_COMPLETE` for the database `vendor`, over the SQL expressions `labels` and `scheme` (each a column or a
    placeholder)."""
    return _COMPLETE[vendor].replace("SCHEME", scheme).replace("LABELS", labels)


def scheme_complete_sql(scheme: LabelScheme, labels: str, vendor: str) -> tuple[str, dict[str, object]]:
    """`LabelScheme.complete` for one known scheme, as SQL over the labels expression `labels` with its named
    parameters: one test per required dimension, written out, where `complete_sql` walks the scheme's JSON for every
    row (a queue of 2,400 entries did that 2,400 times for each judge page, a tenth of its time)."""
    tests: list[str] = []
    params: dict[str, object] = {}
    for i, d in enumerate(d for d in scheme.dimensions if d.required):
        params[f"cd{i}"] = d.name if vendor == "postgresql" else f"$.{d.name}"
        has = f"{labels} ? %(cd{i})s" if vendor == "postgresql" else f"json_type({labels}, %(cd{i})s) IS NOT NULL"
        c = d.condition
        if c is None:
            tests.append(has)
            continue
        params[f"cc{i}"] = c.dimension if vendor == "postgresql" else f"$.{c.dimension}"
        if c.min is not None:
            params[f"cm{i}"] = c.min
            holds = (f"(jsonb_typeof({labels} -> %(cc{i})s) = 'number' AND ({labels} ->> %(cc{i})s)::numeric >= %(cm{i})s)"
                     if vendor == "postgresql" else
                     f"(json_type({labels}, %(cc{i})s) = 'integer' AND json_extract({labels}, %(cc{i})s) >= %(cm{i})s)")
        else:
            params[f"cv{i}"] = json.dumps(list(c.any_of))
            holds = (f"coalesce(%(cv{i})s::jsonb @> jsonb_build_array({labels} -> %(cc{i})s), false)"
                     if vendor == "postgresql" else
                     f"""EXISTS (SELECT 1 FROM json_each(%(cv{i})s) v WHERE v.type = json_type({labels}, %(cc{i})s)
                                   AND v.value = json_extract({labels}, %(cc{i})s))""")
        tests.append(f"({has} OR NOT {holds})")
    return "(" + (" AND ".join(tests) or "TRUE") + ")", params


class _Complete(Func):
    """`complete_sql` for the ORM: _Complete(F("labels"), F("topic__campaign__scheme"))."""

    output_field = BooleanField()
    arity = 2

    def as_sql(self, compiler, connection, **extra):
        (labels, labels_params), (scheme, scheme_params) = (compiler.compile(e) for e in self.source_expressions)
        if labels_params or scheme_params:
            raise ValueError("_Complete takes columns")  # each appears several times in the SQL
        return complete_sql(labels, scheme, connection.vendor), ()


def work_for_assessor(user: User) -> QuerySet[Assignment]:
    """The assessor's active assignments, training first, each with `pool_size` and `judged`.

    `pool_size` counts the entries the assignment covers (the whole pool, or the overlap slice)
    and `judged` those of them the assessor has judged completely (by each campaign's scheme), in one query however
    many topics.
    """
    whole = PoolEntry.objects.filter(topic=OuterRef("topic"))
    sliced = whole.filter(pk__in=AssignmentItem.objects.filter(assignment=OuterRef(OuterRef("pk"))).values("entry_id"))
    mine = Exists(Judgment.objects.filter(
        _Complete(F("labels"), F("topic__campaign__scheme")), assessor=user, topic=OuterRef("topic"), document=OuterRef("document"),
    ))
    overlap = When(scope=Assignment.Scope.OVERLAP, then=_count(sliced))
    overlap_judged = When(scope=Assignment.Scope.OVERLAP, then=_count(sliced.filter(mine)))
    return active_assignments(user).annotate(
        pool_size=Case(overlap, default=_count(whole), output_field=IntegerField()),
        judged=Case(overlap_judged, default=_count(whole.filter(mine)), output_field=IntegerField()),
    )


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One document of an assignment's queue, with the assessor's own labels if they gave any."""

    entry_id: int
    document_id: int
    judged: bool = False  # the judgment is complete by the campaign's scheme
    labels: dict = field(default_factory=dict)  # dimension name → value
    note: str = ""
    flagged: bool = False
    time_spent_ms: int = 0
    source: str = ""


def assignment_queue(assignment: Assignment) -> list[QueueEntry]:
    """The assignment's entries in presentation order (pool `order`, then id) with own labels.

    For listing (the queue API); the judge page reads only its own position (queue_position).
    Only the assignment's own assessor's labels are read, so training never shows another
    assessor's labels.
    """
    rows: QuerySet[Any, tuple[int, int]]
    if assignment.scope == Assignment.Scope.OVERLAP:  # its items, numbered in that order (AssignmentItem.queue_position)
        rows = AssignmentItem.objects.filter(assignment=assignment).order_by("queue_position").values_list("entry_id", "entry_document_id")
    else:
        rows = PoolEntry.objects.filter(topic_id=assignment.topic_id).order_by("order", "pk").values_list("pk", "document_id")
    own = {
        row[0]: row[1:]
        for row in Judgment.objects.filter(assessor_id=assignment.assessor_id, topic_id=assignment.topic_id).values_list(
            "document_id", "labels", "note", "flagged", "time_spent_ms", "source"
        )
    }
    scheme = assignment.topic.campaign.label_scheme
    queue = []
    for entry_id, document_id in rows:
        stored = own.get(document_id)
        queue.append(
            QueueEntry(entry_id, document_id, scheme.complete(stored[0]), *stored) if stored else QueueEntry(entry_id, document_id)
        )
    return queue


@dataclass(frozen=True, slots=True)
class QueuePosition:
    """One entry of an assignment's queue seen from its position: what the judge page needs to
    show "17 of 48", count progress and move on, without loading the whole queue."""

    entry_id: int
    document_id: int
    position: int
    total: int
    judged: int
    is_judged: bool
    following_unjudged: int | None  # the first unjudged position after this one
    preceding_unjudged: int | None  # the last unjudged position before this one
    first_unjudged: int | None
    labels: dict | None  # the assessor's own current judgment here (Judgment fields), None if they have none
    has_replies: bool  # organisers replied to that judgment (the judge page then reads the replies)
    document: Document | None = None  # read with it when asked for (queue_position's with_document)

    @property
    def next_unjudged(self) -> int | None:
        """After this position, wrapping round to the start; never this position itself."""
        if self.following_unjudged is not None:
            return self.following_unjudged
        return self.first_unjudged if self.first_unjudged != self.position else None


def _loaded_scheme(assignment: Assignment) -> LabelScheme | None:
    """The assignment's campaign's scheme if the caller loaded the campaign with it (assessments.access does), else
    None: reading it here would cost two queries."""
    if not Assignment._meta.get_field("topic").is_cached(assignment):
        return None
    topic = assignment.topic
    return topic.campaign.label_scheme if Topic._meta.get_field("campaign").is_cached(topic) else None


def _queue_sql(assignment: Assignment, *, with_times: bool = False) -> tuple[str, dict]:
    """The assignment's queue as SQL rows (id, document_id, pos, judged[, judged_at]).

    Positions follow the presentation order (pool `order`, then id), 1-based; `judged` looks at
    the assignment's own assessor only (training never shows another assessor's labels), and at whether
    their judgment is complete by the campaign's scheme (the module's docstring). A whole pool is read through
    its (topic, order) index and numbered here; an overlap slice's or a coder's items come numbered already, each
    with its entry's document, from the assignment's own rows in their (assignment, queue_position) index
    (AssignmentItem), without the topic's pool or a sort. The judgments are read through the unique
    (assessor, topic, document) index, so the cost is a scan of one topic's pool (or one assignment's items) in
    PostgreSQL, with no per-row work in Python.
    """
    entry, judgment, item = PoolEntry._meta.db_table, Judgment._meta.db_table, AssignmentItem._meta.db_table
    params: dict[str, object] = {"topic": assignment.topic_id, "assessor": assignment.assessor_id, "assignment": assignment.pk}
    if assignment.scope == Assignment.Scope.OVERLAP:
        rows = f"(SELECT entry_id AS id, entry_document_id AS document_id, queue_position FROM {item} WHERE assignment_id = %(assignment)s)"
        pos, topic, where = "e.queue_position", "%(topic)s", ""
    else:
        rows, pos, topic, where = entry, 'row_number() OVER (ORDER BY e."order", e.id)', "e.topic_id", "WHERE e.topic_id = %(topic)s"
    scheme = _loaded_scheme(assignment)
    if scheme is not None:
        complete, scheme_params = scheme_complete_sql(scheme, "j.labels", connection.vendor)
        params |= scheme_params
    else:  # the caller did not load the campaign: its scheme is read in the query (an uncorrelated subquery)
        complete = complete_sql("j.labels", f"""(SELECT c.scheme FROM {Topic._meta.db_table} t
                                                  JOIN {Campaign._meta.db_table} c ON c.id = t.campaign_id
                                                 WHERE t.id = %(topic)s)""", connection.vendor)
    sql = f"""
        SELECT e.id, e.document_id, {pos} AS pos,
               (j.document_id IS NOT NULL AND {complete}) AS judged{", j.updated_at AS judged_at" if with_times else ""}
          FROM {rows} e
          LEFT JOIN {judgment} j
            ON j.assessor_id = %(assessor)s AND j.topic_id = {topic} AND j.document_id = e.document_id
         {where}
    """
    return sql, params


def queue_position(assignment: Assignment, position: int, *, with_document: bool = False) -> QueuePosition | None:
    """The entry at `position` (1-based) with counts, unjudged neighbours and the assessor's own
    labels there, in one query; None if out of range. With `with_document`, the same query reads the
    document too (what the judge page shows of it: `_DOCUMENT`)."""
    sql, params = _queue_sql(assignment)
    document = f", {_DOCUMENT.sql()}" if with_document else ""
    join = f"JOIN {Document._meta.db_table} d ON d.id = q.document_id" if with_document else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH queue AS ({sql})
            SELECT q.id, q.document_id, q.pos,
                   (SELECT count(*) FROM queue), (SELECT count(*) FROM queue WHERE judged), q.judged,
                   (SELECT min(pos) FROM queue WHERE NOT judged AND pos > q.pos),
                   (SELECT max(pos) FROM queue WHERE NOT judged AND pos < q.pos),
                   (SELECT min(pos) FROM queue WHERE NOT judged),
                   EXISTS (SELECT 1 FROM {Reply._meta.db_table} r WHERE r.judgment_id = j.id),
                   {", ".join(f"j.{field}" for field in _OWN_LABELS)}{document}
              FROM queue q
              LEFT JOIN {Judgment._meta.db_table} j
                ON j.assessor_id = %(assessor)s AND j.topic_id = %(topic)s AND j.document_id = q.document_id
              {join}
             WHERE q.pos = %(position)s
            """,
            {**params, "position": position},
        )
        row = cursor.fetchone()
    if row is None:
        return None
    entry_id, document_id, pos, total, judged, is_judged, following, preceding, first, has_replies = row[:10]
    own = dict(zip(_OWN_LABELS, row[10:10 + len(_OWN_LABELS)], strict=True))
    labels = own if own["revision"] is not None else None
    if labels is not None and isinstance(labels["labels"], str):  # the driver hands JSON over as text
        labels["labels"] = json.loads(labels["labels"])
    return QueuePosition(
        entry_id, document_id, pos, total, judged, is_judged, following, preceding, first, labels, bool(has_replies),
        _DOCUMENT.instance(row, 10 + len(_OWN_LABELS)) if with_document else None,
    )


_OWN_LABELS = ("labels", "note", "flagged", "time_spent_ms", "source", "revision")
# What the judge page shows of a document (its metadata names an item's language); its text hash stays in the database.
_DOCUMENT = ModelColumns(Document, "d", ["id", "collection_id", "doc_id", "title", "body", "is_html", "url", "has_text", "metadata"])


def resume_position(assignment: Assignment) -> int | None:
    """Where the assessor carries on: the first unjudged entry after the one they judged last.

    "Last" is the most recently saved label, not the furthest position, so an assessor who went
    back to fix an early document still resumes at their frontier. The search wraps round to
    the start (documents skipped earlier); with everything judged it stays on the last judged
    one, and with nothing judged it starts at 1. None when the queue is empty.
    """
    sql, params = _queue_sql(assignment, with_times=True)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH queue AS ({sql}),
                 last AS (SELECT pos FROM queue WHERE judged ORDER BY judged_at DESC, pos DESC LIMIT 1)
            SELECT coalesce(
                (SELECT min(q.pos) FROM queue q, last WHERE NOT q.judged AND q.pos > last.pos),
                (SELECT min(pos) FROM queue WHERE NOT judged),
                (SELECT pos FROM last),
                (SELECT min(pos) FROM queue))
            """,
            params,
        )
        return cursor.fetchone()[0]


def position_of(assignment: Assignment, document_id: int) -> int | None:
    """The 1-based queue position of a document in the assignment, or None if it is not there."""
    sql, params = _queue_sql(assignment)
    with connection.cursor() as cursor:
        cursor.execute(f"WITH queue AS ({sql}) SELECT pos FROM queue WHERE document_id = %(document)s", {**params, "document": document_id})
        row = cursor.fetchone()
    return row[0] if row else None
