"""Read the processed args.me corpus of Touché 2022 Task 1 (argument gists) as one document per sentence.

Touché 2022 Task 1 retrieved pairs of sentences from args.me, split into sentences by the lab: the file
``args_processed.csv`` (Zenodo record 6873574, ``args_processed_04_01.tar.gz``; ir_datasets reads it as
``argsme/2020-04-01/processed``). It is CSV with a header row and one argument per record, quoted fields may
span lines, and ir_datasets reads it with ``csv.DictReader`` and ``ast.literal_eval`` of three columns
(``ir_datasets/formats/argsme.py``, ``ArgsMeProcessedDoc.from_csv``):

* ``id``: the argument's id, ``Sc065954f-Ae72bc9c6``;
* ``conclusion``: its conclusion, plain text;
* ``premises``: a Python literal (not JSON: single quotes), a list of ``{'text', 'stance', 'annotations'}``;
* ``context``: a Python literal dict, args.me's context (``sourceUrl``, ``topic``, ``sourceText`` …);
* ``sentences``: a Python literal list of ``{'sent_id': …, 'sent_text': …}``, the argument's sentences, ids
  ``<argument id>__<PREMISE|CONC>__<n>`` (``Sc065954f-Ae72bc9c6__PREMISE__41``).

Each sentence becomes a `DocumentRecord`: its id is ``sent_id``, its body ``sent_text``, its title the
argument's conclusion (so a pair of sentences can show each with its conclusion), and its metadata the argument's
id. Premises and context are not read: they repeat the sentences' text and the page the argument came from
(``sourceText`` is most of the file's gigabytes), and a sentence is shown without them.

Run files name a pair by joining two sentence ids with a comma, so a sentence id may hold no comma and no
whitespace. The file is treated as hostile, as every input is (`formats.reading`): a record of at most
`MAX_RECORD_BYTES`, literals decoded by `ast.literal_eval` only (never evaluated), no NUL and no lone surrogate.
"""

from __future__ import annotations

import ast
import csv
import os
from collections.abc import Iterator
from typing import BinaryIO

from .documents import DocumentRecord
from .errors import FormatError, shown
from .reading import CONTROL, MAX_BLANK_LINES, MAX_DECOMPRESSED_BYTES, MAX_RECORD_BYTES, blank_line_limit, open_input

REQUIRED_COLUMNS = ("id", "conclusion", "sentences")
_READ_BYTES = 1 << 20  # a physical line is read in pieces of this size


def looks_like_argsme_sentences(head: bytes) -> bool:
    """Whether a file's first bytes are the header of args_processed.csv (for `read_documents`' ``auto``)."""
    first = head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r")
    try:
        columns = next(csv.reader([first.decode("utf-8")]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return False
    return all(column in columns for column in REQUIRED_COLUMNS)


def read_argsme_sentences(
    path: str | os.PathLike[str], *, source: str | None = None, max_decompressed: int = MAX_DECOMPRESSED_BYTES
) -> Iterator[DocumentRecord]:
    """Yield one record per sentence, in file order; raise `FormatError` (with the record's first line) at the first
    bad record. A file without any sentence is an error."""
    name = source if source is not None else os.fspath(path)
    count = 0
    with open_input(path, source=name, max_decompressed=max_decompressed) as stream:
        for record in _records(stream, name):
            yield record
            count += 1
    if not count:
        raise FormatError(name, None, "the file contains no sentences")


class _Lines:
    """The text's physical lines for `csv.reader`, counted, with the size of the record being read held to
    MAX_RECORD_BYTES (a quoted field may run over many lines, so a line limit alone would not bound it). Each line
    is decoded on its own, so a byte that is not UTF-8 is reported with its line."""

    def __init__(self, stream: BinaryIO, source: str) -> None:
        self._stream = stream
        self._source = source
        self.line = 0  # physical lines handed out so far
        self.record_bytes = 0  # bytes of the record being read (the reader resets it before each record)

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        parts: list[bytes] = []
        while piece := self._stream.readline(_READ_BYTES):
            self.record_bytes += len(piece)
            if self.record_bytes > MAX_RECORD_BYTES:
                raise FormatError(self._source, self.line + 1, f"a record is longer than {MAX_RECORD_BYTES:,} bytes")
            parts.append(piece)
            if piece.endswith(b"\n"):
                break
        if not parts:
            raise StopIteration
        raw = b"".join(parts)
        self.line += 1
        if b"\x00" in raw:
            raise FormatError(self._source, self.line, "the line contains a NUL byte")
        try:
            return raw.decode("utf-8-sig" if self.line == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(self._source, self.line, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None


def _records(stream: BinaryIO, source: str) -> Iterator[DocumentRecord]:
    if csv.field_size_limit() < MAX_RECORD_BYTES:
        # The module's default (128 KiB) is below what one real field holds; the record limit bounds it instead.
        csv.field_size_limit(MAX_RECORD_BYTES)
    lines = _Lines(stream, source)
    reader = csv.reader(lines, strict=True)
    header = _next_row(reader, lines, source)
    if header is None:
        raise FormatError(source, None, "the file is empty")
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        raise FormatError(
            source, 1,
            f"not the processed args.me corpus (args_processed.csv): the header lacks {', '.join(missing)}"
            f" (it has {', '.join(shown(c, 30) for c in header[:8])})",
        )
    at = {column: header.index(column) for column in REQUIRED_COLUMNS}
    blank_lines = 0
    while True:
        start = lines.line + 1
        lines.record_bytes = 0
        row = _next_row(reader, lines, source)
        if row is None:
            return
        if not row:  # a blank line
            blank_lines += 1
            if blank_lines > MAX_BLANK_LINES:
                raise blank_line_limit(source, start)
            continue
        if len(row) != len(header):
            raise FormatError(source, start, f"expected {len(header)} fields as in the header, got {len(row)}")
        yield from _sentences(row[at["id"]], row[at["conclusion"]], row[at["sentences"]], source, start)


def _next_row(reader: Iterator[list[str]], lines: _Lines, source: str) -> list[str] | None:
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        raise FormatError(source, lines.line, f"not valid CSV: {exc}") from None


def _sentences(argument: str, conclusion: str, literal: str, source: str, line: int) -> Iterator[DocumentRecord]:
    argument = _identifier(argument, "argument id", source, line)
    sentences = _literal(literal, source, line, argument)
    if not isinstance(sentences, list):
        raise FormatError(source, line, f"argument {argument}: sentences must be a list, got {type(sentences).__name__}")
    _check_text(conclusion, f"argument {argument}: its conclusion", source, line)
    for position, sentence in enumerate(sentences, 1):
        where = f"argument {argument}, sentence {position}"
        if not isinstance(sentence, dict):
            raise FormatError(source, line, f"{where}: expected a dict with sent_id and sent_text, got {type(sentence).__name__}")
        sent_id, text = sentence.get("sent_id"), sentence.get("sent_text")
        if not isinstance(sent_id, str) or not isinstance(text, str):
            raise FormatError(source, line, f"{where}: sent_id and sent_text must be strings")
        sent_id = _identifier(sent_id, "sent_id", source, line)
        _check_text(text, f"sentence {sent_id}", source, line)
        yield DocumentRecord(sent_id, conclusion, text, False, "", {"argument": argument}, line)


def _literal(text: str, source: str, line: int, argument: str) -> object:
    """The sentences column as ir_datasets reads it: a Python literal, decoded without evaluating anything."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) and exc.msg else type(exc).__name__
        raise FormatError(source, line, f"argument {argument}: sentences is not a Python literal ({reason})") from None


def _identifier(value: str, what: str, source: str, line: int) -> str:
    """An argument or sentence id: no whitespace, no control character, no comma (a pair's ids are joined by one)."""
    ident = value.strip()
    if not ident or len(ident.split()) != 1 or "," in ident or CONTROL.search(ident):
        raise FormatError(source, line, f"{what} {shown(value)} is empty or holds whitespace, a comma or a control character")
    return ident


def _check_text(text: str, what: str, source: str, line: int) -> None:
    # A literal's escapes can make what the file's bytes cannot: NUL (PostgreSQL text refuses it) and lone
    # surrogates (not text; UTF-8 cannot encode them).
    if "\x00" in text:
        raise FormatError(source, line, f"{what} contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise FormatError(source, line, f"{what} contains a lone surrogate (\\ud800–\\udfff), which is not text") from None
