"""Django's admin shows the judgment record and the qrels snapshots, and changes none of them."""

import pytest

from assessments.models import QrelsSnapshot
from assessments.services.exports import export_qrels
from assessments.services.judging import Labels, record_judgment
from tests.factories import DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def record(campaign):
    topic = TopicFactory(campaign=campaign, number="1")
    carol = UserFactory(username="carol")
    judgment = record_judgment(topic=topic, document=DocumentFactory(collection=campaign.collection), assessor=carol,
                               labels=Labels(relevance=2, note="kept"), phase="main")
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


def test_deleting_a_judged_campaign_in_the_admin_is_refused_with_the_reason(superuser_client, record, campaign):
    page = superuser_client.post(f"/admin/assessments/campaign/{campaign.pk}/delete/", {"post": "yes"})
    assert page.status_code == 200 and "Cannot delete campaign" in page.content.decode()
    assert type(campaign).objects.filter(pk=campaign.pk).exists()
