"""The README's Touché 2022 Task 1 block runs as written: each line is the command it shows, run in order (in this
process, on the suite's database) after the users the block before it makes, from a folder where the block's
relative paths lead to the repository's files, its glob expanded as a shell would."""

import glob
import io
import shlex
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.foundation.test_readme import readme_block

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
HEADING = "### Touché 2022 Task 1: pairs of sentences"
PREFIX = ".venv/bin/touchstone "


def test_every_line_of_the_2022_task1_block_runs(tmp_path, monkeypatch, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    lines = readme_block(HEADING)
    assert lines and all(line.startswith(PREFIX) for line in lines)
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    for name, role in (("olivia", "organiser"), ("alice", "assessor"), ("bob", "assessor")):  # the block above's users
        call_command("create_user", name, "--role", role, "--password", f"readme-2022-{name}-pass", stdout=io.StringIO())

    outputs = []
    for line in lines:
        words = shlex.split(line[len(PREFIX):], comments=True)
        args = [match for word in words for match in (sorted(glob.glob(word)) if "*" in word else [word])]
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command(*args, stdout=out, stderr=err)
        except SystemExit as exc:
            pytest.fail(f"{line!r} exited with {exc.code}: {err.getvalue()}")
        outputs.append((line, out.getvalue(), err.getvalue()))

    build = next(o for o in outputs if " build_pool " in o[0])
    assert "warning: pair Sdeadbeef-A0000000f__PREMISE__1,Sb5e6f7a8-A00000003__CONC__1" in build[2]
    files = [tmp_path / "var" / "gists22" / f"gists22-{kind}.qrels" for kind in ("relevance", "quality", "coherence")]
    shipped = [ROOT / "tests" / "data" / "touche2022-task1" / f"qrels-{kind}.txt" for kind in ("relevance", "quality", "coherence")]
    # The aligned export gives back the three files the labels came from, byte for byte.
    assert [f.read_bytes() for f in files] == [f.read_bytes() for f in shipped]
    evaluation = outputs[-1][1]
    assert "gistA" in evaluation and "gistB" in evaluation and "coherence nDCG@5" in evaluation
