"""Requests no view should see, and what an unknown address under /api/ answers.

* A NUL byte in the query string (``?action=%00``) cannot be stored in or compared with a PostgreSQL text column,
  so every view that passes a parameter on to a query would fail with a 500: `RefuseNulMiddleware` answers 400
  first, in JSON under /api/.
* An address that matches no route answers Django's HTML 404; under /api/ a script reads JSON, so `not_found`
  (settings: ``handler404``) answers ``{"detail": "Not found."}`` there, as DRF does for an unknown object.
"""

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.views.defaults import page_not_found

API_PREFIX = "/api/"
NUL_REFUSED = "a query parameter contains a NUL byte (%00), which no parameter may hold"


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _has_nul(request: HttpRequest) -> bool:
    query = request.META.get("QUERY_STRING", "")
    # The query string is percent-encoded: parse it only when it may hold a NUL, so other requests pay one search.
    if "%00" not in query and "\x00" not in query:
        return False
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists())


class RefuseNulMiddleware:
    """400 for a request whose query parameters (names or values) hold a NUL byte."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _has_nul(request):
            if _is_api(request):
                return JsonResponse({"detail": NUL_REFUSED}, status=400)
            return HttpResponseBadRequest(NUL_REFUSED, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
