"""Pool entries lose their index on the document alone: a build inserted into it once per entry, and the queries
that start from documents now go through their topics' (topic, document) index (see PoolEntry)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('assessments', '0030_one_row_history_checks'),
    ]

    operations = [
        migrations.AlterField(
            model_name='poolentry',
            name='document',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='pool_entries', to='assessments.document'),
        ),
    ]
