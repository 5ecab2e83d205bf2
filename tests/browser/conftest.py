"""Playwright against pytest-django's live_server, driving Debian's Chromium (never `playwright install`).

Playwright's sync API runs an event loop in this thread, which makes Django refuse ORM calls
from the test body unless DJANGO_ALLOW_ASYNC_UNSAFE is set; the live server itself runs in its
own thread and is unaffected.
"""

import os

import pytest
from django.core.management import call_command

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
PASSWORD = "correct horse battery staple"  # tests.factories.UserFactory's


@pytest.fixture(scope="session")
def browser():
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server, settings):
    """A fresh browser context (no cookies, empty localStorage) on a 1280×800 window."""
    # The live server speaks plain HTTP, so cookies must not be Secure-only here.
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=live_server.url)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    # Leaving the page sends a last save (the active-time total); stop it from reaching a server
    # whose database is being flushed for the next test.
    context.route("**/*", lambda route: route.abort())
    page.goto("about:blank")
    context.close()


@pytest.fixture
def log_in(page):
    """log_in(user): through the real login form, with the keyboard; returns the page."""

    def _log_in(user):
        page.goto("/accounts/login/")
        # Focus explicitly: on a cold browser, autofocus can land after the first keystrokes.
        page.get_by_label("Username").focus()
        page.keyboard.type(user.username)
        page.keyboard.press("Tab")
        page.keyboard.type(PASSWORD)
        page.keyboard.press("Enter")
        page.wait_for_url("**/work/")
        return page

    return _log_in


@pytest.fixture
def demo(db):
    """The demo campaign (`make demo`) in its main phase, after a training round both assessors judged, and with
    their main-phase labels, so agreement and results have figures; the first document of each main-phase topic is
    left to judge."""
    from assessments.models import Assignment, Campaign, PoolEntry
    from assessments.services.assignments import close_training_round
    from assessments.services.judging import Labels, record_judgment

    call_command("load_demo", stdout=open(os.devnull, "w"))
    campaign = Campaign.objects.get(slug="demo")
    for assignment in Assignment.objects.filter(topic__campaign=campaign).select_related("topic", "assessor"):
        for n, entry in enumerate(PoolEntry.objects.filter(topic=assignment.topic).select_related("document").order_by("order", "pk")):
            if n == 0 and assignment.phase == "main":
                continue
            relevance = (n + assignment.assessor.pk) % 3
            record_judgment(
                topic=assignment.topic, document=entry.document, assessor=assignment.assessor, phase=assignment.phase,
                labels=Labels({"relevance": relevance, "quality": 2, "stance": "FIRST"} if relevance else {"relevance": 0}),
            )
    return close_training_round(campaign=campaign, then="main", by=None)


@pytest.fixture
def assignment(alice, training_topic, pool):
    """alice's assignment of the training topic and its three pooled documents: what the judge page tests open."""
    from assessments.models import Assignment

    return Assignment.objects.get(assessor=alice, topic=training_topic)
