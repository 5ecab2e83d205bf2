"""An organiser changes a campaign's settings after creation (the admin is view-only) on its page or with PATCH
campaigns/<slug>/: the values change and one timeline event holds each changed value before and after. Nothing
changed records nothing; an invalid value or a field that is not a setting changes nothing; only the campaign's own
organisers and admins reach it."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from assessments.models import AuditEvent, Campaign
from assessments.services.campaigns import CampaignError, update_settings

pytestmark = pytest.mark.django_db

SETTINGS_EVENT = AuditEvent.Action.CAMPAIGN_SETTINGS


def _form(campaign: Campaign, **changes) -> dict:
    """What the page's form posts: every setting as shown, with `changes`; an unticked box is left out."""
    values = {
        "name": campaign.name, "guidelines": campaign.guidelines, "seconds_per_judgment": campaign.seconds_per_judgment,
        "agreement_threshold": campaign.agreement_threshold, "overlap_share": campaign.overlap_share,
        "propagate_to_duplicates": "on" if campaign.propagate_to_duplicates else None,
        "machine_disagreement": campaign.machine_disagreement,
        "reveal_machine_labels": "on" if campaign.reveal_machine_labels else None,
    } | changes
    return {key: value for key, value in values.items() if value is not None}


def _settings_url(campaign: Campaign) -> str:
    return reverse("assessments:campaign_settings", args=[campaign.slug])


def test_an_organiser_changes_settings_on_the_page_and_the_timeline_shows_before_and_after(client, campaign, organiser):
    assert (campaign.seconds_per_judgment, campaign.overlap_share, campaign.propagate_to_duplicates) == (30, 0.0, True)
    client.force_login(organiser)
    response = client.post(_settings_url(campaign), _form(
        campaign, name="Touché 2022 Task 2 (rerun)", seconds_per_judgment=45, overlap_share=0.1, propagate_to_duplicates=None,
    ))
    assert response.status_code == 302

    campaign.refresh_from_db()
    assert (campaign.name, campaign.seconds_per_judgment, campaign.overlap_share) == ("Touché 2022 Task 2 (rerun)", 45, 0.1)
    assert campaign.propagate_to_duplicates is False
    assert campaign.agreement_threshold == 0.4
    event = AuditEvent.objects.get(campaign=campaign, action=SETTINGS_EVENT)
    assert event.actor == organiser
    assert event.before == {"name": "Touché 2022 Task 2", "seconds_per_judgment": 30, "overlap_share": 0.0,
                            "propagate_to_duplicates": True}
    assert event.after == {"name": "Touché 2022 Task 2 (rerun)", "seconds_per_judgment": 45, "overlap_share": 0.1,
                           "propagate_to_duplicates": False}
    timeline = client.get(reverse("assessments:timeline", args=[campaign.slug]), {"action": "campaign.settings"})
    assert "Campaign settings changed" in timeline.content.decode()


def test_submitting_the_settings_unchanged_records_nothing(client, campaign, organiser):
    client.force_login(organiser)
    assert client.get(campaign.get_absolute_url()).status_code == 200
    response = client.post(_settings_url(campaign), _form(campaign), follow=True)
    assert "Nothing changed: the settings already had these values." in response.content.decode()
    assert not AuditEvent.objects.filter(action=SETTINGS_EVENT).exists()


def test_guidelines_sent_back_with_a_browsers_line_ends_are_unchanged(client, campaign, organiser):
    campaign.guidelines = "Judge the passage.\nNot the page."
    campaign.save()
    client.force_login(organiser)
    response = client.post(_settings_url(campaign), _form(campaign, guidelines="Judge the passage.\r\nNot the page."), follow=True)
    assert "Nothing changed" in response.content.decode()
    assert not AuditEvent.objects.filter(action=SETTINGS_EVENT).exists()


def test_the_page_says_which_settings_were_saved(client, campaign, organiser):
    client.force_login(organiser)
    response = client.post(_settings_url(campaign), _form(campaign, seconds_per_judgment=45, propagate_to_duplicates=None), follow=True)
    assert "Settings saved: Seconds per judgment, Copy labels to duplicate documents." in response.content.decode()


@pytest.mark.parametrize(("field", "value"), [
    ("agreement_threshold", "1.5"), ("agreement_threshold", "-2"), ("overlap_share", "1.2"), ("overlap_share", "-0.1"),
    ("seconds_per_judgment", "0"), ("name", ""),
])
def test_an_invalid_value_shows_the_form_again_and_changes_nothing(client, campaign, organiser, field, value):
    client.force_login(organiser)
    response = client.post(_settings_url(campaign), _form(campaign, **{"guidelines": "New notes.", field: value}))
    assert response.status_code == 400
    assert response.context["settings_form"].errors[field]
    campaign.refresh_from_db()
    assert campaign.guidelines == ""
    assert not AuditEvent.objects.filter(action=SETTINGS_EVENT).exists()


@pytest.mark.parametrize(("who", "status"), [("oscar", 404), ("alice", 404), ("ada", 302)])
def test_only_the_campaigns_organisers_and_admins_change_its_settings(client, campaign, oscar, alice, admin_user, who, status):
    client.force_login({"oscar": oscar, "alice": alice, "ada": admin_user}[who])
    assert client.post(_settings_url(campaign), _form(campaign, name="Taken over")).status_code == status
    campaign.refresh_from_db()
    assert (campaign.name == "Taken over") is (status == 302)


def test_an_archived_campaign_keeps_taking_settings(client, campaign, organiser):
    """Settings touch no label, so archiving (which closes the campaign to labels) does not freeze them."""
    Campaign.objects.filter(pk=campaign.pk).update(archived_at="2026-01-01T00:00Z")
    client.force_login(organiser)
    assert client.post(_settings_url(campaign), _form(campaign, guidelines="Read the new notes.")).status_code == 302
    campaign.refresh_from_db()
    assert campaign.guidelines == "Read the new notes."


def test_the_slug_preset_collection_and_phase_are_not_settings(campaign, organiser):
    for field in ("slug", "preset", "collection", "phase"):
        with pytest.raises(CampaignError, match="cannot be changed here"):
            update_settings(campaign=campaign, changes={field: "x"}, by=organiser)
    with pytest.raises(CampaignError, match="overlap_share"):
        update_settings(campaign=campaign, changes={"overlap_share": 2.0}, by=organiser)
    assert not AuditEvent.objects.filter(action=SETTINGS_EVENT).exists()


@pytest.mark.parametrize(("who", "status"), [("olivia", 200), ("oscar", 404), ("alice", 403), ("ada", 200)])
def test_patch_changes_settings_for_the_campaigns_organisers(campaign, organiser, oscar, alice, admin_user, who, status):
    api = APIClient()
    api.force_authenticate({"olivia": organiser, "oscar": oscar, "alice": alice, "ada": admin_user}[who])
    response = api.patch(reverse("campaign-detail", args=[campaign.slug]), {"agreement_threshold": 0.6}, format="json")
    assert response.status_code == status
    campaign.refresh_from_db()
    assert campaign.agreement_threshold == (0.6 if status == 200 else 0.4)
    if status == 200:
        assert response.json()["agreement_threshold"] == 0.6
        event = AuditEvent.objects.get(action=SETTINGS_EVENT)
        assert (event.before, event.after) == ({"agreement_threshold": 0.4}, {"agreement_threshold": 0.6})


@pytest.mark.parametrize("body", [{"overlap_share": 1.5}, {"agreement_threshold": -1.5}, {"slug": "renamed"}, {"phase": "main"}])
def test_patch_refuses_invalid_values_and_fields_that_are_not_settings(campaign, organiser, body):
    api = APIClient()
    api.force_authenticate(organiser)
    response = api.patch(reverse("campaign-detail", args=[campaign.slug]), body, format="json")
    assert response.status_code == 400
    campaign.refresh_from_db()
    assert (campaign.slug, campaign.phase, campaign.overlap_share, campaign.agreement_threshold) == ("touche22", "setup", 0.0, 0.4)
    assert not AuditEvent.objects.filter(action=SETTINGS_EVENT).exists()
