"""Migration 0027 checks what the judgment record refers to once per statement instead of by per-row foreign keys:
a judgment's topic, document and assessor, a history row's judgment and assessor. The rules hold whatever path a
statement comes by, so every statement here is raw SQL, as someone with a database shell would type it:

- a row that refers to a topic, document, user or judgment that does not exist is refused (a history row's judgment
  at commit, as before: it may come later in the transaction);
- a topic, document, user or judgment that rows refer to cannot be deleted, truncated away or given another id.
"""

import pytest
from django.db import IntegrityError, transaction

from accounts.models import User
from assessments.models import Document, Judgment, JudgmentEvent, Topic
from assessments.services.judging import Labels, record_judgment
from tests.factories import DocumentFactory, TopicFactory, UserFactory
from tests.foundation.raw_sql import EVENT, EVENT_COLUMNS, JUDGMENT, at_commit, sql

pytestmark = pytest.mark.django_db

TOPIC, DOCUMENT, USER = Topic._meta.db_table, Document._meta.db_table, User._meta.db_table
JUDGMENT_COLUMNS = "topic_id, document_id, assessor_id, phase, labels, note, flagged, time_spent_ms, source, revision, created_at, updated_at"
MISSING = 987654321  # an id no row has


@pytest.fixture
def topic(campaign):
    return TopicFactory(campaign=campaign, number="7")


@pytest.fixture
def documents(campaign):
    return [DocumentFactory(collection=campaign.collection, doc_id=f"d{i}") for i in range(4)]


@pytest.fixture
def dave(db):
    return UserFactory(username="dave")


@pytest.fixture
def judgment(topic, documents, dave) -> Judgment:
    judgment = record_judgment(topic=topic, document=documents[0], assessor=dave, labels=Labels({"relevance": 1}), phase="main")
    at_commit()
    return judgment


def insert_judgments(topic_ids, document_ids, assessor_ids) -> None:
    """One statement inserting a judgment per (topic, document, assessor), each with its history row."""
    sql(
        f"""WITH wanted AS (SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS w(topic_id, document_id, assessor_id)),
                 created AS (
                   INSERT INTO {JUDGMENT} ({JUDGMENT_COLUMNS})
                   SELECT topic_id, document_id, assessor_id, 'main', '{{"relevance": 1}}', '', false, 0, 'import', 1, now(), now()
                     FROM wanted RETURNING id, assessor_id, labels)
            INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 1, labels, '', false, 0, 'import', now() FROM created""",
        [list(topic_ids), list(document_ids), list(assessor_ids)],
    )


def test_judgments_that_refer_to_existing_rows_are_accepted(topic, documents, dave):
    insert_judgments([topic.pk] * 4, [d.pk for d in documents], [dave.pk] * 4)
    at_commit()
    assert Judgment.objects.filter(assessor=dave).count() == JudgmentEvent.objects.filter(assessor=dave).count() == 4


@pytest.mark.parametrize("dangling", ["topic_id", "document_id", "assessor_id"])
@pytest.mark.parametrize("rows", [1, 4])
def test_a_judgment_that_refers_to_a_missing_row_is_refused(topic, documents, dave, dangling, rows):
    """One dangling reference among the statement's rows (the last) refuses the statement, by SQL."""
    columns = {"topic_id": [topic.pk] * rows, "document_id": [d.pk for d in documents[:rows]], "assessor_id": [dave.pk] * rows}
    columns[dangling][-1] = MISSING
    with pytest.raises(IntegrityError, match=f"{dangling} {MISSING} refers to a row of .* that does not exist"), transaction.atomic():
        insert_judgments(columns["topic_id"], columns["document_id"], columns["assessor_id"])
    assert not Judgment.objects.filter(assessor=dave).exists()


def test_a_history_row_of_a_missing_assessor_is_refused(judgment):
    with pytest.raises(IntegrityError, match=f"assessor_id {MISSING} refers to a row of"), transaction.atomic():
        sql(f"INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, %s, 2, labels, note, flagged, 0, 'web', now() FROM {JUDGMENT} WHERE id = %s",
            [MISSING, judgment.pk])


def test_a_history_row_of_a_missing_judgment_is_refused_at_commit(dave):
    sql(f"""INSERT INTO {EVENT} ({EVENT_COLUMNS}) VALUES (%s, %s, 1, '{{"relevance": 1}}', '', false, 0, 'web', now())""", [MISSING, dave.pk])
    with pytest.raises(IntegrityError, match=f"judgment {MISSING}: a history row .* refers to a judgment that does not exist"):
        at_commit()


def test_a_history_row_may_come_before_its_judgment_in_the_transaction(topic, documents, dave):
    """As with the deferred foreign key it replaces: the order of the two inserts inside a transaction is free."""
    (pk,) = sql("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [JUDGMENT])[0]
    sql(f"""INSERT INTO {EVENT} ({EVENT_COLUMNS}) VALUES (%s, %s, 1, '{{"relevance": 1}}', '', false, 0, 'web', now())""", [pk, dave.pk])
    sql(f"""INSERT INTO {JUDGMENT} (id, {JUDGMENT_COLUMNS})
            VALUES (%s, %s, %s, %s, 'main', '{{"relevance": 1}}', '', false, 0, 'web', 1, now(), now())""",
        [pk, topic.pk, documents[1].pk, dave.pk])
    at_commit()
    assert Judgment.objects.get(pk=pk).events.count() == 1


def _referred(judgment: Judgment, table: str) -> int:
    return {TOPIC: judgment.topic_id, DOCUMENT: judgment.document_id, USER: judgment.assessor_id, JUDGMENT: judgment.pk}[table]


@pytest.mark.parametrize("table", [TOPIC, DOCUMENT, USER])
def test_a_row_that_judgments_refer_to_cannot_be_deleted_by_sql(judgment, table):
    with pytest.raises(IntegrityError, match=f"{table}: DELETE of row {_referred(judgment, table)} is refused"), transaction.atomic():
        sql(f"DELETE FROM {table} WHERE id = %s", [_referred(judgment, table)])
    assert Judgment.objects.filter(pk=judgment.pk).exists()


@pytest.mark.parametrize("table", [TOPIC, DOCUMENT, USER, JUDGMENT])
def test_a_row_that_the_record_refers_to_keeps_its_id(judgment, table):
    with pytest.raises(IntegrityError, match="is refused"), transaction.atomic():
        sql(f"UPDATE {table} SET id = %s WHERE id = %s", [MISSING, _referred(judgment, table)])
    assert Judgment.objects.filter(pk=judgment.pk, topic_id=judgment.topic_id, document_id=judgment.document_id).exists()


@pytest.mark.parametrize("table", [TOPIC, DOCUMENT, USER])
def test_a_table_that_judgments_refer_to_cannot_be_truncated(judgment, table):
    with pytest.raises(IntegrityError, match=f"{table}: TRUNCATE of row .* is refused"), transaction.atomic():
        sql(f"TRUNCATE {table} CASCADE")
    assert Judgment.objects.filter(pk=judgment.pk).exists()


def test_rows_that_nothing_refers_to_can_still_be_deleted_and_renumbered(judgment, campaign):
    other = TopicFactory(campaign=campaign, number="8")
    document = DocumentFactory(collection=campaign.collection, doc_id="free")
    user = UserFactory(username="erin")
    sql(f"UPDATE {TOPIC} SET id = %s WHERE id = %s", [MISSING, other.pk])
    for table, pk in ((TOPIC, MISSING), (DOCUMENT, document.pk), (USER, user.pk)):
        sql(f"DELETE FROM {table} WHERE id = %s", [pk])
    at_commit()
    assert not Topic.objects.filter(pk__in=[other.pk, MISSING]).exists() and not User.objects.filter(pk=user.pk).exists()


def test_the_records_references_have_no_per_row_foreign_keys():
    """What replaced them is what the tests above hold; the per-row checks cost a million-line import 16 s."""
    keys = sql("""SELECT conrelid::regclass::text, a.attname FROM pg_constraint c
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
                  WHERE c.contype = 'f' AND c.conrelid IN (%s::regclass, %s::regclass)""", [JUDGMENT, EVENT])
    assert keys == []


def test_the_indexes_the_foreign_keys_had_go_where_a_wider_one_starts_with_the_same_column():
    """Or nowhere, where nothing reads by the column alone: a history row's assessor (0032), a pool entry's document
    (0031); each was an insertion per row of a bulk import or a pool build."""
    indexes = {table: [columns for (columns,) in sql(
        """SELECT array_agg(a.attname ORDER BY k.n) FROM pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, n), pg_attribute a
           WHERE i.indrelid = %s::regclass AND a.attrelid = i.indrelid AND a.attnum = k.attnum GROUP BY i.indexrelid""", [table])]
        for table in (JUDGMENT, EVENT, "assessments_poolentry")}
    assert sorted(indexes[JUDGMENT]) == [["assessor_id", "topic_id", "document_id"], ["document_id"], ["id"], ["topic_id", "document_id"]]
    assert sorted(indexes[EVENT]) == [["at"], ["id"], ["judgment_id", "revision"]]
    assert sorted(indexes["assessments_poolentry"]) == [["duplicate_of_id"], ["id"], ["topic_id", "document_id"], ["topic_id", "order"]]
