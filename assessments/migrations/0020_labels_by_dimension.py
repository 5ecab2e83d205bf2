"""Labels keyed by the campaign's dimensions: one JSON column instead of relevance, quality and stance columns.

A judgment, its history rows, an adjudication and its history rows each get `labels`, an object that maps each
dimension of the campaign's scheme with a value to that value; the three columns are carried into it (a null
quality and an empty stance are absent keys) and dropped. Campaign schemes become version 2 (a list of
dimensions, `assessments.labels`), and the campaign's "quality and stance only of relevant documents" setting
becomes those dimensions' condition in the scheme.

Why one JSON column: a campaign defines its dimensions, so columns per dimension would mean DDL per campaign, and
rows per dimension would multiply the rows every save, export and agreement figure reads (a label save would write
three history rows instead of one). A JSON object keeps one row per judgment and per revision, and PostgreSQL's
jsonb reads a key about as fast as a column (bench/evaluate_db.py and bench/judge_http.py, measured before and
after in the closing note of this change).

The rules move with the labels, on both databases:
- every key of `labels` is a dimension of the campaign's scheme and its value one of that dimension's values
  (per statement on PostgreSQL, as 0017 did; per row on SQLite), for judgments and adjudications alike;
- a change of labels (or note, or flag) needs a new revision, and at commit every judgment's revision has a history
  row with its labels (0008's triggers, now comparing `labels`).
The append-only history triggers are set aside only while this migration copies the old columns into `labels`.
"""

from django.db import migrations, models

from assessments.labels import upgrade_from_version_1

LABELLED = ("assessments_judgment", "assessments_judgmentevent", "assessments_adjudication", "assessments_adjudicationevent")
OLD_LABELS = "relevance, quality, stance, note, flagged"
NEW_LABELS = "labels, note, flagged"


def _row(row: str, columns: str) -> str:
    return "(" + ", ".join(f"{row}.{c.strip()}" for c in columns.split(",")) + ")"


# ---- PostgreSQL

_PG_CHECK_FUNCTION = """
CREATE FUNCTION assessments_rows_labels_valid() RETURNS trigger AS $$
DECLARE bad record;
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE jsonb_typeof(n.labels) <> 'object') THEN
    RAISE EXCEPTION 'labels must be a JSON object keyed by dimension' USING ERRCODE = 'check_violation';
  END IF;
  SELECT l.dimension, l.value INTO bad
    FROM (SELECT DISTINCT n.topic_id, kv.key AS dimension, kv.value FROM new_rows n, jsonb_each(n.labels) kv) l
    LEFT JOIN assessments_topic t ON t.id = l.topic_id
    LEFT JOIN assessments_campaign c ON c.id = t.campaign_id
   WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(c.scheme::jsonb->'dimensions') d,
                                   jsonb_array_elements(d->'values') v
                      WHERE d->>'name' = l.dimension AND v->'value' = l.value)
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION '% % is not in the campaign''s label scheme', bad.dimension, bad.value USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
"""

_PG_CHECK_TRIGGERS = "".join(
    f"""
CREATE TRIGGER {table}_labels_valid_{op.lower()} AFTER {op} ON {table}
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION assessments_rows_labels_valid();"""
    for table in ("assessments_judgment", "assessments_adjudication") for op in ("INSERT", "UPDATE")
)

_PG_TAMPER = """
CREATE TRIGGER assessments_judgment_update_rules BEFORE UPDATE ON assessments_judgment FOR EACH ROW
  WHEN ((NEW.topic_id, NEW.document_id, NEW.assessor_id) <> (OLD.topic_id, OLD.document_id, OLD.assessor_id)
        OR NEW.revision < OLD.revision
        OR (NEW.revision = OLD.revision AND {new} IS DISTINCT FROM {old}))
  EXECUTE FUNCTION assessments_judgment_update_rules();

CREATE OR REPLACE FUNCTION assessments_judgment_has_history() RETURNS trigger AS $$
BEGIN
  -- The row as it is at commit, not as this event saw it: it may have changed again since. One query
  -- on the good path, since a bulk import checks a million rows here.
  PERFORM 1 FROM assessments_judgment j JOIN assessments_judgmentevent e ON e.judgment_id = j.id AND e.revision = j.revision
   WHERE j.id = NEW.id AND {e} IS NOT DISTINCT FROM {j};
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
  WHEN (NEW.revision <> OLD.revision OR {new} IS DISTINCT FROM {old})
  EXECUTE FUNCTION assessments_judgment_has_history();
"""

PG_BEFORE = """
DROP TRIGGER assessments_judgment_labels_valid_insert ON assessments_judgment;
DROP TRIGGER assessments_judgment_labels_valid_update ON assessments_judgment;
DROP FUNCTION assessments_judgment_rows_labels_valid();
DROP TRIGGER assessments_adjudication_labels_valid ON assessments_adjudication;
DROP FUNCTION assessments_judgment_labels_valid();
DROP TRIGGER assessments_judgment_update_rules ON assessments_judgment;
DROP TRIGGER assessments_judgment_has_history_insert ON assessments_judgment;
DROP TRIGGER assessments_judgment_has_history_update ON assessments_judgment;
ALTER TABLE assessments_judgmentevent DISABLE TRIGGER assessments_judgmentevent_append_only;
ALTER TABLE assessments_adjudicationevent DISABLE TRIGGER assessments_adjudicationevent_append_only;
""" + "".join(f"ALTER TABLE {table} ADD COLUMN labels jsonb NOT NULL DEFAULT '{{}}';\n" for table in LABELLED) + "".join(
    f"""UPDATE {table} SET labels = jsonb_strip_nulls(jsonb_build_object(
          'relevance', relevance, 'quality', quality, 'stance', NULLIF(stance, '')));\n"""
    for table in LABELLED
)

PG_AFTER = (
    """
ALTER TABLE assessments_judgmentevent ENABLE TRIGGER assessments_judgmentevent_append_only;
ALTER TABLE assessments_adjudicationevent ENABLE TRIGGER assessments_adjudicationevent_append_only;
"""
    + _PG_CHECK_FUNCTION
    + _PG_CHECK_TRIGGERS
    + _PG_TAMPER.format(new=_row("NEW", NEW_LABELS), old=_row("OLD", NEW_LABELS), e=_row("e", NEW_LABELS), j=_row("j", NEW_LABELS))
)

# ---- SQLite (the demo database): row triggers, as 0002 and 0008 made them.

_SQLITE_LABEL_CHECK = """
WHEN json_type(NEW.labels) <> 'object' OR EXISTS (
  SELECT 1 FROM json_each(NEW.labels) l WHERE NOT EXISTS (
    SELECT 1 FROM assessments_topic t JOIN assessments_campaign c ON c.id = t.campaign_id,
                  json_each(c.scheme, '$.dimensions') d, json_each(d.value, '$.values') v
     WHERE t.id = NEW.topic_id AND json_extract(d.value, '$.name') = l.key
       AND json_extract(v.value, '$.value') = l.value AND json_type(v.value, '$.value') = l.type))
BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: a label is not in the campaign''s label scheme'); END
"""

SQLITE_BEFORE = [
    "DROP TRIGGER assessments_judgment_labels_valid_insert",
    "DROP TRIGGER assessments_judgment_labels_valid_update",
    "DROP TRIGGER assessments_judgment_update_rules",
    "DROP TRIGGER assessments_judgmentevent_append_only",
    "DROP TRIGGER assessments_adjudicationevent_update",
    *(f"""ALTER TABLE {table} ADD COLUMN "labels" text NOT NULL DEFAULT '{{}}' CHECK (JSON_VALID("labels"))""" for table in LABELLED),
    *(f"""UPDATE {table} SET labels = json_patch('{{}}', json_object(
          'relevance', relevance, 'quality', quality, 'stance', NULLIF(stance, '')))""" for table in LABELLED),
]

SQLITE_AFTER = [
    "CREATE TRIGGER assessments_judgmentevent_append_only BEFORE UPDATE ON assessments_judgmentevent "
    "BEGIN SELECT RAISE(ABORT, 'judgment history is append-only'); END",
    "CREATE TRIGGER assessments_adjudicationevent_update BEFORE UPDATE ON assessments_adjudicationevent "
    "BEGIN SELECT RAISE(ABORT, 'adjudication history is append-only: UPDATE is refused'); END",
    *(f"CREATE TRIGGER {table}_labels_valid_{op} BEFORE {op.upper()} ON {table} {_SQLITE_LABEL_CHECK}"
      for table in ("assessments_judgment", "assessments_adjudication") for op in ("insert", "update")),
    f"""CREATE TRIGGER assessments_judgment_update_rules BEFORE UPDATE ON assessments_judgment
        WHEN NEW.topic_id <> OLD.topic_id OR NEW.document_id <> OLD.document_id OR NEW.assessor_id <> OLD.assessor_id
          OR NEW.revision < OLD.revision
          OR (NEW.revision = OLD.revision AND {_row("NEW", NEW_LABELS)} IS NOT {_row("OLD", NEW_LABELS)})
        BEGIN SELECT RAISE(ABORT, 'a judgment keeps its topic, document and assessor, and a change of labels needs a new revision'); END""",
]


def _run(schema_editor, postgres, sqlite):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(postgres, params=None)
    elif schema_editor.connection.vendor == "sqlite":
        for statement in sqlite:
            schema_editor.execute(statement)


def move_labels(apps, schema_editor):
    _run(schema_editor, PG_BEFORE, SQLITE_BEFORE)
    Campaign = apps.get_model("assessments", "Campaign")
    for campaign in Campaign.objects.all():
        if "dimensions" not in campaign.scheme:
            campaign.scheme = upgrade_from_version_1(campaign.scheme, details_only_if_relevant=campaign.ask_details_only_if_relevant)
            campaign.save(update_fields=["scheme"])


def check_labels(apps, schema_editor):
    _run(schema_editor, PG_AFTER, SQLITE_AFTER)


_JSON = models.JSONField(blank=True, default=dict)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0019_ranking_stage")]
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddField(model_name=m, name="labels", field=_JSON)
                              for m in ("judgment", "judgmentevent", "adjudication", "adjudicationevent")],
            database_operations=[migrations.RunPython(move_labels)],
        ),
        *(migrations.RemoveField(model_name=m, name=f)
          for m in ("judgment", "judgmentevent", "adjudication", "adjudicationevent") for f in ("relevance", "quality", "stance")),
        migrations.RemoveField(model_name="campaign", name="ask_details_only_if_relevant"),
        migrations.AlterField(
            model_name='campaign',
            name='preset',
            field=models.CharField(choices=[('touche-2020-task1', 'Touché 2020 Task 1: argument retrieval from debate portals (relevance with −2 spam, quality)'), ('touche-2020-task2', 'Touché 2020 Task 2: comparative argument retrieval from ClueWeb12 (relevance, quality)'), ('touche-2021-task1', 'Touché 2021 Task 1: argument retrieval for controversial questions (relevance −2 spam, 0–3; quality 0–3)'), ('touche-2021-task2', 'Touché 2021 Task 2: comparative argument retrieval (relevance, quality)'), ('touche-2022-task1', 'Touché 2022 Task 1: argument gists, pairs of sentences (relevance, quality, coherence)'), ('touche-2022-task2', 'Touché 2022 Task 2: comparative passages (relevance, quality, stance towards the objects)'), ('touche-2023-task1', 'Touché 2023 Task 1: argument retrieval for controversial questions (relevance, quality, stance)'), ('touche-2023-task2', 'Touché 2023 Task 2: evidence retrieval for causal questions (direction, relevance, evidence, causal stance)'), ('custom', 'Custom scheme')], max_length=32),
        ),
        migrations.RunPython(check_labels),
    ]
