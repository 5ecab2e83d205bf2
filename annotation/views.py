"""The assessor's workspace: their list of work, and the judge page (one document at a time).

Labels are saved by the page's script through the assessor API (annotation.api), so these views
only read. Every id in a URL is resolved through assessments.access (404 unless it is the
viewer's own active assignment). The judge page moves between documents without leaving the page: its
script asks for the same URL with htmx's header and swaps in the document partial, so keys typed while
the next document loads wait for it instead of landing on the one being left.
"""

from typing import TYPE_CHECKING, TypedDict, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from assessments import access
from assessments.formats.cofe import LANGUAGES
from assessments.labels import CATEGORY, QUESTION, Condition, LabelScheme
from assessments.models import Assignment, Phase
from assessments.rendering import document_html, safe_link, topic_terms
from assessments.selectors import discussion, queues
from assessments.services import images, machine_judges
from assessments.services.judging import awaits_main_phase, not_started_message

from .keymap import keymap

if TYPE_CHECKING:  # django-stubs-ext is a checking tool, not installed in production
    from django_stubs_ext import WithAnnotations

# Second wall behind sanitising (assessments.rendering): no inline or foreign script, style, image,
# frame or connection on the page that shows untrusted documents.
JUDGE_PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'; object-src 'none'"
)


@login_required
def my_work(request: AuthenticatedHttpRequest) -> HttpResponse:
    assignments = list(queues.work_for_assessor(request.user))
    return render(request, "annotation/my_work.html", {
        "assignments": assignments, "replies": discussion.replies_for_assessor(request.user),
        "not_started": {a.pk for a in assignments if awaits_main_phase(a)},
        "languages": [(code, code in request.user.languages) for code in sorted(LANGUAGES)],
    })


@require_POST
@login_required
def languages(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The languages the assessor reads: a multilingual campaign gives them only items in these
    (services.item_assignments), so only they can say which."""
    chosen = [code for code in request.POST.getlist("languages") if code in LANGUAGES]
    request.user.languages = sorted(set(chosen))
    request.user.save(update_fields=["languages"])
    messages.success(request, f"Languages you read: {', '.join(request.user.languages) or 'none'}.")
    return redirect("annotation:my_work")


@login_required
def image(request: AuthenticatedHttpRequest, assignment_id: int, entry_id: int, thumbnail: bool = False) -> HttpResponseBase:
    """An image of the assessor's own assignment (or its thumbnail), served as services.images says; 404 otherwise."""
    assignment = access.get_assignment_for_assessor(request.user, assignment_id, closed_training=True)
    return images.image_response(access.get_entry_for_assignment(assignment, entry_id).document, thumbnail=thumbnail)


@login_required
def open_document(request: AuthenticatedHttpRequest, assignment_id: int, document_id: int) -> HttpResponse:
    """A document of the assessor's own assignment by id (the replies on My work link here): its judge page."""
    assignment = access.get_assignment_for_assessor(request.user, assignment_id, closed_training=True)
    if awaits_main_phase(assignment):
        return not_started(request, assignment)
    position = queues.position_of(assignment, document_id)
    if position is None:
        raise Http404("No such document in this assignment")
    return redirect("annotation:judge", assignment.pk, position)


@login_required
def resume(request: AuthenticatedHttpRequest, assignment_id: int) -> HttpResponse:
    """Continue where the assessor stopped (see assessments.selectors.queues.resume_position)."""
    assignment = access.get_assignment_for_assessor(request.user, assignment_id)
    if awaits_main_phase(assignment):
        return not_started(request, assignment)
    position = queues.resume_position(assignment)
    if not position:
        raise Http404("This topic has no documents to judge yet")
    return redirect("annotation:judge", assignment.pk, position)


@never_cache  # labels change: a page from the cache (or the back button) would show an old version
@vary_on_headers("HX-Request")
@login_required
def judge(request: AuthenticatedHttpRequest, assignment_id: int, position: int) -> HttpResponse:
    # A closed training round's topic opens read-only: the assessor reads the organisers' replies there.
    assignment = access.get_assignment_for_assessor(request.user, assignment_id, closed_training=True)
    if awaits_main_phase(assignment):
        return not_started(request, assignment)
    here = queues.queue_position(assignment, position, with_document=True)
    if here is None:
        raise Http404("No document at this position")
    document = here.document
    assert document is not None  # with_document
    topic, campaign = assignment.topic, assignment.topic.campaign
    payload = {
        "user": request.user.pk,
        "assignment": assignment.pk,
        "entry": here.entry_id,
        "position": position,
        "total": here.total,
        "title": f"{position}/{here.total} · Topic {topic.number}",
        "hasText": document.has_text,
        # Judged elsewhere in the queue, so the page can count this document in or out live.
        "judgedElsewhere": here.judged - here.is_judged,
        "followingUnjudged": here.following_unjudged,
        "precedingUnjudged": here.preceding_unjudged,
        "nextUnjudged": here.next_unjudged,
        "pageBase": reverse("annotation:resume", args=[assignment.pk]),
        "saveUrl": reverse("work-judgment", args=[assignment.pk, here.entry_id]),
        "queueUrl": reverse("work-queue", args=[assignment.pk]),
        "closed": _closed(assignment),
        "judgment": here.labels,
    }
    if here.judged - here.is_judged >= here.total - 1:
        # This is the last document left to judge (or none is left): where to go once it is judged. Worked out only
        # here, so the other documents of a topic pay nothing for it.
        payload["afterTopic"] = _next_work(request.user, assignment)
    if request.htmx:
        # The next document's part, swapped in by the page's script, which reads the scheme, the keys, the terms to
        # highlight and the CSRF token from its first page only (static/annotation/judge/main.js): none of them is worked out
        # again for each document (masking a token alone costs 32 random characters).
        template, context = "annotation/_document.html", {}
    else:
        scheme = campaign.label_scheme
        keys = keymap(
            scheme, translation=bool(topic.metadata.get("text_en") or topic.metadata.get("title_en")), images=campaign.is_images
        )
        payload |= {
            # The dimensions with their titles, kinds and conditions: the script shows a dimension only while its
            # condition holds, and clears what a change leaves unasked (static/annotation/judge/labels.js).
            "scheme": scheme.to_json(),
            "keys": keys,
            "terms": topic_terms(title=topic.title, compared_objects=topic.compared_objects, cause=topic.cause, effect=topic.effect),
            # One token for the page's script and its forms: each get_token masks the secret anew.
            "csrf": get_token(request),
        }
        template = "annotation/judge.html"
        context = {
            "controls": _controls(scheme, topic.compared_objects), "commands": keys["commands"], "csrf_token": payload["csrf"],
            "primary": scheme.primary,
            # The command keys a label of the scheme took: their buttons show no key cap (annotation.keymap).
            "taken_keys": {label["key"].lower() for label in keys["labels"]},
        }
    context |= {
        "assignment": assignment,
        "topic": topic,
        "campaign": campaign,
        "document": document,
        "document_url": safe_link(document.url),
        "body_html": document_html(document.body, is_html=document.is_html) if document.has_text else "",
        "here": here,
        "payload": payload,
        "replies": discussion.replies_for_judge_page(assignment, document.pk, has_replies=here.has_replies),
        "machine_labels": machine_judges.reveal(assessor=request.user, topic=topic, document=document, judged=here.is_judged),
    }
    response = render(request, template, context)
    response["Content-Security-Policy"] = JUDGE_PAGE_CSP
    return response


def not_started(request: AuthenticatedHttpRequest, assignment: Assignment) -> HttpResponse:
    """The refusal of a main-phase topic whose campaign is still in setup or training (judging.awaits_main_phase)."""
    message = not_started_message(assignment.topic.campaign)
    return render(request, "annotation/not_started.html", {"topic": assignment.topic, "message": message}, status=403)


def _closed(assignment: Assignment) -> str:
    """Why the judge page is read-only (empty: it is not). A training round closes before its campaign does, and its
    assessors go on judging main-phase topics, so "this campaign is closed" would be wrong there."""
    if assignment.topic.campaign.phase == Phase.CLOSED:
        return "This campaign is closed: labels can be read but no longer changed."
    if not assignment.active:
        return "This training round is closed: read your labels and the organisers' replies; they can no longer be changed."
    return ""


class _Progress(TypedDict):
    """What queues.work_for_assessor annotates each assignment with."""

    pool_size: int
    judged: int


def _next_work(user: User, assignment: Assignment) -> dict:
    """Where the judge page sends an assessor who has judged the whole topic: their first other topic with documents
    left to judge that is open now, or My work when there is none."""
    others = cast("QuerySet[WithAnnotations[Assignment, _Progress]]", queues.work_for_assessor(user).exclude(pk=assignment.pk))
    for other in others:
        if other.judged < other.pool_size and not awaits_main_phase(other):
            return {"url": reverse("annotation:resume", args=[other.pk]), "topic": f"{other.topic.number} · {other.topic.title}"}
    return {"url": reverse("annotation:my_work"), "topic": ""}


def _controls(scheme: LabelScheme, compared_objects: list[str]) -> list[dict]:
    """The label buttons per dimension of the scheme, in its order, each named as the scheme names its value (as
    every other page does, assessments.charts.value_text). A comparative topic's FIRST and SECOND values name its
    object beside that name, so the assessor need not remember which object was first."""
    objects = dict(zip(("FIRST", "SECOND"), compared_objects, strict=False))
    groups = []
    for dimension in scheme.dimensions:
        buttons = [
            {"value": v.value, "name": v.name, "key": v.key,
             "object": objects.get(v.value, "") if dimension.kind == CATEGORY and isinstance(v.value, str) else ""}
            for v in dimension.values
        ]
        # Short names (stances of comparative topics) sit two to a row; long ones need the width.
        paired = dimension.kind == CATEGORY and max(len(f"{b['name']} {b['object']}".strip()) for b in buttons) <= 16
        condition = dimension.condition
        groups.append({
            "dimension": dimension.name, "title": dimension.title, "kind": dimension.kind, "buttons": buttons, "paired": paired,
            "hint": "" if condition is None else f"if {_describe(scheme, condition)}",
        })
    return groups


def _describe(scheme: LabelScheme, condition: Condition) -> str:
    """A condition as the label pane words it: "if relevance ≥ 1", "if direction is Cause → effect, as asked"."""
    target = scheme.dimension(condition.dimension)
    if condition.min is not None and target.kind == QUESTION:
        return f"{target.title.lower()} is {target.name_of(1)}"  # a yes/no question's min can only be 1
    if condition.min is not None:
        return f"{target.title.lower()} ≥ {condition.min}"
    return f"{target.title.lower()} is {' or '.join(target.name_of(v) for v in condition.any_of)}"
