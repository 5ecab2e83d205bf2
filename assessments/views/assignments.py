"""The assignment page: who judges which topic, with the judgments already made, and the forms that change it.

Organisers assign main-phase topics, balance them automatically and draw the overlap slice. The training phase
belongs to admins (User.is_campaign_admin), who mark training topics and assign them. Every form on the page posts
to one of the small views below, and each calls one service and redirects back with a message.
"""

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.models import Campaign, Phase
from assessments.services import assignments
from assessments.services.assignments import AssignmentError

SHOW = {"": "Every topic", "unassigned": "Nobody assigned", "assigned": "Assigned", "training": "Training topics",
        "main": "Main-phase topics"}
SORTS = {"": "Topic order", "pool": "Largest pool first", "judged": "Least judged first"}


def _table(rows: list[assignments.TopicAssignments], *, show: str, assessor: str, sort: str) -> list[assignments.TopicAssignments]:
    """The topic rows the page's filter asks for, in its order (the overview comes in topic order)."""
    kept = [
        row for row in rows
        if (show != "unassigned" or not (row.current or row.slices)) and (show != "assigned" or row.current or row.slices)
        and (show != "training" or row.topic.is_training) and (show != "main" or not row.topic.is_training)
        and (not assessor or any(a.assessor.username == assessor for a in [*row.current, *row.slices]))
    ]
    if sort == "pool":
        kept.sort(key=lambda row: -row.workload)
    elif sort == "judged":
        kept.sort(key=lambda row: sum(n for _, n, _ in row.judged) / max(row.workload, 1))
    return kept


@login_required
def assignment_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    overview = assignments.assignment_overview(campaign=campaign)
    show = request.GET.get("show", "") if request.GET.get("show", "") in SHOW else ""
    sort = request.GET.get("sort", "") if request.GET.get("sort", "") in SORTS else ""
    assessor = request.GET.get("assessor", "")
    context = {
        "campaign": campaign,
        "overview": overview,
        "rows": _table(overview.topics, show=show, assessor=assessor, sort=sort),
        "filters": {"show": show, "sort": sort, "assessor": assessor, "shows": SHOW, "sorts": SORTS},
        "can_train": request.user.is_campaign_admin,
        "overlap_percent": round(campaign.overlap_share * 100, 1) or 5,
    }
    return render(request, "assessments/assignments.html", context)


def _act(request: AuthenticatedHttpRequest, slug: str, act: Callable[[Campaign], str], *, admin: bool = False) -> HttpResponse:
    """Run one change for an organiser (or admin), report it as a message, and go back to the page."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    if admin and not request.user.is_campaign_admin:
        raise PermissionDenied("The training phase is run by admins")
    try:
        messages.success(request, act(campaign))
    except AssignmentError as exc:
        messages.error(request, str(exc))
    return redirect("assessments:assignments", campaign.slug)


def _summary(lines: list[str], shown: int = 8) -> str:
    """At most ``shown`` lines of what changed, so a big batch does not flood the page."""
    more = f"; and {len(lines) - shown} more" if len(lines) > shown else ""
    return "; ".join(lines[:shown]) + more


def _assessors(request: AuthenticatedHttpRequest) -> list:
    return assignments.find_assessors(usernames=request.POST.getlist("assessors"))


def _topics(request: AuthenticatedHttpRequest, campaign: Campaign) -> list:
    return assignments.find_topics(campaign=campaign, numbers=request.POST.getlist("topics"))


@require_POST
@login_required
def assign(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    phase = request.POST.get("phase", Phase.MAIN)

    def act(campaign: Campaign) -> str:
        done = assignments.assign_topics(
            campaign=campaign, assessors=_assessors(request), topics=_topics(request, campaign), phase=phase,
            assigned_by=request.user,
        )
        return _summary([item.describe() for item in done])

    return _act(request, slug, act, admin=phase == Phase.TRAINING)


@require_POST
@login_required
def auto_assign(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    def act(campaign: Campaign) -> str:
        topics = _topics(request, campaign) if request.POST.getlist("topics") else None
        result = assignments.auto_assign(
            campaign=campaign, assessors=_assessors(request), topics=topics, assigned_by=request.user
        )
        loads = ", ".join(f"{name} {load}" for name, load in result.load.items())
        text = f"{len(result.assigned)} topics shared out; documents per assessor: {loads}"
        if result.skipped:
            text += f" (skipped, no pool yet: topic {', '.join(result.skipped)})"
        return text

    return _act(request, slug, act)


@require_POST
@login_required
def draw_overlap(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    def act(campaign: Campaign) -> str:
        try:
            share = float(request.POST.get("percent", "")) / 100
        except ValueError:
            raise AssignmentError("give the overlap as a percentage, such as 5") from None
        drawn = assignments.draw_overlap(
            campaign=campaign, share=share, assigned_by=request.user,
            assessors=_assessors(request) if request.POST.getlist("assessors") else None,
        )
        text = f"overlap {drawn.share:.0%}: {sum(s.entries for s in drawn.slices)} documents on {len(drawn.slices)} topics"
        if drawn.skipped:
            text += f" (already sliced: topic {', '.join(drawn.skipped)})"
        return text

    return _act(request, slug, act)


@require_POST
@login_required
def withdraw(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    def act(campaign: Campaign) -> str:
        try:
            assignment_id = int(request.POST.get("assignment", ""))
        except ValueError:
            raise AssignmentError("no assignment given") from None
        gone = assignments.withdraw_assignment(campaign=campaign, assignment_id=assignment_id, by=request.user)
        return f"topic {gone.topic.number} withdrawn from {gone.assessor.username}; their judgments are kept"

    return _act(request, slug, act)


@require_POST
@login_required
def mark_training(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    is_training = request.POST.get("training") == "1"

    def act(campaign: Campaign) -> str:
        changed = assignments.mark_training(campaign=campaign, topics=_topics(request, campaign), is_training=is_training, by=request.user)
        return f"{changed} topic(s) marked as {'training' if is_training else 'main-phase'} topics"

    return _act(request, slug, act, admin=True)


urlpatterns = [
    path("<slug:slug>/assignments/", assignment_page, name="assignments"),
    path("<slug:slug>/assignments/assign/", assign, name="assignments_assign"),
    path("<slug:slug>/assignments/auto/", auto_assign, name="assignments_auto"),
    path("<slug:slug>/assignments/overlap/", draw_overlap, name="assignments_overlap"),
    path("<slug:slug>/assignments/withdraw/", withdraw, name="assignments_withdraw"),
    path("<slug:slug>/assignments/training/", mark_training, name="assignments_training"),
]
