"""Image runs of a Touché Task 3 campaign: importing them, and scoring them with the organisers' three precision@10
measures.

A run file (`topic PRO|CON imageId rank score tag`) is read by formats.image_runs, which refuses what is unreadable
(file and line) and lists as warnings what the organisers' verifier flags but tolerates; it also marks the lines
their evaluator skips (a rank past 10, ranks not increasing…). Only the lines the evaluator counts are stored, so
the measures computed from the database equal submission-evaluator.sh on the file. A run is one Ranking per
topic, its two lists interleaved by rank (PRO 1, CON 1, PRO 2, …) with each line's stance and per-stance rank: a
depth-k pool reads the two lists apart and takes the top k of each (services.pooling), so depth 10 takes every
image a run submitted for a topic.

The measures read each image's decided answers as a qrels export writes them (services.image_campaigns), with an
unjudged image counting as off topic, as the evaluator counts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.formats.image_runs import STANCES, ImageRun, ImageRunEntry, parse_image_run
from assessments.metrics import significance
from assessments.metrics.image_precision import MEASURES, ImagePrecisionReport, evaluate_image_run
from assessments.models import Campaign, Document, Ranking, Run
from assessments.services import audit, bulk
from assessments.services.evaluation import EvaluationError, Statistics
from assessments.services.image_campaigns import decided_answers, stance_lists
from assessments.services.imports import ImportProblem, ImportSummary


def import_image_runs(
    *, campaign: Campaign, paths: Sequence[Path], names: Sequence[str] | None = None, team: str = "", by: User | None = None
) -> ImportSummary:
    """Import Task 3 run files; all or nothing. A tag imported again replaces its run, as for text runs."""
    if not campaign.is_images:
        raise ImportProblem(f"campaign {campaign.slug} does not judge images")
    names = list(names or [str(p) for p in paths])
    topics = dict(campaign.topics.values_list("number", "pk"))
    if not topics:
        raise ImportProblem("import the topics first: a run names topics by number")
    known = set(Document.objects.filter(collection=campaign.collection).values_list("doc_id", flat=True))
    parsed: list[tuple[str, ImageRun]] = []
    for path, name in zip(paths, names, strict=True):
        run = parse_image_run(Path(path).read_bytes(), source=name, known_images=known or None)
        for (topic, _), entries in run.entries.items():
            if topic not in topics:
                raise FormatError(name, entries[0].line, f"topic {topic} is not a topic of the campaign")
        if run.tag in {tag for _, r in parsed for tag in [r.tag]}:
            raise FormatError(name, None, f"run {run.tag} is given twice in this import")
        parsed.append((name, run))
    with transaction.atomic():
        bulk.lock_campaign(campaign)
        for name, run in parsed:
            Run.objects.filter(campaign=campaign, tag=run.tag).delete()
            stored = Run.objects.create(
                campaign=campaign, tag=run.tag, team=team, file_name=name, has_stance=True, line_count=run.line_count,
                warnings=[str(w) for w in run.warnings], uploaded_by=by,
            )
            Ranking.objects.bulk_create([_ranking(stored, topics[topic], entries) for topic, entries in _by_topic(run).items()])
        audit.record(
            campaign=campaign, action=audit.Action.RUNS_IMPORTED, by=by, subject=", ".join(names),
            details={"kind": "image runs", "runs": [r.tag for _, r in parsed]},
        )
    warnings = [str(w) for _, run in parsed for w in run.warnings]
    text = f"{len(parsed)} image run{'s' if len(parsed) != 1 else ''} stored ({', '.join(r.tag for _, r in parsed)})"
    if warnings:
        text += f", {len(warnings)} warning{'s' if len(warnings) != 1 else ''}"
    return ImportSummary(text, warnings, {"runs": len(parsed)})


def _by_topic(run: ImageRun) -> dict[str, list[ImageRunEntry]]:
    """Each topic's counted lines, PRO and CON interleaved by rank (the module docstring)."""
    topics: dict[str, list[ImageRunEntry]] = {}
    for (topic, _), entries in run.entries.items():
        topics.setdefault(topic, []).extend(e for e in entries if e.skipped is None)
    order = {stance: i for i, stance in enumerate(STANCES)}
    return {topic: sorted(entries, key=lambda e: (e.rank, order[e.stance], e.line)) for topic, entries in topics.items() if entries}


def _ranking(run: Run, topic_id: int, entries: list[ImageRunEntry]) -> Ranking:
    return Ranking(
        run=run, topic_id=topic_id, length=len(entries), docs=[e.image for e in entries], ranks=[e.rank for e in entries],
        scores=[e.score for e in entries], stances=[e.stance for e in entries], by_rank=None, by_single=None,
    )


@dataclass
class ImageRunScores:
    tag: str
    team: str
    report: ImagePrecisionReport
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)  # measure -> bootstrap interval over topics
    top_group: set[str] = field(default_factory=set)  # measures by which no paired test tells the run from the best

    def per_topic(self, measure: str) -> dict[str, float]:
        """The measure per topic over both lists, out of 20: what the script prints and the statistics resample."""
        return {topic.topic: topic.both.precision()[measure] for topic in self.report.topics}


def evaluate_image_runs(
    campaign: Campaign, *, rule: str = "majority", phase: str = "main", statistics: Statistics | None = None,
) -> list[ImageRunScores]:
    """Every run's three measures per topic, stance and overall, from the stored lines and the decided answers;
    with `statistics`, each measure's bootstrap intervals over the run's topics and the group of runs no paired
    test (on the topics both runs have) tells from the best, as the leaderboard of text runs has them."""
    # Yes/no answers are 1/0 (the questions' values are ints).
    answers = {key: {q: int(v) for q, v in values.items()} for key, values in decided_answers(campaign, rule=rule, phase=phase).items()}
    numbers = dict(campaign.topics.values_list("pk", "number"))
    entries: dict[int, dict[tuple[str, str], list[ImageRunEntry]]] = {}
    for ranking in Ranking.objects.filter(run__campaign=campaign).only("run_id", "topic_id", "docs", "ranks", "stances", "length"):
        topic = numbers[ranking.topic_id]
        for stance, lines in stance_lists(ranking).items():
            if lines:
                entries.setdefault(ranking.run_id, {})[(topic, stance)] = [
                    ImageRunEntry(topic, stance, image, rank, 0.0, 0) for rank, image in lines
                ]
    results = [
        ImageRunScores(run.tag, run.team, evaluate_image_run(
            ImageRun(tag=run.tag, entries=entries.get(run.pk, {}), line_count=run.line_count), answers,
        ))
        for run in Run.objects.filter(campaign=campaign).order_by("tag")
    ]
    if statistics and (statistics.ci_level is not None or statistics.test is not None):
        if statistics.ci_level is not None and not 0 < statistics.ci_level < 1:
            raise EvaluationError(f"confidence level must lie between 0 and 1 (0.95, say), not {statistics.ci_level}")
        if statistics.test not in (None, *significance.TESTS):
            raise EvaluationError(f"unknown test {statistics.test!r}: use {' or '.join(significance.TESTS)}")
        _add_statistics(results, statistics)
    return results


def _add_statistics(results: list[ImageRunScores], statistics: Statistics) -> None:
    scored = [r for r in results if r.report.topics]  # a run with no counted line has nothing to resample
    for measure in MEASURES:
        intervals, group = significance.leaderboard_statistics(
            [r.per_topic(measure) for r in scored], [r.report.measures()[measure] for r in scored],
            level=statistics.ci_level, test=statistics.test, seed=statistics.seed,
        )
        for result, interval in zip(scored, intervals or ()):
            if interval is not None:
                result.ci[measure] = interval
        for index in group or ():
            scored[index].top_group.add(measure)


def scores_json(results: list[ImageRunScores], measures: Sequence[str], statistics: Statistics | None = None) -> list[dict]:
    """One row per run and measure: the mean over the run's topics, and per topic over both stances and per stance
    (what `evaluate_runs --format json` and the results API answer); with `statistics`, the interval and whether
    the run is in the best run's group, in the fields text runs' rows use."""
    rows = []
    for r in results:
        for name in measures:
            row = {
                "run": r.tag, "team": r.team, "measure": name, "mean": r.report.measures()[name], "per_topic": r.per_topic(name),
                "per_stance": {t.topic: {s: h.precision()[name] for s, h in t.stances.items()} for t in r.report.topics},
            }
            if name in r.ci and statistics:
                row.update(ci_low=r.ci[name][0], ci_high=r.ci[name][1], ci_level=statistics.ci_level,
                           ci_seed=statistics.seed, ci_resamples=statistics.resamples)
            if statistics and statistics.test:
                row["top_group"] = name in r.top_group
            rows.append(row)
    return rows
