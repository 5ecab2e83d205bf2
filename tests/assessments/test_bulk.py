"""services.bulk: the COPY paths on PostgreSQL and the ORM paths on a real SQLite database store the same rows.

The SQLite side runs in a subprocess with DATABASE_URL pointing at a fresh SQLite file (the demo's database), so
the branch taken is the one a demo really takes, not a patched vendor name.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assessments.services.bulk import copy_escape, copy_unescape, session_lock
from tests.assessments import bulk_scenario

ROOT = Path(__file__).resolve().parents[2]

ON_SQLITE = """
import json, os, sys
from pathlib import Path
import django
django.setup()
from django.core.management import call_command
from django.db import connection
call_command("migrate", verbosity=0)
assert connection.vendor == "sqlite", connection.vendor
from tests.assessments import bulk_scenario
print("RESULT " + json.dumps(bulk_scenario.run(Path(sys.argv[1]))))
"""


def run_on_sqlite(folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(DATABASE_URL=f"sqlite:///{folder / 'bulk.sqlite3'}", DJANGO_SETTINGS_MODULE="touchstone.settings", DEBUG="1")
    done = subprocess.run(
        [sys.executable, "-c", ON_SQLITE, str(folder)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


@pytest.fixture
def on_postgresql(db, tmp_path) -> dict:
    folder = tmp_path / "postgresql"
    folder.mkdir()
    # Through JSON, as the SQLite side's answer comes, so tuples and lists compare alike.
    return json.loads(json.dumps(bulk_scenario.run(folder)))


def test_sqlite_stores_exactly_what_postgresql_stores(on_postgresql, tmp_path):
    folder = tmp_path / "sqlite"
    folder.mkdir()

    on_sqlite = run_on_sqlite(folder)

    for table in ("counts", "documents", "rankings", "entries", "sources"):
        assert on_sqlite[table] == on_postgresql[table], table


def test_the_stored_rows_are_the_files_values(on_postgresql):
    documents = {row[0]: row[1:] for row in on_postgresql["documents"]}
    # Text survives COPY's escapes; the first record of a repeated id wins; a second import changes nothing.
    assert documents["d\\1"][:2] == ["\\N", "tab\there, back\\slash,\r\nCRLF"]
    assert documents["d\\1"][4] == {"note": {"k": "a\\b\nc\td"}}
    assert documents["plain"][1] == "Cats."
    counts = on_postgresql["counts"]
    assert (counts["first"]["created"], counts["again"]["created"], counts["again"]["updated"]) == (5, 0, 0)
    # Run ids are stored as submitted, whatever array syntax they resemble, with their stances.
    ranking = next(r for r in on_postgresql["rankings"] if r[:2] == ["a", "1"])
    assert set(ranking[3]) >= set(bulk_scenario.ODD_IDS)
    assert ranking[6][ranking[3].index('quo"te')] == "FIRST" and ranking[6][ranking[3].index("d\\1")] is None
    # Ids no document has became stubs; the two copies became one group; earlier sources got their score position.
    assert [documents[doc][5] for doc in ("ghost", "only-b")] == [False, False]
    twins = {row[1]: row[4] for row in on_postgresql["entries"] if row[4]}
    assert twins in ({"copy-b": "copy-a"}, {"copy-a": "copy-b"})
    sources = {(row[0], row[1], row[2]): row[3:] for row in on_postgresql["sources"]}
    assert sources["1", "d\\1", "a"] == [1, 2]  # first by the rank column, second by score


@pytest.mark.parametrize("text", ["plain", "tab\there", "back\\slash", "line\nbreak\r\n", "\\N", "\\\\t", ""])
def test_copy_escapes_read_back_as_the_text(text):
    field = copy_escape(text)

    assert "\t" not in field and "\n" not in field and "\r" not in field
    assert copy_unescape(field) == text


def test_a_session_lock_is_refused_while_another_session_holds_it(db):
    import psycopg2
    from django.db import connection

    settings = connection.settings_dict
    other = psycopg2.connect(
        dbname=settings["NAME"], user=settings["USER"], host=settings["HOST"], port=settings["PORT"], password=settings["PASSWORD"]
    )
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(1, 2)")
        with session_lock(1, 2) as taken:
            assert not taken
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(1, 2)")
        with session_lock(1, 2) as taken:
            assert taken
    finally:
        other.close()
