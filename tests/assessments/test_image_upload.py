"""An image collection uploaded as a zip from the imports page or the API: imported by a job, its thumbnails by
another, and a hostile or wrong upload refused with the file named and nothing stored."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import User
from assessments.models import Campaign, Document, Job, Membership


def zipped(folder: Path, *, replace: dict[str, bytes] | None = None) -> bytes:
    """The folder as the zip an organiser would make of it (paths under the folder's own name), with `replace`
    swapping the bytes of some members."""
    replace = replace or {}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                name = path.relative_to(folder.parent).as_posix()
                archive.writestr(name, replace.get(name, path.read_bytes()))
    return buffer.getvalue()


@pytest.fixture
def sample(touche_data) -> Path:
    return touche_data / "2023-task3-sample"


@pytest.fixture
def organiser(db, command, sample, tmp_path, settings) -> User:
    settings.MEDIA_ROOT = tmp_path / "media"
    topics = [json.loads(line) for line in (sample / "queries.jsonl").read_text().splitlines()]
    (tmp_path / "topics.tsv").write_text("".join(f"{t['qid']}\t{t['query']}\n" for t in topics))
    assert command("create_campaign", "img23", "--name", "Images", "--preset", "touche-2023-task3").code == 0
    assert command("import_topics", "img23", tmp_path / "topics.tsv").code == 0
    olivia = User.objects.create_user("olivia", password="x-long-enough-password", role="organiser")
    Membership.objects.create(campaign=Campaign.objects.get(slug="img23"), user=olivia)
    return olivia


def test_the_sample_zipped_comes_in_through_the_imports_page_with_its_thumbnails(
    organiser, client, sample, django_capture_on_commit_callbacks
):
    client.force_login(organiser)
    page = client.get(reverse("assessments:imports", args=["img23"])).content.decode()
    assert 'name="images-file"' in page and 'name="documents-files"' not in page
    assert "topic PRO|CON imageId rank score tag" in page  # the runs form says what an image run is

    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(reverse("assessments:import_upload", args=["img23", "images"]), {
            "images-file": SimpleUploadedFile("task3-sample.zip", zipped(sample / "images")),
        })
    assert answer.status_code in (200, 302)
    imported = Job.objects.get(kind="import_images")
    assert imported.status == "succeeded", imported.message
    assert imported.message.startswith("task3-sample.zip: 50 images stored")
    assert (imported.done, imported.total) == (50, 50)
    thumbnails = Job.objects.get(kind="make_thumbnails")
    assert thumbnails.status == "succeeded", thumbnails.message
    images = Document.objects.filter(collection__slug="img23")
    assert images.count() == 50 and not images.filter(metadata__image__thumbnail=None).exists()
    # Both jobs are listed on the page, with the image count.
    page = client.get(reverse("assessments:imports", args=["img23"])).content.decode()
    assert f'id="job-{imported.pk}"' in page and f'id="job-{thumbnails.pk}"' in page
    assert "images in img23" in page


def test_the_api_takes_the_zip_and_a_hostile_image_in_it_fails_the_job_naming_it_with_nothing_stored(
    organiser, sample, django_capture_on_commit_callbacks
):
    api = APIClient()
    api.force_authenticate(organiser)
    first = sorted((sample / "images").glob("I*/I*/image.webp"))[0]
    member = first.relative_to(sample).as_posix()
    hostile = zipped(sample / "images", replace={member: b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'})
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(reverse("api-images", args=["img23"]), {"file": SimpleUploadedFile("bad.zip", hostile)}, format="multipart")
    assert answer.status_code == 202, answer.content
    job = Job.objects.get(pk=answer.json()["id"])
    assert job.status == "failed" and f"bad.zip:{member}" in job.message, job.message
    assert not Document.objects.filter(collection__slug="img23").exists()
    assert not Job.objects.filter(kind="make_thumbnails").exists()

    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(reverse("api-images", args=["img23"]), {"file": SimpleUploadedFile("good.zip", zipped(sample / "images"))},
                          format="multipart")
    assert Job.objects.get(pk=answer.json()["id"]).status == "succeeded"
    counts = api.get(reverse("api-images", args=["img23"])).json()
    assert (counts["collection"], counts["total"]) == ("img23", 50)


def test_what_is_not_a_zip_or_not_an_image_campaign_is_refused_before_it_is_kept(organiser, command, client, tmp_path):
    client.force_login(organiser)
    refused = client.post(reverse("assessments:import_upload", args=["img23", "images"]), {
        "images-file": SimpleUploadedFile("images.tar", b"not a zip at all"),
    }, follow=True)
    assert "images.tar: not a zip file" in refused.content.decode()
    assert command("create_campaign", "args23", "--name", "Args", "--preset", "touche-2023-task1").code == 0
    Membership.objects.create(campaign=Campaign.objects.get(slug="args23"), user=organiser)
    api = APIClient()
    api.force_authenticate(organiser)
    refused = api.post(reverse("api-images", args=["args23"]), {"file": SimpleUploadedFile("x.zip", b"PK\x05\x06" + bytes(18))},
                       format="multipart")
    assert refused.status_code == 400 and "does not judge images" in refused.json()["detail"]
    assert not Job.objects.exists()
    assert not any((tmp_path / "media").rglob("*.zip"))
