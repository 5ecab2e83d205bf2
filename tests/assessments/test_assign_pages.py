"""The assignment page and API, by role: organisers assign, admins also run training, assessors get nothing."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessments.models import Assignment, Judgment
from assessments.services.judging import Labels, record_judgment
from tests.factories import PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def topics(campaign):
    """Main-phase topics 2, 3 and 8 with pools of 4, 2 and 3 documents."""
    made = []
    for number, size in (("2", 4), ("3", 2), ("8", 3)):
        topic = TopicFactory(campaign=campaign, number=number, position=int(number))
        for i in range(size):
            PoolEntryFactory(topic=topic, order=i)
        made.append(topic)
    return made


@pytest.fixture
def ann(db):
    return UserFactory(username="ann")


def page(campaign, name="assignments"):
    return reverse(f"assessments:{name}", args=[campaign.slug])


@pytest.mark.parametrize(
    "who, status", [("alice", 404), ("mallory", 404), ("organiser", 200), ("admin_user", 200)]
)
def test_who_sees_the_assignment_page(client, request, campaign, alice, who, status):
    client.force_login(request.getfixturevalue(who))
    assert client.get(page(campaign)).status_code == status


def test_an_assessor_cannot_assign(client, campaign, topics, alice):
    client.force_login(alice)

    response = client.post(page(campaign, "assignments_assign"), {"topics": ["2"], "assessors": ["alice"], "phase": "main"})
    api = client.post(f"/api/campaigns/{campaign.slug}/assignments/", {"topics": ["2"], "assessors": ["alice"]}, content_type="application/json")

    assert response.status_code == 404 and api.status_code == 403
    assert not Assignment.objects.filter(topic__in=topics).exists()


def test_an_organiser_assigns_from_the_page(client, campaign, topics, organiser, ann):
    client.force_login(organiser)

    response = client.post(
        page(campaign, "assignments_assign"), {"topics": ["2", "8"], "assessors": ["ann"], "phase": "main"}, follow=True
    )

    assert response.redirect_chain[-1][0] == page(campaign)
    assert set(Assignment.objects.filter(active=True).values_list("topic__number", "assessor__username")) == {
        ("2", "ann"), ("8", "ann")
    }
    assert "topic 2 → ann (new)" in response.content.decode()


def test_an_organiser_cannot_run_the_training_phase(client, campaign, training_topic, organiser, ann):
    client.force_login(organiser)

    assign = client.post(page(campaign, "assignments_assign"), {"topics": ["1"], "assessors": ["ann"], "phase": "training"})
    mark = client.post(page(campaign, "assignments_training"), {"topics": ["1"], "training": "0"})

    assert assign.status_code == 403 and mark.status_code == 403
    training_topic.refresh_from_db()
    assert training_topic.is_training and not Assignment.objects.filter(assessor__username="ann").exists()


def test_an_admin_marks_and_assigns_training_topics(client, campaign, topics, admin_user, ann, alice):
    client.force_login(admin_user)

    client.post(page(campaign, "assignments_training"), {"topics": ["3"], "training": "1"})
    client.post(page(campaign, "assignments_assign"), {"topics": ["3"], "assessors": ["ann", "alice"], "phase": "training"})

    assert set(Assignment.objects.filter(topic__number="3").values_list("assessor__username", "phase")) == {
        ("ann", "training"), ("alice", "training")
    }


def test_a_mistake_is_reported_and_changes_nothing(client, campaign, topics, organiser, ann):
    client.force_login(organiser)

    response = client.post(
        page(campaign, "assignments_assign"), {"topics": ["2", "99"], "assessors": ["ann"], "phase": "main"}, follow=True
    )

    assert "has no topic 99" in response.content.decode()
    assert not Assignment.objects.filter(assessor=ann).exists()


def test_the_page_lists_each_topics_judgments_by_assessor_after_a_reassignment(client, campaign, topics, organiser, ann):
    bea = UserFactory(username="bea")
    client.force_login(organiser)
    client.post(page(campaign, "assignments_assign"), {"topics": ["2"], "assessors": ["ann"]})
    for entry in topics[0].pool_entries.all()[:3]:
        record_judgment(topic=topics[0], document=entry.document, assessor=ann, labels=Labels({"relevance": 1}), phase="main")

    client.post(page(campaign, "assignments_assign"), {"topics": ["2"], "assessors": ["bea"]})
    response = client.get(page(campaign))

    assert Judgment.objects.filter(assessor=ann).count() == 3
    (row,) = [r for r in response.context["overview"].topics if r.topic.number == "2"]
    assert [a.assessor for a in row.current] == [bea] and row.judged == [("ann", 3, False)]
    html = response.content.decode()
    assert "ann 3" in html and "before: ann" in html


def test_auto_and_overlap_from_the_page(client, campaign, topics, organiser, ann):
    UserFactory(username="bea")
    client.force_login(organiser)

    client.post(page(campaign, "assignments_auto"), {"assessors": ["ann", "bea"]})
    client.post(page(campaign, "assignments_overlap"), {"percent": "50"})

    # Pools 4, 2, 3: 4 → ann, 3 → bea, 2 → bea (3 < 4).
    holders = dict(Assignment.objects.filter(scope="full").values_list("topic__number", "assessor__username"))
    assert holders == {"2": "ann", "3": "bea", "8": "bea"}
    slices = {a.topic.number: (a.assessor.username, a.items.count()) for a in Assignment.objects.filter(scope="overlap")}
    assert slices == {"2": ("bea", 2), "3": ("ann", 1), "8": ("ann", 2)}


def test_auto_from_the_page_and_the_api_names_the_topics_it_skipped(client, campaign, topics, organiser, ann):
    TopicFactory(campaign=campaign, number="9")  # no pool yet
    client.force_login(organiser)

    response = client.post(page(campaign, "assignments_auto"), {"assessors": ["ann"], "topics": ["2", "9"]}, follow=True)
    assert "1 topics shared out; documents per assessor: ann 4 (skipped, no pool yet: topic 9)" in response.content.decode()

    auto = api(client, campaign, "auto/", assessors=["ann"])
    assert auto.status_code == 200 and auto.json()["skipped"] == ["9"]
    assert {a["topic"] for a in auto.json()["assigned"]} == {"3", "8"}


def test_withdrawing_keeps_the_row_and_the_judgments(client, campaign, topics, organiser, ann):
    client.force_login(organiser)
    client.post(page(campaign, "assignments_assign"), {"topics": ["2"], "assessors": ["ann"]})
    assignment = Assignment.objects.get(assessor=ann)

    client.post(page(campaign, "assignments_withdraw"), {"assignment": assignment.pk})

    assignment.refresh_from_db()
    assert assignment.active is False


def test_the_page_costs_the_same_queries_for_many_topics(client, campaign, topics, organiser, ann, django_assert_max_num_queries):
    client.force_login(organiser)

    def count():
        with CaptureQueriesContext(connection) as captured:
            client.get(page(campaign))
        return len(captured)

    few = count()
    for number in range(20, 32):
        topic = TopicFactory(campaign=campaign, number=str(number))
        PoolEntryFactory(topic=topic)
        person = UserFactory(username=f"u{number}")
        client.post(page(campaign, "assignments_assign"), {"topics": [str(number)], "assessors": [person.username]})
        record_judgment(topic=topic, document=topic.pool_entries.get().document, assessor=person, labels=Labels({"relevance": 2}), phase="main")

    with django_assert_max_num_queries(8):
        client.get(page(campaign))
    assert count() == few


# --- the API ------------------------------------------------------------------------------------------------------


def api(client, campaign, suffix="", **data):
    url = f"/api/campaigns/{campaign.slug}/assignments/{suffix}"
    return client.post(url, data, content_type="application/json") if data or suffix else client.get(url)


def test_the_api_assigns_balances_slices_lists_and_withdraws(client, campaign, topics, organiser, ann):
    UserFactory(username="bea")
    client.force_login(organiser)

    made = api(client, campaign, topics=["2"], assessors=["ann"], phase="main")
    auto = api(client, campaign, "auto/", assessors=["ann", "bea"])
    overlap = api(client, campaign, "overlap/", share=0.5)
    listed = api(client, campaign)

    assert made.status_code == 201 and made.json() == [{"topic": "2", "assessor": "ann", "status": "new", "replaced": []}]
    assert auto.json()["load"] == {"ann": 4, "bea": 5}  # ann keeps 4 documents; 3 and 2 go to bea
    assert overlap.status_code == 201 and {s["topic"] for s in overlap.json()["slices"]} == {"2", "3", "8"}
    rows = listed.json()
    assert {(r["topic"], r["assessor"], r["scope"]) for r in rows if r["scope"] == "full"} == {
        ("2", "ann", "full"), ("3", "bea", "full"), ("8", "bea", "full")
    }
    first = next(r for r in rows if r["topic"] == "2" and r["scope"] == "full")
    gone = api(client, campaign, f"{first['id']}/withdraw/")
    assert gone.status_code == 200 and gone.json()["active"] is False


def test_the_api_refuses_training_to_organisers_and_names_mistakes(client, campaign, training_topic, topics, organiser, ann):
    client.force_login(organiser)

    training = api(client, campaign, topics=["1"], assessors=["ann"], phase="training")
    unknown = api(client, campaign, topics=["2"], assessors=["zed"], phase="main")
    bad_phase = api(client, campaign, topics=["2"], assessors=["ann"], phase="final")

    assert training.status_code == 403
    assert unknown.status_code == 400 and "no active user zed" in unknown.json()["detail"]
    assert bad_phase.status_code == 400 and '"final" is not a valid choice' in bad_phase.json()["phase"][0]  # a field error
    assert not Assignment.objects.filter(assessor=ann).exists()


def test_the_table_filters_by_assessor_and_status_and_sorts_by_pool_size(client, campaign, topics, organiser, ann):
    import re

    client.force_login(organiser)
    client.post(page(campaign, "assignments_assign"), {"topics": ["2", "8"], "assessors": ["ann"], "phase": "main"})

    def shown(**query) -> list[str]:
        html = client.get(page(campaign), query).content.decode()
        return re.findall(r'<span class="topic-no">([^<]+)</span>', html)

    everything = shown()
    assert shown(assessor="ann") == ["2", "8"]
    assert shown(show="assigned") == ["2", "8"]
    assert "2" not in shown(show="unassigned") and len(shown(show="unassigned")) == len(everything) - 2
    sizes = {t.number: t.pool_entries.count() for t in topics}
    by_pool = shown(sort="pool")
    assert [sizes[n] for n in by_pool] == sorted(sizes.values(), reverse=True) and sorted(by_pool) == sorted(everything)
    assert shown(show="nonsense") == everything  # an unknown filter shows everything
