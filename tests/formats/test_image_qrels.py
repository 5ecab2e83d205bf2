import pytest

from assessments.formats.errors import FormatError
from assessments.formats.image_qrels import ImageJudgment, parse_image_qrels, write_image_qrels

A, B = "Ib7fc7d5f8ee59d62", "I490ab3908d308757"  # the first and last images of the official 2022 qrels (ir_datasets)


def parse(text: str) -> list[ImageJudgment]:
    return parse_image_qrels(text.encode(), source="qrels.txt")


def error_for(text: str) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse(text)
    return caught.value


def test_it_reads_the_three_questions_of_each_judged_image_with_their_lines():
    text = f"1 ONTOPIC {A} 1\n1 PRO {A} 0\n1 CON {A} 1\n\n50\tONTOPIC\t{B}\t0\r\n"

    assert parse(text) == [
        ImageJudgment("1", "ONTOPIC", A, 1, 1),
        ImageJudgment("1", "PRO", A, 0, 2),
        ImageJudgment("1", "CON", A, 1, 3),
        ImageJudgment("50", "ONTOPIC", B, 0, 5),
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (f"1 ONTOPIC {A}", "expected 4 fields (topic, ONTOPIC/PRO/CON, image, 0 or 1), got 3"),
        (f"1 0 {A} 1", "question '0' is not one of ONTOPIC, PRO, CON"),
        (f"1 STANCE {A} 1", "question 'STANCE' is not one of ONTOPIC, PRO, CON"),
        (f"1 PRO {A} 2", "answer '2' is neither 0 nor 1"),
        (f"1 PRO {A} -1", "answer '-1' is neither 0 nor 1"),
        ("1 PRO clueweb12-0001wb-05-12311 1", "image id 'clueweb12-0001wb-05-12311' is not I followed by 16 lowercase hex digits"),
        (f"01 PRO {A} 1", "topic '01' is not a topic number (1, 2, …; no leading zero)"),
    ],
)
def test_it_refuses_a_bad_line_naming_file_and_line(line, reason):
    error = error_for(f"1 ONTOPIC {B} 1\n{line}\n")

    assert str(error) == f"qrels.txt:2: {reason}"


def test_it_refuses_a_question_answered_twice_and_an_empty_file():
    error = error_for(f"1 ONTOPIC {A} 1\n1 PRO {A} 1\n1 ONTOPIC {A} 0\n")
    assert str(error) == f"qrels.txt:3: topic 1 answers ONTOPIC for image {A} twice (first on line 1)"
    # The same image for another topic is another judgment.
    assert len(parse(f"1 ONTOPIC {A} 1\n2 ONTOPIC {A} 1\n")) == 2
    assert str(error_for("\n")) == "qrels.txt: the file has no judgments"


def test_it_writes_three_lines_per_image_in_the_labs_order_and_reads_them_back():
    rows = [("10", A, 1, 0, 1), ("2", B, 0, 0, 0), ("2", A, True, True, False)]

    text = write_image_qrels(rows)

    assert text == (
        f"2 ONTOPIC {B} 0\n2 PRO {B} 0\n2 CON {B} 0\n"
        f"2 ONTOPIC {A} 1\n2 PRO {A} 1\n2 CON {A} 0\n"
        f"10 ONTOPIC {A} 1\n10 PRO {A} 0\n10 CON {A} 1\n"
    )
    read = parse(text)
    assert {(j.topic, j.image, j.question): j.value for j in read} == {
        (topic, image, question): int(value)
        for topic, image, *values in rows for question, value in zip(("ONTOPIC", "PRO", "CON"), values)
    }


@pytest.mark.parametrize(
    "row", [("1", A, 2, 0, 0), ("1", A, 1, 0), ("1 2", A, 1, 0, 0), ("1", "I0", 1, 0, 0)], ids=["value", "short", "space", "id"]
)
def test_it_refuses_to_write_what_could_not_be_read_back(row):
    with pytest.raises(ValueError):
        write_image_qrels([row])


def test_it_refuses_to_write_an_image_twice_for_a_topic():
    with pytest.raises(ValueError, match="twice"):
        write_image_qrels([("1", A, 1, 0, 0), ("1", A, 0, 0, 0)])
