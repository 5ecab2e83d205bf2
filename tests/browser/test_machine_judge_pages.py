"""The machine judges pages in a browser at a desktop's 1440 px and a phone's 390 px: nothing overflows sideways, the
estimate arrives in place before a run starts, and the adjudication page shows a machine case's labels and reason.

Set SCREENSHOTS to a folder to keep a full-page screenshot of each page at each width (for looking at them).
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from assessments.models import Job, MachineLabel
from assessments.services import machine_judges
from assessments.services.judging import Labels, record_judgment
from tests.browser.test_responsive import OFFENDERS, signed_in
from tests.factories import PoolEntryFactory

pytestmark = pytest.mark.browser

SCREENSHOTS = os.environ.get("SCREENSHOTS")
REASON = "The document compares cats and dogs as pets at length, with arguments on both sides."


@pytest.fixture
def judged(campaign, training_topic, pool, alice, bob, admin_user):
    """Eight documents judged by alice and bob, labelled by an endpoint judge (prompt edited once) from a finished run,
    some far from the assessors; and a local judge."""
    entries = pool + [PoolEntryFactory(topic=training_topic, order=i) for i in range(3, 8)]
    judge = machine_judges.add_judge(campaign=campaign, name="gpt-4o-mini", kind="endpoint", model="gpt-4o-mini",
                                     base_url="https://api.openai.com/v1", key_name="OPENAI_API_KEY", in_flight=8,
                                     per_minute=500, by=admin_user)
    first = machine_judges.current_prompts(judge)["relevance"]
    machine_judges.change_prompt(judge=judge, dimension="relevance", template=first.template + "\nBe strict.",
                                 answers={"0": 0, "1": 1, "2": 2, "3": 2}, by=admin_user)
    machine_judges.add_judge(campaign=campaign, name="local", kind="local", by=admin_user)
    job = Job.objects.create(campaign=campaign, kind="machine_judge", params={"judge": judge.pk}, status="succeeded",
                             done=8, total=8, message="gpt-4o-mini: 7 labels, 1 failed calls", created_by=admin_user)
    for i, entry in enumerate(entries):
        for assessor, relevance in ((alice, i % 3), (bob, (i + 1) % 3)):
            record_judgment(topic=entry.topic, document=entry.document, assessor=assessor, phase="training",
                            labels=Labels({"relevance": relevance}))
        machine = (2, 0, 2, 1)[i % 4]
        failed = i == 7
        MachineLabel.objects.create(
            judge=judge, job=job, topic=entry.topic, document=entry.document, dimension="relevance",
            status="failed" if failed else "ok", labels={} if failed else {"relevance": machine}, model=judge.model,
            prompt_version=2, parameters={"temperature": 0}, reason="" if failed else REASON,
            raw_answer="" if failed else f"{REASON}\n##final answer: {machine}", attempts=4 if failed else 1,
            error="HTTP 503 from the endpoint: overloaded (after 4 attempts)" if failed else "",
            prompt_tokens=0 if failed else 812, completion_tokens=0 if failed else 41,
        )
    return judge, entries


def look(page, width, name):
    page.wait_for_load_state("load")
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=Path(SCREENSHOTS) / f"machine-{name}-{width}.png", full_page=True)
    fit = page.evaluate(OFFENDERS)
    assert fit["out"] == [] and fit["scroll"] <= fit["width"], (name, width, fit)


@pytest.mark.parametrize("width", [1440, 390])
def test_the_machine_judge_pages_fit_and_the_estimate_comes_before_the_run(page, live_server, campaign, judged, width):
    judge, entries = judged
    page.set_viewport_size({"width": width, "height": 900})
    page = signed_in(page.context, live_server, "ada")
    slug = campaign.slug

    page.goto(reverse("assessments:machine_judges", args=[slug]))
    expect(page.get_by_role("link", name="gpt-4o-mini").first).to_be_visible()
    look(page, width, "judges")

    page.goto(reverse("assessments:machine_judge", args=[slug, judge.name]))
    page.get_by_label("Relevance", exact=True).check()
    page.get_by_role("button", name="Estimate").click()
    expect(page.locator("#estimate")).to_contain_text("Nothing has started yet")
    assert Job.objects.count() == 1  # the finished one: the estimate starts nothing
    look(page, width, "judge")

    page.goto(reverse("assessments:machine_judge", args=[slug, "local"]))
    expect(page.locator(".notice")).to_contain_text("weak judge")
    look(page, width, "local")

    page.goto(reverse("assessments:machine_judge_labels", args=[slug, judge.name]))
    look(page, width, "labels")

    page.goto(reverse("assessments:machine_disagreements", args=[slug]))
    expect(page.get_by_role("link", name="adjudicate").first).to_be_visible()
    look(page, width, "disagreements")
    page.get_by_role("link", name="adjudicate").first.click()
    expect(page.get_by_role("heading", name="What the machine judge said")).to_be_visible()
    expect(page.locator("main")).to_contain_text(REASON)
    look(page, width, "adjudicate")
    assert page.errors == []
