"""A Redis of a test's own, and the test process's Celery app pointed at it: fault tests stop and restart it
without touching the Redis other people's tests use (tests/conftest.py: the `broker` fixture)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from touchstone.celery import app


def wait_for(condition: Callable[[], object], *, timeout: float, what: str, every: float = 0.05, log: Callable[[], str] | None = None):
    """Poll `condition` until it returns something true, and return that; fail the test after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"timed out after {timeout} s waiting for {what}" + (f"\n--- worker log ---\n{log()}" if log else ""))


@dataclass
class PrivateRedis:
    """A redis-server on a free port, without persistence: a restart loses every message, as a crash would."""

    folder: Path
    port: int = 0
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        if not self.port:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        wait_for(lambda: self._answers(client), timeout=10, what="redis-server to start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    @staticmethod
    def _answers(client: redis.Redis) -> bool:
        try:
            return bool(client.ping())
        except redis.ConnectionError:
            return False


@contextmanager
def app_broker(url: str) -> Iterator[None]:
    """Point this process's Celery app (the web side, which queues jobs) at `url`, with tasks sent, not run.
    (Celery reads broker_url once from Django's settings; the read and write URLs are what it connects to.)"""
    previous = app.conf.broker_write_url, app.conf.broker_read_url, app.conf.task_always_eager

    def reconnect() -> None:
        # Dropped, not closed: kombu keeps one pool per URL for the whole process, and gives it out again.
        app._pool = None
        app.amqp._producer_pool = None

    app.conf.broker_write_url = app.conf.broker_read_url = url
    app.conf.task_always_eager = False
    reconnect()
    try:
        yield
    finally:
        app.conf.broker_write_url, app.conf.broker_read_url, app.conf.task_always_eager = previous
        reconnect()
