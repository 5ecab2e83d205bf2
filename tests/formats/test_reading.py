"""Hostile input to the readers: every bad file ends in a FormatError naming its line, after bounded work."""

import gzip
import io
import json
import zlib
from itertools import chain

import pytest

from assessments.formats import reading
from assessments.formats.documents import read_documents
from assessments.formats.errors import FormatError
from assessments.formats.qrels import parse_qrels
from assessments.formats.reading import line_batches, open_input
from assessments.formats.trec_run import read_run
from assessments.labels import PRESETS

RUN_LINE = "1 Q0 doc-a 1 2.5 tag\n"
SURROGATE_BYTE = 0xED

RELEVANCE = PRESETS["touche-2022-task2"][1].dimension("relevance")


def lines_of(data: bytes, **kwargs) -> list[str]:
    return list(chain.from_iterable(line_batches(io.BytesIO(data), source="f", **kwargs)))


def error(call) -> FormatError:
    with pytest.raises(FormatError) as caught:
        call()
    return caught.value


def gzip_members(member: bytes, count: int) -> bytes:
    """`count` gzip members of `member` each: a file that expands `count` times as far, made in no time."""
    return gzip.compress(member, compresslevel=9) * count


# --- Lines ----------------------------------------------------------------------------------------------------


def test_lines_come_without_their_line_ends_and_a_last_line_needs_none():
    assert lines_of(b"a b\r\nc\n\nd") == ["a b", "c", "", "d"]
    assert lines_of(b"") == []


def test_a_lone_carriage_return_ends_a_line_as_in_old_mac_files(monkeypatch):
    assert lines_of(b"a\rb\r\rc") == ["a", "b", "", "c"]
    monkeypatch.setattr(reading, "BLOCK_BYTES", 2)  # a \r\n cut between two blocks is still one line end
    assert lines_of(b"a\r\nb\r\nc\r") == ["a", "b", "c"]


def test_lines_are_cut_at_line_ends_whatever_the_block_size(monkeypatch):
    monkeypatch.setattr(reading, "BLOCK_BYTES", 3)
    assert lines_of("één\ntwee\ndrie\n".encode()) == ["één", "twee", "drie"]


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"ok\n" + b"x" * 33 + b"\nok\n", 2, "the line is longer than 32 bytes"),
        (b"ok\nok\n" + b"x" * 100, 3, "the line is longer than 32 bytes"),
        (b"ok\nd\x00c\n", 2, "the line contains a NUL byte"),
        (b"ok\nok\nab\xffc\n", 3, "not UTF-8 text (byte 0xff at column 3)"),
        (b"ok\n\xed\xa0\x80\n", 2, "not UTF-8 text (byte 0xed at column 1)"),  # an encoded lone surrogate
    ],
)
def test_a_line_too_long_a_nul_byte_or_bytes_that_are_not_utf8_name_their_line(data, line, reason):
    found = error(lambda: lines_of(data, max_line_bytes=32))
    assert (found.line, found.reason) == (line, reason)


def test_a_run_that_is_one_long_line_is_refused_after_reading_only_the_limit():
    stream = io.BytesIO(b"x" * (10 * reading.MAX_LINE_BYTES))
    assert error(lambda: lines_of(stream.getvalue())).line == 1
    batches = line_batches(stream, source="f")
    with pytest.raises(FormatError):
        next(batches)
    assert stream.tell() <= reading.MAX_LINE_BYTES + reading.BLOCK_BYTES


# --- gzip -------------------------------------------------------------------------------------------------------


def test_gzip_is_recognised_by_its_magic_bytes_whatever_the_name(tmp_path):
    for name in ("run.txt", "run.gz", "run"):
        (tmp_path / name).write_bytes(gzip.compress(RUN_LINE.encode()))
        with open_input(tmp_path / name, source=name) as stream:
            assert stream.read() == RUN_LINE.encode()
    (tmp_path / "plain.gz").write_bytes(RUN_LINE.encode())
    with open_input(tmp_path / "plain.gz", source="plain.gz") as stream:
        assert stream.read() == RUN_LINE.encode()


def test_a_decompression_bomb_is_refused_at_the_line_it_had_reached(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "EXPANSION_FLOOR", 1 << 20)
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip_members(RUN_LINE.encode() * 50_000, 4))  # 4.2 MB from 13 kB: about 330×
    with open_input(bomb, source="bomb.gz") as stream:
        found = error(lambda: list(line_batches(stream, source="bomb.gz")))
    assert found.reason == (
        "the file expands to more than 1,048,576 bytes when decompressed (it has 10,424); refused as a likely decompression bomb"
    )
    assert 40_000 < found.line <= (1 << 20) // len(RUN_LINE) + 1  # within the first megabyte, where the limit is


def test_an_absolute_limit_holds_whatever_the_ratio(tmp_path):
    data = tmp_path / "big.gz"
    data.write_bytes(gzip.compress(RUN_LINE.encode() * 100))
    with open_input(data, source="big.gz", max_decompressed=1000) as stream:
        found = error(stream.read)
    assert (found.line, found.reason.split(" (")[0]) == (1, "the file expands to more than 1,000 bytes when decompressed")


def test_truncated_gzip_names_the_line_it_breaks_off_in(tmp_path):
    text = b"".join(b"1 Q0 d%06d 1 1.0 t\n" % i for i in range(20_000))
    cut = gzip.compress(text)[:-30]
    (tmp_path / "cut.gz").write_bytes(cut)
    readable = zlib.decompressobj(wbits=31).decompress(cut)
    with open_input(tmp_path / "cut.gz", source="cut.gz") as stream:
        found = error(lambda: list(line_batches(stream, source="cut.gz")))
    assert found.reason.startswith("the gzip data is truncated or corrupt")
    assert found.line == readable.count(b"\n") + 1 > 19_000


def test_corrupt_gzip_is_a_format_error_with_a_line(tmp_path):
    data = bytearray(gzip.compress(b"".join(b"1 Q0 d%06d 1 1.0 t\n" % i for i in range(20_000))))
    data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
    (tmp_path / "corrupt.gz").write_bytes(data)
    with open_input(tmp_path / "corrupt.gz", source="corrupt.gz") as stream:
        found = error(lambda: list(line_batches(stream, source="corrupt.gz")))
    assert found.reason.startswith("the gzip data is truncated or corrupt") and 1 <= found.line <= 20_001


# --- Blank lines ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["run", "qrels", "documents"])
def test_a_million_blank_lines_end_the_read(tmp_path, kind, monkeypatch):
    monkeypatch.setattr(reading, "MAX_BLANK_LINES", 1000)
    for module in ("trec_run", "qrels", "documents"):
        monkeypatch.setattr(f"assessments.formats.{module}.MAX_BLANK_LINES", 1000)
    first = {"run": RUN_LINE, "qrels": "1 0 doc-a 1\n", "documents": '{"id": "a", "text": "t"}\n'}[kind]
    path = tmp_path / kind
    path.write_text(first + "\n \n" * 5000)
    if kind == "documents":
        found = error(lambda: list(read_documents(path)))
    else:
        lines = path.read_text().splitlines()
        parse = read_run(lines, source="f") if kind == "run" else parse_qrels(lines, source="f", dimension=RELEVANCE)
        found = error(lambda: list(parse))
    assert (found.line, found.reason) == (1002, "more than 1,000 blank lines; refused as not a real file")


# --- Numbers in runs and qrels ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rank", "score", "reason"),
    [
        ("１", "2.5", "rank '１' is not an integer in ASCII digits"),
        ("1_000", "2.5", "rank '1_000' is not an integer in ASCII digits"),
        ("1" * 5000, "2.5", "rank '1111111111"),
        ("1", "２.5", "score '２.5' is not a number in ASCII digits"),
        ("1", "2_5", "score '2_5' is not a number in ASCII digits"),
        ("1", "1e400", "score '1e400' is not a finite number"),
        ("1", "-Infinity", "score '-Infinity' is not a finite number"),
    ],
)
def test_ranks_and_scores_are_ascii_numbers(rank, score, reason):
    found = error(lambda: list(read_run([RUN_LINE, f"1 Q0 doc-b {rank} {score} tag\n"], source="f")))
    assert found.line == 2 and found.reason.startswith(reason)
    assert len(rank) < 5000 or found.reason.endswith("… (5,000 characters) is too large")
    assert len(found.reason) < 200


@pytest.mark.parametrize(("rank", "expected"), [("+3", 3), ("-1", -1), ("007", 7)])
def test_a_rank_may_have_a_sign_and_leading_zeros(rank, expected):
    assert [row[2] for row in read_run([f"1 Q0 d {rank} 1.0 t"], source="f")] == [expected]


@pytest.mark.parametrize("label", ["１", "1_0", "1" * 5000, "0x1", "1.0"])
def test_qrels_labels_are_small_ascii_integers(label):
    found = error(lambda: list(parse_qrels(["1 0 a 1", f"1 0 b {label}"], source="f", dimension=RELEVANCE)))
    assert found.line == 2 and "is not an integer of at most 6 ASCII digits" in found.reason
    assert len(found.reason) < 200


# --- JSON in document collections ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested more than 32 levels deep"),  # Python's own recursion limit
        (b"[" * 32 + b"]" * 32, "JSON nested more than 32 levels deep"),
        (b"NaN", "NaN is not a JSON number"),
        (b"-Infinity", "-Infinity is not a JSON number"),
        (b"1e400", "a number in the JSON is too large for a finite float"),
        (b"7" * 5000, "a number in the JSON has too many digits"),
        (b"18446744073709551616", "integer 18446744073709551616 in the JSON is larger than 64 bits"),
        (b'"t\\u0000"', "a string contains a NUL character (\\u0000)"),
        (b'{"k\\u0000": 1}', "a string contains a NUL character (\\u0000)"),
        (b'"t\\ud800"', "a string contains a lone surrogate (\\ud800–\\udfff), which is not text"),
        (b'["t\\uDC00x"]', "a string contains a lone surrogate (\\ud800–\\udfff), which is not text"),
        (b'"t\xed\xa0\x80"', "not UTF-8 text"),  # a surrogate encoded as bytes
    ],
)
@pytest.mark.parametrize("layout", ["jsonl", "argsme"])
def test_json_a_database_cannot_store_is_refused_with_its_line(tmp_path, value, reason, layout):
    path = tmp_path / layout
    if layout == "jsonl":
        record = b'{"id": "a", "text": "t", "m": ' + value + b"}"
        path.write_bytes(b'{"id": "g", "text": "fine"}\n' + record + b"\n")
    else:
        record = b'{"id": "a", "premises": [{"text": "p"}], "m": ' + value + b"}"
        path.write_bytes(b'{"arguments": [\n{"id": "g", "premises": [{"text": "p"}]},\n' + record + b"\n]}")
    found = error(lambda: list(read_documents(path)))
    if reason == "not UTF-8 text" and layout == "jsonl":
        reason += f" (byte 0xed at column {record.index(SURROGATE_BYTE) + 1})"
    assert (found.line, found.reason) == (2 if layout == "jsonl" else 3, reason)


def test_valid_escapes_and_deep_but_allowed_nesting_still_read(tmp_path):
    path = tmp_path / "ok.jsonl"
    nested = "[" * 31 + "]" * 31
    path.write_text(json.dumps({"id": "a", "text": "😀 \\u0000 as text", "n": 2**63, "m": json.loads(nested)}) + "\n")
    (record,) = read_documents(path)
    assert record.body == "😀 \\u0000 as text" and record.metadata["n"] == 2**63


def test_a_document_line_longer_than_a_record_may_be_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("assessments.formats.documents.MAX_RECORD_BYTES", 100)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"id": "a", "text": "t"}\n{"id": "b", "text": "' + b"x" * 200 + b'"}\n')
    found = error(lambda: list(read_documents(path)))
    assert (found.line, found.reason) == (2, "the line is longer than 100 bytes")
