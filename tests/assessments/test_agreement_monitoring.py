"""The monitoring figures: activity over time from the judgment history, time per judgment, and label mixes."""

from datetime import UTC, datetime
from unittest import mock

import pytest

from assessments.selectors.agreement import Scope
from assessments.selectors.monitoring import monitoring
from assessments.services.judging import Labels, record_judgment
from tests.factories import AssignmentFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


def judge(entry, assessor, relevance, *, at=None, ms=0, source="web", phase="training"):
    at = at or datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    with mock.patch("django.utils.timezone.now", return_value=at):
        return record_judgment(
            topic=entry.topic, document=entry.document, assessor=assessor, labels=Labels({"relevance": relevance}),
            phase=phase, time_spent_ms=ms, source=source,
        )


def test_activity_counts_first_labels_per_hour_from_the_history(campaign, training_topic, alice, bob):
    entries = [PoolEntryFactory(topic=training_topic) for _ in range(4)]
    judge(entries[0], alice, 1, at=datetime(2024, 3, 1, 10, 5, tzinfo=UTC))
    judge(entries[1], alice, 1, at=datetime(2024, 3, 1, 10, 40, tzinfo=UTC))
    judge(entries[1], alice, 2, at=datetime(2024, 3, 2, 12, 0, tzinfo=UTC))  # a change, not a new judgment
    judge(entries[2], alice, 0, at=datetime(2024, 3, 2, 12, 30, tzinfo=UTC))
    judge(entries[0], bob, 0, at=datetime(2024, 3, 1, 11, 59, tzinfo=UTC))
    judge(entries[3], bob, 0, at=datetime(2024, 3, 1, 11, 0, tzinfo=UTC), source="import")  # nobody's work here

    activity = monitoring(campaign=campaign, scope=Scope("training")).activity

    assert activity.unit == "hour"  # 27 hours: too many quarter hours, few enough hours
    assert activity.starts[0] == datetime(2024, 3, 1, 10, tzinfo=UTC) and len(activity.starts) == 27
    assert activity.by_assessor == {"alice": [2] + [0] * 25 + [1], "bob": [0, 1] + [0] * 25}
    assert activity.totals[:2] == [2, 1] and activity.totals[-1] == 1 and sum(activity.totals) == 4
    assert activity.by_pair[("alice", "1")] == activity.by_assessor["alice"]


def test_activity_over_more_than_four_days_is_counted_per_day(campaign, training_topic, alice):
    entries = [PoolEntryFactory(topic=training_topic) for _ in range(3)]
    for entry, day in zip(entries, (1, 1, 9)):
        judge(entry, alice, 1, at=datetime(2024, 3, day, 15, tzinfo=UTC))

    activity = monitoring(campaign=campaign, scope=Scope("training")).activity

    assert activity.unit == "day" and len(activity.starts) == 9
    assert activity.by_assessor["alice"][0] == 2 and activity.by_assessor["alice"][8] == 1


def test_an_assessor_who_judges_in_two_seconds_stands_out(campaign, training_topic, alice, bob):
    entries = [PoolEntryFactory(topic=training_topic) for _ in range(12)]
    for i, entry in enumerate(entries):
        judge(entry, alice, 1, ms=2000 if i < 7 else 40_000)  # 7 of 12 under 3 s: the median is under 3 s
        judge(entry, bob, 1, ms=2000 if i < 6 else 40_000)  # 6 of 12: the median is (2 s + 40 s)/2, not under

    timing = {t.assessor: t for t in monitoring(campaign=campaign, scope=Scope("training")).timing}

    assert timing["alice"].fast and not timing["bob"].fast
    assert timing["alice"].buckets == [7, 0, 0, 5, 0, 0]  # < 3 s, 3–10, 10–30, 30–60, 1–2 min, > 2 min
    assert timing["alice"].mean_s == pytest.approx((7 * 2 + 5 * 40) / 12)


def test_imported_judgments_have_no_time_to_judge(campaign, training_topic, alice):
    for entry in [PoolEntryFactory(topic=training_topic) for _ in range(12)]:
        judge(entry, alice, 1, source="import")

    (timing,) = monitoring(campaign=campaign, scope=Scope("training")).timing

    assert timing.timed == 0 and timing.mean_s is None and not timing.fast


def test_an_assessor_who_marks_nearly_everything_0_stands_out(campaign, training_topic, alice, bob):
    carol = UserFactory(username="carol")
    AssignmentFactory(topic=training_topic, assessor=carol, phase="training")
    entries = [PoolEntryFactory(topic=training_topic) for _ in range(12)]
    for i, entry in enumerate(entries):
        judge(entry, alice, i % 3)
        judge(entry, bob, (i + 1) % 3)
        judge(entry, carol, 0 if i else 1)

    mix = {row.assessor: row for row in monitoring(campaign=campaign, scope=Scope("training")).label_mix["relevance"]}

    # carol: 11/12 zeros, 1/12 ones. Everyone else: 8/24 of each label. Distance ½(|11/12 − 1/3| + |1/12 − 1/3| + 1/3).
    assert mix["carol"].distance == pytest.approx((7 / 12 + 3 / 12 + 4 / 12) / 2)
    assert mix["carol"].stands_out and not mix["alice"].stands_out and not mix["bob"].stands_out
    assert mix[""].total == 36 and [round(share, 3) for _, _, share in mix["carol"].shares] == [0.917, 0.083, 0.0]


def test_progress_compares_judged_with_the_pool_per_assignment(campaign, training_topic, alice, bob):
    entries = [PoolEntryFactory(topic=training_topic) for _ in range(4)]
    for entry in entries[:3]:
        judge(entry, alice, 1)
    judge(entries[0], bob, 1)
    other = TopicFactory(campaign=campaign, number="2")
    AssignmentFactory(topic=other, assessor=alice, phase="main")

    progress = {(p.assessor, p.topic): p for p in monitoring(campaign=campaign, scope=Scope("training")).progress}

    assert set(progress) == {("alice", "1"), ("bob", "1")}  # the main-phase topic is not in the training scope
    assert (progress["alice", "1"].judged, progress["alice", "1"].expected) == (3, 4)
    assert progress["bob", "1"].share == 0.25
