"""A collection with one hostile image is refused whole: the file is named, no image is stored and no file written
by the import is left behind."""

import shutil

import pytest

from assessments.models import Campaign, Document

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("hostile, error", [
    (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "SVG"),
    (b"<!doctype html><html><script>alert(1)</script></html>", "HTML"),
])
def test_a_hostile_image_refuses_the_whole_collection(command, touche_data, tmp_path, settings, hostile, error):
    settings.MEDIA_ROOT = tmp_path / "media"
    collection = tmp_path / "collection"
    shutil.copytree(touche_data / "2023-task3-sample" / "images", collection / "images")
    victim = sorted((collection / "images").glob("I*/I*/image.webp"))[-1]  # the last one read: others were stored
    victim.write_bytes(hostile)
    assert command("create_campaign", "img23", "--name", "Images", "--preset", "touche-2023-task3").code == 0

    refused = command("import_images", "img23", collection)

    assert refused.code == 1 and victim.parent.name in refused.err and error in refused.err, refused.err
    assert not Document.objects.filter(collection=Campaign.objects.get(slug="img23").collection).exists()
    assert not [p for p in (tmp_path / "media").rglob("*") if p.is_file()]  # the files already written are gone


def test_a_text_campaign_takes_no_images(command, touche_data):
    command("create_campaign", "args23", "--name", "Args", "--preset", "touche-2023-task1")
    refused = command("import_images", "args23", touche_data / "2023-task3-sample")
    assert refused.code == 1 and "does not judge images" in refused.err
