"""A campaign's timeline: its audit trail, newest first, for the people who run it (and the API's twin)."""

import json

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import path

from accounts.http import AuthenticatedHttpRequest
from assessments import access, charts
from assessments.labels import LabelScheme
from assessments.models import AuditEvent
from assessments.selectors.campaigns import timeline

EVENTS_PER_PAGE = 100
# The filter's families: an action's prefix groups its kinds (all imports, all membership changes …).
FAMILIES = [
    ("", "Everything"), ("phase", "Phases"), ("training", "Training rounds"), ("assignment", "Assignments"),
    ("import", "Imports"), ("topic", "Topic changes"), ("pool", "Pool builds"), ("qrels", "Qrels exports"),
    ("adjudication", "Adjudications"), ("member", "Members"), ("campaign.settings", "Settings"),
]


def _readable(value, scheme: LabelScheme) -> str:
    """A before/after value as a person reads it (`a, b`; an adjudication's labels as the scheme names them,
    `Relevance: 2 · Highly relevant; Stance: Pro`), not as JSON (the API gives the JSON itself)."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return "; ".join(
            charts.labels_text(scheme, item) if key == "labels" and isinstance(item, dict) else f"{key} {_readable(item, scheme)}"
            for key, item in value.items()
        ) or "nothing"
    if isinstance(value, list):
        return ", ".join(_readable(item, scheme) for item in value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@login_required
def timeline_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    family = request.GET.get("action", "")
    if family not in dict(FAMILIES):
        family = ""
    events = timeline(campaign, action=family, training_labels=access.sees_training_aggregates(request.user, campaign))
    page = Paginator(events, EVENTS_PER_PAGE).get_page(request.GET.get("page"))
    labels, scheme = dict(AuditEvent.Action.choices), campaign.label_scheme
    rows = [
        {"event": e, "label": labels.get(e.action, e.action), "before": _readable(e.before, scheme), "after": _readable(e.after, scheme),
         "details": json.dumps(e.details, ensure_ascii=False, indent=1) if e.details else ""}
        for e in page.object_list
    ]
    return render(request, "assessments/timeline.html", {
        "campaign": campaign, "page": page, "rows": rows, "families": FAMILIES, "family": family,
    })


urlpatterns = [path("<slug:slug>/timeline/", timeline_page, name="timeline")]
