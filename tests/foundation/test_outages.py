"""A lost database: requests answer 503 with Retry-After (JSON under /api/), the log says so once per outage,
and the first request after the database is back works again.

Nothing here is mocked: the test's connection is really ended by the server (pg_terminate_backend), or really
pointed at a port where nothing listens, as a restart or an unreachable host would.
"""

import logging
import socket
from contextlib import contextmanager

import psycopg2
import pytest
from django.db import OperationalError, close_old_connections, connection
from django.test import RequestFactory

from touchstone.outages import is_database_outage, server_error

pytestmark = pytest.mark.django_db(transaction=True)

API = "/api/campaigns/"


@pytest.fixture
def log(caplog):
    caplog.set_level(logging.INFO)
    return caplog


def said(caplog) -> list[tuple[str, str, str]]:
    """What the outage logger and Django's request logger wrote (the latter must stay quiet)."""
    return [(r.name, r.levelname, r.getMessage()) for r in caplog.records if r.name in ("touchstone.outages", "django.request")]


def terminate(pid: int) -> None:
    """End a backend from another session, as an administrator or a failover does."""
    params = connection.settings_dict
    other = psycopg2.connect(dbname=params["NAME"], user=params["USER"], host=params["HOST"], port=params["PORT"] or 5432)
    other.autocommit = True
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    other.close()


@contextmanager
def database_down():
    """The next connections go to a port where nothing listens (a stopped or unreachable server)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = closed_port
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["PORT"] = port


def test_a_connection_the_server_ended_answers_json_503_and_the_next_request_reconnects(api, log):
    assert api.get(API).status_code == 200
    terminate(connection.connection.info.backend_pid)

    refused = api.get(API)

    assert refused.status_code == 503
    assert refused["Retry-After"] == "10"
    assert refused.json() == {"detail": "The database is unavailable; try again in a few seconds."}
    close_old_connections()  # what the end of the request does under a real server (the test client skips it)
    assert api.get(API).status_code == 200
    (outage, back) = said(log)
    assert outage[:2] == ("touchstone.outages", "ERROR") and outage[2].startswith("database unavailable, answering 503")
    assert back == ("touchstone.outages", "WARNING", "database available again after 0 s; 1 requests were answered 503")


def test_while_the_database_is_down_every_request_answers_503_and_the_log_says_so_once(api, client, organiser, log):
    client.force_login(organiser)
    with database_down():
        answers = [api.get(API) for _ in range(5)] + [api.get(f"{API}touche22/")]
        page = client.get("/campaigns/")

    assert [a.status_code for a in answers] == [503] * 6
    assert all(a["Content-Type"] == "application/json" and a["Retry-After"] == "10" for a in answers)
    assert page.status_code == 503 and page["Retry-After"] == "10"
    assert "Back in a moment" in page.content.decode() and "<html" in page.content.decode()
    assert [(name, level) for name, level, _ in said(log)] == [("touchstone.outages", "ERROR")]
    assert said(log)[0][2].startswith("database unavailable, answering 503 until it is back: connection to server at")

    assert api.get(API).status_code == 200
    assert said(log)[1] == ("touchstone.outages", "WARNING", "database available again after 0 s; 7 requests were answered 503")


def test_an_outage_met_outside_a_view_answers_503_too(log):
    """handler500 sees the exception, e.g. a session saved by middleware after the view."""
    request = RequestFactory().get("/api/campaigns/")
    with database_down():
        try:
            connection.ensure_connection()
        except OperationalError:
            response = server_error(request)
    assert (response.status_code, response["Retry-After"]) == (503, "10")


def test_a_statement_that_fails_for_its_own_reasons_is_not_an_outage():
    """A timeout (or a deadlock, a constraint) is a 500 with its traceback: something to look at, not to wait out."""
    with pytest.raises(OperationalError) as caught, connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 1")
        try:
            cursor.execute("SELECT pg_sleep(1)")
        finally:
            cursor.execute("RESET statement_timeout")
    assert caught.value.__cause__.pgcode == "57014"
    assert not is_database_outage(caught.value)
