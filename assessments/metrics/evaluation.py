"""Score runs against qrels the way trec_eval does, and score stance labels.

Pure Python with no Django import: the evaluation service reads rows from the database and passes them in as
plain tuples and mappings.

The target is trec_eval's ``ndcg_cut.k`` (usnistgov/trec_eval ``m_ndcg_cut.c`` with ``form_res_rels.c``). It
is the measure behind the Touché leaderboards, and participants check our numbers against it. The rules we
reproduce are these:

* trec_eval orders a topic's documents by score (descending) and breaks ties by document id (descending,
  ``strcmp``). It ignores the rank column (``comp_sim_docno``). Touché's own evaluation follows the rank
  column, and in real runs the two can give different top-k lists (tied scores are common), so callers must
  choose the order explicitly with ``order``.
* gain = the qrels label, discounted by ``log2(rank + 1)`` for ranks starting at 1. Negative labels
  (Touché 2020's ``-2``, "spam / non-argument") give zero gain: trec_eval reads a negative label as "in the
  pool but unjudged" (``RELVALUE_UNJUDGED``) and adds only positive gains.
* The ideal ranking uses every positive label judged for the topic, whether retrieved or not.
  A topic without a relevant document scores 0.
* Topic averaging follows trec_eval: by default, the mean is over the qrels topics that the run has. Run
  topics without qrels are ignored. With ``complete=True`` (``trec_eval -c``), a qrels topic that is missing
  from the run counts as 0.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter, neg
from typing import Literal

Order = Literal["score", "rank"]
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
_ORDERS = {
    "score": (_SCORE, True, _SCORE_THEN_DOC),
    "rank": (_RANK, False, _rank_then_doc),
}


def order_run(entries: Iterable[Entry], *, by: Order = "score", depth: int | None = None) -> list[str]:
    """Return one topic's document ids, best first.

    ``by="score"`` is trec_eval's order: score descending, ties broken by document id descending, with the rank
    column ignored. ``by="rank"`` follows the run's rank column (ascending), as Touché's own evaluation does.
    Equal ranks are broken by document id descending too, so both orders treat ties the same way.
    ``depth`` keeps only the first ``depth`` ids.

    Document ids must be unique within a topic: trec_eval refuses a topic with "duplicate docs", and the
    RunEntry unique constraint enforces the same rule. A duplicate in the returned list raises ValueError, so
    no document can collect its gain twice. With ``depth`` set, duplicates below the cut are not looked for,
    because finding them would cost as much as the ordering itself.
    """
    try:
        primary, descending, full = _ORDERS[by]
    except KeyError:
        raise ValueError(f"unknown order {by!r}: expected 'score' or 'rank'") from None
    if depth is None:
        ranked = sorted(entries, key=full, reverse=True)
    else:
        _check_cutoff(depth)
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
    """Return ``order_run``'s order of one topic's lines held as columns: their 0-based positions, best first.

    The importer orders 4.2 M lines this way. Sorting (key, doc id, position) triples compares them in C, where
    ``order_run`` calls a key function per entry. The triples sort as ``order_run``'s keys do, largest first, and
    the position never decides, because a document id occurs once per topic (the reader refuses repeats).
    """
    if by not in _ORDERS:
        raise ValueError(f"unknown order {by!r}: expected 'score' or 'rank'")
    key = scores if by == "score" else list(map(neg, ranks))
    return list(map(_THIRD, sorted(zip(key, docs, range(len(docs))), reverse=True)))


_THIRD = itemgetter(2)


def _check_cutoff(k: int) -> None:
    # trec_eval: "Cutoffs must be positive".
    if k < 1:
        raise ValueError(f"cutoff must be positive, got {k}")


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """nDCG@k of one topic's ``ranking``, equal to trec_eval's ``ndcg_cut_k``.

    ``qrels`` maps the topic's judged document ids to labels. Unjudged documents and labels of 0 or below add
    nothing. The ideal DCG is built from the k highest positive labels of all judged documents. A topic with no
    positive label scores 0, as in trec_eval, which leaves the DCG (then 0) undivided when the ideal DCG is 0.
    Both sums are accumulated in trec_eval's order with the same operations, so the values agree bit for bit
    (checked against pytrec_eval on the real Touché 2020 runs).
    """
    _check_cutoff(k)
    dcg = 0.0
    for i, doc in enumerate(ranking[:k]):
        gain = qrels.get(doc, 0)
        if gain > 0:
            dcg += gain / math.log2(i + 2)
    ideal_dcg = 0.0
    for i, gain in enumerate(heapq.nlargest(k, (label for label in qrels.values() if label > 0))):
        ideal_dcg += gain / math.log2(i + 2)
    return dcg / ideal_dcg if ideal_dcg > 0 else 0.0


def judged_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Share of the top k of ``ranking`` that has a label in ``qrels`` (any label, including negative ones).

    Like trec_eval's ``P_k``, it divides by k even when the ranking is shorter, so a 3-document ranking that
    is fully judged scores 0.6 at k=5. A negative label counts as judged: in Touché, ``-2`` is an assessor's
    verdict ("spam / non-argument"), not a gap in the pool.
    """
    _check_cutoff(k)
    return sum(1 for doc in ranking[:k] if doc in qrels) / k


@dataclass(frozen=True)
class RunEvaluation:
    """One run's nDCG@k. ``mean`` and ``judged_at_k`` average over the topics in ``per_topic``."""

    run: str
    measure: str
    mean: float
    judged_at_k: float
    per_topic: dict[str, float]


def evaluate_run(
    run: Mapping[Hashable, Iterable[Entry]],
    qrels: Mapping[Hashable, Mapping[str, int]],
    *,
    k: int = 5,
    order: Order = "score",
    complete: bool = False,
    name: str = "",
) -> RunEvaluation:
    """Evaluate ``run`` (topic -> its (doc id, rank, score) entries) against ``qrels`` (topic -> doc id -> label).

    Topic selection follows trec_eval. A qrels topic is evaluated if the run has at least one entry for it.
    Run topics without qrels are ignored, and so are topics with an empty qrels mapping (a qrels file cannot
    express such a topic). With ``complete=True`` (``trec_eval -c``), qrels topics that are missing from the
    run count as 0 and enter the mean. Without it (trec_eval's default) they are left out of the mean. The
    two modes agree on the Touché 2020 reference files, because those runs cover every qrels topic. With no
    evaluated topic, ``mean`` is 0.0.

    ``per_topic`` is keyed by ``str(topic)``. ``measure`` is trec_eval's name (``ndcg_cut_5``), whichever
    ``order`` was used. ``name`` is copied to ``RunEvaluation.run``.
    """
    _check_cutoff(k)
    per_topic: dict[str, float] = {}
    judged: list[float] = []
    for topic, judgments in qrels.items():
        if not judgments:
            continue
        ranking = order_run(run.get(topic, ()), by=order, depth=k)
        if not ranking and not complete:
            continue
        per_topic[str(topic)] = ndcg_at_k(ranking, judgments, k)
        judged.append(judged_at_k(ranking, judgments, k))
    return RunEvaluation(
        run=name,
        measure=f"ndcg_cut_{k}",
        mean=math.fsum(per_topic.values()) / len(per_topic) if per_topic else 0.0,
        judged_at_k=math.fsum(judged) / len(judged) if judged else 0.0,
        per_topic=per_topic,
    )


@dataclass(frozen=True)
class StanceScores:
    """Stance classification quality over ``n`` documents. Both scores are None when ``n`` is 0."""

    accuracy: float | None
    macro_f1: float | None
    n: int


def stance_scores(
    predicted: Mapping[tuple[Hashable, str], str | None],
    truth: Mapping[tuple[Hashable, str], str | None],
) -> StanceScores:
    """Compare a run's stance labels with the assessors' labels, keyed by (topic, doc id).

    Only documents that have a stance label in ``truth`` (None: judged without a stance) and a stance
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
