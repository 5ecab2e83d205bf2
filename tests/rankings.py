"""Stored runs (models.Ranking) for tests: written from hand-made lines and read back line by line.

The orders are worked out here, independently of the importer, from the rules in Ranking's docstring and the
README of the real Touché files: score descending with ties by document id descending (trec_eval 10), the same
with each score first rounded to a C float (trec_eval 9), and the rank column ascending with ties by document
id descending.
"""

import numpy as np

from assessments.models import Ranking


def score_order(lines):
    """lines: (doc, rank, score, …) -> the lines by score descending, ties by doc id descending."""
    return sorted(lines, key=lambda line: (line[2], line[0]), reverse=True)


def single_order(lines):
    """The lines by score as a C float (numpy's float32 rounds the same way) descending, ties by doc id descending."""
    return sorted(lines, key=lambda line: (float(np.float32(line[2])), line[0]), reverse=True)


def rank_order(lines):
    """The lines by the rank column ascending, ties by doc id descending."""
    by_doc_desc = sorted(lines, key=lambda line: line[0], reverse=True)
    return sorted(by_doc_desc, key=lambda line: line[1])


def store_ranking(run, topic, lines) -> Ranking:
    """Store one run's lines (doc, rank, score[, stance]) for one topic."""
    by_score = score_order(lines)
    index = {line[0]: i for i, line in enumerate(by_score, 1)}
    by_rank = [index[line[0]] for line in rank_order(lines)]
    by_single = [index[line[0]] for line in single_order(lines)]
    stances = [line[3] if len(line) > 3 else None for line in by_score]
    return Ranking.objects.create(
        run=run, topic=topic, length=len(lines),
        docs=[line[0] for line in by_score], ranks=[line[1] for line in by_score], scores=[line[2] for line in by_score],
        stances=stances if any(stances) else None,
        by_rank=None if by_rank == list(range(1, len(lines) + 1)) else by_rank,
        by_single=None if by_single == list(range(1, len(lines) + 1)) else by_single,
    )


def stored_lines(rankings=None) -> dict[tuple[str, str, str], tuple]:
    """(run tag, topic number, doc) -> (rank, score, stance or "", rank position, score position) of stored runs."""
    rankings = Ranking.objects.all() if rankings is None else rankings
    lines = {}
    for ranking in rankings.select_related("run", "topic"):
        rank_position = {index: position for position, index in enumerate(ranking.by_rank or range(1, ranking.length + 1), 1)}
        stances = ranking.stances or [None] * ranking.length
        assert len(ranking.docs) == len(ranking.ranks) == len(ranking.scores) == len(stances) == ranking.length
        for i, (doc, rank, score, stance) in enumerate(zip(ranking.docs, ranking.ranks, ranking.scores, stances), 1):
            lines[ranking.run.tag, ranking.topic.number, doc] = (rank, score, stance or "", rank_position[i], i)
    return lines
