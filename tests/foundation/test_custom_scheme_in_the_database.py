"""The database checks a campaign's own dimensions as it checks a preset's: a raw SQL statement (as someone with a
database shell would type it) that stores a value outside a custom dimension, a dimension the scheme lacks, or a
relabelling at the same revision, is refused by PostgreSQL itself."""

import json

import pytest
from django.db import IntegrityError, connection, transaction

from assessments.models import Judgment, JudgmentEvent
from assessments.services.judging import Labels, record_judgment
from tests.factories import CUSTOM_SCHEME, CampaignFactory, DocumentFactory, TopicFactory, UserFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the raw statements and error codes are PostgreSQL's"),
]

JUDGMENT, EVENT = Judgment._meta.db_table, JudgmentEvent._meta.db_table
CHECK_VIOLATION = "23514"


@pytest.fixture
def judgment() -> Judgment:
    campaign = CampaignFactory(preset="custom", scheme=CUSTOM_SCHEME)
    topic = TopicFactory(campaign=campaign)
    return record_judgment(topic=topic, document=DocumentFactory(collection=campaign.collection),
                           assessor=UserFactory(username="carol"), phase="main",
                           labels=Labels({"topical": 1, "usefulness": 3, "genre": "NEWS"}), conditions=True)


def refused(statement: str, params) -> IntegrityError:
    with pytest.raises(IntegrityError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, params)
    return caught.value


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"topical": 1, "usefulness": 4}, "usefulness 4 is not in the campaign's label scheme"),  # graded: 0–3
        ({"topical": 2}, "topical 2 is not in the campaign's label scheme"),  # a question is 1 or 0
        ({"topical": 1, "genre": "PAPER"}, 'genre "PAPER" is not in the campaign\'s label scheme'),
        ({"topical": 1, "usefulness": "3"}, 'usefulness "3" is not in the campaign\'s label scheme'),  # a string
        ({"topical": 1, "relevance": 2}, "relevance 2 is not in the campaign's label scheme"),  # not its dimension
        ({"topical": 1, "Genre": "NEWS"}, 'Genre "NEWS" is not in the campaign\'s label scheme'),  # names are exact
    ],
)
def test_an_insert_outside_a_custom_scheme_is_a_check_violation(judgment, labels, message):
    error = refused(
        f"""INSERT INTO {JUDGMENT} (topic_id, document_id, assessor_id, phase, labels, note, flagged, time_spent_ms,
                                    source, revision, created_at, updated_at)
            VALUES (%s, %s, %s, 'main', %s::jsonb, '', false, 0, 'web', 1, now(), now())""",
        [judgment.topic_id, judgment.document_id, UserFactory(username="dave").pk, json.dumps(labels)],
    )
    assert error.__cause__.pgcode == CHECK_VIOLATION and message in str(error)
    assert Judgment.objects.filter(topic_id=judgment.topic_id).count() == 1


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"topical": 1, "usefulness": 7}, "usefulness 7 is not in the campaign's label scheme"),
        ({"topical": 1, "usefulness": 3, "mood": "GLAD"}, 'mood "GLAD" is not in the campaign\'s label scheme'),
    ],
)
def test_an_update_outside_a_custom_scheme_is_a_check_violation(judgment, labels, message):
    error = refused(f"UPDATE {JUDGMENT} SET labels = %s::jsonb, revision = revision + 1 WHERE id = %s",
                    [json.dumps(labels), judgment.pk])
    assert error.__cause__.pgcode == CHECK_VIOLATION and message in str(error)
    judgment.refresh_from_db()
    assert (judgment.labels, judgment.revision) == ({"topical": 1, "usefulness": 3, "genre": "NEWS"}, 1)


@pytest.mark.parametrize(
    "change",
    [
        "labels = labels || '{\"usefulness\": 2}'",  # a value the scheme allows, at the same revision
        "labels = labels - 'genre'",  # a label taken away
        "labels = labels || '{\"source\": \"CITED\"}'",  # a label added
    ],
)
def test_a_custom_label_cannot_change_at_the_same_revision(judgment, change):
    error = refused(f"UPDATE {JUDGMENT} SET {change} WHERE id = %s", [judgment.pk])
    assert "a change of labels needs a new revision" in str(error)
    judgment.refresh_from_db()
    assert (judgment.labels, judgment.revision) == ({"topical": 1, "usefulness": 3, "genre": "NEWS"}, 1)
    assert list(judgment.events.values_list("revision", "labels")) == [(1, judgment.labels)]
