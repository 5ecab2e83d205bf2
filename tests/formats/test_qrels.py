import io
from collections import Counter

import pytest

from assessments.formats.errors import FormatError
from assessments.formats.qrels import parse_qrels, topic_sort_key, write_qrels
from assessments.labels import CATEGORY, PRESETS, QUESTION, Dimension, LabelValue

COMPARATIVE = PRESETS["touche-2022-task2"][1]  # relevance 0–2, quality 0–2, stance FIRST/SECOND/NEUTRAL/NO
# The 2023 Task 1 stance file adds ONTOPIC (on topic, but neither pro nor con) to its stances.
STANCE_2023 = Dimension(
    "stance", "Stance", CATEGORY,
    tuple(LabelValue(value, value, key) for value, key in (("PRO", "p"), ("CON", "c"), ("NEUTRAL", "n"), ("NO", "o"), ("ONTOPIC", "t"))),
)


def dimension(kind: str) -> Dimension:
    return COMPARATIVE.dimension(kind)


def parse_sample(directory, name, kind, of=None):
    with open(directory / name, encoding="utf-8") as f:
        return list(parse_qrels(f, source=name, dimension=of or dimension(kind)))


def error_for(text: str, kind="relevance") -> FormatError:
    with pytest.raises(FormatError) as caught:
        list(parse_qrels(io.StringIO(text), source="qrels.txt", dimension=dimension(kind)))
    return caught.value


def test_it_reads_trec_qrels_with_q0_any_whitespace_blank_lines_and_spam_labels(samples):
    assert parse_sample(samples, "qrels-trec.txt", "relevance") == [
        ("1", "S197beaca-A971412e6", 0),
        ("1", "S1b03f390-A22aff8a0", -2),
        ("1", "S1b03f390-Aa73ba80f", 1),
        ("10", "c065954f-2019-04-18T14:32:52Z-00003-000", 2),
        ("2", "4fb4627-2019-04-18T18:47:37Z-00003-000", 2),
    ]


@pytest.mark.parametrize(("kind", "labels"), [("relevance", [0, 1, 0]), ("quality", [0, 1, 2])])
def test_it_picks_the_column_of_the_merged_five_column_layout(samples, kind, labels):
    rows = parse_sample(samples, "qrels-merged.tsv", kind)

    assert [row[:2] for row in rows] == [
        ("54", "clueweb12-0205wb-64-11095"),
        ("54", "clueweb12-0501wb-64-06459"),
        ("66", "clueweb12-0207wb-30-15337"),
    ]
    assert [row[2] for row in rows] == labels


def test_it_reads_stance_labels_as_strings(samples):
    labels = [row[2] for row in parse_sample(samples, "qrels-stance.txt", "stance")]

    assert labels == ["FIRST", "NEUTRAL", "NO", "SECOND"]


@pytest.mark.parametrize(("of", "labels"), [(STANCE_2023, ["PRO", "CON", "ONTOPIC"]), (dimension("relevance"), [2, 1, 0])])
def test_it_reads_the_layout_with_the_stance_in_column_two(samples, of, labels):
    assert [row[2] for row in parse_sample(samples, "qrels-stance-in-column-2.txt", None, of=of)] == labels


@pytest.mark.parametrize(
    ("name", "kind", "message"),
    [
        ("qrels-bad-duplicate.txt", "relevance", "qrels-bad-duplicate.txt:4: topic 1 judges document doc-a twice (first on line 1)"),
        ("qrels-bad-label.txt", "relevance", "qrels-bad-label.txt:2: relevance label '1.5' is not an integer"),
        ("qrels-bad-field-count.txt", "relevance", "qrels-bad-field-count.txt:3: expected 4 fields like the first line, got 3"),
        ("qrels-stance.txt", "relevance", "qrels-stance.txt:1: relevance label 'FIRST' is not an integer"),
        ("qrels-trec.txt", "stance", "qrels-trec.txt:1: unknown stance label '0'"),
        ("qrels-merged.tsv", "stance", "qrels-merged.tsv:1: this 5-column layout (topic, document, relevance, quality, 0) has no stance column"),
    ],
)
def test_it_rejects_bad_qrels_naming_the_line(samples, name, kind, message):
    with pytest.raises(FormatError) as caught:
        parse_sample(samples, name, kind)

    assert str(caught.value).startswith(message)


def test_it_rejects_a_first_line_with_a_field_count_of_no_known_layout():
    assert str(error_for("\n1 0 doc-a 1 extra fields\n")).startswith("qrels.txt:2: expected 4 fields (topic, 0, document, label) or 5")


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_it_rejects_a_file_without_judgments(text):
    error = error_for(text)

    assert (error.line, error.reason) == (None, "the file has no judgments")


def test_any_dimension_reads_the_four_column_layout_with_its_type_but_has_no_column_in_the_merged_one():
    coherence = PRESETS["touche-2022-task1"][1].dimension("coherence")
    on_topic = Dimension("ontopic", "On topic?", QUESTION, (LabelValue(1, "Yes", "y"), LabelValue(0, "No", "n")))

    assert list(parse_qrels(["1 0 a 2\n", "1 Q0 b 0\n"], source="q", dimension=coherence)) == [("1", "a", 2), ("1", "b", 0)]
    assert list(parse_qrels(["1 0 a 1\n"], source="q", dimension=on_topic)) == [("1", "a", 1)]
    with pytest.raises(FormatError, match="has no coherence column"):
        list(parse_qrels(["54\tdoc\t1\t2\t0\n"], source="q", dimension=coherence))
    with pytest.raises(FormatError, match="ontopic label 'yes' is not an integer"):
        list(parse_qrels(["1 0 a yes\n"], source="q", dimension=on_topic))


def test_it_writes_the_exact_trec_layout():
    stream = io.StringIO()

    count = write_qrels([("1", "doc-b", 2), ("1", "doc-a", -2), ("2", "doc-c", "FIRST")], stream)

    assert count == 3
    assert stream.getvalue() == "1 0 doc-b 2\n1 0 doc-a -2\n2 0 doc-c FIRST\n"


@pytest.mark.parametrize("row", [("1", "doc a", 1), ("1 2", "doc-a", 1), ("1", "", 1)])
def test_it_refuses_to_write_ids_that_could_not_be_read_back(row):
    with pytest.raises(ValueError):
        write_qrels([row], io.StringIO())


def test_topics_sort_numerically_then_by_text():
    numbers = ["10", "b", "2", "100", "a", "1", "02"]

    assert sorted(numbers, key=topic_sort_key) == ["1", "02", "2", "10", "100", "a", "b"]


# Counts and label distributions from the README of the real files (../shared/data/touche).
REAL_QRELS = [
    ("2020-task1/qrels-relevance.txt", "relevance", 2298, 49, {-2: 751, 0: 615, 1: 296, 2: 636}),
    ("2020-task2/qrels-relevance.txt", "relevance", 1783, 50, {0: 961, 1: 448, 2: 374}),
    ("2021-task2/qrels-relevance.txt", "relevance", 2076, 50, {0: 1435, 1: 377, 2: 264}),
    ("2021-task2/qrels-quality.txt", "quality", 2076, 50, {0: 695, 1: 516, 2: 865}),
    ("2021-task2/participant-merged-relevance-quality.tsv", "relevance", 2076, 50, {0: 1435, 1: 377, 2: 264}),
    ("2021-task2/participant-merged-relevance-quality.tsv", "quality", 2076, 50, {0: 695, 1: 516, 2: 865}),
    ("beir-webis-touche2020/qrels.beir-v1.0.0-webis-touche2020.test.txt", "relevance", 932, 49, {1: 296, 2: 636}),
]


@pytest.mark.parametrize(("path", "kind", "count", "topics", "labels"), REAL_QRELS, ids=[f"{p}-{k}" for p, k, *_ in REAL_QRELS])
def test_it_reads_every_real_touche_qrels_file(touche_data, path, kind, count, topics, labels):
    rows = parse_sample(touche_data, path, kind)

    assert len(rows) == count
    assert len({topic for topic, _, _ in rows}) == topics
    assert Counter(label for _, _, label in rows) == labels


def test_the_2020_task1_qrels_have_no_topic_25(touche_data):
    topics = {topic for topic, _, _ in parse_sample(touche_data, "2020-task1/qrels-relevance.txt", "relevance")}

    assert topics == {str(n) for n in range(1, 51)} - {"25"}


@pytest.mark.parametrize("kind", ["relevance", "quality"])
def test_the_merged_file_agrees_with_the_official_2021_task2_files(touche_data, kind):
    merged = parse_sample(touche_data, "2021-task2/participant-merged-relevance-quality.tsv", kind)
    official = parse_sample(touche_data, f"2021-task2/qrels-{kind}.txt", kind)

    assert merged == official


@pytest.mark.parametrize(
    "path",
    [
        "2020-task1/qrels-relevance.txt",
        "2020-task2/qrels-relevance.txt",
        "2021-task2/qrels-relevance.txt",
        "2021-task2/qrels-quality.txt",
        "beir-webis-touche2020/qrels.beir-v1.0.0-webis-touche2020.test.txt",
    ],
)
def test_rewriting_an_official_file_sorted_gives_its_sorted_lines(touche_data, path):
    """Official files are grouped by topic but not sorted (54, 66, 90, 51…); exports are sorted."""
    original = (touche_data / path).read_text(encoding="utf-8").splitlines(keepends=True)
    rows = parse_sample(touche_data, path, "quality" if "quality" in path else "relevance")
    stream = io.StringIO()

    write_qrels(sorted(rows, key=lambda row: (topic_sort_key(row[0]), row[1])), stream)

    expected = sorted(original, key=lambda line: (topic_sort_key(line.split()[0]), line.split()[2]))
    assert stream.getvalue().splitlines(keepends=True) == expected
