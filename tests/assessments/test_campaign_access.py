"""Per-campaign access: olivia runs touche22, oscar runs another campaign. Each reaches every page, endpoint,
export and job of their own campaign and gets 404 for the other's; admins reach both; assessors reach neither.
One assessor's training labels are for admins and the campaign's adjudicators only (test_training_blindness.py)."""

import html
import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from assessments.labels import LabelScheme
from assessments.models import Assignment, Campaign, Job, Membership, QrelsSnapshot
from assessments.services import exports
from assessments.services.judging import Labels, record_judgment
from tests.factories import CUSTOM_SCHEME

pytestmark = pytest.mark.django_db

SLUG = "touche22"
PAGES = [
    "campaign", "imports", "pool", "assignments", "qrels", "leaderboard", "leaderboard_csv", "pool_export", "disagreements",
]
API = ["campaign-detail", "api-topics", "api-runs", "api-documents", "api-pool", "api-pool-export", "api-assignments",
       "api-qrels", "api-results", "api-members"]


@pytest.fixture
def cast(organiser, oscar, admin_user, alice):
    return {"olivia": organiser, "oscar": oscar, "ada": admin_user, "alice": alice}


@pytest.fixture
def judged(campaign, alice, bob, pool):
    """alice and bob disagree on the first training document."""
    topic = pool[0].topic
    record_judgment(topic=topic, document=pool[0].document, assessor=alice, labels=Labels({"relevance": 2}), phase="training")
    record_judgment(topic=topic, document=pool[0].document, assessor=bob, labels=Labels({"relevance": 0}), phase="training")
    return pool


@pytest.fixture
def job(campaign, organiser):
    return Job.objects.create(campaign=campaign, kind="import_topics", created_by=organiser, status=Job.Status.SUCCEEDED)


@pytest.fixture
def snapshot(campaign, organiser, judged):
    campaign.phase = "main"  # the training round closed: its aggregates are every organiser's (test_training_aggregates)
    campaign.save(update_fields=["phase"])
    b"".join(export := exports.export_qrels(campaign=campaign, kind="relevance", phase="training", created_by=organiser))
    return export.snapshot


def _page_url(name: str) -> str:
    return reverse(f"assessments:{name}", args=[SLUG])


# Who reaches what: olivia her campaign's organiser side (not the disagreements: she is no adjudicator), ada all.
PAGE_STATUS = {"olivia": 200, "oscar": 404, "ada": 200, "alice": 404}


@pytest.mark.parametrize("who", ["olivia", "oscar", "ada", "alice"])
@pytest.mark.parametrize("page", PAGES)
def test_organiser_pages_are_for_the_campaigns_own_organisers(client, cast, judged, who, page):
    client.force_login(cast[who])
    expected = 404 if page == "disagreements" and who == "olivia" else PAGE_STATUS[who]
    assert client.get(_page_url(page)).status_code == expected


@pytest.mark.parametrize("who", ["olivia", "oscar", "ada", "alice"])
@pytest.mark.parametrize("name", API)
def test_api_endpoints_are_for_the_campaigns_own_organisers(cast, campaign, who, name):
    api = APIClient()
    api.force_authenticate(cast[who])
    expected = {"olivia": 200, "oscar": 404, "ada": 200, "alice": 403}[who]
    assert api.get(reverse(name, args=[SLUG])).status_code == expected


@pytest.mark.parametrize("who", ["olivia", "oscar", "ada"])
def test_jobs_and_snapshots_are_reached_only_through_their_campaign(client, cast, job, snapshot, who):
    expected = 404 if who == "oscar" else 200
    client.force_login(cast[who])
    assert client.get(reverse("assessments:job", args=[SLUG, job.pk])).status_code == expected
    assert client.get(reverse("assessments:qrels_snapshot", args=[SLUG, snapshot.number])).status_code == expected
    api = APIClient()
    api.force_authenticate(cast[who])
    assert api.get(reverse("api-job", args=[job.pk])).status_code == expected
    assert api.get(reverse("api-qrels-snapshot", args=[SLUG, snapshot.number])).status_code == expected
    assert api.get(reverse("api-qrels-diff", args=[SLUG, snapshot.number, snapshot.number])).status_code == expected


def test_another_campaigns_organiser_changes_nothing(client, cast, campaign, judged, alice):
    client.force_login(cast["oscar"])
    posts = {
        "assignments_assign": {"assessors": ["alice"], "topics": ["1"], "phase": "main"},
        "pool_build": {"strategy": "depth", "depth": 5, "order": "both"},
        "qrels_export": {"kind": "relevance", "phase": "training", "rule": "majority"},
        "campaign_members": {"username": "oscar", "role": "organiser"},
        "agreement_phase": {"step": "start_training"},
    }
    for name, data in posts.items():
        assert client.post(_page_url(name), data).status_code == 404, name
    api = APIClient()
    api.force_authenticate(cast["oscar"])
    assert api.post(reverse("api-qrels", args=[SLUG]), {"kind": "relevance"}, format="json").status_code == 404
    assert api.post(reverse("api-members", args=[SLUG]), {"username": "oscar"}, format="json").status_code == 404
    assert api.post(reverse("api-pool-build", args=[SLUG]), {"depth": 5}, format="json").status_code == 404
    assert not Assignment.objects.filter(phase="main").exists()
    assert not Job.objects.exists() and not QrelsSnapshot.objects.exists()
    assert list(campaign.memberships.values_list("user__username", flat=True)) == ["olivia"]


def test_each_organiser_lists_only_their_campaigns_and_admins_all(client, cast, campaign):
    listed = {}
    for who in ("olivia", "oscar", "ada"):
        client.force_login(cast[who])
        page = client.get(reverse("assessments:campaign_list")).content.decode()
        api = APIClient()
        api.force_authenticate(cast[who])
        slugs = [c["slug"] for c in api.get("/api/campaigns/").json()["results"]]
        listed[who] = sorted(slugs)
        assert all(f'href="/campaigns/{slug}/"' in page for slug in slugs)
        assert all(f'href="/campaigns/{c.slug}/"' not in page for c in Campaign.objects.exclude(slug__in=slugs))
    assert listed == {"olivia": ["touche22"], "oscar": ["elsewhere-run"], "ada": ["elsewhere-run", "touche22"]}


def test_a_campaign_created_on_the_page_or_in_the_api_is_run_by_its_creator(client, oscar):
    client.force_login(oscar)
    response = client.post(reverse("assessments:campaign_list"), {"slug": "t23", "name": "T 23", "preset": "touche-2023-task1"})
    assert response.status_code == 302 and response["Location"] == "/campaigns/t23/"
    api = APIClient()
    api.force_authenticate(oscar)
    response = api.post("/api/campaigns/", {"slug": "t24", "name": "T 24", "preset": "touche-2023-task2"}, format="json")
    assert response.status_code == 201 and response.json()["slug"] == "t24"
    for slug in ("t23", "t24"):
        assert list(Membership.objects.filter(campaign__slug=slug).values_list("user__username", "role")) == [("oscar", "organiser")]
    assert client.post(reverse("assessments:campaign_list"), {"slug": "t23", "name": "again", "preset": "touche-2023-task1"}).status_code == 400


def test_a_campaign_with_its_own_scheme_is_created_on_the_page_or_in_the_api(client, oscar):
    """The page takes the scheme as JSON text, the API as a JSON object; either is checked before anything is
    stored, and the campaign's preset is then "custom"."""
    client.force_login(oscar)
    response = client.post(reverse("assessments:campaign_list"), {"slug": "own", "name": "Own", "scheme": json.dumps(CUSTOM_SCHEME)})
    assert response.status_code == 302 and response["Location"] == "/campaigns/own/"
    api = APIClient()
    api.force_authenticate(oscar)
    response = api.post("/api/campaigns/", {"slug": "own-api", "name": "Own", "scheme": CUSTOM_SCHEME}, format="json")
    assert response.status_code == 201 and response.json()["preset"] == "custom"
    for slug in ("own", "own-api"):
        campaign = Campaign.objects.get(slug=slug)
        assert campaign.preset == "custom" and campaign.label_scheme == LabelScheme.from_json(CUSTOM_SCHEME)
    assert response.json()["scheme"] == LabelScheme.from_json(CUSTOM_SCHEME).to_json()

    cycle = json.loads(json.dumps(CUSTOM_SCHEME))
    cycle["dimensions"][0]["condition"] = {"dimension": "source", "in": ["CITED"]}
    unknown = json.loads(json.dumps(CUSTOM_SCHEME))
    unknown["dimensions"][1]["condition"]["dimension"] = "topicality"
    for scheme, reason in [
        (cycle, "conditions form a cycle: topical → source → usefulness → topical"),
        (unknown, "dimension usefulness: its condition names an unknown dimension 'topicality'"),
    ]:
        page = client.post(reverse("assessments:campaign_list"), {"slug": "bad", "name": "Bad", "scheme": json.dumps(scheme)})
        assert page.status_code == 400 and reason in html.unescape(page.content.decode())
        refused = api.post("/api/campaigns/", {"slug": "bad", "name": "Bad", "scheme": scheme}, format="json")
        assert refused.status_code == 400 and refused.json()["scheme"] == [reason]
    both = api.post("/api/campaigns/", {"slug": "bad", "name": "Bad", "preset": "touche-2023-task1", "scheme": CUSTOM_SCHEME}, format="json")
    assert (both.status_code, both.json()) == (400, {"detail": "give a preset or a label scheme, not both (preset 'touche-2023-task1' has its own scheme)"})
    neither = client.post(reverse("assessments:campaign_list"), {"slug": "bad", "name": "Bad"})
    assert neither.status_code == 400 and "no preset: choose one of touche-2020-task1" in neither.content.decode()
    assert not Campaign.objects.filter(slug="bad").exists()


def test_an_organiser_adds_a_colleague_who_then_reaches_the_campaign(client, organiser, oscar, campaign):
    client.force_login(oscar)
    assert client.get(_page_url("campaign")).status_code == 404
    client.force_login(organiser)
    client.post(_page_url("campaign_members"), {"username": "oscar", "role": "organiser"})
    client.force_login(oscar)
    assert client.get(_page_url("campaign")).status_code == 200
    client.post(_page_url("campaign_members"), {"username": "olivia", "role": "organiser", "remove": "1"})
    client.force_login(organiser)
    assert client.get(_page_url("campaign")).status_code == 404


def test_only_admins_make_adjudicators(client, organiser, admin_user, oscar, campaign):
    client.force_login(organiser)
    client.post(_page_url("campaign_members"), {"username": "olivia", "role": "adjudicator"})
    api = APIClient()
    api.force_authenticate(organiser)
    assert api.post(reverse("api-members", args=[SLUG]), {"username": "olivia", "role": "adjudicator"}, format="json").status_code == 403
    assert Membership.objects.get(user=organiser, campaign=campaign).role == "organiser"
    client.force_login(admin_user)
    client.post(_page_url("campaign_members"), {"username": "olivia", "role": "adjudicator"})
    assert Membership.objects.get(user=organiser, campaign=campaign).role == "adjudicator"


def test_the_last_member_and_assessors_are_refused(client, organiser, alice, campaign):
    client.force_login(organiser)
    client.post(_page_url("campaign_members"), {"username": "olivia", "role": "organiser", "remove": "1"})
    client.post(_page_url("campaign_members"), {"username": "alice", "role": "organiser"})
    assert list(campaign.memberships.values_list("user__username", flat=True)) == ["olivia"]
