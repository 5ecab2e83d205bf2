"""The judge page driven by a campaign's own scheme, in a real browser and with the keys alone.

The campaign is created from tests/data/schemes/four-dimensions.json: ONTOPIC (a yes/no question, y/n), usefulness
(graded 0–2, asked when ONTOPIC ≥ 1), side (a category, p/c, asked when usefulness ≥ 1) and persuasive (a question,
v/b, asked when side is PRO). What each key stores is read back from the database once the page says "Saved".
"""

import json
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from assessments.labels import LabelScheme
from assessments.models import Judgment, JudgmentEvent, Phase
from assessments.services.campaigns import create_campaign
from tests.factories import AssignmentFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.browser

SCHEME_FILE = Path(__file__).resolve().parents[1] / "data" / "schemes" / "four-dimensions.json"
DIMENSIONS = ("ONTOPIC", "usefulness", "side", "persuasive")
KEYS = {"ONTOPIC": "yn", "usefulness": "012", "side": "pc", "persuasive": "vb"}
SIZES = {1440: 900, 768: 1024, 390: 844}
FULL = {"ONTOPIC": 1, "usefulness": 2, "side": "PRO", "persuasive": 1}


@pytest.fixture
def assignment(db):
    """alice's main-phase assignment: one topic of three pooled documents, in a campaign made from the scheme file."""
    scheme = LabelScheme.from_json(json.loads(SCHEME_FILE.read_text()))
    campaign = create_campaign(slug="four", name="Four dimensions", scheme=scheme)
    campaign.phase = Phase.MAIN
    campaign.save(update_fields=["phase"])
    topic = TopicFactory(campaign=campaign, number="1", title="Should zoos be banned?", compared_objects=[],
                         description="A user wants arguments for and against zoos.")
    for i in range(3):
        PoolEntryFactory(topic=topic, order=i)
    return AssignmentFactory(topic=topic, assessor=UserFactory(username="alice"), phase="main")


def open_first(page, log_in, assignment):
    log_in(assignment.assessor)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))
    expect(page.locator("#save-state")).to_have_text("Not judged yet")


def press(page, key, status="Saved"):
    """One key, then wait until the page says its change is stored (`status`: what the page says then)."""
    page.keyboard.press(key)
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")
    expect(page.locator("#save-state")).to_have_text(status)


def stored():
    """The labels of the one judgment there is (the document on screen's)."""
    return Judgment.objects.get().labels


def shown(page):
    """The dimensions whose fieldsets the page shows, and whether each of their buttons is visible with them."""
    visible = []
    for name in DIMENSIONS:
        fieldset = page.locator(f'fieldset[data-dimension="{name}"]')
        buttons = [page.locator(f'.label-btn[data-key="{key}"]') for key in KEYS[name]]
        if fieldset.is_visible():
            assert all(button.is_visible() for button in buttons), name
            visible.append(name)
        else:
            assert not any(button.is_visible() for button in buttons), name
    return visible


def pressed(page):
    return sorted(page.locator('.label-btn[aria-pressed="true"]').evaluate_all("buttons => buttons.map((b) => b.dataset.key)"))


def test_four_dimensions_judged_cleared_and_restored_with_the_keys_alone(page, log_in, assignment):
    open_first(page, log_in, assignment)
    assert shown(page) == ["ONTOPIC"]

    # y, 2, p, v: each dimension appears once the one it depends on allows it, and each key is stored.
    for key, labels, visible, status in [
        ("y", {"ONTOPIC": 1}, ["ONTOPIC", "usefulness"], "Saved, without usefulness yet"),  # required once on topic
        ("2", {"ONTOPIC": 1, "usefulness": 2}, ["ONTOPIC", "usefulness", "side"], "Saved"),
        ("p", {"ONTOPIC": 1, "usefulness": 2, "side": "PRO"}, list(DIMENSIONS), "Saved"),
        ("v", FULL, list(DIMENSIONS), "Saved"),
    ]:
        press(page, key, status)
        assert stored() == labels, key
        assert shown(page) == visible, key
    assert pressed(page) == ["2", "p", "v", "y"]
    expect(page.locator("#judged-count")).to_have_text("1")

    # c: persuasive is asked only of PRO, so it goes, on the page and in the database.
    toast = page.locator("#toast")
    press(page, "c")
    expect(toast).to_contain_text("cleared persuasive")
    assert stored() == {"ONTOPIC": 1, "usefulness": 2, "side": "CON"}
    assert shown(page) == ["ONTOPIC", "usefulness", "side"]
    assert pressed(page) == ["2", "c", "y"]

    # n: off topic clears usefulness and side (and nothing is left of persuasive), with a toast that offers z.
    press(page, "n")
    expect(toast).to_contain_text("cleared usefulness and side")
    expect(page.locator("#toast-action")).to_contain_text("z")
    assert stored() == {"ONTOPIC": 0}
    assert shown(page) == ["ONTOPIC"]
    assert pressed(page) == ["n"]
    expect(page.locator("#judged-count")).to_have_text("1")  # ONTOPIC alone is a whole judgment when it is "no"

    # z brings back what n cleared, and it is stored again.
    press(page, "z")
    expect(page.locator("#toast-text")).to_have_text("ONTOPIC, usefulness and side are back.")  # n changed ONTOPIC too
    assert stored() == {"ONTOPIC": 1, "usefulness": 2, "side": "CON"}
    assert shown(page) == ["ONTOPIC", "usefulness", "side"]
    assert pressed(page) == ["2", "c", "y"]

    # A key of a dimension not asked changes nothing: v says why instead of storing persuasive.
    revision = Judgment.objects.get().revision
    page.keyboard.press("v")
    expect(toast).to_contain_text("asked only when side is Pro")
    expect(page.locator("#save-state")).to_have_text("Saved")
    assert (stored(), Judgment.objects.get().revision) == (
        {"ONTOPIC": 1, "usefulness": 2, "side": "CON"}, revision)

    # The history has one revision per key that changed something, the clearing and its undoing among them.
    assert list(JudgmentEvent.objects.order_by("revision").values_list("labels", flat=True)) == [
        {"ONTOPIC": 1}, {"ONTOPIC": 1, "usefulness": 2}, {"ONTOPIC": 1, "usefulness": 2, "side": "PRO"}, FULL,
        {"ONTOPIC": 1, "usefulness": 2, "side": "CON"}, {"ONTOPIC": 0}, {"ONTOPIC": 1, "usefulness": 2, "side": "CON"},
    ]

    # After a reload the page shows what was stored.
    page.reload()
    expect(page.locator("#save-state")).to_have_text("Saved")
    assert shown(page) == ["ONTOPIC", "usefulness", "side"]
    assert pressed(page) == ["2", "c", "y"]
    assert page.errors == []


@pytest.mark.parametrize("width", list(SIZES))
def test_the_four_dimensions_fit_at_each_width(page, log_in, assignment, width):
    """Screenshots at a desktop, a tablet and a phone width (/tmp/custom-<width>.png with all four dimensions
    asked, /tmp/custom-<width>-off-topic.png with ONTOPIC no); nothing runs off the screen sideways."""
    page.set_viewport_size({"width": width, "height": SIZES[width]})
    open_first(page, log_in, assignment)
    for key, status in (("y", "Saved, without usefulness yet"), ("2", "Saved"), ("p", "Saved"), ("v", "Saved")):
        press(page, key, status)
    assert stored() == FULL
    assert shown(page) == list(DIMENSIONS)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.screenshot(path=f"/tmp/custom-{width}.png", full_page=True)
    for key in ("y", "0", "1", "2", "p", "c", "v", "b", "n"):  # every label button is on the screen, within its width
        box = page.locator(f'.label-btn[data-key="{key}"]').bounding_box()
        assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= width, (key, box)

    press(page, "n")
    assert stored() == {"ONTOPIC": 0}
    assert shown(page) == ["ONTOPIC"]
    page.screenshot(path=f"/tmp/custom-{width}-off-topic.png", full_page=True)
    assert page.errors == []


def test_no_button_shows_a_key_that_a_label_of_the_scheme_took(page, log_in, assignment):
    open_first(page, log_in, assignment)
    label_keys = {key for keys in KEYS.values() for key in keys}
    caps = page.locator(".label-pane button:not(.label-btn) kbd.key").all_inner_texts()
    assert label_keys.isdisjoint(caps), caps
