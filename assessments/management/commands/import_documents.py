"""Load document texts into a campaign's collection: the twin of the documents upload on the imports page."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, check_files, run_import
from assessments.services.imports.documents import DOCUMENT_FORMATS, import_documents


class Command(BaseCommand):
    help = (
        "Insert or update documents (by id) from args.me JSON, Touché passage JSONL, generic JSONL or the processed "
        "args.me CSV of Touché 2022 Task 1 (args_processed.csv, one document per sentence), gzip-compressed or not. "
        "Re-importing is idempotent. All files or nothing. Pooled pairs of sentences get the text of their sentences."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument(
            "--format", choices=DOCUMENT_FORMATS, default="auto",
            help="auto (default) recognises args.me and args_processed.csv (argsme-sentences) by their opening; passages "
            "and jsonl are one JSON object per line",
        )
        parser.add_argument(
            "--only-pooled", action="store_true",
            help="keep only documents some pool needs (fills the stubs pooling created), so a large corpus costs only what is judged",
        )

    def handle(self, *args, slug: str, files: list[Path], format: str, only_pooled: bool, **options):
        campaign = campaign_or_fail(self, slug)
        check_files(self, files)
        run_import(
            self, desc="documents", unit="line",
            call=lambda bar: import_documents(
                campaign=campaign, paths=files, fmt=format, only_pooled=only_pooled, progress=bar
            ),
        )
