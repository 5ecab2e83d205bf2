"""Migration 0026 checks the judgment record once per statement, over all its rows, and leaves to the commit only
what a statement did not settle; the rules are those of 0008, 0020 and 0024, whatever path a statement comes by.

Every statement here is raw SQL inserting or updating many rows at once, as a bulk import or someone with a
database shell would. Checks that PostgreSQL runs at commit are run with ``SET CONSTRAINTS ALL IMMEDIATE``, since a
test's transaction never commits; what is left for the commit is read from `assessments_historycheck`.
"""

import pytest
from django.db import IntegrityError, transaction

from assessments.models import Judgment, JudgmentEvent
from assessments.services.judging import Labels, record_judgment
from tests.factories import DocumentFactory, TopicFactory, UserFactory
from tests.foundation.raw_sql import EVENT, EVENT_COLUMNS, JUDGMENT, at_commit, sql

pytestmark = pytest.mark.django_db

CHECKS = "assessments_historycheck"


def left_for_commit() -> int:
    return sql(f"SELECT count(*) FROM {CHECKS}")[0][0]


@pytest.fixture
def documents(campaign):
    return [DocumentFactory(collection=campaign.collection, doc_id=f"d{i}") for i in range(5)]


@pytest.fixture
def topic(campaign):
    return TopicFactory(campaign=campaign, number="7")


@pytest.fixture
def dave(db):
    return UserFactory(username="dave")


def insert_with_history(topic, documents, assessor, labels: list[str], *, history: list[str] | None = None) -> None:
    """One statement, as the qrels import writes it: a judgment per document with `labels` (JSON), and its history
    row with `history`'s labels (the same by default; None in `history`: no history row for that judgment)."""
    history = labels if history is None else history
    sql(
        f"""WITH wanted AS (SELECT * FROM unnest(%s::bigint[], %s::jsonb[], %s::jsonb[]) AS w(document_id, labels, kept)),
                 created AS (
                   INSERT INTO {JUDGMENT} (topic_id, document_id, assessor_id, phase, labels, note, flagged, time_spent_ms,
                                           source, revision, created_at, updated_at)
                   SELECT %s, document_id, %s, 'main', labels, '', false, 0, 'import', 1, now(), now() FROM wanted
                   RETURNING id, document_id, assessor_id)
            INSERT INTO {EVENT} ({EVENT_COLUMNS})
            SELECT c.id, c.assessor_id, 1, w.kept, '', false, 0, 'import', now()
              FROM created c JOIN wanted w ON w.document_id = c.document_id WHERE w.kept IS NOT NULL""",
        [[d.pk for d in documents], labels, history, topic.pk, assessor.pk],
    )


def test_a_statement_that_writes_judgments_with_their_history_leaves_nothing_to_the_commit(topic, documents, dave):
    assert left_for_commit() == 0
    insert_with_history(topic, documents, dave, ['{"relevance": 1}'] * 5)
    assert left_for_commit() == 0
    at_commit()
    assert Judgment.objects.filter(assessor=dave).count() == JudgmentEvent.objects.filter(assessor=dave).count() == 5


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (['{"relevance": 1}'] * 4 + ['{"relevance": 7}'], "relevance 7 is not in the campaign's label scheme"),
        (['{"relevance": 1}'] * 4 + ['{"relevance": 1, "coherence": 1}'], "coherence 1 is not in the campaign's label scheme"),
        (['{"relevance": 1}'] * 4 + ['[1]'], "labels must be a JSON object keyed by dimension"),
    ],
)
def test_one_bad_label_in_a_many_row_statement_refuses_the_whole_statement(topic, documents, dave, labels, message):
    with pytest.raises(IntegrityError, match=message), transaction.atomic():
        insert_with_history(topic, documents, dave, labels)
    assert not Judgment.objects.filter(assessor=dave).exists() and not JudgmentEvent.objects.filter(assessor=dave).exists()


def test_a_label_outside_the_scheme_is_refused_in_a_many_row_update_too(topic, documents, dave):
    insert_with_history(topic, documents, dave, ['{"relevance": 1}'] * 5)
    with pytest.raises(IntegrityError, match="quality 9 is not in"), transaction.atomic():
        sql(f"""UPDATE {JUDGMENT} SET labels = labels || CASE WHEN document_id = %s THEN '{{"quality": 9}}'::jsonb
                                                            ELSE '{{"quality": 1}}'::jsonb END, revision = 2
                WHERE assessor_id = %s""", [documents[2].pk, dave.pk])
    assert set(Judgment.objects.filter(assessor=dave).values_list("revision", flat=True)) == {1}


def test_one_judgment_without_its_history_row_among_many_is_refused_at_commit(topic, documents, dave):
    insert_with_history(topic, documents, dave, ['{"relevance": 1}'] * 5, history=['{"relevance": 1}'] * 4 + [None])
    missing = Judgment.objects.get(assessor=dave, document=documents[4])
    assert left_for_commit() == 1
    with pytest.raises(IntegrityError, match=f"judgment {missing.pk}: revision 1 has no history row with its labels"):
        at_commit()


def test_a_history_row_with_other_labels_than_its_judgment_is_refused_at_commit(topic, documents, dave):
    insert_with_history(topic, documents, dave, ['{"relevance": 1}'] * 5, history=['{"relevance": 1}'] * 4 + ['{"relevance": 2}'])
    with pytest.raises(IntegrityError, match="revision 1 has no history row with its labels"):
        at_commit()


def test_a_many_row_relabelling_needs_every_history_row(topic, documents, dave):
    insert_with_history(topic, documents, dave, ['{"relevance": 1}'] * 5)
    sql(f"UPDATE {JUDGMENT} SET labels = '{{\"relevance\": 0}}', revision = 2 WHERE assessor_id = %s", [dave.pk])
    assert left_for_commit() == 5  # the history rows come in the next statement
    sql(f"""INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 2, labels, note, flagged, 0, 'web', now()
            FROM {JUDGMENT} WHERE assessor_id = %s AND document_id <> %s""", [dave.pk, documents[0].pk])
    first = Judgment.objects.get(assessor=dave, document=documents[0])
    with pytest.raises(IntegrityError, match=f"judgment {first.pk}: revision 2 has no history row"):
        at_commit()


def test_history_rows_ahead_of_their_judgments_are_refused_at_commit(topic, documents, dave):
    insert_with_history(topic, documents, dave, ['{"relevance": 1}'] * 5)
    sql(f"""INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 2, '{{"relevance": 0}}', '', false, 0, 'web', now()
            FROM {JUDGMENT} WHERE assessor_id = %s""", [dave.pk])
    assert left_for_commit() == 5
    with pytest.raises(IntegrityError, match="history row for revision 2 is ahead of the judgment"):
        at_commit()


def test_a_save_leaves_one_check_to_the_commit_which_clears_it(topic, documents, dave):
    """record_judgment updates the judgment, then inserts its history row: the first statement cannot settle it."""
    record_judgment(topic=topic, document=documents[0], assessor=dave, labels=Labels({"relevance": 1}), phase="main")
    at_commit()
    record_judgment(topic=topic, document=documents[0], assessor=dave, labels=Labels({"relevance": 2}), phase="main")
    assert left_for_commit() == 1
    at_commit()
    assert left_for_commit() == 0
    assert list(JudgmentEvent.objects.filter(assessor=dave).values_list("revision", flat=True).order_by("revision")) == [1, 2]


def test_time_spent_in_a_many_row_update_leaves_nothing_to_check(topic, documents, dave):
    insert_with_history(topic, documents, dave, ['{"relevance": 1}'] * 5)
    sql(f"UPDATE {JUDGMENT} SET time_spent_ms = time_spent_ms + 1000 WHERE assessor_id = %s", [dave.pk])
    assert left_for_commit() == 0


def test_a_small_statement_after_a_large_one_is_checked_as_well(topic, documents, dave):
    """The checks plan each statement for its own rows: a plan cached for the first statement's size does not decide
    the next one's."""
    many = [DocumentFactory(collection=topic.campaign.collection, doc_id=f"m{i}") for i in range(300)]
    insert_with_history(topic, many, dave, ['{"relevance": 1}'] * 300)
    insert_with_history(topic, documents[:1], dave, ['{"relevance": 2}'], history=[None])
    assert left_for_commit() == 1
    with pytest.raises(IntegrityError, match="revision 1 has no history row"):
        at_commit()


def test_the_list_of_checks_is_out_of_reach_of_the_apps_statements(topic, documents, dave):
    """Only the owner's trigger functions write it: the app's role holds no right on it (manage.py grant_app_role
    grants tables of models only), and a row added by hand only adds a check."""
    rights = sql(f"SELECT grantee, privilege_type FROM information_schema.role_table_grants WHERE table_name = '{CHECKS}'"
                 " AND grantee <> (SELECT tableowner FROM pg_tables WHERE tablename = %s)", [CHECKS])
    assert rights == []
    judgment = record_judgment(topic=topic, document=documents[0], assessor=dave, labels=Labels({"relevance": 1}), phase="main")
    sql(f"INSERT INTO {CHECKS} (judgment_id, revision) VALUES (%s, 5)", [judgment.pk])
    with pytest.raises(IntegrityError, match="history row for revision 5 is ahead"):
        at_commit()


@pytest.mark.parametrize("rows", [1, 3], ids=["one row, a save's path (0030)", "three rows"])
def test_a_statement_of_one_row_is_decided_as_one_of_many(topic, documents, dave, rows):
    """A label save writes one row a statement, which 0030 checks by probes instead of 0027's planned queries: what
    is refused, left to the commit or let through is the same as for a statement of several rows."""
    some, ids = documents[:rows], [d.pk for d in documents[:rows]]
    insert_with_history(topic, some, dave, ['{"relevance": 1}'] * rows, history=[None] * rows)
    assert left_for_commit() == rows  # judgments without their history rows
    sql(f"""INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 1, labels, note, flagged, 0, 'import', now()
            FROM {JUDGMENT} WHERE assessor_id = %s""", [dave.pk])
    at_commit()
    sql(f"UPDATE {JUDGMENT} SET time_spent_ms = 5 WHERE assessor_id = %s", [dave.pk])
    assert left_for_commit() == 0  # nothing history keeps has changed
    sql(f"UPDATE {JUDGMENT} SET labels = '{{\"relevance\": 2}}', revision = 2 WHERE assessor_id = %s", [dave.pk])
    assert left_for_commit() == rows
    sql(f"""INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, 2, labels, note, flagged, 0, 'web', now()
            FROM {JUDGMENT} WHERE assessor_id = %s""", [dave.pk])
    at_commit()
    event = f"""INSERT INTO {EVENT} ({EVENT_COLUMNS}) SELECT id, assessor_id, %s, '{{"relevance": 0}}', '', false, 0, 'web', %s
                FROM {JUDGMENT} WHERE assessor_id = %s AND document_id = ANY(%s)"""
    with pytest.raises(IntegrityError, match="a history row for revision 4 is refused: its next revision is 3"), transaction.atomic():
        sql(event, [4, "2030-01-01", dave.pk, ids])
    with pytest.raises(IntegrityError, match="the history row for revision 3 is dated 2001-01-01"), transaction.atomic():
        sql(event, [3, "2001-01-01", dave.pk, ids])
    sql(event, [3, "2030-01-01", dave.pk, ids])
    assert left_for_commit() == rows  # ahead of their judgments, at revision 2
    with pytest.raises(IntegrityError, match="history row for revision 3 is ahead of the judgment"):
        at_commit()
