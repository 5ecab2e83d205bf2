"""Training and analysis in the API, for scripts: the same services as the pages and commands, with their rules.

* ``POST campaigns/<slug>/topics/training/``: mark topics as training topics, or as main-phase ones again (admins;
  the assignment page's "Training topics" form, `assign_topics --mark-training`).
* ``POST campaigns/<slug>/phase/``: start training, close a training round and open the next, or close training and
  start the main phase (admins; the agreement page's buttons). The main phase ends training for good, so it is
  taken only with ``"confirm": "main"``, as the page asks twice.
* ``GET  campaigns/<slug>/agreement/``: inter-assessor agreement (admins; `agreement --format json`).
* ``GET  campaigns/<slug>/results/compare/?a=TAG&b=TAG``: two runs topic by topic (the run comparison page).
* ``GET  campaigns/<slug>/results/significance/``: every pair of runs tested (`compare_runs --format json`).
* ``GET  campaigns/<slug>/results/reusability/``: leave-one-team-out (the reusability page; `reusability --format json`).

The results endpoints refuse (403) what the results pages refuse (access.check_rule): an assessor:NAME rule, and
training labels until the training round closes, are for admins and the campaign's adjudicators.
"""

import dataclasses
from typing import Literal, cast

from django.urls import path
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from assessments import access
from assessments.labels import SchemeError
from assessments.models import Phase, Run
from assessments.selectors.agreement import PHASES as AGREEMENT_PHASES
from assessments.selectors.agreement import AgreementError, Scope, compute_agreement, default_phase
from assessments.services import assignments, campaigns, comparison, evaluation, exports, reusability

from .imports import TopicSerializer
from .permissions import IsCampaignAdmin, IsOrganiser
from .schema import RULE_REFUSED
from .serializers import CampaignSerializer, ErrorSerializer, KindField, MeasureField, RuleField


def _bad_request(exc: Exception) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


def _valid(serializer: serializers.Serializer) -> dict:
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


# --------------------------------------------------------------------------------------------------------------
# Training: topics and phases


class MarkTrainingSerializer(serializers.Serializer):
    topics = serializers.ListField(child=serializers.CharField(), min_length=1, help_text="topic numbers")
    training = serializers.BooleanField(default=True, help_text="false: make them main-phase topics again")


class MarkTrainingView(APIView):
    permission_classes = [IsCampaignAdmin]

    @extend_schema(
        request=MarkTrainingSerializer,
        responses=inline_serializer("TopicsMarked", {
            "changed": serializers.IntegerField(help_text="topics whose mark changed (the others had it already)"),
            "topics": TopicSerializer(many=True, help_text="the topics named, as they are now"),
        }),
        summary="Mark topics as training topics, or as main-phase topics again (recorded on the timeline)",
        description="A topic someone holds for the other phase is refused (400): withdraw that assignment first.",
        examples=[
            OpenApiExample("Two training topics", value={"topics": ["1", "2"], "training": True}, request_only=True),
            OpenApiExample("Held for the main phase", response_only=True, status_codes=["400"], value={
                "detail": "topic 2 is assigned to alice for the main phase: withdraw that assignment first"}),
        ],
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = _valid(MarkTrainingSerializer(data=request.data))
        try:
            topics = assignments.find_topics(campaign=campaign, numbers=params["topics"])
            changed = assignments.mark_training(
                campaign=campaign, topics=topics, is_training=params["training"], by=request.user
            )
        except assignments.AssignmentError as exc:
            return _bad_request(exc)
        return Response({"changed": changed, "topics": TopicSerializer(topics, many=True).data})


STEPS = {
    "start_training": "setup → training (round 1)",
    "next_round": "close the current training round and open the next",
    "main": 'close the current training round and start the main phase; needs "confirm": "main"',
}


class PhaseStepSerializer(serializers.Serializer):
    step = serializers.ChoiceField(choices=list(STEPS), help_text="; ".join(f"{k}: {v}" for k, v in STEPS.items()))
    confirm = serializers.CharField(required=False, help_text='"main" to start the main phase (it ends training for good)')

    def validate(self, data: dict) -> dict:
        # The agreement page asks twice before the main phase, so an API client says it twice too.
        if data["step"] == "main" and data.get("confirm") != "main":
            raise serializers.ValidationError({"confirm": ['Starting the main phase ends training for good: send "confirm": "main"']})
        return data


class PhaseView(APIView):
    permission_classes = [IsCampaignAdmin]

    @extend_schema(
        request=PhaseStepSerializer, responses={200: CampaignSerializer, 409: ErrorSerializer},
        summary="Start training, close a training round and open the next, or start the main phase",
        description=(
            "Closing a round deactivates its training assignments (their judgments stay). 409 when the campaign's "
            "phase does not allow the step (for example next_round outside training, or a round without topics)."
        ),
        examples=[
            OpenApiExample("Start the main phase", value={"step": "main", "confirm": "main"}, request_only=True),
            OpenApiExample("Not in training", response_only=True, status_codes=["409"], value={
                "detail": "campaign touche20 is not in training (it is in its main phase)"}),
            OpenApiExample("Main phase unconfirmed", response_only=True, status_codes=["400"], value={
                "confirm": ['Starting the main phase ends training for good: send "confirm": "main"']}),
        ],
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_admin(request.user, slug)
        step = _valid(PhaseStepSerializer(data=request.data))["step"]
        try:
            if step == "start_training":
                campaign = campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=request.user)
            else:
                then = cast(Literal["next_round", "main"], step)
                campaign = assignments.close_training_round(campaign=campaign, then=then, by=request.user)
        except (campaigns.CampaignError, assignments.AssignmentError) as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(CampaignSerializer(campaign).data)


# --------------------------------------------------------------------------------------------------------------
# Agreement


class AgreementQuerySerializer(serializers.Serializer):
    phase = serializers.ChoiceField(
        choices=list(AGREEMENT_PHASES), required=False,
        help_text="default: the campaign's current phase (training before the main phase starts, all once closed)",
    )
    round = serializers.IntegerField(min_value=1, required=False, help_text="one training round only (phase training)")
    topic = serializers.CharField(required=False, max_length=50, help_text="one topic only, with its pairwise kappas")
    kind = KindField(required=False, help_text="one dimension of the campaign's label scheme only (default: every one)")


def _figures(*names: str) -> dict[str, serializers.Field]:
    return {name: serializers.FloatField(allow_null=True, help_text="null where undefined") for name in names}


_PAIR: dict[str, serializers.Field] = {"a": serializers.CharField(), "b": serializers.CharField(), "n_items": serializers.IntegerField()}
_DIMENSION = inline_serializer("DimensionAgreement", {
    **_figures("ac1", "fleiss", "alpha", "binary_kappa"),
    "ordinal": serializers.BooleanField(),
    "categories": serializers.ListField(child=serializers.JSONField(), help_text="the labels, in the matrices' order"),
    "n_items": serializers.IntegerField(help_text="documents judged by two or more assessors"),
    "fleiss_items": serializers.IntegerField(),
    "weights": serializers.CharField(allow_null=True, help_text="linear for graded dimensions, else null"),
    "alpha_level": serializers.ChoiceField(choices=["ordinal", "nominal"]),
    "cohen": inline_serializer("PairKappa", {
        **_PAIR, **_figures("unweighted", "weighted"),
    }, many=True),
    "confusion": inline_serializer("PairConfusion", {
        "a": serializers.CharField(), "b": serializers.CharField(),
        "matrix": serializers.ListField(child=serializers.ListField(child=serializers.IntegerField())),
    }, many=True),
    "assessors": inline_serializer("AssessorAgreement", {
        "assessor": serializers.CharField(), **_figures("mean_kappa"), "n_pairs": serializers.IntegerField(),
        "flagged": serializers.BooleanField(help_text="mean kappa below the campaign's threshold"),
    }, many=True),
    "topics": serializers.DictField(child=inline_serializer("TopicAgreement", {
        "n_items": serializers.IntegerField(), **_figures("fleiss", "alpha", "binary_kappa"),
    }), help_text="by topic number"),
    "by_language": serializers.DictField(child=inline_serializer("LanguageAgreement", {
        "n_items": serializers.IntegerField(), **_figures("fleiss", "alpha", "ac1"),
        "cohen": inline_serializer("LanguagePairKappa", {**_PAIR, **_figures("unweighted")}, many=True),
    }), help_text="a classification campaign's figures per language of its items"),
})


class AgreementView(APIView):
    permission_classes = [IsCampaignAdmin]

    @extend_schema(
        parameters=[AgreementQuerySerializer],
        responses=inline_serializer("Agreement", {
            "campaign": serializers.CharField(),
            "phase": serializers.ChoiceField(choices=list(AGREEMENT_PHASES)),
            "round": serializers.IntegerField(allow_null=True),
            "topic": serializers.CharField(allow_null=True),
            "threshold": serializers.FloatField(help_text="the campaign's agreement_threshold"),
            "flag_rule": serializers.CharField(),
            "dimensions": serializers.DictField(child=_DIMENSION, help_text="by dimension of the label scheme"),
        }),
        summary="Inter-assessor agreement per label dimension, overall and per topic (as `agreement --format json`)",
        description=(
            "Cohen's kappa per pair of assessors (unweighted, and linearly weighted for graded dimensions), Fleiss' "
            "kappa, Krippendorff's alpha, Gwet's AC1 and the binary kappa, over every document two or more assessors "
            "judged in the scope; assessors whose mean kappa falls below the campaign's threshold are flagged."
        ),
        examples=[OpenApiExample("Round outside training", response_only=True, status_codes=["400"],
                                 value={"detail": "rounds belong to the training phase"})],
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_admin(request.user, slug)
        params = _valid(AgreementQuerySerializer(data=request.query_params))
        try:
            scope = Scope(params.get("phase") or default_phase(campaign), round=params.get("round"), topic=params.get("topic"))
            agreement = compute_agreement(campaign=campaign, scope=scope, kind=params.get("kind"))
        except (AgreementError, SchemeError) as exc:
            return _bad_request(exc)
        return Response(agreement.to_json())


# --------------------------------------------------------------------------------------------------------------
# Runs compared, and the pool's reusability


class EvaluationQuerySerializer(serializers.Serializer):
    """The options of a per-topic evaluation, as `evaluate_runs` and the results pages read them."""

    measure = MeasureField(default="nDCG@5")
    kind = KindField(required=False, help_text="a graded dimension of the campaign's label scheme (default: its primary one)")
    order = serializers.ChoiceField(choices=evaluation.ORDERS, default="score")
    trec_eval = serializers.ChoiceField(choices=[10, 9], default=10)
    phase = serializers.ChoiceField(choices=list(exports.PHASES), default="main")
    rule = RuleField(default="majority")


class RunTagField(serializers.SlugRelatedField):
    """A run, by its tag, of the campaign in the serializer's context."""

    def __init__(self, **kwargs) -> None:
        super().__init__(slug_field="tag", queryset=Run.objects.none(), **kwargs)

    def get_queryset(self):
        return Run.objects.filter(campaign=self.context["campaign"])


class CompareQuerySerializer(EvaluationQuerySerializer):
    a = RunTagField(help_text="run A's tag")
    b = RunTagField(help_text="run B's tag")
    topic = serializers.CharField(required=False, max_length=50, help_text="a topic whose top-k lists to show side by side")


class SignificanceQuerySerializer(EvaluationQuerySerializer):
    test = serializers.ChoiceField(choices=evaluation.TESTS, default="t", help_text="paired t-test, or randomisation test")
    seed = serializers.IntegerField(default=evaluation.significance.DEFAULT_SEED, min_value=0, help_text="seed of the permutation draws")


def _options(params: dict) -> dict:
    """The evaluation options as the services take them (an unset kind is the scheme's primary dimension)."""
    return {**{name: params[name] for name in ("measure", "order", "trec_eval", "phase", "rule")}, "kind": params.get("kind", "")}


_LISTED = inline_serializer("ListedDocument", {
    "position": serializers.IntegerField(), "doc": serializers.CharField(),
    "label": serializers.IntegerField(allow_null=True, help_text="null: unjudged"),
    "in_other": serializers.BooleanField(help_text="the other run's list holds it too"),
}, many=True)


class CompareRunsView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        parameters=[CompareQuerySerializer],
        responses=inline_serializer("RunComparison", {
            "a": serializers.CharField(), "b": serializers.CharField(), "measure": serializers.CharField(),
            "depth": serializers.IntegerField(help_text="the lists' length: the measure's cutoff, or judged@k's"),
            "mean_a": serializers.FloatField(), "mean_b": serializers.FloatField(),
            "topics": inline_serializer("TopicDifference", {
                "topic": serializers.CharField(),
                "a": serializers.FloatField(allow_null=True, help_text="null: run A has no line for this judged topic"),
                "b": serializers.FloatField(allow_null=True),
                "diff": serializers.FloatField(help_text="a − b, a missing score counted as 0"),
            }, many=True, help_text="largest a − b first"),
            "topic": serializers.CharField(allow_null=True), "list_a": _LISTED, "list_b": _LISTED,
            "common": serializers.IntegerField(help_text="topics both runs answer: the paired tests' sample"),
            "p_t": serializers.FloatField(allow_null=True, help_text="two-sided paired t-test; null without a common topic"),
            "p_permutation": serializers.FloatField(allow_null=True, help_text="two-sided paired randomisation test (seeded)"),
        }),
        summary="Two runs side by side: per-topic differences, their paired tests, and for one topic both top-k lists",
        examples=[RULE_REFUSED, OpenApiExample("Unknown run", response_only=True, status_codes=["400"],
                                               value={"a": ["Object with tag=nope does not exist."]})],
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = _valid(CompareQuerySerializer(data=request.query_params, context={"campaign": campaign}))
        access.check_rule(request.user, campaign, params["rule"], params["phase"])
        try:
            found = comparison.compare_two_runs(
                campaign=campaign, run_a=params["a"], run_b=params["b"], topic=params.get("topic") or None, **_options(params)
            )
        except exports.ExportError as exc:
            return _bad_request(exc)
        return Response({"a": params["a"].tag, "b": params["b"].tag, **dataclasses.asdict(found)})


class SignificanceView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        parameters=[SignificanceQuerySerializer],
        responses=inline_serializer("RunPairTest", {
            "run_a": serializers.CharField(help_text="the better run of the pair by mean"), "run_b": serializers.CharField(),
            "mean_diff": serializers.FloatField(), "p_value": serializers.FloatField(),
            "p_holm": serializers.FloatField(help_text="Holm–Bonferroni over all pairs"),
            "significant": serializers.BooleanField(help_text="p_holm below 0.05"),
        }, many=True),
        summary="Every pair of runs tested on their per-topic scores (as `compare_runs --format json`)", examples=[RULE_REFUSED],
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = _valid(SignificanceQuerySerializer(data=request.query_params))
        access.check_rule(request.user, campaign, params["rule"], params["phase"])
        try:
            rows = evaluation.compare_runs(campaign=campaign, test=params["test"], seed=params["seed"], **_options(params))
        except exports.ExportError as exc:
            return _bad_request(exc)
        return Response(rows)


class ReusabilityView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        parameters=[EvaluationQuerySerializer],
        responses=inline_serializer("Reusability", {
            "measure": serializers.CharField(), "kind": serializers.CharField(),
            "kendall_tau": serializers.FloatField(allow_null=True, help_text="between the full and leave-one-team-out rankings"),
            "judged_depth": serializers.IntegerField(),
            "unique": serializers.DictField(child=serializers.IntegerField(), help_text="team → judged documents only its runs pooled"),
            "runs": inline_serializer("RunReusability", {
                "run": serializers.CharField(), "team": serializers.CharField(),
                "pooled": serializers.BooleanField(help_text="the pool holds a document because of this run"),
                "full": serializers.FloatField(), "reduced": serializers.FloatField(), "delta": serializers.FloatField(),
                "rank_full": serializers.IntegerField(), "rank_reduced": serializers.IntegerField(),
                "judged_full": serializers.FloatField(), "judged_reduced": serializers.FloatField(),
            }, many=True, help_text="in full-score order"),
        }),
        summary="Leave-one-team-out: each team's runs scored without the documents only that team pooled (as `reusability --format json`)",
        examples=[RULE_REFUSED],
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = _valid(EvaluationQuerySerializer(data=request.query_params))
        access.check_rule(request.user, campaign, params["rule"], params["phase"])
        options = _options(params)
        try:
            kind = evaluation.measured_kind(campaign, options.pop("kind"))
            report = reusability.pool_reusability(campaign=campaign, kind=kind, **options)
        except exports.ExportError as exc:
            return _bad_request(exc)
        return Response({
            "measure": report.measure, "kind": kind, "kendall_tau": report.kendall_tau, "judged_depth": report.judged_depth,
            "unique": report.unique, "runs": [dataclasses.asdict(row) for row in report.runs],
        })


def register(router) -> list:
    return [
        path("campaigns/<slug:slug>/topics/training/", MarkTrainingView.as_view(), name="api-topics-training"),
        path("campaigns/<slug:slug>/phase/", PhaseView.as_view(), name="api-phase"),
        path("campaigns/<slug:slug>/agreement/", AgreementView.as_view(), name="api-agreement"),
        path("campaigns/<slug:slug>/results/compare/", CompareRunsView.as_view(), name="api-results-compare"),
        path("campaigns/<slug:slug>/results/significance/", SignificanceView.as_view(), name="api-results-significance"),
        path("campaigns/<slug:slug>/results/reusability/", ReusabilityView.as_view(), name="api-results-reusability"),
    ]
