"""How the suite meets its machine: its own database and Redis database from the environment, so two suites
can share one server, and real-data tests that skip with a reason, or fail under CI."""

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
REAL_DATA_TEST = "tests/formats/test_topics_xml.py::test_it_reads_the_touche_2022_comparative_topics"


def test_the_test_database_and_broker_follow_the_environment(db):
    # pytest.ini gives defaults (D:), which a variable set in the environment overrides.
    assert connection.settings_dict["NAME"] == "test_" + urlparse(os.environ["DATABASE_URL"]).path.lstrip("/")
    assert settings.CELERY_BROKER_URL == os.environ["CELERY_BROKER_URL"]


def run_real_data_test(**env: str) -> subprocess.CompletedProcess:
    base = {name: value for name, value in os.environ.items() if name not in ("TOUCHE_DATA", "CI")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", REAL_DATA_TEST],
        cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=120,
    )


def test_real_data_tests_skip_saying_why_without_the_files():
    done = run_real_data_test()
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout and "TOUCHE_DATA is not set" in done.stdout


@pytest.mark.parametrize("ci", ["1", "true"])
def test_real_data_tests_fail_under_ci_without_the_files(ci):
    done = run_real_data_test(CI=ci)
    assert done.returncode == 1, done.stdout
    assert "1 error" in done.stdout and "under CI the tests that need them must run" in done.stdout


def test_a_touche_data_that_points_nowhere_fails(tmp_path):
    done = run_real_data_test(TOUCHE_DATA=str(tmp_path))
    assert done.returncode == 1, done.stdout
    assert "1 error" in done.stdout and "is not the folder of real Touché files" in done.stdout
