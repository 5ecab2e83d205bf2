"""Creating campaigns, the people who run them, and moving them through their phases."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from assessments.labels import (
    CLASSIFICATION_PRESETS,
    IMAGE_PRESETS,
    PRESET_STANCE_CODES,
    PRESETS,
    LabelScheme,
    SchemeError,
)
from assessments.metrics.evaluation import stance_dimension
from assessments.models import Campaign, Collection, Kind, Membership, Phase
from assessments.services import audit


class CampaignError(ValueError):
    """A campaign operation that cannot be done as asked (the message says why)."""


# A stance code is one word of a run file's column 2 (runs are split on whitespace); Q0 and 0 say "no stance".
_MAX_CODE_LENGTH = 32
_NO_STANCE_CODES = ("Q0", "0")


def parse_stance_codes(text: str) -> dict[str, str]:
    """`SUP=SUPPORT,REF=REFUTE` (commas or whitespace between pairs) as {"SUP": "SUPPORT", "REF": "REFUTE"}; an empty
    text is no codes. CampaignError names a pair that is not CODE=VALUE or a code given twice. Whether the values are
    the scheme's is checked by `check_stance_codes`."""
    codes: dict[str, str] = {}
    for pair in text.replace(",", " ").split():
        code, equals, value = pair.partition("=")
        code, value = code.strip(), value.strip()
        if not equals or not code or not value:
            raise CampaignError(f"stance codes: {pair!r} is not CODE=VALUE (e.g. SUP=SUPPORT)")
        if code in codes:
            raise CampaignError(f"stance codes: {code} is given twice")
        codes[code] = value
    return codes


def format_stance_codes(codes: Mapping[str, str], scheme: LabelScheme | None = None) -> str:
    """The codes as `parse_stance_codes` reads them, `SUP=SUPPORT, REF=REFUTE`: in the order of the scheme's stance
    values when it is given (a campaign's codes come back from PostgreSQL's jsonb in an order of its own)."""
    stance = stance_dimension(scheme) if scheme is not None else None
    order = {str(v): i for i, v in enumerate(scheme.values(stance.name))} if scheme is not None and stance is not None else {}
    ordered = sorted(codes.items(), key=lambda item: (order.get(item[1], len(order)), item[0])) if order else codes.items()
    return ", ".join(f"{code}={value}" for code, value in ordered)


def check_stance_codes(scheme: LabelScheme, codes: object) -> dict[str, str]:
    """The codes, checked against the scheme: an object of codes (one word each, not Q0 or 0, which mean no stance)
    to values of the scheme's stance dimension (the one a run's stance column holds). CampaignError says what is
    wrong."""
    if not isinstance(codes, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in codes.items()):
        raise CampaignError('stance codes: an object of codes to stance values, e.g. {"SUP": "SUPPORT"}')
    if not codes:
        return {}
    stance = stance_dimension(scheme)
    if stance is None:
        raise CampaignError("stance codes: this campaign's label scheme has no category dimension for a run's stance column")
    allowed = [str(v) for v in scheme.values(stance.name)]
    for code, value in codes.items():
        if not code or len(code.split()) != 1 or code != code.strip() or len(code) > _MAX_CODE_LENGTH or not code.isprintable():
            raise CampaignError(f"stance codes: {code!r} is not one word of at most {_MAX_CODE_LENGTH} characters")
        if code in _NO_STANCE_CODES:
            raise CampaignError(f"stance codes: {code} means no stance in a run file and cannot stand for one")
        if value not in allowed:
            raise CampaignError(f"stance codes: {code}={value}: {value} is not one of {stance.name}'s values ({', '.join(allowed)})")
    return dict(codes)


@transaction.atomic
def create_campaign(
    *,
    slug: str,
    name: str,
    preset: str | None = None,
    collection: str | None = None,
    scheme: LabelScheme | None = None,
    guidelines: str = "",
    stance_codes: Mapping[str, str] | None = None,
    kind: str | None = None,
    organisers: Sequence[User] = (),
    created_by: User | None = None,
) -> Campaign:
    """Create a campaign with a preset's label scheme, or its own `scheme` (preset "custom"), and its collection, run
    by `organisers`.

    A preset names its scheme, so a preset given with a scheme is refused rather than stored under a name that
    would not describe it. The collection is shared by slug, so several campaigns over the same corpus load it
    once; an existing one is attached only when its creator and each organiser may use it (collection_refusal),
    since they will read its documents and may import into it. Organisers reach only their campaigns, so a campaign
    created from a page or the API lists its creator among them. `stance_codes` maps the codes its runs write in
    their stance column to stance values (None: the preset's, PRESET_STANCE_CODES, if it has any). `kind` says whether
    it judges pooled documents or images, or classifies items (None: by the preset: CLASSIFICATION_PRESETS,
    IMAGE_PRESETS, else ranking).
    """
    if kind is None:
        kind = Kind.CLASSIFICATION if preset in CLASSIFICATION_PRESETS else Kind.IMAGES if preset in IMAGE_PRESETS else Kind.RANKING
    elif kind not in Kind.values:
        raise CampaignError(f"unknown campaign kind {kind!r}; choose one of {', '.join(Kind.values)}")
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
    codes = check_stance_codes(scheme, dict(PRESET_STANCE_CODES.get(preset or "", {}) if stance_codes is None else stance_codes))
    coll_slug = collection or slug
    existing = Collection.objects.select_for_update().filter(slug=coll_slug).first()
    if existing is not None:
        # Whoever runs the new campaign reaches its collection's documents (and may import into it).
        for user in dict.fromkeys(u for u in (created_by, *organisers) if u is not None):
            if refusal := collection_refusal(user, existing):
                named = "" if collection else " (a new campaign's collection is named like the campaign unless one is given)"
                raise CampaignError(f"{refusal}{named}; give another collection name to make a new collection")
    coll = existing or Collection.objects.create(slug=coll_slug, name=collection or name)
    campaign = Campaign.objects.create(
        slug=slug, name=name, preset=preset, scheme=scheme.to_json(), guidelines=guidelines, collection=coll,
        stance_codes=codes, kind=kind,
    )
    audit.record(
        campaign=campaign, action=audit.Action.CAMPAIGN_CREATED, by=created_by, subject=slug,
        after={"name": name, "preset": preset, "collection": coll.slug, **({"kind": kind} if kind != Kind.RANKING else {}), **({"stance_codes": codes} if codes else {})},
    )
    for user in dict.fromkeys(organisers):
        add_member(campaign=campaign, user=user, by=created_by)
    return campaign


def collection_refusal(user: User, collection: Collection) -> str | None:
    """Why `user` may not attach `collection` to a campaign or write documents into it, or None when they may.

    A collection belongs to the campaigns that use it: its documents are what their assessors judge. An admin may
    use any; anyone else only one whose every campaign they run (a collection no campaign uses is anyone's). The
    campaigns they do not run are counted, not named: they may not know of them.
    """
    if user.is_campaign_admin:
        return None
    others = Campaign.objects.filter(collection=collection).exclude(memberships__user=user).count()
    if not others:
        return None
    return (
        f"collection {collection.slug!r} is used by {others} campaign{'s' if others != 1 else ''} that {user.username} does "
        "not run: only an admin, or someone who runs every campaign that uses it, may attach it to a campaign or change "
        "its documents"
    )


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
    "propagate_to_duplicates", "stance_codes", "machine_disagreement", "reveal_machine_labels",
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
    if "stance_codes" in changes:
        # They apply to runs imported from now on: runs imported before keep the values they were stored with.
        changes = {**changes, "stance_codes": check_stance_codes(campaign.label_scheme, changes["stance_codes"])}
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
