from rest_framework import viewsets

from assessments.selectors.campaigns import campaigns_for_organiser

from .permissions import IsOrganiser
from .serializers import CampaignSerializer


class CampaignViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = CampaignSerializer
    permission_classes = [IsOrganiser]
    lookup_field = "slug"

    def get_queryset(self):
        return campaigns_for_organiser()


def register(router) -> list:
    router.register("campaigns", CampaignViewSet, basename="campaign")
    return []
