"""Two runs side by side: per-topic differences in a measure, and for one topic both top-k lists with their
labels. Serves the run comparison page; the numbers are evaluation's."""

from __future__ import annotations

from dataclasses import dataclass

from assessments.formats.qrels import topic_sort_key
from assessments.metrics import significance
from assessments.metrics.evaluation import evaluate_rankings
from assessments.models import Campaign, Run
from assessments.services.evaluation import EvaluationError, measured_kind, prepare, read_rankings


@dataclass(frozen=True)
class TopicDifference:
    topic: str
    a: float | None  # None: the run has no line for this judged topic
    b: float | None
    diff: float  # a − b, a missing score counted as 0


@dataclass(frozen=True)
class ListedDocument:
    position: int
    doc: str
    label: int | None  # None: unjudged
    in_other: bool  # the other run's list holds it too


@dataclass(frozen=True)
class RunComparison:
    measure: str
    depth: int  # the lists' length (the measure's cutoff, or judged@k's)
    mean_a: float
    mean_b: float
    topics: list[TopicDifference]  # largest a − b first
    topic: str | None  # the topic whose lists are shown
    list_a: list[ListedDocument]
    list_b: list[ListedDocument]
    common: int  # topics both runs answer: the paired tests' sample
    p_t: float | None  # two-sided paired t-test on them (None: no common topic)
    p_permutation: float | None  # two-sided paired randomisation test (seeded, as the leaderboard's)


def compare_two_runs(
    *,
    campaign: Campaign,
    run_a: Run,
    run_b: Run,
    measure: str = "nDCG@5",
    kind: str = "",
    topic: str | None = None,
    order: str = "score",
    trec_eval: int = 10,
    phase: str = "main",
    rule: str = "majority",
) -> RunComparison:
    """``run_a`` against ``run_b`` (both of ``campaign``) by ``measure`` on ``kind`` labels (a graded dimension;
    empty: the scheme's primary one), and, for ``topic``, their first k documents with each one's label.
    EvaluationError for options evaluate_runs refuses or a topic without judgments."""
    if run_a.campaign_id != campaign.id or run_b.campaign_id != campaign.id:
        raise EvaluationError("both runs must belong to the campaign")
    kind = measured_kind(campaign, kind)
    setup = prepare(campaign=campaign, measure=measure, kinds=(kind,), order=order, trec_eval=trec_eval, phase=phase,
                    rule=rule, runs=Run.objects.filter(id__in=[run_a.id, run_b.id]))
    lines = read_rankings(setup, (trec_eval,))
    qrels = setup.qrels[kind]
    docs = {run.id: lines.of(run.id, trec_eval) for run in (run_a, run_b)}
    a = evaluate_rankings(docs[run_a.id], qrels, measure=setup.measure)
    b = evaluate_rankings(docs[run_b.id], qrels, measure=setup.measure)
    topics = [
        TopicDifference(topic=t, a=a.per_topic.get(t), b=b.per_topic.get(t),
                        diff=a.per_topic.get(t, 0.0) - b.per_topic.get(t, 0.0))
        for t in sorted(a.per_topic.keys() | b.per_topic.keys(), key=topic_sort_key)
    ]
    topics.sort(key=lambda row: row.diff, reverse=True)
    depth = setup.measure.judged_depth
    list_a: list[ListedDocument] = []
    list_b: list[ListedDocument] = []
    if topic is not None:
        if topic not in qrels:
            raise EvaluationError(f"topic {topic!r} has no {kind} judgments")
        labels = qrels[topic]
        head_a, head_b = docs[run_a.id].get(topic, [])[:depth], docs[run_b.id].get(topic, [])[:depth]
        list_a = [ListedDocument(i, doc, labels.get(doc), doc in head_b) for i, doc in enumerate(head_a, 1)]
        list_b = [ListedDocument(i, doc, labels.get(doc), doc in head_a) for i, doc in enumerate(head_b, 1)]
    # The pair's own tests, on the topics both answer (one pair: nothing to correct for).
    common = sorted(a.per_topic.keys() & b.per_topic.keys(), key=topic_sort_key)
    p_t = p_permutation = None
    if common:
        matrix = [[a.per_topic[t], b.per_topic[t]] for t in common]
        p_t = float(significance.paired_t_test(matrix, [(0, 1)])[0])
        p_permutation = float(significance.paired_permutation_test(matrix, [(0, 1)])[0])
    return RunComparison(measure=str(setup.measure), depth=depth, mean_a=a.mean, mean_b=b.mean, topics=topics,
                         topic=topic, list_a=list_a, list_b=list_b, common=len(common), p_t=p_t, p_permutation=p_permutation)
