"""The queue side of jobs: creating a job and handing it to a worker, cancelling and retrying it, and the sweep
that makes sure every job ends.

Apart from services.jobs, which runs a job in the worker. The Celery task is named, not imported
("assessments.run_job", registered by assessments.tasks), so that tasks.py can call both modules while neither
imports it: one direction of imports, tasks → services.

What a lost worker does, in order: Celery hands an unacknowledged task back to the broker (acks_late; with
task_reject_on_worker_lost when only a pool process died, at once; after the Redis visibility timeout when the
whole worker did); the next delivery finds the job running with its process gone and fails it (services.jobs).
Before that, within JOB_STALE_SECONDS plus one sweep, `sweep_jobs` fails any running job whose heartbeat stopped.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from assessments.models import Campaign, Job
from assessments.services import jobs

logger = logging.getLogger(__name__)

RUN_JOB_TASK = "assessments.run_job"
ORPHAN_FOLDER_SECONDS = 3600  # an upload folder whose job row is not committed yet is younger than this


class JobNotQueued(Exception):
    """The broker could not take the job: nothing of it was kept. Answered with 503 and Retry-After."""

    retry_after = 30

    def __init__(self) -> None:
        super().__init__("The job queue is not reachable, so the job was not started and nothing of it was kept. Try again in a minute.")


class JobStateError(ValueError):
    """The job is not in a state that allows what was asked (cancel an ended job, retry one that did not fail)."""


def queue_job(*, kind: str, campaign: Campaign | None, params: dict, created_by: User | None) -> Job:
    """Create a queued job and hand it to a worker once the row is committed (at once, outside a transaction).

    Raises JobNotQueued when the broker cannot take it, after deleting the row and the job's upload folder: a job
    nobody will run must not wait on the page for ever.
    """
    if not jobs.has_handler(kind):
        raise ValueError(f"no handler for job kind {kind!r}")
    job = Job.objects.create(kind=kind, campaign=campaign, params=params, created_by=created_by)
    _dispatch_on_commit(job, undo=lambda: _forget(job))
    return job


def cancel_job(*, job: Job, by: User) -> Job:
    """Cancel a queued job at once; ask a running one to stop at its next progress report, where its handler
    raises and its transaction rolls back. A running job whose worker was lost is ended at once, as no report
    will come. Raises JobStateError for a job that has already ended.
    """
    if job.status == Job.Status.QUEUED and jobs.end_job(
        job, status=Job.Status.CANCELLED, message=f"Cancelled by {by.username} before it started.",
        only_if=Q(status=Job.Status.QUEUED),
    ):
        return job
    asked = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING, cancel_requested_at=None).update(
        cancel_requested_at=timezone.now(), cancelled_by=by
    )
    job.refresh_from_db()
    if asked and jobs.is_lost(job):
        jobs.end_job(
            job, status=Job.Status.CANCELLED, message=f"Cancelled by {by.username}; its worker had stopped.",
            only_if=Q(status=Job.Status.RUNNING, attempts=job.attempts, heartbeat_at=job.heartbeat_at),
        )
    elif not job.is_unfinished:
        raise JobStateError(f"job {job.pk} has already ended ({job.get_status_display().lower()})")
    return job


_RETRY_RESETS = {
    "status": Job.Status.QUEUED, "done": 0, "total": 0, "message": "", "errors": [], "warnings": [], "result": {},
    "started_at": None, "finished_at": None, "heartbeat_at": None, "worker": "", "cancel_requested_at": None,
    "cancelled_by": None,
}


def retry_job(*, job: Job, by: User) -> Job:
    """Queue a failed job again as it was first asked: the same row and the same uploaded files (kept for
    JOB_FILES_KEPT_HOURS after a failure), with its progress, message and errors cleared.

    Raises JobStateError when the job has not failed, its files are gone or it waits for a decision (confirm it
    instead), and JobNotQueued (leaving the job failed as it was) when the broker cannot take it.
    """
    _check_failed(job, "retried")
    if job.result.get("confirm"):
        raise JobStateError(f"job {job.pk} waits for the changes it listed to be confirmed; a retry would be refused the same way")
    return _queue_again(job, by=by, params=job.params, why="retried")


def confirm_job(*, job: Job, by: User, digest: str) -> Job:
    """Run a job refused until someone decides (`result["confirm"]`, e.g. changes to judged topics) again on the
    very files it was given, with that decision made for exactly what the refusal listed (`result["digest"]`):
    had the campaign changed since so that the files would change something else, the job is refused again,
    listing that. Not a new upload: what is confirmed is what was shown. Raises as `retry_job` does.

    `digest` is the refusal's digest as the confirming person saw it. Someone else may have confirmed first and
    the job been refused again with another list; that list was not seen, so a digest that is no longer the
    job's raises JobStateError and queues nothing (checked in the same UPDATE that queues the job).
    """
    _check_failed(job, "confirmed")
    if not job.result.get("confirm"):
        raise JobStateError(f"job {job.pk} asked for no confirmation; retry it instead")
    stale = JobStateError(f"job {job.pk} lists other changes than those confirmed; read them and confirm again")
    if digest != job.result.get("digest"):
        raise stale
    confirmed = {"what": job.result["confirm"], "digest": digest, "by": by.pk}
    return _queue_again(
        job, by=by, params={**job.params, "confirmed": confirmed}, why="confirmed", only_if=Q(result__digest=digest), stale=stale,
    )


def _check_failed(job: Job, done: str) -> None:
    if job.status != Job.Status.FAILED:
        raise JobStateError(f"job {job.pk} has not failed ({job.get_status_display().lower()}); only a failed job is {done}")
    if job.params.get("files") and not job.upload_folder.is_dir():
        raise JobStateError(f"the files of job {job.pk} were removed; upload them again")


def _queue_again(
    job: Job, *, by: User, params: dict, why: str, only_if: Q | None = None, stale: JobStateError | None = None,
) -> Job:
    """The failed job queued again with `params`, its progress, message and errors cleared (all undone when the
    broker cannot take it); `stale` is raised when the job no longer fails or no longer matches `only_if`."""
    before = {name: getattr(job, name) for name in (*_RETRY_RESETS, "params")}
    with transaction.atomic():
        if not Job.objects.filter(only_if or Q(), pk=job.pk, status=Job.Status.FAILED).update(**_RETRY_RESETS, params=params):
            raise stale or JobStateError(f"job {job.pk} changed meanwhile; look again")
        _dispatch_on_commit(job, undo=lambda: Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(**before))
    logger.info("job %s %s by %s", job.pk, why, by.username)
    job.refresh_from_db()
    return job


@dataclass
class SweepReport:
    failed: list[int] = field(default_factory=list)  # running jobs whose worker was lost
    redispatched: list[int] = field(default_factory=list)  # queued jobs handed to the broker again
    folders_removed: list[str] = field(default_factory=list)


def sweep_jobs() -> SweepReport:
    """Make sure every job ends: fail running jobs whose worker was lost, hand queued jobs that no worker took to
    the broker again when its queue is empty (a broker restarted without persistence loses its messages), and
    remove upload folders no job needs any more. Celery beat runs it every JOB_SWEEP_SECONDS, and each worker when
    it starts; it is safe to run at once in several places (every change is a conditional UPDATE)."""
    report = SweepReport()
    for job in Job.objects.filter(status=Job.Status.RUNNING).order_by("pk"):
        if jobs.end_if_lost(job):
            logger.warning("job %s failed: %s", job.pk, job.message)
            report.failed.append(job.pk)
    report.folders_removed = _remove_unneeded_uploads()
    if not _celery().conf.task_always_eager:
        report.redispatched = _redispatch_forgotten()
    return report


def _redispatch_forgotten() -> list[int]:
    cutoff = timezone.now() - timedelta(seconds=settings.JOB_REDISPATCH_SECONDS)
    waiting = Job.objects.filter(status=Job.Status.QUEUED).filter(
        Q(dispatched_at__lt=cutoff) | Q(dispatched_at=None, created_at__lt=cutoff)
    )
    forgotten = list(waiting.order_by("pk"))
    if not forgotten or _messages_waiting() > 0:  # a message still waits: the queue is only slow, not forgetful
        return []
    for job in forgotten:
        logger.warning("job %s was queued at %s and no worker took it; handing it to the broker again", job.pk, job.created_at)
        _dispatch(job)
    return [job.pk for job in forgotten]


def _messages_waiting() -> int:
    """Messages ready in the jobs' queue (what a worker has taken but not acknowledged is not counted)."""
    from kombu.exceptions import ChannelError

    app = _celery()
    with app.connection_for_read() as conn:
        try:
            return conn.default_channel.queue_declare(queue=app.conf.task_default_queue, passive=True).message_count
        except ChannelError:  # Redis: an empty queue does not exist
            return 0


def _remove_unneeded_uploads() -> list[str]:
    """Upload folders of jobs that ended (a failed job's after JOB_FILES_KEPT_HOURS), and of jobs that do not
    exist (a start that was undone) once they are older than any upload in progress."""
    root = Path(settings.MEDIA_ROOT) / "uploads"
    folders = {int(p.name): p for p in root.iterdir() if p.is_dir() and p.name.isdigit()} if root.is_dir() else {}
    if not folders:
        return []
    now = timezone.now()
    kept_since = now - timedelta(hours=settings.JOB_FILES_KEPT_HOURS)
    states = {pk: (status, finished) for pk, status, finished in Job.objects.filter(pk__in=folders).values_list("pk", "status", "finished_at")}
    removed = []
    for pk, folder in sorted(folders.items()):
        status, finished = states.get(pk, (None, None))
        if status is None:
            unneeded = now.timestamp() - folder.stat().st_mtime > ORPHAN_FOLDER_SECONDS
        elif status == Job.Status.FAILED:
            unneeded = finished is not None and finished < kept_since
        else:
            unneeded = status in (Job.Status.SUCCEEDED, Job.Status.CANCELLED)
        if unneeded:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed


def _dispatch_on_commit(job: Job, *, undo: Callable[[], object]) -> None:
    """Publish the job's task once the row is committed (a worker must find it); when the broker refuses,
    `undo` what made the job queued and raise JobNotQueued."""

    from kombu.exceptions import OperationalError as BrokerError  # with Celery (see _celery)

    def publish() -> None:
        try:
            _dispatch(job)
        except BrokerError as exc:
            logger.error("job %s not queued, the broker is unreachable: %s", job.pk, exc)
            undo()
            raise JobNotQueued() from exc

    transaction.on_commit(publish)


def _celery():
    """The project's Celery app with its tasks, loaded by the first job that needs it (touchstone/__init__.py).
    Its autodiscovery imports the tasks in a worker only, so they are imported here for the other processes."""
    import assessments.tasks  # noqa: F401
    from touchstone.celery import app

    return app


def _dispatch(job: Job) -> None:
    Job.objects.filter(pk=job.pk).update(dispatched_at=timezone.now())
    _celery().tasks[RUN_JOB_TASK].delay(job.pk)


def _forget(job: Job) -> None:
    Job.objects.filter(pk=job.pk).delete()
    shutil.rmtree(job.upload_folder, ignore_errors=True)
