"""The grid of an image campaign: a screenful of a topic's images as thumbnails with their labels, judged by keys.

Task 3's assessors judged tens of thousands of images; most are decided at a glance (off topic, or plainly for one
side), so a grid that takes a key per image saves the page load per image the judge page costs. It saves through
the same endpoint as the judge page (a PATCH with the revision the grid showed: a label changed meanwhile in another
tab is a conflict, never overwritten), and opens the judge page of an image with Enter for the harder ones.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.models import Judgment
from assessments.selectors import queues
from assessments.services import images
from assessments.services.judging import awaits_main_phase

from .keymap import keymap
from .views import not_started

PER_SCREEN = 24
GRID_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'self'; object-src 'none'"
)


@never_cache
@login_required
def grid(request: AuthenticatedHttpRequest, assignment_id: int, position: int) -> HttpResponse:
    assignment = access.get_assignment_for_assessor(request.user, assignment_id)
    campaign = assignment.topic.campaign
    if not campaign.is_images:
        raise Http404("Only image campaigns have a grid")
    if awaits_main_phase(assignment):
        return not_started(request, assignment)
    queue = queues.assignment_queue(assignment)
    if not 1 <= position <= max(len(queue), 1):
        raise Http404("No image at this position")
    shown = queue[position - 1 : position - 1 + PER_SCREEN]
    revisions = dict(
        Judgment.objects.filter(assessor=request.user, topic=assignment.topic, document_id__in=[e.document_id for e in shown])
        .values_list("document_id", "revision")
    )
    damaged = images.unreadable([e.document_id for e in shown])
    scheme = campaign.label_scheme
    cells = [
        {
            "position": position + i, "entry": e.entry_id, "labels": e.labels, "judged": e.judged,
            "revision": revisions.get(e.document_id, 0),
            "badges": [(d.name, d.name_of(e.labels[d.name])) for d in scheme.dimensions if d.name in e.labels],
            "thumbnail": None if e.document_id in damaged else reverse("annotation:thumbnail", args=[assignment.pk, e.entry_id]),
            "save": reverse("work-judgment", args=[assignment.pk, e.entry_id]),
            "open": reverse("annotation:judge", args=[assignment.pk, position + i]),
        }
        for i, e in enumerate(shown)
    ]
    data = {
        "scheme": scheme.to_json(), "keys": keymap(scheme)["labels"], "csrf": get_token(request),
        "previous": reverse("annotation:grid", args=[assignment.pk, max(1, position - PER_SCREEN)]) if position > 1 else None,
        "next": reverse("annotation:grid", args=[assignment.pk, position + PER_SCREEN]) if position + PER_SCREEN <= len(queue) else None,
        "cells": [{k: c[k] for k in ("entry", "labels", "revision", "save", "open")} for c in cells],
    }
    response = render(request, "annotation/grid.html", {
        "assignment": assignment, "topic": assignment.topic, "campaign": campaign, "cells": cells, "data": data,
        "first": position, "last": position + len(shown) - 1, "total": len(queue),
        "judged": sum(e.judged for e in queue), "keys": data["keys"],
    })
    response["Content-Security-Policy"] = GRID_CSP
    return response
