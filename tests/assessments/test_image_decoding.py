"""An image is checked by its bytes as it is imported and decoded once, afterwards, by the thumbnail job: one whose
container is whole but whose data does not decode goes in, then is marked unreadable, named in the job's result,
never served, and shown to assessors as unreadable (issue 26). Also the import's other edges found with it: a query
that PostgreSQL cannot store, and the threads it may use."""

import shutil

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from accounts.models import User
from assessments.models import Assignment, Document
from assessments.models.campaigns import Phase
from assessments.selectors import queues
from assessments.services.campaigns import add_member, advance_phase, create_campaign
from assessments.services.imports.images import import_images, make_thumbnails, usable_cpus
from tests.formats.test_images import corrupt_but_complete


@pytest.fixture
def sample(touche_data, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    shutil.copytree(touche_data / "2023-task3-sample" / "images", tmp_path / "collection" / "images")
    return tmp_path / "collection"


def lossy_webps(collection):
    """The collection's simple lossy WebP files (a VP8 chunk and nothing else), in the order they are read."""
    return [p for p in sorted((collection / "images").glob("I*/I*/image.webp")) if p.read_bytes()[12:16] == b"VP8 "]


@pytest.mark.django_db
def test_a_corrupt_but_complete_image_is_stored_then_marked_unreadable_by_the_thumbnail_job(sample):
    campaign = create_campaign(slug="img23", name="Images", preset="touche-2023-task3")
    damaged = lossy_webps(sample)[3]
    damaged.write_bytes(corrupt_but_complete(damaged.read_bytes()))

    summary = import_images(campaign=campaign, path=sample)

    assert summary.counts["images"] == 50
    document = Document.objects.get(collection=campaign.collection, doc_id=damaged.parent.name)
    image = document.metadata["image"]
    assert image["thumbnail"] is None and "unreadable" not in image  # not decoded yet
    assert default_storage.exists(image["file"])

    made = make_thumbnails(campaign=campaign)

    assert made.counts == {"thumbnails": 49, "unreadable": 1}
    assert len(made.warnings) == 1 and made.warnings[0].startswith(f"{image['file']}: the WEBP image cannot be decoded (")
    assert "1 images cannot be decoded" in made.text
    document.refresh_from_db()
    assert document.metadata["image"]["unreadable"].startswith("the WEBP image cannot be decoded (")
    assert document.metadata["image"]["thumbnail"] is None
    others = Document.objects.filter(collection=campaign.collection).exclude(pk=document.pk)
    assert all(d.metadata["image"]["thumbnail"] and "unreadable" not in d.metadata["image"] for d in others)
    # Tried once: a later run of the job neither decodes it again nor lists it again.
    assert make_thumbnails(campaign=campaign).counts == {"thumbnails": 0, "unreadable": 0}


@pytest.mark.django_db
def test_an_unreadable_image_is_not_served_and_its_judge_page_says_so_and_takes_a_flag(image_campaign, client, touche_data):
    campaign, _ = image_campaign
    advance_phase(campaign=campaign, to=Phase.MAIN, by=None)
    alice = User.objects.get(username="alice")
    assignment = Assignment.objects.filter(assessor=alice).first()
    entry = queues.assignment_queue(assignment)[0]
    document = Document.objects.get(pk=entry.document_id)
    name = document.metadata["image"]["file"]
    client.force_login(alice)
    image_url = reverse("annotation:image", args=[assignment.pk, entry.entry_id])
    assert client.get(image_url).status_code == 200
    # The stored file replaced by a whole container of data no decoder reads, as an import of it would have left it.
    default_storage.delete(name)
    default_storage.save(name, ContentFile(corrupt_but_complete(lossy_webps(touche_data / "2023-task3-sample")[0].read_bytes())))
    document.metadata["image"]["thumbnail"] = None
    document.save(update_fields=["metadata"])

    assert make_thumbnails(campaign=campaign).counts == {"thumbnails": 0, "unreadable": 1}

    assert client.get(image_url).status_code == 404
    assert client.get(reverse("annotation:thumbnail", args=[assignment.pk, entry.entry_id])).status_code == 404
    page = client.get(reverse("annotation:judge", args=[assignment.pk, 1])).content.decode()
    assert "Image could not be read" in page and "the WEBP image cannot be decoded" in page
    assert 'id="judge-image"' not in page and image_url not in page
    assert 'data-action="flag"' in page
    # The grid and the run browser say so in its place rather than ask for a thumbnail that is never served.
    thumbnail_url = reverse("annotation:thumbnail", args=[assignment.pk, entry.entry_id])
    grid = client.get(reverse("annotation:grid", args=[assignment.pk, 1])).content.decode()
    assert thumbnail_url not in grid and "The file is damaged and not shown" in grid
    assert grid.count("The file is damaged and not shown") == 1 and grid.count("<img ") == grid.count('class="grid-cell') - 1
    flagged = client.put(reverse("work-judgment", args=[assignment.pk, entry.entry_id]),
                         {"labels": {}, "flagged": True, "note": "the image does not open"}, content_type="application/json")
    assert flagged.status_code == 200 and flagged.json()["flagged"] is True
    organiser = User.objects.create_user("olivia", password="images-olivia-password", role="organiser")
    add_member(campaign=campaign, user=organiser, by=None)
    client.force_login(organiser)
    assert client.get(reverse("assessments:image", args=["img23", document.pk])).status_code == 404
    topic = assignment.topic.number
    browsed = [client.get(reverse("assessments:run_browser", args=["img23"]), {"run": tag, "topic": topic}).content.decode()
               for tag in ("baseline", "shuffled")]
    damaged = reverse("assessments:image_thumbnail", args=["img23", document.pk])
    assert all(damaged not in page for page in browsed)
    assert any("damaged file, not shown" in page for page in browsed)


@pytest.mark.django_db
def test_a_rankings_query_holding_a_nul_refuses_the_import_naming_its_file_and_line(command, sample, tmp_path):
    """It crashed the import as PostgreSQL refused the text; now it is refused as any malformed line is."""
    page = sorted((sample / "images").glob("I*/I*/pages/P*/rankings.jsonl"))[-1]
    page.write_text(page.read_text() + '{"query": "voting age\\u0000 good", "topic": "48", "rank": 3}\n')
    line = len(page.read_text().splitlines())
    assert command("create_campaign", "img23", "--name", "Images", "--preset", "touche-2023-task3").code == 0

    refused = command("import_images", "img23", sample)

    assert refused.code == 1 and "Traceback" not in refused.err
    assert refused.err.strip() == f"error: {page}:{line}: the query contains a NUL character (\\u0000)"
    assert not Document.objects.filter(collection__slug="img23").exists()
    assert not [p for p in (tmp_path / "media").rglob("*") if p.is_file()]


@pytest.mark.parametrize(("cpu_max", "affinity", "expected"), [
    (None, {0, 1, 2, 3}, 4),  # no cgroup limit file: the affinity mask
    ("max 100000\n", {0, 1, 2, 3}, 4),  # no quota
    ("150000 100000\n", {0, 1, 2, 3}, 2),  # --cpus 1.5: two threads keep it busy
    ("50000 100000\n", {0, 1, 2, 3}, 1),
    ("800000 100000\n", {0, 1}, 2),  # the mask is smaller than the quota
])
def test_the_threads_follow_the_cpu_affinity_and_the_cgroup_quota(tmp_path, monkeypatch, cpu_max, affinity, expected):
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: affinity)
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max)

    assert usable_cpus(str(path)) == expected
