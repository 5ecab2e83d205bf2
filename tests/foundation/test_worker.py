"""The production path, with real `celery worker` processes over a real Redis: a job queued on commit is run by a
worker, and it ends however the worker, its database connection or the broker fail meanwhile.

Each fault is injected while the job is held mid-import by tests.foundation.job_gate (after its first progress
report, before anything is stored), so no test races the import or sleeps to wait for it.
"""

import os
import re
import signal
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from rest_framework.test import APIClient

from assessments.models import Job, Ranking, Run
from assessments.services.imports.topics import import_topics
from assessments.services.imports.uploads import start_import
from tests.brokers import wait_for
from tests.factories import TopicFactory

pytestmark = pytest.mark.worker

DEMO = Path(__file__).resolve().parents[2] / "assessments" / "demo"
ENDED = (Job.Status.SUCCEEDED, Job.Status.FAILED, Job.Status.CANCELLED)


@pytest.fixture
def topics(campaign):
    return [TopicFactory(campaign=campaign, number=str(n), position=n) for n in (1, 2, 3)]


def a_run(tag: str = "big", lines_per_topic: int = 50_000) -> SimpleUploadedFile:
    """A run of about 5 MB: read in more than one chunk, its import reports progress before it stores anything."""
    text = "".join(
        f"{topic} Q0 doc-{topic}-{rank} {rank} {1000 - rank / 1000:.4f} {tag}\n"
        for topic in (1, 2, 3) for rank in range(1, lines_per_topic + 1)
    )
    return SimpleUploadedFile(f"team-{tag}.txt", text.encode())


def ended(job: Job) -> Job | None:
    job.refresh_from_db()
    return job if job.status in ENDED else None


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_real_worker_imports_an_uploaded_run_and_records_progress(workers, gate, campaign, organiser):
    gate.open()
    worker = workers.start()
    import_topics(campaign=campaign, path=DEMO / "topics.xml")
    upload = SimpleUploadedFile("demo-stance.txt", (DEMO / "run-demo-stance.txt").read_bytes())

    job = start_import(kind="import_runs", campaign=campaign, uploads=[upload], created_by=organiser)
    assert job.status == Job.Status.QUEUED  # queued on commit, not run in this process

    wait_for(lambda: ended(job), timeout=60, what="the job to end", log=worker.log)
    assert job.status == Job.Status.SUCCEEDED, job.errors
    assert job.done == job.total > 0 and job.attempts == 1
    assert sum(Ranking.objects.filter(run__campaign=campaign, run__tag="demo-stance").values_list("length", flat=True)) == 18
    assert not job.upload_folder.exists()


def test_a_killed_worker_s_job_is_failed_by_the_periodic_sweep_and_can_be_retried(workers, gate, campaign, topics, organiser):
    doomed = workers.start()
    job = start_import(kind="import_runs", campaign=campaign, uploads=[a_run()], created_by=organiser)
    wait_for(lambda: gate.held(job.pk), timeout=30, what="the import to start", log=doomed.log)
    sweeper = workers.start(beat=True)  # beat sends the sweep every 0.5 s; this worker runs it

    doomed.kill()
    killed_at = time.monotonic()
    wait_for(lambda: ended(job), timeout=10, what="the sweep to fail the job", log=sweeper.log)

    assert time.monotonic() - killed_at < 1.5 + 0.5 + 2  # within JOB_STALE_SECONDS plus a sweep, with room
    assert job.status == Job.Status.FAILED
    assert f"pid {job.worker.rsplit(' ', 1)[1]}" in job.message and "died while the job ran at" in job.message
    assert job.errors == [job.message] and 0 < job.percent < 100
    assert not Run.objects.exists()
    assert job.upload_folder.is_dir() and job.can_retry  # kept so that it can be retried

    gate.open()
    response = api(organiser).post(f"/api/jobs/{job.pk}/retry/")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    wait_for(lambda: ended(job), timeout=30, what="the retried job to end", log=sweeper.log)
    assert (job.status, job.attempts) == (Job.Status.SUCCEEDED, 2), job.errors
    assert Run.objects.get().line_count == 150_000
    assert not job.upload_folder.exists()


def test_a_worker_that_starts_fails_the_jobs_its_crashed_predecessor_left_running(workers, gate, campaign, topics, organiser):
    crashed = workers.start(JOB_STALE_SECONDS="600", JOB_HEARTBEAT_SECONDS="60")  # no heartbeat goes stale here
    job = start_import(kind="import_runs", campaign=campaign, uploads=[a_run()], created_by=organiser)
    wait_for(lambda: gate.held(job.pk), timeout=30, what="the import to start", log=crashed.log)
    crashed.kill()
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING

    workers.start(JOB_STALE_SECONDS="600", JOB_HEARTBEAT_SECONDS="60")  # no beat: only its start-up sweep

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "died while the job ran" in job.message


def test_a_pool_process_killed_like_an_out_of_memory_kill_fails_its_job_on_redelivery(workers, gate, campaign, topics, organiser):
    worker = workers.start(pool="prefork", JOB_STALE_SECONDS="600", JOB_HEARTBEAT_SECONDS="60")  # no beat, no stale heartbeat
    job = start_import(kind="import_runs", campaign=campaign, uploads=[a_run()], created_by=organiser)
    wait_for(lambda: gate.held(job.pk), timeout=30, what="the import to start", log=worker.log)
    job.refresh_from_db()
    child = int(job.worker.rsplit(" ", 1)[1])
    assert child != worker.process.pid

    os.kill(child, signal.SIGKILL)  # what the kernel's OOM killer does to the pool process
    wait_for(lambda: ended(job), timeout=20, what="the redelivered task to fail the job", log=worker.log)

    assert job.status == Job.Status.FAILED and f"pid {child}" in job.message and "perhaps for lack of memory" in job.message
    assert worker.process.poll() is None and not Run.objects.exists()


def test_a_job_whose_database_connection_is_cut_fails_saying_so_and_the_worker_goes_on(workers, gate, campaign, topics, organiser):
    worker = workers.start()
    job = start_import(kind="import_runs", campaign=campaign, uploads=[a_run()], created_by=organiser)
    wait_for(lambda: gate.held(job.pk), timeout=30, what="the import to start", log=worker.log)

    with connection.cursor() as cursor:  # what a database restart does to the worker's session
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", [f"touchstone job {job.pk}"])
        assert cursor.fetchone() == (True,)
    gate.open()
    wait_for(lambda: ended(job), timeout=30, what="the job to end", log=worker.log)

    assert job.status == Job.Status.FAILED
    assert re.fullmatch(r"The worker lost its database connection at \d+ % \(.+\)\. Retry it\.", job.message), job.message
    assert not Run.objects.exists() and job.can_retry

    after = start_import(kind="import_runs", campaign=campaign, uploads=[a_run("next", 10)], created_by=organiser)
    wait_for(lambda: ended(after), timeout=30, what="the next job to end", log=worker.log)
    assert after.status == Job.Status.SUCCEEDED, after.errors


def test_a_queued_job_whose_message_a_redis_restart_lost_runs_all_the_same(workers, gate, broker, campaign, topics, organiser):
    worker = workers.start(beat=True)
    first = start_import(kind="import_runs", campaign=campaign, uploads=[a_run("first")], created_by=organiser)
    wait_for(lambda: gate.held(first.pk), timeout=30, what="the first import to start", log=worker.log)
    waiting = start_import(kind="import_runs", campaign=campaign, uploads=[a_run("second", 10)], created_by=organiser)

    broker.restart()  # no persistence: the waiting job's message is gone
    gate.open()

    wait_for(lambda: ended(first) and ended(waiting), timeout=60, what="both jobs to end", log=worker.log)
    assert (first.status, waiting.status) == (Job.Status.SUCCEEDED, Job.Status.SUCCEEDED), (first.errors, waiting.errors)
    assert sorted(Run.objects.values_list("tag", flat=True)) == ["first", "second"]


def test_a_running_import_cancelled_from_the_api_stops_and_stores_nothing(workers, gate, campaign, topics, organiser):
    worker = workers.start()
    job = start_import(kind="import_runs", campaign=campaign, uploads=[a_run()], created_by=organiser)
    wait_for(lambda: gate.held(job.pk), timeout=30, what="the import to start", log=worker.log)

    response = api(organiser).post(f"/api/jobs/{job.pk}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "running" and response.json()["cancel_requested_at"]
    gate.open()
    wait_for(lambda: ended(job), timeout=30, what="the job to stop", log=worker.log)

    assert job.status == Job.Status.CANCELLED and job.message.startswith("Cancelled by olivia at ")
    assert not Run.objects.exists() and not job.upload_folder.exists()


def test_an_upload_while_the_broker_is_down_answers_503_and_keeps_nothing(transactional_db, broker, settings, tmp_path, campaign, topics, organiser):
    settings.MEDIA_ROOT = tmp_path / "uploads"
    broker.stop()

    response = api(organiser).post(f"/api/campaigns/{campaign.slug}/runs/", {"file": [a_run("late", 10)]})

    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert "job queue is not reachable" in response.json()["detail"]
    assert not Job.objects.exists()
    assert not any((tmp_path / "uploads").rglob("*.txt"))

    broker.start()
    assert api(organiser).post(f"/api/campaigns/{campaign.slug}/runs/", {"file": [a_run("late", 10)]}).status_code == 202
