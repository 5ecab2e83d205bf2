"""The agreement page's charts of a campaign judged within ten minutes (a day, two months), and the judge page's stance buttons named by a
campaign's own scheme, in a real browser at a phone's, a tablet's and a desktop's width (issue 23): the bars are
visible, the axis labels are apart and inside the chart, and a stance button shows the scheme's name whole with the
topic's object beside it. Screenshots go to SCREENSHOTS when it is set."""

import os
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import Role
from assessments.services.judging import Labels, record_judgment
from tests.assessments.test_scheme_names_everywhere import SCHEME
from tests.browser.conftest import PASSWORD
from tests.factories import AssignmentFactory, CampaignFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {390: 844, 768: 1024, 1440: 900}
START = datetime(2024, 3, 4, 14, 3, 20, tzinfo=UTC)


# How far apart alice and bob judge their twelve documents, and the bucket and the number of bars that follow.
SPANS = {"10min": (timedelta(seconds=50), "minute", 10), "1day": (timedelta(minutes=40), "15 minutes", 30),
         "60days": (timedelta(days=5), "day", 56)}


@pytest.fixture
def short_campaign(request):
    """Leanings (a scheme of its own): alice and bob judge twelve documents each, within ten minutes unless the test
    names another of SPANS."""
    gap = SPANS[getattr(request, "param", "10min")][0]
    campaign = CampaignFactory(slug="leanings", name="Leanings", scheme=SCHEME)
    topic = TopicFactory(campaign=campaign, number="1", is_training=True,
                         title="Which is better, JavaScript or CoffeeScript?", compared_objects=["JavaScript", "CoffeeScript"])
    people = [UserFactory(username=name) for name in ("alice", "bob")]
    assignments = [AssignmentFactory(topic=topic, assessor=person, phase="training") for person in people]
    for i in range(12):
        entry = PoolEntryFactory(topic=topic, order=i)
        for offset, person in enumerate(people):
            with mock.patch("django.utils.timezone.now", return_value=START + gap * i + timedelta(seconds=offset)):
                record_judgment(topic=topic, document=entry.document, assessor=person, phase="training", time_spent_ms=9000,
                                labels=Labels({"relevance": 1 + (i + offset) % 2, "stance": ("FIRST", "SECOND")[(i * offset) % 2]}))
    PoolEntryFactory(topic=topic, order=12)  # left to judge
    return campaign, assignments[0], UserFactory(username="ada", role=Role.ADMIN)


def sign_in(page, user):
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    page.wait_for_load_state()


def shoot(page, name):
    if folder := os.environ.get("SCREENSHOTS"):
        os.makedirs(folder, exist_ok=True)
        page.screenshot(path=os.path.join(folder, name), full_page=True)


def boxes(locator):
    return [box for box in (item.bounding_box() for item in locator.all()) if box]


@pytest.mark.parametrize("width", SIZES)
@pytest.mark.parametrize("short_campaign", SPANS, indirect=True)
def test_the_charts_over_time_stay_readable_however_short_the_judging(page, request, short_campaign, width):
    campaign, _, ada = short_campaign
    span = request.node.callspec.params["short_campaign"]
    _, unit, n_bars = SPANS[span]
    page.set_viewport_size({"width": width, "height": SIZES[width]})
    sign_in(page, ada)
    page.goto(reverse("assessments:agreement", args=[campaign.slug]) + "?phase=training")
    rate = page.locator(f'svg[aria-label="Judgments per {unit}"]')
    expect(rate).to_be_visible()
    rate.scroll_into_view_if_needed()
    shoot(page, f"agreement-{span}-{width}.png")
    bars = boxes(rate.locator("rect.bar"))
    assert len(bars) == n_bars and all(b["width"] >= 2 for b in bars)
    assert sum(b["height"] > 0 for b in bars) == (10 if span == "10min" else 12)  # a bucket with judgments is drawn
    for svg in (rate, page.locator('svg[aria-label="Cumulative judgments per assessor over time"]')):
        chart = svg.bounding_box()
        labels = sorted(boxes(svg.locator("text.tick.x")), key=lambda b: b["x"])  # those shown at this width
        assert all(b["height"] >= 8 for b in labels), labels  # readable: 8 px and more on the screen
        assert len(labels) >= 2
        assert all(chart["x"] - 1 <= b["x"] and b["x"] + b["width"] <= chart["x"] + chart["width"] + 1 for b in labels)
        assert all(a["x"] + a["width"] < b["x"] for a, b in zip(labels, labels[1:]))


@pytest.mark.parametrize("width", SIZES)
def test_stance_buttons_show_the_schemes_names_whole_with_the_objects(page, short_campaign, width):
    _, assignment, _ = short_campaign
    page.set_viewport_size({"width": width, "height": SIZES[width]})
    sign_in(page, assignment.assessor)
    page.goto(reverse("annotation:judge", args=[assignment.pk, 13]))
    page.keyboard.press("2")  # the stance is asked of a relevant document
    names = page.locator('.label-btn[data-dimension="stance"] > span')
    expect(names).to_have_text(["In favour of X", "Against X", "Torn about X"])
    expect(page.locator('.label-btn[data-dimension="stance"] .object')).to_have_text(["JavaScript", "CoffeeScript"])
    shoot(page, f"judge-names-{width}.png")
    cut = page.locator('.label-btn[data-dimension="stance"]').evaluate_all(
        """(buttons) => buttons.filter((b) => [...b.children].some((c) => c.scrollWidth > c.clientWidth + 1)
              || b.scrollWidth > b.clientWidth + 1 || b.scrollHeight > b.clientHeight + 1).map((b) => b.textContent)""")
    assert cut == [], (width, cut)
