"""Grouping a pool's duplicates: which entries become twins, which one is canonical, and how labels reach twins."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessments.models import Document, Judgment, JudgmentEvent, PoolEntry
from assessments.services import judging
from assessments.services.duplicates import group_duplicates
from assessments.services.judging import Labels, record_judgment
from assessments.services.pooling import build_pool
from tests.assessments.pool_fixtures import add_run, depth
from tests.factories import DocumentFactory, TopicFactory


@pytest.fixture
def topics(campaign):
    return [TopicFactory(campaign=campaign, number=str(n), position=n) for n in (51, 52)]


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
            labels=Labels({"relevance": 2, "quality": 1, "stance": "FIRST"}), phase="main",
        )

        with CaptureQueriesContext(connection) as queries:
            copied = judging.propagate_to_twins(judgment=judgment, entry=canonical)

        twins = Judgment.objects.filter(topic=topics[0], source="duplicate")
        assert copied == 2
        assert sorted(twins.values_list("document__doc_id", flat=True)) == sorted(set("abc") - {canonical.document.doc_id})
        assert [(j.labels, j.assessor_id) for j in twins] == [({"relevance": 2, "quality": 1, "stance": "FIRST"}, organiser.pk)] * twins.count()
        assert JudgmentEvent.objects.filter(judgment__in=twins, source="duplicate", revision=1).count() == 2
        assert sum('FROM "assessments_poolentry"' in q["sql"] for q in queries.captured_queries) == 1

    def test_a_changed_label_reaches_the_twins_as_a_new_revision(self, campaign, topics, organiser):
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, "")])
        canonical = PoolEntry.objects.get(topic=topics[0], duplicate_of=None)
        for relevance in (2, 0):
            judgment = record_judgment(topic=topics[0], document=canonical.document, assessor=organiser,
                                       labels=Labels({"relevance": relevance}), phase="main")
            judging.propagate_to_twins(judgment=judgment, entry=canonical)

        twin = Judgment.objects.get(topic=topics[0], source="duplicate")
        assert (twin.labels, twin.revision) == ({"relevance": 0}, 2)
        assert [event.labels["relevance"] for event in twin.events.all()] == [2, 0]

    def test_judging_a_twin_labels_the_rest_of_its_group(self, campaign, topics, organiser):
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, ""), ("c", self.TEXT, "")])
        twin = PoolEntry.objects.filter(topic=topics[0], duplicate_of__isnull=False).first()
        judgment = record_judgment(topic=topics[0], document=twin.document, assessor=organiser, labels=Labels({"relevance": 1}), phase="main")

        assert judging.propagate_to_twins(judgment=judgment, entry=twin) == 2
        assert Judgment.objects.filter(topic=topics[0], labels__relevance=1).count() == 3

    def test_propagation_can_be_turned_off(self, campaign, topics, organiser):
        campaign.propagate_to_duplicates = False
        campaign.save()
        self._pool(campaign, topics[0], [("a", self.TEXT, ""), ("b", self.TEXT, "")])
        canonical = PoolEntry.objects.get(topic=topics[0], duplicate_of=None)
        judgment = record_judgment(topic=topics[0], document=canonical.document, assessor=organiser, labels=Labels({"relevance": 2}), phase="main")

        assert judging.propagate_to_twins(judgment=judgment, entry=canonical) == 0
        assert Judgment.objects.count() == 1

    def test_a_twin_pooled_after_its_original_was_judged_gets_the_label(self, campaign, topics, organiser):
        DocumentFactory(collection=campaign.collection, doc_id="orig", title="", body=self.TEXT)
        DocumentFactory(collection=campaign.collection, doc_id="copy", title="", body=self.TEXT)
        add_run(campaign, "early", {topics[0]: [("orig", 1, 1.0)]})
        build_pool(campaign=campaign, spec=depth(5))
        orig = PoolEntry.objects.get(document__doc_id="orig")
        record_judgment(topic=topics[0], document=orig.document, assessor=organiser, labels=Labels({"relevance": 2}), phase="main")
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
                            labels=Labels({"relevance": relevance}), phase="main")
        Document.objects.filter(doc_id__in=["orig", "copy"]).update(body=self.TEXT, has_text=True)  # text arrives

        summary = group_duplicates(campaign=campaign)

        assert summary.twins == 1 and summary.labels_copied == 0
        assert {j.document.doc_id: j.labels for j in Judgment.objects.select_related("document")} == {"orig": {"relevance": 2}, "copy": {"relevance": 0}}

    def test_a_judged_member_becomes_canonical_and_stays(self, campaign, topics, organiser):
        add_run(campaign, "r1", {topics[0]: [("a", 1, 2.0), ("b", 2, 1.0)]})
        build_pool(campaign=campaign, spec=depth(5))  # stubs: no text, no group yet
        later = max(PoolEntry.objects.filter(topic=topics[0]), key=lambda e: e.order)
        record_judgment(topic=topics[0], document=later.document, assessor=organiser, labels=Labels({"relevance": 2}), phase="main")
        Document.objects.filter(doc_id__in="ab").update(body=self.TEXT, has_text=True)

        group_duplicates(campaign=campaign)
        earlier = PoolEntry.objects.exclude(pk=later.pk).get(topic=topics[0])
        record_judgment(topic=topics[0], document=earlier.document, assessor=organiser, labels=Labels({"relevance": 2}), phase="main")
        group_duplicates(campaign=campaign)

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
