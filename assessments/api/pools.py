"""The pool in the API, for organisers' scripts: the same services as the pool page and `build_pool`.

* ``GET  campaigns/<slug>/pool/``: the statistics (per topic, per run, run overlap, missing ids, effort).
* ``GET  campaigns/<slug>/pool/preview/?strategy=depth&depth=10``: what a build would add and cost; changes nothing.
* ``POST campaigns/<slug>/pool/build/``: start a build; answers 202 with the job, to poll at ``jobs/<id>/``.
* ``GET  campaigns/<slug>/pool/export/``: ``qid doc`` per entry as text (``?missing=1``: only missing documents).
"""

from dataclasses import asdict

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from assessments import access
from assessments.selectors.pool_preview import preview_pool
from assessments.selectors.pools import pool_statistics
from assessments.services import pooling
from assessments.views.pooling import export_response

from .permissions import IsOrganiser
from .serializers import JobSerializer


class PoolSpecSerializer(serializers.Serializer):
    strategy = serializers.ChoiceField(choices=list(pooling.STRATEGIES), default="depth")
    depth = serializers.IntegerField(min_value=1, max_value=pooling.MAX_DEPTH, default=5)
    budget = serializers.IntegerField(
        min_value=1, required=False, allow_null=True,
        help_text="rbp: pool size per topic; maxmean/mtf: documents added per topic",
    )
    order = serializers.ChoiceField(choices=list(pooling.ORDERS), default="both")
    runs = serializers.ListField(child=serializers.CharField(), required=False, help_text="run tags; default: all runs")

    def validate(self, data: dict) -> dict:
        try:
            return {"spec": pooling.PoolSpec.from_params(data)}
        except pooling.PoolingError as exc:
            raise serializers.ValidationError(str(exc)) from None


def _bad_request(exc: Exception) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


class PoolStatisticsView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="Pool size per topic, contributions and overlap per run, missing ids, effort")
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        return Response(asdict(pool_statistics(campaign=campaign)))


class PoolPreviewView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(parameters=[PoolSpecSerializer], responses=OpenApiTypes.OBJECT,
                   summary="What a build would add per topic, and the cost of depth 5/10/20 and RBP; changes nothing")
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = PoolSpecSerializer(data={**request.query_params.dict(), "runs": request.query_params.getlist("runs")})
        params.is_valid(raise_exception=True)
        try:
            return Response(asdict(preview_pool(campaign=campaign, spec=params.validated_data["spec"])))
        except pooling.PoolingError as exc:
            return _bad_request(exc)


class PoolBuildView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(request=PoolSpecSerializer, responses={202: JobSerializer}, summary="Build or extend the pool (runs as a job)")
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = PoolSpecSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            job = pooling.start_build(campaign=campaign, spec=params.validated_data["spec"], user=request.user)
        except pooling.PoolingError as exc:
            return _bad_request(exc)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class PoolExportView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        parameters=[OpenApiParameter("missing", bool, description="only documents missing from the collection")],
        responses={(200, "text/plain"): OpenApiTypes.STR}, summary="The pool as `qid doc` lines",
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        return export_response(campaign, missing=request.query_params.get("missing") in ("1", "true"))


def register(router) -> list:
    return [
        path("campaigns/<slug:slug>/pool/", PoolStatisticsView.as_view(), name="api-pool"),
        path("campaigns/<slug:slug>/pool/preview/", PoolPreviewView.as_view(), name="api-pool-preview"),
        path("campaigns/<slug:slug>/pool/build/", PoolBuildView.as_view(), name="api-pool-build"),
        path("campaigns/<slug:slug>/pool/export/", PoolExportView.as_view(), name="api-pool-export"),
    ]
