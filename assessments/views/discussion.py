"""The discussion page: every flagged document and every note of a campaign, by topic, with the assessor's labels
and the organisers' replies; organisers reply (and resolve) from it. The assessor reads the replies on that
document's judge page (annotation), in training once the round is closed.

Organisers and admins of the campaign reach it; one assessor's training labels show only to those who may see
them (access.named_label_phases), the notes and flags to all of them.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from assessments import access, charts
from assessments.models import Judgment
from assessments.selectors.discussion import STATUSES, discussion
from assessments.services.discussion import DiscussionError, reply

ITEMS_PER_PAGE = 100
FILTERS = ("topic", "assessor", "phase", "status")


def _filters(request: AuthenticatedHttpRequest) -> dict[str, str]:
    return {name: request.GET.get(name, "").strip() for name in FILTERS}


@login_required
def discussion_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    filters = _filters(request)
    items = discussion(campaign=campaign, **filters, named_phases=access.named_label_phases(request.user, campaign))
    page = Paginator(items, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    scheme = campaign.label_scheme
    shown = [(item, charts.label_chips(scheme, item.judgment.labels) if item.show_labels else None) for item in page]
    people = (
        Judgment.objects.filter(topic__campaign=campaign).exclude(flagged=False, note="")
        .values_list("assessor__username", flat=True).distinct().order_by("assessor__username")
    )
    return render(request, "assessments/discussion.html", {
        "campaign": campaign, "page": page, "shown": shown, "filters": filters, "query": urlencode({k: v for k, v in filters.items() if v}),
        "topics": campaign.topics.order_by("position", "number").values_list("number", flat=True),
        "assessors": people, "statuses": STATUSES, "can_adjudicate": access.can_adjudicate(request.user, campaign),
    })


@require_POST
@login_required
def discussion_reply(request: AuthenticatedHttpRequest, slug: str, judgment_id: int) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    judgment = access.get_judgment_for_discussion(campaign, judgment_id)
    try:
        reply(judgment=judgment, text=request.POST.get("text", ""), resolves=request.POST.get("resolves") == "1", by=request.user)
    except DiscussionError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Reply to {judgment.assessor.username} on topic {judgment.topic.number} posted.")
    back = request.POST.get("query", "")
    return redirect(f"{reverse('assessments:discussion', args=[slug])}?{back}#judgment-{judgment.pk}")


urlpatterns = [
    path("<slug:slug>/discussion/", discussion_page, name="discussion"),
    path("<slug:slug>/discussion/<int:judgment_id>/reply/", discussion_reply, name="discussion_reply"),
]
