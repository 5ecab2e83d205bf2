"""Scoring a campaign's runs against its current judgments: the leaderboard, the evaluate_runs command and
the results API.

The numbers are trec_eval's ``ndcg_cut_k`` (assessments.metrics.evaluation does the arithmetic); this module
feeds it from the database with a fixed number of queries whatever the number of runs: the runs, the topics,
the judgments (aggregated per topic and document by the same rules as a qrels export, so the leaderboard and
an exported file agree), and the first k lines of every run in one query. The stored rankings hold both orders
(trec_eval's score order and the submitted rank column), so 84 runs of 50,000 lines cost the heads of 4,200
lists, not 4.2 million lines.

Results are computed from the judgments as they are now, so the table follows the assessors' progress.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import TextIO

from assessments.formats.qrels import topic_sort_key
from assessments.metrics.evaluation import (
    RunEvaluation,
    StanceScores,
    evaluate_run,
    stance_scores,
)
from assessments.models import Campaign, Judgment, Run, Topic
from assessments.services import rankings
from assessments.services.exports import (
    PHASES,
    QUERY_CHUNK,
    AggregationRule,
    ExportError,
    parse_rule,
)

EVALUATED_KINDS = ("relevance", "quality")
ORDERS = ("score", "rank")
_MEASURE = re.compile(r"ndcg@([1-9][0-9]{0,3})", re.IGNORECASE)
# Columns a leaderboard can be sorted by, besides "<kind>" (mean) and "<kind>_judged" (judged@k).
SORTS = ("team", "run", "accuracy", "macro_f1")


class EvaluationError(ExportError):
    """An evaluation that cannot be made as asked (unknown measure, kind, order...)."""


def parse_measure(text: str) -> int:
    """The cutoff k of ``nDCG@k``, the one measure Touché reports."""
    match = _MEASURE.fullmatch(text.strip())
    if not match:
        raise EvaluationError(f"unknown measure {text!r}: use nDCG@k, for example nDCG@5")
    return int(match.group(1))


@dataclass(frozen=True)
class RunResult:
    run_id: int
    tag: str
    team: str
    scores: dict[str, RunEvaluation]  # kind -> nDCG@k
    stance: StanceScores | None  # None: the run has no stance column or the campaign no stance judgments


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
class Leaderboard:
    measure: str  # "nDCG@5"
    k: int
    kinds: tuple[str, ...]
    order: str
    phase: str
    rule: str
    results: list[RunResult]
    topics: dict[str, int]  # kind -> number of topics with labels
    has_stance: bool  # the campaign has stance judgments and some run a stance column

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
        """One object per run and kind, the shape `evaluate_runs --format json` prints."""
        rows = []
        for result in self.results:
            for kind in self.kinds:
                evaluation = result.scores[kind]
                row = {
                    "run": result.tag, "team": result.team, "kind": kind, "measure": self.measure,
                    "mean": evaluation.mean, "judged_at_k": evaluation.judged_at_k, "per_topic": evaluation.per_topic,
                }
                if result.stance is not None:
                    row.update(accuracy=result.stance.accuracy, macro_f1=result.stance.macro_f1)
                rows.append(row)
        return rows

    def write_per_topic_csv(self, stream: TextIO) -> None:
        """Per-topic scores, one row per run, kind and topic, then the run's mean as topic "all" (trec_eval -q)."""
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["run", "team", "kind", "measure", "order", "topic", "value", "judged_at_k"])
        for result in self.results:
            for kind in self.kinds:
                evaluation = result.scores[kind]
                common = [result.tag, result.team, kind, self.measure, self.order]
                for topic in sorted(evaluation.per_topic, key=topic_sort_key):
                    writer.writerow([*common, topic, f"{evaluation.per_topic[topic]:.4f}", ""])
                writer.writerow([*common, "all", f"{evaluation.mean:.4f}", f"{evaluation.judged_at_k:.4f}"])


def evaluate_runs(
    *,
    campaign: Campaign,
    measure: str = "nDCG@5",
    kinds: tuple[str, ...] = ("relevance",),
    order: str = "score",
    phase: str = "main",
    rule: str = "majority",
) -> Leaderboard:
    """Evaluate every run of the campaign by ``measure`` for each of ``kinds`` against the current judgments.

    ``order="score"`` is trec_eval's (score descending, ties by document id descending, rank column ignored);
    ``order="rank"`` follows the submitted rank column, as Touché's own evaluation did. Judgments of ``phase``
    are aggregated per topic and document by ``rule`` (see exports.AggregationRule; stance always takes the
    majority unless one assessor is named, since max and mean mean nothing for stance). Stance accuracy and
    macro-F1 compare a run's stance column with the stance judgments over the run's top-k documents that
    carry one, the rows the nDCG reads.
    """
    k = parse_measure(measure)
    kinds = tuple(dict.fromkeys(kinds))
    if not kinds or any(kind not in EVALUATED_KINDS for kind in kinds):
        raise EvaluationError(f"kinds must be among {', '.join(EVALUATED_KINDS)}, not {', '.join(kinds) or 'none'}")
    if order not in ORDERS:
        raise EvaluationError(f"unknown order {order!r}: use score (trec_eval) or rank (the run's rank column)")
    if phase not in PHASES:
        raise EvaluationError(f"unknown phase {phase!r}: use main, training or all")
    parsed = parse_rule(rule, kind="relevance")
    for kind in kinds:
        if kind != "relevance" and not campaign.label_scheme.values(kind):
            raise EvaluationError(f"campaign {campaign.slug} has no {kind} labels in its scheme")

    runs = list(Run.objects.filter(campaign=campaign).order_by("tag").values_list("id", "tag", "team", "has_stance"))
    numbers = dict(Topic.objects.filter(campaign=campaign).values_list("id", "number"))
    qrels, stance_truth = _current_labels(campaign=campaign, kinds=kinds, phase=phase, rule=parsed, numbers=numbers)
    judged_topics = {number for labels in qrels.values() for number in labels} | {number for number, _ in stance_truth}
    stance_runs = {run_id for run_id, _, _, has_stance in runs if has_stance} if stance_truth else set()
    entries = _top_entries(runs=[run[0] for run in runs], topics=[t for t, n in numbers.items() if n in judged_topics], k=k, order=order)

    results = []
    for run_id, tag, team, _ in runs:
        by_topic: dict[str, list[tuple[str, int, float]]] = {}
        predicted: dict[tuple[str, str], str | None] = {}
        for topic_id, doc, rank, score, stance in entries.get(run_id, ()):
            by_topic.setdefault(numbers[topic_id], []).append((doc, rank, score))
            predicted[numbers[topic_id], doc] = stance or None
        scores = {kind: evaluate_run(by_topic, qrels[kind], k=k, order=order, name=tag) for kind in kinds}
        stance = stance_scores(predicted, stance_truth) if run_id in stance_runs else None
        results.append(RunResult(run_id=run_id, tag=tag, team=team, scores=scores, stance=stance))
    return Leaderboard(
        measure=f"nDCG@{k}", k=k, kinds=kinds, order=order, phase=phase, rule=str(parsed),
        results=sort_results(results, kinds[0], kinds=kinds),
        topics={kind: len(qrels[kind]) for kind in kinds}, has_stance=bool(stance_runs),
    )


def _current_labels(
    *, campaign: Campaign, kinds: tuple[str, ...], phase: str, rule: AggregationRule, numbers: dict[int, str]
) -> tuple[dict[str, dict[str, dict[str, int]]], dict[tuple[str, str], str]]:
    """One query for all label dimensions: kind -> topic number -> doc id -> label, and the stance truth."""
    scheme = campaign.label_scheme
    stance_rule = rule if rule.method == "assessor" else AggregationRule("majority")
    judgments = Judgment.objects.filter(topic__campaign=campaign, phase__in=PHASES[phase])
    if rule.method == "assessor":
        judgments = judgments.filter(assessor__username=rule.assessor)
    rows = (
        judgments.order_by("topic_id", "document_id")
        .values_list("topic_id", "document_id", "document__doc_id", "relevance", "quality", "stance")
        .iterator(chunk_size=QUERY_CHUNK)
    )
    qrels: dict[str, dict[str, dict[str, int]]] = {kind: {} for kind in kinds}
    stance_truth: dict[tuple[str, str], str] = {}
    column = {"relevance": 3, "quality": 4}
    for (topic_id, _), group in groupby(rows, key=itemgetter(0, 1)):
        group = list(group)
        number, doc = numbers[topic_id], group[0][2]
        for kind in kinds:
            labels = [row[column[kind]] for row in group if row[column[kind]] is not None]
            if labels:
                qrels[kind].setdefault(number, {})[doc] = rule.combine(labels, scheme.values(kind))
        stances = [row[5] for row in group if row[5]]
        if stances:
            stance_truth[number, doc] = stance_rule.combine(stances, scheme.values("stance"))
    return qrels, stance_truth


def _top_entries(*, runs: list[int], topics: list[int], k: int, order: str) -> dict[int, list[tuple]]:
    """run id -> (topic id, doc, rank, score, stance) of its first k lines per judged topic under `order`."""
    entries: dict[int, list[tuple]] = {}
    for run_id, topic_id, lines in rankings.top_lines(runs, topics, depth=k, orders=[order]):
        entries.setdefault(run_id, []).extend((topic_id, *line) for line in lines)
    return entries
