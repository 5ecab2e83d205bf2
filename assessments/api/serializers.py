"""Serializers several API modules share: a campaign, a job, an error, and the grammar of the evaluation options
(measure, rule, kind) that the results, the run comparison and reusability all read."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from assessments.metrics.measures import MEASURE_HELP
from assessments.models import Campaign, Collection, Job
from assessments.services.exports import RULE_NAMES


class CampaignSerializer(serializers.ModelSerializer):
    collection: "serializers.SlugRelatedField[Collection]" = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Campaign
        fields = ["slug", "name", "preset", "scheme", "phase", "training_round", "guidelines", "collection", "created_at",
                  "archived_at", "seconds_per_judgment", "agreement_threshold", "overlap_share",
                  "propagate_to_duplicates", "stance_codes", "machine_disagreement", "reveal_machine_labels"]
        read_only_fields = fields


class JobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    can_retry = serializers.BooleanField(read_only=True, help_text="failed, and its inputs are still kept")
    can_confirm = serializers.BooleanField(read_only=True, help_text="refused until the changes it lists are confirmed, inputs kept")

    class Meta:
        model = Job
        fields = ["id", "kind", "status", "params", "done", "total", "percent", "message", "errors", "warnings", "result",
                  "created_at", "started_at", "finished_at", "heartbeat_at", "attempts", "cancel_requested_at", "can_retry", "can_confirm"]
        read_only_fields = fields


@extend_schema_field({"type": "string", "format": "binary"})
class UploadField(serializers.FileField):
    """A file sent in a multipart body. drf-spectacular documents a FileField as a URI (the form it takes in an
    answer), which told clients to send a link instead of the file's bytes."""


class ErrorSerializer(serializers.Serializer):
    """Every error's body (assessments.api.schema lists them per operation); a refused body or query may instead
    carry DRF's field errors."""

    detail = serializers.CharField(help_text="What went wrong, in words a person can act on")


# The documented spellings; the server also takes them in any letter case (metrics.measures.parse_measure).
_MEASURE = r"(?:(?:nDCG'?|P|judged)@[1-9][0-9]{0,3}|AP|MAP|RR|MRR|bpref)"
MEASURES_SCHEMA = {"type": "string", "pattern": f"^{_MEASURE}(?:,{_MEASURE})*$", "example": "nDCG@5,P@10"}


@extend_schema_field({"type": "string", "pattern": f"^{_MEASURE}$", "example": "nDCG@5"})
class MeasureField(serializers.CharField):
    """One trec_eval measure."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("help_text", MEASURE_HELP)
        super().__init__(**kwargs)


@extend_schema_field(MEASURES_SCHEMA)
class MeasuresField(serializers.CharField):
    """One trec_eval measure, or several separated by commas (a result row for each)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("help_text", f"{MEASURE_HELP}; or several, separated by commas: nDCG@5,P@10,AP")
        super().__init__(**kwargs)


@extend_schema_field({"anyOf": [
    {"type": "string", "enum": list(RULE_NAMES)},
    {"type": "string", "pattern": "^assessor:.+$", "description": "one assessor's labels alone: admins and adjudicators only"},
]})
class RuleField(serializers.CharField):
    """How the labels of several assessors make one (services.exports.AggregationRule)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("help_text", f"{', '.join(RULE_NAMES)}, or assessor:NAME (one assessor's labels alone: admins and "
                                       "the campaign's adjudicators only, as are training labels until the training round closes)")
        super().__init__(**kwargs)


@extend_schema_field({"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_]{0,15}$", "example": "relevance"})
class KindField(serializers.CharField):
    """A dimension of the campaign's label scheme: the campaign names them (its `scheme`), so no list fits every one."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("help_text", "a dimension of the campaign's label scheme (GET campaigns/<slug>/: scheme.dimensions"
                                       "[].name), e.g. relevance, quality or stance for Touché's presets")
        super().__init__(**kwargs)
