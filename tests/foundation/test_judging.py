"""record_judgment keeps every change and is safe to repeat."""

import pytest

from assessments.models import Judgment, JudgmentEvent
from assessments.services.judging import JudgmentError, Labels, StaleRevision, record_judgment
from tests.factories import CUSTOM_SCHEME, CampaignFactory, DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


def save(pool_entry, assessor, time_spent_ms=0, note="", **values):
    return record_judgment(
        topic=pool_entry.topic, document=pool_entry.document, assessor=assessor,
        labels=Labels(values, note=note), phase="training", time_spent_ms=time_spent_ms,
    )


def test_every_change_is_kept_in_the_history(pool, alice):
    save(pool[0], alice, relevance=1)
    save(pool[0], alice, relevance=2, quality=1, stance="SECOND")
    judgment = save(pool[0], alice, relevance=2, quality=2, stance="SECOND", note="compares both")
    assert judgment.revision == 3
    history = list(judgment.events.values_list("revision", "labels", "note"))
    assert history == [
        (1, {"relevance": 1}, ""),
        (2, {"relevance": 2, "quality": 1, "stance": "SECOND"}, ""),
        (3, {"relevance": 2, "quality": 2, "stance": "SECOND"}, "compares both"),
    ]


def test_saving_the_same_labels_again_adds_nothing(pool, alice):
    first = save(pool[0], alice, relevance=2, quality=1, time_spent_ms=4000)
    again = save(pool[0], alice, relevance=2, quality=1, time_spent_ms=4000)
    assert again.pk == first.pk and again.revision == 1
    assert JudgmentEvent.objects.filter(judgment=first).count() == 1


def test_time_spent_is_a_running_total_that_a_retry_cannot_double(pool, alice):
    save(pool[0], alice, relevance=1, time_spent_ms=5000)
    save(pool[0], alice, relevance=1, time_spent_ms=5000)  # the same request retried
    judgment = save(pool[0], alice, relevance=1, time_spent_ms=8000)
    assert judgment.time_spent_ms == 8000
    assert judgment.revision == 1  # time alone is not a label change


def test_labels_outside_the_scheme_are_refused_with_a_reason(pool, alice):
    with pytest.raises(JudgmentError, match=r"relevance 3 is not one of \[0, 1, 2\]"):
        save(pool[0], alice, relevance=3)
    with pytest.raises(JudgmentError, match="stance 'PRO' is not one of"):
        save(pool[0], alice, relevance=1, stance="PRO")
    with pytest.raises(JudgmentError, match="'topicality' is not a label dimension of this campaign"):
        save(pool[0], alice, topicality=1)
    assert not JudgmentEvent.objects.exists()


def test_changes_keep_the_labels_not_given_and_a_stale_base_stores_nothing(pool, alice):
    save(pool[0], alice, relevance=2, quality=1, note="why")
    changed = record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, phase="training",
                              changes={"labels": {"stance": "FIRST"}}, base_revision=1)
    assert (changed.revision, changed.labels, changed.note) == (2, {"relevance": 2, "quality": 1, "stance": "FIRST"}, "why")
    with pytest.raises(StaleRevision) as refused:
        record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, phase="training",
                        changes={"labels": {"relevance": 0, "quality": None, "stance": None}}, base_revision=1)
    assert refused.value.judgment.revision == 2
    assert list(JudgmentEvent.objects.values_list("revision", flat=True)) == [1, 2]


def test_a_change_that_clears_a_label_removes_its_key(pool, alice):
    save(pool[0], alice, relevance=2, quality=1, stance="FIRST")
    changed = record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, phase="training",
                              changes={"labels": {"quality": None, "stance": None}}, base_revision=1)
    assert changed.labels == {"relevance": 2}
    assert Judgment.objects.get(pk=changed.pk).labels == {"relevance": 2}


@pytest.fixture
def custom():
    campaign = CampaignFactory(preset="custom", scheme=CUSTOM_SCHEME)
    return TopicFactory(campaign=campaign), DocumentFactory(collection=campaign.collection), UserFactory(username="carol")


def judge(custom, values=None, *, changes=None, conditions=True):
    topic, document, assessor = custom
    return record_judgment(topic=topic, document=document, assessor=assessor, phase="main", conditions=conditions,
                           labels=None if values is None else Labels(values), changes=changes)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"topical": 0, "usefulness": 2}, "usefulness is asked only when topical ≥ 1"),
        ({"usefulness": 3}, "usefulness is asked only when topical ≥ 1"),
        ({"topical": 1, "usefulness": 1, "source": "CITED"}, "source is asked only when usefulness ≥ 2"),
        ({"topical": 0, "source": "NONE"}, "source is asked only when usefulness ≥ 2"),
        ({"topical": 2}, r"topical 2 is not one of \[1, 0\]"),
        ({"topical": 1, "genre": "PAPER"}, "genre 'PAPER' is not one of"),
        ({"topical": 1, "usefulness": "3"}, "usefulness '3' is not one of"),
    ],
)
def test_a_custom_scheme_refuses_what_its_conditions_do_not_ask(custom, values, message):
    with pytest.raises(JudgmentError, match=message):
        judge(custom, values)
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()


def test_a_custom_scheme_stores_what_its_conditions_ask(custom):
    assert judge(custom, {"topical": 0, "genre": "FORUM"}).labels == {"topical": 0, "genre": "FORUM"}
    assert judge(custom, {"topical": 1, "usefulness": 1}).labels == {"topical": 1, "usefulness": 1}
    judgment = judge(custom, changes={"labels": {"usefulness": 3, "source": "CITED", "genre": "BLOG"}})
    assert judgment.labels == {"topical": 1, "usefulness": 3, "source": "CITED", "genre": "BLOG"}
    assert judgment.revision == 3
    stored = Judgment.objects.get(pk=judgment.pk)
    assert stored.labels == judgment.labels and stored.events.get(revision=3).labels == judgment.labels


def test_a_change_is_checked_on_the_labels_as_they_would_be_stored(custom):
    judge(custom, {"topical": 1, "usefulness": 3, "source": "NONE"})
    # Lowering the grade the source depends on leaves a source the scheme no longer asks: refused, nothing changed.
    with pytest.raises(JudgmentError, match="source is asked only when usefulness ≥ 2"):
        judge(custom, changes={"labels": {"usefulness": 1}})
    judgment = judge(custom, changes={"labels": {"usefulness": 1, "source": None}})
    assert (judgment.labels, judgment.revision) == ({"topical": 1, "usefulness": 1}, 2)


def test_without_conditions_an_import_may_store_what_they_do_not_ask(custom):
    """Imports (qrels files) keep what the file says: the scheme's values are checked, its conditions are not."""
    judgment = judge(custom, {"topical": 0, "usefulness": 2}, conditions=False)
    assert judgment.labels == {"topical": 0, "usefulness": 2}
    with pytest.raises(JudgmentError, match="usefulness 9 is not one of"):
        judge(custom, {"topical": 0, "usefulness": 9}, conditions=False)
