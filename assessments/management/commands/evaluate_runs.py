"""Evaluate every run of a campaign against its current judgments, or score a classification campaign's
submissions against the decided labels: the command-line twin of the results page and API."""

import json

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail
from assessments.metrics import image_precision
from assessments.metrics.classification import CONVENTIONS, MEASURES, OVERALL
from assessments.metrics.measures import MEASURE_HELP
from assessments.services import classification, evaluation, exports, image_runs


def add_evaluation_options(parser, *, several_kinds: bool) -> None:
    """The options every evaluating command shares: what to score, in which order, against whose labels."""
    parser.add_argument("slug", help="the campaign's slug")
    several = "; several, comma-separated (nDCG@5,P@10,AP), are computed in one pass" if several_kinds else ""
    parser.add_argument("--measure", default="nDCG@5", help=f"{MEASURE_HELP} (default nDCG@5){several}")
    if several_kinds:
        parser.add_argument(
            "--kind", action="append", default=[],
            help="a dimension of the campaign's label scheme to score against; repeat for several (default: the "
                 "scheme's primary dimension). A category dimension is compared with the runs' stance column instead "
                 "(default: the scheme's last category)",
        )
    else:
        parser.add_argument("--kind", default="",
                            help="a graded dimension of the campaign's label scheme (default: its primary dimension)")
    parser.add_argument(
        "--order", choices=evaluation.ORDERS, default="score",
        help="score: trec_eval's order (score desc, ties by doc id desc; default); rank: the run's rank column",
    )
    parser.add_argument(
        "--trec-eval", type=int, choices=(10, 9), default=10, dest="trec_eval",
        help="10: scores compared as doubles (trec_eval 10, default); 9: as single-precision floats, as trec_eval "
             "9.0.x, pytrec_eval and ir_measures do, so near-equal scores tie and the document id decides",
    )
    parser.add_argument("--phase", choices=list(exports.PHASES), default="main", help="whose judgments (default main)")
    parser.add_argument("--rule", default="majority", help="majority, max, mean, adjudicated or assessor:NAME (as export_qrels)")


class Command(BaseCommand):
    help = (
        "Score each run by a trec_eval measure (nDCG@k by default) against the judgments as they are now, with "
        "judged@k (the share of the top k that is judged: below 1, the pool has holes) and, for runs with a stance "
        "column, its accuracy and macro-F1 against a category dimension's labels; optionally bootstrap confidence intervals and the group of runs not "
        "significantly different from the best."
    )

    def add_arguments(self, parser) -> None:
        add_evaluation_options(parser, several_kinds=True)
        parser.add_argument("--ci", type=float, metavar="LEVEL",
                            help="add a percentile-bootstrap interval at this level (0.95: 10,000 resamples over topics)")
        parser.add_argument("--test", choices=evaluation.TESTS,
                            help="mark the runs no paired test (Holm over all pairs, α 0.05) tells from the best")
        parser.add_argument("--seed", type=int, default=evaluation.significance.DEFAULT_SEED,
                            help="seed of the bootstrap and permutation draws (recorded in the output)")
        parser.add_argument("--format", choices=("table", "csv", "json"), default="table", help="csv: per-topic scores")
        classifying = parser.add_argument_group(
            "classification campaigns (Touché 2023 Task 4)",
            f"--measure is one of the organisers' evaluation.py ({', '.join(MEASURES)}; default "
            f"{classification.DEFAULT_MEASURE}); --rule defaults to {classification.DEFAULT_RULE} (where an adjudicator "
            "decided, that label, else the majority; assessor:SOURCE scores against one import source's labels alone); "
            "--ci resamples comments (1,000 draws); --test permutation compares the best submission with each other; "
            "--kind, --order and --trec-eval do not apply",
        )
        classifying.add_argument("--by", choices=classification.BY, help="figures per language too")
        classifying.add_argument(
            "--convention", choices=list(CONVENTIONS), default="touche",
            help="; ".join(f"{name}: {text}" for name, text in CONVENTIONS.items()) + " (default touche)",
        )
        # Each kind of campaign has its own defaults, chosen in handle().
        parser.set_defaults(measure=None, rule=None)

    def handle(self, *args, slug: str, kind, format: str, **options):
        campaign = campaign_or_fail(self, slug)
        if campaign.is_classification:
            self._score_submissions(campaign, kinds=kind, format=format, **options)
            return
        if campaign.is_images:
            self._score_image_runs(
                campaign, format=format, measure=options["measure"], rule=options["rule"] or "majority", phase=options["phase"],
                statistics=evaluation.Statistics(ci_level=options["ci"], test=options["test"], seed=options["seed"]),
            )
            return
        options["rule"] = options["rule"] or "majority"
        try:
            boards = evaluation.evaluate_measures(
                campaign=campaign, kinds=tuple(kind), measures=evaluation.parse_measures(options["measure"] or "nDCG@5"),
                order=options["order"], trec_eval=options["trec_eval"], phase=options["phase"], rule=options["rule"],
                ci=options["ci"], test=options["test"], seed=options["seed"],
            )
        except exports.ExportError as exc:
            fail(self, exc)
        if boards[0].unjudged:
            fail(self, f"campaign {slug} has no {boards[0].describe_judgments()}: nothing to score the runs against "
                       "(judge documents first, or import earlier labels with import_qrels)")
        if format == "json":
            self.stdout.write(json.dumps([row for board in boards for row in board.as_json()], indent=2))
        elif format == "csv":
            evaluation.write_per_topic_csv(boards, self.stdout)
        else:
            for i, board in enumerate(boards):
                if i:
                    self.stdout.write("")
                self._print_table(board)

    def _score_image_runs(self, campaign, *, format: str, measure: str | None, rule: str, phase: str,
                          statistics: evaluation.Statistics) -> None:
        """Touché Task 3's three precision@10 measures (or the one asked), per topic and stance and overall, as the
        organisers' submission-evaluator.sh computes them; --ci and --test as for text runs, over the run's topics."""
        asked = {name.lower() for name in measure.split(",")} if measure else None
        names = [m for m in image_precision.MEASURES if asked is None or m.lower() in asked]
        if not names or (asked and len(names) != len(asked)):
            fail(self, f"unknown measure {measure!r} for an image campaign: choose one of {', '.join(image_precision.MEASURES)}")
        try:
            results = image_runs.evaluate_image_runs(campaign, rule=rule, phase=phase, statistics=statistics)
        except exports.ExportError as exc:
            fail(self, exc)
        if format == "json":
            self.stdout.write(json.dumps(image_runs.scores_json(results, names, statistics), indent=2))
            return
        results.sort(key=lambda r: (-r.report.measures()[names[0]], r.tag))
        level = statistics.ci_level
        self.stdout.write(f"{'run':<30} " + " ".join(
            f"{name:>24}" + (f"  {f'{level:.0%} interval':>16}" if level else "") for name in names
        ))
        for r in results:
            figures = r.report.measures()
            cells = []
            for name in names:
                cell = f"{'=' if name in r.top_group else '':>2}{figures[name]:>22.4f}"
                if level:
                    low, high = r.ci.get(name, (float("nan"), float("nan")))
                    cell += f"  [{low:.4f}, {high:.4f}]"
                cells.append(cell)
            self.stdout.write(f"{r.tag:<30} " + " ".join(cells))
        self.stdout.write(f"{len(results)} runs; {phase} judgments, rule {rule}; unjudged images count as off topic, as "
                          "submission-evaluator.sh counts them")
        if level:
            self.stdout.write(f"intervals: percentile bootstrap over each run's topics, {statistics.resamples:,} resamples, "
                              f"seed {statistics.seed}")
        if statistics.test:
            self.stdout.write(f"= not significantly different from the best run by that measure ({statistics.test} test on "
                              f"the topics both runs have, Holm over all pairs, α {statistics.alpha}, seed {statistics.seed})")

    def _print_table(self, board: evaluation.Leaderboard) -> None:
        out = self.stdout
        statistics = board.statistics
        tag_width = max([len(r.tag) for r in board.results] + [3])
        team_width = max([len(r.team) for r in board.results] + [4])
        header = f"{'team':<{team_width}}  {'run':<{tag_width}}"
        for kind in board.kinds:
            header += f"  {kind + ' ' + board.measure:>20}"
            if statistics.ci_level:
                header += f"  {f'{statistics.ci_level:.0%} interval':>17}"
            header += f"  {'judged@' + str(board.judged_depth):>9}"
        if board.stance_kind:
            header += f"  {board.stance_kind[:6] + ' acc':>10}  {'macro-F1':>8}"
        out.write(header)
        notes = []
        for result in board.results:
            line = f"{result.team:<{team_width}}  {result.tag:<{tag_width}}"
            for kind in board.kinds:
                if not board.judged(kind):  # a mean of 0.0 would read like a result
                    line += f"  {'no judgments':>20}" + (f"  {'–':>17}" if statistics.ci_level else "") + f"  {'–':>9}"
                    continue
                scores = result.scores[kind]
                marks = ("*" if kind in result.other_version else "") + ("=" if result.run_id in board.top_group.get(kind, ()) else "")
                line += f"  {marks:>2}{scores.mean:>18.4f}"
                if statistics.ci_level:
                    low, high = result.ci.get(kind, (float("nan"), float("nan")))
                    line += f"  [{low:.4f}, {high:.4f}]"
                line += f"  {scores.judged_at_k:>9.4f}"
                if kind in result.other_version:
                    notes.append(f"* {result.tag} ({kind}): {result.other_version[kind].reason}")
            if board.stance_kind:
                stance = result.stance
                line += "".join(
                    f"  {value:>{width}.4f}" if value is not None else f"  {'–':>{width}}"
                    for value, width in ((stance and stance.accuracy, 10), (stance and stance.macro_f1, 8))
                )
            out.write(line)
        topics = ", ".join(f"{kind} {n}" for kind, n in board.topics.items())
        out.write(
            f"{len(board.results)} runs; topics with labels: {topics}; order {board.order}, trec_eval {board.trec_eval}; "
            f"{board.phase} judgments, rule {board.rule}"
        )
        if statistics.ci_level:
            out.write(f"intervals: percentile bootstrap over topics, {statistics.resamples:,} resamples, seed {statistics.seed}")
        if statistics.test:
            out.write(f"= not significantly different from the best run ({statistics.test} test, Holm over all pairs, "
                      f"α {statistics.alpha}, seed {statistics.seed})")
        for note in notes:
            out.write(note)

    def _score_submissions(self, campaign, *, kinds, format: str, **options) -> None:
        if kinds:
            fail(self, f"campaign {campaign.slug} classifies comments: its submissions are scored on the scheme's "
                       f"{campaign.label_scheme.primary.name} labels, so --kind does not apply")
        try:
            board = classification.score_submissions(
                campaign, rule=options["rule"] or classification.DEFAULT_RULE, convention=options["convention"],
                by=options["by"], measure=options["measure"] or classification.DEFAULT_MEASURE, phase=options["phase"],
                ci=options["ci"], test=options["test"], seed=options["seed"],
            )
        except exports.ExportError as exc:
            fail(self, exc)
        if board.unjudged:
            fail(self, f"campaign {campaign.slug} has no comment with a decided label (phase {board.phase}, rule "
                       f"{board.rule}): nothing to score the submissions against (judge comments, or import the "
                       "truth with import_items --assessor SOURCE)")
        if format == "json":
            self.stdout.write(json.dumps(board.as_json(), indent=2))
        elif format == "csv":
            board.write_csv(self.stdout)
        else:
            self._print_board(board)

    def _print_board(self, board: classification.ClassificationBoard) -> None:
        """The leaderboard, best first by the measure, then (with --by language) the measure per language."""
        out, measure, statistics = self.stdout, board.measure, board.statistics
        tag_width = max([len(r.tag) for r in board.results] + [3])
        team_width = max([len(r.team) for r in board.results] + [4])
        width = max(len(measure), 8)
        languages = list(board.languages) if board.by else []
        header = f"{'team':<{team_width}}  {'run':<{tag_width}}  {measure:>{width}}"
        if statistics.ci_level:
            header += f"  {f'{statistics.ci_level:.0%} interval':>17}"
        header += "".join(f"  {language:>6}" for language in languages)
        out.write(header)
        for result in board.results:
            line = f"{result.team:<{team_width}}  {result.tag:<{tag_width}}"
            if not result.scored:
                out.write(f"{line}  {'not scored':>{width}}  (no prediction for {len(result.missing)} decided comments)")
                continue
            mark = "=" if result.run_id in board.top_group else ""
            line += f"  {mark:>1}{result.value(measure) or 0.0:>{width - 1}.4f}"
            if statistics.ci_level:
                low, high = result.ci[measure]
                line += f"  [{low:.4f}, {high:.4f}]"
            line += "".join(f"  {result.value(measure, language) or 0.0:>6.4f}" for language in languages)
            out.write(line)
        counts = ", ".join(f"{language} {n}" for language, n in board.languages.items())
        out.write(
            f"{len(board.results)} submissions; {board.items} comments with a decided label ({counts}); "
            f"{board.phase} judgments, rule {board.rule}; figures {OVERALL!r} over all comments"
        )
        out.write(f"convention {board.convention_text}")
        if statistics.ci_level:
            out.write(f"intervals: percentile bootstrap over comments, {statistics.resamples:,} resamples, seed {statistics.seed}")
        if statistics.test:
            out.write(f"= not significantly different from the best submission ({statistics.test} test over comments, "
                      f"Holm over the comparisons with the best, α {statistics.alpha}, seed {statistics.seed})")
