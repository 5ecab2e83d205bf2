"""Helpers for the pooling tests: runs stored straight into Rankings (orders worked out in tests/rankings.py)."""

from assessments.models import Run, Topic
from assessments.services.pooling import PoolSpec
from tests.rankings import store_ranking


def depth(k: int, order: str = "both", runs=()) -> PoolSpec:
    """A depth-k build, of the given runs (all when none)."""
    return PoolSpec(strategy="depth", depth=k, order=order, runs=tuple(runs))


def add_run(campaign, tag: str, topics: dict[Topic, list[tuple[str, int, float]]]) -> Run:
    """Store a run: for each topic, its lines as (doc, rank, score)."""
    run = Run.objects.create(campaign=campaign, tag=tag, line_count=sum(len(lines) for lines in topics.values()))
    for topic, lines in topics.items():
        store_ranking(run, topic, lines)
    return run


def ranked(prefix: str, n: int, start_rank: int = 1) -> list[tuple[str, int, float]]:
    """n lines whose rank and score agree: prefix-001 first."""
    return [(f"{prefix}-{i:03d}", start_rank + i - 1, float(n - i)) for i in range(1, n + 1)]
