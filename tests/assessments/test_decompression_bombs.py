"""Files too big to keep in the corpus, made at test time: each goes through its real import command in a child
process, whose peak memory must stay under 256 MB, and ends in `error: FILE:LINE: …`. (A run import maps Arrow's
libraries, some 90 MB resident whatever the file; what a bomb could add is gigabytes.)

A bomb is many gzip members of one megabyte each (a file may hold any number of members, and each of these
compresses to about a kilobyte), so four gigabytes of content take four megabytes and no time to make.
"""

import gzip
import os
from pathlib import Path

import pytest
from django.db import connection

from bench.peak_memory import run_manage
from tests.factories import CampaignFactory, TopicFactory

pytestmark = pytest.mark.django_db(transaction=True)  # the child process reads the campaign: it must be committed

ROOT = Path(__file__).resolve().parent.parent.parent
PEAK_LIMIT_KIB = 256 * 1024
MEGABYTE = 1 << 20
COMMANDS = {
    "run": ["import_runs"],
    "qrels": ["import_qrels", "--kind", "relevance", "--assessor", "touche-archive"],
    "documents": ["import_documents"],
    "topics": ["import_topics"],
}


def bomb(path: Path, piece: bytes, megabytes: int) -> Path:
    member = gzip.compress(piece * (MEGABYTE // len(piece)), compresslevel=9, mtime=0)
    with open(path, "wb") as out:
        for _ in range(megabytes):
            out.write(member)
    return path


def import_in_child(kind: str, path: Path, **env) -> tuple[int, str, int]:
    """(exit status, stderr, peak resident KiB) of `manage.py <import command>` on the test database."""
    db = connection.settings_dict
    environ = {
        **os.environ, "SECRET_KEY": "test", "CELERY_BROKER_URL": "", "LOG_LEVEL": "WARNING",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        **env,
    }
    command, *options = COMMANDS[kind]
    child, peak = run_manage(ROOT, [command, "bombs", str(path), *options], environ)
    return child.returncode, child.stderr.decode(), peak


@pytest.fixture
def campaign_with_topics(db):
    campaign = CampaignFactory(slug="bombs", preset="touche-2022-task2")
    TopicFactory(campaign=campaign, number="1")
    return campaign


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("run", "the line is longer than 1,048,576 bytes"),
        ("qrels", "the line is longer than 1,048,576 bytes"),
        ("documents", "the line is longer than 33,554,432 bytes"),
        ("topics", "the file is longer than 20,000,000 bytes, the most a topic file may have"),
    ],
)
def test_four_gigabytes_in_one_line_from_four_megabytes_of_gzip(campaign_with_topics, tmp_path, kind, reason):
    path = bomb(tmp_path / f"{kind}.gz", b"a", 4096)
    assert path.stat().st_size < 5 * MEGABYTE

    code, err, peak = import_in_child(kind, path)

    assert (code, err.strip()) == (1, f"error: {path}:1: {reason}")
    assert peak < PEAK_LIMIT_KIB, f"peak {peak // 1024} MiB"


def test_a_gigabyte_of_blank_lines_is_refused_after_a_million(campaign_with_topics, tmp_path):
    path = bomb(tmp_path / "blank.gz", b"\n", 1024)

    code, err, peak = import_in_child("run", path)

    assert (code, err.strip()) == (1, f"error: {path}:1000001: more than 1,000,000 blank lines; refused as not a real file")
    assert peak < PEAK_LIMIT_KIB, f"peak {peak // 1024} MiB"


def test_a_collection_that_expands_past_the_absolute_limit_is_refused(campaign_with_topics, tmp_path):
    """The same record over and over is valid JSONL (a repeated id keeps its first record), so only the size limit
    stops it: here the deployment's IMPORT_MAX_DECOMPRESSED_BYTES, set to 16 MiB for the test."""
    record = b'{"id": "d1", "text": "the same passage, again"}\n'
    path = bomb(tmp_path / "documents.gz", record, 4096)

    code, err, peak = import_in_child("documents", path, IMPORT_MAX_DECOMPRESSED_BYTES=str(16 * MEGABYTE))

    line = 16 * MEGABYTE // len(record) + 1  # the record the limit falls in
    assert code == 1 and err.startswith(f"error: {path}:")
    assert abs(int(err.split(":")[2]) - line) <= MEGABYTE // len(record), err  # within the megabyte read last
    assert "expands to more than 16,777,216 bytes when decompressed" in err and "decompression bomb" in err
    assert peak < PEAK_LIMIT_KIB, f"peak {peak // 1024} MiB"
