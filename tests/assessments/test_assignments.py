"""Assigning topics: by hand, balanced automatically, reassigned, the overlap slice and the training rounds."""

import math

import pytest

from assessments.models import Assignment, AssignmentItem, Judgment, PoolEntry, Topic
from assessments.services import assignments
from assessments.services.assignments import AssignmentError
from assessments.services.judging import Labels, record_judgment
from tests.factories import PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


def main_topic(campaign, number, size, twins=0):
    """A main-phase topic with ``size`` pool entries, the last ``twins`` of them duplicates of the first."""
    topic = TopicFactory(campaign=campaign, number=str(number), position=int(number))
    entries = [PoolEntryFactory(topic=topic, order=i) for i in range(size)]
    for twin in entries[size - twins:]:
        twin.duplicate_of = entries[0]
        twin.save(update_fields=["duplicate_of"])
    return topic


def holders(campaign):
    return dict(
        Assignment.objects.filter(topic__campaign=campaign, phase="main", active=True, scope="full").values_list(
            "topic__number", "assessor__username"
        )
    )


@pytest.fixture
def ann(db):
    return UserFactory(username="ann")


@pytest.fixture
def ben(db):
    return UserFactory(username="ben")


def test_an_organiser_gives_topics_to_an_assessor(campaign, organiser, ann):
    topics = [main_topic(campaign, n, 3) for n in (2, 3, 8)]

    done = assignments.assign_topics(campaign=campaign, assessors=[ann], topics=topics, phase="main", assigned_by=organiser)

    assert [(a.topic.number, a.status) for a in done] == [("2", "new"), ("3", "new"), ("8", "new")]
    assert holders(campaign) == {"2": "ann", "3": "ann", "8": "ann"}
    assert set(Assignment.objects.values_list("assigned_by__username", flat=True)) == {"olivia"}


def test_assigning_again_changes_nothing(campaign, organiser, ann):
    topic = main_topic(campaign, 2, 3)
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[topic], phase="main", assigned_by=organiser)

    again = assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[topic], phase="main", assigned_by=organiser)

    assert again[0].status == "kept"
    assert Assignment.objects.count() == 1


def test_the_main_phase_has_one_assessor_per_topic(campaign, organiser, ann, ben):
    topic = main_topic(campaign, 2, 3)

    with pytest.raises(AssignmentError, match="one assessor"):
        assignments.assign_topics(campaign=campaign, assessors=[ann, ben], topics=[topic], phase="main", assigned_by=organiser)
    assert not Assignment.objects.exists()


def test_reassigning_moves_the_topic_and_keeps_every_judgment_with_its_author(campaign, organiser, ann, ben):
    topic = main_topic(campaign, 2, 3)
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[topic], phase="main", assigned_by=organiser)
    for entry in PoolEntry.objects.filter(topic=topic)[:2]:
        record_judgment(topic=topic, document=entry.document, assessor=ann, labels=Labels({"relevance": 1}), phase="main")
    before = list(Judgment.objects.values_list("pk", "assessor__username", "labels"))

    moved = assignments.assign_topics(campaign=campaign, assessors=[ben], topics=[topic], phase="main", assigned_by=organiser)

    assert moved[0].replaced == ("ann",)
    assert holders(campaign) == {"2": "ben"}
    assert Assignment.objects.get(assessor=ann).active is False  # kept, not deleted
    assert list(Judgment.objects.values_list("pk", "assessor__username", "labels")) == before
    row = assignments.assignment_overview(campaign=campaign).topics[0]
    assert row.judged == [("ann", 2, False)]
    assert [a.assessor.username for a in row.former] == ["ann"]


def test_a_judgment_with_only_a_note_is_not_counted_as_judged(campaign, organiser, ann):
    topic = main_topic(campaign, 2, 3)
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[topic], phase="main", assigned_by=organiser)
    first, second = PoolEntry.objects.filter(topic=topic).order_by("order")[:2]
    record_judgment(topic=topic, document=first.document, assessor=ann, labels=Labels({"relevance": 0}), phase="main")
    record_judgment(topic=topic, document=second.document, assessor=ann, labels=Labels(note="come back to it"), phase="main")
    assert assignments.assignment_overview(campaign=campaign).topics[0].judged == [("ann", 1, True)]


def test_giving_a_topic_back_reactivates_the_earlier_assignment(campaign, organiser, ann, ben):
    topic = main_topic(campaign, 2, 3)
    for person in (ann, ben, ann):
        last = assignments.assign_topics(campaign=campaign, assessors=[person], topics=[topic], phase="main", assigned_by=organiser)

    assert last[0].status == "reactivated" and last[0].replaced == ("ben",)
    assert Assignment.objects.count() == 2
    assert holders(campaign) == {"2": "ann"}


@pytest.mark.parametrize(
    "numbers, message",
    [(["2", "99"], "has no topic 99"), ([], "no topics given")],
)
def test_unknown_topics_are_named(campaign, numbers, message):
    main_topic(campaign, 2, 1)
    with pytest.raises(AssignmentError, match=message):
        assignments.find_topics(campaign=campaign, numbers=numbers)


def test_unknown_assessors_are_named(ann):
    with pytest.raises(AssignmentError, match="no active user zed"):
        assignments.find_assessors(usernames=["ann", "zed"])


def test_training_topics_are_kept_apart_from_main_phase_assignments(campaign, training_topic, organiser, ann):
    topic = main_topic(campaign, 2, 1)

    with pytest.raises(AssignmentError, match="topic 1 is a training topic"):
        assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[training_topic], phase="main", assigned_by=organiser)
    with pytest.raises(AssignmentError, match="topic 2 is not a training topic"):
        assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[topic], phase="training", assigned_by=organiser)


def test_every_training_assessor_gets_the_same_topic_in_the_current_round(campaign, training_topic, admin_user, ann, ben):
    done = assignments.assign_topics(
        campaign=campaign, assessors=[ann, ben], topics=[training_topic], phase="training", assigned_by=admin_user
    )

    assert [(a.assessor.username, a.status) for a in done] == [("ann", "new"), ("ben", "new")]
    assert set(Assignment.objects.filter(topic=training_topic).values_list("assessor__username", "round", "active")) == {
        ("ann", 1, True), ("ben", 1, True)
    }


def test_a_new_training_round_needs_new_topics(campaign, training_topic, admin_user, ann):
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[training_topic], phase="training", assigned_by=admin_user)
    campaign.phase = "training"
    campaign.save()
    assignments.close_training_round(campaign=campaign, then="next_round", by=None)
    campaign.refresh_from_db()
    second = TopicFactory(campaign=campaign, number="40", is_training=True)

    with pytest.raises(AssignmentError, match="topic 1 was used in training round 1; round 2 needs new training topics"):
        assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[training_topic], phase="training", assigned_by=admin_user)
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[second], phase="training", assigned_by=admin_user)

    assert set(Assignment.objects.values_list("topic__number", "round", "active")) == {("1", 1, False), ("40", 2, True)}


def test_closing_training_for_the_main_phase_freezes_the_round(campaign, training_topic, alice, bob):
    campaign.phase = "training"
    campaign.save()

    campaign = assignments.close_training_round(campaign=campaign, then="main", by=None)

    assert campaign.phase == "main" and campaign.training_round == 1
    assert not Assignment.objects.filter(phase="training", active=True).exists()
    with pytest.raises(AssignmentError, match="training is over"):
        assignments.assign_topics(campaign=campaign, assessors=[alice], topics=[training_topic], phase="training", assigned_by=None)


def test_a_round_without_topics_cannot_be_closed_into_the_next(campaign):
    campaign.phase = "training"
    campaign.save()
    with pytest.raises(AssignmentError, match="round 1 has no topics"):
        assignments.close_training_round(campaign=campaign, then="next_round", by=None)


def test_a_topic_held_for_the_main_phase_cannot_become_a_training_topic(campaign, organiser, ann):
    topic = main_topic(campaign, 2, 1)
    free = main_topic(campaign, 3, 1)
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[topic], phase="main", assigned_by=organiser)

    with pytest.raises(AssignmentError, match="topic 2 is assigned to ann for the main phase"):
        assignments.mark_training(campaign=campaign, topics=[topic, free], is_training=True, by=None)
    assert assignments.mark_training(campaign=campaign, topics=[free], is_training=True, by=None) == 1
    free.refresh_from_db()
    assert free.is_training


def test_a_closed_campaign_takes_no_assignments(campaign, ann):
    topic = main_topic(campaign, 2, 1)
    campaign.phase = "closed"
    campaign.save()
    with pytest.raises(AssignmentError, match="closed"):
        assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[topic], phase="main", assigned_by=None)


# --- automatic balancing ----------------------------------------------------------------------------------------


def test_auto_assignment_balances_pool_sizes_by_longest_processing_time(campaign, organiser, ann, ben):
    # Pools of 5, 10, 3, 8 and 4 documents. By hand: 10 → ann, 8 → ben, 5 → ben (8 < 10), 4 → ann (10 < 13),
    # 3 → ben (13 < 14): ann has 14 documents, ben 16.
    for number, size in zip((1, 2, 3, 4, 5), (5, 10, 3, 8, 4)):
        main_topic(campaign, number + 10, size)

    result = assignments.auto_assign(campaign=campaign, assessors=[ann, ben], assigned_by=organiser)

    assert holders(campaign) == {"11": "ben", "12": "ann", "13": "ben", "14": "ben", "15": "ann"}
    assert result.load == {"ann": 14, "ben": 16}


def test_auto_assignment_counts_duplicates_once_and_existing_work(campaign, organiser, ann, ben):
    # ann already holds a topic of 6 documents. New: 9 entries of which 4 are twins (5 to judge), and 4 entries.
    # By hand, ann starting at 6 and ben at 0: 5 → ben (0 < 6) = 5; 4 → ben (5 < 6) = 9.
    held = main_topic(campaign, 1, 6)
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[held], phase="main", assigned_by=organiser)
    main_topic(campaign, 2, 9, twins=4)
    main_topic(campaign, 3, 4)

    result = assignments.auto_assign(campaign=campaign, assessors=[ann, ben], assigned_by=organiser)

    assert holders(campaign) == {"1": "ann", "2": "ben", "3": "ben"}
    assert result.load == {"ann": 6, "ben": 9}


def test_auto_assignment_without_free_topics_or_pools_says_what_to_do(campaign, organiser, ann):
    topic = main_topic(campaign, 2, 0)
    with pytest.raises(AssignmentError, match="topic 2 has no pool yet"):
        assignments.auto_assign(campaign=campaign, assessors=[ann], assigned_by=organiser)
    assert not Assignment.objects.exists()
    PoolEntryFactory(topic=topic)
    assignments.auto_assign(campaign=campaign, assessors=[ann], assigned_by=organiser)
    with pytest.raises(AssignmentError, match="every main-phase topic has an assessor"):
        assignments.auto_assign(campaign=campaign, assessors=[ann], assigned_by=organiser)


def test_auto_assignment_skips_topics_without_a_pool_and_says_which(campaign, organiser, ann, ben):
    for number, size in ((1, 3), (2, 0), (3, 2), (4, 0)):
        main_topic(campaign, number, size)

    result = assignments.auto_assign(campaign=campaign, assessors=[ann, ben], assigned_by=organiser)

    assert holders(campaign) == {"1": "ann", "3": "ben"}
    assert result.skipped == ["2", "4"] and result.load == {"ann": 3, "ben": 2}
    # Once their pools are built, the next call takes the skipped topics (and balances them on the loads so far).
    PoolEntryFactory(topic=Topic.objects.get(campaign=campaign, number="2"))
    result = assignments.auto_assign(campaign=campaign, assessors=[ann, ben], assigned_by=organiser)
    assert holders(campaign) == {"1": "ann", "2": "ben", "3": "ben"} and result.skipped == ["4"]


# --- the overlap slice ------------------------------------------------------------------------------------------


@pytest.fixture
def shared_out(campaign, organiser, ann, ben):
    """Three main-phase topics of 40, 10 and 25 documents: ann holds the first two, ben the third."""
    topics = [main_topic(campaign, 1, 40), main_topic(campaign, 2, 10), main_topic(campaign, 3, 25)]
    for number, topic in enumerate(topics, 1):
        topic.pool_seed = 1000 + number
        topic.save(update_fields=["pool_seed"])
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=topics[:2], phase="main", assigned_by=organiser)
    assignments.assign_topics(campaign=campaign, assessors=[ben], topics=topics[2:], phase="main", assigned_by=organiser)
    return topics


def slice_entries(campaign):
    return {
        (item.assignment.topic.number, item.assignment.assessor.username, item.entry_id)
        for item in AssignmentItem.objects.select_related("assignment__topic", "assignment__assessor")
    }


def test_the_overlap_slice_gives_a_share_of_each_topic_to_someone_else(campaign, organiser, shared_out):
    drawn = assignments.draw_overlap(campaign=campaign, share=0.05, assigned_by=organiser)

    sizes = {s.topic.number: (s.holder, s.assessor, s.entries) for s in drawn.slices}
    assert sizes == {
        "1": ("ann", "ben", math.ceil(40 * 0.05)),
        "2": ("ann", "ben", math.ceil(10 * 0.05)),
        "3": ("ben", "ann", math.ceil(25 * 0.05)),
    }
    for number, second in (("1", "ben"), ("3", "ann")):
        slice_ = Assignment.objects.get(topic__number=number, scope="overlap")
        assert slice_.assessor.username == second
        entries = PoolEntry.objects.filter(pk__in=slice_.items.values("entry_id"))
        assert all(e.topic.number == number for e in entries)
    assert holders(campaign) == {"1": "ann", "2": "ann", "3": "ben"}  # the owners keep their topics


def test_the_overlap_slice_is_drawn_again_identically(campaign, organiser, shared_out):
    assignments.draw_overlap(campaign=campaign, share=0.1, assigned_by=organiser)
    first = slice_entries(campaign)
    for slice_ in Assignment.objects.filter(scope="overlap"):
        assignments.withdraw_assignment(campaign=campaign, assignment_id=slice_.pk, by=None)

    again = assignments.draw_overlap(campaign=campaign, share=0.1, assigned_by=organiser)

    assert slice_entries(campaign) == first
    assert again.skipped == []


def test_another_pool_seed_draws_another_slice(campaign, organiser, shared_out):
    assignments.draw_overlap(campaign=campaign, share=0.2, assigned_by=organiser)
    first = {e for e in slice_entries(campaign) if e[0] == "1"}
    AssignmentItem.objects.all().delete()
    Assignment.objects.filter(scope="overlap").update(active=False)
    shared_out[0].pool_seed = 999
    shared_out[0].save(update_fields=["pool_seed"])

    assignments.draw_overlap(campaign=campaign, share=0.2, assigned_by=organiser)

    assert {e for e in slice_entries(campaign) if e[0] == "1"} != first


def test_drawing_again_skips_topics_that_have_a_slice(campaign, organiser, shared_out):
    assignments.draw_overlap(campaign=campaign, share=0.05, assigned_by=organiser)

    again = assignments.draw_overlap(campaign=campaign, share=0.05, assigned_by=organiser)

    assert again.slices == [] and again.skipped == ["1", "2", "3"]
    assert AssignmentItem.objects.count() == 2 + 1 + 2


def test_the_overlap_uses_the_campaigns_share_and_refuses_none(campaign, organiser, shared_out):
    with pytest.raises(AssignmentError, match="overlap share 0.0 must be above 0"):
        assignments.draw_overlap(campaign=campaign, assigned_by=organiser)
    campaign.overlap_share = 0.5
    campaign.save()

    drawn = assignments.draw_overlap(campaign=campaign, assigned_by=organiser)

    assert [s.entries for s in drawn.slices] == [20, 5, 13]


def test_an_overlap_slice_needs_two_assessors(campaign, organiser, ann):
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[main_topic(campaign, 1, 5)], phase="main", assigned_by=organiser)
    with pytest.raises(AssignmentError, match="at least two assessors"):
        assignments.draw_overlap(campaign=campaign, share=0.5, assigned_by=organiser)


def test_the_slice_goes_to_the_least_loaded_other_assessor(campaign, organiser, ann, ben):
    # ann holds 30 documents, ben 5 and cat nothing: both slices go to the least-loaded assessor who is not the
    # topic's own: topic 1 (3 documents) → cat (0), topic 2 (1 document) → cat (3 < 30 and ben holds topic 2).
    cat = UserFactory(username="cat")
    big, small = main_topic(campaign, 1, 30), main_topic(campaign, 2, 5)
    assignments.assign_topics(campaign=campaign, assessors=[ann], topics=[big], phase="main", assigned_by=organiser)
    assignments.assign_topics(campaign=campaign, assessors=[ben], topics=[small], phase="main", assigned_by=organiser)

    drawn = assignments.draw_overlap(campaign=campaign, share=0.1, assessors=[ann, ben, cat], assigned_by=organiser)

    assert [(s.topic.number, s.assessor, s.entries) for s in drawn.slices] == [("1", "cat", 3), ("2", "cat", 1)]


def test_giving_the_whole_topic_to_its_second_assessor_ends_the_slice(campaign, organiser, shared_out, ben):
    assignments.draw_overlap(campaign=campaign, share=0.1, assigned_by=organiser)

    assignments.assign_topics(campaign=campaign, assessors=[ben], topics=[shared_out[0]], phase="main", assigned_by=organiser)

    row = Assignment.objects.get(topic=shared_out[0], assessor=ben)
    assert (row.scope, row.active, row.items.count()) == ("full", True, 0)
    assert holders(campaign)["1"] == "ben"
