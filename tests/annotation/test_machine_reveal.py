"""Showing machine labels to assessors: never by default, never before their own label is saved, and each showing
recorded, so their later changes count as model-influenced."""

import pytest
from django.urls import reverse

from assessments.models import MachineExposure, MachineJudge, MachineLabel
from assessments.services import machine_judges
from assessments.services.campaigns import update_settings
from assessments.services.judging import Labels, record_judgment
from tests.factories import AssignmentFactory, PoolEntryFactory, UserFactory

REASON = "It compares cats and dogs directly (machine reason 7c1e)."


@pytest.fixture
def setup(campaign, training_topic):
    entry = PoolEntryFactory(topic=training_topic, order=0)
    judge = MachineJudge.objects.create(campaign=campaign, name="gpt", kind="endpoint", model="m", base_url="http://h/v1")
    MachineLabel.objects.create(judge=judge, topic=training_topic, document=entry.document, dimension="relevance",
                                status="ok", labels={"relevance": 2}, model="m", reason=REASON)
    ann = UserFactory(username="ann")
    assignment = AssignmentFactory(topic=training_topic, assessor=ann, phase="training")
    return campaign, entry, ann, assignment


def _page(client, assignment):
    return client.get(reverse("annotation:judge", args=[assignment.pk, 1])).content.decode()


def test_machine_labels_are_shown_only_when_the_campaign_says_and_only_after_saving(client, setup):
    campaign, entry, ann, assignment = setup
    client.force_login(ann)
    record_judgment(topic=entry.topic, document=entry.document, assessor=ann, phase="training", labels=Labels({"relevance": 1}))
    assert REASON not in _page(client, assignment)  # saved, but the campaign does not reveal
    update_settings(campaign=campaign, changes={"reveal_machine_labels": True}, by=None)
    assert REASON in _page(client, assignment)
    exposure = MachineExposure.objects.get()
    assert (exposure.assessor, exposure.document, exposure.label.reason) == (ann, entry.document, REASON)
    # A change after seeing it is model-influenced; the judgment before it was not.
    assert not machine_judges.influenced(campaign).exists()
    record_judgment(topic=entry.topic, document=entry.document, assessor=ann, phase="training", labels=Labels({"relevance": 2}))
    assert list(machine_judges.influenced(campaign).values_list("assessor__username", flat=True)) == ["ann"]


def test_nothing_is_shown_before_the_assessor_has_saved(client, setup):
    campaign, _, ann, assignment = setup
    update_settings(campaign=campaign, changes={"reveal_machine_labels": True}, by=None)
    client.force_login(ann)
    assert REASON not in _page(client, assignment) and not MachineExposure.objects.exists()


def test_the_judges_page_counts_model_influenced_judgments(client, setup, organiser):
    campaign, entry, ann, assignment = setup
    update_settings(campaign=campaign, changes={"reveal_machine_labels": True}, by=None)
    record_judgment(topic=entry.topic, document=entry.document, assessor=ann, phase="training", labels=Labels({"relevance": 1}))
    client.force_login(ann)
    _page(client, assignment)
    record_judgment(topic=entry.topic, document=entry.document, assessor=ann, phase="training", labels=Labels({"relevance": 2}))
    client.force_login(organiser)
    page = client.get(reverse("assessments:machine_judges", args=[campaign.slug])).content.decode()
    assert "1 judgment changed after the assessor saw a machine label" in page
