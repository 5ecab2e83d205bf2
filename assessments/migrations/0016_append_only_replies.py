"""Discussion replies are append-only, like the audit trail and adjudication history (0012): UPDATE, DELETE and
TRUNCATE of a reply are refused whatever path a statement comes by.

By design a reply is never edited: what an organiser told an assessor is part of the campaign's record (it may have
changed a label), so a correction is a new reply, and resolving or reopening a discussion is a later reply too
(Reply.resolves). No code path updates or deletes one.
"""

from django.db import migrations

TABLE = "assessments_reply"
MESSAGE = "discussion replies are append-only"

POSTGRES_FORWARD = f"""
CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE}
  FOR EACH ROW EXECUTE FUNCTION assessments_refuse('{MESSAGE}');
CREATE TRIGGER {TABLE}_no_truncate BEFORE TRUNCATE ON {TABLE}
  FOR EACH STATEMENT EXECUTE FUNCTION assessments_refuse('{MESSAGE}');
"""
POSTGRES_BACKWARD = f"DROP TRIGGER {TABLE}_append_only ON {TABLE}; DROP TRIGGER {TABLE}_no_truncate ON {TABLE};"
# SQLite (the demo) has no TRUNCATE; as in 0012, UPDATE and DELETE are refused there too.
SQLITE_FORWARD = [
    f"CREATE TRIGGER {TABLE}_{op.lower()} BEFORE {op} ON {TABLE} BEGIN SELECT RAISE(ABORT, '{MESSAGE}: {op} is refused'); END"
    for op in ("UPDATE", "DELETE")
]
SQLITE_BACKWARD = [f"DROP TRIGGER {TABLE}_{op.lower()}" for op in ("UPDATE", "DELETE")]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_FORWARD, params=None)
    elif schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_FORWARD:
            schema_editor.execute(statement)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_BACKWARD, params=None)
    elif schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_BACKWARD:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0015_campaign_export_audit_actions")]

    operations = [migrations.RunPython(forward, backward)]
