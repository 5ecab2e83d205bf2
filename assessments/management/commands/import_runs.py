"""Load participants' TREC runs into a campaign, or a classification campaign's submissions: the twin of the runs
upload on the imports page."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, check_files, run_import
from assessments.services.classification import import_prediction_files
from assessments.services.image_runs import import_image_runs
from assessments.services.imports.runs import import_runs


class Command(BaseCommand):
    help = (
        "Store TREC runs (`qid Q0|stance doc rank score tag`, plain or gzip). A run is its tag: importing a tag "
        "again replaces that run. In a classification campaign (Touché 2023 Task 4) each FILE is a submission of "
        "`comment_id<TAB>label` lines without a header, tagged by its name without .tsv/.txt/.gz; it must predict "
        "every comment with a decided label, and a tag already imported is refused. Every file is checked before "
        "anything is stored; all or nothing."
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
        if campaign.is_classification:
            # A submission is read whole (a few hundred kilobytes), so there is no progress to show.
            run_import(
                self, desc="submissions", unit="file",
                call=lambda bar: import_prediction_files(campaign=campaign, paths=files, team=team),
            )
            return
        if campaign.is_images:  # Task 3: topic PRO|CON imageId rank score tag
            run_import(self, desc="image runs", unit="file",
                       call=lambda bar: import_image_runs(campaign=campaign, paths=files, team=team))
            return
        run_import(
            self, desc="runs", unit="B",
            call=lambda bar: import_runs(campaign=campaign, paths=files, team=team, progress=bar),
        )
