"""Per-topic effectiveness measures, each equal to trec_eval's for the same ranked list.

Pure Python with no Django import. Every function takes one topic's ranking (document ids, best first, already
in the order trec_eval would read them: see metrics.evaluation.order_run) and the topic's qrels (document id ->
label), and returns the value trec_eval prints for that topic. The rules come from usnistgov/trec_eval:

* ``form_res_rels.c``: a document absent from the qrels is "not in the pool"; a *negative* label (Touché 2020's
  −2, spam) is read as "in the pool but unjudged" (``RELVALUE_UNJUDGED``), not as a judged non-relevant
  document. A label of 1 or more is relevant for the binary measures (``-l 1``, the default relevance level).
* ``m_P.c`` (``P_k``), ``m_map.c`` (``map``), ``m_recip_rank.c`` (``recip_rank``), ``m_bpref.c`` (``bpref``),
  ``m_ndcg_cut.c`` (``ndcg_cut_k``, gain = label, ideal from every positive label of the topic).
* nDCG'@k, Sakai's condensed list, is trec_eval's ``-J`` (judged documents only) with ``ndcg_cut_k``: documents
  without a non-negative label are removed before cutting at k, and the ideal DCG is unchanged. Because of the
  rule above, ``-J`` removes −2 documents too, so nDCG' does the same.
* judged@k has no trec_eval 9 counterpart. It is the share of the top k that has any label (−2 included:
  in Touché it is an assessor's verdict), dividing by k even for a shorter ranking. trec_eval 10's ``unj_k``
  counts −2 as unjudged, so judged@k = 1 − unj_k only for qrels without negative labels.

Sums are accumulated in trec_eval's order with the same operations, so the values agree bit for bit.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

RELEVANT = 1
"""trec_eval's default relevance level: labels from here up are relevant for P, AP, RR and bpref."""

Ranking = Sequence[str]
Qrels = Mapping[str, int]


def check_cutoff(k: int) -> None:
    # trec_eval: "Cutoffs must be positive".
    if k < 1:
        raise ValueError(f"cutoff must be positive, got {k}")


def precision_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    """trec_eval's ``P_k``: relevant documents in the top k, divided by k even when the ranking is shorter."""
    check_cutoff(k)
    return sum(1 for doc in ranking[:k] if qrels.get(doc, 0) >= RELEVANT) / k


def judged_positions(ranking: Ranking, qrels: Qrels) -> list[tuple[int, int]]:
    """(1-based position, label) of the ranking's judged documents, best first.

    The measures that read a whole ranking (AP, RR, bpref, nDCG') only look at its judged documents. A run
    retrieves a thousand documents per topic and the qrels hold a few dozen, so finding the judged ones through
    a position index built in C beats testing every document in a Python loop by a factor of ten or more.
    """
    if len(ranking) <= 4 * len(qrels):
        return [(position, qrels[doc]) for position, doc in enumerate(ranking, 1) if doc in qrels]
    where = dict(zip(ranking, range(1, len(ranking) + 1)))
    return sorted((where[doc], label) for doc, label in qrels.items() if doc in where)


def average_precision(ranking: Ranking, qrels: Qrels) -> float:
    """trec_eval's ``map`` for one topic: precision at each relevant document retrieved, summed, divided by the
    number of relevant documents in the qrels (retrieved or not). 0 when the topic has none."""
    relevant = sum(1 for label in qrels.values() if label >= RELEVANT)
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for position, label in judged_positions(ranking, qrels):
        if label >= RELEVANT:
            found += 1
            total += found / position
    return total / relevant


def reciprocal_rank(ranking: Ranking, qrels: Qrels) -> float:
    """trec_eval's ``recip_rank``: 1 / the position of the first relevant document, 0 without one."""
    for position, label in judged_positions(ranking, qrels):
        if label >= RELEVANT:
            return 1 / position
    return 0.0


def bpref(ranking: Ranking, qrels: Qrels) -> float:
    """trec_eval's ``bpref`` (Buckley and Voorhees 2004, trec_eval's variant).

    Each relevant document retrieved adds 1 − min(n, R) / min(N, R), where n counts the judged non-relevant
    documents (label 0) above it, R the relevant and N the judged non-relevant documents of the topic; the sum
    is divided by R. Unjudged documents, and documents labelled below 0, are skipped.
    """
    relevant = sum(1 for label in qrels.values() if label >= RELEVANT)
    nonrelevant = sum(1 for label in qrels.values() if 0 <= label < RELEVANT)
    nonrel_so_far, total = 0, 0.0
    for _, label in judged_positions(ranking, qrels):
        if label < 0:
            continue
        if label < RELEVANT:
            nonrel_so_far += 1
        elif nonrel_so_far:
            total += 1.0 - min(nonrel_so_far, relevant) / min(nonrelevant, relevant)
        else:
            total += 1.0
    return total / relevant if relevant else 0.0


def ndcg_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    """trec_eval's ``ndcg_cut_k``.

    Unjudged documents and labels of 0 or below add nothing; the gain of a label is the label, discounted by
    log2(position + 1). The ideal DCG is built from the k highest positive labels of all judged documents. A
    topic with no positive label scores 0 (trec_eval leaves the DCG, then 0, undivided).
    """
    check_cutoff(k)
    return _ndcg((qrels.get(doc, 0) for doc in ranking[:k]), qrels, k)


def condensed_ndcg_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    """Sakai's nDCG'@k: ``trec_eval -J -m ndcg_cut.k``, nDCG@k of the ranking without the documents ``-J`` drops
    (those without a label of 0 or more)."""
    check_cutoff(k)
    return _ndcg((label for _, label in judged_positions(ranking, qrels) if label >= 0), qrels, k)


def _ndcg(gains: Iterable[int], qrels: Qrels, k: int) -> float:
    ideal_dcg = _dcg(heapq.nlargest(k, (label for label in qrels.values() if label > 0)))
    return _dcg(islice(gains, k)) / ideal_dcg if ideal_dcg > 0 else 0.0


def _dcg(gains: Iterable[int]) -> float:
    dcg = 0.0
    for i, gain in enumerate(gains):
        if gain > 0:
            dcg += gain / math.log2(i + 2)
    return dcg


def judged_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    """Share of the top k that has a label in ``qrels`` (any label, negative ones included), over k."""
    check_cutoff(k)
    return sum(1 for doc in ranking[:k] if doc in qrels) / k


JUDGED_DEPTH = 10
"""judged@k shown beside a measure without a cutoff (AP, RR, bpref): ir_measures' and the TREC tracks' usual."""

_MEASURE = re.compile(r"(?P<cut>ndcg'|ndcg|p|judged)@(?P<k>[1-9][0-9]{0,3})|(?P<whole>map|ap|mrr|rr|bpref)", re.IGNORECASE)
_NAMES = {"ndcg'": "nDCG'", "ndcg": "nDCG", "p": "P", "judged": "judged", "map": "AP", "ap": "AP", "mrr": "RR",
          "rr": "RR", "bpref": "bpref"}
MEASURE_HELP = "nDCG@k, nDCG'@k (condensed), P@k, AP (MAP), RR (MRR), bpref or judged@k"


@dataclass(frozen=True)
class Measure:
    """A measure by name: ``family`` is one of nDCG, nDCG', P, judged, AP, RR, bpref; ``k`` its cutoff or None."""

    family: str
    k: int | None = None

    def __str__(self) -> str:
        return f"{self.family}@{self.k}" if self.k else self.family

    @property
    def trec_eval(self) -> str:
        """trec_eval's name for the measure, as ``trec_eval -q`` prints it."""
        names = {"nDCG": f"ndcg_cut_{self.k}", "nDCG'": f"ndcg_cut_{self.k} (-J)", "P": f"P_{self.k}",
                 "judged": f"judged_{self.k}", "AP": "map", "RR": "recip_rank", "bpref": "bpref"}
        return names[self.family]

    @property
    def depth(self) -> int | None:
        """How much of each ranking the measure reads: the first k lines, or all of them (None)."""
        return self.k if self.family in ("nDCG", "P", "judged") else None

    @property
    def judged_depth(self) -> int:
        """The k of the judged@k shown beside this measure."""
        return self.k or JUDGED_DEPTH

    def score(self, ranking: Ranking, qrels: Qrels) -> float:
        """This measure's value for one topic's ``ranking`` (deep enough: see ``depth``) against its ``qrels``."""
        if self.k is None:
            return _WHOLE[self.family](ranking, qrels)
        return _CUT[self.family](ranking, qrels, self.k)


_WHOLE = {"AP": average_precision, "RR": reciprocal_rank, "bpref": bpref}
_CUT = {"nDCG": ndcg_at_k, "nDCG'": condensed_ndcg_at_k, "P": precision_at_k, "judged": judged_at_k}


def parse_measure(text: str | Measure) -> Measure:
    """``"nDCG@5"``, ``"nDCG'@10"``, ``"P@10"``, ``"MAP"``/``"AP"``, ``"MRR"``/``"RR"``, ``"bpref"``,
    ``"judged@5"`` (any case) -> Measure. ValueError names what is accepted."""
    if isinstance(text, Measure):
        return text
    match = _MEASURE.fullmatch(text.strip())
    if not match:
        raise ValueError(f"unknown measure {text!r}: use {MEASURE_HELP}")
    if match["whole"]:
        return Measure(_NAMES[match["whole"].lower()])
    return Measure(_NAMES[match["cut"].lower()], int(match["k"]))
