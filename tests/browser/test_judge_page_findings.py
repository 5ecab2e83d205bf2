"""What assessors met on the judge page in the audit of issue 23, each as the assessor sees it: the narrative out of
sight on a tablet, a stale undo, stance names cut short, a logout warning that counted tabs, no way on after the last
document, main-phase topics open before the main phase, and a closed training round called a closed campaign.

Set SCREENSHOTS to a folder to keep the judge page at 1440, 768 and 390 px (judge-1440.png, judge-768.png, …).
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from assessments.models import Assignment, Campaign, Judgment, Phase
from assessments.services.assignments import close_training_round
from assessments.services.campaigns import advance_phase
from assessments.services.judging import Labels, record_judgment
from tests.browser.test_judging_safely import open_position, pressed, saved
from tests.browser.test_judging_tabs_and_flags import second_tab
from tests.factories import AssignmentFactory, PoolEntryFactory, TopicFactory

pytestmark = pytest.mark.browser
SCREENSHOTS = os.environ.get("SCREENSHOTS")
SIZES = {1440: 900, 768: 1024, 390: 844}


def narrative(page):
    return page.locator("#topic-body .topic-text").last


def test_the_narrative_stays_above_the_document_on_a_tablet_and_opens_by_key_on_a_phone(page, log_in, assignment):
    log_in(assignment.assessor)
    toggle = page.locator(".panel-toggle")
    page.set_viewport_size({"width": 768, "height": 1024})
    open_position(page, assignment, 1)
    expect(narrative(page)).to_contain_text("Relevant documents compare cats and dogs.")
    expect(narrative(page)).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    text, document = narrative(page).bounding_box(), page.locator("#doc-scroll").bounding_box()
    assert text["y"] + text["height"] <= document["y"] and document["height"] >= 500, (text, document)
    page.keyboard.press("b")  # folded for more of the document, and back
    expect(narrative(page)).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("b")
    expect(narrative(page)).to_be_visible()

    page.set_viewport_size({"width": 390, "height": 844})
    open_position(page, assignment, 1)
    expect(narrative(page)).to_be_hidden()
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.keyboard.press("b")
    expect(narrative(page)).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    toggle.click()
    expect(narrative(page)).to_be_hidden()
    assert page.errors == []


def test_a_toast_leaves_nothing_behind_and_offers_no_undo_once_there_is_nothing_to_undo(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    toast, undo = page.locator("#toast"), page.locator("#toast-action")
    for key in ("1", "w", "n"):
        page.keyboard.press(key)
    page.keyboard.press("0")
    expect(toast).to_contain_text("cleared quality and stance")
    expect(undo).to_be_visible()
    page.keyboard.press("2")  # a change after the clearing: z would now say "Nothing to undo"
    expect(undo).to_be_hidden()
    expect(toast).to_be_hidden()
    page.keyboard.press("z")
    expect(toast).to_contain_text("Nothing to undo")
    expect(undo).to_be_hidden()
    expect(toast).to_be_hidden(timeout=6000)  # then gone: not drawn as an empty pill
    assert toast.bounding_box() is None and undo.bounding_box() is None
    assert page.errors == []


@pytest.mark.parametrize("width", SIZES)
def test_stance_names_show_whole_at_every_width(page, log_in, assignment, width):
    topic = assignment.topic
    topic.title, topic.compared_objects = "Which is better, JavaScript or CoffeeScript?", ["JavaScript", "CoffeeScript"]
    topic.save()
    page.set_viewport_size({"width": width, "height": SIZES[width]})
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    page.keyboard.press("2")  # the stance is asked of a relevant document
    saved(page)
    names = page.locator('.label-btn[data-dimension="stance"] span')
    expect(names).to_have_text(["Pro first object", "Pro second object", "Neutral", "No stance"])  # the scheme's names
    expect(page.locator('.label-btn[data-dimension="stance"] .object')).to_have_text(["JavaScript", "CoffeeScript"])
    cut = names.evaluate_all("""(spans) => spans.filter((s) => s.scrollWidth > s.clientWidth + 1 || s.scrollHeight > s.clientHeight + 1
        || s.parentElement.scrollHeight > s.parentElement.clientHeight + 1).map((s) => s.textContent)""")
    assert cut == [], (width, cut)
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=Path(SCREENSHOTS) / f"judge-{width}.png")
    assert page.errors == []


def test_the_logout_warning_counts_documents_not_the_tabs_that_hold_their_labels(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    page.context.route("**/judgment/", lambda route: route.abort("internetdisconnected"))
    open_position(page, assignment, 1)
    page.keyboard.press("2")
    other = second_tab(page)
    open_position(other, assignment, 1)
    other.keyboard.press("1")  # the same document, from a tab of its own: two waiting saves, one document
    expect(other.locator("#save-banner")).to_contain_text("Labels of 1 document not saved yet")
    page.get_by_role("button", name="Log out").click()
    warning = page.get_by_role("dialog", name="Labels not saved")
    expect(warning).to_contain_text("Labels of 1 document are not saved: no connection to the server.")
    assert page.errors == [] and other.errors == []


def test_the_last_document_judged_links_to_the_next_topic_with_work_left(page, log_in, assignment, pool, campaign):
    alice = assignment.assessor
    waiting = TopicFactory(campaign=campaign, number="5", title="Which is tastier, tea or coffee?")
    PoolEntryFactory(topic=waiting)
    AssignmentFactory(topic=waiting, assessor=alice, phase="main")  # skipped: the main phase has not started
    second = TopicFactory(campaign=campaign, number="2", title="Which is faster, trains or planes?", is_training=True)
    PoolEntryFactory(topic=second)
    next_assignment = AssignmentFactory(topic=second, assessor=alice, phase="training")
    log_in(alice)
    done = page.locator("#topic-done")
    open_position(page, assignment, 1)
    for position in (1, 2, 3):
        expect(done).to_be_hidden()
        page.keyboard.press("0")
        saved(page)
        if position < 3:
            page.keyboard.press("j")
            expect(page.locator("#pos")).to_have_text(str(position + 1))
    expect(done).to_contain_text("Every document of this topic is judged.")
    link = done.get_by_role("link", name="Next topic: 2 · Which is faster, trains or planes?")
    link.click()
    page.wait_for_url("**" + reverse("annotation:judge", args=[next_assignment.pk, 1]))
    page.keyboard.press("0")
    saved(page)
    done.get_by_role("link", name="Back to My work").click()
    page.wait_for_url("**" + reverse("annotation:my_work"))
    assert Judgment.objects.filter(assessor=alice).count() == 4
    assert page.errors == []


def test_a_main_phase_topic_opens_only_once_the_main_phase_starts(page, log_in, assignment, pool, campaign):
    alice = assignment.assessor
    topic = TopicFactory(campaign=campaign, number="7", title="Which is faster, trains or planes?")
    entry = PoolEntryFactory(topic=topic)
    main = AssignmentFactory(topic=topic, assessor=alice, phase="main")
    log_in(alice)
    judge_page = reverse("annotation:judge", args=[main.pk, 1])
    save = reverse("work-judgment", args=[main.pk, entry.pk])
    token = page.context.cookies()
    csrf = next(c["value"] for c in token if c["name"] == "csrftoken")
    for phase in (Phase.SETUP, Phase.TRAINING):
        if phase == Phase.TRAINING:
            advance_phase(campaign=campaign, to=Phase.TRAINING, by=None)
        page.goto(reverse("annotation:my_work"))
        row = page.locator(".work-item", has_text="trains or planes")
        expect(row).to_contain_text("Opens when the main phase starts")
        expect(row.get_by_role("link")).to_have_count(0)
        refused = page.goto(judge_page)
        assert refused.status == 403
        expect(page.locator("h1")).to_have_text("Topic 7 opens with the main phase")
        expect(page.locator("main")).to_contain_text(f"is in {phase.label.lower()}")
        answer = page.request.patch(save, data={"labels": {"relevance": 2}}, headers={"X-CSRFToken": csrf})
        assert answer.status == 409 and answer.json()["code"] == "not_started", answer.text()
        # The training topic is judged meanwhile, in setup and in training alike.
        open_position(page, assignment, 1)
        page.keyboard.press("1" if phase == Phase.SETUP else "2")
        saved(page)
    assert not Judgment.objects.filter(topic=topic).exists()
    assert Judgment.objects.get(topic=assignment.topic).labels == {"relevance": 2}

    close_training_round(campaign=campaign, then="main", by=None)
    page.goto(reverse("annotation:my_work"))
    page.locator(".work-item", has_text="trains or planes").get_by_role("link", name="Start").click()
    page.wait_for_url("**" + judge_page)
    page.keyboard.press("2")
    saved(page)
    assert Judgment.objects.get(topic=topic).labels == {"relevance": 2}
    assert page.errors == []


def test_a_closed_training_round_says_so_and_its_buttons_look_disabled(page, log_in, assignment, pool, campaign):
    record_judgment(topic=assignment.topic, document=pool[0].document, assessor=assignment.assessor, phase="training",
                    labels=Labels({"relevance": 1}))
    advance_phase(campaign=campaign, to=Phase.TRAINING, by=None)
    close_training_round(campaign=campaign, then="main", by=None)
    assert not Assignment.objects.get(pk=assignment.pk).active and Campaign.objects.get(pk=campaign.pk).phase == Phase.MAIN
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    expect(page.locator(".closed-note")).to_have_text(
        "This training round is closed: read your labels and the organisers' replies; they can no longer be changed.")
    page.keyboard.press("2")
    expect(page.locator("#toast")).to_contain_text("This training round is closed")
    expect(page.locator("#toast")).not_to_contain_text("campaign")
    chosen, other = pressed(page, "1"), pressed(page, "2")
    expect(chosen).to_have_attribute("aria-pressed", "true")
    expect(other).to_be_disabled()
    look = "(b) => { const s = getComputedStyle(b); return [s.cursor, s.borderTopStyle, s.backgroundColor, s.color]; }"
    enabled = page.locator('[data-action="next"]')
    expect(enabled).to_be_enabled()
    assert other.evaluate(look)[:2] == ["not-allowed", "dashed"]
    assert other.evaluate(look)[2:] != enabled.evaluate(look)[2:]  # greyed, unlike a button that works
    assert Judgment.objects.get().labels == {"relevance": 1}
    assert page.errors == []
