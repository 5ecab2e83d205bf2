"""Creating campaigns and moving them through their phases."""

from django.db import transaction

from assessments.labels import PRESETS, LabelScheme
from assessments.models import Campaign, Collection, Phase


class CampaignError(ValueError):
    """A campaign operation that cannot be done as asked (the message says why)."""


@transaction.atomic
def create_campaign(
    *,
    slug: str,
    name: str,
    preset: str,
    collection: str | None = None,
    scheme: LabelScheme | None = None,
    guidelines: str = "",
) -> Campaign:
    """Create a campaign with a preset's label scheme (or a custom one) and its collection.

    The collection is shared by slug, so several campaigns over the same corpus load it once.
    """
    if Campaign.objects.filter(slug=slug).exists():
        raise CampaignError(f"a campaign {slug!r} exists already")
    if preset == "custom":
        if scheme is None:
            raise CampaignError("a custom preset needs a label scheme")
    elif preset in PRESETS:
        scheme = scheme or PRESETS[preset][1]
    else:
        raise CampaignError(f"unknown preset {preset!r}; choose one of {', '.join([*PRESETS, 'custom'])}")
    scheme.check()
    coll, _ = Collection.objects.get_or_create(slug=collection or slug, defaults={"name": collection or name})
    return Campaign.objects.create(
        slug=slug, name=name, preset=preset, scheme=scheme.to_json(), guidelines=guidelines, collection=coll
    )


_NEXT_PHASE = {Phase.SETUP: Phase.TRAINING, Phase.TRAINING: Phase.MAIN, Phase.MAIN: Phase.CLOSED}


@transaction.atomic
def advance_phase(*, campaign: Campaign, to: str) -> Campaign:
    """Move setup → training → main → closed; skipping training (setup → main) is allowed."""
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    allowed = {_NEXT_PHASE.get(campaign.phase)} | ({Phase.MAIN} if campaign.phase == Phase.SETUP else set())
    if to not in allowed:
        raise CampaignError(f"a campaign in {campaign.phase} cannot move to {to}")
    campaign.phase = to
    campaign.save(update_fields=["phase"])
    return campaign
