"""Until the training round closes, a plain organiser sees counts and agreement of the training topics, not their
labels aggregated: every assessor judges the same training topics, so their majority or maximum is one assessor's
label wherever they agree. Exports, leaderboards, snapshots and the timeline's adjudications of training topics are
for admins and the campaign's adjudicators then; once the main phase starts, aggregates are everyone's again."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import Role
from assessments.services import exports
from assessments.services.adjudication import Decision, adjudicate
from assessments.services.judging import Labels, record_judgment
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
SLUG = "touche22"


@pytest.fixture
def judged_training(campaign, alice, bob, pool, admin_user):
    """alice and bob agree on the training topic; ada adjudicated it and exported the training qrels."""
    campaign.phase = "training"
    campaign.save(update_fields=["phase"])
    topic, document = pool[0].topic, pool[0].document
    for who in (alice, bob):
        record_judgment(topic=topic, document=document, assessor=who, labels=Labels({"relevance": 2}), phase="training")
    adjudicate(topic=topic, document=document, decision=Decision({"relevance": 2}, "both agree"), by=admin_user)
    b"".join(export := exports.export_qrels(campaign=campaign, kind="relevance", phase="training"))
    return export.snapshot


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_plain_organiser_gets_no_training_aggregate_during_training(client, organiser, judged_training):
    client.force_login(organiser)
    for page in ("qrels", "leaderboard", "compare_runs", "reusability"):
        html = client.get(reverse(f"assessments:{page}", args=[SLUG])).content.decode()
        if page == "qrels":  # the import form's phases are where imported labels go, not what is shown
            html = html[:html.index("Import labels")] if "Import labels" in html else html.split("<form")[1]
        assert 'value="training"' not in html and 'value="all"' not in html, page
        if page != "qrels":
            assert client.get(reverse(f"assessments:{page}", args=[SLUG]), {"phase": "training"}).status_code == 403, page
    forced = {"kind": "relevance", "phase": "all", "rule": "max"}
    assert client.post(reverse("assessments:qrels_export", args=[SLUG]), forced).status_code == 403
    client_api = api(organiser)
    assert client_api.get(reverse("api-results", args=[SLUG]), {"phase": "training"}).status_code == 403
    assert client_api.post(reverse("api-qrels", args=[SLUG]), {"kind": "relevance", "phase": "training"}, format="json").status_code == 403
    assert client_api.get(reverse("api-qrels", args=[SLUG])).json() == []  # the training snapshot is not listed
    assert client.get(reverse("assessments:qrels_snapshot", args=[SLUG, judged_training.number])).status_code == 404
    timeline = client_api.get(reverse("api-timeline", args=[SLUG])).json()["results"]
    assert not [event for event in timeline if event["action"] == "adjudication"]
    assert "topic 1," not in client.get(reverse("assessments:timeline", args=[SLUG])).content.decode()


def test_admins_and_adjudicators_see_them_and_everyone_once_the_main_phase_starts(
    client, campaign, organiser, admin_user, judged_training
):
    judith = MembershipFactory(campaign=campaign, user=UserFactory(username="judith", role=Role.ORGANISER), role="adjudicator").user
    for user in (admin_user, judith):
        assert api(user).get(reverse("api-results", args=[SLUG]), {"phase": "training"}).status_code == 200
        assert [s["number"] for s in api(user).get(reverse("api-qrels", args=[SLUG])).json()] == [judged_training.number]
        timeline = api(user).get(reverse("api-timeline", args=[SLUG])).json()["results"]
        assert [event for event in timeline if event["action"] == "adjudication"]

    campaign.phase = "main"
    campaign.save(update_fields=["phase"])
    client.force_login(organiser)
    assert 'value="all"' in client.get(reverse("assessments:qrels", args=[SLUG])).content.decode()
    assert api(organiser).get(reverse("api-results", args=[SLUG]), {"phase": "training"}).status_code == 200
    assert [s["number"] for s in api(organiser).get(reverse("api-qrels", args=[SLUG])).json()] == [judged_training.number]
    timeline = api(organiser).get(reverse("api-timeline", args=[SLUG])).json()["results"]
    assert [event for event in timeline if event["action"] == "adjudication"]
