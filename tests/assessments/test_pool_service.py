"""Building pools: what gets pooled, what is kept, what assessors see, and what the organiser is told."""

import random
from collections import defaultdict

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessments.metrics.pooling import depth_pool, presentation_order, run_overlap, unique_contributions
from assessments.models import Document, Judgment, JudgmentEvent, PoolEntry, PoolSource, Topic
from assessments.services import judging, pooling
from assessments.services.judging import Labels, record_judgment
from assessments.services.pooling import PoolingError, PoolSpec, build_pool
from tests.assessments.pool_fixtures import add_run, ranked
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


def depth(k, order="both", runs=()):
    return PoolSpec(strategy="depth", depth=k, order=order, runs=tuple(runs))


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
        record_judgment(topic=topics[0], document=judged.document, assessor=organiser, labels=Labels(relevance=2), phase="main")

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
        assert pooling.missing_documents(campaign=campaign) == (1, [("51", "ghost")])

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
            record_judgment(topic=topics[0], document=entry.document, assessor=organiser, labels=Labels(relevance=relevance), phase="main")

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


class TestDuplicates:
    TEXT = " ".join(f"word{i}" for i in range(60))

    def _pool(self, campaign, topic, docs):
        for doc_id, body, text_hash in docs:
            DocumentFactory(collection=campaign.collection, doc_id=doc_id, title="", body=body, text_hash=text_hash)
        add_run(campaign, "r1", {topic: [(doc_id, i, -float(i)) for i, (doc_id, _, _) in enumerate(docs, 1)]})
        return build_pool(campaign=campaign, spec=depth(len(docs)))

    def entry(self, topic, doc):
        return PoolEntry.objects.get(topic=topic, document__doc_id=doc)

    def test_identical_and_near_duplicate_texts_are_grouped(self, campaign, topics):
        near = self.TEXT.replace("word30", "changed")  # 8 of 53 8-grams differ: S3 = 45/53 = 0.85
        far = self.TEXT.replace("word20", "x").replace("word40", "y")  # S3 = 37/53 = 0.70
        summary = self._pool(campaign, topics[0], [
            ("a", self.TEXT, ""), ("b", self.TEXT.upper() + "!", ""),  # same normalised text
            ("c", near, ""), ("d", far, ""), ("e", "Something else entirely, short.", "h1"),
            ("f", "Hashed copy: the importer said these texts are identical.", "h1"),
        ])

        groups = {}
        for entry in PoolEntry.objects.filter(topic=topics[0]).select_related("document", "duplicate_of__document"):
            root = entry.duplicate_of.document.doc_id if entry.duplicate_of else entry.document.doc_id
            groups.setdefault(root, set()).add(entry.document.doc_id)
        assert sorted(map(sorted, groups.values())) == [["a", "b", "c"], ["d"], ["e", "f"]]
        assert summary.twins == 3 and summary.duplicate_groups == 2

    def test_the_canonical_entry_is_the_first_an_assessor_meets(self, campaign, topics):
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, "")])

        a, b = self.entry(topics[0], "a"), self.entry(topics[0], "b")
        first, second = sorted([a, b], key=lambda e: e.order)
        assert first.duplicate_of is None and second.duplicate_of == first

    def test_judging_one_labels_its_twins_with_history(self, campaign, topics, organiser):
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, ""), ("c", self.TEXT, ""), ("z", "unrelated", "")])
        canonical = PoolEntry.objects.get(topic=topics[0], duplicate_of=None, document__doc_id__in="abc")
        judgment = record_judgment(
            topic=topics[0], document=canonical.document, assessor=organiser,
            labels=Labels(relevance=2, quality=1, stance="FIRST"), phase="main",
        )

        with CaptureQueriesContext(connection) as queries:
            copied = judging.propagate_to_twins(judgment=judgment, entry=canonical)

        twins = Judgment.objects.filter(topic=topics[0], source="duplicate")
        assert copied == 2
        assert sorted(twins.values_list("document__doc_id", flat=True)) == sorted(set("abc") - {canonical.document.doc_id})
        assert set(twins.values_list("relevance", "quality", "stance", "assessor")) == {(2, 1, "FIRST", organiser.pk)}
        assert JudgmentEvent.objects.filter(judgment__in=twins, source="duplicate", revision=1).count() == 2
        assert sum('FROM "assessments_poolentry"' in q["sql"] for q in queries.captured_queries) == 1

    def test_a_changed_label_reaches_the_twins_as_a_new_revision(self, campaign, topics, organiser):
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, "")])
        canonical = PoolEntry.objects.get(topic=topics[0], duplicate_of=None)
        for relevance in (2, 0):
            judgment = record_judgment(topic=topics[0], document=canonical.document, assessor=organiser,
                                       labels=Labels(relevance=relevance), phase="main")
            judging.propagate_to_twins(judgment=judgment, entry=canonical)

        twin = Judgment.objects.get(topic=topics[0], source="duplicate")
        assert (twin.relevance, twin.revision) == (0, 2)
        assert list(twin.events.values_list("relevance", flat=True)) == [2, 0]

    def test_judging_a_twin_labels_the_rest_of_its_group(self, campaign, topics, organiser):
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, ""), ("c", self.TEXT, "")])
        twin = PoolEntry.objects.filter(topic=topics[0], duplicate_of__isnull=False).first()
        judgment = record_judgment(topic=topics[0], document=twin.document, assessor=organiser, labels=Labels(relevance=1), phase="main")

        assert judging.propagate_to_twins(judgment=judgment, entry=twin) == 2
        assert Judgment.objects.filter(topic=topics[0], relevance=1).count() == 3

    def test_propagation_can_be_turned_off(self, campaign, topics, organiser):
        campaign.propagate_to_duplicates = False
        campaign.save()
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, "")])
        canonical = PoolEntry.objects.get(topic=topics[0], duplicate_of=None)
        judgment = record_judgment(topic=topics[0], document=canonical.document, assessor=organiser, labels=Labels(relevance=2), phase="main")

        assert judging.propagate_to_twins(judgment=judgment, entry=canonical) == 0
        assert Judgment.objects.count() == 1

    def test_a_twin_pooled_after_its_original_was_judged_gets_the_label(self, campaign, topics, organiser):
        DocumentFactory(collection=campaign.collection, doc_id="orig", title="", body=self.TEXT)
        DocumentFactory(collection=campaign.collection, doc_id="copy", title="", body=self.TEXT)
        add_run(campaign, "early", {topics[0]: [("orig", 1, 1.0)]})
        build_pool(campaign=campaign, spec=depth(5))
        orig = PoolEntry.objects.get(document__doc_id="orig")
        record_judgment(topic=topics[0], document=orig.document, assessor=organiser, labels=Labels(relevance=2), phase="main")
        add_run(campaign, "late", {topics[0]: [("copy", 1, 1.0)]})

        summary = build_pool(campaign=campaign, spec=depth(5))

        copy = PoolEntry.objects.get(document__doc_id="copy")
        assert copy.duplicate_of == orig
        assert summary.labels_copied == 1
        assert Judgment.objects.get(document=copy.document).source == "duplicate"

    def test_grouping_keeps_labels_both_copies_already_have(self, campaign, topics, organiser):
        add_run(campaign, "r1", {topics[0]: [("orig", 1, 1.0), ("copy", 2, 0.5)]})
        build_pool(campaign=campaign, spec=depth(5))  # stubs: no text yet, so no group
        for doc, relevance in (("orig", 2), ("copy", 0)):
            record_judgment(topic=topics[0], document=Document.objects.get(doc_id=doc), assessor=organiser,
                            labels=Labels(relevance=relevance), phase="main")
        Document.objects.filter(doc_id__in=["orig", "copy"]).update(body=self.TEXT, has_text=True)  # text arrives

        summary = pooling.group_duplicates(campaign=campaign)

        assert summary.twins == 1 and summary.labels_copied == 0
        assert dict(Judgment.objects.values_list("document__doc_id", "relevance")) == {"orig": 2, "copy": 0}

    def test_a_judged_member_becomes_canonical_and_stays(self, campaign, topics, organiser):
        add_run(campaign, "r1", {topics[0]: [("a", 1, 2.0), ("b", 2, 1.0)]})
        build_pool(campaign=campaign, spec=depth(5))  # stubs: no text, no group yet
        later = max(PoolEntry.objects.filter(topic=topics[0]), key=lambda e: e.order)
        record_judgment(topic=topics[0], document=later.document, assessor=organiser, labels=Labels(relevance=2), phase="main")
        Document.objects.filter(doc_id__in="ab").update(body=self.TEXT, has_text=True)

        pooling.group_duplicates(campaign=campaign)
        earlier = PoolEntry.objects.exclude(pk=later.pk).get(topic=topics[0])
        record_judgment(topic=topics[0], document=earlier.document, assessor=organiser, labels=Labels(relevance=2), phase="main")
        pooling.group_duplicates(campaign=campaign)

        earlier.refresh_from_db()
        later.refresh_from_db()
        assert later.duplicate_of is None and earlier.duplicate_of == later

    def test_documents_without_text_are_never_grouped(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: [("ghost-1", 1, 2.0), ("ghost-2", 2, 1.0)]})

        summary = build_pool(campaign=campaign, spec=depth(5))

        assert summary.twins == 0
        assert not PoolEntry.objects.filter(duplicate_of__isnull=False).exists()

    def test_html_is_compared_by_its_text_not_its_markup(self, campaign, topics):
        # The same long link and script on both pages, different articles: as raw HTML they would share most
        # 8-grams; as text they share none.
        chrome = '<a href="https://example.org/{}">menu</a><script>{}</script>'.format(
            "/".join(f"seg{i}" for i in range(200)), " ".join(f"var{i}" for i in range(200))
        )
        for doc_id, word in (("p1", "alpha"), ("p2", "beta")):
            article = " ".join(f"{word}{i}" for i in range(20))
            DocumentFactory(collection=campaign.collection, doc_id=doc_id, title="", body=f"<html><body>{chrome}<p>{article}</p></body></html>", is_html=True)
        DocumentFactory(collection=campaign.collection, doc_id="p3", title="", body=f"<p>{' '.join(f'alpha{i}' for i in range(20))}</p>", is_html=True)
        add_run(campaign, "r1", {topics[0]: [("p1", 1, 3.0), ("p2", 2, 2.0), ("p3", 3, 1.0)]})

        build_pool(campaign=campaign, spec=depth(5))

        twins = PoolEntry.objects.filter(duplicate_of__isnull=False).select_related("document", "duplicate_of__document")
        assert {(t.document.doc_id, t.duplicate_of.document.doc_id) for t in twins} in ({("p3", "p1")}, {("p1", "p3")})


class TestPreview:
    def test_the_preview_predicts_what_a_build_adds_and_changes_nothing(self, campaign, topics):
        rng = random.Random(7)
        for tag in ("r1", "r2", "r3"):
            add_run(campaign, tag, {t: [(f"d{rng.randrange(60)}-{tag}-{i}" if i % 3 else f"d{i}", i, rng.random()) for i in range(1, 40)] for t in topics})
        build_pool(campaign=campaign, spec=depth(5))
        count = PoolEntry.objects.count()

        preview = pooling.preview_pool(campaign=campaign, spec=depth(10))

        assert PoolEntry.objects.count() == count
        summary = build_pool(campaign=campaign, spec=depth(10))
        assert [(t.number, t.before, t.added, t.after) for t in preview.topics] == [
            (t.number, t.before, t.added, t.after) for t in summary.topics
        ]
        assert preview.added == summary.added

    def test_the_cost_table_prices_depths_and_rbp_in_hours(self, campaign, topics):
        campaign.seconds_per_judgment = 36  # 100 judgments an hour
        campaign.save()
        add_run(campaign, "r1", {topics[0]: ranked("a", 30), topics[1]: ranked("b", 30)})
        add_run(campaign, "r2", {topics[0]: ranked("c", 30), topics[1]: ranked("b", 30)})

        preview = pooling.preview_pool(campaign=campaign, spec=PoolSpec(strategy="rbp", budget=25))

        costs = {o.label.split(" (")[0]: (o.added, o.hours, o.chosen) for o in preview.options}
        # depth k: topic 51 has 2k distinct documents, topic 52 has k (both runs agree)
        assert costs["depth 5"] == (15, 0.1, False)
        assert costs["depth 10"] == (30, 0.3, False)
        assert costs["depth 20"] == (60, 0.6, False)
        # RBP up to 25 per topic: topic 51 has 60 candidates, topic 52 only 30
        assert costs["RBP p=0.8 up to 25 per topic"] == (50, 0.5, True)
        assert preview.added == 50

    def test_the_rbp_preview_matches_the_build(self, campaign, topics):
        add_run(campaign, "r1", {topics[0]: ranked("a", 8), topics[1]: ranked("b", 30)})
        build_pool(campaign=campaign, spec=depth(5))
        spec = PoolSpec(strategy="rbp", budget=12)

        preview = pooling.preview_pool(campaign=campaign, spec=spec)
        summary = build_pool(campaign=campaign, spec=spec)

        assert [t.added for t in preview.topics] == [t.added for t in summary.topics] == [3, 7]


class TestStatistics:
    def test_it_counts_sizes_contributions_overlap_and_effort(self, campaign, topics, organiser):
        campaign.seconds_per_judgment = 60
        campaign.save()
        add_run(campaign, "r1", {topics[0]: [("a", 1, 3.0), ("b", 2, 2.0), ("c", 3, 1.0)]})
        add_run(campaign, "r2", {topics[0]: [("a", 1, 3.0), ("d", 2, 2.0)], topics[1]: [("a", 1, 1.0)]})
        add_run(campaign, "r3", {topics[1]: [("e", 1, 1.0)]})
        for doc in "abc":
            DocumentFactory(collection=campaign.collection, doc_id=doc, body=f"text of {doc}")
        build_pool(campaign=campaign, spec=depth(5))
        record_judgment(topic=topics[0], document=Document.objects.get(doc_id="a"), assessor=organiser,
                        labels=Labels(relevance=1), phase="main")

        stats = pooling.pool_statistics(campaign=campaign)

        assert [(t.number, t.size, t.judged, t.missing) for t in stats.topics] == [("51", 4, 1, 1), ("52", 2, 0, 1)]
        # r1: a (shared with r2 in topic 51), b, c; r2: a in 51 (shared), d, and a in 52 (alone); r3: e
        assert [(r.tag, r.contributed, r.unique) for r in stats.runs] == [("r1", 3, 2), ("r2", 3, 2), ("r3", 1, 1)]
        assert stats.overlap == [("r1", "r2", 1), ("r1", "r3", 0), ("r2", "r3", 0)]
        assert stats.runs[0].closest == "r2" and stats.runs[0].closest_jaccard == round(1 / 5, 3)
        assert stats.missing_total == 2
        assert (stats.size, stats.judged, stats.to_judge) == (6, 1, 5)
        assert (stats.hours_total, stats.hours_remaining) == (0.1, 0.1)

    def test_contributions_and_overlap_agree_with_the_pure_functions(self, campaign, topics):
        # metrics.pooling counts per topic pool (its own known-answer tests); summed over topics they must equal
        # what the statistics count from the stored sources.
        rng = random.Random(3)
        runs = {}
        for n in range(5):
            runs[f"r{n}"] = {t: [(f"d{rng.randrange(40)}", i, rng.random()) for i in range(1, 30)] for t in topics}
            for t in topics:  # a run lists a document once per topic
                runs[f"r{n}"][t] = list({doc: (doc, r, s) for doc, r, s in runs[f"r{n}"][t]}.values())
            add_run(campaign, f"r{n}", runs[f"r{n}"])
        build_pool(campaign=campaign, spec=depth(6))

        stats = pooling.pool_statistics(campaign=campaign)

        unique, overlap = defaultdict(int), defaultdict(int)
        for t in topics:
            pool = depth_pool({tag: lines[t] for tag, lines in runs.items()}, depth=6)
            for tag, count in unique_contributions(pool).items():
                unique[tag] += count
            for pair, count in run_overlap(pool).items():
                overlap[pair] += count
        assert {r.tag: r.unique for r in stats.runs} == dict(unique)
        assert {(a, b): n for a, b, n in stats.overlap} == dict(overlap)

    def test_it_takes_a_fixed_number_of_queries(self, campaign, topics, django_assert_max_num_queries):
        for n in range(8):
            add_run(campaign, f"r{n}", {t: ranked(f"{t.number}-{n % 3}", 20) for t in topics})
        build_pool(campaign=campaign, spec=depth(10))

        with django_assert_max_num_queries(5):
            stats = pooling.pool_statistics(campaign=campaign)

        assert len(stats.runs) == 8 and stats.size == 60


def test_export_lists_one_line_per_entry(campaign, topics):
    add_run(campaign, "r1", {topics[0]: [("b", 1, 2.0), ("a", 2, 1.0)], topics[1]: [("c", 1, 1.0)]})
    build_pool(campaign=campaign, spec=depth(5))

    assert list(pooling.export_lines(campaign=campaign)) == ["51 a\n", "51 b\n", "52 c\n"]


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
