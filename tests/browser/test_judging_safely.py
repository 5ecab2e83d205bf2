"""Labels that are never wrong: two tabs on one document, keys typed faster than pages load, relevance 0
clearing the details, and logging out on a shared computer."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from assessments.models import Judgment, JudgmentEvent

pytestmark = pytest.mark.browser


def open_position(page, assignment, position):
    page.goto(reverse("annotation:judge", args=[assignment.pk, position]))
    expect(page.locator("#save-state")).to_be_visible()


def saved(page):
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")


def pressed(page, key):
    return page.locator(f'.label-btn[data-key="{key}"]')


def flat(values, note):
    """(relevance, quality, stance, note), None or "" where a dimension has no value: what these tests compare."""
    return values.get("relevance"), values.get("quality"), values.get("stance", ""), note


def labels(entry):
    judgment = Judgment.objects.filter(document=entry.document).first()
    return judgment and flat(judgment.labels, judgment.note)


def history(entry):
    events = JudgmentEvent.objects.filter(judgment__document=entry.document).order_by("revision")
    return [(revision, *flat(values, note)) for revision, values, note in events.values_list("revision", "labels", "note")]


def pending_keys(page):
    return page.evaluate("Object.keys(localStorage).filter((key) => key.startsWith('touchstone.pending'))")


def judge_in_tab_a_while_tab_b_waits(page, log_in, assignment, pool):
    """Tab B opens document 1 unjudged; then tab A judges it 2 / high / FIRST with a note."""
    log_in(assignment.assessor)
    tab_b = page.context.new_page()
    tab_b.errors = []
    tab_b.on("pageerror", lambda error: tab_b.errors.append(str(error)))
    open_position(tab_b, assignment, 2)
    tab_b.keyboard.press("k")  # to document 1, within the page
    expect(tab_b.locator("#pos")).to_have_text("1")
    expect(tab_b.locator("#save-state")).to_have_text("Not judged yet")
    tab_a = page
    open_position(tab_a, assignment, 1)
    for key in ("2", "e", "f"):
        tab_a.keyboard.press(key)
    tab_a.keyboard.press("i")
    tab_a.keyboard.type("Compares both pets clearly.")
    tab_a.keyboard.press("Escape")
    saved(tab_a)
    assert labels(pool[0]) == (2, 2, "FIRST", "Compares both pets clearly.")
    tab_b.bring_to_front()
    tab_b.keyboard.press("1")  # from its stale view: "not judged yet"
    conflict = tab_b.get_by_role("dialog", name="Saved elsewhere")
    expect(conflict).to_be_visible()
    return tab_a, tab_b, conflict


def test_a_stale_tab_shows_both_versions_and_keeps_the_one_chosen(page, log_in, assignment, pool):
    tab_a, tab_b, conflict = judge_in_tab_a_while_tab_b_waits(page, log_in, assignment, pool)
    before = history(pool[0])
    saved_version, yours = conflict.locator(".version-saved"), conflict.locator(".version-yours")
    for text in ("Highly relevant", "High quality", "Pro first object", "Compares both pets clearly."):
        expect(saved_version).to_contain_text(text)
    expect(yours).to_contain_text("Relevant")
    expect(conflict.locator(".summary")).to_contain_text("Saved elsewhere: 2 / High quality / Pro first object")
    expect(conflict.locator(".summary")).to_contain_text("yours: 1")
    assert history(pool[0]) == before  # nothing stored while the assessor decides

    tab_b.keyboard.press("b")  # keep yours: exactly what B showed, none of A's details (issue: "keep yours")
    expect(conflict).to_be_hidden()
    saved(tab_b)
    expect(pressed(tab_b, "1")).to_have_attribute("aria-pressed", "true")
    expect(pressed(tab_b, "e")).to_have_attribute("aria-pressed", "false")
    assert labels(pool[0]) == (1, None, "", "")
    after = history(pool[0])
    assert after[:-1] == before and after[-1][1:] == (1, None, "", "")

    # Tab A still shows its own, older version; leaving it sends nothing that undoes B's choice.
    tab_a.bring_to_front()
    tab_a.wait_for_timeout(1200)  # active time to report on leaving
    tab_a.goto("/work/")
    tab_a.wait_for_timeout(500)
    assert labels(pool[0]) == (1, None, "", "")
    assert history(pool[0]) == after
    assert tab_a.errors == tab_b.errors == []


def test_a_stale_tab_can_take_the_version_saved_elsewhere(page, log_in, assignment, pool):
    tab_a, tab_b, conflict = judge_in_tab_a_while_tab_b_waits(page, log_in, assignment, pool)
    before = history(pool[0])
    tab_b.keyboard.press("Escape")  # decide later: the page keeps asking
    expect(conflict).to_be_hidden()
    expect(tab_b.locator("#save-state")).to_contain_text("changed elsewhere")
    tab_b.locator("#save-banner").get_by_role("button", name="Choose a version").click()
    expect(conflict).to_be_visible()
    tab_b.keyboard.press("a")  # keep the version saved elsewhere
    expect(conflict).to_be_hidden()
    saved(tab_b)
    for key in ("2", "e", "f"):
        expect(pressed(tab_b, key)).to_have_attribute("aria-pressed", "true")
    expect(tab_b.locator("#note")).to_have_value("Compares both pets clearly.")
    tab_b.goto("/work/")
    tab_b.wait_for_timeout(300)
    assert history(pool[0]) == before
    assert tab_a.errors == tab_b.errors == []


def test_a_save_whose_answer_was_lost_is_not_taken_for_a_change_made_elsewhere(page, log_in, assignment, pool):
    """The first save reaches the server but its answer never comes back (a timeout, a dropped network), and
    the assessor labels on before the retry: their own stored save must not come back as "saved elsewhere"."""
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    answers_lost = []

    def lose_the_first_answer(route):
        if route.request.method == "PATCH" and not answers_lost:
            answers_lost.append(route.fetch().status)  # the server stores it; the page never hears back
            route.abort("timedout")
        else:
            route.continue_()

    page.route("**/judgment/", lose_the_first_answer)
    page.keyboard.press("2")
    expect(page.locator("#save-state")).to_have_text("Not saved yet, retrying")
    assert answers_lost == [200] and labels(pool[0]) == (2, None, "", "")

    page.keyboard.press("e")  # before the retry
    saved(page)
    expect(page.get_by_role("dialog", name="Saved elsewhere")).to_be_hidden()
    assert labels(pool[0]) == (2, 2, "", "")
    page.keyboard.press("i")
    page.keyboard.type("Typed while the answer was lost.")
    page.keyboard.press("Escape")
    saved(page)
    assert labels(pool[0]) == (2, 2, "", "Typed while the answer was lost.")
    # Every state the assessor saved is in the history, once.
    assert [event[:5] for event in history(pool[0])] == [
        (1, 2, None, "", ""), (2, 2, 2, "", ""), (3, 2, 2, "", "Typed while the answer was lost."),
    ]
    page.unroute("**/judgment/")
    assert page.errors == []


def test_a_save_the_server_never_answers_is_sent_again_instead_of_holding_up_the_labels_after_it(page, log_in, assignment, pool):
    """A request hung on a dead connection gets no answer and no error: after 20 s the page takes its answer for
    lost and sends it again, and what the assessor labelled meanwhile follows it."""
    page.clock.install()
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    hung = []

    def hang_the_first(route):
        if route.request.method == "PATCH" and not hung:
            hung.append(route)  # never answered
        else:
            route.continue_()

    page.route("**/judgment/", hang_the_first)
    page.keyboard.press("2")
    page.keyboard.press("e")
    page.clock.run_for(5_000)
    assert len(hung) == 1 and labels(pool[0]) is None
    expect(page.locator("#save-state")).not_to_have_text("Saved")

    page.clock.run_for(16_000)  # past 20 s: the hung save is taken for lost
    expect(page.locator("#save-state")).to_have_text("Not saved yet, retrying")
    page.clock.run_for(2_000)  # the first retry, one second later
    saved(page)
    assert labels(pool[0]) == (2, 2, "", "")
    # The dead connection finally fails: the page ignores a request it has already replaced, and nothing is
    # left held for the browser to release once the test is over (into the next test's database flush).
    hung[0].abort()
    page.unroute("**/judgment/")
    page.clock.run_for(5_000)
    saved(page)
    assert labels(pool[0]) == (2, 2, "", "")
    assert page.errors == []


def test_keys_typed_without_a_pause_land_on_the_document_on_screen_when_pressed(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    for key in ("2", "e", "f", "j", "1", "w", "j", "0"):
        page.keyboard.press(key)  # no delay between keys: the next document is still loading
    expect(page).to_have_url(f"/work/{assignment.pk}/3/")
    expect(page.locator("#pos")).to_have_text("3")
    expect(pressed(page, "0")).to_have_attribute("aria-pressed", "true")
    saved(page)
    assert [labels(entry) and labels(entry)[:3] for entry in pool] == [(2, 2, "FIRST"), (1, 1, ""), (0, None, "")]
    page.go_back()  # the browser's history follows the documents
    expect(page.locator("#pos")).to_have_text("2")
    expect(page).to_have_url(f"/work/{assignment.pk}/2/")
    expect(pressed(page, "1")).to_have_attribute("aria-pressed", "true")
    expect(pressed(page, "w")).to_have_attribute("aria-pressed", "true")
    assert page.errors == []


def test_clearing_quality_and_stance_says_so_and_z_brings_them_back(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    for key in ("1", "w", "n"):
        page.keyboard.press(key)
    saved(page)
    assert labels(pool[0]) == (1, 1, "NEUTRAL", "")

    page.keyboard.press("0")
    toast = page.locator("#toast")
    expect(toast).to_contain_text("cleared quality and stance")
    expect(toast).to_contain_text("z")
    saved(page)
    assert labels(pool[0]) == (0, None, "", "")

    page.keyboard.press("z")
    for key in ("1", "w", "n"):
        expect(pressed(page, key)).to_have_attribute("aria-pressed", "true")
    saved(page)
    assert labels(pool[0]) == (1, 1, "NEUTRAL", "")
    # The history keeps both changes: the clearing and its undoing.
    assert [event[1:4] for event in history(pool[0])[-2:]] == [(0, None, ""), (1, 1, "NEUTRAL")]
    page.keyboard.press("z")
    expect(toast).to_contain_text("Nothing to undo")
    assert page.errors == []


def test_logging_out_sends_waiting_labels_then_clears_them_from_the_browser(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 2)
    page.keyboard.press("2")
    page.keyboard.press("i")
    page.keyboard.type("Typed just before logging out.")  # saved once typing pauses: not yet
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url("**/accounts/login/")
    assert labels(pool[1]) == (2, None, "", "Typed just before logging out.")
    assert pending_keys(page) == []
    assert page.errors == []


def test_logging_out_with_labels_that_cannot_be_saved_warns_first_then_clears_them(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 2)
    page.route("**/judgment/", lambda route: route.abort("internetdisconnected"))
    page.keyboard.press("2")
    expect(page.locator("#save-banner")).to_contain_text("Labels of 1 document not saved yet")
    assert pending_keys(page) == [f"touchstone.pending.{assignment.assessor.pk}"]

    page.get_by_role("button", name="Log out").click()
    warning = page.get_by_role("dialog", name="Labels not saved")
    expect(warning).to_contain_text("Labels of 1 document are not saved")
    warning.get_by_role("button", name="Stay").click()
    expect(warning).to_be_hidden()
    assert page.url.endswith(f"/work/{assignment.pk}/2/") and pending_keys(page)

    page.get_by_role("button", name="Log out").click()
    warning.get_by_role("button", name="Log out anyway").click()
    page.wait_for_url("**/accounts/login/")
    assert pending_keys(page) == []
    assert not Judgment.objects.exists()
    assert page.errors == []
