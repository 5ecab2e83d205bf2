from rest_framework import serializers

from assessments.models import Campaign


class CampaignSerializer(serializers.ModelSerializer):
    collection = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Campaign
        fields = ["slug", "name", "preset", "scheme", "phase", "guidelines", "collection", "created_at"]
        read_only_fields = fields
