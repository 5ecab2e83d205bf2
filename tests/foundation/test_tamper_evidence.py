"""The judgment record cannot be rewritten by any statement, not only by the application's own code paths.

Every statement here is raw SQL through a cursor, as someone with a database shell would type it, and the
database itself refuses it. Checks that PostgreSQL runs at commit are run with ``SET CONSTRAINTS ALL
IMMEDIATE``, since a test's transaction never commits (one test commits for real, to show the same).
"""

import pytest
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

from assessments.models import (
    Campaign,
    Document,
    Judgment,
    QrelsSnapshot,
    QrelsSnapshotPart,
    Reply,
    Topic,
)
from assessments.services.judging import Labels, record_judgment
from tests.factories import DocumentFactory, TopicFactory, UserFactory
from tests.foundation.raw_sql import EVENT, EVENT_COLUMNS, JUDGMENT, at_commit, sql

pytestmark = pytest.mark.django_db



def refused(statement: str, params=(), *, message: str, deferred: bool = False) -> None:
    at_commit()  # the fixtures' own checks first (TRUNCATE also refuses to run while checks are pending)
    with pytest.raises(IntegrityError, match=message), transaction.atomic():
        sql(statement, params)
        if deferred:
            at_commit()


@pytest.fixture
def judgment(campaign) -> Judgment:
    topic = TopicFactory(campaign=campaign, number="7")
    document = DocumentFactory(collection=campaign.collection)
    carol = UserFactory(username="carol")
    record_judgment(topic=topic, document=document, assessor=carol, labels=Labels({"relevance": 1}), phase="main")
    return record_judgment(topic=topic, document=document, assessor=carol, labels=Labels({"relevance": 2, "quality": 1}), phase="main")


def history(judgment: Judgment) -> list[tuple]:
    return [(revision, labels.get("relevance"), labels.get("quality"))
            for revision, labels in judgment.events.order_by("revision").values_list("revision", "labels")]


def test_the_service_writes_what_the_database_accepts(judgment):
    at_commit()  # record_judgment updated the judgment, then appended its history row
    assert history(judgment) == [(1, 1, None), (2, 2, 1)]


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (f"UPDATE {EVENT} SET labels = '{{\"relevance\": 0}}'", "append-only"),
        (f"DELETE FROM {EVENT}", "judgment history is append-only: DELETE is refused"),
        (f"DELETE FROM {EVENT} WHERE revision = 2", "append-only: DELETE"),
        (f"TRUNCATE {EVENT}", "judgment history is append-only: TRUNCATE is refused"),
        (f"DELETE FROM {JUDGMENT}", "judgments are kept with their history: DELETE is refused"),
        # With the tables that refer to judgments (organisers' replies), so the trigger answers, not a foreign key.
        (f"TRUNCATE {JUDGMENT}, {EVENT}, {Reply._meta.db_table}", "TRUNCATE is refused"),
        (f"TRUNCATE {JUDGMENT} CASCADE", "TRUNCATE is refused"),
    ],
)
def test_history_and_judgments_cannot_be_deleted_or_rewritten(judgment, statement, message):
    refused(statement, message=message)
    assert history(judgment) == [(1, 1, None), (2, 2, 1)]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("labels = labels || '{\"relevance\": 0}'", "a change of labels needs a new revision"),
        ("labels = labels - 'quality'", "a change of labels needs a new revision"),
        ("note = 'changed my mind'", "a change of labels needs a new revision"),
        ("flagged = true", "a change of labels needs a new revision"),
        ("labels = '{\"relevance\": 1}', revision = 1", "revision cannot go back from 2 to 1"),
        ("document_id = document_id + 1", "topic, document and assessor cannot change"),
        ("assessor_id = assessor_id + 1", "topic, document and assessor cannot change"),
        # A training label passed off as a main-phase one, a label backdated, an answer relabelled as imported.
        ("phase = 'training'", "nor its phase or creation time"),
        ("created_at = created_at - interval '30 days'", "nor its phase or creation time"),
        ("source = 'import'", "its source changes only with a new revision"),
    ],
)
def test_a_judgment_cannot_be_relabelled_in_place(judgment, change, message):
    refused(f"UPDATE {JUDGMENT} SET {change} WHERE id = %s", [judgment.pk], message=message)
    judgment.refresh_from_db()
    assert (judgment.labels, judgment.revision) == ({"relevance": 2, "quality": 1}, 2)


def test_a_new_revision_without_its_history_row_is_refused_at_commit(judgment):
    refused(f"UPDATE {JUDGMENT} SET labels = '{{\"relevance\": 0}}', revision = 3 WHERE id = %s", [judgment.pk],
            message=f"judgment {judgment.pk}: revision 3 has no history row with its labels", deferred=True)
    judgment.refresh_from_db()
    assert (judgment.labels, judgment.revision) == ({"relevance": 2, "quality": 1}, 2)


def test_a_history_row_must_hold_the_labels_it_claims(judgment):
    with pytest.raises(IntegrityError, match="revision 3 has no history row with its labels"), transaction.atomic():
        sql(f"UPDATE {JUDGMENT} SET labels = '{{\"relevance\": 0}}', revision = 3 WHERE id = %s", [judgment.pk])
        sql(f"INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 3, '{{\"relevance\": 2, \"quality\": 1}}', '', false, 0, 'web', now() "
            f"FROM {JUDGMENT} WHERE id = %s", [judgment.pk])
        at_commit()


def test_a_history_row_ahead_of_its_judgment_is_refused_at_commit(judgment):
    """Otherwise a history row written today could cover a silent relabelling tomorrow."""
    refused(f"INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 3, '{{\"relevance\": 0}}', '', false, 0, 'web', now() "
            f"FROM {JUDGMENT} WHERE id = %s", [judgment.pk],
            message="history row for revision 3 is ahead of the judgment", deferred=True)
    assert history(judgment) == [(1, 1, None), (2, 2, 1)]


def test_a_judgment_inserted_without_history_is_refused_at_commit(campaign):
    topic = TopicFactory(campaign=campaign, number="8")
    document = DocumentFactory(collection=campaign.collection)
    refused(
        f"""INSERT INTO {JUDGMENT} (topic_id, document_id, assessor_id, phase, labels, note, flagged,
                                    time_spent_ms, source, revision, created_at, updated_at)
            VALUES (%s, %s, %s, 'main', '{{"relevance": 1}}', '', false, 0, 'web', 1, now(), now())""",
        [topic.pk, document.pk, UserFactory(username="dave").pk],
        message="revision 1 has no history row", deferred=True,
    )
    assert not Judgment.objects.filter(topic=topic).exists()


@pytest.mark.parametrize("event_first", [False, True])
def test_a_relabelling_with_its_history_row_in_the_same_transaction_is_accepted(judgment, event_first):
    """In either order: the check waits for the commit."""
    update = (f"UPDATE {JUDGMENT} SET labels = '{{\"relevance\": 0}}', revision = 3 WHERE id = %s", [judgment.pk])
    event = (f"INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 3, '{{\"relevance\": 0}}', '', false, 0, 'web', now() "
             f"FROM {JUDGMENT} WHERE id = %s", [judgment.pk])
    for statement in (event, update) if event_first else (update, event):
        sql(*statement)
    at_commit()
    assert history(judgment) == [(1, 1, None), (2, 2, 1), (3, 0, None)]


def test_time_spent_may_grow_without_a_new_revision(judgment):
    sql(f"UPDATE {JUDGMENT} SET time_spent_ms = 90000 WHERE id = %s", [judgment.pk])
    at_commit()
    judgment.refresh_from_db()
    assert (judgment.time_spent_ms, judgment.revision) == (90000, 2)


@pytest.mark.parametrize(
    "table", [Topic._meta.db_table, Document._meta.db_table, Campaign._meta.db_table],
)
def test_what_judgments_refer_to_cannot_be_deleted_by_sql(judgment, table):
    row = {Topic._meta.db_table: judgment.topic_id, Document._meta.db_table: judgment.document_id,
           Campaign._meta.db_table: judgment.topic.campaign_id}[table]
    with pytest.raises(IntegrityError), transaction.atomic():
        sql(f"DELETE FROM {table} WHERE id = %s", [row])
        at_commit()
    assert Judgment.objects.filter(pk=judgment.pk).exists()


@pytest.mark.parametrize("what", ["campaign", "topic", "document", "judgment"])
def test_what_judgments_refer_to_cannot_be_deleted_through_the_orm(judgment, what):
    instance = {"campaign": judgment.topic.campaign, "topic": judgment.topic, "document": judgment.document,
                "judgment": judgment}[what]
    with pytest.raises(ProtectedError), transaction.atomic():
        instance.delete()
    assert history(judgment) == [(1, 1, None), (2, 2, 1)]


def test_a_campaign_with_a_qrels_snapshot_is_refused_by_the_orm_before_any_row_goes(campaign):
    snapshot = QrelsSnapshot.objects.create(campaign=campaign, number=1, kind="relevance", phase="main", rule="majority", sha256="0" * 64)
    QrelsSnapshotPart.objects.create(snapshot=snapshot, index=0, data=b"1 0 d 1\n")
    for instance in (campaign, snapshot):
        with pytest.raises(ProtectedError), transaction.atomic():
            instance.delete()
    assert snapshot.parts.count() == 1 and Campaign.objects.filter(pk=campaign.pk).exists()


def test_a_campaign_without_judgments_can_still_be_deleted(campaign):
    TopicFactory(campaign=campaign)
    campaign.delete()
    assert not Campaign.objects.filter(pk=campaign.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_silent_relabelling_fails_at_a_real_commit(campaign):
    topic = TopicFactory(campaign=campaign, number="9")
    document = DocumentFactory(collection=campaign.collection)
    judgment = record_judgment(topic=topic, document=document, assessor=UserFactory(username="erin"),
                               labels=Labels({"relevance": 1}), phase="main")
    with pytest.raises(IntegrityError, match="revision 2 has no history row"):
        with transaction.atomic():
            sql(f"UPDATE {JUDGMENT} SET labels = '{{\"relevance\": 2}}', revision = 2 WHERE id = %s", [judgment.pk])
    judgment.refresh_from_db()
    assert (judgment.labels, judgment.revision, history(judgment)) == ({"relevance": 1}, 1, [(1, 1, None)])
