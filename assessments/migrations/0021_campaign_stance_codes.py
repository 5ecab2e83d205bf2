"""A campaign's stance codes: the codes its runs write in column 2 for the values of its stance dimension.

Touché 2023 Task 2 runs wrote SUP, REF, NEU and NO where the scheme's causal stance says SUPPORT, REFUTE, NEUTRAL and
NO; a campaign maps each code to a value (`{"SUP": "SUPPORT", ...}`) and run imports store the value. Campaigns of
that preset made before this start with the lab's codes, as new ones do (assessments.labels.PRESET_STANCE_CODES).
"""

from django.db import migrations, models

# As assessments.labels.PRESET_STANCE_CODES was when this migration was written.
_PRESET_CODES = {"touche-2023-task2": {"SUP": "SUPPORT", "REF": "REFUTE", "NEU": "NEUTRAL", "NO": "NO"}}


def preset_codes(apps, schema_editor):
    Campaign = apps.get_model("assessments", "Campaign")
    for preset, codes in _PRESET_CODES.items():
        Campaign.objects.filter(preset=preset).update(stance_codes=codes)


# SQLite would remake the campaign table for a column with a default, and renaming the copy into place fails on the
# label triggers that read it (0020): a plain ADD COLUMN with a database default needs no copy, on either database.
_ADD_COLUMN = {
    "postgresql": "ALTER TABLE assessments_campaign ADD COLUMN stance_codes jsonb NOT NULL DEFAULT '{}'",
    "sqlite": """ALTER TABLE assessments_campaign ADD COLUMN "stance_codes" text NOT NULL DEFAULT '{}' CHECK (JSON_VALID("stance_codes"))""",
}


def add_column(apps, schema_editor):
    schema_editor.execute(_ADD_COLUMN[schema_editor.connection.vendor])


def drop_column(apps, schema_editor):
    schema_editor.execute("ALTER TABLE assessments_campaign DROP COLUMN stance_codes")


class Migration(migrations.Migration):
    dependencies = [("assessments", "0020_labels_by_dimension")]
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddField(
                model_name="campaign", name="stance_codes", field=models.JSONField(blank=True, default=dict),
            )],
            database_operations=[migrations.RunPython(add_column, drop_column)],
        ),
        migrations.RunPython(preset_codes, migrations.RunPython.noop),
    ]
