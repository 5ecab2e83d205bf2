"""Loading an image collection (Touché Task 3) in the lab's layout, from a folder or a zip.

Each image is checked by its bytes (formats.images.check_image: WebP, PNG or JPEG, its declared pixels bounded, its
container whole; no pixel decoded) before it is kept; its file goes to storage (services.images), and a Document of
the campaign's collection records it: doc_id the image id, `url` the image's address, `metadata` its file, type, size
and pHash and the web pages that showed it (the address, the searches that found it, and the start of its text: what
the judge page's drawer shows; DOM snapshots, screenshots and archives are never read).

Memory does not grow with the collection: it is read one image at a time, each Document goes to a spool file on disk
as a line of COPY text (bulk.upsert_documents, as text documents are imported), and so do the names of the files
written.

All or nothing: the first bad image or file names itself and the import stores nothing (the files it wrote are
removed, the documents are written in one short transaction at the end, after every image was checked, so the
progress a job reports is committed as it goes and the campaign is locked only while the rows are copied). A judged
image's file is never replaced.

Pixels are decoded once, afterwards, by the job that makes the thumbnails (`make_thumbnails`), so an import is not
slowed by decoding (most of an import's time when it was done there) nor by thumbnails. An image whose container is
whole but whose data fails to decode there is marked unreadable (`metadata["image"]["unreadable"]`, the reason): it
is not served (services.images), the judge page says it could not be read and an assessor can still flag it, and the
job's result lists it by file.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import transaction

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.formats.image_collection import ImageRecord, open_image_collection
from assessments.formats.images import MAX_BYTES, MAX_PIXELS, CheckedImage, check_image, thumbnail
from assessments.models import Campaign, Document, Job, Judgment, PoolEntry
from assessments.models.fields import max_length
from assessments.services import audit, bulk, images, job_queue, jobs
from assessments.services.bulk import copy_escape
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.documents import check_collection_writer
from assessments.services.jobs import NoProgress, Progress

THUMBNAILS_PER_WRITE = 200
PAGE_TEXT_CHARS = 3000  # of a page's text, what the drawer shows: the lab's snapshots run to hundreds of kB
_URL_LENGTH = max_length(Document, "url")


def usable_cpus(cpu_max: str = "/sys/fs/cgroup/cpu.max") -> int:
    """The CPUs this process may run on: those of its affinity mask, fewer under a cgroup v2 CPU quota (`cpu_max`, a
    container's ``--cpus``). os.cpu_count() counts the machine's, and threads beyond the quota only queue for it."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        with open(cpu_max) as limit:
            quota, period = limit.read().split()[:2]
        return cpus if quota == "max" else max(1, min(cpus, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError, ZeroDivisionError):  # no cgroup v2 here, or a file not as the kernel writes it
        return cpus


# Images the thumbnail job decodes at once (Pillow's decoders release the GIL). An image declaring more than its share
# of MAX_PIXELS is decoded alone, so that what is held at once stays within one largest image's bound.
DECODERS = min(usable_cpus(), 8)


def import_images(
    *, campaign: Campaign, path: Path, only_pooled: bool = False, source: str | None = None, by: User | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import the collection at `path` into the campaign's collection; all or nothing (the module docstring)."""
    if not campaign.is_images:
        raise ImportProblem(
            f"campaign {campaign.slug} does not judge images: images are imported into an image campaign "
            "(create_campaign --preset touche-2023-task3, or --kind images)"
        )
    check_collection_writer(campaign, by)
    progress = progress or NoProgress()
    source = source or str(path)
    collection = campaign.collection
    pooled = set(PoolEntry.objects.filter(topic__campaign=campaign).values_list("document__doc_id", flat=True))
    judged = set(
        Judgment.objects.filter(document__collection=collection).values_list("document__doc_id", flat=True).distinct()
    )
    stored = skipped = kept_judged = 0

    def kept(records: Iterator[ImageRecord], total: int) -> Iterator[ImageRecord]:
        nonlocal skipped, kept_judged
        for done, record in enumerate(records, 1):
            progress.advance(done, total)
            if only_pooled and record.id not in pooled:
                skipped += 1
            elif record.id in judged:
                kept_judged += 1  # its labels were given to the file stored: it stays
            else:
                yield record

    with tempfile.TemporaryFile() as spool, tempfile.TemporaryFile("w+") as written:
        try:
            with open_image_collection(path, source=source) as opened:
                for record in kept(iter(opened), opened.count_images()):
                    data = opened.read_member(record.image_member, MAX_BYTES)  # check_image refuses a longer one
                    checked = check_image(data, source=f"{source}:{record.image_member}")
                    name = images.image_name(collection, record.id, checked.content_type)
                    # A file there already is an earlier import's, of a document that stays if this one fails.
                    existed = default_storage.exists(name)
                    name = images.store_file(name, data)
                    if not existed:
                        written.write(name + "\n")
                    spool.write(_document_line(record, name, checked))
                    stored += 1
            with transaction.atomic():
                bulk.lock_campaign(campaign)
                bulk.upsert_documents(spool, collection_id=collection.pk, repeats=False)
                audit.record(
                    campaign=campaign, action=audit.Action.DOCUMENTS_IMPORTED, by=by, subject=source,
                    details={"kind": "images", "images": stored, "skipped": skipped, "judged_kept": kept_judged},
                )
        except BaseException:
            written.seek(0)
            images.delete_files(written.read().splitlines())
            raise
    if stored:
        transaction.on_commit(lambda: job_queue.queue_job(kind="make_thumbnails", campaign=campaign, params={}, created_by=by))
    text = f"{source}: {stored} images stored"
    if only_pooled:
        text += f", {skipped} not pooled left out"
    if kept_judged:
        text += f", {kept_judged} already judged kept as they were"
    return ImportSummary(text, [], {"images": stored, "skipped": skipped, "judged_kept": kept_judged})


def _document_line(record: ImageRecord, name: str, checked: CheckedImage) -> bytes:
    """The image's Document as a line of the spool: COPY text in bulk.DOCUMENT_COLUMNS' order."""
    pages = [
        {"id": page.id, "url": page.url, "queries": [{"query": q.query, "topic": q.topic, "rank": q.rank} for q in page.queries],
         "text": (page.text or "")[:PAGE_TEXT_CHARS]}
        for page in record.pages
    ]
    metadata = {"image": {"file": name, "content_type": checked.content_type, "width": checked.width, "height": checked.height,
                          "phash": f"{record.phash_value:016x}", "thumbnail": None},
                "pages": pages}
    # doc_id, title, body, is_html, url, metadata, text_hash: an image has no text to judge or hash.
    return f"{record.id}\t\t\tf\t{copy_escape(record.url[:_URL_LENGTH])}\t{copy_escape(json.dumps(metadata, ensure_ascii=False))}\t\n".encode()


def make_thumbnails(*, campaign: Campaign, progress: Progress | None = None) -> ImportSummary:
    """A thumbnail for each image of the campaign's collection that has none yet (once: later runs skip them), made
    by decoding the image whole, the first time its pixels are read (the module docstring). An image that cannot be
    decoded gets no thumbnail but the reason in `metadata["image"]["unreadable"]`, and is a warning naming its file.

    THUMBNAILS_PER_WRITE images at a time, in order of id, made by DECODERS threads (an image larger than its share
    of MAX_PIXELS alone) and written in one statement: memory holds one batch whatever the collection's size, and a
    cancelled job keeps what it made.
    """
    progress = progress or NoProgress()
    missing = (
        Document.objects.filter(collection=campaign.collection, metadata__image__thumbnail=None)
        .exclude(metadata__image=None).exclude(metadata__image__has_key="unreadable")
        .only("pk", "doc_id", "metadata").order_by("pk")
    )
    total = missing.count()
    done = made = last = 0
    unreadable: list[str] = []
    with ThreadPoolExecutor(DECODERS) as makers:
        while batch := list(missing.filter(pk__gt=last)[:THUMBNAILS_PER_WRITE]):
            last = batch[-1].pk
            shared: list[Document] = []
            alone: list[Document] = []
            for document in batch:
                image = document.metadata["image"]
                (shared if image["width"] * image["height"] <= MAX_PIXELS // DECODERS else alone).append(document)
            decoded = [*zip(shared, makers.map(_thumbnail_of, shared)), *((d, _thumbnail_of(d)) for d in alone)]
            for document, small in decoded:
                image = document.metadata["image"]
                if isinstance(small, FormatError):
                    image["unreadable"] = small.reason
                    unreadable.append(str(small))
                else:
                    name = images.thumbnail_name(campaign.collection, document.doc_id)
                    image["thumbnail"] = images.store_file(name, small)
                    made += 1
            Document.objects.bulk_update(batch, ["metadata"])
            done += len(batch)
            progress.advance(done, total)
    text = f"{made} thumbnails made"
    if unreadable:
        text += f"; {len(unreadable)} images cannot be decoded and are shown to assessors as unreadable (listed)"
    return ImportSummary(text, unreadable, {"thumbnails": made, "unreadable": len(unreadable)})


def _thumbnail_of(document: Document) -> bytes | FormatError:
    """The thumbnail, or why the image cannot be decoded (a FormatError naming its stored file)."""
    name = document.metadata["image"]["file"]
    with default_storage.open(name, "rb") as stream:
        try:
            return thumbnail(stream.read(MAX_BYTES + 1), source=name)  # thumbnail refuses a longer one
        except FormatError as exc:
            return exc


@jobs.handler("make_thumbnails")
def _make_thumbnails_job(job: Job, progress: Progress) -> dict:
    return make_thumbnails(campaign=jobs.campaign_of(job), progress=progress).as_result()
