"""Read and write Touché Task 3 qrels: three yes/no questions per judged image.

A line is ``topic QUESTION imageId 0|1``, QUESTION one of ``ONTOPIC`` (the image is about the topic), ``PRO`` and
``CON`` (it supports that stance). One file answers all three, each judged image taking three lines. The official
2022 file (19,821 lines, as ir_datasets reads it) starts with topic 1's ONTOPIC line and ends with topic 50's CON
line: grouped by topic, then by image, the questions in the order ONTOPIC, PRO, CON, which is the order written here
(images by id within a topic, since nothing says how the lab ordered them).

The organisers' evaluator keeps the last of two lines for the same topic, question and image; here that is an error,
because the two answers could disagree and neither can be picked silently. A question left out reads as 0 there
(``qrels[…] == 1`` is false for a missing entry), and `metrics.image_precision` does the same.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import FormatError, shown
from .image_runs import IMAGE_ID, TOPIC
from .qrels import topic_sort_key
from .reading import MAX_BLANK_LINES, blank_line_limit, line_batches

QUESTIONS = ("ONTOPIC", "PRO", "CON")
_VALUES = {"0": 0, "1": 1}


@dataclass(frozen=True, slots=True)
class ImageJudgment:
    topic: str
    question: str  # ONTOPIC, PRO or CON
    image: str
    value: int  # 0 or 1
    line: int


def parse_image_qrels(data: bytes, *, source: str) -> list[ImageJudgment]:
    """Every judgment in file order; raise `FormatError` at the first bad line, or for a file without judgments."""
    judgments: list[ImageJudgment] = []
    first_line: dict[tuple[str, str, str], int] = {}
    lineno = blank = 0
    for batch in line_batches(io.BytesIO(data), source=source, fields=True):
        for line in batch:
            lineno += 1
            fields = (line.lstrip("\ufeff") if lineno == 1 else line).split()
            if not fields:
                blank += 1
                if blank > MAX_BLANK_LINES:
                    raise blank_line_limit(source, lineno)
                continue
            if len(fields) != 4:
                raise FormatError(source, lineno, f"expected 4 fields (topic, ONTOPIC/PRO/CON, image, 0 or 1), got {len(fields)}")
            topic, question, image, value = fields
            if not TOPIC.fullmatch(topic):
                raise FormatError(source, lineno, f"topic {shown(topic)} is not a topic number (1, 2, …; no leading zero)")
            if question not in QUESTIONS:
                raise FormatError(source, lineno, f"question {shown(question)} is not one of {', '.join(QUESTIONS)}")
            if not IMAGE_ID.fullmatch(image):
                raise FormatError(source, lineno, f"image id {shown(image)} is not I followed by 16 lowercase hex digits")
            if value not in _VALUES:
                raise FormatError(source, lineno, f"answer {shown(value)} is neither 0 nor 1")
            key = (topic, question, image)
            if (first := first_line.get(key)) is not None:
                raise FormatError(source, lineno, f"topic {topic} answers {question} for image {image} twice (first on line {first})")
            first_line[key] = lineno
            judgments.append(ImageJudgment(topic, question, image, _VALUES[value], lineno))
    if not judgments:
        raise FormatError(source, None, "the file has no judgments")
    return judgments


def write_image_qrels(rows: Iterable[tuple[str, str, int, int, int]]) -> str:
    """The qrels text for rows ``(topic, image, ontopic, pro, con)``: three lines per image, in the lab's order
    (topics by number, images by id, then ONTOPIC, PRO, CON), single spaces, LF.

    Raises ValueError for an answer other than 0/1, an id that could not be read back, or an image given twice
    for a topic.
    """
    table: dict[tuple[str, str], tuple[int, int, int]] = {}
    for topic, image, *answers in rows:
        if not TOPIC.fullmatch(topic) or not IMAGE_ID.fullmatch(image):
            raise ValueError(f"topic {topic!r} or image {image!r} is not a Task 3 id")
        if any(answer not in (0, 1) for answer in answers) or len(answers) != 3:
            raise ValueError(f"topic {topic} image {image}: answers {answers!r} are not three 0/1 values")
        if (topic, image) in table:
            raise ValueError(f"topic {topic} image {image} is given twice")
        table[(topic, image)] = (int(answers[0]), int(answers[1]), int(answers[2]))
    lines = []
    for topic, image in sorted(table, key=lambda key: (topic_sort_key(key[0]), key[1])):
        for question, answer in zip(QUESTIONS, table[(topic, image)]):
            lines.append(f"{topic} {question} {image} {answer}\n")
    return "".join(lines)
