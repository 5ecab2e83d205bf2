"""A job runs once however often its task is delivered, and always ends: heartbeat, cancel, retry, the sweep, and
failures recorded on a connection that works. (tests/foundation/test_worker.py does the same with real workers.)"""

import os
import re
import subprocess
import threading
import time
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from assessments.formats.errors import FormatError
from assessments.models import Job, Topic
from assessments.services import job_queue, jobs
from tests.factories import TopicFactory


@pytest.fixture
def runs(monkeypatch) -> list[int]:
    """A job kind whose handler records each run and takes long enough for a second delivery to arrive meanwhile."""
    seen: list[int] = []

    def slow(job: Job, progress: jobs.Progress) -> dict:
        seen.append(job.pk)
        time.sleep(0.3)
        return {"summary": "done"}

    monkeypatch.setitem(jobs._HANDLERS, "slow", slow)
    return seen


@pytest.fixture
def kind(monkeypatch):
    """kind(function) -> the name of a job kind whose handler is `function` (for this test only)."""

    def register(function) -> str:
        monkeypatch.setitem(jobs._HANDLERS, function.__name__, function)
        return function.__name__

    return register


def a_dead_process() -> str:
    """The worker name of a process of this machine that has ended."""
    child = subprocess.Popen(["true"])
    child.wait()
    return f"{jobs.this_process().rsplit(' ', 1)[0]} {child.pid}"


def with_files(job: Job) -> Job:
    job.upload_folder.mkdir(parents=True)
    (job.upload_folder / "1-run.txt").write_text("1 Q0 d1 1 1.0 tag\n")
    job.params = {"files": [{"path": f"uploads/{job.pk}/1-run.txt", "name": "run.txt"}]}
    job.save(update_fields=["params"])
    return job


# --- Delivered once, twice, or after its worker died --------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_deliveries_at_once_run_the_job_once(runs):
    job = Job.objects.create(kind="slow")
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def deliver() -> None:
        try:
            start.wait()
            jobs.run_job(job_id=job.pk)
        except BaseException as exc:  # reported below: an exception in a thread would pass unseen
            errors.append(exc)
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors
    assert runs == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.message, job.attempts) == (Job.Status.SUCCEEDED, "done", 1)


@pytest.mark.django_db
@pytest.mark.parametrize("status", [Job.Status.SUCCEEDED, Job.Status.FAILED, Job.Status.CANCELLED])
def test_a_job_that_has_ended_is_not_run_again(runs, status):
    job = Job.objects.create(kind="slow", status=status)

    returned = jobs.run_job(job_id=job.pk)

    assert runs == [] and returned.status == status


@pytest.mark.django_db
def test_a_redelivered_job_whose_worker_process_died_is_failed_saying_so(runs):
    worker = a_dead_process()
    job = Job.objects.create(kind="slow", status=Job.Status.RUNNING, worker=worker, heartbeat_at=timezone.now(), done=44, total=100, attempts=1)

    jobs.run_job(job_id=job.pk)

    job.refresh_from_db()
    assert runs == [] and job.status == Job.Status.FAILED
    pid = worker.rsplit(" ", 1)[1]
    assert job.message == (
        f"Its worker process (pid {pid} on {worker.split(' ')[0]}) died while the job ran at 44 %: it was killed, "
        "perhaps for lack of memory. Retry it."
    )
    assert job.errors == [job.message] and job.finished_at is not None


@pytest.mark.django_db
def test_a_redelivered_job_whose_worker_still_beats_is_left_to_it(runs, caplog):
    job = Job.objects.create(kind="slow", status=Job.Status.RUNNING, worker=jobs.this_process(), heartbeat_at=timezone.now(), attempts=1)

    jobs.run_job(job_id=job.pk)

    job.refresh_from_db()
    assert runs == [] and job.status == Job.Status.RUNNING
    assert f"job {job.pk} is running in {job.worker}" in caplog.text


# --- Heartbeat ---------------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_quiet_handler_keeps_beating_and_is_not_swept(kind, settings):
    settings.JOB_HEARTBEAT_SECONDS, settings.JOB_STALE_SECONDS = 0.05, 0.3

    def quiet(job: Job, progress: jobs.Progress) -> dict:
        claimed = Job.objects.get(pk=job.pk).heartbeat_at
        beats = {claimed}
        deadline = time.monotonic() + 1  # longer than JOB_STALE_SECONDS, reporting no progress
        while time.monotonic() < deadline:
            beats.add(Job.objects.get(pk=job.pk).heartbeat_at)
            job_queue.sweep_jobs()  # another worker's sweep, meanwhile
            time.sleep(0.02)
        return {"summary": f"{len(beats) - 1} beats"}

    job = Job.objects.create(kind=kind(quiet))
    jobs.run_job(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED
    assert int(job.message.split()[0]) >= 5  # about one per 0.05 s, from the timer thread's own connection


# --- The sweep ---------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_sweep_fails_a_job_whose_heartbeat_stopped_and_keeps_its_files_for_a_retry(settings, campaign):
    settings.JOB_STALE_SECONDS = 60
    now = timezone.now()
    elsewhere = "another-host pid:[1] 4242"  # a worker this process cannot see: only its heartbeat tells
    lost = with_files(Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.RUNNING, worker=elsewhere,
                                         heartbeat_at=now - timedelta(seconds=61), done=30, total=120, attempts=1))
    alive = Job.objects.create(kind="import_runs", status=Job.Status.RUNNING, worker=elsewhere, heartbeat_at=now - timedelta(seconds=59), attempts=1)

    report = job_queue.sweep_jobs()

    lost.refresh_from_db()
    alive.refresh_from_db()
    assert report.failed == [lost.pk] and alive.status == Job.Status.RUNNING
    assert lost.status == Job.Status.FAILED
    assert lost.message.startswith("Its worker (pid 4242 on another-host) stopped reporting at 25 % (last heartbeat ")
    assert lost.message.endswith("): it was killed, ran out of memory or lost its database connection. Retry it.")
    assert lost.upload_folder.is_dir() and lost.can_retry


@pytest.mark.django_db
def test_the_sweep_removes_upload_folders_no_job_needs(settings, campaign):
    settings.JOB_FILES_KEPT_HOURS = 24
    now = timezone.now()
    kept = with_files(Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.FAILED, finished_at=now - timedelta(hours=23)))
    expired = with_files(Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.FAILED, finished_at=now - timedelta(hours=25)))
    done = with_files(Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.SUCCEEDED, finished_at=now))
    waiting = with_files(Job.objects.create(campaign=campaign, kind="import_runs"))
    uploads = settings.MEDIA_ROOT / "uploads"
    (uploads / "999998").mkdir()  # a start being kept right now: its job is not committed yet
    (uploads / "999999").mkdir()  # a start undone long ago
    an_hour_ago = time.time() - job_queue.ORPHAN_FOLDER_SECONDS - 1
    os.utime(uploads / "999999", (an_hour_ago, an_hour_ago))

    report = job_queue.sweep_jobs()

    assert sorted(report.folders_removed) == sorted([str(expired.pk), str(done.pk), "999999"])
    assert kept.upload_folder.is_dir() and waiting.upload_folder.is_dir() and (uploads / "999998").is_dir()
    assert not expired.can_retry


# --- Cancel ------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_cancelling_a_queued_job_ends_it_at_once_and_removes_its_files(runs, organiser, campaign):
    job = with_files(Job.objects.create(campaign=campaign, kind="slow"))

    job_queue.cancel_job(job=job, by=organiser)
    jobs.run_job(job_id=job.pk)  # its task, delivered later

    job.refresh_from_db()
    assert (job.status, job.message) == (Job.Status.CANCELLED, "Cancelled by olivia before it started.")
    assert runs == [] and not job.upload_folder.exists()


@pytest.mark.django_db
def test_a_running_job_cancelled_stops_at_its_next_report_and_rolls_back(kind, organiser, campaign):
    def stores_then_reports(job: Job, progress: jobs.JobProgress) -> dict:
        progress.interval = 0  # every report is written (and so checks for a cancel)
        progress.advance(1, 3)
        job_queue.cancel_job(job=Job.objects.get(pk=job.pk), by=organiser)  # the organiser, meanwhile
        with transaction.atomic():
            Topic.objects.create(campaign=job.campaign, number="99", title="half stored")
            progress.advance(2, 3)
            Topic.objects.create(campaign=job.campaign, number="100", title="never stored")
        return {"summary": "stored"}

    job = with_files(Job.objects.create(campaign=campaign, kind=kind(stores_then_reports)))
    jobs.run_job(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.message, job.errors) == (Job.Status.CANCELLED, "Cancelled by olivia at 66 %.", [])
    assert job.cancelled_by == organiser and not Topic.objects.exists()
    assert not job.upload_folder.exists()


@pytest.mark.django_db
def test_a_cancel_after_the_store_is_committed_lets_the_job_finish_and_says_so(kind, organiser, campaign):
    def stores_then_groups(job: Job, progress: jobs.Progress) -> dict:
        TopicFactory(campaign=job.campaign, number="1")
        jobs.committed(progress)
        job_queue.cancel_job(job=Job.objects.get(pk=job.pk), by=organiser)
        progress.advance(2, 2)
        return {"summary": "stored and grouped"}

    job = Job.objects.create(campaign=campaign, kind=kind(stores_then_groups))
    jobs.run_job(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.message) == (Job.Status.SUCCEEDED, "stored and grouped")
    assert job.warnings == ["The cancel came after the results were stored, so the job finished."]


@pytest.mark.django_db
def test_cancelling_a_running_job_whose_worker_died_ends_it_at_once(organiser, campaign):
    job = Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.RUNNING, worker=a_dead_process(), heartbeat_at=timezone.now(), attempts=1)

    job_queue.cancel_job(job=job, by=organiser)

    assert (job.status, job.message) == (Job.Status.CANCELLED, "Cancelled by olivia; its worker had stopped.")


@pytest.mark.django_db
def test_an_ended_job_cannot_be_cancelled(organiser, campaign):
    job = Job.objects.create(campaign=campaign, kind="import_runs", status=Job.Status.SUCCEEDED)
    with pytest.raises(job_queue.JobStateError, match=r"has already ended \(succeeded\)"):
        job_queue.cancel_job(job=job, by=organiser)


# --- Failures and retries ----------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("error, files_kept", [
    (FormatError("run.txt", 3, "score 'x' is not a number"), False),  # the file is wrong: upload a fixed one
    (ValueError("import topics first"), True),  # the campaign was not ready: retry once it is
])
def test_a_failed_job_keeps_its_files_for_a_retry_unless_a_line_of_them_was_wrong(kind, campaign, error, files_kept):
    def fails(job: Job, progress: jobs.Progress) -> dict:
        raise error

    job = with_files(Job.objects.create(campaign=campaign, kind=kind(fails)))
    jobs.run_job(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.errors) == (Job.Status.FAILED, [str(error)])
    assert job.upload_folder.is_dir() == files_kept == job.can_retry


@pytest.mark.django_db
def test_a_retried_job_runs_again_with_its_files(kind, organiser, campaign, django_capture_on_commit_callbacks):
    attempts: list[str] = []

    def fails_once(job: Job, progress: jobs.Progress) -> dict:
        attempts.append((job.upload_folder / "1-run.txt").read_text())
        if len(attempts) == 1:
            raise ValueError("import topics first")
        return {"summary": "imported"}

    job = with_files(Job.objects.create(campaign=campaign, kind=kind(fails_once)))
    jobs.run_job(job_id=job.pk)
    with django_capture_on_commit_callbacks(execute=True):
        job_queue.retry_job(job=Job.objects.get(pk=job.pk), by=organiser)

    job.refresh_from_db()
    assert (job.status, job.message, job.errors, job.attempts) == (Job.Status.SUCCEEDED, "imported", [], 2)
    assert attempts == ["1 Q0 d1 1 1.0 tag\n"] * 2 and not job.upload_folder.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("status", [Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.SUCCEEDED, Job.Status.CANCELLED])
def test_only_a_failed_job_is_retried(organiser, campaign, status):
    job = Job.objects.create(campaign=campaign, kind="build_pool", status=status)
    with pytest.raises(job_queue.JobStateError, match="only a failed job is retried"):
        job_queue.retry_job(job=job, by=organiser)


@pytest.mark.django_db(transaction=True)
def test_a_lost_database_connection_is_recorded_on_a_fresh_one(kind):
    def loses_its_connection(job: Job, progress: jobs.Progress) -> dict:
        progress.advance(1, 4)
        with connection.cursor() as cursor:  # as a database restart would
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return {"summary": "never"}

    job = Job.objects.create(kind=kind(loses_its_connection))
    with pytest.raises(OperationalError):
        jobs.run_job(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert re.fullmatch(r"The worker lost its database connection at 25 % \(.+\)\. Retry it\.", job.message), job.message
