"""Write a campaign's pool as `qid doc` lines, for organisers who check it or judge elsewhere."""

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail
from assessments.selectors.pools import export_lines


class Command(BaseCommand):
    help = "Write one `qid doc` line per pool entry (topics in file order, documents by id) to a file or stdout."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("--output", "-o", help="file to write (default: standard output)")
        parser.add_argument("--missing", action="store_true", help="only documents missing from the collection")

    def handle(self, *args, slug: str, output: str | None, missing: bool, **options):
        campaign = campaign_or_fail(self, slug)
        lines = export_lines(campaign=campaign, missing_only=missing)
        if output is None:
            count = _write(lines, self.stdout)
        else:
            try:
                with open(output, "w", encoding="utf-8", newline="\n") as file:
                    count = _write(lines, file)
            except OSError as exc:
                fail(self, f"{output}: {exc.strerror}")
            self.stderr.write(f"wrote {count} line{'s' if count != 1 else ''} to {output}")


def _write(lines, stream) -> int:
    count = 0
    for line in lines:
        stream.write(line)  # lines end with a newline, so self.stdout adds none
        count += 1
    return count
