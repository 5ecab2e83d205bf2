"""Django's admin shows the judgment record, the qrels snapshots and every other part of a campaign's state, and
changes none of it: a change made there would skip the audit trail and the checks of the services (a judged topic
rewritten without confirmation, an assignment gone without a trace). Users stay editable there."""

import pytest
from django.contrib import admin
from django.urls import reverse

from assessments.admin import ReadOnlyAdmin
from assessments.models import Assignment, AuditEvent, Campaign, QrelsSnapshot, Topic
from assessments.services.exports import export_qrels
from assessments.services.judging import Labels, record_judgment
from tests.factories import AssignmentFactory, DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def record(campaign):
    topic = TopicFactory(campaign=campaign, number="1")
    carol = UserFactory(username="carol")
    judgment = record_judgment(topic=topic, document=DocumentFactory(collection=campaign.collection), assessor=carol,
                               labels=Labels({"relevance": 2}, note="kept"), phase="main")
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    return {"judgment": judgment, "judgmentevent": judgment.events.get(), "qrelssnapshot": QrelsSnapshot.objects.get()}


@pytest.fixture
def superuser_client(client):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


@pytest.mark.parametrize("model", ["judgment", "judgmentevent", "qrelssnapshot"])
def test_the_admin_shows_the_record_read_only(superuser_client, record, model):
    base = f"/admin/assessments/{model}/"
    item = record[model]
    listing = superuser_client.get(base)
    assert listing.status_code == 200 and f'href="{base}add/"' not in listing.content.decode()
    page = superuser_client.get(f"{base}{item.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="_save"' not in html and "Delete" not in html
    assert superuser_client.post(f"{base}{item.pk}/change/", {}).status_code == 403
    assert superuser_client.post(f"{base}{item.pk}/delete/", {"post": "yes"}).status_code == 403
    assert superuser_client.get(f"{base}add/").status_code == 403
    assert superuser_client.post(base, {"action": "delete_selected", "_selected_action": [item.pk], "post": "yes"}).status_code in (200, 302)
    assert type(item).objects.filter(pk=item.pk).exists()


def test_the_admin_shows_a_judgments_history_on_its_page(superuser_client, record):
    html = superuser_client.get(f"/admin/assessments/judgment/{record['judgment'].pk}/change/").content.decode()
    assert "kept" in html and "Judgment events" in html


def test_deleting_a_campaign_in_the_admin_is_refused(superuser_client, record, campaign):
    assert superuser_client.post(f"/admin/assessments/campaign/{campaign.pk}/delete/", {"post": "yes"}).status_code == 403
    assert type(campaign).objects.filter(pk=campaign.pk).exists()


ASSESSMENT_ADMINS = [(model, model_admin) for model, model_admin in admin.site._registry.items() if model._meta.app_label == "assessments"]


@pytest.mark.parametrize(("model", "model_admin"), ASSESSMENT_ADMINS, ids=[m._meta.model_name for m, _ in ASSESSMENT_ADMINS])
def test_every_campaign_model_is_view_only_even_for_a_superuser(rf, model, model_admin):
    request = rf.get("/admin/")
    request.user = UserFactory(username="root", is_staff=True, is_superuser=True)
    assert isinstance(model_admin, ReadOnlyAdmin) and model_admin.changed_through
    for each in [model_admin, *model_admin.get_inline_instances(request)]:
        assert each.has_view_permission(request)
        assert not (each.has_add_permission(request, None) or each.has_change_permission(request) or each.has_delete_permission(request))


def test_a_judged_topics_title_cannot_be_rewritten_in_the_admin(superuser_client, record):
    topic = record["judgment"].topic
    title, events = topic.title, AuditEvent.objects.count()
    url = reverse("admin:assessments_topic_change", args=[topic.pk])
    page = superuser_client.get(url)
    assert page.status_code == 200 and "View topic" in page.text and "import_topics" in page.text
    assert 'name="_save"' not in page.text

    response = superuser_client.post(url, {"campaign": topic.campaign_id, "number": topic.number, "title": "Cats or dogs, which is worse?"})

    assert response.status_code == 403
    assert Topic.objects.get(pk=topic.pk).title == title
    assert superuser_client.post(reverse("admin:assessments_topic_delete", args=[topic.pk]), {"post": "yes"}).status_code == 403
    assert Topic.objects.filter(pk=topic.pk).exists() and AuditEvent.objects.count() == events


def test_an_assignment_cannot_be_deleted_or_added_in_the_admin(superuser_client, alice, campaign):
    assignment = AssignmentFactory(topic=TopicFactory(campaign=campaign), assessor=alice)

    assert superuser_client.post(reverse("admin:assessments_assignment_delete", args=[assignment.pk]), {"post": "yes"}).status_code == 403
    assert superuser_client.get(reverse("admin:assessments_assignment_add")).status_code == 403
    bulk = superuser_client.post(reverse("admin:assessments_assignment_changelist"), {"action": "delete_selected", "_selected_action": [assignment.pk], "post": "yes"})

    assert bulk.status_code in (200, 302)  # the action is not offered: nothing happens
    assert Assignment.objects.filter(pk=assignment.pk, active=True).exists()


def test_a_campaigns_phase_round_and_scheme_cannot_be_changed_in_the_admin(superuser_client, campaign):
    url = reverse("admin:assessments_campaign_change", args=[campaign.pk])
    before = Campaign.objects.values("phase", "training_round", "scheme").get(pk=campaign.pk)

    response = superuser_client.post(url, {"slug": campaign.slug, "name": campaign.name, "preset": campaign.preset, "phase": "main", "training_round": 3, "scheme": "{}"})

    assert response.status_code == 403
    assert Campaign.objects.values("phase", "training_round", "scheme").get(pk=campaign.pk) == before
    assert "agreement page" in superuser_client.get(reverse("admin:assessments_campaign_changelist")).text


def test_users_stay_editable_in_the_admin(superuser_client, alice):
    assert superuser_client.get(reverse("admin:accounts_user_add")).status_code == 200
    page = superuser_client.get(reverse("admin:accounts_user_change", args=[alice.pk]))
    assert page.status_code == 200 and 'name="_save"' in page.text
