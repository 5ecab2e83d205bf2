"""Helpers for the pooling tests: runs written straight into RunEntry, with positions computed here.

Positions follow the rules stated in RunEntry's docstring and the README of the real Touché files, written out
independently of the code under test: rank column ascending, score descending, ties by document id descending.
"""

from assessments.models import Run, RunEntry, Topic


def rank_order(lines):
    """lines: (doc, rank, score) -> doc ids by the rank column (ascending), ties by doc id descending."""
    by_doc_desc = sorted(lines, key=lambda line: line[0], reverse=True)
    return [line[0] for line in sorted(by_doc_desc, key=lambda line: line[1])]


def score_order(lines):
    """trec_eval: score descending, ties by doc id descending."""
    return [line[0] for line in sorted(lines, key=lambda line: (line[2], line[0]), reverse=True)]


def add_run(campaign, tag: str, topics: dict[Topic, list[tuple[str, int, float]]]) -> Run:
    """Store a run: for each topic, its lines as (doc, rank, score)."""
    run = Run.objects.create(campaign=campaign, tag=tag, line_count=sum(len(lines) for lines in topics.values()))
    rows = []
    for topic, lines in topics.items():
        by_rank = {doc: i for i, doc in enumerate(rank_order(lines), 1)}
        by_score = {doc: i for i, doc in enumerate(score_order(lines), 1)}
        rows += [
            RunEntry(run=run, topic=topic, doc_id=doc, rank=rank, score=score,
                     rank_position=by_rank[doc], score_position=by_score[doc])
            for doc, rank, score in lines
        ]
    RunEntry.objects.bulk_create(rows, batch_size=5000)
    return run


def ranked(prefix: str, n: int, start_rank: int = 1) -> list[tuple[str, int, float]]:
    """n lines whose rank and score agree: prefix-001 first."""
    return [(f"{prefix}-{i:03d}", start_rank + i - 1, float(n - i)) for i in range(1, n + 1)]
