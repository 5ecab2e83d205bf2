"""The database itself rejects data that breaks the domain's invariants, whatever path it comes by."""

import pytest
from django.db import IntegrityError, transaction

from accounts.models import User
from assessments.models import Campaign, Document, Judgment, JudgmentEvent, Topic
from assessments.services.judging import Labels, record_judgment
from tests.factories import CampaignFactory, DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


def raw_judgment(topic, document, assessor, labels=None) -> Judgment:
    """Insert with the ORM directly, bypassing the service, to prove the database enforces the rule
    (with the history row the database asks for at commit, see test_tamper_evidence)."""
    labels = {"relevance": 1} if labels is None else labels
    judgment = Judgment.objects.create(topic=topic, document=document, assessor=assessor, phase="main", labels=labels)
    JudgmentEvent.objects.create(judgment=judgment, assessor=assessor, revision=1, source="web", labels=labels)
    return judgment


@pytest.fixture
def doc(campaign):
    return DocumentFactory(collection=campaign.collection)


@pytest.fixture
def topic(campaign):
    return TopicFactory(campaign=campaign, number="7")


def test_it_allows_one_judgment_per_assessor_topic_and_document(topic, doc):
    carol = UserFactory(username="carol")
    raw_judgment(topic, doc, carol)
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_judgment(topic, doc, carol, {"relevance": 2})
    assert Judgment.objects.filter(assessor=carol).count() == 1


def test_two_assessors_may_judge_the_same_document(topic, doc):
    raw_judgment(topic, doc, UserFactory(username="carol"))
    raw_judgment(topic, doc, UserFactory(username="dave"))
    assert Judgment.objects.filter(topic=topic, document=doc).count() == 2


@pytest.mark.parametrize(
    ("labels", "accepted"),
    [
        ({"relevance": 2, "quality": 0, "stance": "FIRST"}, True),
        ({"relevance": 0}, True),
        ({}, True),  # a judgment with only a note or a flag
        ({"relevance": 1, "quality": None}, False),  # no value is an absent key, never null
        ({"relevance": 1, "stance": ""}, False),
        ({"relevance": "1"}, False),  # relevance is graded: 1, not "1"
        ({"relevance": 1, "coherence": 1}, False),  # 2022 Task 2 has no coherence
        ({"relevance": 3}, False),  # 2022 Task 2 relevance is 0–2
        ({"relevance": -2}, False),  # −2 (spam) exists only in the 2020 Task 1 scheme
        ({"relevance": 1, "quality": 5}, False),
        ({"relevance": 1, "stance": "PRO"}, False),  # PRO/CON belong to Task 1 schemes, not comparative
    ],
)
def test_it_accepts_only_labels_of_the_campaigns_scheme(topic, doc, labels, accepted):
    carol = UserFactory(username="carol")
    if accepted:
        raw_judgment(topic, doc, carol, labels)
        assert Judgment.objects.filter(assessor=carol).count() == 1
    else:
        with pytest.raises(IntegrityError), transaction.atomic():
            raw_judgment(topic, doc, carol, labels)
        assert not Judgment.objects.filter(assessor=carol).exists()


def test_an_update_to_a_label_outside_the_scheme_is_rejected_too(topic, doc):
    judgment = raw_judgment(topic, doc, UserFactory(username="carol"))
    judgment.labels = {"relevance": 7}
    judgment.revision = 2
    with pytest.raises(IntegrityError), transaction.atomic():
        judgment.save(update_fields=["labels", "revision"])
    judgment.refresh_from_db()
    assert judgment.labels == {"relevance": 1}


@pytest.mark.parametrize(
    "labels, message",
    [
        ({"relevance": 7}, "relevance 7 is not in the campaign's label scheme"),
        ({"quality": 5}, "quality 5 is not in the campaign's label scheme"),
        ({"stance": "PRO"}, 'stance "PRO" is not in the campaign\'s label scheme'),
    ],
)
def test_one_bad_label_among_many_rows_of_one_statement_fails_the_statement(topic, campaign, labels, message):
    carol = UserFactory(username="carol")
    documents = [DocumentFactory(collection=campaign.collection) for _ in range(3)]
    judgments = [Judgment(topic=topic, document=d, assessor=carol, phase="main", labels={"relevance": 1}) for d in documents[:2]]
    judgments.append(Judgment(topic=topic, document=documents[2], assessor=carol, phase="main", labels={"relevance": 1, **labels}))
    with pytest.raises(IntegrityError, match=message), transaction.atomic():
        Judgment.objects.bulk_create(judgments)  # one INSERT of three rows
    assert not Judgment.objects.filter(assessor=carol).exists()


def test_an_update_of_many_rows_with_a_label_outside_the_scheme_changes_none(topic, campaign):
    carol = UserFactory(username="carol")
    judgments = [raw_judgment(topic, DocumentFactory(collection=campaign.collection), carol) for _ in range(3)]
    with pytest.raises(IntegrityError, match="relevance 3 is not in the campaign's label scheme"), transaction.atomic():
        Judgment.objects.filter(assessor=carol).update(labels={"relevance": 3}, revision=2)
    assert set(Judgment.objects.filter(pk__in=[j.pk for j in judgments]).values_list("labels__relevance", flat=True)) == {1}


def test_the_2020_scheme_accepts_spam_and_a_causal_scheme_has_no_quality():
    spam_topic = TopicFactory(campaign=CampaignFactory(preset="touche-2020-task1"))
    causal_topic = TopicFactory(campaign=CampaignFactory(preset="touche-2023-task2"))
    carol = UserFactory(username="carol")
    raw_judgment(spam_topic, DocumentFactory(collection=spam_topic.campaign.collection), carol, {"relevance": -2})
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_judgment(causal_topic, DocumentFactory(collection=causal_topic.campaign.collection), carol, {"relevance": 1, "quality": 1})
    raw_judgment(causal_topic, DocumentFactory(collection=causal_topic.campaign.collection), carol, {"relevance": 1, "stance": "REFUTE"})


def test_topic_numbers_are_unique_within_a_campaign_only(campaign):
    TopicFactory(campaign=campaign, number="51")
    with pytest.raises(IntegrityError), transaction.atomic():
        TopicFactory(campaign=campaign, number="51")
    TopicFactory(campaign=CampaignFactory(), number="51")
    assert Topic.objects.filter(number="51").count() == 2


def test_document_ids_are_unique_within_a_collection_only(campaign):
    DocumentFactory(collection=campaign.collection, doc_id="S197beaca-A971412e6")
    with pytest.raises(IntegrityError), transaction.atomic():
        DocumentFactory(collection=campaign.collection, doc_id="S197beaca-A971412e6")
    DocumentFactory(doc_id="S197beaca-A971412e6")
    assert Document.objects.filter(doc_id="S197beaca-A971412e6").count() == 2


def test_judgment_history_cannot_be_rewritten(topic, doc):
    carol = UserFactory(username="carol")
    judgment = record_judgment(topic=topic, document=doc, assessor=carol, labels=Labels({"relevance": 1}), phase="main")
    event = judgment.events.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentEvent.objects.filter(pk=event.pk).update(labels={"relevance": 2})
    event.refresh_from_db()
    assert event.labels == {"relevance": 1}


@pytest.mark.parametrize(
    ("model", "field", "value"),
    [(Campaign, "phase", "finished"), (User, "role", "superhero"), (Judgment, "phase", "setup")],
)
def test_choice_fields_are_checked_by_the_database(topic, doc, model, field, value):
    carol = UserFactory(username="carol")
    instance = {Campaign: topic.campaign, User: carol, Judgment: raw_judgment(topic, doc, carol)}[model]
    with pytest.raises(IntegrityError), transaction.atomic():
        model.objects.filter(pk=instance.pk).update(**{field: value})
