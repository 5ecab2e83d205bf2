"""Touchstone settings: one module, read from the environment (and from TOUCHSTONE_ENV_FILE, see load_env_file).

Every value comes from an environment variable with a safe default; a value that cannot be
understood raises ImproperlyConfigured at start-up instead of being silently ignored. With no
DATABASE_URL the app uses SQLite under var/, and with no CELERY_BROKER_URL tasks run inline, so
`make demo` works on a laptop with nothing else installed.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_secret(name: str, default: str | None = None) -> str | None:
    """Read a secret from NAME, or from the file named by NAME_FILE (Docker/Kubernetes secrets)."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {exc}") from None
    return os.environ.get(name, default)


def load_env_file() -> None:
    """Fill in the variables the environment lacks from the file TOUCHSTONE_ENV_FILE names, if any.

    `make cli` writes touchstone.env and .venv/bin/touchstone points here at it, so commands typed in any shell
    reach the same database with the same key. The environment wins, so one command can still be pointed
    elsewhere. Values are taken literally (no ${...} expansion): a password may contain a dollar sign.
    """
    path = os.environ.get("TOUCHSTONE_ENV_FILE")
    if not path:
        return
    if not Path(path).is_file():
        raise ImproperlyConfigured(f"TOUCHSTONE_ENV_FILE={path!r} is not a file (`make cli` writes touchstone.env)")
    load_dotenv(path, override=False, interpolate=False)


load_env_file()

DEBUG = env_bool("DEBUG", False)

# Without DEBUG a secret key must be given: a key baked into the code would sign every session
# of every deployment with the same value.
SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and not env_bool("TOUCHSTONE_INSECURE_DEV_KEY", False):
        raise ImproperlyConfigured(
            "SECRET_KEY is not set: set it (or SECRET_KEY_FILE) in the environment, or run `make cli` once and "
            "then .venv/bin/touchstone instead of manage.py; DEBUG=1 allows a development key"
        )
    SECRET_KEY = "insecure-development-key-never-use-in-production-" + "x" * 20

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from our static files: the docs work offline
    "django_htmx",
    "axes",  # login throttling (accounts/throttle.py)
    "accounts",
    "assessments",
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "touchstone.requests.RefuseNulMiddleware",  # a NUL in a query parameter: 400, before any view or query sees it
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before the CSRF check, which reads (and so receives) a whole multipart body.
    "assessments.upload_limit.UploadLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "assessments.middleware.JobNotQueuedMiddleware",  # the job queue is down: 503, nothing of the job kept
    # A login refused for too many failures answers 429 with what to do (accounts/throttle.py).
    "axes.middleware.AxesMiddleware",
    # Last, so its process_exception sees a view's error first: a lost database answers 503, logged once.
    "touchstone.outages.DatabaseOutageMiddleware",
]

ROOT_URLCONF = "touchstone.urls"
WSGI_APPLICATION = "touchstone.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "assessments.upload_limit.upload_limit",
            ],
        },
    },
]

VAR_DIR = Path(os.environ.get("TOUCHSTONE_VAR_DIR", BASE_DIR / "var"))
_database_url = os.environ.get("DATABASE_URL", "").strip()
if _database_url:
    try:
        # Health checks: a connection kept across requests or tasks is tested before reuse, so one that a database
        # restart cut is replaced instead of failing the next request or job.
        DATABASES = {
            "default": dj_database_url.parse(_database_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True)
        }
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
    # The password of DATABASE_URL's user apart from the URL, taken as it is: inside a URL a password with @, /, # or %
    # must be percent-encoded, which docker-compose cannot do for a value from .env.
    _database_password = env_secret("DATABASE_PASSWORD")
    if _database_password:
        if DATABASES["default"].get("PASSWORD"):
            raise ImproperlyConfigured("DATABASE_URL holds a password and DATABASE_PASSWORD is set too: give only one")
        DATABASES["default"]["PASSWORD"] = _database_password
elif env_secret("DATABASE_PASSWORD"):
    raise ImproperlyConfigured("DATABASE_PASSWORD is set but DATABASE_URL is not: it is the password of DATABASE_URL's user")
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "touchstone.sqlite3"),
            "OPTIONS": {"timeout": 20},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"
# accounts.backends: ModelBackend with a lighter lookup of each request's user. ModelBackend itself stays, second,
# for the sessions signed in through it before (a session names its backend); it may go once those have expired.
# accounts.throttle.LoginThrottle first: a password is not even compared for a locked-out account or address.
AUTHENTICATION_BACKENDS = [
    "accounts.throttle.LoginThrottle", "accounts.backends.UserBackend", "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "accounts:login"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Collected at image build time, so it lives with the code, not with the data volume.
STATIC_ROOT = BASE_DIR / "var" / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if env_bool("STATIC_COMPRESS", not DEBUG)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
MEDIA_ROOT = VAR_DIR / "uploads"
# Images of image campaigns live under MEDIA_ROOT (the data volume in docker-compose.yml). A web server in front that
# can send protected files itself (nginx: an `internal` location aliased to MEDIA_ROOT) is named here, and Python then
# only checks who may see an image (assessments.services.images); empty: Python streams the file.
IMAGE_ACCEL_REDIRECT = os.environ.get("IMAGE_ACCEL_REDIRECT", "")
# Pooled images whose 64-bit pHashes differ in at most this many bits are one picture: judged once, the label copied
# to the others as to a text's twins (services.duplicates). 0: only identical hashes; -1: no grouping.
IMAGE_PHASH_DISTANCE = env_int("IMAGE_PHASH_DISTANCE", 4)
# Uploads of runs and collections can be large; they are streamed to disk, not held in memory.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# The largest upload (a request body) the import pages and API take; a larger one is refused before it is read.
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 2 * 1024**3)
# A run's topic is held whole while it is read (its order needs every line): a file with more lines in a row for one
# topic is refused, so a small hostile file cannot take gigabytes. 100 times what Touché asks for.
RUN_MAX_LINES_PER_TOPIC = env_int("RUN_MAX_LINES_PER_TOPIC", 100_000)
# The most a compressed input file may expand to, whatever its ratio (see assessments/formats/reading.py).
IMPORT_MAX_DECOMPRESSED_BYTES = env_int("IMPORT_MAX_DECOMPRESSED_BYTES", 64 * 1024**3)

# Secure by default: on unless the environment turns them off (a plain-HTTP demo sets DEBUG=1).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"  # a view that must be framed by our own pages says so (xframe_options_sameorigin)
BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
if BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Login throttling (django-axes, accounts/throttle.py): LOGIN_FAILURE_LIMIT failed logins for one account name, or
# from one address, refuse logins for it until LOGIN_COOLOFF_MINUTES have passed since the last failure. Failures
# are counted in the database, so every web process sees the same counts.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
LOGIN_COOLOFF_MINUTES = env_float("LOGIN_COOLOFF_MINUTES", 15)
if LOGIN_FAILURE_LIMIT < 1 or LOGIN_COOLOFF_MINUTES <= 0:
    raise ImproperlyConfigured("LOGIN_FAILURE_LIMIT must be at least 1 and LOGIN_COOLOFF_MINUTES above 0")
AXES_ENABLED = env_bool("LOGIN_THROTTLE", True)
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = "accounts.throttle.cool_off"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # either one reaching the limit locks
AXES_RESET_ON_SUCCESS = False  # one's own good login must not clear the failures counted for one's address
AXES_CLIENT_IP_CALLABLE = "accounts.throttle.client_address"
AXES_LOCKOUT_CALLABLE = "accounts.throttle.lockout_response"
AXES_DISABLE_ACCESS_LOG = True  # no row per successful login; failures are kept, each one:
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_VERBOSE = False  # no banner at start-up; failures and lockouts are still logged

# How long an API token works (create_token --days overrides it); a change of its user's password ends it sooner.
API_TOKEN_DAYS = env_int("API_TOKEN_DAYS", 90)

REST_FRAMEWORK = {
    # Token first, so an unauthenticated client gets 401 with a WWW-Authenticate challenge.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.tokens.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # drf-spectacular's, with each operation's roles and every error it can answer (assessments/api/schema.py).
    "DEFAULT_SCHEMA_CLASS": "assessments.api.schema.TouchstoneAutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    # Errors that are not the client's answer in JSON with a status a client can act on (503 + Retry-After).
    "EXCEPTION_HANDLER": "assessments.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Touchstone API",
    "DESCRIPTION": (
        "Relevance-assessment campaigns: topics, runs, pools, judgments, qrels and evaluation.\n\n"
        "Authenticate with `Authorization: Token KEY` (`create_token USER` prints a key) or a browser session. Each "
        "operation says who may call it and lists every error it answers; an error's body is `{\"detail\": \"…\"}`, "
        "or for a refused body or query DRF's field errors (`{\"field\": [\"message\"]}`). Lists that page answer "
        "`{count, next, previous, results}` and take `?page=`. Any request may also answer 503 with Retry-After while "
        "the database is unreachable."
    ),
    "VERSION": "1.0.0",
    # Three kinds of "phase", each enum with a name of its own: a campaign's (setup … closed), an assignment's or
    # imported labels' (training or main), and the labels an export or a figure reads (main, training or all).
    "ENUM_NAME_OVERRIDES": {"TrainingOrMainEnum": ["training", "main"], "LabelPhaseEnum": ["main", "training", "all"]},
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema names every endpoint and field: for signed-in users only, by token or session (so is the docs page,
    # assessments/api/docs.py).
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No request to the public validator: the page must not call out (and works without a network).
    "SWAGGER_UI_SETTINGS": {"validatorUrl": None},
}

# Sessions: every request reads one. With a shared cache (CACHE_URL, Redis) they are read from it and written
# through to the database (accounts.sessions: logout ends a session in every web process at once, and the app
# keeps working on the database alone while Redis is away). Without one they stay in the database only: a
# per-process memory cache would go on accepting a session that another process logged out.
CACHE_URL = os.environ.get("CACHE_URL", "").strip()
if CACHE_URL:
    if not CACHE_URL.startswith(("redis://", "rediss://")):
        raise ImproperlyConfigured(f"CACHE_URL={CACHE_URL!r} is not a redis:// URL")
    CACHES = {
        "default": {
            "BACKEND": "touchstone.redis_cache.RedisCache",  # Django's, with its Redis client made once
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "touchstone",
            # A Redis that stops answering costs a request at most this long before the database takes over.
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    SESSION_ENGINE = "accounts.sessions"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Rendered parts of pages that are the same for many requests (the judge page's topic, label buttons and
# dialogs), keyed by everything they show. In each process's memory, not Redis: reading them back costs no
# round trip, and a deployment's new templates start from an empty cache instead of old fragments.
CACHES["fragments"] = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "fragments", "OPTIONS": {"MAX_ENTRIES": 2000}}
# How long a cached session may outlive a logout whose cache delete failed (accounts.sessions).
SESSION_CACHE_SECONDS = env_int("SESSION_CACHE_SECONDS", 600)

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "").strip()
if CELERY_BROKER_URL and not CELERY_BROKER_URL.startswith(("redis://", "rediss://", "amqp://", "memory://")):
    raise ImproperlyConfigured(f"CELERY_BROKER_URL={CELERY_BROKER_URL!r} is not a redis://, amqp:// or memory:// URL")
# Progress and results live on Job rows, not in a result backend.
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
# A worker loss (README "When a worker is lost"): tasks are acknowledged when they end, so a killed worker's task
# goes back to the queue (at once when only a pool process died: reject_on_worker_lost; after the visibility
# timeout on Redis when the whole worker did). Each process reserves one task at a time, so no queued job waits
# behind a long one in a busy worker while another is idle. The visibility timeout is longer than any job, so a
# long job is not handed to a second worker while it runs; a lost job is failed by the sweep long before it.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 12 * 3600)}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A job keeps running when the broker connection drops (its progress is on its row; its late acknowledgement
# may fail, and the repeated delivery finds the job ended).
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False

# Jobs always end (services.jobs, services.job_queue): a running job writes a heartbeat at least every
# JOB_HEARTBEAT_SECONDS; the sweep, run by Celery beat every JOB_SWEEP_SECONDS and by each worker as it starts,
# fails a job silent for JOB_STALE_SECONDS and hands a job queued JOB_REDISPATCH_SECONDS ago that no worker took
# to the broker again. A failed job keeps its uploaded files JOB_FILES_KEPT_HOURS so it can be retried (0: they are
# removed as it fails, and it cannot be).
JOB_HEARTBEAT_SECONDS = env_float("JOB_HEARTBEAT_SECONDS", 10)
JOB_STALE_SECONDS = env_float("JOB_STALE_SECONDS", 60)
JOB_SWEEP_SECONDS = env_float("JOB_SWEEP_SECONDS", 30)
JOB_REDISPATCH_SECONDS = env_float("JOB_REDISPATCH_SECONDS", 300)
JOB_FILES_KEPT_HOURS = env_float("JOB_FILES_KEPT_HOURS", 24)
if JOB_STALE_SECONDS < 3 * JOB_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        f"JOB_STALE_SECONDS={JOB_STALE_SECONDS:g} must be at least three heartbeats (JOB_HEARTBEAT_SECONDS={JOB_HEARTBEAT_SECONDS:g})"
    )
# Machine judges (services.machine_judges): the first wait before a failed call to an endpoint is tried again
# (doubling each attempt, the endpoint's Retry-After first), and keys by name for judges whose key is not in the
# environment (MACHINE_JUDGE_KEY_<NAME> variables, e.g. MACHINE_JUDGE_KEY_OPENAI -> "OPENAI"). A key is never stored
# in the database, shown or logged.
MACHINE_JUDGE_BACKOFF_SECONDS = env_float("MACHINE_JUDGE_BACKOFF_SECONDS", 1.0)
MACHINE_JUDGE_KEYS = {
    name.removeprefix("MACHINE_JUDGE_KEY_"): value for name, value in os.environ.items() if name.startswith("MACHINE_JUDGE_KEY_")
}
CELERY_BEAT_SCHEDULE = {
    # A sweep that waited longer than its interval is dropped: the next one does its work.
    "sweep-jobs": {"task": "assessments.sweep_jobs", "schedule": JOB_SWEEP_SECONDS, "options": {"expires": JOB_SWEEP_SECONDS}},
}
# Sweeps have a queue of their own, which every worker also consumes: the sweep tells a job whose message the
# broker lost by the jobs' queue being empty, which a waiting sweep must not spoil.
CELERY_TASK_DEFAULT_QUEUE = "celery"
# Celery reads a queue's options from a dict as from kombu's Queue, which settings do not import (Celery is loaded
# only by processes that queue or run jobs).
CELERY_TASK_QUEUES = {"celery": {"routing_key": "celery"}, "sweeps": {"routing_key": "sweeps"}}
CELERY_TASK_ROUTES = {"assessments.sweep_jobs": {"queue": "sweeps"}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # Django's own configuration gives its logger a console handler under DEBUG as well, which printed every one
    # of its lines twice (once there, once through the root's): its lines go to the root's handler alone.
    "loggers": {"django": {"handlers": [], "propagate": True}},
}
