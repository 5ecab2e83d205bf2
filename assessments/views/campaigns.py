"""Organiser pages: the campaigns a user runs, a new campaign, its settings, and the people who run one. Views translate HTTP;
services do the work."""

import json

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.forms.models import model_to_dict
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from assessments import access
from assessments.labels import PRESETS, LabelScheme, SchemeError
from assessments.metrics.evaluation import stance_dimension
from assessments.models import Campaign, Membership
from assessments.selectors.campaigns import campaigns_for_organiser, hub_status, members_of
from assessments.services import campaigns


class CampaignForm(forms.Form):
    slug = forms.SlugField(max_length=64, help_text="short name for URLs and commands, e.g. touche22-task2")
    name = forms.CharField(max_length=200)
    preset = forms.ChoiceField(
        choices=[("", "— your own scheme, below —"), *((name, description) for name, (description, _) in PRESETS.items())],
        required=False,
    )
    scheme = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}), required=False, label="Your own label scheme",
        help_text='JSON, as create_campaign --scheme reads it: {"version": 2, "dimensions": [...]}; leave empty with a preset',
    )
    collection = forms.SlugField(max_length=64, required=False, help_text="shared with campaigns over the same corpus")
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)


    def clean_preset(self) -> str | None:
        return self.cleaned_data["preset"] or None

    def clean_scheme(self) -> LabelScheme | None:
        text = self.cleaned_data["scheme"].strip()
        if not text:
            return None
        try:
            return LabelScheme.from_json(json.loads(text))
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"line {exc.lineno}: invalid JSON: {exc.msg}") from exc
        except RecursionError as exc:
            raise forms.ValidationError("JSON nested too deeply") from exc
        except SchemeError as exc:
            raise forms.ValidationError(str(exc)) from exc


class StanceCodesField(forms.CharField):
    """A campaign's stance codes as the command line writes them, `SUP=SUPPORT, REF=REFUTE` (empty: none); whether
    the values are the scheme's, services.campaigns.update_settings checks."""

    def prepare_value(self, value: object) -> object:
        return campaigns.format_stance_codes(value) if isinstance(value, dict) else value

    def to_python(self, value: object) -> dict[str, str]:  # type: ignore[override]  # a mapping, not the text typed
        try:
            return campaigns.parse_stance_codes(str(super().to_python(value)))
        except campaigns.CampaignError as exc:
            raise forms.ValidationError(str(exc)) from exc


class SettingsForm(forms.ModelForm):
    """The settings an organiser changes after creation; ranges come from the model's validators. Bound without an
    instance, so an invalid submission leaves the campaign on the page as stored."""

    stance_codes = StanceCodesField(
        required=False, label="Stance codes in runs",
        help_text="the codes runs write in their stance column and the stance values they stand for, e.g. "
        "SUP=SUPPORT, REF=REFUTE, NEU=NEUTRAL, NO=NO; applied to runs imported from now on",
    )

    class Meta:
        model = Campaign
        fields = campaigns.SETTINGS
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 4})}
        labels = {"propagate_to_duplicates": "Copy labels to duplicate documents",
                  "machine_disagreement": "Machine disagreement to adjudicate (grades)",
                  "reveal_machine_labels": "Show machine labels to assessors after they save their own"}
        help_texts = {"agreement_threshold": "mean kappa an assessor needs to pass training (−1 to 1)",
                      "overlap_share": "share of each main-phase topic a second assessor judges (0 to 1)",
                      "machine_disagreement": "a document goes to adjudication when a machine judge's grade and the "
                                              "assessors' differ by at least this (any difference for a category)",
                      "reveal_machine_labels": "off by default: people drift toward a label they see; every showing is "
                                               "recorded and marks their later labels of that document model-influenced"}

    def clean_guidelines(self) -> str:
        """Browsers send a textarea's lines ended by CRLF: as typed, they would differ from the stored text on every
        save, and an unchanged form would rewrite the guidelines and record it."""
        return self.cleaned_data["guidelines"].replace("\r\n", "\n")


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.ORGANISER)


@login_required
def campaign_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The campaigns the user runs; a POST creates one, run by whoever created it."""
    if not request.user.is_organiser:
        raise Http404("No such page")
    form = CampaignForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            campaign = campaigns.create_campaign(**form.cleaned_data, organisers=[request.user], created_by=request.user)
        except campaigns.CampaignError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Campaign {campaign.slug} created.")
            return redirect(campaign)
    return render(request, "assessments/campaign_list.html", {
        "campaigns": campaigns_for_organiser(request.user), "form": form,
    }, status=400 if form.is_bound else 200)


def _steps(request: AuthenticatedHttpRequest, campaign: Campaign) -> list[dict]:
    """The campaign page's tiles in the order a campaign is run, numbered as shown to this user (a step they cannot
    take is left out, not skipped in the numbering), each with where it stands."""
    n = hub_status(campaign)

    def count(key: str, word: str) -> str:
        return f"{n[key]:,} {word}{'' if n[key] == 1 else 's'}"

    judged = f"{n['judged']:,} of {n['pooled']:,} judged" if n["pooled"] else "nothing pooled yet"
    results = {"classification": "Macro-F1 and the lab's measures of every submission, per language.",
               "images": "The three precision@10 measures of every image run, with intervals."}.get(
        campaign.kind, "nDCG, judged@k and stance scores of every run, from the current judgments.")
    numbered = [
        ("imports", "Data in", "Topics, collection and runs: uploads with live progress.",
         f"{count('topics', 'topic')} · {count('documents', 'document')} · {count('runs', 'run')}"),
        ("pool", "Pool", "Build and preview pools, duplicates, missing documents, judging effort.", judged),
        ("assignments", "Assign", "Training and main-phase topics, workload balancing, overlap slice.",
         count("assignments", "active assignment")),
    ]
    if request.user.is_campaign_admin:
        numbered.append(("agreement", "Agreement", "Kappa and alpha per dimension, disagreements, who stands out.",
                         campaign.get_phase_display() + (f", round {campaign.training_round}" if campaign.phase == "training" else "")))
    elif access.can_adjudicate(request.user, campaign):
        numbered.append(("disagreements", "Disagreements", "Documents the assessors labelled differently, to adjudicate.", ""))
    numbered += [
        ("qrels", "Qrels", "Export numbered snapshots, compare them, import earlier judgments.", count("snapshots", "snapshot")),
        ("leaderboard", "Results", results, count("runs", "run")),
    ]
    steps = [{"url": reverse(f"assessments:{name}", args=[campaign.slug]), "mark": str(i), "title": title, "text": text, "status": status}
             for i, (name, title, text, status) in enumerate(numbered, 1)]
    steps[-1:-1] = [  # beside the steps, any time
        {"url": reverse("assessments:discussion", args=[campaign.slug]), "mark": "✎", "title": "Discussion",
         "text": "Every flag and note of the assessors, by topic; reply and resolve.", "status": ""},
        {"url": reverse("assessments:timeline", args=[campaign.slug]), "mark": "◷", "title": "Timeline",
         "text": "Every change to the campaign: who, when, before and after.", "status": ""},
    ]
    return steps


def _stance_codes_help(scheme: LabelScheme) -> str:
    """The stance-codes field's help, naming the values this campaign's scheme has (by value and name), not another
    task's."""
    stance = stance_dimension(scheme)
    if stance is None:
        return "this campaign's scheme has no category for a run's stance column, so runs' stance codes are not read"
    values = ", ".join(f"{v.value} ({v.name})" for v in stance.values)
    return (f"the codes runs write in their stance column, each with the stance value it stands for (CODE=VALUE, "
            f"comma-separated); this campaign's {stance.title.lower()} values: {values}; applied to runs imported from now on")


def _detail(request: AuthenticatedHttpRequest, campaign: Campaign, settings_form: SettingsForm, status: int = 200) -> HttpResponse:
    settings_form.fields["stance_codes"].help_text = _stance_codes_help(campaign.label_scheme)
    return render(request, "assessments/campaign_detail.html", {
        "campaign": campaign, "steps": _steps(request, campaign),
        "members": members_of(campaign),
        "member_form": MemberForm(),
        "settings_form": settings_form,
        "can_adjudicate": access.can_adjudicate(request.user, campaign),
        "grants_adjudication": access.may_grant_adjudication(request.user),
    }, status=status)


@login_required
def campaign_detail(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    initial = model_to_dict(campaign, fields=campaigns.SETTINGS)
    initial["stance_codes"] = campaigns.format_stance_codes(campaign.stance_codes, campaign.label_scheme)
    return _detail(request, campaign, SettingsForm(initial=initial))


@require_POST
@login_required
def campaign_settings(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Change the campaign's settings; an invalid value shows the page again with the form's errors."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = SettingsForm(request.POST)
    if form.is_valid():
        before = model_to_dict(campaign, fields=campaigns.SETTINGS)
        try:
            campaign = campaigns.update_settings(campaign=campaign, changes=form.cleaned_data, by=request.user)
        except campaigns.CampaignError as exc:
            form.add_error(None, str(exc))
        else:
            changed = [str(form.fields[name].label) for name in campaigns.SETTINGS if getattr(campaign, name) != before[name]]
            if changed:
                messages.success(request, f"Settings saved: {', '.join(changed)}.")
            else:
                messages.info(request, "Nothing changed: the settings already had these values.")
            return redirect(campaign)
    return _detail(request, campaign, form, status=400)


@require_POST
@login_required
def members(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Add a member (or change their role), or remove one (`remove` names them)."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = MemberForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nobody added: {form.errors.as_text()}")
        return redirect(campaign)
    name, role = form.cleaned_data["username"], form.cleaned_data["role"]
    user = User.objects.filter(username=name, is_active=True).first()
    try:
        if user is None:
            raise campaigns.CampaignError(f"no active user {name!r}")
        if request.POST.get("remove"):
            campaigns.remove_member(campaign=campaign, user=user, by=request.user)
            messages.success(request, f"{name} no longer runs {campaign.slug}.")
        else:
            if role == Membership.Role.ADJUDICATOR and not access.may_grant_adjudication(request.user):
                raise campaigns.CampaignError("only admins make organisers adjudicators")
            campaigns.add_member(campaign=campaign, user=user, role=role, by=request.user)
            messages.success(request, f"{name} runs {campaign.slug} as {Membership.Role(role).label.lower()}.")
    except campaigns.CampaignError as exc:
        messages.error(request, str(exc))
    return redirect(campaign)


@require_POST
@login_required
def archive(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Archive the campaign (`archived=1`) or take it out of the archive (`archived=0`)."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    archived = request.POST.get("archived") == "1"
    campaigns.set_archived(campaign=campaign, archived=archived, by=request.user)
    if archived:
        messages.success(request, f"{campaign.name} is archived: its assessors no longer see it, and it takes no labels.")
    else:
        messages.success(request, f"{campaign.name} is out of the archive: its assessors see their topics again.")
    return redirect(campaign)


urlpatterns = [
    path("", campaign_list, name="campaign_list"),
    path("<slug:slug>/", campaign_detail, name="campaign"),
    path("<slug:slug>/settings/", campaign_settings, name="campaign_settings"),
    path("<slug:slug>/members/", members, name="campaign_members"),
    path("<slug:slug>/archive/", archive, name="campaign_archive"),
]
