"""Build (or extend) a campaign's judgment pool from its runs: the command-line twin of the pool page's build."""

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail, progress_bar
from assessments.models import Campaign
from assessments.selectors.pool_preview import PoolPreview, preview_pool
from assessments.services import pooling

MISSING_SHOWN = 20


class Command(BaseCommand):
    help = (
        "Add each topic's documents selected by a pooling strategy to the pool and print the pool size per topic. "
        "Building again only adds: entries (and their judgments) are never removed."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument(
            "--strategy", choices=list(pooling.STRATEGIES), default="depth",
            help="; ".join(f"{name}: {text}" for name, text in pooling.STRATEGIES.items()) + " (default depth)",
        )
        parser.add_argument("--depth", type=int, default=5, help="k of depth-k pooling (default 5, as Touché)")
        parser.add_argument(
            "--budget", type=int,
            help="rbp: fill each topic's pool up to N documents; maxmean/mtf: add N documents per topic",
        )
        parser.add_argument(
            "--order", choices=list(pooling.ORDERS), default="both",
            help="read runs by the rank column, by score (trec_eval), or both (default; the union for depth)",
        )
        parser.add_argument("--runs", nargs="+", metavar="TAG", default=[], help="pool only these runs (default: all)")
        parser.add_argument("--preview", action="store_true", help="print what the build would add and cost; change nothing")

    def handle(self, *args, slug: str, strategy: pooling.Strategy, depth: int, budget, order: pooling.PoolOrder, runs: list[str], preview: bool, **options):
        campaign = campaign_or_fail(self, slug)
        try:
            spec = pooling.PoolSpec(strategy=strategy, depth=depth, budget=budget, order=order, runs=tuple(runs))
            if preview:
                self._print_preview(preview_pool(campaign=campaign, spec=spec))
                return
            with progress_bar(desc="pooling", unit="step", stream=self.stderr) as bar:
                summary = pooling.build_pool(campaign=campaign, spec=spec, progress=bar)
        except pooling.PoolingError as exc:
            fail(self, exc)
        self._print_summary(campaign, summary)

    def _print_summary(self, campaign: Campaign, summary: pooling.PoolSummary) -> None:
        out = self.stdout
        out.write(f"{campaign.slug}: {summary.spec}")
        self._print_topics(summary.topics, added=summary.added, after=summary.total, missing=summary.missing_total)
        if summary.twins:
            out.write(f"duplicates: {summary.twins} entries in {summary.duplicate_groups} groups "
                      f"({summary.labels_copied} labels copied to new twins)")
        for warning in summary.warnings:
            self.stderr.write(f"warning: {warning}")
        if summary.missing_total:
            out.write(f"missing from the collection ({summary.missing_total}):")
            for number, doc in summary.missing[:MISSING_SHOWN]:
                out.write(f"  {number} {doc}")
            if summary.missing_total > MISSING_SHOWN:
                out.write(f"  … all of them: export_pool {campaign.slug} --missing")
        out.write(self.style.SUCCESS(summary.text))

    def _print_preview(self, preview: PoolPreview) -> None:
        out = self.stdout
        out.write(f"preview of {preview.spec} (nothing changed)")
        self._print_topics(preview.topics, added=preview.added, after=preview.total)
        out.write(f"{preview.added} documents to add: {preview.hours} h of judging")
        out.write("cost of other choices (new judgments, pool after, hours):")
        for option in preview.options:
            mark = "*" if option.chosen else " "
            out.write(f" {mark} {option.label:<45} {option.added:>7} {option.total:>7} {option.hours:>8} h")

    def _print_topics(self, topics: list[pooling.TopicCount], *, added: int, after: int, missing: int | None = None) -> None:
        """One line per topic and a total line; the missing column only where it is known (after a build)."""
        header: list[object] = ["topic", "before", "added", "after", *(["missing"] if missing is not None else [])]
        rows: list[list[object]] = [[t.number, t.before, t.added, t.after] + ([t.missing] if missing is not None else []) for t in topics]
        rows.append(["total", after - added, added, after] + ([missing] if missing is not None else []))
        for row in [header, *rows]:
            self.stdout.write(" ".join(f"{cell:>8}" for cell in row))
