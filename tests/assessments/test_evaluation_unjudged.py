"""Evaluating runs before anyone has judged (in the chosen phase, or by the chosen assessor) says so, instead of
a table of zeros that reads like a result; so does a kind (quality, say) nobody has labelled yet beside one that
has labels."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from tests.assessments.test_evaluation_service import RUNS, add_run, judge_all
from tests.factories import CampaignFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def trained(db):
    """Runs, and training judgments only: the main phase has started and has none yet."""
    campaign = CampaignFactory(slug="t20", preset="touche-2020-task1", phase="main")
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


@pytest.fixture
def olivia(trained):
    user = UserFactory(username="olivia", role="organiser")
    MembershipFactory(campaign=trained, user=user)
    return user


def test_a_kind_without_judgments_says_so_on_the_results_page(client, trained, olivia):
    """anna's training labels carry relevance only: quality has no judgments, relevance has scores."""
    client.force_login(olivia)
    url = reverse("assessments:leaderboard", args=["t20"])
    page = client.get(url, {"phase": "training", "kind": ["relevance", "quality"], "ci": "", "test": ""}).content.decode()
    assert page.count(">no judgments<") == 2  # one per run, in the quality column
    assert 'title="no training quality judgments"' in page
    assert "0.0000" not in page.split("Quality nDCG@5")[1]  # no zero scores under the quality heading
    assert page.count("0.") > 2  # relevance has its scores


def test_a_kind_without_judgments_says_so_in_the_api_the_command_and_the_csv(client, trained, olivia):
    api = APIClient()
    api.force_authenticate(olivia)
    rows = api.get(reverse("api-results", args=["t20"]), {"phase": "training", "kind": ["relevance", "quality"]}).json()
    quality = [row for row in rows if row["kind"] == "quality"]
    assert len(quality) == 2 and all(
        (row["judged"], row["mean"], row["judged_at_k"], row["message"]) == (False, None, None, "no training quality judgments")
        for row in quality
    )
    assert all(row["judged"] and row["mean"] is not None and "message" not in row for row in rows if row["kind"] == "relevance")

    code, out, _ = evaluate("--phase", "training", "--kind", "relevance", "--kind", "quality")
    assert code == 0
    assert all(line.split()[-3:] == ["no", "judgments", "–"] for line in out.splitlines()[1:3])  # after relevance
    assert "topics with labels: relevance 1, quality 0" in out

    _, csv_out, _ = evaluate("--phase", "training", "--kind", "relevance", "--kind", "quality", "--format", "csv")
    assert sorted(line for line in csv_out.splitlines() if ",quality," in line) == [
        f"{tag},team-{tag},quality,nDCG@5,score,10,all,," for tag in sorted(RUNS)
    ]
