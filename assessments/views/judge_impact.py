"""The judge-impact page: the leaderboard under human, machine and hybrid qrels side by side (services.judge_impact),
for the campaign's organisers. It shows aggregates of machine labels only (scores, agreement, biases), never one
document's machine label, and assessors never reach it."""

from typing import cast

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import path

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.models import Campaign, MachineJudge
from assessments.services import exports, judge_impact
from assessments.views.analysis import OneKindForm


class JudgeImpactForm(OneKindForm):
    judge = forms.ChoiceField(required=False, label="Machine judge")
    top_k = forms.IntegerField(min_value=2, max_value=10_000, initial=10, label="Top runs")
    defaults = (*OneKindForm.defaults, "top_k")

    def __init__(self, data, *, campaign: Campaign, user):
        super().__init__(data, campaign=campaign, user=user)
        # Newest first: with none chosen the report takes the newest, as the command does.
        judges = MachineJudge.objects.filter(campaign=campaign).order_by("-created_at", "-pk").values_list("name", flat=True)
        cast(forms.ChoiceField, self.fields["judge"]).choices = [(name, name) for name in judges]


@login_required
def judge_impact_report(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = JudgeImpactForm(request.GET, campaign=campaign, user=request.user)
    context: dict = {"campaign": campaign, "form": form, "moved": judge_impact.MOVED}
    if not form.is_valid():
        context["error"] = form.errors.as_text()
    else:
        options = {name: form.cleaned_data[name] for name in ("measure", "kind", "top_k", "order", "trec_eval", "phase", "rule")}
        try:
            report = judge_impact.judge_impact(campaign=campaign, judge=form.cleaned_data["judge"] or None, **options)
        except exports.ExportError as exc:
            context["error"] = str(exc)
        else:
            context["report"] = report
            context["estimates"] = [
                (source, f"{source.capitalize()} qrels", [("Kendall's τ", report.kendall_tau[source]),
                                                           (f"τ top {report.top_k}", report.top_k_tau[source]),
                                                           ("τ_AP", report.tau_ap[source])])
                for source in judge_impact.ESTIMATES
            ]
    return render(request, "assessments/judge_impact.html", context, status=400 if "error" in context else 200)


urlpatterns = [
    path("<slug:slug>/results/judge-impact/", judge_impact_report, name="judge_impact"),
]
