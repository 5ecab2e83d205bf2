"""A discussion round trip in a real browser: an assessor flags a training document and leaves a note, the round
closes, an organiser replies on the discussion page, and the assessor reads the reply on that document's page."""

import os

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from assessments.models import Assignment, Judgment
from assessments.services import assignments, campaigns
from tests.browser.conftest import PASSWORD

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("TOUCHSTONE_SCREENSHOTS")  # a folder: the pages are saved there to be looked at


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def test_a_note_and_a_flag_are_discussed_and_the_reply_reaches_the_assessor(page, log_in, campaign, alice, organiser, admin_user, pool):
    campaigns.advance_phase(campaign=campaign, to="training", by=admin_user)
    assignment = Assignment.objects.get(assessor=alice)
    log_in(alice)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))
    page.keyboard.press("1")
    page.keyboard.press("m")  # flag: unsure
    page.keyboard.press("i")
    page.keyboard.type("Only half of it is about pets.")
    page.keyboard.press("Escape")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")
    judgment = Judgment.objects.get(assessor=alice)
    assert judgment.flagged and judgment.note == "Only half of it is about pets."

    assignments.close_training_round(campaign=campaign, then="main", by=admin_user)
    page.context.clear_cookies()
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(organiser.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url("**/campaigns/")  # organisers land on their campaigns
    page.goto(reverse("assessments:discussion", args=[campaign.slug]))
    row = page.locator(f"#judgment-{judgment.pk}")
    expect(row).to_contain_text("Only half of it is about pets.")
    expect(row).to_contain_text("flagged")
    row.get_by_role("textbox").fill("Judge the whole page: half about pets is still relevant (1).")
    row.get_by_role("button", name="Reply").click()
    expect(page.locator(f"#judgment-{judgment.pk}")).to_contain_text("half about pets is still relevant")
    shot(page, "discussion")

    page.context.clear_cookies()
    log_in(alice)
    expect(page.get_by_role("heading", name="Replies from the organisers")).to_be_visible()
    page.get_by_role("link", name="Open").click()
    page.wait_for_url(f"**/work/{assignment.pk}/1/")
    expect(page.locator(".replies")).to_contain_text("Judge the whole page: half about pets is still relevant (1).")
    expect(page.locator(".label-pane")).to_contain_text("This training round is closed")
    shot(page, "judge-reply")
    assert page.errors == []
