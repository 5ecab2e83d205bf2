from django.contrib.auth.models import AbstractUser
from django.db import models


class Role(models.TextChoices):
    ASSESSOR = "assessor", "Assessor"
    ORGANISER = "organiser", "Organiser"
    ADMIN = "admin", "Admin"


class User(AbstractUser):
    """A person using Touchstone. The role decides which pages they reach.

    Assessors see only what is assigned to them (assessments.access); organisers run campaigns;
    admins also run the training phase and watch agreement.
    """

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ASSESSOR)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(role__in=Role.values), name="user_role_valid"),
        ]

    @property
    def is_organiser(self) -> bool:
        """Organisers and admins may manage campaigns; superusers always may."""
        return self.is_superuser or self.role in (Role.ORGANISER, Role.ADMIN)

    @property
    def is_campaign_admin(self) -> bool:
        return self.is_superuser or self.role == Role.ADMIN
