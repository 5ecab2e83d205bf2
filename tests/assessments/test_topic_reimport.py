"""Safe topic re-imports: a topic with judgments never changes silently. A file that would change one is refused
with each change listed, and changes nothing; confirmed (--allow-changes or the API flag for any change, the
page's or the API's confirmation of the refused job for exactly the changes it listed) it applies them and
records each in the timeline. New, unchanged and unjudged topics import as before."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import Role
from assessments.models import AuditEvent, Job, Topic
from assessments.services.judging import Labels, record_judgment
from tests.factories import CampaignFactory, DocumentFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

FIRST = """<topics>
<topic><number>1</number><title>Cats or dogs?</title><narrative>Compare them.</narrative></topic>
<topic><number>2</number><title>Tea or coffee?</title></topic>
</topics>"""
# Topic 1's title and narrative change (it is judged below); topic 2 moves and changes (nobody judged it); 3 is new.
SECOND = """<topics>
<topic><number>3</number><title>Trains or planes?</title></topic>
<topic><number>1</number><title>Cats or dogs as pets?</title><narrative>Compare them as pets.</narrative></topic>
<topic><number>2</number><title>Tea or coffee in the morning?</title></topic>
</topics>"""


@pytest.fixture
def judged(db, write_file, command, alice, upload_root):
    """Topics 1 and 2 imported from FIRST, and a judgment on topic 1."""
    campaign = CampaignFactory(slug="reimport")
    assert command("import_topics", campaign.slug, write_file("first.xml", FIRST)).code == 0
    topic = campaign.topics.get(number="1")
    record_judgment(topic=topic, document=DocumentFactory(collection=campaign.collection), assessor=alice,
                    labels=Labels({"relevance": 2}), phase="main")
    return campaign


@pytest.fixture
def organiser_of(db):
    """organiser_of(campaign): olivia, an organiser who runs that campaign."""
    def run(campaign):
        user = UserFactory(username="olivia", role=Role.ORGANISER)
        MembershipFactory(campaign=campaign, user=user) if not campaign.memberships.filter(user=user).exists() else None
        return user
    return run


def topics(campaign):
    return list(campaign.topics.order_by("number").values_list("number", "title", "narrative", "position"))


def test_a_reimport_that_would_change_a_judged_topic_is_refused_and_changes_nothing(judged, write_file, command):
    before, events = topics(judged), AuditEvent.objects.count()
    path = write_file("second.xml", SECOND)
    result = command("import_topics", judged.slug, path)
    assert result.code == 1
    assert result.err.splitlines() == [
        f"error: {path}: 1 judged topic would change; nothing was imported. Import again with the changes allowed "
        "(--allow-changes, or confirm on the page) to apply them:",
        "  topic 1 (1 judgment): title 'Cats or dogs?' → 'Cats or dogs as pets?'; narrative 'Compare them.' → 'Compare them as pets.'",
    ]
    assert topics(judged) == before and AuditEvent.objects.count() == events


def test_a_confirmed_reimport_applies_the_changes_and_records_each_in_the_timeline(judged, write_file, command):
    path = write_file("second.xml", SECOND)
    result = command("import_topics", judged.slug, path, "--allow-changes")
    assert result.code == 0, result.err
    assert result.out.strip() == f"{path}: 3 topics (1 new, 2 updated, 0 unchanged)"
    assert topics(judged) == [
        ("1", "Cats or dogs as pets?", "Compare them as pets.", 1),
        ("2", "Tea or coffee in the morning?", "", 2),
        ("3", "Trains or planes?", "", 0),
    ]
    (event,) = AuditEvent.objects.filter(action="topic.changed")
    assert (event.subject, event.before, event.after, event.details["judgments"]) == (
        "topic 1",
        {"title": "Cats or dogs?", "narrative": "Compare them."},
        {"title": "Cats or dogs as pets?", "narrative": "Compare them as pets."},
        1,
    )
    assert "topic 1 (1 judgment)" in result.err  # and a warning to check the judgments


def test_new_unchanged_and_unjudged_topics_import_as_before(judged, write_file, command):
    same_text_new_order = FIRST.replace("<topic><number>1</number>", "<topic><number>0</number><title>New</title></topic>\n<topic><number>1</number>")
    result = command("import_topics", judged.slug, write_file("again.xml", same_text_new_order))
    assert result.code == 0, result.err  # topic 1 moved in the file but says the same: no confirmation needed
    unjudged = FIRST.replace("Tea or coffee?", "Tea or coffee, really?")
    assert command("import_topics", judged.slug, write_file("unjudged.xml", unjudged)).code == 0
    assert judged.topics.get(number="2").title == "Tea or coffee, really?"
    assert not AuditEvent.objects.filter(action="topic.changed").exists()


def test_the_page_confirms_exactly_the_refused_files_changes(client, judged, organiser_of, django_capture_on_commit_callbacks):
    olivia = organiser_of(judged)
    client.force_login(olivia)
    url = reverse("assessments:import_upload", args=[judged.slug, "topics"])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"topics-file": SimpleUploadedFile("second.xml", SECOND.encode())})
    job = Job.objects.get()
    assert job.status == "failed" and job.result["confirm"] == "allow_changes" and job.can_confirm and not job.can_retry
    block = client.get(reverse("assessments:job", args=[judged.slug, job.pk])).content.decode()
    confirm = reverse("assessments:job_confirm", args=[judged.slug, job.pk])
    assert "topic 1 (1 judgment): title" in block and f'action="{confirm}"' in block and 'type="file"' not in block
    assert f'name="digest" value="{job.result["digest"]}"' in block
    assert judged.topics.get(number="1").title == "Cats or dogs?"
    # An upload cannot carry the confirmation: a different file's changes would apply without being listed.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"topics-file": SimpleUploadedFile("third.xml", SECOND.replace("as pets", "as wild animals").encode()), "topics-allow_changes": "on"})
    assert Job.objects.get(pk__gt=job.pk).status == "failed" and judged.topics.get(number="1").title == "Cats or dogs?"

    # A confirmation of another list than the job's (a stale page) applies nothing.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(confirm, {"digest": "0" * 64})
    assert Job.objects.get(pk=job.pk).status == "failed" and judged.topics.get(number="1").title == "Cats or dogs?"

    with django_capture_on_commit_callbacks(execute=True):
        client.post(confirm, {"digest": job.result["digest"]})

    job.refresh_from_db()
    assert (job.status, job.attempts) == ("succeeded", 2) and not job.upload_folder.exists()
    assert judged.topics.get(number="1").title == "Cats or dogs as pets?"
    assert AuditEvent.objects.get(action="topic.changed").actor == olivia


def test_a_confirmation_applies_nothing_when_the_listed_changes_no_longer_hold(judged, organiser_of, write_file, command, django_capture_on_commit_callbacks):
    """Between the refusal and the confirmation, topic 1 was changed another way: the confirmed file would now
    change other values than those listed, so it is refused again, listing what it would change now. A second
    click on the first list (someone who had not reloaded) is refused with 409 and runs nothing: that new list was
    not seen."""
    api = APIClient()
    api.force_authenticate(organiser_of(judged))
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(reverse("api-topics", args=[judged.slug]), {"file": SimpleUploadedFile("second.xml", SECOND.encode())})
    refused = Job.objects.get(pk=response.json()["id"])
    assert api.get(reverse("api-job", args=[refused.pk])).json()["can_confirm"] and refused.errors[1].startswith("topic 1 (1 judgment): title 'Cats or dogs?'")
    meanwhile = SECOND.replace("Cats or dogs as pets?", "Cats or dogs, meanwhile?")
    assert command("import_topics", judged.slug, write_file("meanwhile.xml", meanwhile), "--allow-changes").code == 0

    first_list = refused.result["digest"]
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(reverse("api-job-confirm", args=[refused.pk]), {"digest": first_list})

    assert answer.status_code == 202
    refused.refresh_from_db()
    assert refused.status == "failed" and "changed since the changes were confirmed" in refused.errors[0]
    assert refused.errors[1].startswith("topic 1 (1 judgment): title 'Cats or dogs, meanwhile?' → 'Cats or dogs as pets?'")
    assert judged.topics.get(number="1").title == "Cats or dogs, meanwhile?"
    with django_capture_on_commit_callbacks(execute=True):
        late = api.post(reverse("api-job-confirm", args=[refused.pk]), {"digest": first_list})
    assert late.status_code == 409 and "other changes than those confirmed" in late.json()["detail"]
    assert Job.objects.get(pk=refused.pk).attempts == refused.attempts and judged.topics.get(number="1").title == "Cats or dogs, meanwhile?"
    assert api.post(reverse("api-job-confirm", args=[refused.pk]), {}).status_code == 400  # a confirmation names its list
    # Confirmed again, now for the changes listed now, it applies them.
    with django_capture_on_commit_callbacks(execute=True):
        api.post(reverse("api-job-confirm", args=[refused.pk]), {"digest": refused.result["digest"]})
    assert Job.objects.get(pk=refused.pk).status == "succeeded" and judged.topics.get(number="1").title == "Cats or dogs as pets?"


def test_the_api_confirms_a_refused_job_retries_none_and_still_takes_a_flag(judged, organiser_of, django_capture_on_commit_callbacks):
    api = APIClient()
    api.force_authenticate(organiser_of(judged))
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(reverse("api-topics", args=[judged.slug]), {"file": SimpleUploadedFile("second.xml", SECOND.encode())})
    refused, digest = response.json()["id"], {"digest": Job.objects.get(pk=response.json()["id"]).result["digest"]}
    assert api.post(reverse("api-job-retry", args=[refused])).status_code == 409  # it would be refused the same way
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(reverse("api-job-confirm", args=[refused]), digest)
    assert answer.status_code == 202 and Job.objects.get(pk=refused).status == "succeeded"
    assert api.post(reverse("api-job-confirm", args=[refused]), digest).status_code == 409  # nothing left to confirm
    assert Topic.objects.get(campaign=judged, number="1").title == "Cats or dogs as pets?"

    # A script that means any change says so up front (like --allow-changes).
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(reverse("api-topics", args=[judged.slug]), {
            "file": SimpleUploadedFile("first.xml", FIRST.encode()), "allow_changes": True,
        })
    assert Job.objects.get(pk=response.json()["id"]).status == "succeeded"
    assert Topic.objects.get(campaign=judged, number="1").title == "Cats or dogs?"