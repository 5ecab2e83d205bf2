"""The disagreements and adjudication pages of a classification campaign (Touché 2023 Task 4): two coders who both
read English label the English comments through the labelling API; the one comment they disagree on is listed with
both labels, the adjudicator decides it on its page (the comment shown, the stance offered by the scheme's names),
and the decision is recorded, shown as the final label, and written by export_gold in place of the coders' tie."""

import csv
import io

import pytest
from django.urls import reverse

from accounts.models import Role, User
from assessments.models import Adjudication, AdjudicationEvent, Assignment, Campaign, PoolEntry
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
EXAMPLE = "tests/data/cofe-example"


@pytest.fixture
def cofe(db, command) -> Campaign:
    command("create_campaign", "cofe23", "--name", "CoFE stance", "--preset", "touche-2023-task4")
    done = command("import_items", "cofe23", f"{EXAMPLE}/comments.tsv", "--proposals", f"{EXAMPLE}/proposals.tsv")
    assert done.code == 0, done.err
    for name, languages in (("greta", "de,en"), ("hugo", "fr,en")):
        command("create_user", name, "--role", "assessor", "--languages", languages, "--password", f"cofe-{name}-password")
    given = command("assign_items", "cofe23", "--coders", "greta,hugo", "--overlap", "1")
    assert given.code == 0, given.err
    campaign = Campaign.objects.get(slug="cofe23")
    campaign.phase = "main"  # the items open with the main phase
    campaign.save(update_fields=["phase"])
    return campaign


@pytest.fixture
def judith(cofe):
    """An organiser of the campaign whom an admin made its adjudicator."""
    return MembershipFactory(campaign=cofe, user=UserFactory(username="judith", role=Role.ORGANISER), role="adjudicator").user


def label(client, coder, comment, stance):
    """`coder` labels `comment` as the labelling page does: a PATCH of the stance to the assessor API."""
    entry = PoolEntry.objects.get(topic__campaign__slug="cofe23", document__doc_id=comment)
    assignment = Assignment.objects.get(assessor__username=coder, topic=entry.topic)
    client.force_login(User.objects.get(username=coder))
    response = client.patch(
        reverse("work-judgment", args=[assignment.pk, entry.pk]), {"labels": {"stance": stance}, "base_revision": 0},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return entry


def gold(command) -> dict[str, str]:
    written = command("export_gold", "cofe23")
    assert written.code == 0, written.err
    return {row["id"]: row["label"] for row in csv.DictReader(io.StringIO(written.out), delimiter="\t", quoting=csv.QUOTE_MINIMAL)}


def test_a_comment_two_coders_disagree_on_is_listed_decided_and_exported(client, cofe, judith, command):
    # c101, c105 and c108 are English, so both coders hold them (--overlap 1); they disagree on c101 only.
    disputed = label(client, "greta", "c101", "In favor")
    label(client, "hugo", "c101", "Against")
    for coder in ("greta", "hugo"):
        label(client, coder, "c105", "Other")
        label(client, coder, "c108", "In favor")
    before = gold(command)
    assert (before["c105"], before["c108"], before["c102"]) == ("Other", "In favor", "---")
    assert before["c101"] in ("In favor", "Against")  # the tie, broken by the majority rule

    client.force_login(judith)
    listing = client.get(reverse("assessments:disagreements", args=["cofe23"]), {"phase": "main"})
    assert listing.status_code == 200
    page = listing.content.decode()
    assert "c101" in page and "Night trains across Europe" in page
    assert "c105" not in page and "c108" not in page  # agreed: not a disagreement
    assert page.count(">adjudicate</a>") == 1
    for shown in ("greta", "hugo", "In favor", "Against"):
        assert shown in page
    case = reverse("assessments:adjudicate", args=["cofe23", disputed.topic.number, disputed.document_id])
    assert f'href="{case}?phase=main"' in page

    form = client.get(case, {"phase": "main"})
    assert form.status_code == 200
    page = form.content.decode()
    assert "Night trains across Europe would make flying between capitals unnecessary." in page
    assert "Stance towards the proposal" in page
    for value in ("In favor", "Against", "Other"):
        assert f'value="{value}"' in page  # the scheme's values, exactly as the lab's files write them
    assert "greta" in page and "hugo" in page

    decided = client.post(f"{case}?phase=main", {"stance": "Other", "reason": "Asks about prices, not the proposal."})
    assert decided.status_code == 302
    adjudication = Adjudication.objects.get()
    assert (adjudication.topic_id, adjudication.document_id) == (disputed.topic_id, disputed.document_id)
    assert (adjudication.labels, adjudication.reason, adjudication.adjudicator) == (
        {"stance": "Other"}, "Asks about prices, not the proposal.", judith)
    assert list(AdjudicationEvent.objects.values_list("labels", "reason")) == [({"stance": "Other"}, "Asks about prices, not the proposal.")]

    page = client.get(reverse("assessments:disagreements", args=["cofe23"]), {"phase": "main"}).content.decode()
    assert ">adjudicate</a>" not in page and ">revise</a>" in page  # decided: its final label shown
    page = client.get(case, {"phase": "main"}).content.decode()
    assert "Asks about prices, not the proposal." in page and "judith" in page  # the decision and its history

    after = gold(command)
    assert after["c101"] == "Other"  # the adjudicator's, neither coder's
    assert {k: v for k, v in after.items() if k != "c101"} == {k: v for k, v in before.items() if k != "c101"}


def test_only_the_campaigns_adjudicators_reach_its_pages(client, cofe, judith):
    disputed = label(client, "greta", "c101", "In favor")
    label(client, "hugo", "c101", "Against")
    case = reverse("assessments:adjudicate", args=["cofe23", disputed.topic.number, disputed.document_id])
    listing = reverse("assessments:disagreements", args=["cofe23"])
    for user, status in ((judith, 200), (User.objects.get(username="greta"), 404), (UserFactory(role=Role.ORGANISER), 404)):
        client.force_login(user)
        assert (client.get(listing).status_code, client.get(case).status_code) == (status, status), user
        client.post(case, {"stance": "Other", "reason": "mine"})
    assert list(Adjudication.objects.values_list("adjudicator__username", flat=True)) == ["judith"]
