"""Grouping a pool's exact and near-duplicate documents, so one judgment can stand for every copy.

Which documents are duplicates is decided by the pure module assessments.metrics.duplicates; this module reads
each topic's entries and texts, points every twin entry at its group's canonical entry (`PoolEntry.duplicate_of`)
and gives twins that join a judged group the labels of their canonical (services.judging.copy_judgment). A pool
build calls it after storing new entries; labels reach twins at save time through services.judging.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from assessments.collector import collector_paused
from assessments.metrics.duplicates import near_duplicate_groups
from assessments.metrics.union_find import find, union
from assessments.models import Campaign, Document, Judgment, PoolEntry
from assessments.rendering import html_text
from assessments.services import bulk
from assessments.services.jobs import NoProgress, Progress
from assessments.services.judging import copy_judgment


@dataclass(frozen=True)
class DuplicateSummary:
    groups: int
    twins: int
    labels_copied: int


@collector_paused()
def group_duplicates(*, campaign: Campaign, progress: Progress | None = None) -> DuplicateSummary:
    """Point every twin entry at its group's canonical entry (`duplicate_of`), topic by topic.

    Groups are identical texts (the same `Document.text_hash`, or the same normalised text) and near-duplicates
    (S3 on word 8-grams ≥ 0.82, as CopyCat), computed by metrics.duplicates over the topic's documents with text.
    The canonical entry is one that already was (so rebuilding moves nothing), else one that has a judgment, else
    the one assessors meet first. A twin that joins a group whose canonical is judged already gets those labels
    (source "duplicate") when the campaign propagates to duplicates, so it is not left without a judgment.
    """
    progress = progress or NoProgress()
    topic_ids = list(campaign.topics.order_by("position", "number").values_list("id", flat=True))
    # Entries without text are never grouped: only those already pointing at a canonical could change (if their
    # document lost its group). So a pool of stubs waiting for --only-pooled texts has nothing to group, which two
    # short questions tell, without visiting its entries' documents one by one (0.5 s for 400,000); the twins are
    # asked for in the order of their partial index, which then holds the answer.
    twins_now = PoolEntry.objects.filter(duplicate_of__isnull=False, topic_id__in=topic_ids).order_by("duplicate_of_id")
    if not collection_has_text(campaign.collection_id) and twins_now.values_list("pk", flat=True).first() is None:
        progress.advance(len(topic_ids), len(topic_ids))
        return DuplicateSummary(groups=0, twins=0, labels_copied=0)
    entries: dict[int, list[_GroupEntry]] = defaultdict(list)
    rows = PoolEntry.objects.filter(
        Q(document__has_text=True) | Q(duplicate_of__isnull=False), topic__campaign=campaign
    ).values_list(
        "id", "topic_id", "document_id", "document__doc_id", "document__text_hash", "document__has_text", "order",
        "duplicate_of_id",
    )
    for row in rows.iterator(chunk_size=20_000):
        entries[row[1]].append(_GroupEntry(*row))
    # Judged as a pool counts it: a label of the scheme's primary dimension (a note alone is not a judgment of it).
    judged = set(
        Judgment.objects.filter(topic_id__in=topic_ids, labels__has_key=campaign.label_scheme.primary.name)
        .values_list("topic_id", "document_id").distinct()
    )

    wanted: dict[int, int | None] = {}
    hashes = _image_hashes(campaign) if campaign.is_images else None
    for done, topic_id in enumerate(topic_ids, 1):
        topic_entries = entries.get(topic_id, [])
        canonical_now = {e.duplicate_of_id for e in topic_entries}
        groups = _groups_of(topic_entries) if hashes is None else _image_groups(topic_entries, hashes)
        for group in groups:
            canonical = min(
                group, key=lambda e: (e.id not in canonical_now, (topic_id, e.document_id) not in judged, e.order)
            )
            for entry in group:
                wanted[entry.id] = None if entry is canonical else canonical.id
        progress.advance(done, len(topic_ids))

    changes = [
        (e.id, wanted.get(e.id)) for topic_entries in entries.values() for e in topic_entries if wanted.get(e.id) != e.duplicate_of_id
    ]
    with transaction.atomic():
        if changes:
            bulk.set_duplicate_of(changes)
        copied = _copy_labels_to_new_twins(campaign, [entry_id for entry_id, canonical in changes if canonical])
    twins = sum(1 for canonical in wanted.values() if canonical)
    return DuplicateSummary(groups=len(wanted) - twins, twins=twins, labels_copied=copied)


def collection_has_text(collection_id: int) -> bool:
    """Whether any document of the collection has its text, i.e. is not a stub. Asked in the order of the
    (collection, doc id) index, so PostgreSQL walks that index and stops at the first document with a text: a
    collection of stubs costs a walk through its own documents (0.07 s for 410,000), never a scan of the table."""
    first = Document.objects.filter(collection_id=collection_id, has_text=True).order_by("doc_id").values_list("pk", flat=True)
    return first.first() is not None  # not exists(), which drops the ORDER BY


@dataclass(frozen=True)
class _GroupEntry:
    id: int
    topic_id: int
    document_id: int
    doc_id: str
    text_hash: str
    has_text: bool
    order: int
    duplicate_of_id: int | None


def _groups_of(entries: list[_GroupEntry]) -> list[list[_GroupEntry]]:
    """Connected groups of one topic's entries: same text hash, or grouped by metrics.duplicates.

    Of several entries with one text hash only the first is read and compared, so exact copies cost nothing.
    """
    with_text = [e for e in entries if e.has_text]
    by_doc = {e.doc_id: e for e in with_text}
    parent = {e.doc_id: e.doc_id for e in with_text}
    representatives: dict[str, str] = {}
    for entry in sorted(with_text, key=lambda e: e.doc_id):
        if entry.text_hash:
            first = representatives.setdefault(entry.text_hash, entry.doc_id)
            union(parent, first, entry.doc_id)
    compared = [e for e in with_text if not e.text_hash or representatives[e.text_hash] == e.doc_id]
    texts = dict(_texts(compared))
    for group in near_duplicate_groups(texts):
        for doc in group[1:]:
            union(parent, group[0], doc)
    groups: dict[str, list[_GroupEntry]] = defaultdict(list)
    for doc, entry in by_doc.items():
        groups[find(parent, doc)].append(entry)
    return [group for group in groups.values() if len(group) > 1]


def _image_hashes(campaign: Campaign) -> dict[int, int]:
    """document id -> the image's 64-bit pHash, for the pooled images of an image campaign."""
    rows = Document.objects.filter(pool_entries__topic__campaign=campaign).values_list("pk", "metadata__image__phash")
    return {pk: int(phash, 16) for pk, phash in rows if isinstance(phash, str)}


def _image_groups(entries: list[_GroupEntry], hashes: dict[int, int]) -> list[list[_GroupEntry]]:
    """Connected groups of one topic's images whose pHashes differ in at most IMAGE_PHASH_DISTANCE bits: copies of
    one picture (rescaled, recompressed) on many pages, which one label serves. Images have no text to compare."""
    distance = settings.IMAGE_PHASH_DISTANCE
    images = [e for e in entries if e.document_id in hashes]
    parent = {e.doc_id: e.doc_id for e in images}
    for i, a in enumerate(images):
        for b in images[i + 1:]:
            if (hashes[a.document_id] ^ hashes[b.document_id]).bit_count() <= distance:
                union(parent, a.doc_id, b.doc_id)
    groups: dict[str, list[_GroupEntry]] = defaultdict(list)
    for entry in images:
        groups[find(parent, entry.doc_id)].append(entry)
    return [group for group in groups.values() if len(group) > 1]


def _texts(entries: list[_GroupEntry]) -> Iterator[tuple[str, str]]:
    """(doc id, plain text) of the entries' documents, read in chunks; HTML is reduced to its text first, so
    markup shared by every page of a site does not make them near-duplicates."""
    documents = Document.objects.filter(pk__in=[e.document_id for e in entries]).values_list("doc_id", "title", "body", "is_html")
    for doc, title, body, is_html in documents.iterator(chunk_size=2_000):
        yield doc, f"{title}\n{html_text(body) if is_html else body}"


def _copy_labels_to_new_twins(campaign: Campaign, twin_ids: list[int]) -> int:
    """Give twins that just joined a group the judgments their canonical has, where the twin has none yet from
    that assessor (a label the assessor gave the twin themselves is theirs and is kept)."""
    if not campaign.propagate_to_duplicates or not twin_ids:
        return 0
    twins = PoolEntry.objects.filter(pk__in=twin_ids).select_related("topic__campaign", "document", "duplicate_of")
    by_canonical: dict[tuple[int, int], list[PoolEntry]] = defaultdict(list)
    for twin in twins:
        assert twin.duplicate_of is not None  # twin_ids are twins
        by_canonical[(twin.topic_id, twin.duplicate_of.document_id)].append(twin)
    canonical_judgments = Judgment.objects.filter(
        topic_id__in={t for t, _ in by_canonical}, document_id__in={d for _, d in by_canonical}
    ).select_related("topic__campaign", "assessor")
    already = set(
        Judgment.objects.filter(topic_id__in={t.topic_id for t in twins}, document_id__in={t.document_id for t in twins})
        .values_list("topic_id", "document_id", "assessor_id")
    )
    copied = 0
    for judgment in canonical_judgments:
        for twin in by_canonical.get((judgment.topic_id, judgment.document_id), []):
            if (twin.topic_id, twin.document_id, judgment.assessor_id) not in already:
                copy_judgment(judgment, twin)
                copied += 1
    return copied
