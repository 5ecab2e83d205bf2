"""Data kept across the storage changes: run lines regrouped into rankings (0004) and pool sources merged into
one row per run (0005), checked by migrating a database that holds the old rows; and going back over data those
migrations cannot restore is refused, not done silently."""

import pytest
from django.db import connection
from django.db.migrations.exceptions import IrreversibleError
from django.db.migrations.executor import MigrationExecutor

from assessments.models import PoolSource, Ranking, Run

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("assessments", "0003_runentry_without_foreign_key_checks")]
AFTER = [("assessments", "0006_fewer_checks_on_documents_and_pool_entries")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_run_lines_and_pool_sources_survive_the_new_storage():
    old = migrate(BEFORE)
    try:
        model = old.get_model
        collection = model("assessments", "Collection").objects.create(slug="m", name="M")
        campaign = model("assessments", "Campaign").objects.create(slug="m", name="M", preset="custom", scheme={}, collection=collection)
        topic = model("assessments", "Topic").objects.create(campaign=campaign, number="1", title="t")
        run = model("assessments", "Run").objects.create(campaign=campaign, tag="r")
        # Rank column: b, a, c; score order (trec_eval): a, b, c.
        for doc, rank, score, stance, by_rank, by_score in [
            ("a", 2, 3.0, "PRO", 2, 1), ("b", 1, 2.0, "", 1, 2), ("c", 3, 1.0, "", 3, 3),
        ]:
            model("assessments", "RunEntry").objects.create(
                run=run, topic=topic, doc_id=doc, rank=rank, score=score, stance=stance,
                rank_position=by_rank, score_position=by_score,
            )
        document = model("assessments", "Document").objects.create(collection=collection, doc_id="a")
        entry = model("assessments", "PoolEntry").objects.create(topic=topic, document=document)
        Source = model("assessments", "PoolSource")
        Source.objects.create(entry=entry, run=run, order="rank", position=2)
        Source.objects.create(entry=entry, run=run, order="score", position=1)

        new = migrate(AFTER)
        ranking = new.get_model("assessments", "Ranking").objects.get()
        assert (ranking.docs, ranking.ranks, ranking.scores, ranking.length) == (["a", "b", "c"], [2, 1, 3], [3.0, 2.0, 1.0], 3)
        assert ranking.stances == ["PRO", None, None] and ranking.by_rank == [2, 1, 3]
        sources = new.get_model("assessments", "PoolSource").objects.values_list("entry_id", "rank_position", "score_position")
        assert list(sources) == [(entry.pk, 2, 1)]
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_qrels_snapshot_files_move_into_the_database():
    """A database backup alone then restores every snapshot; a file already lost is reported, and its snapshot
    is refused as not matching its checksum rather than served empty."""
    import hashlib

    from django.core.files.base import ContentFile

    from assessments.models import QrelsSnapshot
    from assessments.services.exports import ExportError, snapshot_content

    old = migrate([("assessments", "0008_tamper_evident_judgments")])
    try:
        model = old.get_model
        collection = model("assessments", "Collection").objects.create(slug="m", name="M")
        campaign = model("assessments", "Campaign").objects.create(slug="m", name="M", preset="custom", scheme={}, collection=collection)
        Snapshot = model("assessments", "QrelsSnapshot")
        data = b"1 0 d1 2\n1 0 d2 0\n"
        kept = Snapshot(campaign=campaign, number=1, kind="relevance", phase="main", rule="majority", line_count=2,
                        sha256=hashlib.sha256(data).hexdigest())
        kept.file.save("m-0001-relevance-main.qrels", ContentFile(data))
        lost = Snapshot(campaign=campaign, number=2, kind="relevance", phase="main", rule="majority", line_count=2,
                        sha256=hashlib.sha256(data).hexdigest())
        lost.file.save("m-0002-relevance-main.qrels", ContentFile(data))
        lost.file.storage.delete(lost.file.name)

        migrate([("assessments", "0009_qrels_snapshots_in_the_database")])
        assert b"".join(snapshot_content(QrelsSnapshot.objects.get(number=1))) == data
        with pytest.raises(ExportError, match="snapshot #2 no longer matches its checksum"):
            snapshot_content(QrelsSnapshot.objects.get(number=2))
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_stored_rankings_gain_trec_eval_9s_order():
    old = migrate([("assessments", "0010_campaign_membership")])
    try:
        model = old.get_model
        collection = model("assessments", "Collection").objects.create(slug="m", name="M")
        campaign = model("assessments", "Campaign").objects.create(slug="m", name="M", preset="custom", scheme={}, collection=collection)
        topic = model("assessments", "Topic").objects.create(campaign=campaign, number="1", title="t")
        Ranking = model("assessments", "Ranking")
        # a and b differ only beyond single precision: trec_eval 9 ties them and puts b (the larger id) first.
        near = Ranking.objects.create(run=model("assessments", "Run").objects.create(campaign=campaign, tag="near"), topic=topic,
                                      length=3, docs=["a", "b", "c"], ranks=[1, 2, 3], scores=[1 + 2**-30, 1.0, 0.5])
        apart = Ranking.objects.create(run=model("assessments", "Run").objects.create(campaign=campaign, tag="apart"), topic=topic,
                                       length=2, docs=["a", "b"], ranks=[1, 2], scores=[2.0, 1.0])

        new = migrate([("assessments", "0011_ranking_by_single")]).get_model("assessments", "Ranking")
        assert new.objects.get(pk=near.pk).by_single == [2, 1, 3]
        assert new.objects.get(pk=apart.pk).by_single is None
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def _stored_ranking():
    from tests.factories import TopicFactory
    from tests.rankings import store_ranking

    topic = TopicFactory()
    store_ranking(Run.objects.create(campaign=topic.campaign, tag="r"), topic, [("a", 1, 2.0), ("b", 2, 1.0)])


def _stored_pool_source():
    from tests.factories import PoolEntryFactory

    entry = PoolEntryFactory()
    PoolSource.objects.create(entry=entry, run=Run.objects.create(campaign=entry.topic.campaign, tag="r"), rank_position=1)


@pytest.mark.parametrize(
    "store, kept, refusal",
    [
        (_stored_ranking, Ranking, "0004 stores runs as rankings; going back would drop"),
        (_stored_pool_source, PoolSource, "0005 merged pool sources into one row per run"),
    ],
)
def test_going_back_over_data_a_migration_cannot_restore_is_refused(store, kept, refusal):
    store()
    try:
        with pytest.raises(IrreversibleError, match=refusal):
            migrate(BEFORE)
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    assert kept.objects.count() == 1  # the refused step took nothing away
