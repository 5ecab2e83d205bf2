"""record_judgment keeps every change and is safe to repeat."""

import pytest

from assessments.models import JudgmentEvent
from assessments.services.judging import JudgmentError, Labels, StaleRevision, record_judgment

pytestmark = pytest.mark.django_db


def save(pool_entry, assessor, time_spent_ms=0, **labels):
    return record_judgment(
        topic=pool_entry.topic, document=pool_entry.document, assessor=assessor,
        labels=Labels(**labels), phase="training", time_spent_ms=time_spent_ms,
    )


def test_every_change_is_kept_in_the_history(pool, alice):
    save(pool[0], alice, relevance=1)
    save(pool[0], alice, relevance=2, quality=1, stance="SECOND")
    judgment = save(pool[0], alice, relevance=2, quality=2, stance="SECOND", note="compares both")
    assert judgment.revision == 3
    history = list(judgment.events.values_list("revision", "relevance", "quality", "stance", "note"))
    assert history == [(1, 1, None, "", ""), (2, 2, 1, "SECOND", ""), (3, 2, 2, "SECOND", "compares both")]


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
    assert not JudgmentEvent.objects.exists()


def test_changes_keep_the_labels_not_given_and_a_stale_base_stores_nothing(pool, alice):
    save(pool[0], alice, relevance=2, quality=1, note="why")
    changed = record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, phase="training",
                              changes={"stance": "FIRST"}, base_revision=1)
    assert (changed.revision, changed.relevance, changed.quality, changed.stance, changed.note) == (2, 2, 1, "FIRST", "why")
    with pytest.raises(StaleRevision) as refused:
        record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, phase="training",
                        changes={"relevance": 0, "quality": None, "stance": ""}, base_revision=1)
    assert refused.value.judgment.revision == 2
    assert list(JudgmentEvent.objects.values_list("revision", flat=True)) == [1, 2]
