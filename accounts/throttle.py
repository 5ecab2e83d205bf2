"""Login throttling: django-axes counts failed logins by account and by address, and refuses both for a while.

Every password check of a request goes through `django.contrib.auth.authenticate` with that request: the login
page, the admin's login and anything else that signs people in with a password. `LoginThrottle`, first of
settings.AUTHENTICATION_BACKENDS, refuses a login for an account name or from an address that failed
LOGIN_FAILURE_LIMIT times within LOGIN_COOLOFF_MINUTES, even with the right password, until that time has passed
since the last failure (or `manage.py axes_reset_username NAME` / `axes_reset_ip ADDRESS`). Failures are kept in
the database (axes' AccessAttempt; each one, with whether it was refused, in AccessFailureLog, both in the admin),
and a lockout is logged as a warning on the `touchstone.security` logger.
"""

import logging
from datetime import timedelta

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

log = logging.getLogger("touchstone.security")


class LoginThrottle(AxesStandaloneBackend):
    """django-axes' check before any password is compared.

    A call without a request (a test client's `login`, code in a shell) is no login over the network: it has no
    address to count, and is neither refused nor counted here. Every view that signs someone in passes its request.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def client_address(request: HttpRequest) -> str | None:
    """The address a login came from. Behind the TLS proxy (BEHIND_TLS_PROXY) every request comes from the proxy,
    which appends the client's address to X-Forwarded-For: the last entry is the one it saw (the ones before it
    are whatever the client sent)."""
    if settings.BEHIND_TLS_PROXY:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if forwarded:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR")


def cool_off(request: HttpRequest | None = None) -> timedelta:
    """How long a lockout lasts after the last failed try (AXES_COOLOFF_TIME)."""
    return timedelta(minutes=settings.LOGIN_COOLOFF_MINUTES)


def lockout_message() -> str:
    minutes = settings.LOGIN_COOLOFF_MINUTES
    return (
        f"Too many failed logins for this account or from this address: logging in is refused for {minutes:g} minutes "
        "after the last failed try, even with the right password. Try again later, or ask an admin to unlock it."
    )


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None, credentials=None) -> HttpResponse:
    """What a locked-out login is answered (AXES_LOCKOUT_CALLABLE): 429 with Retry-After, JSON under /api/."""
    message = lockout_message()
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=429)
    else:
        response = render(request, "accounts/locked_out.html", {"message": message}, status=429)
    response["Retry-After"] = str(int(cool_off().total_seconds()))
    return response


def log_lockout(sender, request=None, username=None, ip_address=None, **kwargs) -> None:
    """A login refused for too many failures: one warning line (axes' user_locked_out signal)."""
    path = getattr(request, "path", "")
    log.warning("login locked out: account %r, address %s, at %s", username, ip_address, path)
