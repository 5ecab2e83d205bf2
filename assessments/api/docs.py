"""The API's Swagger UI page (/api/docs/), for a browser session and for a client that sends a token.

drf-spectacular's page authenticates as the API does (token or session, SPECTACULAR_SETTINGS["SERVE_PERMISSIONS"]),
so `Authorization: Token KEY` opens it like a login does. Only a visitor with no credentials at all is sent to the
login page, since that is a person at a browser; a token that is refused answers 401 in JSON, as the API does.
"""

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.views import SpectacularSwaggerView
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer


class SwaggerView(SpectacularSwaggerView):
    def handle_exception(self, exc):
        if isinstance(exc, exceptions.NotAuthenticated) and "HTTP_AUTHORIZATION" not in self.request.META:
            return redirect_to_login(self.request.get_full_path())
        # The page's renderer is a template's: an error is told in JSON instead, as everywhere under /api/.
        self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
        return super().handle_exception(exc)
