"""Settings come from the environment: safe defaults, loud failures on values that mean nothing."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE_ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**BASE_ENV, **env}, capture_output=True, text=True, timeout=120
    )


def settings_value(expression: str, **env: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT, env={**BASE_ENV, "DJANGO_SETTINGS_MODULE": "touchstone.settings", **env},
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_defaults_are_sqlite_inline_tasks_and_debug_off(tmp_path):
    env = {"SECRET_KEY": "k" * 50, "TOUCHSTONE_VAR_DIR": str(tmp_path)}
    assert settings_value("settings.DEBUG", **env) == "False"
    assert settings_value("settings.DATABASES['default']['ENGINE']", **env) == "django.db.backends.sqlite3"
    assert settings_value("settings.DATABASES['default']['NAME']", **env) == str(tmp_path / "touchstone.sqlite3")
    assert settings_value("settings.CELERY_TASK_ALWAYS_EAGER", **env) == "True"


def test_database_and_broker_urls_switch_to_postgres_and_a_real_worker():
    env = {"SECRET_KEY": "k" * 50, "DATABASE_URL": "postgres://u:p@db.example:5433/camp", "CELERY_BROKER_URL": "redis://r:6379/1"}
    assert settings_value("settings.DATABASES['default']['ENGINE']", **env) == "django.db.backends.postgresql"
    assert settings_value("settings.DATABASES['default']['PORT']", **env) == "5433"
    assert settings_value("settings.CELERY_TASK_ALWAYS_EAGER", **env) == "False"


def test_sessions_are_read_through_redis_only_when_a_cache_url_is_given():
    env = {"SECRET_KEY": "k" * 50, "DATABASE_URL": "postgres://u:p@db.example:5433/camp"}
    # Without a shared cache the database alone: a per-process cache would outlive a logout in another process.
    assert settings_value("settings.SESSION_ENGINE", **env) == "django.contrib.sessions.backends.db"
    assert settings_value("settings.SESSION_ENGINE", **env, CACHE_URL="redis://r:6379/1") == "accounts.sessions"
    assert settings_value("settings.CACHES['default']['LOCATION']", **env, CACHE_URL="redis://r:6379/1") == "redis://r:6379/1"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"SECRET_KEY": "k" * 50, "SECURE_HSTS_SECONDS": "a year"}, "SECURE_HSTS_SECONDS='a year' is not an integer"),
        ({}, "SECRET_KEY is not set"),
        ({"SECRET_KEY": "k" * 50, "CELERY_BROKER_URL": "localhost:6379"}, "is not a redis://"),
        ({"SECRET_KEY": "k" * 50, "CACHE_URL": "memcached://localhost"}, "CACHE_URL='memcached://localhost' is not a redis:// URL"),
        ({"SECRET_KEY": "k" * 50, "DATABASE_URL": "nonsense://x"}, "DATABASE_URL is not a database URL"),
        ({"SECRET_KEY_FILE": "/nonexistent/secret"}, "SECRET_KEY_FILE='/nonexistent/secret' cannot be read"),
    ],
)
def test_bad_values_fail_loudly_at_start_up(env, message):
    proc = run_manage("check", **env)
    assert proc.returncode == 1
    # One line that names the variable, not a traceback.
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr


def test_an_env_file_fills_in_what_the_environment_lacks(tmp_path):
    env_file = tmp_path / "touchstone.env"
    env_file.write_text("# written by make cli\nSECRET_KEY=from-the-file-$NOT_EXPANDED\nDATABASE_URL=postgres://u@db.example:5433/camp\n")
    env = {"TOUCHSTONE_ENV_FILE": str(env_file)}
    assert settings_value("settings.SECRET_KEY", **env) == "from-the-file-$NOT_EXPANDED"
    assert settings_value("settings.DATABASES['default']['NAME']", **env) == "camp"
    # The environment wins over the file.
    assert settings_value("settings.DATABASES['default']['NAME']", **env, DATABASE_URL="postgres://u@db.example/other") == "other"


def test_an_env_file_that_is_missing_is_an_error(tmp_path):
    proc = run_manage("check", TOUCHSTONE_ENV_FILE=str(tmp_path / "touchstone.env"))
    assert proc.returncode == 1
    assert proc.stderr == f"error: TOUCHSTONE_ENV_FILE='{tmp_path / 'touchstone.env'}' is not a file (`make cli` writes touchstone.env)\n"


def test_secret_key_can_come_from_a_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("from-a-file-" + "s" * 50 + "\n")
    assert settings_value("settings.SECRET_KEY", SECRET_KEY_FILE=str(secret)) == "from-a-file-" + "s" * 50


def test_deploy_check_is_clean_with_only_a_secret_key_and_hosts():
    proc = run_manage("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY="z" * 64 + "-Q7!", ALLOWED_HOSTS="touchstone.example")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no issues" in proc.stdout


def test_secure_cookies_and_redirect_can_be_turned_off_by_the_environment():
    env = {"SECRET_KEY": "k" * 50, "SECURE_SSL_REDIRECT": "0", "SESSION_COOKIE_SECURE": "false"}
    assert settings_value("settings.SECURE_SSL_REDIRECT", **env) == "False"
    assert settings_value("settings.SESSION_COOKIE_SECURE", **env) == "False"
    assert settings_value("settings.CSRF_COOKIE_SECURE", **env) == "True"


def test_under_debug_a_django_log_line_is_printed_once():
    done = run_manage("shell", "-c", "import logging; logging.getLogger('django.request').warning('printed once?')", DEBUG="1")
    assert done.returncode == 0, done.stderr
    assert (done.stdout + done.stderr).count("printed once?") == 1
