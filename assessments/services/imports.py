"""Loading what a campaign is built from: its topics, its document collection and the participants' runs.

The organiser page, the REST API and the management commands all end here. Every import has the same shape,
because a bad line must leave the campaign exactly as it was and a poller must still see progress:

1. Read and check every input file completely, reporting progress (`progress.advance`, outside any
   transaction, so a page polling the Job row sees it at once). Rows to store go to a spool file on disk in
   PostgreSQL's COPY format, so memory stays flat whatever the input size.
2. Store the spool in one transaction. A FormatError (file and line) or an ImportProblem raised before or
   during it stores nothing.

Runs and documents are loaded with COPY on PostgreSQL. SQLite (the demo database) has no COPY, so one small
function per table switches to `bulk_create` in batches; everything else is shared.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import marshal
import re
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, islice
from operator import attrgetter, gt
from pathlib import Path
from typing import BinaryIO, NamedTuple

import psycopg2
from django.conf import settings
from django.core.files.move import file_move_safe
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, ProgrammingError, connection, transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.text import get_valid_filename

from accounts.models import User
from assessments.collector import collector_paused
from assessments.formats.documents import read_documents
from assessments.formats.errors import FormatError
from assessments.formats.qrels import topic_sort_key
from assessments.formats.topics_xml import parse_topics
from assessments.formats.trec_run import RunBlock, read_run
from assessments.metrics.duplicates import normalised_utf8
from assessments.metrics.evaluation import order_positions
from assessments.models import Campaign, Document, Job, PoolSource, Ranking, Run, Topic
from assessments.services import jobs, rankings
from assessments.services.campaigns import lock_campaign
from assessments.services.jobs import Progress

TOPICS_MAX_BYTES = 20_000_000  # far above any real topics file (Touché's are ~100 kB); bounds what is read
DOCUMENT_FORMATS = ("auto", "argsme", "passages", "jsonl")
IMPORT_KINDS = ("import_topics", "import_documents", "import_runs")
# The unit of each kind's progress: runs and topics count bytes read; documents count lines, because the
# document reader opens its files itself and reports the line of each record, not its byte offset.
PROGRESS_UNITS = {"import_topics": "bytes", "import_documents": "lines", "import_runs": "bytes"}
WARNINGS_KEPT = 200  # per job; each run keeps all of its own warnings on its Run row
SQLITE_BATCH = 2000

_TOPIC_NUMBER_LENGTH = Topic._meta.get_field("number").max_length
_DOC_ID_LENGTH = Document._meta.get_field("doc_id").max_length  # a pooled id becomes a Document
_TAG_LENGTH = Run._meta.get_field("tag").max_length
_TEAM_LENGTH = Run._meta.get_field("team").max_length
_URL_LENGTH = Document._meta.get_field("url").max_length
_INT4 = 2**31  # Ranking.ranks holds 32-bit integers
_GZIP_MAGIC = b"\x1f\x8b"
_READ_HINT = 1 << 20  # characters of run lines read per batch (and per progress report)


class ImportProblem(ValueError):
    """An import that cannot be done as asked (the message says why); nothing was stored."""


@dataclass(frozen=True)
class ImportSummary:
    """What an import stored: one line for people, the warnings to look at, and counts for machines."""

    text: str
    warnings: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)

    def as_result(self) -> dict:
        """The Job result (services.jobs: "summary" and "warnings" are shown to the organiser)."""
        kept = self.warnings[:WARNINGS_KEPT]
        if len(self.warnings) > WARNINGS_KEPT:
            kept.append(f"… and {len(self.warnings) - WARNINGS_KEPT} more warnings")
        return {"summary": self.text, "warnings": kept, **self.counts}


@dataclass(frozen=True)
class InputFile:
    path: Path
    name: str  # as errors show it: the path typed on the command line, or an upload's original name


def _input_files(paths: Sequence[str | Path], names: Sequence[str] | None = None) -> list[InputFile]:
    names = list(names) if names is not None else [str(p) for p in paths]
    if len(names) != len(paths):
        raise ValueError("give one name per path")
    if not paths:
        raise ImportProblem("no file to import")
    return [InputFile(Path(p), n) for p, n in zip(paths, names)]


def _files_label(files: Sequence[InputFile]) -> str:
    return files[0].name if len(files) == 1 else f"{len(files)} files"


class _NoProgress:
    def advance(self, done: int, total: int | None = None) -> None:
        pass


class _FilesMeter:
    """One progress bar over several files: bytes of the files already read plus the position in the current one."""

    def __init__(self, progress: Progress, files: Sequence[InputFile]) -> None:
        self.progress = progress
        self.total = sum(f.path.stat().st_size for f in files)
        self.finished = 0
        progress.advance(0, self.total)

    def at(self, position: int) -> None:
        self.progress.advance(self.finished + position, self.total)

    def file_done(self, size: int) -> None:
        self.finished += size
        self.progress.advance(self.finished, self.total)


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as probe:
        return probe.read(2) == _GZIP_MAGIC


@contextmanager
def _opened(path: Path) -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """(raw file, decompressed stream): gzip is recognised by its magic bytes, as the document reader does."""
    with open(path, "rb") as raw:
        yield raw, (gzip.GzipFile(fileobj=raw) if _is_gzip(path) else raw)


# --------------------------------------------------------------------------------------------------------------
# Topics


_TOPIC_FIELDS = ("title", "description", "narrative", "compared_objects", "cause", "effect", "position")


def import_topics(*, campaign: Campaign, path: str | Path, name: str | None = None, progress: Progress | None = None) -> ImportSummary:
    """Create or update the campaign's topics from a Touché topics file, matched by number.

    A re-import never deletes: a topic missing from the new file may already have pools and judgments, and
    deleting it would lose them. Such topics are kept and listed in a warning, so the organiser can decide.
    """
    progress = progress or _NoProgress()
    source = _input_files([path], None if name is None else [name])[0]
    with open(source.path, "rb") as stream:
        data = stream.read(TOPICS_MAX_BYTES + 1)  # parse_topics refuses more, so never read a huge file whole
    progress.advance(0, len(data))
    records = parse_topics(data, source=source.name, max_bytes=TOPICS_MAX_BYTES)
    for record in records:
        if len(record.number) > _TOPIC_NUMBER_LENGTH:
            raise FormatError(source.name, record.line, f"topic number {record.number!r} is longer than {_TOPIC_NUMBER_LENGTH} characters")
    progress.advance(len(data), len(data))

    with transaction.atomic():
        lock_campaign(campaign)
        existing = {topic.number: topic for topic in Topic.objects.select_for_update(no_key=True).filter(campaign=campaign)}
        created, changed = [], []
        for position, record in enumerate(records):
            values = {
                "title": record.title, "description": record.description, "narrative": record.narrative,
                "compared_objects": list(record.objects), "cause": record.cause, "effect": record.effect,
                "position": position,
            }
            topic = existing.get(record.number)
            if topic is None:
                created.append(Topic(campaign=campaign, number=record.number, **values))
            elif any(getattr(topic, name) != value for name, value in values.items()):
                for name, value in values.items():
                    setattr(topic, name, value)
                changed.append(topic)
        Topic.objects.bulk_create(created)
        Topic.objects.bulk_update(changed, _TOPIC_FIELDS)
        judged = dict(
            Topic.objects.filter(pk__in=[t.pk for t in changed], judgments__isnull=False)
            .annotate(n=Count("judgments")).values_list("number", "n")
        )

    in_file = {record.number for record in records}
    missing = sorted((number for number in existing if number not in in_file), key=topic_sort_key)
    warnings = [
        f"{source.name}: topic {number} changed and already has {count} judgments; check that they still hold"
        for number, count in sorted(judged.items(), key=lambda item: topic_sort_key(item[0]))
    ]
    text = (
        f"{source.name}: {len(records)} topics ({len(created)} new, {len(changed)} updated, "
        f"{len(records) - len(created) - len(changed)} unchanged)"
    )
    if missing:
        text += f"; {len(missing)} topics not in the file were kept"
        warnings.append(f"{source.name}: {len(missing)} of the campaign's topics are not in this file and were kept: {', '.join(missing)}")
    return ImportSummary(
        text, warnings, {"topics": len(records), "created": len(created), "updated": len(changed), "kept": missing}
    )


# --------------------------------------------------------------------------------------------------------------
# Documents


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
    progress = progress or _NoProgress()
    files = _input_files(paths, names)
    wanted: set[str] | None = None
    if only_pooled:
        wanted = set(_pooled(campaign).values_list("doc_id", flat=True))
        if not wanted:
            raise ImportProblem(f"no pool of collection {campaign.collection.slug!r} needs documents yet: build a pool first, or import without only-pooled")
    # Progress counts lines: the reader reports each record's line, and a first pass counting newlines (plain C
    # loops over the bytes) gives the total.
    line_totals = [_count_lines(f.path) for f in files]
    total = sum(line_totals)
    progress.advance(0, total)

    read = skipped = long_urls = 0
    with tempfile.TemporaryFile() as spool, collector_paused():
        write = spool.write
        done = 0
        for file, lines in zip(files, line_totals):
            for record in _named(read_documents(file.path, fmt=fmt), file):
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
                    f"{_copy_escape(record.doc_id)}\t{_copy_escape(record.title)}\t{_copy_escape(record.body)}\t"
                    f"{'t' if record.is_html else 'f'}\t{_copy_escape(url)}\t{_copy_escape(_metadata_json(record.metadata))}\t"
                    f"{text_hash(record.body)}\n".encode()
                )
            done += lines
            progress.advance(done, total)
        kept = read - skipped
        with transaction.atomic():
            lock_campaign(campaign)
            created, updated = _upsert_documents(spool, collection_id=campaign.collection_id)

    unchanged = kept - created - updated  # includes repeated ids within the import
    summary = f"{_files_label(files)}: {read:,} documents read, {created:,} new, {updated:,} updated, {unchanged:,} unchanged"
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


def _named(records: Iterator, file: InputFile) -> Iterator:
    """The reader's records, with its errors naming the file as the organiser knows it (not the upload's path)."""
    try:
        yield from records
    except FormatError as exc:
        raise FormatError(file.name, exc.line, exc.reason) from None


def text_hash(body: str) -> str:
    """sha1 of the normalised text: the same normalisation duplicate grouping uses, so equal hashes are exact duplicates."""
    return hashlib.sha1(normalised_utf8(body)).hexdigest()


def _copy_escape(text: str) -> str:
    """`text` as a field of COPY's text format. NUL characters are dropped: PostgreSQL text cannot hold them,
    and web pages occasionally contain them."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


_COPY_ESCAPES = re.compile(r"\\(.)")
_COPY_UNESCAPED = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def _copy_unescape(field: str) -> str:
    """A COPY text field back as text (the SQLite path reads the spool itself)."""
    return _COPY_ESCAPES.sub(lambda m: _COPY_UNESCAPED[m.group(1)], field) if "\\" in field else field


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


def _count_lines(path: Path) -> int:
    count, last = 0, b"\n"
    with _opened(path) as (_, stream):
        try:
            for block in iter(lambda: stream.read(1 << 20), b""):
                count, last = count + block.count(b"\n"), block[-1:]
        except (EOFError, gzip.BadGzipFile, zlib.error):
            pass  # the reader names the problem with the file's name
    return count + (last != b"\n")


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
    rows = (map(_copy_unescape, line.decode()[:-1].split("\t")) for line in spool)
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


# --------------------------------------------------------------------------------------------------------------
# Runs


@dataclass
class _SpooledRun:
    """One run tag read from a file: its rows sit in the spool between `start` and `end` (COPY text)."""

    tag: str
    file: InputFile
    team: str
    start: int = 0
    end: int = 0
    lines: int = 0
    topics: int = 0
    has_stance: bool = False
    warnings: list[str] = field(default_factory=list)


def import_runs(
    *,
    campaign: Campaign,
    paths: Sequence[str | Path],
    names: Sequence[str] | None = None,
    team: str = "",
    uploaded_by: User | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Store TREC run files; a run is its tag, and a tag imported again replaces that run's lines.

    All files are checked before anything is stored, and all are stored in one transaction. A replaced run
    keeps its Run row, so pool sources still point at it: their positions are updated from the new lines and
    sources whose document left the run are cleared. Pool entries are never removed (they may be judged).
    `team` applies to every file; without it a file named ``TEAM-TAG.txt`` gives TEAM, and a replaced run
    keeps its team.
    """
    progress = progress or _NoProgress()
    files = _input_files(paths, names)
    if len(team) > _TEAM_LENGTH:
        raise ImportProblem(f"the team name is longer than {_TEAM_LENGTH} characters")
    topic_ids = dict(Topic.objects.filter(campaign=campaign).values_list("number", "id"))
    _require_topics(campaign, bool(topic_ids))
    stances = campaign.label_scheme.values("stance")
    meter = _FilesMeter(progress, files)

    with tempfile.TemporaryFile() as spool, collector_paused():
        runs: dict[str, _SpooledRun] = {}
        for file in files:
            for run in _spool_run_file(file, spool=spool, topic_ids=topic_ids, stances=stances, meter=meter):
                if run.tag in runs:
                    raise FormatError(file.name, None, f"run {run.tag} is also in {runs[run.tag].file.name}; a tag names one run")
                run.team = team or run.team
                runs[run.tag] = run
        with transaction.atomic():
            stored, replaced = _store_runs(campaign, list(runs.values()), spool=spool, topic_ids=topic_ids, uploaded_by=uploaded_by)
            sources = _repoint_pool_sources(replaced)

    lines = sum(run.lines for run in runs.values())
    warnings = [warning for run in runs.values() for warning in run.warnings]
    if sources.cleared or sources.kept:
        warnings.append(
            f"the pool was built from the replaced runs: pool sources now pointing at the new lines: {sources.kept},"
            f" cleared (their documents left the runs): {sources.cleared}; pool entries and judgments are kept."
            " Build the pool again to add documents the new versions rank high."
        )
    text = f"{_files_label(files)}: {len(runs)} run{'s' if len(runs) != 1 else ''} with {lines:,} lines stored ({len(runs) - len(replaced)} new, {len(replaced)} replaced)"
    if warnings:
        text += f"; {len(warnings)} warning{'s' if len(warnings) != 1 else ''}"
    return ImportSummary(
        text,
        warnings,
        {
            "runs": [{"tag": r.tag, "team": stored[r.tag].team, "lines": r.lines, "topics": r.topics, "file": r.file.name} for r in runs.values()],
            "lines": lines,
            "replaced": sorted(run.tag for run in replaced),
        },
    )


def _require_topics(campaign: Campaign, has_topics: bool) -> None:
    if not has_topics:
        raise ImportProblem(f"campaign {campaign.slug} has no topics yet: import its topics before its runs")


def _spool_run_file(
    file: InputFile, *, spool: BinaryIO, topic_ids: Mapping[str, int], stances: Sequence[str], meter: _FilesMeter
) -> list[_SpooledRun]:
    """Check one run file and append its rankings to the spool, both orders computed per topic.

    A file's rows are held until it has been read (a topic's order needs all of its lines, and a topic may come
    back later in the file), so memory follows the largest file, not the whole import.
    """
    reader = read_run(_run_lines(file, meter), source=file.name, known_topics=topic_ids.keys(), stances=stances)
    by_tag: dict[str, dict[str, list[RunBlock]]] = {}
    for block in reader.blocks():
        by_tag.setdefault(block.tag, {}).setdefault(block.topic, []).append(block)
    meter.file_done(file.path.stat().st_size)

    warnings = [str(w) for w in reader.warnings]
    runs = []
    for tag, topics in by_tag.items():
        _check_tag(file, tag)
        run = _SpooledRun(tag=tag, file=file, team=_team_from_name(file.name, tag), start=spool.tell(), topics=len(topics), warnings=warnings)
        for number, blocks in topics.items():
            ranking = _ranking(file, blocks, topic_id=topic_ids[number])
            data = marshal.dumps(tuple(ranking))
            spool.write(len(data).to_bytes(4, "little") + data)
            run.lines += ranking.length
            run.has_stance = run.has_stance or ranking.stances is not None
        run.end = spool.tell()
        runs.append(run)
    return runs


def _run_lines(file: InputFile, meter: _FilesMeter) -> Iterator[str]:
    """The file's text lines, read a megabyte at a time, reporting the bytes read after each batch. The lines of a
    batch are handed on by `chain` in C: a generator resumed once per line costs a tenth of a microsecond each."""
    return chain.from_iterable(_run_line_batches(file, meter))


def _run_line_batches(file: InputFile, meter: _FilesMeter) -> Iterator[list[str]]:
    try:
        with _opened(file.path) as (raw, stream):
            text = io.TextIOWrapper(stream, encoding="utf-8")
            while lines := text.readlines(_READ_HINT):
                yield lines
                meter.at(raw.tell())
    except UnicodeDecodeError:
        raise FormatError(file.name, _first_line_where(file, lambda raw: not _is_utf8(raw)), "not UTF-8 text") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise FormatError(file.name, None, f"the gzip data is truncated or corrupt ({exc})") from None


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _first_line_where(file: InputFile, test: Callable[[bytes], bool]) -> int | None:
    """Read the file again for the line number of a problem only found after its lines were parsed (rare)."""
    with _opened(file.path) as (_, stream):
        for number, raw in enumerate(stream, 1):
            if test(raw):
                return number
    return None


def _check_tag(file: InputFile, tag: str) -> None:
    def has_tag(raw: bytes) -> bool:
        return tag.encode() in raw

    if len(tag) > _TAG_LENGTH:
        raise FormatError(file.name, _first_line_where(file, has_tag), f"run tag is longer than {_TAG_LENGTH} characters")
    if "\x00" in tag:
        raise FormatError(file.name, _first_line_where(file, has_tag), "run tag contains a NUL character")


def _team_from_name(name: str, tag: str) -> str:
    """TEAM from a file named TEAM-TAG(.ext)*, the way Touché participants' files are often named."""
    stem = Path(name).name
    while Path(stem).suffix in (".txt", ".gz", ".run", ".tsv", ".trec"):
        stem = Path(stem).stem
    team = stem[: -len(tag) - 1] if stem.endswith("-" + tag) else ""
    return team[:_TEAM_LENGTH]


class _Ranking(NamedTuple):
    """One run's lines for one topic as they are stored (see models.Ranking), waiting in the spool."""

    topic_id: int
    length: int
    docs: list[str]
    ranks: list[int]
    scores: list[float]
    stances: list[str | None] | None
    by_rank: list[int] | None


def _ranking(file: InputFile, blocks: list[RunBlock], *, topic_id: int) -> _Ranking:
    """One topic's lines (one block, or several when the topic comes back later in the file) as lists in score
    order, with the rank order as 1-based indices into them.

    Both orders are metrics.evaluation.order_run's (computed by its column form, order_positions), the one
    evaluation and pooling read runs in (ties broken by document id descending, as trec_eval does), so a stored
    order never disagrees with them. Most runs list lines
    in strictly increasing rank, and many in strictly decreasing score: then there is no tie to break and the
    file order is the answer, without sorting.
    """
    docs, ranks, scores, stances = (list(chain.from_iterable(map(column, blocks))) for column in _BLOCK_COLUMNS)
    if min(ranks) < -_INT4 or max(ranks) >= _INT4:
        bad = next(r for r in ranks if not -_INT4 <= r < _INT4)
        raise FormatError(file.name, _line_of(file, blocks, docs[ranks.index(bad)]), f"rank {bad} is out of range")
    longest = max(docs, key=len)
    if len(longest) > _DOC_ID_LENGTH:
        raise FormatError(file.name, _line_of(file, blocks, longest), f"document id is longer than {_DOC_ID_LENGTH} characters")
    if "\x00" in "".join(docs):
        raise FormatError(file.name, _line_of(file, blocks, next(doc for doc in docs if "\x00" in doc)), "document id contains a NUL character")
    by_score = _file_order(docs, ranks, scores, by="score")
    by_rank = _file_order(docs, ranks, scores, by="rank")
    if by_rank == by_score:
        by_rank = None
    else:
        index_of = dict(zip(by_score, range(1, len(docs) + 1)))
        by_rank = list(map(index_of.__getitem__, by_rank))
    if not isinstance(by_score, range):
        docs, ranks, scores, stances = ([*map(column.__getitem__, by_score)] for column in (docs, ranks, scores, stances))
    return _Ranking(topic_id, len(docs), docs, ranks, scores, stances if any(stances) else None, by_rank)


_BLOCK_COLUMNS = tuple(map(attrgetter, ("docs", "ranks", "scores", "stances")))


def _file_order(docs: list[str], ranks: list[int], scores: list[float], *, by: str) -> Sequence[int]:
    """The 0-based file positions of one topic's lines, read by rank column or by score."""
    if by == "rank" and all(map(gt, islice(ranks, 1, None), ranks)):
        return range(len(ranks))
    if by == "score" and all(map(gt, scores, islice(scores, 1, None))):
        return range(len(scores))
    return order_positions(docs, ranks, scores, by=by)


def _line_of(file: InputFile, blocks: list[RunBlock], doc: str) -> int | None:
    topic = blocks[0].topic

    def is_line(raw: bytes) -> bool:
        fields = raw.decode("utf-8", "replace").split()
        return len(fields) >= 3 and fields[0] == topic and fields[2] == doc

    return _first_line_where(file, is_line)


def _store_runs(
    campaign: Campaign, runs: list[_SpooledRun], *, spool: BinaryIO, topic_ids: Mapping[str, int], uploaded_by: User | None
) -> tuple[dict[str, Run], list[Run]]:
    """Create or replace the Run rows and store their lines; call inside the storing transaction."""
    lock_campaign(campaign)
    if dict(Topic.objects.filter(campaign=campaign, number__in=topic_ids).values_list("number", "id")) != topic_ids:
        raise ImportProblem("the campaign's topics changed while the runs were read; import the runs again")
    existing = {run.tag: run for run in Run.objects.select_for_update(no_key=True).filter(campaign=campaign, tag__in=[r.tag for r in runs])}
    replaced = list(existing.values())
    Ranking.objects.filter(run__in=replaced).delete()
    stored: dict[str, Run] = {}
    now = timezone.now()
    for spooled in runs:
        run = existing.get(spooled.tag) or Run(campaign=campaign, tag=spooled.tag)
        run.team = spooled.team or run.team
        run.file_name = Path(spooled.file.name).name[:500]
        run.has_stance = spooled.has_stance
        run.line_count = spooled.lines
        run.warnings = spooled.warnings
        run.uploaded_by = uploaded_by
        run.uploaded_at = now
        run.save()
        stored[spooled.tag] = run
    _store_rankings(spool, [(stored[r.tag].pk, r.start, r.end) for r in runs])
    return stored, replaced


def _store_rankings(spool: BinaryIO, segments: list[tuple[int, int, int]]) -> None:
    """Store the spooled rankings of each (run id, start, end) segment: COPY on PostgreSQL, batches on SQLite."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.copy_expert(f"COPY {Ranking._meta.db_table} ({_RANKING_COLUMNS}) FROM STDIN", _RankingCopy(spool, segments), 1 << 20)
        return
    for batch in _batched(_unspooled(spool, segments), SQLITE_BATCH // 100):
        Ranking.objects.bulk_create([Ranking(run_id=run_id, **ranking._asdict()) for run_id, ranking in batch])


_RANKING_COLUMNS = "run_id, topic_id, length, docs, ranks, scores, stances, by_rank"


def _unspooled(spool: BinaryIO, segments: list[tuple[int, int, int]]) -> Iterator[tuple[int, _Ranking]]:
    """The rankings back from the spool, where marshal (the fastest serialiser for lists of strings and numbers,
    and only ever read back by the same process) keeps them, each after its length: marshal.load would read a
    file in pieces of a few bytes."""
    for run_id, start, end in segments:
        spool.seek(start)
        while spool.tell() < end:
            size = int.from_bytes(spool.read(4), "little")
            yield run_id, _Ranking(*marshal.loads(spool.read(size)))


def _batched(items: Iterator, size: int) -> Iterator[list]:
    while batch := list(islice(items, size)):
        yield batch


class _RankingCopy:
    """The spooled rankings as a file of COPY text lines, one per ranking, made while PostgreSQL reads them: the
    formatting here and PostgreSQL's parsing of the arrays then run at the same time, on two cores."""

    def __init__(self, spool: BinaryIO, segments: list[tuple[int, int, int]]) -> None:
        self.rankings = _unspooled(spool, segments)

    def read(self, size: int = -1) -> bytes:
        lines = []
        length = 0
        for run_id, r in self.rankings:
            stances = _NULL if r.stances is None else _array(r.stances)
            by_rank = _NULL if r.by_rank is None else _numbers(r.by_rank)
            lines.append(
                f"{run_id}\t{r.topic_id}\t{r.length}\t{_array(r.docs)}\t{_numbers(r.ranks)}\t{_numbers(r.scores)}"
                f"\t{stances}\t{by_rank}\n"
            )
            length += len(lines[-1])
            if 0 < size <= length:
                break
        return "".join(lines).encode()


_NULL = "\\N"
# Characters that make an array element need quotes; ids come from split(), so there is no white space.
_ARRAY_SPECIAL = re.compile(r'[{}"\\]')


def _numbers(values: list[int] | list[float]) -> str:
    """A PostgreSQL array literal of numbers: the list's repr (shortest round-trip floats) between braces, the
    fastest formatting Python has; PostgreSQL ignores the spaces after the commas."""
    return "{" + repr(values)[1:-1] + "}"


def _array(values: list[str | None]) -> str:
    """A PostgreSQL array literal of text, as a COPY text field. Elements are quoted only when one of them needs it
    (rare in run files); tabs and newlines cannot occur, since split() made the fields."""
    if None not in values:
        text = ",".join(values)
        # A comma inside an id, or an element spelled null in any case, needs quotes too; "null" anywhere in the
        # text sends the list down the quoting path, which is always right, only slower.
        if text.count(",") == len(values) - 1 and not _ARRAY_SPECIAL.search(text) and "null" not in text.lower():
            return "{" + text + "}"
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' if value is not None else "NULL" for value in values)
    return ("{" + ",".join(quoted) + "}").replace("\\", "\\\\")  # COPY's own escape, over the array's


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


@dataclass(frozen=True)
class _SourceChanges:
    kept: int = 0
    cleared: int = 0


def _repoint_pool_sources(runs: list[Run]) -> _SourceChanges:
    """Point the pool sources of replaced runs at the new lines, and clear those whose document left the run.

    A source keeps the orders it was pooled by: each position it had is replaced by the document's new one.
    """
    sources = list(PoolSource.objects.filter(run__in=runs).select_related("entry__document"))
    if not sources:
        return _SourceChanges()
    positions = rankings.positions([run.pk for run in runs])
    kept, cleared = [], []
    for source in sources:
        found = positions.get((source.run_id, source.entry.topic_id, source.entry.document.doc_id))
        if found is None:
            cleared.append(source.pk)
            continue
        by_rank, by_score = found
        source.rank_position = by_rank if source.rank_position is not None else None
        source.score_position = by_score if source.score_position is not None else None
        kept.append(source)
    PoolSource.objects.filter(pk__in=cleared).delete()
    PoolSource.objects.bulk_update(kept, ["rank_position", "score_position"], batch_size=1000)
    return _SourceChanges(kept=len(kept), cleared=len(cleared))


# --------------------------------------------------------------------------------------------------------------
# Uploads and jobs


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
    if options.get("format", "auto") not in DOCUMENT_FORMATS:
        raise ImportProblem(f"unknown document format {options['format']!r}")
    if len(options.get("team", "")) > _TEAM_LENGTH:
        raise ImportProblem(f"the team name is longer than {_TEAM_LENGTH} characters")
    if kind == "import_runs":
        _require_topics(campaign, campaign.topics.exists())  # refuse now rather than in the worker
    folder = None
    try:
        with transaction.atomic():
            job = jobs.create_job(kind=kind, campaign=campaign, params={}, created_by=created_by)
            folder = _upload_folder(job)
            folder.mkdir(parents=True)
            files = [
                {"path": str(_keep(upload, folder / f"{i}-{get_valid_filename(Path(upload.name).name) or 'upload'}")
                             .relative_to(settings.MEDIA_ROOT)), "name": Path(upload.name).name}
                for i, upload in enumerate(uploads, 1)
            ]
            job.params = {**options, "files": files, "unit": PROGRESS_UNITS[kind]}
            job.save(update_fields=["params"])
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return job


def _upload_folder(job: Job) -> Path:
    return Path(settings.MEDIA_ROOT) / "uploads" / str(job.pk)


def _keep(upload: UploadedFile, destination: Path) -> Path:
    """Move (large uploads Django spooled to disk) or stream (small ones) the upload to `destination`."""
    if hasattr(upload, "temporary_file_path"):
        file_move_safe(upload.temporary_file_path(), str(destination))
    else:
        with open(destination, "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    return destination


@contextmanager
def _job_inputs(job: Job) -> Iterator[tuple[list[Path], list[str]]]:
    """The job's uploaded files; they are deleted when the job ends, whatever the outcome (the data is stored)."""
    try:
        files = job.params["files"]
        yield [Path(settings.MEDIA_ROOT) / f["path"] for f in files], [f["name"] for f in files]
    finally:
        shutil.rmtree(_upload_folder(job), ignore_errors=True)


@jobs.handler("import_topics")
def _import_topics_job(job: Job, progress: Progress) -> dict:
    with _job_inputs(job) as (paths, names):
        return import_topics(campaign=job.campaign, path=paths[0], name=names[0], progress=progress).as_result()


@jobs.handler("import_documents")
def _import_documents_job(job: Job, progress: Progress) -> dict:
    params = job.params
    with _job_inputs(job) as (paths, names):
        return import_documents(
            campaign=job.campaign, paths=paths, names=names, fmt=params.get("format", "auto"),
            only_pooled=bool(params.get("only_pooled")), progress=progress,
        ).as_result()


@jobs.handler("import_runs")
def _import_runs_job(job: Job, progress: Progress) -> dict:
    with _job_inputs(job) as (paths, names):
        return import_runs(
            campaign=job.campaign, paths=paths, names=names, team=job.params.get("team", ""),
            uploaded_by=job.created_by, progress=progress,
        ).as_result()
