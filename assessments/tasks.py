"""Celery tasks: thin, named, and taking ids. The work is in services."""

from celery import shared_task

from assessments.services import jobs


@shared_task(name="assessments.run_job", acks_late=True)
def run_job(job_id: int) -> None:
    jobs.run_job(job_id=job_id)
