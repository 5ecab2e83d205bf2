"""A classification campaign (Touché 2023 Task 4, CoFE) from the command line: the lab's toy comments imported as
items beside their proposals, the truth's labels as an import source's prior labels, and bad files refused whole
with file and line."""

import pytest

from accounts.models import User
from assessments.models import Campaign, Document, Judgment, PoolEntry, Run, Topic

pytestmark = pytest.mark.django_db


@pytest.fixture
def cofe(db, command) -> Campaign:
    made = command("create_campaign", "cofe23", "--name", "CoFE stance", "--preset", "touche-2023-task4")
    assert "created classification campaign cofe23" in made.out
    return Campaign.objects.get(slug="cofe23")


PROPOSALS = (
    "id\ttitle\tproposal\tproposal_en\ttitle_en\tTopic\tlan\tendorsements\n"
    "238\tFrontex stärken\tDie Grenzschutzagentur braucht mehr Mittel.\tThe border agency needs more funds.\t"
    "Strengthen Frontex\tMigration\tde\t12\n"
)


def test_the_toy_comments_become_items_under_their_proposals_and_the_truth_prior_labels(cofe, command, touche_data, tmp_path):
    toy = touche_data / "2023-task4-toy"
    (tmp_path / "proposals.tsv").write_text(PROPOSALS, encoding="utf-8")

    out = command("import_items", "cofe23", toy / "toy-input" / "data.tsv", "--proposals", tmp_path / "proposals.tsv").out

    assert "10 comments on 2 proposals (de 6, en 2, es 1, fr 1): 10 new" in out
    documents = Document.objects.filter(collection=cofe.collection)
    assert documents.count() == 10 and PoolEntry.objects.filter(topic__campaign=cofe).count() == 10
    french = documents.get(doc_id="comment_39734")
    assert french.metadata["language"] == "fr" and french.body.startswith("Bon , se n'est pas") and "\n\n" in french.body
    assert not french.is_html
    proposal = Topic.objects.get(campaign=cofe, number="238")
    assert (proposal.title, proposal.metadata["title_en"], proposal.metadata["language"]) == (
        "Frontex stärken", "Strengthen Frontex", "de")
    assert PoolEntry.objects.get(document=french).topic == proposal
    assert not Judgment.objects.exists()

    # The truth: the same comments with labels, kept as the source's prior labels; the items do not change.
    out = command("import_items", "cofe23", toy / "toy-truth" / "data.tsv", "--assessor", "cofe-truth").out

    assert "0 new, 0 changed, 0 newly given" in out and "10 prior labels as cofe-truth" in out
    truth = {j.document.doc_id: j.labels["stance"] for j in Judgment.objects.select_related("document")}
    assert truth["comment_886"] == "In favor" and len(truth) == 10
    assert set(truth.values()) <= {"In favor", "Against", "Other"}
    assert User.objects.get(username="cofe-truth").is_source
    # Again: nothing changes.
    out = command("import_items", "cofe23", toy / "toy-truth" / "data.tsv", "--assessor", "cofe-truth").out
    assert "(0 new or changed)" in out


@pytest.mark.parametrize("change, error", [
    (lambda text: text.replace("\ten\t", "\txx\t", 1), "data.tsv:2: comment comment_886: unknown language code 'xx'"),
    (lambda text: text.replace("+02:00\tIn favor", "+02:00\tNeutral", 1), "data.tsv:2: label 'Neutral' of comment_886 is not one of"),
    (lambda text: text + text.splitlines(keepends=True)[1], "appears twice"),
])
def test_a_bad_file_is_refused_whole_naming_file_and_line(cofe, command, touche_data, tmp_path, change, error):
    source = (touche_data / "2023-task4-toy" / "toy-truth" / "data.tsv").read_text(encoding="utf-8")
    bad = tmp_path / "data.tsv"
    bad.write_text(change(source), encoding="utf-8")

    refused = command("import_items", "cofe23", bad, "--assessor", "cofe-truth")

    assert refused.code == 1 and refused.err.startswith("error: ") and error in refused.err
    assert not Document.objects.filter(collection=cofe.collection).exists() and not Topic.objects.filter(campaign=cofe).exists()


def test_labels_in_the_file_need_a_source_and_a_person_is_never_one(cofe, command, touche_data):
    truth = touche_data / "2023-task4-toy" / "toy-truth" / "data.tsv"
    User.objects.create_user("alice", password="x-long-enough-password")
    assert "gives 10 labels: name the source" in command("import_items", "cofe23", truth).err
    assert "'alice' is a person's account" in command("import_items", "cofe23", truth, "--assessor", "alice").err
    assert not Document.objects.exists()


def test_a_ranking_campaign_takes_no_items(db, command, touche_data):
    command("create_campaign", "args23", "--name", "Args", "--preset", "touche-2023-task1")
    refused = command("import_items", "args23", touche_data / "2023-task4-toy" / "toy-input" / "data.tsv")
    assert "judges pooled documents: items are imported into a classification campaign" in refused.err


def test_a_classification_campaign_archives_whole(cofe, command, touche_data, tmp_path):
    toy = touche_data / "2023-task4-toy"
    (tmp_path / "proposals.tsv").write_text(PROPOSALS, encoding="utf-8")
    command("import_items", "cofe23", toy / "toy-truth" / "data.tsv", "--proposals", tmp_path / "proposals.tsv",
            "--assessor", "cofe-truth")
    Run.objects.create(campaign=cofe, tag="always-in-favor", predictions={"comment_886": "In favor"})

    assert command("export_campaign", "cofe23", "--output", tmp_path / "cofe.zip").code == 0
    assert command("import_campaign", tmp_path / "cofe.zip", "--slug", "cofe-copy").code == 0

    copy = Campaign.objects.get(slug="cofe-copy")
    assert copy.is_classification and copy.label_scheme == cofe.label_scheme
    assert Topic.objects.get(campaign=copy, number="238").metadata == Topic.objects.get(campaign=cofe, number="238").metadata
    assert Run.objects.get(campaign=copy).predictions == {"comment_886": "In favor"}
    labels = {(j.document.doc_id, j.labels["stance"]) for j in Judgment.objects.filter(topic__campaign=copy).select_related("document")}
    assert len(labels) == 10 and ("comment_886", "In favor") in labels


def test_items_come_in_through_the_imports_page_and_the_api_as_jobs(
    cofe, command, client, tmp_path, settings, touche_data, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse
    from rest_framework.test import APIClient

    from assessments.models import Job, Membership

    settings.MEDIA_ROOT = tmp_path / "media"
    olivia = User.objects.create_user("olivia", password="x-long-enough-password", role="organiser")
    Membership.objects.create(campaign=cofe, user=olivia)
    toy = touche_data / "2023-task4-toy"
    client.force_login(olivia)
    page = client.get(reverse("assessments:imports", args=["cofe23"])).content.decode()
    assert "Items" in page and "Submissions" in page and 'name="documents-files"' not in page

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("assessments:import_upload", args=["cofe23", "items"]), {
            "items-comments": SimpleUploadedFile("data.tsv", (toy / "toy-input" / "data.tsv").read_bytes()),
            "items-proposals": SimpleUploadedFile("proposals.tsv", PROPOSALS.encode()),
        })
    job = Job.objects.get()
    assert (job.kind, job.status) == ("import_items", "succeeded"), job.message
    assert job.message.startswith("data.tsv: 10 comments on 2 proposals")
    assert Topic.objects.get(campaign=cofe, number="238").metadata["title_en"] == "Strengthen Frontex"

    api = APIClient()
    api.force_authenticate(olivia)
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(reverse("api-items", args=["cofe23"]), {
            "comments": SimpleUploadedFile("truth.tsv", (toy / "toy-truth" / "data.tsv").read_bytes()), "assessor": "cofe-truth",
        }, format="multipart")
    assert answer.status_code == 202, answer.content
    job = Job.objects.get(pk=answer.json()["id"])
    assert job.status == "succeeded" and "10 prior labels as cofe-truth" in job.message
    # A person's name is refused before the upload is kept.
    refused = api.post(reverse("api-items", args=["cofe23"]), {
        "comments": SimpleUploadedFile("truth.tsv", b"id\tid_prop\tcomment\tlan\n"), "assessor": "olivia",
    }, format="multipart")
    assert refused.status_code == 400 and "person's account" in refused.json()["detail"]


def test_items_are_given_in_batches_by_language_and_a_second_call_gives_the_rest(cofe, command, touche_data):
    command("import_items", "cofe23", touche_data / "2023-task4-toy" / "toy-input" / "data.tsv")
    command("create_user", "greta", "--role", "assessor", "--languages", "de,en", "--password", "batches-greta-password")
    command("create_user", "hugo", "--role", "assessor", "--languages", "de", "--password", "batches-hugo-password")

    first = command("assign_items", "cofe23", "--coders", "greta,hugo", "--batch", "2")
    assert first.out.startswith("4 items given (greta 2, hugo 2)")
    rest = command("assign_items", "cofe23", "--coders", "greta,hugo")
    assert rest.out.startswith("4 items given (greta 2, hugo 2)") and "no coder reads these (items given to nobody): es 1, fr 1" in rest.out
    again = command("assign_items", "cofe23", "--coders", "greta,hugo")
    assert again.out.startswith("0 items given")
    from assessments.models import AssignmentItem

    held = AssignmentItem.objects.values_list("assignment__assessor__username", "entry__document__metadata__language")
    reads = {"greta": {"de", "en"}, "hugo": {"de"}}
    assert all(language in reads[name] for name, language in held)
    assert sorted(name for name, _ in held) == ["greta"] * 4 + ["hugo"] * 4  # 6 de and 2 en, shared by load
    assert "is not a share" in command("assign_items", "cofe23", "--coders", "greta", "--overlap", "2").err
