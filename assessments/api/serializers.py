from rest_framework import serializers

from assessments.models import Campaign, Collection, Job


class CampaignSerializer(serializers.ModelSerializer):
    collection: "serializers.SlugRelatedField[Collection]" = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Campaign
        fields = ["slug", "name", "preset", "scheme", "phase", "guidelines", "collection", "created_at", "archived_at",
                  "seconds_per_judgment", "agreement_threshold", "overlap_share",
                  "propagate_to_duplicates", "stance_codes"]
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
