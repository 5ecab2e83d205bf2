"""Scoring a campaign's runs against its current judgments: the leaderboard, the evaluate_runs and compare_runs
commands and the results API.

The numbers are trec_eval's (assessments.metrics.measures does the arithmetic, metrics.evaluation the order,
metrics.significance the intervals and tests); this module feeds them from the database with a fixed number of
queries whatever the number of runs: the runs, the topics, the judgments (aggregated per topic and document by
the same rules as a qrels export, so the leaderboard and an exported file agree), and the rankings in one query
(plus one for the few whose near ties reach past what was read). The stored rankings hold both orders (trec_eval's
score order and the submitted rank column), so a cut measure over 84 runs of 50,000 lines reads the heads of 4,200
lists, not 4.2 million lines; AP, RR, bpref and nDCG' read whole lists.

Under the score order every run is also ordered the way the other trec_eval version would, so the leaderboard can
say which figures depend on the version and why. Results are computed from the judgments as they are now, so the
table follows the assessors' progress.

What is scored comes from the campaign's label scheme: a measure scores any graded (or yes/no) dimension, by
default the scheme's primary one; a category dimension is compared with the runs' stance column (accuracy and
macro-F1), by default the one metrics.evaluation.stance_dimension picks. Labels are read as exports write them
(`LabelScheme.value_for_files`), so a dimension's `otherwise` counts where its condition does not hold.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

from assessments.formats.qrels import topic_sort_key
from assessments.labels import CATEGORY, LabelScheme, SchemeError
from assessments.metrics import significance
from assessments.metrics.evaluation import (
    TREC_EVAL_VERSIONS,
    RunEvaluation,
    StanceScores,
    evaluate_rankings,
    stance_dimension,
    stance_scores,
)
from assessments.metrics.measures import Measure
from assessments.metrics.measures import parse_measure as parse_measure_name
from assessments.models import Campaign, Judgment, Run, Topic
from assessments.services import rankings
from assessments.services.exports import (
    PHASES,
    QUERY_CHUNK,
    AggregationRule,
    ExportError,
    FileValue,
    parse_rule,
    with_adjudications,
)

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

ORDERS = ("score", "rank")
TESTS = significance.TESTS
# Columns a leaderboard can be sorted by, besides "<kind>" (mean) and "<kind>_judged" (judged@k).
SORTS = ("team", "run", "accuracy", "macro_f1")


class EvaluationError(ExportError):
    """An evaluation that cannot be made as asked (unknown measure, kind, order...)."""


def measured_kinds(scheme: LabelScheme) -> tuple[str, ...]:
    """The dimensions a trec_eval measure can score: those with integer labels (graded grades, yes/no as 1/0)."""
    return tuple(d.name for d in scheme.dimensions if d.kind != CATEGORY)


def parse_measure(text: str) -> Measure:
    try:
        return parse_measure_name(text)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from None


@dataclass(frozen=True)
class VersionNote:
    """A run's figure under the other trec_eval version, where it differs, and the topics that make it differ."""

    version: int
    mean: float
    topics: list[str]

    @property
    def reason(self) -> str:
        shown = ", ".join(self.topics[:8]) + (f" and {len(self.topics) - 8} more" if len(self.topics) > 8 else "")
        return (
            f"trec_eval {self.version}: {self.mean:.4f}. Scores that differ only beyond single precision (ties for "
            f"trec_eval 9 and pytrec_eval, broken by document id; not for trec_eval 10) order the top differently "
            f"in topic{'s' if len(self.topics) > 1 else ''} {shown}."
        )


@dataclass(frozen=True)
class RunResult:
    run_id: int
    tag: str
    team: str
    scores: dict[str, RunEvaluation]  # kind -> the measure
    stance: StanceScores | None  # None: the run has no stance column or the campaign no labels to compare it with
    other_version: dict[str, VersionNote] = field(default_factory=dict)  # kinds whose figure the version changes
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)  # kind -> bootstrap interval, when asked


def sort_results(results: list[RunResult], column: str, *, kinds: tuple[str, ...], descending: bool = True) -> list[RunResult]:
    """``results`` ordered by a column (see `SORTS`, plus each kind and "<kind>_judged"), ties by run tag.

    Runs without a value in that column (no stance column) come last in either direction.
    """
    kind, _, judged = column.partition("_")
    if column not in SORTS and not (kind in kinds and judged in ("", "judged")):
        raise EvaluationError(f"cannot sort by {column!r}")

    def value(result: RunResult):
        if column == "team":
            return result.team.casefold()
        if column == "run":
            return result.tag.casefold()
        if column in ("accuracy", "macro_f1"):
            return getattr(result.stance, column) if result.stance else None
        evaluation = result.scores[kind]
        return evaluation.judged_at_k if judged else evaluation.mean

    keyed = [(value(result), result) for result in results]
    present = sorted((pair for pair in keyed if pair[0] is not None), key=lambda pair: pair[1].tag)
    present.sort(key=itemgetter(0), reverse=descending)
    return [result for _, result in present] + [result for v, result in keyed if v is None]


@dataclass(frozen=True)
class Statistics:
    """How the intervals and groups of a leaderboard were made, so a table can say it and be made again."""

    ci_level: float | None  # None: no intervals
    test: str | None  # None: no grouping
    seed: int = significance.DEFAULT_SEED
    resamples: int = significance.RESAMPLES
    alpha: float = significance.ALPHA


@dataclass(frozen=True)
class Leaderboard:
    measure: str  # "nDCG@5"
    judged_depth: int  # the k of judged@k
    kinds: tuple[str, ...]
    order: str
    trec_eval: int
    phase: str
    rule: str
    results: list[RunResult]
    topics: dict[str, int]  # kind -> number of topics with labels
    # The category dimension the runs' stance column was compared with; None when there were no labels of it or
    # no run with the column.
    stance_kind: str | None
    statistics: Statistics = Statistics(ci_level=None, test=None)
    # kind -> ids of the runs no test found significantly different from that kind's best run
    top_group: dict[str, frozenset[int]] = field(default_factory=dict)

    @property
    def unjudged(self) -> bool:
        """No topic has a label of the evaluated kinds in the chosen phase: every run would score 0, meaninglessly."""
        return not any(self.topics.values())

    def judged(self, kind: str) -> bool:
        """Whether some topic has a label of `kind` in the chosen phase. Without one every run scores 0.0 for that
        kind, which reads like a result: pages, the command and the API say "no judgments" instead."""
        return self.topics.get(kind, 0) > 0

    def describe_judgments(self, kind: str = "") -> str:
        """Whose judgments these are, for messages: "main-phase judgments", "training quality judgments by alice" ..."""
        phase = {"main": "main-phase ", "training": "training "}.get(self.phase, "")
        by = f" by {self.rule.removeprefix('assessor:')}" if self.rule.startswith("assessor:") else ""
        return f"{phase}{kind + ' ' if kind else ''}judgments{by}"

    def sorted_by(self, column: str, *, descending: bool = True) -> list[RunResult]:
        return sort_results(self.results, column, kinds=self.kinds, descending=descending)

    def best_per_team(self) -> list[RunResult]:
        """Each team's best run by the first kind's mean, as Touché's result tables show (runs without a team
        count as their own team)."""
        best: dict[str, RunResult] = {}
        for result in self.results:  # best first already
            best.setdefault(result.team or f"run:{result.tag}", result)
        return list(best.values())

    def as_json(self) -> list[dict]:
        """One object per run and kind, the shape `evaluate_runs --format json` prints. A kind with no judgments
        (see `judged`) has ``judged: false``, null scores and a ``message`` saying whose judgments are missing."""
        rows = []
        for result in self.results:
            for kind in self.kinds:
                evaluation = result.scores[kind]
                row = {
                    "run": result.tag, "team": result.team, "kind": kind, "measure": self.measure,
                    "trec_eval": self.trec_eval, "judged": self.judged(kind), "mean": evaluation.mean,
                    "judged_at_k": evaluation.judged_at_k, "per_topic": evaluation.per_topic,
                }
                if not row["judged"]:
                    row.update(mean=None, judged_at_k=None, message=f"no {self.describe_judgments(kind)}")
                if kind in result.ci:
                    row.update(
                        ci_low=result.ci[kind][0], ci_high=result.ci[kind][1], ci_level=self.statistics.ci_level,
                        ci_seed=self.statistics.seed, ci_resamples=self.statistics.resamples,
                    )
                if kind in self.top_group:
                    row["top_group"] = result.run_id in self.top_group[kind]
                if kind in result.other_version:
                    note = result.other_version[kind]
                    row["other_trec_eval"] = {"version": note.version, "mean": note.mean, "topics": note.topics}
                if result.stance is not None:
                    row.update(stance_kind=self.stance_kind, accuracy=result.stance.accuracy, macro_f1=result.stance.macro_f1)
                rows.append(row)
        return rows

    def write_per_topic_csv(self, stream: SupportsWrite[str], *, header: str | None = "") -> None:
        """Per-topic scores, one row per run, kind and topic, then the run's mean as topic "all" (trec_eval -q).
        The last column is headed judged@k with this measure's k unless `header` names it; None writes no header
        (another measure's rows under a first board's)."""
        writer = csv.writer(stream, lineterminator="\n")
        if header is not None:
            writer.writerow(
                ["run", "team", "kind", "measure", "order", "trec_eval", "topic", "value", header or f"judged@{self.judged_depth}"]
            )
        for result in self.results:
            for kind in self.kinds:
                evaluation = result.scores[kind]
                common = [result.tag, result.team, kind, self.measure, self.order, self.trec_eval]
                for topic in sorted(evaluation.per_topic, key=topic_sort_key):
                    writer.writerow([*common, topic, f"{evaluation.per_topic[topic]:.4f}", ""])
                if self.judged(kind):
                    writer.writerow([*common, "all", f"{evaluation.mean:.4f}", f"{evaluation.judged_at_k:.4f}"])
                else:  # no judgments of this kind: empty cells, not a mean of 0
                    writer.writerow([*common, "all", "", ""])


def write_per_topic_csv(boards: Sequence[Leaderboard], stream: SupportsWrite[str]) -> None:
    """Several measures' per-topic scores in one CSV: one header, the last column judged@k of each row's measure
    (with one measure, headed by its k as always)."""
    for i, board in enumerate(boards):
        board.write_per_topic_csv(stream, header=None if i else "" if len(boards) == 1 else "judged@k")


@dataclass(frozen=True)
class Prepared:
    """What every evaluation of a campaign needs (the leaderboard, run comparison, reusability): the options
    checked, the runs, the topics and the current labels."""

    measure: Measure
    kinds: tuple[str, ...]
    order: str
    trec_eval: int
    phase: str
    rule: AggregationRule
    runs: list[tuple[int, str, str, bool]]  # id, tag, team, has_stance
    numbers: dict[int, str]  # topic id -> number
    qrels: dict[str, dict[str, dict[str, int]]]  # kind -> topic -> doc -> label
    stance_kind: str | None  # the category dimension compared with the runs' stance column
    stance_truth: dict[tuple[str, str], str]  # (topic number, doc id) -> that dimension's label

    def judged_topic_ids(self) -> list[int]:
        judged = {number for labels in self.qrels.values() for number in labels} | {n for n, _ in self.stance_truth}
        return [topic_id for topic_id, number in self.numbers.items() if number in judged]


def prepare(
    *, campaign: Campaign, measure: str, kinds: tuple[str, ...], order: str, trec_eval: int, phase: str, rule: str,
    runs=None,
) -> Prepared:
    """Check the options and read the runs (all of the campaign's, or the queryset ``runs``), topics and labels;
    EvaluationError names what cannot be evaluated.

    ``kinds`` are dimensions of the campaign's scheme (none: its primary one). The measure scores the graded and
    yes/no ones; a category one names the dimension the runs' stance column is compared with (at most one: a run
    file has one such column), and with no graded kind beside it the measure scores the primary dimension."""
    parsed_measure = parse_measure(measure)
    scheme = campaign.label_scheme
    try:
        dimensions = [scheme.dimension(kind) for kind in dict.fromkeys(kinds)]
    except SchemeError as exc:
        raise EvaluationError(str(exc)) from None
    categories = [d.name for d in dimensions if d.kind == CATEGORY]
    if len(categories) > 1:
        raise EvaluationError(
            f"a run's stance column is compared with one category dimension, not {', '.join(categories)}"
        )
    kinds = tuple(d.name for d in dimensions if d.kind != CATEGORY) or (scheme.primary.name,)
    if kinds == (scheme.primary.name,) and scheme.primary.kind == CATEGORY:
        raise EvaluationError(f"campaign {campaign.slug} has no graded dimension for {parsed_measure} to score")
    default_stance = stance_dimension(scheme)
    stance_kind = categories[0] if categories else default_stance.name if default_stance else None
    if order not in ORDERS:
        raise EvaluationError(f"unknown order {order!r}: use score (trec_eval) or rank (the run's rank column)")
    if trec_eval not in TREC_EVAL_VERSIONS:
        raise EvaluationError(f"unknown trec_eval version {trec_eval!r}: use 10 (scores as doubles) or 9 (as floats)")
    if phase not in PHASES:
        raise EvaluationError(f"unknown phase {phase!r}: use main, training or all")
    parsed_rule = parse_rule(rule, dimension=scheme.dimension(kinds[0]))
    runs = Run.objects.filter(campaign=campaign) if runs is None else runs
    numbers = dict(Topic.objects.filter(campaign=campaign).values_list("id", "number"))
    qrels, stance_truth = _current_labels(
        campaign=campaign, kinds=kinds, stance_kind=stance_kind, phase=phase, rule=parsed_rule, numbers=numbers
    )
    return Prepared(
        measure=parsed_measure, kinds=kinds, order=order, trec_eval=trec_eval, phase=phase, rule=parsed_rule,
        runs=list(runs.order_by("tag").values_list("id", "tag", "team", "has_stance")), numbers=numbers,
        qrels=qrels, stance_kind=stance_kind, stance_truth=stance_truth,
    )


@dataclass(frozen=True)
class Rankings:
    """What read_rankings found: run id -> trec_eval version -> topic number -> document ids best first, as deep as
    the measure and judged@k read (versions that order a topic alike share its list), and, for runs with a
    stance column, run id -> (topic number, doc id) -> stance."""

    docs: dict[int, dict[int, dict[str, list[str]]]]
    stances: dict[int, dict[tuple[str, str], str]]

    def of(self, run_id: int, version: int) -> dict[str, list[str]]:
        return self.docs.get(run_id, {}).get(version, {})


def read_rankings(
    setup: Prepared, versions: tuple[int, ...], *, stances: bool = False, measures: Sequence[Measure] = ()
) -> Rankings:
    """The prepared runs' rankings of the judged topics, all runs at once (see `rankings_by_run`)."""
    found = Rankings(docs={}, stances={})
    for run_id, docs, stance_of in rankings_by_run(setup, versions, stances=stances, measures=measures):
        found.docs[run_id] = docs
        if stance_of:
            found.stances[run_id] = stance_of
    return found


def rankings_by_run(
    setup: Prepared, versions: tuple[int, ...], *, stances: bool = False, measures: Sequence[Measure] = ()
) -> Iterator[tuple[int, dict[int, dict[str, list[str]]], dict[tuple[str, str], str]]]:
    """(run id, trec_eval version -> topic number -> document ids best first, (topic number, doc id) -> stance for
    runs with a stance column) for each prepared run with rankings, one run at a time from one query (see
    rankings.ordered_docs), as deep as the setup's measure (and each of `measures`) reads: whole lists when one
    of them does. A caller that keeps what it needs of a run and drops its lists holds one run's lists at a time."""
    depths = [(m.depth, m.judged_depth) for m in (setup.measure, *measures)]
    depth = max(max(cut, judged) for cut, judged in depths if cut) if all(cut for cut, _ in depths) else None
    stance_runs = {run_id for run_id, _, _, has_stance in setup.runs if has_stance} if stances else set()
    lines = rankings.ordered_docs(
        [run[0] for run in setup.runs], setup.judged_topic_ids(), depth=depth, order=setup.order, versions=versions,
        stances=bool(stance_runs),
    )
    for run_id, rows in groupby(lines, key=itemgetter(0)):
        docs: dict[int, dict[str, list[str]]] = {version: {} for version in versions}
        stance_of: dict[tuple[str, str], str] = {}
        for _, topic_id, by_version, stance_map in rows:
            number = setup.numbers[topic_id]
            for version, ranked in by_version.items():
                docs[version][number] = ranked
            if stance_map and run_id in stance_runs:
                stance_of.update(((number, doc), stance) for doc, stance in stance_map.items())
        yield run_id, docs, stance_of


def evaluate_runs(
    *,
    campaign: Campaign,
    measure: str = "nDCG@5",
    kinds: tuple[str, ...] = (),
    order: str = "score",
    trec_eval: int = 10,
    phase: str = "main",
    rule: str = "majority",
    ci: float | None = None,
    test: str | None = None,
    seed: int = significance.DEFAULT_SEED,
) -> Leaderboard:
    """Evaluate every run of the campaign by ``measure`` for each of ``kinds`` against the current judgments
    (``kinds`` as `prepare` reads them: none means the scheme's primary dimension).

    ``order="score"`` is trec_eval's (score descending, ties by document id descending, rank column ignored),
    with scores compared as trec_eval ``trec_eval`` (10: doubles; 9: single precision, as pytrec_eval) does;
    ``order="rank"`` follows the submitted rank column, as Touché's own evaluation did. Judgments of ``phase``
    are aggregated per topic and document by ``rule`` (see exports.AggregationRule; a category dimension always
    takes the majority unless one assessor is named, since max and mean mean nothing for classes). Accuracy and
    macro-F1 compare a run's stance column with the labels of the category dimension (see `prepare`) over the
    run's top k (k of judged@k).

    ``ci`` (a level such as 0.95) adds a percentile-bootstrap interval to each run's mean; ``test`` ("t" or
    "permutation") compares every pair of runs, Holm–Bonferroni over all pairs, and fills ``top_group``. Both
    draw from a generator seeded with ``seed``.
    """
    return evaluate_measures(
        campaign=campaign, measures=(measure,), kinds=kinds, order=order, trec_eval=trec_eval, phase=phase, rule=rule,
        ci=ci, test=test, seed=seed,
    )[0]


def parse_measures(text: str) -> tuple[str, ...]:
    """The measures of a comma-separated list (``nDCG@5,P@10,AP``), each once, in the order given."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not names:
        raise EvaluationError("name a measure (nDCG@5, or several: nDCG@5,P@10,AP)")
    return names


def evaluate_measures(
    *,
    campaign: Campaign,
    measures: Sequence[str],
    kinds: tuple[str, ...] = (),
    order: str = "score",
    trec_eval: int = 10,
    phase: str = "main",
    rule: str = "majority",
    ci: float | None = None,
    test: str | None = None,
    seed: int = significance.DEFAULT_SEED,
) -> list[Leaderboard]:
    """One leaderboard per measure, as `evaluate_runs` makes each (its docstring), from one reading of the labels
    and one of the rankings, as deep as the deepest measure reads: several measures cost about what one does."""
    if not measures:
        raise EvaluationError("name a measure (nDCG@5, or several: nDCG@5,P@10,AP)")
    parsed = [parse_measure(name) for name in measures]
    setup = prepare(campaign=campaign, measure=measures[0], kinds=kinds, order=order, trec_eval=trec_eval, phase=phase, rule=rule)
    if test is not None and test not in TESTS:
        raise EvaluationError(f"unknown test {test!r}: use t or permutation")
    if ci is not None and not 0 < ci < 1:
        raise EvaluationError(f"confidence level must lie between 0 and 1 (0.95, say), not {ci}")
    other = 9 if trec_eval == 10 else 10
    versions = (trec_eval, other) if order == "score" else (trec_eval,)
    stance_runs = {run_id for run_id, _, _, has_stance in setup.runs if has_stance} if setup.stance_truth else set()
    setups = [replace(setup, measure=measure) for measure in parsed]
    # Each run is scored by every measure as its rankings arrive, and its lists are dropped: memory holds one run's
    # lists (AP reads whole lists: 84 runs of 50,000 lines would be 4.2 M ids at once).
    runs = {run[0]: run for run in setup.runs}
    scored: dict[int, list[RunResult]] = {}
    for run_id, docs, stance_of in rankings_by_run(setup, versions, stances=bool(stance_runs), measures=parsed):
        scored[run_id] = [_run_result(each, runs[run_id], docs, stance_of, stance_runs=stance_runs, other=other) for each in setups]
    # A run with no ranking of a judged topic scores as an empty run.
    results = [
        scored.get(run[0]) or [_run_result(each, run, {}, {}, stance_runs=stance_runs, other=other) for each in setups]
        for run in setup.runs
    ]
    return [
        _leaderboard(each, [run[i] for run in results], stance_runs=stance_runs, ci=ci, test=test, seed=seed)
        for i, each in enumerate(setups)
    ]


def _run_result(
    setup: Prepared, run: tuple[int, str, str, bool], docs: dict[int, dict[str, list[str]]], stance_of: dict, *,
    stance_runs: set[int], other: int,
) -> RunResult:
    """One run's scores by the setup's measure, its note where the other trec_eval version differs, and its stance
    accuracy, from its rankings (version -> topic -> doc ids)."""
    run_id, tag, team, _ = run
    ranked = docs.get(setup.trec_eval, {})
    scores = {kind: evaluate_rankings(ranked, setup.qrels[kind], measure=setup.measure, name=tag) for kind in setup.kinds}
    notes = {}
    if setup.order == "score":
        changed = {topic: listed for topic, listed in docs.get(other, {}).items() if listed is not ranked[topic]}
        for kind in setup.kinds if changed else ():
            # Only the topics the other version orders differently are scored again; the mean is then made
            # as evaluate_rankings makes it, from every topic's value.
            qrels, per_topic = setup.qrels[kind], scores[kind].per_topic
            differing = {
                topic: value for topic, listed in changed.items()
                if topic in per_topic and (value := setup.measure.score(listed, qrels[topic])) != per_topic[topic]
            }
            if differing:
                mean = math.fsum({**per_topic, **differing}.values()) / len(per_topic)
                notes[kind] = VersionNote(version=other, mean=mean, topics=sorted(differing, key=topic_sort_key))
    stance = None
    if run_id in stance_runs:
        predicted = {
            (topic, doc): stance_of.get((topic, doc)) or None
            for topic, listed in ranked.items() for doc in listed[:setup.measure.judged_depth]
        }
        stance = stance_scores(predicted, setup.stance_truth)
    return RunResult(run_id=run_id, tag=tag, team=team, scores=scores, stance=stance, other_version=notes)


def _leaderboard(
    setup: Prepared, results: list[RunResult], *, stance_runs: set[int], ci: float | None, test: str | None, seed: int
) -> Leaderboard:
    """The board of one measure: its runs sorted, with intervals and the group with the best when asked."""
    results = sort_results(results, setup.kinds[0], kinds=setup.kinds)
    top_group: dict[str, frozenset[int]] = {}
    if results and (ci is not None or test is not None):
        for kind in setup.kinds:
            per_run = [result.scores[kind].per_topic for result in results]
            if not any(per_run):  # no labels of this kind yet: nothing to bootstrap or tell apart
                continue
            intervals, group = significance.leaderboard_statistics(
                per_run, [result.scores[kind].mean for result in results], level=ci, test=test, seed=seed
            )
            for result, interval in zip(results, intervals or ()):
                if interval is not None:
                    result.ci[kind] = interval
            if group is not None:
                top_group[kind] = frozenset(results[i].run_id for i in group)
    return Leaderboard(
        measure=str(setup.measure), judged_depth=setup.measure.judged_depth, kinds=setup.kinds, order=setup.order,
        trec_eval=setup.trec_eval, phase=setup.phase, rule=str(setup.rule), results=results,
        topics={kind: len(setup.qrels[kind]) for kind in setup.kinds},
        stance_kind=setup.stance_kind if stance_runs else None,
        statistics=Statistics(ci_level=ci, test=test, seed=seed), top_group=top_group,
    )


def compare_runs(
    *,
    campaign: Campaign,
    measure: str = "nDCG@5",
    kind: str = "",
    test: str = "t",
    seed: int = significance.DEFAULT_SEED,
    **options,
) -> list[dict]:
    """Every pair of the campaign's runs compared on their per-topic ``measure`` by ``test`` ("t": paired t-test;
    "permutation": paired randomisation test, 10,000 flips seeded with ``seed``), Holm–Bonferroni over all pairs at
    α = 0.05: rows ``{run_a, run_b, mean_diff, p_value, p_holm, significant}``, run_a the better by mean, in
    leaderboard order. ``kind`` is a graded dimension (empty: the primary one); ``options`` are evaluate_runs'
    (order, trec_eval, phase, rule)."""
    if test not in TESTS:
        raise EvaluationError(f"unknown test {test!r}: use t or permutation")
    kind = measured_kind(campaign, kind)
    board = evaluate_runs(campaign=campaign, measure=measure, kinds=(kind,), **options)
    tests = significance.compare_all([result.scores[kind].per_topic for result in board.results], test=test, seed=seed)
    return [
        {
            "run_a": board.results[pair.a].tag, "run_b": board.results[pair.b].tag, "mean_diff": pair.mean_diff,
            "p_value": pair.p_value, "p_holm": pair.p_holm, "significant": pair.significant,
        }
        for pair in tests
    ]


def measured_kind(campaign: Campaign, kind: str) -> str:
    """The one dimension a per-topic comparison scores (run comparison, reusability): ``kind``, a graded or yes/no
    dimension of the campaign's scheme, or its primary dimension when empty."""
    scheme = campaign.label_scheme
    try:
        dimension = scheme.dimension(kind) if kind else scheme.primary
    except SchemeError as exc:
        raise EvaluationError(str(exc)) from None
    if dimension.kind == CATEGORY:
        raise EvaluationError(
            f"{dimension.name} is a category: a measure scores graded labels ({', '.join(measured_kinds(scheme)) or 'none'}); "
            "the leaderboard compares a category with the runs' stance column"
        )
    return dimension.name


def human_labels(campaign: Campaign, dimension: str) -> dict[str, dict[str, int]]:
    """Topic number -> doc id -> the assessors' label of ``dimension`` (the majority per document, both phases), as
    evaluation reads it: what a machine judge is calibrated and compared against."""
    numbers = dict(Topic.objects.filter(campaign=campaign).values_list("id", "number"))
    qrels, _ = _current_labels(
        campaign=campaign, kinds=(dimension,), stance_kind=None, phase="all", rule=AggregationRule("majority"), numbers=numbers
    )
    return qrels[dimension]


def _current_labels(
    *, campaign: Campaign, kinds: tuple[str, ...], stance_kind: str | None, phase: str, rule: AggregationRule,
    numbers: dict[int, str],
) -> tuple[dict[str, dict[str, dict[str, int]]], dict[tuple[str, str], str]]:
    """One query for all label dimensions: kind -> topic number -> doc id -> label, and (topic number, doc id) ->
    the ``stance_kind`` label. Each dimension is read as its qrels export reads it (exports.FileValue: typed
    columns of `labels`, a dimension's `otherwise` where its condition fails)."""
    scheme = campaign.label_scheme
    stance_rule = rule if rule.method == "assessor" else AggregationRule("majority")
    judgments = Judgment.objects.filter(topic__campaign=campaign, phase__in=PHASES[phase])
    if rule.method == "assessor":
        judgments = judgments.filter(assessor__username=rule.assessor)
    adjudicated = rule.method == "adjudicated"
    if adjudicated:  # the adjudicated labels, where there are any, decide (exports.AggregationRule)
        judgments = with_adjudications(judgments)
    final = ("adjudicated", "adjudicated_labels") if adjudicated else ()
    # Per dimension: how to read it, the rule that combines assessors, its values in scheme order, and where its
    # columns lie in a row; labels found go to topic number -> doc id -> label.
    read = [(FileValue(scheme, kind), rule) for kind in kinds]
    if stance_kind:
        read.append((FileValue(scheme, stance_kind), stance_rule))
    start, plan = 3 + len(final), []
    for value, combining in read:
        plan.append((value, combining, scheme.values(value.name), slice(start, start + len(value.keys))))
        start += len(value.keys)
    rows = (
        judgments.order_by("topic_id", "document_id")
        .values_list("topic_id", "document_id", "document__doc_id", *final, *(c for value, _ in read for c in value.columns()))
        .iterator(chunk_size=QUERY_CHUNK)
    )
    found: list[dict[str, dict]] = [{} for _ in plan]
    for (topic_id, _), rows_of_item in groupby(rows, key=itemgetter(0, 1)):
        group = list(rows_of_item)
        number, doc = numbers[topic_id], group[0][2]
        decided = adjudicated and group[0][3]
        for (value, combining, values, columns), labels_of in zip(plan, found, strict=True):
            if decided:  # the adjudication alone: one "assessor" with the final labels
                labels = [label] if (label := value.in_labels(group[0][4])) is not None else []
            else:
                labels = [label for row in group if (label := value.of(row[columns])) is not None]
            if labels:
                labels_of.setdefault(number, {})[doc] = combining.combine(labels, values)
    stance_truth = {(number, doc): label for number, docs in found.pop().items() for doc, label in docs.items()} if stance_kind else {}
    return dict(zip(kinds, found, strict=True)), stance_truth
