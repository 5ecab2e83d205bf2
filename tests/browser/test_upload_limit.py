"""The import form refuses a file above the upload limit in the browser, before sending a byte of it.

Set SCREENSHOTS to a folder to keep a screenshot of the refusal (and of the page shown while the database is
unreachable, which no live server can be made to show here).
"""

import os
from pathlib import Path

import pytest
from django.template.loader import render_to_string

from assessments.models import Job
from tests.browser.conftest import PASSWORD
from tests.factories import TopicFactory

pytestmark = pytest.mark.browser
SCREENSHOTS = os.environ.get("SCREENSHOTS")


def test_a_file_above_the_limit_is_refused_before_it_is_sent(page, live_server, settings, organiser, campaign):
    settings.UPLOAD_MAX_BYTES = 100
    TopicFactory(campaign=campaign, number="1")
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(organiser.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    page.wait_for_url("**/campaigns/")
    page.goto(f"/campaigns/{campaign.slug}/import/")
    sent = []
    page.on("request", lambda request: sent.append(request.url) if request.method == "POST" else None)

    form = page.locator("form.import-form").filter(has_text="Run files")
    form.locator("input[type=file]").set_input_files(
        [{"name": "run.txt", "mimeType": "text/plain", "buffer": b"1 Q0 d1 1 2.0 alpha\n" * 10}]
    )
    form.get_by_role("button", name="Upload and import").click()

    refusal = form.locator(".upload-refused")
    refusal.wait_for()
    assert refusal.inner_text().startswith("This upload is 200 bytes; uploads may be at most 100 bytes.")
    assert sent == [] and not Job.objects.exists() and page.errors == []
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / "upload-refused.png"), full_page=True)
        page.set_content(render_to_string("503.html", {"retry_after": 10}).replace("/static/", f"{live_server.url}/static/"))
        page.screenshot(path=str(Path(SCREENSHOTS) / "database-unavailable.png"))
