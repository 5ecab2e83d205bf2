"""A run file cannot make the import hold unbounded memory: a topic's lines are held whole while it is read, so a
topic with more than RUN_MAX_LINES_PER_TOPIC lines in a row is refused at the first line past the bound, by
either reader, with nothing stored; a small gzip of millions of lines of one topic stays small in memory."""

import gzip
import os
from pathlib import Path

import pytest
from django.db import connection

from assessments.models import Run
from bench.peak_memory import run_manage
from tests.factories import CampaignFactory, TopicFactory

ROOT = Path(__file__).resolve().parents[2]


def deep_run(path: Path, lines: int, *, separator: str = " ") -> Path:
    with gzip.open(path, "wt") as out:
        out.writelines(separator.join(["1", "Q0", f"doc-{i:08d}", str(i + 1), str(10**7 - i), "deep"]) + "\n" for i in range(lines))
    return path


@pytest.mark.django_db
@pytest.mark.parametrize("separator", [" ", "\t"])  # the line reader, and (TAB-separated) the column reader first
def test_a_topic_past_the_bound_is_refused_at_that_line_and_nothing_is_stored(command, settings, tmp_path, separator):
    settings.RUN_MAX_LINES_PER_TOPIC = 50
    campaign = CampaignFactory(slug="deep")
    TopicFactory(campaign=campaign, number="1")
    refused = command("import_runs", "deep", deep_run(tmp_path / "deep.txt.gz", 120, separator=separator))
    assert refused.code == 1
    assert "deep.txt.gz:51: topic 1 has more than 50 lines in a row (RUN_MAX_LINES_PER_TOPIC)" in refused.err
    assert not Run.objects.exists()
    settings.RUN_MAX_LINES_PER_TOPIC = 120
    assert command("import_runs", "deep", tmp_path / "deep.txt.gz").code == 0  # at the bound: stored


@pytest.mark.django_db(transaction=True)  # the child process reads the campaign
def test_millions_of_lines_of_one_topic_take_no_more_memory_than_a_normal_import(tmp_path):
    campaign = CampaignFactory(slug="deep")
    TopicFactory(campaign=campaign, number="1")
    path = deep_run(tmp_path / "deep.txt.gz", 1_500_000, separator="\t")
    db = connection.settings_dict
    env = {**os.environ, "SECRET_KEY": "test", "CELERY_BROKER_URL": "", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"}
    child, peak_kib = run_manage(ROOT, ["import_runs", "deep", str(path)], env)
    assert child.returncode == 1 and b"RUN_MAX_LINES_PER_TOPIC" in child.stderr
    assert peak_kib < 300 * 1024, peak_kib  # Arrow's libraries take some 90 MB whatever the file; unbounded: ~700 MB
