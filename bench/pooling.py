"""How long pooling takes at Touché's largest scale: 84 runs × 50 topics × 1,000 lines already in the database.

Creates (and drops first) the database `--database` (touchstone_bench_pool), migrates it, writes 4.2 M run lines with COPY,
then times, each on an empty pool: depth 5, depth 100, and a rebuild that finds nothing new; then the preview,
the statistics page's queries, and duplicate grouping over the depth-100 pool once every document has a text.

    cd /work/main && .venv/bin/python bench/pooling.py [--database NAME] [--runs 84] [--topics 50] [--lines 1000]

The runs are noisy copies of one latent ranking per topic (so their top documents overlap as real runs do);
a third of them start ranks at 0, some have tied scores, and some have ranks that disagree with their scores.
The goal is under 5 s for each build, pool rows included.
"""

import argparse
import io
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import recreate_database, use_database  # noqa: E402

BENCH_DB = "touchstone_bench_pool"



def generate_runs(campaign, topics, *, runs: int, lines: int, candidates: int, seed: int = 1) -> None:
    from django.db import connection

    from assessments.metrics.evaluation import single_precision_order
    from assessments.models import Run

    rng = np.random.default_rng(seed)
    run_rows = [Run(campaign=campaign, tag=f"team{r // 4:02d}-run{r % 4}", line_count=lines * len(topics)) for r in range(runs)]
    Run.objects.bulk_create(run_rows)
    run_ids = list(Run.objects.filter(campaign=campaign).order_by("tag").values_list("id", flat=True))
    with connection.cursor() as cursor:
        for topic in topics:
            latent = rng.standard_normal(candidates)
            buffer = io.StringIO()
            for r, run_id in enumerate(run_ids):
                noisy = latent + rng.normal(0, 0.3 + 0.7 * (r % 5) / 4, candidates)
                top = np.argpartition(-noisy, lines)[:lines]
                scores = noisy[top]
                if r % 7 == 0:
                    scores = np.round(scores, 1)  # many tied scores
                docs = np.array([f"doc-{topic.number}-{d:05d}" for d in top])
                by_score = np.lexsort((docs, scores))[::-1]  # score desc, ties by doc id desc
                rank = np.empty(lines, dtype=np.int64)
                rank[by_score] = np.arange(lines)
                if r % 3 == 1:
                    rank = rank + 1  # ranks from 1; the rest start at 0 like Elrond and Shanks
                if r % 11 == 3:
                    swap = rng.permutation(lines)[: lines // 10]
                    rank[swap] = rank[swap[::-1]]  # a rank column that disagrees with the scores
                score_pos = np.empty(lines, dtype=np.int64)
                score_pos[by_score] = np.arange(1, lines + 1)
                by_rank = np.lexsort((docs, -rank))[::-1]  # rank asc, ties by doc id desc
                in_rank_order = score_pos[by_rank]  # the lines in rank order, as 1-based indices into the score order
                indices = "\\N" if (in_rank_order == np.arange(1, lines + 1)).all() else "{" + ",".join(map(str, in_rank_order.tolist())) + "}"
                single = single_precision_order(docs[by_score].tolist(), scores[by_score].tolist())
                single = "\\N" if single is None else "{" + ",".join(str(i + 1) for i in single) + "}"
                buffer.write(
                    f"{run_id}\t{topic.pk}\t{lines}\t{{{','.join(docs[by_score].tolist())}}}\t{{{','.join(map(str, rank[by_score].tolist()))}}}"
                    f"\t{{{','.join(map(repr, scores[by_score].tolist()))}}}\t\\N\t{indices}\t{single}\n"
                )
            buffer.seek(0)
            cursor.copy_expert(
                "COPY assessments_ranking (run_id, topic_id, length, docs, ranks, scores, stances, by_rank, by_single) FROM STDIN", buffer
            )
        cursor.execute("ANALYZE assessments_ranking")


def clear_pool(campaign) -> None:
    """Empty the pool and the stubs, and vacuum, so each build starts as on a fresh campaign (setup, not timed)."""
    from assessments.models import Document, PoolEntry

    PoolEntry.objects.filter(topic__campaign=campaign).delete()
    Document.objects.filter(collection=campaign.collection).delete()
    analyse("VACUUM ANALYZE")


def analyse(command: str = "ANALYZE") -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("assessments_document", "assessments_poolentry", "assessments_poolsource"):
            cursor.execute(f"{command} {table}")


def source_rows_floor() -> float:
    """Seconds PostgreSQL alone needs to store the current PoolSource rows again (same indexes), commit included:
    the part of a build no application code can remove."""
    from django.db import connection, transaction

    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_sources")
        cursor.execute("CREATE TABLE bench_sources (LIKE assessments_poolsource INCLUDING ALL)")
    start = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_sources (entry_id, run_id, rank_position, score_position)"
            " SELECT entry_id, run_id, rank_position, score_position FROM assessments_poolsource"
        )
    elapsed = time.perf_counter() - start
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_sources")
    return elapsed


def timed(label: str, fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    print(f"{label:<58} {elapsed:7.2f} s")
    return result, elapsed


def fill_texts(campaign, *, seed: int = 2) -> tuple[int, int]:
    """Give every pooled document a ~150-word text; plant near-duplicates (one word in 60 changed) and copies."""
    from django.db import connection

    from assessments.models import Document

    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(20_000)])
    ids = list(Document.objects.filter(collection=campaign.collection).order_by("doc_id").values_list("id", flat=True))
    buffer = io.StringIO()
    previous = None
    planted = 0
    for doc_pk in ids:
        if previous is not None and rng.random() < 0.05:
            words = previous.copy()
            words[rng.integers(0, len(words), 2)] = "changed"
            planted += 1
        else:
            words = vocabulary[rng.integers(0, len(vocabulary), 150)]
        previous = words
        buffer.write(f"{doc_pk}\t{' '.join(words)}\n")
    buffer.seek(0)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE bench_text (id bigint, body text)")
        cursor.copy_expert("COPY bench_text FROM STDIN", buffer)
        cursor.execute(
            "UPDATE assessments_document d SET body = t.body, has_text = true FROM bench_text t WHERE d.id = t.id"
        )
        cursor.execute("DROP TABLE bench_text")
    return len(ids), planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=84)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=20_000, help="documents per topic the runs draw from")
    parser.add_argument("--reuse", action="store_true", help="keep the runs of an earlier run of this script")
    parser.add_argument("--database", default=BENCH_DB, help="the database to (re)create; give another to run beside a colleague")
    args = parser.parse_args()

    use_database(args.database)

    if not args.reuse:
        recreate_database(args.database)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from django.db.models import Sum

    from assessments.models import Campaign, PoolEntry, PoolSource, Ranking, Topic
    from assessments.selectors.pool_preview import preview_pool
    from assessments.selectors.pools import pool_statistics
    from assessments.services import campaigns, pooling
    from assessments.services.duplicates import group_duplicates

    campaign = Campaign.objects.filter(slug="bench").first() if args.reuse else None
    if campaign is None:
        campaign = campaigns.create_campaign(slug="bench", name="Bench", preset="touche-2022-task2")
        topics = Topic.objects.bulk_create(
            [Topic(campaign=campaign, number=str(51 + i), title=f"Topic {51 + i}", position=i) for i in range(args.topics)]
        )
        start = time.perf_counter()
        generate_runs(campaign, topics, runs=args.runs, lines=args.lines, candidates=args.candidates)
        print(f"run lines written with COPY in {time.perf_counter() - start:.1f} s (setup, not timed below)")
    print(f"PostgreSQL {connection.pg_version}; {campaign.runs.count()} runs × {campaign.topics.count()} topics: "
          f"{Ranking.objects.filter(run__campaign=campaign).aggregate(n=Sum('length'))['n']:,} run lines")

    def pool_rows() -> str:
        return f"{PoolEntry.objects.count():,} entries, {PoolSource.objects.count():,} sources"

    results = {}
    for depth in (5, 100):
        clear_pool(campaign)
        spec = pooling.PoolSpec(strategy="depth", depth=depth)
        summary, results[depth] = timed(f"build_pool depth {depth} (empty pool)", pooling.build_pool, campaign=campaign, spec=spec)
        print(f"    {pool_rows()}; {summary.stubs_created:,} document stubs")
    sources = PoolSource.objects.count()
    print(f"    floor: PostgreSQL alone stores these {sources:,} PoolSource rows in {source_rows_floor():.2f} s "
          "(INSERT … SELECT into a copy with the same indexes, commit included)")
    analyse()  # as autovacuum would have by the time someone looks at the page
    timed("build_pool depth 100 again (nothing new)", pooling.build_pool, campaign=campaign, spec=pooling.PoolSpec(depth=100))
    timed("preview depth 5/10/20 + RBP (depth-100 pool in place)", preview_pool, campaign=campaign, spec=pooling.PoolSpec(depth=5))
    timed("pool_statistics (the statistics page's queries)", pool_statistics, campaign=campaign)
    clear_pool(campaign)
    timed("build_pool RBP up to 100 per topic (reads every line)", pooling.build_pool, campaign=campaign,
          spec=pooling.PoolSpec(strategy="rbp", budget=100))
    print(f"    {pool_rows()}")
    clear_pool(campaign)
    pooling.build_pool(campaign=campaign, spec=pooling.PoolSpec(depth=100))
    (documents, planted), _ = timed("fill texts of the depth-100 pool (setup)", fill_texts, campaign)
    analyse("VACUUM ANALYZE")
    grouped, _ = timed(f"group_duplicates over {documents:,} documents with text", group_duplicates, campaign=campaign)
    print(f"    {grouped.groups:,} groups, {grouped.twins:,} twins ({planted:,} near-copies planted; "
          "a document pooled for several topics counts once per topic)")
    print(f"load average while running: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    verdict = "met" if max(results.values()) < 5 else "NOT met"
    print(f"goal < 5 s per build: {verdict} (depth 5: {results[5]:.2f} s, depth 100: {results[100]:.2f} s)")


if __name__ == "__main__":
    main()
