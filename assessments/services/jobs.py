"""Long work with visible progress: running a Job, and ending it whatever happens to its worker.

A Job row records what is to be done (kind and params); services.job_queue creates it and hands it to a worker,
whose Celery task (tasks.run_job) runs it here through the handler registered for its kind. Management commands
call the same services directly. Handlers report progress through `Progress`, which writes done/total to the row
at most a few times a second so that a page polling the row sees a live bar without the work paying for a write
per line.

A job always ends. While it runs its row carries a heartbeat: every progress write sets it, and a light timer
thread sets it when the handler is quiet for JOB_HEARTBEAT_SECONDS (a long COPY, a long computation). A job whose
heartbeat stops (its worker killed with kill -9, its pool process killed for lack of memory, its database
connection cut) is failed by job_queue.sweep_jobs, which Celery beat runs every JOB_SWEEP_SECONDS and every worker
runs when it starts; a redelivered task finds it here and fails it as well. A handler that raises has its end
written on a fresh connection, since the one it used may be what broke. Organisers cancel a running job through
its row: the handler stops at its next progress report, before or inside its storing transaction, so nothing of
it is stored.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from importlib import import_module
from typing import Protocol

from django.conf import settings
from django.db import Error, InterfaceError, OperationalError, connection
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.models import Campaign, Job

logger = logging.getLogger(__name__)


class Progress(Protocol):
    def advance(self, done: int, total: int | None = None) -> None: ...


class NoProgress:
    """Progress nobody watches: what a service reports to when its caller passed none."""

    def advance(self, done: int, total: int | None = None) -> None:
        pass


class JobCancelled(Exception):
    """Raised at a progress report of a job an organiser cancelled; the handler's transaction rolls back."""


class _RunEnded(Exception):
    """Raised at a progress report of a run whose job was ended by someone else (the sweep took it for lost)."""


class JobProgress:
    """Writes progress and the heartbeat to the Job row (throttled); optionally mirrors it to a terminal bar.

    A write is refused when the organiser asked to cancel the job, and advance() then raises JobCancelled, until
    the handler calls `committed(progress)`: after that a cancel would undo nothing, and it is only noted.
    """

    def __init__(self, job: Job, *, mirror: Progress | None = None, interval: float = 0.3) -> None:
        self.job = job
        self.mirror = mirror
        self.interval = interval
        self.cancellable = True
        self.last_write = 0.0  # time.monotonic() of the last write: the heartbeat timer beats only after a pause

    def advance(self, done: int, total: int | None = None) -> None:
        if self.mirror:
            self.mirror.advance(done, total)
        if total is not None:
            self.job.total = total
        self.job.done = done
        now = time.monotonic()
        if now - self.last_write >= self.interval or (self.job.total and done >= self.job.total):
            self.last_write = now
            # Call advance() outside the handler's transaction (handlers parse and validate
            # first, then store in one short transaction), so a poller sees it at once.
            fields = {"done": self.job.done, "total": self.job.total, "heartbeat_at": timezone.now()}
            if not _this_run(self.job).filter(cancel_requested_at=None).update(**fields):
                self._refused(fields)

    def _refused(self, fields: dict) -> None:
        run = _this_run(self.job).first()
        if run is None:
            raise _RunEnded()
        if self.cancellable:
            raise JobCancelled()
        _this_run(self.job).update(**fields)


def committed(progress: Progress) -> None:
    """Tell a job's progress that the handler has committed what it stores (a pool build's later steps only
    group what it stored): a cancel asked for from now on can undo nothing, so it no longer stops the handler."""
    if isinstance(progress, JobProgress):
        progress.cancellable = False


Handler = Callable[[Job, Progress], dict]
_HANDLERS: dict[str, Handler] = {}
# The modules whose handlers register themselves (`handler`): imported when a job is first queued or run, not at
# start-up, so that a command or request that runs no job does not load every import and pool service.
_HANDLER_MODULES = (
    "assessments.services.pooling", "assessments.services.imports.uploads", "assessments.services.imports.images",
    "assessments.services.imports.qrels", "assessments.services.machine_judges",
)


def _handlers() -> dict[str, Handler]:
    for module in _HANDLER_MODULES:  # after the first call, lookups in sys.modules
        import_module(module)
    return _HANDLERS


def campaign_of(job: Job) -> Campaign:
    """The campaign of a job whose kind belongs to one (imports, pool builds): they are created with it."""
    if job.campaign is None:
        raise ValueError(f"a {job.kind} job needs a campaign")
    return job.campaign


def acting_user(job: Job) -> User | None:
    """Whom a job's changes are recorded for: whoever confirmed the decision it asked for (job_queue.confirm_job),
    else whoever started it."""
    confirmed_by = job.params.get("confirmed", {}).get("by")
    return User.objects.filter(pk=confirmed_by).first() if confirmed_by else job.created_by


def has_handler(kind: str) -> bool:
    return kind in _handlers()


def handler(kind: str) -> Callable[[Handler], Handler]:
    """Register the function that performs jobs of `kind`; it returns the result summary."""

    def register(fn: Handler) -> Handler:
        _HANDLERS[kind] = fn
        return fn

    return register


def run_job(*, job_id: int, mirror: Progress | None = None) -> Job | None:
    """Perform a job: claim it, call its handler while a heartbeat runs, record the result or what went wrong.

    Bad input (FormatError and other ValueErrors raised by services) fails the job with the message the
    organiser needs; the handler's own transaction has rolled back, so nothing of it is stored. A cancel ends it
    as cancelled, also with nothing stored. Anything else is a bug or a lost database: the job is marked failed,
    on a fresh connection, and the exception propagates. A job that is not queued any more is not run again:
    when it is still running but its worker is gone, it is failed here (see `_not_claimed`).
    """
    job = _claim(job_id)
    if job is None:
        return _not_claimed(job_id)
    progress = JobProgress(job, mirror=mirror)
    try:
        with _named_session(job), _heartbeat(job, progress):
            result = _handlers()[job.kind](job, progress)
    except _RunEnded:
        logger.warning("job %s was ended while it ran (its heartbeat was late); its run stopped, storing nothing", job.pk)
        return job
    except BaseException as exc:
        _end_run(job, progress, **_failure(job, exc))
        if not isinstance(exc, ValueError | JobCancelled):
            raise
    else:
        warnings = list(result.get("warnings", []))
        if _this_run(job).exclude(cancel_requested_at=None).exists():
            warnings.append("The cancel came after the results were stored, so the job finished.")
        _end_run(job, progress, status=Job.Status.SUCCEEDED, message=result.get("summary", ""), result=result,
                 warnings=warnings)
    return job


def _claim(job_id: int) -> Job | None:
    """Move the job from queued to running in one conditional UPDATE, and return it; None when it was not queued.

    The task is acknowledged late (acks_late), so a worker lost mid-job has its delivery repeated, and a broker
    may deliver twice anyway: of two deliveries racing here, exactly one UPDATE finds the row still queued.
    """
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING, started_at=now, heartbeat_at=now, worker=this_process(), attempts=F("attempts") + 1
    )
    if not claimed:
        return None
    return Job.objects.select_related("campaign", "created_by", "cancelled_by").get(pk=job_id)


def _not_claimed(job_id: int) -> Job | None:
    """A delivery for a job that is not queued: a repeat, or the redelivery of a task whose worker was lost.

    A job still running whose worker process is gone (the pool process killed, and Celery handing the task back
    because of task_reject_on_worker_lost), or whose heartbeat stopped, is failed now, saying so. One whose worker
    still beats is left to it (a broker may deliver a long task twice); the sweep watches it.
    """
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        logger.warning("job %s does not exist (its start was undone); this delivery has nothing to run", job_id)
    elif job.status != Job.Status.RUNNING:
        logger.info("job %s is %s; this delivery has nothing to do", job_id, job.status)
    elif end_if_lost(job):
        logger.warning("job %s failed, found lost by its redelivery: %s", job_id, job.message)
    else:
        logger.warning("job %s is running in %s (heartbeat %s); this delivery leaves it there", job_id, job.worker, job.heartbeat_at)
    return job


def is_lost(job: Job) -> bool:
    """Whether a running job's worker process is gone, or its heartbeat stopped for JOB_STALE_SECONDS."""
    stale_before = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS)
    return process_is_gone(job.worker) or job.heartbeat_at is None or job.heartbeat_at < stale_before


def end_if_lost(job: Job) -> bool:
    """Fail a running job whose worker was lost, saying what happened; False when it still beats (or ended)."""
    if not is_lost(job):
        return False
    message = _lost_message(job, gone=process_is_gone(job.worker))
    return end_job(
        job, status=Job.Status.FAILED, message=message, errors=[message], keep_files=True,
        only_if=Q(status=Job.Status.RUNNING, attempts=job.attempts, heartbeat_at=job.heartbeat_at),
    )


def _lost_message(job: Job, *, gone: bool) -> str:
    host, _, pid = _parts(job.worker)
    where = f"pid {pid} on {host}" if job.worker else "an unknown worker"
    at = f" at {job.percent} %" if job.total else ""
    if gone:
        return f"Its worker process ({where}) died while the job ran{at}: it was killed, perhaps for lack of memory. Retry it."
    last = timezone.localtime(job.heartbeat_at).strftime("%Y-%m-%d %H:%M:%S %Z") if job.heartbeat_at else "its start"
    return (
        f"Its worker ({where}) stopped reporting{at} (last heartbeat {last}): it was killed, ran out of memory or "
        "lost its database connection. Retry it."
    )


def _failure(job: Job, exc: BaseException) -> dict:
    """How a run that raised `exc` ends: status, message and errors, and whether its files are kept for a retry."""
    if isinstance(exc, JobCancelled):
        fresh = Job.objects.select_related("cancelled_by").get(pk=job.pk)
        by = f" by {fresh.cancelled_by.username}" if fresh.cancelled_by else ""
        return {"status": Job.Status.CANCELLED, "message": f"Cancelled{by} at {job.percent} %.", "errors": []}
    if isinstance(exc, ValueError):  # FormatError and the services' domain errors
        # A refusal may list its problems (`problems`, one line each) and say what would let it through (`result`,
        # e.g. {"confirm": "allow_changes"}), so the page can ask for that decision. The files are kept for a
        # retry, which can succeed once the campaign has changed (its topics imported, say), or for the decision
        # (job_queue.confirm_job runs the job again on the very files whose changes it listed); unless the file
        # itself is wrong: then a retry would fail the same way.
        refusal = dict(getattr(exc, "result", None) or {})
        return {
            "status": Job.Status.FAILED, "message": str(exc), "errors": list(getattr(exc, "problems", None) or [str(exc)]),
            "result": refusal, "keep_files": not isinstance(exc, FormatError),
        }
    if isinstance(exc, Error) and _connection_lost():
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        message = f"The worker lost its database connection at {job.percent} % ({first}). Retry it."
    elif isinstance(exc, SystemExit | KeyboardInterrupt):
        message = f"The worker was shut down while the job ran, at {job.percent} %. Retry it."
    else:
        message = f"internal error: {exc!r}"
    return {"status": Job.Status.FAILED, "message": message, "errors": [message], "keep_files": True}


def _end_run(job: Job, progress: JobProgress, **outcome) -> None:
    """Record how this run ended, on a working connection (a new one when the handler's broke), retrying while
    the database is away; if it stays away, the sweep fails the job once it is back, as its heartbeat stopped.

    The run's own outcome wins over the sweep's guess for the same attempt: a run that was only slow to beat and
    then stored its results is recorded as succeeded even if the sweep had called it lost.
    """
    only_if = Q(attempts=job.attempts) & ~Q(status=Job.Status.QUEUED)
    for pause in (0.5, 1, 2, 4, 8, None):
        _fresh_connection()
        try:
            end_job(job, only_if=only_if, **outcome)
            return
        except (OperationalError, InterfaceError):
            if pause is None:
                raise
            logger.warning("job %s: the database is away; recording its end again in %s s", job.pk, pause)
            time.sleep(pause)


def end_job(
    job: Job, *, status: str, message: str, only_if: Q, errors: list[str] | None = None,
    warnings: list[str] | None = None, result: dict | None = None, keep_files: bool = False,
) -> bool:
    """End `job` in one conditional UPDATE (`only_if` says in which state it may end), and unless `keep_files`
    remove the files uploaded for it. Every end of a job goes through here: a run's, a cancel's and the sweep's.
    Returns False, changing nothing, when the row was no longer in that state."""
    fields: dict = {"status": status, "message": message, "finished_at": timezone.now(), "done": job.done, "total": job.total}
    if status == Job.Status.SUCCEEDED and job.total:
        fields["done"] = job.total
    fields.update({name: value for name, value in (("errors", errors), ("warnings", warnings), ("result", result)) if value is not None})
    if not Job.objects.filter(only_if, pk=job.pk).update(**fields):
        return False
    for name, value in fields.items():
        setattr(job, name, value)
    if not keep_files or settings.JOB_FILES_KEPT_HOURS <= 0:
        shutil.rmtree(job.upload_folder, ignore_errors=True)
    return True


def _this_run(job: Job):
    """The job's row while this run still owns it: running, and not claimed again since (by a retry)."""
    return Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING, attempts=job.attempts)


def _connection_lost() -> bool:
    return connection.connection is not None and not connection.in_atomic_block and not connection.is_usable()


def _fresh_connection() -> None:
    """Drop this thread's database connection when it no longer works, so the next query opens a new one."""
    if _connection_lost():
        connection.close()


@contextmanager
def _named_session(job: Job) -> Iterator[None]:
    """Name the run's database session after the job (pg_stat_activity.application_name is "touchstone job 42"),
    so an operator sees which backend works for which job."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('application_name', %s, false)", [f"touchstone job {job.pk}"])
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET application_name")
        except Error:  # the connection broke: the run's end is written on a new one
            pass


@contextmanager
def _heartbeat(job: Job, progress: JobProgress) -> Iterator[None]:
    """Beat on the job's row from a timer thread while the handler is quiet (progress writes beat too)."""
    stop = threading.Event()
    every = settings.JOB_HEARTBEAT_SECONDS

    def beat() -> None:
        try:
            while not stop.wait(every):
                if time.monotonic() - progress.last_write < every:
                    continue
                try:
                    _this_run(job).update(heartbeat_at=timezone.now())
                except Error as exc:  # the next beat tries again on a new connection
                    logger.warning("job %s: heartbeat not written: %s", job.pk, exc)
                    connection.close()
        finally:
            connection.close()

    timer = threading.Thread(target=beat, name=f"job-{job.pk}-heartbeat", daemon=True)
    timer.start()
    try:
        yield
    finally:
        stop.set()
        timer.join()


# ---------------------------------------------------------------------------------------------------------------
# Which process runs a job: "host pid-namespace pid", so that a process on the same machine (and in the same
# container) can tell that the one running a job has died, without waiting for its heartbeat to go stale.


def this_process() -> str:
    return f"{socket.gethostname()} {_pid_namespace()} {os.getpid()}"


def process_is_gone(worker: str) -> bool:
    """True when `worker` names a process of this machine and pid namespace that no longer exists; False when it
    lives, or lives elsewhere (only its heartbeat tells then)."""
    host, namespace, pid = _parts(worker)
    if not pid.isdigit() or (host, namespace) != (socket.gethostname(), _pid_namespace()):
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive
        return False
    return False


def _parts(worker: str) -> tuple[str, str, str]:
    parts = worker.rsplit(" ", 2)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else (worker, "", "")


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]": one per container
    except OSError:
        return "-"
