"""Statistics on how judgments spread over assessors and topics, for the queue query's plan.

PostgreSQL estimates a filter on `assessor_id` and `topic_id` of assessments_judgment as if the two were
independent; for an assessor outside the column's most common values it then expects about two rows and nests
loops over pool × judgments (26–29 ms a queue instead of 2, bench/judge_http.py --images). Extended statistics on
the pair let it see that an assessor's judgments sit in a few topics. PostgreSQL only: SQLite has no such thing.
"""

from django.db import migrations

NAME = "assessments_judgment_assessor_topic_stats"


def create(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE STATISTICS IF NOT EXISTS {NAME} (dependencies, mcv) ON assessor_id, topic_id FROM assessments_judgment"
        )
        schema_editor.execute("ANALYZE assessments_judgment")


def drop(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP STATISTICS IF EXISTS {NAME}")


class Migration(migrations.Migration):
    dependencies = [("assessments", "0024_history_in_order_kept_snapshots_and_texts")]
    operations = [migrations.RunPython(create, drop)]
