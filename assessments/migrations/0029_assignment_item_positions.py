"""An assignment's item carries its place in the assignment's queue and its entry's document, with an index
(assignment, queue_position) that holds the entry and the document too, so an overlap slice's or a coder's queue is read
from the assignment's own rows: no join with the topic's pool and no sort (AssignmentItem's docstring,
bench/label_page.py).

Rows there already are numbered in queue order (pool `order`, then entry id) and given their entry's document
before the columns become NOT NULL. Going back drops the index and the columns: nothing is lost, the entries hold
both.
"""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE assessments_assignmentitem SET queue_position = numbered.position, entry_document_id = numbered.document_id
  FROM (SELECT i.id, e.document_id,
               row_number() OVER (PARTITION BY i.assignment_id ORDER BY e."order", e.id) AS position
          FROM assessments_assignmentitem i JOIN assessments_poolentry e ON e.id = i.entry_id) numbered
 WHERE assessments_assignmentitem.id = numbered.id
"""  # UPDATE ... FROM: PostgreSQL, and SQLite from 3.33


class Migration(migrations.Migration):

    dependencies = [
        ("assessments", "0028_judgment_fixed_fields"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignmentitem",
            name="queue_position",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="assignmentitem",
            name="entry_document",
            field=models.ForeignKey(
                db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+", to="assessments.document",
            ),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop, elidable=True),
        migrations.AlterField(
            model_name="assignmentitem",
            name="queue_position",
            field=models.PositiveIntegerField(),
        ),
        migrations.AlterField(
            model_name="assignmentitem",
            name="entry_document",
            field=models.ForeignKey(
                db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+", to="assessments.document",
            ),
        ),
        migrations.AddIndex(
            model_name="assignmentitem",
            index=models.Index(
                fields=["assignment", "queue_position"], include=("entry", "entry_document"), name="assignmentitem_queue"
            ),
        ),
    ]
