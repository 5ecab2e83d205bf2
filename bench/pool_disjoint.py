"""How long a depth-100 pool of nearly disjoint runs takes: 84 runs × 50 topics × 1,000 lines whose documents
hardly overlap, so the pool holds 400–500 k entries (bench/pooling.py's runs share most of their top documents).

Creates (and drops first) the database `touchstone_bench_pooldisjoint`, writes the run files into a temporary
folder, times the plain-Python baseline (bench/plain_reader.py: read the same files, take the same union in
memory), imports the runs (setup), then builds the depth-100 pool on an empty pool `--repeat` times, printing
each build's time, its ratio to the baseline and the peak resident memory of the build (VmHWM, reset before it).

    flock /work/bench.lock .venv/bin/python bench/pool_disjoint.py [--runs 84] [--topics 50] [--lines 1000] [--repeat 3]

The goal (issue 17) is a build within 5× the baseline and under 300 MB.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import recreate_database, use_database  # noqa: E402
from bench.plain_reader import peak_mib, reset_peak, timed_baseline  # noqa: E402

BENCH_DB = "touchstone_bench_pooldisjoint"
DEPTH = 100
use_database(BENCH_DB)


def write_runs(folder: Path, *, runs: int, topics: int, lines: int) -> list[Path]:
    """Run files whose documents are the run's own but for one line in 13 (drawn from 200 shared per topic); a
    fifth of the runs score against their ranks, so their top 100 by score and by rank differ."""
    paths = []
    for r in range(runs):
        tag = f"run{r:02d}"
        path = folder / f"team{r // 4:02d}-{tag}.txt"
        with open(path, "w") as out:
            for t in range(1, topics + 1):
                block = []
                for i in range(lines):
                    doc = f"doc-{t}-shared-{(i + r) % 200:03d}" if (i * 7 + r) % 13 == 0 else f"doc-{t}-r{r:02d}-{i:04d}"
                    score = 100 - i * 0.05 if r % 5 != 4 else ((i * 7919 + t) % lines) / 10
                    block.append(f"{t}\tQ0\t{doc}\t{i + 1}\t{score:.4f}\t{tag}\n")
                out.write("".join(block))
        paths.append(path)
    return paths


def clear_pool(campaign) -> None:
    """Empty the pool and the stubs, and vacuum, so each build starts as on a fresh campaign (setup, not timed)."""
    from django.db import connection

    from assessments.models import Document, PoolEntry

    PoolEntry.objects.filter(topic__campaign=campaign).delete()
    Document.objects.filter(collection=campaign.collection).delete()
    with connection.cursor() as cursor:
        for table in ("assessments_document", "assessments_poolentry", "assessments_poolsource"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=84)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    recreate_database(BENCH_DB)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from assessments.models import PoolEntry, PoolSource, Topic
    from assessments.services import campaigns, pooling
    from assessments.services.imports.runs import import_runs

    campaign = campaigns.create_campaign(slug="bench", name="Bench", preset="touche-2021-task2")
    Topic.objects.bulk_create([Topic(campaign=campaign, number=str(t), title=f"Topic {t}", position=t) for t in range(1, args.topics + 1)])
    with tempfile.TemporaryDirectory(prefix="touchstone-pooldisjoint-") as folder:
        paths = write_runs(Path(folder), runs=args.runs, topics=args.topics, lines=args.lines)
        baseline, lines, expected = timed_baseline(paths, depth=DEPTH)
        print(f"PostgreSQL {connection.pg_version}; {len(paths)} run files, {lines:,} lines")
        print(f"baseline: plain Python reads them and takes the depth-{DEPTH} union in {baseline:.2f} s ({expected:,} entries)")
        started = time.perf_counter()
        import_runs(campaign=campaign, paths=paths)
        print(f"runs imported in {time.perf_counter() - started:.1f} s (setup, not timed below)")

    seconds = []
    for attempt in range(args.repeat):
        clear_pool(campaign)
        reset_peak()
        started = time.perf_counter()
        summary = pooling.build_pool(campaign=campaign, spec=pooling.PoolSpec(depth=DEPTH))
        seconds.append(time.perf_counter() - started)
        entries, sources = PoolEntry.objects.count(), PoolSource.objects.count()
        assert entries == expected, f"the pool has {entries:,} entries, the plain reader {expected:,}"
        print(
            f"build_pool depth {DEPTH} #{attempt + 1}: {seconds[-1]:.2f} s = {seconds[-1] / baseline:.1f}× the baseline, "
            f"{seconds[-1] / entries * 1e6:.0f} µs per entry; {entries:,} entries, {sources:,} sources, "
            f"{summary.stubs_created:,} stubs; peak {peak_mib():.0f} MiB",
            flush=True,
        )
    print(f"load average while running: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    ratio = min(seconds) / baseline
    print(f"goal ≤ 5× the baseline: {'met' if ratio <= 5 else 'NOT met'} (best {min(seconds):.2f} s = {ratio:.1f}×)")


if __name__ == "__main__":
    main()
