import dataclasses
import gzip
import json
import random
import shutil
import zlib

import pytest

from assessments.formats import documents
from assessments.formats.documents import DocumentRecord, read_documents
from assessments.formats.errors import FormatError


def error_for(path, fmt="auto") -> FormatError:
    with pytest.raises(FormatError) as caught:
        list(read_documents(path, fmt=fmt))
    return caught.value


def test_it_reads_touche_passages_skipping_blank_lines(samples):
    first, second = read_documents(samples / "passages.jsonl")

    assert first == DocumentRecord(
        doc_id="clueweb12-0002wb-18-34442___3",
        title="",
        body="Trains emit far less CO₂ per passenger than planes “on most routes”.",
        is_html=False,
        url="https://chatnoir.eu/cache?uuid=abc&index=cw12&raw",
        metadata={},
        line=1,
    )
    assert (second.line, second.metadata) == (3, {"queries": ["train or plane"]})


def test_it_reads_generic_jsonl_with_any_id_key_text_or_html_and_extra_metadata(samples):
    one, two, three = read_documents(samples / "documents-generic.jsonl")

    assert (one.doc_id, one.title, one.body, one.is_html, one.url, one.metadata) == (
        "doc-1", "Plain text", "Body one.", False, "https://example.org/1", {"lang": "en"}
    )
    assert (two.doc_id, two.body, two.is_html, two.url) == ("doc-2", "<p>Body <b>two</b></p>", True, "")
    assert (three.doc_id, three.line) == ("3", 3)


def test_it_reads_an_args_me_corpus_one_argument_at_a_time(samples):
    first, second = read_documents(samples / "argsme.json")

    assert first.doc_id == "S70a50579-A4f7b3b0b"
    assert first.title == "Music piracy is a bad thing."
    assert first.body == "Music piracy takes money from artists."
    assert first.url == "https://www.debate.org/debates/Music-Piracy/1/"
    assert first.metadata["stance"] == "PRO"
    assert first.metadata["context"]["discussionTitle"] == "Is music piracy a bad thing?"
    assert first.metadata["aspects"] == [{"name": "piracy", "weight": 1}]
    assert (first.line, second.line) == (3, 16)
    assert (second.url, second.metadata["stance"]) == ("", "CON")
    assert second.body == "Sharing is not stealing ’cause nothing is taken away."


def test_it_joins_the_texts_of_several_premises(tmp_path):
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"arguments": [
        {"id": "S1-A1", "conclusion": "C", "premises": [{"text": "One.", "stance": "PRO"}, {"text": "Two.", "stance": "PRO"}]}
    ]}))

    (record,) = read_documents(path)

    assert record.body == "One.\n\nTwo."


def test_args_me_arguments_cut_by_the_read_window_come_out_whole(samples, tmp_path, monkeypatch):
    """The corpus is read in windows of 1 MiB; a tiny window makes every argument (and character) straddle one."""
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(json.loads((samples / "argsme.json").read_text()), ensure_ascii=False))
    expected = {path: list(read_documents(path)) for path in (samples / "argsme.json", compact)}

    monkeypatch.setattr(documents, "_CHUNK_BYTES", 7)

    for path, records in expected.items():
        assert list(read_documents(path)) == records
    assert [r.line for r in expected[compact]] == [1, 1]


def test_it_recognises_gzip_by_its_magic_bytes_whatever_the_name(samples, tmp_path):
    for name, sample in [("passages.jsonl", "passages.jsonl"), ("corpus.json.gz", "argsme.json"), ("corpus", "argsme.json")]:
        path = tmp_path / name
        with open(samples / sample, "rb") as plain, gzip.open(path, "wb") as compressed:
            shutil.copyfileobj(plain, compressed)

        assert list(read_documents(path)) == list(read_documents(samples / sample))


def test_it_reads_a_byte_order_mark_before_the_first_record(tmp_path):
    jsonl, argsme = tmp_path / "bom.jsonl", tmp_path / "bom.json"
    jsonl.write_bytes(b'\xef\xbb\xbf{"id": "d1", "text": "t"}\n')
    argsme.write_bytes(b'\xef\xbb\xbf{"arguments": [{"id": "a1", "premises": [{"text": "p"}]}]}')

    assert [d.doc_id for d in read_documents(jsonl)] == ["d1"]
    assert [d.doc_id for d in read_documents(argsme)] == ["a1"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("documents-bad-invalid-json.jsonl", "documents-bad-invalid-json.jsonl:3: invalid JSON: Invalid control character (column 40)"),
        ("documents-bad-missing-id.jsonl", "documents-bad-missing-id.jsonl:3: document has no id (expected id, docno or doc_id)"),
        ("documents-bad-wrong-type.jsonl", "documents-bad-wrong-type.jsonl:2: text must be a string, got an array"),
        ("argsme-bad-truncated.json", "argsme-bad-truncated.json:5: invalid JSON: Expecting value"),
        ("argsme-bad-no-premises.json", "argsme-bad-no-premises.json:3: argument S1-A2: premises must be a non-empty array of objects"),
    ],
)
def test_it_rejects_bad_document_files_naming_the_line(samples, name, message):
    assert str(error_for(samples / name)) == str(samples / name).removesuffix(name) + message


@pytest.mark.parametrize(
    ("content", "fmt", "line", "reason"),
    [
        (b'{"id": "a", "text": "t"}\n[1, 2]\n', "auto", 2, "expected a JSON object, got an array"),
        (b'{"id": "a", "text": "t"}\n{"id": "b"}\n', "jsonl", 2, "document b has neither text nor html"),
        (b'{"id": "a", "contents": "t"}\n{"id": "b", "text": "t"}\n', "auto", 2, "passage b has no contents"),
        (b'{"id": "a b", "text": "t"}\n', "auto", 1, "id 'a b' is empty or contains whitespace"),
        (b'{"id": true, "text": "t"}\n', "auto", 1, "id must be a string, got a boolean"),
        (b'{"id": "a", "title": 5, "text": "t"}\n', "auto", 1, "title must be a string, got a number"),
        (b'{"id": "a", "text": "t"}\n{"id": "b\xff", "text": "t"}\n', "auto", 2, "not UTF-8 text (byte 0xff at column 10)"),
        (b'{"arguments": [\n{"id": "a", "premises": [{"text": "p"}]}\n{"id": "b"}]}', "auto", 3, "expected , or ] after an argument"),
        (b'{"arguments": [\n{"id": "a", "premises": [{"text": "p"}]}\n]}\n{}', "auto", 4, "unexpected content after the args.me object"),
        (b'{"arguments": [{"id": "a", "premises": [{"text": "p"}]}] ', "auto", 1, "expected } after the arguments array"),
        (b'{"arguments": [\n  7\n]}', "auto", 2, "expected an argument object, got a number"),
        (b'{"id": "a", "text": "t"}\n', "argsme", 1, 'not an args.me corpus: expected {"arguments": [ at the start'),
        (b'{"arguments": [\n{"id": "a", "premises": [{"text": "\xff"}]}]}', "auto", 2, "not UTF-8 text"),
        (b"", "auto", None, "the file contains no documents"),
        (b'{"arguments": []}', "auto", None, "the file contains no documents"),
    ],
)
def test_it_rejects_records_it_cannot_store(tmp_path, content, fmt, line, reason):
    path = tmp_path / "docs"
    path.write_bytes(content)

    error = error_for(path, fmt)

    assert (error.line, error.reason) == (line, reason)


def test_it_rejects_truncated_gzip_data_naming_the_line_it_breaks_off_in(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    lines = b"".join(b'{"id": "d%d", "text": "%s"}\n' % (i, random.Random(i).randbytes(60).hex().encode()) for i in range(500))
    cut = gzip.compress(lines)[:-200]
    path.write_bytes(cut)
    readable = zlib.decompressobj(wbits=31).decompress(cut)

    error = error_for(path)

    assert error.line == readable.count(b"\n") + 1 > 400
    assert "gzip data is truncated or corrupt" in error.reason


def test_it_refuses_an_unknown_format_name(samples):
    with pytest.raises(ValueError):
        read_documents(samples / "passages.jsonl", fmt="trec")


def test_records_are_immutable(samples):
    record = next(read_documents(samples / "passages.jsonl"))

    with pytest.raises(dataclasses.FrozenInstanceError):
        record.body = "changed"


def test_it_reads_the_touche_2023_rerank_sample_as_generic_jsonl(touche_data):
    records = list(read_documents(touche_data / "2023-task2-sample" / "rerank.jsonl.gz"))

    assert len(records) == 30
    first = records[0]
    assert first.doc_id == "clueweb12-1106wb-16-17437"
    assert first.title == "Eyes hurt looking computer screen"
    assert first.url == "http://www.pingueculae.com/eye-strain-information/135-eyes-hurt-looking-at-the-computer-screen"
    assert not first.is_html and first.body.startswith("Eyes hurt looking computer screen")
    assert first.metadata["qid"] == 1111
    assert first.metadata["query"] == "does computer work increase eye pressure?"
    assert first.metadata["original_document"]["html_plain"].startswith("<!doctype html>")
    assert [r.line for r in records] == list(range(1, 31))
    assert {r.metadata["qid"] for r in records} == {1111, 1112, 1113}
