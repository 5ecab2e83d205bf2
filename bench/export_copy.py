"""Exporting a million judgments as qrels beside the floor: `psql \\copy` of the identical bytes, in one run.

    .venv/bin/python bench/export_copy.py            # builds touchstone_bench_export (dropped first): ~1 min
    .venv/bin/python bench/export_copy.py --reuse    # the database as the last run left it

The database holds one campaign of 50 topics and 1,000,000 judgments of one import source (`million`), imported
with import_qrels. Timed, each in a child process of its own with its peak memory (bench/peak_memory.py):
`manage.py export_qrels bench --kind relevance --rule assessor:million --output FILE` (one assessor's labels) and
the same with the majority rule (the same labels, aggregated per topic and document), and the floor: psql's `\\copy`
of a SELECT writing the same lines in the same order (`topic 0 doc label`, numeric topics by value, ids bytewise).
The files are compared byte for byte before any figure is printed. Exits 1 when an export takes more than twice
the floor. Prints the machine's load beside the figures.
"""

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import ROOT, SERVER, bench_campaign  # noqa: E402
from bench.peak_memory import run_manage  # noqa: E402

DATABASE = "touchstone_bench_export"
LINES, TOPICS = 1_000_000, 50
GOAL_RATIO = 2.0
FLOOR_SQL = """\\copy (SELECT t.number || ' 0 ' || d.doc_id || ' ' || (j.labels ->> 'relevance')
  FROM assessments_judgment j JOIN assessments_topic t ON t.id = j.topic_id JOIN assessments_document d ON d.id = j.document_id
  JOIN accounts_user u ON u.id = j.assessor_id
 WHERE u.username = 'million' AND j.labels ? 'relevance'
 ORDER BY (t.number ~ '^[0-9]+$') DESC, CASE WHEN t.number ~ '^[0-9]+$' THEN t.number::numeric END,
          t.number COLLATE "C", d.doc_id COLLATE "C") TO '{path}'"""


def build() -> None:
    campaign, topics = bench_campaign(DATABASE, topics=TOPICS, first=1)
    from assessments.services.imports.qrels import import_qrels

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "million.qrels"
        per_topic = LINES // TOPICS
        with open(path, "w") as stream:
            for topic in topics:
                stream.writelines(f"{topic.number} 0 clueweb12-{topic.number}-{d:07d} {d % 3}\n" for d in range(per_topic))
        start = time.perf_counter()
        import_qrels(campaign=campaign, path=path, kind="relevance", assessor="million")
        print(f"built: {LINES:,} judgments imported in {time.perf_counter() - start:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.reuse:
        build()
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{DATABASE}", "SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING"}
    with tempfile.TemporaryDirectory() as folder:
        floor_file = Path(folder) / "floor.qrels"
        floor_times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run(["psql", f"{SERVER}/{DATABASE}", "-q", "-c", FLOOR_SQL.format(path=floor_file)], check=True)
            floor_times.append(time.perf_counter() - start)
        floor = statistics.median(floor_times)
        expected = hashlib.sha256(floor_file.read_bytes()).hexdigest()
        print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; medians of {args.repeats}")
        label = "psql \\copy (the floor)"
        print(f"{label:<44} {floor:6.2f} s   {floor_file.stat().st_size / 2**20:.0f} MiB")
        missed = []
        for rule in ("assessor:million", "majority"):
            out = Path(folder) / f"{rule.replace(':', '-')}.qrels"
            times, peaks = [], []
            for _ in range(args.repeats):
                start = time.perf_counter()
                child, peak = run_manage(ROOT, ["export_qrels", "bench", "--kind", "relevance", "--rule", rule, "--output", str(out)], env)
                times.append(time.perf_counter() - start)
                peaks.append(peak / 1024)
                if child.returncode:
                    print(child.stderr.decode()[-2000:])
                    return 1
            if hashlib.sha256(out.read_bytes()).hexdigest() != expected:
                print(f"export_qrels --rule {rule} wrote other bytes than the floor")
                return 1
            seconds = statistics.median(times)
            print(f"{'export_qrels --rule ' + rule:<44} {seconds:6.2f} s   {seconds / floor:4.2f}× the floor   peak {max(peaks):4.0f} MiB")
            if seconds > GOAL_RATIO * floor:
                missed.append(rule)
    if missed:
        print(f"goal missed (≤ {GOAL_RATIO}× the floor, same bytes): {', '.join(missed)}")
        return 1
    print(f"goal met: every export ≤ {GOAL_RATIO}× the floor, same bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
