from django.db import models


class QrelsSnapshot(models.Model):
    """An exported qrels file, numbered per campaign and never changed after it is written."""

    campaign = models.ForeignKey("assessments.Campaign", on_delete=models.CASCADE, related_name="qrels_snapshots")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=16)  # relevance | quality | stance
    phase = models.CharField(max_length=16)  # main | training | all
    rule = models.CharField(max_length=64)  # how several assessors' labels were aggregated
    file = models.FileField(upload_to="qrels/")
    line_count = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "-number"]
        constraints = [models.UniqueConstraint(fields=["campaign", "number"], name="qrelssnapshot_unique_number")]

    def __str__(self) -> str:
        return f"qrels #{self.number} ({self.kind}, {self.phase}, {self.rule})"
