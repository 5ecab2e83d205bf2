"""Where the judge page resumes and moves to, from the assessor's own labels in presentation order."""

import pytest

from assessments.models import Document
from assessments.selectors import queues
from assessments.services.judging import Labels, record_judgment

pytestmark = pytest.mark.django_db


def judge_in_order(assignment, pool, positions):
    """Label the entries at these 1-based positions, in this order (later = more recent)."""
    for position in positions:
        entry = pool[position - 1]
        record_judgment(topic=entry.topic, document=entry.document, assessor=assignment.assessor,
                        labels=Labels({"relevance": 1}), phase="training")


@pytest.fixture
def five(assignment, pool, grow_pool):
    return pool + grow_pool(2)


@pytest.mark.parametrize(
    ("judged_in_this_order", "expected"),
    [
        ([], 1),  # nothing judged: start at the top
        ([1, 2], 3),  # judged in order: the frontier
        ([1, 3], 4),  # skipped #2, judged #3 last: carry on after #3, not back to #2
        ([2, 3, 1], 4),  # went back and re-judged #1 last: the first unjudged after it
        ([4, 5], 1),  # judged the end last: wrap round to the skipped first one
        ([1, 2, 3, 5, 4], 4),  # all judged: stay on the one judged last
    ],
)
def test_resume_goes_to_the_first_unjudged_after_the_last_judged(assignment, five, judged_in_this_order, expected):
    judge_in_order(assignment, five, judged_in_this_order)
    assert queues.resume_position(assignment) == expected


def test_an_empty_queue_has_nowhere_to_resume(alice, training_topic):
    from assessments.models import Assignment

    assert queues.resume_position(Assignment.objects.get(assessor=alice)) is None


def test_a_position_knows_its_counts_and_unjudged_neighbours(assignment, five):
    judge_in_order(assignment, five, [1, 3, 4])
    here = queues.queue_position(assignment, 3)
    assert (here.entry_id, here.position, here.total, here.judged, here.is_judged) == (five[2].pk, 3, 5, 3, True)
    assert (here.preceding_unjudged, here.following_unjudged, here.next_unjudged) == (2, 5, 5)
    last = queues.queue_position(assignment, 5)
    assert (last.following_unjudged, last.next_unjudged) == (None, 2)  # wraps round, never to itself
    assert queues.queue_position(assignment, 6) is None


def test_a_position_reads_its_document_with_it_when_asked(assignment, five, django_assert_num_queries):
    expected = Document.objects.get(pk=five[2].document_id)
    with django_assert_num_queries(1):
        document = queues.queue_position(assignment, 3, with_document=True).document
        assert (document.pk, document.doc_id, document.title, document.body, document.is_html, document.url, document.has_text) == (
            expected.pk, expected.doc_id, expected.title, expected.body, expected.is_html, expected.url, expected.has_text
        )
    assert document.get_deferred_fields() == {"text_hash"}
    assert queues.queue_position(assignment, 3).document is None


def test_another_assessors_labels_do_not_move_anyone(assignment, bob_assignment, five):
    judge_in_order(bob_assignment, five, [1, 2, 3])
    assert queues.resume_position(assignment) == 1
    assert queues.queue_position(assignment, 1).judged == 0
