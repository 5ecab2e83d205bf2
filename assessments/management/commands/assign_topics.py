"""Give topics to assessors from the command line: the twin of the assignment page and the assignments API."""

from django.core.management.base import CommandError

from assessments.management.base import BaseCommand
from assessments.models import Campaign
from assessments.services import assignments
from assessments.services.assignments import AssignmentError, NothingToAssign


def _names(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class Command(BaseCommand):
    help = (
        "Assign topics to assessors. By hand: --assessor USER --topics 2,3,8 [--phase training|main]. "
        "Balanced: --auto --assessors a,b,c (main phase, largest pool first to the least-loaded assessor). "
        "Overlap: --overlap [--share 0.05] [--assessors a,b,c]. Training topics: --mark-training --topics 1,2. "
        "A main-phase topic assigned to someone else moves to them; judgments already made are kept."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--auto", action="store_true", help="balance main-phase topics across --assessors")
        mode.add_argument(
            "--overlap", action="store_true",
            help="give a second assessor a share of every assigned main-phase topic (Campaign.overlap_share)",
        )
        mode.add_argument("--mark-training", action="store_true", help="mark --topics as training topics")
        parser.add_argument("--assessor", help="the assessor's username")
        parser.add_argument("--assessors", help="comma-separated usernames (training: all get the same topics)")
        parser.add_argument(
            "--topics", help="comma-separated topic numbers (with --auto: default every topic nobody holds yet)"
        )
        parser.add_argument("--phase", choices=["training", "main"], default="main")
        parser.add_argument("--share", type=float, help="with --overlap: the share instead of the campaign's")

    def handle(self, *args, slug: str, **options) -> None:
        try:
            campaign = Campaign.objects.get(slug=slug)
        except Campaign.DoesNotExist:
            raise CommandError(f"no campaign {slug!r}") from None
        try:
            self._run(campaign, options)
        except NothingToAssign as exc:  # the same line pasted twice: done already
            self.stdout.write(f"0 assignment(s) made: {exc}")
        except AssignmentError as exc:
            raise CommandError(str(exc)) from None

    def _run(self, campaign: Campaign, options: dict) -> None:
        usernames = _names(options["assessors"]) + _names(options["assessor"])
        assessors = assignments.find_assessors(usernames=usernames) if usernames else None
        topics = assignments.find_topics(campaign=campaign, numbers=_names(options["topics"])) if options["topics"] else None

        if options["mark_training"]:
            if not topics:
                raise CommandError("--mark-training needs --topics")
            changed = assignments.mark_training(campaign=campaign, topics=topics, is_training=True, by=None)
            self.stdout.write(self.style.SUCCESS(f"{changed} topic(s) marked as training topics"))
        elif options["overlap"]:
            drawn = assignments.draw_overlap(
                campaign=campaign, share=options["share"], assessors=assessors, assigned_by=None
            )
            for s in drawn.slices:
                self.stdout.write(f"topic {s.topic.number}: {s.entries} documents of {s.holder}'s → {s.assessor}")
            if drawn.skipped:
                self.stdout.write(f"already sliced, left alone: topic {', '.join(drawn.skipped)}")
            total = sum(s.entries for s in drawn.slices)
            self.stdout.write(self.style.SUCCESS(f"overlap {drawn.share:.0%}: {total} documents on {len(drawn.slices)} topics"))
        elif options["auto"]:
            if not assessors:
                raise CommandError("--auto needs --assessors a,b,c")
            result = assignments.auto_assign(campaign=campaign, assessors=assessors, topics=topics, assigned_by=None)
            self._report(result.assigned)
            for name, load in result.load.items():
                self.stdout.write(f"  {name:<20} {load:>7} documents")
            if result.skipped:
                self.stderr.write(
                    f"warning: skipped topic {', '.join(result.skipped)}: no pool yet (build it, then run --auto again)",
                    style_func=self.style.WARNING,
                )
        else:
            if not assessors or not topics:
                raise CommandError("give --assessor USER and --topics 2,3,8 (or use --auto / --overlap)")
            self._report(
                assignments.assign_topics(
                    campaign=campaign, assessors=assessors, topics=topics, phase=options["phase"], assigned_by=None
                )
            )

    def _report(self, done: list[assignments.Assigned]) -> None:
        for item in done:
            self.stdout.write(item.describe())
        changed = sum(item.status != "kept" for item in done)
        self.stdout.write(self.style.SUCCESS(f"{changed} assignment(s) made, {len(done) - changed} already in place"))
