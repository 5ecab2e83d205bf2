"""The adjudicator's page: one disputed document with every assessor's labels and notes, the decision so far and
its history, and the form that records the final label. Keys j and k move to the next and previous open case
(a disagreement nobody has decided yet) of the same scope as the disagreements list it came from.

A case that came from a machine judge's disagreements (``source=machine&judge=NAME`` in the query) also shows
that judge's labels and reasons, marked as the machine's, and its navigation follows that list instead.

Admins and the campaign's adjudicators reach it (access.get_campaign_for_adjudicator).
"""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse

from accounts.http import AuthenticatedHttpRequest
from assessments import access, charts
from assessments.models import Adjudication, Campaign, Document, Judgment, MachineJudge, Topic
from assessments.rendering import DOCUMENT_PAGE_CSP, document_html, safe_link
from assessments.selectors.agreement import list_disagreements, requested_scope
from assessments.selectors.machine_judges import machine_disagreements, opinion, routing_judge
from assessments.services.adjudication import AdjudicationError, Decision, adjudicate

ALL_CASES = 100_000  # one page holding every disagreement of a scope, for the case navigation


class DecisionForm(forms.Form):
    """One set of radio buttons per dimension of the campaign's scheme, in its order and named by it, then the reason.

    A dimension that is always asked and required has no "none"; any other may be left undecided, and
    services.adjudication checks the whole decision against the scheme (its conditions and what it requires)."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=5000)

    def __init__(self, *args, campaign: Campaign, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.scheme = campaign.label_scheme
        labels = {}
        for d in self.scheme.dimensions:
            always = d.required and d.condition is None
            choices = [(v.value, f"{v.value} {v.name}" if d.ordinal else v.name) for v in d.values]
            labels[d.name] = forms.TypedChoiceField(
                label=d.title, coerce=d.parse, empty_value=None, required=always, widget=forms.RadioSelect,
                choices=choices if always else [("", "none"), *choices],
            )
        self.fields = {**labels, "reason": self.fields["reason"]}

    def decision(self) -> Decision:
        """The valid form's decision: the dimensions given a value, and the reason."""
        data = self.cleaned_data
        return Decision(labels={d: data[d] for d in self.scheme.names if data.get(d) is not None}, reason=data["reason"])


def _cases(
    request: AuthenticatedHttpRequest, campaign: Campaign,
) -> tuple[list[tuple[str, int]], set[tuple[str, int]], str, MachineJudge | None]:
    """The scope's disagreements in list order (the assessors', or a machine judge's with the assessors), the decided
    ones among them, the scope as a query string, and the machine judge if the list is one's."""
    scope, problem = requested_scope(campaign, request.GET)
    if problem:
        messages.error(request, problem)
    judge = routing_judge(campaign, request.GET.get("judge", "")) if request.GET.get("source") == "machine" else None
    if judge is not None:
        keys = [(case.topic, case.document_id) for case in machine_disagreements(campaign, judge, topic=scope.topic)]
    else:
        rows = list_disagreements(campaign=campaign, scope=scope, per_page=ALL_CASES).page.object_list
        keys = [(row.topic, row.document_id) for row in rows]
    decided = set(
        Adjudication.objects.filter(topic__campaign=campaign, document_id__in={d for _, d in keys}).values_list("topic__number", "document_id")
    )
    query = {"phase": scope.phase, **({"round": scope.round} if scope.round else {}), **({"topic": scope.topic} if scope.topic else {}),
             **({"source": "machine", "judge": judge.name} if judge else {})}
    return keys, decided, urlencode(query), judge


def _neighbours(keys: list[tuple[str, int]], decided: set, here: tuple[str, int]) -> tuple:
    """The previous and next open cases around `here` (which may itself be decided, or not in the list)."""
    position = keys.index(here) if here in keys else -1
    open_before = [k for k in keys[: max(position, 0)] if k not in decided]
    open_after = [k for k in keys[position + 1:] if k not in decided]
    return (open_before[-1] if open_before else None), (open_after[0] if open_after else None)


def _case_url(campaign: Campaign, key: tuple[str, int] | None, query: str) -> str:
    return f"{reverse('assessments:adjudicate', args=[campaign.slug, *key])}?{query}" if key else ""


@login_required
def adjudication_page(request: AuthenticatedHttpRequest, slug: str, topic: str, document_id: int) -> HttpResponse:
    campaign = access.get_campaign_for_adjudicator(request.user, slug)
    topic_row = Topic.objects.filter(campaign=campaign, number=topic).first()
    if topic_row is None:
        raise Http404("No such topic")
    topic_row.campaign = campaign
    document = access.get_document_for_campaign(campaign, document_id)
    current = Adjudication.objects.filter(topic=topic_row, document=document).first()
    form = DecisionForm(request.POST or None, campaign=campaign, initial=current and {**current.labels, "reason": current.reason})
    keys, decided, query, judge = _cases(request, campaign)
    previous, following = _neighbours(keys, decided, (topic, document_id))
    queue_url = f"{reverse('assessments:machine_disagreements' if judge else 'assessments:disagreements', args=[slug])}?{query}"
    if request.method == "POST" and form.is_valid():
        try:
            adjudicate(topic=topic_row, document=document, decision=form.decision(), by=request.user)
        except AdjudicationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Final label of {document.doc_id} for topic {topic} recorded.")
            return redirect(_case_url(campaign, following, query) or queue_url)
    scheme = form.scheme
    judgments = Judgment.objects.filter(topic=topic_row, document=document).select_related("assessor").order_by("phase", "assessor__username")
    history = current.events.select_related("adjudicator") if current else []
    context = {
        "campaign": campaign, "topic": topic_row, "document": document, "form": form, "query": query,
        "dimensions": scheme.dimensions, "judgments": [(j, charts.label_chips(scheme, j.labels, missing=True)) for j in judgments],
        "adjudication": current, "history": [(e, charts.label_chips(scheme, e.labels)) for e in history],
        "previous_url": _case_url(campaign, previous, query), "next_url": _case_url(campaign, following, query),
        "open_cases": sum(1 for k in keys if k not in decided), "document_url": safe_link(document.url),
        "body_html": document_html(document.body, is_html=document.is_html) if document.has_text else "",
        "queue_url": queue_url, "machine": judge and _machine_side(judge, topic_row, document),
    }
    response = render(request, "assessments/adjudication.html", context, status=400 if form.errors else 200)
    response["Content-Security-Policy"] = DOCUMENT_PAGE_CSP
    return response


def _machine_side(judge: MachineJudge, topic: Topic, document: Document) -> dict:
    """The judge's current labels of the case, as chips, and each label's row (its reason and provenance)."""
    rows = opinion(judge, topic=topic, document=document)
    scheme = topic.campaign.label_scheme
    return {"judge": judge, "chips": charts.label_chips(scheme, {name: row.value for name, row in rows.items()}, missing=True),
            "rows": [(d.title, rows[d.name]) for d in scheme.dimensions if d.name in rows]}


urlpatterns = [
    path("<slug:slug>/adjudicate/<str:topic>/<int:document_id>/", adjudication_page, name="adjudicate"),
]
