"""record_judgments_in_bulk keeps record_judgment's guarantees for many rows at once: labels within the scheme,
every change in the history, nothing stored when one row is bad. Any dimension of the scheme may create a
judgment: a judgment needs no relevance (files of several dimensions merge in any order)."""

import io

import pytest

from assessments.models import Document, Judgment, JudgmentEvent
from assessments.services.judging import Labels, RowError, record_judgment, record_judgments_in_bulk
from tests.factories import TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def topics(campaign):
    return {number: TopicFactory(campaign=campaign, number=number) for number in ("1", "2")}


@pytest.fixture
def assessor(db):
    return UserFactory(username="lastyear")


def record(campaign, topics, assessor, dimension, rows):
    """rows: (key, topic number, doc id, label)."""
    text = "".join(f"{key}\t{topics[number].pk}\t{doc}\t{label}\n" for key, number, doc, label in rows)
    return record_judgments_in_bulk(
        campaign=campaign, rows=io.BytesIO(text.encode()), dimension=dimension, assessor=assessor, phase="main"
    )


def history(assessor) -> list[tuple]:
    return list(
        JudgmentEvent.objects.filter(assessor=assessor)
        .order_by("judgment__topic__number", "judgment__document__doc_id", "revision")
        .values_list("judgment__document__doc_id", "revision", "labels", "source")
    )


def test_new_judgments_and_changes_get_their_history(campaign, topics, assessor):
    first = record(campaign, topics, assessor, "relevance", [(1, "1", "d1", 2), (2, "1", "d2", 0)])
    quality = record(campaign, topics, assessor, "quality", [(1, "1", "d1", 1)])
    again = record(campaign, topics, assessor, "relevance", [(1, "1", "d1", 2), (2, "1", "d2", 1)])

    assert (first.created, first.updated, first.stubs) == (2, 0, 2)
    assert (quality.created, quality.updated) == (0, 1)
    assert (again.created, again.updated) == (0, 1)  # d1 unchanged: no revision
    assert history(assessor) == [
        ("d1", 1, {"relevance": 2}, "import"), ("d1", 2, {"relevance": 2, "quality": 1}, "import"),
        ("d2", 1, {"relevance": 0}, "import"), ("d2", 2, {"relevance": 1}, "import"),
    ]


def test_any_dimension_creates_the_judgments_it_does_not_find(campaign, topics, assessor):
    """Formerly refused ("import relevance first"): a stance or quality file may now come first, and relevance
    merges into the judgments it created."""
    stance = record(campaign, topics, assessor, "stance", [(1, "1", "d1", "SECOND")])
    quality = record(campaign, topics, assessor, "quality", [(1, "1", "d1", 2), (2, "2", "d2", 0)])
    relevance = record(campaign, topics, assessor, "relevance", [(1, "1", "d1", 1)])

    assert (stance.created, quality.created, quality.updated, relevance.created, relevance.updated) == (1, 1, 1, 0, 1)
    assert history(assessor) == [
        ("d1", 1, {"stance": "SECOND"}, "import"), ("d1", 2, {"stance": "SECOND", "quality": 2}, "import"),
        ("d1", 3, {"stance": "SECOND", "quality": 2, "relevance": 1}, "import"), ("d2", 1, {"quality": 0}, "import"),
    ]


def test_it_writes_what_record_judgment_writes(campaign, topics, assessor):
    record(campaign, topics, assessor, "relevance", [(1, "2", "d1", 1)])
    record(campaign, topics, assessor, "stance", [(1, "2", "d1", "FIRST")])
    slow = UserFactory(username="slow")
    document = Document.objects.get(doc_id="d1")
    for labels in (Labels({"relevance": 1}), Labels({"relevance": 1, "stance": "FIRST"})):
        record_judgment(topic=topics["2"], document=document, assessor=slow, labels=labels, phase="main", source="import")

    fields = ("topic", "document", "phase", "labels", "note", "flagged", "revision", "source")
    assert Judgment.objects.filter(assessor=assessor).values(*fields).get() == Judgment.objects.filter(assessor=slow).values(*fields).get()


@pytest.mark.parametrize(
    "dimension, rows, key, message",
    [
        ("relevance", [(1, "1", "a", 1), (2, "1", "b", 7), (3, "1", "c", -2)], 2, "relevance 7 is not in the campaign's scheme"),
        ("relevance", [(5, "1", "a", 7), (3, "1", "b", -2)], 3, "relevance -2 is not in the campaign's scheme"),
        ("stance", [(1, "1", "a", "PRO")], 1, "stance PRO is not in the campaign's scheme"),
        ("quality", [(1, "1", "a", 1), (4, "1", "b", 3)], 4, "quality 3 is not in the campaign's scheme"),
    ],
)
def test_a_bad_row_is_named_by_its_key_and_nothing_is_stored(campaign, topics, assessor, dimension, rows, key, message):
    with pytest.raises(RowError) as error:
        record(campaign, topics, assessor, dimension, rows)

    assert error.value.key == key and str(error.value).startswith(message)
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists() and not Document.objects.exists()
