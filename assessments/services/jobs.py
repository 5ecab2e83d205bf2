"""Long work with visible progress: running a Job.

A Job row records what is to be done (kind and params); services.job_queue creates it and hands it to a worker,
whose Celery task (tasks.run_job) runs it here through the handler registered for its kind. Management commands
call the same services directly. Handlers report progress through `Progress`, which writes done/total to the row
at most a few times a second so that a page polling the row sees a live bar without the work paying for a write
per line.
"""

import time
from collections.abc import Callable
from typing import Protocol

from django.utils import timezone

from assessments.models import Job


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


def has_handler(kind: str) -> bool:
    return kind in _HANDLERS


def handler(kind: str) -> Callable[[Handler], Handler]:
    """Register the function that performs jobs of `kind`; it returns the result summary."""

    def register(fn: Handler) -> Handler:
        _HANDLERS[kind] = fn
        return fn

    return register


def run_job(*, job_id: int, mirror: Progress | None = None) -> Job:
    """Perform a job: claim it, call its handler, record the result or the errors.

    Bad input (FormatError and other ValueErrors raised by services) fails the job with the
    message the organiser needs; the handler's own transaction has rolled back, so nothing of it
    is stored. Anything else is a bug: the job is marked failed and the exception propagates.
    A job that is not queued any more is returned as it is, unrun.
    """
    job = _claim(job_id)
    if job is None:
        return Job.objects.get(pk=job_id)
    try:
        result = _HANDLERS[job.kind](job, JobProgress(job, mirror=mirror))
    except ValueError as exc:  # FormatError and the services' domain errors
        # A refusal may list its problems (`problems`, one line each) and say what would let it through (`result`,
        # e.g. {"confirm": "allow_changes"}), so the page can ask for that decision.
        _finish(
            job, Job.Status.FAILED, errors=list(getattr(exc, "problems", None) or [str(exc)]), message=str(exc),
            result=dict(getattr(exc, "result", None) or {}),
        )
    except BaseException as exc:
        _finish(job, Job.Status.FAILED, errors=[f"internal error: {exc!r}"], message="internal error")
        raise
    else:
        _finish(job, Job.Status.SUCCEEDED, result=result, message=result.get("summary", ""), warnings=result.get("warnings", []))
    return job


def _claim(job_id: int) -> Job | None:
    """Move the job from queued to running in one conditional UPDATE, and return it; None when it was not queued.

    The task is acknowledged late (acks_late), so a worker lost mid-job has its delivery repeated, and a broker
    may deliver twice anyway: of two deliveries racing here, exactly one UPDATE finds the row still queued.
    """
    if not Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(status=Job.Status.RUNNING, started_at=timezone.now()):
        return None
    return Job.objects.select_related("campaign", "created_by").get(pk=job_id)


def _finish(job: Job, status: str, **fields) -> None:
    job.status, job.finished_at = status, timezone.now()
    if status == Job.Status.SUCCEEDED and job.total:
        job.done = job.total
    for name, value in fields.items():
        setattr(job, name, value)
    job.save(update_fields=["status", "finished_at", "done", *fields])
