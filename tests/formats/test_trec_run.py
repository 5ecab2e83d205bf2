import io
from collections import Counter

import pytest

from assessments.formats.errors import FormatError, FormatWarning
from assessments.formats.trec_run import RunReader, read_run


def read_sample(samples, name, **kwargs) -> tuple[list[tuple], RunReader]:
    with open(samples / name, encoding="utf-8", newline="") as f:  # newline="": keep any \r for the parser
        reader = read_run(f, source=name, **kwargs)
        return list(reader), reader


def read_text(text: str, **kwargs) -> tuple[list[tuple], RunReader]:
    reader = read_run(io.StringIO(text), source="run.txt", **kwargs)
    return list(reader), reader


def error_for(samples, name, **kwargs) -> FormatError:
    with pytest.raises(FormatError) as caught:
        read_sample(samples, name, **kwargs)
    return caught.value


def test_it_reads_a_touche_2022_run_with_stances(samples):
    rows, reader = read_sample(samples, "run-stance.txt")

    assert rows[:2] == [
        ("2", "clueweb12-0002wb-18-34442___3", 1, 17.89, "FIRST", "myGroupMyMethod"),
        ("2", "clueweb12-0002wb-18-34442___5", 2, 16.43, "NEUTRAL", "myGroupMyMethod"),
    ]
    assert [row[4] for row in rows] == ["FIRST", "NEUTRAL", "NO", "SECOND", None, "SECOND", "FIRST"]
    assert reader.has_stance
    assert (reader.line_count, reader.topics, reader.tags) == (7, {"2": 5, "3": 2}, {"myGroupMyMethod"})


def test_it_reads_tabs_runs_of_spaces_crlf_blank_lines_rank_zero_and_negative_scores(samples):
    rows, reader = read_sample(samples, "run-quirks.txt")

    assert rows == [
        ("51", "S428a8bea-A6fcf1b51", 0, 7.574048, None, "ElrondKRun"),
        ("51", "S6bece754-Aa72f8d62", 1, -0.5, None, "ElrondKRun"),
        ("51", "S5e2fadc8-A30376bd9", 2, -12.5, None, "ElrondKRun"),
        ("52", "S1b03f390-A22aff8a0", 0, 3.0, None, "ElrondKRun"),
    ]
    assert not reader.has_stance
    assert reader.line_count == 4
    assert reader.warnings == []


def test_it_reads_a_quoted_tag_with_spaces_from_the_rest_of_the_line(samples):
    rows, reader = read_sample(samples, "run-quoted-tag.txt")

    assert {row[5] for row in rows} == reader.tags == {"Colbert fine tune on touche data"}
    assert rows[2] == ("2", "clueweb12-1811wb-62-08423", 1, 0.91, None, "Colbert fine tune on touche data")


def test_it_drops_a_byte_order_mark_before_the_first_topic():
    rows, _ = read_text("\ufeff1 Q0 doc-a 1 2.0 tag\n")

    assert rows[0][0] == "1"


def test_it_reads_zero_as_no_stance():
    rows, reader = read_text("1 0 doc-a 1 2.0 tag\n")

    assert rows[0][4] is None and not reader.has_stance


def test_it_takes_the_allowed_stances_as_a_parameter():
    rows, reader = read_text("1 PRO doc-a 1 2.0 tag\n1 CON doc-b 2 1.0 tag\n", stances=("PRO", "CON"))

    assert [row[4] for row in rows] == ["PRO", "CON"]
    with pytest.raises(FormatError, match=r"^run.txt:1: unknown stance 'FIRST'"):
        read_text("1 FIRST doc-a 1 2.0 tag\n", stances=("PRO", "CON"))


def test_it_accepts_a_topic_whose_lines_resume_after_other_topics():
    rows, reader = read_text("1 Q0 a 1 3 t\n2 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n")

    assert [row[:2] for row in rows] == [("1", "a"), ("2", "a"), ("1", "b"), ("1", "c")]
    assert reader.topics == {"1": 3, "2": 1}


def test_a_block_that_resumes_a_topic_says_so_for_whoever_joins_the_blocks():
    """Memory then holds one block, not every document seen (services.imports.runs checks the joined blocks)."""
    blocks = read_run(["1 Q0 a 1 3 t", "2 Q0 a 1 3 t", "1 Q0 a 2 2 t", "1 Q0 a 1 3 other"], source="run.txt").blocks()
    assert [(b.topic, b.tag, b.docs, b.first_line, b.resumed) for b in blocks] == [
        ("1", "t", ["a"], 1, False), ("2", "t", ["a"], 2, False), ("1", "t", ["a"], 3, True), ("1", "other", ["a"], 4, False),
    ]


def test_the_same_document_may_appear_under_two_tags():
    rows, reader = read_text("1 Q0 doc-a 1 2.0 tag-1\n1 Q0 doc-a 1 2.0 tag-2\n")

    assert len(rows) == 2
    assert reader.tags == {"tag-1", "tag-2"}
    assert reader.topics == {"1": 2}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("run-bad-field-count.txt", "run-bad-field-count.txt:3: expected 6 fields (topic, Q0 or stance, document, rank, score, tag), got 5"),
        ("run-bad-rank.txt", "run-bad-rank.txt:3: rank 'two' is not an integer"),
        ("run-bad-score.txt", "run-bad-score.txt:2: score '2,5' is not a number"),
        ("run-bad-nan-score.txt", "run-bad-nan-score.txt:2: score 'nan' is not a finite number"),
        ("run-bad-unknown-stance.txt", "run-bad-unknown-stance.txt:2: unknown stance 'AGAINST' in column 2"),
        ("run-bad-empty.txt", "run-bad-empty.txt: the run has no result lines"),
    ],
)
def test_it_rejects_bad_runs_naming_the_line(samples, name, message):
    assert str(error_for(samples, name)).startswith(message)


def test_it_rejects_a_run_with_unknown_topic(samples):
    error = error_for(samples, "run-stance.txt", known_topics={"2"})

    assert str(error) == "run-stance.txt:6: unknown topic '3'"


def test_it_rejects_an_empty_file():
    with pytest.raises(FormatError) as caught:
        read_text("")

    assert (caught.value.line, caught.value.reason) == (None, "the run has no result lines")


def test_it_warns_about_known_topics_without_results(samples):
    _, reader = read_sample(samples, "run-stance.txt", known_topics={"2", "3", "10", "4"})

    assert FormatWarning("run-stance.txt", None, "no results for 2 topics: 4, 10") in reader.warnings


def test_it_warns_once_per_topic_when_scores_disagree_with_ranks():
    text = "".join(f"7 Q0 doc-{rank} {rank} {score} tag\n" for rank, score in [(1, 3.0), (2, 5.0), (3, 4.0), (4, 6.0)])

    _, reader = read_text("1 Q0 doc-x 1 9 tag\n" + text)

    assert reader.warnings == [
        FormatWarning(
            "run.txt", 2,
            "topic 7: score order disagrees with rank order (rank 2 scores 5, more than rank 1 with 3); trec_eval follows the scores",
        )
    ]


def test_it_checks_score_order_by_rank_even_when_lines_are_shuffled():
    _, in_order = read_text("1 Q0 a 3 1.0 t\n1 Q0 b 1 3.0 t\n1 Q0 c 2 2.0 t\n")
    _, out_of_order = read_text("1 Q0 a 3 2.5 t\n1 Q0 b 1 3.0 t\n1 Q0 c 2 2.0 t\n")

    assert in_order.warnings == []
    assert [w.message for w in out_of_order.warnings] == [
        "topic 1: score order disagrees with rank order (rank 3 scores 2.5, more than rank 2 with 2); trec_eval follows the scores"
    ]


def test_it_summarises_tied_scores_for_the_whole_run():
    text = "1 Q0 a 1 2.0 t\n1 Q0 b 2 2.0 t\n1 Q0 c 3 2.0 t\n1 Q0 d 4 1.0 t\n2 Q0 a 1 5 t\n2 Q0 b 2 5.0 t\n3 Q0 a 1 1 t\n"

    _, reader = read_text(text)

    assert [str(w) for w in reader.warnings] == [
        "run.txt: 3 tied scores in 2 topics; trec_eval breaks ties by document id, not by rank"
    ]


def test_it_counts_ties_exactly_when_a_block_is_not_in_score_order():
    text = "1 Q0 a 2 2.0 t\n1 Q0 b 1 1.0 t\n1 Q0 c 3 2.0 t\n1 Q0 d 4 1.0 t\n"

    _, reader = read_text(text)

    assert str(reader.warnings[-1]) == "run.txt: 2 tied scores in 1 topic; trec_eval breaks ties by document id, not by rank"


def test_it_warns_about_more_than_a_thousand_documents_for_a_topic():
    text = "\n".join(f"5 Q0 doc-{i} {i} {-i} tag" for i in range(1, 1002))

    rows, reader = read_text("1 Q0 doc 1 1 tag\n" + text)

    assert len(rows) == 1002
    assert [str(w) for w in reader.warnings] == ["run.txt:2: topic 5 has 1001 documents; Touché asks for at most 1000"]


def test_a_reader_can_be_iterated_only_once():
    reader = read_run(["1 Q0 a 1 1 t\n"], source="run.txt")
    list(reader)

    with pytest.raises(RuntimeError):
        list(reader)


# Line counts, topics and depths from the README of the real files (../shared/data/touche).
REAL_RUNS = [
    *[(f"2021-task1/runs/Elrond-Elrond{name}.txt", 50_000, 50, 1000, 1000) for name in ("KRun", "OpenNlpRun", "SimpleRun", "TaskBodyRun")],
    *[(f"2021-task1/runs/Shanks-shanks-run-{n}.txt", 49_272, 50, 272, 1000) for n in range(1, 6)],
    *[(f"2020-task1/runs-shanks-posthoc/shanks-run-{n}.txt", 48_781, 49, 781, 1000) for n in range(1, 6)],
]


@pytest.mark.parametrize(("path", "lines", "topics", "fewest", "most"), REAL_RUNS, ids=[r[0].rsplit("/", 1)[1] for r in REAL_RUNS])
def test_it_reads_every_real_touche_run(touche_data, path, lines, topics, fewest, most):
    with open(touche_data / path, encoding="utf-8") as f:
        reader = read_run(f, source=path)
        rows = list(reader)

    assert len(rows) == reader.line_count == lines
    assert len(reader.topics) == topics
    assert (min(reader.topics.values()), max(reader.topics.values())) == (fewest, most)
    assert len(reader.tags) == 1 and not reader.has_stance
    assert min(row[2] for row in rows) == 0  # these teams count ranks from 0
    # Real runs carry thousands of tied scores: one summary line, never one warning per line.
    per_topic_scores = Counter((row[0], row[3]) for row in rows)
    tied = len(rows) - len(per_topic_scores)
    tied_topics = len({topic for (topic, _), n in per_topic_scores.items() if n > 1})
    assert [str(w) for w in reader.warnings] == [
        f"{path}: {tied} tied scores in {tied_topics} topics; trec_eval breaks ties by document id, not by rank"
    ]


def test_it_checks_real_runs_against_the_2020_topic_numbers(touche_data):
    """The 2020 Task 1 qrels have no topic 25, and neither do the Shanks runs on those topics."""
    path = touche_data / "2020-task1/runs-shanks-posthoc/shanks-run-1.txt"
    known = {str(n) for n in range(1, 51)}

    with open(path, encoding="utf-8") as f:
        reader = read_run(f, source="shanks-run-1.txt", known_topics=known)
        list(reader)

    assert FormatWarning("shanks-run-1.txt", None, "no results for 1 topic: 25") in reader.warnings
