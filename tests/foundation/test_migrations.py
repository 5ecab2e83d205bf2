"""Data kept across the storage changes: run lines regrouped into rankings (0004) and pool sources merged into
one row per run (0005), checked by migrating a database that holds the old rows."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

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
