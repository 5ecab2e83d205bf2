"""How long the agreement figures and the dashboard take end to end from PostgreSQL: 10 assessors × 10,000
documents, every assessor labelling every document on every dimension of Touché 2022 Task 2's scheme (relevance,
then quality and stance where relevance ≥ 1, as its conditions ask), as in the largest conceivable training phase.

Creates (and drops first) the database `touchstone_bench_agree`, migrates it, writes the judgments and their
history with COPY, then times:

* compute_agreement: one query for the shared items, then every coefficient for every dimension, overall
  and per topic. This is what `manage.py agreement` does. The database read and the computation are also timed
  apart.
* dashboard: the agreement page's service, which is compute_agreement plus the monitoring aggregates.
* list_disagreements: the first page of the disagreement view, sorted by all labels.

    cd /work/main && .venv/bin/python bench/agreement_db.py [--items 10000] [--assessors 10] [--topics 100]

The goal is under 1 s for all dimensions. The pure part alone takes about 0.15 s (bench/agreement.py). The
script prints figures and asserts nothing.
"""

import argparse
import io
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import recreate_database, use_database  # noqa: E402

BENCH_DB = "touchstone_bench_agree"
use_database(BENCH_DB)
REPEATS = 5



def copy(cursor, table: str, columns: tuple[str, ...], rows) -> None:
    buffer = io.StringIO()
    for row in rows:
        buffer.write("\t".join(r"\N" if v is None else str(v) for v in row) + "\n")
    buffer.seek(0)
    cursor.copy_expert(f"COPY {table} ({', '.join(columns)}) FROM STDIN", buffer)


def labels(rng, n_items: int, n_raters: int, k: int) -> np.ndarray:
    """items × raters codes: each rater copies a hidden true label 60 % of the time and guesses otherwise."""
    truth = rng.integers(k, size=n_items)
    guess = rng.integers(k, size=(n_items, n_raters))
    return np.where(rng.random((n_items, n_raters)) < 0.6, truth[:, None], guess)


def generate(campaign, *, n_items: int, n_raters: int, n_topics: int) -> int:
    """Assessors, training topics, documents, pool entries, assignments, judgments and first events, by COPY."""
    from django.db import connection, transaction

    from accounts.models import User
    from assessments.models import Assignment, Document, Judgment, JudgmentEvent, PoolEntry, Topic

    scheme = campaign.label_scheme
    rng = np.random.default_rng(7)
    users = User.objects.bulk_create([User(username=f"assessor{r:02d}", password="!") for r in range(n_raters)])
    topics = Topic.objects.bulk_create(
        [Topic(campaign=campaign, number=str(t + 1), title=f"Topic {t + 1}", position=t, is_training=True) for t in range(n_topics)]
    )
    Assignment.objects.bulk_create(
        [Assignment(topic=t, assessor=u, phase="training", round=1) for t in topics for u in users]
    )
    codes = {d.name: labels(rng, n_items, n_raters, len(d.values)) for d in scheme.dimensions}
    spent = rng.integers(1_500, 120_000, size=(n_items, n_raters))
    start = datetime(2024, 3, 1, 8, tzinfo=UTC)
    per_topic = -(-n_items // n_topics)
    # One transaction: the database checks at commit that every judgment has its history row.
    with transaction.atomic(), connection.cursor() as cursor:
        copy(
            cursor, Document._meta.db_table,
            ("collection_id", "doc_id", "title", "body", "is_html", "url", "metadata", "has_text", "text_hash"),
            (
                (campaign.collection_id, f"doc-{i:06d}", f"Document {i}", "Some text. " * 40, "f", "", "{}", "t", "")
                for i in range(n_items)
            ),
        )
        cursor.execute(f"SELECT id FROM {Document._meta.db_table} ORDER BY doc_id")
        documents = [row[0] for row in cursor.fetchall()]
        topic_of = [topics[i // per_topic].pk for i in range(n_items)]
        copy(
            cursor, PoolEntry._meta.db_table, ('topic_id', 'document_id', '"order"', "strategy", "added_at"),
            ((topic_of[i], documents[i], i % per_topic, "depth", start) for i in range(n_items)),
        )
        judgments = []
        for i in range(n_items):
            for r, user in enumerate(users):
                given: dict = {}
                for d in scheme.dimensions:  # in the scheme's order, so a condition sees what it depends on
                    if d.condition is None or d.condition.holds(given):
                        given[d.name] = d.values[codes[d.name][i, r]].value
                at = start + timedelta(seconds=int(i * 17 + r * 600))
                judgments.append((
                    topic_of[i], documents[i], user.pk, "training", json.dumps(given), "", "f", int(spent[i, r]),
                    "web", 1, at, at,
                ))
        copy(
            cursor, Judgment._meta.db_table,
            ("topic_id", "document_id", "assessor_id", "phase", "labels", "note", "flagged",
             "time_spent_ms", "source", "revision", "created_at", "updated_at"),
            judgments,
        )
        cursor.execute(
            f"""INSERT INTO {JudgmentEvent._meta.db_table}
                  (judgment_id, assessor_id, revision, labels, note, flagged, time_spent_ms, source, at)
                SELECT id, assessor_id, 1, labels, note, flagged, time_spent_ms, source, created_at
                FROM {Judgment._meta.db_table}"""
        )
        cursor.execute("ANALYZE")
    return len(judgments)


def timings(fn) -> tuple[list[float], object]:
    result, times = None, []
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def report(label: str, times: list[float]) -> None:
    print(f"  {label:<58} median {statistics.median(times) * 1000:7.0f} ms   best {min(times) * 1000:7.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--assessors", type=int, default=10)
    parser.add_argument("--topics", type=int, default=100, help="the documents are shared out evenly among them")
    args = parser.parse_args()

    recreate_database(BENCH_DB)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    call_command("migrate", verbosity=0)
    from assessments.selectors import agreement, monitoring
    from assessments.services import campaigns

    campaign = campaigns.create_campaign(slug="bench", name="Bench", preset="touche-2022-task2")
    start = time.perf_counter()
    n = generate(campaign, n_items=args.items, n_raters=args.assessors, n_topics=args.topics)
    print(
        f"PostgreSQL {connection.pg_version}; {args.assessors} assessors × {args.items:,} documents in {args.topics} "
        f"topics = {n:,} judgments (+ history) written with COPY in {time.perf_counter() - start:.1f} s (setup)"
    )
    scope = agreement.Scope("training")

    times, result = timings(lambda: agreement.compute_agreement(campaign=campaign, scope=scope))
    report(f"compute_agreement: {len(result.dimensions)} dimensions, overall + per topic", times)
    fetch, shared = timings(lambda: agreement._shared(campaign, scope))
    report(f"  of which reading {len(shared.rows):,} judgments (three queries)", fetch)
    compute, _ = timings(lambda: agreement._agreement(campaign, scope, shared, None))
    report("  of which computing every coefficient", compute)
    primary = result.dimensions[campaign.label_scheme.primary.name]
    print(
        f"    {primary.name}: {primary.report.n_items:,} documents, {len(primary.report.cohen)} pairs, alpha "
        f"{primary.report.alpha:.3f}, Fleiss {primary.report.fleiss:.3f}; {len(primary.topics)} topics"
    )
    times, _ = timings(lambda: agreement.compute_agreement(campaign=campaign, scope=agreement.Scope("training", topic="1")))
    report("compute_agreement for one topic (the page's topic view)", times)
    with CaptureQueriesContext(connection) as queries:
        monitoring.dashboard(campaign=campaign, scope=scope)
    times, _ = timings(lambda: monitoring.dashboard(campaign=campaign, scope=scope))
    report(f"dashboard: agreement + monitoring ({len(queries)} queries)", times)
    times, _ = timings(lambda: monitoring.monitoring(campaign=campaign, scope=scope))
    report("  of which monitoring: tallies, activity per hour, progress", times)
    times, found = timings(lambda: agreement.list_disagreements(campaign=campaign, scope=scope))
    report(f"list_disagreements, first page of {found.count:,}", times)


if __name__ == "__main__":
    main()
