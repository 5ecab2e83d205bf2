"""Machine judges: a model's labels kept beside the assessors', never among them.

A machine label lives in its own table, not in Judgment: every page, export, agreement figure and queue that reads
human labels reads Judgment, so a model's opinion cannot reach an assessor or a human aggregate by a forgotten
filter. Humans who see a model's label drift toward it, so blindness is by construction; only code that names
these tables (the machine-judge services, the judge-impact report, adjudication routing) reads them.

The record is append-only, as the judgments' history is: a call's outcome (a label, or a failure) is one row that
the database never updates or deletes (migration 0026), and a later call on the same document by a new prompt
version is a new row. A judge's current label of a document is its newest successful row.
"""

from django.db import models


class MachineJudge(models.Model):
    """One model a campaign asks for labels: a chat-completions endpoint, or the local embedding model."""

    class Kind(models.TextChoices):
        ENDPOINT = "endpoint", "OpenAI-compatible chat-completions endpoint"
        LOCAL = "local", "Local sentence-embedding model (CPU, no service; a weak judge)"

    campaign = models.ForeignKey("assessments.Campaign", on_delete=models.PROTECT, related_name="machine_judges")
    name = models.SlugField(max_length=64)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    base_url = models.URLField(max_length=500, blank=True)  # e.g. https://api.openai.com/v1
    model = models.CharField(max_length=200)
    # The key is never stored: the name of the environment variable (or settings.MACHINE_JUDGE_KEYS entry) that
    # holds it, read when a call is made and never written to a page, a log or a job's result.
    key_name = models.CharField(max_length=100, blank=True)
    # Sent with every call (temperature, max_tokens, ...) and copied into each label's provenance.
    parameters = models.JSONField(default=dict, blank=True)
    in_flight = models.PositiveSmallIntegerField(default=4)  # calls at once
    per_minute = models.PositiveIntegerField(default=0)  # calls started per minute; 0: no limit
    max_attempts = models.PositiveSmallIntegerField(default=4)
    # The local judge's calibration: dimension -> the similarity at or above which each grade is given
    # ({"relevance": [[0.35, 1], [0.5, 2]]}), below all of them the lowest grade.
    thresholds = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="machinejudge_unique_name_per_campaign"),
            models.CheckConstraint(condition=models.Q(kind__in=["endpoint", "local"]), name="machinejudge_kind_valid"),
            models.CheckConstraint(condition=models.Q(in_flight__gte=1), name="machinejudge_in_flight_positive"),
            models.CheckConstraint(condition=models.Q(max_attempts__gte=1), name="machinejudge_attempts_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    @property
    def is_local(self) -> bool:
        return self.kind == self.Kind.LOCAL


class JudgePrompt(models.Model):
    """One version of the prompt a judge sends for one dimension, with how its answer maps to the scheme's values.
    Versions are append-only: a label names the version it was made with, so an edit is a new version."""

    judge = models.ForeignKey(MachineJudge, on_delete=models.PROTECT, related_name="prompts")
    dimension = models.CharField(max_length=16)
    version = models.PositiveIntegerField()
    system = models.TextField(blank=True)
    template = models.TextField()  # placeholders: {title} {description} {narrative} {document} ...
    # The model's final answer (its last line's token) -> the scheme's value: {"0": 0, "1": 1, "2": 2, "3": 2}.
    answers = models.JSONField()
    created_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge", "dimension", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "dimension", "version"], name="judgeprompt_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.judge.name} {self.dimension} v{self.version}"


class MachineLabel(models.Model):
    """What one call gave for one document and dimension: a label of the scheme, or a recorded failure (no label).

    Provenance is complete so a figure can be traced: the judge, its model, the prompt version, the parameters
    sent, the time, the model's raw answer and the reason it gave, the tokens it cost and how many attempts it took.
    """

    class Status(models.TextChoices):
        OK = "ok", "Labelled"
        FAILED = "failed", "Failed (no label)"

    judge = models.ForeignKey(MachineJudge, on_delete=models.PROTECT, related_name="labels")
    prompt = models.ForeignKey(JudgePrompt, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    job = models.ForeignKey("assessments.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    topic = models.ForeignKey("assessments.Topic", on_delete=models.PROTECT, related_name="+")
    document = models.ForeignKey("assessments.Document", on_delete=models.PROTECT, related_name="+")
    dimension = models.CharField(max_length=16)
    status = models.CharField(max_length=8, choices=Status.choices)
    # {dimension: value} on success, {} on failure: the shape Judgment.labels has, checked by the same trigger.
    labels = models.JSONField(default=dict, blank=True)
    model = models.CharField(max_length=200)
    prompt_version = models.PositiveIntegerField(default=0)  # 0: the local judge, which has thresholds, not prompts
    parameters = models.JSONField(default=dict, blank=True)
    raw_answer = models.TextField(blank=True)
    reason = models.TextField(blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge", "topic", "document", "dimension", "id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=["ok", "failed"]), name="machinelabel_status_valid"),
        ]
        indexes = [
            models.Index(fields=["judge", "topic", "document", "dimension"], name="machinelabel_by_item"),
            models.Index(fields=["job"], name="machinelabel_by_job"),
        ]

    def __str__(self) -> str:
        return f"{self.judge_id}: {self.dimension} of document {self.document_id} (topic {self.topic_id}) {self.status}"

    @property
    def value(self):
        return self.labels.get(self.dimension)


class MachineExposure(models.Model):
    """An assessor was shown a machine label (only after saving their own, and only where the campaign reveals
    them): the record that marks their later labels of that document as model-influenced. Append-only."""

    assessor = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="+")
    topic = models.ForeignKey("assessments.Topic", on_delete=models.PROTECT, related_name="+")
    document = models.ForeignKey("assessments.Document", on_delete=models.PROTECT, related_name="+")
    label = models.ForeignKey(MachineLabel, on_delete=models.PROTECT, related_name="exposures")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at"]
        indexes = [models.Index(fields=["assessor", "topic", "document"], name="machineexposure_by_item")]

    def __str__(self) -> str:
        return f"assessor {self.assessor_id} saw label {self.label_id}"
