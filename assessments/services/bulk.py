"""Bulk SQL: the text COPY reads, and the SQLite fallbacks where there is no COPY.

COPY's text format is one line per row, fields separated by tabs, `\\N` for null, and backslash escapes for
backslash, newline, carriage return and tab inside a field. Arrays are PostgreSQL array literals inside such a
field, so they are escaped twice: once as array elements, once as the COPY field.
"""

from __future__ import annotations

import re

COPY_NULL = "\\N"
SQLITE_BATCH = 2000  # rows per bulk_create on SQLite (the demo database), which bounds a statement's parameters


def copy_escape(text: str) -> str:
    """`text` as a field of COPY's text format. NUL characters are dropped: PostgreSQL text cannot hold them,
    and web pages occasionally contain them."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


_COPY_ESCAPES = re.compile(r"\\(.)")
_COPY_UNESCAPED = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def copy_unescape(field: str) -> str:
    """A COPY text field back as text (the SQLite path reads the spool itself)."""
    return _COPY_ESCAPES.sub(lambda m: _COPY_UNESCAPED[m.group(1)], field) if "\\" in field else field


# Characters that make an array element need quotes; ids come from split(), so there is no white space.
_ARRAY_SPECIAL = re.compile(r'[{}"\\]')


def numbers_literal(values: list[int] | list[float]) -> str:
    """A PostgreSQL array literal of numbers: the list's repr (shortest round-trip floats) between braces, the
    fastest formatting Python has; PostgreSQL ignores the spaces after the commas."""
    return "{" + repr(values)[1:-1] + "}"


def array_literal(values: list[str | None]) -> str:
    """A PostgreSQL array literal of text, as a COPY text field. Elements are quoted only when one of them needs it
    (rare in run files); tabs and newlines cannot occur, since split() made the fields."""
    if None not in values:
        text = ",".join(values)
        # A comma inside an id, or an element spelled null in any case, needs quotes too; "null" anywhere in the
        # text sends the list down the quoting path, which is always right, only slower.
        if text.count(",") == len(values) - 1 and not _ARRAY_SPECIAL.search(text) and "null" not in text.lower():
            return "{" + text + "}"
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' if value is not None else "NULL" for value in values)
    return ("{" + ",".join(quoted) + "}").replace("\\", "\\\\")  # COPY's own escape, over the array's
