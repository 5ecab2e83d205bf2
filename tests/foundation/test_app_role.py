"""The application's own database role cannot rewrite the record; the owner migrates, the app serves as that role.

`manage.py grant_app_role` (run by the owner after migrate; docker-compose's migrate step does) makes a role with
row rights only. Connected as it, nothing switches a trigger off or rewrites history, and the statements it may
run meet the triggers: a backdated or out-of-order history row, the deletion of an exported qrels snapshot and the
rewriting of a judged document's text are refused (migration 0024), to the tables' owner and a superuser as well.
Meanwhile the app does its day's work as that role (sessions, the login throttle, labels, replies, adjudication,
imports, exports).

Roles belong to the whole PostgreSQL server, which other test databases share: the one made here is named for
this run and dropped with its grants when the module ends.
"""

import base64
import hashlib
import hmac
import io
import os
import re
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import psycopg2
import pytest
import yaml
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessments.models import (
    Adjudication,
    AuditEvent,
    Document,
    Judgment,
    JudgmentEvent,
    QrelsSnapshot,
    Reply,
)
from assessments.services.adjudication import Decision, adjudicate
from assessments.services.discussion import reply
from assessments.services.exports import export_qrels
from assessments.services.imports import ImportProblem
from assessments.services.imports.documents import import_documents
from assessments.services.judging import Labels, record_judgment, record_judgments_in_bulk
from tests.factories import DocumentFactory, TopicFactory, UserFactory

ROOT = Path(__file__).resolve().parents[2]
ROLE = f"touchstone_test_app_{os.getpid()}_{uuid.uuid4().hex[:8]}"
PASSWORD = "p@ss/w#rd%:?&= with spaces"  # everything a URL would need percent-encoded
FACTORY_PASSWORD = "correct horse battery staple"  # tests/factories.py
EVENT_COLUMNS = "judgment_id, assessor_id, revision, labels, note, flagged, time_spent_ms, source, at"


@pytest.fixture(scope="module")
def app_role(django_db_setup, django_db_blocker) -> Iterator[str]:
    """The role, granted on the test database as the owner grants it after migrate, and committed so that a
    connection of its own sees it."""
    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as patch:
        patch.setenv("APP_DATABASE_PASSWORD", PASSWORD)
        call_command("grant_app_role", ROLE, stdout=io.StringIO())
    yield ROLE
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f"DROP OWNED BY {ROLE}")  # its grants: a role that holds any cannot be dropped
        cursor.execute(f"DROP ROLE {ROLE}")


def connect(user: str) -> "psycopg2.extensions.connection":
    """A connection of its own to the test database, as `user` (the app's role, or the suite's superuser)."""
    settings = connection.settings_dict
    password = PASSWORD if user == ROLE else settings["PASSWORD"]
    return psycopg2.connect(dbname=settings["NAME"], host=settings["HOST"], port=settings["PORT"], user=user, password=password)


def refusal(user: str, *statements: str, params=()) -> str:
    """Run `statements` as `user` in one transaction and commit (the checks PostgreSQL defers run then); return
    the error that stopped them. Nothing is kept either way."""
    with closing(connect(user)) as conn, conn.cursor() as cursor:
        with pytest.raises(psycopg2.Error) as caught:
            for statement in statements:
                cursor.execute(statement, params)
            conn.commit()
        conn.rollback()
    return str(caught.value)


def rows(user: str, statement: str, params=()) -> list[tuple]:
    with closing(connect(user)) as conn, conn.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


@contextmanager
def app_connected_as(role: str) -> Iterator[None]:
    """The app's own connection (every service, view and ORM query) logs in as `role` until the block ends."""
    settings = connection.settings_dict
    before = settings["USER"], settings["PASSWORD"]
    connection.close()
    settings["USER"], settings["PASSWORD"] = role, PASSWORD
    try:
        yield
    finally:
        connection.close()
        settings["USER"], settings["PASSWORD"] = before


@pytest.fixture
def record(campaign):
    """What the record holds, committed: a judgment at revision 2 (history 1, 2) of a judged document, with a reply,
    and an exported qrels snapshot (with its audit event)."""
    topic = TopicFactory(campaign=campaign, number="7")
    document = DocumentFactory(collection=campaign.collection, doc_id="judged", title="As judged", body="The text judged.")
    carol, olivia = UserFactory(username="carol"), UserFactory(username="olivia", role="organiser")
    record_judgment(topic=topic, document=document, assessor=carol, labels=Labels({"relevance": 1}), phase="main")
    judgment = record_judgment(topic=topic, document=document, assessor=carol,
                               labels=Labels({"relevance": 2}, note="a close call"), phase="main")
    reply(judgment=judgment, text="Agreed.", resolves=True, by=olivia)
    export = export_qrels(campaign=campaign, kind="relevance", created_by=olivia)
    assert b"".join(export) and export.snapshot is not None
    return judgment


# ---- The command


@pytest.mark.django_db
def test_the_role_owns_nothing_and_holds_row_rights_only(app_role):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolcanlogin, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = %s",
            [app_role],
        )
        assert cursor.fetchone() == (True, False, False, False, False, False)
        cursor.execute("SELECT count(*) FROM pg_class WHERE relowner = %s::regrole", [app_role])
        assert cursor.fetchone() == (0,)
        cursor.execute(
            """SELECT c.relname, array_agg(p ORDER BY p) FROM pg_class c
                 CROSS JOIN unnest(ARRAY['DELETE', 'INSERT', 'REFERENCES', 'SELECT', 'TRIGGER', 'TRUNCATE', 'UPDATE']) p
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND has_table_privilege(%s, c.oid, p)
                GROUP BY c.relname""",
            [app_role],
        )
        rights = dict(cursor.fetchall())
        cursor.execute("SELECT has_schema_privilege(%s, current_schema(), 'CREATE'), has_database_privilege(%s, current_database(), 'CREATE'),"
                       " has_database_privilege(%s, current_database(), 'CONNECT'), has_database_privilege(%s, current_database(), 'TEMPORARY')",
                       [app_role] * 4)
        assert cursor.fetchone() == (False, False, True, True)
    assert not {p for granted in rights.values() for p in granted} & {"TRUNCATE", "TRIGGER", "REFERENCES"}
    for table in ("assessments_judgmentevent", "assessments_adjudicationevent", "assessments_auditevent",
                  "assessments_reply", "assessments_qrelssnapshot", "assessments_qrelssnapshotpart"):
        assert rights[table] == ["INSERT", "SELECT"], table
    assert rights["assessments_judgment"] == rights["assessments_adjudication"] == ["INSERT", "SELECT", "UPDATE"]
    assert rights["django_migrations"] == ["SELECT"]
    for table in ("django_session", "axes_accessattempt", "assessments_campaign", "assessments_document", "assessments_rankingstage"):
        assert rights[table] == ["DELETE", "INSERT", "SELECT", "UPDATE"], table


def scram_matches(verifier: str, password: str) -> bool:
    """Whether a SCRAM-SHA-256 verifier (pg_authid.rolpassword) was made from `password` (RFC 5802, 7677)."""
    iterations, salt, stored_key, _ = re.fullmatch(r"SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)", verifier).groups()
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt), int(iterations))
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    return hashlib.sha256(client_key).digest() == base64.b64decode(stored_key)


@pytest.mark.django_db
def test_the_password_comes_from_the_environment_is_set_again_each_run_and_never_shown(app_role, command, monkeypatch):
    def verifier() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", [app_role])
            return cursor.fetchone()[0]

    assert scram_matches(verifier(), PASSWORD)
    monkeypatch.setenv("ROTATED", "n3w/p@ss#")
    with CaptureQueriesContext(connection) as sent:
        result = command("grant_app_role", app_role, "--password-env", "ROTATED")
    assert result.code == 0 and f"updated role {app_role} (its password set)" in result.out
    assert scram_matches(verifier(), "n3w/p@ss#") and "n3w" not in result.out + result.err
    # Sent as a verifier: no statement the server received (and may log) held the password.
    assert any("ALTER ROLE" in query["sql"] for query in sent) and not any("n3w" in query["sql"] for query in sent)
    monkeypatch.delenv("APP_DATABASE_PASSWORD", raising=False)
    unchanged = command("grant_app_role", app_role)
    assert "its password left as it was" in unchanged.out and scram_matches(verifier(), "n3w/p@ss#")


@pytest.mark.django_db
def test_running_it_again_takes_back_rights_added_by_hand(app_role, command):
    with connection.cursor() as cursor:
        cursor.execute(f"GRANT TRUNCATE, UPDATE, DELETE ON assessments_judgmentevent, django_migrations TO {app_role}")
        assert command("grant_app_role", app_role).code == 0
        cursor.execute("SELECT has_table_privilege(%s, 'assessments_judgmentevent', 'TRUNCATE, UPDATE, DELETE'),"
                       " has_table_privilege(%s, 'django_migrations', 'INSERT, UPDATE, DELETE')", [app_role, app_role])
        assert cursor.fetchone() == (False, False)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (None, "runs this command: the app's role must be another one"),
        ("CREATE ROLE {role} LOGIN SUPERUSER", "is a superuser or may create roles"),
        ("CREATE ROLE {role} LOGIN CREATEROLE", "is a superuser or may create roles"),
        ("CREATE ROLE {role} LOGIN; GRANT {owner} TO {role}", "member of their owner"),
        ("CREATE ROLE {role} LOGIN; CREATE TABLE {role}_own (id int); ALTER TABLE {role}_own OWNER TO {role}", "owns tables"),
    ],
)
def test_it_refuses_a_role_that_could_switch_triggers_off(command, make, message):
    """Made inside the test's transaction, so these roles vanish with it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        (owner,) = cursor.fetchone()
        role = owner if make is None else f"touchstone_test_app_{uuid.uuid4().hex[:12]}"
        if make:
            cursor.execute(make.format(role=role, owner=owner))
    result = command("grant_app_role", role)
    assert result.code == 1 and message in result.err


# ---- Connected as the role


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("SET session_replication_role = replica", 'permission denied to set parameter "session_replication_role"'),
        ("ALTER TABLE assessments_judgmentevent DISABLE TRIGGER ALL", "must be owner of table assessments_judgmentevent"),
        ("ALTER TABLE assessments_judgmentevent DISABLE TRIGGER assessments_judgmentevent_no_delete", "must be owner"),
        ("DROP TRIGGER assessments_judgmentevent_no_delete ON assessments_judgmentevent", "must be owner"),
        ("CREATE TRIGGER sneak BEFORE INSERT ON assessments_judgmentevent FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()",
         "permission denied for table assessments_judgmentevent"),
        ("UPDATE assessments_judgmentevent SET labels = '{\"relevance\": 0}'", "permission denied for table assessments_judgmentevent"),
        ("DELETE FROM assessments_judgmentevent", "permission denied for table assessments_judgmentevent"),
        ("DELETE FROM assessments_judgment", "permission denied for table assessments_judgment"),
        ("UPDATE assessments_auditevent SET subject = 'nothing happened'", "permission denied for table assessments_auditevent"),
        ("DELETE FROM assessments_auditevent", "permission denied for table assessments_auditevent"),
        ("UPDATE assessments_reply SET text = 'I never said that'", "permission denied for table assessments_reply"),
        ("TRUNCATE assessments_judgmentevent", "permission denied for table assessments_judgmentevent"),
        ("TRUNCATE assessments_campaign CASCADE", "permission denied for table assessments_campaign"),
        ("TRUNCATE django_session", "permission denied for table django_session"),
        ("DELETE FROM assessments_qrelssnapshot", "permission denied for table assessments_qrelssnapshot"),
        ("UPDATE assessments_qrelssnapshotpart SET data = ''", "permission denied for table assessments_qrelssnapshotpart"),
        ("INSERT INTO django_migrations (app, name, applied) VALUES ('assessments', '9999_undo_it_all', now())",
         "permission denied for table django_migrations"),
        ("DELETE FROM django_migrations", "permission denied for table django_migrations"),
        ("CREATE TABLE assessments_sneak (id int)", "permission denied for schema public"),
        ("CREATE SCHEMA sneak", "permission denied for database"),
    ],
)
def test_the_role_cannot_switch_triggers_off_or_touch_what_it_may_not(app_role, record, statement, message):
    assert message in refusal(app_role, statement)
    assert rows(app_role, "SELECT revision FROM assessments_judgmentevent ORDER BY revision") == [(1,), (2,)]


@pytest.mark.django_db(transaction=True)
def test_a_temporary_table_cannot_stand_in_for_the_history_the_commit_check_reads(app_role, record):
    """The imports need temporary tables, which are looked up before the schema's own: a role could forge the history
    0008's commit check reads. The check names its tables by schema (migration 0024)."""
    message = refusal(
        app_role,
        "CREATE TEMPORARY TABLE assessments_judgmentevent AS SELECT * FROM public.assessments_judgmentevent",
        f"INSERT INTO assessments_judgmentevent (id, {EVENT_COLUMNS}) SELECT -1, judgment_id, assessor_id, 3,"
        " '{\"relevance\": 0}', '', false, 0, 'web', now() FROM assessments_judgmentevent WHERE revision = 2",
        "UPDATE public.assessments_judgment SET labels = '{\"relevance\": 0}', note = '', revision = 3",
    )
    assert "revision 3 has no history row with its labels" in message
    assert rows(app_role, "SELECT revision, labels FROM assessments_judgment") == [(2, {"relevance": 2})]


# ---- The new triggers, for the app's role and for the tables' owner (a superuser here) alike


def user(who: str, app_role: str) -> str:
    return app_role if who == "app role" else connection.settings_dict["USER"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("who", ["app role", "owner"])
@pytest.mark.parametrize(
    ("statements", "message"),
    [
        ([f"INSERT INTO assessments_judgmentevent ({EVENT_COLUMNS}) SELECT id, assessor_id, 0, labels, note, flagged, 0, 'web', now()"
          " FROM assessments_judgment"], "a history row for revision 0 is refused: its next revision is 3"),
        ([f"INSERT INTO assessments_judgmentevent ({EVENT_COLUMNS}) SELECT id, assessor_id, 4, labels, note, flagged, 0, 'web', now()"
          " FROM assessments_judgment"], "a history row for revision 4 is refused: its next revision is 3"),
        # A label change with its history row, dated before the revision it follows: a rewritten past.
        (["UPDATE assessments_judgment SET labels = '{\"relevance\": 0}', revision = 3",
          f"INSERT INTO assessments_judgmentevent ({EVENT_COLUMNS}) SELECT id, assessor_id, 3, labels, note, flagged, 0, 'web',"
          " '2020-01-01T00:00:00Z' FROM assessments_judgment"], "the history row for revision 3 is dated 2020-01-01"),
        ([f"INSERT INTO assessments_judgmentevent ({EVENT_COLUMNS}) SELECT id, assessor_id, r, labels, note, flagged, 0, 'web', now()"
          " FROM assessments_judgment, (VALUES (3), (5)) v(r)"], "history rows for revisions 3 to 5 are not consecutive"),
        (["UPDATE assessments_document SET body = 'Another text.' WHERE doc_id = 'judged'"], "document judged: it has judgments"),
        (["UPDATE assessments_document SET title = 'Retitled' WHERE doc_id = 'judged'"], "document judged: it has judgments"),
        (["UPDATE assessments_document SET is_html = true WHERE doc_id = 'judged'"], "document judged: it has judgments"),
        # Taking the text away first would make it a stub, whose first text may be written.
        (["UPDATE assessments_document SET has_text = false WHERE doc_id = 'judged'"], "document judged: it has judgments"),
        (["UPDATE assessments_document SET doc_id = 'other' WHERE doc_id = 'judged'"], "document judged: it has judgments"),
    ],
)
def test_backdated_history_and_judged_text_are_refused_to_every_role(app_role, record, who, statements, message):
    assert message in refusal(user(who, app_role), *statements)
    assert rows(app_role, "SELECT revision FROM assessments_judgmentevent ORDER BY revision") == [(1,), (2,)]
    assert rows(app_role, "SELECT title, body, is_html, has_text FROM assessments_document WHERE doc_id = 'judged'") == [
        ("As judged", "The text judged.", False, True)
    ]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM assessments_qrelssnapshot",
        "DELETE FROM assessments_qrelssnapshotpart",
        "TRUNCATE assessments_qrelssnapshot, assessments_qrelssnapshotpart",
        "TRUNCATE assessments_qrelssnapshot CASCADE",
    ],
)
def test_the_owner_cannot_delete_an_exported_snapshot_either(app_role, record, statement):
    assert "exported qrels snapshots are kept" in refusal(connection.settings_dict["USER"], statement)
    assert rows(app_role, "SELECT number FROM assessments_qrelssnapshot") == [(1,)]


# ---- What the triggers leave alone (on the suite's own connection: the rules are the same for every role)


def relabel(judgment: Judgment, revision: int, at: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE assessments_judgment SET labels = '{\"relevance\": 0}', revision = %s WHERE id = %s", [revision, judgment.pk])
        cursor.execute(f"INSERT INTO assessments_judgmentevent ({EVENT_COLUMNS}) SELECT id, assessor_id, %s, labels, note, flagged,"
                       f" 0, 'web', {at} FROM assessments_judgment WHERE id = %s", [revision, judgment.pk])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.django_db
def test_a_new_revision_dated_now_is_kept_though_the_last_was_saved_later_in_this_transaction(record):
    """now() is when the transaction began: earlier than the revisions record_judgment dated by the clock within it.
    A row dated no earlier than its own transaction's start is never backdated."""
    relabel(record, 3, "now()")
    assert list(record.events.values_list("revision", flat=True)) == [1, 2, 3]


@pytest.mark.django_db
def test_a_whole_history_goes_in_at_once_as_an_archive_import_writes_it(campaign):
    topic = TopicFactory(campaign=campaign)
    document, dave = DocumentFactory(collection=campaign.collection), UserFactory(username="dave")
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO assessments_judgment (topic_id, document_id, assessor_id, phase, labels, note, flagged,
                   time_spent_ms, source, revision, created_at, updated_at)
               VALUES (%s, %s, %s, 'main', '{"relevance": 2}', '', false, 0, 'import', 3, '2021-05-01', '2021-05-03') RETURNING id""",
            [topic.pk, document.pk, dave.pk],
        )
        (judgment_id,) = cursor.fetchone()
        cursor.execute(
            f"""INSERT INTO assessments_judgmentevent ({EVENT_COLUMNS})
                SELECT %s, %s, r, jsonb_build_object('relevance', r - 1), '', false, 0, 'import', ('2021-05-0' || r)::timestamptz
                  FROM generate_series(1, 3) r""",
            [judgment_id, dave.pk],
        )
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert list(JudgmentEvent.objects.filter(judgment_id=judgment_id).values_list("revision", flat=True)) == [1, 2, 3]


@pytest.mark.django_db
def test_a_judged_stub_gets_its_first_text_and_a_judged_document_its_url_and_metadata(campaign):
    topic = TopicFactory(campaign=campaign)
    stub = DocumentFactory(collection=campaign.collection, doc_id="stub", title="", body="", has_text=False)
    judged = DocumentFactory(collection=campaign.collection, doc_id="judged")
    for document in (stub, judged):
        record_judgment(topic=topic, document=document, assessor=UserFactory(), labels=Labels({"relevance": 1}), phase="main")
    Document.objects.filter(pk=stub.pk).update(title="Found", body="Its text at last.", has_text=True)
    Document.objects.filter(pk=judged.pk).update(url="https://example.org/moved", metadata={"lang": "en"})
    unjudged = DocumentFactory(collection=campaign.collection, doc_id="unjudged")
    Document.objects.filter(pk=unjudged.pk).update(body="Rewritten before anyone judged it.")
    assert Document.objects.get(pk=stub.pk).body == "Its text at last."
    assert Document.objects.get(pk=judged.pk).url == "https://example.org/moved"


# ---- The app at work as the role


@pytest.mark.django_db(transaction=True)
def test_the_app_does_its_work_as_the_role(app_role, campaign, training_topic, pool, alice, organiser, tmp_path):
    """A login (the throttle's and the session's rows), two saves of a label through the API, a reply, an
    adjudication, a qrels import in bulk, an export with its snapshot, and a document import that the app itself
    refuses for changing a judged text; all of it with the app's connection as the role."""
    url = reverse("work-judgment", args=[alice.assignments.get().pk, pool[0].pk])
    with app_connected_as(app_role):
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            assert cursor.fetchone() == (app_role,)
        client = Client()
        login = reverse("accounts:login")
        assert client.post(login, {"username": "alice", "password": "wrong"}).status_code == 200
        assert client.post(login, {"username": "alice", "password": FACTORY_PASSWORD}).status_code == 302
        for labels in ({"relevance": 1}, {"relevance": 2, "quality": 1, "stance": "FIRST"}):
            saved = client.put(url, {"labels": labels, "note": "FIRST, I think", "time_spent_ms": 1000}, content_type="application/json")
            assert saved.status_code == 200, saved.content
        judgment = Judgment.objects.get(assessor=alice)
        reply(judgment=judgment, text="Why FIRST?", resolves=False, by=organiser)
        adjudicate(topic=training_topic, document=pool[0].document, by=organiser,
                   decision=Decision(labels={"relevance": 2, "quality": 1, "stance": "FIRST"}, reason="as alice"))
        lastyear = UserFactory(username="lastyear")
        rows_in = f"1\t{training_topic.pk}\t{pool[1].document.doc_id}\t2\n2\t{training_topic.pk}\tnew-doc\t0\n".encode()
        assert record_judgments_in_bulk(campaign=campaign, rows=io.BytesIO(rows_in), dimension="relevance",
                                        assessor=lastyear, phase="training").created == 2
        export = export_qrels(campaign=campaign, kind="relevance", phase="training", rule="max", created_by=organiser)
        assert b"".join(export).count(b"\n") == 3
        rewrite = tmp_path / "docs.jsonl"
        rewrite.write_text(f'{{"id": "{pool[0].document.doc_id}", "title": "t", "text": "Rewritten."}}\n')
        with pytest.raises(ImportProblem, match="judgments"):
            import_documents(campaign=campaign, paths=[rewrite], fmt="jsonl")

    assert list(judgment.events.values_list("revision", flat=True)) == [1, 2]
    assert Reply.objects.filter(judgment=judgment).count() == 1 and Adjudication.objects.count() == 1
    assert QrelsSnapshot.objects.get(campaign=campaign).number == 1
    assert JudgmentEvent.objects.filter(assessor=lastyear).count() == 2
    assert AuditEvent.objects.filter(campaign=campaign).exists()


# ---- How a deployment passes the password and splits the roles


def settings_value(expression: str, **env: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    base = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "SECRET_KEY": "k" * 50}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**base, "DJANGO_SETTINGS_MODULE": "touchstone.settings", **env})
    return proc.stdout.strip() if proc.returncode == 0 else proc.stderr


def test_a_password_apart_from_the_url_reaches_the_driver_as_it_is(tmp_path):
    url = "postgres://touchstone_app@postgres:5432/touchstone"
    database = "settings.DATABASES['default']"
    assert settings_value(f"{database}['PASSWORD'], {database}['USER']", DATABASE_URL=url, DATABASE_PASSWORD=PASSWORD) == (
        f"{PASSWORD} touchstone_app"
    )
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    assert settings_value(f"{database}['PASSWORD']", DATABASE_URL=url, DATABASE_PASSWORD_FILE=str(secret)) == PASSWORD
    assert "give only one" in settings_value("1", DATABASE_URL="postgres://u:p@db/x", DATABASE_PASSWORD=PASSWORD)
    assert "DATABASE_URL is not" in settings_value("1", DATABASE_PASSWORD=PASSWORD, TOUCHSTONE_VAR_DIR=str(tmp_path))


def interpolated(value, env: dict[str, str]):
    """A docker-compose value with ${NAME:?message} and ${NAME:-default} filled in from `env`."""
    if isinstance(value, list):
        return [interpolated(item, env) for item in value]
    if isinstance(value, dict):
        return {key: interpolated(item, env) for key, item in value.items()}
    if not isinstance(value, str):
        return value

    def one(match: re.Match) -> str:
        name, kind, rest = match.group(1), match.group(2), match.group(3)
        if name in env:
            return env[name]
        assert kind == ":-", f"compose would stop: {rest}"
        return rest

    return re.sub(r"\$\{(\w+)(:[?-])([^}]*)\}", one, value)


def test_compose_migrates_as_the_owner_and_serves_as_the_app_role_on_loopback_only():
    env = {"POSTGRES_PASSWORD": "owner/p@ss#1", "APP_DATABASE_PASSWORD": PASSWORD, "SECRET_KEY": "k", "ALLOWED_HOSTS": "x"}
    services = interpolated(yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"], env)
    owner = services["postgres"]["environment"]["POSTGRES_USER"]
    migrate = services["migrate"]
    migrate_url = urlsplit(migrate["environment"]["DATABASE_URL"])
    assert (migrate_url.username, migrate_url.password) == (owner, None)
    assert migrate["environment"]["DATABASE_PASSWORD"] == env["POSTGRES_PASSWORD"]
    assert migrate["environment"]["APP_DATABASE_PASSWORD"] == PASSWORD
    script = migrate["command"][-1]
    assert migrate["command"][:2] == ["sh", "-c"] and re.fullmatch(
        r"python manage.py migrate --noinput && python manage.py grant_app_role (\w+)", script
    )
    app_role = script.rsplit(" ", 1)[1]
    assert app_role != owner
    for name in ("web", "worker", "beat"):
        service = services[name]
        url = urlsplit(service["environment"]["DATABASE_URL"])
        assert (url.username, url.password, url.hostname) == (app_role, None, "postgres"), name
        assert service["environment"]["DATABASE_PASSWORD"] == PASSWORD, name
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully", name
        assert "migrate" not in service["command"] and "APP_DATABASE_PASSWORD" not in service["environment"], name
    assert services["web"]["ports"] == ["127.0.0.1:8000:8000"]
    assert [name for name, service in services.items() if any(not str(p).startswith("127.0.0.1:") for p in service.get("ports", []))] == []
    # What the web container's settings make of it: the password, @ / # and all, as it is.
    web = services["web"]["environment"]
    database = "settings.DATABASES['default']"
    assert settings_value(f"{database}['USER'], {database}['PASSWORD'], {database}['HOST']",
                          DATABASE_URL=web["DATABASE_URL"], DATABASE_PASSWORD=web["DATABASE_PASSWORD"]) == f"{app_role} {PASSWORD} postgres"


# ---- The demo's SQLite


def test_sqlite_refuses_out_of_order_history_and_deleting_a_snapshot(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "SECRET_KEY": "k" * 50,
           "TOUCHSTONE_VAR_DIR": str(tmp_path)}
    migrated = subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert migrated.returncode == 0, migrated.stderr
    with closing(sqlite3.connect(tmp_path / "touchstone.sqlite3")) as db:  # foreign keys off: rows need no parents here
        def event(revision: int) -> None:
            db.execute(f"INSERT INTO assessments_judgmentevent ({EVENT_COLUMNS}) VALUES (1, 1, ?, '{{}}', '', 0, 0, 'web', '2026-01-01')",
                       [revision])

        event(1)
        for revision in (0, 1, 3):
            with pytest.raises(sqlite3.IntegrityError, match="must be the next revision"):
                event(revision)
        event(2)
        db.execute("INSERT INTO assessments_qrelssnapshot (id, campaign_id, number, kind, phase, rule, line_count, sha256, created_at)"
                   " VALUES (1, 1, 1, 'relevance', 'main', 'majority', 0, '', '2026-01-01')")
        with pytest.raises(sqlite3.IntegrityError, match="exported qrels snapshots are kept: DELETE is refused"):
            db.execute("DELETE FROM assessments_qrelssnapshot")
        assert db.execute("SELECT revision FROM assessments_judgmentevent ORDER BY revision").fetchall() == [(1,), (2,)]
