"""What a script writer's mistakes are answered (issue 23, the API items): a 4xx in JSON that says what is wrong,
never an HTML 500 and never a change the client did not ask for."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from assessments.models import AuditEvent, Document, Job
from tests.factories import TopicFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("body", ["null", "1", "[1]", '"name"', "[]"])
def test_a_settings_patch_whose_json_is_not_an_object_is_a_400(api, campaign, body):
    response = api.patch(f"/api/campaigns/{campaign.slug}/", body, content_type="application/json")

    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "the body must be a JSON object of settings" in response.json()["detail"]
    campaign.refresh_from_db()
    assert campaign.name == "Touché 2022 Task 2" and not AuditEvent.objects.exists()


def test_a_form_encoded_archive_without_archived_is_a_400_and_changes_nothing(api, campaign):
    campaign.archived_at = timezone.now()
    campaign.save()

    response = api.post(f"/api/campaigns/{campaign.slug}/archive/", {}, format="multipart")

    assert response.status_code == 400 and response.json() == {"archived": ["This field is required."]}
    campaign.refresh_from_db()
    assert campaign.is_archived
    # the field given, in a form too, still works both ways
    assert api.post(f"/api/campaigns/{campaign.slug}/archive/", {"archived": "false"}, format="multipart").status_code == 200
    campaign.refresh_from_db()
    assert not campaign.is_archived


@pytest.mark.parametrize("path", ["/api/nothing/", "/api/campaigns/touche22/nothing/", "/api/v2/campaigns/"])
def test_an_unknown_address_under_api_answers_a_json_404(api, campaign, path):
    response = api.get(path)
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


def test_elsewhere_an_unknown_address_stays_a_page_and_a_missing_slash_still_redirects(client, api, campaign, organiser):
    client.force_login(organiser)
    page = client.get("/nowhere/")
    assert page.status_code == 404 and not page["Content-Type"].startswith("application/json")
    assert api.get(f"/api/campaigns/{campaign.slug}").status_code == 301


@pytest.mark.parametrize("query", ["action=%00", "action=import%00x", "%00=1"])
def test_a_nul_byte_in_a_query_parameter_is_a_400_not_a_500(client, api, campaign, organiser, query):
    response = api.get(f"/api/campaigns/{campaign.slug}/timeline/?{query}")
    assert response.status_code == 400 and "NUL byte" in response.json()["detail"]

    client.force_login(organiser)
    page = client.get(f"/campaigns/{campaign.slug}/timeline/?{query}")
    assert page.status_code == 400 and "NUL byte" in page.content.decode()


def test_a_percent_sign_followed_by_zeros_is_no_nul(api, campaign):
    assert api.get(f"/api/campaigns/{campaign.slug}/timeline/?action=%2500").status_code == 200


def test_an_upload_with_a_304_character_name_is_imported(api, campaign, upload_root, django_capture_on_commit_callbacks):
    name = "d" * 298 + ".jsonl"
    assert len(name) == 304
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/campaigns/{campaign.slug}/documents/",
                            {"file": SimpleUploadedFile(name, b'{"id": "d1", "contents": "Cats."}\n'), "format": "passages"})

    assert response.status_code == 202
    job = Job.objects.get()
    assert job.status == "succeeded", job.errors
    shown = job.params["files"][0]["name"]
    assert shown.endswith(".jsonl") and len(shown) == 255  # as Django keeps it
    assert Document.objects.get(doc_id="d1").body == "Cats."


def test_a_qrels_upload_with_a_long_multibyte_name_is_imported(api, campaign, upload_root, django_capture_on_commit_callbacks):
    TopicFactory(campaign=campaign, number="1")
    name = "é" * 250 + ".qrels"  # 255 characters, 506 bytes
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/campaigns/{campaign.slug}/qrels/import/",
                            {"file": SimpleUploadedFile(name, b"1 0 d1 2\n"), "kind": "relevance", "assessor": "touche21"})
    assert response.status_code == 202
    assert Job.objects.get(kind="import_qrels").status == "succeeded"
