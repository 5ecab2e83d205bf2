"""My work and the judge page, as the assessor sees them."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessments.labels import PRESETS
from assessments.models import Assignment, Campaign, Document, PoolEntry, Topic
from assessments.services.judging import Labels, record_judgment
from tests.factories import AssignmentFactory, CampaignFactory, PoolEntryFactory, TopicFactory

pytestmark = pytest.mark.django_db


def judge(entry, assessor, relevance, note="", flagged=False, **labels):
    record_judgment(topic=entry.topic, document=entry.document, assessor=assessor,
                    labels=Labels({"relevance": relevance, **labels}, note=note, flagged=flagged), phase="training")


def payload(response) -> dict:
    match = re.search(r'<script id="judge-data" type="application/json">(.*?)</script>', response.content.decode(), re.DOTALL)
    return json.loads(match.group(1))


def judge_page(client, assignment, position):
    return client.get(reverse("annotation:judge", args=[assignment.pk, position]))


def test_an_assessor_lands_on_my_work_after_logging_in(client, alice):
    response = client.post(reverse("accounts:login"), {"username": "alice", "password": "correct horse battery staple"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotation:my_work")
    assert "My work" in response.content.decode()


def test_my_work_shows_training_first_with_progress_and_a_resume_button(login, assignment, campaign, pool):
    main_topic = TopicFactory(campaign=campaign, number="7", title="Which is faster, trains or planes?")
    PoolEntryFactory(topic=main_topic)
    AssignmentFactory(topic=main_topic, assessor=assignment.assessor, phase="main")
    judge(pool[0], assignment.assessor, 1)
    client = login(assignment.assessor)
    page = client.get(reverse("annotation:my_work")).content.decode()
    assert page.index("Training") < page.index("Main assessment") < page.index("trains or planes")
    assert re.search(r"1 / 3", page) and re.search(r"0 / 1", page)
    assert f'href="{reverse("annotation:resume", args=[assignment.pk])}">Resume' in page
    # The main topic waits for the main phase (the campaign is in setup); then it can be begun.
    assert ">Start</a>" not in page and "Opens when the main phase starts" in page
    Campaign.objects.filter(pk=campaign.pk).update(phase="main")
    assert ">Start</a>" in client.get(reverse("annotation:my_work")).content.decode()


def test_my_work_counts_only_the_viewers_own_labels(login, assignment, bob_assignment, pool):
    judge(pool[0], bob_assignment.assessor, 2)
    judge(pool[1], bob_assignment.assessor, 2)
    page = login(assignment.assessor).get(reverse("annotation:my_work")).content.decode()
    assert "0 / 3" in page


def test_resume_continues_after_the_last_judged_document(login, assignment, pool):
    judge(pool[0], assignment.assessor, 1)
    response = login(assignment.assessor).get(reverse("annotation:resume", args=[assignment.pk]))
    assert response["Location"] == reverse("annotation:judge", args=[assignment.pk, 2])


def test_the_judge_page_shows_the_topic_the_document_and_the_scheme(login, assignment, pool, campaign):
    Campaign.objects.filter(pk=campaign.pk).update(guidelines="Read the narrative twice.")
    document = pool[1].document
    document.title, document.url = "Cats vs dogs, a fair fight", "https://pets.example/cats-vs-dogs"
    document.save()
    response = judge_page(login(assignment.assessor), assignment, 2)
    page = response.content.decode()
    topic = assignment.topic
    for text in (topic.title, topic.description, topic.narrative, "cats", "dogs", "Read the narrative twice.",
                 "Cats vs dogs, a fair fight", "https://pets.example/cats-vs-dogs", document.doc_id,
                 "Cats are independent; dogs are loyal.", ">2</strong> <span class=\"muted\">of 3<"):
        assert text in page, text
    # Stance buttons show the scheme's names, with the topic's objects beside them; every label comes with its key.
    assert '<span>Pro first object</span><small class="object">cats</small>' in page
    assert '<span>Pro second object</span><small class="object">dogs</small>' in page
    data = payload(response)
    assert [(label["dimension"], label["key"]) for label in data["keys"]["labels"]][:4] == [
        ("relevance", "0"), ("relevance", "1"), ("relevance", "2"), ("quality", "q")]
    # The scheme, once, for the script: titles, kinds and the conditions that say when a dimension is asked.
    assert [(d["name"], d["title"], d["kind"], d.get("condition")) for d in data["scheme"]["dimensions"]] == [
        ("relevance", "Relevance", "graded", None),
        ("quality", "Argument quality", "graded", {"dimension": "relevance", "min": 1}),
        ("stance", "Stance towards the objects", "category", {"dimension": "relevance", "min": 1}),
    ]
    assert "<legend>Argument quality <span class=\"hint\">if relevance ≥ 1</span></legend>" in page
    assert data["saveUrl"] == reverse("work-judgment", args=[assignment.pk, pool[1].pk])
    assert data["terms"]["objects"] == ["cats", "dogs"]


def test_a_document_counts_as_judged_once_every_dimension_its_scheme_asks_has_a_value(login, alice):
    """Touché 2023 Task 2 asks the direction first: a document of the wrong direction is judged without a relevance,
    and one of the asked direction only once it has a relevance too."""
    topic = TopicFactory(campaign=CampaignFactory(preset="touche-2023-task2", phase="main"), compared_objects=[], cause="broccoli", effect="constipation")
    entries = [PoolEntryFactory(topic=topic, order=i) for i in range(4)]
    assignment = AssignmentFactory(topic=topic, assessor=alice)
    for entry, labels in zip(entries, [{"direction": "WRONG"}, {"direction": "CAUSE_EFFECT"},
                                       {"direction": "CAUSE_EFFECT", "relevance": 0}, {}], strict=True):
        record_judgment(topic=topic, document=entry.document, assessor=alice, labels=Labels(labels, flagged=not labels), phase="main")
    client = login(alice)
    data = payload(judge_page(client, assignment, 2))
    assert (data["judgedElsewhere"], data["nextUnjudged"], data["judgment"]["labels"]) == (2, 4, {"direction": "CAUSE_EFFECT"})
    assert "2 / 4" in client.get(reverse("annotation:my_work")).content.decode()
    assert [i["judged"] for i in client.get(reverse("work-queue", args=[assignment.pk])).json()["results"]] == [True, False, True, False]


def test_a_causal_topic_shows_its_cause_and_effect(login, alice, campaign):
    Campaign.objects.filter(pk=campaign.pk).update(phase="main")
    topic = TopicFactory(campaign=campaign, title="Can eating broccoli lead to constipation?", compared_objects=[],
                         cause="broccoli", effect="constipation")
    PoolEntryFactory(topic=topic)
    assignment = AssignmentFactory(topic=topic, assessor=alice)
    page = judge_page(login(alice), assignment, 1).content.decode()
    assert 'title="Cause">broccoli<' in page and 'title="Effect">constipation<' in page


def test_a_document_without_text_says_so_and_names_its_id(login, assignment, pool):
    document = pool[0].document
    document.has_text, document.body = False, ""
    document.save()
    page = judge_page(login(assignment.assessor), assignment, 1).content.decode()
    assert "Text not loaded" in page and f"<code>{document.doc_id}</code>" in page


def test_untrusted_html_and_urls_reach_the_page_inert_under_a_strict_policy(login, assignment, pool):
    document = pool[0].document
    document.is_html = True
    document.body = '<p onmouseover="window.__pwned=1">Dogs</p><script>window.__pwned=1</script><img src=x onerror=alert(1)>'
    document.title = "<script>alert('title')</script>"
    document.url = "javascript:alert(1)"
    document.save()
    response = judge_page(login(assignment.assessor), assignment, 1)
    page = response.content.decode()
    assert "<p>Dogs</p>" in page
    assert "__pwned" not in page and "onerror" not in page and "<img" not in page
    assert "<script>alert('title')</script>" not in page and "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in page
    assert 'href="javascript:' not in page
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "img-src 'self' data:" in csp


def test_the_page_carries_only_the_viewers_own_labels(login, assignment, bob_assignment, pool):
    judge(pool[0], bob_assignment.assessor, 2, quality=2, stance="FIRST", note="bob's view")
    judge(pool[1], assignment.assessor, 1, flagged=True)
    client = login(assignment.assessor)
    first = payload(judge_page(client, assignment, 1))
    assert first["judgment"] is None and "bob's view" not in json.dumps(first)
    # Bob's label on #1 does not count for alice: only her #2 is judged.
    assert (first["judgedElsewhere"], first["nextUnjudged"], first["followingUnjudged"]) == (1, 3, 3)
    second = payload(judge_page(client, assignment, 2))
    assert (second["judgment"]["labels"], second["judgment"]["flagged"]) == ({"relevance": 1}, True)
    assert (second["judgedElsewhere"], second["precedingUnjudged"], second["followingUnjudged"]) == (0, 1, 3)


def test_moving_on_fetches_only_the_document_part_with_its_data(login, assignment, pool):
    judge(pool[1], assignment.assessor, 2, quality=1)
    client = login(assignment.assessor)
    response = client.get(reverse("annotation:judge", args=[assignment.pk, 2]), headers={"HX-Request": "true"})
    part = response.content.decode()
    assert response.status_code == 200 and "<html" not in part and "topic-panel" not in part
    assert part.index('id="judge-data"') < part.index('id="doc-head-main"') < part.index('id="doc-content"')
    assert pool[1].document.title in part and "Cats are independent" in part
    data = payload(response)
    assert (data["position"], data["entry"], data["title"]) == (2, pool[1].pk, "2/3 · Topic 1")
    assert (data["judgment"]["labels"], data["judgment"]["revision"]) == ({"relevance": 2, "quality": 1}, 1)
    assert "script-src 'self'" in response["Content-Security-Policy"]
    # Neither version may come from a cache: the page and its part share the URL, and labels change.
    for answer in (response, judge_page(client, assignment, 2)):
        assert "no-store" in answer["Cache-Control"] and "HX-Request" in answer["Vary"]


@pytest.mark.parametrize("position", [0, 4, 99])
def test_positions_outside_the_queue_are_404(login, assignment, pool, position):
    assert judge_page(login(assignment.assessor), assignment, position).status_code == 404


def test_an_overlap_assignment_pages_through_its_slice_only(login, bob, training_topic, pool):
    Campaign.objects.filter(pk=training_topic.campaign_id).update(phase="main")
    Assignment.objects.filter(assessor=bob).delete()
    overlap = Assignment.objects.create(topic=training_topic, assessor=bob, phase="main", scope="overlap")
    overlap.items.create(entry=pool[2])
    client = login(bob)
    data = payload(judge_page(client, overlap, 1))
    assert (data["entry"], data["total"]) == (pool[2].pk, 1)
    assert judge_page(client, overlap, 2).status_code == 404


def test_the_judge_page_costs_the_same_queries_whatever_the_pool_size(login, assignment, pool, grow_pool, session_cache, django_assert_num_queries):
    client = login(assignment.assessor)
    judge(pool[0], assignment.assessor, 1)
    counts = []
    for extra in (0, 60):
        for entry in grow_pool(extra)[::2]:
            judge(entry, assignment.assessor, 0)
        with CaptureQueriesContext(connection) as captured:
            assert judge_page(client, assignment, 2).status_code == 200
        counts.append(len(captured))
    assert counts[0] == counts[1]
    # The user, the assignment with its topic and campaign, the queue position with its document (the session comes
    # from the cache: tests/foundation/test_sessions.py).
    with django_assert_num_queries(3):
        judge_page(client, assignment, 3)
    # The htmx swap of the document panel reads the same.
    with django_assert_num_queries(3):
        client.get(reverse("annotation:judge", args=[assignment.pk, 3]), headers={"HX-Request": "true"})
    # The user, the assessor's assignments with their progress, the replies to their flags and notes.
    with django_assert_num_queries(3):
        client.get(reverse("annotation:my_work"))


def test_an_edited_topic_scheme_or_guideline_shows_on_the_next_document(login, assignment, pool, campaign, training_topic):
    """The topic panel, label buttons and dialogs are kept rendered between documents (the fragments cache):
    never after the organisers change what they show."""
    client = login(assignment.assessor)
    before = judge_page(client, assignment, 1).content.decode()
    assert 'data-value="FIRST"' in before and "if relevance ≥ 1" in before
    Topic.objects.filter(pk=training_topic.pk).update(title="Which is better, tea or coffee?", narrative="Only mugs count.")
    scheme = PRESETS["touche-2023-task1"][1].to_json()
    for dimension in scheme["dimensions"]:
        dimension.pop("condition", None)  # details asked of every document
    Campaign.objects.filter(pk=campaign.pk).update(guidelines="Read every document twice.", scheme=scheme)
    after = judge_page(client, assignment, 2).content.decode()
    for shown in ("Which is better, tea or coffee?", "Only mugs count.", "Read every document twice.", 'data-value="PRO"'):
        assert shown in after
    assert 'data-value="FIRST"' not in after and "if relevance" not in after
    assert payload(judge_page(client, assignment, 3))["scheme"] == scheme | {"version": 2}
    assert judge_page(client, assignment, 3).content.decode().count("Only mugs count.") == 1


def test_a_closed_campaign_shows_its_labels_read_only(login, assignment, pool, campaign):
    judge(pool[0], assignment.assessor, 2)
    Campaign.objects.filter(pk=campaign.pk).update(phase="closed")
    response = judge_page(login(assignment.assessor), assignment, 1)
    assert "This campaign is closed" in response.content.decode()
    data = payload(response)
    assert data["closed"] == "This campaign is closed: labels can be read but no longer changed."
    assert data["judgment"]["labels"] == {"relevance": 2}


def test_the_page_its_script_and_its_forms_send_one_csrf_token_the_server_takes(alice, assignment, pool):
    """One masked token serves the page's script (its saves), htmx and the logout form."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = judge_page(client, assignment, 1)
    page = response.content.decode()
    token = payload(response)["csrf"]
    assert f'"X-CSRFToken": "{token}"' in page and f'name="csrfmiddlewaretoken" value="{token}"' in page
    save = client.put(payload(response)["saveUrl"], {"labels": {"relevance": 1}}, content_type="application/json", headers={"X-CSRFToken": token})
    assert save.status_code == 200
    assert client.post(reverse("accounts:logout"), {"csrfmiddlewaretoken": token}).status_code == 302


def test_the_next_document_s_part_mints_no_token_and_the_page_s_token_saves_it(alice, assignment, pool):
    """The page's script fetches each next document's part and keeps its first page's token, keys and terms."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    token = payload(judge_page(client, assignment, 1))["csrf"]
    part = client.get(reverse("annotation:judge", args=[assignment.pk, 2]), headers={"HX-Request": "true"})
    data = payload(part)
    assert not {"csrf", "keys", "terms", "scheme"} & set(data) and "csrfmiddlewaretoken" not in part.content.decode()
    save = client.patch(data["saveUrl"], {"labels": {"relevance": 2}}, content_type="application/json", headers={"X-CSRFToken": token})
    assert save.status_code == 200 and save.json()["labels"] == {"relevance": 2}


def test_positions_and_counts_are_never_localised(login, assignment, pool, settings, training_topic):
    """max="1003", not "1,003", which the jump box and the progress bar would not parse."""
    settings.USE_THOUSAND_SEPARATOR = True
    documents = Document.objects.bulk_create(Document(collection_id=pool[0].document.collection_id, doc_id=f"more-{i}") for i in range(1000))
    PoolEntry.objects.bulk_create(PoolEntry(topic=training_topic, document=d, order=100 + i) for i, d in enumerate(documents))
    page = judge_page(login(assignment.assessor), assignment, 1).content.decode()
    total = len(pool) + 1000
    assert f'max="{total}"' in page and f"of {total}</span>" in page
    assert f"{total:,}" not in page
