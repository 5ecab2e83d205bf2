"""Line-aligned qrels: one file per label dimension, all with the same (topic, document) rows in the same order.

Touché published its multi-dimensional judgments this way: Touché 2022 Task 1's
``touche-task1-2022-{relevance,quality,coherence}-dedup.qrels`` hold the same pairs line by line (ir_datasets
zips the files and fails where they differ), as 2021 Task 2's relevance and quality files do. A plain export
(services.exports) writes one dimension and leaves out a document without a value there, so the files of a
campaign that asks quality only of relevant documents differ in length. An aligned export writes every dimension
of the campaign's scheme (or those asked for) from one pass over the judgments:

* A row is a (topic, document) whose combined labels give a value for every dimension written. The value of a
  dimension in one judgment is what the qrels take (scheme.value_for_files: the label, or the dimension's
  `otherwise` where its condition was answered and fails); where the dimension has no `otherwise` and its
  condition fails, the aligned files write 0, as the lab's files hold 0 for the quality and coherence of a pair
  judged not relevant. A dimension that can hold no 0 and has no `otherwise` (a category) cannot be filled, and
  an export that includes it is refused: leave it out.
* Labels of several assessors combine per dimension by the rule, as a plain export does (AggregationRule); under
  ``adjudicated`` an adjudication decides every dimension of its document.
* A document with values for some dimensions but not all (a judgment still incomplete, a relevant pair whose
  coherence nobody gave yet) is left out of every file, and counted and named in the export's warnings, so the
  files stay aligned. A judgment holding only a note is no judgment of anything and is left out silently.

Each file is kept as a numbered qrels snapshot of its dimension, as a plain export is, all in one transaction.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import IO, Any

from django.db import transaction

from accounts.models import User
from assessments.formats.qrels import write_qrels
from assessments.labels import Dimension, LabelScheme, SchemeError
from assessments.models import Campaign, Judgment, QrelsSnapshot
from assessments.services.exports import (
    PHASES,
    QUERY_CHUNK,
    AggregationRule,
    ExportError,
    Label,
    QrelsExport,
    _qrels_order,
    _store_snapshot,
    parse_rule,
    with_adjudications,
)

INCOMPLETE_NAMED = 20  # documents left out that the warnings name one by one


def file_name(campaign: Campaign, kind: str) -> str:
    """``<campaign>-<dimension>.qrels``, the name each aligned file gets in the output folder."""
    return f"{campaign.slug}-{kind}.qrels"


@dataclass(frozen=True)
class AlignedFile:
    kind: str
    path: Path
    snapshot: QrelsSnapshot


@dataclass
class AlignedExport:
    files: list[AlignedFile]
    lines: int  # in each file
    incomplete: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)  # (topic, doc, dimensions lacking)
    incomplete_total: int = 0

    @property
    def warnings(self) -> list[str]:
        named = [
            f"topic {topic} document {doc}: left out of every file, it has no {' or '.join(lacking)} label"
            for topic, doc, lacking in self.incomplete
        ]
        if self.incomplete_total > len(self.incomplete):
            named.append(f"… and {self.incomplete_total - len(self.incomplete)} more documents left out for a missing label")
        return named


def filler(dimension: Dimension) -> Label | None:
    """What the aligned files write for `dimension` where its condition was answered and fails: its `otherwise`,
    else 0 where 0 is one of its values (None: nothing can stand there)."""
    if dimension.otherwise is not None:
        return dimension.otherwise
    return 0 if dimension.allows(0) else None


def aligned_values(scheme: LabelScheme, labels: Mapping[str, Label] | None) -> dict[str, Label]:
    """Every dimension's value in one judgment's (or adjudication's) labels as the aligned files read it: the qrels'
    value (scheme.value_for_files), else the dimension's `filler` where its condition was answered and fails, followed
    through chains of conditions (a filled value answers the condition of the dimension that hangs on it)."""
    values: dict[str, Label] = dict(labels or {})
    changed = True
    while changed:
        changed = False
        for d in scheme.dimensions:
            if d.name in values:
                continue
            value = scheme.value_for_files(d.name, values)
            if value is None and d.condition is not None and d.condition.dimension in values and not d.condition.holds(values):
                value = filler(d)
            if value is not None:
                values[d.name] = value
                changed = True
    return values


def parse_kinds(campaign: Campaign, kinds: Sequence[str] | None) -> list[Dimension]:
    """The dimensions to write: those named (in the scheme's order), or every one; each must be fillable where
    its condition fails."""
    scheme = campaign.label_scheme
    try:
        chosen = [scheme.dimension(name) for name in dict.fromkeys(kinds)] if kinds else list(scheme.dimensions)
    except SchemeError as exc:
        raise ExportError(f"kind: {exc}") from None
    order = {name: i for i, name in enumerate(scheme.names)}
    chosen.sort(key=lambda d: order[d.name])
    for d in chosen:
        if d.condition is not None and filler(d) is None:
            raise ExportError(
                f"{d.name} has no value 0 and no 'otherwise', so the aligned files could not give it a value where it is"
                f" not asked ({d.condition.describe()} fails); export it on its own, or name the other dimensions with --kind"
            )
    return chosen


def aligned_rows(
    *, campaign: Campaign, dimensions: Sequence[Dimension], phase: str, rule: AggregationRule, chunk_size: int = QUERY_CHUNK
) -> Iterator[tuple[str, str, dict[str, Label]]]:
    """Yield ``(topic number, doc id, {dimension: value})`` per judged (topic, document) in qrels order, the values
    combined by `rule` per dimension; a dimension without a value is absent from the dict (the caller decides)."""
    scheme = campaign.label_scheme
    values_of = {d.name: tuple(v.value for v in d.values) for d in dimensions}
    judgments = Judgment.objects.filter(topic__campaign=campaign, phase__in=PHASES[phase])
    if rule.method == "assessor":
        judgments = judgments.filter(assessor__username=rule.assessor)
    columns = ["topic__number", "document__doc_id", "labels"]
    if rule.method == "adjudicated":
        judgments = with_adjudications(judgments)
        columns += ["adjudicated", "adjudicated_labels"]
    rows = judgments.order_by(*_qrels_order()).values_list(*columns).iterator(chunk_size=chunk_size)
    for (topic, doc), group in groupby(rows, key=itemgetter(0, 1)):
        judged = list(group)
        if rule.method == "adjudicated" and judged[0][3]:
            decided = aligned_values(scheme, judged[0][4])
            yield topic, doc, {d.name: decided[d.name] for d in dimensions if d.name in decided}
            continue
        each = [aligned_values(scheme, row[2]) for row in judged]
        combined: dict[str, Label] = {}
        for d in dimensions:
            labels = [values[d.name] for values in each if d.name in values]
            if labels:
                combined[d.name] = rule.combine(labels, values_of[d.name])
        yield topic, doc, combined


def export_aligned(
    *,
    campaign: Campaign,
    output_dir: str | os.PathLike[str],
    kinds: Sequence[str] | None = None,
    phase: str = "main",
    rule: str = "majority",
    created_by: User | None = None,
    chunk_size: int = QUERY_CHUNK,
) -> AlignedExport:
    """Write ``<campaign>-<dimension>.qrels`` into `output_dir` (made if missing) for each dimension (default: the
    whole scheme), with the same rows in the same order, and keep each as a qrels snapshot. The files appear only once
    all are written and stored; a failure leaves neither files nor snapshots."""
    dimensions = parse_kinds(campaign, kinds)
    if phase not in PHASES:
        raise ExportError(f"unknown phase {phase!r}: use main, training or all")
    parsed = AggregationRule.parse(rule)
    for d in dimensions:
        parse_rule(parsed, dimension=d)  # max and mean need numbers; a named assessor must exist
    folder = Path(output_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{folder}: {exc.strerror or exc}") from None

    spools = {d.name: tempfile.NamedTemporaryFile("w", dir=folder, prefix=f".{file_name(campaign, d.name)}.", suffix=".part",
                                                  delete=False, encoding="utf-8") for d in dimensions}
    hashers = {name: hashlib.sha256() for name in spools}
    result = AlignedExport(files=[], lines=0)
    try:
        batch: list[tuple[str, str, dict[str, Label]]] = []
        for row in aligned_rows(campaign=campaign, dimensions=dimensions, phase=phase, rule=parsed, chunk_size=chunk_size):
            topic, doc, values = row
            if len(values) == len(dimensions):
                batch.append(row)
                if len(batch) >= 2000:
                    result.lines += _write(batch, spools, hashers)
                    batch = []
            elif values:
                lacking = tuple(d.name for d in dimensions if d.name not in values)
                result.incomplete_total += 1
                if len(result.incomplete) < INCOMPLETE_NAMED:
                    result.incomplete.append((topic, doc, lacking))
        result.lines += _write(batch, spools, hashers)
        for spool in spools.values():
            spool.close()
        with transaction.atomic():
            for d in dimensions:
                carrier = QrelsExport(campaign=campaign, kind=d.name, phase=phase, rule=parsed, created_by=created_by,
                                      chunk_size=chunk_size)
                snapshot = _store_snapshot(carrier, spools[d.name].name, line_count=result.lines, sha256=hashers[d.name].hexdigest())
                result.files.append(AlignedFile(d.name, folder / file_name(campaign, d.name), snapshot))
        for file in result.files:
            os.replace(spools[file.kind].name, file.path)
    finally:
        for spool in spools.values():
            spool.close()
            if os.path.exists(spool.name):
                os.unlink(spool.name)
    return result


def _write(batch: list[tuple[str, str, dict[str, Label]]], spools: Mapping[str, IO[str]], hashers: Mapping[str, Any]) -> int:
    """Append one line per row to every dimension's spool; the number of rows."""
    count = 0
    for name, spool in spools.items():
        text = io.StringIO()
        count = write_qrels(((topic, doc, values[name]) for topic, doc, values in batch), text)
        data = text.getvalue()
        hashers[name].update(data.encode())
        spool.write(data)
    return count
