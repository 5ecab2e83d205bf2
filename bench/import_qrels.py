"""Importing a million qrels lines, beside the floor: a plain COPY of the same lines into a table without keys,
indexes or triggers, in the same run.

    .venv/bin/python bench/import_qrels.py [--lines 1000000] [--topics 50] [--repeats 2] [--no-update] [--database NAME]

Creates (and drops first) the database `touchstone_bench_qrels` (or --database), migrates it and makes a campaign of
50 topics; a first import of 1,000 lines and ANALYZE give it the statistics of a database in use. Then, per repeat,
a new file of --lines lines (new document ids, so new stubs, judgments and history rows): the floor (psycopg2's
copy_expert of the file into an unconstrained table) and `import_qrels` of the same file as a new assessor. Last,
unless --no-update, the same documents' quality as that assessor's: a new revision and history row for every
judgment. Prints the machine's load beside the figures, and the CPU seconds of the import's process and of its
PostgreSQL backend (a local server): on a shared machine they move less than the wall time does. The goal (issue 24) is at most 20 s for the million new
judgments.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import bench_campaign  # noqa: E402

GOAL_SECONDS = 20.0


def write_qrels(path: Path, topics, *, lines: int, prefix: str, labels: int = 3) -> int:
    per_topic = lines // len(topics)
    with open(path, "w") as stream:
        for topic in topics:
            stream.writelines(f"{topic.number} 0 {prefix}-{topic.number}-{d:07d} {d % labels}\n" for d in range(per_topic))
    return per_topic * len(topics)


def floor_copy(path: Path, table: str) -> float:
    """Seconds to COPY the file's lines into a new table without constraints (committed, as the import is)."""
    from django.db import connection, transaction

    start = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor, open(path, "rb") as stream:
        cursor.execute(f"CREATE TABLE {table} (topic text, iteration text, doc_id text, label integer)")
        cursor.copy_expert(f"COPY {table} FROM STDIN WITH (DELIMITER ' ')", stream, 1 << 20)
    return time.perf_counter() - start


def server_cpu() -> float:
    """CPU seconds of this connection's PostgreSQL backend so far (the server is local): with the machine's load
    beside it, it tells a slower import from a busier machine."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_import(campaign, path: Path, *, kind: str, assessor: str):
    """The import's summary, wall seconds, and CPU seconds of this process and of its database backend."""
    from assessments.services.imports.qrels import import_qrels

    start, client, server = time.perf_counter(), time.process_time(), server_cpu()
    summary = import_qrels(campaign=campaign, path=path, kind=kind, assessor=assessor)
    seconds = time.perf_counter() - start
    return summary, seconds, (time.process_time() - client, server_cpu() - server)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-update", action="store_true", help="skip the import of a second dimension into the same judgments")
    parser.add_argument("--database", default="touchstone_bench_qrels")
    args = parser.parse_args()

    campaign, topics = bench_campaign(args.database, topics=args.topics)
    from django.db import connection

    with tempfile.TemporaryDirectory() as folder:
        warm = Path(folder) / "warm.qrels"
        write_qrels(warm, topics, lines=1000, prefix="warm")
        timed_import(campaign, warm, kind="relevance", assessor="warm")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        print(f"PostgreSQL {connection.pg_version}; {os.cpu_count()} cores")
        print(f"{'':<58} {'seconds':>8} {'lines/s':>10}  load (1 min)")
        missed = False
        for repeat in range(args.repeats):
            path = Path(folder) / f"new-{repeat}.qrels"
            lines = write_qrels(path, topics, lines=args.lines, prefix=f"doc{repeat}")
            floor = floor_copy(path, f"bench_floor_{repeat}")
            print(f"{f'COPY {lines:,} lines into a table without constraints':<58} {floor:8.2f} {lines / floor:10,.0f}  {os.getloadavg()[0]:.2f}")
            summary, seconds, cpu = timed_import(campaign, path, kind="relevance", assessor=f"million{repeat}")
            missed |= seconds > GOAL_SECONDS
            label = f"import_qrels {lines:,} lines (new stubs, judgments, history)"
            print(f"{label:<58} {seconds:8.2f} {lines / seconds:10,.0f}  {os.getloadavg()[0]:.2f}   {seconds / floor:.1f}× the COPY")
            print(f"    {summary.text}")
            print(f"    CPU seconds: {cpu[0]:.2f} Python, {cpu[1]:.2f} PostgreSQL backend")
        if not args.no_update:
            path = Path(folder) / "quality.qrels"
            lines = write_qrels(path, topics, lines=args.lines, prefix=f"doc{args.repeats - 1}", labels=2)
            summary, seconds, cpu = timed_import(campaign, path, kind="quality", assessor=f"million{args.repeats - 1}")
            label = f"import_qrels {lines:,} lines of another dimension (updates)"
            print(f"{label:<58} {seconds:8.2f} {lines / seconds:10,.0f}  {os.getloadavg()[0]:.2f}")
            print(f"    {summary.text}")
            print(f"    CPU seconds: {cpu[0]:.2f} Python, {cpu[1]:.2f} PostgreSQL backend")
    print(f"goal ≤ {GOAL_SECONDS:.0f} s for {args.lines:,} new judgments: {'NOT met' if missed else 'met'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
