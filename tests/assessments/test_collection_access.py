"""A collection belongs to the campaigns that use it: attaching it to a new campaign (API, page, create_campaign) or
writing documents into it needs an admin or someone who runs every campaign that uses it; and the text of a document
that has judgments is never changed by an import (issue 23, access item 1)."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import Role
from assessments.models import Campaign, Document, Job
from assessments.services.campaigns import CampaignError, create_campaign
from assessments.services.imports import ImportProblem
from assessments.services.imports.documents import import_documents
from assessments.services.judging import Labels, record_judgment
from tests.factories import CampaignFactory, DocumentFactory, MembershipFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

ORIGINAL = "Cats are independent; dogs are loyal."


@pytest.fixture
def document(campaign):
    return DocumentFactory(collection=campaign.collection, doc_id="d1", title="", body=ORIGINAL)


def _new_campaign(slug: str, **fields) -> dict:
    return {"slug": slug, "name": slug.title(), "preset": "touche-2022-task2", **fields}


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


# --- Attaching a collection ------------------------------------------------------------------------------------


def test_an_organiser_of_another_campaign_cannot_attach_its_collection_through_the_api(campaign, organiser, oscar, document):
    before = Campaign.objects.count()

    response = _api(oscar).post("/api/campaigns/", _new_campaign("grab", collection=campaign.collection.slug), format="json")

    assert response.status_code == 400
    detail = response.json()["detail"]
    assert f"collection {campaign.collection.slug!r} is used by 1 campaign that oscar does not run" in detail
    assert "touche22" not in detail  # campaigns he cannot see are counted, not named
    assert Campaign.objects.count() == before and not Campaign.objects.filter(slug="grab").exists()
    # and so he reaches none of its documents
    assert _api(oscar).get(f"/api/campaigns/{campaign.slug}/documents/").status_code == 404


def test_a_campaign_named_like_another_campaigns_collection_does_not_take_it_silently(oscar):
    CampaignFactory(slug="owned", collection__slug="shared-corpus")

    response = _api(oscar).post("/api/campaigns/", _new_campaign("shared-corpus"), format="json")

    assert response.status_code == 400
    assert "named like the campaign" in response.json()["detail"]
    assert not Campaign.objects.filter(slug="shared-corpus").exists()


def test_the_page_and_the_command_refuse_it_too(client, campaign, organiser, oscar):
    client.force_login(oscar)
    page = client.post(reverse("assessments:campaign_list"), _new_campaign("grab", collection=campaign.collection.slug))
    assert page.status_code == 400 and "oscar does not run" in page.content.decode()

    err = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("create_campaign", "grab2", "--name", "Grab", "--preset", "touche-2022-task2",
                     "--collection", campaign.collection.slug, "--organisers", "oscar", stdout=io.StringIO(), stderr=err)
    assert "oscar does not run" in err.getvalue()
    assert not Campaign.objects.filter(slug__in=["grab", "grab2"]).exists()


def test_someone_who_runs_every_campaign_of_the_collection_or_an_admin_may_share_it(campaign, organiser, admin_user):
    shared = _api(organiser).post("/api/campaigns/", _new_campaign("rerun", collection=campaign.collection.slug), format="json")
    assert shared.status_code == 201 and shared.json()["collection"] == campaign.collection.slug

    # olivia runs touche22 and rerun; a third campaign by ada (an admin, member of neither) may share it as well
    by_admin = create_campaign(slug="third", name="Third", preset="touche-2022-task2", collection=campaign.collection.slug,
                               organisers=[admin_user], created_by=admin_user)
    assert by_admin.collection == campaign.collection
    # but now olivia does not run every campaign that uses it
    with pytest.raises(CampaignError, match="used by 1 campaign that olivia does not run"):
        create_campaign(slug="fourth", name="Fourth", preset="touche-2022-task2", collection=campaign.collection.slug,
                        organisers=[organiser], created_by=organiser)


def test_the_command_without_organisers_is_the_servers_operator_and_may(campaign):
    call_command("create_campaign", "operator", "--name", "Op", "--preset", "touche-2022-task2",
                 "--collection", campaign.collection.slug, stdout=io.StringIO())
    assert Campaign.objects.get(slug="operator").collection == campaign.collection


# --- Writing documents into it -----------------------------------------------------------------------------------


@pytest.fixture
def shared(campaign, organiser, oscar):
    """Oscar's campaign over touche22's collection (as campaigns made before the rule may be)."""
    other = CampaignFactory(slug="oscars", collection=campaign.collection)
    MembershipFactory(campaign=other, user=oscar)
    return other


def _docs(text: str) -> bytes:
    return (json.dumps({"id": "d1", "contents": text}) + "\n").encode()


def test_a_document_upload_into_a_shared_collection_needs_every_campaign_or_an_admin(
    campaign, organiser, shared, document, admin_user, upload_root, django_capture_on_commit_callbacks,
):
    upload = SimpleUploadedFile("docs.jsonl", _docs("Rewritten by someone else."))
    with django_capture_on_commit_callbacks(execute=True):
        response = _api(organiser).post(f"/api/campaigns/{campaign.slug}/documents/", {"file": upload, "format": "passages"})
    assert response.status_code == 400
    assert "used by 1 campaign that olivia does not run" in response.json()["detail"]
    assert not Job.objects.exists()
    assert Document.objects.get(doc_id="d1").body == ORIGINAL

    with pytest.raises(ImportProblem, match="olivia does not run"):
        import_documents(campaign=campaign, paths=[_write(upload_root, _docs("x"))], fmt="passages", by=organiser)
    assert Document.objects.get(doc_id="d1").body == ORIGINAL

    summary = import_documents(campaign=campaign, paths=[_write(upload_root, _docs("Fixed by the admin."))], fmt="passages",
                               by=admin_user)
    assert summary.counts["updated"] == 1 and Document.objects.get(doc_id="d1").body == "Fixed by the admin."


def test_the_page_refuses_the_upload_too(client, campaign, organiser, shared, document, upload_root):
    client.force_login(organiser)
    response = client.post(
        reverse("assessments:import_upload", args=[campaign.slug, "documents"]),
        {"documents-files": SimpleUploadedFile("docs.jsonl", _docs("Rewritten.")), "documents-format": "passages"},
    )
    assert response.status_code == 302
    assert not Job.objects.exists() and Document.objects.get(doc_id="d1").body == ORIGINAL


def _write(folder, data: bytes):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"docs-{len(list(folder.iterdir()))}.jsonl"
    path.write_bytes(data)
    return path


# --- A judged document's text -----------------------------------------------------------------------------------


def test_an_import_never_changes_the_text_of_a_judged_document_and_names_it(campaign, document, upload_root):
    alice = UserFactory(username="alice", role=Role.ASSESSOR)
    topic = TopicFactory(campaign=campaign, number="1")
    record_judgment(topic=topic, document=document, assessor=alice, phase="main", labels=Labels({"relevance": 2}))
    DocumentFactory(collection=campaign.collection, doc_id="d2", title="", body="unjudged")
    lines = _docs("A different text.") + (json.dumps({"id": "d2", "contents": "changed too"}) + "\n").encode()

    with pytest.raises(ImportProblem) as refused:
        import_documents(campaign=campaign, paths=[_write(upload_root, lines)], fmt="passages")

    assert "document d1 has judgments" in str(refused.value) and "nothing was stored" in str(refused.value)
    assert dict(Document.objects.values_list("doc_id", "body")) == {"d1": ORIGINAL, "d2": "unjudged"}


def test_the_same_text_again_a_new_url_or_a_judged_stubs_first_text_are_not_changes(campaign, document, upload_root):
    alice = UserFactory(username="alice", role=Role.ASSESSOR)
    topic = TopicFactory(campaign=campaign, number="1")
    stub = DocumentFactory(collection=campaign.collection, doc_id="stub", title="", body="", has_text=False)
    for judged in (document, stub):
        record_judgment(topic=topic, document=judged, assessor=alice, phase="main", labels=Labels({"relevance": 1}))
    lines = [{"id": "d1", "contents": ORIGINAL, "chatNoirUrl": "https://chatnoir.eu/d1"}, {"id": "stub", "contents": "At last."}]

    summary = import_documents(campaign=campaign, paths=[_write(upload_root, "\n".join(map(json.dumps, lines)).encode())],
                               fmt="passages")

    assert summary.counts["updated"] == 2
    assert Document.objects.get(doc_id="d1").url == "https://chatnoir.eu/d1"
    assert Document.objects.get(doc_id="stub").body == "At last."
