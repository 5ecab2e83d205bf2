"""Write a whole campaign to one archive file: the command behind backups of one campaign and moves between
installs (import_campaign reads it back)."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail, progress_bar
from assessments.services.archive_export import export_campaign


class Command(BaseCommand):
    help = (
        "Write the campaign to one zip file: settings and label scheme, members, topics, the documents it pooled or "
        "judged (with text), runs, pool, assignments, every judgment with its full history and replies, "
        "adjudications with theirs, qrels snapshots and the audit trail, with a manifest of sha256 checksums. "
        "The campaign is read as it is at one instant, while assessors go on judging."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("--output", type=Path, required=True, help="the archive to write (e.g. touche20.zip)")

    def handle(self, *args, slug: str, output: Path, **options):
        campaign = campaign_or_fail(self, slug)
        if not output.parent.is_dir():
            fail(self, f"{output.parent}: no such folder")
        with progress_bar(desc="export", unit="records", stream=self.stderr) as bar:
            exported = export_campaign(campaign=campaign, path=output, progress=bar)
        self.stdout.write(exported.text)
