"""Topic files: Touché's XML (topics_xml) or ``number<TAB>title`` lines (topics_tsv).

Which reader a file needs is told by its content, not its name, as gzip is by its magic bytes: uploads keep
whatever name the organiser's browser gives them.
"""

from __future__ import annotations

from .errors import FormatError, shown
from .reading import CONTROL, character_problem
from .topics_tsv import parse_topics_tsv
from .topics_xml import TopicRecord, parse_topics, too_long

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # only XML declares its own encoding; TSV must be UTF-8


def parse_topic_file(data: bytes, *, source: str, max_bytes: int = 20_000_000) -> list[TopicRecord]:
    """The topics of an XML or TSV topic file (already decompressed), or `FormatError` at the first problem."""
    if len(data) > max_bytes:
        raise too_long(data, source, max_bytes)
    if data.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<") or data.startswith(_UTF16_BOMS):
        records = parse_topics(data, source=source, max_bytes=max_bytes)
    else:
        records = parse_topics_tsv(data, source=source)
    for record in records:
        # Runs and qrels name topics by number, and their reader refuses control characters.
        if control := CONTROL.search(record.number):
            raise FormatError(source, record.line, f"topic number {shown(record.number)} contains a {character_problem(control.group())}")
    return records
