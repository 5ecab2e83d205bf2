"""The judge page in a real browser: log in, judge with the keyboard, survive a network failure,
and show hostile documents without running them."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import Role
from assessments.models import Judgment
from tests.factories import UserFactory

pytestmark = pytest.mark.browser


def test_an_assessor_logs_in_and_lands_on_my_work(page, log_in, live_server, assignment):
    page.goto("/accounts/login/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    log_in(assignment.assessor)
    expect(page.get_by_role("heading", name="My work")).to_be_visible()
    expect(page.get_by_text(assignment.topic.title)).to_be_visible()
    expect(page.get_by_text("0 / 3")).to_be_visible()
    assert page.errors == []


def test_three_documents_judged_with_the_keyboard_alone_are_there_after_a_reload(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    start = page.get_by_role("link", name="Start")
    for _ in range(10):  # Tab through the top bar to the topic's Start button
        page.keyboard.press("Tab")
        if start.evaluate("link => link === document.activeElement"):
            break
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/work/{assignment.pk}/1/")
    expect(page.locator("#save-state")).to_have_text("Not judged yet")
    page.keyboard.press("?")  # the keys, from the campaign's scheme
    expect(page.locator("#dlg-help")).to_contain_text("Pro first object (cats)")
    expect(page.locator("#dlg-help")).to_contain_text("Next unjudged document")
    page.keyboard.press("Escape")
    expect(page.locator("#dlg-help")).to_be_hidden()

    # 1: highly relevant, high quality, pro the first object, with a note.
    for key in ("2", "e", "f"):
        page.keyboard.press(key)
    page.keyboard.press("i")
    page.keyboard.type("Compares both pets clearly.")
    page.keyboard.press("Escape")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")
    page.keyboard.press("j")
    page.wait_for_url(f"**/work/{assignment.pk}/2/")

    # 2: relevant, flagged, and move on at once (the save may still be in flight).
    page.keyboard.press("1")
    page.keyboard.press("m")
    page.keyboard.press("j")
    page.wait_for_url(f"**/work/{assignment.pk}/3/")

    # 3: not relevant; quality is not asked (nor shown), so "w" changes nothing.
    expect(page.locator('fieldset[data-dimension="quality"]')).to_be_hidden()
    page.keyboard.press("0")
    page.keyboard.press("w")
    expect(page.locator("#toast")).to_contain_text("Argument quality is asked only when relevance is 1 or more")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")
    expect(page.locator("#judged-count")).to_have_text("3")

    page.reload()
    expect(page.locator('.label-btn[data-key="0"]')).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("k")
    page.wait_for_url(f"**/work/{assignment.pk}/2/")
    expect(page.locator('.label-btn[data-key="1"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".flag-btn")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("k")
    expect(page.locator('.label-btn[data-key="2"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator('.label-btn[data-key="e"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator('.label-btn[data-key="f"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#note")).to_have_value("Compares both pets clearly.")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")

    stored = {j.document_id: (j.labels, j.note, j.flagged) for j in Judgment.objects.filter(assessor=assignment.assessor)}
    assert stored == {
        pool[0].document_id: ({"relevance": 2, "quality": 2, "stance": "FIRST"}, "Compares both pets clearly.", False),
        pool[1].document_id: ({"relevance": 1}, "", True),
        pool[2].document_id: ({"relevance": 0}, "", False),
    }
    assert all(j.time_spent_ms > 0 for j in Judgment.objects.all())
    assert page.errors == []


def test_a_label_chosen_while_the_network_is_down_is_kept_and_saved_when_it_returns(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 2]))
    page.route("**/judgment/", lambda route: route.abort("internetdisconnected"))
    page.keyboard.press("2")
    banner = page.locator("#save-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Labels of 1 document not saved yet")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "unsaved")
    assert not Judgment.objects.exists()

    # Closing the page does not lose it: the label comes back from the browser's storage.
    page.reload()
    expect(page.locator('.label-btn[data-key="2"]')).to_have_attribute("aria-pressed", "true")
    expect(banner).to_contain_text("not saved yet")

    page.unroute("**/judgment/")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved", timeout=20_000)
    expect(banner).to_be_hidden()
    judgment = Judgment.objects.get()
    assert (judgment.document_id, judgment.labels) == (pool[1].document_id, {"relevance": 2})
    assert page.errors == []


def test_a_hostile_document_runs_nothing(page, log_in, assignment, pool):
    document = pool[0].document
    document.is_html = True
    document.title = "<img src=x onerror=\"window.__pwned='title'\">Cats"
    document.url = "javascript:window.__pwned='url'"
    document.body = """
        <p>Cats and dogs.</p>
        <script>window.__pwned = 'script'; document.title = 'pwned';</script>
        <img src="x" onerror="window.__pwned='img'; alert('img')">
        <svg onload="window.__pwned='svg'"><circle r="3"/></svg>
        <p onmouseover="window.__pwned='hover'" style="position:fixed;inset:0">Hover me</p>
        <a id="judge-data" href="javascript:window.__pwned='link'">a link</a>
        <iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>
        <details open ontoggle="window.__pwned='toggle'"><summary>more</summary>dogs</details>
    """
    document.save()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(assignment.assessor)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 2]))
    page.keyboard.press("k")  # swapped into the page, not loaded as a page of its own
    expect(page.locator("#doc-rich")).to_contain_text("Cats and dogs.")
    page.hover("text=Hover me")
    page.keyboard.press("t")  # the plain-text view is built from the document's text
    expect(page.locator("#doc-plain")).to_contain_text("Hover me")
    page.keyboard.press("t")
    page.keyboard.press("h")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert page.title().startswith("1/3")
    assert dialogs == []
    assert page.locator("#doc-rich script, #doc-rich img, #doc-rich svg, #doc-rich iframe, #doc-rich [style]").count() == 0
    # The page's own data was not clobbered by the document's id="judge-data".
    page.keyboard.press("1")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved")
    assert page.errors == []


def test_a_flag_alone_is_saved_and_the_document_stays_unjudged_until_it_has_a_relevance(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))
    page.keyboard.press("m")
    expect(page.locator("#save-state")).to_have_text("Saved, without relevance yet")
    expect(page.locator("#judged-count")).to_have_text("0")
    judgment = Judgment.objects.get()
    assert (judgment.labels, judgment.flagged) == ({}, True)
    page.keyboard.press("2")
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(page.locator("#judged-count")).to_have_text("1")
    expect(page.locator('fieldset[data-dimension="quality"]')).to_be_visible()
    assert page.errors == []


def test_a_demo_like_assessor_without_work_sees_an_empty_my_work(page, log_in, db):
    log_in(UserFactory(username="demo", role=Role.ASSESSOR))
    expect(page.get_by_text("Nothing is assigned to you yet")).to_be_visible()
