"""Read and write qrels: the judgments a campaign imports (past years) and exports (its result).

Accepted layouts, chosen by the first non-blank line and then required of every line:

* ``qid 0 doc label`` (TREC; ``Q0`` or any other iteration token in column 2 is ignored), with any
  whitespace between fields: the official Touché relevance and quality files. Labels are integers
  for relevance and quality (2020 Task 1 uses −2 for spam / non-argument) and stance names for
  stance. In the 2023 Task 1 stance file (``qid PRO doc 2``, as ir_datasets reads it) column 2
  holds the stance: with ``kind="stance"``, a column 2 other than ``0``/``Q0`` is the label.
* ``qid doc relevance quality 0`` (five TAB-separated columns), the merged file a 2021 Task 2
  participant published; ``kind`` picks the relevance or quality column.

Written qrels are what trec_eval and ir_measures read: ``qid 0 doc label``, single spaces, LF.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from typing import Literal, TextIO

from .errors import FormatError, shown
from .lines import without_bom
from .reading import MAX_BLANK_LINES, blank_line_limit

Kind = Literal["relevance", "quality", "stance"]

# Stance qrels use the run stances plus ONTOPIC (2023 Task 1: on topic, but neither pro nor con).
STANCE_LABELS = ("FIRST", "SECOND", "NEUTRAL", "NO", "PRO", "CON", "SUPPORT", "REFUTE", "ONTOPIC")

_NO_ITERATION = frozenset({"0", "Q0"})
_LABEL = re.compile(r"[+-]?[0-9]{1,6}")


def topic_sort_key(number: str) -> tuple[int, int, str]:
    """Order topic numbers as people expect (2 before 10), with non-numeric numbers after, by text."""
    if number.isascii() and number.isdigit():
        return (0, int(number), number)
    return (1, 0, number)


def parse_qrels(
    lines: Iterable[str],
    *,
    source: str,
    kind: Kind,
    stances: Collection[str] = STANCE_LABELS,
) -> Iterator[tuple[str, str, int | str]]:
    """Yield ``(topic, doc_id, label)`` in file order; raise `FormatError` at the first bad line.

    Labels are ints for relevance and quality and strings for stance. A topic and document judged
    twice is an error, because the two labels could disagree and neither can be picked silently;
    so is a file without judgments, which can only be the wrong file.
    """
    if kind not in ("relevance", "quality", "stance"):
        raise ValueError(f"kind must be relevance, quality or stance, not {kind!r}")
    stances = frozenset(stances)
    first_line: dict[tuple[str, str], int] = {}
    width = blank_lines = 0
    for lineno, line in enumerate(without_bom(lines), 1):
        fields = line.split()
        if not fields:
            blank_lines += 1
            if blank_lines > MAX_BLANK_LINES:
                raise blank_line_limit(source, lineno)
            continue
        if not width:
            width = len(fields)
            if width not in (4, 5):
                raise FormatError(
                    source, lineno, f"expected 4 fields (topic, 0, document, label) or 5 (topic, document, relevance, quality, 0), got {width}"
                )
            if width == 5 and kind == "stance":
                raise FormatError(source, lineno, "this 5-column layout (topic, document, relevance, quality, 0) has no stance column")
        elif len(fields) != width:
            raise FormatError(source, lineno, f"expected {width} fields like the first line, got {len(fields)}")

        if width == 4:
            topic, iteration, doc, label_text = fields
            if kind == "stance" and iteration not in _NO_ITERATION:
                label_text = iteration
        else:
            topic, doc = fields[0], fields[1]
            label_text = fields[2] if kind == "relevance" else fields[3]

        if kind == "stance":
            if label_text not in stances:
                raise FormatError(source, lineno, f"unknown stance label {shown(label_text)} (expected one of {', '.join(sorted(stances))})")
            label: int | str = label_text
        else:
            # Not int() alone: it also reads "1_0", "１" and 5,000 digits.
            if not _LABEL.fullmatch(label_text):
                raise FormatError(source, lineno, f"{kind} label {shown(label_text)} is not an integer of at most 6 ASCII digits")
            label = int(label_text)

        key = (topic, doc)
        if key in first_line:
            raise FormatError(source, lineno, f"topic {topic} judges document {doc} twice (first on line {first_line[key]})")
        first_line[key] = lineno
        yield topic, doc, label
    if not width:
        raise FormatError(source, None, "the file has no judgments")


def write_qrels(rows: Iterable[tuple[str, str, int | str]], stream: TextIO) -> int:
    """Write ``topic 0 doc label`` lines in the given order (callers sort) and return how many.

    Raises ValueError for an id containing whitespace: the line could not be read back.
    """
    count = 0
    for topic, doc, label in rows:
        if len(topic.split()) != 1 or len(doc.split()) != 1:
            raise ValueError(f"topic {topic!r} or document {doc!r} is empty or contains whitespace")
        stream.write(f"{topic} 0 {doc} {label}\n")
        count += 1
    return count
