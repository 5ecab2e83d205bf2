"""Image files of an image collection (Touché Task 3): where they are stored and how they are served.

An image is a Document of its collection (doc_id the image id, `metadata["image"]` its file's storage name, type
and size, `metadata["pages"]` the web pages it came from), and its bytes are a file in Django's storage under the
media root (a volume in docker-compose.yml), never a database row: a 2023 collection is 56 k images of up to
1.7 MB each. A thumbnail is made once, by a job after the import, for the grid and the run browser; that job decodes
each image for the first time, and one that fails is marked unreadable (`metadata["image"]["unreadable"]`).

Images are served only as what their bytes were checked to be (formats.images: WebP, PNG or JPEG, never SVG or
HTML; never one marked unreadable), with that content type, `nosniff`, a policy that lets nothing run, and a long
private cache lifetime (an image id names its bytes, so a file never changes). Where a deployment puts a web server
in front that can send protected files itself (nginx's X-Accel-Redirect), IMAGE_ACCEL_REDIRECT names its internal
location and Python only checks access; otherwise the file is streamed from storage.
"""

from __future__ import annotations

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse
from django.http.response import HttpResponseBase

from assessments.models import Collection, Document

# Sent with every image: what the checked bytes are and nothing else may be made of them.
_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, max-age=604800, immutable",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_EXTENSIONS = {"image/webp": "webp", "image/png": "png", "image/jpeg": "jpg"}


def image_name(collection: Collection, image_id: str, content_type: str) -> str:
    """The storage name of an image's file: by collection and the id's first hex digits, as the lab lays them out."""
    return f"images/{collection.slug}/{image_id[:3]}/{image_id}.{_EXTENSIONS[content_type]}"


def thumbnail_name(collection: Collection, image_id: str) -> str:
    return f"thumbnails/{collection.slug}/{image_id[:3]}/{image_id}.webp"


def store_file(name: str, data: bytes) -> str:
    """Write `data` under `name`, replacing what was there (an import of the same image writes the same bytes)."""
    if default_storage.exists(name):
        default_storage.delete(name)
    return default_storage.save(name, ContentFile(data))


def delete_files(names: list[str]) -> None:
    """Remove files an import wrote before it failed, so a refused import leaves no file behind either."""
    for name in names:
        if default_storage.exists(name):
            default_storage.delete(name)


def unreadable(document_ids: list[int]) -> set[int]:
    """Which of these images the thumbnail job could not decode (one query for a screenful): the grid and the run
    browser say so in the image's place instead of asking for a file that is never served."""
    return set(Document.objects.filter(pk__in=document_ids, metadata__image__has_key="unreadable").values_list("pk", flat=True))


def image_response(document: Document, *, thumbnail: bool = False) -> HttpResponseBase:
    """The image (or its thumbnail) of `document`, as the module docstring says; 404 when it has none."""
    image = (document.metadata or {}).get("image")
    if not image:
        raise Http404("No image")
    if image.get("unreadable"):
        # A browser's image decoder is attack surface too: data that Pillow's decoders refused is not sent to it.
        raise Http404("The image cannot be decoded")
    # Until the job has made it, a thumbnail is the image itself (the grid shows it scaled down).
    if thumbnail and image.get("thumbnail"):
        name, content_type = image["thumbnail"], "image/webp"
    else:
        name, content_type = image.get("file"), image.get("content_type")
    if not name or content_type not in _EXTENSIONS:
        raise Http404("No such image file")
    accel = getattr(settings, "IMAGE_ACCEL_REDIRECT", "")
    response: HttpResponseBase
    if accel:
        response = HttpResponse(content_type=content_type)
        response["X-Accel-Redirect"] = f"{accel.rstrip('/')}/{name}"
    else:
        try:
            stream = default_storage.open(name, "rb")
        except FileNotFoundError:
            raise Http404("The image file is missing from storage") from None
        response = FileResponse(stream, content_type=content_type)
    response["Content-Disposition"] = f'inline; filename="{document.doc_id}.{_EXTENSIONS[content_type]}"'
    for header, value in _HEADERS.items():
        response[header] = value
    return response
