"""The record holds against the application's own database role, not only against its code (README: migrate as the
owner, serve as a role with table rights only; `manage.py grant_app_role`). Such a role cannot switch triggers off,
but it could still write three things that rewrite the record without an UPDATE or DELETE of history. They are
refused here, for every role (a superuser too, unless it drops the triggers):

1. A history row that is not the next revision of its judgment (or adjudication): a row for revision 0, one filling
   a gap, or one below revisions already kept. Revisions a statement inserts for one judgment are consecutive and
   follow the last one kept, so an archive import still inserts a whole history 1..n at once, and the qrels import
   one revision per judgment. Nor may the first of them be dated before the revision it follows, unless it is dated
   no earlier than its own transaction began (a save's clock may lag the previous save's, on another server).
   Checked per statement over its transition table, as 0017 checks labels: one query, whatever the number of rows.
2. DELETE and TRUNCATE of a qrels snapshot or its parts: a number once exported stays downloadable (no service
   deletes one; a campaign with snapshots cannot be deleted, as its audit trail already keeps it).
3. A document that has judgments keeps its id and, once it has text, its title, body and HTML flag, as the document
   imports already keep them (services.bulk.upsert_documents refuses first, naming the documents); a stub still gets
   its first text.

And a hole that the role split opened: a role that may create temporary tables (the imports need them) can shadow a
table that a trigger function reads with a temporary one of the same name, since the session's temporary schema is
searched first. A relabelling then passed 0008's commit check against a forged history. The functions that read
tables now name the schema: 0008/0020's per-row commit checks by qualified names (they run a million times in a bulk
import, where a pinned search_path costs a fifth more), the others by a pinned search_path with pg_temp last.

SQLite (the demo) gets 1's revision rule and 2 as row triggers. 3 is PostgreSQL's alone: a SQLite trigger on
documents that reads judgments would stop SQLite from remaking the judgments table in a later migration (0021).
"""

from django.db import migrations

_HISTORY = {  # history table: (its parent's key column, what the parent is called in errors)
    "assessments_judgmentevent": ("judgment_id", "judgment"),
    "assessments_adjudicationevent": ("adjudication_id", "adjudication"),
}
_SNAPSHOT_TABLES = ("assessments_qrelssnapshot", "assessments_qrelssnapshotpart")
_SNAPSHOTS_KEPT = "exported qrels snapshots are kept"
_JUDGMENT_LABELS = "(e.labels, e.note, e.flagged)", "(j.labels, j.note, j.flagged)"


def _pinned(schema: str) -> str:
    return f"SET search_path = pg_catalog, {schema}, pg_temp"


# ---- PostgreSQL: 0008's and 0020's commit checks, with their tables named by schema (prefix "": as they were).


def _commit_checks(prefix: str) -> str:
    e, j = _JUDGMENT_LABELS
    return f"""
CREATE OR REPLACE FUNCTION assessments_judgment_has_history() RETURNS trigger AS $$
BEGIN
  -- The row as it is at commit, not as this event saw it: it may have changed again since. One query
  -- on the good path, since a bulk import checks a million rows here.
  PERFORM 1 FROM {prefix}assessments_judgment j JOIN {prefix}assessments_judgmentevent e ON e.judgment_id = j.id AND e.revision = j.revision
   WHERE j.id = NEW.id AND {e} IS NOT DISTINCT FROM {j};
  IF NOT FOUND THEN
    RAISE EXCEPTION 'judgment %: revision % has no history row with its labels',
      NEW.id, (SELECT revision FROM {prefix}assessments_judgment WHERE id = NEW.id) USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION assessments_judgmentevent_not_ahead() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM {prefix}assessments_judgment j WHERE j.id = NEW.judgment_id AND j.revision < NEW.revision) THEN
    RAISE EXCEPTION 'judgment %: history row for revision % is ahead of the judgment', NEW.judgment_id, NEW.revision
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
"""


def _in_order(table: str, key: str, what: str, schema: str) -> str:
    return f"""
CREATE FUNCTION {table}_in_order() RETURNS trigger AS $$
DECLARE bad record;
BEGIN
  -- Per {what} the statement extends: its new revisions (lo..hi, n rows) and the history it already had.
  SELECT a.key, a.lo, a.hi, a.n, a.first_at,
         coalesce(max(e.revision) FILTER (WHERE e.revision NOT BETWEEN a.lo AND a.hi), 0) AS kept,
         max(e.at) FILTER (WHERE e.revision = a.lo - 1) AS kept_at
    INTO bad
    FROM (SELECT {key} AS key, min(revision) AS lo, max(revision) AS hi, count(*) AS n, min(at) AS first_at
            FROM new_rows GROUP BY {key}) a
    JOIN {table} e ON e.{key} = a.key
   GROUP BY a.key, a.lo, a.hi, a.n, a.first_at
  HAVING a.hi - a.lo + 1 <> a.n
      OR max(e.revision) <> a.hi
      OR coalesce(max(e.revision) FILTER (WHERE e.revision < a.lo), 0) <> a.lo - 1
      OR (a.first_at < max(e.at) FILTER (WHERE e.revision = a.lo - 1) AND a.first_at < transaction_timestamp())
   LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  ELSIF bad.hi - bad.lo + 1 <> bad.n THEN
    RAISE EXCEPTION '{what} %: history rows for revisions % to % are not consecutive', bad.key, bad.lo, bad.hi
      USING ERRCODE = 'integrity_constraint_violation';
  ELSIF bad.kept <> bad.lo - 1 THEN
    RAISE EXCEPTION '{what} %: a history row for revision % is refused: its next revision is %', bad.key, bad.lo, bad.kept + 1
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RAISE EXCEPTION '{what} %: the history row for revision % is dated %, before revision % (%)',
    bad.key, bad.lo, bad.first_at, bad.lo - 1, bad.kept_at USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql {_pinned(schema)};
CREATE TRIGGER {table}_in_order AFTER INSERT ON {table}
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {table}_in_order();
"""


def _postgres_forward(schema: str) -> str:
    return (
        _commit_checks(f"{schema}.")
        + f"ALTER FUNCTION assessments_rows_labels_valid() {_pinned(schema)};\n"
        + "".join(_in_order(table, key, what, schema) for table, (key, what) in _HISTORY.items())
        + "".join(
            f"""
CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
  FOR EACH ROW EXECUTE FUNCTION assessments_refuse('{_SNAPSHOTS_KEPT}');
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
  FOR EACH STATEMENT EXECUTE FUNCTION assessments_refuse('{_SNAPSHOTS_KEPT}');
"""
            for table in _SNAPSHOT_TABLES
        )
        + f"""
CREATE FUNCTION assessments_document_judged_text_kept() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM assessments_judgment j WHERE j.document_id = OLD.id) THEN
    RAISE EXCEPTION 'document %: it has judgments, so its id, title, body and HTML flag stay as they were judged', OLD.doc_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql {_pinned(schema)};
-- The WHEN clause keeps the function off every other update (a stub's first text, a URL, metadata, a thumbnail).
CREATE TRIGGER assessments_document_judged_text_kept BEFORE UPDATE ON assessments_document FOR EACH ROW
  WHEN ((NEW.collection_id, NEW.doc_id) IS DISTINCT FROM (OLD.collection_id, OLD.doc_id)
        OR (OLD.has_text AND (NEW.title, NEW.body, NEW.is_html, NEW.has_text) IS DISTINCT FROM (OLD.title, OLD.body, OLD.is_html, OLD.has_text)))
  EXECUTE FUNCTION assessments_document_judged_text_kept();
"""
    )


POSTGRES_BACKWARD = (
    """
DROP TRIGGER assessments_document_judged_text_kept ON assessments_document;
DROP FUNCTION assessments_document_judged_text_kept();
"""
    + "".join(f"DROP TRIGGER {table}_no_delete ON {table}; DROP TRIGGER {table}_no_truncate ON {table};\n" for table in _SNAPSHOT_TABLES)
    + "".join(f"DROP TRIGGER {table}_in_order ON {table}; DROP FUNCTION {table}_in_order();\n" for table in _HISTORY)
    + "ALTER FUNCTION assessments_rows_labels_valid() RESET search_path;\n"
    + _commit_checks("")
)

# ---- SQLite (the demo database): row triggers, which see the rows a statement inserted before.

SQLITE_FORWARD = [
    *(f"""CREATE TRIGGER {table}_in_order BEFORE INSERT ON {table}
          WHEN NEW.revision <> coalesce((SELECT max(revision) FROM {table} WHERE {key} = NEW.{key}), 0) + 1
          BEGIN SELECT RAISE(ABORT, '{what} history: a history row must be the next revision of its {what}'); END"""
      for table, (key, what) in _HISTORY.items()),
    *(f"CREATE TRIGGER {table}_delete BEFORE DELETE ON {table} BEGIN SELECT RAISE(ABORT, '{_SNAPSHOTS_KEPT}: DELETE is refused'); END"
      for table in _SNAPSHOT_TABLES),
]
SQLITE_BACKWARD = [*(f"DROP TRIGGER {table}_in_order" for table in _HISTORY), *(f"DROP TRIGGER {table}_delete" for table in _SNAPSHOT_TABLES)]


def _schema(schema_editor) -> str:
    """The schema that holds the app's tables (where migrate created them), quoted."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = 'assessments_judgment'::regclass")
        (schema,) = cursor.fetchone()
    return schema  # regnamespace's text is already quoted where it needs to be


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_postgres_forward(_schema(schema_editor)), params=None)
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
    dependencies = [("assessments", "0023_image_campaigns")]
    operations = [migrations.RunPython(forward, backward)]
