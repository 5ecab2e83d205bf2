"""Pool entries lose their index on the document alone: a build inserted into it once per entry, and the queries
that start from documents now go through their topics' (topic, document) index (see PoolEntry).

On PostgreSQL only. SQLite (the demo) would rebuild the table to drop an index, and with it the triggers earlier
migrations put on its tables; it keeps the index, as it keeps its foreign keys (0027)."""

import django.db.models.deletion
from django.db import migrations, models


def index_dropper(model_name: str, field_name: str) -> migrations.RunPython:
    """Drop the single-column index of `field_name` on PostgreSQL (restored on the way back)."""

    def model_and_field(apps):
        model = apps.get_model("assessments", model_name)
        return model, model._meta.get_field(field_name)

    def drop(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            model, field = model_and_field(apps)
            for name in schema_editor._constraint_names(model, [field.column], index=True, unique=False, type_=models.Index.suffix):
                schema_editor.execute(schema_editor._delete_index_sql(model, name))

    def restore(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            model, field = model_and_field(apps)
            schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))

    return migrations.RunPython(drop, restore)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0030_one_row_history_checks")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[index_dropper("PoolEntry", "document")],
            state_operations=[
                migrations.AlterField(
                    model_name="poolentry",
                    name="document",
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT,
                                            related_name="pool_entries", to="assessments.document"),
                ),
            ],
        ),
    ]
