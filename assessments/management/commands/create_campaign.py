"""Create a campaign: the first step of a Touché-style assessment, before topics, documents and runs are imported."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from accounts.models import User
from assessments.labels import PRESETS, LabelScheme
from assessments.management.progress import fail
from assessments.services.campaigns import CampaignError, create_campaign


class Command(BaseCommand):
    help = "Create a campaign with a preset label scheme, or a custom one given as JSON with --scheme."

    def add_arguments(self, parser) -> None:
        presets = "; ".join(f"{name}: {description}" for name, (description, _) in PRESETS.items())
        parser.add_argument("slug", help="short name used in URLs and commands, e.g. touche22-task2")
        parser.add_argument("--name", required=True, help="the campaign's title as people see it")
        parser.add_argument(
            "--preset", required=True, choices=[*PRESETS, "custom"], metavar="PRESET",
            help=f"the label scheme. {presets}; custom: your own (needs --scheme)",
        )
        parser.add_argument(
            "--scheme", type=Path, metavar="FILE",
            help='JSON label scheme for --preset custom: {"relevance": [{"value": 0, "name": "Not relevant", "key": "0"}, …], '
            '"quality": […], "stance": […]}',
        )
        parser.add_argument(
            "--collection", metavar="SLUG",
            help="the document collection, shared by campaigns over the same corpus (default: a new one named like the campaign)",
        )
        parser.add_argument("--guidelines", type=Path, metavar="FILE", help="a text file with the assessors' guidelines")
        parser.add_argument(
            "--organisers", default="", metavar="NAMES",
            help="comma-separated user names of the organisers who run it (organisers reach only their campaigns; "
            "admins reach all)",
        )

    def handle(self, *args, slug, name, preset, scheme, collection, guidelines, organisers, **options):
        label_scheme = _read_scheme(self, scheme) if scheme else None
        names = [n.strip() for n in organisers.split(",") if n.strip()]
        people = {user.username: user for user in User.objects.filter(username__in=names)}
        if unknown := [n for n in names if n not in people]:
            fail(self, f"no user {', '.join(unknown)} (create one with create_user --role organiser)")
        text = ""
        if guidelines:
            try:
                text = guidelines.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                fail(self, f"{guidelines}: {exc}")
        try:
            campaign = create_campaign(
                slug=slug, name=name, preset=preset, collection=collection, scheme=label_scheme, guidelines=text,
                organisers=[people[n] for n in names],
            )
        except (CampaignError, ValueError) as exc:
            fail(self, exc)
        run_by = f", run by {', '.join(names)}" if names else " (only admins reach it until it has organisers)"
        self.stdout.write(
            f"created campaign {campaign.slug} ({campaign.preset}) with collection {campaign.collection.slug}{run_by}"
        )


def _read_scheme(command: BaseCommand, path: Path) -> LabelScheme:
    try:
        return LabelScheme.from_json(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        fail(command, f"{path}: {exc.strerror}")
    except json.JSONDecodeError as exc:
        fail(command, f"{path}:{exc.lineno}: invalid JSON: {exc.msg}")
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        fail(command, f"{path}: not a label scheme ({exc})")
