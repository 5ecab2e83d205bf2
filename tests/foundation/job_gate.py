"""Loaded by the test workers (`celery worker --include tests.foundation.job_gate`): a job's run stops at its
first progress report past the start, until the test opens the gate, so a test can kill the worker, cut its
database connection or cancel the job mid-import without racing it (and without sleeping).

The folder named by TOUCHSTONE_JOB_GATE receives `blocked-<job id>` when a run stops; the run goes on once the
file `open` exists there.
"""

import os
import time
from pathlib import Path

from assessments.services import jobs

GATE = os.environ.get("TOUCHSTONE_JOB_GATE")
_advance = jobs.JobProgress.advance
_stopped: set[tuple[int, int]] = set()


def _advance_then_wait(self: jobs.JobProgress, done: int, total: int | None = None) -> None:
    _advance(self, done, total)
    run = (self.job.pk, self.job.attempts)
    if GATE and done and run not in _stopped:
        _stopped.add(run)
        self.last_write = 0.0
        _advance(self, done, total)  # the position the run stopped at is on the row
        gate = Path(GATE)
        (gate / f"blocked-{self.job.pk}").touch()
        while not (gate / "open").exists():
            time.sleep(0.01)


jobs.JobProgress.advance = _advance_then_wait  # type: ignore[method-assign]
