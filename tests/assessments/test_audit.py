"""The audit trail: every change of a campaign's state leaves one event (who, what, before and after) written in
the same transaction as the change; the database refuses to rewrite events; the timeline shows them to the
campaign's own organisers only."""

import hashlib

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse
from rest_framework.test import APIClient

from assessments.models import AuditEvent, Campaign, Phase
from assessments.services import assignments, campaigns, exports
from assessments.services.imports.runs import import_runs
from assessments.services.imports.topics import import_topics
from tests.factories import PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

TOPICS = b"""<topics><topic><number>1</number><title>Cats or dogs?</title></topic>
<topic><number>2</number><title>Tea or coffee?</title></topic></topics>"""


def events(campaign, action=None):
    rows = AuditEvent.objects.filter(campaign=campaign).order_by("id")
    if action:
        rows = rows.filter(action=action)
    return list(rows.values_list("action", "actor__username", "subject", "before", "after"))


def test_creating_a_campaign_and_changing_its_members_is_recorded(organiser, admin_user):
    campaign = campaigns.create_campaign(slug="t21", name="T", preset="touche-2021-task2", organisers=[organiser], created_by=admin_user)
    oscar = UserFactory(username="oscar", role="organiser")
    campaigns.add_member(campaign=campaign, user=oscar, by=organiser)
    campaigns.add_member(campaign=campaign, user=oscar, role="adjudicator", by=admin_user)
    campaigns.add_member(campaign=campaign, user=oscar, role="adjudicator", by=admin_user)  # no change, no event
    campaigns.remove_member(campaign=campaign, user=oscar, by=organiser)
    assert events(campaign) == [
        ("campaign.created", "ada", "t21", None, {"name": "T", "preset": "touche-2021-task2", "collection": "t21"}),
        ("member.added", "ada", "olivia", None, {"role": "organiser"}),
        ("member.added", "olivia", "oscar", None, {"role": "organiser"}),
        ("member.changed", "ada", "oscar", {"role": "organiser"}, {"role": "adjudicator"}),
        ("member.removed", "olivia", "oscar", {"role": "adjudicator"}, None),
    ]


def test_the_training_phase_leaves_its_trail(client, admin_user, campaign, alice, bob, pool):
    client.force_login(admin_user)
    url = reverse("assessments:agreement_phase", args=[campaign.slug])
    client.post(url, {"step": "start_training"})
    client.post(url, {"step": "next_round"})
    TopicFactory(campaign=campaign, number="2")
    assignments.mark_training(campaign=campaign, topics=list(campaign.topics.filter(number="2")), is_training=True, by=admin_user)
    client.post(url, {"step": "main", "confirm": "main"})
    assert [(a, who, subject) for a, who, subject, _, _ in events(campaign)] == [
        ("phase.changed", "ada", "setup → training"),
        ("training.round_closed", "ada", "round 1"),
        ("training.round_opened", "ada", "round 2"),
        ("topics.marked", "ada", "topic 2 → training"),
        ("training.round_closed", "ada", "round 2"),
        ("phase.changed", "ada", "training → main"),
    ]
    closed = AuditEvent.objects.filter(action="training.round_closed").order_by("id").first()
    assert closed.details == {"round": 1, "assignments_closed": 2}
    assert events(campaign, "phase.changed")[1][3:] == ({"phase": "training"}, {"phase": "main"})


def test_assignments_made_and_withdrawn_are_recorded_and_a_refused_one_is_not(client, organiser, campaign, alice, bob, pool):
    topic = TopicFactory(campaign=campaign, number="2")
    PoolEntryFactory(topic=topic)
    client.force_login(organiser)
    client.post(reverse("assessments:assignments_assign", args=[campaign.slug]), {"assessors": ["alice"], "topics": ["2"], "phase": "main"})
    client.post(reverse("assessments:assignments_assign", args=[campaign.slug]), {"assessors": ["bob"], "topics": ["2"], "phase": "main"})
    client.post(reverse("assessments:assignments_assign", args=[campaign.slug]), {"assessors": ["nobody"], "topics": ["2"]})
    held = topic.assignments.get(assessor=bob)
    client.post(reverse("assessments:assignments_withdraw", args=[campaign.slug]), {"assignment": held.pk})
    made = AuditEvent.objects.filter(action="assignment.made").order_by("id")
    assert [e.details["assigned"] for e in made] == [
        [{"topic": "2", "assessor": "alice", "status": "new", "replaced": []}],
        [{"topic": "2", "assessor": "bob", "status": "new", "replaced": ["alice"]}],
    ]
    assert events(campaign, "assignment.withdrawn") == [
        ("assignment.withdrawn", "olivia", "topic 2 from bob", {"active": True}, {"active": False})
    ]


def test_imports_record_file_names_counts_and_checksums(campaign, organiser, tmp_path):
    topics = tmp_path / "topics.xml"
    topics.write_bytes(TOPICS)
    import_topics(campaign=campaign, path=topics, name="topics-2021.xml", by=organiser)
    run = tmp_path / "team-run1.txt"
    run.write_text("1 Q0 doc-a 1 9.5 run1\n1 Q0 doc-b 2 8.0 run1\n2 Q0 doc-c 1 3.0 run1\n")
    import_runs(campaign=campaign, paths=[run], names=["team-run1.txt"], uploaded_by=organiser)
    topics_event, runs_event = AuditEvent.objects.filter(action__startswith="import.").order_by("id")
    assert topics_event.details["files"] == [
        {"name": "topics-2021.xml", "bytes": len(TOPICS), "sha256": hashlib.sha256(TOPICS).hexdigest()}
    ]
    assert (topics_event.details["topics"], topics_event.details["created"], topics_event.actor) == (2, ["1", "2"], organiser)
    assert runs_event.details["files"][0]["sha256"] == hashlib.sha256(run.read_bytes()).hexdigest()
    assert runs_event.details["runs"] == [{"tag": "run1", "lines": 3, "topics": 2, "replaced": False}]


def test_a_qrels_export_is_recorded_with_its_checksum(campaign, organiser, alice, pool):
    export = exports.export_qrels(campaign=campaign, kind="relevance", phase="training", created_by=organiser)
    content = b"".join(export)
    (event,) = AuditEvent.objects.filter(action="qrels.exported")
    assert event.details == {"number": 1, "kind": "relevance", "phase": "training", "rule": "majority", "lines": 0,
                             "sha256": hashlib.sha256(content).hexdigest()}


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE assessments_auditevent SET subject = 'nothing happened'",
        "UPDATE assessments_auditevent SET actor_id = NULL",
        "DELETE FROM assessments_auditevent",
        "TRUNCATE assessments_auditevent",
        "TRUNCATE assessments_auditevent CASCADE",
    ],
)
def test_the_database_refuses_to_rewrite_the_trail(campaign, organiser, statement):
    campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=organiser)
    before = events(campaign)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # TRUNCATE will not run while key checks are pending
    with pytest.raises(DatabaseError, match="the audit trail is append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    assert events(campaign) == before


def test_a_campaign_with_a_trail_cannot_be_deleted(campaign, organiser):
    campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=organiser)
    with pytest.raises(Exception), transaction.atomic():  # noqa: B017 (PROTECT in the ORM, the trigger in SQL)
        campaign.delete()
    assert Campaign.objects.filter(pk=campaign.pk).exists()


@pytest.mark.parametrize(("who", "status"), [("olivia", 200), ("oscar", 404), ("ada", 200), ("alice", 404)])
def test_the_timeline_is_for_the_campaigns_own_organisers(client, organiser, oscar, admin_user, alice, campaign, who, status):
    campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=admin_user)
    user = {"olivia": organiser, "oscar": oscar, "ada": admin_user, "alice": alice}[who]
    client.force_login(user)
    page = client.get(reverse("assessments:timeline", args=[campaign.slug]))
    assert page.status_code == status
    api = APIClient()
    api.force_authenticate(user)
    response = api.get(reverse("api-timeline", args=[campaign.slug]), {"action": "phase"})
    assert response.status_code == (403 if who == "alice" else status)
    if status == 200:
        assert "setup → training" in page.content.decode()
        # The page reads as words, the API as JSON.
        assert '<td class="mono small">phase setup</td>' in page.content.decode() and '{"phase"' not in page.content.decode()
        (event,) = response.json()["results"]
        assert (event["action"], event["actor"], event["before"], event["after"]) == (
            "phase.changed", "ada", {"phase": "setup"}, {"phase": "training"}
        )
