"""Where an import's rankings wait for its storing transaction on PostgreSQL: a staging table, filled while the run
files are still being read.

Reading run files is Python's work and parsing their arrays is PostgreSQL's, on another core. Stored one after the
other, an import of 4.2 M lines reads for about as long as PostgreSQL then parses. Here a thread with its own
connection COPYs each ranking into `assessments_rankingstage` as soon as it is read, so both run at once; the
import's transaction then moves the rows into assessments_ranking with one INSERT … SELECT (the arrays stay
compressed on the way) once every file has been checked and the runs have ids. The import's own connection is never
busy with the COPY, so its progress reports and cancel checks go on as before.

The staged rows belong to no transaction of the import: they are committed by the COPY and deleted by the thread
once the import has ended, whatever its outcome. The table is UNLOGGED (nothing in it must survive a crash) and rows
a killed process left behind are deleted by the next import after a day. Rows are told apart by their run key: a
random base per import plus the import's own number for the run, so concurrent imports never meet.
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from django.db import connection

from assessments.models import Ranking
from assessments.services import bulk

TABLE = "assessments_rankingstage"
_COLUMNS = "topic_id, length, docs, ranks, scores, stances, by_rank, by_single"
_KEY_BITS = 20  # run numbers within one import
_QUEUED = 64  # rankings waiting for the COPY: a few megabytes
_WAIT = 0.5  # seconds between looks at whether the COPY thread still runs


class _Abort(Exception):
    """Ends the COPY without committing it (the import failed or was cancelled)."""


class RankingStage:
    """Use as a context manager around reading and storing: `add` while reading, `store` in the storing transaction."""

    def __init__(self) -> None:
        self._base = secrets.randbits(62 - _KEY_BITS) << _KEY_BITS
        self._queue: queue.Queue[bytes | None | type[_Abort]] = queue.Queue(maxsize=_QUEUED)
        self._copied = threading.Event()
        self._ended = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ranking-stage", daemon=True)

    def __enter__(self) -> RankingStage:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if not self._copied.is_set():
            self._put(_Abort)
        self._ended.set()
        self._thread.join()

    def add(self, key: int, ranking: Any) -> None:
        """Stage the ranking of run number `key` (< 2**20): a services.imports.runs ranking, or its COPY text from
        topic_id on (bytes), as formats.trec_run_columns makes it."""
        text = ranking if isinstance(ranking, bytes) else bulk.ranking_copy_fields(ranking)
        self._put(b"%d\t%s\n" % (self._base + key, text))

    def store(self, run_ids: Mapping[int, int]) -> None:
        """Move the staged rankings of the runs numbered `run_ids`' keys into Ranking, with those run ids; call
        inside the storing transaction. Rankings of other numbers (a file read again by the line reader) stay out."""
        self._put(None)
        self._copied.wait()
        if self._error is not None:
            raise self._error
        keys = list(run_ids)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {Ranking._meta.db_table} (run_id, {_COLUMNS})"
                f" SELECT m.run_id, {', '.join('s.' + c for c in _COLUMNS.split(', '))}"
                f" FROM {TABLE} s JOIN unnest(%s::bigint[], %s::bigint[]) AS m(run_key, run_id) USING (run_key)",
                [[self._base + key for key in keys], [run_ids[key] for key in keys]],
            )

    def _put(self, item: bytes | None | type[_Abort]) -> None:
        """Queue for the COPY thread, or raise what ended it (it no longer takes anything)."""
        while True:
            if self._copied.is_set():
                if item is _Abort:
                    return
                raise self._error or RuntimeError("the staging COPY has already ended")
            try:
                self._queue.put(item, timeout=_WAIT)
                return
            except queue.Full:
                continue

    def _run(self) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.copy_expert(f"COPY {TABLE} (run_key, {_COLUMNS}) FROM STDIN", _QueueFile(self._queue), 1 << 20)
        except BaseException as exc:  # handed to the importing thread, which raises it
            self._error = exc
        finally:
            self._copied.set()
        self._ended.wait()
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"DELETE FROM {TABLE} WHERE run_key BETWEEN %s AND %s OR staged_at < now() - interval '1 day'",
                    [self._base, self._base + (1 << _KEY_BITS) - 1],
                )
        finally:
            connection.close()


class _QueueFile:
    """The queued rankings as the file COPY reads: what has been queued, waiting only while nothing has."""

    def __init__(self, rankings: queue.Queue[bytes | None | type[_Abort]]) -> None:
        self._rankings = rankings
        self._ended = False

    def read(self, size: int = -1) -> bytes:
        parts: list[bytes] = []
        length = 0
        while not self._ended and length < max(size, 1):
            try:
                item = self._rankings.get(block=not parts)
            except queue.Empty:
                break
            if item is None:
                self._ended = True
            elif isinstance(item, bytes):
                parts.append(item)
                length += len(item)
            else:
                raise _Abort()
        return b"".join(parts)
