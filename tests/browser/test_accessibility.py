"""The pages an assessor and an organiser use most, checked as a keyboard or screen-reader user meets them: axe-core
(axe-playwright-python's copy, injected by the test; the pages never load it) finds no serious or critical violation
at 1440, 768 and 390 px, unavailable controls stay readable, and the document pane is reached with Tab."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import User
from assessments.models import Assignment, Campaign, Phase
from tests.browser.test_item_labelling import items  # noqa: F401  (a fixture)
from tests.browser.test_judging_safely import open_position, saved
from tests.browser.test_responsive import signed_in

pytestmark = pytest.mark.browser
SIZES = {1440: 900, 768: 1024, 390: 844}
AXE = Axe()

# Text controls below 4.5:1 against what is behind them, opacity included (axe leaves disabled controls out: WCAG does
# not ask them to be readable, but a greyed "Previous" or label still has to be read to know what it is).
FADED = """() => {
  const rgba = (c) => { const v = c.match(/[\\d.]+/g).map(Number); return v.length === 3 ? [...v, 1] : v; };
  const luminance = (rgb) => rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const behind = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgba(getComputedStyle(e).backgroundColor); if (c[3] > 0) return c.slice(0, 3); } return [255, 255, 255]; };
  const opacity = (el) => { let o = 1; for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity); return o; };
  return [...document.querySelectorAll("button, a, legend, .hint")].filter((el) => el.getClientRects().length && el.textContent.trim()).map((el) => {
    const color = rgba(getComputedStyle(el).color), ground = behind(el), alpha = color[3] * opacity(el);
    const text = color.slice(0, 3).map((v, i) => v * alpha + ground[i] * (1 - alpha));
    const [light, dark] = [luminance(text), luminance(ground)].sort((a, b) => b - a);
    return [el.textContent.trim().replace(/\\s+/g, " ").slice(0, 40), Math.round((light + 0.05) / (dark + 0.05) * 100) / 100];
  }).filter(([, ratio]) => ratio < 4.5);
}"""


def serious(page) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now, one line each (none: an empty list)."""
    violations = AXE.run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}" for v in violations if v["impact"] in ("serious", "critical")]


def test_unavailable_controls_stay_readable(page, log_in, assignment, pool, campaign):
    log_in(assignment.assessor)
    open_position(page, assignment, 1)  # the first document: "Previous" is unavailable
    expect(page.locator('[data-action="previous"]')).to_be_disabled()
    assert page.evaluate(FADED) == []
    page.keyboard.press("2")  # quality and stance, asked "if relevance ≥ 1", are shown
    saved(page)
    assert page.evaluate(FADED) == []
    Campaign.objects.filter(pk=campaign.pk).update(phase=Phase.CLOSED)  # every label button unavailable
    open_position(page, assignment, 1)
    expect(page.locator(".label-btn").first).to_be_disabled()
    assert page.evaluate(FADED) == []


def test_the_document_pane_is_reached_by_tab_and_shows_its_focus(page, log_in, assignment, pool):
    log_in(assignment.assessor)
    open_position(page, assignment, 1)
    page.evaluate("document.activeElement.blur()")
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "doc-scroll":
            break
    pane = page.locator("#doc-scroll")
    expect(pane).to_be_focused()
    expect(page.get_by_role("region", name="Document text")).to_be_focused()
    ring = pane.evaluate("(e) => { const s = getComputedStyle(e); return [s.outlineStyle, parseFloat(s.outlineWidth)]; }")
    assert ring[0] != "none" and ring[1] >= 2, ring


def test_the_judge_page_has_no_serious_violation_at_any_width(page, live_server, demo):
    assignment = Assignment.objects.get(assessor__username="alice", phase="main")
    signed_in(page.context, live_server, "alice")
    for width, height in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        open_position(page, assignment, 1)
        assert serious(page) == [], width
        page.keyboard.press("2")  # the dimensions asked of a relevant document
        saved(page)
        assert serious(page) == [], width
        for key, dialog in (("?", "#dlg-help"), ("g", "#dlg-guidelines"), ("l", "#dlg-jump")):
            page.keyboard.press(key)
            expect(page.locator(dialog)).to_be_visible()
            assert serious(page) == [], (width, dialog)
            page.keyboard.press("Escape")


def test_the_campaign_results_and_imports_pages_have_none_either(page, live_server, demo):
    signed_in(page.context, live_server, "ada")
    for width, height in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        for name in ("campaign", "leaderboard", "imports"):
            page.goto(reverse(f"assessments:{name}", args=[demo.slug]))
            page.wait_for_load_state("networkidle")
            assert serious(page) == [], (width, name)


def test_the_image_and_the_item_judge_pages_have_none_either(page, live_server, image_campaign, items):  # noqa: F811
    Campaign.objects.filter(slug="img23").update(phase=Phase.MAIN)
    alice = User.objects.get(username="alice")
    pages = [(alice, Assignment.objects.filter(assessor=alice).order_by("topic__number").first()), (items.assessor, items)]
    for user, assignment in pages:
        signed_in(page.context, live_server, user.username)
        for width, height in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            open_position(page, assignment, 1)
            page.wait_for_load_state("networkidle")
            assert serious(page) == [], (user.username, width)
