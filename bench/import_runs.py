"""How fast run files go in: 84 runs × 50 topics × 1,000 lines (4.2 M lines, Touché's largest scale) through
`services.imports.runs.import_runs`, the path the upload job and `manage.py import_runs` take.

Creates (and drops first) the database `touchstone_bench`, migrates it, writes the run files into a temporary
folder, then imports them all in one call (all or nothing, as the command does) and prints lines per second,
the split between reading/checking and storing, and the peak memory of the process (ru_maxrss).

    cd /work/main && .venv/bin/python bench/import_runs.py [--runs 84] [--topics 50] [--lines 1000] [--twice] [--pool 5]

The files look like real submissions: TAB-separated, ranks from 0 in a third of the runs, tied scores every
few lines, and some runs whose scores disagree with their ranks. `--twice` imports them again, which replaces
every run (the re-upload path). The goal is ≥ 300,000 lines/s end to end and a peak under 300 MB.

`--pool K` also builds a depth-K pool after the first import and prints import and pool together against the
plain-Python baseline (bench/plain_reader.py: the same files read and the same union pool taken in memory, in this
run); issue 17 asks for at most 1.5× that baseline at depth 5.
"""

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import recreate_database, use_database  # noqa: E402
from bench.plain_reader import timed_baseline  # noqa: E402

BENCH_DB = "touchstone_bench"
use_database(BENCH_DB)



def write_runs(folder: Path, *, runs: int, topics: int, lines: int) -> list[Path]:
    paths = []
    for r in range(runs):
        tag = f"run{r:02d}"
        first_rank = 0 if r % 3 == 0 else 1
        path = folder / f"team{r // 4:02d}-{tag}.txt"
        with open(path, "w") as out:
            for t in range(1, topics + 1):
                block = []
                for i in range(lines):
                    # Every 7th score ties with the one before; runs r % 5 == 4 score against their ranks.
                    score = 50.0 - (i - i % 7 // 6) * 0.01 if r % 5 != 4 else ((i * 7919 + t) % 1000) / 10
                    doc = f"clueweb12-{(i * 104729 + t * 7 + r) % 10000:04d}wb-{t:02d}-{i:05d}___{(i + r) % 9}"
                    block.append(f"{t}\tQ0\t{doc}\t{i + first_rank}\t{score:.4f}\t{tag}\n")
                out.write("".join(block))
        paths.append(path)
    return paths


class StatementTimes:
    """Adds up the time of the slow SQL statements around the COPY (index rebuilds, deletes), by their first words."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            key = " ".join(sql.split()[:2]).upper()
            self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - started


class Timeline:
    """A progress receiver that remembers when reading ended (its last report reaches the total)."""

    def __init__(self) -> None:
        self.read_done = 0.0

    def advance(self, done: int, total: int | None = None) -> None:
        if total and done >= total:
            self.read_done = time.perf_counter()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=84)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--twice", action="store_true", help="import the same files again (replacing every run)")
    parser.add_argument("--pool", type=int, metavar="K", help="build a depth-K pool after the first import, against the baseline")
    args = parser.parse_args()

    recreate_database(BENCH_DB)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Sum

    from assessments.models import PoolEntry, Ranking, Topic
    from assessments.services.campaigns import create_campaign
    from assessments.services.imports.runs import import_runs
    from assessments.services.pooling import PoolSpec, build_pool

    call_command("migrate", verbosity=0)
    campaign = create_campaign(slug="bench", name="Bench", preset="touche-2021-task2")
    Topic.objects.bulk_create([Topic(campaign=campaign, number=str(t), title=f"Topic {t}", position=t) for t in range(1, args.topics + 1)])

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        paths = write_runs(Path(folder), runs=args.runs, topics=args.topics, lines=args.lines)
        size = sum(p.stat().st_size for p in paths)
        print(f"wrote {len(paths)} run files, {size / 2**20:.0f} MiB, in {time.perf_counter() - started:.1f} s; peak so far {peak_mb():.0f} MB")
        if args.pool:
            baseline, _, expected = timed_baseline(paths, depth=args.pool)
            print(f"baseline: plain Python reads them and takes the depth-{args.pool} union in {baseline:.2f} s ({expected:,} entries)")
        for attempt in range(2 if args.twice else 1):
            timeline, statements = Timeline(), StatementTimes()
            started, cpu = time.perf_counter(), time.process_time()
            with connection.execute_wrapper(statements):
                summary = import_runs(campaign=campaign, paths=paths, progress=timeline)
            elapsed = time.perf_counter() - started
            lines = summary.counts["lines"]
            assert Ranking.objects.filter(run__campaign=campaign).aggregate(n=Sum("length"))["n"] == lines
            reading, storing = timeline.read_done - started, started + elapsed - timeline.read_done
            print(summary.text)
            print(
                f"{'re-import' if attempt else 'import'}: {lines:,} lines in {elapsed:.1f} s = {lines / elapsed:,.0f} lines/s "
                f"(read and check {reading:.1f} s = {lines / reading:,.0f} lines/s; store {storing:.1f} s); "
                f"peak memory {peak_mb():.0f} MB; this process used {time.process_time() - cpu:.1f} s of CPU"
            )
            slow = {key: seconds for key, seconds in statements.seconds.items() if seconds >= 0.5}
            print(f"  slowest statements besides COPY (s): {', '.join(f'{k} {v:.1f}' for k, v in sorted(slow.items(), key=lambda kv: -kv[1]))}")
            if args.pool and not attempt:
                pool_started = time.perf_counter()
                build_pool(campaign=campaign, spec=PoolSpec(depth=args.pool))
                pooled = time.perf_counter() - pool_started
                assert PoolEntry.objects.filter(topic__campaign=campaign).count() == expected
                total = elapsed + pooled
                print(f"import + depth-{args.pool} pool: {total:.1f} s (pool {pooled:.2f} s) = {total / baseline:.2f}× the baseline; "
                      f"goal ≤ 1.5×: {'met' if total / baseline <= 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
