"""Machine judges in the API, for organisers' scripts: the same services as the machine judges pages and the
`machine_judge` command.

* ``GET  campaigns/<slug>/machine-judges/``: the judges, with their labels, failures and tokens used; ``POST`` adds one.
* ``GET  campaigns/<slug>/machine-judges/<judge>/prompts/``: every prompt version, newest first per dimension;
  ``POST`` a new version of one dimension's prompt.
* ``GET  campaigns/<slug>/machine-judges/<judge>/estimate/``: the calls and tokens a run would cost; changes nothing.
* ``POST campaigns/<slug>/machine-judges/<judge>/runs/``: start a run; answers 202 with the job, to poll at ``jobs/<id>/``.
* ``GET  campaigns/<slug>/machine-judges/<judge>/labels/``: every call the judge made, with its provenance (a page).

A judge's key is never accepted or returned: ``key_name`` names the environment variable of the workers that holds it.
"""

import json

from django.urls import path
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from assessments import access
from assessments.models import JudgePrompt, MachineJudge, MachineLabel
from assessments.selectors import machine_judges as judges
from assessments.services import machine_judges
from assessments.views.machine_judges import (
    KEY_NAME,
    MAX_ATTEMPTS,
    MAX_IN_FLIGHT,
    MAX_PER_MINUTE,
    PROMPT_CHARS,
    get_judge,
)

from .permissions import IsOrganiser
from .serializers import JobSerializer, KindField

_NO_KEY = OpenApiExample("A key instead of its variable's name", response_only=True, status_codes=["400"], value={
    "key_name": [str(KEY_NAME.message)]})


@extend_schema_field({"oneOf": [{"type": "integer"}, {"type": "string"}]})
class ValueField(serializers.JSONField):
    """A value of the campaign's scheme: a grade or a yes/no answer (an integer), or a category (a string)."""


def _json_without_nul(value: object) -> object:
    # PostgreSQL's JSON cannot hold U+0000, and a refusal there would be a 500 rather than the client's 400.
    if "\\u0000" in json.dumps(value):
        raise serializers.ValidationError("must not contain U+0000")
    return value


class MachineJudgeSerializer(serializers.ModelSerializer):
    created_by: "serializers.SlugRelatedField[User]" = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    labelled = serializers.IntegerField(read_only=True, help_text="calls that gave a label")
    failed = serializers.IntegerField(read_only=True, help_text="calls recorded as failures (no label)")
    prompt_tokens = serializers.IntegerField(read_only=True, help_text="as the endpoint counted them")
    completion_tokens = serializers.IntegerField(read_only=True)
    base_url = serializers.CharField(read_only=True, help_text="the endpoint's base URL; empty for the local judge")
    parameters = serializers.DictField(read_only=True, help_text="sent with every call")
    thresholds = serializers.DictField(read_only=True, help_text="the local judge's calibration: dimension → [[similarity, grade], …]")

    class Meta:
        model = MachineJudge
        fields = ["name", "kind", "model", "base_url", "key_name", "parameters", "in_flight", "per_minute", "max_attempts",
                  "thresholds", "created_by", "created_at", "labelled", "failed", "prompt_tokens", "completion_tokens"]
        read_only_fields = fields


class NewMachineJudgeSerializer(serializers.Serializer):
    name = serializers.RegexField(r"^[-a-zA-Z0-9_]{1,64}$", max_length=64, help_text="letters, digits, - and _")
    kind = serializers.ChoiceField(choices=MachineJudge.Kind.choices)
    base_url = serializers.CharField(max_length=500, required=False, default="", allow_blank=True,
                                     help_text="endpoint: base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1")
    model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True, help_text="endpoint: the model it runs")
    key_name = serializers.CharField(max_length=64, required=False, default="", allow_blank=True, validators=[KEY_NAME],
                                     help_text="endpoint: the workers' environment variable that holds the key (never the key)")
    parameters = serializers.DictField(required=False, help_text='sent with every call (default {"temperature": 0})')
    in_flight = serializers.IntegerField(min_value=1, max_value=MAX_IN_FLIGHT, default=4)
    per_minute = serializers.IntegerField(min_value=0, max_value=MAX_PER_MINUTE, default=0, help_text="0: no limit")
    max_attempts = serializers.IntegerField(min_value=1, max_value=MAX_ATTEMPTS, default=4)

    def validate_parameters(self, value: dict) -> object:
        return _json_without_nul(value)


class JudgesView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(responses=MachineJudgeSerializer(many=True), summary="The campaign's machine judges, with what their calls gave and cost")
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        return Response(MachineJudgeSerializer(judges.judges_of(campaign).select_related("created_by"), many=True).data)

    @extend_schema(
        request=NewMachineJudgeSerializer, responses={201: MachineJudgeSerializer},
        summary="Add a machine judge: an OpenAI-compatible endpoint, or the local embedding model (a weak judge)",
        description=(
            "An endpoint judge starts with a prompt per dimension of the scheme. The local judge only measures how "
            "similar a document is to the topic, graded by thresholds calibrated on the judged topics; it needs no "
            "base_url, model or key."
        ),
        examples=[
            OpenApiExample("An endpoint", request_only=True, value={
                "name": "gpt4o", "kind": "endpoint", "base_url": "https://api.openai.com/v1", "model": "gpt-4o",
                "key_name": "OPENAI_API_KEY", "in_flight": 8}),
            _NO_KEY,
            OpenApiExample("Name taken", response_only=True, status_codes=["400"],
                           value={"detail": "campaign touche20 already has a judge named gpt4o"}),
        ],
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = NewMachineJudgeSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            judge = machine_judges.add_judge(campaign=campaign, by=request.user, **params.validated_data)
        except machine_judges.MachineJudgeError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(MachineJudgeSerializer(get_judge(campaign, judge.name)).data, status=status.HTTP_201_CREATED)


# --------------------------------------------------------------------------------------------------------------
# Prompts


class JudgePromptSerializer(serializers.ModelSerializer):
    created_by: "serializers.SlugRelatedField[User]" = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    answers = serializers.DictField(child=ValueField(), read_only=True, help_text="the model's final answer → the value it stands for")
    current = serializers.BooleanField(read_only=True, help_text="the version runs use now (the newest of its dimension)")

    class Meta:
        model = JudgePrompt
        fields = ["dimension", "version", "current", "system", "template", "answers", "created_by", "created_at"]
        read_only_fields = fields


class NewJudgePromptSerializer(serializers.Serializer):
    dimension = KindField()
    template = serializers.CharField(max_length=PROMPT_CHARS, help_text="{title} {description} {narrative} {document} {objects} {cause} {effect}")
    answers = serializers.DictField(child=ValueField(), help_text='e.g. {"0": 0, "1": 1, "2": 2}: every value one of the dimension\'s')
    system = serializers.CharField(max_length=PROMPT_CHARS, required=False, allow_blank=True, help_text="default: the current version's")

    def validate_answers(self, value: dict) -> object:
        return _json_without_nul(value)


class PromptsView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(responses=JudgePromptSerializer(many=True), summary="Every version of the judge's prompts, newest first per dimension")
    def get(self, request, slug: str, judge: str):
        found = get_judge(access.get_campaign_for_organiser(request.user, slug), judge)
        prompts = list(found.prompts.select_related("created_by").order_by("dimension", "-version"))
        for i, prompt in enumerate(prompts):
            prompt.current = i == 0 or prompts[i - 1].dimension != prompt.dimension  # type: ignore[attr-defined]
        return Response(JudgePromptSerializer(prompts, many=True).data)

    @extend_schema(
        request=NewJudgePromptSerializer, responses={201: JudgePromptSerializer, 200: JudgePromptSerializer},
        summary="A new version of one dimension's prompt (labels keep the version they were made with)",
        description=(
            "201 with the new version; the next run asks every document again with it. 200 with the current version, "
            "and nothing made, when the text and answers are those of the current version (a copy would only make the "
            "next run pay for every document again)."
        ),
        examples=[OpenApiExample("An answer outside the scheme", response_only=True, status_codes=["400"], value={
            "detail": "answer 'yes' maps to 5, which is not a value of relevance (0, 1, 2)"})],
    )
    def post(self, request, slug: str, judge: str):
        found = get_judge(access.get_campaign_for_organiser(request.user, slug), judge)
        params = NewJudgePromptSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        if found.is_local:
            return Response({"detail": "the local judge has thresholds, not prompts"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            prompt, created = machine_judges.change_prompt(judge=found, by=request.user, dimension=data["dimension"],
                                                           template=data["template"], answers=data["answers"], system=data.get("system"))
        except machine_judges.MachineJudgeError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        prompt.current = True  # type: ignore[attr-defined]
        return Response(JudgePromptSerializer(prompt).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


# --------------------------------------------------------------------------------------------------------------
# Runs


class JudgeRunSerializer(serializers.Serializer):
    dimensions = serializers.ListField(child=KindField(), required=False, default=list,
                                       help_text="the dimensions to ask (default: every one the judge can ask)")
    topic = serializers.CharField(max_length=50, required=False, allow_null=True, default=None, help_text="one topic only (its number)")
    only_unjudged = serializers.BooleanField(default=False, help_text="only documents no assessor has judged")


_ESTIMATE = inline_serializer("MachineJudgeEstimate", {
    "calls": serializers.IntegerField(help_text="calls a run would make"),
    "by_dimension": serializers.DictField(child=serializers.IntegerField()),
    "prompt_tokens": serializers.IntegerField(help_text="estimated at about four characters a token"),
    "completion_tokens": serializers.IntegerField(help_text="estimated; 0 for the local judge"),
    "note": serializers.CharField(),
})
_NO_TOPIC = OpenApiExample("Unknown topic", response_only=True, status_codes=["400"], value={"detail": "campaign touche20 has no topic 99"})


class EstimateView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(parameters=[JudgeRunSerializer], responses=_ESTIMATE, examples=[_NO_TOPIC],
                   summary="What a run would cost: calls and tokens (as the page shows before it starts); changes nothing")
    def get(self, request, slug: str, judge: str):
        found = get_judge(access.get_campaign_for_organiser(request.user, slug), judge)
        params = JudgeRunSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        try:
            return Response(machine_judges.plan(judge=found, **params.validated_data).as_estimate())
        except machine_judges.MachineJudgeError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


class RunsView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(request=JudgeRunSerializer, responses={202: JobSerializer}, examples=[_NO_TOPIC],
                   summary="Start a run of the judge (a job; its params carry the estimate)")
    def post(self, request, slug: str, judge: str):
        found = get_judge(access.get_campaign_for_organiser(request.user, slug), judge)
        params = JudgeRunSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            job = machine_judges.start_judging(judge=found, by=request.user, **params.validated_data)
        except machine_judges.MachineJudgeError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


# --------------------------------------------------------------------------------------------------------------
# Labels


class MachineLabelsQuerySerializer(serializers.Serializer):
    dimension = KindField(required=False)
    topic = serializers.CharField(max_length=50, required=False, help_text="one topic only (its number)")
    status = serializers.ChoiceField(choices=MachineLabel.Status.choices, required=False)


class MachineLabelSerializer(serializers.ModelSerializer):
    topic = serializers.CharField(source="topic.number", read_only=True)
    doc_id = serializers.CharField(source="document.doc_id", read_only=True)
    value = ValueField(read_only=True, allow_null=True, help_text="the label of `dimension`; null for a failure")
    labels = serializers.DictField(child=ValueField(), read_only=True, help_text="{dimension: value}; {} for a failure")
    parameters = serializers.DictField(read_only=True, help_text="sent with the call (the local judge: its thresholds)")

    class Meta:
        model = MachineLabel
        fields = ["id", "topic", "doc_id", "dimension", "status", "value", "labels", "reason", "raw_answer", "error", "model",
                  "prompt_version", "parameters", "attempts", "prompt_tokens", "completion_tokens", "duration_ms", "at", "job"]
        read_only_fields = fields


class LabelsView(generics.ListAPIView):
    serializer_class = MachineLabelSerializer
    permission_classes = [IsOrganiser]

    @extend_schema(parameters=[MachineLabelsQuerySerializer],
                   summary="Every call of the judge, newest first, with its provenance: a label, or a failure (never a label)")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        found = get_judge(access.get_campaign_for_organiser(self.request.user, self.kwargs["slug"]), self.kwargs["judge"])
        params = MachineLabelsQuerySerializer(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        return judges.labels_of(found, **params.validated_data)


def register(router) -> list:
    base = "campaigns/<slug:slug>/machine-judges/"
    return [
        path(base, JudgesView.as_view(), name="api-machine-judges"),
        path(f"{base}<slug:judge>/prompts/", PromptsView.as_view(), name="api-machine-judge-prompts"),
        path(f"{base}<slug:judge>/estimate/", EstimateView.as_view(), name="api-machine-judge-estimate"),
        path(f"{base}<slug:judge>/runs/", RunsView.as_view(), name="api-machine-judge-runs"),
        path(f"{base}<slug:judge>/labels/", LabelsView.as_view(), name="api-machine-judge-labels"),
    ]
