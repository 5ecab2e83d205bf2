"""Organisers cancel and retry jobs from the job's block on the page and from the API, within the campaigns they
run; a job that cannot be queued (broker down) is answered 503 and leaves nothing behind."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import Role
from assessments.models import Job
from tests.factories import TopicFactory, UserFactory

RUN = b"1 Q0 d1 1 2.0 alpha\n1 Q0 d2 2 1.0 alpha\n"


@pytest.fixture
def assessor(db):
    return UserFactory(username="ann", role=Role.ASSESSOR)


def api(user=None) -> APIClient:
    client = APIClient()
    if user:
        client.force_authenticate(user)
    return client


def failed_with_files(campaign, **fields) -> Job:
    """An import of run.txt that failed (its worker was lost), with the file kept for a retry."""
    job = Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.FAILED, message="lost", errors=["lost"], **fields)
    job.params = {"unit": "bytes", "files": [{"path": f"uploads/{job.pk}/1-run.txt", "name": "run.txt"}]}
    job.save(update_fields=["params"])
    job.upload_folder.mkdir(parents=True)
    (job.upload_folder / "1-run.txt").write_bytes(RUN)
    return job


# --- The API -----------------------------------------------------------------------------------------------------


def test_the_api_cancels_a_queued_job_and_refuses_to_cancel_it_twice(organiser, campaign):
    job = Job.objects.create(campaign=campaign, kind="import_runs")

    response = api(organiser).post(f"/api/jobs/{job.pk}/cancel/")
    again = api(organiser).post(f"/api/jobs/{job.pk}/cancel/")

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["message"]) == ("cancelled", "Cancelled by olivia before it started.")
    assert again.status_code == 409 and again.json() == {"detail": f"job {job.pk} has already ended (cancelled)"}


def test_the_api_retries_a_failed_job_with_its_files(organiser, campaign, django_capture_on_commit_callbacks):
    TopicFactory(campaign=campaign, number="1")
    job = failed_with_files(campaign)

    with django_capture_on_commit_callbacks(execute=True):
        response = api(organiser).post(f"/api/jobs/{job.pk}/retry/")

    assert response.status_code == 202 and response.json()["status"] == "queued"
    job.refresh_from_db()
    assert (job.status, job.attempts, job.errors) == (Job.Status.SUCCEEDED, 1, []), job.errors
    assert campaign.runs.get().line_count == 2


def test_the_api_refuses_to_retry_a_job_whose_files_are_gone(organiser, campaign):
    job = failed_with_files(campaign)
    for path in job.upload_folder.iterdir():
        path.unlink()
    job.upload_folder.rmdir()

    response = api(organiser).post(f"/api/jobs/{job.pk}/retry/")

    assert response.status_code == 409
    assert response.json() == {"detail": f"the files of job {job.pk} were removed; upload them again"}


@pytest.mark.parametrize("action", ["cancel", "retry"])
@pytest.mark.parametrize("who, status", [("oscar", 404), ("assessor", 403), ("anonymous", 401)])
def test_only_the_campaign_s_organisers_change_its_jobs_through_the_api(request, campaign, action, who, status):
    job = failed_with_files(campaign) if action == "retry" else Job.objects.create(campaign=campaign, kind="import_runs")
    user = None if who == "anonymous" else request.getfixturevalue(who)

    assert api(user).post(f"/api/jobs/{job.pk}/{action}/").status_code == status

    assert Job.objects.get(pk=job.pk).status == job.status


# --- The page ----------------------------------------------------------------------------------------------------


def test_the_job_block_offers_what_can_be_done_with_the_job(client, organiser, campaign):
    queued = Job.objects.create(campaign=campaign, kind="import_runs")
    stopping = Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.RUNNING, cancel_requested_at="2026-01-01T00:00Z")
    retryable = failed_with_files(campaign, attempts=2)
    bad_file = Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.FAILED, errors=["run.txt:3: bad"],
                                  params={"files": [{"path": "uploads/0/run.txt", "name": "run.txt"}]})
    done = Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.SUCCEEDED, message="stored")
    client.force_login(organiser)

    def block(job: Job) -> str:
        return client.get(reverse("assessments:job", args=[campaign.slug, job.pk])).content.decode()

    assert reverse("assessments:job_cancel", args=[campaign.slug, queued.pk]) in block(queued)
    assert "Cancelling: the job stops at its next step" in block(stopping) and ">Cancel<" not in block(stopping)
    assert reverse("assessments:job_retry", args=[campaign.slug, retryable.pk]) in block(retryable)
    assert "attempt 2" in block(retryable)
    assert "Its files were removed: upload them again to retry." in block(bad_file) and ">Retry<" not in block(bad_file)
    assert ">Cancel<" not in block(done) and ">Retry<" not in block(done)


def test_cancel_on_the_page_swaps_the_job_block_or_returns_to_the_job_s_page(client, organiser, campaign):
    build = Job.objects.create(campaign=campaign, kind="build_pool")
    upload = Job.objects.create(campaign=campaign, kind="import_runs")
    client.force_login(organiser)

    swapped = client.post(reverse("assessments:job_cancel", args=[campaign.slug, upload.pk]), HTTP_HX_REQUEST="true")
    redirected = client.post(reverse("assessments:job_cancel", args=[campaign.slug, build.pk]))

    assert swapped.status_code == 200
    assert "Cancelled by olivia before it started. Nothing of this job was stored." in swapped.content.decode()
    assert "hx-trigger" not in swapped.content.decode()  # it has ended: no more polling
    assert redirected.status_code == 302 and redirected["Location"] == f"{reverse('assessments:pool', args=[campaign.slug])}#job-{build.pk}"
    assert Job.objects.filter(status=Job.Status.CANCELLED).count() == 2


@pytest.mark.parametrize("who", ["oscar", "assessor"])
def test_only_the_campaign_s_organisers_change_its_jobs_on_the_page(client, request, campaign, who):
    job = Job.objects.create(campaign=campaign, kind="import_runs")
    client.force_login(request.getfixturevalue(who))

    assert client.post(reverse("assessments:job_cancel", args=[campaign.slug, job.pk])).status_code == 404
    assert Job.objects.get(pk=job.pk).status == Job.Status.QUEUED


# --- The broker is down ------------------------------------------------------------------------------------------


@pytest.fixture
def broker_down(transactional_db, broker, settings, tmp_path):
    """The test's Redis, stopped; jobs are sent to it, not run in this process."""
    settings.MEDIA_ROOT = tmp_path / "media"
    broker.stop()
    return settings.MEDIA_ROOT


def test_an_upload_page_answers_503_with_the_reason_and_keeps_nothing(broker_down, client, organiser, campaign):
    TopicFactory(campaign=campaign, number="1")
    client.force_login(organiser)
    url = reverse("assessments:import_upload", args=[campaign.slug, "runs"])
    imports = reverse("assessments:imports", args=[campaign.slug])

    page = client.post(url, {"runs-files": [SimpleUploadedFile("a.txt", RUN)]}, HTTP_REFERER=f"http://testserver{imports}")
    block = client.post(url, {"runs-files": [SimpleUploadedFile("a.txt", RUN)]}, HTTP_HX_REQUEST="true")

    for response in (page, block):
        assert response.status_code == 503 and response["Retry-After"] == "30"
        assert "The job queue is not reachable, so the job was not started and nothing of it was kept." in response.content.decode()
    assert f'href="http://testserver{imports}"' in page.content.decode()
    assert "Refused" in block.content.decode() and "<html" not in block.content.decode()
    assert not Job.objects.exists()
    assert not any(broker_down.rglob("*.txt"))


def test_a_retry_while_the_broker_is_down_answers_503_and_leaves_the_job_as_it_was(broker_down, organiser, campaign):
    job = failed_with_files(campaign, attempts=1)

    response = api(organiser).post(f"/api/jobs/{job.pk}/retry/")

    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert response.json() == {"detail": "The job queue is not reachable, so the job was not started and nothing of it was kept. Try again in a minute."}
    job.refresh_from_db()
    assert (job.status, job.message, job.errors, job.attempts) == (Job.Status.FAILED, "lost", ["lost"], 1)
    assert job.can_retry
