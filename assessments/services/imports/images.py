"""Loading an image collection (Touché Task 3) in the lab's layout, from a folder or a zip.

Each image is checked by its bytes (formats.images: WebP, PNG or JPEG, pixels bounded, fully decoded) before it is
kept; its file goes to storage (services.images), and a Document of the campaign's collection records it: doc_id the
image id, `url` the image's address, `metadata` its file, type, size and pHash and the web pages that showed it (the
address, the searches that found it, and the start of its text: what the judge page's drawer shows; DOM snapshots,
screenshots and archives are never read).

Memory does not grow with the collection: it is read one image at a time, each Document goes to a spool file on disk
as a line of COPY text (bulk.upsert_documents, as text documents are imported), and so do the names of the files
written. Decoding is most of the time, and Pillow's decoders release the GIL: `CHECKERS` threads check the next
images while this one is stored, in order, so the first bad image is still the one named.

All or nothing: the first bad image or file names itself and the import stores nothing (the files it wrote are
removed, the documents are written in one short transaction at the end, after every image was checked, so the
progress a job reports is committed as it goes and the campaign is locked only while the rows are copied).
Thumbnails are made afterwards by a job (`make_thumbnails`), so an import is not slowed by them. A judged image's
file is never replaced.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import transaction

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.formats.image_collection import ImageCollection, ImageRecord, open_image_collection
from assessments.formats.images import MAX_BYTES, MAX_PIXELS, CheckedImage, check_image, declared_pixels, thumbnail
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
# Images decoded at once, and how many are read ahead of the one being stored. An image declaring more than its share
# of MAX_PIXELS, or a file over its share of MAX_BYTES, is checked alone once those before it are done: what is held
# at once stays within one largest image's bounds, as when images were checked one at a time.
CHECKERS = min(os.cpu_count() or 1, 8)
AHEAD = 2 * CHECKERS


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
            with open_image_collection(path, source=source) as opened, ThreadPoolExecutor(CHECKERS) as checkers:
                for record, data, checked in _checked(opened, kept(iter(opened), opened.count_images()), checkers, source):
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


def _checked(
    opened: ImageCollection, records: Iterator[ImageRecord], checkers: ThreadPoolExecutor, source: str,
) -> Iterator[tuple[ImageRecord, bytes, CheckedImage]]:
    """Each record with its image's bytes and check, in the collection's order, up to AHEAD images read ahead.

    A problem reading the collection further on is raised only after the images read before it were checked, so
    that the first problem in the collection's order is the one reported.
    """
    window: deque[tuple[ImageRecord, bytes, Future[CheckedImage]]] = deque()
    while True:
        try:
            record = next(records, None)
            if record is None:
                break
            with opened.open_member(record.image_member) as stream:
                data = stream.read(MAX_BYTES + 1)  # check_image refuses a longer one
        except FormatError as late:
            earlier = next(filter(None, (future.exception() for _, _, future in window)), None)
            raise (earlier or late) from None
        where = f"{source}:{record.image_member}"
        if len(data) > MAX_BYTES // AHEAD or (declared_pixels(data) or MAX_PIXELS) > MAX_PIXELS // CHECKERS:
            while window:  # a large one is decoded alone (the constants' comment)
                yield _result(window.popleft())
            yield record, data, check_image(data, source=where)
        else:
            window.append((record, data, checkers.submit(check_image, data, source=where)))
            if len(window) > AHEAD:
                yield _result(window.popleft())
    while window:
        yield _result(window.popleft())


def _result(pending: tuple[ImageRecord, bytes, Future[CheckedImage]]) -> tuple[ImageRecord, bytes, CheckedImage]:
    record, data, future = pending
    return record, data, future.result()


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
    """A thumbnail for each image of the campaign's collection that has none yet (once: later runs skip them).

    THUMBNAILS_PER_WRITE images at a time, in order of id, made by CHECKERS threads (an image larger than its share
    of MAX_PIXELS alone, as at import) and written in one statement: memory holds one batch whatever the collection's
    size, and a cancelled job keeps what it made.
    """
    progress = progress or NoProgress()
    missing = (
        Document.objects.filter(collection=campaign.collection, metadata__image__thumbnail=None)
        .exclude(metadata__image=None).only("pk", "doc_id", "metadata").order_by("pk")
    )
    total = missing.count()
    done = last = 0
    with ThreadPoolExecutor(CHECKERS) as makers:
        while batch := list(missing.filter(pk__gt=last)[:THUMBNAILS_PER_WRITE]):
            last = batch[-1].pk
            shared: list[Document] = []
            alone: list[Document] = []
            for document in batch:
                image = document.metadata["image"]
                (shared if image["width"] * image["height"] <= MAX_PIXELS // CHECKERS else alone).append(document)
            made = list(zip(shared, makers.map(_thumbnail_of, shared))) + [(d, _thumbnail_of(d)) for d in alone]
            for document, small in made:
                if small is not None:
                    name = images.thumbnail_name(campaign.collection, document.doc_id)
                    document.metadata["image"]["thumbnail"] = images.store_file(name, small)
            Document.objects.bulk_update([document for document, small in made if small is not None], ["metadata"])
            done += len(batch)
            progress.advance(done, total)
    return ImportSummary(f"{done} thumbnails made", [], {"thumbnails": done})


def _thumbnail_of(document: Document) -> bytes | None:
    with default_storage.open(document.metadata["image"]["file"], "rb") as stream:
        try:
            return thumbnail(stream.read(), source=document.doc_id)
        except FormatError:
            return None  # checked at import; a file changed in storage since keeps no thumbnail


@jobs.handler("make_thumbnails")
def _make_thumbnails_job(job: Job, progress: Progress) -> dict:
    return make_thumbnails(campaign=jobs.campaign_of(job), progress=progress).as_result()
