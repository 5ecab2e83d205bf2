"""Order runs the way trec_eval does, score them with metrics.measures, and score a run's stance column.

Pure Python with no Django import: the evaluation service reads rows from the database and passes them in as
plain tuples and mappings.

The rules we reproduce (usnistgov/trec_eval ``form_res_rels.c``) are these:

* trec_eval orders a topic's documents by score (descending) and breaks ties by document id (descending,
  ``strcmp``). It ignores the rank column (``comp_sim_docno``). Touché's own evaluation follows the rank
  column, and in real runs the two can give different top-k lists (tied scores are common), so callers must
  choose the order explicitly with ``order``.
* Which scores tie depends on the trec_eval version. trec_eval 10 reads scores as double-precision numbers.
  trec_eval 9.0.x (up to 9.0.8, 2022) keeps them in a C ``float``, so two scores that differ only beyond single
  precision tie there and the document id decides; pytrec_eval (and with it ir_measures and PyTerrier) is built
  on that code and stores the Python float it is given in the same ``float`` (checked in the tests: scores
  1 + 1e-8 and 1 tie, 1 + 6e-8 and 1 do not). ``trec_eval=9`` rounds each score to the nearest single-precision
  value before ordering, as the C conversion does; ``trec_eval=10`` compares the doubles.
* Topic averaging follows trec_eval: by default, the mean is over the qrels topics that the run has. Run
  topics without qrels are ignored. With ``complete=True`` (``trec_eval -c``), a qrels topic that is missing
  from the run counts as 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter, neg
from typing import Any, Literal, TypeVar

import numpy as np

from assessments.labels import CATEGORY, Dimension, LabelScheme

from .measures import Measure, check_cutoff, judged_at_k, parse_measure

Topic = TypeVar("Topic", bound=Hashable)
"""A topic key, whatever its type (the service passes topic numbers as text); per_topic is keyed by its text."""
Order = Literal["score", "rank"]
TrecEval = Literal[9, 10]
TREC_EVAL_VERSIONS: tuple[TrecEval, ...] = (10, 9)
Entry = tuple[str, int, float]
"""One run line for one topic: (document id, rank column, score column)."""

# Sort keys. Document ids are compared as Python strings: for UTF-8 text, code-point order is byte order, so
# this matches trec_eval's strcmp.
_SCORE = itemgetter(2)
_SCORE_THEN_DOC = itemgetter(2, 0)
_RANK = itemgetter(1)


def _rank_then_doc(entry: Entry) -> tuple[int, str]:
    # Largest first: rank ascending, then document id descending.
    return -entry[1], entry[0]


# order -> (primary key, whether it sorts descending, full key that sorts largest first)
_ORDERS: dict[str, tuple[Callable[[Entry], Any], bool, Callable[[Entry], Any]]] = {
    "score": (_SCORE, True, _SCORE_THEN_DOC),
    "rank": (_RANK, False, _rank_then_doc),
}


def single_precision(scores: Sequence[float]) -> list[float]:
    """The scores as trec_eval 9 holds them: each rounded to the nearest C ``float`` (round half to even), given
    back as Python floats. Beyond float's range a score becomes ±inf and below it 0, as the C conversion does."""
    with np.errstate(over="ignore", under="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32).astype(np.float64).tolist()


def _check_version(trec_eval: int) -> None:
    if trec_eval not in TREC_EVAL_VERSIONS:
        raise ValueError(f"unknown trec_eval version {trec_eval!r}: expected 9 or 10")


def order_run(
    entries: Iterable[Entry], *, by: Order = "score", depth: int | None = None, trec_eval: TrecEval = 10
) -> list[str]:
    """Return one topic's document ids, best first.

    ``by="score"`` is trec_eval's order: score descending, ties broken by document id descending, with the rank
    column ignored; ``trec_eval=9`` compares the scores in single precision (see the module docstring).
    ``by="rank"`` follows the run's rank column (ascending), as Touché's own evaluation does; equal ranks are
    broken by document id descending too, so both orders treat ties the same way, and the version does not
    matter. ``depth`` keeps only the first ``depth`` ids.

    Document ids must be unique within a topic: trec_eval refuses a topic with "duplicate docs", and the
    importer enforces the same rule. A duplicate in the returned list raises ValueError, so no document can
    collect its gain twice. With ``depth`` set, duplicates below the cut are not looked for, because finding
    them would cost as much as the ordering itself.
    """
    try:
        primary, descending, full = _ORDERS[by]
    except KeyError:
        raise ValueError(f"unknown order {by!r}: expected 'score' or 'rank'") from None
    _check_version(trec_eval)
    if by == "score" and trec_eval == 9:
        entries = list(entries)
        entries = [(doc, rank, score) for (doc, rank, _), score in zip(entries, single_precision([e[2] for e in entries]))]
    if depth is None:
        ranked = sorted(entries, key=full, reverse=True)
    else:
        check_cutoff(depth)
        # Sorting on the bare score (or rank) costs far less than building a (score, doc) tuple for each of 1000
        # entries. Only the entries tied with the one at the cut need the document-id tie-break to decide which
        # of them make it.
        ranked = sorted(entries, key=primary, reverse=descending)
        end = depth
        if end < len(ranked):
            boundary = primary(ranked[end - 1])
            while end < len(ranked) and primary(ranked[end]) == boundary:
                end += 1
        ranked = sorted(ranked[:end], key=full, reverse=True)[:depth]
    docs = [entry[0] for entry in ranked]
    if len(set(docs)) != len(docs):
        raise ValueError("a document id occurs more than once for one topic")
    return docs


def order_positions(docs: Sequence[str], ranks: Sequence[int], scores: Sequence[float], *, by: Order = "score") -> list[int]:
    """Return ``order_run``'s order (trec_eval 10) of one topic's lines held as columns: their 0-based positions,
    best first.

    The importer orders 4.2 M lines this way. Sorting (key, doc id, position) triples compares them in C, where
    ``order_run`` calls a key function per entry. The triples sort as ``order_run``'s keys do, largest first, and
    the position never decides, because a document id occurs once per topic (the reader refuses repeats).
    """
    if by not in _ORDERS:
        raise ValueError(f"unknown order {by!r}: expected 'score' or 'rank'")
    key = scores if by == "score" else list(map(neg, ranks))
    return list(map(_THIRD, sorted(zip(key, docs, range(len(docs))), reverse=True)))


_THIRD = itemgetter(2)


def single_precision_order(docs: Sequence[str], scores: Sequence[float]) -> list[int] | None:
    """Reorder lines held in trec_eval 10's order for trec_eval 9: their 0-based positions in 9's order, or None
    when both orders are the same.

    Rounding to single precision never swaps two scores, so 9's order keeps 10's runs of equal rounded scores
    and only sorts each run by document id descending. A run changes only if it holds two different doubles, so
    most rankings are settled by one vectorised comparison. The lines must be a whole ranking or a head of it
    that ends where the rounded score changes (see ``single_precision_cut``).
    """
    if len(scores) < 2:
        return None
    doubles = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        singles = doubles.astype(np.float32)
    same = singles[1:] == singles[:-1]
    if not (same & (doubles[1:] != doubles[:-1])).any():
        return None
    order = list(range(len(docs)))
    starts = np.flatnonzero(~same) + 1
    for start, end in zip([0, *starts.tolist()], [*starts.tolist(), len(docs)]):
        if end - start > 1:
            order[start:end] = sorted(order[start:end], key=docs.__getitem__, reverse=True)
    return order


def single_precision_cut(scores: Sequence[float], depth: int) -> int:
    """How many leading lines (of lines in trec_eval 10's order) decide trec_eval 9's first ``depth``: through
    the last line whose single-precision score equals that of line ``depth``. It equals ``len(scores)`` when the
    given lines may end inside that run, and then a caller holding only a head must read further."""
    if depth >= len(scores):
        return len(scores)
    with np.errstate(over="ignore", under="ignore"):
        singles = np.asarray(scores, dtype=np.float64).astype(np.float32)
    after = np.flatnonzero(singles[depth:] != singles[depth - 1])
    return depth + int(after[0]) if len(after) else len(scores)


@dataclass(frozen=True)
class RunEvaluation:
    """One run's scores by one measure. ``mean`` and ``judged_at_k`` average over the topics in ``per_topic``;
    ``measure`` is trec_eval's name (``ndcg_cut_5``)."""

    run: str
    measure: str
    mean: float
    judged_at_k: float
    per_topic: dict[str, float]


def evaluate_rankings(
    rankings: Mapping[Topic, Sequence[str]],
    qrels: Mapping[Topic, Mapping[str, int]],
    *,
    measure: str | Measure = "nDCG@5",
    complete: bool = False,
    name: str = "",
) -> RunEvaluation:
    """Score ``rankings`` (topic -> document ids, best first, at least as deep as the measure reads) against
    ``qrels`` (topic -> doc id -> label).

    Topic selection follows trec_eval. A qrels topic is evaluated if the run has at least one line for it. Run
    topics without qrels are ignored, and so are topics with an empty qrels mapping (a qrels file cannot express
    such a topic). With ``complete=True`` (``trec_eval -c``), qrels topics that are missing from the run count
    as 0 and enter the mean. With no evaluated topic, ``mean`` is 0.0. ``per_topic`` is keyed by ``str(topic)``;
    ``name`` is copied to ``RunEvaluation.run``.
    """
    measure = parse_measure(measure)
    per_topic: dict[str, float] = {}
    judged: list[float] = []
    for topic, judgments in qrels.items():
        if not judgments:
            continue
        ranking = rankings.get(topic, ())
        if not ranking and not complete:
            continue
        per_topic[str(topic)] = measure.score(ranking, judgments)
        judged.append(judged_at_k(ranking, judgments, measure.judged_depth))
    return RunEvaluation(
        run=name,
        measure=measure.trec_eval,
        mean=math.fsum(per_topic.values()) / len(per_topic) if per_topic else 0.0,
        judged_at_k=math.fsum(judged) / len(judged) if judged else 0.0,
        per_topic=per_topic,
    )


def evaluate_run(
    run: Mapping[Topic, Iterable[Entry]],
    qrels: Mapping[Topic, Mapping[str, int]],
    *,
    measure: str | Measure = "nDCG@5",
    order: Order = "score",
    trec_eval: TrecEval = 10,
    complete: bool = False,
    name: str = "",
) -> RunEvaluation:
    """Evaluate ``run`` (topic -> its (doc id, rank, score) entries) against ``qrels`` (topic -> doc id ->
    label): each topic ordered by ``order_run`` under ``order`` and ``trec_eval``, then ``evaluate_rankings``."""
    measure = parse_measure(measure)
    depth = None if measure.depth is None else max(measure.depth, measure.judged_depth)
    rankings = {
        topic: order_run(run.get(topic, ()), by=order, depth=depth, trec_eval=trec_eval)
        for topic, judgments in qrels.items() if judgments
    }
    return evaluate_rankings(rankings, qrels, measure=measure, complete=complete, name=name)


def stance_dimension(scheme: LabelScheme) -> Dimension | None:
    """The category dimension whose values a Touché run's stance column holds (read at import, scored against the
    judgments): the scheme's last category dimension, None when it has none. Touché's schemes ask the stance after
    every other label (2023's causal task asks the direction and the evidence first), and a run file carries one
    column, so one dimension answers to it; `evaluate_runs --kind` may name another category to score it against."""
    return next((d for d in reversed(scheme.dimensions) if d.kind == CATEGORY), None)


@dataclass(frozen=True)
class StanceScores:
    """How well a run's stance column classifies ``n`` documents. Both scores are None when ``n`` is 0."""

    accuracy: float | None
    macro_f1: float | None
    n: int


def stance_scores(
    predicted: Mapping[tuple[Topic, str], str | None],
    truth: Mapping[tuple[Topic, str], str | None],
) -> StanceScores:
    """Compare a run's stance column with the assessors' labels of one category dimension, keyed by (topic, doc id).

    Only documents that have a label in ``truth`` (None: judged without one) and a stance
    prediction in ``predicted`` are scored. Callers pass None where the run did not classify a document:
    Touché runs write ``Q0`` in the stance column for this. Such a document is left out, not counted as wrong,
    so that a run without stance labels is not scored as a bad classifier. A run that predicted nothing gets
    ``n=0`` and None scores, because 0 would look like a measured result.

    ``macro_f1`` follows scikit-learn's ``f1_score(average="macro")``. It is the unweighted mean, over every
    label that occurs in the scored truth or predictions, of F1 = 2·TP / (2·TP + FP + FN). A label that was
    only predicted, or only true, therefore adds an F1 of 0.
    """
    pairs = [
        (expected, guess)
        for key, expected in truth.items()
        if expected is not None and (guess := predicted.get(key)) is not None
    ]
    if not pairs:
        return StanceScores(accuracy=None, macro_f1=None, n=0)
    labels = {expected for expected, _ in pairs} | {guess for _, guess in pairs}
    f1s = []
    for label in labels:
        tp = sum(1 for expected, guess in pairs if expected == label and guess == label)
        fp = sum(1 for expected, guess in pairs if expected != label and guess == label)
        fn = sum(1 for expected, guess in pairs if expected == label and guess != label)
        f1s.append(2 * tp / (2 * tp + fp + fn))
    return StanceScores(
        accuracy=sum(1 for expected, guess in pairs if expected == guess) / len(pairs),
        macro_f1=math.fsum(f1s) / len(f1s),
        n=len(pairs),
    )
