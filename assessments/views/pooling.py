"""The organiser's pool page: statistics, a build form with a preview of its cost, the build's progress, and
the export. Building runs as a Job, shown and polled with the shared job partial (assessments:job).
"""

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.models import Campaign
from assessments.selectors.campaigns import latest_job
from assessments.selectors.pool_preview import preview_pool
from assessments.selectors.pools import export_lines, pool_statistics
from assessments.services import pooling


class PoolForm(forms.Form):
    strategy = forms.ChoiceField(choices=list(pooling.STRATEGIES.items()), initial="depth")
    depth = forms.IntegerField(min_value=1, max_value=pooling.MAX_DEPTH, initial=5, required=False)
    budget = forms.IntegerField(
        min_value=1, required=False,
        help_text="RBP: pool size per topic. Bandits: documents added per topic.",
    )
    order = forms.ChoiceField(choices=list(pooling.ORDERS.items()), initial="both")
    runs = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False, help_text="None ticked: all runs.")

    def __init__(self, data=None, *, run_tags: list[str]) -> None:
        super().__init__(data)
        cast(forms.MultipleChoiceField, self.fields["runs"]).choices = [(tag, tag) for tag in run_tags]

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if not self.errors:
            try:
                data["spec"] = pooling.PoolSpec.from_params(data)
            except pooling.PoolingError as exc:
                raise forms.ValidationError(str(exc)) from None
        return data


def _problems(form: forms.Form) -> list[str]:
    return [str(message) if field == "__all__" else f"{field}: {message}" for field, messages_ in form.errors.items() for message in messages_]


@login_required
def pool(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The statistics and the build form; with form values in the query, also their preview (a partial for htmx),
    which carries the button that builds exactly what was previewed."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    stats = pool_statistics(campaign=campaign)
    form = PoolForm(request.GET if "strategy" in request.GET else None, run_tags=[run.tag for run in stats.runs])
    preview, spec, error = None, None, ""
    if form.is_bound and form.is_valid():
        spec = form.cleaned_data["spec"]
        try:
            preview = preview_pool(campaign=campaign, spec=spec)
        except pooling.PoolingError as exc:
            error = str(exc)
    elif form.is_bound:
        error = "; ".join(_problems(form))
    context = {"campaign": campaign, "stats": stats, "form": form, "preview": preview, "spec": spec, "error": error}
    if request.htmx and form.is_bound:
        return render(request, "assessments/pool_preview.html", context)
    return render(request, "assessments/pool.html", {**context, "job": latest_job(campaign, kind="build_pool")})


@require_POST
@login_required
def pool_build(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = PoolForm(request.POST, run_tags=list(campaign.runs.values_list("tag", flat=True)))
    if not form.is_valid():
        messages.error(request, "; ".join(_problems(form)))
        return redirect("assessments:pool", slug)
    try:
        job = pooling.start_build(campaign=campaign, spec=form.cleaned_data["spec"], user=request.user)
    except pooling.PoolingError as exc:
        messages.error(request, str(exc))
        return redirect("assessments:pool", slug)
    if request.htmx:
        return render(request, "assessments/_job_status.html", {"campaign": campaign, "job": job})
    messages.success(request, f"Pool build queued: {form.cleaned_data['spec'].label}.")
    return redirect("assessments:pool", slug)


@login_required
def pool_export(request: AuthenticatedHttpRequest, slug: str) -> StreamingHttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    return export_response(campaign, missing=request.GET.get("missing") == "1")


def export_response(campaign: Campaign, *, missing: bool) -> StreamingHttpResponse:
    """`qid doc` per pool entry (or only the missing ones), streamed from the cursor; the API answers with it too."""
    response = StreamingHttpResponse(
        export_lines(campaign=campaign, missing_only=missing), content_type="text/plain; charset=utf-8"
    )
    name = f"{campaign.slug}-pool{'-missing' if missing else ''}.txt"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


urlpatterns = [
    path("<slug:slug>/pool/", pool, name="pool"),
    path("<slug:slug>/pool/build/", pool_build, name="pool_build"),
    path("<slug:slug>/pool/export/", pool_export, name="pool_export"),
]
