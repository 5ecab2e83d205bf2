"""A job runs once, however often its task is delivered (tasks are acknowledged late, so a delivery can repeat)."""

import threading
import time

import pytest
from django.db import connection

from assessments.models import Job
from assessments.services import jobs


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
    assert (job.status, job.message) == (Job.Status.SUCCEEDED, "done")


@pytest.mark.django_db
@pytest.mark.parametrize("status", [Job.Status.RUNNING, Job.Status.SUCCEEDED, Job.Status.FAILED])
def test_a_job_that_is_no_longer_queued_is_not_run_again(runs, status):
    job = Job.objects.create(kind="slow", status=status)

    returned = jobs.run_job(job_id=job.pk)

    assert runs == [] and returned.status == status
