"""The assessor's API: their work, an assignment's queue, one document, and its judgment.

The judge page uses exactly these endpoints, so an external client (a script, another tool)
judges through the same checks. Every lookup goes through assessments.access: an assessor reaches
only their own active assignments and, for an overlap assignment, only its slice (404
otherwise). No response names runs, ranks or scores, and only the caller's own labels appear.
"""

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from assessments import access
from assessments.models import Document, Judgment
from assessments.rendering import document_html, safe_link
from assessments.selectors import queues
from assessments.services.judging import JudgingClosed, JudgmentError, Labels, judge_entry


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
    scheme = serializers.JSONField()
    ask_details_only_if_relevant = serializers.BooleanField()


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


class WorkLabelsSerializer(serializers.Serializer):
    """A label as sent by a client: PUT replaces all labels, so a missing field means none."""

    relevance = serializers.IntegerField()
    quality = serializers.IntegerField(allow_null=True, required=False, default=None)
    stance = serializers.CharField(allow_blank=True, required=False, default="", max_length=16)
    note = serializers.CharField(allow_blank=True, required=False, default="", max_length=10_000, trim_whitespace=False)
    flagged = serializers.BooleanField(required=False, default=False)
    # The client's running total of active time on the document; the server keeps the largest.
    time_spent_ms = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, default=0)


class WorkJudgmentSerializer(WorkLabelsSerializer):
    revision = serializers.IntegerField(read_only=True)
    source = serializers.CharField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)


class WorkQueueItemSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    entry = serializers.IntegerField()
    doc_id = serializers.CharField()
    judgment = WorkLabelsSerializer(allow_null=True)


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
        assignment = access.get_assignment_for_assessor(request.user, assignment_id)
        assignment.resume_position = queues.resume_position(assignment)
        here = queues.queue_position(assignment, assignment.resume_position or 1)
        assignment.pool_size, assignment.judged = (here.total, here.judged) if here else (0, 0)
        return Response(WorkDetailSerializer(assignment).data)


class Queue(APIView):
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
        doc_ids = dict(Document.objects.filter(pk__in=[e.document_id for _, e in page]).values_list("pk", "doc_id"))
        items = [
            {"position": position, "entry": e.entry_id, "doc_id": doc_ids[e.document_id], "judgment": e if e.judged else None}
            for position, e in page
        ]
        return paginator.get_paginated_response(WorkQueueItemSerializer(items, many=True).data)


class Item(APIView):
    @extend_schema(responses=WorkItemSerializer, summary="One document of the assignment, sanitised, with the caller's label")
    def get(self, request, assignment_id: int, entry_id: int):
        assignment = access.get_assignment_for_assessor(request.user, assignment_id)
        entry = access.get_entry_for_assignment(assignment, entry_id)
        entry.judgment = access.own_judgment(assignment, entry.document_id)
        return Response(WorkItemSerializer(entry).data)


class JudgmentView(APIView):
    @extend_schema(responses=WorkJudgmentSerializer, summary="The caller's current label for the document")
    def get(self, request, assignment_id: int, entry_id: int):
        assignment = access.get_assignment_for_assessor(request.user, assignment_id)
        judgment = access.own_judgment(assignment, access.get_entry_for_assignment(assignment, entry_id).document_id)
        if judgment is None:
            raise NotFound("Not judged yet")
        return Response(WorkJudgmentSerializer(judgment).data)

    @extend_schema(request=WorkLabelsSerializer, responses=WorkJudgmentSerializer, summary="Set the caller's label (idempotent)")
    def put(self, request, assignment_id: int, entry_id: int):
        assignment = access.get_assignment_for_assessor(request.user, assignment_id)
        entry = access.get_entry_for_assignment(assignment, entry_id)
        serializer = WorkLabelsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        time_spent_ms = data.pop("time_spent_ms")
        # A browser session is the judge page; a token is a script or another tool.
        by_page = isinstance(request.successful_authenticator, SessionAuthentication)
        source = Judgment.Source.WEB if by_page else Judgment.Source.API
        try:
            judgment = judge_entry(
                assignment=assignment, entry=entry, labels=Labels(**data), time_spent_ms=time_spent_ms, source=source
            )
        except JudgmentError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except JudgingClosed as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(WorkJudgmentSerializer(judgment).data)


# Mounted under /api/ by touchstone/urls.py: annotation depends on assessments, never the other way round.
urlpatterns = [
    path("work/", WorkList.as_view(), name="work-list"),
    path("work/<int:assignment_id>/", WorkDetail.as_view(), name="work-detail"),
    path("work/<int:assignment_id>/queue/", Queue.as_view(), name="work-queue"),
    path("work/<int:assignment_id>/items/<int:entry_id>/", Item.as_view(), name="work-item"),
    path("work/<int:assignment_id>/items/<int:entry_id>/judgment/", JudgmentView.as_view(), name="work-judgment"),
]
