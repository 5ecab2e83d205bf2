"""check_integrity finds rows whose unchecked foreign keys point nowhere, and fails when there are any."""

import pytest
from django.apps import apps
from django.db import connection
from django.db.models import ForeignKey

from assessments.models import Document, PoolEntry, PoolSource, Run
from assessments.selectors.integrity import unchecked_keys
from tests.factories import DocumentFactory, PoolEntryFactory

NOWHERE = 10**9  # an id no row has

UNCHECKED = [
    "assessments.AssignmentItem.entry_document → assessments.Document",
    "assessments.Document.collection → assessments.Collection",
    # Judgments' keys are checked by the database once per statement (migration 0027), not by constraints, so they
    # are listed here too: a restore of some tables only would pass those checks by.
    "assessments.Judgment.assessor → accounts.User",
    "assessments.Judgment.document → assessments.Document",
    "assessments.Judgment.topic → assessments.Topic",
    "assessments.JudgmentEvent.assessor → accounts.User",
    "assessments.JudgmentEvent.judgment → assessments.Judgment",
    "assessments.PoolEntry.document → assessments.Document",
    "assessments.PoolEntry.topic → assessments.Topic",
    "assessments.PoolSource.entry → assessments.PoolEntry",
    "assessments.PoolSource.run → assessments.Run",
]
COLLECTION, ENTRY_DOCUMENT, ENTRY_TOPIC, SOURCE_ENTRY, SOURCE_RUN = (UNCHECKED[i] for i in (1, 7, 8, 9, 10))


@pytest.fixture
def pool_entry(campaign):
    entry = PoolEntryFactory(topic__campaign=campaign, document__collection=campaign.collection)
    PoolSource.objects.create(entry=entry, run=Run.objects.create(campaign=campaign, tag="r"), rank_position=1)
    return entry


def test_the_checked_relations_are_the_keys_the_database_does_not_enforce(db):
    # The database's own catalogue says which foreign key columns have a constraint.
    enforced, every = set(), set()
    with connection.cursor() as cursor:
        for model in apps.get_app_config("assessments").get_models():
            constraints = connection.introspection.get_constraints(cursor, model._meta.db_table)
            keyed = {column for c in constraints.values() if c["foreign_key"] for column in c["columns"]}
            for field in model._meta.get_fields():
                if isinstance(field, ForeignKey) and field.model is model:
                    every.add(field)
                    if field.column in keyed:
                        enforced.add(field)

    assert set(unchecked_keys()) == every - enforced
    assert [f"{f.model._meta.label}.{f.name} → {f.related_model._meta.label}" for f in unchecked_keys()] == UNCHECKED


def test_a_consistent_database_passes(pool_entry, command):
    result = command("check_integrity")

    assert result.code == 0
    assert result.out.splitlines() == [f"{relation}: ok" for relation in UNCHECKED] + ["no orphan rows in 11 unchecked relations"]


def test_orphans_are_listed_per_relation_and_fail_the_command(campaign, pool_entry, command):
    run = pool_entry.sources.get().run
    lost_collection = Document.objects.create(collection_id=NOWHERE, doc_id="lost")
    lost_topic = PoolEntry.objects.create(topic_id=NOWHERE, document=DocumentFactory(collection=campaign.collection))
    lost_document = PoolEntry.objects.create(topic=pool_entry.topic, document_id=NOWHERE, order=1)
    lost_entry = PoolSource.objects.create(entry_id=NOWHERE, run=run)
    lost_run = PoolSource.objects.create(entry=lost_document, run_id=NOWHERE)

    result = command("check_integrity")

    assert result.code == 1
    orphans = {COLLECTION: lost_collection, ENTRY_DOCUMENT: lost_document, ENTRY_TOPIC: lost_topic,
               SOURCE_ENTRY: lost_entry, SOURCE_RUN: lost_run}
    assert result.out.splitlines() == [
        f"{relation}: 1 orphan rows (ids {orphans[relation].pk})" if relation in orphans else f"{relation}: ok"
        for relation in UNCHECKED
    ]
    assert result.err.strip() == "error: 5 orphan rows in 5 of 11 unchecked relations"


def test_a_long_list_shows_its_first_ids(campaign, command):
    lost = [Document.objects.create(collection_id=NOWHERE, doc_id=f"lost-{i}").pk for i in range(12)]

    result = command("check_integrity")

    assert f"{COLLECTION}: 12 orphan rows (ids {', '.join(map(str, sorted(lost)[:10]))} …)" in result.out.splitlines()
