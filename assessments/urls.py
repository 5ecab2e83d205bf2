"""Organiser pages, one module per concern under assessments/views/, each with its urlpatterns."""

from .views import campaigns

app_name = "assessments"

urlpatterns = [*campaigns.urlpatterns]
