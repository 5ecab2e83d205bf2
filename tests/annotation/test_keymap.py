"""The judge page's keys: every label key from the scheme, commands that never clash with them."""

from annotation.keymap import keymap
from assessments.labels import GRADED, PRESETS, Dimension, LabelScheme, LabelValue


def test_every_preset_keeps_all_command_letters():
    for name, (_, scheme) in PRESETS.items():
        keys = keymap(scheme)
        label_keys = {label["key"] for label in keys["labels"]}
        command_keys = {key for command in keys["commands"] for key in command["keys"]}
        assert not label_keys & command_keys, name
        assert {"j", "k", "u", "h", "t", "m", "z", "i", "g", "?"} <= command_keys, name


def test_labels_carry_their_dimension_value_and_key():
    labels = keymap(PRESETS["touche-2020-task1"][1])["labels"]
    assert {"key": "x", "dimension": "relevance", "value": -2, "name": "Spam / no argument"} in labels
    assert [label["key"] for label in labels if label["dimension"] == "quality"] == ["q", "w", "e"]


def test_a_custom_scheme_that_claims_a_command_key_wins_and_the_command_keeps_its_arrow():
    scheme = LabelScheme((Dimension("relevance", "Relevance", GRADED, (LabelValue(0, "No", "j"), LabelValue(1, "Yes", "h")), required=True),))
    commands = {c["action"]: c["keys"] for c in keymap(scheme)["commands"]}
    assert commands["next"] == ["ArrowRight"]
    assert "highlight" not in commands  # its only key is taken by a label
    assert commands["previous"] == ["k", "ArrowLeft"]
