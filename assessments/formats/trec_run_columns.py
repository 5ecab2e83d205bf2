"""Reading plain TREC run files column by column, in C, straight into the text PostgreSQL's COPY reads.

The line reader (`trec_run.RunReader`) spends about two microseconds a line in Python: a split, two number
conversions, the checks. Real run files are plain: ASCII, one separator, six fields a line. Such a file is read
here by Arrow's CSV parser a few megabytes at a time, checked column by column, ordered by sorting whole columns,
and turned into the COPY text of `models.Ranking`'s lists by joining columns, so no Python object is made per
line. The line reader stays the reference. Whatever this reader is not sure to read exactly as it would (a blank
line, a quoted tag, a character the line reader would refuse, a topic that resumes later in the file, any line
Arrow cannot parse), it declines by raising `Declined`, and the caller reads the file again with the line reader,
which accepts it or names the line and the problem. What an accepted file yields, its warnings included, is what
the line reader's blocks would store (tested on the same files both ways).

Orders are the line reader's (metrics.evaluation.order_run): by score descending, then document id descending;
by rank ascending, then document id descending. Arrow compares strings as bytes, which for ASCII is the order
Python compares them in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ..metrics.evaluation import single_precision_order
from .errors import FormatError
from .reading import MAX_LINE_BYTES
from .trec_run import RunTally, stance_table

# Arrow's default allocator (mimalloc) keeps what it freed for reuse: some 30 MB more resident memory for the life of
# a worker than the system allocator, for no measurable speed here. Nothing else in the project uses Arrow.
pa.set_memory_pool(pa.system_memory_pool())

CHUNK_BYTES = 2 << 20  # read and parsed at once: some 50,000 lines; larger chunks only hold more memory
NULL = "\\N"  # COPY text's null

_COLUMNS = ("topic", "stance", "doc", "rank", "score", "tag")
# Every column is read as text. Ranks and scores are converted after checks, and their text goes to COPY as it is:
# PostgreSQL reads it into the very numbers Python would (integers; doubles correctly rounded by both), which
# saves formatting them again. Arrow's integer parser also reads hexadecimal ("0x10"), which the line reader
# refuses, so ranks are checked to be ASCII digits first.
_TYPES = dict.fromkeys(_COLUMNS, pa.string())
_NO_STANCE = pa.array(["Q0", "0"])
_INT4 = 2**31  # Ranking.ranks holds 32-bit integers
# Characters an array literal would have to quote or escape (and COPY text escape): a file holding any of them
# anywhere is left to the line reader, whose store quotes them.
_ARRAY_SPECIAL = (b"{", b"}", b",", b'"', b"\\")
_HALF_LINE = MAX_LINE_BYTES // 2  # a line longer than MAX_LINE_BYTES covers a whole stretch this long


class Declined(Exception):
    """The file is not plain enough for this reader to be sure; read it with the line reader."""


@dataclass(frozen=True)
class ColumnBlock:
    """One topic's lines of one run tag, as the COPY text of Ranking's list columns.

    `lists` is ``length, docs, ranks, scores, stances, by_rank, by_single`` as tab-separated COPY text fields
    (without the line end): the lists in score order, the permutations 1-based, null where they are not needed.
    """

    topic: str
    tag: str
    first_line: int
    length: int
    has_stance: bool
    lists: str


class ColumnRunReader(RunTally):
    """Iterate `blocks()` once; the tally (warnings, counts) is complete when it ends. See the module docstring."""

    def __init__(
        self,
        stream: BinaryIO,
        *,
        source: str,
        known_topics: Collection[str] | None,
        stances: Collection[str],
        max_doc_id_length: int,
        read: Callable[[], None] = lambda: None,  # called after each chunk is read from the stream
        stance_codes: Mapping[str, str] | None = None,
        max_lines_per_topic: int | None = None,
    ) -> None:
        super().__init__(source=source, known_topics=known_topics, max_lines_per_topic=max_lines_per_topic)
        self._stream = stream
        table = stance_table(stances, stance_codes)
        self._column2 = pa.array(["Q0", "0", *table])
        # Codes read as their values (the line reader's stance_table), taken by index; None when each is its own.
        self._read_as = (
            (pa.array(list(table), pa.string()), pa.array(list(table.values()), pa.string()))
            if any(code != value for code, value in table.items()) else None
        )
        self._known = None if known_topics is None else pa.array(sorted(known_topics), pa.string())
        self._max_doc_id_length = max_doc_id_length
        self._read = read
        self._blocks_seen: set[tuple[str, str]] = set()
        self._has_stance = False

    def blocks(self) -> Iterator[ColumnBlock]:
        """The file's blocks in file order (a block ends where the topic or the tag changes). Raises Declined, at
        any point: what was yielded before must then be discarded."""
        held: pa.Table | None = None  # the last block read so far, which the next chunk may continue
        held_line = 1
        for table, eof in self._tables():
            if held is not None:
                table = pa.concat_tables([held, table])
            starts = _block_starts(table)
            cut = table.num_rows if eof else int(starts[-1])
            if cut:
                yield from self._complete_blocks(table.slice(0, cut), starts[starts < cut], held_line)
            held, held_line = table.slice(cut), held_line + cut
            if self.max_lines_per_topic is not None and held.num_rows > self.max_lines_per_topic:
                # A block that goes on chunk after chunk is held whole: stopped before it outgrows the bound, and
                # left to the line reader, which names the first wrong line in file order, as for any refusal.
                raise Declined
        self.finish(has_stance=self._has_stance)

    def _tables(self) -> Iterator[tuple[pa.Table, bool]]:
        """The file as Arrow tables of whole lines, a chunk at a time; (table, whether the file ends with it). A
        chunk is read ahead, so a file that fits in one is one table."""
        options = None
        data = self._piece()
        if not data:
            raise Declined  # an empty file: the line reader says so
        while data:
            following = self._piece()
            eof = not following
            cut = len(data) if eof else data.rfind(b"\n") + 1
            data, following = data[:cut], data[cut:] + following
            if len(following) > MAX_LINE_BYTES and following.find(b"\n", 0, MAX_LINE_BYTES + 1) < 0:
                raise Declined
            if data:
                if options is None:
                    options = _parse_options(data)
                _check_bytes(data, options.delimiter)
                try:
                    table = pcsv.read_csv(pa.py_buffer(data), read_options=_READ, parse_options=options, convert_options=_CONVERT)
                except pa.ArrowInvalid:
                    raise Declined from None
                yield table, eof
            data = following

    def _piece(self) -> bytes:
        try:
            piece = self._stream.read(CHUNK_BYTES)
        except FormatError:
            raise Declined from None  # (gzip) the line reader says what is wrong, where, after what came before
        self._read()
        return piece

    def _complete_blocks(self, table: pa.Table, starts: np.ndarray, first_line: int) -> Iterator[ColumnBlock]:
        n = table.num_rows
        topic, column2, doc, tag = (table.column(name).combine_chunks() for name in ("topic", "stance", "doc", "tag"))
        rank_text, score_text = table.column("rank").combine_chunks(), table.column("score").combine_chunks()
        ranks, scores = self._check_values(topic, column2, doc, tag, rank_text, score_text)
        ends = np.append(starts[1:], n)
        counts = ends - starts
        if self.max_lines_per_topic is not None and counts.max() > self.max_lines_per_topic:
            raise Declined  # the line reader refuses it at the first line past the bound (see blocks)
        block = np.repeat(np.arange(len(starts)), counts)
        same_block = block[1:] == block[:-1]
        topics, tags = topic.take(pa.array(starts)).to_pylist(), tag.take(pa.array(starts)).to_pylist()
        for key in zip(topics, tags):
            if key in self._blocks_seen:
                raise Declined  # a topic resumed later in the file: its blocks must be joined
            self._blocks_seen.add(key)
        _check_unique(doc, block)

        rank_values, score_values = ranks.to_numpy(), scores.to_numpy()
        by_score = _order(block, same_block, score_values, "score", doc, scores)
        by_rank = _order(block, same_block, rank_values, "rank", doc, ranks)
        sorted_scores = score_values[by_score]
        self._count_blocks(topics, tags, starts, counts, first_line, block, same_block, rank_values, score_values, sorted_scores)

        take = pa.array(by_score)
        docs = doc.take(take)
        stance = column2.take(take)
        is_stance = pc.invert(pc.is_in(stance, _NO_STANCE)).to_numpy(zero_copy_only=False)
        has_stance = np.add.reduceat(is_stance, starts) > 0 if n else np.zeros(0, bool)
        self._has_stance = self._has_stance or bool(has_stance.any())
        if has_stance.any():
            codes_read = pc.value_counts(pc.filter(column2, pc.invert(pc.is_in(column2, _NO_STANCE)))).to_pylist()
            self.count_stances((c["values"], c["counts"]) for c in codes_read)
            if self._read_as is not None:
                codes, values = self._read_as
                stance = values.take(pc.index_in(stance, value_set=codes))  # Q0 and 0: null, not taken below
        offsets = pa.array(np.append(starts, n).astype(np.int32))
        position = np.empty(n, np.int64)
        position[by_score] = np.arange(n)
        rank_positions = position[by_rank] - starts[block] + 1
        rank_differs = np.add.reduceat(by_rank != by_score, starts) > 0 if n else np.zeros(0, bool)
        fields = [
            pc.cast(pa.array(counts), pa.string()),
            _lists(offsets, docs),
            _lists(offsets, rank_text.take(take)),
            _lists(offsets, _score_copy_text(scores, score_text).take(take)),
            _or_null(_lists(offsets, pc.if_else(pa.array(is_stance), stance, "NULL")), has_stance),
            _or_null(_lists(offsets, pc.cast(pa.array(rank_positions), pa.string())), rank_differs),
            _single_precision(docs, sorted_scores, starts, ends, same_block),
        ]
        rows = pc.binary_join_element_wise(*fields, "\t").to_pylist()
        for i, lists in enumerate(rows):
            yield ColumnBlock(topics[i], tags[i], first_line + int(starts[i]), int(counts[i]), bool(has_stance[i]), lists)

    def _check_values(
        self, topic: pa.Array, column2: pa.Array, doc: pa.Array, tag: pa.Array, rank_text: pa.Array, score_text: pa.Array
    ) -> tuple[pa.Array, pa.Array]:
        """The ranks and scores as numbers; declines what the line reader would refuse, or read otherwise."""
        if not pc.all(pc.ascii_is_decimal(pc.utf8_ltrim(rank_text, "-"))).as_py():
            raise Declined
        try:
            ranks, scores = pc.cast(rank_text, pa.int64()), pc.cast(score_text, pa.float64())
        except pa.ArrowInvalid:
            raise Declined from None
        for text in (topic, column2, doc, tag):
            # Printable ASCII only (no control character), and no empty field (the line reader would see fewer).
            if not pc.all(pc.ascii_is_printable(text)).as_py() or pc.min(pc.binary_length(text)).as_py() == 0:
                raise Declined
        if not pc.all(pc.is_in(column2, self._column2)).as_py():
            raise Declined
        if self._known is not None and not pc.all(pc.is_in(topic, self._known)).as_py():
            raise Declined
        if not pc.all(pc.is_finite(scores)).as_py():
            raise Declined
        bounds = pc.min_max(ranks).as_py()
        if bounds["min"] < -_INT4 or bounds["max"] >= _INT4:
            raise Declined
        lengths = pc.binary_length(doc)
        if pc.max(lengths).as_py() > self._max_doc_id_length:
            raise Declined
        four = pc.filter(doc, pc.equal(lengths, 4))
        if len(four) and pc.any(pc.equal(pc.ascii_lower(four), "null")).as_py():
            raise Declined  # an array element spelled null must be quoted
        return ranks, scores

    def _count_blocks(
        self, topics: list[str], tags: list[str], starts: np.ndarray, counts: np.ndarray, first_line: int, block: np.ndarray,
        same_block: np.ndarray, rank_values: np.ndarray, score_values: np.ndarray, sorted_scores: np.ndarray,
    ) -> None:
        """Count every block as the line reader does (RunTally.count_block), from whole-column comparisons."""
        n = len(block)
        if not n:
            return
        in_rank_order = np.lexsort((rank_values, block))  # stable: equal ranks keep their file order
        ranked_scores = score_values[in_rank_order]
        rises = np.flatnonzero((ranked_scores[1:] > ranked_scores[:-1]) & same_block) + 1
        first_rise = dict(zip(block[rises][::-1].tolist(), rises[::-1].tolist()))  # reversed: the first one wins
        tied = np.add.reduceat(np.append(0, (sorted_scores[1:] == sorted_scores[:-1]) & same_block), starts)
        for i, (topic, tag) in enumerate(zip(topics, tags)):
            disagreement = None
            if (at := first_rise.get(i)) is not None:
                line, before = in_rank_order[at], in_rank_order[at - 1]
                disagreement = (int(rank_values[line]), float(score_values[line]), int(rank_values[before]), float(score_values[before]))
            self.count_block(topic, tag, int(counts[i]), first_line + int(starts[i]), disagreement=disagreement, ties=int(tied[i]))


def _parse_options(data: bytes) -> pcsv.ParseOptions:
    """Tab-separated when the first line holds a tab, else separated by single spaces."""
    first = data[: data.find(b"\n")]
    delimiter = "\t" if b"\t" in first else " "
    return pcsv.ParseOptions(delimiter=delimiter, quote_char=False, escape_char=False, double_quote=False, ignore_empty_lines=False)


def _check_bytes(data: bytes, delimiter: str) -> None:
    """Decline bytes whose reading could differ from the line reader's: a blank line, not ASCII, a line end other than \\n
    (Arrow would take a lone \\r for one, as Python does, but the line numbers could differ), the other separator
    (str.split() splits on both), characters an array literal must quote, a line over MAX_LINE_BYTES, a BOM."""
    other = b" " if delimiter == "\t" else b"\t"
    if not data.isascii() or b"\r" in data or other in data or any(special in data for special in _ARRAY_SPECIAL):
        raise Declined
    if data.startswith(b"\n") or b"\n\n" in data:
        raise Declined  # a blank line (Arrow would make it a row of empty fields)
    for start in range(0, len(data), _HALF_LINE):
        if data.find(b"\n", start, start + _HALF_LINE) < 0 and start + _HALF_LINE <= len(data):
            raise Declined


def _block_starts(table: pa.Table) -> np.ndarray:
    """Row numbers where a block starts: the first row, and each row whose topic or tag differs from the row above."""
    n = table.num_rows
    if n == 0:
        return np.zeros(0, np.int64)
    changed = np.zeros(n, bool)
    changed[0] = True
    for name in ("topic", "tag"):
        column = table.column(name).combine_chunks()
        changed[1:] |= pc.not_equal(column.slice(1), column.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    return np.flatnonzero(changed)


def _check_unique(doc: pa.Array, block: np.ndarray) -> None:
    """Decline a block listing a document twice (the line reader names the line)."""
    if not len(doc):
        return
    if len(pc.unique(doc)) == len(doc):
        return  # no document twice in the whole chunk
    encoded = pc.dictionary_encode(doc)
    keys = np.sort(block.astype(np.int64) * len(encoded.dictionary) + encoded.indices.to_numpy())
    if (keys[1:] == keys[:-1]).any():
        raise Declined


def _order(block: np.ndarray, same_block: np.ndarray, values: np.ndarray, by: str, doc: pa.Array, column: pa.Array) -> np.ndarray:
    """Row numbers in `by` order within each block (blocks keep their place). Most blocks are already in that
    order, strictly, and need no sort."""
    n = len(block)
    ordered = values[1:] < values[:-1] if by == "score" else values[1:] > values[:-1]
    if (ordered | ~same_block).all():
        return np.arange(n)
    keys = pa.table({"block": block, "key": column, "doc": doc})
    direction = "descending" if by == "score" else "ascending"
    return pc.sort_indices(keys, sort_keys=[("block", "ascending"), ("key", direction), ("doc", "descending")]).to_numpy()


def _score_copy_text(scores: pa.Array, score_text: pa.Array) -> pa.Array:
    """The scores as COPY text: as written, unless one is zero, which it may be only by underflow ("1e-400"), a text
    PostgreSQL refuses where Python reads 0.0; then as Arrow writes them (shortest text that reads back the same)."""
    if pc.all(pc.not_equal(scores, 0)).as_py():
        return score_text
    return pc.cast(scores, pa.string())


def _lists(offsets: pa.Array, values: pa.Array) -> pa.Array:
    """Each block's values as a PostgreSQL array literal, the blocks' rows given by `offsets`."""
    joined = pc.binary_join(pa.ListArray.from_arrays(offsets, values), ",")
    return pc.binary_join_element_wise("{", joined, "}", "")


def _or_null(literals: pa.Array, present: np.ndarray) -> pa.Array:
    return pc.if_else(pa.array(present), literals, NULL)


def _single_precision(docs: pa.Array, sorted_scores: np.ndarray, starts: np.ndarray, ends: np.ndarray, same_block: np.ndarray) -> pa.Array:
    """trec_eval 9's order (`by_single`) where it differs from the score order: only where two different doubles
    round to the same single, found for all blocks at once; those few blocks are ordered by the line reader's code."""
    with np.errstate(over="ignore", under="ignore"):
        singles = sorted_scores.astype(np.float32)
    merged = (singles[1:] == singles[:-1]) & (sorted_scores[1:] != sorted_scores[:-1]) & same_block
    literals = [NULL] * len(starts)
    if merged.any():
        for i in np.unique(np.searchsorted(starts, np.flatnonzero(merged) + 1, side="right") - 1).tolist():
            start, end = int(starts[i]), int(ends[i])
            order = single_precision_order(docs.slice(start, end - start).to_pylist(), sorted_scores[start:end].tolist())
            if order is not None:
                literals[i] = "{" + ",".join(str(p + 1) for p in order) + "}"
    return pa.array(literals, pa.string())


_READ = pcsv.ReadOptions(column_names=list(_COLUMNS), block_size=CHUNK_BYTES + MAX_LINE_BYTES, use_threads=False)
_CONVERT = pcsv.ConvertOptions(
    column_types=_TYPES, null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=False
)
