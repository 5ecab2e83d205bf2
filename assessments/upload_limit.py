"""The largest upload the pages and the API take (settings.UPLOAD_MAX_BYTES), refused before its body is read.

A middleware, not a view check: the CSRF check reads a form's fields, which parses the whole multipart body
and spools its files to disk, before any view runs. Here only the Content-Length header is read (Django reads
no body without one). The import pages check the chosen files' sizes in the browser too, so a person never
waits for gigabytes to be sent only to be refused.
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat


def too_large(size: int) -> str | None:
    """Why an upload of `size` bytes is refused, or None."""
    limit = settings.UPLOAD_MAX_BYTES
    if size <= limit:
        return None
    return (
        f"This upload is {_size(size)}; uploads may be at most {_size(limit)}. Import a larger file"
        " from the command line (manage.py import_runs, import_documents, import_topics or import_qrels), which reads"
        " it where it is."
    )


def _size(size: int) -> str:
    return filesizeformat(size).replace("\xa0", " ")  # plain spaces: the text also goes to scripts, as JSON


class UploadLimitMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Other bodies are held to DATA_UPLOAD_MAX_MEMORY_SIZE by Django itself.
        if not request.META.get("CONTENT_TYPE", "").startswith("multipart/"):
            return self.get_response(request)
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0  # Django reads no body it cannot measure
        problem = too_large(size)
        if problem is None:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": problem}, status=413)
        if request.headers.get("HX-Request"):
            # htmx swaps only 2xx answers: the refusal goes where the import's job would have appeared.
            return render(request, "assessments/_job_status.html", {"refused": problem})
        return render(request, "upload_too_large.html", {"problem": problem, "back": request.headers.get("Referer", "")}, status=413)


def upload_limit(request: HttpRequest) -> dict:
    """Template context: the limit, for the import forms' own check in the browser."""
    return {"upload_max_bytes": settings.UPLOAD_MAX_BYTES}
