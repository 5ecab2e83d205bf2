"""What the app answers while its database is gone, and what it logs.

When PostgreSQL restarts, is unreachable, or ends a connection (pg_terminate_backend, a failover), every
request that needs it fails. Each of them answers 503 Service Unavailable with a Retry-After header: JSON
under /api/, a short page elsewhere, never Django's HTML 500. The log gets one line when the outage is
first met and one when a connection succeeds again, instead of a traceback per request. Django closes the
broken connection at the end of the request, so the first request after the database is back reconnects.

Only errors that mean the connection is gone count: a statement that fails for its own reasons (a deadlock,
a timeout, a constraint) is still a 500 with its traceback, because it is a bug or a load problem to look at.
"""

from __future__ import annotations

import logging
import sys
import threading
import time

from django.db import InterfaceError, OperationalError
from django.db.backends.signals import connection_created
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 10
# SQLSTATEs of a lost server rather than a failed statement: class 08 (connection exception) and the server
# shutting down, crashing or starting up (57P01 is also what pg_terminate_backend sends). psycopg2 gives no
# code at all when the socket closes or the connection is refused.
_LOST_SERVER = ("08", "57P01", "57P02", "57P03")


def is_database_outage(exc: BaseException) -> bool:
    if isinstance(exc, InterfaceError):  # "connection already closed": the same outage, met again
        return True
    if not isinstance(exc, OperationalError):
        return False
    code = getattr(exc.__cause__, "pgcode", None)
    return code is None or code.startswith(_LOST_SERVER)


class _Outage:
    """The process's view of the database: up, or down since when and how many requests were refused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since: float | None = None
        self._refused = 0

    def met(self, exc: BaseException) -> None:
        with self._lock:
            self._refused += 1
            if self._since is not None:
                return
            self._since = time.monotonic()
        log.error("database unavailable, answering 503 until it is back: %s", " ".join(str(exc).split()) or type(exc).__name__)

    def connected(self, **kwargs) -> None:
        if self._since is None:  # the common case, without the lock
            return
        with self._lock:
            if self._since is None:
                return
            seconds, refused = time.monotonic() - self._since, self._refused
            self._since, self._refused = None, 0
        log.warning("database available again after %.0f s; %d requests were answered 503", seconds, refused)


OUTAGE = _Outage()
connection_created.connect(OUTAGE.connected, dispatch_uid="touchstone.outages")


def unavailable(request: HttpRequest) -> HttpResponse:
    """The 503 for a request that met the outage (counted, and logged once per outage)."""
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {"detail": "The database is unavailable; try again in a few seconds."}, status=503
        )
    else:
        # Rendered without the request: context processors would ask the database for the user.
        response = HttpResponse(render_to_string("503.html", {"retry_after": RETRY_AFTER_SECONDS}), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response._has_been_logged = True  # type: ignore[attr-defined]  # Django logs every 5xx otherwise: a line per request
    return response


class DatabaseOutageMiddleware:
    """Turns a lost database in a view (DRF re-raises what it does not handle) into `unavailable`."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_database_outage(exception):
            return None
        OUTAGE.met(exception)
        return unavailable(request)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the same 503 for an outage met outside a view (a session saved by middleware)."""
    exc = sys.exc_info()[1]
    if exc is not None and is_database_outage(exc):
        OUTAGE.met(exc)
        return unavailable(request)
    return defaults.server_error(request)
