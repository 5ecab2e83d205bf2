"""Score stance classifications as Touché 2023 Task 4 (CoFE) scored them, overall and per language.

The lab's leaderboard comes from the organisers' ``evaluation.py`` (touche-webis-de/touche-code,
``clef23/multilingual-stance-classification/evaluation``), and a participant compares our page with it, so the
``touche`` convention reproduces that script's arithmetic step for step, quirks included, down to the order of
operations in F1, so that the values rounded to its 4 decimals agree:

* the labels are those in the gold or the predictions, whatever the campaign's scheme says;
* a label that is never predicted has precision 1.0 (scikit-learn gives 0, which is the ``sklearn`` convention);
* a label without gold has recall 0, and F1 is 0 when precision and recall are both 0;
* macro averages are the plain mean over the labels; micro values pool the counts (with one prediction per
  comment, micro precision, recall and F1 all equal accuracy).

The script rounds; these functions do not, so that a page can choose its precision.

A campaign scores every submission on every page load, so the data is passed once: a Counter of
(gold, predicted) pairs (per group: triples) holds all that the measures need.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

# The script's names, in its order (its prototext keys are "<group>-<name lowercased>").
MEASURES = (
    "Micro Recall",
    "Micro Precision",
    "Micro F1-Score",
    "Macro Recall",
    "Macro Precision",
    "Macro F1-Score",
    "Accuracy",
)
CONVENTIONS = {
    "touche": "as the organisers' evaluation.py: a label never predicted has precision 1",
    "sklearn": "as scikit-learn with zero_division=0: a label never predicted has precision 0",
}
OVERALL = "all"  # the script's key for the scores over all comments

_NEVER_PREDICTED_PRECISION = {"touche": 1.0, "sklearn": 0.0}


def scores(gold: Sequence[str], predicted: Sequence[str], *, convention: str = "touche") -> dict[str, float]:
    """Every measure of MEASURES for one submission, unrounded; ``predicted[i]`` is the label of ``gold[i]``."""
    _check(gold, predicted, convention)
    return _measures(Counter(zip(gold, predicted)), convention)


def scores_by_group(
    gold: Sequence[str], predicted: Sequence[str], groups: Sequence[str], *, convention: str = "touche"
) -> dict[str, dict[str, float]]:
    """The measures overall (key ``"all"``) and for each group (a comment's language), groups in order of first
    appearance, as the script's ``dict_results``: each group is scored on its own labels."""
    _check(gold, predicted, convention)
    if len(groups) != len(gold):
        raise ValueError(f"{len(gold)} gold labels but {len(groups)} groups")
    per_group: dict[str, Counter[tuple[str, str]]] = {}
    overall: Counter[tuple[str, str]] = Counter()
    for (group, expected, guess), count in Counter(zip(groups, gold, predicted)).items():
        per_group.setdefault(group, Counter())[expected, guess] += count
        overall[expected, guess] += count
    if OVERALL in per_group:
        raise ValueError(f"a group may not be called {OVERALL!r}: that key holds the overall scores")
    results = {OVERALL: _measures(overall, convention)}
    for group, pairs in per_group.items():
        results[group] = _measures(pairs, convention)
    return results


def _check(gold: Sequence[str], predicted: Sequence[str], convention: str) -> None:
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}: expected one of {', '.join(CONVENTIONS)}")
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    if not gold:
        raise ValueError("nothing to score: no gold labels")


def _measures(pairs: Mapping[tuple[str, str], int], convention: str) -> dict[str, float]:
    tp: Counter[str] = Counter()
    gold_count: Counter[str] = Counter()
    predicted_count: Counter[str] = Counter()
    for (expected, guess), count in pairs.items():
        gold_count[expected] += count
        predicted_count[guess] += count
        if expected == guess:
            tp[expected] += count
    never_predicted = _NEVER_PREDICTED_PRECISION[convention]
    recalls, precisions, f1s = [], [], []
    for label in sorted(gold_count.keys() | predicted_count.keys()):
        # The script's float counts hold whole numbers exactly, so these divisions are its own.
        recall = tp[label] / gold_count[label] if gold_count[label] else 0.0
        precision = tp[label] / predicted_count[label] if predicted_count[label] else never_predicted
        recalls.append(recall)
        precisions.append(precision)
        f1s.append(0.0 if precision + recall == 0 else (2 * precision * recall) / (precision + recall))
    total = sum(gold_count.values())
    correct = sum(tp.values())
    # Every comment has one gold label and one prediction, so each mistake is one FN and one FP.
    micro_recall = micro_precision = correct / total
    micro_f1 = (
        0.0
        if micro_precision + micro_recall == 0
        else (2 * micro_precision * micro_recall) / (micro_precision + micro_recall)
    )
    values = (
        micro_recall,
        micro_precision,
        micro_f1,
        sum(recalls) / len(recalls),
        sum(precisions) / len(precisions),
        sum(f1s) / len(f1s),
        correct / total,
    )
    return dict(zip(MEASURES, values))
