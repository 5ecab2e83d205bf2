"""Queueing long work: a Job row, handed to a Celery worker once it is committed.

Apart from services.jobs, which runs the job in the worker, so that the Celery task (tasks.run_job) can call the
runner while the services that queue work call the task: one direction of imports, services → tasks → runner.
"""

from django.db import transaction

from accounts.models import User
from assessments import tasks
from assessments.models import Campaign, Job
from assessments.services import jobs


def queue_job(*, kind: str, campaign: Campaign | None, params: dict, created_by: User | None) -> Job:
    """Create a queued job and hand it to a worker once the row is committed (at once, outside a transaction)."""
    if not jobs.has_handler(kind):
        raise ValueError(f"no handler for job kind {kind!r}")
    job = Job.objects.create(kind=kind, campaign=campaign, params=params, created_by=created_by)
    transaction.on_commit(lambda: tasks.run_job.delay(job.pk))
    return job
