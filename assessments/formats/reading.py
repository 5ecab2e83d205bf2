"""Reading files that nobody checked, within bounds.

Runs, qrels, topics and document collections arrive from participants and from the web, so a file may be
broken, or built to hurt: a few megabytes of gzip that expand to one line of gigabytes, a gigabyte of blank
lines, NUL bytes, text that is not UTF-8. Every such file ends in a `FormatError` naming the file and line,
after bounded memory and time, never in a traceback:

* gzip is recognised by its magic bytes whatever the file's name, and may expand to at most
  `MAX_EXPANSION` times its compressed size (once past `EXPANSION_FLOOR`) and at most `max_decompressed`
  bytes in all. DEFLATE reaches about 1000×; real runs and collections compress 3–15×.
* A line may be at most `MAX_LINE_BYTES` long (runs, qrels) and a document record `MAX_RECORD_BYTES`, so
  memory is bounded by what one line may hold, not by the file.
* More than `MAX_BLANK_LINES` blank lines end the read: they cost time and mean nothing.
* NUL is refused everywhere: PostgreSQL text cannot hold it, and stripping it would change an id.
* In files of whitespace-separated fields (runs, qrels: `line_batches(..., fields=True)`) other control
  characters are refused too, which an id would carry unseen into the database and every export, and so are
  spaces other than ASCII space and tab: str.split() takes a no-break space for a separator, a reader does not.

Line numbers are physical and 1-based. Lines end as in Python's text mode: ``\\n``, ``\\r\\n`` or a lone ``\\r``.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import unicodedata
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from .errors import FormatError

GZIP_MAGIC = b"\x1f\x8b"
MAX_LINE_BYTES = 1 << 20  # a run or qrels line; real ones are under 200 bytes
MAX_RECORD_BYTES = 32 << 20  # one document: a JSONL line or an args.me argument
MAX_BLANK_LINES = 1_000_000
MAX_EXPANSION = 100
EXPANSION_FLOOR = 64 << 20  # below this much output any ratio is harmless (a file of one repeated line)
MAX_DECOMPRESSED_BYTES = 64 << 30  # the default; the import services pass the deployment's setting
BLOCK_BYTES = 1 << 20

# Control characters but NUL (refused before decoding), tab (a separator) and \n (the line end), and the spaces
# other than ASCII space and tab (str.isspace(); \x85 and \x1c-\x1f are among the controls).
CONTROL = re.compile("[\x01-\x08\x0b-\x1f\x7f-\x9f]")
CONTROL_OR_SPACE = re.compile("[\x01-\x08\x0b-\x1f\x7f-\x9f\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


@contextmanager
def open_input(
    path: str | os.PathLike[str], *, source: str, max_decompressed: int = MAX_DECOMPRESSED_BYTES
) -> Iterator[BinaryIO]:
    """The file's bytes as a stream, gunzipped when the file is gzip (see `gunzipped`)."""
    with open(path, "rb") as raw:
        yield gunzipped(raw, source=source, max_decompressed=max_decompressed)


def gunzipped(raw: BinaryIO, *, source: str, max_decompressed: int = MAX_DECOMPRESSED_BYTES) -> BinaryIO:
    """`raw` itself, or when it starts with gzip's magic bytes, its decompressed bytes as a buffered stream.

    `raw` must be a seekable file at its start. A gzip stream that is corrupt, truncated or expands beyond the
    limits raises `FormatError(source, line)` from the read that meets it, ``line`` being the line the
    decompressed text had reached.
    """
    magic = raw.read(2)
    raw.seek(0)
    if magic != GZIP_MAGIC:
        return raw
    compressed = os.fstat(raw.fileno()).st_size
    limit = min(max_decompressed, max(EXPANSION_FLOOR, MAX_EXPANSION * compressed))
    # The buffer in front saves the decompressor's Python-level calls: a sixth of a passage file's read time.
    return io.BufferedReader(_Gunzipped(raw, source=source, limit=limit, compressed=compressed), buffer_size=BLOCK_BYTES)


class _Gunzipped(io.RawIOBase):
    """A gzip stream's decompressed bytes, refused past `limit`, with errors as FormatErrors that know the line."""

    def __init__(self, raw: BinaryIO, *, source: str, limit: int, compressed: int) -> None:
        super().__init__()
        self._gzip = gzip.GzipFile(fileobj=raw, mode="rb")
        self._source, self._limit, self._compressed = source, limit, compressed
        self._size = 0
        self._newlines = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # read1 decompresses one piece of input per call, so everything before a broken piece has been
        # handed on (and its lines counted) when the error comes, and the line it names is the broken one.
        try:
            data = self._gzip.read1(min(len(buffer), BLOCK_BYTES))
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise FormatError(self._source, self._newlines + 1, f"the gzip data is truncated or corrupt ({exc})") from None
        self._size += len(data)
        if self._size > self._limit:
            raise FormatError(
                self._source, self._newlines + 1,
                f"the file expands to more than {self._limit:,} bytes when decompressed (it has {self._compressed:,});"
                " refused as a likely decompression bomb",
            )
        self._newlines += data.count(b"\n")
        buffer[: len(data)] = data
        return len(data)


def line_batches(
    stream: BinaryIO, *, source: str, max_line_bytes: int = MAX_LINE_BYTES, fields: bool = False
) -> Iterator[list[str]]:
    """The stream's lines as text, without their ``\\n``, in lists of about a megabyte.

    Raises `FormatError` with the line for a line longer than ``max_line_bytes``, a NUL byte, or bytes that are
    not UTF-8; with `fields` (lines of fields separated by ASCII spaces and tabs), for a control character or
    another space too, so that str.split() splits the lines on ASCII spaces and tabs only. A block is cut at its
    last line end and decoded as a whole, so the checks cost a few C passes per megabyte, nothing per line.
    """
    block_bytes = min(BLOCK_BYTES, max_line_bytes)  # then only the line a block continues can be too long
    done = 0  # lines before `carry`
    carry = b""  # the unfinished line
    while block := stream.read(block_bytes):
        if b"\r" in block:
            # Line ends as Python's text mode reads them: \r\n and a lone \r (old Mac files) are \n.
            if block.endswith(b"\r"):
                block += stream.read(1)  # a \n that follows belongs to the same line end
            block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        end = block.rfind(b"\n")
        if end < 0:
            carry += block
            if len(carry) > max_line_bytes:
                raise _too_long(source, done + 1, max_line_bytes)
            continue
        if len(carry) + block.find(b"\n") > max_line_bytes:
            raise _too_long(source, done + 1, max_line_bytes)
        lines = _decoded(carry + block[:end], source, done, fields)
        carry = block[end + 1 :]
        done += len(lines)
        yield lines
    if carry:
        yield _decoded(carry, source, done, fields)


def _decoded(data: bytes, source: str, done: int, fields: bool) -> list[str]:
    if b"\x00" in data:
        raise FormatError(source, done + data.count(b"\n", 0, data.index(b"\x00")) + 1, "the line contains a NUL byte")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        raise FormatError(
            source, done + data.count(b"\n", 0, exc.start) + 1,
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {exc.start - line_start + 1})",
        ) from None
    if fields and (found := CONTROL_OR_SPACE.search(text)):
        at = found.start()
        column = at - text.rfind("\n", 0, at)
        raise FormatError(source, done + text.count("\n", 0, at) + 1, f"{character_problem(found.group())} at column {column}")
    return text.split("\n")


def character_problem(character: str) -> str:
    """What is wrong with a character that CONTROL_OR_SPACE found, for a message."""
    code = f"U+{ord(character):04X}"
    if character.isspace() and not CONTROL.match(character):
        return f"{code} ({unicodedata.name(character).lower()}) where only an ASCII space or tab may separate fields"
    return f"control character {code}"


def _too_long(source: str, line: int, limit: int) -> FormatError:
    return FormatError(source, line, f"the line is longer than {limit:,} bytes")


def blank_line_limit(source: str, line: int) -> FormatError:
    """What a parser raises when it has skipped more than MAX_BLANK_LINES blank lines."""
    return FormatError(source, line, f"more than {MAX_BLANK_LINES:,} blank lines; refused as not a real file")
