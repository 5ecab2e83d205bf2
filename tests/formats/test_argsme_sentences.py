"""The processed args.me corpus of Touché 2022 Task 1 (args_processed.csv) read as one document per sentence."""

import csv
import gzip
from pathlib import Path

import pytest
from ir_datasets.formats.argsme import ArgsMeProcessedDoc

from assessments.formats.argsme_sentences import looks_like_argsme_sentences, read_argsme_sentences
from assessments.formats.documents import DocumentRecord, read_documents
from assessments.formats.errors import FormatError

CAMPAIGN_FILES = Path(__file__).resolve().parent.parent / "data" / "touche2022-task1"


def error_for(path, fmt="argsme-sentences") -> FormatError:
    with pytest.raises(FormatError) as caught:
        list(read_documents(path, fmt=fmt))
    return caught.value


def write_corpus(path: Path, rows: list[list[str]], header=("id", "conclusion", "premises", "context", "sentences")) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_each_sentence_is_a_document_titled_with_its_arguments_conclusion():
    records = list(read_documents(CAMPAIGN_FILES / "args_processed.csv", fmt="argsme-sentences"))

    assert len(records) == 15  # 4 + 3 + 3 + 3 + 2 sentences of five arguments
    assert records[0] == DocumentRecord(
        doc_id="Sa1b2c3d4-A00000001__CONC__1", title="School uniforms should be mandatory",
        body="School uniforms should be mandatory.", is_html=False, url="", metadata={"argument": "Sa1b2c3d4-A00000001"},
        line=2,
    )
    quoted = next(r for r in records if r.doc_id == "Sa1b2c3d4-A00000002__PREMISE__2")
    assert quoted.body == "Uniforms cost poor families money they would not otherwise spend, says the \"parents' council\"."
    assert records[-1].body == "Chernobyl and Fukushima left land that nobody can live on,\nfor decades."  # the literal's \n
    assert [r.line for r in records].count(6) == 2  # the fifth argument, on line 6


def test_the_sentences_are_those_ir_datasets_reads_from_the_same_file():
    """ir_datasets' own reader of args_processed.csv (csv.DictReader and ast.literal_eval, ArgsMeProcessedDoc) is the
    independent reference for the lab's format: every sentence, id, text and argument, in the same order."""
    path = CAMPAIGN_FILES / "args_processed.csv"
    with open(path, newline="", encoding="utf-8") as stream:
        arguments = [ArgsMeProcessedDoc.from_csv(row) for row in csv.DictReader(stream)]
    expected = [(s.id, s.text, a.conclusion, a.doc_id) for a in arguments for s in a.sentences]

    ours = [(r.doc_id, r.body, r.title, r.metadata["argument"]) for r in read_argsme_sentences(path)]

    assert ours == expected and len(expected) == 15


def test_auto_recognises_the_file_by_its_header_plain_or_gzip(tmp_path):
    plain = CAMPAIGN_FILES / "args_processed.csv"
    packed = tmp_path / "args_processed.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))

    assert [r.doc_id for r in read_documents(packed)] == [r.doc_id for r in read_argsme_sentences(plain)]
    assert looks_like_argsme_sentences(b"\xef\xbb\xbfid,conclusion,premises,context,sentences\r\nS1,")
    assert not looks_like_argsme_sentences(b'{"arguments": [')
    assert not looks_like_argsme_sentences(b'{"id": "doc-1", "text": "a, b"}\n')


def test_a_record_may_span_lines_and_errors_name_the_line_it_starts_on(samples):
    error = error_for(samples / "argsme-sentences-bad-comma-id.csv")

    assert (error.line, error.source) == (4, str(samples / "argsme-sentences-bad-comma-id.csv"))
    assert "a comma" in error.reason


def test_the_sentences_are_a_literal_that_is_never_evaluated(samples):
    error = error_for(samples / "argsme-sentences-bad-literal.csv")

    assert error.line == 3
    assert error.reason.startswith("argument Sa1b2c3d4-A00000002: sentences is not a Python literal")


def test_a_file_without_the_sentences_column_is_refused_at_its_header(samples):
    error = error_for(samples / "argsme-sentences-bad-header.csv")

    assert error.line == 1
    assert "the header lacks sentences" in error.reason
    # auto does not take it for the sentences corpus: it is read as JSONL, and refused as such
    assert error_for(samples / "argsme-sentences-bad-header.csv", fmt="auto").line == 1


@pytest.mark.parametrize(
    ("sentences", "reason"),
    [
        ("{'sent_id': 'x'}", "sentences must be a list, got dict"),
        ("['a sentence']", "sentence 1: expected a dict with sent_id and sent_text, got str"),
        ("[{'sent_id': 'S1-A1__CONC__1', 'sent_text': 3}]", "sentence 1: sent_id and sent_text must be strings"),
        ("[{'sent_id': 'S1-A1 __CONC__1', 'sent_text': 'x'}]", "sent_id 'S1-A1 __CONC__1' is empty or holds whitespace"),
        ("[{'sent_id': 'S1-A1__CONC__1', 'sent_text': 'a\\x00b'}]", "sentence S1-A1__CONC__1 contains a NUL character"),
        ("[{'sent_id': 'S1-A1__CONC__1', 'sent_text': '\\ud800'}]", "contains a lone surrogate"),
        ("[" * 1000 + "]" * 1000, "sentences is not a Python literal"),
    ],
)
def test_bad_sentences_are_refused_with_their_line(tmp_path, sentences, reason):
    path = write_corpus(tmp_path / "args.csv", [["S1-A0", "ok", "[]", "{}", "[]"], ["S1-A1", "Conclusion", "[]", "{}", sentences]])

    error = error_for(path)

    assert error.line == 3
    assert reason in error.reason


def test_a_row_with_the_wrong_number_of_fields_is_refused(tmp_path):
    path = tmp_path / "args.csv"
    path.write_text("id,conclusion,premises,context,sentences\nS1-A1,Conclusion,[],{}\n", encoding="utf-8")

    error = error_for(path)

    assert (error.line, error.reason) == (2, "expected 5 fields as in the header, got 4")


def test_an_argument_without_sentences_gives_no_document_and_a_file_without_any_is_refused(tmp_path):
    some = write_corpus(tmp_path / "some.csv", [
        ["S1-A1", "Empty", "[]", "{}", "[]"],
        ["S1-A2", "One", "[]", "{}", "[{'sent_id': 'S1-A2__CONC__1', 'sent_text': 'One.'}]"],
    ])
    none = write_corpus(tmp_path / "none.csv", [["S1-A1", "Empty", "[]", "{}", "[]"]])

    assert [r.doc_id for r in read_documents(some, fmt="argsme-sentences")] == ["S1-A2__CONC__1"]
    assert error_for(none).reason == "the file contains no sentences"


def test_a_quoted_field_that_never_ends_is_refused_not_read_to_the_end_of_memory(tmp_path):
    path = tmp_path / "args.csv"
    path.write_text('id,conclusion,premises,context,sentences\nS1-A1,"never closed\n' + "more\n" * 10, encoding="utf-8")

    error = error_for(path)

    assert error.line is not None and error.line >= 2
    assert "CSV" in error.reason


def test_bytes_that_are_not_utf8_are_refused_with_their_line(tmp_path):
    path = tmp_path / "args.csv"
    path.write_bytes(b"id,conclusion,premises,context,sentences\nS1-A1,caf\xe9,[],{},[]\n")

    error = error_for(path)

    assert (error.line, error.reason) == (2, "not UTF-8 text (byte 0xe9 at column 10)")
