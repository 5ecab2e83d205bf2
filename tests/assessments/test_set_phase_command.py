"""set_phase: the campaign's phases from the command line, as the page moves them, recorded on the timeline."""

from assessments.models import AuditEvent, Campaign


def test_phases_move_forward_and_are_recorded(campaign, command):
    assert command("set_phase", campaign.slug, "training").out.strip() == f"{campaign.slug}: setup → training"
    assert command("set_phase", campaign.slug, "training").out.strip() == f"{campaign.slug} is already in training"
    assert command("set_phase", campaign.slug, "main").code == 0
    assert Campaign.objects.get(pk=campaign.pk).phase == "main"
    assert AuditEvent.objects.filter(campaign=campaign, action="phase.changed").count() == 2


def test_a_phase_never_goes_back_so_pasting_again_changes_nothing(campaign, command):
    command("set_phase", campaign.slug, "main")
    result = command("set_phase", campaign.slug, "training")
    assert (result.code, result.out.strip()) == (0, f"{campaign.slug} is already in main, past training")
    assert Campaign.objects.get(pk=campaign.pk).phase == "main"


def test_closing_skips_nothing(campaign, command):
    result = command("set_phase", campaign.slug, "closed")
    assert result.code == 1 and "a campaign in setup cannot move to closed" in result.err
