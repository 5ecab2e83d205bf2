"""How a page answers when a job cannot be started because the broker is down."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from assessments.services.job_queue import JobNotQueued


class JobNotQueuedMiddleware:
    """A page that starts, or retries, a job while the broker is down answers 503 with Retry-After and says so:
    on a page of its own, or for htmx in the block where the job would have appeared. Nothing of the job was
    kept (services.job_queue). The API answers the same in JSON (assessments.api.errors)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, JobNotQueued):
            return None
        back = request.headers.get("referer", "")
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
            back = reverse("home")
        template = "assessments/_job_status.html" if getattr(request, "htmx", False) else "job_not_queued.html"
        response = render(request, template, {"refused": str(exception), "message": str(exception), "back": back}, status=503)
        response["Retry-After"] = str(exception.retry_after)
        return response
