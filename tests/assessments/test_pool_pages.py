"""The pool page: statistics, preview, building as a job, export, and who may see any of it."""

import re

import pytest
from django.urls import reverse

from assessments.models import Job, PoolEntry
from assessments.services.pooling import PoolSpec, build_pool
from tests.assessments.pool_fixtures import add_run, ranked
from tests.factories import TopicFactory


@pytest.fixture
def topics(campaign):
    return [TopicFactory(campaign=campaign, number=str(n), position=n, title=f"Topic {n}") for n in (51, 52)]


@pytest.fixture
def runs(campaign, topics):
    add_run(campaign, "alpha", {topics[0]: ranked("a", 10), topics[1]: ranked("b", 10)})
    beta_51 = [(f"a-{i:03d}", i, 10.0 - i) for i in (1, 2, 3)] + [(f"c-{i:03d}", i, 10.0 - i) for i in range(4, 11)]
    add_run(campaign, "beta", {topics[0]: beta_51, topics[1]: ranked("d", 10)})


def url(name, campaign, *args):
    return reverse(f"assessments:{name}", args=[campaign.slug, *args])


class TestPoolPage:
    def test_it_shows_the_statistics(self, client, organiser, campaign, runs):
        build_pool(campaign=campaign, spec=PoolSpec(depth=5))
        client.force_login(organiser)

        response = client.get(url("pool", campaign))

        assert response.status_code == 200
        stats = response.context["stats"]
        assert [(t.number, t.size, t.missing) for t in stats.topics] == [("51", 7, 7), ("52", 10, 10)]
        assert [(r.tag, r.unique) for r in stats.runs] == [("alpha", 7), ("beta", 7)]
        page = response.content.decode()
        assert "missing from the collection" in page and "a-001" in page

    def test_its_query_count_does_not_grow_with_the_pool(self, client, organiser, campaign, topics, django_assert_max_num_queries):
        for n in range(6):
            add_run(campaign, f"run{n}", {t: ranked(f"{t.number}-{n}", 40) for t in topics})
        build_pool(campaign=campaign, spec=PoolSpec(depth=30))
        client.force_login(organiser)

        with django_assert_max_num_queries(10):
            response = client.get(url("pool", campaign))

        assert response.context["stats"].size == 360

    def test_a_preview_shows_the_cost_and_changes_nothing(self, client, organiser, campaign, runs):
        client.force_login(organiser)

        response = client.get(url("pool", campaign), {"strategy": "depth", "depth": 5, "order": "both"})

        preview = response.context["preview"]
        assert preview.added == 17 and [t.added for t in preview.topics] == [7, 10]
        assert "Preview: depth 5 (rank ∪ score)" in response.content.decode()
        assert not PoolEntry.objects.exists()

    def test_the_preview_carries_the_button_that_builds_it(self, client, organiser, campaign, runs, django_capture_on_commit_callbacks):
        client.force_login(organiser)
        response = client.get(url("pool", campaign), {"strategy": "depth", "depth": 2, "order": "rank", "runs": ["beta"]}, HTTP_HX_REQUEST="true")
        body = response.content.decode()
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', body))
        assert fields.pop("csrfmiddlewaretoken")
        assert fields == {"strategy": "depth", "depth": "2", "order": "rank", "runs": "beta"}

        with django_capture_on_commit_callbacks(execute=True):
            client.post(url("pool_build", campaign), fields)

        assert set(PoolEntry.objects.values_list("document__doc_id", flat=True)) == {"a-001", "a-002", "d-001", "d-002"}

    def test_htmx_gets_only_the_preview(self, client, organiser, campaign, runs):
        client.force_login(organiser)

        response = client.get(url("pool", campaign), {"strategy": "rbp", "budget": 4, "order": "score"}, HTTP_HX_REQUEST="true")

        body = response.content.decode()
        assert response.templates[0].name == "assessments/pool_preview.html"
        assert "<html" not in body and "RBP p=0.8 up to 4 per topic (score)" in body

    def test_a_bad_choice_is_explained(self, client, organiser, campaign, runs):
        client.force_login(organiser)

        response = client.get(url("pool", campaign), {"strategy": "rbp", "depth": 5, "order": "both"})

        assert "needs a positive budget" in response.content.decode()
        assert response.context["preview"] is None


class TestBuildingFromThePage:
    def test_build_runs_as_a_job_and_redirects(self, client, organiser, campaign, runs, django_capture_on_commit_callbacks):
        client.force_login(organiser)

        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(url("pool_build", campaign), {"strategy": "depth", "depth": 3, "order": "rank", "runs": ["beta"]})

        assert response.status_code == 302 and response.url == url("pool", campaign)
        job = Job.objects.get(kind="build_pool")
        assert job.status == "succeeded", job.errors
        assert job.params == {"strategy": "depth", "depth": 3, "budget": None, "order": "rank", "runs": ["beta"]}
        assert job.created_by == organiser
        assert job.result["added"] == 6 and job.done == job.total > 0
        assert set(PoolEntry.objects.values_list("document__doc_id", flat=True)) == {"a-001", "a-002", "a-003", "d-001", "d-002", "d-003"}

    def test_htmx_build_answers_with_the_job_panel(self, client, organiser, campaign, runs, django_capture_on_commit_callbacks):
        client.force_login(organiser)

        with django_capture_on_commit_callbacks(execute=False):
            response = client.post(url("pool_build", campaign), {"strategy": "depth", "depth": 5, "order": "both"}, HTTP_HX_REQUEST="true")

        job = Job.objects.get(kind="build_pool")
        assert response.status_code == 200
        assert f'hx-get="{reverse("assessments:job", args=[campaign.slug, job.pk])}"' in response.content.decode()

    def test_the_page_shows_the_last_builds_summary(self, client, organiser, campaign, runs, django_capture_on_commit_callbacks):
        client.force_login(organiser)
        with django_capture_on_commit_callbacks(execute=True):
            client.post(url("pool_build", campaign), {"strategy": "depth", "depth": 5, "order": "both"})

        response = client.get(url("pool", campaign))

        body = response.content.decode()
        assert "Succeeded" in body and "depth 5 (rank ∪ score): added 17 documents, 17 in the pool over 2 topics" in body
        assert "every 1s" not in body  # finished: no more polling

    def test_an_invalid_build_queues_nothing(self, client, organiser, campaign, runs):
        client.force_login(organiser)

        response = client.post(url("pool_build", campaign), {"strategy": "maxmean", "depth": 5, "order": "both"}, follow=True)

        assert not Job.objects.exists()
        assert "needs a positive budget" in response.content.decode()


def test_the_export_is_a_text_download(client, organiser, campaign, runs):
    build_pool(campaign=campaign, spec=PoolSpec(depth=1))
    client.force_login(organiser)

    response = client.get(url("pool_export", campaign))

    assert response["Content-Disposition"] == 'attachment; filename="touche22-pool.txt"'
    assert b"".join(response.streaming_content).decode() == "51 a-001\n52 b-001\n52 d-001\n"


@pytest.mark.parametrize("name, method", [("pool", "get"), ("pool_build", "post"), ("pool_export", "get")])
@pytest.mark.parametrize("who", ["alice", "mallory"])
def test_assessors_cannot_reach_the_pool(client, request, campaign, runs, name, method, who):
    client.force_login(request.getfixturevalue(who))

    response = getattr(client, method)(url(name, campaign), {"strategy": "depth", "depth": 5, "order": "both"})

    assert response.status_code == 404
    assert not Job.objects.exists()


def test_an_anonymous_visitor_is_sent_to_log_in(client, campaign):
    response = client.get(url("pool", campaign))

    assert response.status_code == 302 and "/accounts/login/" in response.url
