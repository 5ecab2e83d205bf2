"""Load an existing qrels file (last year's, another tool's) as judgments by a named assessor: the
command-line twin of the import on the qrels page and in the API."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, check_files, run_import
from assessments.services.imports.qrels import PHASES, import_qrels


class Command(BaseCommand):
    help = (
        "Import FILE (`topic 0 doc label`, or the five-column `topic doc relevance quality 0`; plain or gzip) as --assessor's "
        "judgments: an import source, made if missing, that is no person and cannot sign in (a person's account is refused). "
        "All or nothing: a bad line stops the import with file:line."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--kind", help="the label dimension the file holds: a dimension of the campaign's scheme (default: its primary one, "
            "the first required graded dimension)",
        )
        parser.add_argument(
            "--assessor", required=True, metavar="SOURCE",
            help="the import source the labels are kept under, e.g. touche2020 (never a person's account)",
        )
        parser.add_argument("--phase", choices=PHASES, default="main")

    def handle(self, *args, slug: str, file: Path, kind: str | None, assessor: str, phase: str, **options):
        campaign = campaign_or_fail(self, slug)
        check_files(self, [file])
        run_import(
            self, desc="qrels", unit="line",
            call=lambda bar: import_qrels(
                campaign=campaign, path=file, kind=kind, assessor=assessor, phase=phase, progress=bar
            ),
        )
