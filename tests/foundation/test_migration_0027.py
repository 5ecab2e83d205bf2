"""Migration 0027 applies to a database that holds judgments, and goes back: the foreign keys it replaced with checks
per statement come back, over the same rows, and forward again."""

import pytest
from django.db import connection, transaction

from tests.foundation.test_migrations import migrate, newest, rebuilt_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("assessments", "0026_machine_judges")]
REFERENCES = [("assessments_judgment", "topic_id"), ("assessments_judgment", "document_id"), ("assessments_judgment", "assessor_id"),
              ("assessments_judgmentevent", "judgment_id"), ("assessments_judgmentevent", "assessor_id")]


def foreign_keys() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute("""SELECT conrelid::regclass::text, a.attname FROM pg_constraint c
                          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
                          WHERE c.contype = 'f' AND c.conrelid IN ('assessments_judgment'::regclass, 'assessments_judgmentevent'::regclass)
                          ORDER BY 1, 2""")
        return cursor.fetchall()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the checks per statement are PostgreSQL's")
def test_the_foreign_keys_go_and_come_back_over_judgments():
    model = rebuilt_at(BEFORE).get_model
    try:
        collection = model("assessments", "Collection").objects.create(slug="m", name="M")
        campaign = model("assessments", "Campaign").objects.create(
            slug="m", name="M", preset="custom", collection=collection,
            scheme={"version": 2, "dimensions": [{"name": "relevance", "kind": "graded", "values": [{"value": 1, "name": "R", "key": "1"}]}]})
        topic = model("assessments", "Topic").objects.create(campaign=campaign, number="1", title="t")
        document = model("assessments", "Document").objects.create(collection=collection, doc_id="a")
        carol = model("accounts", "User").objects.create(username="carol", password="-")
        with transaction.atomic():
            judgment = model("assessments", "Judgment").objects.create(topic=topic, document=document, assessor=carol, phase="main",
                                                                       labels={"relevance": 1})
            model("assessments", "JudgmentEvent").objects.create(judgment=judgment, assessor=carol, revision=1, labels={"relevance": 1},
                                                                 source="web")
        assert sorted(foreign_keys()) == sorted(REFERENCES)

        newest()
        assert foreign_keys() == []
        migrate(BEFORE)
        assert sorted(foreign_keys()) == sorted(REFERENCES)
        assert model("assessments", "JudgmentEvent").objects.filter(judgment_id=judgment.pk).count() == 1
    finally:
        newest()
    assert foreign_keys() == []
