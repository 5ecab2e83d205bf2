"""Import or update a campaign's topics from a Touché topics file: the twin of the upload on the imports page."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, check_files, run_import
from assessments.services.imports.topics import import_topics


class Command(BaseCommand):
    help = (
        "Create or update (by number) the topics in FILE: Touché XML in any year's shape (title, description, "
        "narrative, objects, cause/effect, or <query>), or number<TAB>title lines as BEIR and ir_datasets give them; "
        "plain or gzip. Topics missing from the file are kept. All or nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("file", type=Path, help="Touché topics XML or number<TAB>title lines, plain or gzip")
        parser.add_argument(
            "--allow-changes", action="store_true",
            help="apply changes to topics that already have judgments (without it, such a file is refused and each "
            "change listed); each change is recorded in the campaign's timeline",
        )

    def handle(self, *args, slug: str, file: Path, allow_changes: bool, **options):
        campaign = campaign_or_fail(self, slug)
        check_files(self, [file])
        run_import(
            self, desc="topics", unit="B",
            call=lambda bar: import_topics(campaign=campaign, path=file, allow_changes=allow_changes, progress=bar),
        )
