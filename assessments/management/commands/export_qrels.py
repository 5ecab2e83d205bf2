"""Export a campaign's current judgments as a qrels file, kept as a numbered snapshot: the command-line twin
of the download on the qrels page and in the API."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail
from assessments.services import aligned_exports, exports, image_campaigns, qrels_sources


class Command(BaseCommand):
    help = (
        "Write the campaign's qrels (`topic 0 doc label`, sorted by topic then document) to --output or stdout and "
        "keep the file as a numbered snapshot. Several labels for one document are combined by --rule. With --aligned, "
        "one file per dimension of the scheme in --output-dir, all with the same rows in the same order (as Touché "
        "published its relevance, quality and coherence files)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument(
            "--kind", help="the label dimension to export: a dimension of the campaign's scheme (default: its primary one, "
            "the first required graded dimension)",
        )
        parser.add_argument("--output", type=Path, help="file to write (default: standard output)")
        parser.add_argument(
            "--aligned", action="store_true",
            help="write <campaign>-<dimension>.qrels for every dimension of the scheme (or those --kind names, comma-separated) "
            "into --output-dir, line-aligned: every document with a label of each, a dimension not asked written as its "
            "'otherwise' or 0; a document still lacking a label is left out of all the files, with a warning",
        )
        parser.add_argument("--output-dir", type=Path, dest="output_dir", help="with --aligned: the folder to write the files to")
        parser.add_argument("--phase", choices=list(exports.PHASES), default="main", help="whose judgments (default main)")
        parser.add_argument(
            "--rule", default="majority",
            help="majority (ties: the lower label; for a category the first in the scheme), max, mean (rounded, .5 up) "
            "adjudicated (an adjudicator's final label where there is one, else majority) or assessor:NAME (default majority)",
        )
        parser.add_argument(
            "--sources", choices=qrels_sources.SOURCES, default="human",
            help="human: the assessors' labels (default); machine: a machine judge's current labels; hybrid: the "
            "assessors' where they judged a document, the judge's for the rest. Machine and hybrid files cover the topics "
            "with human labels of --phase, as the judge_impact report scores them; the snapshot and its audit record say which",
        )
        parser.add_argument("--judge", help="with --sources machine or hybrid: the judge's name (default: the campaign's newest)")

    def handle(self, *args, slug: str, kind: str | None, output: Path | None, phase: str, rule: str, sources: str,
               judge: str | None, **options):
        campaign = campaign_or_fail(self, slug)
        if (sources != "human" or judge) and (options["aligned"] or campaign.is_images):
            fail(self, "--sources and --judge write one text campaign's dimension; not with --aligned or image campaigns")
        if options["aligned"]:
            self._aligned(campaign, kind=kind, output=output, output_dir=options["output_dir"], phase=phase, rule=rule)
            return
        if options["output_dir"] is not None:
            fail(self, "--output-dir goes with --aligned; one file is written with --output")
        if campaign.is_images and kind is None:  # the lab's file: three questions a judged image, in one file
            text = image_campaigns.image_qrels_text(campaign, rule=rule, phase=phase)
            if output:
                output.write_text(text, encoding="utf-8")
            else:
                self.stdout.write(text, ending="")
            self.stderr.write(f"{text.count(chr(10))} lines: ONTOPIC, PRO and CON of each judged image ({phase} phase, rule {rule})")
            return
        try:
            export = qrels_sources.export_qrels(campaign=campaign, kind=kind, phase=phase, rule=rule, sources=sources, judge=judge)
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
        if not snapshot.line_count:  # written all the same: a script may diff from it
            why = exports.nothing_to_export(campaign=campaign, kind=kind, phase=phase, rule=rule)
            self.stderr.write(f"warning: {why or f'the judge has no {snapshot.kind} labels of the topics with {phase}-phase labels'}")
        self.stderr.write(
            f"qrels snapshot #{snapshot.number}: {snapshot.line_count} {snapshot.kind} lines ({phase} phase, rule {snapshot.rule}), "
            f"sha256 {snapshot.sha256}" + (f", written to {output}" if output else "")
        )

    def _aligned(self, campaign, *, kind: str | None, output: Path | None, output_dir: Path | None, phase: str, rule: str) -> None:
        if output is not None or output_dir is None:
            fail(self, "--aligned writes one file per dimension: give --output-dir DIR (not --output)")
        kinds = [name.strip() for name in (kind or "").split(",") if name.strip()]
        try:
            export = aligned_exports.export_aligned(campaign=campaign, output_dir=output_dir, kinds=kinds, phase=phase, rule=rule)
        except exports.ExportError as exc:
            fail(self, exc)
        for warning in export.warnings:
            self.stderr.write(f"warning: {warning}", style_func=self.style.WARNING)
        for file in export.files:
            snapshot = file.snapshot
            self.stderr.write(
                f"qrels snapshot #{snapshot.number}: {snapshot.line_count} {snapshot.kind} lines ({phase} phase, rule "
                f"{snapshot.rule}), sha256 {snapshot.sha256}, written to {file.path}"
            )
        self.stdout.write(f"{len(export.files)} aligned files of {export.lines} lines each in {output_dir}")
