"""The assessor API: saving is idempotent, keeps history, follows the scheme, and shows only
the caller's own labels."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.tokens import create_token
from assessments.labels import PRESETS
from assessments.models import Assignment, AssignmentItem, Campaign, Judgment, JudgmentEvent, PoolSource, Run

pytestmark = pytest.mark.django_db


def judgment_url(assignment, entry):
    return reverse("work-judgment", args=[assignment.pk, entry.pk])


FIELDS = ("note", "flagged", "time_spent_ms", "base_revision")


def body(**fields):
    """The save's body: dimensions (relevance=2, quality=None) go into its `labels`, the other fields beside it."""
    labels = {name: value for name, value in fields.items() if name not in FIELDS}
    return {"labels": labels, **{name: value for name, value in fields.items() if name in FIELDS}} if labels else fields


def put(client, assignment, entry, **fields):
    return client.put(judgment_url(assignment, entry), body(**fields), content_type="application/json")


def patch(client, assignment, entry, **fields):
    return client.patch(judgment_url(assignment, entry), body(**fields), content_type="application/json")


def stored(entry):
    judgment = Judgment.objects.get(document=entry.document)
    return judgment.revision, judgment.labels, judgment.note


def test_a_label_is_created_then_updated_with_every_change_kept(login, assignment, pool):
    client = login(assignment.assessor)
    first = put(client, assignment, pool[0], relevance=1, time_spent_ms=4000)
    assert first.status_code == 200, first.content
    assert first.json()["revision"] == 1 and first.json()["source"] == "web"
    second = put(client, assignment, pool[0], relevance=2, quality=2, stance="FIRST", note="clear winner", time_spent_ms=9000)
    assert second.json() | {"updated_at": None} == {
        "labels": {"relevance": 2, "quality": 2, "stance": "FIRST"}, "note": "clear winner", "flagged": False,
        "time_spent_ms": 9000, "revision": 2, "source": "web", "updated_at": None,
    }
    history = JudgmentEvent.objects.filter(judgment__document=pool[0].document).order_by("revision")
    assert list(history.values_list("labels", flat=True)) == [{"relevance": 1}, {"relevance": 2, "quality": 2, "stance": "FIRST"}]
    judgment = Judgment.objects.get()
    assert (judgment.topic_id, judgment.assessor_id, judgment.phase) == (assignment.topic_id, assignment.assessor_id, "training")


def test_sending_the_same_label_again_changes_nothing(login, assignment, pool):
    client = login(assignment.assessor)
    for _ in range(3):  # a client retrying after a lost response
        response = put(client, assignment, pool[1], relevance=0, flagged=True, time_spent_ms=3000)
        assert response.status_code == 200
    assert Judgment.objects.get().revision == 1
    assert JudgmentEvent.objects.count() == 1


def test_a_save_from_a_stale_revision_gets_409_with_the_stored_judgment_and_changes_nothing(login, assignment, pool):
    client = login(assignment.assessor)
    put(client, assignment, pool[0], relevance=2, quality=2, stance="FIRST", note="clear", base_revision=0)  # tab A
    before = stored(pool[0]), list(JudgmentEvent.objects.values_list("pk", flat=True))

    response = patch(client, assignment, pool[0], relevance=1, base_revision=0)  # tab B, opened before A saved
    assert response.status_code == 409
    assert response.json()["code"] == "stale_revision"
    assert response.json()["judgment"] | {"updated_at": None} == {
        "labels": {"relevance": 2, "quality": 2, "stance": "FIRST"}, "note": "clear", "flagged": False,
        "time_spent_ms": 0, "revision": 1, "source": "web", "updated_at": None,
    }
    assert (stored(pool[0]), list(JudgmentEvent.objects.values_list("pk", flat=True))) == before
    assert put(client, assignment, pool[0], relevance=0, base_revision=7).status_code == 409  # PUT checks it too
    assert (stored(pool[0]), list(JudgmentEvent.objects.values_list("pk", flat=True))) == before


def test_a_save_that_knew_the_stored_revision_goes_through(login, assignment, pool):
    client = login(assignment.assessor)
    assert patch(client, assignment, pool[0], relevance=2, base_revision=None).json()["revision"] == 1  # null: saw none
    response = patch(client, assignment, pool[0], relevance=1, base_revision=1)
    assert response.status_code == 200 and response.json()["revision"] == 2
    assert patch(client, assignment, pool[0], relevance=0, base_revision=1).status_code == 409  # 1 is stale now


def test_a_stale_save_to_a_judgment_that_is_gone_is_a_conflict_with_nothing_stored(login, assignment, pool):
    response = patch(login(assignment.assessor), assignment, pool[0], relevance=1, base_revision=3)
    assert response.status_code == 409 and response.json()["judgment"] is None
    assert not Judgment.objects.exists()


def test_a_duplicate_retry_gets_200_and_no_new_history_row(login, assignment, pool):
    client = login(assignment.assessor)
    first = patch(client, assignment, pool[0], relevance=1, base_revision=0, time_spent_ms=3000)
    second = patch(client, assignment, pool[0], stance="NO", base_revision=1, time_spent_ms=5000)
    assert (first.status_code, second.json()["revision"]) == (200, 2)
    # The answer to the second save was lost: the client sends it again, still from revision 1.
    retry = patch(client, assignment, pool[0], stance="NO", base_revision=1, time_spent_ms=5000)
    assert retry.status_code == 200
    assert retry.json() == second.json()
    assert JudgmentEvent.objects.count() == 2
    # The first save retried late, after the second: also nothing to do, and nothing undone.
    assert patch(client, assignment, pool[0], relevance=1, base_revision=0, time_spent_ms=3000).status_code == 200
    assert stored(pool[0]) == (2, {"relevance": 1, "stance": "NO"}, "") and JudgmentEvent.objects.count() == 2


def test_patch_changes_only_the_fields_it_sends(login, assignment, pool):
    client = login(assignment.assessor)
    put(client, assignment, pool[0], relevance=2, quality=1, stance="SECOND", note="both", flagged=True)
    response = client.patch(judgment_url(assignment, pool[0]), {"labels": {"stance": "FIRST"}, "base_revision": 1}, content_type="application/json")
    assert response.status_code == 200
    assert (response.json()["labels"], response.json()["flagged"]) == ({"relevance": 2, "quality": 1, "stance": "FIRST"}, True)
    assert stored(pool[0]) == (2, {"relevance": 2, "quality": 1, "stance": "FIRST"}, "both")
    history = JudgmentEvent.objects.order_by("revision").values_list("labels", "note", "flagged")
    assert list(history) == [
        ({"relevance": 2, "quality": 1, "stance": "SECOND"}, "both", True), ({"relevance": 2, "quality": 1, "stance": "FIRST"}, "both", True),
    ]
    # null clears one dimension and keeps the others.
    response = client.patch(judgment_url(assignment, pool[0]), {"labels": {"quality": None}, "base_revision": 2}, content_type="application/json")
    assert response.json()["labels"] == {"relevance": 2, "stance": "FIRST"} and stored(pool[0])[0] == 3


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"quality": 1}, "quality is asked only when relevance ≥ 1"),
        ({"relevance": 0, "stance": "NO"}, "stance is asked only when relevance ≥ 1"),
    ],
)
def test_a_patch_is_checked_as_the_label_it_would_store(login, assignment, pool, labels, message):
    client = login(assignment.assessor)
    response = patch(client, assignment, pool[0], **labels)
    assert response.status_code == 400 and message in response.json()["detail"]
    put(client, assignment, pool[1], relevance=2, quality=2)
    # Relevance 0 alone would leave quality on a non-relevant document: the client must clear it too.
    response = patch(client, assignment, pool[1], relevance=0)
    assert response.status_code == 400 and "quality is asked only when relevance ≥ 1" in response.json()["detail"]
    assert patch(client, assignment, pool[1], relevance=0, quality=None).json()["revision"] == 2


def test_a_client_without_base_revision_overwrites_as_before(assignment, pool):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + create_token(assignment.assessor)[1])
    url = judgment_url(assignment, pool[0])
    client.put(url, {"labels": {"relevance": 2, "quality": 2, "stance": "FIRST"}}, format="json")
    client.put(url, {"labels": {"relevance": 2, "quality": 1, "stance": "FIRST"}, "base_revision": 1}, format="json")
    response = client.put(url, {"labels": {"relevance": 1}}, format="json")  # last writer wins, missing fields cleared
    assert response.status_code == 200 and response.json()["revision"] == 3
    assert stored(pool[0]) == (3, {"relevance": 1}, "")


def test_the_api_schema_documents_base_revision_and_the_conflict(login, assignment):
    schema = login(assignment.assessor).get(reverse("api-schema"), {"format": "json"}).json()
    operations = schema["paths"]["/api/work/{assignment_id}/items/{entry_id}/judgment/"]
    for method in ("put", "patch"):
        assert "409" in operations[method]["responses"]
        assert "last writer win" in operations[method]["description"]
    components = schema["components"]["schemas"]
    assert "Leave it out to overwrite" in components["WorkSave"]["properties"]["base_revision"]["description"]
    assert "stale_revision" in str(components["SaveRefused"])
    # The labels are one object keyed by dimension, in the body and in the answer.
    for name in ("WorkSave", "PatchedWorkSave", "WorkJudgment"):
        labels = components[name]["properties"]["labels"]
        assert labels["type"] == "object" and "relevance" not in components[name]["properties"], name
    assert "null clears one" in components["WorkSave"]["properties"]["labels"]["description"]


def test_time_spent_is_a_running_total_the_server_never_lowers(login, assignment, pool):
    client = login(assignment.assessor)
    put(client, assignment, pool[0], relevance=1, time_spent_ms=12000)
    response = put(client, assignment, pool[0], relevance=1, time_spent_ms=5000)  # a stale retry
    assert response.json()["time_spent_ms"] == 12000


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"relevance": 3}, "relevance 3 is not one of [0, 1, 2]"),
        ({"relevance": 1, "stance": "PRO"}, "stance 'PRO' is not one of"),
        ({"relevance": 0, "quality": 1}, "quality is asked only when relevance ≥ 1"),
        ({"relevance": 0, "stance": "NO"}, "stance is asked only when relevance ≥ 1"),
        ({"relevance": True}, "relevance True is not one of"),
        ({"relevance": 1, "coherence": 2}, "'coherence' is not a label dimension of this campaign"),
    ],
)
def test_labels_the_campaign_does_not_ask_for_are_refused_with_the_reason(login, assignment, pool, labels, message):
    response = put(login(assignment.assessor), assignment, pool[0], **labels)
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not Judgment.objects.exists()


def test_details_of_non_relevant_documents_are_accepted_when_the_campaign_asks_them_always(login, assignment, pool):
    scheme = PRESETS["touche-2022-task2"][1].to_json()
    for dimension in scheme["dimensions"]:
        dimension.pop("condition", None)
    Campaign.objects.filter(pk=assignment.topic.campaign_id).update(scheme=scheme)
    response = put(login(assignment.assessor), assignment, pool[0], relevance=0, quality=1)
    assert response.status_code == 200 and response.json()["labels"]["quality"] == 1


def test_a_flag_and_a_note_alone_are_a_judgment_that_leaves_the_document_unjudged(login, assignment, pool):
    client = login(assignment.assessor)
    response = patch(client, assignment, pool[0], flagged=True, note="Is this about cats at all?", base_revision=0)
    assert response.status_code == 200 and response.json()["labels"] == {} and response.json()["revision"] == 1
    queue = client.get(reverse("work-queue", args=[assignment.pk])).json()["results"]
    assert (queue[0]["judged"], queue[0]["judgment"]["flagged"]) == (False, True)
    [work] = client.get(reverse("work-list")).json()
    assert work["judged"] == 0
    assert patch(client, assignment, pool[0], relevance=1, base_revision=1).json()["labels"] == {"relevance": 1}
    assert client.get(reverse("work-list")).json()[0]["judged"] == 1


def test_a_malformed_body_is_refused_field_by_field(login, assignment, pool):
    response = login(assignment.assessor).put(
        judgment_url(assignment, pool[0]), {"labels": [1], "time_spent_ms": -5}, content_type="application/json"
    )
    assert response.status_code == 400
    assert set(response.json()) == {"labels", "time_spent_ms"}


@pytest.mark.parametrize("method", ["put", "patch"])
@pytest.mark.parametrize(("body", "errors"), [
    ([1, 2], {"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]}),
    ({"labels": "high", "flagged": "maybe"}, {"labels": ['Expected a dictionary of items but got type "str".'], "flagged": ["Must be a valid boolean."]}),
])
def test_a_body_that_is_not_a_label_is_refused_and_says_why(login, assignment, pool, method, body, errors):
    client = login(assignment.assessor)
    response = getattr(client, method)(judgment_url(assignment, pool[0]), body, content_type="application/json")
    assert (response.status_code, response.json()) == (400, errors)
    assert not Judgment.objects.exists()


def test_a_closed_campaign_takes_no_more_labels(login, assignment, pool):
    Campaign.objects.filter(pk=assignment.topic.campaign_id).update(phase="closed")
    response = put(login(assignment.assessor), assignment, pool[0], relevance=1)
    assert response.status_code == 409 and "closed" in response.json()["detail"]
    assert response.json()["code"] == "closed"
    assert not Judgment.objects.exists()


def test_a_script_with_a_token_judges_through_the_same_endpoint(assignment, pool):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + create_token(assignment.assessor)[1])
    response = client.put(judgment_url(assignment, pool[2]), {"labels": {"relevance": 2, "quality": 1}}, format="json")
    assert response.status_code == 200 and response.json()["source"] == "api"
    assert client.get(judgment_url(assignment, pool[2])).json()["labels"] == {"relevance": 2, "quality": 1}


def test_getting_a_judgment_not_made_yet_is_404(login, assignment, pool):
    assert login(assignment.assessor).get(judgment_url(assignment, pool[0])).status_code == 404


def test_the_queue_lists_the_pool_in_order_with_only_the_callers_labels(login, assignment, bob_assignment, pool):
    put(login(bob_assignment.assessor), bob_assignment, pool[0], relevance=2, quality=2, stance="FIRST")
    client = login(assignment.assessor)
    put(client, assignment, pool[1], relevance=1)
    data = client.get(reverse("work-queue", args=[assignment.pk])).json()
    assert data["count"] == 3
    assert [(i["position"], i["entry"], i["doc_id"]) for i in data["results"]] == [
        (n + 1, e.pk, e.document.doc_id) for n, e in enumerate(pool)
    ]
    # Training: bob's label on entry 1 is not shown to alice.
    assert [i["judgment"] and i["judgment"]["labels"] for i in data["results"]] == [None, {"relevance": 1}, None]
    assert [i["judged"] for i in data["results"]] == [False, True, False]
    unjudged = client.get(reverse("work-queue", args=[assignment.pk]), {"unjudged": "1"}).json()
    assert [i["position"] for i in unjudged["results"]] == [1, 3]


def test_work_lists_progress_and_where_to_resume(login, assignment, pool):
    client = login(assignment.assessor)
    put(client, assignment, pool[0], relevance=1)
    [work] = client.get(reverse("work-list")).json()
    assert (work["id"], work["pool_size"], work["judged"], work["topic"]["number"]) == (assignment.pk, 3, 1, "1")
    detail = client.get(reverse("work-detail", args=[assignment.pk])).json()
    assert detail["resume_position"] == 2
    relevance = detail["campaign"]["scheme"]["dimensions"][0]
    assert (relevance["name"], relevance["values"][2]) == ("relevance", {"value": 2, "name": "Highly relevant", "key": "2"})


def test_an_item_is_the_sanitised_document_with_the_callers_label(login, assignment, pool):
    document = pool[0].document
    document.body, document.is_html = '<p onclick="x()">Cats<script>alert(1)</script></p>', True
    document.save()
    item = login(assignment.assessor).get(reverse("work-item", args=[assignment.pk, pool[0].pk])).json()
    assert item["document"]["body_html"] == "<p>Cats</p>"
    assert item["judgment"] is None and item["entry"] == pool[0].pk


def test_no_response_names_runs_ranks_or_scores(login, assignment, pool, campaign):
    run = Run.objects.create(campaign=campaign, tag="secret-team-bm25")
    PoolSource.objects.create(entry=pool[0], run=run, rank_position=1)
    client = login(assignment.assessor)
    put(client, assignment, pool[0], relevance=1)
    for url in (
        reverse("work-list"), reverse("work-detail", args=[assignment.pk]), reverse("work-queue", args=[assignment.pk]),
        reverse("work-item", args=[assignment.pk, pool[0].pk]), judgment_url(assignment, pool[0]),
    ):
        body = client.get(url).content.decode()
        for leak in ("secret-team-bm25", '"rank', '"score', '"run', '"strategy'):
            assert leak not in body, (url, leak)


def test_an_overlap_assignment_reaches_only_its_slice(login, bob, training_topic, pool):
    Campaign.objects.filter(pk=training_topic.campaign_id).update(phase="main")
    Assignment.objects.filter(assessor=bob).delete()
    overlap = Assignment.objects.create(topic=training_topic, assessor=bob, phase="main", scope="overlap")
    AssignmentItem.objects.create(assignment=overlap, entry=pool[1])
    client = login(bob)
    queue = client.get(reverse("work-queue", args=[overlap.pk])).json()
    assert [i["entry"] for i in queue["results"]] == [pool[1].pk]
    assert put(client, overlap, pool[1], relevance=1).status_code == 200
    assert put(client, overlap, pool[0], relevance=1).status_code == 404
    assert client.get(reverse("work-item", args=[overlap.pk, pool[2].pk])).status_code == 404
    [work] = client.get(reverse("work-list")).json()
    assert (work["pool_size"], work["judged"]) == (1, 1)


def test_saving_costs_the_same_queries_whatever_the_pool_size(login, assignment, pool, grow_pool, session_cache, django_assert_num_queries):
    client = login(assignment.assessor)
    put(client, assignment, pool[0], relevance=1)  # warm the session
    counts = []
    for extra in (0, 40):
        grow_pool(extra)
        with CaptureQueriesContext(connection) as captured:
            assert put(client, assignment, pool[0], relevance=2 if extra else 0).status_code == 200
        counts.append(len(captured))
    assert counts[0] == counts[1]
    # User; assignment and entry in one (the entry has no twins, so none are looked for); the judgment locked,
    # inserted, its event; the savepoint that guards the insert against a concurrent first save, and the test's
    # own transaction's (in production BEGIN and COMMIT). The session comes from the cache.
    with django_assert_num_queries(9):
        put(client, assignment, pool[1], relevance=1)
    # A change updates instead of inserting (no insert savepoint); the same label again writes nothing.
    with django_assert_num_queries(7):
        put(client, assignment, pool[1], relevance=2)
    with django_assert_num_queries(5):
        put(client, assignment, pool[1], relevance=2)


@pytest.mark.parametrize("unjudged", [False, True])
def test_the_queue_costs_the_same_queries_whatever_the_pool_size(login, assignment, pool, grow_pool, unjudged, django_assert_num_queries):
    client = login(assignment.assessor)
    put(client, assignment, pool[0], relevance=1)
    url = reverse("work-queue", args=[assignment.pk]) + ("?unjudged=1" if unjudged else "")
    for extra in (0, 60):
        grow_pool(extra)
        # Session, user, assignment; the caller's labels on the topic, the queue's entries, their doc ids.
        with django_assert_num_queries(6):
            response = client.get(url)
        assert response.json()["count"] == len(pool) + extra - unjudged


@pytest.mark.parametrize("propagate", [True, False])
def test_a_label_reaches_the_documents_twins_when_the_campaign_propagates(login, assignment, pool, propagate):
    Campaign.objects.filter(pk=assignment.topic.campaign_id).update(propagate_to_duplicates=propagate)
    pool[2].duplicate_of = pool[0]
    pool[2].save()
    response = put(login(assignment.assessor), assignment, pool[0], relevance=2, quality=1, stance="SECOND")
    assert response.status_code == 200
    twin = Judgment.objects.filter(assessor=assignment.assessor, document=pool[2].document).first()
    if propagate:
        assert (twin.labels, twin.source) == ({"relevance": 2, "quality": 1, "stance": "SECOND"}, "duplicate")
    else:
        assert twin is None
    assert not Judgment.objects.filter(document=pool[1].document).exists()


def test_copying_a_label_to_twins_reads_none_of_their_documents_bodies(login, assignment, pool):
    Campaign.objects.filter(pk=assignment.topic.campaign_id).update(propagate_to_duplicates=True)
    for twin in pool[1:]:
        twin.duplicate_of = pool[0]
        twin.save()
    client = login(assignment.assessor)
    with CaptureQueriesContext(connection) as captured:
        assert put(client, assignment, pool[0], relevance=2).status_code == 200
    assert Judgment.objects.filter(assessor=assignment.assessor, source="duplicate").count() == len(pool) - 1
    assert not [q["sql"] for q in captured if '"body"' in q["sql"]]


def test_a_label_on_a_twin_reaches_the_entry_it_points_at_and_the_other_twins(login, assignment, pool):
    Campaign.objects.filter(pk=assignment.topic.campaign_id).update(propagate_to_duplicates=True)
    for twin in pool[1:]:
        twin.duplicate_of = pool[0]
        twin.save()
    assert put(login(assignment.assessor), assignment, pool[2], relevance=1).status_code == 200
    judged = Judgment.objects.filter(assessor=assignment.assessor).values_list("document", "source")
    assert sorted(judged) == sorted([(pool[2].document_id, "web"), (pool[0].document_id, "duplicate"), (pool[1].document_id, "duplicate")])
