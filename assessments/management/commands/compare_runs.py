"""Significance tests between every pair of a campaign's runs: the table an overview paper prints."""

import json

from assessments.management.base import BaseCommand
from assessments.management.commands.evaluate_runs import add_evaluation_options
from assessments.management.progress import campaign_or_fail, fail
from assessments.services import evaluation, exports


class Command(BaseCommand):
    help = (
        "Compare every pair of runs on their per-topic scores: paired t-test (--test t) or paired randomisation "
        "test with 10,000 seeded sign flips (--test permutation), Holm–Bonferroni over all pairs at α = 0.05."
    )

    def add_arguments(self, parser) -> None:
        add_evaluation_options(parser, several_kinds=False)
        parser.add_argument("--test", choices=evaluation.TESTS, default="t", help="t (default) or permutation")
        parser.add_argument("--seed", type=int, default=evaluation.significance.DEFAULT_SEED,
                            help="seed of the permutation draws")
        parser.add_argument("--format", choices=("table", "json"), default="table")

    def handle(self, *args, slug: str, format: str, **options):
        campaign = campaign_or_fail(self, slug)
        try:
            kind = evaluation.measured_kind(campaign, options["kind"])
            rows = evaluation.compare_runs(
                campaign=campaign, measure=options["measure"], kind=kind, test=options["test"],
                seed=options["seed"], order=options["order"], trec_eval=options["trec_eval"], phase=options["phase"],
                rule=options["rule"],
            )
        except exports.ExportError as exc:
            fail(self, exc)
        if format == "json":
            self.stdout.write(json.dumps(rows, indent=2))
            return
        width = max([len(row["run_a"]) for row in rows] + [len(row["run_b"]) for row in rows] + [5])
        self.stdout.write(f"{'run a':<{width}}  {'run b':<{width}}  {'mean diff':>9}  {'p':>8}  {'p (Holm)':>8}  significant")
        for row in rows:
            self.stdout.write(
                f"{row['run_a']:<{width}}  {row['run_b']:<{width}}  {row['mean_diff']:>9.4f}  {row['p_value']:>8.4f}  "
                f"{row['p_holm']:>8.4f}  {'yes' if row['significant'] else 'no'}"
            )
        significant = sum(row["significant"] for row in rows)
        self.stdout.write(f"{len(rows)} pairs, {significant} significantly different ({options['test']} test, "
                          f"Holm over all pairs, α 0.05, {options['measure']} {kind}, seed {options['seed']})")
