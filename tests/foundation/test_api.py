"""The API skeleton: session and token authentication, organiser-only campaign endpoints, an OpenAPI schema."""

import re

import pytest
from django.contrib.staticfiles import finders
from rest_framework.test import APIClient

from accounts.tokens import create_token
from assessments.labels import LabelScheme

pytestmark = pytest.mark.django_db


def test_an_organiser_lists_campaigns_with_a_token(organiser, campaign):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {create_token(organiser)[1]}")
    response = client.get("/api/campaigns/")
    assert response.status_code == 200
    assert [c["slug"] for c in response.json()["results"]] == ["touche22"]
    scheme = response.json()["results"][0]["scheme"]
    assert scheme["version"] == 2 and LabelScheme.from_json(scheme).values("stance")[0] == "FIRST"


def test_an_organiser_reads_one_campaign_with_a_session(client, organiser, campaign):
    client.force_login(organiser)
    response = client.get("/api/campaigns/touche22/")
    assert response.status_code == 200
    assert response.json()["preset"] == "touche-2022-task2"


@pytest.mark.parametrize(("who", "status"), [("anonymous", 401), ("alice", 403)])
def test_campaign_endpoints_refuse_anonymous_and_assessors(who, status, alice, campaign):
    client = APIClient()
    if who == "alice":
        client.credentials(HTTP_AUTHORIZATION=f"Token {create_token(alice)[1]}")
    assert client.get("/api/campaigns/").status_code == status


def test_a_bad_token_is_refused():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/campaigns/").status_code == 401


def test_the_openapi_schema_describes_the_api(client, alice):
    assert client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").status_code == 401
    client.force_login(alice)
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "Touchstone API"
    assert "/api/campaigns/{slug}/" in schema["paths"]
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])


def test_the_api_docs_need_a_login_and_load_nothing_from_elsewhere(client, alice):
    response = client.get("/api/docs/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(alice)
    page = client.get("/api/docs/").content.decode()
    scripts = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any(url.endswith("swagger-ui-bundle.js") for url in scripts), scripts
    assert all(url.startswith("/static/") for url in scripts), scripts  # the sidecar's files, not a CDN's
    assert "validatorUrl" in page and "//validator." not in page
    for url in scripts:  # and they are really there, so the page works offline
        assert finders.find(url.removeprefix("/static/")), url
