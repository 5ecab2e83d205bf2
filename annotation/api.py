"""The assessor's API: their work, an assignment's queue, one document, and its judgment.

The judge page uses exactly these endpoints, so an external client (a script, another tool)
judges through the same checks. Every lookup goes through assessments.access: an assessor reaches
only their own active assignments and, for an overlap assignment, only its slice (404
otherwise). No response names runs, ranks or scores, and only the caller's own labels appear.
"""

from typing import TYPE_CHECKING, TypedDict, cast

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from assessments import access
from assessments.models import Assignment, Document, Judgment, PoolEntry
from assessments.rendering import document_html, safe_link
from assessments.selectors import queues
from assessments.services.judging import (
    JudgingClosed,
    JudgingNotStarted,
    JudgmentError,
    Labels,
    StaleRevision,
    judge_entry,
)

if TYPE_CHECKING:  # django-stubs-ext is a checking tool, not installed in production
    from django_stubs_ext import WithAnnotations


class WorkTopicSerializer(serializers.Serializer):
    number = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()
    narrative = serializers.CharField()
    compared_objects = serializers.ListField(child=serializers.CharField())
    cause = serializers.CharField()
    effect = serializers.CharField()


class WorkCampaignSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    phase = serializers.CharField()
    guidelines = serializers.CharField()
    scheme = serializers.JSONField(help_text="The label scheme (assessments.labels): its dimensions, values, keys and conditions")


class WorkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    phase = serializers.CharField()
    scope = serializers.CharField()
    topic = WorkTopicSerializer()
    campaign = WorkCampaignSerializer(source="topic.campaign")
    pool_size = serializers.IntegerField()
    judged = serializers.IntegerField()


class WorkDetailSerializer(WorkSerializer):
    resume_position = serializers.IntegerField(
        allow_null=True, help_text="Where the judge page resumes (assessments.selectors.queues.resume_position); null if no documents"
    )


class _Progress(TypedDict):
    """What WorkDetail sets on the assignment it serialises."""

    resume_position: int | None
    pool_size: int
    judged: int


class _OwnJudgment(TypedDict):
    """What Item sets on the entry it serialises: the caller's judgment, if any."""

    judgment: Judgment | None


class WorkLabelsSerializer(serializers.Serializer):
    """A label as sent by a client: PUT replaces all labels, so a missing field or dimension means none; PATCH
    changes only the fields it sends, and within `labels` only the dimensions it names (null clears one)."""

    labels = serializers.DictField(
        required=False, default=dict,
        help_text=(
            "Values by dimension of the campaign's scheme (its `scheme` in the work detail), e.g. "
            '{"relevance": 2, "stance": "PRO"}. A dimension without a value is left out; in a PATCH, null clears one. '
            "A dimension whose condition does not hold is refused."
        ),
    )
    note = serializers.CharField(allow_blank=True, required=False, default="", max_length=10_000, trim_whitespace=False)
    flagged = serializers.BooleanField(required=False, default=False)
    # The client's running total of active time on the document; the server keeps the largest.
    time_spent_ms = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, default=0)


class WorkSaveSerializer(WorkLabelsSerializer):
    base_revision = serializers.IntegerField(
        min_value=0, allow_null=True, required=False,
        help_text=(
            "The judgment's revision as the client last saw it (0 or null: the client saw no judgment). When the "
            "stored revision differs and this save would change a label, nothing is stored and the answer is 409 "
            "with the stored judgment. Sending the same save again (a retry) is not a conflict. Leave it out to "
            "overwrite whatever is stored (last writer wins)."
        ),
    )


class WorkJudgmentSerializer(WorkLabelsSerializer):
    revision = serializers.IntegerField(read_only=True)
    # DRF's metaclass takes declared fields off the class, so this does not shadow Field.source as the stubs think.
    source = serializers.CharField(read_only=True)  # type: ignore[assignment]
    updated_at = serializers.DateTimeField(read_only=True)


class SaveRefusedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.ChoiceField(
        choices=["stale_revision", "closed", "not_started"],
        help_text=(
            "stale_revision: changed elsewhere since base_revision; closed: the campaign takes no more labels; "
            "not_started: a main-phase topic while the campaign is still in setup or training"
        ),
    )
    judgment = WorkJudgmentSerializer(
        allow_null=True, required=False, help_text="With stale_revision: the stored judgment (null if there is none)"
    )


class WorkQueueItemSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    entry = serializers.IntegerField()
    doc_id = serializers.CharField()
    judged = serializers.BooleanField(help_text="The caller's judgment is complete by the scheme (every required dimension asked has a value)")
    judgment = WorkLabelsSerializer(allow_null=True, help_text="The caller's labels, note and flag; null if they have none")


class WorkDocumentSerializer(serializers.Serializer):
    doc_id = serializers.CharField()
    title = serializers.CharField()
    url = serializers.SerializerMethodField()
    has_text = serializers.BooleanField()
    body_html = serializers.SerializerMethodField(help_text="The body sanitised for display (assessments.rendering).")

    def get_url(self, document: Document) -> str:
        return safe_link(document.url)

    def get_body_html(self, document: Document) -> str:
        return document_html(document.body, is_html=document.is_html) if document.has_text else ""


class WorkItemSerializer(serializers.Serializer):
    entry = serializers.IntegerField(source="pk")
    document = WorkDocumentSerializer()
    judgment = WorkJudgmentSerializer(allow_null=True)


class QueuePagination(PageNumberPagination):
    # The judge page's jump list asks for a whole topic at once (pools run to a few thousand).
    page_size_query_param = "page_size"
    max_page_size = 10_000


class WorkList(APIView):
    @extend_schema(responses=WorkSerializer(many=True), summary="The caller's active assignments with progress")
    def get(self, request):
        return Response(WorkSerializer(queues.work_for_assessor(request.user), many=True).data)


class WorkDetail(APIView):
    @extend_schema(responses=WorkDetailSerializer, summary="One assignment: topic, campaign scheme and guidelines, progress")
    def get(self, request, assignment_id: int):
        assignment = cast(
            "WithAnnotations[Assignment, _Progress]", access.get_assignment_for_assessor(request.user, assignment_id)
        )
        assignment.resume_position = queues.resume_position(assignment)
        here = queues.queue_position(assignment, assignment.resume_position or 1)
        assignment.pool_size, assignment.judged = (here.total, here.judged) if here else (0, 0)
        return Response(WorkDetailSerializer(assignment).data)


class Queue(APIView):
    pagination_class = QueuePagination  # read by the schema (the answer is a page, with page and page_size)

    @extend_schema(
        responses=WorkQueueItemSerializer(many=True),
        parameters=[OpenApiParameter("unjudged", bool, description="Only entries the caller has not judged")],
        summary="The assignment's documents in presentation order, with the caller's own labels",
    )
    def get(self, request, assignment_id: int):
        assignment = access.get_assignment_for_assessor(request.user, assignment_id)
        positions = list(enumerate(queues.assignment_queue(assignment), start=1))
        if request.query_params.get("unjudged") in ("1", "true", "yes"):
            positions = [(position, entry) for position, entry in positions if not entry.judged]
        paginator = QueuePagination()
        page = paginator.paginate_queryset(positions, request, view=self)
        assert page is not None  # None only without a page size, and settings give one
        doc_ids = dict(Document.objects.filter(pk__in=[e.document_id for _, e in page]).values_list("pk", "doc_id"))
        items = [
            {"position": position, "entry": e.entry_id, "doc_id": doc_ids[e.document_id], "judged": e.judged,
             "judgment": e if e.source else None}
            for position, e in page
        ]
        return paginator.get_paginated_response(WorkQueueItemSerializer(items, many=True).data)


class Item(APIView):
    @extend_schema(responses=WorkItemSerializer, summary="One document of the assignment, sanitised, with the caller's label")
    def get(self, request, assignment_id: int, entry_id: int):
        assignment = access.get_assignment_for_assessor(request.user, assignment_id)
        entry = cast("WithAnnotations[PoolEntry, _OwnJudgment]", access.get_entry_for_assignment(assignment, entry_id))
        entry.judgment = access.own_judgment(assignment, entry.document_id)
        return Response(WorkItemSerializer(entry).data)


_SAVE_DESCRIPTION = """\
The judge page sends PATCH with `base_revision`, so it changes only what the assessor changed and never
overwrites a label saved from another tab or device: a stale save gets 409 with the stored judgment, and the page
asks the assessor which version to keep. A script may do the same, or leave `base_revision` out and have the
last writer win (as every client did before `base_revision` existed). Either way, sending a save again changes
nothing and adds no revision to the history.
"""


class JudgmentView(APIView):
    # JSON only: the save is the request made most, and choosing among renderers (the browsable API's too) on each
    # one is work for nothing. A browser opening the URL gets the same JSON.
    renderer_classes = [JSONRenderer]

    @extend_schema(responses=WorkJudgmentSerializer, summary="The caller's current label for the document")
    def get(self, request, assignment_id: int, entry_id: int):
        assignment = access.get_assignment_for_assessor(request.user, assignment_id)
        judgment = access.own_judgment(assignment, access.get_entry_for_assignment(assignment, entry_id).document_id)
        if judgment is None:
            raise NotFound("Not judged yet")
        return Response(WorkJudgmentSerializer(judgment).data)

    @extend_schema(
        request=WorkSaveSerializer,
        responses={200: WorkJudgmentSerializer, 409: SaveRefusedSerializer},
        summary="Set all of the caller's labels (idempotent); fields left out are cleared",
        description=_SAVE_DESCRIPTION,
    )
    def put(self, request, assignment_id: int, entry_id: int):
        return self._save(request, assignment_id, entry_id, partial=False)

    @extend_schema(
        request=WorkSaveSerializer,
        responses={200: WorkJudgmentSerializer, 409: SaveRefusedSerializer},
        summary="Change some of the caller's labels (idempotent); fields left out keep their stored values",
        description=_SAVE_DESCRIPTION,
    )
    def patch(self, request, assignment_id: int, entry_id: int):
        return self._save(request, assignment_id, entry_id, partial=True)

    def _save(self, request, assignment_id: int, entry_id: int, *, partial: bool):
        assignment, entry = access.get_entry_to_judge(request.user, assignment_id, entry_id)
        data = _validated_save(request.data, partial=partial)
        time_spent_ms = data.pop("time_spent_ms", 0)
        base_revision = data.pop("base_revision", None)
        if base_revision is None and "base_revision" in request.data:
            base_revision = 0  # null: the client saw no judgment; left out: no check
        # A browser session is the judge page; a token is a script or another tool.
        by_page = isinstance(request.successful_authenticator, SessionAuthentication)
        source = Judgment.Source.WEB if by_page else Judgment.Source.API
        try:
            judgment = judge_entry(
                assignment=assignment, entry=entry, labels=None if partial else _all_labels(data),
                changes=data if partial else None, base_revision=base_revision, time_spent_ms=time_spent_ms, source=source,
            )
        except JudgmentError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except JudgingClosed as exc:
            return Response({"detail": str(exc), "code": "closed"}, status=status.HTTP_409_CONFLICT)
        except JudgingNotStarted as exc:
            return Response({"detail": str(exc), "code": "not_started"}, status=status.HTTP_409_CONFLICT)
        except StaleRevision as exc:
            stored = _JUDGMENT.to_representation(exc.judgment) if exc.judgment else None
            return Response({"detail": str(exc), "code": "stale_revision", "judgment": stored}, status=status.HTTP_409_CONFLICT)
        return Response(_JUDGMENT.to_representation(judgment))


# The save is the request an assessor makes most, and a serializer made per request deep-copies its fields: a
# tenth of the save's CPU. Validating and representing are pure functions of the data over fields bound once
# (no instance, context or request involved), so these serializers are made once and shared by the threads.
_SAVE = {partial: WorkSaveSerializer(partial=partial) for partial in (False, True)}
_JUDGMENT = WorkJudgmentSerializer()


def _validated_save(body, *, partial: bool) -> dict:
    """The save's body validated as WorkSaveSerializer(data=body, partial=partial) would (the same 400)."""
    try:
        return dict(_SAVE[partial].run_validation(body))
    except ValidationError:
        # A refused body takes the per-request serializer, so its error body is DRF's own to the letter.
        WorkSaveSerializer(data=body, partial=partial).is_valid(raise_exception=True)
        raise


def _all_labels(data: dict) -> Labels:
    """A PUT's labels: what it leaves out, or sends as null, it has none of."""
    values = {name: value for name, value in data["labels"].items() if value is not None}
    return Labels(values=values, note=data["note"], flagged=data["flagged"])


# Mounted under /api/ by touchstone/urls.py: annotation depends on assessments, never the other way round.
urlpatterns = [
    path("work/", WorkList.as_view(), name="work-list"),
    path("work/<int:assignment_id>/", WorkDetail.as_view(), name="work-detail"),
    path("work/<int:assignment_id>/queue/", Queue.as_view(), name="work-queue"),
    path("work/<int:assignment_id>/items/<int:entry_id>/", Item.as_view(), name="work-item"),
    path("work/<int:assignment_id>/items/<int:entry_id>/judgment/", JudgmentView.as_view(), name="work-judgment"),
]
