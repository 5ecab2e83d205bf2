"""How a pool build is stored on PostgreSQL (services.pool_store.prepared_pool and store_pool): copied straight into the
tables, it stores what the staged store stores; ids the sequences hand out with gaps (another session took some)
change nothing but the ids; entries carry the time of their build; a document created after the build looked the
documents up is pooled, not copied; two builds over one collection both store their whole pool; and a pool of
stubs is counted missing and left ungrouped without reading its entries one by one."""

import json
import threading
from contextlib import contextmanager
from itertools import chain

import pytest
from django.db import connection, transaction

from assessments.models import Document, PoolEntry, PoolSource
from assessments.selectors.pools import missing_per_topic
from assessments.services import pool_store
from assessments.services.duplicates import DuplicateSummary, group_duplicates
from assessments.services.pooling import build_pool
from tests.assessments import bulk_scenario
from tests.assessments.pool_fixtures import add_run, depth, ranked
from tests.factories import CampaignFactory, CollectionFactory, DocumentFactory, TopicFactory


@pytest.fixture
def topics(campaign):
    return [TopicFactory(campaign=campaign, number=str(n), position=n) for n in (51, 52)]


def pool_of(topic) -> set[str]:
    return set(PoolEntry.objects.filter(topic=topic).values_list("document__doc_id", flat=True))


class TestCopiedStraightIn:
    @staticmethod
    def scenario(folder, monkeypatch, **patches) -> dict:
        """bulk_scenario's campaign stored with `patches` to services.pool_store, read back, then rolled back."""
        folder.mkdir()
        with monkeypatch.context() as patched, transaction.atomic():
            for name, value in patches.items():
                patched.setattr(pool_store, name, value)
            stored = json.loads(json.dumps(bulk_scenario.run(folder)))
            transaction.set_rollback(True)
        return stored

    def test_it_stores_what_the_staged_store_stores(self, db, tmp_path, monkeypatch):
        # The staged store: COPY text spooled with doc ids, stubs and entries inserted from a staging table.
        staged = self.scenario(tmp_path / "staged", monkeypatch, prepared_pool=lambda rows, collection_id: pool_store.spooled_pool(rows))
        spooled, spool = [], pool_store.spooled_pool.__wrapped__

        def counted(rows):
            spooled.append(True)
            return spool(rows)

        direct = self.scenario(tmp_path / "direct", monkeypatch, spooled_pool=contextmanager(counted))
        assert not spooled
        # A build of more new documents than prepared_pool holds in memory is spooled the staged way after all.
        too_many = self.scenario(tmp_path / "too_many", monkeypatch, _DIRECT_DOCUMENTS=2, spooled_pool=contextmanager(counted))
        assert spooled

        assert direct == staged
        assert too_many == staged
        assert staged["entries"] and staged["sources"] and staged["counts"]["builds"][0][2] > 0  # stubs were made

    def test_ids_taken_with_gaps_give_the_same_pool(self, campaign, topics, monkeypatch):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 6), topics[1]: ranked("other", 3)})
        add_run(campaign, "r2", {topics[0]: ranked("doc", 4)})
        take = pool_store._id_blocks

        def with_gaps(cursor, table, count):
            # As when another session takes ids meanwhile: every third id is someone else's.
            ids = [pk for pk in chain.from_iterable(take(cursor, table, count + count // 2 + 1)) if pk % 3][:count]
            return [range(pk, pk + 1) for pk in ids]

        monkeypatch.setattr(pool_store, "_id_blocks", with_gaps)
        summary = build_pool(campaign=campaign, spec=depth(5))

        assert (summary.added, summary.stubs_created) == (8, 8)
        entries = PoolEntry.objects.filter(topic__campaign=campaign)
        assert not [pk for pk in entries.values_list("pk", flat=True) if pk % 3 == 0]
        assert all(pk % 3 for pk in Document.objects.filter(collection=campaign.collection).values_list("pk", flat=True))
        assert pool_of(topics[0]) == {f"doc-{i:03d}" for i in range(1, 6)} and pool_of(topics[1]) == {f"other-{i:03d}" for i in (1, 2, 3)}
        sources = PoolSource.objects.filter(entry__topic=topics[0]).values_list("entry__document__doc_id", "run__tag", "rank_position")
        assert sorted(sources) == sorted(
            [(f"doc-{i:03d}", "r1", i) for i in range(1, 6)] + [(f"doc-{i:03d}", "r2", i) for i in range(1, 5)]
        )
        # Each topic's queue is its shuffle: orders 0 to n - 1, once each.
        assert sorted(entries.filter(topic=topics[0]).values_list("order", flat=True)) == list(range(5))

    def test_entries_carry_the_time_and_strategy_of_their_build(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 3)})

        build_pool(campaign=campaign, spec=depth(2, order="rank"))

        # The build's storing transaction is a savepoint of the test's: now() is the same in both, to the microsecond.
        with connection.cursor() as cursor:
            cursor.execute("SELECT now()")
            (now,) = cursor.fetchone()
        stored = PoolEntry.objects.filter(topic=topics[0]).values_list("strategy", "added_at", "duplicate_of")
        assert set(stored) == {("depth-2-rank", now, None)} and len(stored) == 2

    def test_a_document_created_after_the_look_up_is_pooled_not_copied(self, campaign, topics, monkeypatch):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 5)})
        look_up = pool_store._pool_documents

        def then_imported(cursor, doc_ids, *, collection_id):
            found = look_up(cursor, doc_ids, collection_id=collection_id)
            DocumentFactory(collection=campaign.collection, doc_id="doc-003", body="Imported meanwhile.")
            return found

        monkeypatch.setattr(pool_store, "_pool_documents", then_imported)
        summary = build_pool(campaign=campaign, spec=depth(5))

        assert pool_of(topics[0]) == {f"doc-{i:03d}" for i in range(1, 6)}
        imported = Document.objects.get(collection=campaign.collection, doc_id="doc-003")
        assert imported.has_text and imported.body == "Imported meanwhile."
        assert PoolEntry.objects.get(topic=topics[0], document__doc_id="doc-003").document == imported
        assert summary.added == 5 and summary.stubs_created == 4 and summary.missing_total == 4
        assert set(PoolSource.objects.filter(entry__topic=topics[0]).values_list("entry__document__doc_id", "rank_position")) == {
            (f"doc-{i:03d}", i) for i in range(1, 6)
        }


@pytest.mark.django_db(transaction=True)  # each build commits on its own connection
def test_two_builds_over_one_collection_both_store_their_whole_pool(monkeypatch):
    collection = CollectionFactory()
    first, second = CampaignFactory(collection=collection), CampaignFactory(collection=collection)
    for campaign in (first, second):
        add_run(campaign, "r1", {TopicFactory(campaign=campaign, number="1"): ranked("doc", 5)})
    look_up = pool_store._pool_documents
    looked_up, second_committed = threading.Event(), threading.Event()

    def first_waits_for_the_second(cursor, doc_ids, *, collection_id):
        found = look_up(cursor, doc_ids, collection_id=collection_id)
        if threading.current_thread().name == "first":
            # The first build found no documents; the second now creates them all as stubs and commits.
            looked_up.set()
            second_committed.wait(30)
        return found

    monkeypatch.setattr(pool_store, "_pool_documents", first_waits_for_the_second)
    built = {}

    def build_first():
        try:
            built["first"] = build_pool(campaign=first, spec=depth(5))
        except Exception as exc:  # reported by the assertion below, not lost with the thread
            built["first"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=build_first, name="first")
    thread.start()
    assert looked_up.wait(30)
    built["second"] = build_pool(campaign=second, spec=depth(5))
    second_committed.set()
    thread.join(30)

    assert not isinstance(built["first"], Exception), built["first"]
    assert built["second"].stubs_created == 5 and built["first"].stubs_created == 0
    assert built["first"].added == built["second"].added == 5
    assert Document.objects.filter(collection=collection).count() == 5
    for campaign in (first, second):
        entries = PoolEntry.objects.filter(topic__campaign=campaign)
        assert set(entries.values_list("document__doc_id", flat=True)) == {f"doc-{i:03d}" for i in range(1, 6)}
        assert PoolSource.objects.filter(entry__in=entries).count() == 5


def test_a_pool_of_stubs_is_counted_missing_without_looking_each_entry_up(campaign, topics, django_assert_max_num_queries):
    add_run(campaign, "r1", {topics[0]: ranked("doc", 4), topics[1]: ranked("other", 3)})

    summary = build_pool(campaign=campaign, spec=depth(5))

    assert [(t.number, t.missing) for t in summary.topics] == [("51", 4), ("52", 3)]
    assert {t.number: t.missing for t in summary.topics} == missing_per_topic(campaign=campaign)
    assert summary.missing_total == 7 and summary.missing[:2] == [("51", "doc-001"), ("51", "doc-002")]
    assert (summary.duplicate_groups, summary.twins) == (0, 0)
    with django_assert_max_num_queries(3):  # the topics, whether any text, whether any twin: no entry is read
        assert group_duplicates(campaign=campaign) == DuplicateSummary(groups=0, twins=0, labels_copied=0)
