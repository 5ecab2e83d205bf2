"""Load the items of a classification campaign: a comments file (Touché 2023 Task 4, CoFE) and, optionally, the
proposals they answer."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, check_files, run_import
from assessments.services.imports.items import import_items


class Command(BaseCommand):
    help = (
        "Import COMMENTS (TAB-separated with a header: id id_prop … comment … lan … label, as the lab's CoFE files) into a "
        "classification campaign: each comment is judged beside its proposal (--proposals: id title proposal proposal_en "
        "title_en Topic lan endorsements). A label already in the file (In favor) is kept as --assessor's, an import "
        "source that is no person; --- means none. All or nothing: a bad row stops the import with file:line."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug (a classification campaign)")
        parser.add_argument("comments", type=Path)
        parser.add_argument("--proposals", type=Path, help="the proposals file: each proposal's title and text, and English")
        parser.add_argument(
            "--assessor", metavar="SOURCE",
            help="the import source the file's labels are kept under, e.g. cofe-test (never a person's account); "
            "needed when the file has labels",
        )

    def handle(self, *args, slug: str, comments: Path, proposals: Path | None, assessor: str | None, **options):
        campaign = campaign_or_fail(self, slug)
        check_files(self, [comments, *([proposals] if proposals else [])])
        run_import(
            self, desc="items", unit="comment",
            call=lambda bar: import_items(campaign=campaign, comments=comments, proposals=proposals, assessor=assessor),
        )
