"""Building pools: what gets pooled, what is kept, what assessors see, and what the organiser is told."""

import pytest
from django.db import connection

from assessments.metrics.pooling import presentation_order
from assessments.models import Document, Judgment, PoolEntry, PoolSource, Topic
from assessments.selectors.pools import missing_documents
from assessments.services import pooling
from assessments.services.judging import Labels, record_judgment
from assessments.services.pooling import PoolingError, PoolSpec, build_pool
from tests.assessments.pool_fixtures import add_run, depth, ranked
from tests.factories import DocumentFactory, TopicFactory
from tests.rankings import rank_order, score_order


@pytest.fixture
def topics(campaign):
    return [TopicFactory(campaign=campaign, number=str(n), position=n) for n in (51, 52)]


def pool_of(topic) -> set[str]:
    return set(PoolEntry.objects.filter(topic=topic).values_list("document__doc_id", flat=True))


def sources_of(topic, doc) -> set[tuple[str, str, int]]:
    """(run tag, order, position) for every order a run put the document in the pool by."""
    rows = PoolSource.objects.filter(entry__topic=topic, entry__document__doc_id=doc)
    return {
        (tag, order, position)
        for tag, by_rank, by_score in rows.values_list("run__tag", "rank_position", "score_position")
        for order, position in (("rank", by_rank), ("score", by_score))
        if position is not None
    }


# A run whose rank column disagrees with its scores, as real Touché runs do: by rank a, b, c, d, e, f;
# by score (trec_eval) f, e, d, c, b, a.
DISAGREEING = [("a", 1, 1.0), ("b", 2, 2.0), ("c", 3, 3.0), ("d", 4, 4.0), ("e", 5, 5.0), ("f", 6, 6.0)]


class TestDepthPooling:
    def test_it_pools_the_union_of_rank_and_score_top_k_by_default(self, campaign, topics):
        add_run(campaign, "disagree", {topics[0]: DISAGREEING})

        summary = build_pool(campaign=campaign, spec=depth(2))

        assert pool_of(topics[0]) == {"a", "b", "e", "f"}
        assert summary.added == 4 and summary.total == 4

    @pytest.mark.parametrize("order, expected", [("rank", {"a", "b"}), ("score", {"f", "e"})])
    def test_the_organiser_can_pool_by_one_order(self, campaign, topics, order, expected):
        add_run(campaign, "disagree", {topics[0]: DISAGREEING})

        build_pool(campaign=campaign, spec=depth(2, order=order))

        assert pool_of(topics[0]) == expected

    def test_it_records_every_run_and_position_for_both_orders(self, campaign, topics):
        add_run(campaign, "disagree", {topics[0]: DISAGREEING})
        add_run(campaign, "agree", {topics[0]: [("a", 1, 9.0), ("x", 2, 8.0)]})

        build_pool(campaign=campaign, spec=depth(2))

        assert sources_of(topics[0], "a") == {("disagree", "rank", 1), ("agree", "rank", 1), ("agree", "score", 1)}
        assert sources_of(topics[0], "f") == {("disagree", "score", 1)}
        assert sources_of(topics[0], "x") == {("agree", "rank", 2), ("agree", "score", 2)}

    def test_document_ids_that_copy_escapes_are_pooled_as_they_are(self, campaign, topics):
        # Backslashes, quotes, commas, braces and NULL-like ids: COPY text and array literals must not read them.
        odd = ["back\\slash", 'say"hi"', "a,b", "{braces}", "NULL", "\\N"]
        add_run(campaign, "odd", {topics[0]: [(doc, rank, 10.0 - rank) for rank, doc in enumerate(odd, 1)]})
        build_pool(campaign=campaign, spec=depth(10))
        add_run(campaign, "late", {topics[0]: [(odd[0], 1, 1.0)]})

        build_pool(campaign=campaign, spec=depth(10))

        assert pool_of(topics[0]) == set(odd)
        assert sources_of(topics[0], odd[0]) == {("odd", "rank", 1), ("odd", "score", 1), ("late", "rank", 1), ("late", "score", 1)}
        assert sources_of(topics[0], "\\N") == {("odd", "rank", 6), ("odd", "score", 6)}

    def test_tied_scores_are_cut_as_trec_eval_cuts_them(self, campaign, topics):
        # Five documents share a score; trec_eval takes the largest ids first.
        tied = [(f"doc-{i}", i, 1.0) for i in range(1, 6)]
        add_run(campaign, "ties", {topics[0]: tied})

        build_pool(campaign=campaign, spec=depth(2, order="score"))

        assert pool_of(topics[0]) == {"doc-5", "doc-4"}

    def test_default_depth_is_five_for_every_topic(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("t51", 20), topics[1]: ranked("t52", 3)})

        summary = build_pool(campaign=campaign, spec=PoolSpec())

        assert pool_of(topics[0]) == {f"t51-{i:03d}" for i in range(1, 6)}
        assert pool_of(topics[1]) == {"t52-001", "t52-002", "t52-003"}
        assert [(t.number, t.after) for t in summary.topics] == [("51", 5), ("52", 3)]

    def test_only_the_selected_runs_are_pooled(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("one", 5)})
        add_run(campaign, "r2", {topics[0]: ranked("two", 5)})

        build_pool(campaign=campaign, spec=depth(5, runs=["r2"]))

        assert pool_of(topics[0]) == {f"two-{i:03d}" for i in range(1, 6)}


class TestIncrementalBuilds:
    def test_a_late_run_adds_only_its_new_documents_and_keeps_the_order(self, campaign, topics):
        add_run(campaign, "early", {topics[0]: ranked("doc", 5)})
        build_pool(campaign=campaign, spec=depth(5))
        before = dict(PoolEntry.objects.filter(topic=topics[0]).values_list("document__doc_id", "order"))
        add_run(campaign, "late", {topics[0]: [("doc-001", 1, 3.0), ("new-1", 2, 2.0), ("new-2", 3, 1.0)]})

        summary = build_pool(campaign=campaign, spec=depth(5))

        after = dict(PoolEntry.objects.filter(topic=topics[0]).values_list("document__doc_id", "order"))
        assert summary.added == 2
        assert {doc: after[doc] for doc in before} == before
        assert sorted(after[doc] for doc in ("new-1", "new-2")) == [5, 6]
        assert ("late", "rank", 1) in sources_of(topics[0], "doc-001")

    def test_building_twice_changes_nothing(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: DISAGREEING})
        build_pool(campaign=campaign, spec=depth(3))
        entries = list(PoolEntry.objects.values_list("id", "order", "document_id"))
        source_count = PoolSource.objects.count()

        summary = build_pool(campaign=campaign, spec=depth(3))

        assert summary.added == 0
        assert list(PoolEntry.objects.values_list("id", "order", "document_id")) == entries
        assert PoolSource.objects.count() == source_count

    def test_a_smaller_depth_keeps_every_entry_and_reports_the_unjustified(self, campaign, topics, organiser):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 10)})
        build_pool(campaign=campaign, spec=depth(10))
        judged = PoolEntry.objects.get(topic=topics[0], document__doc_id="doc-009")
        record_judgment(topic=topics[0], document=judged.document, assessor=organiser, labels=Labels({"relevance": 2}), phase="main")

        summary = build_pool(campaign=campaign, spec=depth(3))

        assert len(pool_of(topics[0])) == 10
        assert summary.unjustified == 7
        assert summary.topics[0].unjustified == 7
        assert any("7 entries are not selected" in w for w in summary.warnings)
        assert Judgment.objects.filter(document=judged.document).exists()


class TestMissingDocuments:
    def test_unknown_ids_get_stubs_and_are_listed(self, campaign, topics):
        known = DocumentFactory(collection=campaign.collection, doc_id="known")
        add_run(campaign, "r1", {topics[0]: [("known", 1, 2.0), ("ghost", 2, 1.0)]})

        summary = build_pool(campaign=campaign, spec=depth(5))

        ghost = Document.objects.get(collection=campaign.collection, doc_id="ghost")
        assert not ghost.has_text
        assert PoolEntry.objects.get(topic=topics[0], document__doc_id="known").document == known
        assert summary.missing_total == 1 and summary.missing == [("51", "ghost")]
        assert summary.stubs_created == 1
        assert summary.topics[0].missing == 1
        assert missing_documents(campaign=campaign) == (1, [("51", "ghost")])

    def test_a_stub_is_reused_by_other_topics_and_later_builds(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: [("ghost", 1, 1.0)], topics[1]: [("ghost", 1, 1.0)]})

        first = build_pool(campaign=campaign, spec=depth(5))
        second = build_pool(campaign=campaign, spec=depth(5))

        assert Document.objects.filter(doc_id="ghost").count() == 1
        assert first.stubs_created == 1 and second.stubs_created == 0
        assert first.missing_total == 2


class TestPresentationOrder:
    def test_the_first_build_is_the_seeded_shuffle_of_the_pool(self, campaign, topics):
        topics[0].pool_seed = 12345
        topics[0].save()
        add_run(campaign, "r1", {topics[0]: ranked("doc", 30)})

        build_pool(campaign=campaign, spec=depth(30))

        shown = list(PoolEntry.objects.filter(topic=topics[0]).order_by("order").values_list("document__doc_id", flat=True))
        assert shown == presentation_order([f"doc-{i:03d}" for i in range(1, 31)], seed=12345)
        assert list(PoolEntry.objects.filter(topic=topics[0]).order_by("order").values_list("order", flat=True)) == list(range(30))

    def test_a_topic_without_a_seed_gets_one_once(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 5)})

        build_pool(campaign=campaign, spec=depth(5))
        seed = Topic.objects.get(pk=topics[0].pk).pool_seed
        build_pool(campaign=campaign, spec=depth(5))

        assert seed != 0
        assert Topic.objects.get(pk=topics[0].pk).pool_seed == seed

    def test_the_order_is_reproducible_from_the_seed(self, campaign, topics):
        other = TopicFactory(number="99")
        for topic in (topics[0], other):
            topic.pool_seed = 777
            topic.save()
        add_run(campaign, "r1", {topics[0]: ranked("doc", 40)})
        add_run(other.campaign, "r1", {other: ranked("doc", 40)})

        build_pool(campaign=campaign, spec=depth(40))
        build_pool(campaign=other.campaign, spec=depth(40))

        def shown(topic):
            return list(PoolEntry.objects.filter(topic=topic).order_by("order").values_list("document__doc_id", flat=True))

        assert shown(topics[0]) == shown(other)

    def test_the_order_does_not_follow_rank(self, campaign, topics):
        topics[0].pool_seed = 2024
        topics[0].save()
        n = 200
        add_run(campaign, "r1", {topics[0]: ranked("doc", n)})

        build_pool(campaign=campaign, spec=depth(n))

        rank = {f"doc-{i:03d}": i for i in range(1, n + 1)}
        pairs = [(rank[doc], order) for doc, order in PoolEntry.objects.filter(topic=topics[0]).values_list("document__doc_id", "order")]
        # Spearman's rho between rank and presentation order (no ties): about N(0, 1/sqrt(n-1)) for a shuffle,
        # so |rho| < 0.25 is 3.5 standard deviations; a rank-sorted order would give 1.
        d2 = sum((r - (o + 1)) ** 2 for r, o in pairs)
        rho = 1 - 6 * d2 / (n * (n * n - 1))
        assert abs(rho) < 0.25
        # and neither run, rank nor score is stored on the entry an assessor is shown
        assert {f.name for f in PoolEntry._meta.concrete_fields} == {"id", "topic", "document", "order", "duplicate_of", "strategy", "added_at"}


class TestBudgetStrategies:
    def test_rbp_fills_each_topic_up_to_its_budget_by_priority(self, campaign, topics):
        # Documents ranked fairly high by both runs outrank the bottom of one run's top list.
        add_run(campaign, "r1", {topics[0]: [("shared", 3, 7.0), ("r1-a", 1, 9.0), ("r1-b", 2, 8.0)]})
        add_run(campaign, "r2", {topics[0]: [("shared", 3, 7.0), ("r2-a", 1, 9.0), ("r2-b", 2, 8.0)]})

        summary = build_pool(campaign=campaign, spec=PoolSpec(strategy="rbp", budget=3))

        # priorities (p=0.8): shared 2*0.2*0.64=0.256, r1-a and r2-a 0.2, r1-b and r2-b 0.16
        assert pool_of(topics[0]) == {"shared", "r1-a", "r2-a"}
        assert summary.topics[0].after == 3
        assert sources_of(topics[0], "shared") == {("r1", "score", 3), ("r2", "score", 3)}

    def test_rbp_counts_what_is_pooled_already_against_the_budget(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 10)})
        build_pool(campaign=campaign, spec=depth(2))

        summary = build_pool(campaign=campaign, spec=PoolSpec(strategy="rbp", budget=5))

        assert pool_of(topics[0]) == {f"doc-{i:03d}" for i in range(1, 6)}
        assert summary.added == 3
        assert set(PoolEntry.objects.filter(topic=topics[0]).values_list("strategy", flat=True)) == {"depth-2-both", "rbp-5-score"}

    def test_the_bandit_draws_from_the_run_that_finds_relevant_documents(self, campaign, topics, organiser):
        add_run(campaign, "good", {topics[0]: ranked("good", 20)})
        add_run(campaign, "bad", {topics[0]: ranked("bad", 20)})
        build_pool(campaign=campaign, spec=depth(3))
        for entry in PoolEntry.objects.filter(topic=topics[0]).select_related("document"):
            relevance = 2 if entry.document.doc_id.startswith("good") else 0
            record_judgment(topic=topics[0], document=entry.document, assessor=organiser, labels=Labels({"relevance": relevance}), phase="main")

        summary = build_pool(campaign=campaign, spec=PoolSpec(strategy="maxmean", budget=4))

        added = pool_of(topics[0]) - {f"{r}-{i:03d}" for r in ("good", "bad") for i in (1, 2, 3)}
        assert summary.topics[0].added == 4
        assert added == {"good-004", "good-005", "good-006", "good-007"}

    def test_a_budget_strategy_needs_a_budget(self):
        with pytest.raises(PoolingError, match="needs a positive budget"):
            PoolSpec(strategy="rbp")


class TestRefusals:
    def test_unknown_run_tags_are_named_and_nothing_changes(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 5)})

        with pytest.raises(PoolingError, match="unknown run tags .*: nope"):
            build_pool(campaign=campaign, spec=depth(5, runs=["r1", "nope"]))
        assert not PoolEntry.objects.exists()

    def test_a_campaign_without_runs_cannot_be_pooled(self, campaign, topics):
        with pytest.raises(PoolingError, match="no runs to pool"):
            build_pool(campaign=campaign, spec=depth(5))

    def test_a_closed_campaign_keeps_its_pool(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("doc", 5)})
        campaign.phase = "closed"
        campaign.save()

        with pytest.raises(PoolingError, match="closed"):
            build_pool(campaign=campaign, spec=depth(5))
        assert not PoolEntry.objects.exists()

    @pytest.mark.parametrize("params, message", [
        ({"strategy": "magic"}, "unknown strategy"),
        ({"order": "alphabetical"}, "unknown order"),
        ({"depth": 0}, "depth must be between"),
        ({"depth": "five"}, "whole numbers"),
    ])
    def test_bad_parameters_are_explained(self, params, message):
        with pytest.raises(PoolingError, match=message):
            PoolSpec.from_params(params)


def test_rank_and_score_helpers_agree_with_the_readme():
    # The fixture's own orders, checked on the README's example of a tie: trec_eval takes the larger id first.
    lines = [("doc-1", 1, 5.0), ("doc-2", 2, 5.0), ("doc-3", 0, 1.0)]
    assert [line[0] for line in score_order(lines)] == ["doc-2", "doc-1", "doc-3"]
    assert [line[0] for line in rank_order(lines)] == ["doc-3", "doc-1", "doc-2"]


class TestBuildsAsJobs:
    def test_a_second_build_of_the_same_campaign_is_refused_while_one_runs(self, campaign, topics, settings):
        import psycopg2

        add_run(campaign, "r1", {topics[0]: ranked("doc", 5)})
        db = connection.settings_dict
        other = psycopg2.connect(dbname=db["NAME"], user=db["USER"], host=db["HOST"], port=db["PORT"], password=db["PASSWORD"])
        try:
            with other.cursor() as cursor:  # another worker holding this campaign's build lock
                cursor.execute("SELECT pg_advisory_lock(%s, %s)", [pooling._POOL_LOCK, campaign.pk])

            with pytest.raises(PoolingError, match="another pool build for this campaign is running"):
                build_pool(campaign=campaign, spec=depth(5))
        finally:
            # Release explicitly: a closed session frees its locks only when its server process has exited.
            with other.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [pooling._POOL_LOCK, campaign.pk])
            other.close()
        assert not PoolEntry.objects.exists()
        assert build_pool(campaign=campaign, spec=depth(5)).added == 5  # the other worker has finished

    def test_a_job_whose_run_vanished_fails_with_the_reason(self, campaign, topics, organiser, django_capture_on_commit_callbacks):
        run = add_run(campaign, "r1", {topics[0]: ranked("doc", 5)})
        add_run(campaign, "r2", {topics[0]: ranked("other", 5)})

        with django_capture_on_commit_callbacks(execute=True):
            job = pooling.start_build(campaign=campaign, spec=depth(5, runs=["r1"]), user=organiser)
            run.delete()  # between the request and the worker

        job.refresh_from_db()
        assert job.status == "failed"
        assert job.errors == ["unknown run tags for campaign 'touche22': r1"]
        assert not PoolEntry.objects.exists()

    def test_a_job_reports_progress_to_the_end(self, campaign, topics, organiser, django_capture_on_commit_callbacks):
        add_run(campaign, "r1", {t: ranked(t.number, 5) for t in topics})

        with django_capture_on_commit_callbacks(execute=True):
            job = pooling.start_build(campaign=campaign, spec=depth(5), user=organiser)

        job.refresh_from_db()
        assert (job.status, job.done, job.total) == ("succeeded", 4, 4)  # two steps per topic: choose, then group
        assert job.result["added"] == 10 and [t["after"] for t in job.result["topics"]] == [5, 5]
