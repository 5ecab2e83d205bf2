"""Importing documents into a campaign's collection: new ids are inserted, known ones (stubs included) updated."""

from __future__ import annotations

import hashlib
import json
import tempfile
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np
from django.conf import settings
from django.db import transaction

from accounts.models import User
from assessments.collector import collector_paused
from assessments.formats.documents import Format as DocumentFormat
from assessments.formats.documents import read_documents
from assessments.formats.errors import FormatError
from assessments.metrics.duplicates import normalised_utf8
from assessments.models import Campaign, Document
from assessments.models.fields import max_length
from assessments.services import audit, bulk
from assessments.services.bulk import copy_escape
from assessments.services.campaigns import collection_refusal
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.files import count_lines, files_label, input_files, named
from assessments.services.jobs import NoProgress, Progress

DOCUMENT_FORMATS = ("auto", "argsme", "passages", "jsonl", "argsme-sentences")

_DOC_ID_LENGTH = max_length(Document, "doc_id")
_URL_LENGTH = max_length(Document, "url")


def import_documents(
    *,
    campaign: Campaign,
    paths: Sequence[str | Path],
    names: Sequence[str] | None = None,
    fmt: str = "auto",
    only_pooled: bool = False,
    by: User | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Load documents into the campaign's collection, inserting new ids and updating known ones (stubs included).

    `only_pooled` keeps just the documents some pool over this collection needs (the stubs pooling created),
    so a 1 GB corpus costs only what is judged. Within one import the first record of an id wins (re-rank files
    repeat a document once per query). Importing the same file again changes nothing. The collection may be shared:
    `by` must run every campaign that uses it, or be an admin (check_collection_writer); and the text of a document
    that has judgments is never changed (ImportProblem naming it, nothing stored).
    """
    if fmt not in DOCUMENT_FORMATS:
        raise ImportProblem(f"unknown document format {fmt!r}; choose one of {', '.join(DOCUMENT_FORMATS)}")
    check_collection_writer(campaign, by)
    progress = progress or NoProgress()
    files = input_files(paths, names)
    from assessments.services.pairs import PairSummary, resolve_pairs, sentence_ids_of  # it uses text_hash below

    wanted: set[str] | None = None
    if only_pooled:
        wanted = set(_pooled(campaign).values_list("doc_id", flat=True))
        if not wanted:
            raise ImportProblem(f"no pool of collection {campaign.collection.slug!r} needs documents yet: build a pool first, or import without only-pooled")
        wanted |= sentence_ids_of(wanted)  # a pooled pair of sentences needs its two sentences
    # Progress counts lines: the reader reports each record's line, and a first pass counting newlines (plain C
    # loops over the bytes) gives the total.
    line_totals = [count_lines(f) for f in files]
    total = sum(line_totals)
    progress.advance(0, total)

    read = skipped = long_urls = 0
    sentences = False
    with tempfile.TemporaryFile() as spool, collector_paused():
        write = spool.write
        ids = array("q")  # the hash of each kept id: repeats are found without keeping the ids themselves
        done = 0
        for file, lines in zip(files, line_totals):
            for record in named(read_documents(file.path, fmt=cast(DocumentFormat, fmt), max_decompressed=settings.IMPORT_MAX_DECOMPRESSED_BYTES), file):
                read += 1
                if read % 2000 == 0:
                    progress.advance(done + record.line, total)
                if wanted is not None and record.doc_id not in wanted:
                    skipped += 1
                    continue
                if not sentences and ("__PREMISE__" in record.doc_id or "__CONC__" in record.doc_id):
                    sentences = True  # an args.me sentence: pooled pairs may be made of it
                ids.append(hash(record.doc_id))
                if len(record.doc_id) > _DOC_ID_LENGTH:
                    raise FormatError(file.name, record.line, f"document id is longer than {_DOC_ID_LENGTH} characters")
                url = record.url
                if len(url) > _URL_LENGTH:
                    url, long_urls = "", long_urls + 1
                # The spool's lines are COPY text in bulk.DOCUMENT_COLUMNS' order.
                write(
                    f"{copy_escape(record.doc_id)}\t{copy_escape(record.title)}\t{copy_escape(record.body)}\t"
                    f"{'t' if record.is_html else 'f'}\t{copy_escape(url)}\t{copy_escape(_metadata_json(record.metadata))}\t"
                    f"{text_hash(record.body)}\n".encode()
                )
            done += lines
            progress.advance(done, total)
        kept = read - skipped
        repeats = _has_repeats(ids)
        checksums = audit.file_checksums((f.name, f.path) for f in files)
        with transaction.atomic():
            bulk.lock_campaign(campaign)
            try:
                created, updated = bulk.upsert_documents(spool, collection_id=campaign.collection_id, repeats=repeats)
            except bulk.JudgedTextChanged as exc:
                raise ImportProblem(str(exc)) from None
            audit.record(
                campaign=campaign, action=audit.Action.DOCUMENTS_IMPORTED, by=by, subject=files_label(files),
                details={"files": checksums, "format": fmt, "only_pooled": only_pooled, "read": read, "created": created,
                         "updated": updated, "collection": campaign.collection.slug},
            )

    # Pooled pairs of sentences (Touché 2022 Task 1) take their text from the sentences just imported (no query for
    # an import without sentences).
    pairs = resolve_pairs(collection_id=campaign.collection_id) if sentences else PairSummary()
    unchanged = kept - created - updated  # includes repeated ids within the import
    summary = f"{files_label(files)}: {read:,} documents read, {created:,} new, {updated:,} updated, {unchanged:,} unchanged"
    if only_pooled:
        summary += f", {skipped:,} skipped (not pooled)"
    if pairs.resolved:
        summary += f"; {pairs.resolved:,} pooled pairs of sentences given their text"
    warnings = list(pairs.warnings)
    if long_urls:
        warnings.append(f"{long_urls} documents had a URL longer than {_URL_LENGTH} characters; it was left out")
    if wanted is not None:
        still = Document.objects.filter(pk__in=_pooled(campaign).filter(has_text=False).values("pk")).count()
        if still:
            warnings.append(f"{still} pooled documents still have no text (not in the imported files)")
    return ImportSummary(
        summary, warnings,
        {"read": read, "created": created, "updated": updated, "unchanged": unchanged, "skipped": skipped,
         "pairs_resolved": pairs.resolved, "pairs_missing": pairs.missing_total},
    )


def check_collection_writer(campaign: Campaign, by: User | None) -> None:
    """ImportProblem unless `by` may write into the campaign's collection, which other campaigns may share: an
    admin, or someone who runs every campaign that uses it (services.campaigns.collection_refusal). `by` None is
    the command line, run by whoever runs the server."""
    if by is not None and (refusal := collection_refusal(by, campaign.collection)):
        raise ImportProblem(refusal)


def _has_repeats(hashes: array) -> bool:
    """Whether two of the hashes are equal: distinct hashes are distinct ids, and equal ones (almost always) a
    repeated id. Sorted in place, so a million ids cost 10 MB and a few hundredths of a second (np.unique would
    take 60 MB)."""
    values = np.frombuffer(hashes, dtype=np.int64)
    values.sort()
    return bool((values[1:] == values[:-1]).any())


def _pooled(campaign: Campaign):
    """Documents of the campaign's collection that some pool needs (any campaign over the same collection)."""
    return Document.objects.filter(collection_id=campaign.collection_id, pool_entries__isnull=False)




def text_hash(body: str) -> str:
    """sha1 of the normalised text: the same normalisation duplicate grouping uses, so equal hashes are exact duplicates."""
    return hashlib.sha1(normalised_utf8(body)).hexdigest()


def _metadata_json(metadata: dict) -> str:
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":")) if metadata else "{}"
