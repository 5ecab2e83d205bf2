from django.db import models


class QrelsSnapshot(models.Model):
    """An exported qrels file, numbered per campaign and never changed after it is written.

    Its bytes live in the database (`QrelsSnapshotPart`), so a backup of the database alone restores every
    snapshot. `sha256` is their checksum at export; a download or a diff checks it before using them, and the
    database refuses to change either (migration 0009).
    """

    campaign = models.ForeignKey("assessments.Campaign", on_delete=models.PROTECT, related_name="qrels_snapshots")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=16)  # the dimension of the campaign's scheme it holds (labels.Dimension.name)
    phase = models.CharField(max_length=16)  # main | training | all
    rule = models.CharField(max_length=64)  # how several assessors' labels were aggregated
    line_count = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "-number"]
        constraints = [models.UniqueConstraint(fields=["campaign", "number"], name="qrelssnapshot_unique_number")]

    def __str__(self) -> str:
        return f"qrels #{self.number} ({self.kind}, {self.phase}, {self.rule})"

    @property
    def file_name(self) -> str:
        return f"{self.campaign.slug}-{self.number:04d}-{self.kind}-{self.phase}.qrels"


class QrelsSnapshotPart(models.Model):
    """A consecutive piece of a snapshot's file: pieces of a megabyte keep an export of a million lines, and
    its download, flat in memory."""

    snapshot = models.ForeignKey(QrelsSnapshot, on_delete=models.PROTECT, related_name="parts")
    index = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["snapshot", "index"], name="qrelssnapshotpart_unique_index")]

    def __str__(self) -> str:
        return f"part {self.index} of snapshot {self.snapshot_id}"
