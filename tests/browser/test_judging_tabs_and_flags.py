"""Two tabs on one document, where "keep yours" must store exactly what this tab showed (issue: it took the
dimensions this tab had not touched from the other tab, stored relevance 0 with a quality, was refused, and stuck
on "Not saved" through reloads); and a flag or a note given before any label, which is a judgment of its own.

Set SCREENSHOTS to a folder to keep a screenshot of each state these tests change (tabs-*.png, flag-*.png).
"""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from assessments.models import Judgment, JudgmentEvent
from tests.browser.test_judging_safely import open_position, pressed, saved

pytestmark = pytest.mark.browser
SCREENSHOTS = os.environ.get("SCREENSHOTS")


def shoot(page, name):
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"))


def stored(entry):
    """(relevance, quality, stance, note, flagged) of the assessor's judgment of the entry, None or "" where empty."""
    judgment = Judgment.objects.filter(document=entry.document).first()
    if judgment is None:
        return None
    values = judgment.labels
    return values.get("relevance"), values.get("quality"), values.get("stance", ""), judgment.note, judgment.flagged


def history(entry):
    return list(JudgmentEvent.objects.filter(judgment__document=entry.document).order_by("revision").values_list("labels", "note", "flagged"))


def waiting(page):
    """The labels this browser keeps unsaved (static/annotation/saves.js), of every user."""
    return page.evaluate(
        "Object.keys(localStorage).filter((key) => key.startsWith('touchstone.pending'))"
        ".flatMap((key) => Object.values(JSON.parse(localStorage.getItem(key))))"
    )


def version(dialog, which):
    """The conflict dialog's column `which` ("saved" or "yours") as {row title: value shown}."""
    return dialog.locator(f"#conflict-{which}").evaluate(
        "(list) => Object.fromEntries([...list.querySelectorAll('dt')].map((t) => [t.textContent, t.nextElementSibling.textContent]))"
    )


def second_tab(page):
    tab = page.context.new_page()
    tab.errors = []
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    return tab


def relevance_0_in_a_tab_that_missed_2_and_high_quality(page, log_in, assignment, pool):
    """Both tabs open document 1 unjudged; tab B judges it 2 / high quality; tab A, still showing it unjudged, then
    says 0 (which asks no quality): its save meets B's and the page asks which to keep."""
    log_in(assignment.assessor)
    tab_a, tab_b = page, second_tab(page)
    open_position(tab_a, assignment, 1)
    open_position(tab_b, assignment, 1)
    tab_b.bring_to_front()
    tab_b.keyboard.press("2")
    tab_b.keyboard.press("e")
    saved(tab_b)
    assert stored(pool[0]) == (2, 2, "", "", False)
    tab_a.bring_to_front()
    tab_a.keyboard.press("0")
    conflict = tab_a.get_by_role("dialog", name="Saved elsewhere")
    expect(conflict).to_be_visible()
    return tab_a, tab_b, conflict


def test_keeping_yours_stores_relevance_0_without_the_quality_saved_elsewhere(page, log_in, assignment, pool):
    tab_a, tab_b, conflict = relevance_0_in_a_tab_that_missed_2_and_high_quality(page, log_in, assignment, pool)
    shoot(tab_a, "tabs-conflict")
    yours = version(conflict, "yours")
    assert (yours["Relevance"], yours["Argument quality"]) == ("0 · Not relevant", "—")
    assert version(conflict, "saved")["Argument quality"] == "2 · High quality"
    before = history(pool[0])

    tab_a.keyboard.press("b")  # keep yours
    expect(conflict).to_be_hidden()
    saved(tab_a)
    expect(tab_a.locator("#save-state")).to_have_text("Saved")
    shoot(tab_a, "tabs-kept-yours")
    expect(pressed(tab_a, "0")).to_have_attribute("aria-pressed", "true")
    expect(tab_a.locator('fieldset[data-dimension="quality"]')).to_be_hidden()
    assert stored(pool[0]) == (0, None, "", "", False)
    assert history(pool[0]) == [*before, ({"relevance": 0}, "", False)]

    tab_a.reload()  # nothing is left waiting in the browser that could say otherwise
    saved(tab_a)
    expect(tab_a.locator("#save-state")).to_have_text("Saved")
    expect(pressed(tab_a, "0")).to_have_attribute("aria-pressed", "true")
    expect(tab_a.locator("#save-banner")).to_be_hidden()
    assert waiting(tab_a) == []
    assert stored(pool[0]) == (0, None, "", "", False)
    assert tab_a.errors == tab_b.errors == []


def test_a_conflict_left_through_a_reload_still_offers_what_this_tab_showed(page, log_in, assignment, pool):
    tab_a, tab_b, conflict = relevance_0_in_a_tab_that_missed_2_and_high_quality(page, log_in, assignment, pool)
    tab_a.keyboard.press("Escape")  # decide later
    expect(conflict).to_be_hidden()
    tab_a.reload()
    expect(conflict).to_be_visible()
    yours = version(conflict, "yours")
    assert (yours["Relevance"], yours["Argument quality"]) == ("0 · Not relevant", "—")
    tab_a.keyboard.press("b")
    saved(tab_a)
    assert stored(pool[0]) == (0, None, "", "", False)
    tab_a.reload()
    saved(tab_a)
    expect(pressed(tab_a, "0")).to_have_attribute("aria-pressed", "true")
    assert waiting(tab_a) == []
    assert tab_a.errors == tab_b.errors == []


def test_keeping_yours_takes_no_label_note_or_flag_this_tab_did_not_show(page, log_in, assignment, pool):
    """Tab A saved relevant / medium quality with a note; tab B then made it highly relevant, pro cats, flagged, with
    its own note. A, still showing its version, changes the quality: keeping A's version keeps A's alone."""
    log_in(assignment.assessor)
    tab_a, tab_b = page, second_tab(page)
    open_position(tab_a, assignment, 1)
    for key in ("1", "w"):
        tab_a.keyboard.press(key)
    tab_a.keyboard.press("i")
    tab_a.keyboard.type("Mentions cats once.")
    tab_a.keyboard.press("Escape")
    saved(tab_a)
    assert stored(pool[0]) == (1, 1, "", "Mentions cats once.", False)

    open_position(tab_b, assignment, 1)
    for key in ("2", "f", "m"):
        tab_b.keyboard.press(key)
    tab_b.locator("#note").fill("Compares both pets clearly.")
    tab_b.keyboard.press("Escape")
    saved(tab_b)
    assert stored(pool[0]) == (2, 1, "FIRST", "Compares both pets clearly.", True)

    tab_a.bring_to_front()
    tab_a.keyboard.press("e")  # high quality, from A's view of relevance 1
    conflict = tab_a.get_by_role("dialog", name="Saved elsewhere")
    expect(conflict).to_be_visible()
    shoot(tab_a, "tabs-conflict-note-and-flag")
    assert version(conflict, "yours") == {
        "Relevance": "1 · Relevant", "Argument quality": "2 · High quality", "Stance towards the objects": "—",
        "Note": "Mentions cats once.", "Unsure": "no",
    }
    tab_a.keyboard.press("b")
    saved(tab_a)
    assert stored(pool[0]) == (1, 2, "", "Mentions cats once.", False)
    for key, shown in (("1", "true"), ("e", "true"), ("f", "false")):
        expect(pressed(tab_a, key)).to_have_attribute("aria-pressed", shown)
    expect(tab_a.locator(".flag-btn")).to_have_attribute("aria-pressed", "false")
    expect(tab_a.locator("#note")).to_have_value("Mentions cats once.")
    assert tab_a.errors == tab_b.errors == []


def test_a_flag_and_a_note_without_a_relevance_are_saved_and_stay_through_j_k_and_reload(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 2)
    page.keyboard.press("m")
    page.keyboard.press("i")
    page.keyboard.type("Cannot judge: the page is in Latin.")
    page.keyboard.press("Escape")
    status = page.locator("#save-state")
    expect(status).to_have_text("Saved, without relevance yet")
    expect(page.locator("#judged-count")).to_have_text("0")
    shoot(page, "flag-and-note-saved")
    flag_and_note = (None, None, "", "Cannot judge: the page is in Latin.", True)
    assert stored(pool[1]) == flag_and_note
    assert history(pool[1]) == [({}, "", True), ({}, "Cannot judge: the page is in Latin.", True)]

    def still_there():
        expect(page.locator("#pos")).to_have_text("2")
        expect(status).to_have_text("Saved, without relevance yet")
        expect(page.locator(".flag-btn")).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#note")).to_have_value("Cannot judge: the page is in Latin.")
        expect(page.locator("#judged-count")).to_have_text("0")

    page.keyboard.press("j")
    expect(page.locator("#pos")).to_have_text("3")
    expect(status).to_have_text("Not judged yet")
    page.keyboard.press("k")
    still_there()
    page.keyboard.press("k")
    expect(page.locator("#pos")).to_have_text("1")
    page.keyboard.press("j")
    still_there()
    page.reload()
    still_there()
    shoot(page, "flag-and-note-after-reload")
    assert stored(pool[1]) == flag_and_note and len(history(pool[1])) == 2
    assert stored(pool[0]) is None and stored(pool[2]) is None  # visiting judges nothing

    page.keyboard.press("1")  # the relevance comes later, beside the flag and the note; now the document counts
    expect(status).to_have_text("Saved")
    expect(page.locator("#judged-count")).to_have_text("1")
    assert stored(pool[1]) == (1, None, "", "Cannot judge: the page is in Latin.", True)
    assert page.errors == []


def test_a_note_typed_and_left_with_the_next_button_is_saved_alone(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    page.keyboard.press("i")
    page.keyboard.type("Only a login form.")  # no pause, no Esc: the Next button leaves at once
    page.get_by_role("button", name="Next").first.click()
    expect(page.locator("#pos")).to_have_text("2")
    page.wait_for_timeout(300)
    assert stored(pool[0]) == (None, None, "", "Only a login form.", False)
    page.keyboard.press("k")
    expect(page.locator("#note")).to_have_value("Only a login form.")
    expect(page.locator("#save-state")).to_have_text("Saved, without relevance yet")
    assert page.errors == []
