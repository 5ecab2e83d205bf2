"""Qrels snapshots move from files under MEDIA_ROOT/qrels/ into the database, so that a database backup alone
restores them, and the database refuses to change a snapshot's bytes or checksum once written.

Existing files are copied in; a file that cannot be read is reported and its snapshot keeps no bytes, which a
download then refuses as not matching its checksum (the truth: the file is gone). The files themselves are
left where they are.
"""

from functools import partial

import django.db.models.deletion
from django.db import migrations, models

PART_BYTES = 1 << 20

POSTGRES_FORWARD = """
CREATE TRIGGER assessments_qrelssnapshotpart_unchanged BEFORE UPDATE ON assessments_qrelssnapshotpart
  FOR EACH ROW EXECUTE FUNCTION assessments_refuse('qrels snapshots never change after export');
CREATE TRIGGER assessments_qrelssnapshot_unchanged BEFORE UPDATE ON assessments_qrelssnapshot FOR EACH ROW
  WHEN ((NEW.campaign_id, NEW.number, NEW.kind, NEW.phase, NEW.rule, NEW.line_count, NEW.sha256)
        IS DISTINCT FROM (OLD.campaign_id, OLD.number, OLD.kind, OLD.phase, OLD.rule, OLD.line_count, OLD.sha256))
  EXECUTE FUNCTION assessments_refuse('qrels snapshots never change after export');
"""
POSTGRES_BACKWARD = """
DROP TRIGGER assessments_qrelssnapshot_unchanged ON assessments_qrelssnapshot;
DROP TRIGGER assessments_qrelssnapshotpart_unchanged ON assessments_qrelssnapshotpart;
"""


def copy_files_in(apps, schema_editor):
    Snapshot = apps.get_model("assessments", "QrelsSnapshot")
    Part = apps.get_model("assessments", "QrelsSnapshotPart")
    for snapshot in Snapshot.objects.exclude(file="").iterator():
        try:
            with snapshot.file.open("rb") as stored:
                for index, data in enumerate(iter(partial(stored.read, PART_BYTES), b"")):
                    Part.objects.create(snapshot=snapshot, index=index, data=data)
        except OSError as exc:
            print(f"\n  qrels snapshot {snapshot.pk}: file {snapshot.file.name} not copied ({exc})")
    if schema_editor.connection.vendor == "postgresql":
        # The new rows' key checks now, not at commit: the table is altered next, in the same transaction.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def write_files_out(apps, schema_editor):
    from django.core.files.base import ContentFile

    Snapshot = apps.get_model("assessments", "QrelsSnapshot")
    for snapshot in Snapshot.objects.select_related("campaign").iterator():
        data = b"".join(bytes(part) for part in snapshot.parts.order_by("index").values_list("data", flat=True))
        name = f"{snapshot.campaign.slug}-{snapshot.number:04d}-{snapshot.kind}-{snapshot.phase}.qrels"
        snapshot.file.save(name, ContentFile(data), save=True)


def add_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_FORWARD, params=None)


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_BACKWARD, params=None)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0008_tamper_evident_judgments")]

    operations = [
        migrations.CreateModel(
            name="QrelsSnapshotPart",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("index", models.PositiveIntegerField()),
                ("data", models.BinaryField()),
                ("snapshot", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="parts", to="assessments.qrelssnapshot")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("snapshot", "index"), name="qrelssnapshotpart_unique_index")],
            },
        ),
        migrations.RunPython(copy_files_in, write_files_out),
        migrations.RemoveField(model_name="qrelssnapshot", name="file"),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
