"""Importing documents into a campaign's collection: new ids are inserted, known ones (stubs included) updated."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import psycopg2
from django.db import IntegrityError, ProgrammingError, connection, transaction

from assessments.collector import collector_paused
from assessments.formats.documents import read_documents
from assessments.formats.errors import FormatError
from assessments.metrics.duplicates import normalised_utf8
from assessments.models import Campaign, Document
from assessments.services.bulk import SQLITE_BATCH, copy_escape, copy_unescape
from assessments.services.campaigns import lock_campaign
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.files import count_lines, files_label, input_files, named
from assessments.services.jobs import NoProgress, Progress

DOCUMENT_FORMATS = ("auto", "argsme", "passages", "jsonl")

_DOC_ID_LENGTH = Document._meta.get_field("doc_id").max_length
_URL_LENGTH = Document._meta.get_field("url").max_length
# The spool's columns; `seq`, the record's place in the import, is added by the temporary table.
_DOCUMENT_COLUMNS = ("doc_id", "title", "body", "is_html", "url", "metadata", "text_hash")
_DOCUMENT_UPDATED = ("title", "body", "is_html", "url", "metadata", "has_text", "text_hash")


def import_documents(
    *,
    campaign: Campaign,
    paths: Sequence[str | Path],
    names: Sequence[str] | None = None,
    fmt: str = "auto",
    only_pooled: bool = False,
    progress: Progress | None = None,
) -> ImportSummary:
    """Load documents into the campaign's collection, inserting new ids and updating known ones (stubs included).

    `only_pooled` keeps just the documents some pool over this collection needs (the stubs pooling created),
    so a 1 GB corpus costs only what is judged. Within one import the first record of an id wins (re-rank files
    repeat a document once per query). Importing the same file again changes nothing.
    """
    if fmt not in DOCUMENT_FORMATS:
        raise ImportProblem(f"unknown document format {fmt!r}; choose one of {', '.join(DOCUMENT_FORMATS)}")
    progress = progress or NoProgress()
    files = input_files(paths, names)
    wanted: set[str] | None = None
    if only_pooled:
        wanted = set(_pooled(campaign).values_list("doc_id", flat=True))
        if not wanted:
            raise ImportProblem(f"no pool of collection {campaign.collection.slug!r} needs documents yet: build a pool first, or import without only-pooled")
    # Progress counts lines: the reader reports each record's line, and a first pass counting newlines (plain C
    # loops over the bytes) gives the total.
    line_totals = [count_lines(f.path) for f in files]
    total = sum(line_totals)
    progress.advance(0, total)

    read = skipped = long_urls = 0
    with tempfile.TemporaryFile() as spool, collector_paused():
        write = spool.write
        done = 0
        for file, lines in zip(files, line_totals):
            for record in named(read_documents(file.path, fmt=fmt), file):
                read += 1
                if read % 2000 == 0:
                    progress.advance(done + record.line, total)
                if wanted is not None and record.doc_id not in wanted:
                    skipped += 1
                    continue
                if len(record.doc_id) > _DOC_ID_LENGTH:
                    raise FormatError(file.name, record.line, f"document id is longer than {_DOC_ID_LENGTH} characters")
                url = record.url
                if len(url) > _URL_LENGTH:
                    url, long_urls = "", long_urls + 1
                write(
                    f"{copy_escape(record.doc_id)}\t{copy_escape(record.title)}\t{copy_escape(record.body)}\t"
                    f"{'t' if record.is_html else 'f'}\t{copy_escape(url)}\t{copy_escape(_metadata_json(record.metadata))}\t"
                    f"{text_hash(record.body)}\n".encode()
                )
            done += lines
            progress.advance(done, total)
        kept = read - skipped
        with transaction.atomic():
            lock_campaign(campaign)
            created, updated = _upsert_documents(spool, collection_id=campaign.collection_id)

    unchanged = kept - created - updated  # includes repeated ids within the import
    summary = f"{files_label(files)}: {read:,} documents read, {created:,} new, {updated:,} updated, {unchanged:,} unchanged"
    if only_pooled:
        summary += f", {skipped:,} skipped (not pooled)"
    warnings = []
    if long_urls:
        warnings.append(f"{long_urls} documents had a URL longer than {_URL_LENGTH} characters; it was left out")
    if wanted is not None:
        still = Document.objects.filter(pk__in=_pooled(campaign).filter(has_text=False).values("pk")).count()
        if still:
            warnings.append(f"{still} pooled documents still have no text (not in the imported files)")
    return ImportSummary(
        summary, warnings,
        {"read": read, "created": created, "updated": updated, "unchanged": unchanged, "skipped": skipped},
    )


def _pooled(campaign: Campaign):
    """Documents of the campaign's collection that some pool needs (any campaign over the same collection)."""
    return Document.objects.filter(collection_id=campaign.collection_id, pool_entries__isnull=False)




def text_hash(body: str) -> str:
    """sha1 of the normalised text: the same normalisation duplicate grouping uses, so equal hashes are exact duplicates."""
    return hashlib.sha1(normalised_utf8(body)).hexdigest()


def _metadata_json(metadata: dict) -> str:
    if not metadata:
        return "{}"
    dumped = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    # jsonb refuses \u0000 too; only then pay for a walk over the value.
    return json.dumps(_strip_nul(metadata), ensure_ascii=False, separators=(",", ":")) if "\\u0000" in dumped else dumped


def _strip_nul(value):
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_strip_nul(k): _strip_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_nul(v) for v in value]
    return value


def _upsert_documents(spool: BinaryIO, *, collection_id: int) -> tuple[int, int]:
    """Insert or update the spooled documents; return (created, updated). The vendor switch for documents."""
    if connection.vendor == "postgresql":
        return _copy_documents(spool, collection_id=collection_id)
    return _bulk_create_documents(spool, collection_id=collection_id)


_DOCUMENT_ROWS = "touchstone_document_import"
_CARDINALITY_VIOLATION = "21000"
_UNIQUE_VIOLATION = "23505"


def _copy_documents(spool: BinaryIO, *, collection_id: int) -> tuple[int, int]:
    table = Document._meta.db_table
    end = spool.tell()
    columns = ", ".join(_DOCUMENT_COLUMNS)
    with connection.cursor() as cursor:
        if not Document.objects.filter(collection_id=collection_id).exists():
            # A first import into an empty collection (a whole corpus): COPY straight into the table, which
            # halves the storing time. An id repeated within the import breaks the unique constraint; then
            # the savepoint takes the rows back and the upsert below keeps each id's first record.
            try:
                with transaction.atomic():
                    cursor.copy_expert(
                        f"COPY {table} (collection_id, has_text, {columns}) FROM STDIN",
                        _CopySegment(spool, 0, end, f"{collection_id}\tt\t"), 1 << 20,
                    )
                return cursor.rowcount, 0
            except (IntegrityError, psycopg2.IntegrityError) as exc:  # copy_expert's errors reach us unwrapped
                if _pgcode(exc) != _UNIQUE_VIOLATION:
                    raise
        changed = " OR ".join(f"d.{c} IS DISTINCT FROM EXCLUDED.{c}" for c in _DOCUMENT_UPDATED)
        cursor.execute(f"DROP TABLE IF EXISTS {_DOCUMENT_ROWS}")
        cursor.execute(
            f"""CREATE TEMPORARY TABLE {_DOCUMENT_ROWS} (seq bigserial, doc_id text, title text, body text,
                is_html boolean, url text, metadata jsonb, text_hash text) ON COMMIT DROP"""
        )
        spool.seek(0)
        cursor.copy_expert(f"COPY {_DOCUMENT_ROWS} ({columns}) FROM STDIN", spool, 1 << 20)
        upsert = f"""WITH stored AS (
                  INSERT INTO {table} AS d (collection_id, has_text, {columns})
                  SELECT %s, true, {columns} FROM {_DOCUMENT_ROWS}
                  ON CONFLICT (collection_id, doc_id) DO UPDATE
                     SET {', '.join(f'{c} = EXCLUDED.{c}' for c in _DOCUMENT_UPDATED)}
                   WHERE {changed}
                  RETURNING (xmax = 0) AS inserted)
                SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM stored"""
        try:
            with transaction.atomic():
                cursor.execute(upsert, [collection_id])
        except ProgrammingError as exc:
            # "ON CONFLICT DO UPDATE command cannot affect row a second time": an id repeats within the
            # import (re-rank files list a document once per query). Keep its first record and try again;
            # searching for repeats up front would cost a self-join over the whole import every time.
            if _pgcode(exc) != _CARDINALITY_VIOLATION:
                raise
            cursor.execute("SET LOCAL work_mem = '256MB'")
            cursor.execute(f"DELETE FROM {_DOCUMENT_ROWS} a USING {_DOCUMENT_ROWS} b WHERE a.doc_id = b.doc_id AND a.seq > b.seq")
            cursor.execute(upsert, [collection_id])
        created, updated = cursor.fetchone()
        cursor.execute(f"DROP TABLE {_DOCUMENT_ROWS}")
    return created, updated


def _pgcode(exc: Exception) -> str | None:
    """PostgreSQL's SQLSTATE of an error, whether Django wrapped the driver's exception or not."""
    return getattr(exc, "pgcode", None) or getattr(exc.__cause__, "pgcode", None)


def _bulk_create_documents(spool: BinaryIO, *, collection_id: int) -> tuple[int, int]:
    spool.seek(0)
    rows = (map(copy_unescape, line.decode()[:-1].split("\t")) for line in spool)
    seen: set[str] = set()
    created = updated = 0
    while batch := list(islice(rows, SQLITE_BATCH)):
        documents = {}
        for doc_id, title, body, is_html, url, metadata, digest in batch:
            if doc_id not in seen:
                seen.add(doc_id)
                documents[doc_id] = Document(
                    collection_id=collection_id, doc_id=doc_id, title=title, body=body, is_html=is_html == "t",
                    url=url, metadata=json.loads(metadata), has_text=True, text_hash=digest,
                )
        known = {d.doc_id: d for d in Document.objects.filter(collection_id=collection_id, doc_id__in=documents)}
        # Like the PostgreSQL path, rewrite only what is new or different, and count it the same way.
        changed = [
            doc for doc_id, doc in documents.items()
            if doc_id not in known or any(getattr(doc, f) != getattr(known[doc_id], f) for f in _DOCUMENT_UPDATED)
        ]
        Document.objects.bulk_create(changed, update_conflicts=True, unique_fields=["collection", "doc_id"], update_fields=_DOCUMENT_UPDATED)
        created += len(documents) - len(known)
        updated += len(changed) - (len(documents) - len(known))
    return created, updated


class _CopySegment:
    """A read-only file over spool[start:end] that puts `prefix` (leading columns) in front of every line, for COPY.

    Reads stop at line ends, so the prefix is added by one `bytes.replace` per megabyte instead of per line.
    """

    def __init__(self, spool: BinaryIO, start: int, end: int, prefix: str) -> None:
        self.spool, self.position, self.end = spool, start, end
        self.prefix = prefix.encode()

    def read(self, size: int = -1) -> bytes:
        if self.position >= self.end:
            return b""
        self.spool.seek(self.position)
        limit = self.end - self.position
        data = self.spool.read(min(size, limit) if size > 0 else limit)
        if not data.endswith(b"\n"):
            data += self.spool.readline()
        self.position += len(data)
        return self.prefix + data[:-1].replace(b"\n", b"\n" + self.prefix) + b"\n"
