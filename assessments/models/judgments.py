from django.db import models

from .campaigns import Phase


class Judgment(models.Model):
    """An assessor's current labels for one document of one topic.

    `labels` maps each dimension of the campaign's scheme that has a value to that value (`assessments.labels`);
    a dimension without a value is absent, so a judgment may hold only a flag and a note. Only
    `assessments.services.judging` writes it, and every write appends a JudgmentEvent, so no label is ever lost.
    The database checks the labels against the campaign's scheme, refuses deletes, and refuses a commit that
    changed labels without a history row for the new revision (migrations 0008 and 0020), so neither a bad value
    nor a silent rewrite gets in by any path.
    """

    class Source(models.TextChoices):
        WEB = "web", "Judge page"
        API = "api", "API"
        IMPORT = "import", "Imported qrels"
        DUPLICATE = "duplicate", "Copied to a duplicate"

    # PROTECT: a topic (and so a campaign) with judgments cannot be deleted, only archived. The references are checked
    # by the database once per statement, not by per-row foreign keys (migration 0027); topic and assessor lookups use
    # the indexes below, which start with them.
    topic = models.ForeignKey("assessments.Topic", on_delete=models.PROTECT, related_name="judgments", db_constraint=False, db_index=False)
    document = models.ForeignKey("assessments.Document", on_delete=models.PROTECT, related_name="judgments", db_constraint=False)
    assessor = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="judgments", db_constraint=False, db_index=False)
    phase = models.CharField(max_length=16, choices=Phase.choices)
    labels = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)
    flagged = models.BooleanField(default=False)  # "unsure / needs discussion"
    time_spent_ms = models.PositiveIntegerField(default=0)  # active time, summed over visits
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.WEB)
    revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assessor", "topic", "document"], name="judgment_one_per_assessor_topic_doc"),
            models.CheckConstraint(
                condition=models.Q(phase__in=[Phase.TRAINING, Phase.MAIN]), name="judgment_phase_is_training_or_main"
            ),
            models.CheckConstraint(condition=models.Q(revision__gte=1), name="judgment_revision_positive"),
        ]
        indexes = [models.Index(fields=["topic", "document"], name="judgment_by_topic_doc")]

    def __str__(self) -> str:
        return f"judgment {self.pk} (topic {self.topic_id}, document {self.document_id}, assessor {self.assessor_id})"


class JudgmentEvent(models.Model):
    """One change to a judgment, append-only (the database refuses UPDATE, DELETE and TRUNCATE on this table)."""

    # Checked once per statement, as Judgment's references (migration 0027); judgment lookups use the unique index below.
    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT, related_name="events", db_constraint=False, db_index=False)
    # No index on the assessor: nothing reads history by assessor alone (pages and exports go by campaign, through
    # the judgment), and a million-line qrels import spent a second inserting into it; removing a user, which the
    # history's assessors refuse, reads the history whole instead.
    assessor = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="+", db_constraint=False, db_index=False)
    revision = models.PositiveIntegerField()
    labels = models.JSONField(default=dict, blank=True)  # the judgment's labels as of this revision
    note = models.TextField(blank=True)
    flagged = models.BooleanField(default=False)
    time_spent_ms = models.PositiveIntegerField(default=0)
    source = models.CharField(max_length=16, choices=Judgment.Source.choices)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judgment", "revision"]
        constraints = [models.UniqueConstraint(fields=["judgment", "revision"], name="judgmentevent_unique_revision")]
        indexes = [models.Index(fields=["at"], name="judgmentevent_by_time")]

    def __str__(self) -> str:
        return f"judgment {self.judgment_id} revision {self.revision}"
