"""Bulk SQL, in one place: what Touchstone writes by the hundred thousand rows, and how.

On PostgreSQL the bulk paths use COPY: rows are formatted as COPY's text format (one line per row, fields
separated by tabs, `\\N` for null, backslash escapes for backslash, newline, carriage return and tab; arrays are
PostgreSQL array literals inside such a field, escaped twice), often into a temporary table first, then merged
with one INSERT … SELECT. SQLite (the demo database) has no COPY, no arrays and no advisory locks, so each writer
here has an ORM branch that stores the same rows in batches; `is_postgresql` is the one switch between them.

Writers here do not decide what to store: the services (pooling, duplicates, imports, qrels) do, and call them
inside their storing transaction, after `lock_campaign`. A pool build's rows, the largest writes, have a module of
their own (services.pool_store) built on the helpers here.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import IO, Any, BinaryIO, cast

from django.db import connection

from assessments.models import Campaign, Document, Judgment, PoolEntry, Ranking

COPY_NULL = "\\N"
SQLITE_BATCH = 500  # rows or ids per statement on SQLite: below its limit on bound parameters
# The spool's columns, in the order services.imports.documents writes them; `seq`, the record's place in the
# import, is added by the temporary table.
DOCUMENT_COLUMNS = ("doc_id", "title", "body", "is_html", "url", "metadata", "text_hash")
_DOCUMENT_UPDATED = ("title", "body", "is_html", "url", "metadata", "has_text", "text_hash")
# What an assessor judged: a document that has judgments keeps these as they are (JudgedTextChanged).
_DOCUMENT_TEXT = ("title", "body", "is_html")
_JUDGED_SHOWN = 5  # judged documents named in a refusal

_RankingRow = Any  # services.imports.runs' ranking: a NamedTuple with Ranking's fields but `run`

_DOCUMENT = Document._meta.db_table
_JUDGMENT = Judgment._meta.db_table
_POOLENTRY = PoolEntry._meta.db_table


def is_postgresql() -> bool:
    """Whether the bulk paths may use COPY, arrays and advisory locks (else: SQLite, the demo database)."""
    return connection.vendor == "postgresql"


# --------------------------------------------------------------------------------------------------------------
# Locks


def lock_campaign(campaign: Campaign) -> None:
    """Serialise the writes that change a campaign's topics, documents, runs, pool or qrels (call inside the
    storing transaction).

    FOR NO KEY UPDATE, not FOR UPDATE: rows that merely reference the campaign (a new Job, a qrels snapshot)
    take a KEY SHARE lock on it for their foreign key, and must not wait for a long import to commit.
    """
    Campaign.objects.select_for_update(no_key=True).filter(pk=campaign.pk).values_list("pk", flat=True).get()


@contextmanager
def session_lock(namespace: int, key: int) -> Iterator[bool]:
    """Try to take the session-level advisory lock (namespace, key) and hold it for the block; yield whether it
    was taken (False: another session holds it, and nothing is held). Unlike a transaction's locks it spans
    several transactions, so work that commits in steps to report progress is still serialised. SQLite (the demo)
    serialises writers itself: always True there, holding nothing."""
    if not is_postgresql():
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, key])
        taken = cursor.fetchone()[0]
    if not taken:
        yield False
        return
    try:
        yield True
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, key])


# --------------------------------------------------------------------------------------------------------------
# COPY text and temporary tables (PostgreSQL)


def copy_escape(text: str) -> str:
    """`text` as a field of COPY's text format. It holds no NUL (PostgreSQL text cannot): the readers in
    assessments.formats refuse NUL, naming its line, rather than store a text the file does not have."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


_COPY_ESCAPES = re.compile(r"\\(.)")
_COPY_UNESCAPED = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def copy_unescape(field: str) -> str:
    """A COPY text field back as text (the SQLite path reads the spool itself)."""
    return _COPY_ESCAPES.sub(lambda m: _COPY_UNESCAPED[m.group(1)], field) if "\\" in field else field


# Characters that make an array element need quotes; ids come from split(), so there is no white space.
_ARRAY_SPECIAL = re.compile(r'[{}"\\]')


def _numbers_literal(values: list[int] | list[float]) -> str:
    """A PostgreSQL array literal of numbers: the list's repr (shortest round-trip floats) between braces, the
    fastest formatting Python has; PostgreSQL ignores the spaces after the commas."""
    return "{" + repr(values)[1:-1] + "}"


def _array_literal(values: list[str | None]) -> str:
    """A PostgreSQL array literal of text, as a COPY text field. Elements are quoted only when one of them needs it
    (rare in run files); tabs and newlines cannot occur, since split() made the fields."""
    if None not in values:
        text = ",".join(cast("list[str]", values))
        # A comma inside an id, or an element spelled null in any case, needs quotes too; "null" anywhere in the
        # text sends the list down the quoting path, which is always right, only slower.
        if text.count(",") == len(values) - 1 and not _ARRAY_SPECIAL.search(text) and "null" not in text.lower():
            return "{" + text + "}"
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' if value is not None else "NULL" for value in values)
    return ("{" + ",".join(quoted) + "}").replace("\\", "\\\\")  # COPY's own escape, over the array's


def temporary_table(cursor, name: str, columns: str) -> None:
    """Create the temporary table `name` (dropped at commit), replacing one a failed import left in the session."""
    cursor.execute(f"DROP TABLE IF EXISTS {name}")
    cursor.execute(f"CREATE TEMPORARY TABLE {name} ({columns}) ON COMMIT DROP")


def _copy_rows(cursor, table: str, rows: Iterable[tuple]) -> None:
    """COPY tuples into `table` (all its columns, in order), in chunks so a million rows never sit in one buffer."""
    rows = iter(rows)
    while chunk := list(islice(rows, 200_000)):
        buffer = io.StringIO()
        csv.writer(buffer).writerows(chunk)
        buffer.seek(0)
        cursor.copy_expert(f"COPY {table} FROM STDIN WITH (FORMAT csv)", buffer)


def copy_values(cursor, table: str, columns: Sequence[str], rows: Iterable[Sequence]) -> None:
    """COPY rows of Python values into `columns` of `table`, formatted as PostgreSQL reads them: None as null,
    booleans as t/f, numbers by repr, times in ISO 8601 with their offset, bytes as bytea hex; text escaped. A
    JSON column takes its value as JSON text (json.dumps it first). Rows are formatted while PostgreSQL reads them,
    so an iterator of a million rows is never held whole."""
    quoted = ", ".join(f'"{column}"' for column in columns)  # "order" is a keyword
    cursor.copy_expert(f"COPY {table} ({quoted}) FROM STDIN", _ValuesCopy(rows), 1 << 20)


def _copy_field(value: Any) -> str:
    if value is None:
        return COPY_NULL
    if isinstance(value, str):
        return copy_escape(value)
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, bytes | memoryview):
        return "\\\\x" + bytes(value).hex()  # bytea's hex form, its backslash escaped for COPY
    return value.isoformat()  # a datetime


class _ValuesCopy:
    def __init__(self, rows: Iterable[Sequence]) -> None:
        self.rows = iter(rows)

    def read(self, size: int = -1) -> bytes:
        lines, length = [], 0
        for row in self.rows:
            lines.append("\t".join(map(_copy_field, row)) + "\n")
            length += len(lines[-1])
            if 0 < size <= length:
                break
        return "".join(lines).encode()


def new_ids(cursor, table: str, count: int) -> list[int]:
    """Take `count` ids from the sequence of `table`'s id column, for rows COPY will insert with their children
    (a row's id must be known before the rows that point at it are written)."""
    if not count:
        return []
    # The sequence is looked up once: as an argument of nextval() it would be looked up for every id.
    cursor.execute(
        "SELECT nextval(s) FROM CAST(pg_get_serial_sequence(%s, 'id') AS regclass) s, generate_series(1, %s)", [table, count]
    )
    return [pk for (pk,) in cursor.fetchall()]


def copy_text(cursor, table: str, columns: Sequence[str], text: IO[bytes]) -> None:
    """COPY a file of COPY text lines (as copy_escape makes them) into `columns` of `table`."""
    cursor.copy_expert(f"COPY {table} ({', '.join(columns)}) FROM STDIN", text, 1 << 20)


def insert_stubs(cursor, *, collection_id: int, table: str, where: str = "true") -> int:
    """Create a stub Document (has_text=False) for each `doc_id` of `table` (its rows matching `where`) the
    collection does not have, so the id can be pooled, judged and listed until its text is imported; return how
    many were created.

    Conflicts are left to the unique index rather than a NOT EXISTS: an anti-join against the table being filled can
    be planned as a scan per row (quadratic) while its statistics still say it is empty; and a collection is shared
    by campaigns whose imports do not wait for each other. The ids go in sorted, so the unique index is filled page
    after page instead of at random (a third less time for 460,000 stubs).
    """
    cursor.execute(
        f"""INSERT INTO {_DOCUMENT} (collection_id, doc_id, title, body, is_html, url, metadata, has_text, text_hash)
            SELECT %s, doc_id, '', '', false, '', '{{}}', false, ''
            FROM (SELECT DISTINCT doc_id FROM {table} WHERE {where}) p ORDER BY doc_id
            ON CONFLICT (collection_id, doc_id) DO NOTHING""",
        [collection_id],
    )
    return cursor.rowcount


# --------------------------------------------------------------------------------------------------------------
# Pools


def set_duplicate_of(changes: list[tuple[int, int | None]]) -> None:
    """Set `PoolEntry.duplicate_of` of each (entry id, canonical entry id or None): one UPDATE from arrays on
    PostgreSQL, one per canonical on SQLite (no arrays there; the demo's groups are few)."""
    if is_postgresql():
        with connection.cursor() as cursor:
            cursor.execute(
                f"""UPDATE {_POOLENTRY} e SET duplicate_of_id = v.canonical
                    FROM unnest(%s::bigint[], %s::bigint[]) AS v(id, canonical) WHERE e.id = v.id""",
                [[c[0] for c in changes], [c[1] for c in changes]],
            )
        return
    by_canonical: dict[int | None, list[int]] = defaultdict(list)
    for entry_id, canonical in changes:
        by_canonical[canonical].append(entry_id)
    for canonical, entry_ids in by_canonical.items():
        for start in range(0, len(entry_ids), SQLITE_BATCH):
            PoolEntry.objects.filter(pk__in=entry_ids[start : start + SQLITE_BATCH]).update(duplicate_of_id=canonical)


# --------------------------------------------------------------------------------------------------------------
# Documents


class JudgedTextChanged(Exception):
    """An import would change the text of documents that have judgments (`doc_ids`: the first few, by id)."""

    def __init__(self, doc_ids: Sequence[str], *, more: bool) -> None:
        self.doc_ids, self.more = list(doc_ids), more
        named = ", ".join(self.doc_ids) + (" and more" if more else "")
        several = len(self.doc_ids) > 1 or more
        super().__init__(
            f"document{'s' if several else ''} {named} ha{'ve' if several else 's'} judgments, and this import would change "
            f"{'their' if several else 'its'} text: the labels were given to the text as it is, so a judged document's text "
            "is not changed (import the new text under another id, or leave it out); nothing was stored"
        )


def upsert_documents(spool: BinaryIO, *, collection_id: int, repeats: bool) -> tuple[int, int]:
    """Insert the spooled documents (COPY text in DOCUMENT_COLUMNS' order) into the collection, or update those it
    has whose text differs (stubs included); return (created, updated). `repeats` says an id may occur more than
    once in the spool (re-rank files list a document once per query): then only its first line counts.

    Raises JudgedTextChanged, storing nothing, when a document that has judgments (in any campaign over the
    collection) would get another title, body or HTML flag; a stub's first text, its URL or metadata may change.

    Call inside the storing transaction, with the spool positioned at its end.
    """
    if is_postgresql():
        return _copy_documents(spool, collection_id=collection_id, repeats=repeats)
    return _bulk_create_documents(spool, collection_id=collection_id)


_DOCUMENT_ROWS = "touchstone_document_import"  # temporary


def _copy_documents(spool: BinaryIO, *, collection_id: int, repeats: bool) -> tuple[int, int]:
    table = Document._meta.db_table
    columns = ", ".join(DOCUMENT_COLUMNS)
    with connection.cursor() as cursor:
        if not repeats and not Document.objects.filter(collection_id=collection_id).exists():
            # A first import into an empty collection (a whole corpus): COPY straight into the table, which
            # halves the storing time.
            cursor.copy_expert(
                f"COPY {table} (collection_id, has_text, {columns}) FROM STDIN",
                _CopySegment(spool, 0, spool.tell(), f"{collection_id}\tt\t"), 1 << 20,
            )
            return cursor.rowcount, 0
        temporary_table(
            cursor, _DOCUMENT_ROWS,
            "seq bigserial, doc_id text, title text, body text, is_html boolean, url text, metadata jsonb, text_hash text",
        )
        spool.seek(0)
        copy_text(cursor, _DOCUMENT_ROWS, DOCUMENT_COLUMNS, spool)
        if repeats:
            # Each id's first record stays. (Left to ON CONFLICT, a later record would overwrite an earlier one
            # whenever the earlier one changed nothing, as in a second import of the same file.)
            cursor.execute("SET LOCAL work_mem = '256MB'")
            cursor.execute(f"DELETE FROM {_DOCUMENT_ROWS} a USING {_DOCUMENT_ROWS} b WHERE a.doc_id = b.doc_id AND a.seq > b.seq")
        differs = " OR ".join(f"d.{c} IS DISTINCT FROM t.{c}" for c in _DOCUMENT_TEXT)
        cursor.execute(
            f"""SELECT d.doc_id FROM {table} d JOIN {_DOCUMENT_ROWS} t ON t.doc_id = d.doc_id
                WHERE d.collection_id = %s AND d.has_text AND ({differs})
                  AND EXISTS (SELECT 1 FROM {_JUDGMENT} j WHERE j.document_id = d.id)
                ORDER BY d.doc_id LIMIT {_JUDGED_SHOWN + 1}""",
            [collection_id],
        )
        if judged := [row[0] for row in cursor.fetchall()]:
            raise JudgedTextChanged(judged[:_JUDGED_SHOWN], more=len(judged) > _JUDGED_SHOWN)
        changed = " OR ".join(f"d.{c} IS DISTINCT FROM EXCLUDED.{c}" for c in _DOCUMENT_UPDATED)
        cursor.execute(
            f"""WITH stored AS (
                  INSERT INTO {table} AS d (collection_id, has_text, {columns})
                  SELECT %s, true, {columns} FROM {_DOCUMENT_ROWS}
                  ON CONFLICT (collection_id, doc_id) DO UPDATE
                     SET {', '.join(f'{c} = EXCLUDED.{c}' for c in _DOCUMENT_UPDATED)}
                   WHERE {changed}
                  RETURNING (xmax = 0) AS inserted)
                SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM stored""",
            [collection_id],
        )
        created, updated = cursor.fetchone()
        cursor.execute(f"DROP TABLE {_DOCUMENT_ROWS}")
    return created, updated


def _bulk_create_documents(spool: BinaryIO, *, collection_id: int) -> tuple[int, int]:
    """upsert_documents on SQLite: the spool read back in batches, each compared with the stored rows."""
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
        rewritten = [
            known[doc.doc_id].pk for doc in changed
            if doc.doc_id in known and known[doc.doc_id].has_text
            and any(getattr(doc, f) != getattr(known[doc.doc_id], f) for f in _DOCUMENT_TEXT)
        ]
        if rewritten:
            judged = sorted(set(Judgment.objects.filter(document_id__in=rewritten).values_list("document__doc_id", flat=True)))
            if judged:
                raise JudgedTextChanged(judged[:_JUDGED_SHOWN], more=len(judged) > _JUDGED_SHOWN)
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


# --------------------------------------------------------------------------------------------------------------
# Runs


def store_rankings(rankings: Iterable[tuple[int, _RankingRow]]) -> None:
    """Store (run id, ranking) pairs as Ranking rows: COPY on PostgreSQL, batches on SQLite. The rankings are read
    from the iterable as they are stored, so a whole campaign's runs never sit in memory."""
    if is_postgresql():
        with connection.cursor() as cursor:
            cursor.copy_expert(f"COPY {Ranking._meta.db_table} ({_RANKING_COLUMNS}) FROM STDIN", _RankingCopy(rankings), 1 << 20)
        return
    rankings = iter(rankings)
    while batch := list(islice(rankings, _RANKINGS_PER_INSERT)):
        Ranking.objects.bulk_create([Ranking(run_id=run_id, **ranking._asdict()) for run_id, ranking in batch])


def ranking_copy_fields(r: _RankingRow) -> bytes:
    """A ranking as COPY text fields from topic_id on (_RANKING_COLUMNS but run_id), without the line end."""
    stances = COPY_NULL if r.stances is None else _array_literal(r.stances)
    by_rank = COPY_NULL if r.by_rank is None else _numbers_literal(r.by_rank)
    by_single = COPY_NULL if r.by_single is None else _numbers_literal(r.by_single)
    return (
        f"{r.topic_id}\t{r.length}\t{_array_literal(r.docs)}\t{_numbers_literal(r.ranks)}\t{_numbers_literal(r.scores)}"
        f"\t{stances}\t{by_rank}\t{by_single}"
    ).encode()


_RANKING_COLUMNS = "run_id, topic_id, length, docs, ranks, scores, stances, by_rank, by_single"
_RANKINGS_PER_INSERT = 20  # a ranking holds up to a thousand lines


class _RankingCopy:
    """Rankings as a file of COPY text lines, one per ranking, made while PostgreSQL reads them: the
    formatting here and PostgreSQL's parsing of the arrays then run at the same time, on two cores."""

    def __init__(self, rankings: Iterable[tuple[int, _RankingRow]]) -> None:
        self.rankings = iter(rankings)

    def read(self, size: int = -1) -> bytes:
        lines = []
        length = 0
        for run_id, ranking in self.rankings:
            lines.append(b"%d\t%s\n" % (run_id, ranking_copy_fields(ranking)))
            length += len(lines[-1])
            if 0 < size <= length:
                break
        return b"".join(lines)
