"""History rows lose their index on the assessor: nothing reads them by assessor alone, and a million-line qrels
import spent a second of its 20 inserting into it (see JudgmentEvent). PostgreSQL only, as 0031."""

from importlib import import_module

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

_0031 = import_module("assessments.migrations.0031_pool_entries_unindexed_by_document")


class Migration(migrations.Migration):
    dependencies = [
        ("assessments", "0031_pool_entries_unindexed_by_document"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[_0031.index_dropper("JudgmentEvent", "assessor")],
            state_operations=[
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="assessor",
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT,
                                            related_name="+", to=settings.AUTH_USER_MODEL),
                ),
            ],
        ),
    ]
