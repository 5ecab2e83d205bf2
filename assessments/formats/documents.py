"""Stream documents out of collection files, with memory that stays flat whatever the file size.

Three shapes occur in Touché:

* ``argsme``: the args.me corpus, one JSON object ``{"arguments": [{"id", "conclusion", "premises":
  [{"text", "stance"}], "context": {…}}, …]}`` of about 1 GB. Each argument becomes a document whose
  title is the conclusion and whose body is the premise text; stance and context go to metadata.
* ``passages``: Touché 2022 passage JSONL, ``{"id", "contents", "chatNoirUrl"}`` per line.
* ``jsonl``: anything else with one JSON object per line: an id under ``id``, ``docno`` or
  ``doc_id``; ``title``; ``text`` (plain) or ``html``; ``url``. TIRA's re-rank files
  (``rerank.jsonl.gz``: ``qid``, ``query``, ``docno``, ``text``, ``original_document`` {uri, title,
  html_plain}) read as this shape, taking the url and title from ``original_document``. They have
  one line per (query, document) pair, so a document may repeat: every line is yielded and the
  import service keeps the first.

Keys that are not mapped to a field are kept, as parsed, in ``metadata``. Files may be gzip-compressed
whatever their name: gzip is recognised by its magic bytes.

The args.me file is not parsed with a streaming tokenizer (ijson) but by decoding one argument at a
time with the standard library's C decoder (``JSONDecoder.raw_decode``) over a sliding window. That
is faster than an event stream and, unlike ijson, lets every error name its line.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, Literal, TextIO

from .errors import FormatError

Format = Literal["auto", "argsme", "jsonl", "passages"]


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    doc_id: str
    title: str
    body: str
    is_html: bool
    url: str
    metadata: dict
    line: int  # where the document's JSON object starts (1-based, in the decompressed text)


_GZIP_MAGIC = b"\x1f\x8b"
_ARGSME_HEAD = re.compile(rb'\s*\{\s*"arguments"\s*:')
_ARGSME_HEAD_TEXT = re.compile(r'\s*\{\s*"arguments"\s*:\s*\[')
_SNIFF_BYTES = 4096


def read_documents(path: str | os.PathLike[str], *, fmt: Format = "auto") -> Iterator[DocumentRecord]:
    """Yield documents in file order; raise `FormatError` (with the line) at the first bad record.

    ``auto`` picks ``argsme`` when the file starts with ``{"arguments"``; otherwise the file is JSONL,
    read as ``passages`` when its first record has ``contents`` and as ``jsonl`` otherwise.
    A file without any document is an error: importing it can only be a mistake.
    """
    if fmt not in ("auto", "argsme", "jsonl", "passages"):
        raise ValueError(f"fmt must be auto, argsme, jsonl or passages, not {fmt!r}")
    source = os.fspath(path)
    if fmt == "auto":
        with _open_binary(source) as stream, _decoding_errors(source):
            head = stream.read(_SNIFF_BYTES).removeprefix(b"\xef\xbb\xbf")
        if _ARGSME_HEAD.match(head):
            fmt = "argsme"
    return _documents(source, fmt)


def _documents(source: str, fmt: Format) -> Iterator[DocumentRecord]:
    with _open_binary(source) as stream, _decoding_errors(source):
        if fmt == "argsme":
            count = yield from _read_argsme(io.TextIOWrapper(stream, encoding="utf-8-sig"), source)
        else:
            count = yield from _read_jsonl(stream, source, fmt)
    if not count:
        raise FormatError(source, None, "the file contains no documents")


@contextmanager
def _decoding_errors(source: str) -> Iterator[None]:
    """Report broken compression or encoding as a `FormatError` about the file (no line is known)."""
    try:
        yield
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise FormatError(source, None, f"the gzip data is truncated or corrupt ({e})") from None
    except UnicodeDecodeError as e:
        raise FormatError(source, None, f"the file is not UTF-8 ({e.reason})") from None


def _open_binary(path: str) -> BinaryIO:
    with open(path, "rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    if not compressed:
        return open(path, "rb")
    # GzipFile reads 8 KiB at a time through Python code; a larger buffer in front of it saves
    # about a sixth of the time of reading a compressed passage file line by line.
    return io.BufferedReader(gzip.open(path, "rb"), buffer_size=1 << 20)  # type: ignore[arg-type]


# --- JSONL (passages and generic) ------------------------------------------------------------


def _read_jsonl(stream: BinaryIO, source: str, fmt: Format) -> Iterator[DocumentRecord]:
    to_record: Callable[[dict, str, int], DocumentRecord] | None = None
    if fmt != "auto":
        to_record = _passage_record if fmt == "passages" else _generic_record
    count = 0
    for lineno, raw in enumerate(stream, 1):
        if raw.isspace():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as e:
            raise FormatError(source, lineno, f"invalid JSON: {_json_message(e)} (column {e.colno})") from None
        except UnicodeDecodeError as e:
            raise FormatError(source, lineno, f"the line is not UTF-8 ({e.reason})") from None
        if not isinstance(value, dict):
            raise FormatError(source, lineno, f"expected a JSON object, got {_json_type(value)}")
        if to_record is None:
            to_record = _passage_record if "contents" in value else _generic_record
        yield to_record(value, source, lineno)
        count += 1
    return count


def _passage_record(value: dict, source: str, line: int) -> DocumentRecord:
    doc_id = _doc_id(value.pop("id", None), "id", source, line)
    body = _string(value.pop("contents", None), "contents", source, line)
    if body is None:
        raise FormatError(source, line, f"passage {doc_id} has no contents")
    url = _string(value.pop("chatNoirUrl", None), "chatNoirUrl", source, line) or ""
    return DocumentRecord(doc_id, "", body, False, url, value, line)


def _generic_record(value: dict, source: str, line: int) -> DocumentRecord:
    id_key = next((key for key in ("id", "docno", "doc_id") if value.get(key) is not None), "id")
    doc_id = _doc_id(value.pop(id_key, None), id_key, source, line)
    original = value.get("original_document")
    if not isinstance(original, dict):
        original = {}
    title = _string(value.pop("title", None), "title", source, line)
    if title is None:
        title = _string(original.get("title"), "original_document.title", source, line) or ""
    url = _string(value.pop("url", None), "url", source, line)
    if url is None:
        url = _string(original.get("uri"), "original_document.uri", source, line) or ""
    body = _string(value.pop("text", None), "text", source, line)
    is_html = False
    if body is None:
        body = _string(value.pop("html", None), "html", source, line)
        is_html = True
    if body is None:
        raise FormatError(source, line, f"document {doc_id} has neither text nor html")
    return DocumentRecord(doc_id, title, body, is_html, url, value, line)


def _doc_id(value: object, key: str, source: str, line: int) -> str:
    # Integer ids occur (TIRA writes numeric qids and some collections numeric docnos);
    # they are kept as their decimal text, the form runs and qrels use.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        raise FormatError(source, line, "document has no id (expected id, docno or doc_id)")
    if not isinstance(value, str):
        raise FormatError(source, line, f"{key} must be a string, got {_json_type(value)}")
    doc_id = value.strip()
    if not doc_id or len(doc_id.split()) != 1:
        # Runs and qrels are whitespace-separated, so such an id could never be judged.
        raise FormatError(source, line, f"{key} {value!r} is empty or contains whitespace")
    return doc_id


def _string(value: object, key: str, source: str, line: int) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise FormatError(source, line, f"{key} must be a string, got {_json_type(value)}")


def _json_message(error: json.JSONDecodeError) -> str:
    # The decoder's messages are made to be followed by a position ("Invalid control character at").
    return error.msg.removesuffix(" at")


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


# --- args.me -----------------------------------------------------------------------------------

_CHUNK_CHARS = 1 << 20
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Window:
    """A sliding window over a text stream that knows the line number of every position in it.

    Positions are indices into ``text``. ``fill`` discards what is before ``pos`` and appends at least
    as much as it keeps, so a single huge argument costs amortised linear time, not quadratic.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.text = stream.read(_CHUNK_CHARS)
        self.pos = 0
        self.eof = not self.text
        self._line_at = 1  # line number at _counted
        self._counted = 0

    def fill(self) -> bool:
        """Read more text; False at the end of the stream."""
        if self.eof:
            return False
        self._line_at += self.text.count("\n", self._counted, self.pos)
        kept = self.text[self.pos :]
        more = self._stream.read(max(_CHUNK_CHARS, len(kept)))
        self.eof = not more
        self.text, self.pos, self._counted = kept + more, 0, 0
        return not self.eof

    def line(self, at: int) -> int:
        """Line number of position ``at``; ``at`` must not go backwards between calls."""
        self._line_at += self.text.count("\n", self._counted, at)
        self._counted = at
        return self._line_at

    def skip_whitespace(self) -> str:
        """Move past whitespace and return the next character ('' at the end of the stream)."""
        while True:
            self.pos = _WHITESPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.fill():
                return ""


def _read_argsme(stream: TextIO, source: str) -> Iterator[DocumentRecord]:
    window = _Window(stream)
    head = _ARGSME_HEAD_TEXT.match(window.text)
    while head is None and len(window.text) < _SNIFF_BYTES and window.fill():
        head = _ARGSME_HEAD_TEXT.match(window.text)
    if head is None:
        raise FormatError(source, 1, 'not an args.me corpus: expected {"arguments": [ at the start')
    window.pos = head.end()
    count = 0
    next_char = window.skip_whitespace()
    while next_char != "]":
        line = window.line(window.pos)
        yield _argsme_record(_decode_object(window, source), source, line)
        count += 1
        next_char = window.skip_whitespace()
        if next_char == ",":
            window.pos += 1
            window.skip_whitespace()
        elif next_char != "]":
            raise FormatError(source, window.line(window.pos), "expected , or ] after an argument")
    window.pos += 1
    if window.skip_whitespace() != "}":
        raise FormatError(source, window.line(window.pos), "expected } after the arguments array")
    window.pos += 1
    if window.skip_whitespace():
        raise FormatError(source, window.line(window.pos), "unexpected content after the args.me object")
    return count


def _decode_object(window: _Window, source: str) -> object:
    while True:
        try:
            value, end = _DECODER.raw_decode(window.text, window.pos)
        except json.JSONDecodeError as e:
            # An argument cut by the end of the window fails near its end (or as an unterminated
            # string); read more and try again. Anything else is a real error in the file.
            cut = e.pos >= len(window.text) - 16 or e.msg.startswith("Unterminated string")
            if cut and window.fill():
                continue
            raise FormatError(source, window.line(e.pos), f"invalid JSON: {_json_message(e)}") from None
        window.pos = end
        return value


def _argsme_record(argument: object, source: str, line: int) -> DocumentRecord:
    if not isinstance(argument, dict):
        raise FormatError(source, line, f"expected an argument object, got {_json_type(argument)}")
    doc_id = _doc_id(argument.pop("id", None), "id", source, line)
    title = _string(argument.pop("conclusion", None), "conclusion", source, line) or ""
    premises = argument.pop("premises", None)
    if not isinstance(premises, list) or not premises or not all(isinstance(p, dict) for p in premises):
        raise FormatError(source, line, f"argument {doc_id}: premises must be a non-empty array of objects")
    texts = [_string(p.get("text"), "premises.text", source, line) or "" for p in premises]
    context = argument.get("context")
    if not isinstance(context, dict):
        context = {}
    url = _string(context.get("sourceUrl"), "context.sourceUrl", source, line) or ""
    # args.me arguments have a single premise, so its stance is the argument's stance.
    argument["stance"] = premises[0].get("stance")
    return DocumentRecord(doc_id, title, "\n\n".join(texts), False, url, argument, line)
