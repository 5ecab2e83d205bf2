"""A pool source is one row per (entry, run) holding the positions of both orders, instead of one row per order."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.migrations.exceptions import IrreversibleError


def merge_orders(apps, schema_editor):
    PoolSource = apps.get_model("assessments", "PoolSource")
    kept: dict[tuple[int, int], object] = {}
    duplicates = []
    for source in PoolSource.objects.order_by("id").iterator():
        row = kept.setdefault((source.entry_id, source.run_id), source)
        setattr(row, f"{source.order}_position", source.position)
        if row is not source:
            duplicates.append(source.pk)
    PoolSource.objects.bulk_update(kept.values(), ["rank_position", "score_position"], batch_size=1000)
    PoolSource.objects.filter(pk__in=duplicates).delete()


def refuse_to_split_sources(apps, schema_editor):
    """Going back would need one row per order again, with `order` and `position` columns that have no value for
    the merged rows: refuse while any pool source is stored (an empty database may go back)."""
    if apps.get_model("assessments", "PoolSource").objects.exists():
        raise IrreversibleError(
            "0005 merged pool sources into one row per run; going back would lose their positions. "
            "Delete the pool first."
        )


class Migration(migrations.Migration):

    dependencies = [
        ('assessments', '0004_rankings_replace_run_entries'),
    ]

    operations = [
        migrations.AddField(
            model_name='poolsource',
            name='rank_position',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='poolsource',
            name='score_position',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(merge_orders, refuse_to_split_sources),
        migrations.RemoveConstraint(
            model_name='poolsource',
            name='poolsource_unique',
        ),
        migrations.RemoveField(
            model_name='poolsource',
            name='order',
        ),
        migrations.RemoveField(
            model_name='poolsource',
            name='position',
        ),
        migrations.AlterField(
            model_name='poolsource',
            name='entry',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='sources', to='assessments.poolentry'),
        ),
        migrations.AlterField(
            model_name='poolsource',
            name='run',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='pool_sources', to='assessments.run'),
        ),
        migrations.AddConstraint(
            model_name='poolsource',
            constraint=models.UniqueConstraint(fields=('entry', 'run'), name='poolsource_unique_run_per_entry'),
        ),
        # Undone first on the way back, so the refusal comes before the columns it needs fail to come back.
        migrations.RunPython(migrations.RunPython.noop, refuse_to_split_sources),
    ]
