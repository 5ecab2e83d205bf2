"""Storing a pool build: its new entries, their sources and stub documents, by the hundred thousand rows.

services.pooling decides what to pool and hands the rows here as PoolRow tuples; store_pool writes them inside the
build's storing transaction. On PostgreSQL the rows are written down before that transaction (prepared_pool, or
spooled_pool for a build too large to prepare), so the transaction, and the campaign's lock it takes, only copies
them in; on SQLite (the demo) the ORM stores them in batches.
"""

from __future__ import annotations

import json
import marshal
import struct
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import chain, islice
from typing import IO

from django.db import IntegrityError, connection, transaction

from assessments.models import Campaign, Document, PoolEntry, PoolSource
from assessments.services.bulk import (
    COPY_NULL,
    SQLITE_BATCH,
    copy_escape,
    copy_text,
    insert_stubs,
    is_postgresql,
    lock_campaign,
    new_ids,
    temporary_table,
)

_DOCUMENT = Document._meta.db_table
_POOLENTRY = PoolEntry._meta.db_table
_POOLSOURCE = PoolSource._meta.db_table

PoolSourceRow = tuple[int, "int | None", "int | None"]
"""A run that brought an entry in: (run id, position in the rank order, position in the score order)."""
PoolRow = tuple[int, str, "int | None", list[PoolSourceRow]]
"""One entry of a pool build: (topic id, doc id, its place in the queue when the build adds it, else None, the
sources to record)."""


@dataclass(frozen=True)
class _CopiedPool:
    """PostgreSQL, as COPY text: the new entries with the ids taken for them, their sources by those ids, and the
    sources of entries pooled before."""

    new: IO[bytes]
    sources: IO[bytes]
    earlier: IO[bytes]


@dataclass(frozen=True)
class _ListedPool:
    """SQLite: the rows themselves."""

    rows: list[PoolRow]


@dataclass(frozen=True)
class _DirectPool:
    """PostgreSQL: a pool build's rows in marshal chunks, with what storing them needs found beforehand: the ids
    of the new entries' documents (`documents`: the collection's, or those taken for the `stubs`, which are sorted)
    and of the new entries themselves, in the rows' order; and the sources of entries pooled before as COPY text
    (_CopiedPool.earlier)."""

    chunks: IO[bytes]
    entry_ids: list[range]
    documents: dict[str, int]
    stubs: list[str]
    earlier: IO[bytes]

    def row_chunks(self) -> Iterator[list[PoolRow]]:
        return _unmarshalled(self.chunks)

    def rows(self) -> Iterator[PoolRow]:
        for chunk in self.row_chunks():
            yield from chunk


def _unmarshalled(chunks: IO[bytes]) -> Iterator[list[PoolRow]]:
    """The chunks of rows prepared_pool wrote, in order."""
    chunks.seek(0)
    # Each chunk is read whole and then unmarshalled: marshal.load reads a file a few bytes at a time.
    while size := int.from_bytes(chunks.read(8), "little"):
        yield marshal.loads(chunks.read(size))


PoolSpool = _CopiedPool | _ListedPool | _DirectPool
"""A pool build's rows, written down before its storing transaction (spooled_pool or prepared_pool makes it)."""


@contextmanager
def spooled_pool(rows: Iterable[PoolRow]) -> Iterator[PoolSpool]:
    """Read `rows` to the end (they may be computed from queries as they are read) and hold them for store_pool:
    in files as COPY text on PostgreSQL, so memory holds one chunk of rows whatever the size of the pool.

    New entries take their ids from PoolEntry's sequence here, a chunk at a time, so their sources are written with
    them and go into PoolSource as they are. An id taken by a build that then fails is never used: a gap, as any
    rolled-back insert leaves.
    """
    if not is_postgresql():
        yield _ListedPool(list(rows))
        return
    with tempfile.TemporaryFile() as new, tempfile.TemporaryFile() as sources, tempfile.TemporaryFile() as earlier, \
            connection.cursor() as cursor:
        rows = iter(rows)
        while chunk := list(islice(rows, 5_000)):
            ids = iter(new_ids(cursor, _POOLENTRY, sum(1 for row in chunk if row[2] is not None)))
            new_lines: list[str] = []
            source_lines: list[str] = []
            earlier_lines: list[str] = []
            for topic_id, doc, order, entry_sources in chunk:
                doc = copy_escape(doc)
                if order is None:
                    earlier_lines.extend(
                        f"{topic_id}\t{doc}\t{run_id}\t{_positions(by_rank, by_score)}\n" for run_id, by_rank, by_score in entry_sources
                    )
                    continue
                entry_id = next(ids)
                new_lines.append(f"{entry_id}\t{topic_id}\t{doc}\t{order}\n")
                source_lines.extend(
                    f"{entry_id}\t{run_id}\t{_positions(by_rank, by_score)}\n" for run_id, by_rank, by_score in entry_sources
                )
            new.write("".join(new_lines).encode())
            sources.write("".join(source_lines).encode())
            earlier.write("".join(earlier_lines).encode())
        yield _CopiedPool(new, sources, earlier)


def _positions(by_rank: int | None, by_score: int | None) -> str:
    return f"{COPY_NULL if by_rank is None else by_rank}\t{COPY_NULL if by_score is None else by_score}"


def store_pool(*, campaign: Campaign, tag: str, spool: PoolSpool) -> int:
    """Store a pool build: a stub for every document id the collection lacks, the new entries (those with a place)
    with strategy `tag`, and the sources of new and earlier entries. A source recorded before keeps its positions;
    one it lacks (the other order) is filled in. Returns the number of stubs created.

    Call inside the storing transaction. The campaign's lock is taken here, once the rows are in the database, for
    the statements that write the pool.
    """
    if isinstance(spool, _DirectPool):
        return _store_pool_direct(campaign, tag, spool)
    if isinstance(spool, _CopiedPool):
        return _store_pool_copied(campaign, tag, spool)
    lock_campaign(campaign)
    return _store_pool_orm(campaign.collection_id, tag, spool.rows)


def _store_pool_copied(campaign: Campaign, tag: str, spool: _CopiedPool) -> int:
    """store_pool on PostgreSQL, in a number of statements that does not grow with the pool.

    New entries, whose ids are known, are copied into a temporary table and inserted from it with their documents'
    ids; their sources are copied straight into PoolSource, with no join and nothing sent back to Python (a
    depth-100 pool of 84 nearly disjoint runs has 460,000 entries and 490,000 sources). Sources of entries pooled
    before (a rebuild, a late run) are upserted after, by (topic, document).
    """
    collection_id = campaign.collection_id
    with connection.cursor() as cursor:
        temporary_table(cursor, "pool_new", "id bigint, topic_id bigint, doc_id text, ord integer")
        spool.new.seek(0)
        copy_text(cursor, "pool_new", ("id", "topic_id", "doc_id", "ord"), spool.new)
        cursor.execute("ANALYZE pool_new")
        lock_campaign(campaign)
        stubs = insert_stubs(cursor, collection_id=collection_id, table="pool_new")
        # In the order of the (topic, document) index, the largest one the rows go into.
        cursor.execute(
            f"""INSERT INTO {_POOLENTRY} (id, topic_id, document_id, "order", duplicate_of_id, strategy, added_at)
                SELECT n.id, n.topic_id, d.id, n.ord, NULL, %s, now()
                FROM pool_new n JOIN {_DOCUMENT} d ON d.collection_id = %s AND d.doc_id = n.doc_id
                ORDER BY n.topic_id, d.id""",
            [tag, collection_id],
        )
        spool.sources.seek(0)
        copy_text(cursor, _POOLSOURCE, ("entry_id", "run_id", "rank_position", "score_position"), spool.sources)
        if spool.earlier.tell():
            temporary_table(cursor, "pool_plan", "topic_id bigint, doc_id text, run_id bigint, by_rank integer, by_score integer")
            spool.earlier.seek(0)
            copy_text(cursor, "pool_plan", ("topic_id", "doc_id", "run_id", "by_rank", "by_score"), spool.earlier)
            cursor.execute("ANALYZE pool_plan")
            # A position recorded before is kept; one the earlier builds did not read (the other order) is filled in.
            cursor.execute(
                f"""INSERT INTO {_POOLSOURCE} AS s (entry_id, run_id, rank_position, score_position)
                    SELECT e.id, p.run_id, p.by_rank, p.by_score
                    FROM pool_plan p
                    JOIN {_DOCUMENT} d ON d.collection_id = %s AND d.doc_id = p.doc_id
                    JOIN {_POOLENTRY} e ON e.topic_id = p.topic_id AND e.document_id = d.id
                    ON CONFLICT (entry_id, run_id) DO UPDATE
                       SET rank_position = COALESCE(s.rank_position, EXCLUDED.rank_position),
                           score_position = COALESCE(s.score_position, EXCLUDED.score_position)
                     WHERE (s.rank_position IS NULL AND EXCLUDED.rank_position IS NOT NULL)
                        OR (s.score_position IS NULL AND EXCLUDED.score_position IS NOT NULL)""",
                [collection_id],
            )
            cursor.execute("DROP TABLE pool_plan")
        cursor.execute("DROP TABLE pool_new")
    return stubs


def _store_pool_orm(collection_id: int, tag: str, rows: Iterable[PoolRow]) -> int:
    """store_pool through the ORM, for SQLite."""
    plan = list(rows)
    stored = Document.objects.filter(collection_id=collection_id)
    before = stored.count()
    Document.objects.bulk_create(
        [Document(collection_id=collection_id, doc_id=doc, has_text=False) for doc in dict.fromkeys(row[1] for row in plan)],
        batch_size=SQLITE_BATCH,
        ignore_conflicts=True,
    )
    stubs = stored.count() - before
    documents = _document_ids(collection_id, {row[1] for row in plan})
    PoolEntry.objects.bulk_create(
        [PoolEntry(topic_id=topic_id, document_id=documents[doc], order=order, strategy=tag)
         for topic_id, doc, order, _ in plan if order is not None],
        batch_size=SQLITE_BATCH,
    )
    topic_ids = {row[0] for row in plan}
    stored_entries = PoolEntry.objects.filter(topic_id__in=topic_ids).values_list("topic_id", "document_id", "id")
    entries = {(topic_id, document_id): pk for topic_id, document_id, pk in stored_entries}
    known = {(source.entry_id, source.run_id): source for source in PoolSource.objects.filter(entry__topic_id__in=topic_ids)}
    added, filled = [], []
    for topic_id, doc, _, sources in plan:
        entry_id = entries[(topic_id, documents[doc])]
        for run_id, by_rank, by_score in sources:
            source = known.get((entry_id, run_id))
            if source is None:
                added.append(PoolSource(entry_id=entry_id, run_id=run_id, rank_position=by_rank, score_position=by_score))
            elif (source.rank_position is None and by_rank) or (source.score_position is None and by_score):
                source.rank_position = source.rank_position or by_rank
                source.score_position = source.score_position or by_score
                filled.append(source)
    PoolSource.objects.bulk_create(added, batch_size=SQLITE_BATCH)
    PoolSource.objects.bulk_update(filled, ["rank_position", "score_position"], batch_size=SQLITE_BATCH)
    return stubs


def _document_ids(collection_id: int, doc_ids: set[str]) -> dict[str, int]:
    """doc id -> Document id, read in batches (SQLite bounds the parameters of one query)."""
    wanted = sorted(doc_ids)
    found: dict[str, int] = {}
    for start in range(0, len(wanted), SQLITE_BATCH):
        rows = Document.objects.filter(collection_id=collection_id, doc_id__in=wanted[start : start + SQLITE_BATCH])
        found.update(rows.values_list("doc_id", "id"))
    return found


# --------------------------------------------------------------------------------------------------------------
# Pools, copied straight into their tables (PostgreSQL)
#
# A depth-100 pool of short runs is as large as a pool of long ones, with little reading to hide its storing: for
# 410,000 entries, staging the entries and inserting them and their stubs row by row (INSERT … SELECT, ON CONFLICT)
# took most of a build. Here the documents the new entries point at are looked up, and the ids of their stubs and
# of the entries taken from the sequences, before the storing transaction; it then has one COPY each for the stubs,
# the entries and the sources, which PostgreSQL adds a page of rows at a time (less CPU and WAL than row by row),
# each written by Python while PostgreSQL reads the one before it.

_ROWS_PER_CHUNK = 5_000
_DOCUMENTS_PER_LOOKUP = 10_000
_STUBS_PER_READ = 16_384
# The doc ids of the new entries, with their documents' ids, are held in memory (130 bytes each); a build that adds
# more (a depth-1000 pool of disjoint runs) is stored as spooled_pool's, whose memory does not grow with the pool.
_DIRECT_DOCUMENTS = 600_000
_STUB_COLUMNS = "id, collection_id, doc_id, title, body, is_html, url, metadata, has_text, text_hash"
_STUB_FIELDS = "\t\t\tf\t\t{}\tf\t\n"  # from title on: no text, no URL, no metadata, not HTML, no text yet
_ENTRY_COLUMNS = 'id, topic_id, document_id, "order", duplicate_of_id, strategy, added_at'
_SOURCE_COLUMNS = "entry_id, run_id, rank_position, score_position"
_DOCUMENT_UNIQUE = "document_unique_id_per_collection"
# COPY's binary format: a header (signature, no flags, no extension), then per row the number of fields and each
# field as its length (-1: null) and its value in network order (bigint 8 bytes, integer 4), then -1.
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_BINARY_TRAILER = b"\xff\xff"
_ENTRY = struct.Struct(">hiqiqiqiii").pack  # 7 fields: id, topic, document, order, null duplicate_of (tail follows)
_SOURCE = struct.Struct(">hiqiqiiii").pack  # entry, run, rank position, score position
_SOURCE_ONE = struct.Struct(">hiqiqiii").pack  # the same with one position null
_LENGTH = struct.Struct(">i").pack
_TIMESTAMP = struct.Struct(">iq").pack  # a timestamp: microseconds since PostgreSQL's epoch
_POSTGRESQL_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@contextmanager
def prepared_pool(rows: Iterable[PoolRow], *, collection_id: int) -> Iterator[PoolSpool]:
    """spooled_pool, for store_pool to copy the rows straight into their tables on PostgreSQL: reads `rows` to the
    end, then looks up the documents of the new entries in the collection and takes ids for their stubs and for the
    entries, all before the storing transaction (and outside the campaign's lock). Memory holds a chunk of rows and
    the doc ids of the new entries, up to _DIRECT_DOCUMENTS of them; a build that adds more is spooled_pool's.

    A document another transaction creates after the look-up makes the stubs' COPY fail on the unique doc id;
    store_pool then stores the rows as spooled_pool's, and the ids taken here stay unused (gaps).
    """
    if not is_postgresql():
        with spooled_pool(rows) as spool:
            yield spool
        return
    new_docs: dict[str, None] | None = {}
    new_entries = 0
    with tempfile.TemporaryFile() as chunks, tempfile.TemporaryFile() as earlier:
        rows = iter(rows)
        while chunk := list(islice(rows, _ROWS_PER_CHUNK)):
            data = marshal.dumps(chunk)
            chunks.write(len(data).to_bytes(8, "little") + data)
            added = [row[1] for row in chunk if row[2] is not None]
            new_entries += len(added)
            if new_docs is not None:
                new_docs.update(dict.fromkeys(added))
                if len(new_docs) > _DIRECT_DOCUMENTS:
                    new_docs = None
            if len(added) < len(chunk):
                earlier.write("".join(
                    f"{topic_id}\t{copy_escape(doc)}\t{run_id}\t{_positions(by_rank, by_score)}\n"
                    for topic_id, doc, order, entry_sources in chunk if order is None
                    for run_id, by_rank, by_score in entry_sources
                ).encode())
        if new_docs is None:
            with spooled_pool(row for chunk in _unmarshalled(chunks) for row in chunk) as spool:
                yield spool
            return
        doc_ids = list(new_docs)
        new_docs.clear()
        with connection.cursor() as cursor:
            documents, stubs = _pool_documents(cursor, doc_ids, collection_id=collection_id)
            del doc_ids
            entry_ids = _id_blocks(cursor, _POOLENTRY, new_entries)
        yield _DirectPool(chunks, entry_ids, documents, stubs, earlier)


def _pool_documents(cursor, doc_ids: list[str], *, collection_id: int) -> tuple[dict[str, int], list[str]]:
    """(doc id -> document id, the doc ids the collection lacks, sorted): ids of the collection's documents, and
    ids taken from Document's sequence for stubs of the others.

    `doc_ids` come in the rows' order, topic by topic in presentation order, and the stubs take their ids in that
    order: the entries, copied in that order too, then go in at the right end of the (topic, order) and (topic,
    document) indexes of PoolEntry.
    The stubs are copied sorted by doc id, so the (collection, doc id) index of Document fills page after page
    (1.1 s instead of 1.8 for 460,000 stubs), at the cost of ids out of order in its primary key (+0.15 s)."""
    ids: dict[str, int] = {}
    cursor.execute(f"SELECT EXISTS (SELECT FROM {_DOCUMENT} WHERE collection_id = %s)", [collection_id])
    (collection_has_documents,) = cursor.fetchone()
    # A pool built before its documents are imported (as --only-pooled does) has nothing to look up.
    for start in range(0, len(doc_ids) if collection_has_documents else 0, _DOCUMENTS_PER_LOOKUP):
        # The ids go as one JSON text (psycopg2 quotes a list's strings one by one, five times slower), as an array
        # rather than a semi-join, so the (collection, doc id) index is probed whatever the table's statistics say.
        cursor.execute(
            f"""SELECT doc_id, id FROM {_DOCUMENT} WHERE collection_id = %s
                AND doc_id = ANY(ARRAY(SELECT jsonb_array_elements_text(%s::jsonb)))""",
            [collection_id, json.dumps(doc_ids[start : start + _DOCUMENTS_PER_LOOKUP])],
        )
        ids.update(cursor.fetchall())
    stubs = [doc for doc in doc_ids if doc not in ids] if ids else doc_ids
    ids.update(zip(stubs, chain.from_iterable(_id_blocks(cursor, _DOCUMENT, len(stubs)))))
    return ids, sorted(stubs)


def _id_blocks(cursor, table: str, count: int) -> list[range]:
    """new_ids, as the runs of consecutive ids taken, so the ids are not sent back one by one. They are one run
    unless another session took ids of the sequence meanwhile: the ids are then taken again once (those taken
    first stay unused, a gap), and after that the runs they fall into are worked out."""
    if not count:
        return []
    taken = "SELECT nextval(s) AS pk FROM CAST(pg_get_serial_sequence(%s, 'id') AS regclass) s, generate_series(1, %s)"
    for _ in range(2):
        cursor.execute(f"SELECT min(pk), max(pk) FROM ({taken}) taken", [table, count])
        first, last = cursor.fetchone()
        if last - first + 1 == count:
            return [range(first, last + 1)]
    cursor.execute(
        f"""SELECT min(pk), max(pk) FROM (SELECT pk, pk - row_number() OVER (ORDER BY pk) AS run FROM ({taken}) taken) numbered
            GROUP BY run ORDER BY min(pk)""",
        [table, count],
    )
    return [range(first, last + 1) for first, last in cursor.fetchall()]


def _store_pool_direct(campaign: Campaign, tag: str, spool: _DirectPool) -> int:
    """store_pool with the documents and ids found beforehand: one COPY each for the stubs, the entries and their
    sources; only the sources of entries pooled before are staged (by _store_pool_copied, with nothing new)."""
    with connection.cursor() as cursor:
        lock_campaign(campaign)
        if spool.stubs:
            try:
                with transaction.atomic(), connection.wrap_database_errors:  # a savepoint, for the way back
                    cursor.copy_expert(f"COPY {_DOCUMENT} ({_STUB_COLUMNS}) FROM STDIN", _StubCopy(spool, campaign.collection_id), 1 << 20)
            except IntegrityError as exc:
                if getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None) != _DOCUMENT_UNIQUE:
                    raise
                # Another import or build created one of these documents after prepared_pool looked them up.
                with spooled_pool(spool.rows()) as copied:
                    assert isinstance(copied, _CopiedPool)
                    return _store_pool_copied(campaign, tag, copied)
        if spool.entry_ids:
            cursor.execute("SELECT now()")  # what now() gives an INSERT: the transaction's start
            added_at = (cursor.fetchone()[0] - _POSTGRESQL_EPOCH) // timedelta(microseconds=1)
            strategy = tag.encode()
            tail = _LENGTH(len(strategy)) + strategy + _TIMESTAMP(8, added_at)
            with tempfile.TemporaryFile() as sources:
                sources.write(_BINARY_HEADER)
                copy = _EntryCopy(spool, tail, sources)
                cursor.copy_expert(f"COPY {_POOLENTRY} ({_ENTRY_COLUMNS}) FROM STDIN WITH (FORMAT binary)", copy, 1 << 20)
                sources.write(_BINARY_TRAILER)
                sources.seek(0)
                cursor.copy_expert(f"COPY {_POOLSOURCE} ({_SOURCE_COLUMNS}) FROM STDIN WITH (FORMAT binary)", sources, 1 << 20)
    if spool.earlier.tell():
        with tempfile.TemporaryFile() as nothing:
            _store_pool_copied(campaign, tag, _CopiedPool(nothing, nothing, spool.earlier))
    return len(spool.stubs)


class _StubCopy:
    """The stubs as COPY text, made while PostgreSQL reads what came before."""

    def __init__(self, spool: _DirectPool, collection_id: int) -> None:
        self.stubs, self.documents = iter(spool.stubs), spool.documents
        self.collection = f"\t{collection_id}\t"

    def read(self, size: int = -1) -> bytes:
        batch = list(islice(self.stubs, _STUBS_PER_READ))
        # Escaped as one text (doc ids hold no NUL: the run readers refuse it), not one id at a time.
        escaped = copy_escape("\0".join(batch)).split("\0") if batch else []
        documents, collection = self.documents, self.collection
        return "".join([f"{documents[doc]}{collection}{text}{_STUB_FIELDS}" for doc, text in zip(batch, escaped)]).encode()


class _EntryCopy:
    """The new entries in COPY's binary format, a chunk of rows at a time, made while PostgreSQL reads the chunk
    before; their sources go to `sources` (binary too) on the way, so the rows are read once. Binary, PostgreSQL
    parses no numbers and no timestamps, and Python packs each row with one call instead of formatting it."""

    def __init__(self, spool: _DirectPool, tail: bytes, sources: IO[bytes]) -> None:
        self.chunks = spool.row_chunks()
        self.ids = chain.from_iterable(spool.entry_ids)
        self.documents, self.tail, self.sources = spool.documents, tail, sources
        self.header, self.ended = _BINARY_HEADER, False

    def read(self, size: int = -1) -> bytes:
        ids, documents, tail = self.ids, self.documents, self.tail
        for chunk in self.chunks:
            entries: list[bytes] = []
            sources: list[bytes] = []
            # Entries pooled before (no order) are not copied: their sources are in spool.earlier.
            for (topic_id, doc, order, entry_sources), pk in zip([row for row in chunk if row[2] is not None], ids):
                entries += (_ENTRY(7, 8, pk, 8, topic_id, 8, documents[doc], 4, order, -1), tail)
                for run_id, by_rank, by_score in entry_sources:
                    if by_rank is not None and by_score is not None:
                        sources.append(_SOURCE(4, 8, pk, 8, run_id, 4, by_rank, 4, by_score))
                    else:
                        # A position the run did not pool the document by is null: length -1, no value.
                        sources.append(_SOURCE_ONE(4, 8, pk, 8, run_id, *((-1, 4, by_score) if by_rank is None else (4, by_rank, -1))))
            self.sources.write(b"".join(sources))
            if entries:
                return self._header() + b"".join(entries)
        if self.ended:
            return b""
        self.ended = True
        return self._header() + _BINARY_TRAILER

    def _header(self) -> bytes:
        """The header before the first rows, nothing after."""
        header, self.header = self.header, b""
        return header
