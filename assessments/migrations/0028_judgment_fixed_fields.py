"""A judgment keeps its phase and creation time as well as its topic, document and assessor, and its source (web,
import, adjudication) changes only with a new revision; a qrels snapshot outlives nothing it belongs to.

Migrations 0008 and 0020 refused an UPDATE that moved a judgment to another topic, document or assessor, took its
revision back, or changed its labels without a new revision. Still open to a database shell were a training label
passed off as a main-phase one (`phase`), a label backdated or postdated (`created_at`), and a label relabelled as
imported or as the web's without a revision and history row saying so (`source`). The application never changes
them: a save writes `source` with each new revision. The WHEN clause keeps the trigger off the common updates.

Snapshots and their parts were CASCADE in the ORM; the database already refuses deleting them (0024), so a
campaign's deletion failed there with a trigger's message. PROTECT says it before any row goes.
"""

from importlib import import_module

from django.db import migrations, models

_0020 = import_module("assessments.migrations.0020_labels_by_dimension")

_LABELS_NEW, _LABELS_OLD = _0020._row("NEW", _0020.NEW_LABELS), _0020._row("OLD", _0020.NEW_LABELS)
_FIXED = "id, topic_id, document_id, assessor_id, phase, created_at"
_FIXED_NEW, _FIXED_OLD = (", ".join(f"{row}.{c}" for c in _FIXED.split(", ")) for row in ("NEW", "OLD"))

PG_FORWARD = f"""
DROP TRIGGER assessments_judgment_update_rules ON assessments_judgment;
CREATE OR REPLACE FUNCTION assessments_judgment_update_rules() RETURNS trigger AS $$
BEGIN
  IF ({_FIXED_NEW}) IS DISTINCT FROM ({_FIXED_OLD}) THEN
    RAISE EXCEPTION 'judgment %: its topic, document and assessor cannot change, nor its phase or creation time', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NEW.revision < OLD.revision THEN
    RAISE EXCEPTION 'judgment %: its revision cannot go back from % to %', OLD.id, OLD.revision, NEW.revision
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NEW.source IS DISTINCT FROM OLD.source THEN
    RAISE EXCEPTION 'judgment %: its source changes only with a new revision and its history row', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RAISE EXCEPTION 'judgment %: a change of labels needs a new revision and its history row', OLD.id
    USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql;
CREATE TRIGGER assessments_judgment_update_rules BEFORE UPDATE ON assessments_judgment FOR EACH ROW
  WHEN (({_FIXED_NEW}) IS DISTINCT FROM ({_FIXED_OLD})
        OR NEW.revision < OLD.revision
        OR (NEW.revision = OLD.revision AND ({_LABELS_NEW} IS DISTINCT FROM {_LABELS_OLD} OR NEW.source IS DISTINCT FROM OLD.source)))
  EXECUTE FUNCTION assessments_judgment_update_rules();
"""

PG_BACKWARD = f"""
DROP TRIGGER assessments_judgment_update_rules ON assessments_judgment;
CREATE OR REPLACE FUNCTION assessments_judgment_update_rules() RETURNS trigger AS $$
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
{_0020._PG_TAMPER.split("CREATE OR REPLACE FUNCTION assessments_judgment_has_history")[0].format(new=_LABELS_NEW, old=_LABELS_OLD)}
"""

SQLITE_FORWARD = [
    "DROP TRIGGER assessments_judgment_update_rules",
    f"""CREATE TRIGGER assessments_judgment_update_rules BEFORE UPDATE ON assessments_judgment
        WHEN NEW.id IS NOT OLD.id OR NEW.topic_id IS NOT OLD.topic_id OR NEW.document_id IS NOT OLD.document_id
          OR NEW.assessor_id IS NOT OLD.assessor_id OR NEW.phase IS NOT OLD.phase OR NEW.created_at IS NOT OLD.created_at
          OR NEW.revision < OLD.revision
          OR (NEW.revision = OLD.revision AND ({_LABELS_NEW} IS NOT {_LABELS_OLD} OR NEW.source IS NOT OLD.source))
        BEGIN SELECT RAISE(ABORT, 'a judgment keeps its topic, document, assessor, phase and creation time, and a change of labels or source needs a new revision'); END""",
]
SQLITE_BACKWARD = ["DROP TRIGGER assessments_judgment_update_rules", _0020.SQLITE_AFTER[-1]]


def forward(apps, schema_editor):
    _0020._run(schema_editor, PG_FORWARD, SQLITE_FORWARD)


def backward(apps, schema_editor):
    _0020._run(schema_editor, PG_BACKWARD, SQLITE_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0027_set_based_label_checks")]
    operations = [
        migrations.RunPython(forward, backward),
        migrations.AlterField(
            model_name="qrelssnapshot", name="campaign",
            field=models.ForeignKey(on_delete=models.deletion.PROTECT, related_name="qrels_snapshots", to="assessments.campaign"),
        ),
        migrations.AlterField(
            model_name="qrelssnapshotpart", name="snapshot",
            field=models.ForeignKey(on_delete=models.deletion.PROTECT, related_name="parts", to="assessments.qrelssnapshot"),
        ),
    ]
