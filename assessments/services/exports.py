"""Qrels out of the database: how several assessors' labels become one, streamed exports kept as numbered
snapshots, and what changed between two snapshots.

A qrels file holds one label per topic and document, but a campaign can hold several: every assessor judges
the training topics, overlap slices are judged twice in the main phase, and imported qrels sit beside new
judgments. An `AggregationRule` decides, and the snapshot records which rule made the file (the file itself
holds only qrels lines, because trec_eval reads every line as a judgment).

Exports stream: one server-side cursor ordered in SQL, grouped per (topic, document) as rows arrive, written
line by line to a spool file and to whoever reads the export (a file, a terminal, an HTTP response), so
a million judgments never sit in memory. The spool is kept in the database, a megabyte per row, as the
snapshot's bytes; whatever reads them back checks them against the checksum recorded at export first.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, partial
from itertools import groupby, islice
from operator import itemgetter
from typing import Literal

from django.core.exceptions import EmptyResultSet
from django.db import connection, connections, transaction
from django.db.models import (
    Case,
    DecimalField,
    Exists,
    Expression,
    F,
    IntegerField,
    Max,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Collate

from accounts.models import User
from assessments.formats.qrels import parse_qrels, topic_sort_key, write_qrels
from assessments.labels import Dimension, LabelScheme, SchemeError
from assessments.models import Adjudication, Campaign, Judgment, JudgmentEvent, QrelsSnapshot, QrelsSnapshotPart
from assessments.services import audit

Label = int | str
# Which judgment phases an export reads. Training labels stay out of the main qrels unless asked for.
PHASES: dict[str, tuple[str, ...]] = {"main": ("main",), "training": ("training",), "all": ("training", "main")}
RULE_NAMES = ("majority", "max", "mean", "adjudicated")

# Rows fetched per round trip from the server-side cursor, and qrels lines per write (and per HTTP chunk).
QUERY_CHUNK = 5000
LINES_PER_WRITE = 2000
PART_BYTES = 1 << 20  # of a snapshot's file per database row


class ExportError(ValueError):
    """An export, rule or diff that cannot be made as asked (the message says why)."""


@dataclass(frozen=True)
class AggregationRule:
    """How the labels of several assessors for one topic and document become the one qrels label.

    The rules work on any dimension of the campaign's scheme, one dimension per file:

    * ``majority``: the most frequent label. A tie goes to the stricter verdict: the lowest tied value for
      integer labels, graded or yes/no (1 vs 2 gives 1; −2 vs 2 gives −2), and for a category the tied label
      listed first in the campaign's scheme.
    * ``max``: the highest label (integer labels only).
    * ``mean``: the arithmetic mean rounded half up (1 and 2 give 1.5, which rounds to 2; −2 and 1 give −0.5,
      which rounds to 0). A mean that is no value of the scheme (−1 from −2 and 0) becomes the nearest scheme
      value, the lower one on a tie. Integer labels only.
    * ``assessor:NAME``: that assessor's label only; documents they did not judge are left out.
    * ``adjudicated``: the adjudicated label where an adjudicator decided the document (Adjudication), else the
      majority as above. An adjudication decides every dimension: one that left a dimension undecided leaves
      the document out of that dimension's file, whatever the assessors said.
    """

    method: Literal["majority", "max", "mean", "assessor", "adjudicated"]
    assessor: str = ""

    @classmethod
    def parse(cls, text: str) -> AggregationRule:
        if text in RULE_NAMES:
            return cls(text)  # type: ignore[arg-type]
        prefix, _, name = text.partition(":")
        if prefix == "assessor" and name:
            return cls("assessor", name)
        raise ExportError(f"unknown rule {text!r}: use majority, max, mean, adjudicated or assessor:NAME")

    def __str__(self) -> str:
        return f"assessor:{self.assessor}" if self.method == "assessor" else self.method

    def check(self, dimension: Dimension) -> None:
        if dimension.value_type is str and self.method in ("max", "mean"):
            raise ExportError(
                f"the {self.method} rule needs numeric labels; {dimension.name} labels take majority, adjudicated or assessor:NAME"
            )

    def combine(self, labels: Sequence[Label], scheme: Sequence[Label]) -> Label:
        """One label from the non-empty ``labels``; ``scheme`` lists the campaign's values in scheme order."""
        if len(labels) == 1 or self.method == "assessor":
            return labels[0]
        if self.method == "max":
            return max(labels)
        if self.method == "mean":
            total, n = sum(labels), len(labels)  # type: ignore[arg-type]
            rounded = (2 * total + n) // (2 * n)  # floor(mean + 1/2), exact in integers
            if rounded in scheme:
                return rounded
            return min(scheme, key=lambda value: (abs(value - rounded), value))  # type: ignore[operator]
        counts = Counter(labels).most_common()
        tied = [label for label, count in counts if count == counts[0][1]]
        if isinstance(tied[0], int):
            return min(tied)
        return min(tied, key=lambda label: scheme.index(label) if label in scheme else len(scheme))


def parse_options(
    *, campaign: Campaign, kind: str | None, phase: str, rule: str | AggregationRule
) -> tuple[Dimension, AggregationRule]:
    """Check an export's kind (a dimension of the campaign's scheme; None: its primary one), phase and rule against
    the campaign; return the dimension and the parsed rule."""
    scheme = campaign.label_scheme
    try:
        dimension = scheme.primary if kind is None else scheme.dimension(kind)
    except SchemeError as exc:
        raise ExportError(f"kind: {exc}") from None
    if phase not in PHASES:
        raise ExportError(f"unknown phase {phase!r}: use main, training or all")
    return dimension, parse_rule(rule, dimension=dimension)


def parse_rule(rule: str | AggregationRule, *, dimension: Dimension) -> AggregationRule:
    """The rule for labels of ``dimension``; a named assessor must exist (a typo would give an empty file)."""
    parsed = rule if isinstance(rule, AggregationRule) else AggregationRule.parse(rule)
    parsed.check(dimension)
    if parsed.method == "assessor" and not User.objects.filter(username=parsed.assessor).exists():
        raise ExportError(f"there is no assessor named {parsed.assessor!r}")
    return parsed


def assessors_of(campaign: Campaign) -> list[str]:
    """User names with judgments in the campaign, for choosing an ``assessor:NAME`` rule."""
    return list(
        User.objects.filter(judgments__topic__campaign=campaign).distinct().order_by("username").values_list("username", flat=True)
    )


def with_adjudications(judgments: QuerySet[Judgment]) -> QuerySet[Judgment]:
    """Each judgment with whether its topic and document were adjudicated (`adjudicated`) and the adjudicated
    labels (`adjudicated_labels`, a dict keyed by dimension, None where not adjudicated), for the ``adjudicated``
    rule."""
    final = Adjudication.objects.filter(topic=OuterRef("topic"), document=OuterRef("document"))
    return judgments.annotate(adjudicated=Exists(final), adjudicated_labels=Subquery(final.values("labels")[:1]))


@dataclass(frozen=True)
class FileValue:
    """How a qrels file reads one dimension from a row: the keys of `labels` it needs, and the value they give
    (scheme.value_for_files: the label, or the dimension's `otherwise` where its condition was answered and fails,
    as Touché 2023 Task 2 grades a document of the wrong causal direction off-topic).

    Only a dimension with an `otherwise` needs a second key (its condition's) and the scheme's rule row by row; any
    other's value is its key's as read, so a million-line export does no more per row than it did with columns.
    """

    scheme: LabelScheme
    name: str

    @cached_property
    def keys(self) -> tuple[str, ...]:
        d = self.scheme.dimension(self.name)
        return (self.name,) if d.otherwise is None or d.condition is None else (self.name, d.condition.dimension)

    def columns(self, field: str = "labels") -> list[Expression]:
        """The keys as columns of `field` (a JSON object of labels), each of its dimension's type: the text of the
        key, cast to an integer for graded and yes/no dimensions, so no JSON is decoded row by row."""
        return [_typed(KeyTextTransform(key, field), self.scheme.dimension(key)) for key in self.keys]

    def of(self, values: Sequence[Label | None]) -> Label | None:
        """The file's value from the `columns` of one row (None: the row has none)."""
        if len(values) == 1:
            return values[0]
        return self.scheme.value_for_files(self.name, {k: v for k, v in zip(self.keys, values, strict=True) if v is not None})

    def in_labels(self, labels: Mapping[str, Label] | None) -> Label | None:
        """The file's value from a whole labels object (an adjudication's)."""
        return None if labels is None else self.scheme.value_for_files(self.name, labels)


def _typed(text: Expression, dimension: Dimension) -> Expression:
    return text if dimension.value_type is str else Cast(text, IntegerField())


def labelled_judgments(*, campaign: Campaign, value: FileValue, phase: str, rule: AggregationRule) -> QuerySet[Judgment]:
    """The judgments of the phase that may carry a label of the file's dimension, for the rule: those with a value
    there (a judgment may hold other dimensions only, or only a note), or every one where the dimension has an
    `otherwise` that FileValue works out.

    Under the ``adjudicated`` rule every judgment of the phase counts: an adjudication can give a label that
    none of the assessors gave (a dimension none of them was asked, for a document they all found off-topic).
    """
    judgments = Judgment.objects.filter(topic__campaign=campaign, phase__in=PHASES[phase])
    if rule.method == "adjudicated":
        return judgments
    if len(value.keys) == 1:
        judgments = judgments.filter(labels__has_key=value.name)
    if rule.method == "assessor":
        judgments = judgments.filter(assessor__username=rule.assessor)
    return judgments


def _bytewise(name: str) -> Collate:
    # Sort ids by code point, as Python and trec_eval's strcmp do, whatever the database's locale.
    return Collate(F(name), "C" if connection.vendor == "postgresql" else "BINARY")


def _qrels_order() -> list[Expression]:
    """ORDER BY for topic_sort_key(topic number), then document id: numeric topics by value, others after."""
    numeric = {"topic__number__regex": r"^[0-9]+$"}
    return [
        Case(When(**numeric, then=Value(0)), default=Value(1), output_field=IntegerField()),
        Case(When(**numeric, then=Cast("topic__number", DecimalField(max_digits=40, decimal_places=0)))),
        _bytewise("topic__number"),
        _bytewise("document__doc_id"),
    ]


def qrels_rows(
    *, campaign: Campaign, kind: str | None = None, phase: str = "main", rule: str | AggregationRule = "majority",
    chunk_size: int = QUERY_CHUNK,
) -> Iterator[tuple[str, str, Label]]:
    """Yield ``(topic number, doc id, label)`` once per judged pair, in qrels order, aggregated by ``rule``, for
    dimension ``kind`` of the campaign's scheme (None: its primary one).

    One query, read through a server-side cursor; memory holds one (topic, document) group at a time.
    """
    dimension, parsed = parse_options(campaign=campaign, kind=kind, phase=phase, rule=rule)
    value = FileValue(campaign.label_scheme, dimension.name)
    scheme = tuple(v.value for v in dimension.values)
    judgments = labelled_judgments(campaign=campaign, value=value, phase=phase, rule=parsed)
    if parsed.method == "adjudicated":
        yield from _adjudicated_rows(judgments, value=value, rule=parsed, scheme=scheme, chunk_size=chunk_size)
        return
    rows = _driver_rows(
        judgments.order_by(*_qrels_order()).values_list("topic__number", "document__doc_id", *value.columns()), chunk_size
    )
    single = len(value.keys) == 1
    for (topic, doc), group in groupby(rows, key=itemgetter(0, 1)):
        if single:  # the value as read, with no call a row, as when labels were columns
            labels = [row[2] for row in group if row[2] is not None]
        else:
            labels = [label for row in group if (label := value.of(row[2:])) is not None]
        if labels:
            yield topic, doc, parsed.combine(labels, scheme)


def _driver_rows(rows: QuerySet, chunk_size: int) -> Iterator[tuple]:
    """The rows of a values_list query as the database driver gives them, read through a server-side cursor as
    `.iterator(chunk_size)` reads them, but without Django's converters: a label cast to an integer in SQL got
    int() called on it again in Python for each row (1 M calls in a million-line export). Only for columns the
    driver already gives in their Python type (text and integers), as qrels_rows asks for."""
    try:
        sql, params = rows.query.get_compiler(using=rows.db).as_sql()
    except EmptyResultSet:
        return
    cursor = connections[rows.db].chunked_cursor()
    try:
        cursor.execute(sql, params)
        while chunk := cursor.fetchmany(chunk_size):
            yield from chunk
    finally:
        cursor.close()


def _adjudicated_rows(
    judgments: QuerySet[Judgment], *, value: FileValue, rule: AggregationRule, scheme: Sequence[Label], chunk_size: int
) -> Iterator[tuple[str, str, Label]]:
    rows = (
        with_adjudications(judgments).order_by(*_qrels_order())
        .values_list("topic__number", "document__doc_id", "adjudicated", "adjudicated_labels", *value.columns())
        .iterator(chunk_size=chunk_size)
    )
    for (topic, doc), rows_of_item in groupby(rows, key=itemgetter(0, 1)):
        group = list(rows_of_item)
        if group[0][2]:
            label = value.in_labels(group[0][3])
        else:
            labels = [label for row in group if (label := value.of(row[4:])) is not None]
            label = rule.combine(labels, scheme) if labels else None
        if label is not None:
            yield topic, doc, label


@dataclass(frozen=True)
class LabelSource:
    """Labels an export writes instead of the assessors' (services.qrels_sources: a machine judge's, alone or filling
    the assessors' holes): its rows in qrels order, and how the snapshot and its audit record name where they came
    from, since the file itself holds qrels lines only."""

    rows: Callable[[], Iterator[tuple[str, str, Label]]]
    rule: str  # the snapshot's rule column, e.g. "machine:umbrela" or "majority+machine:umbrela"
    details: dict[str, str]  # added to the export's audit record: the sources, the judge and its model


class QrelsExport:
    """A qrels export in progress: iterate once to get the file's bytes.

    The same bytes go to a new snapshot file; the numbered `QrelsSnapshot` row is created when the iteration
    ends (``snapshot`` is then set). An export abandoned half way (a closed HTTP connection) leaves nothing.
    """

    def __init__(
        self, *, campaign: Campaign, kind: str, phase: str, rule: AggregationRule, created_by: User | None, chunk_size: int,
        source: LabelSource | None = None,
    ) -> None:
        self.campaign, self.kind, self.phase, self.rule = campaign, kind, phase, rule
        self.created_by, self.chunk_size, self.source = created_by, chunk_size, source
        self.snapshot: QrelsSnapshot | None = None
        self.download_name = f"{campaign.slug}-{kind}-{phase}.qrels"

    def __iter__(self) -> Iterator[bytes]:
        rows = self.source.rows() if self.source else qrels_rows(
            campaign=self.campaign, kind=self.kind, phase=self.phase, rule=self.rule, chunk_size=self.chunk_size
        )
        hasher, line_count = hashlib.sha256(), 0
        part = tempfile.NamedTemporaryFile(prefix="touchstone-qrels-", suffix=".part", delete=False)
        try:
            with part:
                while batch := list(islice(rows, LINES_PER_WRITE)):
                    text = io.StringIO()
                    line_count += write_qrels(batch, text)
                    data = text.getvalue().encode()
                    hasher.update(data)
                    part.write(data)
                    yield data
            self.snapshot = _store_snapshot(self, part.name, line_count=line_count, sha256=hasher.hexdigest())
        finally:
            os.unlink(part.name)


def export_qrels(
    *,
    campaign: Campaign,
    kind: str | None = None,
    phase: str = "main",
    rule: str = "majority",
    created_by: User | None = None,
    chunk_size: int = QUERY_CHUNK,
) -> QrelsExport:
    """Check the options now (so a bad request fails before any byte is sent) and return the export to stream: the
    labels of dimension `kind` of the campaign's scheme (None: its primary dimension)."""
    dimension, parsed = parse_options(campaign=campaign, kind=kind, phase=phase, rule=rule)
    return QrelsExport(campaign=campaign, kind=dimension.name, phase=phase, rule=parsed, created_by=created_by, chunk_size=chunk_size)


def nothing_to_export(*, campaign: Campaign, kind: str | None = None, phase: str = "main", rule: str = "majority") -> str:
    """Why an export with these options would have no line ("" when it has some): an empty file kept as a numbered
    snapshot reads like a result, so the page and the command say so instead (an empty snapshot stays possible
    through the API, as the start of a diff)."""
    dimension, parsed = parse_options(campaign=campaign, kind=kind, phase=phase, rule=rule)
    value = FileValue(campaign.label_scheme, dimension.name)
    if labelled_judgments(campaign=campaign, value=value, phase=phase, rule=parsed).exists():
        return ""
    whose = f" by {parsed.assessor}" if parsed.method == "assessor" else ""
    return (f"no {dimension.name} labels of the {phase} phase{whose} yet: nothing to export "
            "(judge documents first, or import earlier labels with import_qrels)")


def _store_snapshot(export: QrelsExport, path: str, *, line_count: int, sha256: str) -> QrelsSnapshot:
    with transaction.atomic():
        # Locking the campaign row serialises numbering between concurrent exports.
        Campaign.objects.select_for_update().filter(pk=export.campaign.pk).first()
        number = (QrelsSnapshot.objects.filter(campaign=export.campaign).aggregate(n=Max("number"))["n"] or 0) + 1
        rule = export.source.rule if export.source else str(export.rule)
        snapshot = QrelsSnapshot.objects.create(
            campaign=export.campaign, number=number, kind=export.kind, phase=export.phase, rule=rule,
            line_count=line_count, sha256=sha256, created_by=export.created_by,
        )
        with open(path, "rb") as spool:
            for index, data in enumerate(iter(partial(spool.read, PART_BYTES), b"")):
                QrelsSnapshotPart.objects.create(snapshot=snapshot, index=index, data=data)
        audit.record(
            campaign=export.campaign, action=audit.Action.QRELS_EXPORTED, by=export.created_by, subject=f"qrels #{number}",
            details={"number": number, "kind": export.kind, "phase": export.phase, "rule": str(export.rule),
                     "lines": line_count, "sha256": sha256, **(export.source.details if export.source else {})},
        )
    return snapshot


def snapshot_content(snapshot: QrelsSnapshot) -> Iterator[bytes]:
    """The snapshot's file as it was exported, in pieces, for a download.

    The bytes are checked against the checksum recorded at export before the first piece is returned, so a
    changed snapshot raises ExportError while an error can still be answered, instead of being served.
    """
    hasher = hashlib.sha256()
    for data in _stored_parts(snapshot):
        hasher.update(data)
    if hasher.hexdigest() != snapshot.sha256:
        raise ExportError(_changed_since_export(snapshot))
    return _stored_parts(snapshot)


def _stored_parts(snapshot: QrelsSnapshot) -> Iterator[bytes]:
    # One row per query: no server-side cursor (which a transaction pooler may not allow), and one megabyte in memory.
    for pk in snapshot.parts.order_by("index").values_list("pk", flat=True):
        yield bytes(QrelsSnapshotPart.objects.values_list("data", flat=True).get(pk=pk))


def _changed_since_export(snapshot: QrelsSnapshot) -> str:
    return (
        f"qrels snapshot #{snapshot.number} no longer matches its checksum (sha256 {snapshot.sha256[:12]}… at export):"
        " its stored bytes were changed after export, so they are not used; export the qrels again"
    )


# --- Diffs -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """A JudgmentEvent on a diffed (topic, document): who set which label when."""

    assessor: str
    at: datetime
    revision: int
    label: Label | None
    source: str


@dataclass(frozen=True)
class DiffLine:
    topic: str
    doc_id: str
    old: Label | None  # None: not in the older snapshot
    new: Label | None  # None: not in the newer snapshot
    changes: list[Change] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "added" if self.old is None else "removed" if self.new is None else "changed"


@dataclass(frozen=True)
class SnapshotDiff:
    older: QrelsSnapshot
    newer: QrelsSnapshot
    lines: list[DiffLine]
    unnamed: tuple[str, ...] = ()  # phases whose label changes are not listed (not for this viewer)

    @property
    def counts(self) -> dict[str, int]:
        counts = Counter(line.status for line in self.lines)
        return {status: counts[status] for status in ("added", "removed", "changed")}


def diff_snapshots(
    *, older: QrelsSnapshot, newer: QrelsSnapshot, named_phases: Sequence[str] = ("training", "main")
) -> SnapshotDiff:
    """The lines added, removed and changed from ``older`` to ``newer`` (given in either order), each with the
    label changes recorded on its topic and document between the two exports (JudgmentEvent rows), so an
    organiser sees who changed what. Only changes of judgments in `named_phases` are listed, since each names its
    assessor (access.named_label_phases); the phases of the snapshots left out are in `SnapshotDiff.unnamed`.

    Both files are read as streams and merged in qrels order; a file whose bytes no longer match the checksum
    recorded at export raises ExportError, because the diff would then describe a file nobody exported.
    """
    if older.campaign_id != newer.campaign_id:
        raise ExportError("snapshots of different campaigns cannot be compared")
    if older.kind != newer.kind:
        raise ExportError(f"snapshot #{older.number} holds {older.kind} labels and #{newer.number} {newer.kind} labels")
    if older.number > newer.number:
        older, newer = newer, older
    scheme = newer.campaign.label_scheme
    try:
        dimension = scheme.dimension(newer.kind)
    except SchemeError as exc:
        raise ExportError(f"snapshot #{newer.number}: {exc}") from None
    lines = list(_merge(_snapshot_rows(older, dimension), _snapshot_rows(newer, dimension)))
    by_key = {(line.topic, line.doc_id): line for line in lines}
    phases = set(PHASES[older.phase] + PHASES[newer.phase])
    if by_key and phases & set(named_phases):
        value = FileValue(scheme, dimension.name)
        events = (
            JudgmentEvent.objects.filter(
                judgment__topic__campaign_id=newer.campaign_id,
                judgment__phase__in=phases & set(named_phases),
                at__gt=older.created_at,
                at__lte=newer.created_at,
            )
            .order_by("at", "pk")
            .values_list("judgment__topic__number", "judgment__document__doc_id", "assessor__username", "at", "revision", "source",
                         *value.columns())
        )
        for topic, doc, assessor, at, revision, source, *labels in events.iterator(chunk_size=QUERY_CHUNK):
            if line := by_key.get((topic, doc)):
                line.changes.append(Change(assessor, at, revision, value.of(labels), source))
    return SnapshotDiff(older=older, newer=newer, lines=lines, unnamed=tuple(sorted(phases - set(named_phases))))


def _snapshot_rows(snapshot: QrelsSnapshot, dimension: Dimension) -> Iterator[tuple[str, str, Label]]:
    """The snapshot's lines, parsed, once its bytes are known to be those exported."""
    if not snapshot.line_count:
        snapshot_content(snapshot)  # an export without judgments has nothing to parse, but must still match
        return
    yield from parse_qrels(_lines(snapshot_content(snapshot)), source=f"qrels snapshot #{snapshot.number}", dimension=dimension)


def _lines(parts: Iterable[bytes]) -> Iterator[str]:
    rest = b""
    for data in parts:
        *lines, rest = (rest + data).split(b"\n")
        yield from (line.decode("utf-8") for line in lines)
    if rest:
        yield rest.decode("utf-8")


def _merge(old: Iterator[tuple[str, str, Label]], new: Iterator[tuple[str, str, Label]]) -> Iterator[DiffLine]:
    """Merge two files sorted in qrels order (both were written by `QrelsExport`)."""

    def key(row: tuple[str, str, Label]) -> tuple:
        return topic_sort_key(row[0]), row[1]

    a, b = next(old, None), next(new, None)
    while a is not None or b is not None:
        if b is None or (a is not None and key(a) < key(b)):
            assert a is not None  # the loop runs while one of them is not None
            yield DiffLine(a[0], a[1], a[2], None)
            a = next(old, None)
        elif a is None or key(b) < key(a):
            yield DiffLine(b[0], b[1], None, b[2])
            b = next(new, None)
        else:
            if a[2] != b[2]:
                yield DiffLine(a[0], a[1], a[2], b[2])
            a, b = next(old, None), next(new, None)
