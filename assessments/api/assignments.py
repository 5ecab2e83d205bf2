"""Assignments in the API, for organisers' scripts: the same services as the assignment page and `assign_topics`.

* ``GET  campaigns/<slug>/assignments/``: every assignment (``?active=true`` for current ones only).
* ``POST campaigns/<slug>/assignments/``: give topics to assessors (training topics: admins only).
* ``POST campaigns/<slug>/assignments/auto/``: balance main-phase topics across assessors.
* ``POST campaigns/<slug>/assignments/overlap/``: draw the overlap slices.
* ``POST campaigns/<slug>/assignments/<id>/withdraw/``: take an assignment back (its judgments stay).
"""

from django.core.exceptions import PermissionDenied
from django.urls import path
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from assessments import access
from assessments.models import Assignment, Phase
from assessments.services import assignments
from assessments.services.assignments import AssignmentError

from .permissions import IsOrganiser


class AssignmentSerializer(serializers.ModelSerializer):
    topic = serializers.CharField(source="topic.number")
    assessor = serializers.CharField(source="assessor.username")
    assigned_by = serializers.CharField(source="assigned_by.username", default=None, allow_null=True)
    items = serializers.IntegerField(source="item_count", help_text="overlap slices: how many documents")
    phase = serializers.ChoiceField(choices=[Phase.TRAINING, Phase.MAIN])

    class Meta:
        model = Assignment
        fields = ["id", "topic", "assessor", "phase", "scope", "round", "active", "items", "assigned_by", "created_at"]
        read_only_fields = fields


class AssignedSerializer(serializers.Serializer):
    topic = serializers.CharField(source="topic.number")
    assessor = serializers.CharField(source="assessor.username")
    status = serializers.CharField(help_text="new, reactivated or kept")
    replaced = serializers.ListField(child=serializers.CharField(), help_text="main phase: who held the topic before")


class AssignSerializer(serializers.Serializer):
    assessors = serializers.ListField(child=serializers.CharField(), min_length=1)
    topics = serializers.ListField(child=serializers.CharField(), min_length=1)
    phase = serializers.ChoiceField(choices=[Phase.TRAINING, Phase.MAIN], default=Phase.MAIN, help_text="training: admins only")


class AutoSerializer(serializers.Serializer):
    assessors = serializers.ListField(child=serializers.CharField(), min_length=1)
    topics = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="default: every main-phase topic nobody holds"
    )


class OverlapSerializer(serializers.Serializer):
    share = serializers.FloatField(required=False, help_text="0.05 = 5 %; default: the campaign's overlap share")
    assessors = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="default: everyone holding a main-phase topic"
    )


def _bad_request(exc: Exception) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


def _valid(serializer_class, request) -> dict:
    params = serializer_class(data=request.data)
    params.is_valid(raise_exception=True)
    return params.validated_data


class AssignmentsView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        responses=AssignmentSerializer(many=True), summary="The campaign's assignments, current and former",
        parameters=[OpenApiParameter("active", bool, description="true: current assignments only")],
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        rows = assignments.list_assignments(campaign=campaign, active_only=request.query_params.get("active") == "true")
        return Response(AssignmentSerializer(rows, many=True).data)

    @extend_schema(
        request=AssignSerializer, responses={201: AssignedSerializer(many=True)}, summary="Give topics to assessors",
        description="Training topics (`phase: training`) are given by admins only; an organiser gets 403.",
        examples=[
            OpenApiExample("Main-phase topics", value={"assessors": ["alice", "bob"], "topics": ["1", "2"]}, request_only=True),
            OpenApiExample("Unknown topic", value={"detail": "campaign touche20 has no topic 99"}, response_only=True, status_codes=["400"]),
        ],
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = _valid(AssignSerializer, request)
        if params["phase"] == Phase.TRAINING and not request.user.is_campaign_admin:
            raise PermissionDenied("The training phase is run by admins")
        try:
            done = assignments.assign_topics(
                campaign=campaign,
                assessors=assignments.find_assessors(usernames=params["assessors"]),
                topics=assignments.find_topics(campaign=campaign, numbers=params["topics"]),
                phase=params["phase"],
                assigned_by=request.user,
            )
        except AssignmentError as exc:
            return _bad_request(exc)
        return Response(AssignedSerializer(done, many=True).data, status=status.HTTP_201_CREATED)


class AutoAssignView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        request=AutoSerializer,
        responses=inline_serializer("AutoAssignment", {
            "assigned": AssignedSerializer(many=True), "load": serializers.DictField(child=serializers.IntegerField()),
            "skipped": serializers.ListField(child=serializers.CharField(), help_text="topics without a pool yet"),
        }),
        summary="Share main-phase topics among assessors, largest pool first to the least-loaded",
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = _valid(AutoSerializer, request)
        try:
            topics = params.get("topics")
            result = assignments.auto_assign(
                campaign=campaign,
                assessors=assignments.find_assessors(usernames=params["assessors"]),
                topics=assignments.find_topics(campaign=campaign, numbers=topics) if topics else None,
                assigned_by=request.user,
            )
        except AssignmentError as exc:
            return _bad_request(exc)
        return Response(
            {"assigned": AssignedSerializer(result.assigned, many=True).data, "load": result.load, "skipped": result.skipped}
        )


class OverlapView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        request=OverlapSerializer,
        responses={201: inline_serializer("OverlapDraw", {
            "share": serializers.FloatField(),
            "slices": serializers.ListField(child=serializers.DictField()),
            "skipped": serializers.ListField(child=serializers.CharField()),
        })},
        summary="Give a second assessor a share of every assigned main-phase topic",
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = _valid(OverlapSerializer, request)
        try:
            names = params.get("assessors")
            drawn = assignments.draw_overlap(
                campaign=campaign, share=params.get("share"), assigned_by=request.user,
                assessors=assignments.find_assessors(usernames=names) if names else None,
            )
        except AssignmentError as exc:
            return _bad_request(exc)
        slices = [
            {"topic": s.topic.number, "holder": s.holder, "assessor": s.assessor, "documents": s.entries}
            for s in drawn.slices
        ]
        return Response({"share": drawn.share, "slices": slices, "skipped": drawn.skipped}, status=status.HTTP_201_CREATED)


class WithdrawView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(request=None, responses=AssignmentSerializer, summary="Take an assignment back; its judgments stay",
                   examples=[OpenApiExample("Unknown assignment", value={"detail": "campaign touche20 has no assignment 7"},
                                            response_only=True, status_codes=["404"])])
    def post(self, request, slug: str, assignment_id: int):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        try:
            assignments.withdraw_assignment(campaign=campaign, assignment_id=assignment_id, by=request.user)
        except AssignmentError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
        row = assignments.list_assignments(campaign=campaign).get(pk=assignment_id)
        return Response(AssignmentSerializer(row).data)


def register(router) -> list:
    return [
        path("campaigns/<slug:slug>/assignments/", AssignmentsView.as_view(), name="api-assignments"),
        path("campaigns/<slug:slug>/assignments/auto/", AutoAssignView.as_view(), name="api-assignments-auto"),
        path("campaigns/<slug:slug>/assignments/overlap/", OverlapView.as_view(), name="api-assignments-overlap"),
        path(
            "campaigns/<slug:slug>/assignments/<int:assignment_id>/withdraw/", WithdrawView.as_view(),
            name="api-assignments-withdraw",
        ),
    ]
