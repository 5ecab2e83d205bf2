"""Move a campaign to its next phase: the command-line twin of the campaign page's phase buttons."""

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail
from assessments.models import Phase
from assessments.services.campaigns import CampaignError, advance_phase


class Command(BaseCommand):
    help = (
        "Move a campaign setup → training → main → closed (setup → main skips training). Main-phase topics open to "
        "their assessors only once the main phase starts; training topics open in setup and training."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("phase", choices=[Phase.TRAINING, Phase.MAIN, Phase.CLOSED], help="the phase to move to")

    def handle(self, *args, slug: str, phase: str, **options) -> None:
        campaign = campaign_or_fail(self, slug)
        before = campaign.phase
        order = list(Phase.values)
        if order.index(before) >= order.index(phase):  # pasted again: phases never go back, so nothing to do
            self.stdout.write(f"{slug} is already in {before}" + ("" if before == phase else f", past {phase}"))
            return
        try:
            advance_phase(campaign=campaign, to=phase, by=None)
        except CampaignError as exc:
            fail(self, exc)
        self.stdout.write(self.style.SUCCESS(f"{slug}: {before} → {phase}"))
