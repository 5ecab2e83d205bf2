from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse

from assessments.labels import PRESETS, LabelScheme, stored_scheme


class Phase(models.TextChoices):
    SETUP = "setup", "Setup"
    TRAINING = "training", "Training"
    MAIN = "main", "Main"
    CLOSED = "closed", "Closed"


class Kind(models.TextChoices):
    """What a campaign judges: documents pooled from runs for topics, or items (comments) given with their context
    (a proposal) and classified, with submissions scored against the decided labels (Touché 2023 Task 4)."""

    RANKING = "ranking", "Ranked retrieval (topics, runs, pools)"
    CLASSIFICATION = "classification", "Classification of items (comments beside their proposal)"
    IMAGES = "images", "Image retrieval (topics, image runs by stance, pools of images)"


class Campaign(models.Model):
    """One assessment campaign: a task's topics, the runs to pool, and the people who judge them."""

    PRESET_CHOICES = [(name, description) for name, (description, _) in PRESETS.items()] + [("custom", "Custom scheme")]

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    preset = models.CharField(max_length=32, choices=PRESET_CHOICES)
    # The resolved scheme (LabelScheme.to_json): its dimensions, and the conditions that say when each is asked. The
    # judgment trigger checks labels against it.
    scheme = models.JSONField()
    guidelines = models.TextField(blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.RANKING)
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.SETUP)
    training_round = models.PositiveSmallIntegerField(default=1)
    collection = models.ForeignKey("assessments.Collection", on_delete=models.PROTECT, related_name="campaigns")
    propagate_to_duplicates = models.BooleanField(default=True)
    # The validators bound what the settings form and API accept (services.campaigns.update_settings checks them too).
    seconds_per_judgment = models.PositiveIntegerField(default=30, validators=[MinValueValidator(1)])
    # A pass mark in kappa units (metrics.agreement.flag_raters), so within kappa's own range.
    agreement_threshold = models.FloatField(default=0.4, validators=[MinValueValidator(-1.0), MaxValueValidator(1.0)])
    overlap_share = models.FloatField(default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    # The codes runs write in their stance column for values of the scheme's stance dimension, code → value
    # ({"NEU": "NEUTRAL"}): run imports store the value (services.imports.runs). The values themselves are read too.
    stance_codes = models.JSONField(default=dict, blank=True)
    # Machine judges (models.machine): whether an assessor, after saving their own label of a document, is shown
    # the machine's (each showing recorded, marking their later labels model-influenced); off by default, since
    # humans drift toward a label they see. And how far a human and a machine grade must differ for the document
    # to go to adjudication.
    reveal_machine_labels = models.BooleanField(default=False)
    machine_disagreement = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(1)])
    created_at = models.DateTimeField(auto_now_add=True)
    # Set: archived. A campaign with judgments cannot be deleted (its record stays whole); archiving puts it away
    # instead: assessors no longer see it and no label can be given, organisers still see everything.
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(phase__in=Phase.values), name="campaign_phase_valid"),
            models.CheckConstraint(
                condition=models.Q(overlap_share__gte=0) & models.Q(overlap_share__lte=1), name="campaign_overlap_share_range"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("assessments:campaign", args=[self.slug])

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None

    @property
    def is_classification(self) -> bool:
        return self.kind == Kind.CLASSIFICATION

    @property
    def is_images(self) -> bool:
        return self.kind == Kind.IMAGES

    @property
    def label_scheme(self) -> LabelScheme:
        return stored_scheme(self.scheme)


class Membership(models.Model):
    """A person who runs a campaign. Organisers reach only the campaigns they are members of (admins reach all);
    an adjudicator is an organiser who may also record the final label of a disputed document."""

    class Role(models.TextChoices):
        ORGANISER = "organiser", "Organiser"
        ADJUDICATOR = "adjudicator", "Organiser and adjudicator"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey("accounts.User", on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ORGANISER)
    added_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user"], name="membership_one_per_user_and_campaign"),
            models.CheckConstraint(condition=models.Q(role__in=["organiser", "adjudicator"]), name="membership_role_valid"),
        ]
        # The unique (campaign, user) index serves the campaign's list; this one serves "my campaigns".
        indexes = [models.Index(fields=["user", "campaign"], name="membership_by_user")]

    def __str__(self) -> str:
        return f"{self.user_id} in campaign {self.campaign_id} ({self.role})"
