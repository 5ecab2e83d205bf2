#!/usr/bin/env python3
"""Django's command line. `.venv/bin/touchstone` (written by `make cli`) runs this with the clone's touchstone.env."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "touchstone.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 (loads the settings, which check every variable they read)
    except ImproperlyConfigured as exc:
        # A missing or unreadable setting is the operator's to fix: one line naming it, not a traceback.
        sys.exit(f"error: {exc}")
    # Help and errors name the command as it was typed: `touchstone` when run through .venv/bin/touchstone.
    execute_from_command_line([os.environ.get("TOUCHSTONE_PROG") or sys.argv[0], *sys.argv[1:]])


if __name__ == "__main__":
    main()
