"""What the pool page reads: the statistics, the cost preview of a build, and the pool as `qid doc` lines."""

import random
from collections import defaultdict

import pytest

from assessments.metrics.pooling import depth_pool, run_overlap, unique_contributions
from assessments.models import Document, PoolEntry
from assessments.selectors.pool_preview import preview_pool
from assessments.selectors.pools import export_lines, pool_statistics
from assessments.services.judging import Labels, record_judgment
from assessments.services.pooling import PoolSpec, build_pool
from tests.assessments.pool_fixtures import add_run, depth, ranked
from tests.factories import DocumentFactory, TopicFactory


@pytest.fixture
def topics(campaign):
    return [TopicFactory(campaign=campaign, number=str(n), position=n) for n in (51, 52)]


class TestPreview:
    def test_the_preview_predicts_what_a_build_adds_and_changes_nothing(self, campaign, topics):
        rng = random.Random(7)
        for tag in ("r1", "r2", "r3"):
            add_run(campaign, tag, {t: [(f"d{rng.randrange(60)}-{tag}-{i}" if i % 3 else f"d{i}", i, rng.random()) for i in range(1, 40)] for t in topics})
        build_pool(campaign=campaign, spec=depth(5))
        count = PoolEntry.objects.count()

        preview = preview_pool(campaign=campaign, spec=depth(10))

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

        preview = preview_pool(campaign=campaign, spec=PoolSpec(strategy="rbp", budget=25))

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

        preview = preview_pool(campaign=campaign, spec=spec)
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
                        labels=Labels({"relevance": 1}), phase="main")

        stats = pool_statistics(campaign=campaign)

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

        stats = pool_statistics(campaign=campaign)

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
            stats = pool_statistics(campaign=campaign)

        assert len(stats.runs) == 8 and stats.size == 60


def test_export_lists_one_line_per_entry(campaign, topics):
    add_run(campaign, "r1", {topics[0]: [("b", 1, 2.0), ("a", 2, 1.0)], topics[1]: [("c", 1, 1.0)]})
    build_pool(campaign=campaign, spec=depth(5))

    assert list(export_lines(campaign=campaign)) == ["51 a\n", "51 b\n", "52 c\n"]
