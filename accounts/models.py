from django.contrib.auth.models import AbstractUser
from django.db import models


class Role(models.TextChoices):
    ASSESSOR = "assessor", "Assessor"
    ORGANISER = "organiser", "Organiser"
    ADMIN = "admin", "Admin"
    # Not a person: the name imported qrels are kept under (`import_qrels --assessor touche2020`). A source cannot
    # sign in (inactive, no usable password, refused by accounts.backends) and no person's account is ever one.
    SOURCE = "source", "Import source (not a person)"


# The roles a person's account has (create_user offers these).
HUMAN_ROLES = (Role.ASSESSOR.value, Role.ORGANISER.value, Role.ADMIN.value)


class User(AbstractUser):
    """A person using Touchstone. The role decides which pages they reach.

    Assessors see only what is assigned to them (assessments.access); organisers run campaigns;
    admins also run the training phase and watch agreement.
    """

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ASSESSOR)
    # The languages an assessor reads (ISO 639-1 codes): items of a classification campaign in other languages are
    # never given to them (services.item_assignments). Empty: not stated, so no multilingual items are given.
    languages = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(role__in=Role.values), name="user_role_valid"),
        ]

    @property
    def is_source(self) -> bool:
        """An import source: the owner of imported labels, not a person who can sign in."""
        return self.role == Role.SOURCE

    @property
    def is_organiser(self) -> bool:
        """Organisers and admins may manage campaigns; superusers always may."""
        return self.is_superuser or self.role in (Role.ORGANISER, Role.ADMIN)

    @property
    def is_campaign_admin(self) -> bool:
        return self.is_superuser or self.role == Role.ADMIN


class ApiToken(models.Model):
    """A key a script sends as `Authorization: Token KEY`, kept only as its SHA-256 digest: a copy of the database
    (a backup, an archive) gives no working key. Shown once when made (accounts.tokens.create_token); it stops
    working when it expires, when its user's password changes or when a new one replaces it."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, help_text="the key's first characters, to tell tokens apart")
    # A digest of the user's password hash when the token was made: any change of password, by any path (the
    # password form, the admin, a command), revokes the token without a signal to forget.
    password_fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user.username})"
