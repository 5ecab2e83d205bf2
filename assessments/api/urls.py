"""The REST API under /api/: each concern's module registers its viewsets and extra paths."""

from rest_framework.routers import DefaultRouter

from . import analysis, assignments, campaigns, imports, judge_impact, machine_judges, pools, results

router = DefaultRouter()
extra = [*campaigns.register(router), *results.register(router), *assignments.register(router), *pools.register(router), *imports.register(router),
         *analysis.register(router), *judge_impact.register(router),
         *machine_judges.register(router)]

urlpatterns = [*extra, *router.urls]
