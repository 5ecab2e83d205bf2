"""How long the judge-impact report takes at Touché's largest scale: 84 runs × 50 topics (× 1,000 lines each),
a depth-5 pool judged by people with holes, and a machine judge's label of every pooled document.

Creates (and drops first) the database `touchstone_bench_h6_judge_impact`, migrates it, writes the runs with COPY
(bench/pooling.py's generator), imports the human labels of 85 % of the depth-5 pool with import_qrels (the rest
are the holes), inserts a machine label of every pooled document in one bulk insert (the human grade where there
is one, off by one grade a fifth of the time, and one team's documents graded 2: a run the judge favours), then
times services.judge_impact.judge_impact (nDCG@5: three leaderboards, τ, top-10 τ, τ_AP, agreement, holes).

    cd /work/main && .venv/bin/python bench/judge_impact.py [--runs 84] [--topics 50] [--lines 1000]

Goal: under 2 s.
"""

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import bench_campaign  # noqa: E402
from bench.pooling import generate_runs  # noqa: E402

BENCH_DB = "touchstone_bench_h6_judge_impact"
REPEATS = 3
DEPTH = 5
JUDGED_SHARE = 0.85
FAVOURED_TEAM = "team20-"


def pooled_pairs(campaign) -> list[tuple[str, str, bool]]:
    """(topic number, doc id, whether a run of the favoured team pooled it) of the depth-5 pool by score."""
    from assessments.models import Ranking

    found: dict[tuple[str, str], bool] = {}
    rows = Ranking.objects.filter(run__campaign=campaign).values_list("topic__number", "docs", "run__tag")
    for number, docs, tag in rows.iterator(chunk_size=500):
        for doc in docs[:DEPTH]:
            found[number, doc] = found.get((number, doc), False) or tag.startswith(FAVOURED_TEAM)
    return sorted((number, doc, favoured) for (number, doc), favoured in found.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=84)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=20_000, help="documents per topic the runs draw from")
    args = parser.parse_args()

    campaign, topics = bench_campaign(BENCH_DB, topics=args.topics)
    from django.db import connection

    from assessments.models import Document, MachineJudge, MachineLabel
    from assessments.services.imports.qrels import import_qrels
    from assessments.services.judge_impact import judge_impact

    start = time.perf_counter()
    generate_runs(campaign, topics, runs=args.runs, lines=args.lines, candidates=args.candidates)
    pairs = pooled_pairs(campaign)
    rng = random.Random(11)
    human = {(number, doc): rng.choices((0, 1, 2), weights=(5, 3, 2))[0] for number, doc, _ in pairs if rng.random() < JUDGED_SHARE}
    Document.objects.bulk_create([Document(collection=campaign.collection, doc_id=doc) for doc in sorted({d for _, d, _ in pairs})])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pool.qrels"
        path.write_text("".join(f"{number} 0 {doc} {grade}\n" for (number, doc), grade in sorted(human.items())))
        import_qrels(campaign=campaign, path=path, kind="relevance", assessor="pool")

    judge = MachineJudge.objects.create(campaign=campaign, name="bench", kind="endpoint", base_url="http://127.0.0.1:9/v1", model="bench-model")
    topic_of = {topic.number: topic for topic in topics}
    document_of = dict(Document.objects.filter(collection=campaign.collection).values_list("doc_id", "pk"))

    def machine_grade(number: str, doc: str, favoured: bool) -> int:
        if favoured:
            return 2
        grade = human.get((number, doc), rng.choice((0, 1, 2)))
        return min(2, max(0, grade + rng.choice((-1, 1)))) if rng.random() < 0.2 else grade

    MachineLabel.objects.bulk_create([
        MachineLabel(judge=judge, topic=topic_of[number], document_id=document_of[doc], dimension="relevance", status="ok",
                     labels={"relevance": machine_grade(number, doc, favoured)}, model=judge.model, prompt_version=1)
        for number, doc, favoured in pairs
    ], batch_size=5000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"PostgreSQL {connection.pg_version}; {args.runs} runs × {args.topics} topics × {args.lines} lines; depth-{DEPTH} pool "
          f"of {len(pairs):,} documents, {len(human):,} judged by people ({len(pairs) - len(human):,} holes), {len(pairs):,} "
          f"machine labels; setup {time.perf_counter() - start:.1f} s")

    timings = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        report = judge_impact(campaign=campaign)
        timings.append(time.perf_counter() - start)
    print(f"judge_impact nDCG@5 relevance, {len(report.runs)} runs: {min(timings):.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t in timings)}); goal < 2 s: {'met' if min(timings) < 2 else 'NOT met'}")
    # The generated runs are alike and the labels random, so the leaderboard is fragile: these figures show that the
    # report computed everything, not how good a judge is.
    print(f"    Kendall's τ machine {report.kendall_tau['machine']:.3f}, hybrid {report.kendall_tau['hybrid']:.3f}; "
          f"{report.holes_filled:,} holes filled; favoured: {', '.join(report.favoured) or 'none'} "
          f"(the judge grades team {FAVOURED_TEAM.rstrip('-')}'s documents 2)")


if __name__ == "__main__":
    main()
