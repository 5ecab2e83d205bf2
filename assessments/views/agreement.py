"""The training admin's pages: the agreement dashboard, the disagreements for the follow-up discussion, a judged
document's text, and the buttons that close a training round or start the main phase.

Only admins (User.is_campaign_admin) reach the dashboard and the phase buttons, through access.get_campaign_for_admin;
the disagreements and a judged document's text are also open to the campaign's adjudicators, who decide them
(access.get_campaign_for_adjudicator). They put named assessors' labels side by side, which assessors must never
see during training.

The charts are inline SVG and CSS drawn on the server, with no chart library and nothing fetched from elsewhere:
assessments.charts turns the selectors' figures into coordinates and colours.
"""

from typing import Literal, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from assessments import access, charts
from assessments.models import Adjudication, Phase
from assessments.rendering import DOCUMENT_PAGE_CSP, document_html, safe_link
from assessments.selectors.agreement import AgreementError, list_disagreements, requested_scope, training_rounds
from assessments.selectors.monitoring import TIME_BUCKETS, dashboard
from assessments.services import assignments, campaigns

PHASE_CHOICES = [(Phase.TRAINING, "Training"), (Phase.MAIN, "Main phase"), ("all", "All phases")]


@login_required
def agreement_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_admin(request.user, slug)
    scope, problem = requested_scope(campaign, request.GET)
    if problem:
        messages.error(request, problem)
    board = dashboard(campaign=campaign, scope=scope)
    figures, activity, scheme = board.agreement, board.monitoring.activity, campaign.label_scheme
    context = {
        "campaign": campaign,
        "board": board,
        "scope": board.scope,
        "dimensions": charts.agreement_panels(figures, scheme),
        "flagged": figures.flagged,
        "topic_table": figures.topic_table(),
        "progress_chart": charts.line_chart(activity.starts, activity.by_assessor, activity.step),
        "rate_chart": charts.bar_chart(activity.starts, activity.totals, activity.unit, activity.step),
        "progress_rows": charts.progress_rows(board.monitoring.progress, activity),
        "timing": charts.time_segments(board.monitoring.timing, TIME_BUCKETS),
        "time_buckets": list(zip(TIME_BUCKETS, charts.TIME_COLOURS)),
        "label_mix": charts.label_mix_bars(board.monitoring.label_mix, scheme),
        "rounds": board.rounds,
        "phases": PHASE_CHOICES,
    }
    return render(request, "assessments/agreement.html", context)


@login_required
def disagreement_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_adjudicator(request.user, slug)
    scope, problem = requested_scope(campaign, request.GET)
    if problem:
        messages.error(request, problem)
    order = request.GET.get("order", "total")
    try:
        found = list_disagreements(
            campaign=campaign, scope=scope, order=order, page=request.GET.get("page", 1)
        )
    except AgreementError as exc:
        messages.error(request, str(exc))
        order = "total"
        found = list_disagreements(campaign=campaign, scope=scope, page=request.GET.get("page", 1))
    scheme = campaign.label_scheme
    decided = {
        (number, document_id): labels
        for number, document_id, labels in Adjudication.objects.filter(
            topic__campaign=campaign, document_id__in=[row.document_id for row in found.page.object_list]
        ).values_list("topic__number", "document_id", "labels")
    }
    rows = [
        (
            row,
            [None if labels is None else charts.label_chips(scheme, labels, missing=True) for labels in row.labels],
            None if (final := decided.get((row.topic, row.document_id))) is None else charts.label_chips(scheme, final),
        )
        for row in found.page.object_list
    ]
    context = {
        "campaign": campaign,
        "scope": scope,
        "found": found,
        "rows": rows,
        "order": order,
        "orders": [("total", "all labels"), *((d.name, d.title) for d in scheme.dimensions)],
        "rounds": training_rounds(campaign),
        "phases": PHASE_CHOICES,
    }
    return render(request, "assessments/agreement_disagreements.html", context)


@login_required
def document_page(request: AuthenticatedHttpRequest, slug: str, document_id: int) -> HttpResponse:
    """One document of the campaign as its assessors read it (sanitised), and no one's labels: for every organiser
    of the campaign (the discussion and the disagreements link here)."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    document = access.get_document_for_campaign(campaign, document_id)
    context = {
        "campaign": campaign, "can_adjudicate": access.can_adjudicate(request.user, campaign),
        "document": document,
        "document_url": safe_link(document.url),
        "body_html": document_html(document.body, is_html=document.is_html) if document.has_text else "",
    }
    response = render(request, "assessments/agreement_document.html", context)
    response["Content-Security-Policy"] = DOCUMENT_PAGE_CSP
    return response


@require_POST
@login_required
def change_phase(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Start training, close a training round and start the next, or close training and start the main phase."""
    campaign = access.get_campaign_for_admin(request.user, slug)
    step = request.POST.get("step")
    try:
        if step == "start_training":
            campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=request.user)
            messages.success(request, f"Training started: round {campaign.training_round}")
        elif step == "main" and request.POST.get("confirm") != "main":
            # Starting the main phase ends training for good: the page asks twice (its confirming button sends this).
            messages.error(request, "Starting the main phase ends training for good: confirm it on the agreement page")
        elif step in ("next_round", "main"):
            closed = campaign.training_round
            then = cast(Literal["next_round", "main"], step)
            campaign = assignments.close_training_round(campaign=campaign, then=then, by=request.user)
            follow = f"round {campaign.training_round} is open" if step == "next_round" else "the main phase has started"
            messages.success(request, f"Training round {closed} closed; {follow}")
        else:
            messages.error(request, f"unknown step {step!r}")
    except (campaigns.CampaignError, assignments.AssignmentError) as exc:
        messages.error(request, str(exc))
    return redirect("assessments:agreement", campaign.slug)


urlpatterns = [
    path("<slug:slug>/agreement/", agreement_page, name="agreement"),
    path("<slug:slug>/agreement/disagreements/", disagreement_page, name="disagreements"),
    path("<slug:slug>/agreement/documents/<int:document_id>/", document_page, name="agreement_document"),
    path("<slug:slug>/agreement/phase/", change_phase, name="agreement_phase"),
]
