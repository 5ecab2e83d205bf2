"""A property-based run over every operation of the API (Schemathesis): generated requests, sent to the app
in-process over WSGI as an organiser, an assessor and an admin (each with a token), never answer 5xx and always
answer as the schema says (a documented status, content type, headers and body).

The schema is the app's own, read from /api/schema/ with the token, as a script reads it. Random slugs and ids
would only ever meet 404s, so in four cases out of five each path parameter, and each query or body field that names
something (topics, assessors, runs, a rule, a measure …), is swapped for one of the campaign's real ones: the
requests then reach the services and their answers, not only the lookups. Hypothesis runs derandomised, so a
run is repeatable, and each operation gets a bounded number of cases per generation mode.

Each request runs in a savepoint rolled back afterwards: every case meets the same campaign (an archive, a phase
step or a member removed does not change the cases after it), and no queued job is dispatched.
"""

from collections.abc import Iterator

import hypothesis
import pytest
import schemathesis
from django.core import signals
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, Phase, given
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks
from schemathesis.errors import FailureGroup

from accounts.tokens import create_token
from assessments.management.commands.load_demo import DEMO
from assessments.models import Assignment, Campaign, Job, PoolEntry
from assessments.services.imports.uploads import start_import
from tests.foundation.test_api_endpoints import cast, touche20  # noqa: F401  (the fixtures: the named cast and campaign)

pytestmark = pytest.mark.django_db

CHECKS = [
    checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
    checks.response_headers_conformance, checks.response_schema_conformance,
]
# Cases per operation, role and mode: about fifty operations, three roles and two modes keep the run near a minute.
CASES = {GenerationMode.POSITIVE: 10, GenerationMode.NEGATIVE: 4}
LABELS = [{"relevance": 2, "quality": 1, "stance": "FIRST"}, {"relevance": 0}, {"relevance": 1, "stance": "NO"}]


@pytest.fixture
def wsgi_app(settings):
    """The app as a server runs it. Django's test client keeps a request from closing the test's connection, whose
    transaction holds the campaign; a WSGI client does not, so the same is done here."""
    settings.ALLOWED_HOSTS = ["localhost"]  # Schemathesis's WSGI client
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    yield get_wsgi_application()
    for signal in (signals.request_started, signals.request_finished):
        signal.connect(close_old_connections)


def real_values(campaign: Campaign, who: str, job: Job) -> tuple[dict[str, list], dict[str, list]]:
    """What path parameters, and query and body fields, may be swapped for: the campaign's own names and ids (for an
    assessor, her active assignments and their documents)."""
    assignments = Assignment.objects.filter(topic__campaign=campaign)
    if who == "alice":
        assignments = assignments.filter(assessor__username="alice", active=True)
    entries = PoolEntry.objects.filter(topic__in=assignments.values("topic"))
    topics = list(campaign.topics.values_list("number", flat=True))
    tags = list(campaign.runs.values_list("tag", flat=True))
    path = {
        "slug": [campaign.slug], "assignment_id": list(assignments.values_list("pk", flat=True)),
        "entry_id": list(entries.values_list("pk", flat=True)), "job_id": [job.pk], "number": [1], "older": [1],
        "newer": [1], "username": ["olivia", "bob", "ada"],
    }
    fields = {
        "topics": topics, "topic": topics, "assessors": ["alice", "bob"], "runs": tags, "a": tags, "b": tags,
        "kind": ["relevance", "quality"], "rule": ["majority", "max", "adjudicated", "assessor:alice"],
        "measure": ["nDCG@5", "P@10", "AP"], "round": [1], "confirm": ["main"], "labels": LABELS,
        "preset": ["touche-2022-task2"], "username": ["bob", "ada"],
    }
    return path, fields


def swap_for_real(case, data: st.DataObject, path: dict[str, list], fields: dict[str, list]) -> None:
    """Swap, each with odds of four in five, the case's path parameters and named query and body fields for real
    values."""
    body = case.body if isinstance(case.body, dict) else None
    for container, values in ((case.path_parameters, path), (case.query, fields), (body, fields)):
        for name, generated in list((container or {}).items()):
            if name not in values or data.draw(st.integers(0, 4), label=f"real {name}") == 0:
                continue
            real = st.sampled_from(values[name])
            container[name] = data.draw(st.lists(real, min_size=1, max_size=3) if isinstance(generated, list) else real)


def failures_of(operation, auth: dict, values: tuple[dict[str, list], dict[str, list]]) -> Iterator[str]:
    for mode, cases in CASES.items():
        @hypothesis.settings(max_examples=cases, deadline=None, database=None, derandomize=True, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=mode), data=st.data())
        def run(case, data):
            swap_for_real(case, data, *values)
            with transaction.atomic():
                response = case.call(headers=auth)
                transaction.set_rollback(True)
            case.validate_response(response, checks=CHECKS, headers=auth)

        try:
            run()
        except Unsatisfiable:  # no request breaks the schema of an operation without a body or typed parameters
            if mode != GenerationMode.NEGATIVE:
                raise
        except (AssertionError, FailureGroup) as exc:  # a check's Failure, or several at once
            yield f"{operation.label} ({mode.value}): {exc}"


@pytest.mark.parametrize("who", ["olivia", "alice", "ada"], ids=["organiser", "assessor", "admin"])
def test_every_operation_answers_as_its_schema_says(who, cast, touche20, wsgi_app):  # noqa: F811
    topics = SimpleUploadedFile("topics.xml", (DEMO / "topics.xml").read_bytes())
    job = start_import(kind="import_topics", campaign=touche20, uploads=[topics], created_by=cast["olivia"])  # queued
    auth = {"Authorization": f"Token {create_token(cast[who])[1]}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app, headers=auth)
    values = real_values(touche20, who, job)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 50
    failures = [failure for operation in operations for failure in failures_of(operation, auth, values)]
    assert not failures, "\n\n".join(failures)
