"""Loading an image collection (Touché Task 3) in the lab's layout, from a folder or a zip.

Each image is checked by its bytes (formats.images: WebP, PNG or JPEG, pixels bounded, fully decoded) before it is
kept; its file goes to storage (services.images), and a Document of the campaign's collection records it: doc_id the
image id, `url` the image's address, `metadata` its file, type, size and pHash and the web pages that showed it (the
address, the searches that found it, and the start of its text: what the judge page's drawer shows; DOM snapshots,
screenshots and archives are never read). The collection is read one image at a time, so memory does not grow with
its size.

All or nothing: the first bad image or file names itself and the import stores nothing (the files it wrote are
removed, the documents are written in one transaction at the end). Thumbnails are made afterwards by a job
(`make_thumbnails`), so an import is not slowed by them. A judged image's file is never replaced.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.formats.image_collection import ImageRecord, open_image_collection
from assessments.formats.images import check_image, thumbnail
from assessments.models import Campaign, Document, Job, Judgment, PoolEntry
from assessments.services import audit, bulk, images, job_queue, jobs
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.documents import check_collection_writer
from assessments.services.jobs import Progress

THUMBNAILS_PER_WRITE = 200
PAGE_TEXT_CHARS = 3000  # of a page's text, what the drawer shows: the lab's snapshots run to hundreds of kB


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
    source = source or str(path)
    collection = campaign.collection
    pooled = set(PoolEntry.objects.filter(topic__campaign=campaign).values_list("document__doc_id", flat=True))
    judged = set(
        Judgment.objects.filter(document__collection=collection).values_list("document__doc_id", flat=True).distinct()
    )
    written: list[str] = []
    records: list[Document] = []
    skipped = kept_judged = 0
    try:
        with open_image_collection(path, source=source) as opened:
            total = opened.count_images()
            for done, record in enumerate(opened, 1):
                if only_pooled and record.id not in pooled:
                    skipped += 1
                    continue
                if record.id in judged:
                    kept_judged += 1  # its labels were given to the file stored: it stays
                    continue
                with opened.open_member(record.image_member) as stream:
                    data = stream.read()
                where = f"{source}:{record.image_member}"
                checked = check_image(data, source=where)
                name = images.store_file(images.image_name(collection, record.id, checked.content_type), data)
                written.append(name)
                records.append(_document(campaign, record, name, checked.content_type, checked.width, checked.height))
                if progress:
                    progress.advance(done, total)
        with transaction.atomic():
            bulk.lock_campaign(campaign)
            Document.objects.bulk_create(
                records, batch_size=500, update_conflicts=True, unique_fields=["collection", "doc_id"],
                update_fields=["url", "metadata", "has_text", "is_html", "body", "text_hash"],
            )
            audit.record(
                campaign=campaign, action=audit.Action.DOCUMENTS_IMPORTED, by=by, subject=source,
                details={"kind": "images", "images": len(records), "skipped": skipped, "judged_kept": kept_judged},
            )
    except BaseException:
        images.delete_files(written)
        raise
    if records:
        transaction.on_commit(lambda: job_queue.queue_job(kind="make_thumbnails", campaign=campaign, params={}, created_by=by))
    text = f"{source}: {len(records)} images stored"
    if only_pooled:
        text += f", {skipped} not pooled left out"
    if kept_judged:
        text += f", {kept_judged} already judged kept as they were"
    return ImportSummary(text, [], {"images": len(records), "skipped": skipped, "judged_kept": kept_judged})


def _document(campaign: Campaign, record: ImageRecord, name: str, content_type: str, width: int, height: int) -> Document:
    pages = [
        {"id": page.id, "url": page.url, "queries": [{"query": q.query, "topic": q.topic, "rank": q.rank} for q in page.queries],
         "text": (page.text or "")[:PAGE_TEXT_CHARS]}
        for page in record.pages
    ]
    return Document(
        collection=campaign.collection, doc_id=record.id, title="", body="", is_html=False, url=record.url[:2000],
        has_text=True, text_hash="",
        metadata={"image": {"file": name, "content_type": content_type, "width": width, "height": height,
                            "phash": f"{record.phash_value:016x}", "thumbnail": None},
                  "pages": pages},
    )


def make_thumbnails(*, campaign: Campaign, progress: Progress | None = None) -> ImportSummary:
    """A thumbnail for each image of the campaign's collection that has none yet (once: later runs skip them)."""
    documents = list(
        Document.objects.filter(collection=campaign.collection, metadata__image__thumbnail=None)
        .exclude(metadata__image=None).only("pk", "doc_id", "metadata")
    )
    from django.core.files.storage import default_storage

    made: list[Document] = []
    for done, document in enumerate(documents, 1):
        image = document.metadata["image"]
        with default_storage.open(image["file"], "rb") as stream:
            try:
                small = thumbnail(stream.read(), source=document.doc_id)
            except FormatError:
                continue  # checked at import; a file changed in storage since keeps no thumbnail
        image["thumbnail"] = images.store_file(images.thumbnail_name(campaign.collection, document.doc_id), small)
        made.append(document)
        if len(made) == THUMBNAILS_PER_WRITE or done == len(documents):
            Document.objects.bulk_update(made, ["metadata"])  # a batch at a time: a cancelled job keeps what it made
            made = []
        if progress:
            progress.advance(done, len(documents))
    Document.objects.bulk_update(made, ["metadata"])
    return ImportSummary(f"{len(documents)} thumbnails made", [], {"thumbnails": len(documents)})


@jobs.handler("make_thumbnails")
def _make_thumbnails_job(job: Job, progress: Progress) -> dict:
    return make_thumbnails(campaign=jobs.campaign_of(job), progress=progress).as_result()
