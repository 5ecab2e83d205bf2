"""Labelling a classification campaign's comments (Touché 2023 Task 4) in a real browser: the lab's toy comments
imported as items beside their proposal, given to a coder by the languages she reads, each comment labelled by one
key (f, a, o) with its language shown, and the proposal switched between as written and English with e.

Set SCREENSHOTS to a folder to keep screenshots (items-1440.png, items-768.png, items-390.png).
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import User
from assessments.models import Assignment, Campaign, Judgment

pytestmark = pytest.mark.browser
SCREENSHOTS = os.environ.get("SCREENSHOTS")

PROPOSALS = (
    "id\ttitle\tproposal\tproposal_en\ttitle_en\tTopic\tlan\tendorsements\n"
    "224\tMehr Demokratie wagen\tDie Bürger sollen direkt über EU-Gesetze abstimmen können.\t"
    "Citizens should be able to vote directly on EU laws.\tDare more democracy\tDemocracy\tde\t3\n"
)


@pytest.fixture
def items(db, command, touche_data, tmp_path):
    (tmp_path / "proposals.tsv").write_text(PROPOSALS, encoding="utf-8")
    command("create_campaign", "cofe23", "--name", "CoFE stance", "--preset", "touche-2023-task4")
    done = command("import_items", "cofe23", touche_data / "2023-task4-toy" / "toy-input" / "data.tsv",
                   "--proposals", tmp_path / "proposals.tsv")
    assert done.code == 0, done.err
    command("create_user", "greta", "--role", "assessor", "--password", "correct horse battery staple", "--languages", "de")
    given = command("assign_items", "cofe23", "--coders", "greta")
    assert "6 items given (greta 6)" in given.out and "no coder reads these (items given to nobody): en 2, es 1, fr 1" in given.out
    Campaign.objects.filter(slug="cofe23").update(phase="main")  # the items open with the main phase
    return Assignment.objects.get(assessor__username="greta", topic__number="224")


def test_comments_are_labelled_by_one_key_each_beside_their_proposal_in_either_language(page, log_in, items):
    log_in(User.objects.get(username="greta"))
    expect(page.locator("main")).to_contain_text("comments in your languages")
    page.goto(reverse("annotation:judge", args=[items.pk, 1]))

    expect(page.locator(".doc-meta .chip.lang")).to_have_text("DE")
    expect(page.locator("#proposal-original")).to_contain_text("Die Bürger sollen direkt")
    expect(page.locator("#proposal-english")).to_be_hidden()
    page.keyboard.press("e")
    expect(page.locator("#proposal-english")).to_contain_text("Citizens should be able to vote directly on EU laws.")
    expect(page.locator("#proposal-original")).to_be_hidden()

    for position, key in enumerate("fao", 1):
        page.keyboard.press(key)
        expect(page.locator("#save-state")).to_have_text("Saved")
        expect(page.locator("#judged-count")).to_have_text(str(position))
        if position < 3:
            page.keyboard.press("j")
            page.wait_for_url(f"**/work/{items.pk}/{position + 1}/")
    # The proposal stayed in English while the comments beside it changed.
    expect(page.locator("#proposal-english")).to_be_visible()
    if SCREENSHOTS:
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=str(Path(SCREENSHOTS) / "items-1440.png"), full_page=True)
        page.set_viewport_size({"width": 768, "height": 1024})
        page.screenshot(path=str(Path(SCREENSHOTS) / "items-768.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(Path(SCREENSHOTS) / "items-390.png"), full_page=True)

    stored = [j.labels for j in Judgment.objects.filter(assessor__username="greta").order_by("document__pool_entries__order")]
    assert stored == [{"stance": "In favor"}, {"stance": "Against"}, {"stance": "Other"}]
    assert page.errors == []
