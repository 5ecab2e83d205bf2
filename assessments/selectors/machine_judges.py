"""Machine judges as organisers and adjudicators read them: each judge with what its calls gave and cost, its labels
with their provenance, how its labels agree with the assessors', and the documents where the two differ enough to
be adjudicated.

The assessors' side of a comparison is evaluation.human_labels: per document, the majority of its assessors' labels
(both phases), read as the qrels read them, which is what the local judge is calibrated on. Only documents both sides
labelled on a dimension are compared. A judge's side is its current label (services.machine_judges.current_labels).

Every caller is an organiser's page or endpoint (access.get_campaign_for_organiser or _for_adjudicator): these reads
name the machine tables, so nothing here may be reached from an assessor's request (models.machine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from assessments.labels import Dimension, LabelScheme
from assessments.metrics.agreement import Label, cohen_kappa, krippendorff_alpha
from assessments.models import Campaign, Document, MachineJudge, MachineLabel, Topic
from assessments.services.evaluation import human_labels
from assessments.services.machine_judges import current_labels

OK, FAILED = MachineLabel.Status.OK, MachineLabel.Status.FAILED


def judges_of(campaign: Campaign) -> QuerySet[MachineJudge]:
    """The campaign's judges by name, each with `labelled` and `failed` (calls recorded) and the tokens they used."""
    return (
        MachineJudge.objects.filter(campaign=campaign)
        .annotate(
            labelled=Count("labels", filter=Q(labels__status=OK)), failed=Count("labels", filter=Q(labels__status=FAILED)),
            prompt_tokens=Coalesce(Sum("labels__prompt_tokens"), 0), completion_tokens=Coalesce(Sum("labels__completion_tokens"), 0),
        )
        .order_by("name")
    )


def labels_of(judge: MachineJudge, *, dimension: str = "", topic: str = "", status: str = "") -> QuerySet[MachineLabel]:
    """Every call the judge made, newest first, with its topic and document (not the document's text), optionally of
    one dimension, topic (by number) or status."""
    rows = MachineLabel.objects.filter(judge=judge).select_related("topic", "document").defer("document__body")
    if dimension:
        rows = rows.filter(dimension=dimension)
    if topic:
        rows = rows.filter(topic__number=topic)
    if status:
        rows = rows.filter(status=status)
    return rows.order_by("-id")


def askable(judge: MachineJudge) -> list[Dimension]:
    """The dimensions a run of the judge may ask: all of the scheme's for an endpoint; the local judge scores
    similarity, which grades but cannot pick a category."""
    dimensions = judge.campaign.label_scheme.dimensions
    return [d for d in dimensions if d.ordinal] if judge.is_local else list(dimensions)


# --------------------------------------------------------------------------------------------------------------
# Agreement with the assessors


@dataclass(frozen=True)
class Figures:
    """Cohen's kappa and Krippendorff's alpha of the assessors' majority against the judge, over `n_items` documents
    both labelled; None where undefined (nothing to compare, or one category only)."""

    n_items: int
    kappa: float | None
    weighted: float | None  # linearly weighted kappa, graded dimensions only
    alpha: float | None  # ordinal for graded dimensions, nominal otherwise


@dataclass(frozen=True)
class DimensionFigures:
    name: str
    title: str
    overall: Figures
    topics: dict[str, Figures]  # by topic number, in campaign order; topics with a pair only


@dataclass(frozen=True)
class JudgeAgreement:
    judge: str
    dimensions: list[DimensionFigures]

    def topic_rows(self) -> list[tuple[str, list[Figures | None]]]:
        """One row per topic (campaign order) with each dimension's figures, None where it has no pair there."""
        numbers = list(dict.fromkeys(number for d in self.dimensions for number in d.topics))
        return [(number, [d.topics.get(number) for d in self.dimensions]) for number in numbers]


def figures(pairs: Sequence[tuple[Label, Label]], *, dimension: Dimension) -> Figures:
    """The coefficients of (assessors, machine) label pairs, on the dimension's scale (its values in scheme order)."""
    human, machine = [h for h, _ in pairs], [m for _, m in pairs]
    scale = [v.value for v in dimension.values]
    ordinal = dimension.ordinal
    return Figures(
        n_items=len(pairs),
        kappa=cohen_kappa(human, machine, categories=scale),
        weighted=cohen_kappa(human, machine, weights="linear", categories=scale) if ordinal else None,
        alpha=krippendorff_alpha({i: {"assessors": h, "machine": m} for i, (h, m) in enumerate(pairs)},
                                 level="ordinal" if ordinal else "nominal", categories=scale),
    )


@dataclass(frozen=True)
class _Item:
    topic_id: int
    topic: str  # number
    document_id: int
    doc_id: str


class _Sides:
    """The assessors' majority labels of every dimension (read once) and, per judge, its current labels keyed by the
    same items: what agreement and routing compare."""

    def __init__(self, campaign: Campaign) -> None:
        self.scheme: LabelScheme = campaign.label_scheme
        self.topics = dict(Topic.objects.filter(campaign=campaign).order_by("position", "number").values_list("pk", "number"))
        self.human = {name: human_labels(campaign, name) for name in self.scheme.names}

    def pairs(self, judge: MachineJudge, topic: str | None = None) -> dict[_Item, dict[str, tuple[Label, Label]]]:
        """item -> dimension -> (assessors' majority, machine) where both have a label, in campaign topic order."""
        topic_ids = [pk for pk, number in self.topics.items() if number == topic] if topic is not None else None
        machine = {name: current_labels(judge, name, topic_ids=topic_ids) for name in self.scheme.names}
        documents = {pk for labels in machine.values() for _, pk in labels}
        doc_ids = dict(Document.objects.filter(pk__in=documents).values_list("pk", "doc_id"))
        rank = {pk: i for i, pk in enumerate(self.topics)}
        found: dict[_Item, dict[str, tuple[Label, Label]]] = {}
        for name, labels in machine.items():
            for (topic_id, document_id), value in labels.items():
                number, doc = self.topics[topic_id], doc_ids[document_id]
                human = self.human[name].get(number, {}).get(doc)
                if human is not None and value is not None:
                    found.setdefault(_Item(topic_id, number, document_id, doc), {})[name] = (human, value)
        return dict(sorted(found.items(), key=lambda kv: (rank[kv[0].topic_id], kv[0].document_id)))


def agreement(campaign: Campaign, judges: Sequence[MachineJudge]) -> dict[str, JudgeAgreement]:
    """Per judge (by name), the agreement of its labels with the assessors' majority, per dimension of the scheme,
    overall and per topic."""
    sides = _Sides(campaign)
    found = {}
    for judge in judges:
        pairs = sides.pairs(judge)
        dimensions = []
        for dimension in sides.scheme.dimensions:
            by_topic: dict[str, list[tuple[Label, Label]]] = {}
            for item, labels in pairs.items():
                if dimension.name in labels:
                    by_topic.setdefault(item.topic, []).append(labels[dimension.name])
            every = [pair for topic_pairs in by_topic.values() for pair in topic_pairs]
            dimensions.append(DimensionFigures(
                name=dimension.name, title=dimension.title, overall=figures(every, dimension=dimension),
                topics={number: figures(topic_pairs, dimension=dimension) for number, topic_pairs in by_topic.items()},
            ))
        found[judge.name] = JudgeAgreement(judge=judge.name, dimensions=dimensions)
    return found


# --------------------------------------------------------------------------------------------------------------
# Disagreements routed to adjudication


def gap(dimension: Dimension, human: Label, machine: Label) -> int:
    """How far apart two labels are: steps on a graded dimension's scale (positions in scheme order, so Touché 2020's
    −2 "spam" is one step below 0), and 1 for two different categories or answers."""
    if not dimension.ordinal:
        return int(human != machine)
    position = {v.value: i for i, v in enumerate(dimension.values)}
    return abs(position[human] - position[machine])


def routed(dimension: Dimension, human: Label, machine: Label, *, threshold: int) -> bool:
    """Whether the pair sends its document to adjudication: a graded dimension at `threshold` steps apart or more
    (Campaign.machine_disagreement), any other on any difference."""
    apart = gap(dimension, human, machine)
    return apart >= threshold if dimension.ordinal else apart > 0


@dataclass(frozen=True)
class MachineCase:
    """A document the judge and the assessors' majority disagree on, with both sides' labels and the model's reasons."""

    topic: str
    document_id: int
    doc_id: str
    title: str
    human: dict[str, Label]
    machine: dict[str, Label]
    reasons: dict[str, str]  # dimension -> what the model wrote before its answer
    apart: dict[str, float]  # dimension -> 0 (same) to 1 (as far apart as the scale allows), where both labelled
    routed_by: list[str]  # the dimensions that reach the campaign's threshold

    @property
    def total(self) -> float:
        return sum(self.apart.values())


def machine_disagreements(campaign: Campaign, judge: MachineJudge, *, topic: str | None = None) -> list[MachineCase]:
    """The documents where the judge's label of some dimension differs from the assessors' majority by the campaign's
    threshold or more (see `routed`), furthest apart first (the sum over dimensions of `apart`, normalised as the
    assessors' own disagreements are); ties keep topic and document order."""
    sides = _Sides(campaign)
    scheme = sides.scheme
    chosen = []
    for item, labels in sides.pairs(judge, topic).items():
        by = [name for name, (h, m) in labels.items()
              if routed(scheme.dimension(name), h, m, threshold=campaign.machine_disagreement)]
        if by:
            chosen.append((item, labels, by))
    titles = dict(Document.objects.filter(pk__in=[item.document_id for item, _, _ in chosen]).values_list("pk", "title"))
    reasons = _reasons(judge, [item for item, _, _ in chosen])
    cases = []
    for item, labels, by in chosen:
        apart = {}
        for name, (h, m) in labels.items():
            dimension = scheme.dimension(name)
            apart[name] = gap(dimension, h, m) / max(1, len(dimension.values) - 1) if dimension.ordinal else float(h != m)
        cases.append(MachineCase(
            topic=item.topic, document_id=item.document_id, doc_id=item.doc_id, title=titles.get(item.document_id, ""),
            human={n: h for n, (h, _) in labels.items()}, machine={n: m for n, (_, m) in labels.items()},
            reasons=reasons.get((item.topic_id, item.document_id), {}), apart=apart, routed_by=by,
        ))
    cases.sort(key=lambda case: case.total, reverse=True)  # stable: ties keep topic and document order
    return cases


def _reasons(judge: MachineJudge, items: Sequence[_Item]) -> dict[tuple[int, int], dict[str, str]]:
    """(topic id, document id) -> dimension -> the reason of the judge's current label there (its newest success)."""
    wanted = {(item.topic_id, item.document_id) for item in items}
    rows = MachineLabel.objects.filter(
        judge=judge, status=OK, topic_id__in={t for t, _ in wanted}, document_id__in={d for _, d in wanted}
    ).order_by("id").values_list("topic_id", "document_id", "dimension", "reason")
    found: dict[tuple[int, int], dict[str, str]] = {}
    for topic_id, document_id, dimension, reason in rows:
        if (topic_id, document_id) in wanted:
            found.setdefault((topic_id, document_id), {})[dimension] = reason  # newest last: it stays
    return found


def opinion(judge: MachineJudge, *, topic: Topic, document: Document) -> dict[str, MachineLabel]:
    """dimension -> the judge's current label of one document (its newest success), for the adjudication page."""
    rows = MachineLabel.objects.filter(judge=judge, topic=topic, document=document, status=OK).order_by("id")
    return {row.dimension: row for row in rows}


def routing_judge(campaign: Campaign, name: str = "") -> MachineJudge | None:
    """The judge whose disagreements a queue or case page follows: the one named, else the campaign's first by name;
    None when the campaign has no such judge."""
    found = MachineJudge.objects.filter(campaign=campaign).select_related("campaign").order_by("name")
    return (found.filter(name=name) if name else found).first()

