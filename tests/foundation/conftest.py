"""Real Celery workers for the job tests: each test gets a Redis server of its own (so it may stop and restart
it, and no other test's worker takes its tasks) and starts `celery worker` processes against its test database.

Workers load tests.foundation.job_gate, which holds a job at its first progress report until the test opens the
gate, and run with short heartbeat and sweep intervals (seconds, not the production minutes).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.db import connection

from tests.brokers import wait_for

ROOT = Path(__file__).resolve().parents[2]
# Short intervals for every worker the tests start (the production defaults are 10 s, 60 s and 30 s).
FAST_JOBS = {"JOB_HEARTBEAT_SECONDS": "0.2", "JOB_STALE_SECONDS": "1.5", "JOB_SWEEP_SECONDS": "0.5", "JOB_REDISPATCH_SECONDS": "1"}


@dataclass
class Worker:
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """kill -9: no warm shutdown, nothing acknowledged, no job row touched."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


@dataclass
class Workers:
    """Starts `celery worker` processes for one test; they are stopped when the test ends."""

    env: dict[str, str]
    folder: Path
    started: list[Worker] = field(default_factory=list)

    def start(self, *, pool: str = "solo", beat: bool = False, **env: str) -> Worker:
        n = len(self.started) + 1
        command = [sys.executable, "-m", "celery", "-A", "touchstone", "worker", f"--pool={pool}", "--concurrency=1",
                   f"--hostname=w{n}@%h", "--include=tests.foundation.job_gate", "--without-gossip", "--without-mingle",
                   "--without-heartbeat", "--loglevel=INFO"]
        if beat:
            command += ["--beat", f"--schedule={self.folder / f'beat-{n}'}"]
        log_path = self.folder / f"worker-{n}.log"
        with open(log_path, "w") as log:
            process = subprocess.Popen(command, cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT)
        worker = Worker(process, log_path)
        self.started.append(worker)
        # "ready." comes after the start-up sweep and once the worker consumes its queue.
        wait_for(lambda: " ready." in worker.log() or process.poll() is not None, timeout=60, what="the worker to start", every=0.1)
        assert process.poll() is None, worker.log()
        return worker

    def stop_all(self) -> None:
        for worker in self.started:
            if worker.process.poll() is None:
                worker.process.terminate()
                try:
                    worker.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    worker.kill()


@dataclass
class Gate:
    """tests.foundation.job_gate's folder: where a held run says so, and where the test lets it go on."""

    folder: Path

    def held(self, job_id: int) -> bool:
        return (self.folder / f"blocked-{job_id}").exists()

    def open(self) -> None:
        (self.folder / "open").touch()


@pytest.fixture
def gate(tmp_path) -> Gate:
    folder = tmp_path / "gate"
    folder.mkdir()
    return Gate(folder)


@pytest.fixture
def workers(transactional_db, settings, tmp_path, broker, gate) -> Iterator[Workers]:
    """Workers bound to the test database, this test's Redis, its gate and its upload folder."""
    settings.MEDIA_ROOT = tmp_path / "uploads"  # what the workers' settings derive from TOUCHSTONE_VAR_DIR
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": broker.url,
        "TOUCHSTONE_VAR_DIR": str(tmp_path),
        "TOUCHSTONE_JOB_GATE": str(gate.folder),
        **FAST_JOBS,
    }
    started = Workers(env, tmp_path)
    try:
        yield started
    finally:
        started.stop_all()
