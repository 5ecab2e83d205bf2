"""The README's Touché Task 3 block runs as written, from a clone with the real files beside it (../shared), after
the users the first block makes."""

import io

import pytest
from django.core.management import call_command

from tests.foundation.test_readme import run_readme_block

pytestmark = pytest.mark.django_db


def test_every_line_of_the_task3_block_runs(tmp_path, monkeypatch, settings, touche_data):
    settings.MEDIA_ROOT = tmp_path / "media"
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "touche").symlink_to(touche_data)
    (tmp_path / "clone").mkdir()
    for name, role in (("olivia", "organiser"), ("alice", "assessor")):
        call_command("create_user", name, "--role", role, "--password", f"readme-images-{name}-pass", stdout=io.StringIO())

    outputs = {args[0]: out for _, args, out, _ in run_readme_block(
        "### Touché Task 3: images for arguments", tmp_path / "clone", monkeypatch)}

    assert "50 images stored" in outputs["import_images"]
    assert "2 image runs stored (baseline, shuffled)" in outputs["import_runs"]
    assert "topicRelevanceP@10" in outputs["evaluate_runs"] and "baseline" in outputs["evaluate_runs"]
    assert (tmp_path / "clone" / "var" / "img23.qrels").exists()  # nothing judged yet: an empty file
