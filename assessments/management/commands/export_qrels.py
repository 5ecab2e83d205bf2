"""Export a campaign's current judgments as a qrels file, kept as a numbered snapshot: the command-line twin
of the download on the qrels page and in the API."""

from pathlib import Path

from django.core.management.base import BaseCommand

from assessments.management.progress import campaign_or_fail, fail
from assessments.services import exports


class Command(BaseCommand):
    help = (
        "Write the campaign's qrels (`topic 0 doc label`, sorted by topic then document) to --output or stdout and "
        "keep the file as a numbered snapshot. Several labels for one document are combined by --rule."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument(
            "--kind", help="the label dimension to export: a dimension of the campaign's scheme (default: its primary one, "
            "the first required graded dimension)",
        )
        parser.add_argument("--output", type=Path, help="file to write (default: standard output)")
        parser.add_argument("--phase", choices=list(exports.PHASES), default="main", help="whose judgments (default main)")
        parser.add_argument(
            "--rule", default="majority",
            help="majority (ties: the lower label; for a category the first in the scheme), max, mean (rounded, .5 up) "
            "adjudicated (an adjudicator's final label where there is one, else majority) or assessor:NAME (default majority)",
        )

    def handle(self, *args, slug: str, kind: str | None, output: Path | None, phase: str, rule: str, **options):
        campaign = campaign_or_fail(self, slug)
        try:
            export = exports.export_qrels(campaign=campaign, kind=kind, phase=phase, rule=rule)
        except exports.ExportError as exc:
            fail(self, exc)
        if output:
            with open(output, "wb") as stream:
                stream.writelines(export)
        else:
            for chunk in export:
                self.stdout.write(chunk.decode(), ending="")
        snapshot = export.snapshot
        assert snapshot is not None  # stored once the last line has been read, as above
        self.stderr.write(
            f"qrels snapshot #{snapshot.number}: {snapshot.line_count} {snapshot.kind} lines ({phase} phase, rule {snapshot.rule}), "
            f"sha256 {snapshot.sha256}" + (f", written to {output}" if output else "")
        )
