"""The agreement page's charts over time keep a readable axis however long the judging took (issue 23: "agreement
time charts collapse in short campaigns"): ten minutes of judging is counted by the minute, a working day by the
quarter hour, two months by the day; every chart has labelled ticks at both ends of its axis or on round times
between, and a single bucket is a bar of its own with its time span, not a block that fills the chart."""

import re
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.urls import reverse

from assessments import charts
from assessments.services.judging import Labels, record_judgment
from tests.factories import PoolEntryFactory

pytestmark = pytest.mark.django_db

START = datetime(2024, 3, 4, 14, 3, 20, tzinfo=UTC)


@pytest.fixture
def judged_at(training_topic, alice, bob):
    """judged_at([times]): alice and bob each judge one new document at every time (bob a second later)."""

    def judge(times):
        for at in times:
            entry = PoolEntryFactory(topic=training_topic)
            for offset, person in enumerate((alice, bob)):
                with mock.patch("django.utils.timezone.now", return_value=at + timedelta(seconds=offset)):
                    record_judgment(topic=training_topic, document=entry.document, assessor=person, phase="training",
                                    labels=Labels({"relevance": 1}), time_spent_ms=9000)

    return judge


def page(client, admin_user, campaign):
    client.force_login(admin_user)
    response = client.get(reverse("assessments:agreement", args=[campaign.slug]), {"phase": "training"})
    assert response.status_code == 200
    return response


def svg(html: str, label: str) -> str:
    return re.search(rf'<svg [^>]*aria-label="{label}">(.*?)</svg>', html, re.S).group(1)


def x_labels(chart_svg: str) -> list[str]:
    return re.findall(r'<text [^>]*class="tick x[^"]*"[^>]*>([^<]+)</text>', chart_svg)


def bars(chart_svg: str) -> list[tuple[float, float, str]]:
    """(width, height, title) of every bar."""
    return [(float(w), float(h), title) for w, h, title in
            re.findall(r'<rect [^>]*width="([\d.]+)" height="([\d.]+)" class="bar"><title>([^<]+)</title>', chart_svg)]


def test_ten_minutes_of_judging_is_counted_by_the_minute(client, admin_user, campaign, judged_at):
    judged_at([START + timedelta(seconds=50 * i) for i in range(12)])  # 14:03:20 to 14:12:30

    response = page(client, admin_user, campaign)
    html = response.content.decode()

    rate = response.context["rate_chart"]
    assert rate["unit"] == "minute" and len(rate["bars"]) == 10  # 14:03 … 14:12
    assert sum(int(title.rsplit(": ", 1)[1]) for _, _, title in bars(svg(html, "Judgments per minute"))) == 24
    assert "Judgments per minute" in html and "Mon 04 Mar 2024" in html  # the day, once, beside the heading
    assert x_labels(svg(html, "Judgments per minute")) == ["14:04", "14:06", "14:08", "14:10", "14:12"]
    assert all(0 < w <= charts.MAX_BAR_W and h > 0 for w, h, _ in bars(svg(html, "Judgments per minute")))
    progress = svg(html, "Cumulative judgments per assessor over time")
    assert x_labels(progress) == ["14:04", "14:06", "14:08", "14:10", "14:12"]
    # The lines rise from 0 at 14:03 to each assessor's 12 at 14:13.
    first, *_, last = re.search(r'<polyline points="([^"]+)"', progress).group(1).split()
    assert float(first.split(",")[1]) == rate["bottom"] and float(last.split(",")[0]) == rate["right"]


def test_judging_within_one_minute_is_one_bar_with_its_time(client, admin_user, campaign, judged_at):
    judged_at([START + timedelta(seconds=i) for i in range(0, 30, 3)])

    html = page(client, admin_user, campaign).content.decode()

    rate = svg(html, "Judgments per minute")
    (bar,) = bars(rate)
    assert bar == (charts.MAX_BAR_W, pytest.approx(charts.CHART_H - charts.PAD_B - charts.PAD_T), "04 Mar 14:03–14:04: 20")
    assert x_labels(rate) == ["14:03", "14:04"]


def test_a_working_day_is_counted_by_the_quarter_hour(client, admin_user, campaign, judged_at):
    judged_at([datetime(2024, 3, 4, 9, 10, tzinfo=UTC) + timedelta(minutes=20 * i) for i in range(25)])  # to 17:10

    response = page(client, admin_user, campaign)
    html = response.content.decode()

    rate = response.context["rate_chart"]
    assert rate["unit"] == "15 minutes" and len(rate["bars"]) == 33  # 09:00 … 17:00
    assert "Judgments per 15 minutes" in html and "Mon 04 Mar 2024" in html
    # Every two hours, and the axis's end where it is not crowded by one.
    assert x_labels(svg(html, "Judgments per 15 minutes")) == ["10:00", "12:00", "14:00", "16:00", "17:15"]


def test_two_months_are_counted_by_the_day(client, admin_user, campaign, judged_at):
    judged_at([datetime(2024, 3, 4, 10, tzinfo=UTC) + timedelta(days=3 * i) for i in range(20)])  # to 01 May

    response = page(client, admin_user, campaign)
    html = response.content.decode()

    rate = response.context["rate_chart"]
    assert rate["unit"] == "day" and len(rate["bars"]) == 58 and rate["day"] == ""
    chart = svg(html, "Judgments per day")
    assert x_labels(chart) == ["04 Mar", "18 Mar", "01 Apr", "15 Apr", "29 Apr"]
    assert [title for _, h, title in bars(chart) if h > 0][:2] == ["04 Mar 2024: 2", "07 Mar 2024: 2"]
