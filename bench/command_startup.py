"""How long a management command takes to start, beside the floor every Django command pays, in one run.

    .venv/bin/python bench/command_startup.py            # 7 runs of each, medians
    .venv/bin/python bench/command_startup.py --runs 15

Each figure is the wall time of a fresh `manage.py COMMAND --help` (Python starting, settings, every app loaded,
the command's own imports, its help printed): what a user waits for before a command does anything. The floor is
`django.setup()` alone in a fresh process; a command's excess over it is its own imports. Commands no longer load
SciPy or Celery at start-up (tests/foundation/test_startup.py checks which modules load). Exits 1 when a
command's median exceeds the goal of 0.4 s. Prints the machine's load beside the figures.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("evaluate_runs", "export_qrels", "import_runs", "import_qrels", "build_pool", "assign_topics", "agreement")
GOAL_SECONDS = 0.4
FLOOR = "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'touchstone.settings'); django.setup()"


def timed(argv: list[str], runs: int) -> float:
    env = {**os.environ, "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-startup"), "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    python = timed([sys.executable, "-c", "pass"], args.runs)
    floor = timed([sys.executable, "-c", FLOOR], args.runs)
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; medians of {args.runs} runs")
    print(f"{'python -c pass':<28} {python:6.3f} s")
    print(f"{'django.setup() (the floor)':<28} {floor:6.3f} s")
    missed = []
    for command in COMMANDS:
        seconds = timed([sys.executable, "manage.py", command, "--help"], args.runs)
        print(f"{command + ' --help':<28} {seconds:6.3f} s   {seconds / floor:4.2f}× the floor")
        if seconds > GOAL_SECONDS:
            missed.append(command)
    if missed:
        print(f"goal missed (≤ {GOAL_SECONDS} s): {', '.join(missed)}")
        return 1
    print(f"goal met: every command starts in ≤ {GOAL_SECONDS} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
