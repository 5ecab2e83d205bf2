"""The judge-impact report in the API, for scripts: ``GET campaigns/<slug>/results/judge-impact/`` answers what
`judge_impact --format json` prints (services.judge_impact), to organisers of the campaign, with the results
pages' rules on phases and aggregation rules (access.check_rule)."""

from django.urls import path
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from assessments import access
from assessments.services import exports, judge_impact

from .analysis import EvaluationQuerySerializer
from .permissions import IsOrganiser
from .schema import RULE_REFUSED


class JudgeImpactQuerySerializer(EvaluationQuerySerializer):
    judge = serializers.CharField(required=False, max_length=64, help_text="the machine judge's name (default: the campaign's newest)")
    top_k = serializers.IntegerField(default=10, min_value=2, max_value=10_000,
                                     help_text="the runs, best by the human leaderboard, that top-k τ compares")


def _figure(help_text: str) -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, help_text=help_text)


def _by_estimate(name: str, help_text: str):
    return inline_serializer(name, {source: _figure(f"{source} against human; null where undefined (a constant leaderboard)")
                                    for source in judge_impact.ESTIMATES}, help_text=help_text)


_AGREEMENT: dict[str, serializers.Field] = {
    "documents": serializers.IntegerField(help_text="documents with a human and a machine label"),
    "kappa": _figure("Cohen's kappa (linearly weighted for graded dimensions); null where undefined"),
    "exact": _figure("share of those documents with the same label"),
    "bias": _figure("mean machine − human label"),
}

REPORT = inline_serializer("JudgeImpact", {
    "campaign": serializers.CharField(), "judge": serializers.CharField(), "model": serializers.CharField(),
    "kind": serializers.CharField(), "measure": serializers.CharField(),
    "judged_depth": serializers.IntegerField(help_text="k of each run's top-k documents that holes and bias count"),
    "top_k": serializers.IntegerField(), "phase": serializers.CharField(), "rule": serializers.CharField(),
    "kendall_tau": _by_estimate("JudgeImpactTau", "Kendall's tau-b over all runs"),
    "top_k_tau": _by_estimate("JudgeImpactTopTau", "tau-b over the top_k runs of the human leaderboard"),
    "tau_ap": _by_estimate("JudgeImpactTauAP", "tau_AP (Yilmaz et al. 2008) of each leaderboard against the human one"),
    "labels": serializers.DictField(child=serializers.IntegerField(), help_text="qrels lines of human, machine and hybrid"),
    "holes_filled": serializers.IntegerField(help_text="documents the hybrid qrels take from the judge"),
    "moved": serializers.ListField(child=serializers.CharField(), help_text=f"runs that move {judge_impact.MOVED} places or more"),
    "favoured": serializers.ListField(child=serializers.CharField(), help_text="runs favoured by the machine judge"),
    "favoured_margin": serializers.FloatField(help_text="the grade margin that rule uses"),
    "agreement": inline_serializer("JudgeAgreement", _AGREEMENT, help_text="over every topic"),
    "topics": inline_serializer("JudgeTopicAgreement", {"topic": serializers.CharField(), **_AGREEMENT}, many=True),
    "runs": inline_serializer("JudgeImpactRun", {
        "run": serializers.CharField(), "team": serializers.CharField(),
        "human": serializers.FloatField(), "machine": serializers.FloatField(), "hybrid": serializers.FloatField(),
        "rank_human": serializers.IntegerField(), "rank_machine": serializers.IntegerField(), "rank_hybrid": serializers.IntegerField(),
        "shift_machine": serializers.IntegerField(help_text="rank_machine − rank_human: positive, places lost"),
        "shift_hybrid": serializers.IntegerField(),
        "moved": serializers.BooleanField(help_text=f"moves {judge_impact.MOVED} places or more under machine or hybrid"),
        "holes": serializers.IntegerField(help_text="documents of its top k without a human label"),
        "filled": serializers.IntegerField(help_text="of those, labelled by the judge"),
        "compared": serializers.IntegerField(help_text="documents of its top k with both labels"),
        "bias": _figure("mean machine − human label over them"),
        "favoured": serializers.BooleanField(),
    }, many=True, help_text="in human leaderboard order"),
})


class JudgeImpactView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        parameters=[JudgeImpactQuerySerializer], responses=REPORT,
        summary="The leaderboard under human, machine and hybrid qrels, and how far they agree (as `judge_impact --format json`)",
        description=(
            "Every run scored against the assessors' labels (human), a machine judge's (machine) and the assessors' with "
            "the judge's for their holes (hybrid), on the topics with human labels; Kendall's tau, top-k tau and tau_AP "
            "of machine and hybrid against human; each run's ranks and moves, holes filled, and whether the judge "
            "favours it; human–machine agreement per topic. `export_qrels --sources` writes each column's qrels."
        ),
        examples=[RULE_REFUSED, OpenApiExample("No machine judge", response_only=True, status_codes=["400"], value={
            "detail": "campaign touche20 has no machine judge yet: add one and label the pool with machine_judge touche20 "
                      "--endpoint URL --model NAME (or --local)"})],
    )
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        serializer = JudgeImpactQuerySerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        params = serializer.validated_data
        access.check_rule(request.user, campaign, params["rule"], params["phase"])
        try:
            report = judge_impact.judge_impact(
                campaign=campaign, judge=params.get("judge"), kind=params.get("kind", ""),
                **{name: params[name] for name in ("measure", "top_k", "order", "trec_eval", "phase", "rule")},
            )
        except exports.ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(report.as_json())


def register(router) -> list:
    return [path("campaigns/<slug:slug>/results/judge-impact/", JudgeImpactView.as_view(), name="api-results-judge-impact")]
