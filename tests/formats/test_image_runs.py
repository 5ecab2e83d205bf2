import subprocess
import sys

import pytest

from assessments.formats.errors import FormatError
from assessments.formats.image_collection import read_image_collection
from assessments.formats.image_runs import parse_image_run, write_image_run

BASELINE = ("reference-evaluators", "2022-task3", "original-rankings-baseline.py")
A, B, C = "I00000000000000a1", "I00000000000000b2", "I00000000000000c3"


def parse(text: str, **kwargs):
    return parse_image_run(text.encode(), source="run.txt", **kwargs)


def error_for(text: str) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse(text)
    return caught.value


def messages(run) -> list[str]:
    return [str(warning) for warning in run.warnings]


def full_list(topic: str, stance: str, tag: str = "t") -> str:
    return "".join(f"{topic} {stance} I{n:016x} {n} {20 - n} {tag}\n" for n in range(1, 11))


# ---------------------------------------------------------------------------------------------------------
# The organisers' baseline run over the real sample


def test_it_reads_the_organisers_baseline_run_over_the_real_sample(touche_data, tmp_path):
    sample = touche_data / "2023-task3-sample"
    subprocess.run(
        [sys.executable, str(touche_data.joinpath(*BASELINE)), "-i", str(sample), "-o", str(tmp_path)],
        check=True, capture_output=True,
    )
    records = list(read_image_collection(sample))

    run = parse_image_run((tmp_path / "run.txt").read_bytes(), source="run.txt", known_images={r.id for r in records})

    # What the baseline should have written, worked out from the collection as its docstring says: an image's best
    # (lowest) rank among the queries ending in " good" (PRO) or " anti" (CON), per topic; ten per stance at most.
    best: dict[str, dict[str, tuple[int, str]]] = {}
    for record in records:
        for page in record.pages:
            for query in page.queries:
                stance = "PRO" if query.query.endswith(" good") else "CON" if query.query.endswith(" anti") else None
                if stance and (record.id not in best.setdefault(query.topic, {}) or best[query.topic][record.id][0] > query.rank):
                    best[query.topic][record.id] = (query.rank, stance)
    expected = {
        (topic, stance): sorted((rank, image) for image, (rank, s) in images.items() if s == stance)[:10]
        for topic, images in best.items() for stance in ("PRO", "CON")
    }
    expected = {key: value for key, value in expected.items() if value}

    assert run.tag == "minsk-original" and run.tags == ("minsk-original",)
    assert run.topics == ["19", "31", "34", "39", "48"]
    assert set(run.entries) == set(expected)
    for key, entries in run.entries.items():
        assert [entry.rank for entry in entries] == list(range(1, len(entries) + 1))
        # Images of equal crawl rank come in the baseline's directory order: compare as sets with their scores.
        assert {(e.image, round(e.score, 2)) for e in entries} == {(i, round((101 - r) / 100, 2)) for r, i in expected[key]}
        assert all(entry.skipped is None for entry in entries)
    assert run.line_count == sum(len(value) for value in expected.values())
    # Every list of the sample is short, and three topics have no CON list; nothing else is wrong.
    assert all("fewer than 10" in m or "no CON list" in m for m in messages(run))
    assert "run.txt: topic 19 has no CON list: its CON precision counts as 0 of 10" in messages(run)


# ---------------------------------------------------------------------------------------------------------
# Lines that cannot be read: nothing is kept


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (f"1 PRO {A} 1 0.5", "expected 6 fields"),
        (f'1 PRO {A} 1 0.5 "my tag"', "expected 6 fields"),
        (f"1 NEUTRAL {A} 1 0.5 t", "stance 'NEUTRAL' is neither PRO nor CON"),
        (f"1 pro {A} 1 0.5 t", "stance 'pro' is neither PRO nor CON"),
        ("1 PRO I00000000000000A1 1 0.5 t", "image id 'I00000000000000A1' is not I followed by 16 lowercase hex"),
        ("1 PRO I00000000000000a 1 0.5 t", "is not I followed by 16 lowercase hex"),
        ("1 PRO clueweb12-0001wb-05-12311 1 0.5 t", "is not I followed by 16 lowercase hex"),
        (f"1 PRO {A} 0 0.5 t", "rank '0' is not a positive integer"),
        (f"1 PRO {A} 01 0.5 t", "rank '01' is not a positive integer"),
        (f"1 PRO {A} -1 0.5 t", "rank '-1' is not a positive integer"),
        (f"1 PRO {A} 1.0 0.5 t", "rank '1.0' is not a positive integer"),
        (f"1 PRO {A} 1 high t", "score 'high' is not a number"),
        (f"1 PRO {A} 1 nan t", "score 'nan' is not a number"),
        (f"1 PRO {A} 1 1e999 t", "score '1e999' is not a finite number"),
        (f"01 PRO {A} 1 0.5 t", "topic '01' is not a topic number"),
        (f"0 PRO {A} 1 0.5 t", "topic '0' is not a topic number"),
        (f"T1 PRO {A} 1 0.5 t", "topic 'T1' is not a topic number"),
    ],
)
def test_it_refuses_an_unreadable_line_naming_file_and_line(line, reason):
    error = error_for(f"1 PRO {B} 1 1 t\n\n{line}\n")

    assert error.line == 3
    assert str(error).startswith("run.txt:3: ")
    assert reason in error.reason


def test_it_refuses_the_same_image_twice_in_one_list_but_not_in_both_stances():
    error = error_for(f"1 PRO {A} 1 2 t\n1 PRO {B} 2 1 t\n1 PRO {A} 3 0 t\n")
    assert str(error) == f"run.txt:3: image {A} is listed twice for topic 1 PRO (first on line 1)"

    run = parse(f"1 PRO {A} 1 2 t\n1 CON {A} 1 2 t\n2 PRO {A} 1 2 t\n")
    assert [entry.image for key in [("1", "PRO"), ("1", "CON"), ("2", "PRO")] for entry in run.ranking(*key)] == [A, A, A]


def test_it_refuses_a_file_without_result_lines_and_text_that_is_not_utf8():
    assert str(error_for("\n  \n")) == "run.txt: the run has no result lines"
    with pytest.raises(FormatError, match=r"run.txt:2: not UTF-8"):
        parse_image_run(f"1 PRO {A} 1 1 t\n1 CON {B} 1 1 t\xff\n".encode("latin-1"), source="run.txt")


# ---------------------------------------------------------------------------------------------------------
# What is read


def test_it_keeps_each_list_in_rank_order_with_its_lines_and_reads_tabs_crlf_and_a_bom():
    text = f"\ufeff7\tCON\t{B}\t2\t0.5\tmyTag\r\n7 CON {A} 1 0.75 myTag\r\n\r\n7 PRO {C} 1 -3 myTag\r\n"
    run = parse(text)

    assert [(e.image, e.rank, e.score, e.line) for e in run.ranking("7", "CON")] == [(A, 1, 0.75, 2), (B, 2, 0.5, 1)]
    assert [(e.topic, e.stance, e.image) for e in run.ranking("7", "PRO")] == [("7", "PRO", C)]
    assert (run.tag, run.line_count, run.topics) == ("myTag", 3, ["7"])
    # Rank 2 before rank 1 in the file: the organisers' evaluator skips the second line.
    assert run.ranking("7", "CON")[0].skipped == "rank 1 for topic 7 CON does not increase on rank 2 before it"


def test_a_full_run_of_both_stances_has_no_warnings():
    run = parse(full_list("1", "PRO") + full_list("1", "CON") + full_list("2", "CON") + full_list("2", "PRO"))

    assert run.warnings == []
    assert run.topics == ["1", "2"]
    assert all(len(entries) == 10 for entries in run.entries.values())


# ---------------------------------------------------------------------------------------------------------
# What the organisers' verifier flags: warnings, and the lines their evaluator skips


def test_it_warns_about_images_not_in_the_collection():
    run = parse(f"1 PRO {A} 1 2 t\n1 PRO {B} 2 1 t\n1 CON {C} 1 1 t\n", known_images={A})

    assert f"run.txt:2: image {B} and 1 more not in the collection" in "\n".join(messages(run))
    assert all(entry.skipped is None for entries in run.entries.values() for entry in entries)


def test_it_warns_about_short_lists_and_a_missing_stance():
    run = parse(full_list("1", "PRO") + f"1 CON {A} 1 1 t\n" + f"2 PRO {B} 1 1 t\n")

    assert messages(run) == [
        "run.txt:11: topic 1 CON lists 1 image, fewer than 10; P@10 divides by 10 all the same",
        "run.txt:12: topic 2 PRO lists 1 image, fewer than 10; P@10 divides by 10 all the same",
        "run.txt: topic 2 has no CON list: its CON precision counts as 0 of 10",
    ]


def test_a_list_longer_than_ten_counts_its_first_ten_ranks_only():
    text = full_list("1", "CON") + "".join(f"1 PRO I{n:016x} {n} {20 - n} t\n" for n in range(1, 13))
    run = parse(text)

    assert messages(run) == [
        "run.txt:11: topic 1 PRO lists 12 images where Task 3 asks for at most 10; only ranks 1–10 count for P@10,"
        " as in the organisers' evaluator"
    ]
    assert [entry.rank for entry in run.ranking("1", "PRO") if entry.skipped is None] == list(range(1, 11))
    assert [entry.skipped for entry in run.ranking("1", "PRO")[10:]] == ["rank 11 is above 10", "rank 12 is above 10"]


def test_ranks_above_ten_in_a_list_of_ten_are_skipped_too():
    text = full_list("1", "CON") + "".join(f"1 PRO I{n:016x} {2 * n} {20 - n} t\n" for n in range(1, 11))
    run = parse(text)

    assert "run.txt:16: topic 1 PRO ranks 5 images above 10; the organisers' evaluator skips those lines" in messages(run)[0]
    assert sum(entry.skipped is None for entry in run.ranking("1", "PRO")) == 5


@pytest.mark.parametrize(
    ("lines", "warning", "skipped"),
    [
        ([f"1 PRO {A} 2 2 t", f"1 PRO {B} 1 1 t"], "run.txt:2: rank 1 for topic 1 PRO does not increase on rank 2 before it", B),
        ([f"1 PRO {A} 1 2 t", f"1 PRO {B} 1 1 t"], "run.txt:2: rank 1 for topic 1 PRO does not increase on rank 1 before it", B),
        ([f"1 PRO {A} 1 1 t", f"1 PRO {B} 2 1.5 t"], "run.txt:2: score 1.5 for topic 1 PRO is above the score 1 before it", B),
        ([f"1 PRO {A} 1 1e-3 t"], "run.txt:1: score '1e-3' is not written as digits with an optional point", A),
        ([f"1 PRO {A} 1 +1 t"], "run.txt:1: score '+1' is not written as digits with an optional point", A),
        ([f"1 PRO {A} 1 .5 t"], "run.txt:1: score '.5' is not written as digits with an optional point", A),
        ([f"51 PRO {A} 1 1 t"], "run.txt:1: topic 51 is above 50, the last topic the organisers' scripts know", A),
    ],
)
def test_it_warns_about_each_line_the_organisers_evaluator_skips(lines, warning, skipped):
    run = parse("".join(line + "\n" for line in lines))

    assert f"{warning}: the organisers' evaluator skips the line" in messages(run)
    assert [entry.image for entries in run.entries.values() for entry in entries if entry.skipped] == [skipped]


def test_a_line_skipped_for_its_score_still_raises_the_rank_the_next_line_must_beat():
    # As in the script, which stores the rank before it checks the score.
    run = parse(f"1 PRO {A} 1 1 t\n1 PRO {B} 3 5 t\n1 PRO {C} 2 0.5 t\n")

    assert [(entry.image, entry.skipped is None) for entry in run.ranking("1", "PRO")] == [(A, True), (C, False), (B, False)]


def test_it_warns_about_a_second_run_tag_and_keeps_the_first():
    run = parse(full_list("1", "PRO", "first") + full_list("1", "CON", "second"))

    assert run.tag == "first" and run.tags == ("first", "second")
    assert messages(run) == ["run.txt:11: a second run tag 'second'; the run is stored as 'first', its first"]


def test_it_lists_twenty_skipped_lines_of_a_kind_and_counts_the_rest():
    run = parse("".join(f"1 PRO I{n:016x} {n} {n} t\n" for n in range(1, 11)) + full_list("1", "CON"))

    skipped = [m for m in messages(run) if "skips the line" in m]
    assert len(skipped) == 9  # lines 2–10 each score more than the line before
    run = parse("".join(f"{topic} PRO {A} 1 1 t\n" for topic in range(51, 81)))
    assert len([m for m in messages(run) if "skips the line" in m]) == 20
    assert "run.txt: 10 more lines skipped by the organisers' evaluator (topic), not listed" in messages(run)


# ---------------------------------------------------------------------------------------------------------
# Writing


def test_written_runs_read_back_with_scores_the_organisers_scripts_read():
    rows = [("3", "PRO", A, 1, 1e-05), ("3", "PRO", B, 2, -0.0), ("3", "CON", C, 1, 12345678912345.5)]
    text = write_image_run(rows, tag="myTag")

    assert text.splitlines()[0] == f"3 PRO {A} 1 0.00001 myTag"
    run = parse(text)
    assert [(e.topic, e.stance, e.image, e.rank, e.score) for key in [("3", "PRO"), ("3", "CON")] for e in run.ranking(*key)] == rows
    assert all(e.skipped is None for entries in run.entries.values() for e in entries)


def test_it_refuses_to_write_a_field_that_could_not_be_read_back():
    with pytest.raises(ValueError, match="whitespace"):
        write_image_run([("1", "PRO", A, 1, 1.0)], tag="two words")
    with pytest.raises(ValueError, match="not finite"):
        write_image_run([("1", "PRO", A, 1, float("nan"))], tag="t")
