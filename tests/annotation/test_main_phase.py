"""Main-phase topics wait for the main phase (issue 23: they could be opened and judged in setup or training), and
the last document left to judge of a topic tells the judge page where the assessor goes next."""

import pytest
from django.urls import reverse

from assessments.models import Campaign, Judgment, Phase
from tests.annotation.test_pages import judge, judge_page, payload
from tests.factories import AssignmentFactory, PoolEntryFactory, TopicFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def main(alice, campaign):
    """alice's main-phase topic 7 of `campaign`, with one document."""
    topic = TopicFactory(campaign=campaign, number="7", title="Which is faster, trains or planes?")
    return AssignmentFactory(topic=topic, assessor=alice, phase="main"), PoolEntryFactory(topic=topic)


@pytest.mark.parametrize("phase", [Phase.SETUP, Phase.TRAINING])
def test_a_main_phase_topic_is_refused_by_its_pages_and_the_api_before_the_main_phase(login, assignment, pool, campaign, main, phase):
    Campaign.objects.filter(pk=campaign.pk).update(phase=phase)
    topic_assignment, entry = main
    client = login(assignment.assessor)
    for url in (reverse("annotation:resume", args=[topic_assignment.pk]), reverse("annotation:judge", args=[topic_assignment.pk, 1]),
                reverse("annotation:document", args=[topic_assignment.pk, entry.document_id])):
        refused = client.get(url)
        assert refused.status_code == 403, url
        assert "Topic 7 opens with the main phase" in refused.content.decode()
        assert f"The main phase of campaign &#x27;{campaign.name}&#x27; has not started (it is in {phase.label.lower()})" in refused.content.decode()
    save = client.put(reverse("work-judgment", args=[topic_assignment.pk, entry.pk]), {"labels": {"relevance": 2}},
                      content_type="application/json")
    assert save.status_code == 409 and save.json()["code"] == "not_started", save.content
    assert "has not started" in save.json()["detail"]
    # The training topic is judged all the while.
    trained = client.put(reverse("work-judgment", args=[assignment.pk, pool[0].pk]), {"labels": {"relevance": 1}},
                         content_type="application/json")
    assert trained.status_code == 200
    assert list(Judgment.objects.values_list("topic__number", "labels")) == [("1", {"relevance": 1})]

    Campaign.objects.filter(pk=campaign.pk).update(phase=Phase.MAIN)
    assert judge_page(client, topic_assignment, 1).status_code == 200
    saved = client.put(reverse("work-judgment", args=[topic_assignment.pk, entry.pk]), {"labels": {"relevance": 2}},
                       content_type="application/json")
    assert saved.status_code == 200


def test_only_the_last_document_left_says_where_to_go_once_the_topic_is_judged(login, assignment, pool, campaign, main):
    client = login(assignment.assessor)
    assert "afterTopic" not in payload(judge_page(client, assignment, 1))
    judge(pool[0], assignment.assessor, 1)
    judge(pool[1], assignment.assessor, 2)
    # Topic 7 is a main-phase topic in a campaign still in setup: nothing is open after this one.
    assert payload(judge_page(client, assignment, 3))["afterTopic"] == {"url": reverse("annotation:my_work"), "topic": ""}
    Campaign.objects.filter(pk=campaign.pk).update(phase=Phase.MAIN)
    after = {"url": reverse("annotation:resume", args=[main[0].pk]), "topic": "7 · Which is faster, trains or planes?"}
    assert payload(judge_page(client, assignment, 3))["afterTopic"] == after
    part = client.get(reverse("annotation:judge", args=[assignment.pk, 3]), headers={"HX-Request": "true"})
    assert payload(part)["afterTopic"] == after  # the part the script swaps in carries it too
    assert "afterTopic" not in payload(judge_page(client, assignment, 1))  # document 3 is left to judge beside it
