"""The REST API under /api/: each concern's module registers its viewsets and extra paths."""

from rest_framework.routers import DefaultRouter

from . import campaigns

router = DefaultRouter()
extra = [*campaigns.register(router)]

urlpatterns = [*extra, *router.urls]
