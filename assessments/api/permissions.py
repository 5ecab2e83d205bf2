"""Who may call an endpoint, by role. Each class's `roles` is the sentence the OpenAPI schema puts at the head of
every operation it guards (assessments.api.schema), so the documented rule is the enforced one."""

from rest_framework.permissions import BasePermission


class IsOrganiser(BasePermission):
    """Organisers and admins manage campaigns; assessors only judge."""

    roles = "organisers, on the campaigns they run (members of them), and admins, on every campaign; assessors get 403"

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and request.user.is_organiser)


class IsCampaignAdmin(BasePermission):
    """Admins run training: the agreement figures put every assessor's side by side, and the phase steps move the
    whole campaign (the agreement page's rule, access.get_campaign_for_admin)."""

    roles = "admins only; organisers and assessors get 403"
    message = "The training phase and its agreement figures are run by admins"

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and request.user.is_campaign_admin)
