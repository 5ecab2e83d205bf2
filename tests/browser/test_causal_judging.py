"""Judging a causal topic (Touché 2023 Task 2) in a real browser: the direction asked stands above the document at
every size, and one key marks a document of the wrong direction off-topic: stored as {"direction": "WRONG"},
counted as judged, and the page then does what it does after any complete judgment (it stays on the document; the
assessor moves on with j or u).

Set SCREENSHOTS to a folder to keep a screenshot of the page at each width (causal-1440.png, causal-768.png,
causal-390.png).
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from assessments.models import Judgment
from tests.browser.conftest import PASSWORD
from tests.factories import AssignmentFactory, CampaignFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.browser

SCREENSHOTS = os.environ.get("SCREENSHOTS")
BODY = ("<p>Broccoli is rich in fibre, which usually eases constipation rather than causing it. Some people report "
        "bloating after eating a lot of raw broccoli.</p><p>Constipation itself does not make anyone eat broccoli.</p>")


@pytest.fixture
def causal(db):
    """Alice's main-phase assignment on a causal topic with three documents to judge."""
    campaign = CampaignFactory(slug="causal23", name="Touché 2023 Task 2", preset="touche-2023-task2", phase="main")
    topic = TopicFactory(
        campaign=campaign, number="7", title="Can eating broccoli lead to constipation?", compared_objects=[],
        cause="eating broccoli", effect="constipation",
        description="A user who eats a lot of broccoli wonders whether it is why they are constipated.",
        narrative="Relevant documents say whether eating broccoli causes constipation; documents about constipation "
        "leading to a diet of broccoli have the wrong direction and are off-topic.",
    )
    entries = [PoolEntryFactory(topic=topic, order=i, document__title=f"Broccoli and digestion ({i + 1})",
                                document__body=BODY, document__is_html=True) for i in range(3)]
    assignment = AssignmentFactory(topic=topic, assessor=UserFactory(username="alice"), phase="main")
    return assignment, entries


def stored(assignment) -> dict:
    return {j.document_id: j.labels for j in Judgment.objects.filter(assessor=assignment.assessor)}


def test_one_key_marks_the_wrong_direction_judged_and_the_page_behaves_as_after_any_complete_judgment(page, log_in, causal):
    assignment, entries = causal
    log_in(assignment.assessor)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))
    bar = page.locator("#causal-bar")
    expect(bar).to_be_visible()
    expect(bar.locator(".causal-direction")).to_have_text("Asked eating broccoli→constipation")
    # Only the direction is asked until it is answered.
    for dimension in ("relevance", "evidence", "stance"):
        expect(page.locator(f'fieldset[data-dimension="{dimension}"]')).to_be_hidden()

    # 1: one key, w.
    page.keyboard.press("w")
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(page.locator("#judged-count")).to_have_text("1")
    expect(page.locator('.label-btn[data-key="w"]')).to_have_attribute("aria-pressed", "true")
    assert page.url.endswith(f"/work/{assignment.pk}/1/")  # the page does not move on by itself
    assert stored(assignment) == {entries[0].document_id: {"direction": "WRONG"}}

    # 2: a complete judgment of the asked direction, for comparison: the page stays there as well.
    page.keyboard.press("j")
    page.wait_for_url(f"**/work/{assignment.pk}/2/")
    expect(page.locator("#causal-bar")).to_be_visible()  # the bar stays while documents are swapped in
    for key in ("c", "2", "d", "s"):
        page.keyboard.press(key)
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(page.locator("#judged-count")).to_have_text("2")
    assert page.url.endswith(f"/work/{assignment.pk}/2/")

    # ... and changed to the wrong direction with one key: what depended on the direction is cleared, with an undo.
    page.keyboard.press("w")
    expect(page.locator("#toast")).to_contain_text("cleared relevance, evidence and stance")
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(page.locator("#judged-count")).to_have_text("2")
    for dimension in ("relevance", "evidence", "stance"):
        expect(page.locator(f'fieldset[data-dimension="{dimension}"]')).to_be_hidden()
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")

    # Next unjudged goes to 3, the only one left, as after any judged document.
    page.keyboard.press("u")
    page.wait_for_url(f"**/work/{assignment.pk}/3/")
    assert stored(assignment) == {
        entries[0].document_id: {"direction": "WRONG"}, entries[1].document_id: {"direction": "WRONG"},
    }
    page.reload()
    expect(page.locator("#judged-count")).to_have_text("2")
    assert page.errors == []


SIZES = {1440: 900, 768: 1024, 390: 844}


@pytest.mark.parametrize("width", list(SIZES))
def test_cause_and_effect_show_above_the_document_at_every_size(browser, live_server, settings, causal, width):
    assignment, _ = causal
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    touch = width < 1100
    context = browser.new_context(viewport={"width": width, "height": SIZES[width]}, base_url=live_server.url,
                                  has_touch=touch, is_mobile=width < 700, device_scale_factor=2 if touch else 1)
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.goto("/accounts/login/")
        page.get_by_label("Username").focus()
        page.keyboard.type(assignment.assessor.username)
        page.keyboard.press("Tab")
        page.keyboard.type(PASSWORD)
        page.keyboard.press("Enter")
        page.wait_for_url("**/work/")
        page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))
        direction = page.locator("#causal-bar .causal-direction")
        expect(direction).to_be_visible()
        box, document = direction.bounding_box(), page.locator("#doc-scroll").bounding_box()
        assert box and document and box["y"] + box["height"] <= document["y"]  # above the document
        assert box["x"] >= 0 and box["x"] + box["width"] <= width  # whole on screen
        for chip in ("eating broccoli", "constipation"):
            expect(direction.get_by_text(chip, exact=True)).to_be_visible()
        # On a phone the first question's keys are the label bar at the bottom; wider, the bar names them too.
        expect(page.locator("#causal-bar .causal-check")).to_be_visible(visible=width >= 700)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if SCREENSHOTS:
            page.screenshot(path=str(Path(SCREENSHOTS) / f"causal-{width}.png"))
    finally:
        context.route("**/*", lambda route: route.abort())
        context.close()
