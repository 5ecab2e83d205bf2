"""The pool in the API: statistics, preview, build as a job, its progress, export; organisers only."""

import pytest
from rest_framework.test import APIClient

from assessments.models import Job, PoolEntry
from assessments.services.pooling import PoolSpec, build_pool
from tests.assessments.pool_fixtures import add_run, ranked
from tests.factories import TopicFactory


@pytest.fixture
def runs(campaign):
    topic = TopicFactory(campaign=campaign, number="51")
    add_run(campaign, "alpha", {topic: ranked("a", 10)})
    add_run(campaign, "beta", {topic: ranked("b", 10)})


BASE = "/api/campaigns/touche22/pool/"


def test_statistics(api, campaign, runs):
    build_pool(campaign=campaign, spec=PoolSpec(depth=2))

    data = api.get(BASE).json()

    assert data["size"] == 4 and data["missing_total"] == 4
    assert [(t["number"], t["size"]) for t in data["topics"]] == [("51", 4)]
    assert [(r["tag"], r["contributed"], r["unique"]) for r in data["runs"]] == [("alpha", 2, 2), ("beta", 2, 2)]
    assert data["overlap"] == [["alpha", "beta", 0]]


def test_preview_changes_nothing(api, campaign, runs):
    response = api.get(BASE + "preview/", {"strategy": "depth", "depth": 3, "runs": ["alpha"]})

    assert response.status_code == 200, response.json()
    data = response.json()
    assert data["added"] == 3 and data["spec"] == "depth 3 (rank ∪ score)"
    costs = {o["label"]: (o["added"], o["chosen"]) for o in data["options"]}
    # alpha alone has 10 documents
    assert [costs[f"depth {k} (rank ∪ score)"] for k in (3, 5, 10, 20)] == [(3, True), (5, False), (10, False), (10, False)]
    assert not PoolEntry.objects.exists()


def test_a_bad_preview_is_a_400_with_the_reason(api, campaign, runs):
    response = api.get(BASE + "preview/", {"strategy": "mtf"})

    assert response.status_code == 400
    assert "needs a positive budget" in str(response.json())


def test_build_answers_202_with_the_job_to_poll(api, campaign, runs, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(BASE + "build/", {"strategy": "depth", "depth": 4, "order": "score"}, format="json")

    assert response.status_code == 202
    job_id = response.json()["id"]
    job = api.get(f"/api/jobs/{job_id}/").json()
    assert job["status"] == "succeeded" and job["percent"] == 100
    assert job["result"]["added"] == 8 and job["result"]["summary"].startswith("depth 4 (score): added 8")
    assert PoolEntry.objects.count() == 8


def test_build_names_unknown_runs(api, campaign, runs):
    response = api.post(BASE + "build/", {"runs": ["alpha", "gamma"]}, format="json")

    assert response.status_code == 400
    assert "unknown run tags" in response.json()["detail"] and "gamma" in response.json()["detail"]
    assert not Job.objects.exists()


def test_export(api, campaign, runs):
    build_pool(campaign=campaign, spec=PoolSpec(depth=1))

    response = api.get(BASE + "export/")

    assert b"".join(response.streaming_content) == b"51 a-001\n51 b-001\n"


@pytest.mark.parametrize("method, path", [("get", ""), ("get", "preview/"), ("post", "build/"), ("get", "export/")])
def test_assessors_are_refused(campaign, runs, alice, method, path):
    client = APIClient()
    client.force_authenticate(alice)

    response = getattr(client, method)(BASE + path)

    assert response.status_code == 403
    assert not Job.objects.exists()


def test_an_unknown_campaign_is_a_404(api):
    assert api.get("/api/campaigns/nope/pool/").status_code == 404
