"""The job block on the imports page, in a browser: Cancel and Retry swap it in place, and an upload while the job
queue is down shows why in the list of imports (htmx shows the 503's message). Set SCREENSHOTS=folder to keep
a picture of each."""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from assessments.models import Job
from tests.factories import TopicFactory

pytestmark = pytest.mark.browser

SCREENSHOTS = os.environ.get("SCREENSHOTS")
RUN = b"1 Q0 d1 1 2.0 alpha\n1 Q0 d2 2 1.0 alpha\n"


@pytest.fixture
def imports_page(page, live_server, organiser, campaign):
    client = Client()
    client.force_login(organiser)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    TopicFactory(campaign=campaign, number="1")
    return reverse("assessments:imports", args=[campaign.slug])


def shoot(page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=Path(SCREENSHOTS) / f"{name}.png", full_page=True)


def test_cancel_and_retry_change_the_job_block_in_place(page, imports_page, campaign):
    queued = Job.objects.create(campaign=campaign, kind="import_runs", params={"unit": "bytes", "files": [{"name": "waiting.txt"}]})
    failed = Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.FAILED, attempts=1,
                                message="Its worker (pid 4242 on vm) stopped reporting at 44 %. Retry it.")
    failed.errors = [failed.message]
    failed.params = {"unit": "bytes", "files": [{"path": f"uploads/{failed.pk}/1-a.txt", "name": "a.txt"}]}
    failed.save()
    failed.upload_folder.mkdir(parents=True)
    (failed.upload_folder / "1-a.txt").write_bytes(RUN)

    page.goto(imports_page)
    shoot(page, "jobs-before")
    page.locator(f"#job-{queued.pk}").get_by_role("button", name="Cancel").click()
    expect(page.locator(f"#job-{queued.pk}")).to_contain_text("Cancelled by olivia before it started.")
    page.locator(f"#job-{failed.pk}").get_by_role("button", name="Retry").click()  # runs inline: no broker here
    expect(page.locator(f"#job-{failed.pk}")).to_contain_text("a.txt: 1 run with 2 lines stored")
    expect(page.locator(f"#job-{failed.pk}")).to_contain_text("attempt 2")
    shoot(page, "jobs-after")
    assert not page.errors


def test_an_upload_while_the_job_queue_is_down_says_so_where_the_job_would_appear(page, imports_page, broker, tmp_path):
    broker.stop()
    run = tmp_path / "team-alpha.txt"
    run.write_bytes(RUN)

    page.goto(imports_page)
    form = page.locator("form.import-form").filter(has_text="Run files")
    form.locator("input[type=file]").set_input_files(run)
    form.get_by_role("button", name="Upload and import").click()

    expect(page.locator("#jobs .job-failed")).to_contain_text("The job queue is not reachable, so the job was not started")
    shoot(page, "jobs-queue-down")
    assert not Job.objects.exists() and not page.errors


def test_the_figures_and_tables_follow_an_upload_without_a_reload(page, imports_page, tmp_path):
    (tmp_path / "alpha.txt").write_bytes(RUN)
    page.goto(imports_page)
    runs_figure = page.locator("#import-figures .figure").nth(1)
    expect(runs_figure).to_contain_text("0")
    form = page.locator("form.import-form").filter(has=page.locator("input[name=runs-files]"))
    form.locator("input[name=runs-files]").set_input_files(str(tmp_path / "alpha.txt"))
    form.get_by_role("button", name="Upload and import").click()
    expect(page.locator(".job-succeeded")).to_contain_text("1 run with 2 lines stored")
    expect(runs_figure).to_contain_text("1")  # the job's end reloads the figures and tables, not the page
    expect(page.locator("#import-tables")).to_contain_text("alpha")
    expect(form.get_by_role("button", name="Upload and import")).to_be_enabled()
    expect(form.locator(".upload-state")).to_be_hidden()
    shoot(page, "imports-after-upload")
    assert not page.errors
