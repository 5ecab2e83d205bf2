"""Runs are stored as one Ranking row per run and topic (parallel lists) instead of one RunEntry row per line."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.migrations.exceptions import IrreversibleError

import assessments.models.fields

_LIST_COLUMNS = ("docs", "ranks", "scores", "stances", "by_rank")


def rankings_from_run_entries(apps, schema_editor):
    """Regroup the stored lines: lists in score order (score_position), and the rank order as indices into them."""
    RunEntry, Ranking = apps.get_model("assessments", "RunEntry"), apps.get_model("assessments", "Ranking")
    pairs = RunEntry.objects.values_list("run_id", "topic_id").distinct()
    for run_id, topic_id in pairs.iterator():
        rows = list(
            RunEntry.objects.filter(run_id=run_id, topic_id=topic_id)
            .order_by("score_position")
            .values_list("doc_id", "rank", "score", "stance", "rank_position")
        )
        by_rank = [index for _, index in sorted((row[4], index) for index, row in enumerate(rows, 1))]
        Ranking.objects.create(
            run_id=run_id, topic_id=topic_id, length=len(rows),
            docs=[row[0] for row in rows], ranks=[row[1] for row in rows], scores=[row[2] for row in rows],
            stances=[row[3] or None for row in rows] if any(row[3] for row in rows) else None,
            by_rank=None if by_rank == list(range(1, len(rows) + 1)) else by_rank,
        )


def refuse_to_drop_rankings(apps, schema_editor):
    """Going back drops the rankings; their lines are not written back as RunEntry rows, so refuse while any
    are stored (an empty database may go back)."""
    if apps.get_model("assessments", "Ranking").objects.exists():
        raise IrreversibleError(
            "0004 stores runs as rankings; going back would drop every stored run line. Delete the runs first."
        )


def compress_with_lz4(apps, schema_editor):
    """lz4 stores and reads the long lists about twice as fast as PostgreSQL's default (pglz)."""
    if schema_editor.connection.vendor == "postgresql":
        for column in _LIST_COLUMNS:
            schema_editor.execute(f"ALTER TABLE assessments_ranking ALTER COLUMN {column} SET COMPRESSION lz4")


class Migration(migrations.Migration):

    dependencies = [
        ('assessments', '0003_runentry_without_foreign_key_checks'),
    ]

    operations = [
        migrations.CreateModel(
            name='Ranking',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('length', models.PositiveIntegerField()),
                ('docs', assessments.models.fields.ListField('text')),
                ('ranks', assessments.models.fields.ListField('integer')),
                ('scores', assessments.models.fields.ListField('double precision')),
                ('stances', assessments.models.fields.ListField('text', blank=True, null=True)),
                ('by_rank', assessments.models.fields.ListField('integer', blank=True, null=True)),
                ('run', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='rankings', to='assessments.run')),
                ('topic', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rankings', to='assessments.topic')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('run', 'topic'), name='ranking_unique_run_topic')],
            },
        ),
        # Going back drops the table, and its compression setting with it.
        migrations.RunPython(compress_with_lz4, migrations.RunPython.noop),
        migrations.RunPython(rankings_from_run_entries, refuse_to_drop_rankings),
        migrations.DeleteModel(name='RunEntry'),
    ]
