"""Submissions of a classification campaign (Touché 2023 Task 4, CoFE): their import, their scores against the
decided labels, and the decided labels written out as the lab's truth file.

A submission is a Run whose `predictions` hold one label per comment ({comment id: label}), from the lab's
headerless ``comment_id<TAB>label`` file. It is scored whole, as the organisers' ``evaluation.py`` scores it
(metrics.classification), on the items that have a decided label, overall and per language. The decided label of
an item is what a qrels export of the scheme's primary dimension gives under an aggregation rule
(exports.qrels_rows), so the leaderboard, the gold file and a qrels export never disagree.

The default rule is ``adjudicated``: where an adjudicator decided an item, that label; elsewhere the majority of its
judgments (a tie going to the label listed first in the scheme). An import source's prior labels are judgments
too, so a campaign holding only the lab's truth (import_items … --assessor cofe-truth) is scored against that
truth, and one judged by coders against their majority, corrected by adjudication where they split. Naming one
source (``assessor:cofe-truth``) scores against it alone even where people have judged as well.

A score reads the database a fixed number of times whatever the number of submissions and items: the items and
their languages, the decided labels, and the submissions' predictions (one query each).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from django.db import transaction
from django.db.models.fields.json import KeyTextTransform

from accounts.models import Role, User
from assessments.formats.cofe import COMMENT_COLUMNS, Comment, parse_predictions, write_comments
from assessments.formats.errors import FormatError, shown
from assessments.metrics import classification_significance as resampling
from assessments.metrics.classification import CONVENTIONS, MEASURES, OVERALL, scores, scores_by_group
from assessments.models import Campaign, Document, Judgment, PoolEntry, Run
from assessments.models.fields import max_length
from assessments.services import audit, bulk
from assessments.services.evaluation import Statistics
from assessments.services.exports import PHASES, ExportError, qrels_rows
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.files import InputFile, input_files, opened
from assessments.services.imports.runs import TEAM_LENGTH

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

DEFAULT_RULE = "adjudicated"
DEFAULT_MEASURE = "Macro F1-Score"  # the lab ranked submissions by it
BY = ("language",)
TESTS = ("permutation",)
SHOWN_IDS = 5  # ids a message lists before "…"

_TAG_LENGTH = max_length(Run, "tag")
_OWN_COLUMNS = frozenset({"id", "id_prop", "comment", "lan", "label"})  # what formats.cofe keeps outside `fields`


class ClassificationError(ExportError):
    """A score or export of a classification campaign that cannot be made as asked (the message says why)."""


def _require_classification(campaign: Campaign) -> None:
    if not campaign.is_classification:
        raise ClassificationError(
            f"campaign {campaign.slug} ranks documents: submissions of labels belong to a classification campaign"
        )


def items_of(campaign: Campaign) -> dict[str, str]:
    """Comment id -> language of every item of the campaign (a document of its pool), in import order."""
    language = KeyTextTransform("language", "document__metadata")
    rows = PoolEntry.objects.filter(topic__campaign=campaign).order_by("document_id").values_list("document__doc_id", language)
    return {doc: lang or "" for doc, lang in rows}


def gold_labels(campaign: Campaign, *, rule: str = DEFAULT_RULE, phase: str = "main") -> dict[str, str]:
    """Comment id -> the decided label of the scheme's primary dimension under ``rule`` (exports.AggregationRule:
    majority, adjudicated or assessor:NAME for a category); an item without one is absent."""
    _require_classification(campaign)
    gold: dict[str, str] = {}
    # import_items puts each comment under its one proposal; a comment under two would keep the first's label.
    for _, doc, label in qrels_rows(campaign=campaign, phase=phase, rule=rule):
        gold.setdefault(doc, str(label))
    return gold


# --- Import ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Read:
    file: InputFile
    tag: str
    predictions: dict[str, str]


def import_predictions(
    *,
    campaign: Campaign,
    path: str | Path,
    tag: str | None = None,
    source: str | None = None,
    team: str = "",
    by: User | None = None,
    rule: str = DEFAULT_RULE,
    phase: str = "main",
) -> ImportSummary:
    """Store one submission file (``comment_id<TAB>label`` lines) as a Run tagged ``tag`` (default: the file's
    name without .tsv/.txt/.gz); ``source`` names the file in messages. See `import_prediction_files`."""
    return import_prediction_files(
        campaign=campaign, paths=[path], names=[source] if source else None, tags=[tag] if tag else None, team=team,
        by=by, rule=rule, phase=phase,
    )


def import_prediction_files(
    *,
    campaign: Campaign,
    paths: Sequence[str | Path],
    names: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    team: str = "",
    by: User | None = None,
    rule: str = DEFAULT_RULE,
    phase: str = "main",
) -> ImportSummary:
    """Store submission files, one Run each; all or nothing.

    Refused with FormatError (file:line) for an id that is no item of the campaign, a label that is no value of
    the scheme's primary dimension, or a bad line; refused whole (line None) when comments with a decided label
    (under ``rule``, as scoring reads them) have no prediction, since the organisers' scorer refuses such a file
    too. A tag names one run: a tag already in the campaign, or given by two files, is refused (a ranking run's tag
    imported again replaces that run; a submission is never replaced, so a corrected file comes in under a new tag).
    """
    _require_classification(campaign)
    files = input_files(paths, names)
    if tags is not None and len(tags) != len(files):
        raise ValueError("give one tag per file")
    if len(team) > TEAM_LENGTH:
        raise ImportProblem(f"the team name is longer than {TEAM_LENGTH} characters")
    items = items_of(campaign)
    require_items(campaign, bool(items))
    dimension = campaign.label_scheme.primary
    allowed = [str(value.value) for value in dimension.values]
    gold = gold_labels(campaign, rule=rule, phase=phase)

    read: list[_Read] = []
    for index, file in enumerate(files):
        tag = tags[index] if tags is not None else tag_of(file.name)
        _check_tag(file, tag, earlier=read)
        predictions = {}
        for line in parse_predictions(_content(file), source=file.name):
            if line.id not in items:
                raise FormatError(
                    file.name, line.line, f"{shown(line.id)} is not an item of campaign {campaign.slug} (none of its comments has that id)"
                )
            if line.label not in allowed:
                raise FormatError(
                    file.name, line.line,
                    f"label {shown(line.label)} of {line.id} is not one of the campaign's: {', '.join(allowed)}",
                )
            predictions[line.id] = line.label
        missing = [ident for ident in items if ident in gold and ident not in predictions]
        if missing:
            raise FormatError(
                file.name, None,
                f"{len(missing)} of the {len(gold)} comments with a decided label (rule {rule}) have no prediction: "
                f"{_listed(missing)}; a submission predicts every comment",
            )
        read.append(_Read(file=file, tag=tag, predictions=predictions))

    checksums = audit.file_checksums((f.name, f.path) for f in files)
    with transaction.atomic():
        bulk.lock_campaign(campaign)
        used = dict(Run.objects.filter(campaign=campaign, tag__in=[r.tag for r in read]).values_list("tag", "file_name"))
        for submission in read:
            if submission.tag in used:
                raise FormatError(
                    submission.file.name, None,
                    f"run {submission.tag} is already in campaign {campaign.slug} (from {used[submission.tag] or 'another import'}); "
                    "a tag names one run, and a submission is not replaced: import the file under another name",
                )
        Run.objects.bulk_create([
            Run(
                campaign=campaign, tag=r.tag, team=team, file_name=Path(r.file.name).name[:500], has_stance=False,
                line_count=len(r.predictions), warnings=[], predictions=r.predictions, uploaded_by=by,
            )
            for r in read
        ])
        audit.record(
            campaign=campaign, action=audit.Action.RUNS_IMPORTED, by=by,
            subject=files[0].name if len(files) == 1 else f"{len(files)} files",
            details={"kind": "predictions", "files": checksums, "rule": rule, "gold": len(gold), "runs": [
                {"tag": r.tag, "lines": len(r.predictions), "replaced": False} for r in read
            ]},
        )

    warnings = [
        f"{r.file.name}: predicts {len(r.predictions):,} of the campaign's {len(items):,} comments; the others cannot be "
        "scored once they have a decided label"
        for r in read if len(r.predictions) < len(items)
    ]
    text = "\n".join(
        f"{r.file.name}: 1 run with {len(r.predictions):,} lines stored (1 new, 0 replaced); run {r.tag} predicts "
        f"{sum(ident in gold for ident in r.predictions):,} of the {len(gold):,} comments with a decided label"
        for r in read
    )
    lines = sum(len(r.predictions) for r in read)
    return ImportSummary(text, warnings, {
        "runs": [{"tag": r.tag, "team": team, "lines": len(r.predictions), "file": r.file.name} for r in read],
        "lines": lines, "replaced": [], "gold": len(gold),
    })


def require_items(campaign: Campaign, has_items: bool) -> None:
    if not has_items:
        raise ImportProblem(f"campaign {campaign.slug} has no items yet: import its comments (import_items) before submissions")


def tag_of(name: str) -> str:
    """A submission's tag from its file's name: ``team-bert.tsv.gz`` gives ``team-bert``."""
    stem = Path(name).name
    while Path(stem).suffix in (".tsv", ".txt", ".gz", ".run", ".csv"):
        stem = Path(stem).stem
    return stem


def _check_tag(file: InputFile, tag: str, *, earlier: Sequence[_Read]) -> None:
    if not tag.strip() or len(tag) > _TAG_LENGTH:
        raise FormatError(file.name, None, f"run tag {shown(tag)} is empty or longer than {_TAG_LENGTH} characters")
    for other in earlier:
        if other.tag == tag:
            raise FormatError(file.name, None, f"run {tag} is also in {other.file.name}; a tag names one run")


def _content(file: InputFile) -> bytes:
    """The file's bytes (gunzipped when gzip), within the import limits of formats.reading."""
    with opened(file) as (_, stream):
        return stream.read()


def _listed(ids: Sequence[str]) -> str:
    return ", ".join(ids[:SHOWN_IDS]) + (" …" if len(ids) > SHOWN_IDS else "")


# --- Scores ------------------------------------------------------------------------------------------------


def parse_measure(text: str) -> str:
    """One of MEASURES by its name in any letter case ("macro f1-score", as the scorer's keys write it)."""
    found = {name.lower(): name for name in MEASURES}.get(text.strip().lower())
    if found is None:
        raise ClassificationError(f"unknown measure {text!r}: use one of {', '.join(MEASURES)}")
    return found


@dataclass(frozen=True)
class SubmissionResult:
    run_id: int
    tag: str
    team: str
    # group (OVERALL "all", then each language when asked) -> measure -> value; empty when not scored
    scores: dict[str, dict[str, float]]
    missing: list[str] = field(default_factory=list)  # comments with a decided label it has no prediction for
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)  # measure -> interval over all items

    @property
    def scored(self) -> bool:
        """False when it lacks predictions, or when no comment has a decided label yet."""
        return bool(self.scores)

    def value(self, measure: str, group: str = OVERALL) -> float | None:
        return self.scores.get(group, {}).get(measure)


@dataclass(frozen=True)
class ClassificationBoard:
    """Every submission's figures against the decided labels, best first by `measure`."""

    measure: str  # the one sorted by, and tested
    measures: tuple[str, ...]
    convention: str
    rule: str
    phase: str
    by: str | None  # "language": figures per language too
    items: int  # comments with a decided label
    languages: dict[str, int]  # of those, per language (sorted by code)
    results: list[SubmissionResult]
    statistics: Statistics = Statistics(ci_level=None, test=None)
    top_group: frozenset[int] = frozenset()  # run ids no test told apart from the best

    @property
    def unjudged(self) -> bool:
        return self.items == 0

    @property
    def convention_text(self) -> str:
        return f"{self.convention}: {CONVENTIONS[self.convention]}"

    @property
    def groups(self) -> list[str]:
        return [OVERALL, *self.languages] if self.by else [OVERALL]

    def as_json(self) -> list[dict]:
        """One object per submission and measure, the shape `evaluate_runs --format json` prints for a classification
        campaign: ``value`` overall and, with ``by`` language, ``per_language``; null for a submission not scored
        (``missing`` says how many decided comments it lacks)."""
        rows = []
        for result in self.results:
            for measure in self.measures:
                row: dict = {
                    "run": result.tag, "team": result.team, "measure": measure, "value": result.value(measure),
                    "convention": self.convention, "rule": self.rule, "items": self.items,
                }
                if self.by:
                    row["per_language"] = {lang: result.value(measure, lang) for lang in self.languages if result.scored}
                if result.missing:
                    row.update(missing=len(result.missing), message=f"no prediction for {len(result.missing)} comments with a decided label: {_listed(result.missing)}")
                elif not result.scored:
                    row["message"] = f"no comment has a decided label ({self.phase} judgments, rule {self.rule})"
                if measure in result.ci:
                    row.update(
                        ci_low=result.ci[measure][0], ci_high=result.ci[measure][1], ci_level=self.statistics.ci_level,
                        ci_seed=self.statistics.seed, ci_resamples=self.statistics.resamples,
                    )
                if self.statistics.test and measure == self.measure:
                    row["top_group"] = result.run_id in self.top_group
                rows.append(row)
        return rows

    def write_csv(self, stream: SupportsWrite[str]) -> None:
        """One row per submission, measure and group (``all``, then each language when asked)."""
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["run", "team", "measure", "language", "value", "convention"])
        for result in self.results:
            for measure in self.measures:
                for group in self.groups:
                    value = result.value(measure, group)
                    writer.writerow([result.tag, result.team, measure, group, "" if value is None else f"{value:.4f}", self.convention])


def score_submissions(
    campaign: Campaign,
    *,
    rule: str = DEFAULT_RULE,
    convention: str = "touche",
    by: str | None = None,
    measure: str | Sequence[str] | None = None,
    phase: str = "main",
    ci: float | None = None,
    test: str | None = None,
    seed: int = resampling.DEFAULT_SEED,
    resamples: int = resampling.RESAMPLES,
    permutations: int = resampling.PERMUTATIONS,
) -> ClassificationBoard:
    """Score every submission of the campaign on the comments with a decided label (under ``rule`` and ``phase``),
    overall and, with ``by="language"``, per language (Document.metadata["language"]), as the organisers' scorer:
    each group scored on its own labels, under ``convention`` (metrics.classification.CONVENTIONS).

    ``measure``: one of MEASURES or several (the first sorts the board and is tested); None: all, sorted by
    Macro F1-Score. A submission lacking a prediction for a decided comment is listed unscored, with those
    comments, last. ``ci`` adds a percentile-bootstrap interval over items (``resamples`` draws) to every measure
    overall; ``test="permutation"`` compares the best submission with each other by the paired randomisation test
    over items (Holm over those comparisons) and fills ``top_group``. Both are seeded with ``seed``.
    """
    _require_classification(campaign)
    if convention not in CONVENTIONS:
        raise ClassificationError(f"unknown convention {convention!r}: use {' or '.join(CONVENTIONS)}")
    if by not in (None, *BY):
        raise ClassificationError(f"figures are given overall or by {', '.join(BY)}, not by {by!r}")
    if test is not None and test not in TESTS:
        raise ClassificationError(
            f"unknown test {test!r} for a classification campaign: use permutation (a paired t-test needs per-item "
            "scores, which macro averages are not)"
        )
    if ci is not None and not 0 < ci < 1:
        raise ClassificationError(f"confidence level must lie between 0 and 1 (0.95, say), not {ci}")
    if phase not in PHASES:
        raise ClassificationError(f"unknown phase {phase!r}: use main, training or all")
    if measure is None:
        measures = (DEFAULT_MEASURE, *(name for name in MEASURES if name != DEFAULT_MEASURE))
    else:
        measures = tuple(dict.fromkeys(parse_measure(name) for name in ([measure] if isinstance(measure, str) else measure)))
        if not measures:
            raise ClassificationError(f"name a measure: {', '.join(MEASURES)}")

    gold = gold_labels(campaign, rule=rule, phase=phase)
    languages_of = items_of(campaign)
    # Items in import order (the organisers' truth file order); the figures do not depend on it.
    ids = [ident for ident in languages_of if ident in gold] + sorted(gold.keys() - languages_of.keys())
    truth = [gold[ident] for ident in ids]
    groups = [languages_of.get(ident, "") for ident in ids]
    runs = list(Run.objects.filter(campaign=campaign).order_by("tag").values_list("id", "tag", "team", "predictions"))

    results, predicted_of = [], {}
    for run_id, tag, team, predictions in runs:
        given: dict[str, str] = predictions or {}  # Run.predictions: {comment id: label}
        labels = [given.get(ident) for ident in ids]
        missing = [ident for ident, label in zip(ids, labels) if label is None]
        figures: dict[str, dict[str, float]] = {}
        if ids and not missing:
            complete = cast(list[str], labels)  # no None left
            predicted_of[run_id] = complete
            found = (
                scores_by_group(truth, complete, groups, convention=convention) if by
                else {OVERALL: scores(truth, complete, convention=convention)}
            )
            figures = {group: {name: values[name] for name in measures} for group, values in found.items()}
        results.append(SubmissionResult(run_id=run_id, tag=tag, team=team, scores=figures, missing=missing))
    results = _ranked(results, measures[0])

    scored = [result for result in results if result.scored]
    top_group: frozenset[int] = frozenset()
    if scored and ci is not None:
        intervals = resampling.bootstrap_intervals(
            truth, [predicted_of[r.run_id] for r in scored], level=ci, resamples=resamples, seed=seed, convention=convention
        )
        for result, bounds in zip(scored, intervals):
            result.ci.update((name, bounds[name]) for name in measures)
    if scored and test is not None:
        tests = resampling.compare_pairs(
            truth, [predicted_of[r.run_id] for r in scored], [(0, other) for other in range(1, len(scored))],
            measure=measures[0], permutations=permutations, seed=seed, convention=convention,
        )
        top_group = frozenset({scored[0].run_id} | {scored[t.b].run_id for t in tests if not t.significant})
    return ClassificationBoard(
        measure=measures[0], measures=measures, convention=convention, rule=rule, phase=phase, by=by, items=len(ids),
        languages=dict(sorted(Counter(groups).items())), results=results,
        statistics=Statistics(ci_level=ci, test=test, seed=seed, resamples=resamples), top_group=top_group,
    )


def _ranked(results: list[SubmissionResult], measure: str) -> list[SubmissionResult]:
    """Best first by ``measure`` overall, ties by tag; submissions not scored last, by tag."""
    scored = sorted((r for r in results if r.scored), key=lambda r: r.tag)
    scored.sort(key=lambda r: r.value(measure) or 0.0, reverse=True)
    return scored + sorted((r for r in results if not r.scored), key=lambda r: r.tag)


# --- Gold export -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldExport:
    """The comments file with the decided labels (the lab's truth layout), and what it holds."""

    text: str
    comments: int
    labelled: int  # written with a label
    undecided: int  # no decided label under the rule: written ---
    below_agreement: int = 0  # decided, but fewer human coders agreed than asked: written ---
    without_coders: int = 0  # of those, decided with no human coder at all (an import source's label only)

    @property
    def warnings(self) -> list[str]:
        found = []
        if self.undecided:
            found.append(f"{self.undecided} of {self.comments} comments have no decided label: written as ---")
        if self.below_agreement:
            found.append(
                f"{self.below_agreement} comments with a decided label have too little agreement among their human "
                f"coders: written as ---" + (f" ({self.without_coders} of them have no human coder)" if self.without_coders else "")
            )
        return found


def export_gold(
    *, campaign: Campaign, rule: str = DEFAULT_RULE, phase: str = "main", min_agreement: float | None = None
) -> GoldExport:
    """The campaign's comments in the lab's layout (its header, the columns imported, in import order) with each
    comment's decided label (`gold_labels`), ``---`` where there is none; the organisers' ``evaluation.py`` reads
    it as its truth file and formats.cofe.parse_comments reads it back.

    ``min_agreement`` (0–1) keeps a decided label only where at least that share of the comment's human coders
    (judgments of the phase by anyone but an import source) gave it; the others, and comments no person judged,
    are written ``---``.
    """
    _require_classification(campaign)
    if min_agreement is not None and not 0 <= min_agreement <= 1:
        raise ClassificationError(f"the minimum agreement is a share between 0 and 1, not {min_agreement}")
    gold = gold_labels(campaign, rule=rule, phase=phase)
    rows = (
        Document.objects.filter(pool_entries__topic__campaign=campaign).distinct().order_by("pk")
        .values_list("doc_id", "body", "metadata")
    )
    comments, names = [], {}
    for doc_id, body, metadata in rows:
        fields = metadata.get("fields") or {}
        names.update(dict.fromkeys(fields))
        comments.append(Comment(
            id=doc_id, proposal=str(metadata.get("proposal", "")), text=body, language=metadata.get("language", ""),
            label=None, fields=fields,
        ))
    # The lab's columns in its order where the file had them, then any others in the order first met.
    header = [c for c in COMMENT_COLUMNS if c in _OWN_COLUMNS or c in names] + [n for n in names if n not in COMMENT_COLUMNS]
    labels: dict[str, str | None] = {c.id: gold.get(c.id) for c in comments}
    below = without = 0
    if min_agreement is not None:
        agreeing, coders = _human_agreement(campaign, gold, phase)
        for comment in comments:
            if labels[comment.id] is not None and (
                not coders[comment.id] or agreeing[comment.id] / coders[comment.id] < min_agreement
            ):
                labels[comment.id] = None
                below += 1
                without += not coders[comment.id]
    labelled = sum(label is not None for label in labels.values())
    return GoldExport(
        text=write_comments(comments, header, labels=labels), comments=len(comments), labelled=labelled,
        undecided=sum(c.id not in gold for c in comments), below_agreement=below, without_coders=without,
    )


def _human_agreement(campaign: Campaign, gold: dict[str, str], phase: str) -> tuple[Counter[str], Counter[str]]:
    """(comment id -> human coders who gave the decided label, comment id -> human coders with a label)."""
    dimension = campaign.label_scheme.primary.name
    rows = (
        Judgment.objects.filter(topic__campaign=campaign, phase__in=PHASES[phase], labels__has_key=dimension)
        .exclude(assessor__role=Role.SOURCE)
        .values_list("document__doc_id", KeyTextTransform(dimension, "labels"))
    )
    agreeing: Counter[str] = Counter()
    coders: Counter[str] = Counter()
    for doc, label in rows:
        coders[doc] += 1
        agreeing[doc] += gold.get(doc) == label
    return agreeing, coders
