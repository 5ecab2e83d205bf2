"""Database-level rules that a CHECK constraint cannot express.

1. A judgment's labels must be values of its campaign's scheme (a JSON column on another table),
   so the check is a trigger. It runs on PostgreSQL and on SQLite (the embedded demo database).
2. Judgment history is append-only: UPDATE on assessments_judgmentevent is refused. Deletes are
   left to cascades from deleting a whole campaign.
"""

from django.db import migrations

POSTGRES_FORWARD = """
CREATE FUNCTION assessments_judgment_labels_valid() RETURNS trigger AS $$
DECLARE s jsonb;
BEGIN
  SELECT c.scheme::jsonb INTO s FROM assessments_topic t JOIN assessments_campaign c ON c.id = t.campaign_id
   WHERE t.id = NEW.topic_id;
  IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(s->'relevance') e WHERE e->'value' = to_jsonb(NEW.relevance)) THEN
    RAISE EXCEPTION 'relevance % is not in the campaign''s label scheme', NEW.relevance USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.quality IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(s->'quality') e WHERE e->'value' = to_jsonb(NEW.quality)) THEN
    RAISE EXCEPTION 'quality % is not in the campaign''s label scheme', NEW.quality USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.stance <> '' AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(s->'stance') e WHERE e->'value' = to_jsonb(NEW.stance)) THEN
    RAISE EXCEPTION 'stance % is not in the campaign''s label scheme', NEW.stance USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER assessments_judgment_labels_valid BEFORE INSERT OR UPDATE ON assessments_judgment
  FOR EACH ROW EXECUTE FUNCTION assessments_judgment_labels_valid();

CREATE FUNCTION assessments_judgmentevent_append_only() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'judgment history is append-only' USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql;
CREATE TRIGGER assessments_judgmentevent_append_only BEFORE UPDATE ON assessments_judgmentevent
  FOR EACH ROW EXECUTE FUNCTION assessments_judgmentevent_append_only();
"""

POSTGRES_BACKWARD = """
DROP TRIGGER assessments_judgmentevent_append_only ON assessments_judgmentevent;
DROP FUNCTION assessments_judgmentevent_append_only();
DROP TRIGGER assessments_judgment_labels_valid ON assessments_judgment;
DROP FUNCTION assessments_judgment_labels_valid();
"""

_SQLITE_LABEL_CHECK = """
WHEN NOT EXISTS (SELECT 1 FROM assessments_topic t JOIN assessments_campaign c ON c.id = t.campaign_id,
                 json_each(c.scheme, '$.relevance') e
                 WHERE t.id = NEW.topic_id AND json_extract(e.value, '$.value') = NEW.relevance)
  OR (NEW.quality IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM assessments_topic t JOIN assessments_campaign c ON c.id = t.campaign_id,
        json_each(c.scheme, '$.quality') e
        WHERE t.id = NEW.topic_id AND json_extract(e.value, '$.value') = NEW.quality))
  OR (NEW.stance <> '' AND NOT EXISTS (
        SELECT 1 FROM assessments_topic t JOIN assessments_campaign c ON c.id = t.campaign_id,
        json_each(c.scheme, '$.stance') e
        WHERE t.id = NEW.topic_id AND json_extract(e.value, '$.value') = NEW.stance))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: judgment label is not in the campaign''s label scheme'); END
"""

SQLITE_FORWARD = [
    f"CREATE TRIGGER assessments_judgment_labels_valid_insert BEFORE INSERT ON assessments_judgment {_SQLITE_LABEL_CHECK}",
    f"CREATE TRIGGER assessments_judgment_labels_valid_update BEFORE UPDATE ON assessments_judgment {_SQLITE_LABEL_CHECK}",
    "CREATE TRIGGER assessments_judgmentevent_append_only BEFORE UPDATE ON assessments_judgmentevent "
    "BEGIN SELECT RAISE(ABORT, 'judgment history is append-only'); END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER assessments_judgment_labels_valid_insert",
    "DROP TRIGGER assessments_judgment_labels_valid_update",
    "DROP TRIGGER assessments_judgmentevent_append_only",
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
    dependencies = [("assessments", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
