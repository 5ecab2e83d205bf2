from rest_framework.permissions import BasePermission


class IsOrganiser(BasePermission):
    """Organisers and admins manage campaigns; assessors only judge."""

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and request.user.is_organiser)
