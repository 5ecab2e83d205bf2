from django.db import models


class Job(models.Model):
    """Long work (imports, pooling, evaluation) and its progress, polled by the organiser's page."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    campaign = models.ForeignKey("assessments.Campaign", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    params = models.JSONField(default=dict, blank=True)
    done = models.BigIntegerField(default=0)
    total = models.BigIntegerField(default=0)
    message = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    result = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(done__gte=0) & models.Q(total__gte=0), name="job_progress_non_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def title(self) -> str:
        """"import_runs" → "Import runs", for pages that list jobs of every kind."""
        return self.kind.replace("_", " ").capitalize()

    @property
    def percent(self) -> int:
        return min(100, int(100 * self.done / self.total)) if self.total else (100 if self.status == self.Status.SUCCEEDED else 0)
