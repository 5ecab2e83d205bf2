"""Who reaches alice's assignment: only alice. Everyone else gets 404 (the id is not confirmed to
exist); anonymous visitors are sent to log in (pages) or refused (API)."""

import pytest
from django.urls import reverse

from assessments.models import Assignment, Campaign, Judgment
from tests.factories import PoolEntryFactory

pytestmark = pytest.mark.django_db

ROLES = ["alice", "bob", "mallory", "uma", "organiser", "admin_user", None]
OWNER_ONLY = {"alice": 200, "bob": 404, "mallory": 404, "uma": 404, "organiser": 404, "admin_user": 404}


def urls(assignment, entry):
    return {
        "resume page": ("page", "get", reverse("annotation:resume", args=[assignment.pk])),
        "judge page": ("page", "get", reverse("annotation:judge", args=[assignment.pk, 1])),
        "work detail": ("api", "get", reverse("work-detail", args=[assignment.pk])),
        "queue": ("api", "get", reverse("work-queue", args=[assignment.pk])),
        "item": ("api", "get", reverse("work-item", args=[assignment.pk, entry.pk])),
        "judgment": ("api", "get", reverse("work-judgment", args=[assignment.pk, entry.pk])),
        "save judgment": ("api", "put", reverse("work-judgment", args=[assignment.pk, entry.pk])),
    }


@pytest.fixture
def cast(alice, bob, mallory, uma, organiser, admin_user):
    return {"alice": alice, "bob": bob, "mallory": mallory, "uma": uma, "organiser": organiser, "admin_user": admin_user, None: None}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("endpoint", ["resume page", "judge page", "work detail", "queue", "item", "judgment", "save judgment"])
def test_only_the_assigned_assessor_reaches_an_assignment(login, cast, assignment, pool, role, endpoint):
    kind, method, url = urls(assignment, pool[0])[endpoint]
    client = login(cast[role])
    if role == "alice" and endpoint == "judgment":
        client.put(url, {"labels": {"relevance": 1}}, content_type="application/json")
    response = getattr(client, method)(url, {"labels": {"relevance": 1}}, content_type="application/json") if method == "put" else client.get(url)
    if role is None:
        expected = 302 if kind == "page" else 401
    elif role == "alice" and endpoint == "resume page":
        expected = 302
    else:
        expected = OWNER_ONLY[role]
    assert response.status_code == expected, response.content[:300]
    if role is None and kind == "page":
        assert response["Location"].startswith(reverse("accounts:login"))
    if method == "put" and role != "alice":
        # Nobody else's PUT may store anything, under any name (alice's own save is not made on this endpoint).
        assert not Judgment.objects.exists()


def test_an_assessor_cannot_reach_another_topics_document_through_their_own_assignment(login, mallory, pool):
    own = Assignment.objects.get(assessor=mallory)
    client = login(mallory)
    assert client.get(reverse("work-item", args=[own.pk, pool[0].pk])).status_code == 404
    response = client.put(reverse("work-judgment", args=[own.pk, pool[0].pk]), {"labels": {"relevance": 2}}, content_type="application/json")
    assert response.status_code == 404
    assert not Judgment.objects.exists()


def test_a_withdrawn_assignment_is_gone_for_its_assessor_too(login, assignment, pool):
    Assignment.objects.filter(pk=assignment.pk).update(active=False)
    client = login(assignment.assessor)
    assert client.get(reverse("annotation:judge", args=[assignment.pk, 1])).status_code == 404
    assert client.put(reverse("work-judgment", args=[assignment.pk, pool[0].pk]), {"labels": {"relevance": 1}}, content_type="application/json").status_code == 404
    assert "Which is better" not in client.get(reverse("annotation:my_work")).content.decode()


@pytest.mark.parametrize("role", ["alice", "bob", "mallory", "uma", "organiser"])
def test_my_work_lists_only_the_viewers_own_assignments(login, cast, assignment, bob_assignment, role):
    mallorys = Assignment.objects.get(assessor=cast["mallory"]).topic
    PoolEntryFactory(topic=mallorys)
    Campaign.objects.filter(pk=mallorys.campaign_id).update(phase="main")  # her main-phase topic has begun
    page = login(cast[role]).get(reverse("annotation:my_work")).content.decode()
    links = {reverse("annotation:resume", args=[a.pk]) for a in Assignment.objects.filter(assessor=cast[role])}
    others = {reverse("annotation:resume", args=[a.pk]) for a in Assignment.objects.exclude(assessor=cast[role])}
    assert all(f'href="{link}"' in page for link in links)
    assert not any(f'href="{link}"' in page for link in others)


def test_my_work_sends_anonymous_visitors_to_log_in(login):
    response = login(None).get(reverse("annotation:my_work"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("accounts:login"))


def test_the_api_list_of_work_is_the_callers_own(login, cast, assignment, bob_assignment):
    for role in ("alice", "bob", "mallory", "uma"):
        ids = {w["id"] for w in login(cast[role]).get(reverse("work-list")).json()}
        assert ids == set(Assignment.objects.filter(assessor=cast[role]).values_list("pk", flat=True)), role
    assert login(None).get(reverse("work-list")).status_code == 401


@pytest.mark.parametrize("too_large", ["assignment", "entry"])
def test_an_id_beyond_the_databases_range_is_404(login, assignment, pool, too_large):
    """Ids in URLs are any digits; one no row can have finds nothing (and is never sent to the database)."""
    huge = 2**64
    page = reverse("annotation:judge", args=[huge if too_large == "assignment" else assignment.pk, 1])
    save = reverse("work-judgment", args=[huge if too_large == "assignment" else assignment.pk, huge if too_large == "entry" else pool[0].pk])
    client = login(assignment.assessor)
    assert client.get(page).status_code == (404 if too_large == "assignment" else 200)
    assert client.put(save, {"labels": {"relevance": 1}}, content_type="application/json").status_code == 404
    assert not Judgment.objects.exists()
