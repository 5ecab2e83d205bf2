"""Read and write Touché Task 3 ("Image Retrieval for Arguments") run files.

A line is ``topic PRO|CON imageId rank score tag``: for each topic and stance, up to ten images that support that
stance. The organisers check a submission with ``submission-verifier.sh`` and score it with
``submission-evaluator.sh`` (reference-evaluators/2022-task3 in the shared Touché data). Both read a run line by
line and *skip* a line they dislike instead of refusing the file, and the evaluator then scores what is left. This
reader keeps that split:

* What makes a line unreadable is a `FormatError` and nothing of the file is kept: not six fields (a tag with
  spaces included), a stance other than PRO/CON, an image id other than ``I`` + 16 lowercase hex digits, a rank
  that is not a positive integer, a score that is not a finite number, a topic that is not a positive integer
  (the verifier's ``^[1-9][0-9]*$``), and the same image twice in one topic's list for one stance.
* What the verifier flags but a campaign can live with is a `FormatWarning`: an image not in the collection, a
  list shorter than 10 (P@10 still divides by 10), more than 10 or ranks above 10, ranks that do not increase or
  scores that increase down the file, a score written with an exponent, a topic above 50, a second run tag.

Every entry records in `ImageRunEntry.skipped` whether, and why, the organisers' evaluator skips its line, worked
out here in file order with the evaluator's own rules, so that `metrics.image_precision` counts exactly the lines
the evaluator counts. In particular only ranks 1–10 ever count for P@10: a list of 15 is scored on its ranks 1–10.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from .errors import FormatError, FormatWarning, shown
from .qrels import topic_sort_key
from .reading import MAX_BLANK_LINES, blank_line_limit, line_batches

STANCES = ("PRO", "CON")
DEPTH = 10  # Task 3 asks for ten images per topic and stance, and scores precision at 10
# The organisers' scripts know the topics of 2022 and 2023, 1–50, and skip the lines of any other topic.
MAX_TOPIC = 50
MAX_LINES = 100_000  # 50 topics × 2 stances × 10 images is 1,000 lines; far more is not a Task 3 run
MAX_LISTED = 20  # line warnings of one kind before the rest are only counted

IMAGE_ID = re.compile(r"I[0-9a-f]{16}")
TOPIC = re.compile(r"[1-9][0-9]{0,8}")
_RANK = re.compile(r"[0-9]{1,9}")
_SCORE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
# What the evaluator and the verifier read as a score (`score ~ /^-?[0-9]+\.?[0-9]*$/`): no exponent, no plus sign,
# no leading point. Such a line is skipped, although Python and trec_eval read the score.
_PLAIN_SCORE = re.compile(r"-?[0-9]+\.?[0-9]*")


@dataclass(frozen=True, slots=True)
class ImageRunEntry:
    topic: str
    stance: str
    image: str
    rank: int
    score: float
    line: int
    # Why submission-evaluator.sh skips this line (then it counts for no measure), or None when it counts it.
    skipped: str | None = None


@dataclass
class ImageRun:
    """A parsed run: its lists by (topic, stance), each in rank order (file order among equal ranks)."""

    tag: str  # the first line's tag, the one the organisers' scripts keep
    entries: dict[tuple[str, str], list[ImageRunEntry]]
    line_count: int
    warnings: list[FormatWarning] = field(default_factory=list)
    tags: tuple[str, ...] = ()  # every tag, in the order they first appear

    @property
    def topics(self) -> list[str]:
        return sorted({topic for topic, _ in self.entries}, key=topic_sort_key)

    def ranking(self, topic: str, stance: str) -> list[ImageRunEntry]:
        return self.entries.get((topic, stance), [])


def parse_image_run(data: bytes, *, source: str, known_images: Collection[str] | None = None) -> ImageRun:
    """Parse a whole Task 3 run; raise `FormatError` at the first unreadable line (see the module docstring)."""
    reader = _Reader(source, known_images)
    for lineno, line in _numbered_lines(data, source):
        reader.read(lineno, line)
    return reader.finish()


class _Reader:
    """The state of one parse: what the verifier and evaluator track per (topic, stance), in file order."""

    def __init__(self, source: str, known_images: Collection[str] | None) -> None:
        self.source = source
        self.known_images = known_images
        self.entries: dict[tuple[str, str], list[ImageRunEntry]] = {}
        self.seen: dict[tuple[str, str, str], int] = {}  # (topic, stance, image) -> its line
        self.highest_rank: dict[tuple[str, str], int] = {}
        self.lowest_score: dict[tuple[str, str], float] = {}
        self.tags: dict[str, int] = {}  # tag -> first line
        self.unknown: dict[str, int] = {}  # image not in the collection -> first line
        self.line_count = 0
        self.warnings: list[FormatWarning] = []
        self._listed: dict[str, int] = {}  # line warnings per kind, to cap them

    def read(self, lineno: int, line: str) -> None:
        source = self.source
        fields = line.split()
        if len(fields) != 6:
            raise FormatError(source, lineno, f"expected 6 fields (topic, PRO or CON, image, rank, score, tag), got {len(fields)}")
        topic, stance, image, rank_text, score_text, tag = fields
        if not TOPIC.fullmatch(topic):
            raise FormatError(source, lineno, f"topic {shown(topic)} is not a topic number (1, 2, …; no leading zero)")
        if stance not in STANCES:
            raise FormatError(source, lineno, f"stance {shown(stance)} is neither PRO nor CON")
        if not IMAGE_ID.fullmatch(image):
            raise FormatError(source, lineno, f"image id {shown(image)} is not I followed by 16 lowercase hex digits")
        if not _RANK.fullmatch(rank_text) or rank_text[0] == "0":
            raise FormatError(source, lineno, f"rank {shown(rank_text)} is not a positive integer (1, 2, …; no leading zero)")
        rank = int(rank_text)
        score = _score(score_text, source, lineno)
        key = (topic, stance)
        if (first := self.seen.get((topic, stance, image))) is not None:
            raise FormatError(source, lineno, f"image {image} is listed twice for topic {topic} {stance} (first on line {first})")
        self.seen[(topic, stance, image)] = lineno
        self.line_count += 1
        if self.line_count > MAX_LINES:
            raise FormatError(source, lineno, f"more than {MAX_LINES:,} result lines; a Task 3 run has about 1,000")

        self.tags.setdefault(tag, lineno)
        if self.known_images is not None and image not in self.known_images:
            self.unknown.setdefault(image, lineno)
        skipped = self._skipped(topic, stance, rank, score, score_text, lineno)
        self.entries.setdefault(key, []).append(ImageRunEntry(topic, stance, image, rank, score, lineno, skipped))

    def _skipped(self, topic: str, stance: str, rank: int, score: float, score_text: str, lineno: int) -> str | None:
        """submission-evaluator.sh's checks of one line, in its order and with its state: the rank is remembered
        before the score is checked, so a line skipped for its score still raises the bar for the next rank."""
        key = (topic, stance)
        if int(topic) > MAX_TOPIC:
            return self._skip("topic", lineno, f"topic {topic} is above {MAX_TOPIC}, the last topic the organisers' scripts know")
        if rank > DEPTH:
            return f"rank {rank} is above {DEPTH}"  # warned about per list, in finish()
        before = self.highest_rank.get(key, 0)
        if rank <= before:
            return self._skip("rank", lineno, f"rank {rank} for topic {topic} {stance} does not increase on rank {before} before it")
        self.highest_rank[key] = rank
        if not _PLAIN_SCORE.fullmatch(score_text):
            return self._skip(
                "score format", lineno, f"score {shown(score_text)} is not written as digits with an optional point"
            )
        lowest = self.lowest_score.get(key)
        if lowest is not None and score > lowest:
            return self._skip(
                "score order", lineno, f"score {score_text} for topic {topic} {stance} is above the score {lowest:g} before it"
            )
        self.lowest_score[key] = score
        return None

    def _skip(self, kind: str, lineno: int, reason: str) -> str:
        count = self._listed[kind] = self._listed.get(kind, 0) + 1
        if count <= MAX_LISTED:
            self.warnings.append(FormatWarning(self.source, lineno, f"{reason}: the organisers' evaluator skips the line"))
        return reason

    def finish(self) -> ImageRun:
        if not self.line_count:
            raise FormatError(self.source, None, "the run has no result lines")
        for kind, count in self._listed.items():
            if count > MAX_LISTED:
                self._warn(None, f"{count - MAX_LISTED} more lines skipped by the organisers' evaluator ({kind}), not listed")
        for entries in self.entries.values():
            entries.sort(key=lambda entry: (entry.rank, entry.line))
        self._warn_about_lists()
        tags = list(self.tags)
        for tag in tags[1:]:
            self._warn(self.tags[tag], f"a second run tag {shown(tag)}; the run is stored as {shown(tags[0])}, its first")
        if self.unknown:
            image, line = next(iter(self.unknown.items()))
            others = f" and {len(self.unknown) - 1} more" if len(self.unknown) > 1 else ""
            self._warn(
                line, f"image {image}{others} not in the collection: the organisers' verifier refuses such lines, and"
                " the evaluator counts them as off-topic unless judged",
            )
        return ImageRun(tags[0], self.entries, self.line_count, self.warnings, tuple(tags))

    def _warn_about_lists(self) -> None:
        for topic in sorted({topic for topic, _ in self.entries}, key=topic_sort_key):
            if int(topic) > MAX_TOPIC:
                continue  # every line of it is skipped, and said so
            for stance in STANCES:
                entries = self.entries.get((topic, stance))
                if not entries:
                    self._warn(None, f"topic {topic} has no {stance} list: its {stance} precision counts as 0 of {DEPTH}")
                    continue
                first = min(entry.line for entry in entries)
                beyond = [entry for entry in entries if entry.rank > DEPTH]
                if len(entries) > DEPTH:
                    self._warn(
                        first, f"topic {topic} {stance} lists {len(entries)} images where Task 3 asks for at most {DEPTH};"
                        f" only ranks 1–{DEPTH} count for P@{DEPTH}, as in the organisers' evaluator",
                    )
                elif beyond:
                    self._warn(
                        beyond[0].line, f"topic {topic} {stance} ranks {_count(len(beyond), 'image')} above {DEPTH};"
                        f" the organisers' evaluator skips those lines, so only ranks 1–{DEPTH} count",
                    )
                if len(entries) < DEPTH:
                    self._warn(
                        first, f"topic {topic} {stance} lists {_count(len(entries), 'image')}, fewer than {DEPTH};"
                        f" P@{DEPTH} divides by {DEPTH} all the same",
                    )

    def _warn(self, line: int | None, message: str) -> None:
        self.warnings.append(FormatWarning(self.source, line, message))


def _score(text: str, source: str, lineno: int) -> float:
    # Not float() alone: it also reads "1_0", digits of other scripts, "nan" and "inf".
    if not _SCORE.fullmatch(text):
        raise FormatError(source, lineno, f"score {shown(text)} is not a number")
    score = float(text)
    if not math.isfinite(score):
        raise FormatError(source, lineno, f"score {shown(text)} is not a finite number")
    return score


def _numbered_lines(data: bytes, source: str) -> Iterator[tuple[int, str]]:
    """The non-blank lines with their physical 1-based numbers, a byte-order mark dropped."""
    lineno = blank = 0
    for batch in line_batches(io.BytesIO(data), source=source, fields=True):
        for line in batch:
            lineno += 1
            if lineno == 1:
                line = line.lstrip("\ufeff")
            if not line.strip():
                blank += 1
                if blank > MAX_BLANK_LINES:
                    raise blank_line_limit(source, lineno)
                continue
            yield lineno, line


def write_image_run(rows: Iterable[tuple[str, str, str, int, float]], *, tag: str) -> str:
    """``topic stance image rank score tag`` lines, in the given order, for rows (topic, stance, image, rank, score).

    Scores are written in positional notation (``0.00001``, never ``1e-05``), which the organisers' scripts read.
    Raises ValueError for a field that is empty or holds whitespace: the line could not be read back.
    """
    lines = []
    for topic, stance, image, rank, score in rows:
        for text in (topic, stance, image, tag):
            if len(text.split()) != 1 or text.strip() != text:
                raise ValueError(f"{text!r} is empty or contains whitespace")
        lines.append(f"{topic} {stance} {image} {rank} {_positional(score)} {tag}\n")
    return "".join(lines)


def _positional(score: float) -> str:
    if not math.isfinite(score):
        raise ValueError(f"score {score!r} is not finite")
    return format(Decimal(repr(score)), "f")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
