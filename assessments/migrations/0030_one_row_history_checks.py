"""A label save's history checks probe primary keys with plans PL/pgSQL keeps, instead of planning 0027's queries.

0027 checks the history once per statement: `assessments_judgment_history_written` (a judgment's revision needs its
history row) and `assessments_judgmentevent_in_order` (a history row follows the one before it) each EXECUTE a
query planned for the statement's rows, so that a million-row import gets joins fit for its size. A label save
writes one judgment and one history row, and planning those two queries was most of the 0.22 ms each function took
(`pg_stat_user_functions`, with track_functions = pl), about 0.45 ms of a save's 0.7 ms of checks. A statement of
one row now takes a path of its own: the row read into variables, then index probes by key, static SQL whose plans
the session keeps. What it decides is what 0027's queries decide for that row; a row that may be refused goes on
to 0027's detailed query, so the refusals and their messages are the same. Larger statements are unchanged.

Single-table probes with the values as parameters, not joins: the functions run with enable_nestloop off (0027),
under which a join of one row with the history would be planned as a hash join over all of it.
"""

from importlib import import_module

from django.db import migrations

_0024 = import_module("assessments.migrations.0024_history_in_order_kept_snapshots_and_texts")
_0027 = import_module("assessments.migrations.0027_set_based_label_checks")

_KEPT = "({row}.labels, {row}.note, {row}.flagged)"  # what history keeps of a judgment (0027's _E, _N, _O)
_STATEMENT_START = """  IF low IS NULL THEN
    RETURN NULL;
  END IF;
"""
# history_written, one judgment (ids are unique, so low = high is one row): an update that changes nothing history
# keeps is let through, as 0027's WHEN is; otherwise the commit checks the judgment unless its history row is there.
_ONE_JUDGMENT = f"""  IF low = high THEN
    SELECT n.revision, n.labels, n.note, n.flagged INTO one FROM new_rows n;
    IF TG_OP = 'UPDATE' THEN
      SELECT o.id, o.revision, o.labels, o.note, o.flagged INTO prior FROM old_rows o;
      IF prior.id = low AND prior.revision = one.revision AND {_KEPT.format(row="prior")} IS NOT DISTINCT FROM {_KEPT.format(row="one")} THEN
        RETURN NULL;
      END IF;
    END IF;
    PERFORM 1 FROM assessments_judgmentevent e
     WHERE e.judgment_id = low AND e.revision = one.revision AND {_0027._E} IS NOT DISTINCT FROM {_KEPT.format(row="one")};
    IF NOT FOUND THEN
      INSERT INTO {_0027.CHECKS} (judgment_id) VALUES (low);
    END IF;
    RETURN NULL;
  END IF;
"""
# in_order, one history row: the commit checks it if its judgment is not at its revision yet; it is in order if it
# is the first revision, or the one before it is kept and dated no later (or it is dated within its transaction);
# if not, 0027's detailed query after the fast path says why.
_IN_ORDER_FIRST = """  EXECUTE $q$
    WITH ahead AS ("""
_ONE_EVENT = f"""  IF low = high AND (SELECT count(*) FROM (SELECT FROM new_rows LIMIT 2) few) = 1 THEN
    SELECT n.revision, n.at INTO one FROM new_rows n;
    PERFORM 1 FROM assessments_judgment j WHERE j.id = low AND j.revision >= one.revision;
    IF NOT FOUND THEN
      INSERT INTO {_0027.CHECKS} (judgment_id, revision) VALUES (low, one.revision);
    END IF;
    IF one.revision = 1 THEN
      RETURN NULL;
    ELSIF one.revision > 1 THEN
      SELECT e.at INTO before_at FROM assessments_judgmentevent e WHERE e.judgment_id = low AND e.revision = one.revision - 1;
      IF FOUND AND NOT (one.at < before_at AND one.at < transaction_timestamp()) THEN
        RETURN NULL;
      END IF;
    END IF;
  ELSE
"""
_IN_ORDER_FIRST_END = """  INTO bad USING low, high;
  IF bad.judgment_id IS NULL THEN
    RETURN NULL;
  END IF;
"""


def _functions(schema: str) -> tuple[str, str]:
    """0027's history_written and in_order, as CREATE OR REPLACE statements."""
    sql = _0027._postgres_forward(schema)
    found = []
    for name in ("assessments_judgment_history_written", "assessments_judgmentevent_in_order"):
        start = sql.index(f"FUNCTION {name}()")
        end = sql.index("\n", sql.index("$$ LANGUAGE plpgsql", start)) + 1
        found.append("CREATE OR REPLACE " + sql[start:end])
    return found[0], found[1]


def _with_one_row_paths(schema: str) -> str:
    written, in_order = _functions(schema)
    assert written.count(_STATEMENT_START) == 1 and in_order.count(_STATEMENT_START) == 1
    written = written.replace("DECLARE low bigint; high bigint;", "DECLARE low bigint; high bigint; one record; prior record;")
    written = written.replace(_STATEMENT_START, _STATEMENT_START + _ONE_JUDGMENT)
    in_order = in_order.replace("DECLARE bad record; low bigint; high bigint;",
                                "DECLARE bad record; low bigint; high bigint; one record; before_at timestamptz;")
    assert in_order.count(_IN_ORDER_FIRST) == 1 and in_order.count(_IN_ORDER_FIRST_END) == 1
    in_order = in_order.replace(_IN_ORDER_FIRST, _ONE_EVENT + _IN_ORDER_FIRST)
    in_order = in_order.replace(_IN_ORDER_FIRST_END, _IN_ORDER_FIRST_END.replace("  END IF;\n", "  END IF;\n  END IF;\n", 1))
    return written + in_order


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_with_one_row_paths(_0024._schema(schema_editor)), params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("".join(_functions(_0024._schema(schema_editor))), params=None)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0029_assignment_item_positions")]
    operations = [migrations.RunPython(forward, backward)]
