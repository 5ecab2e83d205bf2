"""Long work with visible progress.

A Job row records what is to be done (kind and params), and a Celery task (tasks.run_job) or a
management command runs it through the handler registered for its kind. Handlers report
progress through `Progress`, which writes done/total to the row at most a few times a second so
that a page polling the row sees a live bar without the work paying for a write per line.
"""

import time
from collections.abc import Callable
from typing import Protocol

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from assessments.models import Campaign, Job


class Progress(Protocol):
    def advance(self, done: int, total: int | None = None) -> None: ...


class NoProgress:
    """Progress nobody watches: what a service reports to when its caller passed none."""

    def advance(self, done: int, total: int | None = None) -> None:
        pass


class JobProgress:
    """Writes progress to the Job row (throttled); optionally mirrors it to a terminal bar."""

    def __init__(self, job: Job, *, mirror: Progress | None = None, interval: float = 0.3) -> None:
        self.job = job
        self.mirror = mirror
        self.interval = interval
        self._last = 0.0

    def advance(self, done: int, total: int | None = None) -> None:
        if self.mirror:
            self.mirror.advance(done, total)
        now = time.monotonic()
        if total is not None:
            self.job.total = total
        self.job.done = done
        if now - self._last >= self.interval or (self.job.total and done >= self.job.total):
            self._last = now
            # Call advance() outside the handler's transaction (handlers parse and validate
            # first, then store in one short transaction), so a poller sees it at once.
            Job.objects.filter(pk=self.job.pk).update(done=self.job.done, total=self.job.total)


Handler = Callable[[Job, Progress], dict]
_HANDLERS: dict[str, Handler] = {}


def handler(kind: str) -> Callable[[Handler], Handler]:
    """Register the function that performs jobs of `kind`; it returns the result summary."""

    def register(fn: Handler) -> Handler:
        _HANDLERS[kind] = fn
        return fn

    return register


def create_job(*, kind: str, campaign: Campaign | None, params: dict, created_by: User | None) -> Job:
    """Create a queued job and hand it to a worker once the row is committed."""
    from assessments import tasks  # tasks imports this module; import late to avoid a cycle

    if kind not in _HANDLERS:
        raise ValueError(f"no handler for job kind {kind!r}")
    job = Job.objects.create(kind=kind, campaign=campaign, params=params, created_by=created_by)
    transaction.on_commit(lambda: tasks.run_job.delay(job.pk))
    return job


def run_job(*, job_id: int, mirror: Progress | None = None) -> Job:
    """Perform a job: mark it running, call its handler, record the result or the errors.

    Bad input (FormatError and other ValueErrors raised by services) fails the job with the
    message the organiser needs; the handler's own transaction has rolled back, so nothing of it
    is stored. Anything else is a bug: the job is marked failed and the exception propagates.
    """
    job = Job.objects.get(pk=job_id)
    if job.status != Job.Status.QUEUED:
        return job  # delivered twice (acks_late): the first delivery owns it
    job.status, job.started_at = Job.Status.RUNNING, timezone.now()
    job.save(update_fields=["status", "started_at"])
    try:
        result = _HANDLERS[job.kind](job, JobProgress(job, mirror=mirror))
    except ValueError as exc:  # FormatError and the services' domain errors
        _finish(job, Job.Status.FAILED, errors=[str(exc)], message=str(exc))
    except BaseException as exc:
        _finish(job, Job.Status.FAILED, errors=[f"internal error: {exc!r}"], message="internal error")
        raise
    else:
        _finish(job, Job.Status.SUCCEEDED, result=result, message=result.get("summary", ""), warnings=result.get("warnings", []))
    return job


def _finish(job: Job, status: str, **fields) -> None:
    job.status, job.finished_at = status, timezone.now()
    if status == Job.Status.SUCCEEDED and job.total:
        job.done = job.total
    for name, value in fields.items():
        setattr(job, name, value)
    job.save(update_fields=["status", "finished_at", "done", *fields])
