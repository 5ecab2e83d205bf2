from pathlib import Path

from django.conf import settings
from django.db import models


class Job(models.Model):
    """Long work (imports, pooling, evaluation) and its progress, polled by the organiser's page.

    A job always ends: services.jobs runs it and writes a heartbeat while it does, and services.job_queue's sweep
    fails a running job whose heartbeat stopped (its worker was killed or cut off) and hands a queued job whose
    message the broker lost to a worker again. Only those two modules change a job's status.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    UNFINISHED = (Status.QUEUED, Status.RUNNING)

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
    # When its task was last handed to the broker: the sweep hands it over again if no worker took it.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The run in progress: how many runs were claimed (a retry starts another), the process that runs the latest
    # one ("host pid-namespace pid"), and when it last said it is alive.
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=255, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(done__gte=0) & models.Q(total__gte=0), name="job_progress_non_negative"),
        ]
        indexes = [
            # The sweep's question, every few seconds: which jobs have not ended?
            models.Index(fields=["status"], condition=models.Q(status__in=["queued", "running"]), name="job_unfinished"),
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

    @property
    def is_unfinished(self) -> bool:
        return self.status in self.UNFINISHED

    @property
    def upload_folder(self) -> Path:
        """Where the files uploaded for this job are kept until it ends (services.imports.uploads fills it)."""
        return Path(settings.MEDIA_ROOT) / "uploads" / str(self.pk)

    @property
    def can_retry(self) -> bool:
        """A failed job can run again while its inputs are there: the uploaded files of a failed job are kept
        for a while (JOB_FILES_KEPT_HOURS) unless a line of them was wrong; other kinds read the database. A job
        refused until someone decides (`result["confirm"]`) would fail the same way: it is confirmed instead."""
        return self._inputs_kept and not self.result.get("confirm")

    @property
    def can_confirm(self) -> bool:
        """A failed job that asked for a decision (the changes it listed, to confirm) and still has its inputs."""
        return self._inputs_kept and bool(self.result.get("confirm"))

    @property
    def _inputs_kept(self) -> bool:
        return self.status == self.Status.FAILED and (not self.params.get("files") or self.upload_folder.is_dir())
