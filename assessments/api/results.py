"""Results and qrels in the API, for organisers' scripts: the same services as the results pages.

* ``GET  campaigns/<slug>/results/``: every run's score (and judged@k, stance scores, intervals), as `evaluate_runs --format json`;
  for a classification campaign every submission's figure overall and per language (services.classification).
* ``GET  campaigns/<slug>/qrels/``: the snapshots; ``POST`` exports a new one and streams the file back.
* ``GET  campaigns/<slug>/qrels/<n>/``: a snapshot's file; ``…/qrels/<a>/diff/<b>/``: what changed, and who changed it.
* ``POST campaigns/<slug>/qrels/import/``: upload earlier judgments; answers 202 with the import job.
"""

from django.http import StreamingHttpResponse
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from assessments import access
from assessments.formats.errors import FormatError
from assessments.metrics import image_precision
from assessments.metrics.classification import CONVENTIONS, MEASURES
from assessments.services import classification, evaluation, exports, image_runs
from assessments.services.imports import ImportProblem
from assessments.services.imports import qrels as qrels_imports
from assessments.views.results import streaming_qrels_response

from .permissions import IsOrganiser
from .schema import RULE_REFUSED
from .serializers import MEASURES_SCHEMA, ErrorSerializer, KindField, MeasuresField, RuleField, UploadField


@extend_schema_field({"anyOf": [
    MEASURES_SCHEMA,
    {"type": "string", "enum": list(MEASURES), "description": "a classification campaign's measure"},
]})
class ResultsMeasureField(MeasuresField):
    """A text campaign's measures, or a classification campaign's one measure (the same parameter, see the view)."""


class ResultsQuerySerializer(serializers.Serializer):
    measure = ResultsMeasureField(default="nDCG@5")
    kind = serializers.ListField(
        child=KindField(), default=list,
        help_text="dimensions of the campaign's label scheme: graded ones are scored by the measure (none: the primary "
                  "one); a category one is compared with the runs' stance column",
    )
    order = serializers.ChoiceField(choices=evaluation.ORDERS, default="score")
    trec_eval = serializers.ChoiceField(choices=[10, 9], default=10)
    phase = serializers.ChoiceField(choices=list(exports.PHASES), default="main")
    rule = RuleField(default="majority")
    ci = serializers.FloatField(required=False, min_value=0, max_value=1, help_text="bootstrap interval level, e.g. 0.95")
    test = serializers.ChoiceField(choices=evaluation.TESTS, required=False, help_text="mark the runs tied with the best")
    seed = serializers.IntegerField(default=evaluation.significance.DEFAULT_SEED, min_value=0)


class ClassificationQuerySerializer(serializers.Serializer):
    """The query of a classification campaign's results (Touché 2023 Task 4)."""

    measure = serializers.ChoiceField(choices=list(MEASURES), default=classification.DEFAULT_MEASURE)
    by = serializers.ChoiceField(choices=list(classification.BY), required=False, help_text="figures per language too")
    convention = serializers.ChoiceField(choices=list(CONVENTIONS), default="touche")
    phase = serializers.ChoiceField(choices=list(exports.PHASES), default="main")
    rule = RuleField(default=classification.DEFAULT_RULE)
    ci = serializers.FloatField(required=False, min_value=0, max_value=1, help_text="bootstrap interval level over comments")
    test = serializers.ChoiceField(choices=list(classification.TESTS), required=False, help_text="mark the submissions tied with the best")
    seed = serializers.IntegerField(default=evaluation.significance.DEFAULT_SEED, min_value=0)


class ImageQuerySerializer(serializers.Serializer):
    """The query of an image campaign's results (Touché Task 3): every measure is answered."""

    phase = serializers.ChoiceField(choices=list(exports.PHASES), default="main")
    rule = RuleField(default="majority")
    ci = serializers.FloatField(required=False, min_value=0, max_value=1, help_text="bootstrap interval level over each run's topics")
    test = serializers.ChoiceField(choices=evaluation.TESTS, required=False, help_text="mark the runs tied with the best, per measure")
    seed = serializers.IntegerField(default=evaluation.significance.DEFAULT_SEED, min_value=0)


class RunResultSerializer(serializers.Serializer):
    run = serializers.CharField()
    team = serializers.CharField()
    kind = serializers.CharField()
    measure = serializers.CharField()
    trec_eval = serializers.IntegerField()
    judged = serializers.BooleanField(help_text="false when no topic has a label of this kind in the chosen phase (by the rule's assessor)")
    mean = serializers.FloatField(allow_null=True, help_text="null when not judged: there is nothing to score against")
    judged_at_k = serializers.FloatField(allow_null=True, help_text="null when not judged")
    per_topic = serializers.DictField(child=serializers.FloatField())
    message = serializers.CharField(required=False, help_text="when not judged, whose judgments are missing, e.g. 'no main-phase quality judgments'")
    ci_low = serializers.FloatField(required=False)
    ci_high = serializers.FloatField(required=False)
    ci_level = serializers.FloatField(required=False)
    ci_seed = serializers.IntegerField(required=False)
    ci_resamples = serializers.IntegerField(required=False)
    top_group = serializers.BooleanField(required=False)
    other_trec_eval = serializers.DictField(required=False, help_text="the figure under the other trec_eval version, where it differs")
    stance_kind = serializers.CharField(required=False, help_text="the category dimension the run's stance column is compared with")
    accuracy = serializers.FloatField(required=False, allow_null=True)
    macro_f1 = serializers.FloatField(required=False, allow_null=True)


class ExportSerializer(serializers.Serializer):
    kind = KindField(required=False, help_text="a dimension of the campaign's label scheme (default: its primary one)")
    phase = serializers.ChoiceField(choices=list(exports.PHASES), default="main")
    rule = RuleField(default="majority")


class SnapshotSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    kind = serializers.CharField()
    phase = serializers.CharField()
    rule = serializers.CharField()
    line_count = serializers.IntegerField()
    sha256 = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    created_at = serializers.DateTimeField()
    file = serializers.SerializerMethodField()

    def get_file(self, snapshot) -> str:
        url = reverse("api-qrels-snapshot", args=[snapshot.campaign.slug, snapshot.number])
        return self.context["request"].build_absolute_uri(url)


class ImportSerializer(serializers.Serializer):
    file = UploadField()
    kind = KindField(required=False, help_text="a dimension of the campaign's label scheme (default: its primary one)")
    assessor = serializers.CharField(
        max_length=150, help_text="the import source the labels are kept under, e.g. touche2020: made if missing (a non-login "
        "account that is no person); the name of a person's account is refused",
    )
    phase = serializers.ChoiceField(choices=qrels_imports.PHASES, default="main")


def _bad_request(exc: Exception) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


class ResultsView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        parameters=[ResultsQuerySerializer], responses=RunResultSerializer(many=True), examples=[RULE_REFUSED],
        summary="Every run scored by a trec_eval measure against the current judgments",
        description=(
            "A classification campaign (Touché 2023 Task 4) answers with every submission scored as the organisers' "
            "evaluation.py scores it, one row per submission (run, measure, value, per_language, convention, "
            f"ci_low/ci_high), and reads other parameters: measure (one of {', '.join(MEASURES)}; default "
            f"{classification.DEFAULT_MEASURE}), by=language, convention ({' or '.join(CONVENTIONS)}), phase, rule "
            f"(default {classification.DEFAULT_RULE}), ci, test=permutation, seed. An image campaign (Touché Task 3) "
            "answers with one row per run and measure (topicRelevanceP@10, argumentativenessP@10, stanceRelevanceP@10: "
            "mean, per_topic, per_stance) as the organisers' submission-evaluator.sh computes them, and reads rule, phase, ci, "
            "test and seed (ci_low/ci_high and top_group per run and measure, as for text runs)."
        ),
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        if campaign.is_classification:
            return self._submissions(request, campaign)
        if campaign.is_images:
            return self._image_runs(request, campaign)
        params = ResultsQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        options = params.validated_data
        access.check_rule(request.user, campaign, options["rule"], options["phase"])
        try:
            boards = evaluation.evaluate_measures(
                campaign=campaign, kinds=tuple(options.pop("kind")), measures=evaluation.parse_measures(options.pop("measure")),
                **options,
            )
        except exports.ExportError as exc:
            return _bad_request(exc)
        return Response([row for board in boards for row in board.as_json()])

    def _image_runs(self, request, campaign):
        """An image campaign: one row per run and measure as `evaluate_runs --format json` prints it."""
        params = ImageQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        options = params.validated_data
        access.check_rule(request.user, campaign, options["rule"], options["phase"])
        statistics = evaluation.Statistics(ci_level=options.get("ci"), test=options.get("test"), seed=options["seed"])
        try:
            results = image_runs.evaluate_image_runs(campaign, rule=options["rule"], phase=options["phase"], statistics=statistics)
        except exports.ExportError as exc:
            return _bad_request(exc)
        return Response(image_runs.scores_json(results, image_precision.MEASURES, statistics))

    def _submissions(self, request, campaign):
        """A classification campaign: one row per submission as `evaluate_runs --format json` prints it (run, measure,
        value, per_language with by=language, ci_low/ci_high, convention)."""
        params = ClassificationQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        options = params.validated_data
        access.check_rule(request.user, campaign, options["rule"], options["phase"])
        try:
            board = classification.score_submissions(campaign, **options)
        except exports.ExportError as exc:
            return _bad_request(exc)
        return Response(board.as_json())


class QrelsView(APIView):
    permission_classes = [IsOrganiser]
    parser_classes = [JSONParser, FormParser, MultiPartParser]

    @extend_schema(responses=SnapshotSerializer(many=True), summary="The campaign's qrels snapshots, newest first")
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        snapshots = access.snapshots_for_user(request.user, campaign)
        return Response(SnapshotSerializer(snapshots, many=True, context={"request": request}).data)

    @extend_schema(
        request=ExportSerializer, responses={(200, "text/plain"): OpenApiTypes.STR}, examples=[RULE_REFUSED],
        summary="Export the current judgments as qrels (streamed) and keep them as a new snapshot",
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = ExportSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        access.check_rule(request.user, campaign, params.validated_data["rule"], params.validated_data.get("phase", "main"))
        try:
            export = exports.export_qrels(campaign=campaign, created_by=request.user, **params.validated_data)
        except exports.ExportError as exc:
            return _bad_request(exc)
        return streaming_qrels_response(export)


class SnapshotFileView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        responses={(200, "text/plain"): OpenApiTypes.STR, 409: ErrorSerializer},
        summary="A qrels snapshot's file, as exported (409 when its bytes no longer match the checksum)",
        examples=[OpenApiExample("Changed since export", response_only=True, status_codes=["409"], value={
            "detail": "qrels snapshot #2 no longer matches its checksum (sha256 3f2a9c1b7d4e… at export): its stored bytes "
                      "were changed after export, so they are not used; export the qrels again"})],
    )
    def get(self, request, slug: str, number: int):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        snapshot = access.get_snapshot_for_user(request.user, campaign, number)
        try:
            content = exports.snapshot_content(snapshot)
        except exports.ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return StreamingHttpResponse(content, content_type="text/plain; charset=utf-8")


class SnapshotDiffView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        responses=inline_serializer("QrelsDiff", {
            "older": serializers.IntegerField(), "newer": serializers.IntegerField(),
            "added": serializers.IntegerField(), "removed": serializers.IntegerField(), "changed": serializers.IntegerField(),
            "changes_not_listed_for": serializers.ListField(
                child=serializers.CharField(),
                help_text="phases whose label changes are not listed: one assessor's training labels are for admins and adjudicators",
            ),
            "lines": serializers.ListField(child=serializers.DictField()),
        }),
        parameters=[OpenApiParameter("older", int, OpenApiParameter.PATH), OpenApiParameter("newer", int, OpenApiParameter.PATH)],
        summary="Lines added, removed and changed between two snapshots, with the label changes behind them",
    )
    def get(self, request, slug: str, older: int, newer: int):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        first, second = (access.get_snapshot_for_user(request.user, campaign, n) for n in (older, newer))
        try:
            diff = exports.diff_snapshots(
                older=first, newer=second, named_phases=access.named_label_phases(request.user, campaign)
            )
        except (exports.ExportError, FormatError) as exc:
            return _bad_request(exc)
        return Response({
            "older": diff.older.number, "newer": diff.newer.number,
            **diff.counts, "changes_not_listed_for": list(diff.unnamed),
            "lines": [
                {
                    "status": line.status, "topic": line.topic, "doc": line.doc_id, "old": line.old, "new": line.new,
                    "changes": [
                        {"assessor": c.assessor, "at": c.at.isoformat(), "revision": c.revision, "label": c.label, "source": c.source}
                        for c in line.changes
                    ],
                }
                for line in diff.lines
            ],
        })


class QrelsImportView(APIView):
    permission_classes = [IsOrganiser]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportSerializer},
        responses={202: inline_serializer("QrelsImportJob", {"job": serializers.IntegerField(), "status": serializers.CharField()})},
        summary="Import earlier qrels as a named assessor's judgments (runs as a job)",
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = ImportSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            job = qrels_imports.start_qrels_import(campaign=campaign, upload=params.validated_data.pop("file"),
                                                  created_by=request.user, **params.validated_data)
        except ImportProblem as exc:
            return _bad_request(exc)
        return Response({"job": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED)


def register(router) -> list:
    return [
        path("campaigns/<slug:slug>/results/", ResultsView.as_view(), name="api-results"),
        path("campaigns/<slug:slug>/qrels/", QrelsView.as_view(), name="api-qrels"),
        path("campaigns/<slug:slug>/qrels/import/", QrelsImportView.as_view(), name="api-qrels-import"),
        path("campaigns/<slug:slug>/qrels/<int:number>/", SnapshotFileView.as_view(), name="api-qrels-snapshot"),
        path("campaigns/<slug:slug>/qrels/<int:older>/diff/<int:newer>/", SnapshotDiffView.as_view(), name="api-qrels-diff"),
    ]
