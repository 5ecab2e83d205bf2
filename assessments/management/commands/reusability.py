"""Leave-one-team-out: would the pool have judged each team's runs fairly had the team not contributed to it?"""

import dataclasses
import json

from assessments.management.base import BaseCommand
from assessments.management.commands.evaluate_runs import add_evaluation_options
from assessments.management.progress import campaign_or_fail, fail
from assessments.services import evaluation, exports, reusability


class Command(BaseCommand):
    help = (
        "For each team, drop every judged document only its runs brought into the pool (by the pool's recorded "
        "sources), score its runs again, and report full and reduced scores, both ranks, Kendall's tau between "
        "the two rankings of all runs, and judged@k for every run, including runs that were never pooled."
    )

    def add_arguments(self, parser) -> None:
        add_evaluation_options(parser, several_kinds=False)
        parser.add_argument("--format", choices=("table", "json"), default="table")

    def handle(self, *args, slug: str, format: str, **options):
        campaign = campaign_or_fail(self, slug)
        try:
            kind = evaluation.measured_kind(campaign, options["kind"])
            report = reusability.pool_reusability(
                campaign=campaign, measure=options["measure"], kind=kind, order=options["order"],
                trec_eval=options["trec_eval"], phase=options["phase"], rule=options["rule"],
            )
        except exports.ExportError as exc:
            fail(self, exc)
        if format == "json":
            self.stdout.write(json.dumps({
                "measure": report.measure, "kind": kind, "kendall_tau": report.kendall_tau,
                "judged_depth": report.judged_depth, "unique": report.unique,
                "runs": [dataclasses.asdict(row) for row in report.runs],
            }, indent=2))
            return
        width = max([len(row.run) for row in report.runs] + [3])
        team_width = max([len(row.team) for row in report.runs] + [4])
        judged = f"judged@{report.judged_depth}"
        self.stdout.write(
            f"{'team':<{team_width}}  {'run':<{width}}  {'full':>7}  {'reduced':>7}  {'delta':>7}  {'rank':>4}  "
            f"{'reduced':>7}  {judged:>9}  {'reduced':>7}  pooled"
        )
        for row in report.runs:
            self.stdout.write(
                f"{row.team:<{team_width}}  {row.run:<{width}}  {row.full:>7.4f}  {row.reduced:>7.4f}  {row.delta:>+7.4f}  "
                f"{row.rank_full:>4}  {row.rank_reduced:>7}  {row.judged_full:>9.3f}  {row.judged_reduced:>7.3f}  "
                f"{'yes' if row.pooled else 'no'}"
            )
        tau = "undefined" if report.kendall_tau is None else f"{report.kendall_tau:.4f}"
        self.stdout.write(f"{len(report.runs)} runs, {report.measure} {kind}; Kendall's tau between the full "
                          f"and leave-one-team-out rankings: {tau}")
