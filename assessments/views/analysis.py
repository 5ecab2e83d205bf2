"""Organiser pages that look behind the leaderboard: two runs compared topic by topic, and pool reusability
(leave-one-team-out). Views parse the request, call one service and render."""

from itertools import zip_longest
from typing import cast

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import path

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.models import Campaign, Run
from assessments.services import comparison, exports, reusability
from assessments.views.results import EvaluationForm, kind_choices


class OneKindForm(EvaluationForm):
    kind = forms.ChoiceField(label="Labels")

    def __init__(self, data, *, campaign: Campaign, user):
        if data is not None and "kind" not in data:  # unset: the scheme's primary dimension, as in the commands
            data = data.copy()
            data["kind"] = campaign.label_scheme.primary.name
        super().__init__(data, campaign=campaign, user=user, initial={"kind": campaign.label_scheme.primary.name})
        cast(forms.ChoiceField, self.fields["kind"]).choices = kind_choices(campaign, measured=True)


class CompareForm(OneKindForm):
    a = forms.ModelChoiceField(queryset=Run.objects.none(), to_field_name="tag", required=False, label="Run A")
    b = forms.ModelChoiceField(queryset=Run.objects.none(), to_field_name="tag", required=False, label="Run B")
    topic = forms.CharField(required=False, max_length=50)

    def __init__(self, data, *, campaign: Campaign, user):
        super().__init__(data, campaign=campaign, user=user)
        runs = Run.objects.filter(campaign=campaign).order_by("tag")
        for name in ("a", "b"):
            cast(forms.ModelChoiceField, self.fields[name]).queryset = runs


def _options(form: forms.Form) -> dict:
    return {name: form.cleaned_data[name] for name in ("measure", "kind", "order", "trec_eval", "phase", "rule")}


@login_required
def compare_runs(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = CompareForm(request.GET, campaign=campaign, user=request.user)
    context: dict = {"campaign": campaign, "form": form}
    if not form.is_valid():
        context["error"] = form.errors.as_text()
    elif form.cleaned_data["a"] and form.cleaned_data["b"]:
        try:
            found = comparison.compare_two_runs(
                campaign=campaign, run_a=form.cleaned_data["a"], run_b=form.cleaned_data["b"],
                topic=form.cleaned_data["topic"] or None, **_options(form),
            )
        except exports.ExportError as exc:
            context["error"] = str(exc)
        else:
            # A bar from the middle (no difference) to the left (B better) or right (A better); |A − B| ≤ 1.
            bars = [{"left": 50 + 50 * min(row.diff, 0.0), "width": max(0.5, 50 * abs(row.diff))} for row in found.topics]
            context.update(comparison=found, rows=list(zip(found.topics, bars)),
                           pairs=list(zip_longest(found.list_a, found.list_b)))
    if request.htmx and form.is_valid() and form.cleaned_data["topic"]:
        return render(request, "assessments/compare_lists.html", context)
    return render(request, "assessments/compare.html", context, status=400 if "error" in context else 200)


@login_required
def pool_reusability(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = OneKindForm(request.GET, campaign=campaign, user=request.user)
    context: dict = {"campaign": campaign, "form": form}
    if not form.is_valid():
        context["error"] = form.errors.as_text()
    else:
        try:
            context["report"] = reusability.pool_reusability(campaign=campaign, **_options(form))
        except exports.ExportError as exc:
            context["error"] = str(exc)
    return render(request, "assessments/reusability.html", context, status=400 if "error" in context else 200)


urlpatterns = [
    path("<slug:slug>/results/compare/", compare_runs, name="compare_runs"),
    path("<slug:slug>/results/reusability/", pool_reusability, name="reusability"),
]
