"""Restore a campaign from an archive written by export_campaign, into this install."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import check_files, run_import
from assessments.services.archive_import import import_campaign


class Command(BaseCommand):
    help = (
        "Store a campaign archive (export_campaign) as a new campaign, all or nothing: the manifest's checksums are "
        "verified first, and a wrong record is named by member and line. Users are matched by username; names this "
        "install lacks become inactive accounts without a password, for an admin to activate. Archives written before "
        "campaigns defined their label dimensions (format version 1) import too. PostgreSQL only."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("archive", type=Path, help="the archive file")
        parser.add_argument("--slug", help="store the campaign under this slug (default: the archived one)")

    def handle(self, *args, archive: Path, slug: str | None, **options):
        check_files(self, [archive])
        run_import(
            self, desc="import", unit="records",
            call=lambda bar: import_campaign(path=archive, slug=slug, progress=bar, name=str(archive)),
        )
