"""Touché 2023 Task 4 (CoFE) comments, proposals and submissions: the lab's real toy files, hostile files, and the
gold export read back by our parser and by the organisers' own scorer."""

from dataclasses import replace
from pathlib import Path

import pytest

from assessments.formats.cofe import (
    COMMENT_COLUMNS,
    LANGUAGES,
    MAX_COMMENT_CHARS,
    Comment,
    Prediction,
    Proposal,
    parse_comments,
    parse_predictions,
    parse_proposals,
    write_comments,
)
from assessments.formats.errors import FormatError
from tests.task4_scorer import organisers_scores

HEADER = "\t".join(COMMENT_COLUMNS)
TOY_IDS = [
    "comment_886",
    "comment_39734",
    "comment_87319",
    "comment_148899",
    "comment_242",
    "comment_779",
    "comment_920",
    "comment_1109",
    "comment_1153",
    "comment_1390",
]


def toy(touche_data: Path, name: str) -> bytes:
    return (touche_data / "2023-task4-toy" / name).read_bytes()


def row(ident="comment_1", comment="A comment.", lan="en", label="---", id_prop="238") -> str:
    """One record in the lab's 13 columns; `comment` is written as given (quote it yourself)."""
    return "\t".join(
        [ident, id_prop, "---", comment, "0.0", "", "False", "3", "1", "Migration", lan, "2021-04-21", label]
    )


def tsv(*rows: str, header: str = HEADER) -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


def error(parse, data: bytes) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse(data, source="data.tsv")
    assert caught.value.source == "data.tsv"
    return caught.value


# ---------------------------------------------------------------------------------------------------------
# The real toy files


def test_the_toy_input_is_read_whole_with_no_labels(touche_data):
    comments = parse_comments(toy(touche_data, "toy-input/data.tsv"), source="data.tsv")

    # 20 physical lines, but three comments span lines: 10 comments, the 10 the toy run answers.
    assert [c.id for c in comments] == TOY_IDS
    assert [c.language for c in comments] == ["en", "fr", "de", "en", "de", "de", "de", "de", "de", "es"]
    assert [c.line for c in comments] == [2, 3, 10, 11, 12, 13, 14, 15, 16, 18]
    assert [c.proposal for c in comments] == ["238"] * 4 + ["224"] * 6
    assert all(c.label is None for c in comments)
    assert comments[0].fields == {
        "alignment": "---",
        "depth": "0.0",
        "thread_id": "",
        "last_comment_in_thread": "False",
        "upvote": "3",
        "downvote": "1",
        "Topic": "Migration",
        "time": "2021-04-21T15:10:21+02:00",
    }


def test_the_multi_line_french_comment_keeps_its_line_breaks(touche_data):
    french = parse_comments(toy(touche_data, "toy-input/data.tsv"), source="data.tsv")[1]

    paragraphs = french.text.split("\n")
    assert len(paragraphs) == 7 and paragraphs[1::2] == ["", "", ""]
    assert paragraphs[0].startswith("Bon , se n'est pas tout dè vouloir") and paragraphs[0].endswith("régulière ...")
    assert paragraphs[2].startswith(" Dàns les 10 àns ávenir") and paragraphs[2].endswith("bonne question... ")
    assert paragraphs[6].endswith("Bien sûr , îls ne faut pas le dire...")


def test_the_toy_truth_has_the_labels_and_alignment_stays_metadata(touche_data):
    comments = parse_comments(toy(touche_data, "toy-truth/data.tsv"), source="data.tsv")

    assert [c.id for c in comments] == TOY_IDS
    assert [c.label for c in comments] == [
        "In favor",
        "In favor",
        "Against",
        "In favor",
        "In favor",
        "In favor",
        "Against",
        "In favor",
        "In favor",
        "Against",
    ]
    assert comments[2].fields["alignment"] == "Against"


def test_the_toy_run_is_read_as_predictions(touche_data):
    predictions = parse_predictions(toy(touche_data, "toy-run/run.tsv"), source="run.tsv")

    assert [p.id for p in predictions] == TOY_IDS
    assert predictions[0] == Prediction(id="comment_886", label="In favor", line=1)
    assert [p.label for p in predictions].count("Against") == 3


@pytest.mark.parametrize("name", ["toy-input/data.tsv", "toy-truth/data.tsv"])
def test_writing_the_parsed_toy_files_gives_back_their_bytes(touche_data, name):
    data = toy(touche_data, name)

    assert write_comments(parse_comments(data, source=name)).encode() == data


def test_the_organisers_scorer_reads_our_gold_export(touche_data, tmp_path):
    """The export replaces the input's --- with the gold labels and evaluation.py scores against it exactly as
    against the lab's own truth file."""
    truth = parse_comments(toy(touche_data, "toy-truth/data.tsv"), source="truth")
    unlabelled = parse_comments(toy(touche_data, "toy-input/data.tsv"), source="input")
    export = tmp_path / "export.tsv"
    export.write_text(write_comments(unlabelled, labels={c.id: c.label for c in truth}), encoding="utf-8")

    run = touche_data / "2023-task4-toy" / "toy-run" / "run.tsv"

    ours = organisers_scores(touche_data, export, run, tmp_path / "out.prototext")
    assert ours["all-macro f1-score"] == 1.0  # the toy run is the truth
    assert ours == organisers_scores(touche_data, touche_data / "2023-task4-toy" / "toy-truth" / "data.tsv", run, tmp_path / "lab.prototext")



# ---------------------------------------------------------------------------------------------------------
# Hostile and broken comment files


def test_a_quoted_comment_keeps_tabs_quotes_and_line_breaks_exactly():
    text = 'He said "no"\tand left.\n\n  Then:\t"yes" '
    quoted = '"' + text.replace('"', '""') + '"'
    comments = parse_comments(tsv(row("c1", quoted), row("c2")), source="data.tsv")

    assert comments[0].text == text
    assert (comments[1].id, comments[1].line) == ("c2", 5)  # the quoted comment spans lines 2-4


def test_a_bom_and_crlf_line_ends_are_read_as_lab_files():
    data = b"\xef\xbb\xbf" + tsv(row("c1", '"two\nlines"'), row("c2", lan="fr")).replace(b"\n", b"\r\n")
    comments = parse_comments(data, source="data.tsv")

    assert [(c.id, c.text, c.language, c.line) for c in comments] == [
        ("c1", "two\nlines", "en", 2),
        ("c2", "A comment.", "fr", 4),
    ]


def test_labels_and_ids_are_kept_as_given():
    [comment] = parse_comments(tsv(row("c1", id_prop=" 12.0 ", label=" Other ")), source="data.tsv")

    assert (comment.proposal, comment.label) == ("12.0", "Other")
    [without] = parse_comments(tsv(row("c1", label=""), header=HEADER), source="data.tsv")
    assert without.label is None


def test_a_file_without_a_label_column_is_unlabelled():
    header = "id\tid_prop\tcomment\tlan"
    [comment] = parse_comments(f"{header}\nc1\t7\tFine.\tmt\n".encode(), source="data.tsv")

    assert comment == Comment(id="c1", proposal="7", text="Fine.", language="mt", label=None, fields={}, line=2)


def test_every_language_code_is_known_and_a_campaign_may_narrow_them():
    assert len(LANGUAGES) == 26 and {"ca", "eo", "ga", "mt"} <= LANGUAGES
    data = tsv(row("c1", lan="hu"))
    assert parse_comments(data, source="data.tsv")[0].language == "hu"
    assert (
        "unknown language code 'hu'"
        in error(lambda d, source: parse_comments(d, source=source, languages={"en"}), data).reason
    )


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (tsv(row("c1"), row("c2", lan="EN")), 3, "comment c2: unknown language code 'EN' (expected one of bg, ca, cs"),
        (tsv(row("c1", lan="xx")), 2, "unknown language code 'xx'"),
        (tsv(row("c1", lan="")), 2, "unknown language code ''"),
        (tsv(row("comment_886"), "", row("comment_886")), 4, "comment_886 appears twice (first on line 2)"),
        (tsv(row("c1"), row("")), 3, "comment id '' is empty or contains whitespace"),
        (tsv(row("c 1")), 2, "comment id 'c 1' is empty or contains whitespace"),
        (tsv(row("c1", id_prop="")), 2, "comment c1: proposal id (id_prop) '' is empty"),
        (tsv(row("c1", comment="  ")), 2, "comment c1 has no text"),
        (tsv(row("c1"), row("c2") + "\textra"), 3, "expected 13 tab-separated fields as in the header, found 14"),
        (
            tsv(row("c1", '"open'), row("c2"), row("c3")),
            2,
            "not valid TSV: unexpected end of data (the record runs from line 2 to line 4",
        ),
        (tsv(row("c1", '"closed"early')), 2, "not valid TSV: '\\t' expected after '\"'"),
        (tsv(row("c1", '"a\nb" "')), 2, "(the record runs from line 2 to line 3"),
        (
            tsv(row("c1"), header="id\tcomment\tlabel"),
            1,
            "the header lacks id_prop, lan (it has 'id', 'comment', 'label')",
        ),
        (tsv(row("c1"), header=HEADER + "\tlan"), 1, "the header names column 'lan' twice"),
    ],
)
def test_a_bad_comment_file_names_the_line_where_the_record_starts(data, line, reason):
    found = error(parse_comments, data)

    assert found.line == line
    assert reason in found.reason


def test_a_ten_megabyte_comment_gets_our_message_not_a_csv_error():
    huge = "x" * 10_000_000
    found = error(parse_comments, tsv(row("c1"), row("c2", huge)))

    assert found.line == 3
    assert found.reason == f"comment c2 is 10,000,000 characters long, more than the limit of {MAX_COMMENT_CHARS:,}"
    quoted = error(parse_comments, tsv(row("c1", '"' + "y\n" * 60_000 + '"')))
    assert (quoted.line, quoted.reason) == (2, "comment c1 is 120,000 characters long, more than the limit of 100,000")


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (tsv(row("c1"), row("c2", "caf\xe9")).replace("é".encode(), b"\xe9"), 3, "not UTF-8 text (byte 0xe9 at column"),
        (tsv(row("c1", '"a\nb"'), row("c2")).replace(b"c2", b"c\xff2"), 4, "not UTF-8 text (byte 0xff at column 2)"),
        (tsv(row("c1", '"a\rb"')).replace(b"\n", b"\r\n") + b"\xc3", 4, "not UTF-8 text (byte 0xc3 at column 1)"),
        (tsv(row("c1"), row("c2", "nul\x00here")), 3, "the line contains a NUL byte"),
        (b"", None, "the file is empty"),
        (b"\n\n", None, "the file is empty"),
        (tsv(), None, "no comments: the file has a header but no rows"),
    ],
)
def test_bytes_that_are_not_text_and_empty_files_are_refused(data, line, reason):
    found = error(parse_comments, data)

    assert found.line == line
    assert reason in found.reason


# ---------------------------------------------------------------------------------------------------------
# Proposals

PROPOSALS_HEADER = "id\ttitle\tproposal\tproposal_en\ttitle_en\tTopic\tlan\tendorsements"


def test_proposals_are_read_with_their_translation_and_metadata():
    data = (
        f"{PROPOSALS_HEADER}\n"
        '43992\tMassentierhalter\t"Die EU hat ""schöne"" Ideen.\nDoch"\tThe EU has “beautiful” ideas.\tMass livestock\tGreenDeal\tde\t1\n'
        "11138\tFörfattningsdomstol\tFör att säkra skyddet.\t\t\tValuesRights\tsv\t0\n"
    ).encode()

    assert parse_proposals(data, source="proposals.tsv") == [
        Proposal(
            id="43992",
            title="Massentierhalter",
            text='Die EU hat "schöne" Ideen.\nDoch',
            title_en="Mass livestock",
            text_en="The EU has “beautiful” ideas.",
            language="de",
            fields={"Topic": "GreenDeal", "endorsements": "1"},
            line=2,
        ),
        Proposal(
            id="11138",
            title="Författningsdomstol",
            text="För att säkra skyddet.",
            title_en="",
            text_en="",
            language="sv",
            fields={"Topic": "ValuesRights", "endorsements": "0"},
            line=4,
        ),
    ]
    [bare] = parse_proposals(b"id\ttitle\tproposal\n7\tT\tText.\n", source="proposals.tsv")
    assert (bare.language, bare.text_en, bare.fields) == ("", "", {})


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"id\ttitle\tproposal\n7\tT\tA.\n7\tU\tB.\n", 3, "proposal 7 appears twice (first on line 2)"),
        (b"id\ttitle\tproposal\n7\tT\t \n", 2, "proposal 7 has no text"),
        (b"id\ttitle\tproposal\tlan\n7\tT\tA.\tzz\n", 2, "proposal 7: unknown language code 'zz'"),
        (b"id\ttitle\tproposal_en\n7\tT\tA.\n", 1, "the header lacks proposal (it has 'id', 'title', 'proposal_en')"),
        (b"id\ttitle\tproposal\n", None, "no proposals"),
    ],
)
def test_a_bad_proposal_file_names_its_line(data, line, reason):
    found = error(parse_proposals, data)

    assert found.line == line
    assert reason in found.reason


# ---------------------------------------------------------------------------------------------------------
# Submissions


def test_predictions_skip_blank_lines_and_a_bom_and_read_crlf():
    data = "\ufeffcomment_1\tIn favor\r\n\r\ncomment_2 \t Other\r\n".encode()

    assert parse_predictions(data, source="run.tsv") == [
        Prediction(id="comment_1", label="In favor", line=1),
        Prediction(id="comment_2", label="Other", line=3),
    ]


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"c1\tIn favor\nc2 In favor\n", 2, "expected comment_id<TAB>label, found 1 tab-separated field(s)"),
        (b"c1\tIn favor\nc2\tIn favor\t0.9\n", 2, "expected comment_id<TAB>label, found 3"),
        (b"c1\tIn favor\n\tAgainst\n", 2, "comment id '' is empty"),
        (b"c1\tIn favor\nc2\t \n", 2, "c2 has an empty label"),
        (b"c1\tIn favor\n\nc1\tAgainst\n", 3, "c1 appears twice (first on line 1)"),
        (b"c1\tIn favor\nc2\tIn f\xe4vor\n", 2, "not UTF-8 text"),
        (b"c1\tIn favor\nc2\tIn\x00favor\n", 2, "NUL byte"),
        (b"c1\tIn favor\nc\xc2\xa02\tIn favor\n", 2, "U+00A0 (no-break space)"),
        (b"\n \n", None, "no predictions: expected comment_id<TAB>label lines"),
    ],
)
def test_a_bad_submission_names_its_line(data, line, reason):
    found = error(parse_predictions, data)

    assert found.line == line
    assert reason in found.reason


# ---------------------------------------------------------------------------------------------------------
# The gold export


def test_written_comments_read_back_with_their_ids_texts_and_labels():
    comments = [
        Comment("c1", "238", 'Tab\there, "quotes", and\nlines\r\nof all\rkinds', "fr", "In favor", {"upvote": "3"}),
        Comment("c2", "12.0", '"Starts with a quote', "de", None, {"Topic": "Migration", "unknown": "dropped"}),
        Comment("c3", "224", "---", "en", "Against"),
        Comment("c4", "224", " padded ", "ca", "Other"),
    ]
    read = parse_comments(write_comments(comments).encode(), source="export.tsv")

    assert [(c.id, c.proposal, c.text, c.language, c.label) for c in read] == [
        ("c1", "238", 'Tab\there, "quotes", and\nlines\nof all\nkinds', "fr", "In favor"),
        ("c2", "12.0", '"Starts with a quote', "de", None),
        ("c3", "224", "---", "en", "Against"),
        ("c4", "224", " padded ", "ca", "Other"),
    ]
    assert read[0].fields["upvote"] == "3" and read[1].fields["Topic"] == "Migration"
    assert read[1].fields["alignment"] == "" and "unknown" not in read[1].fields
    assert [c.line for c in read] == [2, 6, 7, 8]


def test_the_export_keeps_a_given_header_and_adds_the_label_column():
    comment = Comment("c1", "7", "Fine.", "mt", None, {"Topic": "Health"})
    text = write_comments([comment], ("id", "Topic", "comment", "id_prop", "lan"), labels={"c1": "Other"})

    assert text == "id\tTopic\tcomment\tid_prop\tlan\tlabel\nc1\tHealth\tFine.\t7\tmt\tOther\n"
    assert parse_comments(text.encode(), source="x")[0] == replace(comment, label="Other", line=2)
    assert write_comments([comment], labels={}).endswith("\tmt\t\t---\n")  # no gold label: ---
    with pytest.raises(ValueError, match="needs id, id_prop, comment, lan"):
        write_comments([comment], ("id", "comment"))
