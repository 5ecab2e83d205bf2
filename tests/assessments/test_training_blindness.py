"""Training stays blind (issue 14): labels that name the assessor who gave them in training are for admins and the
campaign's adjudicators. olivia, a plain organiser, sees aggregates of training and main-phase labels by name;
judith (an adjudicator of the campaign) and ada (an admin) see everything. Every organiser page and endpoint that
could show one assessor's training labels is checked here, offered or forced."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import Role
from assessments.services import exports
from assessments.services.judging import Labels, record_judgment
from tests.factories import MembershipFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

SLUG = "touche22"
SEES = {"olivia": False, "judith": True, "ada": True}


@pytest.fixture
def viewer(request, organiser, admin_user, campaign):
    """The user named by the test's `who` parameter."""
    if request.param == "judith":
        return MembershipFactory(
            campaign=campaign, user=UserFactory(username="judith", role=Role.ORGANISER), role="adjudicator"
        ).user
    return {"olivia": organiser, "ada": admin_user}[request.param]


def who(*names: str):
    return pytest.mark.parametrize(("viewer", "sees"), [(name, SEES[name]) for name in names], indirect=["viewer"])


EVERYONE = who("olivia", "judith", "ada")


def _export(campaign, *, phase: str, rule: str = "majority"):
    b"".join(export := exports.export_qrels(campaign=campaign, kind="relevance", phase=phase, rule=rule))
    return export.snapshot


@pytest.fixture
def training_diff(campaign, alice, bob, pool):
    """Snapshots #1 and #2 of the training labels, with alice changing her label in between."""
    topic, document = pool[0].topic, pool[0].document
    record_judgment(topic=topic, document=document, assessor=alice, labels=Labels({"relevance": 2}), phase="training")
    record_judgment(topic=topic, document=document, assessor=bob, labels=Labels({"relevance": 2}), phase="training")
    older = _export(campaign, phase="training")
    record_judgment(topic=topic, document=document, assessor=alice, labels=Labels({"relevance": 0}), phase="training")
    record_judgment(topic=topic, document=document, assessor=bob, labels=Labels({"relevance": 0}), phase="training")
    return older, _export(campaign, phase="training")


@pytest.fixture
def alices_snapshot(campaign, alice, pool):
    """Snapshot #1: alice's training labels alone (an adjudicator made it)."""
    record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, labels=Labels({"relevance": 2}), phase="training")
    return _export(campaign, phase="training", rule="assessor:alice")


def close_training(campaign) -> None:
    campaign.phase = "main"
    campaign.save(update_fields=["phase"])


def _api(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


@EVERYONE
def test_the_only_one_assessor_rule_is_offered_to_those_who_see_training_labels(client, campaign, alice, pool, viewer, sees):
    record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, labels=Labels({"relevance": 1}), phase="training")
    client.force_login(viewer)
    for page in ("qrels", "leaderboard", "compare_runs", "reusability"):
        with_rule = 'value="assessor:alice"' in client.get(reverse(f"assessments:{page}", args=[SLUG])).content.decode()
        assert with_rule is sees, page


@EVERYONE
def test_forcing_the_one_assessor_rule_is_refused(client, campaign, alice, pool, viewer, sees):
    record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, labels=Labels({"relevance": 1}), phase="training")
    client.force_login(viewer)
    forced = {"rule": "assessor:alice", "phase": "training", "kind": "relevance", "measure": "nDCG@5"}
    expected = 200 if sees else 403
    for page in ("leaderboard", "leaderboard_csv", "compare_runs", "reusability"):
        assert client.get(reverse(f"assessments:{page}", args=[SLUG]), forced).status_code == expected, page
    response = client.post(reverse("assessments:qrels_export", args=[SLUG]), forced)
    assert response.status_code == expected
    assert (b"".join(response.streaming_content) == b"1 0 " + pool[0].document.doc_id.encode() + b" 1\n") if sees else True
    api = _api(viewer)
    assert api.get(reverse("api-results", args=[SLUG]), forced).status_code == expected
    for phase in ("training", "main", "all"):  # the rule shows one assessor's labels whatever the phase
        posted = api.post(reverse("api-qrels", args=[SLUG]), {**forced, "phase": phase}, format="json")
        assert posted.status_code == expected, phase


@EVERYONE
def test_a_snapshot_of_one_assessors_labels_is_hidden_from_plain_organisers(client, campaign, alices_snapshot, viewer, sees):
    close_training(campaign)  # aggregates of training are everyone's once the round is closed; one assessor's never
    other = _export(campaign, phase="training")
    client.force_login(viewer)
    listed = client.get(reverse("assessments:qrels", args=[SLUG])).content.decode()
    assert ("assessor:alice" in listed) is sees
    expected = 200 if sees else 404
    assert client.get(reverse("assessments:qrels_snapshot", args=[SLUG, alices_snapshot.number])).status_code == expected
    diff = {"older": alices_snapshot.number, "newer": other.number}
    assert client.get(reverse("assessments:qrels_diff", args=[SLUG]), diff).status_code == expected
    api = _api(viewer)
    assert [s["number"] for s in api.get(reverse("api-qrels", args=[SLUG])).json()] == ([2, 1] if sees else [2])
    assert api.get(reverse("api-qrels-snapshot", args=[SLUG, 1])).status_code == expected
    assert api.get(reverse("api-qrels-diff", args=[SLUG, 1, 2])).status_code == expected


@EVERYONE
def test_the_diff_names_who_changed_training_labels_only_to_those_who_may_see_them(client, campaign, training_diff, viewer, sees):
    close_training(campaign)
    older, newer = training_diff
    client.force_login(viewer)
    response = client.get(reverse("assessments:qrels_diff", args=[SLUG]), {"older": older.number, "newer": newer.number})
    text = response.content.decode()
    assert response.status_code == 200 and 'class="diff-changed"' in text  # the aggregated line, for everyone
    assert ("alice set 0" in text and "bob set 0" in text) is sees
    assert ("listed for admins and the campaign's adjudicators only" in text) is not sees
    body = _api(viewer).get(reverse("api-qrels-diff", args=[SLUG, older.number, newer.number])).json()
    assert (body["changed"], body["lines"][0]["old"], body["lines"][0]["new"]) == (1, 2, 0)
    assert [c["assessor"] for c in body["lines"][0]["changes"]] == (["alice", "bob"] if sees else [])
    assert body["changes_not_listed_for"] == ([] if sees else ["training"])


@EVERYONE
def test_the_diff_names_who_changed_main_phase_labels_to_every_organiser(client, campaign, alice, viewer, sees):
    entry = PoolEntryFactory(topic=TopicFactory(campaign=campaign, number="2"))
    record_judgment(topic=entry.topic, document=entry.document, assessor=alice, labels=Labels({"relevance": 1}), phase="main")
    older = _export(campaign, phase="main")
    record_judgment(topic=entry.topic, document=entry.document, assessor=alice, labels=Labels({"relevance": 2}), phase="main")
    newer = _export(campaign, phase="main")
    client.force_login(viewer)
    text = client.get(reverse("assessments:qrels_diff", args=[SLUG]), {"older": older.number, "newer": newer.number}).content.decode()
    assert "alice set 2" in text
    body = _api(viewer).get(reverse("api-qrels-diff", args=[SLUG, older.number, newer.number])).json()
    assert body["changes_not_listed_for"] == [] and body["lines"][0]["changes"][0]["assessor"] == "alice"


@EVERYONE
def test_the_discussion_shows_training_labels_only_to_those_who_may_see_them(client, campaign, alice, pool, viewer, sees):
    record_judgment(
        topic=pool[0].topic, document=pool[0].document, assessor=alice, labels=Labels({"relevance": 2}, flagged=True), phase="training"
    )
    entry = PoolEntryFactory(topic=TopicFactory(campaign=campaign, number="2"))
    record_judgment(topic=entry.topic, document=entry.document, assessor=alice, labels=Labels({"relevance": 1}, note="hm"), phase="main")
    client.force_login(viewer)
    text = client.get(reverse("assessments:discussion", args=[SLUG])).content.decode()
    assert ('class="lab rel r-2"' in text) is sees and ("labels hidden" in text) is not sees
    assert 'class="lab rel r-1"' in text  # main-phase labels by name: every organiser


@EVERYONE
def test_disagreements_and_adjudication_are_for_adjudicators(client, campaign, alice, bob, pool, viewer, sees):
    topic, document = pool[0].topic, pool[0].document
    record_judgment(topic=topic, document=document, assessor=alice, labels=Labels({"relevance": 2}), phase="training")
    record_judgment(topic=topic, document=document, assessor=bob, labels=Labels({"relevance": 0}), phase="training")
    client.force_login(viewer)
    expected = 200 if sees else 404
    campaign_page = client.get(reverse("assessments:campaign", args=[SLUG])).content.decode()
    assert (f"/campaigns/{SLUG}/agreement/" in campaign_page) is sees  # the dashboard (admins) or the disagreements
    for url in (
        reverse("assessments:disagreements", args=[SLUG]),
        reverse("assessments:adjudicate", args=[SLUG, topic.number, document.pk]),
    ):
        assert client.get(url).status_code == expected, url
    # The document alone, with no one's labels, is every organiser's (the discussion links to it).
    assert client.get(reverse("assessments:agreement_document", args=[SLUG, document.pk])).status_code == 200
