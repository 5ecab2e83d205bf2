"""How long a depth-100 pool of nearly disjoint runs takes, on two shapes of run, each against plain Python reading
the same files and taking the same union in memory (bench/plain_reader.py), in the same run:

* long runs: 84 runs × 50 topics × 1,000 lines whose documents hardly overlap, so the pool holds 400–500 k entries
  and the plain reader reads ten lines for each one it pools;
* short runs: 84 runs × 50 topics × 120 lines, about as many entries from an eighth of the lines, so the plain
  reader is fast and what a build costs per entry shows (issue 23: 14.6–14.9× before).

Creates (and drops first) the database named by `--database`, writes each shape's run files into a temporary
folder and imports them into a campaign of its own (setup). Then, `--repeat` times and shape after shape, it times
the plain reader (in a child process, so it leaves this one's memory as it was) and right after it the depth-100
build on an empty pool, printing both, their ratio, the build's cost per entry and its peak resident memory
(VmHWM, reset before it, once the memory the setup freed is given back): timed side by side, a machine shared with
other work slows both alike. Last, the short runs are built again beside the long runs' pool, as on a server where
other campaigns have pools (larger indexes to add to).

    flock /work/bench.lock .venv/bin/python bench/pool_disjoint.py [--database NAME] [--shapes 1000,120] [--repeat 3]

The goal (issues 17 and 23) is a build within 5× the plain reader on both shapes, and under 300 MB.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import recreate_database, use_database  # noqa: E402
from bench.plain_reader import baseline_apart, peak_mib, release_free_memory, reset_peak, resident_mib  # noqa: E402

BENCH_DB = "touchstone_bench_pooldisjoint"
DEPTH = 100
GOAL = 5.0


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
    """Empty the pool and the stubs, and vacuum, so each build starts as on a fresh campaign (setup, not timed).
    In SQL: the ORM's delete would gather the ids of half a million entries first (nothing else points at them
    here: no assignments, no judgments)."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """DELETE FROM assessments_poolsource s USING assessments_poolentry e, assessments_topic t
               WHERE s.entry_id = e.id AND e.topic_id = t.id AND t.campaign_id = %s""",
            [campaign.pk],
        )
        cursor.execute(
            "DELETE FROM assessments_poolentry e USING assessments_topic t WHERE e.topic_id = t.id AND t.campaign_id = %s",
            [campaign.pk],
        )
        cursor.execute("DELETE FROM assessments_document WHERE collection_id = %s", [campaign.collection_id])
    with connection.cursor() as cursor:
        for table in ("assessments_document", "assessments_poolentry", "assessments_poolsource"):
            cursor.execute(f"VACUUM ANALYZE {table}")


class Shape:
    """One shape of run: its campaign with the runs imported, its run files, and its timings."""

    def __init__(self, folder: Path, *, lines: int, runs: int, topics: int) -> None:
        from assessments.models import Topic
        from assessments.services import campaigns
        from assessments.services.imports.runs import import_runs

        self.name = f"{runs} runs × {topics} topics × {lines:,} lines"
        self.campaign = campaigns.create_campaign(slug=f"bench-{lines}", name=f"Bench {lines}", preset="touche-2021-task2")
        Topic.objects.bulk_create(
            [Topic(campaign=self.campaign, number=str(t), title=f"Topic {t}", position=t) for t in range(1, topics + 1)]
        )
        self.paths = write_runs(folder, runs=runs, topics=topics, lines=lines)
        started = time.perf_counter()
        import_runs(campaign=self.campaign, paths=self.paths)
        print(f"{self.name}: runs imported in {time.perf_counter() - started:.1f} s (setup)", flush=True)
        self.entries = 0
        self.timings: dict[str, list[tuple[float, float]]] = {}

    def build(self, label: str) -> None:
        """Time the plain reader, then the build on an empty pool of this campaign; print and keep both."""
        from django.db import connection

        from assessments.models import PoolEntry, PoolSource
        from assessments.services import pooling

        clear_pool(self.campaign)
        connection.close()  # not shared with the child process
        baseline, read, expected = baseline_apart(self.paths, depth=DEPTH)
        release_free_memory()
        reset_peak()
        before = resident_mib()
        started = time.perf_counter()
        summary = pooling.build_pool(campaign=self.campaign, spec=pooling.PoolSpec(depth=DEPTH))
        seconds = time.perf_counter() - started
        peak = peak_mib()
        entries = PoolEntry.objects.filter(topic__campaign=self.campaign).count()
        sources = PoolSource.objects.filter(entry__topic__campaign=self.campaign).count()
        assert entries == expected, f"the pool has {entries:,} entries, the plain reader {expected:,}"
        self.entries = entries
        self.timings.setdefault(label, []).append((seconds, baseline))
        print(
            f"  {self.name}, {label}: build_pool {seconds:.2f} s, plain reader {baseline:.2f} s ({read:,} lines) = "
            f"{seconds / baseline:.1f}×; {seconds / entries * 1e6:.1f} µs per entry; {entries:,} entries, "
            f"{sources:,} sources, {summary.stubs_created:,} stubs; peak {peak:.0f} MiB ({peak - before:+.0f} over the "
            f"{before:.0f} held before)",
            flush=True,
        )

    def summary(self, label: str) -> str:
        ratios = [seconds / baseline for seconds, baseline in self.timings[label]]
        seconds, baseline = min(self.timings[label], key=lambda timing: timing[0] / timing[1])
        return (
            f"{self.name} ({self.entries:,} entries), {label}: best {seconds:.2f} s against the plain reader's "
            f"{baseline:.2f} s = {min(ratios):.1f}× (median {statistics.median(ratios):.1f}× of {len(ratios)}; "
            f"goal ≤ {GOAL:.0f}×: {'met' if min(ratios) <= GOAL else 'NOT met'})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default="1000,120", help="lines per topic of each shape, comma-separated")
    parser.add_argument("--runs", type=int, default=84)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database", default=BENCH_DB, help="the database to (re)create; give another to run beside a colleague")
    args = parser.parse_args()

    use_database(args.database)
    recreate_database(args.database)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from assessments.services import pooling

    call_command("migrate", verbosity=0)
    print(f"PostgreSQL {connection.pg_version}; database {args.database}; depth {DEPTH}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="touchstone-pooldisjoint-") as folder:
        shapes = []
        for lines in map(int, args.shapes.split(",")):
            (Path(folder) / str(lines)).mkdir()
            shapes.append(Shape(Path(folder) / str(lines), lines=lines, runs=args.runs, topics=args.topics))
        alone = "on empty pool tables"
        for _ in range(args.repeat):
            for shape in shapes:
                shape.build(alone)
        beside = None
        if len(shapes) > 1:
            first, last = shapes[0], shapes[-1]
            pooling.build_pool(campaign=first.campaign, spec=pooling.PoolSpec(depth=DEPTH))
            beside = f"beside a pool of {first.entries:,} entries"
            for _ in range(args.repeat):
                last.build(beside)
            clear_pool(first.campaign)
        print(f"\nload average while running: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        for shape in shapes:
            print(shape.summary(alone))
        if beside:
            print(shapes[-1].summary(beside))


if __name__ == "__main__":
    main()
