"""Machine judges' prompts and answers (assessments.prompts): built from the scheme, filled without injection,
answers read the way UMBRELA-style prompts ask for them."""

import pytest

from assessments.labels import PRESETS
from assessments.prompts import AnswerError, default_prompt, parse_answer, render

SCHEME = PRESETS["touche-2022-task2"][1]


def test_the_relevance_prompt_describes_the_scheme_and_asks_for_a_final_line():
    prompt = default_prompt(SCHEME.dimension("relevance"))
    assert prompt.answers == {"0": 0, "1": 1, "2": 2}
    for value in SCHEME.dimension("relevance").values:
        assert f"{value.value} = {value.name}" in prompt.template
    assert "##final answer:" in prompt.template and "{narrative}" in prompt.template


def test_a_category_and_a_question_are_asked_by_their_values():
    stance = default_prompt(SCHEME.dimension("stance"))
    assert set(stance.answers.values()) == {v.value for v in SCHEME.dimension("stance").values}
    question = default_prompt(PRESETS["touche-2023-task3"][1].dimension("ONTOPIC"))
    assert question.answers == {"yes": 1, "no": 0}


@pytest.mark.parametrize(("reply", "value", "reason"), [
    ("It argues for the topic.\n##final answer: 2", 2, "It argues for the topic."),
    ("M=2 T=1\n##final score: 1", 1, "M=2 T=1"),  # UMBRELA's own form
    ("first ##final answer: 0 then, on reflection,\n##Final Answer: **2**", 2, "first ##final answer: 0 then, on reflection,"),
    ("2", 2, ""),
    ("  1.  ", 1, ""),
])
def test_answers_are_read_from_the_last_final_line(reply, value, reason):
    answer = parse_answer(reply, {"0": 0, "1": 1, "2": 2})
    assert (answer.value, answer.reason) == (value, reason)


@pytest.mark.parametrize("reply", ["##final answer: 3", "I cannot judge this.", "", "##final answer: relevant"])
def test_an_answer_outside_the_mapping_is_refused(reply):
    with pytest.raises(AnswerError, match="is not one of 0, 1, 2"):
        parse_answer(reply, {"0": 0, "1": 1, "2": 2})


def test_category_answers_ignore_case():
    assert parse_answer("##final answer: pro", {"pro": "PRO", "con": "CON"}).value == "PRO"


def test_filling_a_template_cannot_be_steered_by_the_document():
    text = render("T: {title}\nD: {document}\nN: {narrative}", {
        "title": "Cats?", "document": "{narrative} {0.__class__} {{x}}", "narrative": "compare",
    })
    assert text == "T: Cats?\nD: {narrative} {0.__class__} {{x}}\nN: compare"
