"""Load an image collection in the Touché Task 3 layout (a folder or a zip) into an image campaign."""

from pathlib import Path

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail, run_import
from assessments.services.imports.images import import_images, make_thumbnails


class Command(BaseCommand):
    help = (
        "Import the images of SOURCE (a folder or zip holding images/I<2 hex>/I<16 hex>/{image.webp, image-url.txt, "
        "image-phash.txt, pages/P<16 hex>/...}) into an image campaign: each image checked by its bytes (WebP, PNG or "
        "JPEG, pixels bounded), its file stored, its pages' addresses, searches and text kept for the judge page. All "
        "or nothing; thumbnails are made afterwards (here, unless --no-thumbnails; from the page, by a job)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug (an image campaign)")
        parser.add_argument("source", type=Path, help="the collection: a folder or a .zip")
        parser.add_argument("--only-pooled", action="store_true", help="keep only images some pool of the campaign needs")
        parser.add_argument("--no-thumbnails", action="store_true", help="leave the thumbnails to a job")

    def handle(self, *args, slug: str, source: Path, only_pooled: bool, no_thumbnails: bool, **options):
        campaign = campaign_or_fail(self, slug)
        if not source.exists():
            fail(self, f"{source}: no such folder or file")
        run_import(self, desc="images", unit="image",
                   call=lambda bar: import_images(campaign=campaign, path=source, only_pooled=only_pooled, progress=bar))
        if not no_thumbnails:
            run_import(self, desc="thumbnails", unit="image", call=lambda bar: make_thumbnails(campaign=campaign, progress=bar))
