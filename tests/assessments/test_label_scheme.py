"""Label schemes as campaigns define them: dimensions of three kinds, conditions, and the errors a bad scheme gets."""

import json
from pathlib import Path

import pytest

from assessments.labels import (
    CATEGORY,
    CLASSIFICATION_PRESETS,
    GRADED,
    IMAGE_PRESETS,
    PRESETS,
    QUESTION,
    Condition,
    Dimension,
    LabelScheme,
    LabelValue,
    SchemeError,
    stored_scheme,
    upgrade_from_version_1,
)

# A scheme with four dimensions of the three kinds (the README's example): a yes/no question asked first, a grade
# asked when it is yes, a category asked when the grade is at least 1, and a second question asked only for one of
# the categories.
CUSTOM = json.loads((Path(__file__).parents[1] / "data" / "schemes" / "four-dimensions.json").read_text())


def test_every_preset_survives_its_json_and_asks_relevance_first_where_touche_did():
    for name, (_, scheme) in PRESETS.items():
        assert LabelScheme.from_json(json.loads(json.dumps(scheme.to_json()))) == scheme, name
        # Task 4 classifies comments (its one dimension is the stance) and Task 3 judges images (on topic first):
        # neither asks a relevance grade.
        primary = "stance" if name in CLASSIFICATION_PRESETS else "ONTOPIC" if name in IMAGE_PRESETS else "relevance"
        assert scheme.primary.name == primary, name


def test_the_touche_presets_have_the_dimensions_of_their_tasks():
    names = {name: PRESETS[name][1].names for name in PRESETS}
    assert names["touche-2022-task1"] == ("relevance", "quality", "coherence")
    assert names["touche-2023-task2"] == ("direction", "relevance", "evidence", "stance")
    assert PRESETS["touche-2021-task1"][1].values("relevance") == (-2, 0, 1, 2, 3)
    assert PRESETS["touche-2022-task2"][1].values("stance") == ("FIRST", "SECOND", "NEUTRAL", "NO")
    assert PRESETS["touche-2023-task4"][1].values("stance") == ("In favor", "Against", "Other")  # the lab's strings


def test_a_custom_scheme_with_three_kinds_reads_its_conditions():
    scheme = LabelScheme.from_json(CUSTOM)
    assert [d.kind for d in scheme.dimensions] == [QUESTION, GRADED, CATEGORY, QUESTION]
    assert [d.name for d in scheme.asked({})] == ["ONTOPIC"]
    assert [d.name for d in scheme.asked({"ONTOPIC": 1, "usefulness": 2, "side": "PRO"})] == ["ONTOPIC", "usefulness", "side", "persuasive"]
    assert scheme.errors({"ONTOPIC": 1, "usefulness": 2, "side": "CON"}) == []
    assert scheme.errors({"ONTOPIC": 0, "usefulness": 2}) == ["usefulness is asked only when ONTOPIC ≥ 1"]
    assert scheme.errors({"ONTOPIC": 1, "usefulness": 1, "side": "CON", "persuasive": 1}) == ["persuasive is asked only when side is PRO"]
    # Without conditions (an import), only the values are checked.
    assert scheme.errors({"ONTOPIC": 0, "usefulness": 2}, conditions=False) == []


def test_values_outside_a_dimension_and_unknown_dimensions_are_named():
    scheme = LabelScheme.from_json(CUSTOM)
    assert scheme.errors({"usefulness": 3, "colour": "red"}, conditions=False) == [
        "usefulness 3 is not one of [0, 1, 2]",
        "'colour' is not a label dimension of this campaign (its: ONTOPIC, usefulness, side, persuasive)",
    ]
    # A yes/no question takes 1 and 0, not JSON's true and false; a grade is not its string.
    assert scheme.errors({"ONTOPIC": True, "usefulness": "2"}, conditions=False) == [
        "ONTOPIC True is not one of [1, 0]", "usefulness '2' is not one of [0, 1, 2]",
    ]


def test_clearing_follows_chains_of_conditions():
    scheme = LabelScheme.from_json(CUSTOM)
    labels = {"ONTOPIC": 0, "usefulness": 2, "side": "PRO", "persuasive": 1}
    assert scheme.cleared(labels) == {"ONTOPIC": 0}
    assert scheme.cleared({"ONTOPIC": 1, "usefulness": 2, "side": "CON", "persuasive": 1}) == {"ONTOPIC": 1, "usefulness": 2, "side": "CON"}


def test_a_judgment_is_complete_with_the_required_dimensions_it_is_asked():
    scheme = LabelScheme.from_json(CUSTOM)
    assert not scheme.complete({})
    assert scheme.complete({"ONTOPIC": 0})  # usefulness is not asked of an off-topic document
    assert not scheme.complete({"ONTOPIC": 1})
    assert scheme.complete({"ONTOPIC": 1, "usefulness": 0})


def test_a_wrong_causal_direction_makes_the_document_not_relevant_in_files():
    scheme = PRESETS["touche-2023-task2"][1]
    assert scheme.cleared({"direction": "WRONG", "relevance": 2, "evidence": "STRONGER"}) == {"direction": "WRONG"}
    assert scheme.value_for_files("relevance", {"direction": "WRONG"}) == 0
    assert scheme.value_for_files("relevance", {"direction": "CAUSE_EFFECT", "relevance": 2}) == 2
    assert scheme.value_for_files("relevance", {}) is None  # not judged yet: no value, not 0
    assert scheme.complete({"direction": "WRONG"})


def _with(change) -> dict:
    data = json.loads(json.dumps(CUSTOM))
    change(data["dimensions"])
    return data


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d[2]["values"][0].update(key="y"), "key 'y' is given to both ONTOPIC 1 and side 'PRO'"),
    (lambda d: d[2]["values"][0].update(key="Y"), "key 'Y' is given to both ONTOPIC 1 and side 'PRO'"),
    (lambda d: d[1].update(condition={"dimension": "topicality", "min": 1}),
     "dimension usefulness: its condition names an unknown dimension 'topicality'"),
    (lambda d: d[0].update(condition={"dimension": "persuasive", "min": 1}), "conditions form a cycle"),
    (lambda d: d[1].update(condition={"dimension": "usefulness", "min": 1}), "conditions form a cycle"),
    (lambda d: d[3].update(condition={"dimension": "side", "min": 1}), "'min' needs a graded or yes/no dimension"),
    (lambda d: d[3].update(condition={"dimension": "side", "in": ["MAYBE"]}), "its condition's value 'MAYBE' is not one of side's"),
    (lambda d: d[1].update(kind="scale"), "kind 'scale' is not one of graded, category, question"),
    (lambda d: d[0]["values"].append({"value": 2, "name": "Maybe", "key": "m"}), "a question's values are 1 (yes) and 0 (no)"),
    (lambda d: d[2]["values"].append({"value": 3, "name": "Three", "key": "3"}), "category values must be strs"),
    (lambda d: d[1]["values"][0].update(key="00"), "must be one character"),
    (lambda d: d.append(dict(d[0])), "dimension names repeat"),
    (lambda d: d[1].update(name="use fulness"), "dimension name 'use fulness'"),
    (lambda d: d[1].pop("values"), "dimension usefulness: missing or malformed 'values'"),
    (lambda d: d[1].update(condition={"dimension": "ONTOPIC", "min": "1"}), "'min' must be a whole number, not '1'"),
    (lambda d: d[1].update(condition={"dimension": "ONTOPIC", "min": True}), "'min' must be a whole number, not True"),
    (lambda d: d[1].update(required="no"), "dimension usefulness: 'required' is true or false, not 'no'"),
])
def test_a_scheme_the_judge_page_could_not_drive_is_refused_with_its_reason(change, message):
    with pytest.raises(SchemeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        LabelScheme.from_json(_with(change))


def test_a_scheme_needs_its_list_of_dimensions_and_a_known_version():
    for data, message in [([], "a JSON object with a list"), ({"dimensions": []}, "at least one dimension"),
                          ({"version": 3, "dimensions": CUSTOM["dimensions"]}, "version 3 is not known")]:
        with pytest.raises(SchemeError, match=message):
            LabelScheme.from_json(data)


def test_version_1_schemes_keep_their_values_and_get_the_campaigns_condition():
    old = {"relevance": [{"value": 0, "name": "No", "key": "0"}, {"value": 1, "name": "Yes", "key": "1"}],
           "quality": [{"value": 0, "name": "Low", "key": "q"}], "stance": []}
    conditional = LabelScheme.from_json(upgrade_from_version_1(old, details_only_if_relevant=True))
    assert conditional.names == ("relevance", "quality")
    assert conditional.dimension("quality").condition == Condition("relevance", min=1)
    assert conditional.primary == Dimension("relevance", "Relevance", GRADED, (LabelValue(0, "No", "0"), LabelValue(1, "Yes", "1")), required=True)
    free = LabelScheme.from_json(upgrade_from_version_1(old, details_only_if_relevant=False))
    assert free.dimension("quality").condition is None


def test_the_image_presets_ask_three_questions_and_an_unmarked_side_is_a_no_in_files():
    scheme = PRESETS["touche-2023-task3"][1]
    assert scheme.names == ("ONTOPIC", "PRO", "CON") and scheme == PRESETS["touche-2022-task3"][1]
    assert {k["key"] for k in scheme.keys()} >= {"o", "p", "c"}
    # On topic, supporting pro only: CON was never pressed, and the files say 0 for it, as the lab's qrels do.
    labels = {"ONTOPIC": 1, "PRO": 1}
    assert scheme.complete(labels)
    assert [scheme.value_for_files(name, labels) for name in scheme.names] == [1, 1, 0]
    # Off topic: neither side is asked, and both are 0 in files.
    assert [scheme.value_for_files(name, {"ONTOPIC": 0}) for name in scheme.names] == [0, 0, 0]
    # Not judged yet: nothing at all.
    assert [scheme.value_for_files(name, {}) for name in scheme.names] == [None, None, None]
    assert scheme.errors({"ONTOPIC": 0, "PRO": 1}) == ["PRO is asked only when ONTOPIC ≥ 1"]


def test_unanswered_needs_an_optional_dimension_and_one_of_its_values():
    base = {"name": "side", "kind": "question", "values": [{"value": 1, "name": "Yes", "key": "y"}, {"value": 0, "name": "No", "key": "n"}]}
    assert LabelScheme.from_json({"version": 2, "dimensions": [{**base, "unanswered": 0}]}).dimensions[0].unanswered == 0
    for wrong in ({**base, "unanswered": 0, "required": True}, {**base, "unanswered": 5}):
        with pytest.raises(SchemeError, match="'unanswered' needs an optional dimension and one of its values"):
            LabelScheme.from_json({"version": 2, "dimensions": [wrong]}).check()
    scheme = LabelScheme.from_json({"version": 2, "dimensions": [{**base, "unanswered": 0}]})
    assert LabelScheme.from_json(json.loads(json.dumps(scheme.to_json()))) == scheme


def test_a_stored_scheme_is_parsed_once_and_a_changed_one_is_read_anew():
    stored = json.loads(json.dumps(CUSTOM))
    first = stored_scheme(stored)
    assert first == LabelScheme.from_json(CUSTOM)
    assert stored_scheme(json.loads(json.dumps(CUSTOM))) is first  # an equal document, as the next request reads it
    stored["dimensions"][0]["title"] = "Is it on topic at all?"
    changed = stored_scheme(stored)
    assert changed is not first and changed.dimensions[0].title == "Is it on topic at all?"
    broken = {"dimensions": []}
    with pytest.raises(SchemeError, match="at least one dimension"):
        stored_scheme(broken)
    with pytest.raises(SchemeError, match="at least one dimension"):  # a refused document is not remembered
        stored_scheme(broken)
