from django.db import models


class Topic(models.Model):
    """A topic as the organisers wrote it; `number` is kept exactly as in the topics file."""

    campaign = models.ForeignKey("assessments.Campaign", on_delete=models.CASCADE, related_name="topics")
    number = models.CharField(max_length=32)
    title = models.TextField()
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)
    # Comparative tasks compare two objects; causal tasks ask about a cause and an effect.
    compared_objects = models.JSONField(default=list, blank=True)
    cause = models.TextField(blank=True)
    effect = models.TextField(blank=True)
    # What else the topics file said of a topic that the judge page may show: for a classification campaign's
    # proposal its language and English translation ({"language": "de", "title_en": …, "text_en": …}) and the
    # file's other columns.
    metadata = models.JSONField(default=dict, blank=True)
    is_training = models.BooleanField(default=False)
    # Seed of the presentation order shown to assessors, so the order is reproducible.
    pool_seed = models.BigIntegerField(default=0)
    position = models.PositiveIntegerField(default=0)  # order in the topics file

    class Meta:
        ordering = ["campaign", "position", "number"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="topic_unique_number_per_campaign"),
        ]

    def __str__(self) -> str:
        return f"{self.number}: {self.title}"
