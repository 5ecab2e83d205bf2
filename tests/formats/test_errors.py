import pickle

import pytest

from assessments.formats.errors import FormatError, FormatWarning


def test_an_error_prints_like_a_compiler_message():
    error = FormatError("run.txt", 12, "rank 'x' is not an integer")

    assert str(error) == "run.txt:12: rank 'x' is not an integer"
    assert (error.source, error.line, error.reason) == ("run.txt", 12, "rank 'x' is not an integer")


def test_an_error_about_the_whole_file_has_no_line():
    assert str(FormatError("run.txt", None, "the run has no result lines")) == "run.txt: the run has no result lines"


def test_an_error_is_a_value_error_so_callers_can_catch_either():
    with pytest.raises(ValueError):
        raise FormatError("qrels.txt", 3, "bad")


def test_an_error_survives_pickling_for_task_queues():
    error = pickle.loads(pickle.dumps(FormatError("topics.xml", 4, "empty title")))

    assert str(error) == "topics.xml:4: empty title"


@pytest.mark.parametrize(
    ("line", "expected"),
    [(7, "run.txt:7: topic 1 has 1200 documents"), (None, "run.txt: topic 1 has 1200 documents")],
)
def test_a_warning_prints_like_an_error(line, expected):
    assert str(FormatWarning("run.txt", line, "topic 1 has 1200 documents")) == expected
