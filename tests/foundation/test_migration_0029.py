"""Migration 0029 numbers the items assignments hold already, in their queue's order (pool `order`, then entry id),
gives each its entry's document, and goes back."""

import pytest

from tests.foundation.test_migrations import migrate, newest, rebuilt_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("assessments", "0028_judgment_fixed_fields")]
AFTER = [("assessments", "0029_assignment_item_positions")]


def test_the_items_there_are_numbered_in_queue_order_and_the_columns_go_back():
    model = rebuilt_at(BEFORE).get_model
    try:
        collection = model("assessments", "Collection").objects.create(slug="m", name="M")
        campaign = model("assessments", "Campaign").objects.create(slug="m", name="M", preset="custom", scheme={}, collection=collection)
        topic = model("assessments", "Topic").objects.create(campaign=campaign, number="1", title="t")
        documents = {name: model("assessments", "Document").objects.create(collection=collection, doc_id=name) for name in "abcde"}
        # Pool order: c (0), a and e (1: by id, a first), d (2), b (3).
        entries = {name: model("assessments", "PoolEntry").objects.create(topic=topic, document=documents[name], order=order)
                   for name, order in (("a", 1), ("b", 3), ("c", 0), ("d", 2), ("e", 1))}
        carol = model("accounts", "User").objects.create(username="carol", password="-")
        dan = model("accounts", "User").objects.create(username="dan", password="-")
        held = {}
        for user, names in ((carol, "bdac"), (dan, "eb")):
            assignment = model("assessments", "Assignment").objects.create(topic=topic, assessor=user, phase="main", scope="overlap")
            for name in names:  # stored out of queue order
                model("assessments", "AssignmentItem").objects.create(assignment=assignment, entry=entries[name])
            held[user.username] = assignment.pk

        item = migrate(AFTER).get_model("assessments", "AssignmentItem")
        for username, queue in (("carol", "cadb"), ("dan", "eb")):
            rows = item.objects.filter(assignment_id=held[username]).order_by("queue_position")
            assert [(r.queue_position, r.entry_document_id) for r in rows] == [
                (i, documents[name].pk) for i, name in enumerate(queue, 1)]
            assert [r.entry_id for r in rows] == [entries[name].pk for name in queue]

        item = migrate(BEFORE).get_model("assessments", "AssignmentItem")
        assert {f.name for f in item._meta.concrete_fields} == {"id", "assignment", "entry"}
        assert item.objects.count() == 6
    finally:
        newest()
