"""Evaluating runs before anyone has judged (in the chosen phase, or by the chosen assessor) says so, instead of
a table of zeros that reads like a result."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.assessments.test_evaluation_service import RUNS, add_run, judge_all
from tests.factories import CampaignFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def trained(db):
    """Runs, and training judgments only: the main phase has none yet."""
    campaign = CampaignFactory(slug="t20", preset="touche-2020-task1")
    for tag, lines in RUNS.items():
        add_run(campaign, tag, lines, team=f"team-{tag}")
    judge_all(campaign, UserFactory(username="anna"), {"1": {"a": 2, "b": 1}}, phase="training")
    return campaign


def evaluate(*options) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("evaluate_runs", "t20", *options, stdout=out, stderr=err)
    except SystemExit as exit_:
        return exit_.code, out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("options", "whose"), [
    ([], "main-phase judgments"),
    (["--format", "json"], "main-phase judgments"),
    (["--phase", "training", "--rule", "assessor:olga"], "training judgments by olga"),
])
def test_the_command_exits_non_zero_when_there_is_nothing_to_score_against(trained, options, whose):
    UserFactory(username="olga")
    code, out, err = evaluate(*options)
    assert code == 1 and out == ""
    assert err == (
        f"error: campaign t20 has no {whose}: nothing to score the runs against "
        "(judge documents first, or import earlier labels with import_qrels)\n"
    )


def test_the_command_scores_once_the_phase_has_judgments(trained):
    code, out, _ = evaluate("--phase", "training")
    assert code == 0 and "2 runs; topics with labels: relevance 1" in out


def test_the_results_page_says_there_is_nothing_to_score_against(client, trained):
    olivia = UserFactory(username="olivia", role="organiser")
    MembershipFactory(campaign=trained, user=olivia)
    client.force_login(olivia)
    url = reverse("assessments:leaderboard", args=["t20"])

    page = client.get(url).content.decode()
    assert "No main-phase judgments yet, so there is nothing to score the 2 runs against." in page
    assert "0.0000" not in page

    trained_page = client.get(url, {"phase": "training"}).content.decode()
    assert "nothing to score" not in trained_page and "tied" in trained_page
