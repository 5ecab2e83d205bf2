from rest_framework import serializers

from assessments.models import Campaign, Job


class CampaignSerializer(serializers.ModelSerializer):
    collection = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Campaign
        fields = ["slug", "name", "preset", "scheme", "phase", "guidelines", "collection", "created_at"]
        read_only_fields = fields


class JobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = Job
        fields = ["id", "kind", "status", "params", "done", "total", "percent", "message", "errors", "warnings", "result",
                  "created_at", "started_at", "finished_at"]
        read_only_fields = fields
