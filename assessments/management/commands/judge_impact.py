"""What a machine judge does to the leaderboard: the command-line twin of the judge-impact page and endpoint."""

import json

from assessments.management.base import BaseCommand
from assessments.management.commands.evaluate_runs import add_evaluation_options
from assessments.management.progress import campaign_or_fail, fail
from assessments.services import exports, judge_impact


def _figure(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.4f}"


class Command(BaseCommand):
    help = (
        "Score every run against the assessors' labels (human), a machine judge's (machine) and the assessors' with "
        "the judge's for their holes (hybrid); print Kendall's tau, tau among the top k runs and tau_AP of machine and "
        "hybrid against human, each run's rank under each (flagging moves of 3 places or more), the holes the judge "
        "filled, the runs whose top documents the judge grades well above the assessors (favoured), and human-machine "
        "agreement per topic. `export_qrels --sources` writes the qrels of each column."
    )

    def add_arguments(self, parser) -> None:
        add_evaluation_options(parser, several_kinds=False)
        parser.add_argument("--judge", help="the machine judge's name (default: the campaign's newest judge)")
        parser.add_argument("--top-k", type=int, default=10, dest="top_k",
                            help="the runs, best by the human leaderboard, that top-k tau compares (default 10)")
        parser.add_argument("--format", choices=("table", "json"), default="table")

    def handle(self, *args, slug: str, format: str, **options):
        campaign = campaign_or_fail(self, slug)
        try:
            report = judge_impact.judge_impact(
                campaign=campaign, judge=options["judge"], measure=options["measure"], kind=options["kind"],
                top_k=options["top_k"], order=options["order"], trec_eval=options["trec_eval"], phase=options["phase"],
                rule=options["rule"],
            )
        except exports.ExportError as exc:
            fail(self, exc)
        if format == "json":
            self.stdout.write(json.dumps(report.as_json(), indent=2))
            return
        out = self.stdout
        width = max([len(row.run) for row in report.runs] + [3])
        out.write(f"{'run':<{width}}  {'human':>7}  {'machine':>7}  {'hybrid':>7}  {'#human':>6}  {'#machine':>8}  "
                  f"{'#hybrid':>8}  {'holes':>5}  {'filled':>6}  {'bias':>6}")
        for row in report.runs:
            marks = ("!" if row.moved else "") + ("+" if row.favoured else "")
            bias = "–" if row.bias is None else f"{row.bias:+.2f}"
            machine, hybrid = f"{row.rank_machine} ({row.shift_machine:+d})", f"{row.rank_hybrid} ({row.shift_hybrid:+d})"
            out.write(
                f"{row.run:<{width}}  {row.human:>7.4f}  {row.machine:>7.4f}  {row.hybrid:>7.4f}  {row.rank_human:>6}  "
                f"{machine:>8}  {hybrid:>8}  {row.holes:>5}  {row.filled:>6}  {bias:>6} {marks}".rstrip()
            )
        out.write(f"{len(report.runs)} runs, {report.measure} {report.kind}; judge {report.judge} ({report.model}); "
                  f"human: {report.phase} judgments, rule {report.rule}")
        for source in judge_impact.ESTIMATES:
            out.write(f"{source} against human: Kendall's tau {_figure(report.kendall_tau[source])}, top-{report.top_k} tau "
                      f"{_figure(report.top_k_tau[source])}, tau_AP {_figure(report.tau_ap[source])}")
        agreement = report.agreement
        out.write(f"agreement on {agreement.documents} documents judged by both: kappa {_figure(agreement.kappa)}, exact "
                  f"{_figure(agreement.exact)}, machine − human {_figure(agreement.bias)}; the judge filled "
                  f"{report.holes_filled} holes")
        out.write(f"! moved {judge_impact.MOVED} places or more: {', '.join(report.moved) or 'none'}")
        out.write(f"+ favoured by the machine judge (top-{report.judged_depth} documents graded {report.favoured_margin:.2f} "
                  f"or more above the assessors, beyond the other runs): {', '.join(report.favoured) or 'none'}")
        for topic in report.topics:
            out.write(f"topic {topic.topic}: {topic.documents} documents, kappa {_figure(topic.kappa)}, exact {_figure(topic.exact)}")
