"""Create a campaign: the first step of a Touché-style assessment, before topics, documents and runs are imported."""

import json
from pathlib import Path

from accounts.models import User
from assessments.labels import (
    CLASSIFICATION_PRESETS,
    IMAGE_PRESETS,
    PRESET_STANCE_CODES,
    PRESETS,
    LabelScheme,
    SchemeError,
)
from assessments.management.base import BaseCommand
from assessments.management.progress import fail
from assessments.models import Campaign, Kind
from assessments.services.campaigns import CampaignError, create_campaign, format_stance_codes, parse_stance_codes


class Command(BaseCommand):
    help = "Create a campaign with a preset label scheme, or a custom one given as JSON with --scheme."

    def add_arguments(self, parser) -> None:
        presets = "; ".join(f"{name}: {description}" for name, (description, _) in PRESETS.items())
        parser.add_argument("slug", help="short name used in URLs and commands, e.g. touche22-task2")
        parser.add_argument("--name", required=True, help="the campaign's title as people see it")
        parser.add_argument(
            "--preset", choices=[*PRESETS, "custom"], metavar="PRESET",
            help=f"the label scheme, one of Touché's: {presets}. Or give your own with --scheme (preset custom)",
        )
        parser.add_argument(
            "--scheme", type=Path, metavar="FILE",
            help='your own label scheme, a JSON file: {"version": 2, "dimensions": [{"name": "topical", "kind": "question", '
            '"values": [{"value": 1, "name": "Yes", "key": "y"}, …]}, …]} (kinds: graded, category, question; '
            'a dimension may be asked only under a "condition" on another). It is checked before anything is stored',
        )
        parser.add_argument(
            "--collection", metavar="SLUG",
            help="the document collection, shared by campaigns over the same corpus (default: a new one named like the campaign)",
        )
        parser.add_argument("--guidelines", type=Path, metavar="FILE", help="a text file with the assessors' guidelines")
        defaults = "; ".join(f"{name}: {format_stance_codes(codes, PRESETS[name][1])}" for name, codes in PRESET_STANCE_CODES.items())
        parser.add_argument(
            "--stance-codes", metavar="CODE=VALUE,…",
            help="the codes runs write in their stance column and the stance values they stand for, e.g. "
            f"SUP=SUPPORT,REF=REFUTE,NEU=NEUTRAL,NO=NO (an empty string: none). Default: the preset's ({defaults}), else none",
        )
        parser.add_argument(
            "--kind", choices=Kind.values,
            help="ranking: topics, runs and pools; images: the same with images (import_images) and image runs by stance; "
            "classification: items (comments) labelled beside their proposal and submissions scored against the decided "
            f"labels (import_items). Default: classification for {', '.join(sorted(CLASSIFICATION_PRESETS))}, images for "
            f"{', '.join(sorted(IMAGE_PRESETS))}, else ranking",
        )
        parser.add_argument(
            "--organisers", default="", metavar="NAMES",
            help="comma-separated user names of the organisers who run it (organisers reach only their campaigns; "
            "admins reach all)",
        )

    def handle(self, *args, slug, name, preset, scheme, collection, guidelines, organisers, stance_codes, kind, **options):
        if preset is None and scheme is None:
            fail(self, "give --preset NAME or --scheme FILE")
        if scheme is not None and preset not in (None, "custom"):
            fail(self, f"give --preset or --scheme, not both (preset {preset} has its own scheme)")
        label_scheme = _read_scheme(self, scheme) if scheme else None
        names = [n.strip() for n in organisers.split(",") if n.strip()]
        people = {user.username: user for user in User.objects.filter(username__in=names)}
        if unknown := [n for n in names if n not in people]:
            fail(self, f"no user {', '.join(unknown)} (create one with create_user --role organiser)")
        existing = Campaign.objects.filter(slug=slug).first()
        if existing is not None and preset not in (None, "custom") and existing.preset == preset:
            # The same line pasted twice: done already (a different preset or scheme is refused below).
            self.stdout.write(f"campaign {slug} exists already ({existing.preset}): nothing changed")
            return
        text = ""
        if guidelines:
            try:
                text = guidelines.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                fail(self, f"{guidelines}: {exc}")
        try:
            codes = None if stance_codes is None else parse_stance_codes(stance_codes)
            campaign = create_campaign(
                slug=slug, name=name, preset=preset, collection=collection, scheme=label_scheme, guidelines=text,
                stance_codes=codes, kind=kind, organisers=[people[n] for n in names],
            )
        except CampaignError as exc:
            fail(self, exc)
        run_by = f", run by {', '.join(names)}" if names else " (only admins reach it until it has organisers)"
        self.stdout.write(
            f"created {'' if campaign.kind == 'ranking' else campaign.kind + ' '}campaign {campaign.slug} ({campaign.preset}) with collection {campaign.collection.slug}{run_by}"
        )
        if campaign.stance_codes:
            self.stdout.write(f"stance codes in runs: {format_stance_codes(campaign.stance_codes, campaign.label_scheme)}")


# A scheme is a page of JSON: a file far larger is not one, and is not read into memory whole.
_MAX_SCHEME_BYTES = 1 << 20


def _read_scheme(command: BaseCommand, path: Path) -> LabelScheme:
    """The scheme in the file, or `error: FILE: reason` and exit 1 with nothing stored."""
    try:
        with path.open("rb") as file:
            data = file.read(_MAX_SCHEME_BYTES + 1)
    except OSError as exc:
        fail(command, f"{path}: {exc.strerror}")
    if len(data) > _MAX_SCHEME_BYTES:
        fail(command, f"{path}: a label scheme is at most {_MAX_SCHEME_BYTES} bytes")
    try:
        return LabelScheme.from_json(json.loads(data.decode("utf-8")))
    except UnicodeDecodeError:
        fail(command, f"{path}: not UTF-8 text")
    except json.JSONDecodeError as exc:
        fail(command, f"{path}:{exc.lineno}: invalid JSON: {exc.msg}")
    except RecursionError:
        fail(command, f"{path}: JSON nested too deeply")
    except SchemeError as exc:
        fail(command, f"{path}: {exc}")
