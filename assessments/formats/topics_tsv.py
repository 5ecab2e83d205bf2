"""Read topics given as tab-separated ``number<TAB>title`` lines into `TopicRecord`s.

This is the shape BEIR, Anserini and ir_datasets hand Touché's topics out in (BEIR's webis-touche2020 test
topics, for one): titles only, one topic a line, no header. Blank lines are skipped and a UTF-8 byte-order
mark is dropped; anything else that is not two fields is an error at its line, so a run or qrels file given
by mistake is refused at line 1 rather than read as topics.
"""

from __future__ import annotations

import io
from itertools import chain

from .errors import FormatError, shown
from .reading import line_batches
from .topics_xml import TopicRecord

LAYOUT = "number<TAB>title"


def parse_topics_tsv(data: bytes, *, source: str) -> list[TopicRecord]:
    """Return the topics in file order, or raise `FormatError` naming the first bad line."""
    topics: list[TopicRecord] = []
    first_line: dict[str, int] = {}
    # The shared line reader refuses NUL bytes, bytes that are not UTF-8 and overlong lines, naming the line.
    lines = chain.from_iterable(line_batches(io.BytesIO(data), source=source))
    for line_no, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if line_no == 1:
            line = line.lstrip("\ufeff")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise FormatError(
                source, line_no, f"expected {LAYOUT} (topic files are XML or {LAYOUT} lines), found {len(fields)} tab-separated fields"
            )
        number, title = (field.strip() for field in fields)
        if len(number.split()) != 1:
            # Runs and qrels are split on whitespace, so such a number could never be matched.
            raise FormatError(source, line_no, f"topic number {shown(number)} is empty or contains whitespace")
        if not title:
            raise FormatError(source, line_no, f"topic {number} has an empty title")
        if number in first_line:
            raise FormatError(source, line_no, f"topic {number} appears twice (first on line {first_line[number]})")
        first_line[number] = line_no
        topics.append(TopicRecord(number=number, title=title, line=line_no))
    if not topics:
        raise FormatError(source, None, f"no topics: expected XML or {LAYOUT} lines")
    return topics
