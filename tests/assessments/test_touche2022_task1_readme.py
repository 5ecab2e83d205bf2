"""The README's Touché 2022 Task 1 block runs as written, after the users the block before it makes."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.foundation.test_readme import run_readme_block

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
HEADING = "### Touché 2022 Task 1: pairs of sentences"


def test_every_line_of_the_2022_task1_block_runs(tmp_path, monkeypatch, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    for name, role in (("olivia", "organiser"), ("alice", "assessor"), ("bob", "assessor")):  # the block above's users
        call_command("create_user", name, "--role", role, "--password", f"readme-2022-{name}-pass", stdout=io.StringIO())

    outputs = [(line, out, err) for line, _, out, err in run_readme_block(HEADING, tmp_path, monkeypatch)]

    build = next(o for o in outputs if " build_pool " in o[0])
    assert "warning: pair Sdeadbeef-A0000000f__PREMISE__1,Sb5e6f7a8-A00000003__CONC__1" in build[2]
    files = [tmp_path / "var" / "gists22" / f"gists22-{kind}.qrels" for kind in ("relevance", "quality", "coherence")]
    shipped = [ROOT / "tests" / "data" / "touche2022-task1" / f"qrels-{kind}.txt" for kind in ("relevance", "quality", "coherence")]
    # The aligned export gives back the three files the labels came from, byte for byte.
    assert [f.read_bytes() for f in files] == [f.read_bytes() for f in shipped]
    evaluation = outputs[-1][1]
    assert "gistA" in evaluation and "gistB" in evaluation and "coherence nDCG@5" in evaluation
