"""Uploads above settings.UPLOAD_MAX_BYTES are refused with a message saying what to do, before their body is
read, on the pages and in the API, and nothing is kept."""

import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import WSGIHandler
from django.test import RequestFactory
from django.urls import reverse
from rest_framework.test import APIClient

from assessments.models import Job
from tests.factories import TopicFactory

pytestmark = pytest.mark.django_db

RUN = b"1 Q0 d1 1 2.0 alpha\n" * 10  # 200 bytes
MESSAGE = (
    "This upload is {size}; uploads may be at most 100 bytes. Import a larger file from the command line"
    " (manage.py import_runs, import_documents, import_topics or import_qrels), which reads it where it is."
)


@pytest.fixture(autouse=True)
def small_limit(settings, campaign):
    settings.UPLOAD_MAX_BYTES = 100
    TopicFactory(campaign=campaign, number="1")


def nothing_kept(settings) -> bool:
    uploads = Path(settings.MEDIA_ROOT) / "uploads"
    return not Job.objects.exists() and (not uploads.exists() or not any(uploads.rglob("*")))


def test_the_api_answers_413_with_the_reason(organiser, campaign, settings):
    api = APIClient()
    api.force_authenticate(organiser)
    response = api.post(f"/api/campaigns/{campaign.slug}/runs/", {"files": SimpleUploadedFile("run.txt", RUN)}, format="multipart")
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert detail.startswith("This upload is ") and detail.endswith(MESSAGE.split("; ", 1)[1])
    assert nothing_kept(settings)


def test_the_import_page_refuses_in_place_of_the_job(client, organiser, campaign, settings):
    client.force_login(organiser)
    url = reverse("assessments:import_upload", args=[campaign.slug, "runs"])
    response = client.post(url, {"runs-files": [SimpleUploadedFile("run.txt", RUN)]}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200  # htmx swaps only 2xx answers: the refusal shows where the job would have
    html = response.content.decode()
    assert "Refused" in html and "uploads may be at most 100 bytes" in html
    page = client.post(url, {"runs-files": [SimpleUploadedFile("run.txt", RUN)]}, HTTP_REFERER="/back/")
    assert page.status_code == 413 and "Upload too large" in page.content.decode() and 'href="/back/"' in page.content.decode()
    assert nothing_kept(settings)


def test_an_upload_within_the_limit_goes_through(client, organiser, campaign, settings):
    settings.UPLOAD_MAX_BYTES = 10_000
    client.force_login(organiser)
    response = client.post(reverse("assessments:import_upload", args=[campaign.slug, "runs"]),
                           {"runs-files": [SimpleUploadedFile("run.txt", RUN)]}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and Job.objects.count() == 1


class Unreadable(io.RawIOBase):
    """A request body that must not be read."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        raise AssertionError("the body of a refused upload was read")


@pytest.mark.parametrize("path", ["/api/campaigns/touche22/runs/", "/campaigns/touche22/import/runs/", "/campaigns/touche22/qrels/import/"])
def test_the_body_of_a_refused_upload_is_never_read(path):
    """The whole handler, CSRF check included (it would parse a form body), for an upload of 3 GB."""
    environ = RequestFactory()._base_environ(
        PATH_INFO=path, REQUEST_METHOD="POST", CONTENT_TYPE="multipart/form-data; boundary=xyz",
        CONTENT_LENGTH=str(3 * 1024**3), **{"wsgi.input": Unreadable()},
    )
    statuses = []
    body = b"".join(WSGIHandler()(environ, lambda status, headers: statuses.append(status)))
    assert statuses[0].startswith("413")
    assert b"This upload is 3.0 GB; uploads may be at most 100 bytes." in body
