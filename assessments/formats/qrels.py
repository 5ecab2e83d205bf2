"""Read and write qrels: the judgments a campaign imports (past years) and exports (its result).

A qrels file holds the labels of one dimension of the campaign's scheme (`assessments.labels.Dimension`): graded
and yes/no dimensions as integers (2020 Task 1 uses −2 for spam / non-argument), category dimensions as their
value names. Accepted layouts, chosen by the first non-blank line and then required of every line:

* ``qid 0 doc label`` (TREC; ``Q0`` or any other iteration token in column 2 is ignored), with any
  whitespace between fields: the official Touché files. In the 2023 Task 1 stance file (``qid PRO doc 2``, as
  ir_datasets reads it) column 2 holds the category: read for a category dimension, a column 2 other than
  ``0``/``Q0`` is the label.
* ``qid doc relevance quality 0`` (five TAB-separated columns), the merged file a 2021 Task 2
  participant published; the dimension's name picks the column (MERGED_COLUMNS).

Written qrels are what trec_eval and ir_measures read: ``qid 0 doc label``, single spaces, LF.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TextIO

from assessments.labels import CATEGORY, Dimension, Value

from .errors import FormatError, shown
from .lines import without_bom
from .reading import MAX_BLANK_LINES, blank_line_limit

# The label columns of the five-column merged layout, by the names that file gives them (a file-format fact, like
# a run file's stance column): a dimension of another name has no column there.
MERGED_COLUMNS = ("relevance", "quality")

_NO_ITERATION = frozenset({"0", "Q0"})
_LABEL = re.compile(r"[+-]?[0-9]{1,6}")


def topic_sort_key(number: str) -> tuple[int, int, str]:
    """Order topic numbers as people expect (2 before 10), with non-numeric numbers after, by text."""
    if number.isascii() and number.isdigit():
        return (0, int(number), number)
    return (1, 0, number)


def parse_qrels(lines: Iterable[str], *, source: str, dimension: Dimension) -> Iterator[tuple[str, str, Value]]:
    """Yield ``(topic, doc_id, label)`` in file order, each label of `dimension`'s type; raise `FormatError` at the
    first bad line.

    A category label must be one of the dimension's values (a file of grades read as a category fails on its first
    line); whether an integer is one of its grades is the importer's check, which names the scheme's values. A
    topic and document judged twice is an error, because the two labels could disagree and neither can be picked
    silently; so is a file without judgments, which can only be the wrong file.
    """
    category = dimension.kind == CATEGORY
    names = frozenset(str(value.value) for value in dimension.values) if category else frozenset()
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
                    source, lineno, f"expected 4 fields (topic, 0, document, label) or 5 (topic, document, {', '.join(MERGED_COLUMNS)}, 0), got {width}"
                )
            if width == 5 and dimension.name not in MERGED_COLUMNS:
                raise FormatError(
                    source, lineno, f"this 5-column layout (topic, document, {', '.join(MERGED_COLUMNS)}, 0) has no {dimension.name} column"
                )
        elif len(fields) != width:
            raise FormatError(source, lineno, f"expected {width} fields like the first line, got {len(fields)}")

        if width == 4:
            topic, iteration, doc, label_text = fields
            if category and iteration not in _NO_ITERATION:
                label_text = iteration
        else:
            topic, doc = fields[0], fields[1]
            label_text = fields[2 + MERGED_COLUMNS.index(dimension.name)]

        if category:
            if label_text not in names:
                raise FormatError(
                    source, lineno, f"unknown {dimension.name} label {shown(label_text)} (expected one of {', '.join(sorted(names))})"
                )
        # Not int() alone: it also reads "1_0", "１" and 5,000 digits.
        elif not _LABEL.fullmatch(label_text):
            raise FormatError(source, lineno, f"{dimension.name} label {shown(label_text)} is not an integer of at most 6 ASCII digits")
        label = dimension.parse(label_text)

        key = (topic, doc)
        if key in first_line:
            raise FormatError(source, lineno, f"topic {topic} judges document {doc} twice (first on line {first_line[key]})")
        first_line[key] = lineno
        yield topic, doc, label
    if not width:
        raise FormatError(source, None, "the file has no judgments")


def write_qrels(rows: Iterable[tuple[str, str, Value]], stream: TextIO) -> int:
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
