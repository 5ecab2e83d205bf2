from django.db import models
from django.utils import timezone


class AuditEvent(models.Model):
    """One change of a campaign's state: who, when, what, and the values before and after.

    Written only by `assessments.services.audit.record`, which the services that make a change call inside the
    transaction of that change, so a change and its event are stored together or not at all. Append-only: the
    database refuses UPDATE, DELETE and TRUNCATE on this table (migration 0012), so a campaign with a history
    cannot be deleted either.
    """

    class Action(models.TextChoices):
        CAMPAIGN_CREATED = "campaign.created", "Campaign created"
        CAMPAIGN_SETTINGS = "campaign.settings", "Campaign settings changed"
        MEMBER_ADDED = "member.added", "Member added"
        MEMBER_CHANGED = "member.changed", "Member's role changed"
        MEMBER_REMOVED = "member.removed", "Member removed"
        PHASE_CHANGED = "phase.changed", "Phase changed"
        ROUND_CLOSED = "training.round_closed", "Training round closed"
        ROUND_OPENED = "training.round_opened", "Training round opened"
        TOPICS_MARKED = "topics.marked", "Topics marked for a phase"
        TOPICS_IMPORTED = "import.topics", "Topics imported"
        TOPIC_CHANGED = "topic.changed", "Judged topic changed"
        DOCUMENTS_IMPORTED = "import.documents", "Documents imported"
        RUNS_IMPORTED = "import.runs", "Runs imported"
        QRELS_IMPORTED = "import.qrels", "Qrels imported"
        POOL_BUILT = "pool.built", "Pool built"
        ASSIGNED = "assignment.made", "Topics assigned"
        OVERLAP_DRAWN = "assignment.overlap", "Overlap drawn"
        WITHDRAWN = "assignment.withdrawn", "Assignment withdrawn"
        QRELS_EXPORTED = "qrels.exported", "Qrels exported"
        ADJUDICATED = "adjudication", "Label adjudicated"
        ARCHIVED = "campaign.archived", "Campaign archived"
        RESTORED = "campaign.restored", "Campaign taken out of the archive"
        EXPORTED = "campaign.exported", "Campaign exported to an archive file"
        IMPORTED = "campaign.imported", "Campaign imported from an archive file"
        MACHINE_JUDGE_ADDED = "machine.judge_added", "Machine judge added"
        MACHINE_PROMPT = "machine.prompt", "Machine judge's prompt or calibration changed"
        MACHINE_JUDGED = "machine.judged", "Machine judge run"

    # PROTECT, not CASCADE: the rows cannot be deleted, so neither can what they record.
    campaign = models.ForeignKey("assessments.Campaign", on_delete=models.PROTECT, related_name="audit_events")
    at = models.DateTimeField(default=timezone.now)
    actor = models.ForeignKey(  # null: a management command, run by whoever has the server
        "accounts.User", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    action = models.CharField(max_length=32, choices=Action.choices)
    subject = models.CharField(max_length=300, blank=True)  # what changed, for people: "topic 7", "alice"
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)  # file names, counts, checksums …

    class Meta:
        ordering = ["campaign", "-at", "-id"]
        indexes = [models.Index(fields=["campaign", "-at", "-id"], name="auditevent_timeline")]

    def __str__(self) -> str:
        return f"{self.action} in campaign {self.campaign_id} at {self.at:%Y-%m-%d %H:%M:%S}"
