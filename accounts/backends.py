"""How a user signs in and how each request finds its signed-in user (settings.AUTHENTICATION_BACKENDS)."""

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.db import connection

from touchstone.model_rows import ModelColumns

from .models import Role, User

_USER = ModelColumns(User, "u")


class UserBackend(ModelBackend):
    """Django's ModelBackend, with the session's user read by SQL written here: every request looks its user up,
    and compiling `User.objects.get(pk=...)` each time was most of that lookup's CPU (touchstone.model_rows).
    The same user row, the same rule (an inactive user is no one).

    ModelBackend stays listed after this one, so sessions signed in before this backend existed keep their user.
    A refused password stops at this backend instead of being checked again by that one (one hash per try).
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            raise PermissionDenied  # django.contrib.auth.authenticate: a failed login, and no other backend tries
        return user

    def user_can_authenticate(self, user) -> bool:
        """An inactive user is no one, and neither is an import source (which is inactive too, as made)."""
        return super().user_can_authenticate(user) and getattr(user, "role", None) != Role.SOURCE

    def get_user(self, user_id):
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {_USER.sql()} FROM {User._meta.db_table} u WHERE u.id = %s", [user_id])
            row = cursor.fetchone()
        user = None if row is None else _USER.instance(row)
        return user if user is not None and self.user_can_authenticate(user) else None
