"""The labelling page of a classification item (a comment beside its proposal, Touché 2023 Task 4) against the judge
page of a pooled document, in one run, on queues of the same size.

Creates (and drops first) the database `touchstone_bench_label_page`, migrates it, and builds two campaigns: a
Touché 2023 Task 1 topic with N pooled documents (HTML bodies of about 3 KB) assigned whole to one assessor, and a
Task 4 proposal with N comments in six languages given by `assign_items` to a coder who reads them all (an
assignment listing its items, as every item assignment does). Then, alternating the two within each round so both
see the same machine, it requests through Django's test client the whole page and the htmx part (what moving to
the next item fetches) at positions spread over the queue, and prints p50 and p95 per page and the ratio of the
item's to the document's (of the p50s and p95s, and the median of each round's own ratio), with the queries each
request made and the machine's load average.

    cd /work/main && .venv/bin/python bench/label_page.py [--items 2400] [--rounds 200]
    cd /work/main && .venv/bin/python bench/label_page.py --items 12 --rounds 300   # a real proposal's comments

Both shapes matter: a CoFE proposal has a handful of comments (the short queue), a Touché pool thousands (the long).

The goal: the item's page costs no more than the document's (ratio ≤ 1.1 at p50 and p95).
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import recreate_database, use_database  # noqa: E402

BENCH_DB = "touchstone_bench_label_page"
use_database(BENCH_DB)
LANGUAGES = ("en", "fr", "de", "it", "el", "hu")
HEADER = ("id", "id_prop", "alignment", "comment", "depth", "thread_id", "last_comment_in_thread", "upvote", "downvote",
          "Topic", "lan", "time", "label")


def build(n: int):
    """The two assignments (document, item) and their assessors."""
    import csv

    from accounts.models import Role, User
    from assessments.models import Assignment, Document, PoolEntry, Topic
    from assessments.services import campaigns
    from assessments.services.imports.items import import_items
    from assessments.services.item_assignments import assign_items

    rng = random.Random(4)
    words = "argument school uniform evidence claim premise policy cost benefit study europe".split()
    ranking = campaigns.create_campaign(slug="docs", name="Task 1", preset="touche-2023-task1")
    topic = Topic.objects.create(campaign=ranking, number="1", title="Should school uniforms be mandatory?",
                                 description="A parent wonders.", narrative="Relevant documents argue for or against.")
    documents = Document.objects.bulk_create([
        Document(collection=ranking.collection, doc_id=f"clueweb12-{i:07d}", title=f"Document {i}", has_text=True,
                 is_html=True, body="".join(f"<p>{' '.join(rng.choices(words, k=40))}</p>" for _ in range(10)))
        for i in range(n)
    ], batch_size=1000)
    PoolEntry.objects.bulk_create([PoolEntry(topic=topic, document=d, order=i) for i, d in enumerate(documents)], batch_size=2000)
    reader = User.objects.create_user("dora", password="bench-dora-password", role=Role.ASSESSOR)
    Assignment.objects.create(topic=topic, assessor=reader, phase="main")

    classification = campaigns.create_campaign(slug="items", name="Task 4", preset="touche-2023-task4")
    with tempfile.TemporaryDirectory() as folder:
        comments, proposals = Path(folder) / "comments.tsv", Path(folder) / "proposals.tsv"
        with open(comments, "w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream, delimiter="\t", lineterminator="\n")
            writer.writerow(HEADER)
            for i in range(n):
                writer.writerow([f"comment_{i}", "238", "---", " ".join(rng.choices(words, k=60)), "0.0", "", "False", "1", "0",
                                 "Migration", LANGUAGES[i % 6], "2021-04-21", "---"])
        proposals.write_text(
            "id\ttitle\tproposal\tproposal_en\ttitle_en\tTopic\tlan\tendorsements\n"
            f"238\tFrontex stärken\t{' '.join(rng.choices(words, k=120))}\t{' '.join(rng.choices(words, k=120))}\t"
            "Strengthen Frontex\tMigration\tde\t12\n", encoding="utf-8",
        )
        import_items(campaign=classification, comments=comments, proposals=proposals)
    coder = User.objects.create_user("cleo", password="bench-cleo-password", role=Role.ASSESSOR, languages=list(LANGUAGES))
    assign_items(campaign=classification, coders=[coder])
    for campaign in (ranking, classification):  # main-phase topics open with the main phase (judging.awaits_main_phase)
        campaigns.advance_phase(campaign=campaign, to="main", by=None)
    return (
        (reader, Assignment.objects.get(assessor=reader)),
        (coder, Assignment.objects.get(assessor=coder)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2400, help="queue length of each page (default 2,400, a Touché pool)")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()

    recreate_database(BENCH_DB)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    call_command("migrate", verbosity=0)
    setup_test_environment()  # the test client's hosts, and query counting
    settings.DEBUG = True
    pages = build(args.items)
    with connection.cursor() as cursor:
        # As autovacuum leaves freshly loaded tables (PostgreSQL 13+ vacuums insert-only ones too): statistics, and
        # the visibility map that lets the queue read the assignment's item list from its index alone.
        cursor.execute("VACUUM ANALYZE")
    clients = []
    for user, assignment in pages:
        client = Client()
        client.force_login(user)
        clients.append((client, assignment))
    rng = random.Random(7)
    times: dict[tuple[int, str], list[float]] = {}
    queries: dict[tuple[int, str], int] = {}
    load = os.getloadavg()[0]
    for round_ in range(args.rounds):
        position = rng.randint(1, args.items)
        # Each page goes first in every other round, so neither always meets the caches the other warmed.
        for which in (0, 1) if round_ % 2 == 0 else (1, 0):
            client, assignment = clients[which]
            url = reverse("annotation:judge", args=[assignment.pk, position])
            for part, headers in (("page", {}), ("htmx part", {"HTTP_HX_REQUEST": "true"})):
                reset_queries()
                start = time.perf_counter()
                response = client.get(url, secure=True, **headers)  # the settings redirect plain HTTP
                times.setdefault((which, part), []).append(time.perf_counter() - start)
                queries[(which, part)] = len(connection.queries)
                assert response.status_code == 200, (url, response.status_code)
    print(f"PostgreSQL {connection.pg_version}; queues of {args.items:,}; {args.rounds} rounds, the two pages alternated; "
          f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} CPUs)")
    for part in ("page", "htmx part"):
        figures = []
        for which, name in enumerate(("document (Task 1)", "item (Task 4)")):
            values = sorted(times[(which, part)])
            p50, p95 = statistics.median(values), values[int(0.95 * (len(values) - 1))]
            figures.append((p50, p95))
            print(f"  {part:<10} {name:<18} p50 {p50 * 1000:6.2f} ms  p95 {p95 * 1000:6.2f} ms  ({queries[(which, part)]} queries)")
        (d50, d95), (i50, i95) = figures
        # Each round's two requests ran back to back on the same position, so their ratio sees the same machine
        # load: its median drifts less with other work on the machine than the ratio of the two p50s.
        paired = statistics.median(i / d for d, i in zip(times[(0, part)], times[(1, part)], strict=True))
        print(f"  {part:<10} item / document    p50 {i50 / d50:5.2f}     p95 {i95 / d95:5.2f}     median of rounds {paired:5.2f}")


if __name__ == "__main__":
    main()
