from django.db import models

from .fields import ListField


class Run(models.Model):
    """A participant's run, identified by its tag within a campaign."""

    campaign = models.ForeignKey("assessments.Campaign", on_delete=models.CASCADE, related_name="runs")
    tag = models.CharField(max_length=255)
    team = models.CharField(max_length=200, blank=True)
    file_name = models.CharField(max_length=500, blank=True)
    has_stance = models.BooleanField(default=False)
    line_count = models.PositiveIntegerField(default=0)
    warnings = models.JSONField(default=list, blank=True)
    # A classification campaign's submission: the label it predicts for each item, {comment id: label}. Scored
    # whole against the decided labels (services.classification), so one value holds it, not a row per item.
    predictions = models.JSONField(default=dict, blank=True)
    uploaded_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "tag"]
        constraints = [models.UniqueConstraint(fields=["campaign", "tag"], name="run_unique_tag_per_campaign")]

    def __str__(self) -> str:
        return self.tag


class Ranking(models.Model):
    """One run's ranked list for one topic: every line of the run for that topic, as parallel lists.

    The lists are in trec_eval's order (score descending, ties by document id descending; see
    metrics.evaluation.order_run), so the first k elements are what nDCG@k reads. `by_rank` lists the
    1-based indices of the same lines in the order of the submitted rank column (Touché's pooling order),
    or is null when both orders agree. `by_single` does the same for trec_eval 9's order (scores compared in
    single precision, as pytrec_eval does: see metrics.evaluation), null when it is the score order, as it is
    unless two scores differ only beyond single precision. All orders are computed once, at import, so no
    evaluation reads a score.

    One row per run and topic instead of one per line: Touché's largest campaign (84 runs × 50 topics ×
    1,000 lines) is 4,200 rows, which COPY stores in a second or two where 4.2 M rows and their indexes took
    more than twenty, and a top-k read slices arrays instead of walking an index. `docs` holds ids as
    submitted (no foreign key): runs name millions of documents whose text may never be loaded.
    """

    # The unique (run, topic) index serves lookups by run; a second index on run alone would only slow writes.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="rankings", db_index=False)
    topic = models.ForeignKey("assessments.Topic", on_delete=models.CASCADE, related_name="rankings")
    length = models.PositiveIntegerField()
    docs = ListField("text")
    ranks = ListField("integer")
    scores = ListField("double precision")
    stances = ListField("text", null=True, blank=True)  # null when no line of the run has one for this topic
    by_rank = ListField("integer", null=True, blank=True)
    by_single = ListField("integer", null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "topic"], name="ranking_unique_run_topic")]

    def __str__(self) -> str:
        return f"{self.run} / {self.topic}"
