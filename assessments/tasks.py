"""Celery tasks: thin, named, and taking ids. The work is in services.

Services name these tasks rather than import them (services.job_queue.RUN_JOB_TASK), so the imports go one way.
"""

from celery import shared_task
from celery.signals import worker_ready
from django.db import connections

from assessments.services import job_queue, jobs


# Acknowledged late and handed back when its pool process dies (settings: CELERY_TASK_ACKS_LATE,
# CELERY_TASK_REJECT_ON_WORKER_LOST), so the next delivery fails the job saying so (services.jobs._not_claimed)
# instead of Celery acknowledging a task failure that the job's row would never hear of.
@shared_task(name=job_queue.RUN_JOB_TASK)
def run_job(job_id: int) -> None:
    jobs.run_job(job_id=job_id)


@shared_task(name="assessments.sweep_jobs")
def sweep_jobs() -> None:
    job_queue.sweep_jobs()


@worker_ready.connect
def sweep_when_a_worker_starts(**kwargs) -> None:
    """A worker that starts after a crash fails the jobs the crash left running, before taking new ones."""
    job_queue.sweep_jobs()
    connections.close_all()  # opened in the main process, which runs no job
