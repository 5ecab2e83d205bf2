"""Imports from the browser and the API: uploads kept under MEDIA_ROOT/uploads/<job id>/ and imported by a Job.

The management commands call the import functions themselves, on the files they are given.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.move import file_move_safe
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils.text import get_valid_filename

from accounts.models import User
from assessments.models import Campaign, Job, PoolEntry
from assessments.services import classification, image_runs, job_queue, jobs
from assessments.services.imports import ImportProblem
from assessments.services.imports.documents import DOCUMENT_FORMATS, check_collection_writer, import_documents
from assessments.services.imports.images import import_images
from assessments.services.imports.items import check_item_options, import_items
from assessments.services.imports.runs import TEAM_LENGTH, import_runs, require_topics
from assessments.services.imports.topics import import_topics
from assessments.services.jobs import Progress

IMPORT_KINDS = ("import_topics", "import_documents", "import_runs", "import_items", "import_images")
# The unit of each kind's progress: runs and topics count bytes read; documents count lines, because the
# document reader opens its files itself and reports the line of each record, not its byte offset. Items are
# checked whole before anything is stored, so their job reports only its end. An image collection counts images.
PROGRESS_UNITS = {
    "import_topics": "bytes", "import_documents": "lines", "import_runs": "bytes", "import_items": "bytes",
    "import_images": "images",
}


def start_import(
    *, kind: str, campaign: Campaign, uploads: Sequence[UploadedFile], options: Mapping | None = None, created_by: User | None
) -> Job:
    """Keep uploaded files under MEDIA_ROOT/uploads/<job id>/ and queue their import as a Job.

    The page and the API call this; the management commands call the import functions themselves. Options
    are checked now, so a wrong format is refused before the upload is kept; lines are checked by the job.
    """
    options = dict(options or {})
    if kind not in IMPORT_KINDS:
        raise ImportProblem(f"unknown import {kind!r}")
    if not uploads:
        raise ImportProblem("choose a file to upload")
    if kind == "import_topics" and len(uploads) != 1:
        raise ImportProblem("upload one topics file at a time")
    if kind == "import_images":
        check_image_upload(campaign, uploads)
    if options.get("format", "auto") not in DOCUMENT_FORMATS:
        raise ImportProblem(f"unknown document format {options['format']!r}")
    if len(options.get("team", "")) > TEAM_LENGTH:
        raise ImportProblem(f"the team name is longer than {TEAM_LENGTH} characters")
    if kind == "import_runs" and campaign.is_classification:
        classification.require_items(campaign, PoolEntry.objects.filter(topic__campaign=campaign).exists())
    elif kind == "import_runs":
        require_topics(campaign, campaign.topics.exists())  # refuse now rather than in the worker
    if kind in ("import_documents", "import_items", "import_images"):
        check_collection_writer(campaign, created_by)  # the job checks again, as it runs
    if kind == "import_items":
        check_item_options(campaign, assessor=options.get("assessor") or None, files=len(uploads))
    folder = None
    try:
        with transaction.atomic():
            job = job_queue.queue_job(kind=kind, campaign=campaign, params={}, created_by=created_by)
            folder = job.upload_folder
            folder.mkdir(parents=True)
            files = [
                {"path": str(keep_upload(upload, folder / stored_name(upload.name, prefix=f"{i}-")).relative_to(settings.MEDIA_ROOT)),
                 "name": Path(upload.name or "upload").name}
                for i, upload in enumerate(uploads, 1)
            ]
            job.params = {**options, "files": files, "unit": PROGRESS_UNITS[kind]}
            job.save(update_fields=["params"])
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return job


def check_image_upload(campaign: Campaign, uploads: Sequence[UploadedFile]) -> None:
    """An image collection comes as one zip of the lab's layout, into an image campaign: refused before it is kept."""
    if not campaign.is_images:
        raise ImportProblem(
            f"campaign {campaign.slug} does not judge images: images are imported into an image campaign "
            "(create_campaign --preset touche-2023-task3, or --kind images)"
        )
    if len(uploads) != 1:
        raise ImportProblem("upload one zip of the collection at a time")
    upload = uploads[0]
    head = upload.read(4)
    upload.seek(0)
    if head not in (b"PK\x03\x04", b"PK\x05\x06"):  # a zip's first entry, or an empty zip's end record
        raise ImportProblem(f"{Path(upload.name or 'upload').name}: not a zip file (upload the collection's folder as a .zip)")


# File systems take names of at most 255 bytes; Django cuts an upload's name to 255 characters, which can be more
# bytes than that, and the job's prefix adds a few. The kept copy's name is cut well below; the name people see
# (errors, the job, the timeline) stays the uploaded one.
_STORED_NAME_BYTES = 200


def stored_name(name: str | None, *, prefix: str = "") -> str:
    """A safe name for an upload's kept copy: `prefix` and the file's name, cut to _STORED_NAME_BYTES bytes (its
    suffixes, such as .txt.gz, kept while they fit)."""
    try:
        safe = get_valid_filename(Path(name or "upload").name)
    except SuspiciousFileOperation:  # nothing usable is left of it ("???")
        safe = "upload"
    room = _STORED_NAME_BYTES - len(prefix.encode())
    if len(safe.encode()) > room:
        suffix = "".join(Path(safe).suffixes)[-32:]
        stem = safe[: len(safe) - len(suffix)]
        while stem and len((stem + suffix).encode()) > room:
            stem = stem[:-1]
        safe = stem + suffix if stem and len((stem + suffix).encode()) <= room else "upload"
    return prefix + safe


def keep_upload(upload: UploadedFile, destination: Path) -> Path:
    """Move (large uploads Django spooled to disk) or stream (small ones) the upload to `destination`."""
    if hasattr(upload, "temporary_file_path"):
        file_move_safe(upload.temporary_file_path(), str(destination))
    else:
        with open(destination, "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    return destination


def job_inputs(job: Job) -> tuple[list[Path], list[str]]:
    """The job's uploaded files and their names. services.jobs.end_job removes them when the job ends: at once
    when it succeeded, was cancelled or found a wrong line; after JOB_FILES_KEPT_HOURS when it failed otherwise,
    so that it can be retried."""
    files = job.params["files"]
    return [Path(settings.MEDIA_ROOT) / f["path"] for f in files], [f["name"] for f in files]


@jobs.handler("import_topics")
def _import_topics_job(job: Job, progress: Progress) -> dict:
    paths, names = job_inputs(job)
    return import_topics(
        campaign=jobs.campaign_of(job), path=paths[0], name=names[0], allow_changes=bool(job.params.get("allow_changes")),
        confirmed_changes=job.params.get("confirmed", {}).get("digest"), by=jobs.acting_user(job), progress=progress,
    ).as_result()


@jobs.handler("import_documents")
def _import_documents_job(job: Job, progress: Progress) -> dict:
    params = job.params
    paths, names = job_inputs(job)
    return import_documents(
        campaign=jobs.campaign_of(job), paths=paths, names=names, fmt=params.get("format", "auto"),
        only_pooled=bool(params.get("only_pooled")), by=job.created_by, progress=progress,
    ).as_result()


@jobs.handler("import_runs")
def _import_runs_job(job: Job, progress: Progress) -> dict:
    paths, names = job_inputs(job)
    campaign = jobs.campaign_of(job)
    if campaign.is_images:  # Task 3 runs: two lists of images per topic, by stance
        return image_runs.import_image_runs(
            campaign=campaign, paths=paths, names=names, team=job.params.get("team", ""), by=job.created_by,
        ).as_result()
    if campaign.is_classification:  # submissions of labels (Touché 2023 Task 4), not rankings
        return classification.import_prediction_files(
            campaign=campaign, paths=paths, names=names, team=job.params.get("team", ""), by=job.created_by,
        ).as_result()
    return import_runs(
        campaign=campaign, paths=paths, names=names, team=job.params.get("team", ""),
        uploaded_by=job.created_by, progress=progress,
    ).as_result()


@jobs.handler("import_items")
def _import_items_job(job: Job, progress: Progress) -> dict:
    """The comments file first, then the proposals file if one was uploaded (check_item_options)."""
    paths, names = job_inputs(job)
    return import_items(
        campaign=jobs.campaign_of(job), comments=paths[0], proposals=paths[1] if len(paths) > 1 else None,
        assessor=job.params.get("assessor") or None, comments_name=names[0],
        proposals_name=names[1] if len(names) > 1 else None, by=job.created_by,
    ).as_result()


@jobs.handler("import_images")
def _import_images_job(job: Job, progress: Progress) -> dict:
    """The zip is read in place, one image at a time; thumbnails are queued as their own job when it is stored."""
    paths, names = job_inputs(job)
    return import_images(
        campaign=jobs.campaign_of(job), path=paths[0], source=names[0], only_pooled=bool(job.params.get("only_pooled")),
        by=job.created_by, progress=progress,
    ).as_result()
