"""Organiser pages, one module per concern under assessments/views/, each with its urlpatterns."""

from .views import agreement, assignments, campaigns, results

app_name = "assessments"

urlpatterns = [*campaigns.urlpatterns, *results.urlpatterns, *assignments.urlpatterns, *agreement.urlpatterns]
