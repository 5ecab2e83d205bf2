from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from assessments.api.docs import SwaggerView


@login_required
def home(request):
    """Send each role to the page it works from."""
    if request.user.is_organiser:
        return redirect("assessments:campaign_list")
    return redirect("annotation:my_work")


# A database lost outside a view (a session saved by middleware) answers 503 too, see touchstone/outages.py.
handler500 = "touchstone.outages.server_error"
# An address under /api/ that matches no route answers JSON, as the API's own 404s do (touchstone/requests.py).
handler404 = "touchstone.requests.not_found"

urlpatterns = [
    path("", home, name="home"),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("campaigns/", include("assessments.urls")),
    path("work/", include("annotation.urls")),
    # The assessor API first: a label save is the request made most, and resolving it used to try every
    # organiser route before reaching its own.
    path("api/", include("annotation.api")),
    path("api/", include("assessments.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # A page for people and for token holders: a visitor with no credentials goes to the login page.
    path("api/docs/", SwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
