"""Whose labels a qrels file holds: the assessors' (human: what every export wrote before machine judges), one
machine judge's (machine), or the assessors' where they judged a document and the judge's for the rest (hybrid).

The judge-impact report (services.judge_impact) scores its three leaderboards against exactly these qrels, and
`export_qrels --sources` writes them, so any figure of the report can be checked with trec_eval on the file.

Machine and hybrid qrels cover the topics the human qrels (of the phase and rule asked) cover, no others: a mean
is taken over the topics of its qrels, so a machine label of a topic no assessor judged (a training topic beside
main-phase labels, a topic not started) would change which topics a leaderboard averages, not how its documents
are judged. Within those topics the machine qrels hold the judge's current label (its newest successful one) of
every document it labelled, read as files read a dimension (a conditional dimension's `otherwise` where the
judge's own label of the condition fails it).

Machine labels are never Judgments (models.machine); this module reads them for organisers' exports and the
report only. A machine or hybrid file is built in memory (the judge labels pooled documents, so it is the size
of the pool); the human file still streams.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar

from accounts.models import User
from assessments.formats.qrels import topic_sort_key
from assessments.models import Campaign, Document, MachineJudge, Topic
from assessments.services import exports
from assessments.services.exports import ExportError, Label
from assessments.services.machine_judges import current_labels

SOURCES = ("human", "machine", "hybrid")
Qrels = dict[str, dict[str, Label]]  # topic number -> doc id -> label
L = TypeVar("L", bound=Label)


def find_judge(campaign: Campaign, name: str | None = None) -> MachineJudge:
    """The campaign's judge called ``name``, or with no name its newest one (a campaign usually has one)."""
    judges = MachineJudge.objects.filter(campaign=campaign)
    judge = judges.filter(name=name).first() if name else judges.order_by("-created_at", "-pk").first()
    if judge is None and name:
        known = ", ".join(judges.order_by("name").values_list("name", flat=True)) or "none yet"
        raise ExportError(f"campaign {campaign.slug} has no machine judge named {name!r} (its judges: {known})")
    if judge is None:
        raise ExportError(f"campaign {campaign.slug} has no machine judge yet: add one and label the pool with "
                          f"machine_judge {campaign.slug} --endpoint URL --model NAME (or --local)")
    judge.campaign = campaign  # its scheme is read next: not a query again
    return judge


def machine_qrels(judge: MachineJudge, kind: str, topics: Mapping[int, str]) -> Qrels:
    """The judge's current labels of dimension ``kind`` on ``topics`` (topic id -> number), as a file reads them."""
    scheme = judge.campaign.label_scheme
    dimension = scheme.dimension(kind)
    # A dimension with an `otherwise` takes it where its condition fails: the judge asks such a dimension only where
    # its own label of the condition holds, so that label is read too.
    condition = dimension.condition.dimension if dimension.otherwise is not None and dimension.condition else None
    own = current_labels(judge, kind, topic_ids=list(topics))
    asked = current_labels(judge, condition, topic_ids=list(topics)) if condition else {}
    doc_ids = dict(Document.objects.filter(pk__in={doc for _, doc in own.keys() | asked.keys()}).values_list("pk", "doc_id"))
    found: Qrels = {}
    for topic_id, document_id in own.keys() | asked.keys():
        labels = {name: value for name, value in ((kind, own.get((topic_id, document_id))),
                                                  (condition, asked.get((topic_id, document_id)))) if name and value is not None}
        value = scheme.value_for_files(kind, labels)
        if value is not None:
            found.setdefault(topics[topic_id], {})[doc_ids[document_id]] = value
    return found


def hybrid_qrels(human: Mapping[str, Mapping[str, L]], machine: Mapping[str, Mapping[str, L]]) -> dict[str, dict[str, L]]:
    """The human label where there is one, the machine's for the rest, on the human qrels' topics."""
    return {topic: {**machine.get(topic, {}), **labels} for topic, labels in human.items()}


def export_qrels(
    *, campaign: Campaign, kind: str | None = None, phase: str = "main", rule: str = "majority", sources: str = "human",
    judge: str | None = None, created_by: User | None = None,
) -> exports.QrelsExport:
    """exports.export_qrels with the labels ``sources`` names; ``judge`` (machine and hybrid: default the newest
    judge) is the machine judge. The snapshot's rule and the export's audit record say which sources and judge."""
    if sources not in SOURCES:
        raise ExportError(f"unknown sources {sources!r}: use human, machine or hybrid")
    if sources == "human":
        if judge:
            raise ExportError("a judge goes with machine or hybrid sources; human qrels hold the assessors' labels only")
        return exports.export_qrels(campaign=campaign, kind=kind, phase=phase, rule=rule, created_by=created_by)
    dimension, parsed = exports.parse_options(campaign=campaign, kind=kind, phase=phase, rule=rule)
    machine_judge = find_judge(campaign, judge)

    def rows() -> Iterator[tuple[str, str, Label]]:
        human: Qrels = {}
        for topic, doc, label in exports.qrels_rows(campaign=campaign, kind=dimension.name, phase=phase, rule=parsed):
            human.setdefault(topic, {})[doc] = label
        topics = dict(Topic.objects.filter(campaign=campaign, number__in=list(human)).values_list("id", "number"))
        machine = machine_qrels(machine_judge, dimension.name, topics)
        return in_qrels_order(machine if sources == "machine" else hybrid_qrels(human, machine))

    # The snapshot's rule column names the labels' makers as "assessor:NAME" does: a machine judge's alone, or the
    # assessors' by the rule with the judge's for the holes. The column holds 64 characters; the audit record has
    # the full names.
    made_by = f"machine:{machine_judge.name}" if sources == "machine" else f"{parsed}+machine:{machine_judge.name}"
    return exports.QrelsExport(
        campaign=campaign, kind=dimension.name, phase=phase, rule=parsed, created_by=created_by, chunk_size=exports.QUERY_CHUNK,
        source=exports.LabelSource(rows=rows, rule=made_by if len(made_by) <= 64 else made_by[:63] + "…",
                                   details={"sources": sources, "judge": machine_judge.name, "model": machine_judge.model}),
    )


def in_qrels_order(qrels: Mapping[str, Mapping[str, Label]]) -> Iterator[tuple[str, str, Label]]:
    """(topic, doc, label) in the order exports write (topic_sort_key, then document id by code point, as the SQL
    export's byte-wise collation orders UTF-8)."""
    for topic in sorted(qrels, key=topic_sort_key):
        for doc in sorted(qrels[topic]):
            yield topic, doc, qrels[topic][doc]
