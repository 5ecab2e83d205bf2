"""The labelling page's guarantees on an item (a comment of a classification campaign, Touché 2023 Task 4), as
test_judging_safely and test_judge_page give them for a pooled document: two tabs on one comment (the stale one
gets the conflict dialog, and "keep yours" stores exactly what it showed), labels given offline (kept in the
browser, saved once the server answers again, none lost), `z` (it brings back only what a change cleared, and a
stance change clears nothing), keys typed faster than comments load, and a 390 px phone (the comment and the
proposal readable, the keys' buttons on screen, nothing wider than the screen).

Set SCREENSHOTS to a folder to keep screenshots (item-conflict.png, item-offline.png, item-390*.png).
"""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from accounts.models import User
from assessments.models import Judgment, JudgmentEvent
from assessments.selectors.queues import assignment_queue
from tests.browser.test_item_labelling import items  # noqa: F401  (the fixture: greta's German comments of proposal 224)
from tests.browser.test_judging_safely import open_position, pending_keys, pressed, saved
from tests.browser.test_judging_tabs_and_flags import second_tab, version, waiting
from tests.browser.test_responsive import OFFENDERS

pytestmark = pytest.mark.browser
SCREENSHOTS = os.environ.get("SCREENSHOTS")


def shoot(page, name, *, full_page=False):
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=full_page)


def documents(assignment):
    """The items' document ids in queue order (position 1 first)."""
    return [entry.document_id for entry in assignment_queue(assignment)]


def stored(document_id):
    """(stance, note, flagged) of greta's judgment of the item, None if she has none."""
    judgment = Judgment.objects.filter(assessor__username="greta", document_id=document_id).first()
    return judgment and (judgment.labels.get("stance"), judgment.note, judgment.flagged)


def history(document_id):
    events = JudgmentEvent.objects.filter(judgment__document_id=document_id).order_by("revision")
    return [(revision, values.get("stance"), note) for revision, values, note in events.values_list("revision", "labels", "note")]


def label_in_tab_a_while_tab_b_waits(page, log_in, assignment):
    """Tab B opens comment 1 unlabelled; then tab A labels it In favor with a note, and B, from its stale view,
    presses a (Against): the conflict dialog."""
    log_in(User.objects.get(username="greta"))
    first = documents(assignment)[0]
    tab_b = second_tab(page)
    open_position(tab_b, assignment, 2)
    tab_b.keyboard.press("k")  # to comment 1, within the page
    expect(tab_b.locator("#pos")).to_have_text("1")
    expect(tab_b.locator("#save-state")).to_have_text("Not judged yet")
    tab_a = page
    open_position(tab_a, assignment, 1)
    tab_a.keyboard.press("f")
    tab_a.keyboard.press("i")
    tab_a.keyboard.type("Asks for exactly this.")
    tab_a.keyboard.press("Escape")
    saved(tab_a)
    assert stored(first) == ("In favor", "Asks for exactly this.", False)
    tab_b.bring_to_front()
    tab_b.keyboard.press("a")
    conflict = tab_b.get_by_role("dialog", name="Saved elsewhere")
    expect(conflict).to_be_visible()
    return tab_a, tab_b, conflict, first


def test_a_stale_tab_on_a_comment_shows_both_versions_and_keep_yours_stores_what_it_showed(page, log_in, items):  # noqa: F811
    tab_a, tab_b, conflict, first = label_in_tab_a_while_tab_b_waits(page, log_in, items)
    before = history(first)
    assert version(conflict, "saved") == {"Stance towards the proposal": "In favor", "Note": "Asks for exactly this.", "Unsure": "no"}
    assert version(conflict, "yours") == {"Stance towards the proposal": "Against", "Note": "—", "Unsure": "no"}
    expect(conflict.locator(".summary")).to_have_text("Saved elsewhere: In favor — yours: Against / no note")
    shoot(tab_b, "item-conflict.png")
    assert history(first) == before  # nothing stored while the coder decides

    tab_b.keyboard.press("b")  # keep yours: Against and no note, none of tab A's note
    expect(conflict).to_be_hidden()
    saved(tab_b)
    expect(pressed(tab_b, "a")).to_have_attribute("aria-pressed", "true")
    expect(pressed(tab_b, "f")).to_have_attribute("aria-pressed", "false")
    expect(tab_b.locator("#note")).to_have_value("")
    assert stored(first) == ("Against", "", False)
    after = history(first)
    assert after[:-1] == before and after[-1][1:] == ("Against", "")

    # Tab A still shows its older version; leaving it sends nothing that undoes B's choice.
    tab_a.bring_to_front()
    tab_a.wait_for_timeout(1200)  # active time to report on leaving
    tab_a.goto("/work/")
    tab_a.wait_for_timeout(500)
    assert stored(first) == ("Against", "", False)
    assert history(first) == after
    assert tab_a.errors == tab_b.errors == []


def test_in_the_conflict_dialog_a_takes_the_saved_version_and_labels_nothing_against(page, log_in, items):  # noqa: F811
    """On a comment, a is also the key of Against: while the dialog is open it only chooses the version saved
    elsewhere, and stores nothing new."""
    tab_a, tab_b, conflict, first = label_in_tab_a_while_tab_b_waits(page, log_in, items)
    before = history(first)
    tab_b.keyboard.press("a")
    expect(conflict).to_be_hidden()
    saved(tab_b)
    expect(pressed(tab_b, "f")).to_have_attribute("aria-pressed", "true")
    expect(pressed(tab_b, "a")).to_have_attribute("aria-pressed", "false")
    expect(tab_b.locator("#note")).to_have_value("Asks for exactly this.")
    tab_b.goto("/work/")
    tab_b.wait_for_timeout(300)
    assert stored(first) == ("In favor", "Asks for exactly this.", False)
    assert history(first) == before
    assert tab_a.errors == tab_b.errors == []


def test_comments_labelled_while_the_network_is_down_are_kept_and_saved_when_it_returns(page, log_in, items):  # noqa: F811
    log_in(User.objects.get(username="greta"))
    first, second, third = documents(items)[:3]
    open_position(page, items, 1)
    page.route("**/judgment/", lambda route: route.abort("internetdisconnected"))
    banner = page.locator("#save-banner")
    page.keyboard.press("f")
    expect(banner).to_contain_text("Labels of 1 document not saved yet")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "unsaved")
    page.keyboard.press("j")
    expect(page.locator("#pos")).to_have_text("2")
    page.keyboard.press("o")
    expect(banner).to_contain_text("Labels of 2 documents not saved yet")
    assert pending_keys(page) == [f"touchstone.pending.{items.assessor.pk}"]
    shoot(page, "item-offline.png")
    assert not Judgment.objects.exists()

    # Closing the page loses nothing: both labels come back from the browser's storage.
    page.reload()
    expect(pressed(page, "o")).to_have_attribute("aria-pressed", "true")
    expect(banner).to_contain_text("Labels of 2 documents not saved yet")
    page.keyboard.press("k")
    expect(page.locator("#pos")).to_have_text("1")
    expect(pressed(page, "f")).to_have_attribute("aria-pressed", "true")

    page.unroute("**/judgment/")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved", timeout=20_000)
    expect(banner).to_be_hidden()
    expect(page.locator("#judged-count")).to_have_text("2")
    assert (stored(first), stored(second), stored(third)) == (("In favor", "", False), ("Other", "", False), None)
    assert history(first) == [(1, "In favor", "")] and history(second) == [(1, "Other", "")]
    assert waiting(page) == []  # nothing left waiting in the browser
    assert page.errors == []


def test_z_brings_back_only_what_a_change_cleared_and_a_stance_change_clears_nothing(page, log_in, items):  # noqa: F811
    """A comment has one required dimension and nothing that hangs on it: changing the stance replaces it and
    clears nothing, so z (undo a clearing) says there is nothing to undo and changes nothing, stored or shown."""
    log_in(User.objects.get(username="greta"))
    first = documents(items)[0]
    open_position(page, items, 1)
    page.keyboard.press("f")
    saved(page)
    page.keyboard.press("a")
    saved(page)
    toast = page.locator("#toast")
    expect(toast).not_to_contain_text("cleared")
    page.keyboard.press("z")
    expect(toast).to_contain_text("Nothing to undo")
    expect(page.locator("#toast-action")).to_be_hidden()
    expect(pressed(page, "a")).to_have_attribute("aria-pressed", "true")
    page.wait_for_timeout(300)
    assert stored(first) == ("Against", "", False)
    assert history(first) == [(1, "In favor", ""), (2, "Against", "")]
    assert page.errors == []


def test_keys_typed_without_a_pause_label_the_comment_on_screen_when_pressed(page, log_in, items):  # noqa: F811
    log_in(User.objects.get(username="greta"))
    first, second, third = documents(items)[:3]
    open_position(page, items, 1)
    for key in ("f", "j", "a", "j", "o", "z"):
        page.keyboard.press(key)  # no delay between keys: the next comment is still loading
    expect(page).to_have_url(f"/work/{items.pk}/3/")
    expect(pressed(page, "o")).to_have_attribute("aria-pressed", "true")
    saved(page)
    assert (stored(first), stored(second), stored(third)) == (("In favor", "", False), ("Against", "", False), ("Other", "", False))
    page.go_back()
    expect(page.locator("#pos")).to_have_text("2")
    expect(pressed(page, "a")).to_have_attribute("aria-pressed", "true")
    assert page.errors == []


def test_a_comment_on_a_390_px_phone_is_readable_and_labelled_by_keys_or_buttons(browser, live_server, settings, items):  # noqa: F811
    """On a phone the proposal is a folded bar above the comment (b or a tap opens it), the label buttons are a bar
    at the bottom of the screen, and nothing is wider than the screen."""
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=live_server.url, has_touch=True,
                                  is_mobile=True, device_scale_factor=2)
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        context.add_cookies([_session_cookie(live_server, User.objects.get(username="greta"))])
        first, second = documents(items)[:2]
        open_position(page, items, 1)
        comment = page.locator("#doc-rich")
        expect(comment).to_be_visible()
        assert comment.inner_text().strip()
        assert _within_screen(comment.bounding_box())
        _no_overflow(page, "comment")
        shoot(page, "item-390.png")

        # Every label button is on screen, whole, big enough to tap, its key shown.
        buttons = page.locator('.label-btn[data-dimension="stance"]')
        expect(buttons).to_have_count(3)
        for key, name in (("f", "In favor"), ("a", "Against"), ("o", "Other")):
            button = pressed(page, key)
            expect(button).to_be_visible()
            expect(button).to_contain_text(name)
            box = button.bounding_box()
            assert _within_screen(box) and box["height"] >= 32 and box["width"] >= 44, (key, box)
        expect(page.locator("#doc-scroll")).to_be_visible()

        # The proposal, folded on a phone, opens by its key and reads whole, in either language.
        proposal = page.locator("#proposal-original")
        expect(proposal).to_be_hidden()
        page.keyboard.press("b")
        expect(proposal).to_be_visible()
        expect(proposal).to_contain_text("Die Bürger sollen direkt über EU-Gesetze abstimmen können.")
        assert _within_screen(proposal.bounding_box())
        _no_overflow(page, "proposal")
        shoot(page, "item-390-proposal.png")
        page.keyboard.press("e")
        expect(page.locator("#proposal-english")).to_contain_text("Citizens should be able to vote directly on EU laws.")
        _no_overflow(page, "proposal in English")
        page.locator(".panel-toggle").tap()
        expect(page.locator("#proposal-english")).to_be_hidden()

        # Labelled by a key and by a tap on a button.
        page.keyboard.press("f")
        saved(page)
        page.keyboard.press("j")
        expect(page.locator("#pos")).to_have_text("2")
        pressed(page, "o").tap()
        saved(page)
        expect(page.locator("#judged-count")).to_have_text("2")
        _no_overflow(page, "labelled")
        shoot(page, "item-390-labelled.png")
        assert (stored(first), stored(second)) == (("In favor", "", False), ("Other", "", False))
        assert errors == []
    finally:
        context.route("**/*", lambda route: route.abort())
        context.close()


def _session_cookie(live_server, user):
    """A logged-in session for `user` as a cookie (the phone context skips the login form, as test_responsive)."""
    client = Client()
    client.force_login(user)
    return {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}


def _within_screen(box):
    return box is not None and box["x"] >= -1 and box["x"] + box["width"] <= 391


def _no_overflow(page, when):
    found = page.evaluate(OFFENDERS)
    assert found["scroll"] <= found["width"] and found["body"] <= found["width"] and found["out"] == [], (when, found)
