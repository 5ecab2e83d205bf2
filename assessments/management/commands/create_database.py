"""Create the PostgreSQL database that DATABASE_URL names, so `make cli` is the one set-up step before migrate."""

import warnings

from django.core.management.base import BaseCommand
from django.db import Error, connection

from assessments.management.progress import fail


class Command(BaseCommand):
    help = (
        "Create the database DATABASE_URL names if it does not exist yet (PostgreSQL; a SQLite file is created "
        "when first used). The account in DATABASE_URL needs the CREATEDB privilege."
    )
    requires_system_checks: list[str] = []

    def handle(self, *args, **options) -> None:
        name = connection.settings_dict["NAME"]
        if connection.vendor != "postgresql":
            self.stdout.write(f"{connection.vendor} database {name}: created when first used")
            return
        # The maintenance connection Django itself uses to create test databases (the `postgres` database).
        # Without one Django warns and falls back to the named database, which does not exist either.
        try:
            with warnings.catch_warnings(action="ignore", category=RuntimeWarning), connection._nodb_cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
                if cursor.fetchone():
                    self.stdout.write(f"database {name} exists")
                    return
                cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
        except Error as exc:  # cannot connect, no CREATEDB privilege: one line, as the other commands fail
            fail(self, f"cannot create database {name}: {' '.join(str(exc).split())}")
        self.stdout.write(self.style.SUCCESS(f"created database {name}"))
