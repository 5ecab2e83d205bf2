"""Peak memory of importing one large run file, measured on the process that does it (`manage.py import_runs`, the
same service the upload job runs), for two file sizes: memory should not grow with the file.

The files are 1,000 lines per topic (Touché's maximum) in as many topics as the size needs, TAB-separated, with
ties every few lines, like bench/import_runs.py. The database `touchstone_bench_runmem` is dropped and rebuilt
for each size: a campaign, its topics, then the one import, timed, with the peak resident memory of the process
that ran it (VmHWM).

    flock /work/bench.lock .venv/bin/python bench/run_file_memory.py [--megabytes 35 351] [--code DIR]

`--code DIR` runs another checkout's importer (for example an export of an older commit, `git archive`), so a
change can be measured before and after with the same files and the same database.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import SERVER, recreate_database  # noqa: E402
from bench.peak_memory import run_manage  # noqa: E402

BENCH_DB = "touchstone_bench_runmem"
LINES_PER_TOPIC = 1000


def write_run(path: Path, megabytes: int) -> tuple[int, int]:
    """Write whole topics until the file has `megabytes` MB; return (topics, lines)."""
    topics = lines = 0
    with open(path, "w") as out:
        while out.tell() < megabytes * 1_000_000:
            topics += 1
            out.write("".join(
                f"{topics}\tQ0\tclueweb12-{(i * 104729 + topics) % 10000:04d}wb-{topics % 100:02d}-{i:05d}___{i % 9}"
                f"\t{i + 1}\t{50.0 - (i - i % 7 // 6) * 0.01:.4f}\tbench-deep-run\n"
                for i in range(LINES_PER_TOPIC)
            ))
            lines += LINES_PER_TOPIC
    return topics, lines


def write_topics(path: Path, topics: int) -> None:
    path.write_text(
        "<topics>\n"
        + "".join(f"<topic><number>{t}</number><title>Which is better, a or b? ({t})</title></topic>\n" for t in range(1, topics + 1))
        + "</topics>\n"
    )


def manage(code: Path, *args: str) -> tuple[float, int]:
    """Run manage.py in `code`; return (seconds, peak resident KiB of that process)."""
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{BENCH_DB}", "SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING",
           "CELERY_BROKER_URL": "", "DJANGO_SETTINGS_MODULE": "touchstone.settings"}
    started = time.perf_counter()
    child, peak = run_manage(code, list(args), env)
    seconds = time.perf_counter() - started
    if child.returncode:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{child.stdout.decode()}\n{child.stderr.decode()}")
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, nargs="+", default=[35, 351])
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent, help="the checkout to run")
    args = parser.parse_args()
    code = args.code.resolve()
    print(f"importer: {code}")
    with tempfile.TemporaryDirectory(prefix="touchstone-runmem-") as folder:
        for megabytes in args.megabytes:
            run, topics_file = Path(folder) / "deep-run.txt", Path(folder) / "topics.xml"
            topics, lines = write_run(run, megabytes)
            write_topics(topics_file, topics)
            recreate_database(BENCH_DB)
            manage(code, "migrate", "-v0")
            manage(code, "create_campaign", "bench", "--name", "Bench", "--preset", "touche-2021-task2")
            manage(code, "import_topics", "bench", str(topics_file))
            seconds, peak_kib = manage(code, "import_runs", "bench", str(run))
            print(
                f"{run.stat().st_size / 1e6:,.0f} MB run file, {lines:,} lines in {topics:,} topics: "
                f"import {seconds:.1f} s, peak {peak_kib / 1024:,.0f} MiB",
                flush=True,
            )


if __name__ == "__main__":
    main()
