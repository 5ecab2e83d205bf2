"""Organiser pages, one module per concern under assessments/views/, each with its urlpatterns."""

from .views import (
    adjudication,
    agreement,
    analysis,
    assignments,
    campaigns,
    discussion,
    images,
    imports,
    judge_impact,
    machine_judges,
    pooling,
    results,
    timeline,
)

app_name = "assessments"

urlpatterns = [*campaigns.urlpatterns, *results.urlpatterns, *analysis.urlpatterns, *judge_impact.urlpatterns, *assignments.urlpatterns, *agreement.urlpatterns, *adjudication.urlpatterns, *pooling.urlpatterns, *imports.urlpatterns, *timeline.urlpatterns, *discussion.urlpatterns, *images.urlpatterns, *machine_judges.urlpatterns]
