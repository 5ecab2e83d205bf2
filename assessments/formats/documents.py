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

Collections come from the web, so the JSON is held to what a database and a browser can take, each breach
a `FormatError` with its line: a record of at most `MAX_RECORD_BYTES`, nesting of at most `MAX_DEPTH`
levels, finite numbers, integers within 64 bits, no NUL character and no lone UTF-16 surrogate (``\\u0000``
and ``\\ud800`` are valid JSON escapes, but PostgreSQL refuses the first and UTF-8 cannot encode the second).
See `formats.reading` for the limits on the file itself.

The args.me file is not parsed with a streaming tokenizer (ijson) but by decoding one argument at a
time with the standard library's C decoder (``JSONDecoder.raw_decode``) over a sliding window. That
is faster than an event stream and, unlike ijson, lets every error name its line.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal, NoReturn

from .errors import FormatError, shown
from .reading import (
    CONTROL,
    MAX_BLANK_LINES,
    MAX_DECOMPRESSED_BYTES,
    MAX_RECORD_BYTES,
    blank_line_limit,
    character_problem,
    open_input,
)

Format = Literal["auto", "argsme", "jsonl", "passages", "argsme-sentences"]


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    doc_id: str
    title: str
    body: str
    is_html: bool
    url: str
    metadata: dict
    line: int  # where the document's JSON object starts (1-based, in the decompressed text)


_ARGSME_HEAD = re.compile(rb'\s*\{\s*"arguments"\s*:')
_ARGSME_HEAD_TEXT = re.compile(r'\s*\{\s*"arguments"\s*:\s*\[')
_SNIFF_BYTES = 4096
MAX_DEPTH = 32  # args.me arguments nest 3 levels, TIRA's re-rank records 2
_INTEGER_BOUND = 2**64  # integers in metadata: what a 64-bit column or a JSON reader in another language can hold


def read_documents(
    path: str | os.PathLike[str], *, fmt: Format = "auto", max_decompressed: int = MAX_DECOMPRESSED_BYTES
) -> Iterator[DocumentRecord]:
    """Yield documents in file order; raise `FormatError` (with the line) at the first bad record.

    ``auto`` picks ``argsme`` when the file starts with ``{"arguments"`` and ``argsme-sentences`` (Touché 2022
    Task 1's args_processed.csv, one document per sentence: `formats.argsme_sentences`) when it starts with that
    file's CSV header; otherwise the file is JSONL, read as ``passages`` when its first record has ``contents``
    and as ``jsonl`` otherwise. A file without any document is an error: importing it can only be a mistake.
    """
    from .argsme_sentences import looks_like_argsme_sentences, read_argsme_sentences  # it imports DocumentRecord

    if fmt not in ("auto", "argsme", "jsonl", "passages", "argsme-sentences"):
        raise ValueError(f"fmt must be auto, argsme, jsonl, passages or argsme-sentences, not {fmt!r}")
    source = os.fspath(path)
    if fmt == "auto":
        with open_input(source, source=source, max_decompressed=max_decompressed) as stream:
            head = stream.read(_SNIFF_BYTES).removeprefix(b"\xef\xbb\xbf")
        if _ARGSME_HEAD.match(head):
            fmt = "argsme"
        elif looks_like_argsme_sentences(head):
            fmt = "argsme-sentences"
    if fmt == "argsme-sentences":
        return read_argsme_sentences(source, max_decompressed=max_decompressed)
    return _documents(source, fmt, max_decompressed)


def _documents(source: str, fmt: Format, max_decompressed: int) -> Iterator[DocumentRecord]:
    with open_input(source, source=source, max_decompressed=max_decompressed) as stream:
        if fmt == "argsme":
            count = yield from _read_argsme(stream, source)
        else:
            count = yield from _read_jsonl(stream, source, fmt)
    if not count:
        raise FormatError(source, None, "the file contains no documents")


# --- JSON held to what the database can store ---------------------------------------------------------


class _NotANumber(ValueError):
    pass


def _refuse_constant(name: str) -> NoReturn:
    raise _NotANumber(f"{name} is not a JSON number")


# NaN and Infinity are accepted by Python's json but are not JSON, and jsonb refuses them.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _decoded_json(decode: Callable[[], tuple[object, int]], source: str, line: int) -> tuple[object, int]:
    """Call a decoder, turning every way it can fail on hostile input into a FormatError (JSONDecodeError excepted:
    the callers say where it happened)."""
    try:
        return decode()
    except json.JSONDecodeError:
        raise
    except _NotANumber as exc:
        raise FormatError(source, line, str(exc)) from None
    except RecursionError:
        raise FormatError(source, line, f"JSON nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:  # an integer of more digits than int() converts (sys.get_int_max_str_digits)
        raise FormatError(source, line, "a number in the JSON has too many digits") from None


def _check_json(value: object, source: str, line: int, *, text_escapes: bool) -> None:
    """Refuse what PostgreSQL or a browser cannot take. ``text_escapes``: the raw record holds a ``\\u0000`` or
    ``\\ud…`` escape, the only ways to a NUL or a lone surrogate, so only then are the strings searched."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise FormatError(source, line, f"JSON nested more than {MAX_DEPTH} levels deep")
            if isinstance(item, dict):
                if text_escapes:
                    stack.extend((key, depth) for key in item)
                item = item.values()
            stack.extend((member, depth + 1) for member in item)
        elif isinstance(item, float):
            if item - item:  # 1e400 parses as inf
                raise FormatError(source, line, "a number in the JSON is too large for a finite float")
        elif isinstance(item, int) and not -_INTEGER_BOUND < item < _INTEGER_BOUND:
            raise FormatError(source, line, f"integer {_digits(item)} in the JSON is larger than 64 bits")
        elif text_escapes and isinstance(item, str):
            if "\x00" in item:
                raise FormatError(source, line, "a string contains a NUL character (\\u0000)")
            if _SURROGATE.search(item):
                raise FormatError(source, line, "a string contains a lone surrogate (\\ud800–\\udfff), which is not text")


def _digits(number: int) -> str:
    text = str(number)
    return text if len(text) <= 30 else f"{text[:20]}… ({len(text):,} digits)"


def _has_text_escapes(text: str | bytes, start: int = 0, end: int | None = None) -> bool:
    escapes = ("\\u0000", "\\ud", "\\uD") if isinstance(text, str) else (b"\\u0000", b"\\ud", b"\\uD")
    return any(text.find(escape, start, end) >= 0 for escape in escapes)  # type: ignore[arg-type]


# --- JSONL (passages and generic) ------------------------------------------------------------


def _read_jsonl(stream: BinaryIO, source: str, fmt: Format) -> Generator[DocumentRecord, None, int]:
    to_record: Callable[[dict, str, int], DocumentRecord] | None = None
    if fmt != "auto":
        to_record = _passage_record if fmt == "passages" else _generic_record
    count = blank_lines = 0
    for lineno, raw in _lines(stream, source):
        if raw.isspace():
            blank_lines += 1
            if blank_lines > MAX_BLANK_LINES:
                raise blank_line_limit(source, lineno)
            continue
        try:
            # Strict UTF-8: json.loads(bytes) would let encoded surrogates through ("surrogatepass").
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(source, lineno, f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})") from None
        try:
            value, _ = _decoded_json(lambda: (_DECODER.decode(text), 0), source, lineno)  # noqa: B023 (called at once)
        except json.JSONDecodeError as e:
            raise FormatError(source, lineno, f"invalid JSON: {_json_message(e)} (column {e.colno})") from None
        if not isinstance(value, dict):
            raise FormatError(source, lineno, f"expected a JSON object, got {_json_type(value)}")
        _check_json(value, source, lineno, text_escapes=_has_text_escapes(raw))
        if to_record is None:
            to_record = _passage_record if "contents" in value else _generic_record
        yield to_record(value, source, lineno)
        count += 1
    return count


def _lines(stream: BinaryIO, source: str) -> Iterator[tuple[int, bytes]]:
    """The stream's lines, numbered. A line is read a megabyte at a time, so one longer than a record may be is
    refused holding only that much (readline(limit) would also copy it whole before the check)."""
    readline = stream.readline
    lineno = 0
    while raw := readline(_CHUNK_BYTES):
        lineno += 1
        if not raw.endswith(b"\n"):
            parts, size = [raw], len(raw)
            while more := readline(_CHUNK_BYTES):
                parts.append(more)
                size += len(more)
                if size - more.endswith(b"\n") > MAX_RECORD_BYTES:
                    raise FormatError(source, lineno, f"the line is longer than {MAX_RECORD_BYTES:,} bytes")
                if more.endswith(b"\n"):
                    break
            raw = b"".join(parts)
        if len(raw) - raw.endswith(b"\n") > MAX_RECORD_BYTES:
            raise FormatError(source, lineno, f"the line is longer than {MAX_RECORD_BYTES:,} bytes")
        yield lineno, raw


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
    if control := CONTROL.search(doc_id):
        # Stored, it would reach every run, qrels file and export unseen.
        raise FormatError(source, line, f"{key} {shown(value)} contains a {character_problem(control.group())}")
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

_CHUNK_BYTES = 1 << 20
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _Window:
    """A sliding window over a file's text that knows the line number of every position in it.

    Positions are indices into ``text``. ``fill`` discards what is before ``pos`` and appends at least
    as much as it keeps, so a single huge argument costs amortised linear time, not quadratic. The bytes are
    decoded here, a chunk at a time, so a byte that is not UTF-8 is reported with its line.
    """

    def __init__(self, stream: BinaryIO, source: str) -> None:
        self._stream, self._source = stream, source
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.text = ""
        self.pos = 0
        self.eof = False
        self._line_at = 1  # line number at _counted
        self._counted = 0
        self.fill()

    def fill(self) -> bool:
        """Read more text; False at the end of the stream."""
        if self.eof:
            return False
        self._line_at += self.text.count("\n", self._counted, self.pos)
        kept = self.text[self.pos :]
        more = self._read(max(_CHUNK_BYTES, len(kept)))
        self.eof = not more
        self.text, self.pos, self._counted = kept + more, 0, 0
        return not self.eof

    def _read(self, size: int) -> str:
        """At least one character, or '' at the end (bytes may stop inside a character)."""
        while True:
            data = self._stream.read(size)
            try:
                text = self._decoder.decode(data, final=not data)
            except UnicodeDecodeError as e:
                line = self._line_at + self.text.count("\n", self._counted) + data.count(b"\n", 0, max(e.start, 0))
                raise FormatError(self._source, line, "not UTF-8 text") from None
            if text or not data:
                return text

    def line(self, at: int) -> int:
        """Line number of position ``at``; ``at`` must not go backwards between calls."""
        self._line_at += self.text.count("\n", self._counted, at)
        self._counted = at
        return self._line_at

    def skip_whitespace(self) -> str:
        """Move past whitespace and return the next character ('' at the end of the stream)."""
        while True:
            self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.fill():
                return ""


def _read_argsme(stream: BinaryIO, source: str) -> Generator[DocumentRecord, None, int]:
    window = _Window(stream, source)
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
        yield _argsme_record(_decode_object(window, source, line), source, line)
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


def _decode_object(window: _Window, source: str, line: int) -> object:
    while True:
        start = window.pos
        try:
            value, end = _decoded_json(lambda: _DECODER.raw_decode(window.text, start), source, line)  # noqa: B023
        except json.JSONDecodeError as e:
            # An argument cut by the end of the window fails near its end (or as an unterminated
            # string); read more and try again, up to the size an argument may have. Anything else is
            # a real error in the file.
            cut = e.pos >= len(window.text) - 16 or e.msg.startswith("Unterminated string")
            if cut and len(window.text) - start > MAX_RECORD_BYTES:
                raise FormatError(source, line, f"an argument is longer than {MAX_RECORD_BYTES:,} characters") from None
            if cut and window.fill():
                continue
            raise FormatError(source, window.line(e.pos), f"invalid JSON: {_json_message(e)}") from None
        _check_json(value, source, line, text_escapes=_has_text_escapes(window.text, start, end))
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
