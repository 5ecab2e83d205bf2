"""Creating campaigns, the people who run them, and moving them through their phases."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from assessments.labels import PRESETS, LabelScheme, SchemeError
from assessments.models import Campaign, Collection, Membership, Phase
from assessments.services import audit


class CampaignError(ValueError):
    """A campaign operation that cannot be done as asked (the message says why)."""


@transaction.atomic
def create_campaign(
    *,
    slug: str,
    name: str,
    preset: str | None = None,
    collection: str | None = None,
    scheme: LabelScheme | None = None,
    guidelines: str = "",
    organisers: Sequence[User] = (),
    created_by: User | None = None,
) -> Campaign:
    """Create a campaign with a preset's label scheme, or its own `scheme` (preset "custom"), and its collection, run
    by `organisers`.

    A preset names its scheme, so a preset given with a scheme is refused rather than stored under a name that
    would not describe it. The collection is shared by slug, so several campaigns over the same corpus load it
    once. Organisers reach only their campaigns, so a campaign created from a page or the API lists its creator
    among them.
    """
    if Campaign.objects.filter(slug=slug).exists():
        raise CampaignError(f"a campaign {slug!r} exists already")
    if scheme is not None:
        if preset not in (None, "custom"):
            raise CampaignError(f"give a preset or a label scheme, not both (preset {preset!r} has its own scheme)")
        preset = "custom"
    elif preset == "custom":
        raise CampaignError("a custom preset needs a label scheme")
    elif preset in PRESETS:
        scheme = PRESETS[preset][1]
    else:
        choices = f"choose one of {', '.join(PRESETS)}, or give a label scheme"
        raise CampaignError(f"unknown preset {preset!r}; {choices}" if preset else f"no preset: {choices}")
    try:
        scheme.check()
    except SchemeError as exc:
        raise CampaignError(f"label scheme: {exc}") from exc
    coll, _ = Collection.objects.get_or_create(slug=collection or slug, defaults={"name": collection or name})
    campaign = Campaign.objects.create(
        slug=slug, name=name, preset=preset, scheme=scheme.to_json(), guidelines=guidelines, collection=coll
    )
    audit.record(
        campaign=campaign, action=audit.Action.CAMPAIGN_CREATED, by=created_by, subject=slug,
        after={"name": name, "preset": preset, "collection": coll.slug},
    )
    for user in dict.fromkeys(organisers):
        add_member(campaign=campaign, user=user, by=created_by)
    return campaign


def add_member(*, campaign: Campaign, user: User, role: str = Membership.Role.ORGANISER, by: User | None) -> Membership:
    """Let `user` run the campaign (role organiser, or adjudicator: an organiser who also records final labels).
    Adding someone who is a member already changes their role."""
    if role not in Membership.Role.values:
        raise CampaignError(f"unknown role {role!r}: use {' or '.join(Membership.Role.values)}")
    if not user.is_organiser:
        raise CampaignError(f"{user.username} is an assessor: only organisers and admins run campaigns")
    with transaction.atomic():
        membership, created = Membership.objects.select_for_update().get_or_create(
            campaign=campaign, user=user, defaults={"role": role, "added_by": by}
        )
        if created:
            audit.record(campaign=campaign, action=audit.Action.MEMBER_ADDED, by=by, subject=user.username, after={"role": role})
        elif membership.role != role:
            audit.record(
                campaign=campaign, action=audit.Action.MEMBER_CHANGED, by=by, subject=user.username,
                before={"role": membership.role}, after={"role": role},
            )
            membership.role = role
            membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def remove_member(*, campaign: Campaign, user: User, by: User | None) -> None:
    """Take the campaign away from `user`; the last member stays (somebody must be able to run it)."""
    membership = Membership.objects.select_for_update().filter(campaign=campaign, user=user).first()
    if membership is None:
        raise CampaignError(f"{user.username} does not run campaign {campaign.slug}")
    if not Membership.objects.filter(campaign=campaign).exclude(pk=membership.pk).exists():
        raise CampaignError(f"{user.username} is the only member of campaign {campaign.slug}: add someone else first")
    audit.record(
        campaign=campaign, action=audit.Action.MEMBER_REMOVED, by=by, subject=user.username, before={"role": membership.role}
    )
    membership.delete()


# What an organiser may change after creation. Not the slug (URLs, commands and exports name it), the preset and
# scheme (judgments were checked against them), the collection (documents belong to it) or the phase (advance_phase).
SETTINGS = (
    "name", "guidelines", "seconds_per_judgment", "agreement_threshold", "overlap_share",
    "propagate_to_duplicates",
)


@transaction.atomic
def update_settings(*, campaign: Campaign, changes: Mapping[str, Any], by: User | None) -> Campaign:
    """Change some of the campaign's SETTINGS and record one event with the before and after of those that differ;
    values equal to the current ones change nothing and record nothing.

    An archived campaign may be changed too: these are the organisers' own notes and figures, which touch no label.
    Values are checked against the model's validators here as well as in the form or serializer, so the command
    line and the API cannot store a share above 1 either.
    """
    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        raise CampaignError(f"{', '.join(unknown)} cannot be changed here; settings are {', '.join(SETTINGS)}")
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    before = {name: getattr(campaign, name) for name in SETTINGS if name in changes and getattr(campaign, name) != changes[name]}
    if not before:
        return campaign
    for name in before:
        setattr(campaign, name, changes[name])
    try:
        campaign.clean_fields(exclude=[field.name for field in Campaign._meta.fields if field.name not in before])
    except ValidationError as exc:
        raise CampaignError("; ".join(f"{name}: {' '.join(errors)}" for name, errors in exc.message_dict.items())) from exc
    audit.record(
        campaign=campaign, action=audit.Action.CAMPAIGN_SETTINGS, by=by, subject=", ".join(before),
        before=before, after={name: getattr(campaign, name) for name in before},
    )
    campaign.save(update_fields=list(before))
    return campaign


@transaction.atomic
def set_archived(*, campaign: Campaign, archived: bool, by: User | None) -> Campaign:
    """Archive the campaign, or take it out of the archive; asking for the state it is in changes nothing.

    An archived campaign keeps everything (judgments, history, snapshots); its assessors no longer see its topics
    and no label can be given (services.judging), which is how a campaign that can no longer be deleted is put away.
    """
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.is_archived == archived:
        return campaign
    audit.record(
        campaign=campaign, action=audit.Action.ARCHIVED if archived else audit.Action.RESTORED, by=by,
        before={"archived": not archived}, after={"archived": archived},
    )
    campaign.archived_at = timezone.now() if archived else None
    campaign.save(update_fields=["archived_at"])
    return campaign


_NEXT_PHASE: dict[str, str] = {Phase.SETUP: Phase.TRAINING, Phase.TRAINING: Phase.MAIN, Phase.MAIN: Phase.CLOSED}


@transaction.atomic
def advance_phase(*, campaign: Campaign, to: str, by: User | None) -> Campaign:
    """Move setup → training → main → closed; skipping training (setup → main) is allowed."""
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    allowed = {_NEXT_PHASE.get(campaign.phase)} | ({Phase.MAIN} if campaign.phase == Phase.SETUP else set())
    if to not in allowed:
        raise CampaignError(f"a campaign in {campaign.phase} cannot move to {to}")
    audit.record(
        campaign=campaign, action=audit.Action.PHASE_CHANGED, by=by, subject=f"{campaign.phase} → {to}",
        before={"phase": campaign.phase}, after={"phase": to},
    )
    campaign.phase = to
    campaign.save(update_fields=["phase"])
    return campaign
