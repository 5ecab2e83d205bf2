"""Print a campaign's inter-assessor agreement: the same numbers as the agreement page."""

import json

from django.core.management.base import CommandError

from assessments.labels import SchemeError
from assessments.management.base import BaseCommand
from assessments.models import Campaign
from assessments.selectors.agreement import FLAG_RULE, AgreementError, Scope, compute_agreement, default_phase


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = (
        "Agreement per label dimension of the campaign's scheme (ordinal for graded ones, nominal for categories "
        "and questions) over every document two or more assessors judged in the phase (imported "
        "judgments included): Cohen's kappa per pair (unweighted, and linearly weighted for ordinal scales), "
        "Fleiss' kappa, Krippendorff's alpha, Gwet's AC1 and the binary (relevant or not) kappa, overall and per topic "
        "(and per language of a classification campaign's items)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument(
            "--phase", choices=["training", "main", "all"],
            help="default: the campaign's current phase (training before the main phase starts, all once closed)",
        )
        parser.add_argument("--round", type=int, help="one training round only (default: every round)")
        parser.add_argument("--topic", help="one topic only, with its pairwise kappas")
        parser.add_argument("--kind", help="one label dimension of the campaign's scheme only (default: every one)")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(
        self, *args, slug: str, phase: str | None, round: int | None, topic: str | None, kind: str | None, format: str,
        **options,
    ):
        try:
            campaign = Campaign.objects.get(slug=slug)
        except Campaign.DoesNotExist:
            raise CommandError(f"no campaign {slug!r}") from None
        try:
            scope = Scope(phase or default_phase(campaign), round=round, topic=topic)
            agreement = compute_agreement(campaign=campaign, scope=scope, kind=kind)
        except (AgreementError, SchemeError) as exc:
            raise CommandError(str(exc)) from None
        if format == "json":
            self.stdout.write(json.dumps(agreement.to_json(), indent=2, ensure_ascii=False))
            return
        out = self.stdout
        out.write(f"{campaign.slug} · {scope.describe()} · pass mark {agreement.threshold:.2f}: {FLAG_RULE}")
        for name, figures in agreement.dimensions.items():
            report = figures.report
            level = "ordinal" if report.ordinal else "nominal"
            out.write("")
            out.write(self.style.MIGRATE_HEADING(
                f"{name} ({level}: {', '.join(map(str, report.categories))}): "
                f"{report.n_items} documents judged by two or more assessors"
            ))
            out.write(f"  Fleiss' kappa        {_f(report.fleiss):>7}  ({report.fleiss_items} documents with the usual panel)")
            out.write(f"  Krippendorff's alpha {_f(report.alpha):>7}  ({level})")
            out.write(f"  Gwet's AC1           {_f(report.ac1):>7}  (nominal: robust when one label dominates)")
            if report.ordinal:
                out.write(f"  binary kappa         {_f(report.binary_kappa):>7}  (label ≥ 1 against below, as trec_eval binarises)")
            if report.cohen:
                out.write(f"  {'pair':<30} {'documents':>9} {'kappa':>7} {'weighted':>8}")
                for p in report.cohen:
                    out.write(f"  {f'{p.rater_a} – {p.rater_b}':<30} {p.n_items:>9} {_f(p.unweighted):>7} {_f(p.linear):>8}")
            if figures.languages:
                out.write(f"  {'language':<10} {'items':>9} {'fleiss':>7} {'alpha':>7} {'AC1':>7}")
                for language, by in figures.languages.items():
                    out.write(f"  {language:<10} {by.n_items:>9} {_f(by.fleiss):>7} {_f(by.alpha):>7} {_f(by.ac1):>7}")
            flagged = {r.rater for r in figures.flagged}
            if figures.assessors:
                out.write(f"  {'assessor':<30} {'mean kappa':>10} {'pairs':>5}")
                for r in figures.assessors:
                    mark = self.style.ERROR(f"  below {agreement.threshold:.2f}") if r.rater in flagged else ""
                    out.write(f"  {r.rater:<30} {_f(r.mean_kappa):>10} {r.n_pairs:>5}{mark}")
            if figures.topics:
                out.write(f"  {'topic':<10} {'documents':>9} {'fleiss':>7} {'alpha':>7} {'binary':>7}")
                for t in figures.topics:
                    out.write(f"  {t.number:<10} {t.n_items:>9} {_f(t.fleiss):>7} {_f(t.alpha):>7} {_f(t.binary_kappa):>7}")
