"""Fixtures for the import tests (test_import_*.py): a campaign with topics, files written on the fly, and the
management commands run the way a shell runs them (exit status, stdout, stderr)."""

import gzip
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

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


@dataclass
class CommandResult:
    code: int
    out: str
    err: str


@pytest.fixture
def command() -> Callable[..., CommandResult]:
    """command("import_runs", slug, path, ...) -> exit status and what it printed, as a shell would see them."""

    def run(name: str, *args) -> CommandResult:
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command(name, *map(str, args), stdout=out, stderr=err, no_color=True)
        except SystemExit as exc:
            return CommandResult(int(exc.code), out.getvalue(), err.getvalue())
        return CommandResult(0, out.getvalue(), err.getvalue())

    return run
