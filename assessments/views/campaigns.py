"""Organiser pages. Views translate HTTP; services do the work."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from assessments import access
from assessments.selectors.campaigns import campaigns_for_organiser


@login_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    if not request.user.is_organiser:
        raise Http404("No such page")
    return render(request, "assessments/campaign_list.html", {"campaigns": campaigns_for_organiser()})


@login_required
def campaign_detail(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    return render(request, "assessments/campaign_detail.html", {"campaign": campaign})


urlpatterns = [
    path("", campaign_list, name="campaign_list"),
    path("<slug:slug>/", campaign_detail, name="campaign"),
]
