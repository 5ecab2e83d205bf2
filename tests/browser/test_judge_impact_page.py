"""The judge-impact page on a 1440 px desktop and a 390 px phone: its figures, flags and both tables show, and
nothing overflows the screen sideways (the wide tables scroll in their own box).

Set SCREENSHOTS to a folder to keep a full-page screenshot at each size (test_responsive's `shoot`)."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.assessments.judge_impact_campaign import build_campaign, label, machine_grades
from tests.browser.test_responsive import check_fits, signed_in

pytestmark = pytest.mark.browser

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}


@pytest.fixture(params=list(SIZES))
def screen(request, browser, live_server, settings):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    width, height = SIZES[request.param]
    phone = request.param == "phone"
    context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url, has_touch=phone,
                                  is_mobile=phone, device_scale_factor=2 if phone else 1)
    context.set_default_timeout(10_000)
    context.size = request.param
    yield context
    context.close()


def test_the_report_fits_the_screen(screen, live_server, campaign, organiser):
    judge = build_campaign(campaign, holes=frozenset({3}))
    label(judge, machine_grades({j: 2 for j in range(15, 20)}))
    page = signed_in(screen, live_server, organiser.username)
    page.goto(reverse("assessments:judge_impact", args=[campaign.slug]) + "?top_k=3")
    expect(page.get_by_role("heading", name="Machine qrels against human")).to_be_visible()
    expect(page.get_by_role("note")).to_contain_text("Favoured by the machine judge: r5")
    expect(page.locator("table.results-table").first.locator("tbody tr")).to_have_count(6)
    check_fits(page, screen, "judge-impact")
    assert page.errors == []
