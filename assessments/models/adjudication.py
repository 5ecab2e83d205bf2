from django.db import models


class Adjudication(models.Model):
    """The final label of one topic's document where its assessors disagreed (or one flagged it), decided by an
    adjudicator with a reason: a judgment of its own kind, which the `adjudicated` qrels rule prefers.

    Only `assessments.services.adjudication` writes it, and every write appends an AdjudicationEvent. The labels
    are checked against the campaign's scheme by the same trigger as judgments', and the history is append-only
    (migrations 0012 and 0020).
    """

    topic = models.ForeignKey("assessments.Topic", on_delete=models.PROTECT, related_name="adjudications")
    document = models.ForeignKey("assessments.Document", on_delete=models.PROTECT, related_name="adjudications")
    labels = models.JSONField(default=dict, blank=True)  # keyed by the scheme's dimensions, as Judgment.labels
    reason = models.TextField()
    adjudicator = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="+")
    revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "document"], name="adjudication_one_per_topic_doc"),
            models.CheckConstraint(condition=~models.Q(reason=""), name="adjudication_has_reason"),
        ]

    def __str__(self) -> str:
        return f"adjudication of document {self.document_id} for topic {self.topic_id}"


class AdjudicationEvent(models.Model):
    """One decision of an adjudication, append-only (the database refuses UPDATE, DELETE and TRUNCATE)."""

    adjudication = models.ForeignKey(Adjudication, on_delete=models.PROTECT, related_name="events")
    adjudicator = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="+")
    revision = models.PositiveIntegerField()
    labels = models.JSONField(default=dict, blank=True)  # keyed by the scheme's dimensions, as Judgment.labels
    reason = models.TextField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["adjudication", "revision"]
        constraints = [models.UniqueConstraint(fields=["adjudication", "revision"], name="adjudicationevent_unique_revision")]

    def __str__(self) -> str:
        return f"adjudication {self.adjudication_id} revision {self.revision}"
