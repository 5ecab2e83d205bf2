from django.db import models


class Run(models.Model):
    """A participant's run, identified by its tag within a campaign."""

    campaign = models.ForeignKey("assessments.Campaign", on_delete=models.CASCADE, related_name="runs")
    tag = models.CharField(max_length=255)
    team = models.CharField(max_length=200, blank=True)
    file_name = models.CharField(max_length=500, blank=True)
    has_stance = models.BooleanField(default=False)
    line_count = models.PositiveIntegerField(default=0)
    warnings = models.JSONField(default=list, blank=True)
    uploaded_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "tag"]
        constraints = [models.UniqueConstraint(fields=["campaign", "tag"], name="run_unique_tag_per_campaign")]

    def __str__(self) -> str:
        return self.tag


class RunEntry(models.Model):
    """One line of a run.

    `doc_id` is the id as submitted (no foreign key): runs name millions of documents whose text
    may never be loaded. Both orders a campaign may evaluate or pool by are stored at import:
    `rank_position` follows the submitted rank column (Touché's pooling) and `score_position`
    follows trec_eval (score descending, ties by document id descending), so depth-k pooling and
    nDCG@k read only the top rows instead of sorting millions.
    """

    # No database-level foreign keys: checking them cost more than half of a 4 M-line COPY, and the
    # import service (the only writer) resolves runs and topics inside its own transaction. Django
    # still cascades deletes. The composite indexes below lead with `run`, so it needs none of its own.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="entries", db_constraint=False, db_index=False)
    topic = models.ForeignKey(
        "assessments.Topic", on_delete=models.CASCADE, related_name="run_entries", db_constraint=False, db_index=False
    )
    doc_id = models.CharField(max_length=255)
    rank = models.IntegerField()
    score = models.FloatField()
    stance = models.CharField(max_length=16, blank=True)
    rank_position = models.PositiveIntegerField()
    score_position = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "topic", "doc_id"], name="runentry_unique_doc_per_topic"),
        ]
        indexes = [
            models.Index(fields=["run", "topic", "score_position"], name="runentry_by_score"),
            models.Index(fields=["run", "topic", "rank_position"], name="runentry_by_rank"),
        ]
