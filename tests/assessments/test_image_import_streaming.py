"""An image import spools what it stores and checks the images one at a time, in order: the first problem in the
collection's order is the one named, a refusal leaves storage as it was, and a job's progress is written while
nothing is locked. The thumbnail job that follows works a batch at a time."""

import shutil

import pytest
from django.core.files.storage import default_storage
from django.db import connection

from assessments.formats.errors import FormatError
from assessments.models import Document
from assessments.services.campaigns import create_campaign
from assessments.services.imports import images as image_imports
from assessments.services.imports.images import import_images, make_thumbnails


@pytest.fixture
def sample(touche_data, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    shutil.copytree(touche_data / "2023-task3-sample" / "images", tmp_path / "collection" / "images")
    return tmp_path / "collection"


def image_files(collection):
    """The image files in the order the collection is read (shards, then ids)."""
    return sorted((collection / "images").glob("I*/I*/image.webp"))


@pytest.mark.django_db
@pytest.mark.parametrize("reader_refuses_the_next", [False, True])
def test_the_first_bad_image_in_the_collections_order_is_the_one_named(sample, tmp_path, reader_refuses_the_next):
    campaign = create_campaign(slug="img23", name="Images", preset="touche-2023-task3")
    files = image_files(sample)
    truncated, svg = files[9], files[10]
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])  # fails its container's check
    svg.write_bytes(b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')  # fails at once
    if reader_refuses_the_next:
        (files[11].parent / "image-url.txt").write_text("")

    with pytest.raises(FormatError) as refused:
        import_images(campaign=campaign, path=sample)

    assert truncated.parent.name in refused.value.source and "cannot be decoded" in refused.value.reason
    assert not Document.objects.filter(collection=campaign.collection).exists()
    assert not [p for p in (tmp_path / "media").rglob("*") if p.is_file()]


@pytest.mark.django_db
def test_a_refused_import_again_keeps_the_files_of_the_images_stored_before(sample):
    campaign = create_campaign(slug="img23", name="Images", preset="touche-2023-task3")
    import_images(campaign=campaign, path=sample)
    files = image_files(sample)
    files[-1].write_bytes(b"<!doctype html><html><script>alert(1)</script></html>")

    with pytest.raises(FormatError, match="HTML"):
        import_images(campaign=campaign, path=sample)

    stored = Document.objects.filter(collection=campaign.collection)
    assert stored.count() == 50
    assert all(default_storage.exists(d.metadata["image"]["file"]) for d in stored)


@pytest.mark.django_db(transaction=True)
def test_progress_is_reported_outside_the_storing_transaction(sample):
    """A job writes its progress to its row as it goes: inside the import's transaction the row would stay locked
    and the progress unseen until the end."""
    campaign = create_campaign(slug="img23", name="Images", preset="touche-2023-task3")
    reports = []

    class Watching:
        def advance(self, done, total=None):
            reports.append((done, total, connection.in_atomic_block))

    summary = import_images(campaign=campaign, path=sample, progress=Watching())

    assert summary.counts["images"] == 50 and reports[-1] == (50, 50, False)
    assert not any(in_transaction for _, _, in_transaction in reports)


@pytest.mark.django_db
def test_thumbnails_are_made_a_batch_at_a_time_until_every_image_has_one(sample, monkeypatch):
    campaign = create_campaign(slug="img23", name="Images", preset="touche-2023-task3")
    import_images(campaign=campaign, path=sample)
    images = list(Document.objects.filter(collection=campaign.collection))
    for document in images:  # whatever the job the import queued has made already
        document.metadata["image"]["thumbnail"] = None
    Document.objects.bulk_update(images, ["metadata"])
    monkeypatch.setattr(image_imports, "THUMBNAILS_PER_WRITE", 7)

    summary = make_thumbnails(campaign=campaign)

    assert summary.counts["thumbnails"] == 50
    assert all(default_storage.exists(d.metadata["image"]["thumbnail"]) for d in Document.objects.filter(collection=campaign.collection))
    assert make_thumbnails(campaign=campaign).counts["thumbnails"] == 0  # once
