"""A campaign's figures survive 0020: the qrels lines, the agreement figures and the evaluation figures of a Touché
2022 Task 2 campaign stored in the old shape (labels in relevance, quality and stance columns, at 0019) are the
same after its labels move into one object keyed by dimension.

The code that read the old columns is gone, so the "before" figures are worked out here from the rows as stored at
0019 (read back through that state's models), by the rules the exports, agreement and evaluation document, with
reference tools for the arithmetic: the qrels lines written by hand in TREC format, Cohen's kappa by scikit-learn,
Fleiss' kappa by statsmodels, Krippendorff's alpha by the krippendorff package, nDCG@5 by pytrec_eval (trec_eval 9's
code). Then the database is migrated to the newest state and the app's own services must give those figures.

As in test_migrations.py, the test empties the test database, migrates it forward to the old state, and leaves it
migrated to the newest state again.
"""

from collections import Counter, defaultdict

import krippendorff
import numpy as np
import pytest
import pytrec_eval
from django.db import connection, transaction
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from tests.foundation.test_migrations import newest, rebuilt_at

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the stored rankings are sliced in PostgreSQL"),
]

OLD = [("assessments", "0019_ranking_stage")]




def _values(*triples):
    return [{"value": value, "name": name, "key": key} for value, name, key in triples]


# Touché 2022 Task 2 as a campaign stored it before 0020 (scheme version 1: one list per hard-wired dimension).
SCHEME_V1 = {
    "relevance": _values((0, "Not relevant", "0"), (1, "Relevant", "1"), (2, "Highly relevant", "2")),
    "quality": _values((0, "Low quality / no argument", "q"), (1, "Average quality", "w"), (2, "High quality", "e")),
    "stance": _values(("FIRST", "Pro first object", "f"), ("SECOND", "Pro second object", "s"), ("NEUTRAL", "Neutral", "n"),
                      ("NO", "No stance", "o")),
}
STANCES = [v["value"] for v in SCHEME_V1["stance"]]
DIMENSIONS = ("relevance", "quality", "stance")
GRADES = [0, 1, 2]

# (relevance, quality, stance) per revision, oldest first; the last one is the judgment's. None and "" stand for no
# quality and no stance, as the old columns held them. Document "Z4" sorts before "a1" byte by byte (trec_eval's
# strcmp), after it in most locales' collations.
TRAINING = {  # topic 1, round 1: both assessors judge every document
    "alice": {
        "a1": [(2, 2, "FIRST")], "b2": [(2, 2, "FIRST"), (1, 1, "SECOND")], "c3": [(0, None, "")],
        "Z4": [(2, 1, "NEUTRAL")], "e5": [(1, 0, "FIRST")], "f6": [(0, None, "")],
    },
    "bob": {
        "a1": [(2, 1, "FIRST")], "b2": [(1, 1, "FIRST")], "c3": [(0, None, ""), (1, 0, "NO")],
        "Z4": [(2, 2, "NEUTRAL")], "e5": [(0, None, "")], "f6": [(0, None, "")],
    },
}
# Copies for carol's duplicates (source "duplicate"): in the qrels, never in agreement.
TRAINING_COPIES = {"carol": {"a1": [(2, 2, "FIRST")], "b2": [(0, None, "")]}}
MAIN = {
    "2": {
        "alice": {
            "a1": [(2, 2, "FIRST")], "b2": [(1, 0, "SECOND")], "c3": [(1, 1, "NO"), (0, None, "")],
            "Z4": [(1, 1, "NEUTRAL")], "e5": [(2, 1, "SECOND")], "f6": [(0, None, "")],
        },
        "bob": {"a1": [(1, 1, "FIRST")], "b2": [(2, 2, "FIRST")], "Z4": [(0, None, "")]},  # the overlap slice
    },
    "10": {"alice": {"a1": [(0, None, "")], "b2": [(2, 2, "SECOND")], "c3": [(1, 1, "NO")], "g7": [(1, 2, "FIRST")]}},
}
MAIN_COPIES = {"10": {"bob": {"g7": [(2, 2, "FIRST")]}}}
# Topic 2's disagreements decided by olivia: (relevance, quality, stance, reason) per revision.
ADJUDICATIONS = {
    "a1": [(1, None, "", "first look"), (2, 1, "SECOND", "the passage prefers the second object")],
    "b2": [(0, None, "", "off topic: about neither object")],
}
# Runs as lines (doc, rank column, score, stance or None). beta's rank column disagrees with its scores on topic 2,
# where three documents tie on score (trec_eval: document id descending); on topic 10, a1 and b2 differ only beyond
# single precision (trec_eval 9 and pytrec_eval tie them and put b2 first).
RUNS = {
    ("alpha", "team-a", True): {
        "1": [("a1", 1, 3.0, "FIRST"), ("c3", 2, 2.0, None)],  # a training topic: not evaluated in the main phase
        "2": [("a1", 1, 9.0, "FIRST"), ("e5", 2, 8.5, "SECOND"), ("b2", 3, 8.0, None), ("Z4", 4, 7.0, "NEUTRAL"),
              ("x9", 5, 6.0, "FIRST"), ("c3", 6, 5.0, "NO"), ("f6", 7, 4.0, None)],
        "3": [("a1", 1, 1.0, "FIRST")],  # no judgments: not evaluated
        "10": [("g7", 1, 3.0, "FIRST"), ("b2", 2, 2.0, "SECOND"), ("a1", 3, 1.0, None), ("c3", 4, 0.5, "NEUTRAL"),
               ("y8", 5, 0.25, None), ("b2x", 6, 0.125, "NO")],
    },
    ("beta", "team-b", False): {
        "2": [("c3", 1, 2.0, None), ("a1", 2, 3.0, None), ("e5", 3, 3.0, None), ("Z4", 4, 3.0, None),
              ("b2", 5, 0.5, None), ("f6", 6, 0.4, None)],
        "10": [("a1", 1, 1 + 2**-30, None), ("b2", 2, 1.0, None), ("c3", 3, 0.5, None), ("g7", 4, 0.25, None)],
    },
}


def _single(score):
    return float(np.float32(score))


def _stored_ranking(lines):
    """A ranking as the importer stored it at 0019: lists in trec_eval's order (score descending, ties by document id
    descending), with the rank column's order and trec_eval 9's as 1-based indices into them (null when the same)."""
    ordered = sorted(lines, key=lambda line: (line[2], line[0]), reverse=True)
    by_rank = [ordered.index(line) + 1 for line in sorted(lines, key=lambda line: line[1])]
    by_single = [ordered.index(line) + 1 for line in sorted(lines, key=lambda line: (_single(line[2]), line[0]), reverse=True)]
    identity = list(range(1, len(lines) + 1))
    stances = [line[3] for line in ordered]
    return {
        "length": len(lines), "docs": [line[0] for line in ordered], "ranks": [line[1] for line in ordered],
        "scores": [line[2] for line in ordered], "stances": stances if any(stances) else None,
        "by_rank": None if by_rank == identity else by_rank, "by_single": None if by_single == identity else by_single,
    }


def build_old_campaign(model):
    """The campaign in 0019's shape, written through 0019's models (each judgment with its history in one transaction:
    the history check runs at commit)."""
    User = model("accounts", "User")
    users = {name: User.objects.create(username=name, password="-") for name in ("alice", "bob", "carol", "olivia")}
    collection = model("assessments", "Collection").objects.create(slug="t22", name="Touché 2022")
    campaign = model("assessments", "Campaign").objects.create(
        slug="touche22", name="Touché 2022 Task 2", preset="touche-2022-task2", scheme=SCHEME_V1, collection=collection,
        phase="main",
    )  # ask_details_only_if_relevant: True, as created
    Topic = model("assessments", "Topic")
    topics = {
        number: Topic.objects.create(campaign=campaign, number=number, title=f"Which is better, cats or dogs? ({number})",
                                     compared_objects=["cats", "dogs"], is_training=number == "1", position=position)
        for position, number in enumerate(("1", "2", "3", "10"))
    }
    Document = model("assessments", "Document")
    doc_ids = ("a1", "b2", "c3", "Z4", "e5", "f6", "g7", "x9", "y8", "b2x")
    documents = {d: Document.objects.create(collection=collection, doc_id=d, title=d, body=f"text of {d}", has_text=True)
                 for d in doc_ids}
    Assignment = model("assessments", "Assignment")
    for name in ("alice", "bob"):
        Assignment.objects.create(topic=topics["1"], assessor=users[name], phase="training", round=1)
    for number in ("2", "10"):
        Assignment.objects.create(topic=topics[number], assessor=users["alice"], phase="main")
    Assignment.objects.create(topic=topics["2"], assessor=users["bob"], phase="main", scope="overlap")

    Judgment, Event = model("assessments", "Judgment"), model("assessments", "JudgmentEvent")

    def judge(topic, name, doc, revisions, phase, source):
        with transaction.atomic():
            relevance, quality, stance = revisions[-1]
            judgment = Judgment.objects.create(
                topic=topic, document=documents[doc], assessor=users[name], phase=phase, relevance=relevance,
                quality=quality, stance=stance, source=source, revision=len(revisions), time_spent_ms=1000,
            )
            for number, (relevance, quality, stance) in enumerate(revisions, 1):
                Event.objects.create(judgment=judgment, assessor=users[name], revision=number, relevance=relevance,
                                     quality=quality, stance=stance, source=source, time_spent_ms=1000)

    for judged, source in ((TRAINING, "web"), (TRAINING_COPIES, "duplicate")):
        for name, docs in judged.items():
            for doc, revisions in docs.items():
                judge(topics["1"], name, doc, revisions, "training", source)
    for judged, source in ((MAIN, "web"), (MAIN_COPIES, "duplicate")):
        for number, by_assessor in judged.items():
            for name, docs in by_assessor.items():
                for doc, revisions in docs.items():
                    judge(topics[number], name, doc, revisions, "main", source)

    Adjudication, AdjudicationEvent = model("assessments", "Adjudication"), model("assessments", "AdjudicationEvent")
    for doc, revisions in ADJUDICATIONS.items():
        with transaction.atomic():
            relevance, quality, stance, reason = revisions[-1]
            adjudication = Adjudication.objects.create(
                topic=topics["2"], document=documents[doc], relevance=relevance, quality=quality, stance=stance, reason=reason,
                adjudicator=users["olivia"], revision=len(revisions),
            )
            for number, (relevance, quality, stance, reason) in enumerate(revisions, 1):
                AdjudicationEvent.objects.create(adjudication=adjudication, adjudicator=users["olivia"], revision=number,
                                                 relevance=relevance, quality=quality, stance=stance, reason=reason)

    Run, Ranking = model("assessments", "Run"), model("assessments", "Ranking")
    for (tag, team, has_stance), by_topic in RUNS.items():
        run = Run.objects.create(campaign=campaign, tag=tag, team=team, file_name=f"{tag}.txt", has_stance=has_stance,
                                 line_count=sum(map(len, by_topic.values())))
        for number, lines in by_topic.items():
            Ranking.objects.create(run=run, topic=topics[number], **_stored_ranking(lines))


# --------------------------------------------------------------------------------------------------------------
# The "before" figures, from the rows as 0019 stores them


def read_old_rows(model):
    """Every judgment, adjudication and ranking as 0019's tables hold them (never the literals above)."""
    judgments = list(
        model("assessments", "Judgment").objects.values_list(
            "topic__number", "document__doc_id", "assessor__username", "phase", "source", "relevance", "quality", "stance",
        ).order_by("pk")
    )
    adjudications = {
        (topic, doc): {"relevance": relevance, "quality": quality, "stance": stance}
        for topic, doc, relevance, quality, stance in model("assessments", "Adjudication").objects.values_list(
            "topic__number", "document__doc_id", "relevance", "quality", "stance")
    }
    rankings = {
        (tag, topic): (docs, ranks, scores, stances)
        for tag, topic, docs, ranks, scores, stances in model("assessments", "Ranking").objects.values_list(
            "run__tag", "topic__number", "docs", "ranks", "scores", "stances")
    }
    return judgments, adjudications, rankings


def value_of(row, dimension):
    """A judgment row's value of one dimension, None where the old columns held none (null quality, empty stance)."""
    value = row[5 + DIMENSIONS.index(dimension)]
    return None if value is None or value == "" else value


def majority(values, dimension):
    """The most frequent label; a tie goes to the lowest grade, or to the stance listed first in the scheme."""
    counts = Counter(values)
    top = max(counts.values())
    tied = [value for value, count in counts.items() if count == top]
    return min(tied, key=STANCES.index) if dimension == "stance" else min(tied)


def qrels_by_hand(judgments, adjudications, *, dimension, phase, rule="majority"):
    """(topic, doc) -> label of one qrels file, from the judgment rows of the phase."""
    labels = defaultdict(list)
    for row in judgments:
        if row[3] == phase:
            labels[row[0], row[1]].append(value_of(row, dimension))
    qrels = {}
    for item, values in labels.items():
        if rule == "adjudicated" and item in adjudications:
            decided = adjudications[item][dimension]
            if decided is not None and decided != "":
                qrels[item] = decided
        elif given := [value for value in values if value is not None]:
            qrels[item] = majority(given, dimension)
    return qrels


def trec_lines(qrels):
    """The qrels file in TREC format, topics numerically (2 before 10), documents byte by byte."""
    ordered = sorted(qrels.items(), key=lambda item: (int(item[0][0]), item[0][1].encode()))
    return "".join(f"{topic} 0 {doc} {label}\n" for (topic, doc), label in ordered)


def nested(qrels):
    out = defaultdict(dict)
    for (topic, doc), label in qrels.items():
        out[topic][doc] = label
    return dict(out)


def shared_items(judgments, phase):
    """(topic, doc) -> assessor -> row, for the items two or more assessors judged (copies for duplicates left out)."""
    items = defaultdict(dict)
    for row in judgments:
        if row[3] == phase and row[4] != "duplicate":
            items[row[0], row[1]][row[2]] = row
    return {item: by for item, by in items.items() if len(by) >= 2}


def defined(figure):
    """A reference tool's figure, None where it is undefined (nan: one category only, so no chance to disagree), as
    the app reports it."""
    figure = float(figure)
    return None if np.isnan(figure) else figure


def agreement_by_hand(judgments, phase, threshold=0.4):
    """Per dimension: n_items, (a, b, n, kappa, linearly weighted kappa), Fleiss, alpha, binary Fleiss, flagged."""
    with np.errstate(divide="ignore", invalid="ignore"):  # statsmodels divides by zero where a kappa is undefined
        return _agreement_by_hand(judgments, phase, threshold)


def _agreement_by_hand(judgments, phase, threshold):
    items = shared_items(judgments, phase)
    raters = sorted({name for by in items.values() for name in by}, key=["alice", "bob", "carol"].index)
    assert raters == ["alice", "bob"]  # carol's copies are not hers to agree on
    figures = {}
    for dimension in DIMENSIONS:
        ordinal = dimension != "stance"
        scale = GRADES if ordinal else STANCES
        rated = {item: {name: value_of(row, dimension) for name, row in by.items() if value_of(row, dimension) is not None}
                 for item, by in items.items()}
        both = [item for item in sorted(rated) if len(rated[item]) == 2]
        a = [rated[item]["alice"] for item in both]
        b = [rated[item]["bob"] for item in both]
        kappa = defined(cohen_kappa_score(a, b, labels=scale))
        linear = defined(cohen_kappa_score(a, b, labels=scale, weights="linear")) if ordinal else None
        codes = np.array([[scale.index(x) for x in pair] for pair in zip(a, b)])
        fleiss = defined(statsmodels_fleiss_kappa(aggregate_raters(codes, n_cat=len(scale))[0]))
        reliability = np.array(
            [[np.nan if rated[item].get(name) is None else scale.index(rated[item][name]) for item in sorted(rated)] for name in raters],
            dtype=float,
        )
        alpha = defined(krippendorff.alpha(reliability_data=reliability, level_of_measurement="ordinal" if ordinal else "nominal",
                                   value_domain=list(range(len(scale)))))
        binary = None
        if ordinal:
            collapsed = np.array([[int(x >= 1) for x in pair] for pair in zip(a, b)])
            binary = defined(statsmodels_fleiss_kappa(aggregate_raters(collapsed, n_cat=2)[0]))
        mean = linear if ordinal else kappa  # two assessors: each one's mean pairwise kappa is the pair's
        flagged = mean is None or mean < threshold  # an undefined kappa cannot show that they pass
        figures[dimension] = {
            "n_items": len(both), "pair": ("alice", "bob", len(both), kappa, linear), "fleiss": fleiss, "alpha": alpha,
            "binary": binary, "flagged": ["alice", "bob"] if flagged else [],
        }
    return figures


def ranked(lines_of, order, version):
    """One stored ranking's documents best first, worked out again from its lines: trec_eval 10 (doubles), trec_eval 9
    (single precision), or the rank column."""
    docs, ranks, scores, _ = lines_of
    lines = list(zip(docs, ranks, scores))
    if order == "rank":
        return [doc for doc, _, _ in sorted(lines, key=lambda line: line[1])]
    key = (lambda line: (line[2], line[0])) if version == 10 else (lambda line: (_single(line[2]), line[0]))
    return [doc for doc, _, _ in sorted(lines, key=key, reverse=True)]


def ndcg5_by_pytrec_eval(rankings, qrels, *, order="score", version=10):
    """run tag -> topic -> nDCG@5 from pytrec_eval. trec_eval 9 is pytrec_eval itself given the stored scores; for
    trec_eval 10 and the rank column, each document gets a score that makes pytrec_eval read the order worked out
    above (distinct, so its own tie-break never decides)."""
    evaluator = pytrec_eval.RelevanceEvaluator(nested(qrels), {"ndcg_cut.5"})
    out = {}
    for tag in sorted({tag for tag, _ in rankings}):
        run = {}
        for (t, topic), lines_of in rankings.items():
            if t != tag:
                continue
            if order == "score" and version == 9:
                run[topic] = {doc: float(score) for doc, score in zip(lines_of[0], lines_of[2])}
            else:
                docs = ranked(lines_of, order, version)
                run[topic] = {doc: float(len(docs) - i) for i, doc in enumerate(docs)}
        out[tag] = {topic: values["ndcg_cut_5"] for topic, values in evaluator.evaluate(run).items()}
    return out


def judged_at_5(rankings, qrels, per_topic_of, *, order="score", version=10):
    """run tag -> share of the top 5 with a label, averaged over the topics evaluated."""
    out = {}
    for tag, per_topic in per_topic_of.items():
        shares = [sum((topic, doc) in qrels for doc in ranked(rankings[tag, topic], order, version)[:5]) / 5 for topic in per_topic]
        out[tag] = sum(shares) / len(shares)
    return out


def stance_by_hand(rankings, truth, tag):
    """Accuracy and macro-F1 of a run's stance column over its top 5 (trec_eval 10's order) against the majority
    stance, on the documents that have both."""
    expected, predicted = [], []
    for (t, topic), lines_of in sorted(rankings.items()):
        if t != tag:
            continue
        stance_of = dict(zip(lines_of[0], lines_of[3] or [None] * len(lines_of[0])))
        for doc in ranked(lines_of, "score", 10)[:5]:
            if (topic, doc) in truth and stance_of.get(doc):
                expected.append(truth[topic, doc])
                predicted.append(stance_of[doc])
    return accuracy_score(expected, predicted), f1_score(expected, predicted, average="macro"), len(expected)


# --------------------------------------------------------------------------------------------------------------


def test_qrels_agreement_and_evaluation_of_an_old_campaign_are_the_same_after_0020():
    old = rebuilt_at(OLD)
    try:
        build_old_campaign(old.get_model)
        judgments, adjudications, rankings = read_old_rows(old.get_model)
        assert len(judgments) == 12 + 2 + 9 + 4 + 1 and len(adjudications) == 2 and len(rankings) == 6

        # Before: the qrels files, the agreement and the evaluation figures, from the rows as stored.
        files = {
            (dimension, phase, rule): trec_lines(qrels_by_hand(judgments, adjudications, dimension=dimension, phase=phase, rule=rule))
            for dimension in DIMENSIONS for phase in ("main", "training") for rule in ("majority", "adjudicated")
        }
        # The hand-written file agrees with a reading of the rows by eye: majority ties to the lower grade (2/1 → 1) and
        # to the stance listed first (SECOND/FIRST → FIRST), carol's and bob's copies count, topics 2 before 10.
        assert files["relevance", "main", "majority"] == (
            "2 0 Z4 0\n2 0 a1 1\n2 0 b2 1\n2 0 c3 0\n2 0 e5 2\n2 0 f6 0\n10 0 a1 0\n10 0 b2 2\n10 0 c3 1\n10 0 g7 1\n"
        )
        assert files["stance", "main", "adjudicated"] == "2 0 Z4 NEUTRAL\n2 0 a1 SECOND\n2 0 e5 SECOND\n10 0 b2 SECOND\n10 0 c3 NO\n10 0 g7 FIRST\n"
        assert files["quality", "main", "adjudicated"] == "2 0 Z4 1\n2 0 a1 1\n2 0 e5 1\n10 0 b2 2\n10 0 c3 1\n10 0 g7 2\n"
        assert files["relevance", "training", "majority"] == "1 0 Z4 2\n1 0 a1 2\n1 0 b2 1\n1 0 c3 0\n1 0 e5 0\n1 0 f6 0\n"
        training_agreement = agreement_by_hand(judgments, "training")
        main_agreement = agreement_by_hand(judgments, "main")

        main = {d: qrels_by_hand(judgments, adjudications, dimension=d, phase="main") for d in DIMENSIONS}
        adjudicated_relevance = qrels_by_hand(judgments, adjudications, dimension="relevance", phase="main", rule="adjudicated")
        ndcg = {
            (kind, order, version): ndcg5_by_pytrec_eval(rankings, main[kind], order=order, version=version)
            for kind in ("relevance", "quality") for order, version in (("score", 10), ("score", 9), ("rank", 10))
        }
        ndcg_adjudicated = ndcg5_by_pytrec_eval(rankings, adjudicated_relevance)
        judged = {kind: judged_at_5(rankings, main[kind], ndcg[kind, "score", 10]) for kind in ("relevance", "quality")}
        stance_alpha = stance_by_hand(rankings, main["stance"], "alpha")
        # Topic 1 has training labels only and topic 3 none: neither is evaluated; beta has no line for either.
        assert {tag: set(per_topic) for tag, per_topic in ndcg["relevance", "score", 10].items()} == {"alpha": {"2", "10"}, "beta": {"2", "10"}}
        # beta's near tie on topic 10 is ordered differently by trec_eval 9, which changes its relevance figure there.
        assert ndcg["relevance", "score", 9]["beta"]["10"] != ndcg["relevance", "score", 10]["beta"]["10"]
        assert ndcg["relevance", "rank", 10]["beta"]["2"] != ndcg["relevance", "score", 10]["beta"]["2"]

        newest()
        after_migration(files, training_agreement, main_agreement, ndcg, ndcg_adjudicated, judged, stance_alpha)
    finally:
        newest()


def after_migration(files, training_agreement, main_agreement, ndcg, ndcg_adjudicated, judged, stance_alpha):
    from assessments.models import Campaign, Judgment
    from assessments.selectors.agreement import Scope, compute_agreement
    from assessments.services.evaluation import evaluate_runs
    from assessments.services.exports import export_qrels

    campaign = Campaign.objects.get(slug="touche22")
    assert campaign.label_scheme.names == DIMENSIONS
    assert Judgment.objects.get(topic__number="2", document__doc_id="c3", assessor__username="alice").labels == {"relevance": 0}

    # The qrels exports, byte for byte.
    for (dimension, phase, rule), expected in files.items():
        exported = b"".join(export_qrels(campaign=campaign, kind=dimension, phase=phase, rule=rule)).decode()
        assert exported == expected, (dimension, phase, rule)

    # Agreement: training (also as round 1) and the main phase's overlap.
    for scope, by_hand in ((Scope("training"), training_agreement), (Scope("training", round=1), training_agreement),
                           (Scope("main"), main_agreement)):
        figures = compute_agreement(campaign=campaign, scope=scope)
        assert list(figures.dimensions) == list(DIMENSIONS)
        for dimension, expected in by_hand.items():
            got = figures.dimensions[dimension]
            report = got.report
            assert report.n_items == expected["n_items"], (scope, dimension)
            (pair,) = report.cohen
            a, b, n, kappa, linear = expected["pair"]
            assert (pair.rater_a, pair.rater_b, pair.n_items) == (a, b, n), (scope, dimension)
            assert pair.unweighted == close(kappa), (scope, dimension)
            assert pair.linear == close(linear), (scope, dimension)
            assert report.fleiss == close(expected["fleiss"]), (scope, dimension)
            assert report.alpha == close(expected["alpha"]), (scope, dimension)
            assert report.binary_kappa == close(expected["binary"]), (scope, dimension)
            assert sorted(r.rater for r in got.flagged) == expected["flagged"], (scope, dimension)

    # Evaluation: nDCG@5 per topic as pytrec_eval gives it, means, judged@5, the trec_eval 9 note, the stance scores.
    for order, version in (("score", 10), ("score", 9), ("rank", 10)):
        board = evaluate_runs(campaign=campaign, measure="nDCG@5", kinds=("relevance", "quality"), order=order, trec_eval=version)
        assert [r.tag for r in board.results] == sorted(ndcg["relevance", order, version], key=lambda tag: -mean(ndcg["relevance", order, version][tag]))
        assert board.topics == {"relevance": 2, "quality": 2}
        for result in board.results:
            for kind in ("relevance", "quality"):
                expected = ndcg[kind, order, version][result.tag]
                assert result.scores[kind].per_topic == expected, (order, version, result.tag, kind)
                assert result.scores[kind].mean == pytest.approx(mean(expected), abs=1e-15)
                if (order, version) == ("score", 10):
                    assert result.scores[kind].judged_at_k == pytest.approx(judged[kind][result.tag], abs=1e-15)
        if (order, version) == ("score", 10):
            notes = {result.tag: result.other_version for result in board.results}
            assert set(notes["alpha"]) == set()
            for kind in ("relevance", "quality"):
                nine, ten = ndcg[kind, "score", 9]["beta"], ndcg[kind, "score", 10]["beta"]
                if nine != ten:
                    assert notes["beta"][kind].version == 9
                    assert notes["beta"][kind].mean == pytest.approx(mean(nine), abs=1e-15)
                    assert notes["beta"][kind].topics == [t for t in ("2", "10") if nine[t] != ten[t]]
                else:
                    assert kind not in notes["beta"]
            stance = {result.tag: result.stance for result in board.results}
            assert board.stance_kind == "stance" and stance["beta"] is None
            accuracy, macro_f1, n = stance_alpha
            assert (stance["alpha"].n, stance["alpha"].accuracy) == (n, pytest.approx(accuracy, abs=1e-15))
            assert stance["alpha"].macro_f1 == pytest.approx(macro_f1, abs=1e-15)

    board = evaluate_runs(campaign=campaign, measure="nDCG@5", kinds=("relevance",), rule="adjudicated")
    assert {result.tag: result.scores["relevance"].per_topic for result in board.results} == ndcg_adjudicated


def close(figure):
    """A figure worked out by a reference tool, equal up to rounding (None: undefined, as the app says too)."""
    return None if figure is None else pytest.approx(figure, abs=1e-12)


def mean(per_topic):
    return sum(per_topic.values()) / len(per_topic)
