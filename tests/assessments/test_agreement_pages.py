"""The admin's agreement dashboard, the disagreements and the training-phase buttons, seen by each role."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessments.labels import PRESETS
from assessments.models import Assignment
from assessments.selectors.agreement import requested_scope
from assessments.services.judging import Labels, record_judgment
from tests.factories import AssignmentFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

ALICE = [0, 0, 1, 1, 2, 2, 2, 0, 1, 2]
BOB = [0, 1, 1, 1, 2, 1, 2, 0, 0, 2]


def given(**labels):
    """The labels that have a value (None and "" stand for a dimension left without one)."""
    return {name: value for name, value in labels.items() if value not in (None, "")}


def judge(entry, assessor, relevance, quality=None, stance=""):
    return record_judgment(
        topic=entry.topic, document=entry.document, assessor=assessor,
        labels=Labels(given(relevance=relevance, quality=quality, stance=stance)), phase="training", time_spent_ms=12_000,
    )


@pytest.fixture
def judged(training_topic, alice, bob):
    """alice and bob's training labels on ten documents (their kappa is 37/67, weighted 29/44)."""
    entries = [PoolEntryFactory(topic=training_topic, order=i) for i in range(10)]
    for entry, a, b in zip(entries, ALICE, BOB):
        judge(entry, alice, a, 1 if a else None, "FIRST" if a else "")
        judge(entry, bob, b, 1 if b else None, "SECOND" if b else "")
    return entries


def pages(slug, document_id):
    return [
        reverse("assessments:agreement", args=[slug]),
        reverse("assessments:disagreements", args=[slug]),
        reverse("assessments:agreement_document", args=[slug, document_id]),
    ]


@pytest.mark.parametrize("who", ["alice", "organiser", "mallory"])
def test_only_admins_see_agreement_and_disagreements(client, request, campaign, judged, who):
    client.force_login(request.getfixturevalue(who))
    for url in pages(campaign.slug, judged[0].document_id):
        response = client.get(url)
        # A document alone (no one's labels) is for every organiser of its campaign: the discussion links to it.
        readable = who == "organiser" and "/documents/" in url
        assert response.status_code == (200 if readable else 404), url
        assert b"SECOND" not in response.content
    assert client.post(reverse("assessments:agreement_phase", args=[campaign.slug]), {"step": "main", "confirm": "main"}).status_code == 404


def test_a_training_assessor_never_sees_another_assessors_labels_on_these_pages(client, campaign, judged, alice):
    """Blindness: every page of this issue answers an assessor with 404, and bob's labels appear nowhere."""
    client.force_login(alice)
    urls = [
        *pages(campaign.slug, judged[0].document_id),
        reverse("assessments:assignments", args=[campaign.slug]),
        f"/api/campaigns/{campaign.slug}/assignments/",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code in (403, 404), url
        assert b"bob" not in response.content and b"SECOND" not in response.content


def test_the_dashboard_shows_kappa_alpha_and_the_pair(client, campaign, judged, admin_user):
    client.force_login(admin_user)

    response = client.get(reverse("assessments:agreement", args=[campaign.slug]))

    assert response.status_code == 200
    html = response.content.decode()
    assert "0.66" in html  # alice – bob linearly weighted kappa 29/44 in the heatmap
    assert 'title="alice – bob: 0.659 over 10 documents"' in html
    relevance = response.context["board"].agreement.dimensions["relevance"]
    assert relevance.report.cohen[0].unweighted == pytest.approx(37 / 67)
    assert "<svg" in html and "Documents judged, over time" in html


def test_the_dashboard_of_a_campaign_without_judgments_says_so(client, campaign, admin_user):
    client.force_login(admin_user)

    response = client.get(reverse("assessments:agreement", args=[campaign.slug]), {"phase": "main"})

    assert response.status_code == 200
    assert "No document in this scope has been judged by two or more assessors yet" in response.content.decode()


def test_the_dashboard_highlights_assessors_below_the_pass_mark(client, campaign, training_topic, judged, admin_user):
    carol = UserFactory(username="carol")
    AssignmentFactory(topic=training_topic, assessor=carol, phase="training")
    for entry, c in zip(judged, [1, 0, 2, 1, 0, 1, 2, 2, 0, 1]):  # chance-level agreement with alice and bob
        judge(entry, carol, c)
    client.force_login(admin_user)

    response = client.get(reverse("assessments:agreement", args=[campaign.slug]))

    assert "carol" in response.context["flagged"]
    assert "Below the pass mark" in response.content.decode()


def scenario(campaign, n_assessors, numbers):
    """Training topics ``numbers``, three documents each, every one of ``n_assessors`` people labelling all of them."""
    people = [UserFactory(username=f"p{i}") for i in range(n_assessors)]
    for number in numbers:
        topic = TopicFactory(campaign=campaign, number=str(number), is_training=True)
        entries = [PoolEntryFactory(topic=topic, order=i) for i in range(3)]
        for i, person in enumerate(people):
            AssignmentFactory(topic=topic, assessor=person, phase="training")
            for j, entry in enumerate(entries):
                record_judgment(
                    topic=topic, document=entry.document, assessor=person, phase="training", time_spent_ms=5000,
                    labels=Labels({"relevance": (i + j) % 3, "quality": (i * j) % 3, "stance": ["FIRST", "NO"][(i + j) % 2]}),
                )


def queries_for(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.parametrize("url_name", ["assessments:agreement", "assessments:disagreements"])
def test_the_pages_cost_a_fixed_handful_of_queries(client, campaign, admin_user, django_assert_max_num_queries, url_name):
    client.force_login(admin_user)
    url = reverse(url_name, args=[campaign.slug])
    scenario(campaign, 2, [100])
    few = queries_for(client, url)
    scenario(campaign, 7, [101, 102, 103])  # more assessors, topics, pairs and hours: not one query more

    with django_assert_max_num_queries(13):  # 13th: the span of the activity, which sets its time buckets
        assert client.get(url).status_code == 200
    assert queries_for(client, url) == few


def test_disagreements_are_listed_furthest_apart_first(client, campaign, judged, admin_user):
    client.force_login(admin_user)

    response = client.get(reverse("assessments:disagreements", args=[campaign.slug]), {"order": "relevance"})

    html = response.content.decode()
    # Relevance differs on documents 2 (0 vs 1), 6 (2 vs 1) and 9 (1 vs 0): all half the scale apart, so they keep
    # document order. Nothing else differs on relevance, but the stances differ wherever both gave one.
    listed = [row.document_id for row in response.context["found"].page.object_list]
    assert listed[:3] == [judged[1].document_id, judged[5].document_id, judged[8].document_id]
    positions = [html.index(judged[i].document.doc_id) for i in (1, 5, 8)]
    assert positions == sorted(positions)
    assert reverse("assessments:agreement_document", args=[campaign.slug, judged[1].document_id]) in html


def test_the_pages_follow_the_campaigns_scheme(client, campaign, training_topic, alice, bob, admin_user):
    """Touché 2023 Task 2: every dimension by its title on the dashboard, as a sort order and as labels."""
    campaign.preset, campaign.scheme = "touche-2023-task2", PRESETS["touche-2023-task2"][1].to_json()
    campaign.save()
    entries = [PoolEntryFactory(topic=training_topic, order=i) for i in range(2)]
    for entry in entries:
        record_judgment(topic=training_topic, document=entry.document, assessor=alice, phase="training", labels=Labels({"direction": "WRONG"}))
        record_judgment(
            topic=training_topic, document=entry.document, assessor=bob, phase="training",
            labels=Labels({"direction": "CAUSE_EFFECT", "relevance": 1, "evidence": "STRONGER"}),
        )
    client.force_login(admin_user)

    dashboard = client.get(reverse("assessments:agreement", args=[campaign.slug])).content.decode()
    listing = client.get(reverse("assessments:disagreements", args=[campaign.slug]), {"order": "evidence"})

    for title in ("Direction of causality", "Relevance", "Evidence", "Causal stance"):
        assert f"<h2>{title} <small" in dashboard
    html = listing.content.decode()
    assert listing.context["order"] == "evidence" and '<option value="evidence" selected>Evidence</option>' in html
    stronger = PRESETS["touche-2023-task2"][1].dimension("evidence").name_of("STRONGER")
    assert f'<span class="lab stance" title="Evidence: {stronger}">{stronger}</span>' in html  # a category by its name
    assert '<span class="lab none" title="Relevance: not given">R–</span>' in html


def test_a_bad_sort_falls_back_with_a_message(client, campaign, judged, admin_user):
    client.force_login(admin_user)

    response = client.get(reverse("assessments:disagreements", args=[campaign.slug]), {"order": "colour"})

    assert response.status_code == 200 and response.context["order"] == "total"
    assert "cannot sort by &#x27;colour&#x27;" in response.content.decode()


def test_the_document_page_shows_sanitised_text_under_a_strict_policy(client, campaign, training_topic, admin_user):
    entry = PoolEntryFactory(
        topic=training_topic, document__is_html=True,
        document__body='<p onclick="steal()">Cats <b>purr</b></p><script>alert(1)</script><img src="http://x/y.png">',
    )
    client.force_login(admin_user)

    response = client.get(reverse("assessments:agreement_document", args=[campaign.slug, entry.document_id]))

    html = response.content.decode()
    assert "Cats <b>purr</b>" in html
    assert "alert(1)" not in html and "onclick" not in html and "http://x/y.png" not in html
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_a_document_of_another_collection_is_not_found(client, campaign, mallory, admin_user):
    other = Assignment.objects.get(assessor=mallory).topic
    entry = PoolEntryFactory(topic=other)
    client.force_login(admin_user)

    assert client.get(reverse("assessments:agreement_document", args=[campaign.slug, entry.document_id])).status_code == 404


def test_the_admin_runs_training_rounds_then_starts_the_main_phase(client, campaign, training_topic, alice, admin_user):
    client.force_login(admin_user)
    url = reverse("assessments:agreement_phase", args=[campaign.slug])

    client.post(url, {"step": "start_training"})
    campaign.refresh_from_db()
    assert (campaign.phase, campaign.training_round) == ("training", 1)

    client.post(url, {"step": "next_round"})
    campaign.refresh_from_db()
    assert campaign.training_round == 2
    assert not Assignment.objects.get(topic=training_topic, assessor=alice).active

    response = client.post(url, {"step": "main", "confirm": "main"}, follow=True)
    campaign.refresh_from_db()
    assert campaign.phase == "main"
    assert "Training round 2 closed; the main phase has started" in response.content.decode()


def test_starting_the_main_phase_takes_a_confirmation(client, campaign, training_topic, alice, admin_user):
    client.force_login(admin_user)
    url = reverse("assessments:agreement_phase", args=[campaign.slug])
    client.post(url, {"step": "start_training"})
    page = client.get(reverse("assessments:agreement", args=[campaign.slug])).content.decode()
    assert "Yes, start the main phase" in page and 'name="confirm" value="main"' in page

    response = client.post(url, {"step": "main"}, follow=True)  # one click on an old form, or a forged one
    campaign.refresh_from_db()
    assert campaign.phase == "training" and "confirm it on the agreement page" in response.content.decode()


def test_a_step_that_does_not_fit_the_phase_says_why(client, campaign, admin_user):
    client.force_login(admin_user)

    response = client.post(reverse("assessments:agreement_phase", args=[campaign.slug]), {"step": "main", "confirm": "main"}, follow=True)

    assert "is not in training" in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.phase == "setup"


@pytest.mark.parametrize(
    ("query", "phase", "round_", "topic", "problem"),
    [
        ({}, "training", None, None, ""),  # a campaign in setup looks at training
        ({"phase": "training", "round": "2", "topic": "7"}, "training", 2, "7", ""),
        ({"phase": "main", "round": "2"}, "main", None, None, ""),  # a round kept by a link is read only in training
        ({"phase": "training", "round": "two"}, "training", None, None, ""),
        ({"phase": "later", "topic": "7"}, "training", None, None, "unknown phase 'later': expected training, main or all"),
    ],
)
def test_the_scope_a_page_asks_for_or_the_default_with_the_reason(campaign, query, phase, round_, topic, problem):
    scope, said = requested_scope(campaign, query)
    assert (scope.phase, scope.round, scope.topic, said) == (phase, round_, topic, problem)


def test_the_adjudication_page_falls_back_to_the_default_scope_with_a_message(client, campaign, judged, admin_user):
    client.force_login(admin_user)
    url = reverse("assessments:adjudicate", args=[campaign.slug, judged[1].topic.number, judged[1].document_id])
    text = client.get(url, {"phase": "later"}).content.decode()
    assert "unknown phase &#x27;later&#x27;" in text and "phase=training" in text
