"""Load a small demo campaign with its people, so `make demo` shows a working assessor's day."""

from pathlib import Path

from django.db import transaction

from accounts.models import Role, User
from assessments.management.base import BaseCommand
from assessments.models import Campaign, Phase, PoolEntry
from assessments.services import assignments, campaigns, pooling
from assessments.services.imports.documents import import_documents
from assessments.services.imports.runs import import_runs
from assessments.services.imports.topics import import_topics

DEMO = Path(__file__).resolve().parents[2] / "demo"
SLUG = "demo"

# Fixed demo logins, printed by the command: this data is for trying the tool, never for a real campaign.
PEOPLE = [
    ("olivia", Role.ORGANISER, "olivia-demo"),
    ("ada", Role.ADMIN, "ada-demo"),
    ("alice", Role.ASSESSOR, "alice-demo"),
    ("bob", Role.ASSESSOR, "bob-demo"),
]

GUIDELINES = """\
For each topic, read the title, description and narrative first: the narrative says what a (highly) relevant passage is.

Relevance
  2  highly relevant: compares the options in the question with respect to the aspects asked about; ideally it also concludes which option is preferable.
  1  relevant: tells the user something important about at least one of the options.
  0  not relevant: neither compares the options nor informs about either of them.

Quality (asked only for relevant passages): 2 well written, argumentative, easy to follow; 1 average; 0 poor or no argument.
Stance (asked only for relevant passages): FIRST or SECOND if the passage favours that object, NEUTRAL if it weighs both, NO if it takes no stance.
When unsure, flag the passage and leave a note: it will be discussed.
"""


class Command(BaseCommand):
    help = "Create (or refresh) the demo campaign and its users. Safe to run again: nothing is duplicated."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=8000, help="the port the demo is served on, for the printed address")

    def handle(self, *args, port: int, **options) -> None:
        with transaction.atomic():
            people = {name: self._person(name, role, password) for name, role, password in PEOPLE}
            campaign = Campaign.objects.filter(slug=SLUG).first() or campaigns.create_campaign(
                slug=SLUG, name="Demo: comparative questions", preset="touche-2022-task2", guidelines=GUIDELINES
            )
            campaigns.add_member(campaign=campaign, user=people["olivia"], by=None)
        import_topics(campaign=campaign, path=DEMO / "topics.xml")
        import_documents(campaign=campaign, paths=[DEMO / "documents.jsonl"])
        import_runs(campaign=campaign, paths=sorted(DEMO.glob("run-*.txt")), team="demo team")
        pooling.build_pool(campaign=campaign, spec=pooling.PoolSpec(depth=5))
        with transaction.atomic():
            training, *main = list(campaign.topics.order_by("position"))
            assignments.mark_training(campaign=campaign, topics=[training], is_training=True, by=people["olivia"])
            assessors = [people["alice"], people["bob"]]
            assignments.assign_topics(
                campaign=campaign, assessors=assessors, topics=[training], phase=Phase.TRAINING, assigned_by=people["olivia"]
            )
            for topic, assessor in zip(main, assessors):
                assignments.assign_topics(
                    campaign=campaign, assessors=[assessor], topics=[topic], phase=Phase.MAIN, assigned_by=people["olivia"]
                )
            if campaign.phase == Phase.SETUP:
                campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=None)

        pool_size = PoolEntry.objects.filter(topic__campaign=campaign).count()
        self.stdout.write(self.style.SUCCESS(f"demo campaign '{SLUG}': {campaign.topics.count()} topics, {pool_size} documents to judge"))
        self.stdout.write(f"Log in at http://127.0.0.1:{port}/ with:")
        for name, role, password in PEOPLE:
            self.stdout.write(f"  {role.label:<10} {name:<7} password {password}")

    def _person(self, username: str, role: str, password: str) -> User:
        user, _ = User.objects.get_or_create(username=username, defaults={"role": role})
        user.role = role
        user.set_password(password)
        user.save(update_fields=["role", "password"])
        return user
