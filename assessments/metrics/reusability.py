"""Can the pool fairly judge a run that did not contribute to it? Leave-one-team-out, as in Zobel (SIGIR 1998)
and Voorhees (TREC overviews), and Kendall's τ between the system rankings.

Pure Python and numpy, no Django import. For each team, every judged document that only that team's runs
brought into the pool is removed from the qrels, and the team's runs are scored again: a run that loses much
was rewarded for documents no other run found, and a run from outside the pool would not have been. Kendall's τ
compares the ranking of all runs by their full scores with their ranking by these reduced scores (each run
scored without its own team's unique documents); TREC's rule of thumb calls a τ of 0.9 or more an equivalent
ranking (Voorhees 2000).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .evaluation import Topic, evaluate_rankings
from .measures import Measure, parse_measure
from .rank_correlation import competition_ranks, kendall_tau


@dataclass(frozen=True)
class RunReusability:
    run: str
    team: str
    pooled: bool  # the pool holds a document because of this run
    full: float
    reduced: float
    delta: float  # reduced − full
    rank_full: int
    rank_reduced: int
    judged_full: float  # judged@k against all judgments
    judged_reduced: float  # judged@k without the team's unique documents


@dataclass(frozen=True)
class ReusabilityReport:
    measure: str
    judged_depth: int
    runs: list[RunReusability]  # in full-score order
    kendall_tau: float | None
    unique: dict[str, int]  # team -> judged documents that only its runs brought into the pool

    @property
    def pooling_teams(self) -> list[str]:
        """The teams whose runs brought documents into the pool: with fewer than two, leaving one out leaves no
        judged document, so the figures without it say nothing about reusability."""
        return sorted({run.team for run in self.runs if run.pooled})


def leave_one_team_out(
    rankings: Mapping[str, Mapping[Topic, Sequence[str]]],
    teams: Mapping[str, str],
    qrels: Mapping[Topic, Mapping[str, int]],
    contributors: Mapping[tuple[Topic, str], frozenset[str]],
    *,
    measure: str | Measure = "nDCG@5",
) -> ReusabilityReport:
    """The report for runs ``rankings`` (run -> topic -> document ids best first, deep enough for the measure),
    each of team ``teams[run]``, against ``qrels``, with ``contributors`` mapping a pooled (topic, document) to
    the teams whose runs put it there. Judged documents missing from ``contributors`` (judged without being
    pooled, or imported) are kept for every team. A run is "pooled" when its team contributed to the pool; a
    run outside the pool loses nothing, and its judged@k shows how well the pool covers it.
    """
    measure = parse_measure(measure)
    unique: dict[str, list[tuple[Topic, str]]] = {team: [] for team in set(teams.values())}
    for (topic, doc), sources in contributors.items():
        if len(sources) == 1 and doc in qrels.get(topic, {}):
            (team,) = sources
            unique.setdefault(team, []).append((topic, doc))
    contributing = {team for sources in contributors.values() for team in sources}

    full, reduced = {}, {}
    for run, by_topic in rankings.items():
        full[run] = evaluate_rankings(by_topic, qrels, measure=measure)
        removed = unique.get(teams[run], [])
        reduced[run] = evaluate_rankings(by_topic, _without(qrels, removed), measure=measure) if removed else full[run]
    runs = sorted(rankings, key=lambda run: (-full[run].mean, run))
    full_scores = [full[run].mean for run in runs]
    reduced_scores = [reduced[run].mean for run in runs]
    rows = [
        RunReusability(
            run=run, team=teams[run], pooled=teams[run] in contributing,
            full=full[run].mean, reduced=reduced[run].mean, delta=reduced[run].mean - full[run].mean,
            rank_full=rank_full, rank_reduced=rank_reduced,
            judged_full=full[run].judged_at_k, judged_reduced=reduced[run].judged_at_k,
        )
        for run, rank_full, rank_reduced in zip(runs, competition_ranks(full_scores), competition_ranks(reduced_scores))
    ]
    return ReusabilityReport(
        measure=str(measure), judged_depth=measure.judged_depth, runs=rows,
        kendall_tau=kendall_tau(full_scores, reduced_scores),
        unique={team: len(docs) for team, docs in sorted(unique.items())},
    )


def _without(qrels: Mapping[Topic, Mapping[str, int]], removed: list[tuple[Topic, str]]) -> dict:
    """``qrels`` less the (topic, document) pairs in ``removed``; untouched topics are shared, not copied."""
    by_topic: dict[Topic, set[str]] = {}
    for topic, doc in removed:
        by_topic.setdefault(topic, set()).add(doc)
    return {
        topic: {doc: label for doc, label in labels.items() if doc not in by_topic[topic]} if topic in by_topic else labels
        for topic, labels in qrels.items()
    }
