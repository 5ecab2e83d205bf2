"""Adjudication: an adjudicator records the final label of a disputed document with a reason. The `adjudicated`
qrels rule (and evaluation) then uses it; the assessors' judgments and their history are untouched, and the
decision has its own append-only history."""

import re

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from accounts.models import Role
from assessments.labels import PRESETS
from assessments.models import Adjudication, AdjudicationEvent, AuditEvent, JudgmentEvent, Run
from assessments.services import exports
from assessments.services.adjudication import AdjudicationError, Decision, adjudicate
from assessments.services.evaluation import evaluate_runs
from assessments.services.judging import Labels, record_judgment
from tests.factories import MembershipFactory, UserFactory
from tests.rankings import store_ranking

pytestmark = pytest.mark.django_db


@pytest.fixture
def disputed(campaign, alice, bob, pool):
    """alice says highly relevant, bob not relevant: a tie that majority breaks to the stricter 0."""
    entry = pool[0]
    record_judgment(topic=entry.topic, document=entry.document, assessor=alice, labels=Labels({"relevance": 2, "quality": 1, "stance": "FIRST"}), phase="training")
    record_judgment(topic=entry.topic, document=entry.document, assessor=bob, labels=Labels({"relevance": 0}, note="off topic?", flagged=True), phase="training")
    return entry


@pytest.fixture
def judith(campaign):
    """An organiser of the campaign whom an admin made an adjudicator."""
    return MembershipFactory(campaign=campaign, user=UserFactory(username="judith", role=Role.ORGANISER), role="adjudicator").user


def qrels(campaign, kind, rule, user):
    export = exports.export_qrels(campaign=campaign, kind=kind, phase="training", rule=rule, created_by=user)
    return b"".join(export).decode(), export.snapshot


def test_an_adjudication_changes_the_adjudicated_qrels_line_and_keeps_both_histories(campaign, disputed, judith):
    doc = disputed.document.doc_id
    assert qrels(campaign, "relevance", "majority", judith)[0] == f"1 0 {doc} 0\n"
    judgment_history = list(JudgmentEvent.objects.order_by("pk").values_list("pk", "labels"))

    adjudicate(topic=disputed.topic, document=disputed.document, by=judith,
               decision=Decision({"relevance": 1, "quality": 2, "stance": "SECOND"}, reason="compares both, briefly"))

    text, snapshot = qrels(campaign, "relevance", "adjudicated", judith)
    assert text == f"1 0 {doc} 1\n" and snapshot.rule == "adjudicated"
    assert qrels(campaign, "quality", "adjudicated", judith)[0] == f"1 0 {doc} 2\n"
    assert qrels(campaign, "stance", "adjudicated", judith)[0] == f"1 0 {doc} SECOND\n"
    assert qrels(campaign, "relevance", "majority", judith)[0] == f"1 0 {doc} 0\n"  # the other rules are as before
    assert list(JudgmentEvent.objects.order_by("pk").values_list("pk", "labels")) == judgment_history

    adjudicate(topic=disputed.topic, document=disputed.document, by=judith, decision=Decision({"relevance": 0}, reason="on reflection: no"))
    assert qrels(campaign, "relevance", "adjudicated", judith)[0] == f"1 0 {doc} 0\n"
    assert qrels(campaign, "quality", "adjudicated", judith)[0] == ""  # decided not relevant: no quality line
    assert list(AdjudicationEvent.objects.order_by("revision").values_list("revision", "labels", "reason")) == [
        (1, {"relevance": 1, "quality": 2, "stance": "SECOND"}, "compares both, briefly"), (2, {"relevance": 0}, "on reflection: no"),
    ]
    events = AuditEvent.objects.filter(action="adjudication").order_by("id")
    assert [(e.before and e.before["labels"]["relevance"], e.after["labels"]["relevance"], e.actor.username) for e in events] == [
        (None, 1, "judith"), (1, 0, "judith"),
    ]


def test_evaluation_accepts_the_adjudicated_rule(campaign, disputed, judith):
    run = Run.objects.create(campaign=campaign, tag="r1")
    store_ranking(run, disputed.topic, [(disputed.document.doc_id, 1, 5.0)])
    def ndcg(rule):
        return evaluate_runs(campaign=campaign, phase="training", rule=rule).results[0].scores["relevance"].mean
    assert ndcg("adjudicated") == ndcg("majority") == 0.0  # 2 vs 0 ties to 0
    adjudicate(topic=disputed.topic, document=disputed.document, by=judith, decision=Decision({"relevance": 2}, reason="yes"))
    assert ndcg("adjudicated") == 1.0 and ndcg("majority") == 0.0
    assert evaluate_runs(campaign=campaign, phase="training", rule="adjudicated").rule == "adjudicated"


@pytest.mark.parametrize(
    ("decision", "problem"),
    [
        (Decision({"relevance": 7}, reason="x"), "relevance 7"),
        (Decision({"relevance": 0, "quality": 2}, reason="x"), "quality is asked only when relevance ≥ 1"),
        (Decision({"quality": 2}, reason="x"), "quality is asked only when relevance ≥ 1"),
        (Decision({}, reason="x"), "decide Relevance"),
        (Decision({"relevance": 2, "colour": "red"}, reason="x"), "'colour' is not a label dimension"),
        (Decision({"relevance": 2}, reason="  "), "give a reason"),
    ],
)
def test_a_bad_decision_is_refused_and_stores_nothing(campaign, disputed, judith, decision, problem):
    with pytest.raises(AdjudicationError, match=problem):
        adjudicate(topic=disputed.topic, document=disputed.document, decision=decision, by=judith)
    assert not Adjudication.objects.exists() and not AuditEvent.objects.filter(action="adjudication").exists()


@pytest.mark.parametrize(
    "statement",
    [
        """UPDATE assessments_adjudicationevent SET labels = '{"relevance": 2}'""",
        "DELETE FROM assessments_adjudicationevent",
        "DELETE FROM assessments_adjudication",
        """UPDATE assessments_adjudication SET labels = '{"relevance": 9}'""",
    ],
)
def test_the_database_keeps_the_decisions_and_their_history(campaign, disputed, judith, statement):
    adjudicate(topic=disputed.topic, document=disputed.document, by=judith, decision=Decision({"relevance": 1}, reason="r"))
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    assert list(AdjudicationEvent.objects.values_list("labels", flat=True)) == [{"relevance": 1}]
    assert Adjudication.objects.get().labels == {"relevance": 1}


@pytest.mark.parametrize(("who", "status"), [("judith", 200), ("ada", 200), ("olivia", 404), ("oscar", 404), ("alice", 404)])
def test_only_adjudicators_reach_the_adjudication_page(client, campaign, disputed, judith, admin_user, organiser, oscar, alice, who, status):
    client.force_login({"judith": judith, "ada": admin_user, "olivia": organiser, "oscar": oscar, "alice": alice}[who])
    url = reverse("assessments:adjudicate", args=[campaign.slug, "1", disputed.document_id])
    assert client.get(url).status_code == status
    client.post(url, {"relevance": "2", "reason": "clear"})
    assert Adjudication.objects.exists() is (status == 200)


def test_the_disagreements_lead_from_open_case_to_open_case(client, campaign, disputed, pool, alice, bob, judith):
    second = pool[1]
    record_judgment(topic=second.topic, document=second.document, assessor=alice, labels=Labels({"relevance": 1}), phase="training")
    record_judgment(topic=second.topic, document=second.document, assessor=bob, labels=Labels({"relevance": 2}), phase="training")
    client.force_login(judith)
    listing = client.get(reverse("assessments:disagreements", args=[campaign.slug]), {"phase": "training"}).content.decode()
    assert listing.count(">adjudicate</a>") == 2
    first = reverse("assessments:adjudicate", args=[campaign.slug, "1", disputed.document_id])
    page = client.get(first, {"phase": "training"}).content.decode()
    following = reverse("assessments:adjudicate", args=[campaign.slug, "1", second.document_id])
    assert f'href="{following}?phase=training" data-key="j"' in page and "off topic?" in page
    response = client.post(f"{first}?phase=training", {"relevance": "2", "quality": "1", "stance": "FIRST", "reason": "alice is right"})
    assert response.status_code == 302 and response["Location"] == f"{following}?phase=training"
    page = client.get(following, {"phase": "training"}).content.decode()
    assert 'data-key="k"' not in page and 'data-key="j"' not in page  # the only other case is decided now
    listing = client.get(reverse("assessments:disagreements", args=[campaign.slug]), {"phase": "training"}).content.decode()
    assert listing.count(">adjudicate</a>") == 1 and ">revise</a>" in listing


def test_the_form_is_built_from_the_scheme(client, campaign, pool, alice, bob, judith):
    """Touché 2023 Task 2: one set of radio buttons per dimension, titled by the scheme; relevance is asked only of a
    document in the causal direction asked, so it may be left undecided, and the decision is checked as a whole."""
    campaign.preset, campaign.scheme = "touche-2023-task2", PRESETS["touche-2023-task2"][1].to_json()
    campaign.save()
    entry = pool[0]
    record_judgment(topic=entry.topic, document=entry.document, assessor=alice, labels=Labels({"direction": "WRONG"}), phase="training")
    record_judgment(
        topic=entry.topic, document=entry.document, assessor=bob, phase="training",
        labels=Labels({"direction": "CAUSE_EFFECT", "relevance": 2, "evidence": "STRONGER"}),
    )
    client.force_login(judith)
    url = reverse("assessments:adjudicate", args=[campaign.slug, "1", entry.document_id])

    page = client.get(url).content.decode()

    legends = re.findall(r"<legend>(.*?)</legend>", page)
    assert legends == ["Direction of causality", "Relevance", "Evidence", "Causal stance"]
    wrong = PRESETS["touche-2023-task2"][1].dimension("direction").name_of("WRONG")
    assert f'<span class="lab stance" title="Direction of causality: {wrong}">{wrong}</span>' in page
    assert '<span class="lab none" title="Relevance: not given">R–</span>' in page  # alice was not asked
    refused = client.post(url, {"direction": "WRONG", "relevance": "2", "reason": "x"})
    assert refused.status_code == 400 and "relevance is asked only when direction is CAUSE_EFFECT" in refused.content.decode()
    assert client.post(url, {"direction": "CAUSE_EFFECT", "reason": "x"}).status_code == 400  # relevance is then required
    client.post(url, {"direction": "WRONG", "reason": "the effect causes the cause"})
    assert Adjudication.objects.get().labels == {"direction": "WRONG"}
