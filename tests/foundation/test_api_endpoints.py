"""The API's training and analysis endpoints give what the pages and commands give, to the same people; the docs page
opens with a token; the schema documents every error and each operation's roles.

The campaign is the demo's material (three topics, two runs of two teams, a depth-5 pool), taken through training:
alice and bob judged the training topic in round 1, the round closed, and each judged one main-phase topic.
"""

import json
import re

import pytest
from django.db.models import QuerySet
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from accounts.models import Role, User
from accounts.tokens import create_token
from assessments.management.commands.load_demo import DEMO
from assessments.models import Assignment, AuditEvent, Campaign, Judgment, Phase, PoolEntry, Topic
from assessments.services import assignments, campaigns, exports, pooling
from assessments.services.imports.documents import import_documents
from assessments.services.imports.runs import import_runs
from assessments.services.imports.topics import import_topics
from assessments.services.judging import Labels, record_judgment
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

# Labels by pool position: alice and bob agree on some training documents and not on others.
ALICE = [2, 1, 0, 0, 2, 1, 0, 2, 1, 0]
BOB = [2, 0, 0, 1, 2, 1, 1, 2, 0, 0]


def _labels(relevance: int) -> Labels:
    return Labels({"relevance": relevance, "quality": relevance, "stance": "FIRST"} if relevance else {"relevance": 0})


def _judge(entries: QuerySet[PoolEntry], assessor: User, phase: str, values: list[int]) -> None:
    for entry, relevance in zip(entries.order_by("order"), values * 3):
        record_judgment(topic=entry.topic, document=entry.document, assessor=assessor, phase=phase, labels=_labels(relevance))


@pytest.fixture
def cast(db) -> dict[str, User]:
    """olivia runs touche20; ada is an admin; alice and bob judge; oscar runs nothing of touche20."""
    return {
        "olivia": UserFactory(username="olivia", role=Role.ORGANISER), "ada": UserFactory(username="ada", role=Role.ADMIN),
        "alice": UserFactory(username="alice"), "bob": UserFactory(username="bob"),
        "oscar": UserFactory(username="oscar", role=Role.ORGANISER),
    }


def new_campaign(cast: dict[str, User], slug: str = "touche20") -> Campaign:
    """The demo's topics, documents and runs (two teams) with a depth-5 pool, in setup."""
    campaign = campaigns.create_campaign(slug=slug, name="Touché 2020 Task 2", preset="touche-2022-task2",
                                         organisers=[cast["olivia"]], created_by=cast["olivia"])
    import_topics(campaign=campaign, path=DEMO / "topics.xml")
    import_documents(campaign=campaign, paths=[DEMO / "documents.jsonl"])
    import_runs(campaign=campaign, paths=[DEMO / "run-demo-bm25.txt"], team="lexical")
    import_runs(campaign=campaign, paths=[DEMO / "run-demo-stance.txt"], team="stance")
    pooling.build_pool(campaign=campaign, spec=pooling.PoolSpec(depth=5))
    return campaign


@pytest.fixture
def touche20(cast) -> Campaign:
    """touche20 in its main phase after one training round, with every pooled document judged, and a qrels snapshot."""
    ada, alice, bob = cast["ada"], cast["alice"], cast["bob"]
    campaign = new_campaign(cast)
    training, second, third = campaign.topics.order_by("position")
    assignments.mark_training(campaign=campaign, topics=[training], is_training=True, by=ada)
    assignments.assign_topics(campaign=campaign, assessors=[alice, bob], topics=[training], phase=Phase.TRAINING, assigned_by=ada)
    campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=ada)
    _judge(training.pool_entries.all(), alice, Phase.TRAINING, ALICE)
    _judge(training.pool_entries.all(), bob, Phase.TRAINING, BOB)
    campaign = assignments.close_training_round(campaign=campaign, then="main", by=ada)
    for topic, assessor, values in ((second, alice, ALICE), (third, bob, BOB)):
        assignments.assign_topics(campaign=campaign, assessors=[assessor], topics=[topic], phase=Phase.MAIN, assigned_by=cast["olivia"])
        _judge(topic.pool_entries.all(), assessor, Phase.MAIN, values)
    b"".join(exports.export_qrels(campaign=campaign, created_by=cast["olivia"]))
    return campaign


def api(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {create_token(user)[1]}")
    return client


def command_json(command, *args) -> object:
    result = command(*args, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


# --------------------------------------------------------------------------------------------------------------
# Training topics and phases: admins only, as on the assignment and agreement pages


def test_an_admin_marks_a_training_topic_and_back_as_the_page_does(cast, touche20):
    before = AuditEvent.objects.filter(campaign=touche20).count()
    answer = api(cast["ada"]).post("/api/campaigns/touche20/topics/training/", {"topics": ["2"]}, format="json")
    assert answer.status_code == 400  # alice holds topic 2 for the main phase
    assert answer.json() == {"detail": "topic 2 is assigned to alice for the main phase: withdraw that assignment first"}

    Assignment.objects.filter(topic__number="2").update(active=False)
    answer = api(cast["ada"]).post("/api/campaigns/touche20/topics/training/", {"topics": ["2", "1"]}, format="json")
    assert answer.status_code == 200
    assert answer.json()["changed"] == 1
    assert [(t["number"], t["is_training"]) for t in answer.json()["topics"]] == [("2", True), ("1", True)]
    assert AuditEvent.objects.filter(campaign=touche20).count() == before + 1

    again = api(cast["ada"]).post("/api/campaigns/touche20/topics/training/", {"topics": ["2"], "training": False}, format="json")
    assert again.json()["changed"] == 1 and not Topic.objects.get(campaign=touche20, number="2").is_training


@pytest.mark.parametrize(("who", "status"), [("olivia", 403), ("alice", 403), ("oscar", 403), ("ada", 404)])
def test_only_admins_mark_training_topics(cast, touche20, who, status):
    slug = "nope" if who == "ada" else "touche20"
    answer = api(cast[who]).post(f"/api/campaigns/{slug}/topics/training/", {"topics": ["3"]}, format="json")
    assert answer.status_code == status
    assert not Topic.objects.get(campaign=touche20, number="3").is_training


def test_an_admin_takes_a_campaign_through_training_as_the_agreement_page_does(cast):
    campaign = new_campaign(cast, slug="fresh")
    ada = api(cast["ada"])

    def step(**body):
        return ada.post("/api/campaigns/fresh/phase/", body, format="json")

    answer = step(step="start_training")
    assert answer.status_code == 200 and (answer.json()["phase"], answer.json()["training_round"]) == ("training", 1)
    refused = step(step="next_round")
    assert refused.status_code == 409 and refused.json() == {"detail": "training round 1 has no topics assigned yet"}
    training = Topic.objects.get(campaign=campaign, number="1")
    assignments.mark_training(campaign=campaign, topics=[training], is_training=True, by=cast["ada"])
    assignments.assign_topics(campaign=campaign, assessors=[cast["alice"]], topics=[training], phase=Phase.TRAINING, assigned_by=cast["ada"])
    assert step(step="next_round").json()["training_round"] == 2

    unconfirmed = step(step="main")
    assert unconfirmed.status_code == 400 and "confirm" in unconfirmed.json()
    assert Campaign.objects.get(slug="fresh").phase == Phase.TRAINING
    answer = step(step="main", confirm="main")
    assert answer.status_code == 200 and answer.json()["phase"] == "main"
    assert step(step="start_training").status_code == 409
    assert [e.action for e in AuditEvent.objects.filter(campaign=campaign, action__startswith="phase")] == ["phase.changed"] * 2


@pytest.mark.parametrize("who", ["olivia", "alice"])
def test_organisers_and_assessors_change_no_phase(cast, touche20, who):
    answer = api(cast[who]).post("/api/campaigns/touche20/phase/", {"step": "start_training"}, format="json")
    assert answer.status_code == 403 and Campaign.objects.get(slug="touche20").phase == Phase.MAIN


# --------------------------------------------------------------------------------------------------------------
# Agreement: the command's JSON, for admins


@pytest.mark.parametrize("query", [{}, {"phase": "training"}, {"phase": "training", "round": 1, "kind": "relevance"},
                                   {"phase": "all", "topic": "1"}])
def test_the_agreement_is_the_commands_json(cast, touche20, command, query):
    answer = api(cast["ada"]).get("/api/campaigns/touche20/agreement/", query)
    assert answer.status_code == 200
    args = [arg for name, value in query.items() for arg in (f"--{name}", str(value))]
    assert answer.json() == command_json(command, "agreement", "touche20", *args)
    if query.get("phase") == "training":
        pooled = PoolEntry.objects.filter(topic__campaign=touche20, topic__number="1").count()
        assert answer.json()["dimensions"]["relevance"]["cohen"][0]["n_items"] == pooled


@pytest.mark.parametrize(("query", "message"), [
    ({"phase": "main", "round": 1}, "rounds belong to the training phase"),
    ({"kind": "colour"}, "colour"),
])
def test_an_agreement_scope_that_makes_no_sense_is_a_400(cast, touche20, query, message):
    answer = api(cast["ada"]).get("/api/campaigns/touche20/agreement/", query)
    assert answer.status_code == 400 and message in answer.json()["detail"]


@pytest.mark.parametrize("who", ["olivia", "alice"])
def test_agreement_is_for_admins(cast, touche20, who):
    assert api(cast[who]).get("/api/campaigns/touche20/agreement/").status_code == 403


# --------------------------------------------------------------------------------------------------------------
# Runs compared and reusability: the page's and the commands' figures, with the results pages' rules


def test_two_runs_compared_are_the_comparison_pages_figures(client, cast, touche20):
    query = {"a": "demo-bm25", "b": "demo-stance", "measure": "P@5", "topic": "2"}
    answer = api(cast["olivia"]).get("/api/campaigns/touche20/results/compare/", query)
    assert answer.status_code == 200
    client.force_login(cast["olivia"])
    page = client.get("/campaigns/touche20/results/compare/", query).context["comparison"]
    body = answer.json()
    assert (body["a"], body["b"], body["measure"], body["depth"]) == ("demo-bm25", "demo-stance", "P@5", 5)
    assert (body["mean_a"], body["mean_b"], body["common"]) == (page.mean_a, page.mean_b, page.common)
    assert [(t["topic"], t["a"], t["b"], t["diff"]) for t in body["topics"]] == [(t.topic, t.a, t.b, t.diff) for t in page.topics]
    assert [(d["doc"], d["label"]) for d in body["list_a"]] == [(d.doc, d.label) for d in page.list_a]
    assert (body["p_t"], body["p_permutation"]) == (page.p_t, page.p_permutation)


def test_a_run_the_campaign_lacks_is_a_400(cast, touche20):
    answer = api(cast["olivia"]).get("/api/campaigns/touche20/results/compare/", {"a": "demo-bm25", "b": "nope"})
    assert answer.status_code == 400 and list(answer.json()) == ["b"]


def test_every_pair_of_runs_is_the_compare_runs_commands_json(cast, touche20, command):
    answer = api(cast["olivia"]).get("/api/campaigns/touche20/results/significance/", {"test": "permutation", "measure": "nDCG@5"})
    assert answer.status_code == 200
    assert answer.json() == command_json(command, "compare_runs", "touche20", "--test", "permutation", "--measure", "nDCG@5")
    assert {(row["run_a"], row["run_b"]) for row in answer.json()} <= {("demo-bm25", "demo-stance"), ("demo-stance", "demo-bm25")}


def test_reusability_is_the_reusability_commands_json(cast, touche20, command):
    answer = api(cast["olivia"]).get("/api/campaigns/touche20/results/reusability/", {"measure": "P@5", "kind": "relevance"})
    assert answer.status_code == 200
    assert answer.json() == command_json(command, "reusability", "touche20", "--measure", "P@5", "--kind", "relevance")
    assert {row["team"] for row in answer.json()["runs"]} == {"lexical", "stance"}


ANALYSES = ["compare/?a=demo-bm25&b=demo-stance&", "significance/?", "reusability/?"]


@pytest.mark.parametrize("analysis", ANALYSES)
def test_training_labels_stay_with_admins_until_the_round_closes(cast, touche20, analysis):
    Campaign.objects.filter(pk=touche20.pk).update(phase=Phase.TRAINING)
    url = f"/api/campaigns/touche20/results/{analysis}phase=training"
    refused = api(cast["olivia"]).get(url)
    assert refused.status_code == 403 and "until the training round closes" in refused.json()["detail"]
    assert api(cast["ada"]).get(url).status_code == 200
    Campaign.objects.filter(pk=touche20.pk).update(phase=Phase.MAIN)
    assert api(cast["olivia"]).get(url).status_code == 200


@pytest.mark.parametrize("analysis", ANALYSES)
def test_one_assessors_labels_are_for_admins_and_adjudicators(cast, touche20, analysis):
    url = f"/api/campaigns/touche20/results/{analysis}phase=all&rule=assessor:alice"
    assert api(cast["olivia"]).get(url).status_code == 403
    assert api(cast["ada"]).get(url).status_code == 200


@pytest.mark.parametrize("analysis", ANALYSES)
@pytest.mark.parametrize(("who", "status"), [("alice", 403), ("oscar", 404)])
def test_assessors_and_other_campaigns_organisers_see_no_analysis(cast, touche20, analysis, who, status):
    answer = api(cast[who]).get(f"/api/campaigns/touche20/results/{analysis}")
    assert answer.status_code == status
    if status == 404:
        assert answer.json() == {"detail": "No such campaign"}


# --------------------------------------------------------------------------------------------------------------
# The docs page and the schema


def test_the_docs_page_opens_with_a_token(cast):
    key = create_token(cast["alice"])[1]
    client = APIClient()
    page = client.get("/api/docs/", HTTP_AUTHORIZATION=f"Token {key}")
    assert page.status_code == 200 and "swagger-ui-bundle.js" in page.content.decode()
    # The page's own request for the schema, as a token client sends it.
    schema = client.get("/api/schema/", {"format": "json"}, HTTP_AUTHORIZATION=f"Token {key}")
    assert schema.status_code == 200 and "/api/campaigns/{slug}/agreement/" in schema.json()["paths"]

    refused = client.get("/api/docs/", HTTP_AUTHORIZATION="Token not-a-key")
    assert refused.status_code == 401 and refused.json() == {"detail": "Invalid token."}
    assert client.get("/api/docs/").status_code == 302  # a person at a browser goes to the login page


@pytest.fixture(scope="module")
def schema() -> dict:
    GENERATOR_STATS.reset()
    generated = SchemaGenerator().get_schema(request=None, public=True)
    assert not GENERATOR_STATS._warn_cache and not GENERATOR_STATS._error_cache, dict(GENERATOR_STATS._warn_cache)
    return generated


def operations(schema: dict):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_operation_says_who_may_call_it_and_documents_its_errors(schema):
    for path, method, operation in operations(schema):
        responses = operation["responses"]
        label = f"{method.upper()} {path}"
        assert operation["description"].startswith("**Who may call it:**"), label
        assert responses["401"]["headers"]["WWW-Authenticate"]["required"], label
        if "{" in path:
            assert "404" in responses, label
        if "requestBody" in operation:
            assert {"400", "415"} <= set(responses), label
        if "202" in responses:
            assert responses["503"]["headers"]["Retry-After"]["required"], label
        if path.startswith("/api/campaigns/") or path.startswith("/api/jobs/"):
            assert "403" in responses, label
        for code, response in responses.items():
            if code >= "400" and not path.startswith("/api/work/"):  # the assessor API's 409s are annotation's
                assert response["content"]["application/json"]["examples"], f"{label} {code}"


def test_the_new_operations_are_in_the_schema_and_conflicts_are_documented(schema):
    paths = schema["paths"]
    for path in ("topics/training/", "phase/", "agreement/", "results/compare/", "results/significance/", "results/reusability/"):
        assert f"/api/campaigns/{{slug}}/{path}" in paths, path
    for path, method in [("/api/campaigns/{slug}/phase/", "post"), ("/api/jobs/{job_id}/cancel/", "post"),
                         ("/api/jobs/{job_id}/retry/", "post"), ("/api/jobs/{job_id}/confirm/", "post")]:
        assert "409" in paths[path][method]["responses"], path
    assert "admins only" in paths["/api/campaigns/{slug}/agreement/"]["get"]["description"]


def test_user_fields_that_may_be_null_are_nullable_and_the_queue_is_a_page(schema):
    components = schema["components"]["schemas"]
    for component, field in [("Assignment", "assigned_by"), ("Member", "added_by"), ("AuditEvent", "actor"),
                             ("Snapshot", "created_by"), ("Run", "uploaded_by")]:
        assert components[component]["properties"][field].get("nullable"), (component, field)
    queue = schema["paths"]["/api/work/{assignment_id}/queue/"]["get"]
    assert queue["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/PaginatedWorkQueueItemList")
    assert {"page", "page_size"} <= {p["name"] for p in queue["parameters"]}


def test_measure_rule_and_kind_have_their_grammar(schema):
    parameters = {p["name"]: p["schema"] for p in schema["paths"]["/api/campaigns/{slug}/results/compare/"]["get"]["parameters"]}
    measure = re.compile(parameters["measure"]["pattern"])
    assert all(measure.match(m) for m in ("nDCG@5", "nDCG'@10", "P@10", "AP", "bpref")) and not measure.match("nDCG")
    assert parameters["rule"]["anyOf"][0]["enum"] == ["majority", "max", "mean", "adjudicated"]
    assert re.match(parameters["rule"]["anyOf"][1]["pattern"], "assessor:alice")
    assert re.match(parameters["kind"]["pattern"], "relevance")


def test_an_unknown_campaign_is_told_in_the_same_words_everywhere(cast, touche20):
    olivia = api(cast["olivia"])
    for url in ("/api/campaigns/nope/", "/api/campaigns/nope/topics/", "/api/campaigns/nope/results/reusability/"):
        assert olivia.get(url).json() == {"detail": "No such campaign"}, url
    assert olivia.patch("/api/campaigns/nope/", {"name": "x"}, format="json").json() == {"detail": "No such campaign"}
    assert Judgment.objects.filter(topic__campaign=touche20).exists()
