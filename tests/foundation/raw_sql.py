"""Raw SQL against the judgment record, as someone with a database shell would type it: the tests of the database's
own rules (tamper evidence, per-statement checks, references) share these."""

from django.db import connection

from assessments.models import Judgment, JudgmentEvent

JUDGMENT, EVENT = Judgment._meta.db_table, JudgmentEvent._meta.db_table
EVENT_COLUMNS = "judgment_id, assessor_id, revision, labels, note, flagged, time_spent_ms, source, at"


def sql(statement: str, params=()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def at_commit() -> None:
    """Run the checks PostgreSQL defers to commit now."""
    sql("SET CONSTRAINTS ALL IMMEDIATE")
    sql("SET CONSTRAINTS ALL DEFERRED")
