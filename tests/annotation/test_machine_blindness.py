"""Blind by construction: an assessor whose campaign has machine labels never meets one. Every address of the site an
assessor's session can ask for (every page, htmx part, API endpoint and export, found by walking the URL
configuration rather than listed by hand) is fetched with her real ids before and after she saves her own label,
and no answer carries the judge's name, model, labels' reason, raw answer or error (reveal_machine_labels off,
the default)."""

import itertools
import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from assessments.models import Assignment, Job, MachineJudge, MachineLabel

pytestmark = pytest.mark.django_db

MARKERS = ("oracle-quokka", "model-zebra-9", "QUOKKA-REASON-71", "ZEBRA-RAW-ANSWER-42", "PLATYPUS-ERROR-13")
_ROUTE_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")
_REGEX_PARAMETER = re.compile(r"\(\?P<(\w+)>[^)]*\)")


def routes(patterns=None, prefix=""):
    """Every address the URL configuration answers, as a template with {name} for each parameter (the API router's
    regular expressions too; a format suffix is left out, as it names no other resource)."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        part = str(pattern.pattern)
        if isinstance(pattern.pattern, RoutePattern):
            part = _ROUTE_PARAMETER.sub(r"{\1}", part)
        else:
            if "(?P<format>" in part:
                continue
            part = _REGEX_PARAMETER.sub(r"{\1}", part).removeprefix("^").removesuffix("$").replace("\\.", ".")
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, prefix + part)
        elif isinstance(pattern, URLPattern):
            assert not re.search(r"[\\^$()?*+\[\]]", prefix + part), prefix + part
            yield "/" + prefix + part


@pytest.fixture
def machine_labelled(campaign, pool, alice):
    """A judge of alice's campaign that labelled every pooled document and failed once, and its run's job."""
    judge = MachineJudge.objects.create(campaign=campaign, name="oracle-quokka", kind="endpoint", model="model-zebra-9",
                                        base_url="http://127.0.0.1:9/v1", key_name="ORACLE_KEY")
    job = Job.objects.create(campaign=campaign, kind="machine_judge", params={"judge": judge.pk}, status="succeeded",
                             message="oracle-quokka: 3 labels, 1 failed calls")
    for entry in pool:
        MachineLabel.objects.create(
            judge=judge, job=job, topic=entry.topic, document=entry.document, dimension="relevance", status="ok",
            labels={"relevance": 2}, model=judge.model, prompt_version=1, reason="QUOKKA-REASON-71: it compares them.",
            raw_answer="ZEBRA-RAW-ANSWER-42\n##final answer: 2",
        )
    MachineLabel.objects.create(judge=judge, job=job, topic=pool[0].topic, document=pool[0].document, dimension="quality",
                                status="failed", model=judge.model, error="PLATYPUS-ERROR-13: HTTP 500")
    assert not campaign.reveal_machine_labels
    return judge, job


def values(alice, campaign, pool, job) -> dict[str, list]:
    """Her own ids (and the campaign's, the judge's and its job's) for every parameter an address takes."""
    assignment = Assignment.objects.get(assessor=alice, topic=pool[0].topic)
    return {
        "assignment_id": [assignment.pk], "position": [1, 2, 3], "entry_id": [entry.pk for entry in pool],
        "document_id": [entry.document_id for entry in pool], "slug": [campaign.slug], "job_id": [job.pk],
        "name": ["oracle-quokka"], "judge": ["oracle-quokka"], "topic": ["1"], "dimension": ["relevance"], "username": ["alice"],
    }


def addresses(known: dict[str, list]) -> list[str]:
    found = []
    for template in routes():
        names = _ROUTE_PARAMETER.findall(template.replace("{", "<").replace("}", ">"))
        for chosen in itertools.product(*(known.get(name, ["1"]) for name in names)):
            found.append(template.format(**dict(zip(names, map(str, chosen)))))
    return found


def leaks(response) -> list[str]:
    """The machine markers in an answer's body or headers."""
    body = b"".join(response.streaming_content) if response.streaming else response.content
    text = body.decode("utf-8", "replace") + " ".join(f"{k}: {v}" for k, v in response.items())
    return [marker for marker in MARKERS if marker in text]


def fetch_everything(client, urls) -> dict[str, int]:
    """GET each address (a page also as htmx asks for its part, an API endpoint also as JSON); fail on any machine
    label; the statuses."""
    statuses = {}
    for url in urls:
        variant = {"HTTP_ACCEPT": "application/json"} if url.startswith("/api/") else {"HTTP_HX_REQUEST": "true"}
        for headers in ({}, variant) if not url.startswith("/admin/") else ({},):  # the admin site is staff's only
            response = client.get(url, **headers)
            assert response.status_code < 500, (url, headers, response.status_code)
            assert not leaks(response), (url, headers, leaks(response))
            statuses.setdefault(url, response.status_code)
    return statuses


def test_an_assessor_meets_no_machine_label_before_or_after_saving_her_own(client, campaign, pool, alice, organiser, machine_labelled):
    _, job = machine_labelled
    known = values(alice, campaign, pool, job)
    urls = addresses(known)
    client.force_login(alice)
    assignment_id = known["assignment_id"][0]

    before = fetch_everything(client, urls)
    # The walk reached her work, the judge page with each document, and the assessor API, not just refusals.
    reached = [f"/work/{assignment_id}/{position}/" for position in (1, 2, 3)]
    reached += ["/work/", f"/api/work/{assignment_id}/", f"/api/work/{assignment_id}/queue/",
                *(f"/api/work/{assignment_id}/items/{entry.pk}/" for entry in pool)]
    assert all(before[url] == 200 for url in reached), {url: before.get(url) for url in reached}
    assert any(url.startswith("/api/campaigns/") for url in before) and any("machine-judges" in url for url in before)

    for entry in pool:
        saved = client.put(f"/api/work/{assignment_id}/items/{entry.pk}/judgment/", {"labels": {"relevance": 0}},
                           content_type="application/json")
        assert saved.status_code == 200, saved.content
        assert not [marker for marker in MARKERS if marker in saved.content.decode()]

    after = fetch_everything(client, urls)
    assert after.keys() == before.keys()
    assert all(after[url] == 200 for url in reached)

    # The markers are there to be found: the campaign's organiser meets them on the judge's labels.
    client.force_login(organiser)
    assert set(leaks(client.get(f"/campaigns/{campaign.slug}/machine-judges/oracle-quokka/labels/"))) == set(MARKERS)
