"""Judging images (Touché Task 3) in a real browser on the organisers' sample: the judge page shows the image large
with the pages it came from a key away, answers by keys (o on topic, p supports pro, c supports con, n off topic),
at desktop and phone widths; the grid judges a screenful by arrow keys and the same keys; the run browser shows a
run's two lists badged with the answers.

Set SCREENSHOTS to a folder to keep screenshots (image-, grid- and browser- at 1440, 768 and 390 px wide).
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import User
from assessments.models import Assignment, Campaign, Judgment, Membership, PoolEntry
from assessments.services.judging import Labels, record_judgment

pytestmark = pytest.mark.browser
SCREENSHOTS = os.environ.get("SCREENSHOTS")


def shot(page, name: str, width: int, height: int) -> None:
    if SCREENSHOTS:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True)


def stored(assignment, n: int) -> list[dict | None]:
    """The labels of the assignment's first `n` images, in the queue's order (None: not judged)."""
    entries = PoolEntry.objects.filter(topic=assignment.topic).order_by("order", "pk")[:n]
    labels = dict(Judgment.objects.filter(assessor=assignment.assessor, topic=assignment.topic).values_list("document_id", "labels"))
    return [labels.get(e.document_id) for e in entries]


def signed_in(log_in) -> tuple[User, Assignment]:
    """alice signed in through the login form, and her assignment of the first topic, which is open: the campaign is
    in its main phase."""
    Campaign.objects.filter(slug="img23").update(phase="main")
    alice = User.objects.get(username="alice")
    alice.set_password("correct horse battery staple")
    alice.save()
    log_in(alice)
    return alice, Assignment.objects.filter(assessor=alice).order_by("topic__number").first()


def test_an_image_is_judged_by_keys_beside_its_topic_with_its_pages_a_key_away(page, log_in, image_campaign):
    alice, assignment = signed_in(log_in)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))

    image = page.locator("#judge-image")
    expect(image).to_be_visible()
    assert page.evaluate("document.getElementById('judge-image').naturalWidth") > 0  # served and decoded
    expect(page.locator("#image-sources")).to_be_hidden()
    page.keyboard.press("s")
    expect(page.locator("#image-sources")).to_be_visible()
    expect(page.locator("#image-sources")).to_contain_text("Found by")
    for dimension in ("PRO", "CON"):
        expect(page.locator(f'fieldset[data-dimension="{dimension}"]')).to_be_hidden()

    page.keyboard.press("o")
    page.keyboard.press("p")
    expect(page.locator("#save-state")).to_have_text("Saved")
    shot(page, "image-1440.png", 1440, 900)
    shot(page, "image-768.png", 768, 1024)
    shot(page, "image-390.png", 390, 844)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.keyboard.press("j")
    page.wait_for_url(f"**/work/{assignment.pk}/2/")
    page.keyboard.press("n")  # off topic: nothing more is asked
    expect(page.locator("#save-state")).to_have_text("Saved")
    assert stored(assignment, 2) == [{"ONTOPIC": 1, "PRO": 1}, {"ONTOPIC": 0}]
    assert page.errors == []


def test_a_screenful_is_judged_in_the_grid_by_arrows_and_keys(page, log_in, image_campaign):
    alice, assignment = signed_in(log_in)
    page.get_by_role("link", name="Grid").first.click()
    page.wait_for_url(f"**/work/{assignment.pk}/grid/1/")
    cells = page.locator(".grid-cell")
    expect(cells.first).to_have_class("grid-cell selected")

    page.keyboard.press("c")  # supports con: on topic too
    expect(cells.nth(0).locator(".badge")).to_have_count(2)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("n")
    expect(cells.nth(1).locator(".badge")).to_have_text(["Off topic"])
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("n")  # changed: off topic clears the side
    expect(cells.nth(0).locator(".badge")).to_have_text(["Off topic"])  # the side went with it
    expect(page.locator("#grid-state")).to_have_text("Saved")
    expect(page.locator("#grid-judged")).to_have_text("2")
    shot(page, "grid-1440.png", 1440, 900)
    shot(page, "grid-768.png", 768, 1024)
    shot(page, "grid-390.png", 390, 844)
    assert stored(assignment, 2) == [{"ONTOPIC": 0}, {"ONTOPIC": 0}]
    first = PoolEntry.objects.filter(topic=assignment.topic).order_by("order", "pk").first()
    history = Judgment.objects.get(assessor=alice, topic=assignment.topic, document=first.document).events.order_by("revision")
    assert [e.labels for e in history] == [{"ONTOPIC": 1, "CON": 1}, {"ONTOPIC": 0}]
    assert page.errors == []


def test_the_run_browser_shows_a_runs_two_lists_with_their_answers(page, log_in, image_campaign):
    campaign, _ = image_campaign
    olivia = User.objects.create_user("olivia", password="correct horse battery staple", role="organiser")
    Membership.objects.create(campaign=campaign, user=olivia)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Password").fill("correct horse battery staple")
    page.keyboard.press("Enter")
    page.wait_for_url("**/campaigns/**")
    page.goto(reverse("assessments:run_browser", args=[campaign.slug]) + "?run=baseline&with=shuffled")
    expect(page.locator(".run-panel")).to_have_count(2)
    expect(page.locator(".stance-column h3").first).to_contain_text("PRO")
    expect(page.locator(".run-panel .badge.unjudged").first).to_be_visible()
    shot(page, "browser-1440.png", 1440, 900)
    shot(page, "browser-768.png", 768, 1024)
    page.keyboard.press("]")
    page.wait_for_url("**run=shuffled**")
    assert page.errors == []


def test_the_results_page_shows_the_three_measures_with_intervals_and_the_group(page, image_campaign):
    campaign, _ = image_campaign
    olivia = User.objects.create_user("olivia", password="correct horse battery staple", role="organiser")
    Membership.objects.create(campaign=campaign, user=olivia)
    alice = User.objects.get(username="alice")
    entries = PoolEntry.objects.filter(topic__campaign=campaign).select_related("topic", "document").order_by("pk")
    for i, entry in enumerate(entries[::2]):  # half judged, a third of those off topic
        labels = {"ONTOPIC": 0} if i % 3 == 0 else {"ONTOPIC": 1, "PRO": 1}
        record_judgment(topic=entry.topic, document=entry.document, assessor=alice, labels=Labels(labels), phase="main")
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Password").fill("correct horse battery staple")
    page.keyboard.press("Enter")
    page.wait_for_url("**/campaigns/**")
    page.goto(reverse("assessments:leaderboard", args=[campaign.slug]))
    expect(page.locator("table.leaderboard tbody tr")).to_have_count(2)
    expect(page.locator(".ci-bar").first).to_be_visible()
    expect(page.locator(".top-group").first).to_contain_text("≈ best")
    page.get_by_label("Sorted by").select_option("stanceRelevanceP@10")
    page.get_by_role("button", name="Update").click()
    page.wait_for_url("**measure=stanceRelevanceP%4010**")
    expect(page.locator("table.leaderboard thead")).to_contain_text("stanceRelevanceP@10")
    shot(page, "results-1440.png", 1440, 900)
    shot(page, "results-390.png", 390, 844)
    assert page.errors == []
