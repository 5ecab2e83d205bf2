"""Read Touché topic files (XML) into `TopicRecord`s.

Every Touché year used a slightly different shape, and all of them are accepted:

* ``<topics><topic><number>1</number><title>…</title></topic></topics>`` (2021 Task 1: titles only);
* the same with ``<description>`` and ``<narrative>`` (2020, 2021 Task 2);
* with ``<objects>A, B</objects>`` (2022 Task 2, comparative): exactly two objects, in the order
  the stance labels FIRST and SECOND refer to, with their case kept as written (``Train, plane``);
* with ``<cause>`` and ``<effect>`` (2023 Task 2, causal);
* ``<topic number="1"><query>…</query></topic>`` (2023 Task 2 sample input): the number is an
  attribute and ``<query>`` plays the role of ``<title>``.

Topic files are uploaded by organisers, but they are still untrusted input to a web server. The parser
never fetches anything and never expands entities, and a document that declares a DOCTYPE is rejected
outright: Touché files never have one, and it is the only way to smuggle in entity bombs
("billion laughs") or external entities (``file:///etc/passwd``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from .errors import FormatError


@dataclass(frozen=True)
class TopicRecord:
    number: str
    title: str
    description: str = ""
    narrative: str = ""
    objects: tuple[str, ...] = ()
    cause: str = ""
    effect: str = ""
    line: int = 0  # where the <topic> element starts, for messages about this topic


def parse_topics(data: bytes, *, source: str, max_bytes: int = 20_000_000) -> list[TopicRecord]:
    """Return the topics in file order, or raise `FormatError` naming the first problem and its line.

    Text is stripped of surrounding whitespace (the 2020 files put newlines around titles) and
    otherwise kept exactly, including curly quotes and other Unicode.
    """
    if len(data) > max_bytes:
        raise too_long(data, source, max_bytes)
    _reject_doctype(data, source)
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as e:
        raise FormatError(source, e.lineno, f"malformed XML: {' '.join(e.msg.split())}") from None
    docinfo = root.getroottree().docinfo
    # The byte scan above misses a DOCTYPE written in UTF-16 or another encoding that is not
    # ASCII-compatible; lxml has parsed it (without expanding anything) and tells us here.
    if docinfo.internalDTD is not None or docinfo.doctype:
        raise FormatError(source, None, "DOCTYPE and entity declarations are not allowed in topic files")

    topics: list[TopicRecord] = []
    first_line: dict[str, int] = {}
    for element in root.iterchildren("topic"):
        topic = _topic(element, source)
        if topic.number in first_line:
            raise FormatError(
                source, topic.line, f"topic {topic.number} appears twice (first on line {first_line[topic.number]})"
            )
        first_line[topic.number] = topic.line
        topics.append(topic)
    if not topics:
        raise FormatError(source, root.sourceline, f"no <topic> elements inside <{root.tag}>")
    return topics


def too_long(data: bytes, source: str, max_bytes: int) -> FormatError:
    """A topic file longer than `max_bytes`, reported at the line where the limit falls."""
    line = data.count(b"\n", 0, max_bytes) + 1
    return FormatError(source, line, f"the file is longer than {max_bytes:,} bytes, the most a topic file may have")


def _reject_doctype(data: bytes, source: str) -> None:
    """Refuse a DOCTYPE before libxml2 reads it at all (entities can only be declared inside one)."""
    at = data.find(b"<!DOCTYPE")
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        raise FormatError(source, line, "DOCTYPE and entity declarations are not allowed in topic files")


def _topic(element: etree._Element, source: str) -> TopicRecord:
    line = element.sourceline or 0
    number = _text(element, "number") or (element.get("number") or "").strip()
    if not number:
        raise FormatError(source, line, 'topic has no number (expected <number> or number="…")')
    if len(number.split()) != 1:
        # Runs and qrels are split on whitespace, so such a number could never be matched.
        raise FormatError(source, line, f"topic number {number!r} contains whitespace")
    title_element = element.find("title")
    if title_element is None:
        title_element = element.find("query")
    title = _joined_text(title_element)
    if not title:
        where = line if title_element is None else title_element.sourceline
        raise FormatError(source, where, f"topic {number} has an empty title (expected <title> or <query>)")
    return TopicRecord(
        number=number,
        title=title,
        description=_text(element, "description"),
        narrative=_text(element, "narrative"),
        objects=_objects(element, number, source),
        cause=_text(element, "cause"),
        effect=_text(element, "effect"),
        line=line,
    )


def _text(element: etree._Element, tag: str) -> str:
    return _joined_text(element.find(tag))


def _joined_text(child: etree._Element | None) -> str:
    if child is None:
        return ""
    # itertext, not .text: keeps words inside stray inline markup such as <i>…</i>.
    return "".join(child.itertext()).strip()


def _objects(element: etree._Element, number: str, source: str) -> tuple[str, ...]:
    child = element.find("objects")
    text = _joined_text(child)
    if not text:
        return ()
    objects = tuple(part.strip() for part in text.split(","))
    # Comparative stance labels are FIRST and SECOND, so anything but two named objects
    # would leave assessors (and run stances) without a meaning.
    if len(objects) != 2 or not all(objects):
        raise FormatError(
            source, child.sourceline, f"topic {number}: <objects> must name two objects separated by a comma, got {text!r}"
        )
    return objects
