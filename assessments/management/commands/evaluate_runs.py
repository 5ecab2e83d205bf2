"""Evaluate every run of a campaign against its current judgments: the command-line twin of the results
page and API."""

import json

from django.core.management.base import BaseCommand

from assessments.management.progress import campaign_or_fail, fail
from assessments.services import evaluation, exports


class Command(BaseCommand):
    help = (
        "Score each run by nDCG@k (trec_eval's ndcg_cut) against the judgments as they are now, with judged@k "
        "(the share of the top k that is judged: below 1, the pool has holes) and, for runs with a stance column, "
        "stance accuracy and macro-F1."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("--measure", default="nDCG@5", help="nDCG@k (default nDCG@5)")
        parser.add_argument(
            "--kind", action="append", choices=evaluation.EVALUATED_KINDS,
            help="labels to score against; repeat for both (default relevance)",
        )
        parser.add_argument(
            "--order", choices=evaluation.ORDERS, default="score",
            help="score: trec_eval's order (score desc, ties by doc id desc; default); rank: the run's rank column",
        )
        parser.add_argument("--phase", choices=list(exports.PHASES), default="main", help="whose judgments (default main)")
        parser.add_argument("--rule", default="majority", help="majority, max, mean or assessor:NAME (as export_qrels)")
        parser.add_argument("--format", choices=("table", "csv", "json"), default="table", help="csv: per-topic scores")

    def handle(self, *args, slug: str, measure: str, kind, order: str, phase: str, rule: str, format: str, **options):
        campaign = campaign_or_fail(self, slug)
        try:
            board = evaluation.evaluate_runs(
                campaign=campaign, measure=measure, kinds=tuple(kind or ("relevance",)), order=order, phase=phase, rule=rule
            )
        except exports.ExportError as exc:
            fail(self, exc)
        if format == "json":
            self.stdout.write(json.dumps(board.as_json(), indent=2))
        elif format == "csv":
            board.write_per_topic_csv(self.stdout)
        else:
            self._print_table(board)

    def _print_table(self, board: evaluation.Leaderboard) -> None:
        out = self.stdout
        tag_width = max([len(r.tag) for r in board.results] + [3])
        team_width = max([len(r.team) for r in board.results] + [4])
        header = f"{'team':<{team_width}}  {'run':<{tag_width}}"
        for kind in board.kinds:
            header += f"  {kind + ' ' + board.measure:>20}  {'judged@' + str(board.k):>9}"
        if board.has_stance:
            header += f"  {'stance acc':>10}  {'macro-F1':>8}"
        out.write(header)
        for result in board.results:
            line = f"{result.team:<{team_width}}  {result.tag:<{tag_width}}"
            for kind in board.kinds:
                scores = result.scores[kind]
                line += f"  {scores.mean:>20.4f}  {scores.judged_at_k:>9.4f}"
            if board.has_stance:
                stance = result.stance
                line += "".join(
                    f"  {value:>{width}.4f}" if value is not None else f"  {'–':>{width}}"
                    for value, width in ((stance and stance.accuracy, 10), (stance and stance.macro_f1, 8))
                )
            out.write(line)
        topics = ", ".join(f"{kind} {n}" for kind, n in board.topics.items())
        out.write(
            f"{len(board.results)} runs; topics with labels: {topics}; order {board.order}; "
            f"{board.phase} judgments, rule {board.rule}"
        )
