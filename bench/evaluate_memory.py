"""Peak memory of evaluating every run by a measure that reads whole lists (AP), at Touché's largest scale: 84 runs
× 50 topics × 1,000 lines, judged to pool depth 5, beside nDCG@5 (the first five lines) in the same run.

    .venv/bin/python bench/evaluate_memory.py            # builds touchstone_bench_evalmem (dropped first)
    .venv/bin/python bench/evaluate_memory.py --reuse    # the database as the last run left it

Each figure is the peak resident memory of `manage.py evaluate_runs bench --measure M --format json` in a child
process of its own (bench/peak_memory.py: the command's VmHWM, not its parent's), with its wall time. The floor is
`manage.py check`'s peak: what Django and the project take before any run is read. Exits 1 when AP's peak passes
the goal of 150 MB (memory flat in the number of runs and lines: runs are read one at a time).
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import ROOT, SERVER, bench_campaign  # noqa: E402
from bench.peak_memory import run_manage  # noqa: E402

DATABASE = "touchstone_bench_evalmem"
GOAL_MIB = 150


def build(args) -> None:
    campaign, topics = bench_campaign(DATABASE, topics=args.topics)
    from django.db import connection

    from assessments.services.imports.qrels import import_qrels
    from bench.evaluate_db import write_pool_qrels
    from bench.pooling import generate_runs

    generate_runs(campaign, topics, runs=args.runs, lines=args.lines, candidates=20_000)
    with tempfile.TemporaryDirectory() as folder:
        relevance, _, judged = write_pool_qrels(campaign, Path(folder), depth=5)
        import_qrels(campaign=campaign, path=relevance, kind="relevance", assessor="pool")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"built: {args.runs} runs × {args.topics} topics × {args.lines} lines, {judged:,} judgments")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=84)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()
    if not args.reuse:
        build(args)
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{DATABASE}", "SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING"}
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    _, floor = run_manage(ROOT, ["evaluate_runs", "--help"], env)
    print(f"{'evaluate_runs --help (the floor)':<34} peak {floor / 1024:6.0f} MiB")
    peaks = {}
    for measure in ("nDCG@5", "AP", "nDCG@5,P@10,AP"):
        start = time.perf_counter()
        child, peak = run_manage(ROOT, ["evaluate_runs", "bench", "--measure", measure, "--format", "json"], env)
        seconds = time.perf_counter() - start
        if child.returncode:
            print(child.stderr.decode()[-2000:])
            return 1
        peaks[measure] = peak / 1024
        print(f"{'evaluate_runs --measure ' + measure:<34} peak {peak / 1024:6.0f} MiB   {seconds:5.2f} s")
    if peaks["AP"] > GOAL_MIB:
        print(f"goal missed: AP's peak {peaks['AP']:.0f} MiB > {GOAL_MIB} MiB")
        return 1
    print(f"goal met: AP's peak ≤ {GOAL_MIB} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
