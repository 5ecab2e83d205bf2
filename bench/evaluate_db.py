"""How long evaluating every run from the database takes at Touché's largest scale, and what qrels import and
export cost: 84 runs × 50 topics × 1,000 lines, judged to pool depth 5.

Creates (and drops first) the database `touchstone_bench_eval`, migrates it, writes 4.2 M run lines with COPY
(the generator of bench/pooling.py), imports depth-5 relevance and quality judgments with import_qrels, then
times `evaluate_runs` (nDCG@5, both kinds, both orders), a qrels export, and, unless --no-million, the import
and streamed export of a million judgments (timed, then once more with tracemalloc on to show it streams).

    cd /work/main && .venv/bin/python bench/evaluate_db.py [--runs 84] [--topics 50] [--lines 1000] [--no-million]

The goal is under 5 s for nDCG@5 on both kinds; above 2 s evaluation would have to become a Job.
"""

import argparse
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import bench_campaign, use_database  # noqa: E402
from bench.plain_reader import peak_mib, reset_peak  # noqa: E402
from bench.pooling import generate_runs, timed  # noqa: E402

BENCH_DB = "touchstone_bench_eval"
use_database(BENCH_DB)
REPEATS = 3



def write_pool_qrels(campaign, folder: Path, *, depth: int) -> tuple[Path, Path, int]:
    """Relevance and quality qrels for every run's top ``depth`` by score and by rank (a depth pool)."""
    from assessments.models import Ranking

    rng = random.Random(5)
    pairs = set()
    for number, docs, by_rank in Ranking.objects.filter(run__campaign=campaign).values_list("topic__number", "docs", "by_rank"):
        top = docs[:depth] + ([docs[i - 1] for i in by_rank[:depth]] if by_rank else [])
        pairs.update((number, doc) for doc in top)
    pairs = sorted(pairs)
    relevance, quality = folder / "pool-relevance.qrels", folder / "pool-quality.qrels"
    with open(relevance, "w") as rel, open(quality, "w") as qual:
        for topic, doc in pairs:
            rel.write(f"{topic} 0 {doc} {rng.choices((0, 1, 2), weights=(5, 3, 2))[0]}\n")
            qual.write(f"{topic} 0 {doc} {rng.choice((0, 1, 2))}\n")
    return relevance, quality, len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=84)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=20_000, help="documents per topic the runs draw from")
    parser.add_argument("--no-million", action="store_true", help="skip the million-judgment import and export")
    args = parser.parse_args()

    campaign, topics = bench_campaign(BENCH_DB, topics=args.topics)
    from django.db import connection

    from assessments.services import evaluation, exports
    from assessments.services.imports.qrels import import_qrels

    start = time.perf_counter()
    generate_runs(campaign, topics, runs=args.runs, lines=args.lines, candidates=args.candidates)
    lines = args.runs * args.topics * args.lines
    print(f"PostgreSQL {connection.pg_version}; {args.runs} runs × {args.topics} topics × {args.lines} lines = "
          f"{lines:,} run lines written with COPY in {time.perf_counter() - start:.1f} s (setup)")

    with tempfile.TemporaryDirectory() as folder:
        relevance, quality, judged = write_pool_qrels(campaign, Path(folder), depth=5)
        timed(f"import_qrels relevance, {judged:,} lines (depth-5 pool)", import_qrels,
              campaign=campaign, path=relevance, kind="relevance", assessor="pool")
        timed(f"import_qrels quality into the same judgments, {judged:,} lines", import_qrels,
              campaign=campaign, path=quality, kind="quality", assessor="pool")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    goal = {}
    for order in ("score", "rank"):
        for kinds in (("relevance",), ("quality",), ("relevance", "quality")):
            timings = []
            for _ in range(REPEATS):
                start = time.perf_counter()
                board = evaluation.evaluate_runs(campaign=campaign, kinds=kinds, order=order)
                timings.append(time.perf_counter() - start)
            label = f"evaluate_runs nDCG@5 {'+'.join(kinds)}, order {order}"
            print(f"{label:<58} {min(timings):7.2f} s  (runs: {', '.join(f'{t:.2f}' for t in timings)})")
            if len(kinds) == 2:
                goal[order] = min(timings)
    best = board.results[0]
    print(f"    {len(board.results)} runs; best {best.tag}: relevance {best.scores['relevance'].mean:.4f}, "
          f"judged@5 {best.scores['relevance'].judged_at_k:.3f}")

    export = exports.export_qrels(campaign=campaign, kind="relevance")
    _, _ = timed(f"export_qrels relevance ({judged:,} lines, snapshot kept)", lambda: sum(len(c) for c in export))

    if not args.no_million:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "million.qrels"
            per_topic = -(-1_000_000 // args.topics)
            with open(path, "w") as stream:
                for topic in topics:
                    stream.writelines(f"{topic.number} 0 doc-{topic.number}-{d:06d} {d % 3}\n" for d in range(per_topic))
            summary, _ = timed(f"import_qrels {per_topic * args.topics:,} lines (new stubs, new judgments)",
                               import_qrels, campaign=campaign, path=path, kind="relevance", assessor="million")
            print(f"    {summary.text}")
        export = exports.export_qrels(campaign=campaign, kind="relevance", rule="assessor:million")
        size, _ = timed("export_qrels 1,000,000 lines, streamed (one assessor)", lambda: sum(len(c) for c in export))
        majority = []
        for _ in range(REPEATS):
            export = exports.export_qrels(campaign=campaign, kind="relevance", rule="majority")
            reset_peak()
            _, seconds = timed("export_qrels majority over both assessors", lambda export=export: sum(len(c) for c in export))
            majority.append(seconds)
        rss = peak_mib()
        # tracemalloc slows the export about fourfold, so it gets a pass of its own, not timed.
        export = exports.export_qrels(campaign=campaign, kind="relevance", rule="majority")
        tracemalloc.start()
        sum(len(c) for c in export)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"    {size / 2**20:.0f} MiB written; peak memory of the process during a majority export {rss:.0f} MiB "
              f"(of it Python's own allocations {peak / 2**20:.1f} MiB, tracemalloc, in a pass not timed); "
              f"goal ≤ 10 s: {'met' if min(majority) <= 10 else 'NOT met'}")
    verdict = "met" if max(goal.values()) < 5 else "NOT met"
    print(f"goal < 5 s for nDCG@5 on both kinds: {verdict} (score order {goal['score']:.2f} s, rank order {goal['rank']:.2f} s); "
          f"{'inline is fine' if max(goal.values()) < 2 else 'over 2 s: run as a Job'}")


if __name__ == "__main__":
    main()
