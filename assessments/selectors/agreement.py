"""Agreement between assessors, read from the judgments in the database: the figures and the disagreements.

The coefficients come from assessments.metrics.agreement. This module chooses the judgments and passes them in
one label dimension at a time (the admin's other monitoring figures are selectors.monitoring). Choosing them:

* A scope picks the phase (training, main, or all), optionally one training round, and optionally one topic.
  A training topic belongs to one round (services.assignments), so a round's judgments are those on its topics.
* An item is a (topic, document) pair, and only items judged by two or more assessors are read for agreement.
  Imported judgments count, since they are somebody's labels. Copies made for duplicates' twins
  (source "duplicate") do not, since they repeat a label the same assessor gave on another document.
* A dimension is measured as the scheme says: graded dimensions are ordinal (weighted kappa, ordinal alpha),
  categories and questions nominal. A label is missing where its dimension was not asked (Touché asks quality
  and stance only of relevant documents), unless the dimension's `otherwise` stands for it, as in the qrels;
  such a dimension left blank where it was asked counts as its `unanswered` value, as in the qrels too (a side of
  an on-topic image that a Task 3 assessor did not mark is a no).
  Krippendorff's alpha allows for missing labels, and the kappas use the documents both assessors labelled.

Assessors are flagged by agreement.flag_raters: a mean pairwise Cohen's kappa below
Campaign.agreement_threshold, linearly weighted for the graded (ordinal) dimensions. Training was a "kappa test" in
Touché, and the admin can trace the mean back to the pairwise kappas on the same page.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, cast

import nh3
from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Func, IntegerField, Q, Window
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Substr

from accounts.models import User
from assessments.labels import LabelScheme
from assessments.metrics.agreement import (
    DimensionAgreement,
    Label,
    RaterAgreement,
    agreement_report,
    binary_collapse,
    disagreement,
    flag_raters,
    fleiss_kappa,
    krippendorff_alpha,
    rater_agreement,
)
from assessments.models import Assignment, Campaign, Document, Judgment, Phase, Topic

if TYPE_CHECKING:  # django-stubs-ext is a checking tool, not installed in production
    from django_stubs_ext import WithAnnotations

PHASES = (Phase.TRAINING, Phase.MAIN, "all")
FLAG_RULE = "mean pairwise Cohen's kappa (linearly weighted for graded dimensions) below the threshold"


class AgreementError(ValueError):
    """An agreement scope that makes no sense (the message says why)."""


@dataclass(frozen=True)
class Scope:
    """Which judgments to compare: a phase, optionally one training round, optionally one topic (by number)."""

    phase: str = Phase.TRAINING
    round: int | None = None
    topic: str | None = None

    def __post_init__(self) -> None:
        if self.phase not in PHASES:
            raise AgreementError(f"unknown phase {self.phase!r}: expected training, main or all")
        if self.round is not None and self.phase != Phase.TRAINING:
            raise AgreementError("rounds belong to the training phase")

    def judgments(self, campaign: Campaign, prefix: str = "") -> Q:
        """The Q that selects this scope's judgments, for Judgment (no prefix) or through a relation ("judgment__")."""
        p = prefix
        q = Q(**{f"{p}topic__campaign": campaign}) & ~Q(**{f"{p}source": Judgment.Source.DUPLICATE})
        if self.phase != "all":
            q &= Q(**{f"{p}phase": self.phase})
        if self.round is not None:
            round_topics = Assignment.objects.filter(
                topic__campaign=campaign, phase=Phase.TRAINING, round=self.round
            ).values("topic_id")
            q &= Q(**{f"{p}topic__in": round_topics})
        if self.topic is not None:
            q &= Q(**{f"{p}topic__number": self.topic})
        return q

    def describe(self) -> str:
        """The scope in words, for headings, such as: training round 2, topic 7."""
        text = {"all": "all phases", Phase.TRAINING: "training", Phase.MAIN: "main phase"}[self.phase]
        if self.round is not None:
            text += f" round {self.round}"
        if self.topic is not None:
            text += f", topic {self.topic}"
        return text


def training_rounds(campaign: Campaign) -> list[int]:
    """The training rounds a scope may pick: those with assignments, and the open one while training runs."""
    rounds = set(
        Assignment.objects.filter(topic__campaign=campaign, phase=Phase.TRAINING).values_list("round", flat=True)
    )
    if campaign.phase in (Phase.SETUP, Phase.TRAINING):
        rounds.add(campaign.training_round)
    return sorted(rounds)


def default_phase(campaign: Campaign) -> str:
    """The phase to look at when none is asked for: training until the main phase starts, then main, all once closed."""
    after_training: dict[str, str] = {Phase.MAIN: Phase.MAIN, Phase.CLOSED: "all"}
    return after_training.get(campaign.phase, Phase.TRAINING)


def requested_scope(campaign: Campaign, query: Mapping[str, str]) -> tuple[Scope, str]:
    """The scope a page's query string asks for (`phase`, `round`, `topic`), with "" as the second item; or the
    campaign's default scope with the reason the asked one makes no sense, for the page to show. A round is read
    only in training, so a link that keeps `round` while switching the phase still works."""
    phase = query.get("phase") or default_phase(campaign)
    round_ = query.get("round", "")
    try:
        return Scope(
            phase,
            round=int(round_) if round_.isdigit() and phase == Phase.TRAINING else None,
            topic=query.get("topic") or None,
        ), ""
    except AgreementError as exc:
        return Scope(default_phase(campaign)), str(exc)


# --------------------------------------------------------------------------------------------------------------
# Agreement


@dataclass(frozen=True)
class TopicFigures:
    """One topic's panel coefficients on one dimension (its pairwise kappas: compute the topic's own scope)."""

    number: str
    n_items: int
    fleiss: float | None
    alpha: float | None
    binary_kappa: float | None


@dataclass(frozen=True)
class DimensionFigures:
    name: str
    title: str  # the scheme's title of the dimension, for headings
    report: DimensionAgreement
    assessors: list[RaterAgreement]  # each assessor's mean pairwise kappa
    flagged: list[RaterAgreement]
    topics: list[TopicFigures]
    # A multilingual classification campaign's figures per language of its items (Document.metadata["language"]):
    # agreement on comments one coder reads in another language is not the same thing, and the lab's gold rests on it.
    languages: dict[str, DimensionAgreement] = field(default_factory=dict)

    def to_json(self) -> dict:
        report = self.report
        flagged = {r.rater for r in self.flagged}
        return {
            "ac1": report.ac1,
            "by_language": {
                language: {
                    "n_items": r.n_items, "fleiss": r.fleiss, "alpha": r.alpha, "ac1": r.ac1,
                    "cohen": [{"a": p.rater_a, "b": p.rater_b, "n_items": p.n_items, "unweighted": p.unweighted} for p in r.cohen],
                }
                for language, r in self.languages.items()
            },
            "ordinal": report.ordinal,
            "categories": list(report.categories),
            "n_items": report.n_items,
            "cohen": [
                {"a": p.rater_a, "b": p.rater_b, "n_items": p.n_items, "unweighted": p.unweighted, "weighted": p.linear}
                for p in report.cohen
            ],
            "weights": "linear" if report.ordinal else None,
            "fleiss": report.fleiss,
            "fleiss_items": report.fleiss_items,
            "alpha": report.alpha,
            "alpha_level": "ordinal" if report.ordinal else "nominal",
            "binary_kappa": report.binary_kappa,
            "confusion": [{"a": a, "b": b, "matrix": m} for (a, b), m in report.confusion.items()],
            "assessors": [
                {"assessor": r.rater, "mean_kappa": r.mean_kappa, "n_pairs": r.n_pairs, "flagged": r.rater in flagged}
                for r in self.assessors
            ],
            "topics": {
                t.number: {"n_items": t.n_items, "fleiss": t.fleiss, "alpha": t.alpha, "binary_kappa": t.binary_kappa}
                for t in self.topics
            },
        }


@dataclass(frozen=True)
class Agreement:
    campaign: str
    scope: Scope
    threshold: float
    dimensions: dict[str, DimensionFigures]

    @property
    def n_items(self) -> int:
        return max((d.report.n_items for d in self.dimensions.values()), default=0)

    @property
    def flagged(self) -> dict[str, list[tuple[str, float | None]]]:
        """assessor -> [(dimension, mean kappa)] on every dimension where they fall below the threshold."""
        out: dict[str, list[tuple[str, float | None]]] = defaultdict(list)
        for name, figures in self.dimensions.items():
            for rater in figures.flagged:
                out[cast(str, rater.rater)].append((name, rater.mean_kappa))  # raters are usernames here
        return dict(sorted(out.items()))

    def topic_table(self) -> list[dict]:
        """One row per topic with each dimension's figures side by side (None where a dimension lacks the topic)."""
        rows: dict[str, dict] = {}
        for name, dim in self.dimensions.items():
            for topic in dim.topics:
                rows.setdefault(topic.number, {"number": topic.number, "n_items": 0, "dims": {}})
                rows[topic.number]["n_items"] = max(rows[topic.number]["n_items"], topic.n_items)
                rows[topic.number]["dims"][name] = topic
        return [{**row, "cells": [row["dims"].get(name) for name in self.dimensions]} for row in rows.values()]

    def to_json(self) -> dict:
        return {
            "campaign": self.campaign,
            "phase": self.scope.phase,
            "round": self.scope.round,
            "topic": self.scope.topic,
            "threshold": self.threshold,
            "flag_rule": FLAG_RULE,
            "dimensions": {name: figures.to_json() for name, figures in self.dimensions.items()},
        }


@dataclass(frozen=True)
class _Shared:
    """The scope's judgments on items that two or more assessors judged, and the names behind their ids."""

    rows: list[tuple]  # (topic id, document id, assessor id, then each dimension's value or None), label_columns
    topics: dict[int, str]  # topic id -> number, in campaign order
    assessors: dict[int, str]  # assessor id -> username


def label_columns(scheme: LabelScheme) -> list[Func]:
    """One expression per dimension of the scheme, in its order: a judgment's value there, None where it has none,
    an int for graded and yes/no dimensions. Read as columns rather than as the labels object: decoding 100,000
    JSON objects took three times as long as the rest of the read (bench/agreement_db.py)."""
    return [
        KeyTextTransform(d.name, "labels") if d.value_type is str else Cast(KeyTextTransform(d.name, "labels"), IntegerField())
        for d in scheme.dimensions
    ]


def _shared(campaign: Campaign, scope: Scope) -> _Shared:
    """Three queries: the judgments (ids only: with the names joined in, reading 100,000 took twice as long), then the
    topic numbers and the assessors' names. Each item lists its assessors by account id, so the pairs of a
    report come in the order the accounts were created, the same every time."""
    shared = (
        Judgment.objects.filter(scope.judgments(campaign))
        .annotate(raters=Window(Count("pk"), partition_by=[F("topic_id"), F("document_id")]))
        .filter(raters__gte=2)
    )
    rows = list(
        shared.order_by("topic_id", "document_id", "assessor_id").values_list(
            "topic_id", "document_id", "assessor_id", *label_columns(campaign.label_scheme)
        )
    )
    topics = dict(Topic.objects.filter(campaign=campaign).order_by("position", "number").values_list("pk", "number"))
    assessors = dict(User.objects.filter(pk__in={row[2] for row in rows}).values_list("pk", "username"))
    return _Shared(rows=rows, topics=topics, assessors=assessors)


def dimensions_of(campaign: Campaign) -> list[str]:
    """The label dimensions of the campaign's scheme, in its order."""
    return list(campaign.label_scheme.names)


def _ratings(shared: _Shared, scheme: LabelScheme) -> dict[str, dict[tuple, dict[str, Label]]]:
    """dimension -> (topic id, document id) -> assessor -> label, in the scheme's order. A label that was not given
    is absent, except where the dimension's `otherwise` stands for it (scheme.value_for_files, which then also
    gives an asked but blank one its `unanswered`): assessors who both found a causal document's direction wrong
    agree that it is not relevant, as the qrels say."""
    names = shared.assessors
    every: dict[str, dict[tuple, dict[str, Label]]] = {name: {} for name in scheme.names}
    columns = list(every.values())
    filled = [d.name for d in scheme.dimensions if d.otherwise is not None]
    for topic_id, document_id, assessor_id, *values in shared.rows:
        item, who = (topic_id, document_id), names[assessor_id]
        for ratings, value in zip(columns, values):
            if value is not None:
                ratings.setdefault(item, {})[who] = value
        if filled:
            labels = _labels(scheme, values)
            for name in filled:
                if name not in labels and (value := scheme.value_for_files(name, labels)) is not None:
                    every[name].setdefault(item, {})[who] = value
    return every


def _labels(scheme: LabelScheme, values: Sequence[Label | None]) -> dict[str, Label]:
    """A row's values (label_columns) as labels: dimension -> value, without the dimensions it has none of."""
    return {name: value for name, value in zip(scheme.names, values) if value is not None}


def _topic_figures(
    items: dict[tuple, dict[str, Label]], topics: dict[int, str], *, ordinal: bool, categories: Sequence
) -> list[TopicFigures]:
    """Per-topic panel coefficients through the metric functions one by one.

    A full agreement_report per topic would also tabulate every pair of assessors. For 10 assessors and 100
    topics that is 4,500 confusion tables per dimension, about ten times the cost of the whole campaign's report.
    The per-topic table shows only these three coefficients, and a topic's own scope has its pairs.
    """
    by_topic: dict[int, dict[tuple, dict[str, Label]]] = defaultdict(dict)
    for item, labels in items.items():
        by_topic[item[0]][item] = labels
    relevant = {label: binary_collapse(label) for label in categories} if ordinal else {}
    figures = []
    for topic_id, number in topics.items():
        topic_items = by_topic.get(topic_id, {})
        n_items = sum(len(labels) >= 2 for labels in topic_items.values())
        if not n_items:
            continue
        binary = None
        if ordinal:
            collapsed = {item: {a: relevant[v] for a, v in labels.items()} for item, labels in topic_items.items()}
            binary = fleiss_kappa(collapsed, categories=(0, 1))
        figures.append(
            TopicFigures(
                number=number,
                n_items=n_items,
                fleiss=fleiss_kappa(topic_items, categories=categories),
                alpha=krippendorff_alpha(topic_items, level="ordinal" if ordinal else "nominal", categories=categories),
                binary_kappa=binary,
            )
        )
    return figures


def _agreement(campaign: Campaign, scope: Scope, shared: _Shared, kind: str | None) -> Agreement:
    scheme = campaign.label_scheme
    figures = {}
    languages = _item_languages(campaign, shared) if campaign.is_classification else {}
    for name, items in _ratings(shared, scheme).items():
        if kind is not None and name != kind:
            continue
        dimension = scheme.dimension(name)
        ordinal, categories = dimension.ordinal, scheme.values(name)
        report = agreement_report(items, ordinal=ordinal, categories=categories)
        by_language: dict[str, dict[tuple, dict[str, Label]]] = defaultdict(dict)
        for item, labels in items.items():
            if item[1] in languages:
                by_language[languages[item[1]]][item] = labels
        figures[name] = DimensionFigures(
            name=name,
            title=dimension.title,
            report=report,
            assessors=rater_agreement(report),
            flagged=flag_raters(report, threshold=campaign.agreement_threshold),
            topics=[] if scope.topic else _topic_figures(items, shared.topics, ordinal=ordinal, categories=categories),
            languages={
                language: agreement_report(by_language[language], ordinal=ordinal, categories=categories)
                for language in sorted(by_language)
            },
        )
    return Agreement(campaign=campaign.slug, scope=scope, threshold=campaign.agreement_threshold, dimensions=figures)


def _item_languages(campaign: Campaign, shared: _Shared) -> dict[int, str]:
    """document id -> the language of the item, for the items two or more coders labelled (one query)."""
    documents = {row[1] for row in shared.rows}
    return {
        pk: language
        for pk, language in Document.objects.filter(pk__in=documents).values_list("pk", "metadata__language")
        if isinstance(language, str)
    }


def compute_agreement(*, campaign: Campaign, scope: Scope, kind: str | None = None) -> Agreement:
    """Every agreement figure for the scope's judgments, overall and per topic, for every dimension of the scheme,
    or for the one named `kind` (SchemeError, a ValueError, for a name the scheme does not have)."""
    if kind is not None:
        campaign.label_scheme.dimension(kind)
    return _agreement(campaign, scope, _shared(campaign, scope), kind)


# --------------------------------------------------------------------------------------------------------------
# Disagreements, for the follow-up discussion


@dataclass(frozen=True)
class DisagreementRow:
    topic: str
    document_id: int
    doc_id: str
    title: str
    snippet: str
    labels: list[dict[str, Label] | None]  # per assessor (Disagreements.assessors order): their labels; None = not judged
    spread: dict[str, float]  # per dimension, 0 (all agree) to 1 (as far apart as the scale allows)

    @property
    def total(self) -> float:
        return sum(self.spread.values())


@dataclass(frozen=True)
class Disagreements:
    assessors: list[str]
    dimensions: list[str]
    page: Page[DisagreementRow]
    count: int


SNIPPET_CHARS = 280


def list_disagreements(
    *, campaign: Campaign, scope: Scope, order: str = "total", page: int | str = 1, per_page: int = 50
) -> Disagreements:
    """The documents on which the scope's assessors differ, furthest apart first.

    How far apart is metrics.agreement.disagreement, normalised per dimension of the scheme to 0–1, so on a graded
    0–2 scale 0 vs 2 is 1.0 and 1 vs 2 is 0.5, and two different categories are 1.0. ``order`` sorts by one
    dimension (its name) or by the sum over all of them ("total"). Ties keep
    topic and document order. Documents are read for the requested page only, with the first few hundred
    characters of the body for the snippet.
    """
    dimensions = dimensions_of(campaign)
    if order != "total" and order not in dimensions:
        raise AgreementError(f"cannot sort by {order!r}: expected total or one of {', '.join(dimensions)}")
    shared = _shared(campaign, scope)
    scheme = campaign.label_scheme
    ratings = _ratings(shared, scheme)
    scales = [(name, scheme.dimension(name).ordinal, scheme.values(name)) for name in dimensions]
    assessors = sorted(shared.assessors.values())
    column = {assessor_id: assessors.index(name) for assessor_id, name in shared.assessors.items()}
    items: dict[tuple, list] = {}
    for topic_id, document_id, assessor_id, *values in shared.rows:
        items.setdefault((topic_id, document_id), [None] * len(assessors))[column[assessor_id]] = values
    rank = {topic_id: i for i, topic_id in enumerate(shared.topics)}
    found = []
    for key in sorted(items, key=lambda k: (rank[k[0]], k[1])):
        spread = {
            name: disagreement(ratings[name].get(key, {}), ordinal=ordinal, categories=categories)
            for name, ordinal, categories in scales
        }
        if any(spread.values()):
            found.append((shared.topics[key[0]], key[1], items[key], spread))
    sort_key = (lambda f: sum(f[3].values())) if order == "total" else (lambda f: f[3][order])
    found.sort(key=sort_key, reverse=True)  # stable: ties keep topic and document order
    paginator = Paginator(found, per_page)
    current: Page[Any] = paginator.get_page(page)  # its tuples become DisagreementRows below
    documents = {
        d.pk: d
        for d in Document.objects.filter(pk__in=[f[1] for f in current.object_list])
        .annotate(head=Substr("body", 1, SNIPPET_CHARS * 4))
        .only("doc_id", "title", "is_html")
    }
    current.object_list = [
        DisagreementRow(
            topic=number, document_id=document_id, doc_id=documents[document_id].doc_id,
            title=documents[document_id].title, snippet=_snippet(documents[document_id]), spread=spread,
            labels=[None if values is None else _labels(scheme, values) for values in by_assessor],
        )
        for number, document_id, by_assessor, spread in current.object_list
    ]
    return Disagreements(assessors=assessors, dimensions=dimensions, page=current, count=len(found))


class _Head(TypedDict):
    head: str  # the start of the body, annotated by list_disagreements


def _snippet(document: WithAnnotations[Document, _Head]) -> str:
    """Plain text from the start of the body (tags, scripts and styles removed), cut at a word boundary."""
    # A space before every tag keeps the words of adjacent paragraphs apart once the tags are gone.
    text = html.unescape(nh3.clean(document.head.replace("<", " <"), tags=set())) if document.is_html else document.head
    text = " ".join(text.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    return text[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
