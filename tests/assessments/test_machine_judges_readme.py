"""The README's machine-judge block runs as written, on the 2022 Task 1 campaign the block before it makes."""

import io

import pytest
from django.core.management import call_command

from assessments.models import MachineLabel
from tests.foundation.test_readme import run_readme_block

pytestmark = pytest.mark.django_db


def test_every_line_of_the_machine_judge_block_runs(tmp_path, monkeypatch, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    for name, role in (("olivia", "organiser"), ("alice", "assessor"), ("bob", "assessor")):
        call_command("create_user", name, "--role", role, "--password", f"readme-machine-{name}-pass", stdout=io.StringIO())
    (tmp_path / "gists").mkdir()
    run_readme_block("### Touché 2022 Task 1: pairs of sentences", tmp_path / "gists", monkeypatch)
    outputs = [(line, out) for line, _, out, _ in run_readme_block("### Machine judges: a blind second opinion", tmp_path, monkeypatch)]

    labelled = MachineLabel.objects.filter(judge__name="local", status="ok")
    assert labelled.count() == 12 and "local: 12 labels, 0 failed calls" in outputs[0][1]
    assert "machine against human: Kendall's tau" in outputs[1][1] and "gistA" in outputs[1][1]
    hybrid = (tmp_path / "var" / "gists22-hybrid.qrels").read_text().splitlines()
    assert len(hybrid) == 14  # every pooled pair with a label (the imported ones, and none left for the machine)
    assert "estimate: 36 calls" in outputs[3][1]
    assert not MachineLabel.objects.filter(judge__name="gpt-4o-mini").exists()  # an estimate calls nothing
