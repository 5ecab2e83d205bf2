"""Pool reusability for a campaign: leave-one-team-out over the pool's recorded sources (metrics.reusability does
the arithmetic), for the `reusability` command and page.

A pool source records which run put a pool entry there, so "documents only team T brought in" is read from the
database, not re-derived from the runs: it is what was actually pooled, at whatever depth and by whichever
strategy. Queries: those of evaluation.prepare and read_rankings, plus one for the sources.
"""

from __future__ import annotations

from assessments.metrics.reusability import ReusabilityReport, leave_one_team_out
from assessments.models import Campaign, PoolSource
from assessments.services.evaluation import measured_kind, prepare, read_rankings


def team_of(tag: str, team: str) -> str:
    """A run's team for leave-one-team-out: its team, or itself when it has none (as best_per_team counts it)."""
    return team or tag


def pool_reusability(
    *,
    campaign: Campaign,
    measure: str = "nDCG@5",
    kind: str = "",
    order: str = "score",
    trec_eval: int = 10,
    phase: str = "main",
    rule: str = "majority",
) -> ReusabilityReport:
    """Every run scored against all current ``kind`` judgments (a graded dimension; empty: the scheme's primary
    one) and against them less its team's unique pooled documents, Kendall's τ between the two system rankings,
    and judged@k both ways, for every run of the campaign (runs that never reached the pool included).
    EvaluationError as evaluate_runs."""
    kind = measured_kind(campaign, kind)
    setup = prepare(campaign=campaign, measure=measure, kinds=(kind,), order=order, trec_eval=trec_eval, phase=phase,
                    rule=rule)
    lines = read_rankings(setup, (trec_eval,))
    teams = {run_id: team_of(tag, team) for run_id, tag, team, _ in setup.runs}
    contributors: dict[tuple[str, str], set[str]] = {}
    sources = PoolSource.objects.filter(entry__topic__campaign=campaign).values_list(
        "entry__topic_id", "entry__document__doc_id", "run_id"
    )
    for topic_id, doc, run_id in sources.iterator(chunk_size=5000):
        if run_id in teams:
            contributors.setdefault((setup.numbers[topic_id], doc), set()).add(teams[run_id])
    tags = {run_id: tag for run_id, tag, _, _ in setup.runs}
    rankings = {tags[run_id]: lines.of(run_id, trec_eval) for run_id in tags}
    return leave_one_team_out(
        rankings, {tags[run_id]: team for run_id, team in teams.items()}, setup.qrels[kind],
        {key: frozenset(found) for key, found in contributors.items()}, measure=setup.measure,
    )
