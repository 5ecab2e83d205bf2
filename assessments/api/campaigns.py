"""Campaigns in the API: the ones the caller runs, a new one (run by its creator), and the people who run one.

* ``GET  campaigns/``: the campaigns the caller runs (all of them for an admin); ``POST`` creates one, with a
  preset or with its own ``scheme`` (a JSON object, checked as ``create_campaign --scheme`` checks a file).
* ``PATCH campaigns/<slug>/``: changes its settings (name, guidelines, seconds_per_judgment, agreement_threshold,
  overlap_share, propagate_to_duplicates, stance_codes: ``{"SUP": "SUPPORT", ...}``, the codes its runs write in
  their stance column, machine_disagreement and reveal_machine_labels); the slug, preset, scheme, collection and phase are refused.
* ``GET  campaigns/<slug>/members/``: who runs it; ``POST`` adds someone (or changes their role).
* ``DELETE campaigns/<slug>/members/<username>/``: takes the campaign away from them.
* ``GET  campaigns/<slug>/timeline/``: the audit trail, newest first (``?action=import`` narrows it), paginated.
"""

from collections.abc import Mapping

from django.core.exceptions import PermissionDenied
from django.urls import path
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import generics, mixins, serializers, status, viewsets
from rest_framework.fields import empty
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from assessments import access
from assessments.labels import PRESETS, LabelScheme, SchemeError
from assessments.models import AuditEvent, Campaign, Membership
from assessments.selectors.campaigns import campaigns_for_organiser, members_of, timeline
from assessments.services import campaigns

from .permissions import IsOrganiser
from .serializers import CampaignSerializer, ErrorSerializer


class NewCampaignSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    preset = serializers.ChoiceField(
        choices=[*PRESETS, "custom"], required=False, allow_null=True, default=None,
        help_text="one of Touché's label schemes; leave it out (or give custom) with your own `scheme`",
    )
    scheme = serializers.JSONField(
        required=False, allow_null=True, default=None,
        help_text='your own label scheme, as `create_campaign --scheme` reads it: {"version": 2, "dimensions": [...]}',
    )
    collection = serializers.SlugField(max_length=64, required=False, allow_null=True, default=None)
    guidelines = serializers.CharField(required=False, allow_blank=True, default="")


    def validate_scheme(self, value: object) -> LabelScheme | None:
        try:
            return None if value is None else LabelScheme.from_json(value)
        except SchemeError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class SettingsSerializer(serializers.ModelSerializer):
    class Meta:
        model = Campaign
        fields = campaigns.SETTINGS


class MemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    added_by = serializers.CharField(source="added_by.username", default=None, read_only=True, allow_null=True)

    class Meta:
        model = Membership
        fields = ["username", "role", "added_by", "created_at"]
        read_only_fields = ["added_by", "created_at"]


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", default=None, allow_null=True, help_text="null: a management command")

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "actor", "action", "subject", "before", "after", "details"]
        read_only_fields = fields


def _bad_request(exc: Exception) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


class CampaignViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    serializer_class = CampaignSerializer
    permission_classes = [IsOrganiser]
    lookup_field = "slug"

    def get_queryset(self):
        return campaigns_for_organiser(self.request.user)

    def get_object(self):
        # access's lookup, so an unknown campaign is told in the same words here as at every other endpoint.
        campaign = access.get_campaign_for_organiser(self.request.user, self.kwargs["slug"])
        self.check_object_permissions(self.request, campaign)
        return campaign

    @extend_schema(request=NewCampaignSerializer, responses={201: CampaignSerializer}, summary="Create a campaign you run")
    def create(self, request, *args, **kwargs):
        params = NewCampaignSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            campaign = campaigns.create_campaign(**params.validated_data, organisers=[request.user], created_by=request.user)
        except campaigns.CampaignError as exc:
            return _bad_request(exc)
        return Response(CampaignSerializer(campaign).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=SettingsSerializer, responses=CampaignSerializer,
        summary="Change some of a campaign's settings (recorded on its timeline; the slug, preset, collection and phase stay)",
    )
    def partial_update(self, request, *args, **kwargs):
        campaign = self.get_object()
        # A JSON body that is not an object (null, 1, [1]) names no settings: say so rather than fail on it.
        if not isinstance(request.data, Mapping):
            return _bad_request(ValueError(f"the body must be a JSON object of settings ({', '.join(campaigns.SETTINGS)})"))
        # DRF drops unknown keys; a client asking to change the slug or phase should hear it was not done.
        refused = sorted(set(request.data) - set(campaigns.SETTINGS))
        if refused:
            return _bad_request(ValueError(f"{', '.join(refused)} cannot be changed here"))
        params = SettingsSerializer(data=request.data, partial=True)
        params.is_valid(raise_exception=True)
        try:
            campaign = campaigns.update_settings(campaign=campaign, changes=params.validated_data, by=request.user)
        except campaigns.CampaignError as exc:
            return _bad_request(exc)
        return Response(CampaignSerializer(campaign).data)


class MembersView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(responses=MemberSerializer(many=True), summary="Who runs the campaign")
    def get(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        return Response(MemberSerializer(members_of(campaign), many=True).data)

    @extend_schema(request=MemberSerializer, responses={201: MemberSerializer},
                   summary="Let an organiser run the campaign (role adjudicator: admins only)")
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = MemberSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        role = params.validated_data.get("role", Membership.Role.ORGANISER)
        if role == Membership.Role.ADJUDICATOR and not access.may_grant_adjudication(request.user):
            raise PermissionDenied("only admins make organisers adjudicators")
        user = User.objects.filter(username=params.validated_data["user"]["username"], is_active=True).first()
        if user is None:
            return _bad_request(ValueError(f"no active user {params.validated_data['user']['username']!r}"))
        try:
            membership = campaigns.add_member(campaign=campaign, user=user, role=role, by=request.user)
        except campaigns.CampaignError as exc:
            return _bad_request(exc)
        return Response(MemberSerializer(membership).data, status=status.HTTP_201_CREATED)


class MemberView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        request=None, responses={204: None, 400: ErrorSerializer}, summary="Take the campaign away from someone",
        examples=[OpenApiExample("Unknown user", value={"detail": "no user 'nobody'"}, response_only=True, status_codes=["400"])],
    )
    def delete(self, request, slug: str, username: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        user = User.objects.filter(username=username).first()
        try:
            if user is None:
                raise campaigns.CampaignError(f"no user {username!r}")
            campaigns.remove_member(campaign=campaign, user=user, by=request.user)
        except campaigns.CampaignError as exc:
            return _bad_request(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TimelineView(generics.ListAPIView):
    serializer_class = AuditEventSerializer
    permission_classes = [IsOrganiser]

    @extend_schema(
        parameters=[OpenApiParameter("action", str, description='an action or a family of them: "import", "member" …')],
        summary="The campaign's audit trail, newest first",
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        campaign = access.get_campaign_for_organiser(self.request.user, self.kwargs["slug"])
        return timeline(campaign, action=self.request.query_params.get("action", ""),
                        training_labels=access.sees_training_aggregates(self.request.user, campaign))


class RequiredBooleanField(serializers.BooleanField):
    """A boolean that must be given. DRF reads a form-encoded boolean that is missing as false (an unticked HTML
    checkbox sends nothing), so a form post without `archived` would take a campaign out of the archive."""

    default_empty_html = empty


class ArchiveSerializer(serializers.Serializer):
    archived = RequiredBooleanField(help_text="true: archive the campaign; false: take it out of the archive")


class ArchiveView(APIView):
    permission_classes = [IsOrganiser]

    @extend_schema(
        request=ArchiveSerializer, responses=CampaignSerializer,
        summary="Archive a campaign (assessors no longer see it, no label can be given; nothing is deleted), or take it out",
    )
    def post(self, request, slug: str):
        campaign = access.get_campaign_for_organiser(request.user, slug)
        params = ArchiveSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        campaign = campaigns.set_archived(campaign=campaign, archived=params.validated_data["archived"], by=request.user)
        return Response(CampaignSerializer(campaign).data)


def register(router) -> list:
    router.register("campaigns", CampaignViewSet, basename="campaign")
    return [
        path("campaigns/<slug:slug>/members/", MembersView.as_view(), name="api-members"),
        path("campaigns/<slug:slug>/members/<str:username>/", MemberView.as_view(), name="api-member"),
        path("campaigns/<slug:slug>/timeline/", TimelineView.as_view(), name="api-timeline"),
        path("campaigns/<slug:slug>/archive/", ArchiveView.as_view(), name="api-archive"),
    ]
