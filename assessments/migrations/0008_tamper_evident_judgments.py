"""The judgment record cannot be rewritten, whatever path a statement comes by (ORM, admin, psql).

0002 refused UPDATE on judgment history. This adds, on PostgreSQL:

1. DELETE and TRUNCATE are refused on judgment history and on judgments (a judgment always has history,
   so deleting one would delete its history too). Topics, campaigns and documents with judgments are
   therefore undeletable as well: the ORM says so first (PROTECT), the foreign keys at commit.
2. A judgment keeps its topic, document and assessor, and its revision never goes back; a change of
   labels (relevance, quality, stance, note, flag) must come with a new revision.
3. At commit, every judgment inserted or relabelled in the transaction has a history row for its
   current revision holding its current labels, and no history row is ahead of its judgment. This is
   a DEFERRABLE INITIALLY DEFERRED constraint trigger, so the order of the two writes inside the
   transaction is free: record_judgment updates the judgment first, the qrels import inserts both in
   one statement. Together with 2 and the unique (judgment, revision) it means the history row of a
   label change was written in the same transaction: a row written earlier for that revision would
   have been ahead of its judgment when that earlier transaction committed.

Only a role that owns the tables can drop these triggers or switch them off (session_replication_role
needs a superuser), so a deployment that migrates as the owner and serves as a role with only
SELECT/INSERT/UPDATE/DELETE grants gets a record that even its own application cannot rewrite.

SQLite (the demo database) gets 1 and 2; it has no deferred triggers, so 3 is PostgreSQL's alone.
"""

import django.db.models.deletion
from django.db import migrations, models

LABELS = "relevance, quality, stance, note, flagged"


def _labels(row: str) -> str:
    return "(" + ", ".join(f"{row}.{label.strip()}" for label in LABELS.split(",")) + ")"


POSTGRES_FORWARD = f"""
CREATE FUNCTION assessments_refuse() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION '%: % is refused', TG_ARGV[0], TG_OP USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql;

CREATE TRIGGER assessments_judgmentevent_no_delete BEFORE DELETE ON assessments_judgmentevent
  FOR EACH ROW EXECUTE FUNCTION assessments_refuse('judgment history is append-only');
CREATE TRIGGER assessments_judgmentevent_no_truncate BEFORE TRUNCATE ON assessments_judgmentevent
  FOR EACH STATEMENT EXECUTE FUNCTION assessments_refuse('judgment history is append-only');
CREATE TRIGGER assessments_judgment_no_delete BEFORE DELETE ON assessments_judgment
  FOR EACH ROW EXECUTE FUNCTION assessments_refuse('judgments are kept with their history');
CREATE TRIGGER assessments_judgment_no_truncate BEFORE TRUNCATE ON assessments_judgment
  FOR EACH STATEMENT EXECUTE FUNCTION assessments_refuse('judgments are kept with their history');

CREATE FUNCTION assessments_judgment_update_rules() RETURNS trigger AS $$
BEGIN
  IF (NEW.topic_id, NEW.document_id, NEW.assessor_id) <> (OLD.topic_id, OLD.document_id, OLD.assessor_id) THEN
    RAISE EXCEPTION 'judgment %: its topic, document and assessor cannot change', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NEW.revision < OLD.revision THEN
    RAISE EXCEPTION 'judgment %: its revision cannot go back from % to %', OLD.id, OLD.revision, NEW.revision
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RAISE EXCEPTION 'judgment %: a change of labels needs a new revision and its history row', OLD.id
    USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql;
-- The WHEN clause keeps the trigger off the common updates (time spent, a new revision).
CREATE TRIGGER assessments_judgment_update_rules BEFORE UPDATE ON assessments_judgment FOR EACH ROW
  WHEN ((NEW.topic_id, NEW.document_id, NEW.assessor_id) <> (OLD.topic_id, OLD.document_id, OLD.assessor_id)
        OR NEW.revision < OLD.revision
        OR (NEW.revision = OLD.revision AND {_labels("NEW")} IS DISTINCT FROM {_labels("OLD")}))
  EXECUTE FUNCTION assessments_judgment_update_rules();

CREATE FUNCTION assessments_judgment_has_history() RETURNS trigger AS $$
BEGIN
  -- The row as it is at commit, not as this event saw it: it may have changed again since. One query
  -- on the good path, since a bulk import checks a million rows here.
  PERFORM 1 FROM assessments_judgment j JOIN assessments_judgmentevent e ON e.judgment_id = j.id AND e.revision = j.revision
   WHERE j.id = NEW.id AND {_labels("e")} IS NOT DISTINCT FROM {_labels("j")};
  IF NOT FOUND THEN
    RAISE EXCEPTION 'judgment %: revision % has no history row with its labels',
      NEW.id, (SELECT revision FROM assessments_judgment WHERE id = NEW.id) USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER assessments_judgment_has_history_insert AFTER INSERT ON assessments_judgment
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assessments_judgment_has_history();
CREATE CONSTRAINT TRIGGER assessments_judgment_has_history_update AFTER UPDATE ON assessments_judgment
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.revision <> OLD.revision OR {_labels("NEW")} IS DISTINCT FROM {_labels("OLD")})
  EXECUTE FUNCTION assessments_judgment_has_history();

CREATE FUNCTION assessments_judgmentevent_not_ahead() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM assessments_judgment j WHERE j.id = NEW.judgment_id AND j.revision < NEW.revision) THEN
    RAISE EXCEPTION 'judgment %: history row for revision % is ahead of the judgment', NEW.judgment_id, NEW.revision
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER assessments_judgmentevent_not_ahead AFTER INSERT ON assessments_judgmentevent
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assessments_judgmentevent_not_ahead();
"""

POSTGRES_BACKWARD = """
DROP TRIGGER assessments_judgmentevent_not_ahead ON assessments_judgmentevent;
DROP FUNCTION assessments_judgmentevent_not_ahead();
DROP TRIGGER assessments_judgment_has_history_update ON assessments_judgment;
DROP TRIGGER assessments_judgment_has_history_insert ON assessments_judgment;
DROP FUNCTION assessments_judgment_has_history();
DROP TRIGGER assessments_judgment_update_rules ON assessments_judgment;
DROP FUNCTION assessments_judgment_update_rules();
DROP TRIGGER assessments_judgment_no_truncate ON assessments_judgment;
DROP TRIGGER assessments_judgment_no_delete ON assessments_judgment;
DROP TRIGGER assessments_judgmentevent_no_truncate ON assessments_judgmentevent;
DROP TRIGGER assessments_judgmentevent_no_delete ON assessments_judgmentevent;
DROP FUNCTION assessments_refuse();
"""

SQLITE_FORWARD = [
    "CREATE TRIGGER assessments_judgmentevent_no_delete BEFORE DELETE ON assessments_judgmentevent "
    "BEGIN SELECT RAISE(ABORT, 'judgment history is append-only: DELETE is refused'); END",
    "CREATE TRIGGER assessments_judgment_no_delete BEFORE DELETE ON assessments_judgment "
    "BEGIN SELECT RAISE(ABORT, 'judgments are kept with their history: DELETE is refused'); END",
    f"""CREATE TRIGGER assessments_judgment_update_rules BEFORE UPDATE ON assessments_judgment
        WHEN NEW.topic_id <> OLD.topic_id OR NEW.document_id <> OLD.document_id OR NEW.assessor_id <> OLD.assessor_id
          OR NEW.revision < OLD.revision
          OR (NEW.revision = OLD.revision AND {_labels("NEW")} IS NOT {_labels("OLD")})
        BEGIN SELECT RAISE(ABORT, 'a judgment keeps its topic, document and assessor, and a change of labels needs a new revision'); END""",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER assessments_judgment_update_rules",
    "DROP TRIGGER assessments_judgment_no_delete",
    "DROP TRIGGER assessments_judgmentevent_no_delete",
]


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
    dependencies = [("assessments", "0007_pool_entries_without_key_checks")]
    operations = [
        migrations.AlterField(
            model_name="judgment",
            name="topic",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="judgments", to="assessments.topic"),
        ),
        migrations.AlterField(
            model_name="judgmentevent",
            name="judgment",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="events", to="assessments.judgment"),
        ),
        migrations.RunPython(forward, backward),
    ]
