"""The judge-impact page and endpoint: the report the command prints, for the campaign's organisers only (an
assessor and another campaign's organiser are refused), with the results pages' rules on labels by name, and an
answer that matches the API's own schema."""

import json

import pytest
import schemathesis
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.tokens import create_token
from tests.assessments.judge_impact_campaign import build_campaign, label, machine_grades
from tests.foundation.test_api_schemathesis import CHECKS, wsgi_app  # noqa: F401  (the fixture: the app over WSGI)

pytestmark = pytest.mark.django_db
INFLATED = {j: 2 for j in range(15, 20)}


@pytest.fixture
def judged(campaign):
    judge = build_campaign(campaign, holes=frozenset({3}))
    label(judge, machine_grades(INFLATED))
    return campaign


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_page_shows_the_three_leaderboards_and_the_flags(client, organiser, judged, django_assert_num_queries):
    client.force_login(organiser)
    url = reverse("assessments:judge_impact", args=[judged.slug])
    # The session, user and campaign, the judges, and what the report reads once each whatever the number of runs
    # and topics: topics, human labels, runs, the machine's labels and their documents, the rankings.
    with django_assert_num_queries(13):
        page = client.get(url, {"top_k": 3})
    assert page.status_code == 200
    report = page.context["report"]
    assert report.favoured == ["r5"] and report.top_k == 3
    html = page.content.decode()
    assert "Machine qrels" in html and "Hybrid qrels" in html and "τ top 3" in html and "Favoured by the machine judge" in html
    assert '<td class="num warn">1 (-5)</td>' in html  # r5's rank under the machine, flagged


def test_the_page_says_why_there_is_no_report(client, organiser, campaign):
    client.force_login(organiser)
    page = client.get(reverse("assessments:judge_impact", args=[campaign.slug]))
    assert page.status_code == 400 and "has no machine judge yet" in page.content.decode()


@pytest.mark.parametrize("who", ["alice", "mallory", "oscar"])
def test_assessors_and_other_campaigns_organisers_do_not_reach_the_page(client, judged, request, who):
    client.force_login(request.getfixturevalue(who))
    assert client.get(reverse("assessments:judge_impact", args=[judged.slug])).status_code == 404


def test_the_endpoint_answers_the_commands_json(api, judged, command):
    answer = api.get(f"/api/campaigns/{judged.slug}/results/judge-impact/", {"measure": "nDCG@5", "top_k": 3})
    assert answer.status_code == 200
    assert answer.json() == json.loads(command("judge_impact", judged.slug, "--format", "json", "--top-k", "3").out)


@pytest.mark.parametrize(("who", "status"), [("alice", 403), ("mallory", 403), ("oscar", 404)])
def test_assessors_and_other_campaigns_organisers_get_no_report(judged, request, who, status):
    answer = api_as(request.getfixturevalue(who)).get(f"/api/campaigns/{judged.slug}/results/judge-impact/")
    assert answer.status_code == status
    if status == 404:
        assert answer.json() == {"detail": "No such campaign"}


def test_the_endpoint_keeps_the_results_pages_rules_and_says_what_is_missing(api, judged):
    url = f"/api/campaigns/{judged.slug}/results/judge-impact/"
    refused = api.get(url, {"rule": "assessor:anna"})  # one assessor's labels: admins and adjudicators only
    assert refused.status_code == 403
    unknown = api.get(url, {"judge": "nope"})
    assert unknown.status_code == 400 and "no machine judge named 'nope'" in unknown.json()["detail"]


def test_the_report_matches_the_operations_schema(organiser, judged, wsgi_app):  # noqa: F811
    auth = {"Authorization": f"Token {create_token(organiser)[1]}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app, headers=auth)
    operation = schema["/api/campaigns/{slug}/results/judge-impact/"]["GET"]
    case = operation.Case(path_parameters={"slug": judged.slug}, query={"top_k": 3})
    response = case.call(headers=auth)
    assert response.status_code == 200
    case.validate_response(response, checks=CHECKS, headers=auth)
