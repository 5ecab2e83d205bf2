"""The organiser's machine judges pages: the campaign's judges (add one), a judge's prompts (an edit is a new version),
its run (the cost estimate first, then a job with progress and a cancel), its labels with their provenance, its
agreement with the assessors, and for adjudicators the documents where it and the assessors' majority differ.

Every page looks the campaign up through access (organisers of the campaign; the disagreements, adjudicators). A
judge's key is named, never shown: the forms take the name of the environment variable that holds it, and a name
that was refused is not sent back in the form (it may be the key itself, pasted by mistake).
"""

import json
from typing import cast
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.core.validators import RegexValidator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from assessments import access, charts
from assessments.models import Adjudication, Campaign, Job, MachineJudge, MachineLabel
from assessments.prompts import DOCUMENT_CHARS
from assessments.selectors import machine_judges as judges
from assessments.services import machine_judges

# An environment variable's name as shells write them; a key has lower-case letters or dashes, so it is refused.
KEY_NAME = RegexValidator(
    r"^[A-Z][A-Z0-9_]{0,63}$",
    "Name the environment variable that holds the key (capitals, digits and _, e.g. OPENAI_API_KEY), never the key itself.",
)
MAX_IN_FLIGHT, MAX_PER_MINUTE, MAX_ATTEMPTS = 64, 100_000, 10
PROMPT_CHARS = 4 * DOCUMENT_CHARS
LABELS_PER_PAGE = 50
PLAINLY_WEAK = (
    "The local judge is a weak judge: it only measures how similar a document's text is to the topic (a small "
    "sentence-embedding model on the CPU), and turns that into grades by thresholds calibrated on the topics the "
    "assessors have judged. It cannot read an argument, its quality or its stance."
)


class JudgeForm(forms.Form):
    kind = forms.ChoiceField(choices=MachineJudge.Kind.choices, initial=MachineJudge.Kind.ENDPOINT)
    name = forms.SlugField(max_length=64, help_text="letters, digits, - and _")
    base_url = forms.CharField(label="Endpoint", max_length=500, required=False,
                               help_text="base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1")
    model = forms.CharField(max_length=200, required=False, help_text="the model the endpoint runs")
    key_name = forms.CharField(label="Key variable", max_length=64, required=False, validators=[KEY_NAME],
                               help_text="the environment variable of the workers that holds the key; blank: no key")
    parameters = forms.JSONField(required=False, initial={"temperature": 0}, widget=forms.TextInput,
                                 help_text="sent with every call, as JSON")
    in_flight = forms.IntegerField(label="Calls in flight", min_value=1, max_value=MAX_IN_FLIGHT, initial=4)
    per_minute = forms.IntegerField(label="Calls per minute", min_value=0, max_value=MAX_PER_MINUTE, initial=0, help_text="0: no limit")
    max_attempts = forms.IntegerField(label="Attempts per call", min_value=1, max_value=MAX_ATTEMPTS, initial=4)

    def clean_parameters(self) -> dict | None:
        value = self.cleaned_data["parameters"]
        if value is not None and not isinstance(value, dict):
            raise forms.ValidationError('Give the parameters as a JSON object, e.g. {"temperature": 0}.')
        return value

    def full_clean(self) -> None:
        super().full_clean()
        if self.is_bound and "key_name" in self.errors:
            self.data = {**self.data, "key_name": ""}


class PromptForm(forms.Form):
    system = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=PROMPT_CHARS, required=False)
    template = forms.CharField(widget=forms.Textarea(attrs={"rows": 14}), max_length=PROMPT_CHARS,
                               help_text="{title} {description} {narrative} {document} {objects} {cause} {effect}")
    answers = forms.JSONField(widget=forms.TextInput,
                              help_text='the model\'s final answer → the value it stands for, e.g. {"0": 0, "1": 1, "2": 2}')


class RunForm(forms.Form):
    dimensions = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False,
                                           help_text="none ticked: every dimension the judge can ask")
    topic = forms.ChoiceField(required=False)
    only_unjudged = forms.BooleanField(required=False, label="Only documents no assessor has judged")

    def __init__(self, data=None, *, judge: MachineJudge) -> None:
        super().__init__(data)
        cast(forms.MultipleChoiceField, self.fields["dimensions"]).choices = [(d.name, d.title) for d in judges.askable(judge)]
        topics = judge.campaign.topics.order_by("position", "number").values_list("number", "title")
        cast(forms.ChoiceField, self.fields["topic"]).choices = [("", "every topic"), *((n, f"{n} · {t[:60]}") for n, t in topics)]

    def run(self) -> dict:
        """The valid form as the services take it."""
        data = self.cleaned_data
        return {"dimensions": data["dimensions"], "topic": data["topic"] or None, "only_unjudged": data["only_unjudged"]}


def _problems(form: forms.Form) -> str:
    return "; ".join(str(m) if field == "__all__" else f"{form.fields[field].label or field}: {m}"
                     for field, found in form.errors.items() for m in found)


def get_judge(campaign: Campaign, name: str) -> MachineJudge:
    """A judge of `campaign` (which the caller looked up through access), with its counts; 404 otherwise."""
    judge = judges.judges_of(campaign).filter(name=name).first()
    if judge is None:
        raise Http404("No such machine judge")
    judge.campaign = campaign
    return judge


# --------------------------------------------------------------------------------------------------------------
# The campaign's judges


@login_required
def judges_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The judges with their counts and their agreement with the assessors; a POST adds one."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = JudgeForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        try:
            judge = machine_judges.add_judge(campaign=campaign, by=request.user, **form.cleaned_data)
        except machine_judges.MachineJudgeError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Judge {judge.name} added.")
            return redirect("assessments:machine_judge", slug, judge.name)
    listed = list(judges.judges_of(campaign))
    context = {
        "campaign": campaign, "judges": listed, "form": form, "weak": PLAINLY_WEAK,
        "agreement": judges.agreement(campaign, listed) if listed else {},
        "dimensions": campaign.label_scheme.dimensions, "can_adjudicate": access.can_adjudicate(request.user, campaign),
        "influenced": machine_judges.influenced(campaign).count() if campaign.reveal_machine_labels else 0,
    }
    return render(request, "assessments/machine_judges.html", context, status=400 if form.errors else 200)


# --------------------------------------------------------------------------------------------------------------
# One judge: prompts, run, agreement


@login_required
def judge_page(request: AuthenticatedHttpRequest, slug: str, name: str) -> HttpResponse:
    """The judge's settings, prompts and last run; with run options in the query, also their cost estimate (a partial
    for htmx), which carries the button that starts exactly that run."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    judge = get_judge(campaign, name)
    form = RunForm(request.GET if "estimate" in request.GET else None, judge=judge)
    estimate, error = None, ""
    if form.is_bound and form.is_valid():
        try:
            estimate = machine_judges.plan(judge=judge, **form.run()).as_estimate()
        except machine_judges.MachineJudgeError as exc:
            error = str(exc)
    elif form.is_bound:
        error = _problems(form)
    context = {"campaign": campaign, "judge": judge, "form": form, "estimate": estimate, "error": error}
    if request.htmx and form.is_bound:
        return render(request, "assessments/machine_judges_estimate.html", context)
    return _judge(request, campaign, judge, context)


def _judge(request: AuthenticatedHttpRequest, campaign: Campaign, judge: MachineJudge, context: dict,
           prompt_forms: dict | None = None, status: int = 200) -> HttpResponse:
    versions: dict[str, list] = {}
    for prompt in judge.prompts.select_related("created_by").order_by("dimension", "-version"):
        versions.setdefault(prompt.dimension, []).append(prompt)
    prompt_forms = prompt_forms or {}
    prompts = []
    for d in campaign.label_scheme.dimensions:
        if d.name in versions:
            current, *older = versions[d.name]
            form = prompt_forms.get(d.name) or PromptForm(initial={"system": current.system, "template": current.template,
                                                                   "answers": current.answers})
            prompts.append({"dimension": d, "current": current, "older": older, "form": form})
    job = (Job.objects.filter(campaign=campaign, kind="machine_judge", params__judge=judge.pk)
           .select_related("created_by").order_by("-created_at").first())
    context = {
        **context, "prompts": prompts, "job": job, "weak": PLAINLY_WEAK, "parameters": json.dumps(judge.parameters),
        "agreement": judges.agreement(campaign, [judge])[judge.name],
        "thresholds": [(d.title, judge.thresholds.get(d.name)) for d in judges.askable(judge)] if judge.is_local else [],
    }
    return render(request, "assessments/machine_judges_judge.html", context, status=status)


@require_POST
@login_required
def prompt_edit(request: AuthenticatedHttpRequest, slug: str, name: str, dimension: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    judge = get_judge(campaign, name)
    if judge.is_local:
        raise Http404("The local judge has thresholds, not prompts")
    form = PromptForm(request.POST)
    if form.is_valid():
        try:
            prompt, created = machine_judges.change_prompt(judge=judge, dimension=dimension, by=request.user, **form.cleaned_data)
        except machine_judges.MachineJudgeError as exc:
            form.add_error(None, str(exc))
        else:
            if created:
                messages.success(request, f"The {dimension} prompt is now version {prompt.version}: the next run asks every document again with it.")
            else:
                messages.info(request, f"The {dimension} prompt is unchanged: no new version.")
            return redirect(f"{reverse('assessments:machine_judge', args=[slug, name])}#prompt-{dimension}")
    context = {"campaign": campaign, "judge": judge, "form": RunForm(judge=judge), "estimate": None, "error": ""}
    return _judge(request, campaign, judge, context, prompt_forms={dimension: form}, status=400)


@require_POST
@login_required
def judge_run(request: AuthenticatedHttpRequest, slug: str, name: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    judge = get_judge(campaign, name)
    form = RunForm(request.POST, judge=judge)
    problem = "" if form.is_valid() else _problems(form)
    if not problem:
        try:
            job = machine_judges.start_judging(judge=judge, by=request.user, **form.run())
        except machine_judges.MachineJudgeError as exc:
            problem = str(exc)
        else:
            if request.htmx:
                return render(request, "assessments/_job_status.html", {"campaign": campaign, "job": job})
            messages.success(request, f"Run of {judge.name} queued: {job.params['estimate']['calls']} calls.")
            return redirect("assessments:machine_judge", slug, name)
    if request.htmx:  # htmx swaps only 2xx answers; the refusal shows where the job would have
        return render(request, "assessments/_job_status.html", {"campaign": campaign, "refused": problem})
    messages.error(request, f"The run was not started: {problem}")
    return redirect("assessments:machine_judge", slug, name)


@require_POST
@login_required
def judge_calibrate(request: AuthenticatedHttpRequest, slug: str, name: str) -> HttpResponse:
    """Fit the local judge's thresholds to the assessors' labels as they are now."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    judge = get_judge(campaign, name)
    if not judge.is_local:
        raise Http404("Only the local judge is calibrated")
    try:
        machine_judges.recalibrate(judge=judge, by=request.user)
    except machine_judges.MachineJudgeError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Thresholds fitted to the assessors' labels: runs from now on use them.")
    return redirect("assessments:machine_judge", slug, name)


@login_required
def judge_labels(request: AuthenticatedHttpRequest, slug: str, name: str) -> HttpResponse:
    """Every call of the judge, newest first, with its provenance; filtered by dimension, topic and status."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    judge = get_judge(campaign, name)
    chosen = {key: request.GET.get(key, "") for key in ("dimension", "topic", "status")}
    if chosen["status"] not in ("", *MachineLabel.Status.values):
        chosen["status"] = ""
    page = Paginator(judges.labels_of(judge, **chosen), LABELS_PER_PAGE).get_page(request.GET.get("page"))
    scheme = campaign.label_scheme
    context = {
        "campaign": campaign, "judge": judge, "page": page, "chosen": chosen, "statuses": MachineLabel.Status.choices,
        "dimensions": scheme.dimensions, "topics": campaign.topics.order_by("position", "number").values_list("number", flat=True),
        "rows": [(row, charts.label_chips(scheme, row.labels)) for row in page.object_list],
        "query": urlencode({key: value for key, value in chosen.items() if value}),
    }
    return render(request, "assessments/machine_judges_labels.html", context)


# --------------------------------------------------------------------------------------------------------------
# Disagreements with the assessors, for adjudication


@login_required
def disagreements_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The documents where a judge and the assessors' majority differ by the campaign's threshold, furthest apart
    first, each leading to the adjudication page (its case navigation follows this list)."""
    campaign = access.get_campaign_for_adjudicator(request.user, slug)
    judge = judges.routing_judge(campaign, request.GET.get("judge", ""))
    topic = request.GET.get("topic") or None
    cases = judges.machine_disagreements(campaign, judge, topic=topic) if judge else []
    page = Paginator(cases, LABELS_PER_PAGE).get_page(request.GET.get("page"))
    scheme = campaign.label_scheme
    decided = {
        (number, document_id): labels for number, document_id, labels in Adjudication.objects.filter(
            topic__campaign=campaign, document_id__in=[case.document_id for case in page.object_list]
        ).values_list("topic__number", "document_id", "labels")
    }
    query = urlencode({"source": "machine", "judge": judge.name, **({"topic": topic} if topic else {})}) if judge else ""
    context = {
        "campaign": campaign, "judge": judge, "judges": MachineJudge.objects.filter(campaign=campaign).order_by("name"),
        "page": page, "count": len(cases), "topic": topic or "", "query": query,
        "rows": [
            (case, charts.label_chips(scheme, case.human, missing=True), charts.label_chips(scheme, case.machine, missing=True),
             None if (final := decided.get((case.topic, case.document_id))) is None else charts.label_chips(scheme, final))
            for case in page.object_list
        ],
    }
    return render(request, "assessments/machine_judges_disagreements.html", context)


urlpatterns = [
    path("<slug:slug>/machine-judges/", judges_page, name="machine_judges"),
    path("<slug:slug>/agreement/machine-disagreements/", disagreements_page, name="machine_disagreements"),
    path("<slug:slug>/machine-judges/<slug:name>/", judge_page, name="machine_judge"),
    path("<slug:slug>/machine-judges/<slug:name>/run/", judge_run, name="machine_judge_run"),
    path("<slug:slug>/machine-judges/<slug:name>/calibrate/", judge_calibrate, name="machine_judge_calibrate"),
    path("<slug:slug>/machine-judges/<slug:name>/labels/", judge_labels, name="machine_judge_labels"),
    path("<slug:slug>/machine-judges/<slug:name>/prompts/<str:dimension>/", prompt_edit, name="machine_judge_prompt"),
]
