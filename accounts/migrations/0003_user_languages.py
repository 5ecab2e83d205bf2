"""The languages an assessor reads, for giving out the items of multilingual classification campaigns."""

from django.db import migrations, models

# SQLite would remake the user table for a column with a default, and renaming the copy into place fails on the
# label triggers that read it: a plain ADD COLUMN with a database default needs no copy, on either database.
_ADD_COLUMN = {
    "postgresql": "ALTER TABLE accounts_user ADD COLUMN languages jsonb NOT NULL DEFAULT '[]'",
    "sqlite": """ALTER TABLE accounts_user ADD COLUMN "languages" text NOT NULL DEFAULT '[]' CHECK (JSON_VALID("languages"))""",
}


def add_column(apps, schema_editor):
    schema_editor.execute(_ADD_COLUMN[schema_editor.connection.vendor])


def drop_column(apps, schema_editor):
    schema_editor.execute("ALTER TABLE accounts_user DROP COLUMN languages")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_source_role")]
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddField(
                model_name="user", name="languages", field=models.JSONField(blank=True, default=list),
            )],
            database_operations=[migrations.RunPython(add_column, drop_column)],
        ),
    ]
