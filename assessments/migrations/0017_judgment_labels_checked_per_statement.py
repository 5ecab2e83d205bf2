"""Judgment labels are checked once per statement, over all its rows, instead of once per row.

0002's BEFORE row trigger looked the campaign's scheme up for every row: the largest single cost of a bulk
qrels import, which checks a million rows. The AFTER statement triggers here read the statement's rows from its
transition table and look the scheme up once per distinct (topic, labels), so a million-row import runs a
few hash joins instead of a million queries. The rule is unchanged: a statement that gives any judgment a label
outside its campaign's scheme fails (check_violation, naming the label), and so does its transaction. A row whose
topic has no campaign fails as before (it has no scheme).

Adjudications keep 0002's row trigger (0012): they are written one at a time. SQLite keeps its row triggers.
"""

from django.db import migrations

_IN_SCHEME = """EXISTS (SELECT 1 FROM jsonb_array_elements(c.scheme::jsonb->'{dimension}') e
                       WHERE e->'value' = to_jsonb(l.{dimension}))"""

POSTGRES_FORWARD = f"""
DROP TRIGGER assessments_judgment_labels_valid ON assessments_judgment;

CREATE FUNCTION assessments_judgment_rows_labels_valid() RETURNS trigger AS $$
DECLARE bad record;
BEGIN
  SELECT l.relevance, l.quality, l.stance,
         NOT {_IN_SCHEME.format(dimension="relevance")} AS bad_relevance,
         l.quality IS NOT NULL AND NOT {_IN_SCHEME.format(dimension="quality")} AS bad_quality
    INTO bad
    FROM (SELECT DISTINCT n.topic_id, n.relevance, n.quality, n.stance FROM new_rows n) l
    LEFT JOIN assessments_topic t ON t.id = l.topic_id
    LEFT JOIN assessments_campaign c ON c.id = t.campaign_id
   WHERE NOT {_IN_SCHEME.format(dimension="relevance")}
      OR (l.quality IS NOT NULL AND NOT {_IN_SCHEME.format(dimension="quality")})
      OR (l.stance <> '' AND NOT {_IN_SCHEME.format(dimension="stance")})
   LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  ELSIF bad.bad_relevance THEN
    RAISE EXCEPTION 'relevance % is not in the campaign''s label scheme', bad.relevance USING ERRCODE = 'check_violation';
  ELSIF bad.bad_quality THEN
    RAISE EXCEPTION 'quality % is not in the campaign''s label scheme', bad.quality USING ERRCODE = 'check_violation';
  END IF;
  RAISE EXCEPTION 'stance % is not in the campaign''s label scheme', bad.stance USING ERRCODE = 'check_violation';
END $$ LANGUAGE plpgsql;

-- A trigger with a transition table takes one event, so inserts and updates have one each.
CREATE TRIGGER assessments_judgment_labels_valid_insert AFTER INSERT ON assessments_judgment
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION assessments_judgment_rows_labels_valid();
CREATE TRIGGER assessments_judgment_labels_valid_update AFTER UPDATE ON assessments_judgment
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION assessments_judgment_rows_labels_valid();
"""

POSTGRES_BACKWARD = """
DROP TRIGGER assessments_judgment_labels_valid_update ON assessments_judgment;
DROP TRIGGER assessments_judgment_labels_valid_insert ON assessments_judgment;
DROP FUNCTION assessments_judgment_rows_labels_valid();
CREATE TRIGGER assessments_judgment_labels_valid BEFORE INSERT OR UPDATE ON assessments_judgment
  FOR EACH ROW EXECUTE FUNCTION assessments_judgment_labels_valid();
"""


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_FORWARD, params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_BACKWARD, params=None)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0016_append_only_replies")]
    operations = [migrations.RunPython(forward, backward)]
