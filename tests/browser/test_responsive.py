"""Every page at a 390 px phone, a 768 px tablet and a 1440 px desktop: nothing overflows the screen sideways,
the document stays readable, and every label button can be tapped and saves.

Set SCREENSHOTS to a folder to keep a full-page screenshot of each page at each size (for looking at them).
"""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import User
from assessments.models import Assignment, Job, Judgment, PoolEntry

pytestmark = pytest.mark.browser

SIZES = {"phone": (390, 844), "tablet": (768, 1024), "desktop": (1440, 900)}
SCREENSHOTS = os.environ.get("SCREENSHOTS")

# Elements whose right edge passes the screen's, outside any box that scrolls or clips sideways.
OFFENDERS = """() => {
  const width = document.documentElement.clientWidth;
  const clipped = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width && (box.right > width + 1 || box.left < -1) && !clipped(el) && getComputedStyle(el).position !== "fixed") {
      out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && el.className.baseVal === undefined ? "." + String(el.className).trim().replace(/\\s+/g, ".") : "") + " " + Math.round(box.left) + "→" + Math.round(box.right));
    }
  }
  return {width, scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth, out: out.slice(0, 8)};
}"""


@pytest.fixture(params=list(SIZES))
def screen(request, browser, live_server, settings):
    """A browser context at one of the three sizes, touch-enabled on the phone and the tablet."""
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    width, height = SIZES[request.param]
    touch = request.param != "desktop"
    context = browser.new_context(
        viewport={"width": width, "height": height}, base_url=live_server.url, has_touch=touch,
        is_mobile=request.param == "phone", device_scale_factor=2 if touch else 1,
    )
    context.set_default_timeout(10_000)
    context.size = request.param
    yield context
    context.route("**/*", lambda route: route.abort())
    context.close()


def signed_in(context, live_server, username):
    client = Client()
    client.force_login(User.objects.get(username=username))
    context.clear_cookies()
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    page = context.pages[0] if context.pages else context.new_page()
    page.errors = getattr(page, "errors", [])
    if not page.errors:
        page.on("pageerror", lambda error: page.errors.append(str(error)))
    return page


def shoot(page, context, name):
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=Path(SCREENSHOTS) / f"{name}-{context.size}.png", full_page=True)


def check_fits(page, context, name):
    page.wait_for_load_state("load")
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")  # folded parts fit too
    shoot(page, context, name)
    fit = page.evaluate(OFFENDERS)
    assert fit["out"] == [], (name, context.size, fit)
    assert fit["scroll"] <= fit["width"] and fit["body"] <= fit["width"], (name, context.size, fit)


def test_no_page_overflows_the_screen_sideways(screen, live_server, demo):
    page = signed_in(screen, live_server, "alice")
    assignment = Assignment.objects.filter(assessor__username="alice").order_by("phase").first()
    for name, url in [
        ("my-work", reverse("annotation:my_work")),
        ("judge", reverse("annotation:judge", args=[assignment.pk, 1])),
    ]:
        page.goto(url)
        check_fits(page, screen, name)

    # A failed import's errors quote what they could not read, which may be one long unbroken token.
    token = "clueweb22-" + "0123456789abcdef" * 18
    Job.objects.create(campaign=demo, kind="import_runs", status=Job.Status.FAILED, message="The run was not imported.",
                       errors=[f"run.txt, line 3: no document {token} in the collection"])
    page = signed_in(screen, live_server, "ada")
    slug = demo.slug
    disputed = PoolEntry.objects.filter(topic__campaign=demo, topic__is_training=True).order_by("order", "pk").first().document
    for name, url in [
        ("campaigns", reverse("assessments:campaign_list")),
        ("campaign", reverse("assessments:campaign", args=[slug])),
        ("imports", reverse("assessments:imports", args=[slug])),
        ("pool", reverse("assessments:pool", args=[slug])),
        ("assignments", reverse("assessments:assignments", args=[slug])),
        ("agreement", reverse("assessments:agreement", args=[slug])),
        ("disagreements", reverse("assessments:disagreements", args=[slug])),
        ("agreement-document", reverse("assessments:agreement_document", args=[slug, disputed.pk])),
        ("leaderboard", reverse("assessments:leaderboard", args=[slug])),
        ("compare", reverse("assessments:compare_runs", args=[slug])),
        ("reusability", reverse("assessments:reusability", args=[slug])),
        ("qrels", reverse("assessments:qrels", args=[slug])),
    ]:
        page.goto(url)
        check_fits(page, screen, name)
    assert page.errors == []

    screen.clear_cookies()
    page.goto(reverse("accounts:login"))
    check_fits(page, screen, "login")


def test_every_label_button_can_be_tapped_and_saves_with_the_document_readable(screen, live_server, demo):
    page = signed_in(screen, live_server, "alice")
    assignment = Assignment.objects.filter(assessor__username="alice", phase="main").get()
    entry = PoolEntry.objects.filter(topic=assignment.topic).order_by("order", "pk").first()
    page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))
    expect(page.locator("#save-state")).to_have_text("Not judged yet")
    viewport = page.viewport_size

    document = page.locator("#doc-scroll").bounding_box()
    assert document["width"] >= 300, (screen.size, document)
    assert document["height"] >= 300, (screen.size, document)

    def tap(button):
        box = button.bounding_box()
        # On screen without scrolling the page, and big enough for a finger on touch screens.
        assert 0 <= box["x"] and box["x"] + box["width"] <= viewport["width"], (screen.size, box)
        assert 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"], (screen.size, box)
        touch = screen.size != "desktop"
        if touch:
            assert box["height"] >= 44 and box["width"] >= 44, (screen.size, button.text_content(), box)
        with page.expect_response(lambda response: response.url.endswith("/judgment/") and response.ok):
            button.tap() if touch else button.click()
        expect(button).to_have_attribute("aria-pressed", "true")

    def stored():
        judgment = Judgment.objects.get(assessor=assignment.assessor, document=entry.document)
        return tuple(judgment.labels.get(dimension) for dimension in ("relevance", "quality", "stance"))

    # The topic: a column on the desktop; on a tablet above the document until its bar folds it; on a phone a bar
    # that opens it over the document with a tap.
    description = page.locator("#topic-body .topic-text").first
    toggle = page.locator(".panel-toggle")
    if screen.size == "desktop":
        expect(description).to_be_visible()
    elif screen.size == "tablet":
        expect(description).to_be_visible()
        toggle.tap()
        expect(description).to_be_hidden()
        toggle.tap()
        expect(description).to_be_visible()
    else:
        expect(description).to_be_hidden()
        toggle.tap()
        expect(description).to_be_visible()
        shoot(page, screen, "judge-topic-open")
        toggle.tap()
        expect(description).to_be_hidden()

    for dimension in ("relevance", "quality", "stance"):  # relevance ends on 2, so quality and stance are asked
        for button in page.locator(f'.label-btn[data-dimension="{dimension}"]').all():
            tap(button)
            value = button.get_attribute("data-value")
            got = stored()[("relevance", "quality", "stance").index(dimension)]
            assert str(got) == value, (screen.size, dimension, got, value)
    shoot(page, screen, "judge-judged")
    assert page.errors == []
