"""Make the login role the web app and workers connect as, with only the table rights they need.

The record's protections are triggers (migrations 0008, 0009, 0012, 0016, 0024), which the tables' owner or a
superuser can switch off (`ALTER TABLE … DISABLE TRIGGER`, `session_replication_role = replica`) and so rewrite the
history. A role that owns nothing and holds row rights only cannot: the owner runs `migrate` and then this command,
and the app connects as the role it grants.
"""

import os
from pathlib import Path

from django.apps import apps
from django.db import DatabaseError, connection, transaction
from django.db.migrations.recorder import MigrationRecorder
from psycopg2.extensions import encrypt_password

from assessments.management.base import BaseCommand
from assessments.management.progress import fail
from assessments.models import (
    Adjudication,
    AdjudicationEvent,
    AuditEvent,
    JudgePrompt,
    Judgment,
    JudgmentEvent,
    MachineExposure,
    MachineLabel,
    QrelsSnapshot,
    QrelsSnapshotPart,
    Reply,
)
from assessments.services import ranking_stage

PASSWORD_ENV = "APP_DATABASE_PASSWORD"

# Rows the record only ever gains: history, the audit trail, discussion replies, exported qrels snapshots (their
# triggers refuse UPDATE, DELETE and TRUNCATE to everyone; without the grants the role is refused first).
APPEND_ONLY = (
    JudgmentEvent, AdjudicationEvent, AuditEvent, Reply, QrelsSnapshot, QrelsSnapshotPart, JudgePrompt, MachineLabel,
    MachineExposure,
)
# Changed by a new revision with its history row, never deleted.
KEPT = (Judgment, Adjudication)
READ, APPEND, CHANGE, ALL = "SELECT", "SELECT, INSERT", "SELECT, INSERT, UPDATE", "SELECT, INSERT, UPDATE, DELETE"
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")


class Command(BaseCommand):
    help = (
        "Create ROLE (a login role) if it does not exist, and grant it what the web app and workers need and no more: "
        "connecting, temporary tables, SELECT/INSERT/UPDATE/DELETE on the app's tables, only SELECT and INSERT on "
        "history, the audit trail, replies and qrels snapshots, no DELETE of judgments and adjudications, only SELECT "
        "on django_migrations, the sequences; never ownership, TRUNCATE, TRIGGER or CREATE. Run it as the tables' "
        "owner after every migrate (tables a migration adds get their rights then; docker-compose's migrate step "
        f"does both). The role's password is read from ${PASSWORD_ENV} (or the file ${PASSWORD_ENV}_FILE names; "
        "--password-env names another variable) and set each run; without one the role's password is left as it is."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("role", help="the role the app connects as, e.g. touchstone_app")
        parser.add_argument("--password-env", default=PASSWORD_ENV, metavar="NAME",
                            help=f"the environment variable holding the role's password (default {PASSWORD_ENV})")

    def handle(self, *args, role: str, password_env: str, **options) -> None:
        if connection.vendor != "postgresql":
            fail(self, f"roles are PostgreSQL's; this database is {connection.vendor}")
        password = _secret(self, password_env)
        try:
            with transaction.atomic():
                created = self.grant(role, password)
        except DatabaseError as exc:  # not allowed to create roles or to grant: one line, as the other commands fail
            fail(self, f"cannot grant {role}: {' '.join(str(exc).split())}")
        said = "created" if created else "updated"
        secret = "its password set" if password else "no password given, its password left as it was"
        self.stdout.write(self.style.SUCCESS(f"{said} role {role} ({secret}); run this again after every migrate"))

    def grant(self, role: str, password: str | None) -> bool:
        """Create or update `role` and set its rights from scratch (a table's rights may have changed class); return
        whether it was created. Call inside a transaction, so the app never sees the role without its rights."""
        q = connection.ops.quote_name
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user, current_database(), current_schema()")
            owner, database, schema = cursor.fetchone()
            if role == owner:
                fail(self, f"{role} runs this command: the app's role must be another one, which owns nothing")
            cursor.execute("SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication OR rolbypassrls FROM pg_roles WHERE rolname = %s", [role])
            found = cursor.fetchone()
            # The password goes to the server as a SCRAM verifier: the statement (a log line) never holds it.
            verifier = "" if password is None else " PASSWORD " + _literal(encrypt_password(password, role, connection.connection, "scram-sha-256"))
            if found is None:
                cursor.execute(f"CREATE ROLE {q(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS{verifier}")
            elif found[0]:
                fail(self, f"{role} is a superuser or may create roles or databases, replicate or bypass row security: "
                           "use a role with none of these")
            elif verifier:
                cursor.execute(f"ALTER ROLE {q(role)}{verifier}")
            self._refuse_ownership(cursor, role, schema)
            tables = self._tables(cursor, schema)
            cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA {q(schema)} FROM {q(role)}")
            cursor.execute(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {q(schema)} FROM {q(role)}")
            cursor.execute(f"REVOKE CREATE ON SCHEMA {q(schema)} FROM {q(role)}")
            cursor.execute(f"REVOKE CREATE ON DATABASE {q(database)} FROM {q(role)}")
            # Temporary tables: the bulk imports stage their rows in them (the trigger functions name their schema, so
            # a temporary table cannot stand in for one they read: migration 0024).
            cursor.execute(f"GRANT CONNECT, TEMPORARY ON DATABASE {q(database)} TO {q(role)}")
            cursor.execute(f"GRANT USAGE ON SCHEMA {q(schema)} TO {q(role)}")
            for table, rights in tables.items():
                cursor.execute(f"GRANT {rights} ON {q(schema)}.{q(table)} TO {q(role)}")
            # Ids from identity columns and nextval() (the bulk imports take ids ahead of COPY).
            cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {q(schema)} TO {q(role)}")
            self._refuse_creating(cursor, role, database, schema)
            self._refuse_more(cursor, role, schema, tables)
        return found is None

    def _tables(self, cursor, schema: str) -> dict[str, str]:
        """Each table of the app's models (and django_migrations) that migrate created, with the rights it gets."""
        rights = {model._meta.db_table: ALL for model in apps.get_models(include_auto_created=True)
                  if model._meta.managed and not model._meta.proxy}
        rights[ranking_stage.TABLE] = ALL  # a run import's staging table (migration 0019), which has no model
        rights |= {model._meta.db_table: APPEND for model in APPEND_ONLY}
        rights |= {model._meta.db_table: CHANGE for model in KEPT}
        # Which migrations ran is the owner's to write: the app only reads it (runserver warns from it).
        rights[MigrationRecorder.Migration._meta.db_table] = READ
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", [schema])
        existing = {name for (name,) in cursor.fetchall()}
        missing = sorted(set(rights) - existing)
        if missing:
            fail(self, f"tables {', '.join(missing)} do not exist yet: run migrate first")
        return rights

    def _refuse_ownership(self, cursor, role: str, schema: str) -> None:
        """The role must not own the tables, nor act as a role that does (membership carries the owner's rights)."""
        cursor.execute(
            """SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c
                WHERE c.relnamespace = %s::regnamespace AND pg_has_role(%s, c.relowner, 'MEMBER')""",
            [schema, role],
        )
        if owners := [name for (name,) in cursor.fetchall()]:
            fail(self, f"{role} owns tables of schema {schema} or is a member of their owner ({', '.join(owners)}): "
                       "the app's role must own nothing")

    def _refuse_creating(self, cursor, role: str, database: str, schema: str) -> None:
        """CREATE on the schema or database, held through PUBLIC, would let the role put objects beside the app's."""
        cursor.execute("SELECT has_schema_privilege(%s, %s, 'CREATE'), has_database_privilege(%s, %s, 'CREATE')",
                       [role, schema, role, database])
        on_schema, on_database = cursor.fetchone()
        if on_schema:
            # PostgreSQL 14 and older let every role create in schema public.
            cursor.execute(f"REVOKE CREATE ON SCHEMA {connection.ops.quote_name(schema)} FROM PUBLIC")
            self.stdout.write(f"revoked CREATE on schema {schema} from PUBLIC (PostgreSQL before 15 grants it to every role)")
        if on_database:
            fail(self, f"{role} may create schemas in database {database} through PUBLIC: "
                       f"REVOKE CREATE ON DATABASE {database} FROM PUBLIC, then run this again")

    def _refuse_more(self, cursor, role: str, schema: str, tables: dict[str, str]) -> None:
        """What the role may do in the end, through PUBLIC and the roles it belongs to as well: exactly `tables`."""
        cursor.execute(
            """SELECT t, p FROM unnest(%s::text[]) t, unnest(%s::text[]) p
                 WHERE has_table_privilege(%s, quote_ident(%s) || '.' || quote_ident(t), p)""",
            [list(tables), list(PRIVILEGES), role, schema],
        )
        held: dict[str, set[str]] = {}
        for table, privilege in cursor.fetchall():
            held.setdefault(table, set()).add(privilege)
        more = {table: sorted(held.get(table, set()) - set(rights.split(", "))) for table, rights in tables.items()}
        if extra := {table: privileges for table, privileges in more.items() if privileges}:
            named = "; ".join(f"{table}: {', '.join(privileges)}" for table, privileges in sorted(extra.items()))
            fail(self, f"{role} holds more than it is granted, through PUBLIC or a role it belongs to ({named})")


def _secret(command: BaseCommand, name: str) -> str | None:
    """NAME's value, or the contents of the file NAME_FILE names; None when neither is set. Never printed."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            value = Path(path).read_text().strip()
        except OSError as exc:
            fail(command, f"{name}_FILE={path!r} cannot be read: {exc}")
    else:
        value = os.environ.get(name, "")
    return value or None


def _literal(text: str) -> str:
    """A SQL string literal (a SCRAM verifier holds no quote, but the statement is built by hand)."""
    return "'" + text.replace("'", "''") + "'"
