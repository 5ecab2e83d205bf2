"""Machine judges in the API: the pages' services for scripts, with the pages' rules (organisers of the campaign only),
a key that is never accepted or returned, and answers that are what the schema says (a Schemathesis run over these
operations on a campaign that has judges, which the suite-wide run's campaign has not)."""

import pytest
import schemathesis
from rest_framework.test import APIClient

from accounts.tokens import create_token
from assessments.models import Job, JudgePrompt, MachineJudge, MachineLabel
from assessments.services import machine_judges
from tests.chat_server import chat_server
from tests.foundation.test_api_schemathesis import failures_of, wsgi_app  # noqa: F401  (wsgi_app: a fixture)

pytestmark = pytest.mark.django_db

KEY = "sk-live-never-shown-7Qx2"
BASE = "/api/campaigns/touche22/machine-judges/"


@pytest.fixture(autouse=True)
def _key_in_the_environment(settings, monkeypatch):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def judge(campaign, pool):
    return machine_judges.add_judge(campaign=campaign, name="test-model", kind="endpoint", model="test-model",
                                    base_url="http://127.0.0.1:9/v1", key_name="TEST_JUDGE_KEY", by=None)


def test_an_organiser_adds_and_lists_judges(api, campaign, pool):
    added = api.post(BASE, {"name": "gpt4o", "kind": "endpoint", "base_url": "https://api.example.org/v1", "model": "gpt-4o",
                            "key_name": "TEST_JUDGE_KEY", "in_flight": 8}, format="json")
    local = api.post(BASE, {"name": "local", "kind": "local"}, format="json")

    assert (added.status_code, local.status_code) == (201, 201)
    assert added.json()["key_name"] == "TEST_JUDGE_KEY" and added.json()["parameters"] == {"temperature": 0}
    listed = api.get(BASE).json()
    assert [(j["name"], j["kind"], j["model"], j["in_flight"], j["labelled"], j["failed"]) for j in listed] == [
        ("gpt4o", "endpoint", "gpt-4o", 8, 0, 0), ("local", "local", local.json()["model"], 4, 0, 0)]
    thresholds = api.post(f"{BASE}local/prompts/", {"dimension": "relevance", "template": "t", "answers": {"0": 0}}, format="json")
    assert thresholds.status_code == 400 and thresholds.json() == {"detail": "the local judge has thresholds, not prompts"}
    taken = api.post(BASE, {"name": "gpt4o", "kind": "local"}, format="json")
    assert taken.status_code == 400 and taken.json() == {"detail": "campaign touche22 already has a judge named gpt4o"}


def test_a_key_is_never_accepted_or_returned(api, campaign, pool, django_capture_on_commit_callbacks):
    refused = api.post(BASE, {"name": "leaky", "kind": "endpoint", "base_url": "https://api.example.org/v1", "model": "m",
                              "key_name": KEY}, format="json")
    assert refused.status_code == 400 and "key_name" in refused.json() and KEY not in refused.content.decode()
    assert not MachineJudge.objects.exists()

    with chat_server() as server:
        api.post(BASE, {"name": "m", "kind": "endpoint", "base_url": server.url, "model": "m", "key_name": "TEST_JUDGE_KEY"}, format="json")
        with django_capture_on_commit_callbacks(execute=True):
            job = api.post(f"{BASE}m/runs/", {"dimensions": ["relevance"]}, format="json")
    assert {r["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    answers = [job, api.get(BASE), api.get(f"{BASE}m/prompts/"), api.get(f"{BASE}m/estimate/"), api.get(f"{BASE}m/labels/"),
               api.get(f"/api/jobs/{job.json()['id']}/"), api.get("/api/campaigns/touche22/timeline/")]
    assert all(answer.status_code in (200, 202) for answer in answers)
    assert not [answer for answer in answers if KEY in answer.content.decode()]


def test_prompt_versions_are_listed_and_an_edit_is_the_next_version(api, judge):
    listed = api.get(f"{BASE}test-model/prompts/").json()
    assert [(p["dimension"], p["version"], p["current"]) for p in listed] == [("quality", 1, True), ("relevance", 1, True), ("stance", 1, True)]
    first = next(p for p in listed if p["dimension"] == "relevance")

    edit = {"dimension": "relevance", "template": first["template"] + "\nBe strict.", "answers": {"0": 0, "1": 1, "2": 2, "3": 2}}
    created = api.post(f"{BASE}test-model/prompts/", edit, format="json")

    assert created.status_code == 201
    assert (created.json()["version"], created.json()["current"], created.json()["system"]) == (2, True, first["system"])
    relevance = [(p["version"], p["current"]) for p in api.get(f"{BASE}test-model/prompts/").json() if p["dimension"] == "relevance"]
    assert relevance == [(2, True), (1, False)]
    again = api.post(f"{BASE}test-model/prompts/", edit, format="json")
    assert again.status_code == 200 and again.json()["version"] == 2 and JudgePrompt.objects.filter(dimension="relevance").count() == 2
    wrong = api.post(f"{BASE}test-model/prompts/", {**edit, "answers": {"yes": 5}}, format="json")
    assert wrong.status_code == 400 and "not a value of relevance" in wrong.json()["detail"]
    unknown = api.post(f"{BASE}test-model/prompts/", {**edit, "dimension": "colour"}, format="json")
    assert unknown.status_code == 400 and "colour" in unknown.json()["detail"]


def test_the_estimate_then_a_run_then_its_labels(api, campaign, pool, django_capture_on_commit_callbacks):
    with chat_server() as server:
        machine_judges.add_judge(campaign=campaign, name="test-model", kind="endpoint", model="test-model", base_url=server.url, by=None)
        estimate = api.get(f"{BASE}test-model/estimate/", {"dimensions": ["relevance"], "topic": "1"})
        assert estimate.status_code == 200 and not Job.objects.exists()
        assert (estimate.json()["calls"], estimate.json()["by_dimension"]) == (3, {"relevance": 3})
        assert estimate.json()["completion_tokens"] == 3 * machine_judges.COMPLETION_TOKENS
        with django_capture_on_commit_callbacks(execute=True):
            started = api.post(f"{BASE}test-model/runs/", {"dimensions": ["relevance"]}, format="json")
    assert started.status_code == 202 and started.json()["kind"] == "machine_judge"
    assert started.json()["params"]["estimate"]["calls"] == 3
    assert Job.objects.get().status == "succeeded" and server.calls == 3

    body = api.get(f"{BASE}test-model/labels/").json()
    assert body["count"] == 3 and len(body["results"]) == 3
    newest = body["results"][0]
    row = MachineLabel.objects.order_by("-id").first()
    assert (newest["id"], newest["doc_id"], newest["topic"], newest["value"], newest["status"]) == (row.pk, row.document.doc_id, "1", row.value, "ok")
    assert newest["raw_answer"].endswith(f"##final answer: {row.value}") and newest["reason"] == row.reason
    assert (newest["prompt_version"], newest["model"], newest["parameters"], newest["job"]) == (1, "test-model", {"temperature": 0}, started.json()["id"])
    assert api.get(f"{BASE}test-model/labels/", {"status": "failed"}).json()["count"] == 0
    assert api.get(f"{BASE}test-model/labels/", {"status": "maybe"}).status_code == 400
    assert api.get(f"{BASE}test-model/labels/", {"page": 9}).status_code == 404
    assert api.get(f"{BASE}test-model/estimate/", {"topic": "99"}).json() == {"detail": "campaign touche22 has no topic 99"}


@pytest.mark.parametrize(("who", "status"), [("alice", 403), ("oscar", 404)])
def test_assessors_and_other_campaigns_organisers_are_refused(campaign, judge, alice, oscar, who, status):
    client = client_of({"alice": alice, "oscar": oscar}[who])
    for method, path, body in [
        ("get", BASE, None), ("post", BASE, {"name": "x", "kind": "local"}), ("get", f"{BASE}test-model/prompts/", None),
        ("post", f"{BASE}test-model/prompts/", {"dimension": "relevance", "template": "t", "answers": {"0": 0}}),
        ("get", f"{BASE}test-model/estimate/", None), ("post", f"{BASE}test-model/runs/", {}),
        ("get", f"{BASE}test-model/labels/", None),
    ]:
        answer = getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)
        assert answer.status_code == status, (method, path)
    assert MachineJudge.objects.count() == 1 and JudgePrompt.objects.filter(version=2).count() == 0 and not Job.objects.exists()


def test_an_unknown_judge_is_told_as_the_schema_says(api, judge):
    assert api.get(f"{BASE}nobody/labels/").json() == {"detail": "No such machine judge"}


def test_every_machine_judge_operation_answers_as_its_schema_says(campaign, judge, organiser, wsgi_app):  # noqa: F811
    local = machine_judges.add_judge(campaign=campaign, name="local", kind="local", by=None)
    entry = campaign.topics.get().pool_entries.first()
    for who, status in ((judge, "ok"), (judge, "failed"), (local, "ok")):
        MachineLabel.objects.create(judge=who, topic=entry.topic, document=entry.document, dimension="relevance", status=status,
                                    labels={"relevance": 1} if status == "ok" else {}, model=who.model, prompt_version=1)
    auth = {"Authorization": f"Token {create_token(organiser)[1]}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app, headers=auth)
    operations = [result.ok() for result in schema.get_all_operations()]
    ours = [operation for operation in operations if "/machine-judges/" in operation.path]
    assert len(ours) == 7
    values = ({"slug": [campaign.slug], "judge": ["test-model", "local"]},
              {"dimensions": ["relevance", "quality", "stance"], "dimension": ["relevance", "stance"], "topic": ["1"],
               "kind": ["endpoint", "local"], "status": ["ok", "failed"]})
    failures = [failure for operation in ours for failure in failures_of(operation, auth, values)]
    assert not failures, "\n\n".join(failures)
