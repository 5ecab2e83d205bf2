"""The organiser's imports page and the REST API: who may upload, what a job records while it runs and after,
and the polling partial that stops when the job is done."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import include, path, reverse
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator

from accounts.models import Role
from assessments.api import imports as imports_api
from assessments.models import Document, Job, Run, Topic
from assessments.services.imports.topics import import_topics
from tests.factories import CampaignFactory, UserFactory

TOPICS = b"<topics><topic><number>1</number><title>Cats or dogs?</title></topic><topic><number>2</number><title>Tea or coffee?</title></topic></topics>"
RUN = b"1 Q0 d1 1 2.0 alpha\n1 Q0 d2 2 1.0 alpha\n1 Q0 d3 3 0.5 alpha\n"


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


@pytest.fixture
def campaign(db, upload_root):
    return CampaignFactory(slug="pages")


@pytest.fixture
def assessor(db):
    return UserFactory(username="ann", role=Role.ASSESSOR)


# --- The page --------------------------------------------------------------------------------------------------


def test_the_page_shows_the_forms_and_what_the_campaign_has(client, organiser, campaign, django_assert_max_num_queries):
    Topic.objects.create(campaign=campaign, number="7", title="Which is better, a laptop or a desktop?", compared_objects=["laptop", "desktop"])
    Run.objects.create(campaign=campaign, tag="ElrondKRun", team="Elrond", line_count=50_000)
    client.force_login(organiser)
    with django_assert_max_num_queries(10):
        response = client.get(reverse("assessments:imports", args=[campaign.slug]))
    page = response.content.decode()
    assert response.status_code == 200
    for what in ("topics", "documents", "runs"):
        assert reverse("assessments:import_upload", args=[campaign.slug, what]) in page
    assert "Which is better, a laptop or a desktop?" in page and "ElrondKRun" in page and "50,000" in page


@pytest.mark.parametrize("who, status", [("assessor", 404), ("anonymous", 302)])
def test_only_organisers_reach_the_page_or_upload(client, campaign, assessor, who, status):
    if who == "assessor":
        client.force_login(assessor)
    assert client.get(reverse("assessments:imports", args=[campaign.slug])).status_code == status
    response = client.post(reverse("assessments:import_upload", args=[campaign.slug, "topics"]), {"topics-file": upload("t.xml", TOPICS)})
    assert response.status_code == status
    assert not Job.objects.exists() and not Topic.objects.exists()


def test_an_upload_keeps_the_file_for_the_job_which_imports_it_then_deletes_it(
    client, organiser, campaign, upload_root, django_capture_on_commit_callbacks, monkeypatch
):
    seen = []
    original = import_topics

    def spy(**kwargs):
        seen.append((Path(kwargs["path"]), Path(kwargs["path"]).read_bytes()))
        return original(**kwargs)

    monkeypatch.setattr("assessments.services.imports.uploads.import_topics", spy)
    client.force_login(organiser)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("assessments:import_upload", args=[campaign.slug, "topics"]), {"topics-file": upload("topics.xml", TOPICS)})
    job = Job.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('assessments:imports', args=[campaign.slug])}#job-{job.pk}"
    kept, content = seen[0]
    assert kept.parent == upload_root / "uploads" / str(job.pk) and content == TOPICS
    assert not kept.parent.exists()  # deleted once imported
    assert (job.kind, job.status, job.created_by) == ("import_topics", "succeeded", organiser)
    assert (job.done, job.total) == (len(TOPICS), len(TOPICS))
    assert job.message == "topics.xml: 2 topics (2 new, 0 updated, 0 unchanged)"
    assert list(campaign.topics.values_list("number", flat=True)) == ["1", "2"]


def test_the_htmx_upload_answers_with_a_status_block_that_polls_until_the_job_ends(client, organiser, campaign, django_capture_on_commit_callbacks):
    client.force_login(organiser)
    Topic.objects.create(campaign=campaign, number="1", title="t")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("assessments:import_upload", args=[campaign.slug, "runs"]),
            {"runs-files": [upload("Team-alpha.txt", RUN)], "runs-team": ""}, HTTP_HX_REQUEST="true",
        )
    job = Job.objects.get()
    status_url = reverse("assessments:job", args=[campaign.slug, job.pk])
    queued = response.content.decode()
    assert f'hx-get="{status_url}" hx-trigger="every 1s"' in queued and "Queued" in queued
    finished = client.get(status_url, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in finished
    assert "Team-alpha.txt: 1 run with 3 lines stored (1 new, 0 replaced)" in finished


def test_a_refused_upload_shows_file_line_and_reason_and_stores_nothing(client, organiser, campaign, django_capture_on_commit_callbacks):
    Topic.objects.create(campaign=campaign, number="1", title="t")
    client.force_login(organiser)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("assessments:import_upload", args=[campaign.slug, "runs"]), {"runs-files": [upload("good.txt", RUN), upload("bad.txt", b"1 Q0 d1 1 x beta\n")]})
    job = Job.objects.get()
    assert (job.status, job.errors) == ("failed", ["bad.txt:1: score 'x' is not a number in ASCII digits"])
    assert not Run.objects.exists()
    block = client.get(reverse("assessments:job", args=[campaign.slug, job.pk])).content.decode()
    assert "bad.txt:1: score &#x27;x&#x27; is not a number" in block and "Nothing of this job was stored" in block


def test_an_invalid_form_is_refused_before_any_job(client, organiser, campaign):
    client.force_login(organiser)
    response = client.post(reverse("assessments:import_upload", args=[campaign.slug, "documents"]), {"documents-format": "pdf"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "Refused" in response.content.decode()
    assert not Job.objects.exists()


def test_the_job_status_is_scoped_to_the_campaign_and_to_organisers(client, organiser, campaign, assessor, django_assert_max_num_queries):
    job = Job.objects.create(campaign=campaign, kind="import_runs", status="running", done=50, total=200, params={"unit": "bytes", "files": [{"name": "r.txt"}]})
    other = Job.objects.create(campaign=CampaignFactory(), kind="import_runs")
    client.force_login(organiser)
    with django_assert_max_num_queries(4):
        block = client.get(reverse("assessments:job", args=[campaign.slug, job.pk])).content.decode()
    assert 'aria-valuenow="25"' in block and "50\xa0bytes of 200\xa0bytes read" in block
    assert client.get(reverse("assessments:job", args=[campaign.slug, other.pk])).status_code == 404
    client.force_login(assessor)
    assert client.get(reverse("assessments:job", args=[campaign.slug, job.pk])).status_code == 404


# --- The API ---------------------------------------------------------------------------------------------------


def test_an_organiser_uploads_topics_and_follows_the_job(client, organiser, campaign, django_capture_on_commit_callbacks):
    client.force_login(organiser)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/campaigns/{campaign.slug}/topics/", {"file": upload("topics.xml", TOPICS)})
    assert response.status_code == 202
    assert (response.json()["kind"], response.json()["status"]) == ("import_topics", "queued")
    job = client.get(f"/api/jobs/{response.json()['id']}/").json()
    assert (job["status"], job["done"], job["total"], job["percent"]) == ("succeeded", len(TOPICS), len(TOPICS), 100)
    assert job["message"] == "topics.xml: 2 topics (2 new, 0 updated, 0 unchanged)"
    listed = client.get(f"/api/campaigns/{campaign.slug}/topics/").json()
    assert [(t["number"], t["title"]) for t in listed["results"]] == [("1", "Cats or dogs?"), ("2", "Tea or coffee?")]


def test_runs_and_documents_go_through_the_api_too(client, organiser, campaign, django_capture_on_commit_callbacks):
    Topic.objects.create(campaign=campaign, number="1", title="t")
    Topic.objects.create(campaign=campaign, number="2", title="u", position=1)
    client.force_login(organiser)
    with django_capture_on_commit_callbacks(execute=True):
        runs = client.post(f"/api/campaigns/{campaign.slug}/runs/", {"file": [upload("a.txt", RUN), upload("b.txt", RUN.replace(b"alpha", b"beta"))], "team": "Cats"})
        documents = client.post(
            f"/api/campaigns/{campaign.slug}/documents/",
            {"file": upload("docs.jsonl", b'{"id": "d1", "contents": "Cats."}\n{"id": "d2", "contents": "Dogs."}\n'), "format": "passages"},
        )
    assert (runs.status_code, documents.status_code) == (202, 202)
    listed = client.get(f"/api/campaigns/{campaign.slug}/runs/").json()["results"]
    assert [(r["tag"], r["team"], r["line_count"], r["uploaded_by"]) for r in listed] == [("alpha", "Cats", 3, "olivia"), ("beta", "Cats", 3, "olivia")]
    counts = client.get(f"/api/campaigns/{campaign.slug}/documents/").json()
    assert counts == {"collection": campaign.collection.slug, "total": 2, "with_text": 2, "pooled": 0, "pooled_with_text": 0}
    assert Document.objects.count() == 2


def test_the_api_refuses_a_request_without_a_file(client, organiser, campaign):
    client.force_login(organiser)
    response = client.post(f"/api/campaigns/{campaign.slug}/runs/", {"team": "x"})
    assert response.status_code == 400 and "file" in response.json()
    assert not Job.objects.exists()


@pytest.mark.parametrize("who, status", [("assessor", 403), ("anonymous", 401)])
def test_only_organisers_use_the_import_api(client, campaign, assessor, who, status):
    job = Job.objects.create(campaign=campaign, kind="import_runs")
    if who == "assessor":
        client.force_login(assessor)
    assert client.post(f"/api/campaigns/{campaign.slug}/topics/", {"file": upload("t.xml", TOPICS)}).status_code == status
    assert client.get(f"/api/campaigns/{campaign.slug}/runs/").status_code == status
    assert client.get(f"/api/jobs/{job.pk}/").status_code == status
    assert Job.objects.count() == 1 and not Topic.objects.exists()


def test_an_unknown_job_or_campaign_is_not_found(client, organiser, campaign):
    client.force_login(organiser)
    assert client.get("/api/jobs/999999/").status_code == 404
    assert client.post("/api/campaigns/nope/topics/", {"file": upload("t.xml", TOPICS)}).status_code == 404


def test_the_import_api_schema_renders_without_warnings():
    GENERATOR_STATS.reset()
    generator = SchemaGenerator(patterns=[path("api/", include(imports_api.register(None)))])
    schema = generator.get_schema(request=None, public=True)
    assert not GENERATOR_STATS._warn_cache and not GENERATOR_STATS._error_cache, dict(GENERATOR_STATS._warn_cache)
    upload_body = schema["paths"]["/api/campaigns/{slug}/runs/"]["post"]["requestBody"]["content"]["multipart/form-data"]
    assert upload_body["schema"]["$ref"].endswith("/RunUpload")
    assert set(schema["paths"]) == {
        "/api/campaigns/{slug}/topics/", "/api/campaigns/{slug}/runs/", "/api/campaigns/{slug}/documents/", "/api/campaigns/{slug}/items/",
        "/api/campaigns/{slug}/images/",
        "/api/jobs/{job_id}/", "/api/jobs/{job_id}/cancel/", "/api/jobs/{job_id}/retry/", "/api/jobs/{job_id}/confirm/",
    }


def test_runs_are_refused_at_once_while_the_campaign_has_no_topics(client, organiser, campaign, upload_root):
    client.force_login(organiser)
    response = client.post(reverse("assessments:import_upload", args=[campaign.slug, "runs"]), {"runs-files": [upload("a.txt", RUN)]}, HTTP_HX_REQUEST="true")
    assert "has no topics yet: import its topics before its runs" in response.content.decode()
    assert not Job.objects.exists()
    assert not (upload_root / "uploads").exists() or not any((upload_root / "uploads").iterdir())


def test_a_bad_collection_file_is_named_as_uploaded_not_as_kept(client, organiser, campaign, django_capture_on_commit_callbacks):
    client.force_login(organiser)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/campaigns/{campaign.slug}/documents/", {"file": upload("docs.jsonl", b'{"id": "a", "contents": "x"}\n{"id": 3.5}\n')})
    job = client.get(f"/api/jobs/{response.json()['id']}/").json()
    assert (job["status"], job["errors"]) == ("failed", ["docs.jsonl:2: id must be a string, got a number"])
    assert not Document.objects.exists()
