"""A command starts without the libraries it does not use: SciPy (the t-test's distribution) and Celery (the job
queue) are loaded by what needs them, not by Django's start-up, so `evaluate_runs --help` or an evaluation without
a test does not wait for them (bench/command_startup.py measures the time)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(*args: str) -> set[str]:
    """The modules a fresh process imports to run `manage.py ARGS`, from `python -X importtime`."""
    env = {**os.environ, "SECRET_KEY": "startup-test", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def roots(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("command", ["evaluate_runs", "export_qrels", "import_runs", "build_pool", "assign_topics"])
def test_a_commands_start_up_loads_neither_scipy_nor_celery(command):
    loaded = roots(imported_modules(command, "--help"))
    assert "django" in loaded and "assessments" in loaded  # the measurement sees the project's imports
    assert not loaded & {"scipy", "celery", "kombu"}, sorted(loaded & {"scipy", "celery", "kombu"})


def test_a_t_test_loads_scipy_when_it_runs(db):
    from assessments.metrics import significance

    out = subprocess.run(
        [sys.executable, "-c", "import sys; from assessments.metrics import significance as s; "
         "assert 'scipy' not in sys.modules; s.paired_t_test([[1.0, 0.5], [0.8, 0.1], [0.9, 0.2]], [(0, 1)]); "
         "print('scipy' in sys.modules)"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr
    assert significance.paired_t_test([[1.0, 0.5], [0.8, 0.1], [0.9, 0.2]], [(0, 1)])[0] < 0.05
