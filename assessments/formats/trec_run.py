"""Read TREC run files, including Touché's variant with a stance column.

A line is ``qid Q0 doc rank score tag``. Touché 2022 Task 2 puts the stance of the passage in place of
``Q0`` (``FIRST``/``SECOND``/``NEUTRAL``/``NO``), with ``Q0`` meaning "stance not classified"; the
other tasks use ``PRO``/``CON`` and ``SUPPORT``/``REFUTE``. Real submissions also bring, and we accept:
tabs or runs of spaces between fields, ranks starting at 0, negative scores, blank lines, ``0`` for
``Q0``, and tags with spaces (``"Colbert fine tune on touche data"``): only the first five fields are
well defined, so the tag is the rest of the line, without the quotes around it.

Runs reach millions of lines per campaign, so the reader keeps the per-line work to a split, two number
conversions, a set lookup and appends to the block's lists; everything per topic (order, ties, depth) is
checked when the topic's block of lines ends, and a store takes whole blocks (`RunReader.blocks`). Memory holds the current block and 8 bytes per
line of earlier blocks (for the duplicate check), whatever the length of the run.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat

from .errors import FormatError, FormatWarning
from .lines import without_bom
from .qrels import topic_sort_key

STANCES = ("FIRST", "SECOND", "NEUTRAL", "NO", "PRO", "CON", "SUPPORT", "REFUTE")

# Touché asks for "up to 1,000 retrieved documents" per topic (task pages in the shared seeds).
MAX_DOCUMENTS_PER_TOPIC = 1000

# (topic, doc_id, rank, score, stance or None, tag)
RunRow = tuple[str, str, int, float, str | None, str]


@dataclass
class RunBlock:
    """Consecutive lines of one topic and tag, as parallel lists in file order (the shape a store wants)."""

    topic: str
    tag: str
    docs: list[str]
    ranks: list[int]
    scores: list[float]
    stances: list[str | None]
    first_line: int

_NAN = float("nan")  # equal to nothing, so the first line of a block never counts as a tie


def read_run(
    lines: Iterable[str],
    *,
    source: str,
    known_topics: Collection[str] | None = None,
    stances: Collection[str] = STANCES,
) -> RunReader:
    """Return a reader to iterate once; see `RunReader` for what it yields and reports."""
    return RunReader(lines, source=source, known_topics=known_topics, stances=stances)


class RunReader:
    """Iterate to get one `RunRow` per result line, in file order, or call `blocks()` to get them as `RunBlock`s.

    Raises `FormatError` (physical 1-based line) at the first line that cannot be stored: wrong field
    count, a rank or score that is not a number, an unknown topic or stance, a document listed twice
    for the same topic and tag. Problems that do not make the run wrong, only suspicious, are
    collected in `warnings`. The summary attributes are complete only once iteration has finished.
    """

    def __init__(
        self,
        lines: Iterable[str],
        *,
        source: str,
        known_topics: Collection[str] | None = None,
        stances: Collection[str] = STANCES,
    ) -> None:
        self.source = source
        self._lines = lines
        self._known_topics = None if known_topics is None else frozenset(known_topics)
        self._stances = frozenset(stances)
        self._started = False
        self.warnings: list[FormatWarning] = []
        self.line_count = 0  # result lines, blank lines not counted
        self.topics: dict[str, int] = {}  # result lines per topic, all tags together
        self.tags: set[str] = set()
        self.has_stance = False
        self._tied_scores = 0
        self._topics_with_ties: set[str] = set()

    def __iter__(self) -> Iterator[RunRow]:
        for block in self.blocks():
            yield from zip(repeat(block.topic), block.docs, block.ranks, block.scores, block.stances, repeat(block.tag))

    def blocks(self) -> Iterator[RunBlock]:
        """The lines block by block: a block ends where the topic or the tag changes (and is checked then)."""
        if self._started:
            raise RuntimeError("a RunReader can be iterated only once")
        self._started = True
        return self._blocks()

    def _blocks(self) -> Iterator[RunBlock]:
        source = self.source
        stances = self._stances
        known_topics = self._known_topics
        # Document ids of closed blocks, by (topic, tag), kept as 8-byte hashes rather than strings
        # (a tenth of the memory) for the rare run whose lines for a topic resume later on.
        closed: dict[tuple[str, str], array[int]] = {}
        # The current block: consecutive lines with the same topic and raw tag; the first line opens
        # one. Only ints, floats and strings are kept per line (never the row tuples), so the garbage
        # collector has nothing to scan however long the run is.
        topic = raw_tag = tag = None
        block = None
        has_stance = False
        seen: set[str] | _ResumedDocuments = set()  # the current block's documents
        neighbour_ties = 0

        for lineno, line in enumerate(without_bom(self._lines), 1):
            fields = line.split()
            if len(fields) == 6:
                line_topic, column2, doc, rank_text, score_text, line_tag = fields
            elif len(fields) > 6:
                line_topic, column2, doc, rank_text, score_text, line_tag = line.split(None, 5)
                line_tag = line_tag.rstrip()
            elif not fields:
                continue
            else:
                raise FormatError(
                    source, lineno, f"expected 6 fields (topic, Q0 or stance, document, rank, score, tag), got {len(fields)}"
                )
            try:
                rank = int(rank_text)
            except ValueError:
                raise FormatError(source, lineno, f"rank {rank_text!r} is not an integer") from None
            try:
                score = float(score_text)
            except ValueError:
                raise FormatError(source, lineno, f"score {score_text!r} is not a number") from None
            # score - score is 0.0 (falsy) for every finite float and NaN for nan and ±inf,
            # which would make score order and ties meaningless.
            if score - score:
                raise FormatError(source, lineno, f"score {score_text!r} is not a finite number")
            if column2 == "Q0" or column2 == "0":
                stance = None
            elif column2 in stances:
                stance = column2
                has_stance = True
            else:
                allowed = ", ".join(sorted(stances))
                raise FormatError(source, lineno, f"unknown stance {column2!r} in column 2 (expected Q0 or one of {allowed})")

            if line_topic != topic or line_tag != raw_tag:
                if block is not None:
                    self._close_block(block, neighbour_ties)
                    closed.setdefault((topic, tag), array("q")).extend(map(hash, seen))
                    yield block
                if known_topics is not None and line_topic not in known_topics:
                    raise FormatError(source, lineno, f"unknown topic {line_topic!r}")
                topic, raw_tag = line_topic, line_tag
                tag = _unquoted(raw_tag)
                earlier = closed.get((topic, tag))
                seen = set() if earlier is None else _ResumedDocuments(earlier)
                block = RunBlock(topic, tag, [], [], [], [], lineno)
                # Bound per block, not looked up per line: lookups show at a million lines a second.
                seen_add, doc_append, rank_append = seen.add, block.docs.append, block.ranks.append
                score_append, stance_append = block.scores.append, block.stances.append
                # Equal scores on neighbouring lines: the exact tie count whenever the block is
                # sorted, for far less than hashing every score when the block closes.
                last_score = _NAN
                neighbour_ties = 0

            if doc in seen:
                raise FormatError(source, lineno, f"document {doc} appears twice for topic {topic}")
            seen_add(doc)
            doc_append(doc)
            rank_append(rank)
            score_append(score)
            stance_append(stance)
            if score == last_score:
                neighbour_ties += 1
            last_score = score

        if block is not None:
            self._close_block(block, neighbour_ties)
            yield block
        self.has_stance = has_stance
        if not self.line_count:
            raise FormatError(source, None, "the run has no result lines")
        self._warn_about_whole_run()

    def _close_block(self, block: RunBlock, neighbour_ties: int) -> None:
        topic, ranks, scores, first_line = block.topic, block.ranks, block.scores, block.first_line
        count = len(ranks)
        self.line_count += count
        self.topics[topic] = self.topics.get(topic, 0) + count
        self.tags.add(block.tag)
        if count > MAX_DOCUMENTS_PER_TOPIC:
            self._warn(first_line, f"topic {topic} has {count} documents; Touché asks for at most {MAX_DOCUMENTS_PER_TOPIC}")
        sorted_by_rank = ranks == sorted(ranks)
        if not sorted_by_rank:
            by_rank = sorted(range(count), key=ranks.__getitem__)
            ranks = [ranks[i] for i in by_rank]
            scores = [scores[i] for i in by_rank]
        sorted_by_score = scores == sorted(scores, reverse=True)
        if not sorted_by_score:
            i = next(i for i in range(1, count) if scores[i] > scores[i - 1])
            self._warn(
                first_line,
                f"topic {topic}: score order disagrees with rank order (rank {ranks[i]} scores {scores[i]:g},"
                f" more than rank {ranks[i - 1]} with {scores[i - 1]:g}); trec_eval follows the scores",
            )
        ties = neighbour_ties if sorted_by_rank and sorted_by_score else count - len(set(scores))
        if ties:
            self._tied_scores += ties
            self._topics_with_ties.add(topic)

    def _warn_about_whole_run(self) -> None:
        if self._tied_scores:
            self._warn(
                None,
                f"{_count(self._tied_scores, 'tied score')} in {_count(len(self._topics_with_ties), 'topic')};"
                " trec_eval breaks ties by document id, not by rank",
            )
        if self._known_topics is not None:
            missing = sorted(self._known_topics.difference(self.topics), key=topic_sort_key)
            if missing:
                self._warn(None, f"no results for {_count(len(missing), 'topic')}: {', '.join(missing)}")

    def _warn(self, line: int | None, message: str) -> None:
        self.warnings.append(FormatWarning(self.source, line, message))


class _ResumedDocuments(set):
    """The documents of a block that resumes a topic after other topics' lines.

    The earlier blocks are known only by the hashes of their document ids, so a duplicate across
    blocks is found by hash: a false alarm would need a 64-bit hash collision.
    """

    def __init__(self, earlier: array[int]) -> None:
        super().__init__()
        self._earlier = frozenset(earlier)

    def __contains__(self, doc: object) -> bool:
        return set.__contains__(self, doc) or hash(doc) in self._earlier


def _unquoted(tag: str) -> str:
    if len(tag) >= 2 and tag[0] == tag[-1] == '"':
        return tag[1:-1].strip()
    return tag


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
