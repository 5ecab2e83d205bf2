"""Judging a Touché 2022 Task 1 pair of sentences in a real browser: the campaign made from the command line as the
README shows (tests/data/touche2022-task1), the pair shown as its two sentences in the run's order with each
argument's conclusion, and relevance, quality and coherence judged by keys alone; a pair judged not relevant has
quality and coherence hidden and cleared.

Set SCREENSHOTS to a folder to keep a screenshot of the page (pair-1440.png).
"""

import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import User
from assessments.models import Assignment, Campaign, Judgment, PoolEntry

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "data" / "touche2022-task1"
SCREENSHOTS = os.environ.get("SCREENSHOTS")
ARGUMENT = "Sa1b2c3d4-A00000001"
FIRST, SECOND = f"{ARGUMENT}__PREMISE__3", f"{ARGUMENT}__CONC__1"  # gistA submitted the premise first


@pytest.fixture
def gists(db):
    def command(*args: str) -> None:
        call_command(*args, stdout=io.StringIO(), stderr=io.StringIO())

    command("create_user", "alice", "--role", "assessor", "--password", "correct horse battery staple")
    command("create_campaign", "gists22", "--name", "Touché 2022 Task 1", "--preset", "touche-2022-task1")
    command("import_documents", "gists22", str(DATA / "args_processed.csv"))
    command("import_topics", "gists22", str(DATA / "topics.tsv"))
    command("import_runs", "gists22", str(DATA / "touche22-gistA.txt"), str(DATA / "touche22-gistB.txt"))
    command("build_pool", "gists22", "--depth", "5")
    command("assign_topics", "gists22", "--auto", "--assessors", "alice")
    Campaign.objects.filter(slug="gists22").update(phase="main")  # main-phase topics open with the main phase
    assignment = Assignment.objects.get(topic__campaign__slug="gists22", topic__number="1")
    entries = list(PoolEntry.objects.filter(topic=assignment.topic, duplicate_of__isnull=True).order_by("order")
                   .select_related("document"))
    return assignment, entries


def test_a_pair_is_judged_on_three_dimensions_by_keys_beside_its_two_sentences(page, log_in, gists):
    assignment, entries = gists
    position = next(i for i, e in enumerate(entries, 1) if e.document.doc_id == f"{FIRST},{SECOND}")
    log_in(User.objects.get(username="alice"))
    page.goto(reverse("annotation:judge", args=[assignment.pk, position]))

    document = page.locator("#doc-rich")
    text = document.inner_text()
    premise, conclusion = "A uniform makes it plain who belongs on the school grounds.", "School uniforms should be mandatory."
    assert premise in text and conclusion in text and text.index(premise) < text.index(conclusion)  # the run's order
    assert "Conclusion of its argument: School uniforms should be mandatory" in text
    for dimension in ("quality", "coherence"):  # asked of relevant pairs only
        expect(page.locator(f'fieldset[data-dimension="{dimension}"]')).to_be_hidden()

    for key in ("2", "w", "d"):  # highly relevant, average quality, coherent
        page.keyboard.press(key)
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(page.locator('.label-btn[data-key="d"]')).to_have_attribute("aria-pressed", "true")
    if SCREENSHOTS:
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=str(Path(SCREENSHOTS) / "pair-1440.png"), full_page=True)
    judgment = Judgment.objects.get(assessor=assignment.assessor, document=entries[position - 1].document)
    assert judgment.labels == {"relevance": 2, "quality": 1, "coherence": 2}

    # Not relevant after all: quality and coherence are hidden and cleared, with an undo.
    page.keyboard.press("0")
    expect(page.locator("#toast")).to_contain_text("cleared")
    expect(page.locator("#save-state")).to_have_text("Saved")
    for dimension in ("quality", "coherence"):
        expect(page.locator(f'fieldset[data-dimension="{dimension}"]')).to_be_hidden()
    judgment.refresh_from_db()
    assert judgment.labels == {"relevance": 0}
    page.keyboard.press("z")
    expect(page.locator('fieldset[data-dimension="coherence"]')).to_be_visible()
    expect(page.locator("#save-state")).to_have_text("Saved")
    judgment.refresh_from_db()
    assert judgment.labels == {"relevance": 2, "quality": 1, "coherence": 2}
    # Every state is in the history (keys pressed in quick succession may be saved together).
    full = {"relevance": 2, "quality": 1, "coherence": 2}
    assert [e.labels for e in judgment.events.order_by("revision")][-3:] == [full, {"relevance": 0}, full]
    assert page.errors == []
