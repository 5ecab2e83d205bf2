"""What a machine judge asks a model, and how its answer becomes a value of the campaign's scheme.

Pure, no Django import. The default prompt of a dimension is built from the scheme (its values and their names),
so any dimension a campaign defines can be asked; the relevance prompt follows UMBRELA (Upadhyay et al. 2024, the
open reproduction of Bing's relevance assessor): the topic's query, description and narrative, a scale whose
grades are described, and a final line in a fixed form. Asking for a short reason before that line is what lets an
adjudicator see why the model disagreed with an assessor.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from assessments.labels import GRADED, QUESTION, Dimension, Value

FINAL = "##final answer:"
_FINAL = re.compile(r"##\s*final\s+(?:answer|score)\s*:\s*\**\s*([^\s*]+)", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\{(title|description|narrative|document|cause|effect|objects|dimension)\}")
# What a document may take of a prompt: long web pages are cut here, as a model's context and the cost are bounded.
DOCUMENT_CHARS = 6000

_RELEVANCE = """You judge documents for an argument retrieval task. Given a search topic and a document, grade how \
relevant the document is to the topic on this scale:
{scale}

Read the description and the narrative: they say what counts as relevant and what does not. A document that \
only mentions the topic's words without addressing it gets the lowest grade; one that is devoted to the topic \
and argues about it gets the highest.

Topic: {title}
Description: {description}
Narrative: {narrative}

Document:
{document}

First explain your judgment in one or two sentences. Then give the grade on a last line of its own, in the form \
"##final answer: GRADE", with nothing after it."""

_GENERIC = """You label documents retrieved for a search topic. Give the document's {what} by choosing one of:
{scale}

Topic: {title}
Description: {description}
Narrative: {narrative}

Document:
{document}

First explain your choice in one or two sentences. Then give your answer on a last line of its own, in the form \
"##final answer: ANSWER", with nothing after it."""

SYSTEM = "You are a careful relevance assessor. Follow the instructions exactly."


@dataclass(frozen=True)
class Prompt:
    """A prompt of one dimension: its system and user text (with placeholders) and the answers it accepts."""

    system: str
    template: str
    answers: dict[str, Value]


def default_prompt(dimension: Dimension) -> Prompt:
    """The prompt a new judge starts with for ``dimension``, built from its values (editable afterwards)."""
    if dimension.kind == QUESTION:
        scale = "yes\nno"
        answers: dict[str, Value] = {"yes": 1, "no": 0}
    else:
        scale = "\n".join(f"{v.value} = {v.name}" for v in dimension.values)
        answers = {str(v.value).lower(): v.value for v in dimension.values}
    if dimension.kind == GRADED and dimension.name.lower() == "relevance":
        text = _RELEVANCE
    else:
        what = dimension.title.lower() if dimension.kind != QUESTION else f"answer to: {dimension.title}"
        text = _GENERIC.replace("{what}", what)
    return Prompt(system=SYSTEM, template=text.replace("{scale}", scale), answers=answers)


def render(template: str, fields: Mapping[str, str]) -> str:
    """The template with its placeholders filled. Only the known ``{name}`` placeholders are replaced, and values
    are inserted as they are: a document holding braces cannot inject or break a placeholder (str.format would)."""
    def fill(match: re.Match[str]) -> str:
        value = fields.get(match.group(1), "")
        return value[:DOCUMENT_CHARS] if match.group(1) == "document" else value

    return _PLACEHOLDER.sub(fill, template)


class AnswerError(ValueError):
    """The model's answer holds no value of the scheme (recorded as a failed call, never as a label)."""


@dataclass(frozen=True)
class Answer:
    value: Value
    token: str  # what the model wrote
    reason: str  # what it wrote before its final line


def parse_answer(text: str, answers: Mapping[str, Value]) -> Answer:
    """The value a model's reply gives: its last ``##final answer: X`` line (UMBRELA's ``##final score:`` too),
    else a reply that is only an answer; X is looked up in ``answers`` without regard to case."""
    lookup = {str(k).lower(): v for k, v in answers.items()}
    matches = list(_FINAL.finditer(text))
    if matches:
        last = matches[-1]
        token, reason = last.group(1).strip().strip(".\"'").lower(), text[: last.start()].strip()
    else:
        token, reason = text.strip().strip(".\"'*").lower(), ""
    if token not in lookup:
        shown = token if len(token) <= 40 else token[:40] + "…"
        raise AnswerError(f"the answer {shown!r} is not one of {', '.join(map(str, lookup))}")
    return Answer(value=lookup[token], token=token, reason=reason[-2000:])


def estimate_tokens(text: str) -> int:
    """Tokens a text costs, estimated as GPT tokenizers average on English (about four characters a token); a cost
    estimate before a job starts, not a bill."""
    return math.ceil(len(text) / 4)


def check_answers(dimension: Dimension, answers: Mapping[str, object]) -> dict[str, Value]:
    """An answer mapping an organiser wrote, checked against the dimension: every target a value of it."""
    if not isinstance(answers, Mapping) or not answers:
        raise ValueError("answers must map the model's answers to the dimension's values, e.g. {\"0\": 0, \"1\": 1}")
    checked: dict[str, Value] = {}
    for answer, value in answers.items():
        if not dimension.allows(value):
            allowed = ", ".join(map(str, (v.value for v in dimension.values)))
            raise ValueError(f"answer {answer!r} maps to {value!r}, which is not a value of {dimension.name} ({allowed})")
        checked[str(answer).lower()] = value  # type: ignore[assignment]
    return checked

