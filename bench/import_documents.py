"""How fast a passage collection goes in: 1 M Touché-style passages (~100 words each) in one JSONL.gz file through
`services.imports.documents.import_documents`, the path the upload job and `manage.py import_documents` take.

Creates (and drops first) the database `touchstone_bench`, migrates it, writes the file into a temporary folder,
imports it, then imports it again (nothing changes: the idempotent path), and prints documents per second, the
split between reading (parse, hash, spool) and storing, and the peak memory of the process (ru_maxrss), which
stays flat whatever the number of documents.

    cd /work/main && .venv/bin/python bench/import_documents.py [--documents 1000000] [--words 100]

The goal is ≥ 25,000 documents/s with flat memory.
"""

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_runs import BENCH_DB, Timeline, peak_mb, recreate_database  # noqa: E402  (sets DATABASE_URL to touchstone_bench)

WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they "
    "you were their one all we can her has there been if more when will would who so no argument debate because "
    "people should better than however evidence study shows cats dogs laptop desktop energy nuclear wind school "
    "uniform tax health vaccine price quality performance battery camera python java train plane coffee tea"
).split()


def write_passages(path: Path, *, documents: int, words: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for n in range(documents):
            text = " ".join(rng.choices(WORDS, k=words)).capitalize() + "."
            doc_id = f"clueweb12-{n // 5000:04d}wb-{n % 100:02d}-{n:05d}___{n % 7 + 1}"
            out.write(json.dumps({"id": doc_id, "contents": text, "chatNoirUrl": f"https://chatnoir.eu/cache?uuid={n}"}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--words", type=int, default=100)
    args = parser.parse_args()

    recreate_database(BENCH_DB)
    import django

    django.setup()
    from django.core.management import call_command

    from assessments.models import Document
    from assessments.services.campaigns import create_campaign
    from assessments.services.imports.documents import import_documents

    call_command("migrate", verbosity=0)
    campaign = create_campaign(slug="bench", name="Bench", preset="touche-2022-task2")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "passages.jsonl.gz"
        started = time.perf_counter()
        write_passages(path, documents=args.documents, words=args.words)
        print(f"wrote {args.documents:,} passages, {path.stat().st_size / 2**20:.0f} MiB gzip, in {time.perf_counter() - started:.1f} s; peak so far {peak_mb():.0f} MB")
        for label in ("import", "re-import (unchanged)"):
            timeline = Timeline()
            started, cpu = time.perf_counter(), time.process_time()
            summary = import_documents(campaign=campaign, paths=[path], progress=timeline)
            elapsed = time.perf_counter() - started
            read = summary.counts["read"]
            reading, storing = timeline.read_done - started, started + elapsed - timeline.read_done
            print(summary.text)
            print(
                f"{label}: {read:,} documents in {elapsed:.1f} s = {read / elapsed:,.0f} documents/s "
                f"(read, hash and spool {reading:.1f} s = {read / reading:,.0f}/s; store {storing:.1f} s); peak memory {peak_mb():.0f} MB; "
                f"this process used {time.process_time() - cpu:.1f} s of CPU"
            )
        assert Document.objects.filter(collection=campaign.collection, has_text=True).count() == args.documents


if __name__ == "__main__":
    main()
