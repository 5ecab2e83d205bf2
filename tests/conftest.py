"""The named cast every test can use.

organiser (olivia) runs the campaign (a member of it); admin watches agreement in every campaign; alice and bob
are assessors who share a training topic; mallory is an assessor on another campaign and must never see this
one; oscar organises that other campaign and must never reach this one.
"""

import io
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.models import Role
from tests.brokers import PrivateRedis, app_broker
from tests.factories import (
    AssignmentFactory,
    CampaignFactory,
    MembershipFactory,
    PoolEntryFactory,
    TopicFactory,
    UserFactory,
)
from tests.image_campaign import image_campaign  # noqa: F401  (a fixture the image tests share)


@pytest.fixture(autouse=True)
def _tasks_run_inline(settings):
    """Most tests run Celery tasks in-process; tests marked `worker` use a real worker instead."""
    from touchstone.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(autouse=True)
def _fast_password_hashing_and_private_uploads(settings, tmp_path):
    """Factories hash a password per user: the production hasher would make that the suite's slowest step.
    Uploads and qrels snapshots go to the test's own folder, never into var/."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True, scope="session")
def _flush_past_append_only_tables():
    """Transactional tests (real worker, live server, migrations) end by emptying every table with one
    TRUNCATE, which the judgment record refuses by design (migration 0008). The tests' superuser runs
    that TRUNCATE with triggers off (session_replication_role = replica), as a restore would; the
    application's own role cannot."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    flush = DatabaseOperations.execute_sql_flush

    def execute_sql_flush(self, sql_list):
        flush(self, ["SET LOCAL session_replication_role = replica", *sql_list])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DatabaseOperations, "execute_sql_flush", execute_sql_flush)
        yield


@pytest.fixture
def broker(tmp_path) -> Iterator[PrivateRedis]:
    """This test's own Redis, which the test's Celery app publishes to."""
    folder = tmp_path / "redis"
    folder.mkdir()
    server = PrivateRedis(folder)
    server.start()
    try:
        with app_broker(server.url):
            yield server
    finally:
        server.stop()


@pytest.fixture
def session_cache(settings):
    """Sessions as in production (docker-compose sets CACHE_URL): read through Redis, kept in the database.

    The test's keys carry a prefix of their own on the suite's Redis (the broker's, CELERY_BROKER_URL), so
    suites running side by side never meet; they are deleted afterwards."""
    from django.core.cache import cache

    prefix = f"test-sessions-{uuid.uuid4().hex}"
    settings.CACHES = {**settings.CACHES, "default": {
        "BACKEND": "touchstone.redis_cache.RedisCache", "LOCATION": os.environ["CELERY_BROKER_URL"],
        "KEY_PREFIX": prefix,
    }}
    settings.SESSION_ENGINE = "accounts.sessions"
    yield cache
    # Not cache.clear(): Django's RedisCache empties the whole Redis database, the broker's queues with it.
    client = redis.Redis.from_url(os.environ["CELERY_BROKER_URL"])
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


@pytest.fixture
def touche_data() -> Path:
    """The real Touché files (never copied into the repo), found through TOUCHE_DATA, which .ci/run sets.

    Without them a test skips, saying why; under CI (the CI variable set, as by .ci/run) it fails instead, so a
    CI machine that lost the files cannot turn every real-data test into a silent skip.
    """
    path = os.environ.get("TOUCHE_DATA")
    if path and not Path(path, "README.md").is_file():
        pytest.fail(f"TOUCHE_DATA={path} is not the folder of real Touché files (it has no README.md)")
    if not path:
        reason = "TOUCHE_DATA is not set: the real Touché files are in ../shared/data/touche (.ci/run sets it)"
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail(f"{reason}; under CI the tests that need them must run")
        pytest.skip(reason)
    return Path(path)


@pytest.fixture
def organiser(campaign):
    """olivia, a member of `campaign` (a test module that defines its own `campaign` gets her as its member)."""
    user = UserFactory(username="olivia", role=Role.ORGANISER)
    MembershipFactory(campaign=campaign, user=user)
    return user


@pytest.fixture
def api(organiser):
    """The organiser's API client, signed in without a password (as a token client would be)."""
    client = APIClient()
    client.force_authenticate(organiser)
    return client


@pytest.fixture
def oscar(db):
    """An organiser of another campaign ("elsewhere"), and of nothing else."""
    user = UserFactory(username="oscar", role=Role.ORGANISER)
    MembershipFactory(campaign=CampaignFactory(slug="elsewhere-run", name="Elsewhere"), user=user)
    return user


@pytest.fixture
def admin_user(db):
    return UserFactory(username="ada", role=Role.ADMIN)


@pytest.fixture
def campaign(db):
    return CampaignFactory(slug="touche22", name="Touché 2022 Task 2")


@pytest.fixture
def training_topic(campaign):
    return TopicFactory(campaign=campaign, number="1", is_training=True)


@pytest.fixture
def pool(training_topic):
    """Three documents to judge for the training topic."""
    return [PoolEntryFactory(topic=training_topic, order=i) for i in range(3)]


@pytest.fixture
def alice(training_topic):
    user = UserFactory(username="alice")
    AssignmentFactory(topic=training_topic, assessor=user, phase="training")
    return user


@pytest.fixture
def bob(training_topic):
    user = UserFactory(username="bob")
    AssignmentFactory(topic=training_topic, assessor=user, phase="training")
    return user


@pytest.fixture
def mallory(db):
    other = TopicFactory(campaign=CampaignFactory(slug="elsewhere"), number="1")
    user = UserFactory(username="mallory")
    AssignmentFactory(topic=other, assessor=user, phase="main")
    return user


@dataclass
class CommandResult:
    code: int
    out: str
    err: str


@pytest.fixture
def command() -> Callable[..., CommandResult]:
    """command("import_runs", slug, path, ...) -> exit status and what it printed, as a shell would see them."""

    def run(name: str, *args) -> CommandResult:
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command(name, *map(str, args), stdout=out, stderr=err, no_color=True)
        except SystemExit as exc:
            return CommandResult(int(exc.code), out.getvalue(), err.getvalue())
        return CommandResult(0, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def gawk_on_path(tmp_path) -> dict[str, str]:
    """An environment whose ``awk`` is gawk: the script needs gawk's PROCINFO["sorted_in"] (topic order) and regex
    intervals (``{16}``), which mawk lacks, and calls plain ``awk``."""
    gawk = shutil.which("gawk")
    if gawk is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail("gawk is missing: the organisers' Task 3 evaluator needs it (apt-get install gawk)")
        pytest.skip("gawk is missing: the organisers' Task 3 evaluator needs it")
    folder = tmp_path / "gawk-as-awk"
    folder.mkdir()
    (folder / "awk").symlink_to(gawk)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}", "LC_ALL": "C"}
