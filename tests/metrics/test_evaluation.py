"""assessments.metrics.evaluation, checked only against independent references.

The references are hand-computed known answers, pytrec_eval (trec_eval's own C code, run inside the test),
scikit-learn for stance F1, and trec_eval's real ``-q`` output for real Touché 2020 runs. None of the expected
values was copied from this module's output.
"""

import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
import pytrec_eval
from sklearn.metrics import accuracy_score, f1_score

from assessments.labels import PRESETS
from assessments.metrics.evaluation import (
    evaluate_run,
    order_positions,
    order_run,
    stance_dimension,
    stance_scores,
)
from assessments.metrics.measures import judged_at_k, ndcg_at_k

REPO_ROOT = Path(__file__).resolve().parents[2]
STANCES = ("FIRST", "SECOND", "NEUTRAL", "NO")


# Small readers for the real files, kept here so these tests do not depend on assessments/formats.


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        topic, _, doc, label = line.split()
        qrels.setdefault(topic, {})[doc] = int(label)
    return qrels


def read_run(path: Path) -> dict[str, list[tuple[str, int, float]]]:
    run: dict[str, list[tuple[str, int, float]]] = {}
    for line in path.read_text().splitlines():
        topic, _, doc, rank, score, _tag = line.split()
        run.setdefault(topic, []).append((doc, int(rank), float(score)))
    return run


def parse_trec_eval_output(lines: list[str]) -> dict[str, dict[str, str]]:
    """``trec_eval -q`` output -> measure -> qid (or "all") -> the printed value.

    Values stay as printed text, so a comparison with f"{value:.4f}" checks exactly what trec_eval wrote.
    """
    table: dict[str, dict[str, str]] = {}
    for line in lines:
        measure, qid, value = line.split("\t")
        table.setdefault(measure.strip(), {})[qid] = value.strip()
    return table


def read_reference(touche_data: Path, n: int) -> dict[str, dict[str, str]]:
    path = touche_data / "2020-task1" / "reference-trec-eval" / f"run{n}.trec_eval-q.txt"
    return parse_trec_eval_output(path.read_text().splitlines())


def shanks_run(touche_data: Path, n: int) -> dict[str, list[tuple[str, int, float]]]:
    return read_run(touche_data / "2020-task1" / "runs-shanks-posthoc" / f"shanks-run-{n}.txt")


def pytrec_ndcg(qrels, scored_run, cutoffs) -> dict[str, dict[str, float]]:
    """trec_eval's ndcg_cut for ``scored_run`` (topic -> doc -> score), via pytrec_eval."""
    measure = "ndcg_cut." + ",".join(map(str, cutoffs))
    return pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(scored_run)


# ---------------------------------------------------------------------------------------------------------
# Ordering


def test_score_order_breaks_ties_by_doc_id_descending_and_ignores_rank():
    entries = [("a", 1, 1.0), ("b", 2, 1.0), ("c", 3, 2.0)]
    assert order_run(entries) == ["c", "b", "a"]
    assert order_run(entries, by="rank") == ["a", "b", "c"]


def test_score_order_compares_doc_ids_bytewise_like_strcmp():
    # strcmp: "d9" > "d10" ('9' > '1'), "d10" > "D9" ('d' > 'D'), and the UTF-8 bytes of "é" (C3 A9) > "z" (7A).
    entries = [("D9", 0, 1.0), ("d10", 1, 1.0), ("d9", 2, 1.0), ("é", 3, 1.0), ("z", 4, 1.0)]
    assert order_run(entries) == ["é", "z", "d9", "d10", "D9"]


def test_rank_order_breaks_equal_ranks_by_doc_id_descending():
    assert order_run([("a", 1, 9.0), ("b", 1, 0.0), ("c", 0, 0.0)], by="rank") == ["c", "b", "a"]


@pytest.mark.parametrize("by", ["score", "rank"])
def test_depth_keeps_the_head_of_the_full_order_even_across_ties(by):
    rng = random.Random(7)
    docs = rng.sample(range(10_000), 300)
    # Few distinct scores and ranks, so nearly every cut falls inside a tie.
    entries = [(f"doc{d}", rng.randrange(5), rng.randrange(4) / 2) for d in docs]
    full = order_run(entries, by=by)
    for depth in (1, 2, 5, 10, 299, 300, 301):
        assert order_run(entries, by=by, depth=depth) == full[:depth]


def test_order_positions_gives_the_lines_in_the_same_order_as_order_run():
    # Hand-worked: scores tie between b and c (c first: doc id descending); ranks tie between a and c.
    docs, ranks, scores = ["a", "b", "c", "d"], [2, 1, 2, 0], [0.5, 1.0, 1.0, -3.0]
    assert order_positions(docs, ranks, scores, by="score") == [2, 1, 0, 3]
    assert order_positions(docs, ranks, scores, by="rank") == [3, 1, 2, 0]

    rng = random.Random(11)
    docs = [f"doc{d}" for d in rng.sample(range(10_000), 500)]
    ranks = [rng.randrange(-3, 40) for _ in docs]
    scores = [rng.randrange(8) / 4 - 1 for _ in docs]
    for by in ("score", "rank"):
        positions = order_positions(docs, ranks, scores, by=by)
        assert [docs[i] for i in positions] == order_run(zip(docs, ranks, scores), by=by)


def test_order_accepts_an_iterator():
    assert order_run(iter([("a", 0, 1.0), ("b", 1, 2.0)]), depth=1) == ["b"]


@pytest.mark.parametrize("depth", [None, 2])
def test_it_rejects_a_duplicate_document_in_the_ranking(depth):
    with pytest.raises(ValueError, match="more than once"):
        order_run([("a", 0, 2.0), ("a", 1, 1.0), ("b", 2, 0.0)], depth=depth)


def test_it_rejects_an_unknown_order_and_a_non_positive_cutoff():
    with pytest.raises(ValueError, match="unknown order"):
        order_run([], by="stance")
    with pytest.raises(ValueError, match="positive"):
        order_run([("a", 0, 1.0)], depth=0)
    with pytest.raises(ValueError, match="positive"):
        ndcg_at_k(["a"], {"a": 1}, 0)


# ---------------------------------------------------------------------------------------------------------
# nDCG@k and judged@k: known answers worked out by hand (gain = label, discount log2(rank + 1)).

LOG2_3 = math.log2(3)


@pytest.mark.parametrize(
    ("ranking", "qrels", "k", "expected"),
    [
        pytest.param(["a", "b"], {"a": 2, "b": 1}, 5, 1.0, id="ideal ranking"),
        # DCG = 1/log2(3) with nothing at rank 1. The -2 at rank 1 adds no negative gain.
        pytest.param(["spam", "rel"], {"spam": -2, "rel": 1}, 5, 1 / LOG2_3, id="negative label gives zero gain"),
        pytest.param(["a", "b"], {"a": 0, "b": -2}, 5, 0.0, id="topic without a relevant document"),
        pytest.param(["a", "b"], {"a": -2, "b": -2}, 5, 0.0, id="topic judged only negative"),
        pytest.param([], {"a": 1}, 5, 0.0, id="empty ranking"),
        # The ideal uses the unretrieved x (label 2) first: IDCG = 2 + 1/log2(3).
        pytest.param(["a", "u"], {"a": 1, "x": 2}, 5, 1 / (2 + 1 / LOG2_3), id="ideal from all judged labels"),
        pytest.param(["1", "2", "3", "4", "5", "f"], {"f": 1}, 5, 0.0, id="relevant just below the cut"),
        pytest.param(["1", "2", "3", "4", "5", "f"], {"f": 1}, 6, 1 / math.log2(7), id="relevant at the cut"),
        # Seven relevant documents, all five slots filled with them: the ideal DCG is also cut at k.
        pytest.param(list("abcde"), dict.fromkeys("abcdefg", 1), 5, 1.0, id="ideal cut at k"),
        # DCG = 1 + 0 + 2/log2(4) = 2, IDCG = 2 + 1/log2(3) + 0 = 2.6309...
        pytest.param(["b", "u", "a"], {"a": 2, "b": 1, "c": 0}, 3, 2 / (2 + 1 / LOG2_3), id="graded labels"),
    ],
)
def test_ndcg_known_answers(ranking, qrels, k, expected):
    assert ndcg_at_k(ranking, qrels, k) == pytest.approx(expected, abs=1e-12)


def test_rank_and_score_orders_can_give_different_ndcg():
    # The run's rank column puts a (label 2) first, but its score puts b (label 0) first.
    entries = [("a", 1, 0.1), ("b", 2, 0.9)]
    qrels = {"a": 2, "b": 0}
    assert ndcg_at_k(order_run(entries, by="rank"), qrels, 5) == 1.0
    assert ndcg_at_k(order_run(entries, by="score"), qrels, 5) == pytest.approx(1 / LOG2_3)


@pytest.mark.parametrize(
    ("ranking", "k", "expected"),
    [
        pytest.param(["a", "b", "c"], 5, 0.6, id="short ranking still divides by k"),
        pytest.param(["a", "u", "b", "v"], 2, 0.5, id="only the top k count"),
        pytest.param(["b"], 1, 1.0, id="negative label counts as judged"),
        pytest.param([], 5, 0.0, id="empty ranking"),
    ],
)
def test_judged_at_k_known_answers(ranking, k, expected):
    assert judged_at_k(ranking, {"a": 0, "b": -2, "c": 1}, k) == expected


# ---------------------------------------------------------------------------------------------------------
# evaluate_run: which topics count (trec_eval without and with -c)


@pytest.fixture
def partial_run():
    run = {
        "1": [("a", 1, 1.0)],  # nDCG 1, judged 1/5
        "2": [("u", 1, 1.0)],  # nDCG 0, judged 0
        "4": [],  # no lines: trec_eval never sees this topic
        "9": [("a", 1, 1.0)],  # no qrels: ignored
    }
    qrels = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}, "4": {"d": 1}}
    return run, qrels


def test_mean_is_over_qrels_topics_the_run_has_by_default(partial_run):
    evaluation = evaluate_run(*partial_run, name="team-run-1")
    assert evaluation.run == "team-run-1"
    assert evaluation.measure == "ndcg_cut_5"
    assert evaluation.per_topic == {"1": 1.0, "2": 0.0}
    assert evaluation.mean == 0.5
    assert evaluation.judged_at_k == pytest.approx(0.1)


def test_complete_counts_qrels_topics_missing_from_the_run_as_zero(partial_run):
    evaluation = evaluate_run(*partial_run, complete=True)
    assert evaluation.per_topic == {"1": 1.0, "2": 0.0, "3": 0.0, "4": 0.0}
    assert evaluation.mean == 0.25
    assert evaluation.judged_at_k == pytest.approx(0.05)


def test_a_run_sharing_no_topic_with_the_qrels_scores_zero():
    evaluation = evaluate_run({"7": [("a", 1, 1.0)]}, {"1": {"a": 1}})
    assert (evaluation.per_topic, evaluation.mean, evaluation.judged_at_k) == ({}, 0.0, 0.0)


def test_per_topic_is_keyed_by_topic_text_whatever_the_key_type():
    evaluation = evaluate_run({51: [("a", 1, 1.0)]}, {51: {"a": 2}}, measure="nDCG@10")
    assert (evaluation.measure, evaluation.per_topic) == ("ndcg_cut_10", {"51": 1.0})


# ---------------------------------------------------------------------------------------------------------
# pytrec_eval on random runs: ties in scores, shuffled rank columns, negative labels, topics without
# relevant documents, and topics on only one side.


def random_case(rng: random.Random):
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, int, float]]] = {}
    for topic in map(str, range(1, 13)):
        # Mixed case and lengths, so ties exercise strcmp ("d9" > "d10" > "D9").
        docs = sorted({f"{rng.choice('dD')}{rng.randrange(150)}" for _ in range(60)})
        labels = (-2, 0) if topic in ("4", "8") else (-2, 0, 0, 1, 2, 3)
        judged = rng.sample(docs, rng.randrange(len(docs) // 2))
        if judged:
            qrels[topic] = {doc: rng.choice(labels) for doc in judged}
            # trec_eval sizes its label table from the topic's largest label (form_res_rels.c), so a topic
            # judged only -2 is undefined behaviour there and crashes pytrec_eval. Ours scores 0 (see the
            # known answers).
            qrels[topic][judged[0]] = max(0, qrels[topic][judged[0]])
        if rng.random() < 0.85:
            retrieved = rng.sample(docs, rng.randrange(1, len(docs) + 1))
            ranks = rng.sample(range(len(retrieved)), len(retrieved))
            # Eight distinct scores, some negative: ties everywhere.
            run[topic] = [(doc, rank, rng.randrange(8) / 4 - 0.5) for doc, rank in zip(retrieved, ranks)]
    return qrels, run


@pytest.mark.parametrize("seed", range(25))
def test_ndcg_matches_pytrec_eval_on_random_runs(seed):
    qrels, run = random_case(random.Random(seed))
    cutoffs = (1, 3, 5, 10)
    by_score = pytrec_ndcg(qrels, {t: {d: s for d, _, s in es} for t, es in run.items()}, cutoffs)
    # trec_eval cannot follow a rank column, but it can rank by score = -rank (the ranks here are distinct).
    by_rank = pytrec_ndcg(qrels, {t: {d: -r for d, r, _ in es} for t, es in run.items()}, cutoffs)
    for order, expected in (("score", by_score), ("rank", by_rank)):
        for k in cutoffs:
            evaluation = evaluate_run(run, qrels, measure=f"nDCG@{k}", order=order)
            assert evaluation.per_topic.keys() == expected.keys()
            for topic, value in evaluation.per_topic.items():
                assert value == pytest.approx(expected[topic][f"ndcg_cut_{k}"], abs=1e-9), (order, k, topic)


# ---------------------------------------------------------------------------------------------------------
# Real Touché 2020 Task 1 runs against trec_eval's own -q output


@pytest.mark.parametrize(("n", "expected_mean"), [(1, "0.6407"), (2, "0.6213"), (3, "0.6407"), (5, "0.4513")])
def test_it_reproduces_trec_eval_on_real_touche_runs(touche_data, n, expected_mean):
    reference = read_reference(touche_data, n)
    qrels = read_qrels(touche_data / "2020-task1" / "qrels-relevance.txt")
    evaluation = evaluate_run(shanks_run(touche_data, n), qrels, measure="nDCG@5")

    assert reference["runid"]["all"] == f"shanks-run-{n}"
    expected = reference["ndcg_cut_5"]
    per_topic = {qid: value for qid, value in expected.items() if qid != "all"}
    assert {qid: f"{value:.4f}" for qid, value in evaluation.per_topic.items()} == per_topic
    # Every qrels topic is in these runs, so trec_eval's default and -c agree here (num_q = 49 either way).
    assert len(evaluation.per_topic) == int(reference["num_q"]["all"]) == 49
    assert evaluate_run(shanks_run(touche_data, n), qrels, measure="nDCG@5", complete=True).per_topic == evaluation.per_topic
    assert f"{evaluation.mean:.4f}" == expected["all"] == expected_mean


def undo_thousands_separator(printed: str) -> float:
    # run4's file also went through a tool that read "." as a thousands separator: every value of magnitude
    # 1 or more was reprinted with its point moved ("1.0000" -> "10.000", "-980.0000" -> "-9.800.000").
    # trec_eval prints 4 decimals, so the digits are intact.
    return int(printed.replace(".", "")) / 10**4


def test_run4_reference_is_a_mislabelled_copy_of_run3(touche_data):
    reference = read_reference(touche_data, 4)
    qrels = read_qrels(touche_data / "2020-task1" / "qrels-relevance.txt")
    run3 = evaluate_run(shanks_run(touche_data, 3), qrels, measure="nDCG@5")
    run4 = evaluate_run(shanks_run(touche_data, 4), qrels, measure="nDCG@5")

    assert reference["runid"]["all"] == "shanks-run-3"
    printed = {qid: undo_thousands_separator(value) for qid, value in reference["ndcg_cut_5"].items()}
    assert printed.pop("all") == round(run3.mean, 4)
    assert printed == {qid: round(value, 4) for qid, value in run3.per_topic.items()}
    # Run 4's real scores differ, so this file must not be used as its reference.
    assert sum(round(value, 4) != printed[qid] for qid, value in run4.per_topic.items()) > 40


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_it_matches_pytrec_eval_on_real_touche_runs_in_both_orders(touche_data, n):
    # This is also the only independent check for run 4, which has no usable reference file.
    qrels = read_qrels(touche_data / "2020-task1" / "qrels-relevance.txt")
    run = shanks_run(touche_data, n)
    by_score = pytrec_ndcg(qrels, {t: {d: s for d, _, s in es} for t, es in run.items()}, (5, 10))
    by_rank = pytrec_ndcg(qrels, {t: {d: -r for d, r, _ in es} for t, es in run.items()}, (5, 10))
    for order, expected in (("score", by_score), ("rank", by_rank)):
        for k in (5, 10):
            evaluation = evaluate_run(run, qrels, measure=f"nDCG@{k}", order=order)
            assert evaluation.per_topic.keys() == expected.keys()
            for topic, value in evaluation.per_topic.items():
                assert value == pytest.approx(expected[topic][f"ndcg_cut_{k}"], abs=1e-9), (order, k, topic)


def test_rank_and_score_order_pick_different_top5_in_a_real_run(touche_data):
    # The README's warning, made concrete: Shanks run 5's rank column disagrees with its scores.
    run = shanks_run(touche_data, 5)
    differing = [t for t, es in run.items() if order_run(es, depth=5) != order_run(es, by="rank", depth=5)]
    assert differing


# ---------------------------------------------------------------------------------------------------------
# Stance


def test_stance_scores_known_answer():
    truth = {
        ("1", "a"): "FIRST",
        ("1", "b"): "SECOND",
        ("1", "c"): "NEUTRAL",  # the run wrote Q0 (None): not scored
        ("1", "d"): None,  # judged without a stance: not scored
        ("2", "a"): "NO",
    }
    predicted = {
        ("1", "a"): "FIRST",
        ("1", "b"): "FIRST",
        ("1", "c"): None,
        ("1", "d"): "FIRST",
        ("2", "a"): "NO",
        ("3", "z"): "FIRST",  # not judged: not scored
    }
    scores = stance_scores(predicted, truth)
    # Scored: (FIRST, FIRST), (SECOND, FIRST), (NO, NO). F1: FIRST 2/3, SECOND 0, NO 1. NEUTRAL is absent.
    assert scores.n == 3
    assert scores.accuracy == pytest.approx(2 / 3)
    assert scores.macro_f1 == pytest.approx(5 / 9)


def test_stance_scores_are_none_when_the_run_classified_nothing():
    scores = stance_scores({("1", "a"): None}, {("1", "a"): "FIRST"})
    assert (scores.accuracy, scores.macro_f1, scores.n) == (None, None, 0)


@pytest.mark.parametrize("seed", range(20))
def test_stance_scores_match_scikit_learn(seed):
    rng = random.Random(seed)
    # Some teams use only some labels (a baseline writes NO everywhere), so label sets differ per side.
    predicted_labels = rng.sample(STANCES, rng.randrange(1, 5)) + [None]
    truth_labels = rng.sample(STANCES, rng.randrange(1, 5)) + [None]
    keys = [(str(rng.randrange(5)), f"doc{i}") for i in range(rng.randrange(1, 80))]
    predicted = {key: rng.choice(predicted_labels) for key in keys if rng.random() < 0.9}
    truth = {key: rng.choice(truth_labels) for key in keys if rng.random() < 0.9}
    scored = [key for key in keys if truth.get(key) is not None and predicted.get(key) is not None]
    y_true = [truth[key] for key in scored]
    y_pred = [predicted[key] for key in scored]

    scores = stance_scores(predicted, truth)
    assert scores.n == len(scored)
    if scored:
        assert scores.accuracy == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-12)
        assert scores.macro_f1 == pytest.approx(f1_score(y_true, y_pred, average="macro"), abs=1e-12)


# ---------------------------------------------------------------------------------------------------------


def test_importing_the_module_does_not_import_django():
    code = "import sys, assessments.metrics.evaluation; sys.exit('django' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT).returncode == 0


@pytest.mark.parametrize("preset, dimension", [
    ("touche-2020-task1", None),  # no category: a run's stance column can only say Q0
    ("touche-2022-task2", "stance"),
    ("touche-2023-task2", "stance"),  # its direction and evidence are categories too, asked before the stance
])
def test_the_stance_column_answers_to_the_schemes_last_category(preset, dimension):
    found = stance_dimension(PRESETS[preset][1])
    assert (found and found.name) == dimension
