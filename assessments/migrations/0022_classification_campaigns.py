"""Classification campaigns (Touché 2023 Task 4): a campaign's kind, a topic's metadata (a proposal's language and
English translation) and a run's predictions (a submission's label per item).

Every existing campaign is a ranking campaign; their topics have no metadata and their runs no predictions.
"""

from django.db import migrations, models

# SQLite would remake each table for a column with a default, and renaming the copy into place fails on the label
# triggers that read these tables (0020): a plain ADD COLUMN with a database default needs no copy, on either database.
_COLUMNS = [
    ("assessments_campaign", "kind", "varchar(16)", "'ranking'"),
    ("assessments_topic", "metadata", "json", "'{}'"),
    ("assessments_run", "predictions", "json", "'{}'"),
]


def _add(table: str, column: str, kind: str, default: str, vendor: str) -> str:
    if kind == "json":
        if vendor == "postgresql":
            return f"ALTER TABLE {table} ADD COLUMN {column} jsonb NOT NULL DEFAULT {default}"
        return f'ALTER TABLE {table} ADD COLUMN "{column}" text NOT NULL DEFAULT {default} CHECK (JSON_VALID("{column}"))'
    return f'ALTER TABLE {table} ADD COLUMN "{column}" {kind} NOT NULL DEFAULT {default}'


def add_columns(apps, schema_editor):
    for table, column, kind, default in _COLUMNS:
        schema_editor.execute(_add(table, column, kind, default, schema_editor.connection.vendor))


def drop_columns(apps, schema_editor):
    for table, column, _, _ in _COLUMNS:
        schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN {column}")


# As assessments.labels.PRESETS was when this migration was written.
_PRESETS = [
    ("touche-2020-task1", "Touché 2020 Task 1: argument retrieval from debate portals (relevance with −2 spam, quality)"),
    ("touche-2020-task2", "Touché 2020 Task 2: comparative argument retrieval from ClueWeb12 (relevance, quality)"),
    ("touche-2021-task1", "Touché 2021 Task 1: argument retrieval for controversial questions (relevance −2 spam, 0–3; quality 0–3)"),
    ("touche-2021-task2", "Touché 2021 Task 2: comparative argument retrieval (relevance, quality)"),
    ("touche-2022-task1", "Touché 2022 Task 1: argument gists, pairs of sentences (relevance, quality, coherence)"),
    ("touche-2022-task2", "Touché 2022 Task 2: comparative passages (relevance, quality, stance towards the objects)"),
    ("touche-2023-task1", "Touché 2023 Task 1: argument retrieval for controversial questions (relevance, quality, stance)"),
    ("touche-2023-task2", "Touché 2023 Task 2: evidence retrieval for causal questions (direction, relevance, evidence, causal stance)"),
    ("touche-2023-task4", "Touché 2023 Task 4: stance of a comment towards its proposal (In favor, Against, Other), multilingual"),
    ("custom", "Custom scheme"),
]


class Migration(migrations.Migration):
    dependencies = [("assessments", "0021_campaign_stance_codes")]
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="campaign", name="kind", field=models.CharField(
                        choices=[("ranking", "Ranked retrieval (topics, runs, pools)"),
                                 ("classification", "Classification of items (comments beside their proposal)")],
                        default="ranking", max_length=16,
                    ),
                ),
                migrations.AddField(model_name="topic", name="metadata", field=models.JSONField(blank=True, default=dict)),
                migrations.AddField(model_name="run", name="predictions", field=models.JSONField(blank=True, default=dict)),
                # The preset's choices: the label schemes' names, now with Touché 2023 Task 4's (no column changes).
                migrations.AlterField(
                    model_name="campaign", name="preset", field=models.CharField(choices=_PRESETS, max_length=32),
                ),
            ],
            database_operations=[migrations.RunPython(add_columns, drop_columns)],
        ),
    ]
