"""Several measures in one evaluation: `evaluate_runs --measure nDCG@5,P@10,AP`, the results API and the page give
exactly what one call per measure gives, from one reading of the labels and the rankings."""

import csv
import io
import json

import pytest
from django.urls import reverse

from tests.assessments.test_evaluation_statistics import ten_runs  # noqa: F401  (the fixture)
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
MEASURES = ("nDCG@5", "P@10", "AP")


def test_one_call_with_three_measures_prints_what_three_calls_print(ten_runs, command):  # noqa: F811
    together = json.loads(command("evaluate_runs", "many", "--measure", ",".join(MEASURES), "--ci", "0.9", "--test", "t",
                                  "--format", "json").out)
    apart = [row for measure in MEASURES for row in json.loads(
        command("evaluate_runs", "many", "--measure", measure, "--ci", "0.9", "--test", "t", "--format", "json").out
    )]
    assert together == apart
    assert [row["measure"] for row in together] == [m for m in MEASURES for _ in range(10)]
    assert len({row["mean"] for row in together}) > 3  # the measures differ: not one figure repeated

    text = command("evaluate_runs", "many", "--measure", "nDCG@5, P@10,AP,P@10", "--format", "csv").out
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][-1] == "judged@k" and rows.count(rows[0]) == 1  # one header; each row's k is its measure's
    parts = [list(csv.reader(io.StringIO(command("evaluate_runs", "many", "--measure", m, "--format", "csv").out)))[1:]
             for m in MEASURES]
    assert rows[1:] == [row for part in parts for row in part]

    table = command("evaluate_runs", "many", "--measure", ",".join(MEASURES)).out
    for measure in MEASURES:
        assert command("evaluate_runs", "many", "--measure", measure).out.strip() in table
    refused = command("evaluate_runs", "many", "--measure", "nDCG@5,P@x")
    assert refused.code != 0 and "P@x" in refused.err


def test_the_api_and_the_page_take_several_measures(ten_runs, command, client):  # noqa: F811
    olivia = UserFactory(username="olivia", role="organiser")
    MembershipFactory(campaign=ten_runs, user=olivia)
    client.force_login(olivia)
    expected = json.loads(command("evaluate_runs", "many", "--measure", ",".join(MEASURES), "--format", "json").out)
    answer = client.get(reverse("api-results", args=["many"]), {"measure": ",".join(MEASURES)})
    assert answer.status_code == 200 and answer.json() == expected

    page = client.get(reverse("assessments:leaderboard", args=["many"]), {"measure": "nDCG@5,P@10,AP", "ci": ""}).content.decode()
    for measure in MEASURES:
        assert f"Relevance {measure}<" in page or f"Relevance {measure}</a>" in page
    best_ap = max((row for row in expected if row["measure"] == "AP"), key=lambda row: row["mean"])
    assert f"{best_ap['mean']:.4f}" in page
    assert client.get(reverse("assessments:leaderboard_csv", args=["many"]), {"measure": "nDCG@5,AP"}).content.decode().count(
        "run,team,kind"
    ) == 1
