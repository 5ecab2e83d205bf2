from django.db import models


class Reply(models.Model):
    """An organiser's answer to an assessor's flag or note on one judgment, shown to that assessor on the
    document's judge page (in training only once the round is closed). A reply that `resolves` closes the
    discussion; a later reply that does not opens it again."""

    judgment = models.ForeignKey("assessments.Judgment", on_delete=models.PROTECT, related_name="replies")
    author = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="+")
    text = models.TextField()
    resolves = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judgment", "created_at", "id"]
        constraints = [models.CheckConstraint(condition=~models.Q(text=""), name="reply_has_text")]

    def __str__(self) -> str:
        return f"reply {self.pk} on judgment {self.judgment_id}"
