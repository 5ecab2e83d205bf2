"""What a machine judge does to the ranking of runs: the leaderboard under the assessors' labels (human), the
judge's (machine) and the assessors' with the judge's in their holes (hybrid), side by side, for the
`judge_impact` command, its page and its endpoint.

Model judges agree with people well over a whole leaderboard and poorly among its best runs, and a run built to
please the judge gains (Clarke & Dietz 2024, arXiv 2412.17156): so beside Kendall's τ the report gives τ among the
top k runs and τ_AP (metrics.rank_correlation), each run's move, and the runs the judge favours. Whether the
judge's disagreement is spread evenly or sits on some topics shows in the per-topic agreement.

The three qrels are services.qrels_sources' (the same `export_qrels --sources` writes), on the topics with human
labels of the phase and rule asked; every run is scored against each by evaluation's own reading of the rankings
and metrics.evaluation's arithmetic, so the human column is the leaderboard's. Queries: those of
evaluation.prepare and one reading of the rankings, plus the judge and its labels (qrels_sources): a fixed number
whatever the number of runs and topics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median
from typing import cast

from assessments.formats.qrels import topic_sort_key
from assessments.metrics.agreement import cohen_kappa
from assessments.metrics.evaluation import evaluate_rankings
from assessments.metrics.rank_correlation import competition_ranks, kendall_tau, tau_ap, top_k_tau
from assessments.models import Campaign
from assessments.services.evaluation import EvaluationError, measured_kind, prepare, rankings_by_run
from assessments.services.qrels_sources import find_judge, hybrid_qrels, machine_qrels

Graded = dict[str, dict[str, int]]  # topic number -> doc id -> label of a graded or yes/no dimension
ESTIMATES = ("machine", "hybrid")  # the leaderboards compared with the human one
# Places a run must move to be flagged: a swap of neighbours is noise, three places is a different story.
MOVED = 3
# How much higher than humans the judge must grade a run's top documents, as a share of the dimension's scale
# (half a grade of relevance 0–2), both on average and beyond the typical run's, for the run to count as favoured.
FAVOURED_SHARE = 0.25


@dataclass(frozen=True)
class RunImpact:
    run: str
    team: str
    human: float
    machine: float
    hybrid: float
    rank_human: int
    rank_machine: int
    rank_hybrid: int
    holes: int  # documents of its top k (judged@k's k) on the report's topics with no human label
    filled: int  # of those, the ones the judge labelled (the hybrid qrels fill them)
    compared: int  # documents of its top k with both a human and a machine label
    bias: float | None  # mean machine − human label over those; None with none
    favoured: bool = False

    @property
    def shift_machine(self) -> int:
        """Places lost (positive) or won (negative) under the machine qrels."""
        return self.rank_machine - self.rank_human

    @property
    def shift_hybrid(self) -> int:
        return self.rank_hybrid - self.rank_human

    @property
    def machine_moved(self) -> bool:
        return abs(self.shift_machine) >= MOVED

    @property
    def hybrid_moved(self) -> bool:
        return abs(self.shift_hybrid) >= MOVED

    @property
    def moved(self) -> bool:
        return self.machine_moved or self.hybrid_moved


@dataclass(frozen=True)
class TopicAgreement:
    """Human against machine labels of one topic's documents (or all of them: topic "all") judged by both."""

    topic: str
    documents: int
    kappa: float | None  # Cohen's: linearly weighted for graded dimensions, as the agreement page; None: undefined
    exact: float | None  # share of documents with the same label
    bias: float | None  # mean machine − human label


@dataclass(frozen=True)
class JudgeImpact:
    campaign: str
    judge: str
    model: str
    kind: str
    measure: str
    judged_depth: int
    top_k: int
    phase: str
    rule: str
    runs: list[RunImpact]  # human leaderboard order (ties by run tag)
    topics: list[TopicAgreement]
    agreement: TopicAgreement
    kendall_tau: dict[str, float | None]  # estimate -> against the human leaderboard
    top_k_tau: dict[str, float | None]
    tau_ap: dict[str, float | None]
    favoured_margin: float
    qrels: dict[str, Graded] = field(repr=False)  # source -> what its column was scored against

    @property
    def moved(self) -> list[str]:
        return [row.run for row in self.runs if row.moved]

    @property
    def favoured(self) -> list[str]:
        return [row.run for row in self.runs if row.favoured]

    @property
    def holes_filled(self) -> int:
        """Documents the hybrid qrels take from the judge."""
        return sum(len(labels) for labels in self.qrels["hybrid"].values()) - sum(len(labels) for labels in self.qrels["human"].values())

    def as_json(self) -> dict:
        return {
            "campaign": self.campaign, "judge": self.judge, "model": self.model, "kind": self.kind, "measure": self.measure,
            "judged_depth": self.judged_depth, "top_k": self.top_k, "phase": self.phase, "rule": self.rule,
            "kendall_tau": self.kendall_tau, "top_k_tau": self.top_k_tau, "tau_ap": self.tau_ap,
            "labels": {source: sum(len(labels) for labels in qrels.values()) for source, qrels in self.qrels.items()},
            "holes_filled": self.holes_filled, "moved": self.moved, "favoured": self.favoured,
            "favoured_margin": self.favoured_margin,
            "agreement": _agreement_json(self.agreement),
            "topics": [{"topic": row.topic, **_agreement_json(row)} for row in self.topics],
            "runs": [
                {
                    "run": row.run, "team": row.team, "human": row.human, "machine": row.machine, "hybrid": row.hybrid,
                    "rank_human": row.rank_human, "rank_machine": row.rank_machine, "rank_hybrid": row.rank_hybrid,
                    "shift_machine": row.shift_machine, "shift_hybrid": row.shift_hybrid, "moved": row.moved,
                    "holes": row.holes, "filled": row.filled, "compared": row.compared, "bias": row.bias,
                    "favoured": row.favoured,
                }
                for row in self.runs
            ],
        }


def _agreement_json(row: TopicAgreement) -> dict:
    return {"documents": row.documents, "kappa": row.kappa, "exact": row.exact, "bias": row.bias}


def judge_impact(
    *,
    campaign: Campaign,
    judge: str | None = None,
    measure: str = "nDCG@5",
    kind: str = "",
    top_k: int = 10,
    order: str = "score",
    trec_eval: int = 10,
    phase: str = "main",
    rule: str = "majority",
) -> JudgeImpact:
    """The report for machine judge ``judge`` (default: the campaign's newest) on dimension ``kind`` (a graded or
    yes/no one; default the scheme's primary), every run scored by ``measure``; ``order``, ``trec_eval``, ``phase``
    and ``rule`` as evaluate_runs reads them (they make the human qrels and the topics).

    ``top_k`` is the number of runs, best by the human leaderboard, that top-k τ compares; judged@k's k (the
    measure's) is the number of each run's documents that holes, filled holes and the bias are counted on.

    A run is *favoured by the machine judge* when the judge grades the top documents of that run higher than the
    assessors do by at least ``FAVOURED_SHARE`` of the dimension's scale (max − min value) on average (its bias,
    over documents with both labels, at least k of them), and by that much more than the median bias of the
    other runs: the judge likes what this run retrieves more than what the others retrieve, relative to people.

    ExportError (EvaluationError among them) names what cannot be reported: no such judge, measure or dimension,
    no human labels, or no machine label on the topics with human labels.
    """
    kind = measured_kind(campaign, kind)
    if top_k < 2:
        raise EvaluationError(f"τ among the top k runs needs k of 2 or more, not {top_k}")
    machine_judge = find_judge(campaign, judge)
    setup = prepare(campaign=campaign, measure=measure, kinds=(kind,), order=order, trec_eval=trec_eval, phase=phase, rule=rule)
    human = setup.qrels[kind]
    if not human:
        raise EvaluationError(f"campaign {campaign.slug} has no {kind} labels of the {phase} phase: nothing to compare "
                              f"judge {machine_judge.name} with")
    # A measured kind's labels are integers (measured_kind refuses a category).
    machine = cast(Graded, machine_qrels(machine_judge, kind, {i: n for i, n in setup.numbers.items() if n in human}))
    if not machine:
        raise EvaluationError(f"judge {machine_judge.name} has no {kind} labels of the topics with {phase}-phase "
                              f"labels: run it first (machine_judge {campaign.slug} --name {machine_judge.name})")
    qrels: dict[str, Graded] = {"human": human, "machine": machine, "hybrid": hybrid_qrels(human, machine)}

    depth = setup.measure.judged_depth
    scores: dict[str, dict[int, float]] = {source: {} for source in qrels}
    tops: dict[int, tuple[int, int, list[int]]] = {}  # run id -> holes, filled, machine − human differences
    for run_id, docs, _ in rankings_by_run(setup, (trec_eval,)):
        ranked = docs[trec_eval]
        for source, labels in qrels.items():
            scores[source][run_id] = evaluate_rankings(ranked, labels, measure=setup.measure).mean
        tops[run_id] = _top_documents(ranked, human, machine, depth)

    values = cast(tuple[int, ...], campaign.label_scheme.values(kind))
    margin = FAVOURED_SHARE * (max(values) - min(values))
    run_ids = [run[0] for run in setup.runs]  # by tag: the order that breaks ties in τ_AP and top-k τ
    column = {source: [scores[source].get(run_id, 0.0) for run_id in run_ids] for source in qrels}
    ranks = {source: competition_ranks(column[source]) for source in qrels}
    biases = {run_id: math.fsum(diffs) / len(diffs) for run_id, (_, _, diffs) in tops.items() if len(diffs) >= depth}

    rows = []
    for i, (run_id, tag, team, _) in enumerate(setup.runs):
        holes, filled, diffs = tops.get(run_id, (0, 0, []))
        others = [value for other, value in biases.items() if other != run_id]
        favoured = run_id in biases and biases[run_id] >= margin + max(0.0, median(others) if others else 0.0)
        rows.append(RunImpact(
            run=tag, team=team, human=column["human"][i], machine=column["machine"][i], hybrid=column["hybrid"][i],
            rank_human=ranks["human"][i], rank_machine=ranks["machine"][i], rank_hybrid=ranks["hybrid"][i],
            holes=holes, filled=filled, compared=len(diffs), bias=math.fsum(diffs) / len(diffs) if diffs else None,
            favoured=favoured,
        ))
    rows.sort(key=lambda row: (row.rank_human, row.run))

    ordinal = campaign.label_scheme.dimension(kind).ordinal
    both = {topic: [(label, machine[topic][doc]) for doc, label in labels.items() if doc in machine.get(topic, {})]
            for topic, labels in human.items()}  # topic -> (human, machine) of each document both labelled
    return JudgeImpact(
        campaign=campaign.slug, judge=machine_judge.name, model=machine_judge.model, kind=kind, measure=str(setup.measure),
        judged_depth=depth, top_k=top_k, phase=phase, rule=str(setup.rule), runs=rows,
        topics=[_agreement(topic, both[topic], values=values, ordinal=ordinal) for topic in sorted(both, key=topic_sort_key)],
        agreement=_agreement("all", [pair for pairs in both.values() for pair in pairs], values=values, ordinal=ordinal),
        kendall_tau={source: kendall_tau(column["human"], column[source]) for source in ESTIMATES},
        top_k_tau={source: top_k_tau(column["human"], column[source], top_k) for source in ESTIMATES},
        tau_ap={source: tau_ap(column[source], column["human"]) for source in ESTIMATES},
        favoured_margin=margin, qrels=qrels,
    )


def _top_documents(ranked: dict[str, list[str]], human: Graded, machine: Graded, depth: int) -> tuple[int, int, list[int]]:
    """A run's holes and filled holes in its top ``depth`` on the human qrels' topics, and machine − human for each
    document there with both labels."""
    holes = filled = 0
    diffs = []
    for topic, labels in human.items():
        guessed = machine.get(topic, {})
        for doc in ranked.get(topic, ())[:depth]:
            if doc in labels:
                if doc in guessed:
                    diffs.append(guessed[doc] - labels[doc])
            else:
                holes += 1
                filled += doc in guessed
    return holes, filled, diffs


def _agreement(topic: str, pairs: list[tuple], *, values: tuple, ordinal: bool) -> TopicAgreement:
    if not pairs:
        return TopicAgreement(topic=topic, documents=0, kappa=None, exact=None, bias=None)
    people, model = [h for h, _ in pairs], [m for _, m in pairs]
    return TopicAgreement(
        topic=topic, documents=len(pairs),
        kappa=cohen_kappa(people, model, weights="linear" if ordinal else None, categories=values),
        exact=sum(h == m for h, m in pairs) / len(pairs),
        bias=math.fsum(m - h for h, m in pairs) / len(pairs),
    )
