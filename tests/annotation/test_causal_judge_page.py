"""The judge page of a causal topic (Touché 2023 Task 2): the direction asked, cause → effect, stands above every
document and in the topic pane, with the keys of the scheme's first question, so the assessor checks the direction
before anything else. Topics without a cause and an effect get no such bar."""

import re

import pytest
from django.urls import reverse

from tests.factories import AssignmentFactory, CampaignFactory, PoolEntryFactory, TopicFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def causal(alice):
    topic = TopicFactory(campaign=CampaignFactory(preset="touche-2023-task2", phase="main"), title="Can eating broccoli lead to constipation?",
                         compared_objects=[], cause="broccoli", effect="constipation")
    for i in range(2):
        PoolEntryFactory(topic=topic, order=i)
    return AssignmentFactory(topic=topic, assessor=alice)


def page_of(client, assignment, position=1, **headers) -> str:
    response = client.get(reverse("annotation:judge", args=[assignment.pk, position]), headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def test_a_causal_topic_shows_cause_then_effect_above_the_document(login, alice, causal):
    page = page_of(login(alice), causal)
    bar = re.search(r'<div class="causal-bar".*?</div>', page, re.S)
    assert bar is not None
    # Above the document's own head, inside the document's region (so every layout shows it).
    assert page.index('id="doc-pane"') < bar.start() < page.index('id="doc-head-main"')
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", bar.group())).strip()
    assert text.startswith("Asked broccoli → constipation")
    # The first question's keys, read from the scheme: its title and each value's key and name.
    assert "Direction of causality first: c Cause → effect, as asked w Wrong direction: off-topic" in text
    assert 'aria-label="Direction asked: does broccoli cause constipation?"' in bar.group()


def test_the_topic_pane_reads_cause_arrow_effect(login, alice, causal):
    page = page_of(login(alice), causal)
    pane = re.search(r'<p class="topic-objects causal".*?</p>', page, re.S).group()
    assert re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", pane)).strip() == "broccoli → constipation"
    assert 'title="Cause">broccoli<' in pane and 'title="Effect">constipation<' in pane


def test_the_next_documents_part_leaves_the_bar_to_the_page(login, alice, causal):
    """The bar belongs to the topic: the page keeps it while its script swaps documents in."""
    part = page_of(login(alice), causal, 2, **{"HX-Request": "true"})
    assert "causal-bar" not in part


def test_a_topic_without_cause_and_effect_has_no_bar(login, alice, training_topic, pool):
    from assessments.models import Assignment

    assignment = Assignment.objects.get(assessor=alice, topic=training_topic)
    page = page_of(login(alice), assignment)
    assert "causal-bar" not in page and "topic-objects causal" not in page


def test_a_word_of_a_cause_of_several_words_is_highlighted_alone_too():
    """Touché 2023's causes and effects are often phrases ("computer work"): a document that says "broccoli" without
    "eating" is marked too, while the whole phrase keeps its colour."""
    from assessments.rendering import topic_terms

    terms = topic_terms(title="Can eating broccoli lead to constipation?", compared_objects=[], cause="eating broccoli", effect="constipation")
    assert terms == {"objects": ["eating broccoli", "constipation"], "terms": ["eating", "broccoli"]}
