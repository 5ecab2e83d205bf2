"""Archiving: how a campaign that can no longer be deleted is put away. Its assessors no longer see it and no
label can be given; organisers see it apart, with everything kept, and can take it out again."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from assessments.models import AuditEvent, Judgment
from assessments.services.campaigns import set_archived
from assessments.services.judging import JudgingClosed, Labels, judge_entry
from tests.factories import CampaignFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def assignment(alice, training_topic, pool):
    return alice.assignments.get(topic=training_topic)


def test_archiving_and_taking_out_are_each_one_audit_event(campaign, organiser):
    set_archived(campaign=campaign, archived=True, by=organiser)
    set_archived(campaign=campaign, archived=True, by=organiser)  # already archived: nothing happens
    campaign.refresh_from_db()
    assert campaign.is_archived
    set_archived(campaign=campaign, archived=False, by=organiser)
    campaign.refresh_from_db()
    assert campaign.archived_at is None
    events = AuditEvent.objects.filter(campaign=campaign).order_by("at", "pk")
    assert [(e.action, e.actor, e.before, e.after) for e in events] == [
        ("campaign.archived", organiser, {"archived": False}, {"archived": True}),
        ("campaign.restored", organiser, {"archived": True}, {"archived": False}),
    ]


def test_an_archived_campaign_disappears_from_its_assessors_work_and_takes_no_labels(client, alice, assignment, pool, organiser):
    client.force_login(alice)
    judge_page = reverse("annotation:judge", args=[assignment.pk, 1])
    assert assignment.topic.title in client.get(reverse("annotation:my_work")).content.decode()

    set_archived(campaign=assignment.topic.campaign, archived=True, by=organiser)

    assert assignment.topic.title not in client.get(reverse("annotation:my_work")).content.decode()
    assert client.get(judge_page).status_code == 404
    save = client.put(reverse("work-judgment", args=[assignment.pk, pool[0].pk]), {"labels": {"relevance": 1}}, content_type="application/json")
    assert save.status_code == 404
    assignment.topic.campaign.refresh_from_db()
    with pytest.raises(JudgingClosed, match="is archived and takes no labels"):
        judge_entry(assignment=assignment, entry=pool[0], labels=Labels({"relevance": 1}), time_spent_ms=0)
    assert not Judgment.objects.exists()

    set_archived(campaign=assignment.topic.campaign, archived=False, by=organiser)
    assert client.get(judge_page).status_code == 200


def test_organisers_see_archived_campaigns_apart_and_can_take_them_out(client, organiser, campaign):
    client.force_login(organiser)
    detail = reverse("assessments:campaign", args=[campaign.slug])
    answer = client.post(reverse("assessments:campaign_archive", args=[campaign.slug]), {"archived": "1"})
    assert answer.status_code == 302 and answer["Location"] == detail

    page = client.get(detail).content.decode()
    assert "Archived" in page and "Take out of the archive" in page
    listing = client.get(reverse("assessments:campaign_list")).content.decode()
    active, archived = listing.split("archived-campaigns", 1)
    assert campaign.name not in active and campaign.name in archived

    client.post(reverse("assessments:campaign_archive", args=[campaign.slug]), {"archived": "0"})
    campaign.refresh_from_db()
    assert not campaign.is_archived


@pytest.mark.parametrize("who", ["alice", "stranger"])
def test_only_organisers_of_the_campaign_archive_it(client, campaign, alice, who):
    user = alice if who == "alice" else UserFactory(username="oscar", role="organiser")  # runs no campaign
    client.force_login(user)
    assert client.post(reverse("assessments:campaign_archive", args=[campaign.slug]), {"archived": "1"}).status_code == 404
    api = APIClient()
    api.force_authenticate(user)
    assert api.post(f"/api/campaigns/{campaign.slug}/archive/", {"archived": True}, format="json").status_code in (403, 404)
    campaign.refresh_from_db()
    assert not campaign.is_archived


def test_the_api_archives_and_lists_when(organiser, campaign):
    api = APIClient()
    api.force_authenticate(organiser)
    archived = api.post(f"/api/campaigns/{campaign.slug}/archive/", {"archived": True}, format="json")
    assert archived.status_code == 200 and archived.json()["archived_at"] is not None
    listed = {c["slug"]: c["archived_at"] for c in api.get("/api/campaigns/").json()["results"]}
    assert listed[campaign.slug] == archived.json()["archived_at"]
    assert api.post(f"/api/campaigns/{campaign.slug}/archive/", {"archived": False}, format="json").json()["archived_at"] is None


def test_other_campaigns_of_the_assessor_stay_in_their_work(client, alice, assignment, organiser):
    other = CampaignFactory(slug="other")
    set_archived(campaign=other, archived=True, by=None)
    client.force_login(alice)
    assert assignment.topic.title in client.get(reverse("annotation:my_work")).content.decode()
