"""Load participants' TREC runs into a campaign: the twin of the runs upload on the imports page."""

from pathlib import Path

from django.core.management.base import BaseCommand

from assessments.management.progress import campaign_or_fail, check_files, run_import
from assessments.services.imports.runs import import_runs


class Command(BaseCommand):
    help = (
        "Store TREC runs (`qid Q0|stance doc rank score tag`, plain or gzip). A run is its tag: importing a tag "
        "again replaces that run. Every file is checked before anything is stored; all or nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument(
            "--team", default="",
            help="the participating team (default: TEAM from a file named TEAM-TAG.txt, else none)",
        )

    def handle(self, *args, slug: str, files: list[Path], team: str, **options):
        campaign = campaign_or_fail(self, slug)
        check_files(self, files)
        run_import(
            self, desc="runs", unit="B",
            call=lambda bar: import_runs(campaign=campaign, paths=files, team=team, progress=bar),
        )
