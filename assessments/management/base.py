"""The base of the project's management commands."""

from django.core.management import base


class BaseCommand(base.BaseCommand):
    """A command that starts without Django's system checks: they load every URL and view (a fifth of a second,
    more than a one-off evaluation takes), and they run where a misconfiguration would show, on `migrate`, on the
    server's start and in `check --deploy`; data commands never find it first."""

    requires_system_checks: list[str] = []
