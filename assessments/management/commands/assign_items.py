"""Give a classification campaign's items to coders by the languages they read, with an overlap share for
agreement: the command-line twin of assign_topics for items."""

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail
from assessments.services.assignments import AssignmentError, find_assessors
from assessments.services.item_assignments import ItemAssignmentError, assign_items


class Command(BaseCommand):
    help = (
        "Give the items (comments) of a classification campaign that no coder holds yet to --coders, each only items "
        "in languages they read (create_user --languages); --overlap gives that share of the items to several coders "
        "(--per-overlap-item), so agreement can be measured per language."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug (a classification campaign)")
        parser.add_argument("--coders", required=True, metavar="NAMES", help="comma-separated assessor names")
        parser.add_argument("--overlap", type=float, default=0.0, metavar="SHARE",
                            help="share of the items given to several coders, 0 to 1 (default 0)")
        parser.add_argument("--per-overlap-item", type=int, default=2, metavar="N",
                            help="coders of each overlap item (default 2)")
        parser.add_argument("--batch", type=int, metavar="N",
                            help="at most N new items to each coder this time (default: every item that is left)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the overlap draw (the same seed, the same draw)")

    def handle(
        self, *args, slug: str, coders: str, overlap: float, per_overlap_item: int, batch: int | None, seed: int, **options
    ):
        campaign = campaign_or_fail(self, slug)
        try:
            people = find_assessors(usernames=[n.strip() for n in coders.split(",") if n.strip()])
            given = assign_items(
                campaign=campaign, coders=people, overlap=overlap, per_overlap_item=per_overlap_item, batch=batch, seed=seed
            )
        except (AssignmentError, ItemAssignmentError) as exc:
            fail(self, exc)
        self.stdout.write(given.describe())
