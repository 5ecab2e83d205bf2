"""The request a login-required view receives, typed for the checker.

`login_required` guarantees a signed-in `User`, and django-htmx's middleware sets `htmx` on every request,
but `HttpRequest` knows neither: its `user` may be anonymous and it has no `htmx`. Views behind
`login_required` annotate their request with this class (the django-stubs and django-htmx recipe) instead of
checking or casting in each view.
"""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from accounts.models import User


class AuthenticatedHttpRequest(HttpRequest):
    user: User
    htmx: HtmxDetails
