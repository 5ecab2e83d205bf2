from django.db import migrations

import assessments.models.fields
from assessments.metrics.evaluation import single_precision_order


def store_single_precision_orders(apps, schema_editor):
    """trec_eval 9's order for the rankings already stored: null unless two scores differ only beyond single
    precision."""
    Ranking = apps.get_model("assessments", "Ranking")
    changed = []
    for ranking in Ranking.objects.only("id", "docs", "scores").iterator(chunk_size=200):
        order = single_precision_order(ranking.docs, ranking.scores)
        if order is not None:
            ranking.by_single = [i + 1 for i in order]
            changed.append(ranking)
    Ranking.objects.bulk_update(changed, ["by_single"], batch_size=200)


class Migration(migrations.Migration):

    dependencies = [
        ("assessments", "0010_campaign_membership"),
    ]

    operations = [
        migrations.AddField(
            model_name="ranking",
            name="by_single",
            field=assessments.models.fields.ListField("integer", blank=True, null=True),
        ),
        migrations.RunPython(store_single_precision_orders, migrations.RunPython.noop),
    ]
