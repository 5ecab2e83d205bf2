"""How long scoring a classification campaign's submissions takes, read from the database: Touché 2023 Task 4
(CoFE) at ten times its test set, 100 submissions × 10,000 comments in six languages.

Creates (and drops first) the database `touchstone_bench_classification`, migrates it, imports 10,000 comments as
items (import_items), gives each the labels of three coders (COPY, services.judging's bulk path) with the three-way
splits adjudicated, stores 100 submissions, then times `score_submissions` (every measure, overall and per language,
from the database: the items, the decided labels under the adjudicated rule and the predictions) and, once each,
the import of one submission file, the bootstrap intervals and the permutation tests against the best.

    cd /work/main && .venv/bin/python bench/score_submissions.py [--submissions 100] [--comments 10000]

The goal is under 5 s to score all submissions, so the results page can compute its table on each request.
"""

import argparse
import csv
import io
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import recreate_database, use_database  # noqa: E402

BENCH_DB = "touchstone_bench_classification"
use_database(BENCH_DB)
REPEATS = 3
LABELS = ("In favor", "Against", "Other")
LANGUAGES = ("en", "fr", "de", "it", "el", "hu")  # the languages of the lab's test set
HEADER = ("id", "id_prop", "alignment", "comment", "depth", "thread_id", "last_comment_in_thread", "upvote", "downvote",
          "Topic", "lan", "time", "label")


def write_comments(path: Path, rng: random.Random, n: int, proposals: int) -> list[str]:
    ids = [f"comment_{i * 13 + 5}" for i in range(n)]
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, delimiter="\t", lineterminator="\n")
        writer.writerow(HEADER)
        for i, ident in enumerate(ids):
            writer.writerow([ident, str(1000 + i % proposals), "---", f"Comment {i} on the proposal, in a few words.",
                             "0.0", "", "False", "1", "0", "Migration", rng.choice(LANGUAGES), "2021-04-21", "---"])
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--comments", type=int, default=10_000)
    parser.add_argument("--proposals", type=int, default=400)
    args = parser.parse_args()

    recreate_database(BENCH_DB)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction

    call_command("migrate", verbosity=0)
    from accounts.models import Role, User
    from assessments.models import Document, Run, Topic
    from assessments.services import bulk, campaigns, classification
    from assessments.services.adjudication import Decision, adjudicate
    from assessments.services.imports.items import import_items
    from assessments.services.judging import record_judgments_in_bulk

    rng = random.Random(2023)
    campaign = campaigns.create_campaign(slug="bench", name="Bench", preset="touche-2023-task4")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        comments = Path(folder) / "comments.tsv"
        ids = write_comments(comments, rng, args.comments, args.proposals)
        import_items(campaign=campaign, comments=comments)
        topic_of = dict(Document.objects.filter(collection=campaign.collection).values_list("doc_id", "pool_entries__topic_id"))
        truth = {ident: rng.choices(LABELS, (5, 3, 2))[0] for ident in ids}
        given = {ident: [t if rng.random() < 0.75 else rng.choice(LABELS) for _ in range(3)] for ident, t in truth.items()}
        coders = [User.objects.create(username=name, role=Role.ASSESSOR) for name in ("cora", "cody", "cleo")]
        with transaction.atomic():
            bulk.lock_campaign(campaign)
            for n, coder in enumerate(coders):
                rows = "".join(f"{i}\t{topic_of[ident]}\t{ident}\t{given[ident][n]}\n" for i, ident in enumerate(ids, 1))
                record_judgments_in_bulk(campaign=campaign, rows=io.BytesIO(rows.encode()), dimension="stance",
                                         assessor=coder, phase="main", source="web")
        judge = User.objects.create(username="ada", role=Role.ORGANISER)
        topics = {t.pk: t for t in Topic.objects.filter(campaign=campaign)}
        documents = {d.doc_id: d for d in Document.objects.filter(collection=campaign.collection)}
        splits = [ident for ident in ids if len(set(given[ident])) == 3]
        for ident in splits:
            adjudicate(topic=topics[topic_of[ident]], document=documents[ident], by=judge,
                       decision=Decision(labels={"stance": truth[ident]}, reason="bench"))
        Run.objects.bulk_create([
            Run(campaign=campaign, tag=f"team{n:03d}", line_count=len(ids), predictions={
                ident: truth[ident] if rng.random() < 0.3 + 0.5 * n / args.submissions else rng.choice(LABELS) for ident in ids
            })
            for n in range(args.submissions)
        ], batch_size=10)
        run_file = Path(folder) / "extra.tsv"
        run_file.write_text("".join(f"{ident}\t{rng.choice(LABELS)}\n" for ident in ids), encoding="utf-8")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        print(f"PostgreSQL {connection.pg_version}; {args.comments:,} comments on {args.proposals} proposals in "
              f"{len(LANGUAGES)} languages, 3 coders each ({len(splits)} three-way splits adjudicated), "
              f"{args.submissions} submissions: set up in {time.perf_counter() - start:.1f} s")

        start = time.perf_counter()
        summary = classification.import_predictions(campaign=campaign, path=run_file)
        print(f"{'import_predictions, one submission file':<58} {time.perf_counter() - start:7.2f} s  ({summary.text})")

    timings = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        board = classification.score_submissions(campaign, by="language")
        timings.append(time.perf_counter() - start)
    label = f"score_submissions, {len(board.results)} × {board.items:,}, all measures, per language"
    print(f"{label:<58} {min(timings):7.2f} s  (runs: {', '.join(f'{t:.2f}' for t in timings)})")
    best = board.results[0]
    print(f"    best {best.tag}: Macro F1 {best.value('Macro F1-Score'):.4f}; languages {board.languages}")
    for what, options in (
        ("+ bootstrap intervals (1,000 draws over comments)", {"ci": 0.95}),
        ("+ permutation tests, the best against each (1,000 flips)", {"test": "permutation"}),
    ):
        start = time.perf_counter()
        classification.score_submissions(campaign, measure="Macro F1-Score", **options)
        print(f"{what:<58} {time.perf_counter() - start:7.2f} s")
    verdict = "met" if min(timings) < 5 else "NOT met"
    print(f"goal < 5 s to score {len(board.results)} submissions from the database: {verdict} ({min(timings):.2f} s)")


if __name__ == "__main__":
    main()
