"""Read TREC run files, including Touché's variant with a stance column.

A line is ``qid Q0 doc rank score tag``. Touché 2022 Task 2 puts the stance of the passage in place of
``Q0`` (``FIRST``/``SECOND``/``NEUTRAL``/``NO``), with ``Q0`` meaning "stance not classified"; the
other tasks use ``PRO``/``CON`` and ``SUPPORT``/``REFUTE``. Some tasks' runs write codes of their own there (Touché
2023 Task 2: ``SUP``/``REF``/``NEU``/``NO``): given ``stance_codes`` (code → stance value), a line's code is read as
its value, and the tally counts the lines of each code as written (`stance_codes_read`).

Real submissions also bring, and we accept:
tabs or runs of spaces between fields, ranks starting at 0, negative scores, blank lines, ``0`` for
``Q0``, and tags with spaces (``"Colbert fine tune on touche data"``): only the first five fields are
well defined, so the tag is the rest of the line, without the quotes around it.

Runs reach millions of lines per campaign, so the reader keeps the per-line work to a split, two number
conversions, a set lookup and appends to the block's lists; everything per topic (order, ties, depth) is
checked when the topic's block of lines ends, and a store takes whole blocks (`RunReader.blocks`). Memory holds
the current block and one entry per block, whatever the length of the run: a document is checked against the
other documents of its block, and a block that resumes a topic after other topics' lines says so (`resumed`),
for whoever joins it to the topic's earlier blocks to check their documents against each other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import repeat

from .errors import FormatError, FormatWarning, shown
from .lines import without_bom
from .qrels import topic_sort_key
from .reading import MAX_BLANK_LINES, blank_line_limit

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
    resumed: bool = False  # an earlier block had lines of this topic and tag

_NAN = float("nan")  # equal to nothing, so the first line of a block never counts as a tie


def read_run(
    lines: Iterable[str],
    *,
    source: str,
    known_topics: Collection[str] | None = None,
    stances: Collection[str] = STANCES,
    stance_codes: Mapping[str, str] | None = None,
    max_lines_per_topic: int | None = None,
) -> RunReader:
    """Return a reader to iterate once; see `RunReader` for what it yields and reports."""
    return RunReader(
        lines, source=source, known_topics=known_topics, stances=stances, stance_codes=stance_codes,
        max_lines_per_topic=max_lines_per_topic,
    )


def stance_table(stances: Collection[str], stance_codes: Mapping[str, str] | None) -> dict[str, str]:
    """What each word a run may write in column 2 for a stance is read as: the stances themselves, and each code as
    its value (a code spelled like a stance stands for the value it is given)."""
    return {**{stance: stance for stance in stances}, **(stance_codes or {})}


class RunTally:
    """What a run reader reports besides its lines: counts, warnings, and the checks that need the whole run.

    Both readers (this module's line reader and trec_run_columns' column reader) count their blocks here, so an
    accepted file gets the same warnings, word for word, whichever read it.
    """

    def __init__(self, *, source: str, known_topics: Collection[str] | None, max_lines_per_topic: int | None = None) -> None:
        self.source = source
        self._known_topics = None if known_topics is None else frozenset(known_topics)
        # A topic's lines are held until its block ends: the one bound on a reader's memory that a file sets.
        self.max_lines_per_topic = max_lines_per_topic
        self.warnings: list[FormatWarning] = []
        self.line_count = 0  # result lines, blank lines not counted
        self.topics: dict[str, int] = {}  # result lines per topic, all tags together
        self.tags: set[str] = set()
        self.has_stance = False
        # Lines per stance code as the run wrote it (SUP, NEUTRAL, …), Q0 not counted: what the import says it read.
        self.stance_codes_read: dict[str, int] = {}
        self._tied_scores = 0
        self._topics_with_ties: set[str] = set()

    def count_block(
        self, topic: str, tag: str, count: int, first_line: int, *, disagreement: tuple[int, float, int, float] | None, ties: int
    ) -> None:
        """Count one block: `disagreement` is (rank, score, rank before, score before) at the first line, in rank
        order, that scores more than the line before it (None when scores never rise); `ties` the lines whose
        score another line of the block has too, less one per distinct score."""
        self.line_count += count
        self.topics[topic] = self.topics.get(topic, 0) + count
        self.tags.add(tag)
        if count > MAX_DOCUMENTS_PER_TOPIC:
            self._warn(first_line, f"topic {topic} has {count} documents; Touché asks for at most {MAX_DOCUMENTS_PER_TOPIC}")
        if disagreement is not None:
            rank, score, rank_before, score_before = disagreement
            self._warn(
                first_line,
                f"topic {topic}: score order disagrees with rank order (rank {rank} scores {score:g},"
                f" more than rank {rank_before} with {score_before:g}); trec_eval follows the scores",
            )
        if ties:
            self._tied_scores += ties
            self._topics_with_ties.add(topic)

    def too_many_lines(self, topic: str, line: int) -> FormatError:
        """The refusal of a topic whose block passes max_lines_per_topic, at its first line past the bound."""
        return FormatError(
            self.source, line,
            f"topic {topic} has more than {self.max_lines_per_topic:,} lines in a row (RUN_MAX_LINES_PER_TOPIC); "
            f"Touché asks for at most {MAX_DOCUMENTS_PER_TOPIC}",
        )

    def count_stances(self, counts: Iterable[tuple[str, int]]) -> None:
        """Count lines per stance code as written (no-stance codes are left out by the caller)."""
        read = self.stance_codes_read
        for code, n in counts:
            read[code] = read.get(code, 0) + n

    def finish(self, *, has_stance: bool) -> None:
        """Call once every block is counted: the whole-run checks and warnings."""
        self.has_stance = has_stance
        if not self.line_count:
            raise FormatError(self.source, None, "the run has no result lines")
        self._warn_about_whole_run()
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


class RunReader(RunTally):
    """Iterate to get one `RunRow` per result line, in file order, or call `blocks()` to get them as `RunBlock`s.

    Raises `FormatError` (physical 1-based line) at the first line that cannot be stored: wrong field
    count, a rank or score that is not ASCII digits, an unknown topic or stance, a document listed twice
    in a block (a topic's lines that resume later are a new block, flagged `resumed`). Problems that do not make the run wrong, only suspicious, are
    collected in `warnings`. The summary attributes are complete only once iteration has finished.
    """

    def __init__(
        self,
        lines: Iterable[str],
        *,
        source: str,
        known_topics: Collection[str] | None = None,
        stances: Collection[str] = STANCES,
        stance_codes: Mapping[str, str] | None = None,
        max_lines_per_topic: int | None = None,
    ) -> None:
        super().__init__(source=source, known_topics=known_topics, max_lines_per_topic=max_lines_per_topic)
        self._lines = lines
        table = stance_table(stances, stance_codes)
        self._stances = frozenset(table)
        # A block's codes are read as their values when it closes, a lookup per line in C; None when every code is its
        # own value (no codes, or none that differs).
        self._read_as: dict[str | None, str | None] | None = None
        if any(code != value for code, value in table.items()):
            self._read_as = {None: None}
            self._read_as.update(table)
        self._started = False

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
        closed: set[tuple[str | None, str | None]] = set()  # (topic, tag) of the blocks already yielded
        # The current block: consecutive lines with the same topic and raw tag; the first line opens
        # one. Only ints, floats and strings are kept per line (never the row tuples), so the garbage
        # collector has nothing to scan however long the run is.
        topic = raw_tag = tag = None
        block = None
        has_stance = False
        seen: set[str] = set()  # the current block's documents
        limit = self.max_lines_per_topic or -1  # -1: no bound (len(seen) is never -1)
        neighbour_ties = 0
        blank_lines = 0

        for lineno, line in enumerate(without_bom(self._lines), 1):
            fields = line.split()
            if len(fields) == 6:
                line_topic, column2, doc, rank_text, score_text, line_tag = fields
            elif len(fields) > 6:
                line_topic, column2, doc, rank_text, score_text, line_tag = line.split(None, 5)
                line_tag = line_tag.rstrip()
            elif not fields:
                blank_lines += 1
                if blank_lines > MAX_BLANK_LINES:
                    raise blank_line_limit(source, lineno)
                continue
            else:
                raise FormatError(
                    source, lineno, f"expected 6 fields (topic, Q0 or stance, document, rank, score, tag), got {len(fields)}"
                )
            try:
                rank = int(rank_text)
                score = float(score_text)
            except ValueError:
                raise FormatError(source, lineno, _number_problem(rank_text, score_text)) from None
            # int() and float() also read "1_000" and digits of other scripts ("１２"), which no run
            # writer means; and score - score is 0.0 (falsy) for every finite float but NaN for nan and
            # ±inf, which would make score order and ties meaningless.
            if "_" in rank_text or "_" in score_text or not (rank_text.isascii() and score_text.isascii()) or score - score:
                raise FormatError(source, lineno, _number_problem(rank_text, score_text))
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
                    closed.add((topic, tag))
                    yield block
                if known_topics is not None and line_topic not in known_topics:
                    raise FormatError(source, lineno, f"unknown topic {line_topic!r}")
                topic, raw_tag = line_topic, line_tag
                tag = _unquoted(raw_tag)
                seen = set()
                block = RunBlock(topic, tag, [], [], [], [], lineno, (topic, tag) in closed)
                # Bound per block, not looked up per line: lookups show at a million lines a second.
                seen_add, doc_append, rank_append = seen.add, block.docs.append, block.ranks.append
                score_append, stance_append = block.scores.append, block.stances.append
                # Equal scores on neighbouring lines: the exact tie count whenever the block is
                # sorted, for far less than hashing every score when the block closes.
                last_score = _NAN
                neighbour_ties = 0

            if doc in seen:
                raise FormatError(source, lineno, f"document {doc} appears twice for topic {topic}")
            if len(seen) == limit:
                raise self.too_many_lines(topic, lineno)
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
        self.finish(has_stance=has_stance)

    def _close_block(self, block: RunBlock, neighbour_ties: int) -> None:
        if any(block.stances):
            self.count_stances((code, n) for code, n in Counter(block.stances).items() if code is not None)
            if self._read_as is not None:
                block.stances = list(map(self._read_as.__getitem__, block.stances))
        ranks, scores, count = block.ranks, block.scores, len(block.ranks)
        sorted_by_rank = ranks == sorted(ranks)
        if not sorted_by_rank:
            by_rank = sorted(range(count), key=ranks.__getitem__)
            ranks = [ranks[i] for i in by_rank]
            scores = [scores[i] for i in by_rank]
        sorted_by_score = scores == sorted(scores, reverse=True)
        disagreement = None
        if not sorted_by_score:
            i = next(i for i in range(1, count) if scores[i] > scores[i - 1])
            disagreement = (ranks[i], scores[i], ranks[i - 1], scores[i - 1])
        ties = neighbour_ties if sorted_by_rank and sorted_by_score else count - len(set(scores))
        self.count_block(block.topic, block.tag, count, block.first_line, disagreement=disagreement, ties=ties)

def _number_problem(rank_text: str, score_text: str) -> str:
    """Why a line's rank or score was refused (worked out only then, so the common line pays nothing for it)."""
    if not _RANK.fullmatch(rank_text):
        return f"rank {shown(rank_text)} is not an integer in ASCII digits"
    if len(rank_text) > _MAX_DIGITS:
        return f"rank {shown(rank_text)} is too large"
    if _SCORE.fullmatch(score_text) or score_text.lstrip("+-").lower() in ("inf", "infinity", "nan"):
        return f"score {shown(score_text)} is not a finite number"
    return f"score {shown(score_text)} is not a number in ASCII digits"


_RANK = re.compile(r"[+-]?[0-9]+")
_SCORE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_MAX_DIGITS = 4300  # Python's limit for int(text), sys.get_int_max_str_digits()


def _unquoted(tag: str) -> str:
    if len(tag) >= 2 and tag[0] == tag[-1] == '"':
        return tag[1:-1].strip()
    return tag


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
