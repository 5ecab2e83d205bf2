"""The pages load clean: no Content-Security-Policy violation (the judge page runs no inline script or style) and
no request answered with an error (the icon included), on the judge page and an organiser's pages."""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def watched(page) -> tuple[list[str], list[str]]:
    """(console errors, requests answered 400 or more) as the page loads."""
    errors: list[str] = []
    failed: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("response", lambda response: failed.append(f"{response.status} {response.url}") if response.status >= 400 else None)
    return errors, failed


def test_the_judge_page_has_no_csp_violation_and_no_failed_request(page, log_in, assignment):
    log_in(assignment.assessor)
    errors, failed = watched(page)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 1]))
    expect(page.locator("#save-state")).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert errors == [] and failed == [], (errors, failed)
    icon = page.evaluate("document.querySelector('link[rel=icon]').href")
    assert page.request.get(icon).status == 200


def test_an_organisers_pages_have_none_either(page, live_server, admin_user, campaign):
    client = Client()
    client.force_login(admin_user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
    errors, failed = watched(page)
    for name in ("imports", "leaderboard", "qrels", "agreement", "timeline"):
        page.goto(reverse(f"assessments:{name}", args=[campaign.slug]))
        page.wait_for_load_state("networkidle")
    assert errors == [] and failed == [], (errors, failed)
