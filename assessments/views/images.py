"""An image campaign's organiser pages: its images (for organisers of the campaign only) and the run browser.

The run browser shows, for one run and one topic, the run's PRO and CON lists side by side as thumbnail grids,
each image badged with its decided answers (on topic, pro, con) or as unjudged; `[` and `]` switch runs, `,` and
`.` topics, and a second run (`?with=TAG`) is shown below the first for comparison.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import path, reverse

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.models import Campaign, Run, Topic
from assessments.services import image_campaigns, images


@login_required
def image(request: AuthenticatedHttpRequest, slug: str, document_id: int, thumbnail: bool = False) -> HttpResponseBase:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    return images.image_response(access.get_document_for_campaign(campaign, document_id), thumbnail=thumbnail)


def _image_campaign(request: AuthenticatedHttpRequest, slug: str) -> Campaign:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    if not campaign.is_images:
        raise Http404("Only image campaigns have a run browser")
    return campaign


def _neighbours(items: list[str], current: str) -> tuple[str | None, str | None]:
    at = items.index(current)
    return (items[at - 1] if at > 0 else None), (items[at + 1] if at + 1 < len(items) else None)


@login_required
def run_browser(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = _image_campaign(request, slug)
    tags = list(Run.objects.filter(campaign=campaign).order_by("tag").values_list("tag", flat=True))
    numbers = list(Topic.objects.filter(campaign=campaign).order_by("position", "number").values_list("number", flat=True))
    if not tags or not numbers:
        return render(request, "assessments/run_browser.html", {"campaign": campaign, "empty": True})
    tag = next((t for t in tags if t == request.GET.get("run")), tags[0])
    number = next((n for n in numbers if n == request.GET.get("topic")), numbers[0])
    other = request.GET.get("with") if request.GET.get("with") in tags else None
    topic = Topic.objects.get(campaign=campaign, number=number)
    scheme = campaign.label_scheme
    panels = []
    answers = image_campaigns.topic_answers(campaign, topic)
    browsed = {shown: image_campaigns.browse(campaign, Run.objects.get(campaign=campaign, tag=shown), topic, answers)
               for shown in filter(None, (tag, other))}
    damaged = images.unreadable([i.document_id for lists in browsed.values() for entries in lists.values() for i in entries if i.document_id])
    for shown, lists in browsed.items():
        panels.append({"tag": shown, "lists": [
            {"stance": stance, "images": [
                {"image": i, "badges": [(d.name, d.name_of(i.answers[d.name])) for d in scheme.dimensions if d.name in i.answers],
                 "unreadable": i.document_id in damaged,
                 "thumbnail": reverse("assessments:image_thumbnail", args=[slug, i.document_id]) if i.document_id else None}
                for i in entries
            ]}
            for stance, entries in lists.items()
        ]})

    def link(**change: str | None) -> str | None:
        if any(value is None for value in change.values()):
            return None
        query = {"run": tag, "topic": number, **({"with": other} if other else {}), **change}
        return reverse("assessments:run_browser", args=[slug]) + "?" + "&".join(f"{k}={v}" for k, v in query.items() if v)

    previous_run, next_run = _neighbours(tags, tag)
    previous_topic, next_topic = _neighbours(numbers, number)
    return render(request, "assessments/run_browser.html", {
        "campaign": campaign, "topic": topic, "tag": tag, "other": other, "tags": tags, "numbers": numbers, "panels": panels,
        "links": {
            "previous_run": link(run=previous_run), "next_run": link(run=next_run),
            "previous_topic": link(topic=previous_topic), "next_topic": link(topic=next_topic),
        },
    })


urlpatterns = [
    path("<slug:slug>/images/<int:document_id>/", image, name="image"),
    path("<slug:slug>/images/<int:document_id>/thumbnail/", image, {"thumbnail": True}, name="image_thumbnail"),
    path("<slug:slug>/runs/browse/", run_browser, name="run_browser"),
]
