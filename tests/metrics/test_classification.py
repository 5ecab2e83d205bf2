"""assessments.metrics.classification, checked against the organisers' own Task 4 scorer and scikit-learn.

The organisers' ``evaluation.py`` runs here in a subprocess on the real toy truth and on generated truth files,
and every value it prints (overall and per language) must equal ours rounded as it rounds. None of the expected
values was copied from this module's output.
"""

import csv
import random
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from assessments.metrics.classification import CONVENTIONS, MEASURES, scores, scores_by_group
from tests.task4_scorer import organisers_scores

LABELS = ("In favor", "Against", "Other")
LANGUAGES = ("en", "fr", "de", "it", "el", "hu")  # the languages of the lab's test set (CF_E-Test)
HEADER = (
    "id",
    "id_prop",
    "alignment",
    "comment",
    "depth",
    "thread_id",
    "last_comment_in_thread",
    "upvote",
    "downvote",
    "Topic",
    "lan",
    "time",
    "label",
)


# Small readers and writers for the scorer's files, kept here so these tests do not depend on assessments/formats.


def read_truth(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))


def write_truth(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """(id, language, label) rows, written with the lab's whole header as the scorer reads every column."""
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, delimiter="\t", lineterminator="\n")
        writer.writerow(HEADER)
        for n, (ident, language, label) in enumerate(rows):
            comment = f'Comment {n}, "quoted"\nand on two lines.'
            writer.writerow(
                [
                    ident,
                    str(200 + n % 7),
                    "---",
                    comment,
                    "0.0",
                    "",
                    "False",
                    "1",
                    "0",
                    "Migration",
                    language,
                    "2021-04-21",
                    label,
                ]
            )
    return path


def write_run(path: Path, ids: list[str], labels: list[str]) -> Path:
    path.write_text("".join(f"{ident}\t{label}\n" for ident, label in zip(ids, labels, strict=True)), encoding="utf-8")
    return path


def as_script_keys(results: dict[str, dict[str, float]]) -> dict[str, float]:
    return {
        f"{group}-{measure.lower()}": round(value, 4)
        for group, values in results.items()
        for measure, value in values.items()
    }


# ---------------------------------------------------------------------------------------------------------
# Known answers


def test_known_answer_in_both_conventions():
    gold = ["A", "A", "B", "C"]
    predicted = ["A", "B", "B", "B"]
    # Recall A 1/2, B 1, C 0. Precision A 1, B 1/3, C never predicted: 1 (touche) or 0 (sklearn).
    # F1 A 2/3, B 1/2, C 0 either way (recall 0).
    touche = scores(gold, predicted)
    sklearn = scores(gold, predicted, convention="sklearn")

    assert list(touche) == list(MEASURES)
    assert touche == pytest.approx(
        {
            "Micro Recall": 0.5,
            "Micro Precision": 0.5,
            "Micro F1-Score": 0.5,
            "Macro Recall": 0.5,
            "Macro Precision": 7 / 9,
            "Macro F1-Score": 7 / 18,
            "Accuracy": 0.5,
        }
    )
    assert sklearn == pytest.approx({**touche, "Macro Precision": 4 / 9})


def test_a_label_only_predicted_has_recall_and_precision_zero_in_both():
    # B is never gold: recall 0 (no gold), precision 0 (its one prediction is wrong). A: recall 1/2, precision 1.
    for convention in CONVENTIONS:
        result = scores(["A", "A"], ["A", "B"], convention=convention)
        assert result["Macro Recall"] == pytest.approx(0.25)
        assert result["Macro Precision"] == pytest.approx(0.5)
        assert result["Macro F1-Score"] == pytest.approx((2 / 3) / 2)


def test_groups_are_scored_on_their_own_in_order_of_first_appearance():
    gold = ["A", "B", "A", "B", "A"]
    predicted = ["A", "A", "A", "B", "B"]
    groups = ["fr", "de", "fr", "de", "en"]
    result = scores_by_group(gold, predicted, groups)

    assert list(result) == ["all", "fr", "de", "en"]
    assert result["all"] == scores(gold, predicted)
    assert result["fr"] == scores(["A", "A"], ["A", "A"])
    assert result["en"]["Macro Precision"] == pytest.approx(0.5)  # A never predicted in en: precision 1, B 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: scores(["A"], ["A", "B"]), "1 gold labels but 2 predictions"),
        (lambda: scores([], []), "nothing to score"),
        (lambda: scores(["A"], ["A"], convention="weka"), "unknown convention 'weka'"),
        (lambda: scores_by_group(["A"], ["A"], []), "1 gold labels but 0 groups"),
        (lambda: scores_by_group(["A"], ["A"], ["all"]), "may not be called 'all'"),
    ],
)
def test_it_refuses_what_it_cannot_score(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------------------------------------------------
# The organisers' scorer


@pytest.mark.parametrize(
    "predict",
    [
        pytest.param(lambda gold, rng: [rng.choice(("In favor", "Other")) for _ in gold], id="against-never-predicted"),
        pytest.param(lambda gold, rng: ["In favor"] * len(gold), id="the-baseline"),
        pytest.param(lambda gold, rng: [rng.choice(LABELS) for _ in gold], id="all-three-labels"),
        pytest.param(lambda gold, rng: list(gold), id="perfect"),
    ],
)
def test_it_matches_the_organisers_scorer_on_the_toy_truth(touche_data, tmp_path, predict):
    truth = touche_data / "2023-task4-toy" / "toy-truth" / "data.tsv"
    rows = read_truth(truth)
    ids, gold, languages = [r["id"] for r in rows], [r["label"] for r in rows], [r["lan"] for r in rows]
    predicted = predict(gold, random.Random(4))
    # The scorer asserts a run of the truth's length with its ids in its order.
    run = write_run(tmp_path / "run.tsv", ids, predicted)

    expected = organisers_scores(touche_data, truth, run, tmp_path / "out.prototext")

    assert len(ids) == 10 and set(languages) == {"en", "fr", "de", "es"}
    assert as_script_keys(scores_by_group(gold, predicted, languages)) == expected


def random_truth(rng: random.Random, n: int = 600) -> tuple[list[str], list[str], list[str]]:
    """Six languages; Hungarian gold has no Other, so a run that says Other there predicts a label without gold."""
    ids = [f"comment_{rng.randrange(10**6)}_{i}" for i in range(n)]
    languages = [LANGUAGES[i % len(LANGUAGES)] for i in range(n)]
    rng.shuffle(languages)
    weights = (5, 3, 2)
    gold = [
        rng.choices(LABELS[:2] if lan == "hu" else LABELS, weights[:2] if lan == "hu" else weights)[0]
        for lan in languages
    ]
    return ids, languages, gold


def random_runs(rng: random.Random, gold: list[str], languages: list[str]) -> dict[str, list[str]]:
    return {
        "uniform": [rng.choice(LABELS) for _ in gold],
        "mostly-right": [g if rng.random() < 0.7 else rng.choice(LABELS) for g in gold],
        "never-other": [rng.choice(LABELS[:2]) for _ in gold],
        # In Greek only In favor is predicted: Against and Other get the touche precision of 1 there.
        "greek-in-favor": [
            "In favor" if lan == "el" else (g if rng.random() < 0.5 else "Against") for g, lan in zip(gold, languages)
        ],
        "one-label": ["Against"] * len(gold),
    }


@pytest.mark.parametrize("seed", [1, 2])
def test_it_matches_the_organisers_scorer_on_generated_truth(touche_data, tmp_path, seed):
    rng = random.Random(seed)
    ids, languages, gold = random_truth(rng)
    truth = write_truth(tmp_path / "truth.tsv", list(zip(ids, languages, gold)))

    for name, predicted in random_runs(rng, gold, languages).items():
        run = write_run(tmp_path / f"{name}.tsv", ids, predicted)
        expected = organisers_scores(touche_data, truth, run, tmp_path / f"{name}.prototext")

        assert len(expected) == 7 * (1 + len(LANGUAGES)), name
        assert as_script_keys(scores_by_group(gold, predicted, languages)) == expected, name


# ---------------------------------------------------------------------------------------------------------
# scikit-learn


def sklearn_scores(gold: list[str], predicted: list[str]) -> dict[str, float]:
    labels = sorted(set(gold + predicted))
    result = {"Accuracy": accuracy_score(gold, predicted)}
    for average in ("micro", "macro"):
        precision, recall, f1, _ = precision_recall_fscore_support(
            gold, predicted, average=average, labels=labels, zero_division=0
        )
        result |= {
            f"{average.title()} Recall": recall,
            f"{average.title()} Precision": precision,
            f"{average.title()} F1-Score": f1,
        }
    return result


@pytest.mark.parametrize("seed", range(5))
def test_the_sklearn_convention_matches_scikit_learn(seed):
    rng = random.Random(seed)
    ids, languages, gold = random_truth(rng, n=rng.randrange(50, 400))

    for name, predicted in random_runs(rng, gold, languages).items():
        results = scores_by_group(gold, predicted, languages, convention="sklearn")
        assert results["all"] == pytest.approx(sklearn_scores(gold, predicted), abs=1e-12), name
        for language in LANGUAGES:
            pairs = [(g, p) for g, p, lan in zip(gold, predicted, languages) if lan == language]
            expected = sklearn_scores([g for g, _ in pairs], [p for _, p in pairs])
            assert results[language] == pytest.approx(expected, abs=1e-12), (name, language)


def test_the_conventions_differ_only_in_the_precision_of_labels_never_predicted():
    rng = random.Random(7)
    _, languages, gold = random_truth(rng)
    predicted = ["In favor" if rng.random() < 0.6 else "Against" for _ in gold]  # Other never predicted
    touche = scores(gold, predicted)
    sklearn = scores(gold, predicted, convention="sklearn")

    assert touche["Macro Precision"] == pytest.approx(sklearn["Macro Precision"] + 1 / 3)
    assert touche["Macro F1-Score"] == sklearn["Macro F1-Score"]  # recall 0 makes F1 0 either way
    assert {k: v for k, v in touche.items() if k != "Macro Precision"} == {
        k: v for k, v in sklearn.items() if k != "Macro Precision"
    }

