"""The production path: a job queued on commit is picked up by a real Celery worker process over Redis."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from assessments.models import Job, Ranking
from assessments.services.imports.topics import import_topics
from assessments.services.imports.uploads import start_import
from touchstone.celery import app

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "assessments" / "demo"


@pytest.fixture
def worker(transactional_db, settings, tmp_path):
    """A `celery worker` subprocess bound to the test database and upload folder, consuming a queue of its own."""
    queue = f"test-{uuid.uuid4().hex}"
    settings.MEDIA_ROOT = tmp_path / "uploads"  # what the worker's settings derive from TOUCHSTONE_VAR_DIR
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "TOUCHSTONE_VAR_DIR": str(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "touchstone", "worker", "-Q", queue, "--pool=solo",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel=INFO"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    app.conf.task_always_eager = False
    previous_queue, app.conf.task_default_queue = app.conf.task_default_queue, queue
    try:
        yield proc
    finally:
        app.conf.task_default_queue = previous_queue
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.worker
def test_a_real_worker_imports_an_uploaded_run_and_records_progress(worker, campaign, organiser, settings):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    import_topics(campaign=campaign, path=DEMO / "topics.xml")
    upload = SimpleUploadedFile("demo-stance.txt", (DEMO / "run-demo-stance.txt").read_bytes())

    job = start_import(kind="import_runs", campaign=campaign, uploads=[upload], created_by=organiser)
    assert job.status == Job.Status.QUEUED  # queued on commit, not run in this process

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
            break
        assert worker.poll() is None, worker.stdout.read()
        time.sleep(0.2)
    else:
        worker.terminate()
        pytest.fail(f"the worker did not finish the job in time:\n{worker.communicate()[0]}")

    assert job.status == Job.Status.SUCCEEDED, job.errors
    assert job.done == job.total > 0
    assert sum(Ranking.objects.filter(run__campaign=campaign, run__tag="demo-stance").values_list("length", flat=True)) == 18
