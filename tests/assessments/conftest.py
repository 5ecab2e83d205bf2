"""Fixtures for the import tests (test_import_*.py): a campaign with topics, files written on the fly, and the
management commands run the way a shell runs them (exit status, stdout, stderr); for the archive and backup tests, a
scratch database beside the test database and a way to point the code at it."""

import gzip
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg2
import pytest
from django.db import connection, connections

from tests.factories import CampaignFactory, TopicFactory


@pytest.fixture
def import_campaign(db):
    """A Touché 2022 Task 2 campaign (stances FIRST, SECOND, NEUTRAL, NO) with topics 1, 2 and 3."""
    campaign = CampaignFactory(slug="imports22", name="Imports 2022", preset="touche-2022-task2")
    for position, number in enumerate(("1", "2", "3")):
        TopicFactory(campaign=campaign, number=number, position=position)
    return campaign


@pytest.fixture
def write_file(tmp_path) -> Callable[..., Path]:
    """write_file(name, text_or_bytes) -> Path; a name ending in .gz is gzip-compressed."""

    def write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        data = content.encode() if isinstance(content, str) else content
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        return path

    return write


@pytest.fixture
def upload_root(settings, tmp_path) -> Path:
    """MEDIA_ROOT in a temporary folder, so uploads kept for jobs never land in var/."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


class ScratchDatabase:
    """A PostgreSQL database named after the test database (plus ``_scratch``, so suites of several clones never
    share one), dropped when the test ends."""

    def __init__(self) -> None:
        settings = connection.settings_dict
        self.name = f"{settings['NAME']}_scratch"
        self.url = f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}"
        self.tool_options = ["-h", settings["HOST"] or "127.0.0.1", "-p", str(settings["PORT"] or 5432), "-U", settings["USER"]]

    def _server(self, statement: str) -> None:
        server = psycopg2.connect(f"{self.url}/postgres")
        server.autocommit = True
        with server.cursor() as cursor:
            cursor.execute(statement)
        server.close()

    def create(self) -> str:
        """An empty database (nothing migrated), for pg_restore."""
        self.drop()
        self._server(f"CREATE DATABASE {self.name}")
        return self.name

    def install(self) -> str:
        """A fresh install: the test database as committed (migrated, and empty, since a test's own rows are not
        committed), copied with pg_dump and pg_restore."""
        self.create()
        dump = subprocess.run(["pg_dump", "-Fc", *self.tool_options, connection.settings_dict["NAME"]], capture_output=True, check=True)
        subprocess.run(["pg_restore", "--exit-on-error", *self.tool_options, "-d", self.name], input=dump.stdout, check=True)
        return self.name

    def drop(self) -> None:
        self._server(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")


@pytest.fixture
def scratch_database(db) -> Iterator[ScratchDatabase]:
    scratch = ScratchDatabase()
    yield scratch
    scratch.drop()


@contextmanager
def _connected_to(name: str) -> Iterator[None]:
    """Point the code (services, ORM, `django.db.connection`) at database `name` for the block, the test's own
    connection, with its open transaction, set aside meanwhile."""
    original = connections["default"]
    elsewhere = original.__class__({**original.settings_dict, "NAME": name}, alias="default")
    connections._connections.default = elsewhere
    try:
        yield
    finally:
        elsewhere.close()
        connections._connections.default = original


@pytest.fixture
def connected_to():
    return _connected_to
