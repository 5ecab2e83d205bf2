"""The discussion: the campaign's flags and notes by topic, filtered, with replies; the assessor reads a reply on
that document's judge page, in training only once the round is closed. Replies are never rewritten (the database
refuses, migration 0016)."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from assessments.models import Assignment, Campaign, Reply
from assessments.services import assignments, campaigns
from assessments.services.discussion import reply
from assessments.services.judging import Labels, record_judgment

pytestmark = pytest.mark.django_db


@pytest.fixture
def noted(campaign, alice, bob, pool):
    """alice flags the first training document; bob leaves a note on the second; alice judges the third plainly."""
    topic = pool[0].topic
    a = record_judgment(topic=topic, document=pool[0].document, assessor=alice, labels=Labels({"relevance": 2}, flagged=True), phase="training")
    b = record_judgment(topic=topic, document=pool[1].document, assessor=bob, labels=Labels({"relevance": 0}, note="is this spam?"), phase="training")
    record_judgment(topic=topic, document=pool[2].document, assessor=alice, labels=Labels({"relevance": 1}), phase="training")
    return a, b


def page(client, campaign, **filters):
    return client.get(reverse("assessments:discussion", args=[campaign.slug]), filters).content.decode()


def test_the_page_lists_every_flag_and_note_by_topic_and_filters_them(client, organiser, campaign, noted, pool):
    client.force_login(organiser)
    text = page(client, campaign)
    assert f'id="judgment-{noted[0].pk}"' in text and f'id="judgment-{noted[1].pk}"' in text and "is this spam?" in text
    assert pool[2].document.doc_id not in text  # neither flagged nor noted
    assert "labels hidden" in text  # olivia sees flags and notes, not one assessor's training labels
    assert f'id="judgment-{noted[1].pk}"' not in page(client, campaign, assessor="alice")
    assert f'id="judgment-{noted[0].pk}"' not in page(client, campaign, phase="main")
    client.post(reverse("assessments:discussion_reply", args=[campaign.slug, noted[1].pk]), {"text": "Spam is 0, yes.", "resolves": "1"})
    resolved = page(client, campaign, status="resolved")
    assert f'id="judgment-{noted[1].pk}"' in resolved and f'id="judgment-{noted[0].pk}"' not in resolved and "Spam is 0, yes." in resolved
    assert f'id="judgment-{noted[1].pk}"' not in page(client, campaign, status="open")


def test_admins_see_the_training_labels_too(client, admin_user, campaign, noted):
    client.force_login(admin_user)
    assert "labels hidden" not in page(client, campaign) and 'class="lab rel r-2"' in page(client, campaign)


def test_labels_show_by_the_schemes_names(client, admin_user, campaign, pool, alice):
    """Every dimension the judgment has, in the scheme's order, titled with the dimension's title and the value's name."""
    record_judgment(
        topic=pool[0].topic, document=pool[0].document, assessor=alice, phase="training",
        labels=Labels({"stance": "SECOND", "relevance": 1, "quality": 2}, note="which object?"),
    )
    client.force_login(admin_user)
    text = page(client, campaign)
    scheme = campaign.label_scheme

    def name(dimension, value):
        return f"{scheme.dimension(dimension).title}: {scheme.dimension(dimension).name_of(value)}"

    relevance = text.index(f'<span class="lab rel r-1" title="{name("relevance", 1)}">R1</span>')
    quality = text.index(f'<span class="lab" title="{name("quality", 2)}">Q2</span>')
    stance = text.index(f'<span class="lab stance" title="{name("stance", "SECOND")}">Pro second object</span>')  # the name
    assert relevance < quality < stance and name("quality", 2) == "Argument quality: High quality"


@pytest.mark.parametrize(("who", "status"), [("olivia", 200), ("ada", 200), ("oscar", 404), ("alice", 404)])
def test_only_the_campaigns_organisers_read_and_reply(client, cast, campaign, noted, who, status):
    client.force_login(cast[who])
    assert client.get(reverse("assessments:discussion", args=[campaign.slug])).status_code == status
    client.post(reverse("assessments:discussion_reply", args=[campaign.slug, noted[0].pk]), {"text": "hello"})
    assert Reply.objects.exists() is (status == 200)


def test_a_judgment_without_flag_or_note_has_no_discussion(client, organiser, campaign, noted, pool, alice):
    plain = alice.judgments.get(document=pool[2].document)
    client.force_login(organiser)
    assert client.post(reverse("assessments:discussion_reply", args=[campaign.slug, plain.pk]), {"text": "hm"}).status_code == 404


def test_training_replies_reach_the_assessor_only_once_the_round_is_closed(client, organiser, admin_user, campaign, noted, alice, pool):
    campaigns.advance_phase(campaign=campaign, to="training", by=admin_user)
    client.force_login(organiser)
    client.post(reverse("assessments:discussion_reply", args=[campaign.slug, noted[0].pk]), {"text": "Why unsure? It compares both."})
    assignment = Assignment.objects.get(assessor=alice)
    client.force_login(alice)
    judge_page = reverse("annotation:judge", args=[assignment.pk, 1])
    assert "Why unsure?" not in client.get(reverse("annotation:my_work")).content.decode()
    first = client.get(reverse("annotation:document", args=[assignment.pk, noted[0].document_id]))
    assert "Why unsure?" not in client.get(first["Location"]).content.decode()

    assignments.close_training_round(campaign=campaign, then="next_round", by=admin_user)
    work = client.get(reverse("annotation:my_work")).content.decode()
    assert "Why unsure?" in work
    opened = client.get(reverse("annotation:document", args=[assignment.pk, noted[0].document_id]))
    shown = client.get(opened["Location"]).content.decode()
    assert "Why unsure? It compares both." in shown and "This training round is closed" in shown
    assert '"closed": "This training round is closed' in shown  # the page takes no labels, and says why
    save = client.put(reverse("work-judgment", args=[assignment.pk, pool[0].pk]), {"labels": {"relevance": 0}}, content_type="application/json")
    assert save.status_code == 404  # nor does the API
    assert client.get(judge_page).status_code == 200


def test_main_phase_replies_show_at_once_and_another_assessor_never_sees_them(client, organiser, campaign, pool, bob, mallory):
    topic = pool[0].topic
    Assignment.objects.filter(assessor=bob).update(phase="main")
    judgment = record_judgment(topic=topic, document=pool[0].document, assessor=bob, labels=Labels({"relevance": 1}, note="odd page"), phase="main")
    client.force_login(organiser)
    client.post(reverse("assessments:discussion_reply", args=[campaign.slug, judgment.pk]), {"text": "Judge the text only."})
    client.force_login(bob)
    assert "Judge the text only." in client.get(reverse("annotation:my_work")).content.decode()
    client.force_login(mallory)
    assert "Judge the text only." not in client.get(reverse("annotation:my_work")).content.decode()


def test_a_thread_stays_for_both_sides_once_the_assessor_takes_the_flag_and_note_away(client, organiser, campaign, pool, bob):
    topic, document = pool[0].topic, pool[0].document
    assignment = Assignment.objects.get(assessor=bob)
    Assignment.objects.filter(pk=assignment.pk).update(phase="main")
    Campaign.objects.filter(pk=campaign.pk).update(phase="main")  # main-phase topics open with the main phase
    judgment = record_judgment(topic=topic, document=document, assessor=bob, labels=Labels({"relevance": 1}, flagged=True, note="spam?"), phase="main")
    client.force_login(organiser)
    client.post(reverse("assessments:discussion_reply", args=[campaign.slug, judgment.pk]), {"text": "Not spam: judge it.", "resolves": "1"})

    record_judgment(topic=topic, document=document, assessor=bob, labels=Labels({"relevance": 2}), phase="main")  # settled

    listed = page(client, campaign)
    assert f'id="judgment-{judgment.pk}"' in listed and "Not spam: judge it." in listed
    assert f'id="judgment-{judgment.pk}"' in page(client, campaign, status="resolved")
    client.post(reverse("assessments:discussion_reply", args=[campaign.slug, judgment.pk]), {"text": "One more thing."})
    assert Reply.objects.filter(judgment=judgment).count() == 2
    client.force_login(bob)
    opened = client.get(reverse("annotation:document", args=[assignment.pk, document.pk]))
    shown = client.get(opened["Location"]).content.decode()
    assert "Not spam: judge it." in shown and "One more thing." in shown


@pytest.fixture
def cast(organiser, oscar, admin_user, alice):
    return {"olivia": organiser, "oscar": oscar, "ada": admin_user, "alice": alice}


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE assessments_reply SET text = 'I never said that'",
        "UPDATE assessments_reply SET resolves = NOT resolves",
        "DELETE FROM assessments_reply",
        "TRUNCATE assessments_reply",
        "TRUNCATE assessments_reply CASCADE",
    ],
)
def test_the_database_refuses_to_rewrite_a_reply(campaign, organiser, noted, statement):
    reply(judgment=noted[0], text="It compares both: 2.", resolves=True, by=organiser)
    before = list(Reply.objects.values_list("text", "resolves"))
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # TRUNCATE will not run while key checks are pending
    with pytest.raises(DatabaseError, match="discussion replies are append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    assert list(Reply.objects.values_list("text", "resolves")) == before == [("It compares both: 2.", True)]


def test_a_reply_is_corrected_by_another_reply_not_edited(campaign, organiser, noted):
    first = reply(judgment=noted[0], text="Relevant.", resolves=True, by=organiser)
    first.text = "Not relevant."
    with pytest.raises(DatabaseError), transaction.atomic():
        first.save()
    with pytest.raises(DatabaseError), transaction.atomic():
        first.delete()
    reply(judgment=noted[0], text="Correction: not relevant after all.", resolves=True, by=organiser)
    assert list(noted[0].replies.order_by("id").values_list("text", flat=True)) == ["Relevant.", "Correction: not relevant after all."]


def test_a_row_links_to_its_document_which_every_organiser_of_the_campaign_may_read(client, organiser, campaign, noted, pool, mallory):
    client.force_login(organiser)
    link = reverse("assessments:agreement_document", args=[campaign.slug, pool[1].document_id])
    assert f'href="{link}"' in page(client, campaign)
    shown = client.get(link)
    assert shown.status_code == 200 and pool[1].document.doc_id in shown.content.decode()
    assert "is this spam?" not in shown.content.decode()  # the document, not anyone's labels or notes
    client.force_login(mallory)
    assert client.get(link).status_code == 404
