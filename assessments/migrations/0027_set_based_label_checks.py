"""The judgment record's rules are checked once per statement, over its rows at once, instead of once per row.

A qrels import writes a million judgments and a million history rows in one statement; migrations 0008, 0020 and
0024 then ran a PL/pgSQL function a million times for each table at commit (0008's deferred checks: a judgment has
the history row of its revision, and no history row is ahead of its judgment), besides statement checks that
planned badly at that size. The rules are the same; what changes is when and how they are checked, on PostgreSQL:

1. At the end of each statement that inserts or relabels judgments (a new revision, labels, note or flag), one query
   over its transition table finds those without the history row of their revision holding their labels; at the
   end of each statement that inserts history rows, one query finds rows ahead of their judgment (or whose judgment
   is not there yet). What is already settled then stays settled until commit: history rows are never updated or
   deleted, a judgment's revision never goes back, and a later relabelling or history row is checked by its own
   statement. What is not settled (a save that updates the judgment before inserting its history row; hand-written
   SQL in either order) is written to `assessments_historycheck`, whose deferred row trigger runs 0008's check for
   that judgment at commit, as before. A bulk import writes both in one statement, so nothing waits for the commit.
2. 0024's rule that history rows come in order, row by row but set-based: a row after revision 1 needs the row
   before it (dated no later, or its own dated no earlier than its transaction began) and none is below 1; with the
   unique (judgment, revision), which refuses a revision kept already, that keeps each judgment's history 1..n as
   0024's per-judgment query did, and a bulk import's revisions 1 need no lookup at all. A statement with a row that
   fails it gets 0024's query (on the part of the history that holds the statement's judgments, their id range given
   to the planner as values), which names the judgment and why. The "ahead" check of 1 runs in the same query.
3. Labels are checked against the scheme (0020) once per distinct (topic, labels) pair of the statement: a
   million-row import holds a few hundred. The function is the one judgments, adjudications and machine labels
   (0026_machine_judges) share; it still reads only `topic_id` and `labels`.

4. What the record refers to (a judgment's topic, document and assessor; a history row's judgment and assessor) was
   five foreign keys, which PostgreSQL checks one row at a time: 16 of a million-line import's 45 s. Each is now an
   anti-join per statement over the transition table, and the rows referred to are kept by statement triggers on
   their tables (see the section below). Their own indexes go where a wider index starts with the same column.

The functions that read tables pin their search_path (0024: a temporary table cannot stand in for one), and those
that write `assessments_historycheck` run as its owner (SECURITY DEFINER): the app's role has no right on that table,
so it can neither add nor take away what the commit checks. JIT is off in them: compiling took longer than the few
hash joins it would speed up. SQLite (the demo) never had 0008's commit checks and keeps its row triggers and foreign keys.
"""

from importlib import import_module

from django.conf import settings
from django.db import migrations, models

_0020 = import_module("assessments.migrations.0020_labels_by_dimension")
_0024 = import_module("assessments.migrations.0024_history_in_order_kept_snapshots_and_texts")

CHECKS = "assessments_historycheck"
# The settings of every function here: its tables found only in the app's schema, and no JIT. work_mem lets a
# million-row statement's hash joins stay in memory (4 MB, the default, spilled them to disk).
_SETTINGS = "SET search_path = pg_catalog, {schema}, pg_temp SET jit = off SET work_mem = '128MB'"
# And for the statement checks, no nested loops: right after a bulk insert the statistics do not know the new ids,
# and a nested loop planned for a few rows would join a million with a million. Hash and merge joins over the
# statement's id range cost one pass whatever the estimate (a save's range is one judgment).
_STATEMENT_SETTINGS = _SETTINGS + " SET enable_nestloop = off"
_E, _J, _N, _O = ("(" + ", ".join(f"{row}.{c}" for c in ("labels", "note", "flagged")) + ")" for row in "ejno")


def _postgres_forward(schema: str) -> str:
    settings, statement_settings = _SETTINGS.format(schema=schema), _STATEMENT_SETTINGS.format(schema=schema)
    return f"""
DROP TRIGGER assessments_judgment_has_history_insert ON assessments_judgment;
DROP TRIGGER assessments_judgment_has_history_update ON assessments_judgment;
DROP FUNCTION assessments_judgment_has_history();
DROP TRIGGER assessments_judgmentevent_not_ahead ON assessments_judgmentevent;
DROP FUNCTION assessments_judgmentevent_not_ahead();

-- What the commit still has to check: a judgment (revision null) that must have the history row of its revision,
-- or a history row (judgment, revision) that must not be ahead of its judgment. Empty outside a transaction that
-- writes judgments by hand or in two statements; UNLOGGED, since nothing in it outlives its transaction.
CREATE UNLOGGED TABLE {CHECKS} (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    judgment_id bigint NOT NULL,
    revision integer
);

CREATE FUNCTION {CHECKS}_at_commit() RETURNS trigger AS $$
DECLARE kept integer;
BEGIN
  IF NEW.revision IS NULL THEN
    -- The judgment as it is at commit, not as the statement left it: it may have changed again since.
    PERFORM 1 FROM assessments_judgment j JOIN assessments_judgmentevent e ON e.judgment_id = j.id AND e.revision = j.revision
     WHERE j.id = NEW.judgment_id AND {_E} IS NOT DISTINCT FROM {_J};
    IF NOT FOUND THEN
      RAISE EXCEPTION 'judgment %: revision % has no history row with its labels',
        NEW.judgment_id, (SELECT revision FROM assessments_judgment WHERE id = NEW.judgment_id) USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  ELSE
    SELECT j.revision INTO kept FROM assessments_judgment j WHERE j.id = NEW.judgment_id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'judgment %: a history row (revision %) refers to a judgment that does not exist', NEW.judgment_id, NEW.revision
        USING ERRCODE = 'foreign_key_violation';
    ELSIF kept < NEW.revision THEN
      RAISE EXCEPTION 'judgment %: history row for revision % is ahead of the judgment', NEW.judgment_id, NEW.revision
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  DELETE FROM {CHECKS} WHERE id = NEW.id;
  RETURN NULL;
END $$ LANGUAGE plpgsql SECURITY DEFINER {settings};
CREATE CONSTRAINT TRIGGER {CHECKS}_at_commit AFTER INSERT ON {CHECKS}
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {CHECKS}_at_commit();

CREATE FUNCTION assessments_judgment_history_written() RETURNS trigger AS $$
DECLARE low bigint; high bigint;
BEGIN
  SELECT min(id), max(id) INTO low, high FROM new_rows;
  IF low IS NULL THEN
    RETURN NULL;
  END IF;
  -- EXECUTE: planned for this statement's rows and id range (a cached plan would fit the first statement's size).
  -- An update counts when it changes what history keeps (0008's WHEN clause, or a row whose id changed).
  EXECUTE format($q$
    INSERT INTO {CHECKS} (judgment_id)
    SELECT n.id FROM new_rows n %s
     WHERE %s NOT EXISTS (SELECT 1 FROM assessments_judgmentevent e
                           WHERE e.judgment_id = n.id AND e.revision = n.revision AND e.judgment_id BETWEEN $1 AND $2
                             AND {_E} IS NOT DISTINCT FROM {_N})$q$,
    CASE TG_OP WHEN 'UPDATE' THEN 'LEFT JOIN old_rows o ON o.id = n.id' ELSE '' END,
    CASE TG_OP WHEN 'UPDATE' THEN '(o.id IS NULL OR n.revision <> o.revision OR {_N} IS DISTINCT FROM {_O}) AND' ELSE '' END)
  USING low, high;
  RETURN NULL;
END $$ LANGUAGE plpgsql SECURITY DEFINER {statement_settings};
CREATE TRIGGER assessments_judgment_history_written_insert AFTER INSERT ON assessments_judgment
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION assessments_judgment_history_written();
CREATE TRIGGER assessments_judgment_history_written_update AFTER UPDATE ON assessments_judgment
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION assessments_judgment_history_written();

CREATE OR REPLACE FUNCTION assessments_judgmentevent_in_order() RETURNS trigger AS $$
DECLARE bad record; low bigint; high bigint;
BEGIN
  SELECT min(judgment_id), max(judgment_id) INTO low, high FROM new_rows;
  IF low IS NULL THEN
    RETURN NULL;
  END IF;
  -- Row by row, set-based: a row's judgment must be at its revision (if not, the commit checks it again), and a row
  -- after revision 1 needs the row before it, dated no later (or its own dated no earlier than its transaction).
  -- With the unique (judgment, revision) that keeps every judgment's history 1..n, which is 0024's rule; a row that
  -- may break it is looked at as 0024 did, per judgment, below. The INSERT runs whatever the result.
  EXECUTE $q$
    WITH ahead AS (
           INSERT INTO {CHECKS} (judgment_id, revision)
           SELECT n.judgment_id, n.revision FROM new_rows n
             LEFT JOIN assessments_judgment j ON j.id = n.judgment_id AND j.id BETWEEN $1 AND $2
            WHERE j.id IS NULL OR j.revision < n.revision)
    SELECT n.judgment_id FROM new_rows n
      LEFT JOIN assessments_judgmentevent e
             ON e.judgment_id = n.judgment_id AND e.revision = n.revision - 1 AND e.judgment_id BETWEEN $1 AND $2
     WHERE n.revision < 1
        OR (n.revision > 1 AND (e.judgment_id IS NULL OR (n.at < e.at AND n.at < transaction_timestamp())))
     LIMIT 1$q$
  INTO bad USING low, high;
  IF bad.judgment_id IS NULL THEN
    RETURN NULL;
  END IF;
  -- Per judgment the statement extends: its new revisions (lo..hi, n rows), the last one kept before them. A row
  -- dated before the row before it, both of this statement, is no refusal: only the first of them is compared.
  EXECUTE $q$
    WITH a AS MATERIALIZED (
           SELECT judgment_id AS key, min(revision) AS lo, max(revision) AS hi, count(*) AS n, min(at) AS first_at
             FROM new_rows GROUP BY judgment_id),
         kept AS (
           SELECT e.judgment_id AS key, max(e.revision) AS revision, max(e.at) FILTER (WHERE e.revision = a.lo - 1) AS at
             FROM assessments_judgmentevent e JOIN a ON a.key = e.judgment_id
            WHERE e.judgment_id BETWEEN $1 AND $2 AND e.revision NOT BETWEEN a.lo AND a.hi
            GROUP BY e.judgment_id)
    SELECT a.key, a.lo, a.hi, a.n, a.first_at, coalesce(k.revision, 0) AS kept, k.at AS kept_at
      FROM a LEFT JOIN kept k ON k.key = a.key
     WHERE a.hi - a.lo + 1 <> a.n
        OR coalesce(k.revision, 0) <> a.lo - 1
        OR (a.first_at < k.at AND a.first_at < transaction_timestamp())
     LIMIT 1$q$
  INTO bad USING low, high;
  IF bad.key IS NULL THEN
    RETURN NULL;
  ELSIF bad.hi - bad.lo + 1 <> bad.n THEN
    RAISE EXCEPTION 'judgment %: history rows for revisions % to % are not consecutive', bad.key, bad.lo, bad.hi
      USING ERRCODE = 'integrity_constraint_violation';
  ELSIF bad.kept <> bad.lo - 1 THEN
    RAISE EXCEPTION 'judgment %: a history row for revision % is refused: its next revision is %', bad.key, bad.lo, bad.kept + 1
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RAISE EXCEPTION 'judgment %: the history row for revision % is dated %, before revision % (%)',
    bad.key, bad.lo, bad.first_at, bad.lo - 1, bad.kept_at USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql SECURITY DEFINER {statement_settings};

CREATE OR REPLACE FUNCTION assessments_rows_labels_valid() RETURNS trigger AS $$
DECLARE bad record;
BEGIN
  SELECT p.labels, kv.key AS dimension, kv.value INTO bad
    FROM (SELECT DISTINCT n.topic_id, n.labels FROM new_rows n) p
    LEFT JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(p.labels) = 'object' THEN p.labels END) kv ON true
    LEFT JOIN assessments_topic t ON t.id = p.topic_id
    LEFT JOIN assessments_campaign c ON c.id = t.campaign_id
   WHERE jsonb_typeof(p.labels) <> 'object'
      OR (kv.key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(c.scheme::jsonb->'dimensions') d,
                                                           jsonb_array_elements(d->'values') v
                                              WHERE d->>'name' = kv.key AND v->'value' = kv.value))
   ORDER BY jsonb_typeof(p.labels) = 'object'
   LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  ELSIF jsonb_typeof(bad.labels) <> 'object' THEN
    RAISE EXCEPTION 'labels must be a JSON object keyed by dimension' USING ERRCODE = 'check_violation';
  END IF;
  RAISE EXCEPTION '% % is not in the campaign''s label scheme', bad.dimension, bad.value USING ERRCODE = 'check_violation';
END $$ LANGUAGE plpgsql {settings};
"""


def _postgres_backward(schema: str) -> str:
    """0024's state: its commit checks and order rule, 0020's label check with 0024's search_path."""
    key, what = _0024._HISTORY["assessments_judgmentevent"]
    in_order = _0024._in_order("assessments_judgmentevent", key, what, schema).split("CREATE TRIGGER")[0]
    return (
        f"""
DROP TRIGGER assessments_judgment_history_written_insert ON assessments_judgment;
DROP TRIGGER assessments_judgment_history_written_update ON assessments_judgment;
DROP FUNCTION assessments_judgment_history_written();
DROP TABLE {CHECKS};
DROP FUNCTION {CHECKS}_at_commit();
"""
        + _0020._PG_CHECK_FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
        + f"ALTER FUNCTION assessments_rows_labels_valid() {_0024._pinned(schema)};\n"
        + in_order.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
        + _0024._commit_checks(f"{schema}.")
        + """
CREATE CONSTRAINT TRIGGER assessments_judgment_has_history_insert AFTER INSERT ON assessments_judgment
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assessments_judgment_has_history();
CREATE CONSTRAINT TRIGGER assessments_judgment_has_history_update AFTER UPDATE ON assessments_judgment
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.revision <> OLD.revision OR (NEW.labels, NEW.note, NEW.flagged) IS DISTINCT FROM (OLD.labels, OLD.note, OLD.flagged))
  EXECUTE FUNCTION assessments_judgment_has_history();
CREATE CONSTRAINT TRIGGER assessments_judgmentevent_not_ahead AFTER INSERT ON assessments_judgmentevent
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assessments_judgmentevent_not_ahead();
"""
    )


# ---- 4. References checked per statement (PostgreSQL)
#
# A judgment's topic, document and assessor and a history row's judgment and assessor were foreign keys, which
# PostgreSQL checks row by row (at commit: Django makes them DEFERRABLE INITIALLY DEFERRED), five checks per line of a
# qrels import. The same rules, set-based:
# - a statement inserting judgments (history rows) is refused when one refers to a topic, document or user that does
#   not exist when it ends (one pass over its transition table, joined to each of those tables): earlier than the
#   foreign keys' commit, since nothing writes a judgment before what it refers to; a history row's judgment is
#   checked by 1.'s "ahead" check, at statement end or, when the judgment comes later in the transaction, at commit;
# - a row they refer to keeps its id and cannot be deleted or truncated away while referred to (statement triggers
#   on the parent tables). Judgments could not be deleted or truncated already (0008).
# The columns are not updatable on judgments (0008) and history rows (0002), so inserts are all there is to check.
# The indexes that were the foreign keys' own go where a wider index starts with the same column (a judgment's
# assessor and topic; a history row's judgment): the wider one serves the same lookups.

_REFERRING = {  # table: its columns that refer to another table's id, with that table ({user}: the user model's)
    "assessments_judgment": [("topic_id", "assessments_topic"), ("document_id", "assessments_document"), ("assessor_id", "{user}")],
    "assessments_judgmentevent": [("assessor_id", "{user}")],
}
_REFERRED = {  # table: the (table, column) that refer to its rows
    "assessments_topic": [("assessments_judgment", "topic_id")],
    "assessments_document": [("assessments_judgment", "document_id")],
    "{user}": [("assessments_judgment", "assessor_id"), ("assessments_judgmentevent", "assessor_id")],
    "assessments_judgment": [("assessments_judgmentevent", "judgment_id")],
}
_UNDELETABLE = {"assessments_judgment"}  # 0008 refuses DELETE and TRUNCATE already
# (model, field): the fields whose foreign key is replaced, and (of them) those whose own index goes.
_KEYS = [("judgment", "topic"), ("judgment", "document"), ("judgment", "assessor"), ("judgmentevent", "judgment"), ("judgmentevent", "assessor")]
_COVERED_INDEXES = [("judgment", "topic"), ("judgment", "assessor"), ("judgmentevent", "judgment")]


def _arguments(pairs) -> str:
    return ", ".join(f"'{name}'" for pair in pairs for name in pair)


def _references_forward(schema: str, user: str) -> str:
    settings, statement_settings = _SETTINGS.format(schema=schema), _STATEMENT_SETTINGS.format(schema=schema)
    sql = f"""
-- TG_ARGV: pairs (column of new_rows, table whose id it holds). Planned per statement on the ids' range (as 1.).
CREATE FUNCTION assessments_rows_refer_to_rows() RETURNS trigger AS $$
DECLARE i integer; ranges bigint[]; ranged text := ''; joins text := ''; missing text := ''; found text := ''; bad record;
        rows integer; probes text := '';
BEGIN
  -- A label save writes one row: one probe of each table's primary key, in one query, rather than the joins a
  -- bulk statement needs (planning them was most of a save's checks: 0.35 ms a statement).
  SELECT count(*) INTO rows FROM (SELECT FROM new_rows LIMIT 2) few;
  IF rows = 0 THEN
    RETURN NULL;
  ELSIF rows = 1 THEN
    FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
      probes := probes || format(', CASE WHEN NOT EXISTS (SELECT FROM %2$I p WHERE p.id = n.%1$I) THEN n.%1$I END',
                                 TG_ARGV[2 * i], TG_ARGV[2 * i + 1]);
    END LOOP;
    EXECUTE 'SELECT ARRAY[' || substr(probes, 3) || '] AS ids FROM new_rows n' INTO bad;
  ELSE
    FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
      ranged := ranged || format(', min(%1$I), max(%1$I)', TG_ARGV[2 * i]);
    END LOOP;
    EXECUTE 'SELECT ARRAY[' || substr(ranged, 3) || '] FROM new_rows' INTO ranges;
    -- One pass over the rows, joined to each table they refer to (on the range of ids the statement refers to).
    FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
      joins := joins || format(' LEFT JOIN %2$I p%3$s ON p%3$s.id = n.%1$I AND p%3$s.id BETWEEN %4$s AND %5$s',
                               TG_ARGV[2 * i], TG_ARGV[2 * i + 1], i, ranges[2 * i + 1], ranges[2 * i + 2]);
      missing := missing || format(' OR p%s.id IS NULL', i);
      found := found || format(', CASE WHEN p%2$s.id IS NULL THEN n.%1$I END', TG_ARGV[2 * i], i);
    END LOOP;
    EXECUTE 'SELECT ARRAY[' || substr(found, 3) || '] AS ids FROM new_rows n' || joins || ' WHERE ' || substr(missing, 5) || ' LIMIT 1'
      INTO bad;
  END IF;
  IF bad.ids IS NULL THEN  -- every row's references found (a row-less result, or no id named)
    RETURN NULL;
  END IF;
  FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
    IF bad.ids[i + 1] IS NOT NULL THEN
      RAISE EXCEPTION '%: % % refers to a row of % that does not exist', TG_TABLE_NAME, TG_ARGV[2 * i], bad.ids[i + 1], TG_ARGV[2 * i + 1]
        USING ERRCODE = 'foreign_key_violation';
    END IF;
  END LOOP;
  RETURN NULL;
END $$ LANGUAGE plpgsql {statement_settings};

-- TG_ARGV: pairs (table, column) whose rows refer to this table's by id. A DELETE (statement, old_rows), TRUNCATE
-- (statement) or change of id (row) that would leave one of them without its row is refused.
CREATE FUNCTION assessments_referred_rows_kept() RETURNS trigger AS $$
DECLARE i integer; bad bigint;
BEGIN
  FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
    IF TG_OP = 'TRUNCATE' THEN
      EXECUTE format('SELECT %1$I FROM %2$I LIMIT 1', TG_ARGV[2 * i + 1], TG_ARGV[2 * i]) INTO bad;
    ELSIF TG_LEVEL = 'ROW' THEN
      EXECUTE format('SELECT %1$I FROM %2$I WHERE %1$I = $1 LIMIT 1', TG_ARGV[2 * i + 1], TG_ARGV[2 * i]) INTO bad USING OLD.id;
    ELSE
      EXECUTE format('SELECT o.id FROM old_rows o WHERE EXISTS (SELECT 1 FROM %2$I c WHERE c.%1$I = o.id) LIMIT 1',
                     TG_ARGV[2 * i + 1], TG_ARGV[2 * i]) INTO bad;
    END IF;
    IF bad IS NOT NULL THEN
      RAISE EXCEPTION '%: % of row % is refused: % refers to it by %', TG_TABLE_NAME, TG_OP, bad, TG_ARGV[2 * i], TG_ARGV[2 * i + 1]
        USING ERRCODE = 'foreign_key_violation';
    END IF;
  END LOOP;
  IF TG_LEVEL = 'ROW' THEN
    RETURN NEW;
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql {settings};
"""
    for table, pairs in _REFERRING.items():
        # Named to run before the table's other statement triggers (they run in name order): a label is checked
        # against the scheme of a topic that exists.
        sql += f"""
CREATE TRIGGER {table}_foreign_rows_exist AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION assessments_rows_refer_to_rows({_arguments(pairs)});"""
    for table, pairs in _REFERRED.items():
        name = table.replace("{user}", user)
        if table not in _UNDELETABLE:
            sql += f"""
CREATE TRIGGER {name}_referred_rows_kept_delete AFTER DELETE ON {name} REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION assessments_referred_rows_kept({_arguments(pairs)});
CREATE TRIGGER {name}_referred_rows_kept_truncate BEFORE TRUNCATE ON {name}
  FOR EACH STATEMENT EXECUTE FUNCTION assessments_referred_rows_kept({_arguments(pairs)});"""
        sql += f"""
CREATE TRIGGER {name}_referred_rows_kept_id BEFORE UPDATE OF id ON {name} FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id)
  EXECUTE FUNCTION assessments_referred_rows_kept({_arguments(pairs)});"""
    return sql.replace("{user}", user) + "\n"


def _references_backward(user: str) -> str:
    sql = "".join(f"DROP TRIGGER {table}_foreign_rows_exist ON {table};\n" for table in _REFERRING)
    for table in _REFERRED:
        name = table.replace("{user}", user)
        kinds = ("id",) if table in _UNDELETABLE else ("delete", "truncate", "id")
        sql += "".join(f"DROP TRIGGER {name}_referred_rows_kept_{kind} ON {name};\n" for kind in kinds)
    return sql + "DROP FUNCTION assessments_rows_refer_to_rows();\nDROP FUNCTION assessments_referred_rows_kept();\n"


def _user_table(apps) -> str:
    return apps.get_model(settings.AUTH_USER_MODEL)._meta.db_table


def check_references_per_statement(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite (the demo) keeps its foreign keys and indexes
    for model_name, field_name in _KEYS:
        model = apps.get_model("assessments", model_name)
        column = model._meta.get_field(field_name).column
        for name in schema_editor._constraint_names(model, [column], foreign_key=True):
            schema_editor.execute(schema_editor._delete_fk_sql(model, name))
        if (model_name, field_name) in _COVERED_INDEXES:
            for name in schema_editor._constraint_names(model, [column], index=True, unique=False, type_=models.Index.suffix):
                schema_editor.execute(schema_editor._delete_index_sql(model, name))
    schema_editor.execute(_references_forward(_0024._schema(schema_editor), _user_table(apps)), params=None)


def restore_foreign_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(_references_backward(_user_table(apps)), params=None)
    for model_name, field_name in _KEYS:
        model = apps.get_model("assessments", model_name)
        field = model._meta.get_field(field_name)
        if (model_name, field_name) in _COVERED_INDEXES:
            schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))
        schema_editor.execute(schema_editor._create_fk_sql(model, field, "_fk_%(to_table)s_%(to_column)s"))


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_postgres_forward(_0024._schema(schema_editor)), params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_postgres_backward(_0024._schema(schema_editor)), params=None)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0026_machine_judges"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]
    operations = [
        migrations.RunPython(forward, backward),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="judgment", name="topic",
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=models.deletion.PROTECT,
                                            related_name="judgments", to="assessments.topic"),
                ),
                migrations.AlterField(
                    model_name="judgment", name="document",
                    field=models.ForeignKey(db_constraint=False, on_delete=models.deletion.PROTECT, related_name="judgments",
                                            to="assessments.document"),
                ),
                migrations.AlterField(
                    model_name="judgment", name="assessor",
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=models.deletion.PROTECT,
                                            related_name="judgments", to=settings.AUTH_USER_MODEL),
                ),
                migrations.AlterField(
                    model_name="judgmentevent", name="judgment",
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=models.deletion.PROTECT,
                                            related_name="events", to="assessments.judgment"),
                ),
                migrations.AlterField(
                    model_name="judgmentevent", name="assessor",
                    field=models.ForeignKey(db_constraint=False, on_delete=models.deletion.PROTECT, related_name="+",
                                            to=settings.AUTH_USER_MODEL),
                ),
            ],
            database_operations=[migrations.RunPython(check_references_per_statement, restore_foreign_keys)],
        ),
    ]
