"""Loading existing qrels (last year's, or another tool's) as judgments by a named assessor, so documents
already judged need no new work.

The file is parsed and checked completely before anything is stored, with errors naming file and line:
every topic must be one of the campaign's (a qrels topic the campaign lacks is an error, not a new topic: a
topic needs its title and narrative, which qrels do not carry, and a typo would otherwise create one), and
every label must be a value of the campaign's scheme (a −2 in a scheme without −2 is refused). Documents
never loaded become stubs (``has_text=False``).

Storing is one transaction through services.judging.record_judgments_in_bulk, the bulk form of
`record_judgment` (set-based SQL fed by COPY): each line sets this file's dimension of the assessor's judgment,
with its history, and re-importing the same file changes nothing. Files of several dimensions for the same
documents therefore merge into the same judgments, in any order: a file of any dimension creates the judgments it
does not find (a judgment needs no particular dimension; the scheme's conditions are not checked on imports, which
keep what the file says).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.formats.qrels import parse_qrels
from assessments.formats.reading import line_batches
from assessments.labels import Dimension, SchemeError, Value
from assessments.models import Campaign, Document, Job
from assessments.models.fields import max_length
from assessments.services import audit, bulk, job_queue, jobs
from assessments.services.bulk import copy_escape
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.files import InputFile, count_lines, opened
from assessments.services.imports.image_qrels import import_image_qrels
from assessments.services.imports.sources import check_source_name, source_user
from assessments.services.imports.uploads import job_inputs, keep_upload, stored_name
from assessments.services.jobs import Progress
from assessments.services.judging import RowError, label_not_allowed, record_judgments_in_bulk

PHASES = ("main", "training")
PROGRESS_EVERY = 5000  # lines between progress reports
_DOC_ID_LENGTH = max_length(Document, "doc_id")


def import_qrels(
    *,
    campaign: Campaign,
    path: Path,
    kind: str | None = None,
    assessor: str,
    phase: str = "main",
    source: str | None = None,
    by: User | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import the qrels file at ``path`` as ``assessor``'s ``phase`` judgments of dimension ``kind`` (a name in the
    campaign's scheme; None: its primary dimension); all or nothing.

    ``source`` is the file name shown in errors (an upload's original name); it defaults to ``path``.
    Raises FormatError (file:line) for a bad line and ImportProblem for bad options; either way nothing
    is stored. Call outside a transaction when a Job reports progress, so pollers see it.
    """
    source = source or str(path)
    if campaign.is_images and kind is None:  # the lab's Task 3 file: all three questions in one
        return import_image_qrels(campaign=campaign, path=path, assessor=assessor, phase=phase, source=source, by=by)
    dimension = _check_options(campaign=campaign, kind=kind, assessor=assessor, phase=phase)
    topics = dict(campaign.topics.values_list("number", "id"))
    total = count_lines(InputFile(path, source))
    with tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024, mode="w+b") as rows:
        line_count, topic_ids = 0, set()
        checked = _checked_rows(path, source=source, dimension=dimension, topics=topics)
        for line, topic, doc, label in checked:
            rows.write(f"{line}\t{topics[topic]}\t{copy_escape(doc)}\t{label}\n".encode())
            line_count += 1
            topic_ids.add(topics[topic])
            if progress and line_count % PROGRESS_EVERY == 0:
                progress.advance(line, total)
        rows.seek(0)
        checksums = audit.file_checksums([(source, Path(path))])
        with transaction.atomic():
            bulk.lock_campaign(campaign)
            try:
                recorded = record_judgments_in_bulk(
                    campaign=campaign, rows=rows, dimension=dimension.name, assessor=source_user(assessor), phase=phase
                )
            except RowError as exc:
                raise FormatError(source, exc.key, str(exc)) from None
            audit.record(
                campaign=campaign, action=audit.Action.QRELS_IMPORTED, by=by, subject=f"{source} as {assessor}",
                details={"files": checksums, "kind": dimension.name, "phase": phase, "assessor": assessor, "lines": line_count,
                         "created": recorded.created, "updated": recorded.updated},
            )
    created, updated, stubs = recorded.created, recorded.updated, recorded.stubs
    if progress:
        progress.advance(total, total)
    counts = {
        "lines": line_count, "topics": len(topic_ids), "created": created, "updated": updated,
        "unchanged": line_count - created - updated, "stubs": stubs,
    }
    text = (
        f"{source}: {line_count} {dimension.name} labels on {len(topic_ids)} topic{'s' if len(topic_ids) != 1 else ''} as "
        f"{assessor}: {created} new judgments, {updated} changed, {counts['unchanged']} unchanged, {stubs} document stubs"
    )
    return ImportSummary(text, [], counts)


def _check_options(*, campaign: Campaign, kind: str | None, assessor: str, phase: str) -> Dimension:
    """The dimension the file holds, once the options are known to be usable (ImportProblem says which is not)."""
    scheme = campaign.label_scheme
    try:
        dimension = scheme.primary if kind is None else scheme.dimension(kind)
    except SchemeError as exc:
        raise ImportProblem(f"kind: {exc}") from None
    if phase not in PHASES:
        raise ImportProblem(f"unknown phase {phase!r}: use main or training")
    try:
        User._meta.get_field("username").run_validators(assessor)
    except ValidationError as exc:
        raise ImportProblem(f"assessor name {assessor!r}: {' '.join(exc.messages)}") from None
    if not assessor:
        raise ImportProblem("an assessor name is needed: imported labels are kept as that source's judgments")
    check_source_name(assessor)
    if not bulk.is_postgresql():
        raise ImportProblem("importing qrels needs PostgreSQL (it loads the file with COPY)")
    return dimension


def _decoded(file: InputFile, position: list[int]) -> Iterator[str]:
    """The file's lines as text (gunzipped if it is gzip, within the limits of formats.reading), keeping
    ``position[0]`` at the physical line number last read."""
    with opened(file) as (_, stream):
        for number, line in enumerate(chain.from_iterable(line_batches(stream, source=file.name, fields=True)), 1):
            position[0] = number
            yield line


def _checked_rows(
    path: Path, *, source: str, dimension: Dimension, topics: dict[str, int]
) -> Iterator[tuple[int, str, str, Value]]:
    """The file's rows, each checked as soon as it is read, so the first bad line is the one reported (the bulk
    form checks the labels again, as the write path must, but only once the whole file has been read)."""
    # parse_qrels yields a row as soon as it has read the row's line, so the line last read is the row's line.
    position = [0]
    lines = _decoded(InputFile(path, source), position)
    for topic, doc, label in parse_qrels(lines, source=source, dimension=dimension):
        line = position[0]
        if topic not in topics:
            raise FormatError(source, line, f"topic {topic} is not a topic of this campaign (import its topics first)")
        if not dimension.allows(label):
            raise FormatError(source, line, label_not_allowed(dimension, label))
        if len(doc) > _DOC_ID_LENGTH:
            raise FormatError(source, line, f"document id is longer than {_DOC_ID_LENGTH} characters")
        yield line, topic, doc, label


def start_qrels_import(
    *, campaign: Campaign, upload: UploadedFile, kind: str | None = None, assessor: str, phase: str = "main", created_by: User | None
) -> Job:
    """Keep an uploaded qrels file under MEDIA_ROOT/uploads/<job id>/ and queue its import as a Job, as
    services.imports.uploads.start_import does for runs (the page and the API call this).

    The options are checked now, so a wrong kind or assessor name is refused before anything is kept; the
    lines are checked by the job, whose errors name the uploaded file and line.
    """
    dimension = _check_options(campaign=campaign, kind=kind, assessor=assessor, phase=phase)
    with transaction.atomic():
        job = job_queue.queue_job(kind="import_qrels", campaign=campaign, params={}, created_by=created_by)
        folder = job.upload_folder
        folder.mkdir(parents=True)
        name = Path(upload.name or "upload").name
        kept = keep_upload(upload, folder / stored_name(name))
        job.params = {
            "files": [{"path": str(kept.relative_to(settings.MEDIA_ROOT)), "name": name}],
            "kind": dimension.name, "assessor": assessor, "phase": phase, "unit": "lines",
        }
        job.save(update_fields=["params"])
    return job


@jobs.handler("import_qrels")
def _import_qrels_job(job: Job, progress: Progress) -> dict:
    params = job.params
    paths, names = job_inputs(job)
    return import_qrels(
        campaign=jobs.campaign_of(job), path=paths[0], source=names[0], kind=params["kind"], assessor=params["assessor"],
        phase=params["phase"], by=job.created_by, progress=progress,
    ).as_result()
