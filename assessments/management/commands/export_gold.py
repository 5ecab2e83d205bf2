"""Write a classification campaign's decided labels as the lab's truth file (Touché 2023 Task 4, CoFE): the file
the organisers' evaluation.py scores submissions against."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail
from assessments.services import classification, exports


class Command(BaseCommand):
    help = (
        "Write the campaign's comments in the layout they were imported in (the lab's header: id id_prop … comment … "
        "lan … label) with each comment's decided label, --- where there is none, to --output or stdout."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug (a classification campaign)")
        parser.add_argument("--output", type=Path, help="file to write (default: standard output)")
        parser.add_argument("--phase", choices=list(exports.PHASES), default="main", help="whose judgments (default main)")
        parser.add_argument(
            "--rule", default=classification.DEFAULT_RULE,
            help="adjudicated (an adjudicator's label where there is one, else the majority; the default), majority "
            "(a tie: the label first in the scheme) or assessor:NAME (one coder's or import source's labels alone)",
        )
        parser.add_argument(
            "--min-agreement", type=float, dest="min_agreement", metavar="X",
            help="keep a decided label only where at least this share (0 to 1) of the comment's human coders gave it; "
            "the others, and comments no person judged, are written ---",
        )

    def handle(self, *args, slug: str, output: Path | None, phase: str, rule: str, min_agreement: float | None, **options):
        campaign = campaign_or_fail(self, slug)
        try:
            gold = classification.export_gold(campaign=campaign, rule=rule, phase=phase, min_agreement=min_agreement)
        except exports.ExportError as exc:
            fail(self, exc)
        if output:
            output.write_bytes(gold.text.encode())
        else:
            self.stdout.write(gold.text, ending="")
        for warning in gold.warnings:
            self.stderr.write(f"warning: {warning}", style_func=self.style.WARNING)
        self.stderr.write(
            f"{gold.comments} comments, {gold.labelled} with a label ({phase} phase, rule {rule}"
            + (f", human agreement at least {min_agreement:g}" if min_agreement is not None else "") + ")"
            + (f", written to {output}" if output else "")
        )
