"""The README's Touché 2023 Task 4 block runs as written, after the organiser the first block makes."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from assessments.formats.cofe import parse_comments
from tests.foundation.test_readme import run_readme_block

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def test_every_line_of_the_task4_block_runs(tmp_path, monkeypatch):
    call_command("create_user", "olivia", "--role", "organiser", "--password", "readme-cofe-olivia-pass", stdout=io.StringIO())

    outputs = {args[0]: out for _, args, out, _ in run_readme_block(
        "### Touché 2023 Task 4: the stance of comments, in many languages", tmp_path, monkeypatch
    )}

    assert "12 prior labels as cofe-gold" in outputs["import_items"]
    assert "greta" in outputs["assign_items"] and "hugo" in outputs["assign_items"]
    board = outputs["evaluate_runs"]
    assert "run-mostly-right" in board and "run-always-in-favor" in board and "de" in board
    gold = parse_comments((tmp_path / "var" / "cofe23-gold.tsv").read_bytes(), source="gold")
    labelled = parse_comments((ROOT / "tests" / "data" / "cofe-example" / "labelled.tsv").read_bytes(), source="labelled")
    assert [(c.id, c.text, c.label) for c in gold] == [(c.id, c.text, c.label) for c in labelled]
