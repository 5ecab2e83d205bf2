"""The machine judges pages, by role: an organiser adds a judge (an endpoint, or the local one that says it is weak),
edits a prompt into a new version, sees a run's cost before starting it, starts and cancels runs, and browses the
labels with their provenance; assessors and other campaigns' organisers reach none of it; a key is never shown."""

import pytest
from django.urls import reverse

from assessments.models import Job, JudgePrompt, MachineJudge, MachineLabel
from assessments.services import machine_judges
from tests.chat_server import chat_server

pytestmark = pytest.mark.django_db

KEY = "sk-live-never-shown-7Qx2"


@pytest.fixture(autouse=True)
def _key_in_the_environment(settings, monkeypatch):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)


@pytest.fixture
def signed_in(client, organiser):
    client.force_login(organiser)
    return client


def add_endpoint(campaign, url="http://127.0.0.1:9/v1", name="test-model"):
    return machine_judges.add_judge(campaign=campaign, name=name, kind="endpoint", model="test-model", base_url=url,
                                    key_name="TEST_JUDGE_KEY", by=None)


def urls(campaign, judge) -> dict[str, tuple[str, str]]:
    """Every machine judges page and action of the campaign, with its method."""
    args = [campaign.slug, judge.name]
    return {
        "judges": ("get", reverse("assessments:machine_judges", args=[campaign.slug])),
        "add": ("post", reverse("assessments:machine_judges", args=[campaign.slug])),
        "judge": ("get", reverse("assessments:machine_judge", args=args)),
        "estimate": ("get", reverse("assessments:machine_judge", args=args) + "?estimate=1"),
        "run": ("post", reverse("assessments:machine_judge_run", args=args)),
        "calibrate": ("post", reverse("assessments:machine_judge_calibrate", args=args)),
        "labels": ("get", reverse("assessments:machine_judge_labels", args=args)),
        "prompt": ("post", reverse("assessments:machine_judge_prompt", args=[*args, "relevance"])),
    }


@pytest.mark.parametrize("who", ["alice", "oscar"])
def test_assessors_and_other_campaigns_organisers_reach_nothing(client, campaign, pool, alice, oscar, who):
    judge = add_endpoint(campaign)
    client.force_login({"alice": alice, "oscar": oscar}[who])
    for name, (method, url) in urls(campaign, judge).items():
        data = {"name": "x", "kind": "local", "template": "t", "answers": "{}", "in_flight": 1, "per_minute": 0, "max_attempts": 1}
        response = getattr(client, method)(url, data) if method == "post" else client.get(url)
        assert response.status_code == 404, (name, response.status_code)
    assert list(MachineJudge.objects.values_list("name", flat=True)) == ["test-model"] and not Job.objects.exists()
    assert JudgePrompt.objects.filter(version=2).count() == 0


def test_an_organiser_adds_an_endpoint_judge_naming_its_key_variable(signed_in, campaign, pool):
    response = signed_in.post(reverse("assessments:machine_judges", args=[campaign.slug]), {
        "kind": "endpoint", "name": "gpt4o", "base_url": "https://api.example.org/v1", "model": "gpt-4o",
        "key_name": "TEST_JUDGE_KEY", "parameters": '{"temperature": 0, "max_tokens": 200}', "in_flight": 8,
        "per_minute": 120, "max_attempts": 3,
    })

    assert response.status_code == 302 and response["Location"] == reverse("assessments:machine_judge", args=[campaign.slug, "gpt4o"])
    judge = MachineJudge.objects.get()
    assert (judge.kind, judge.model, judge.key_name, judge.in_flight, judge.per_minute) == ("endpoint", "gpt-4o", "TEST_JUDGE_KEY", 8, 120)
    assert judge.parameters == {"temperature": 0, "max_tokens": 200}
    assert sorted(judge.prompts.values_list("dimension", "version")) == [("quality", 1), ("relevance", 1), ("stance", 1)]
    listing = signed_in.get(reverse("assessments:machine_judges", args=[campaign.slug])).content.decode()
    for shown in ("gpt4o", "gpt-4o", "https://api.example.org/v1", "$TEST_JUDGE_KEY", ">8<", ">120<"):
        assert shown in listing, shown


def test_a_key_pasted_instead_of_its_variable_is_refused_and_never_sent_back(signed_in, campaign):
    response = signed_in.post(reverse("assessments:machine_judges", args=[campaign.slug]), {
        "kind": "endpoint", "name": "leaky", "base_url": "https://api.example.org/v1", "model": "m", "key_name": KEY,
        "in_flight": 4, "per_minute": 0, "max_attempts": 4,
    })

    assert response.status_code == 400 and not MachineJudge.objects.exists()
    page = response.content.decode()
    assert "never the key itself" in page and KEY not in page


def test_the_local_judge_says_plainly_that_it_is_weak(signed_in, campaign, pool):
    response = signed_in.post(reverse("assessments:machine_judges", args=[campaign.slug]),
                              {"kind": "local", "name": "local", "in_flight": 1, "per_minute": 0, "max_attempts": 1})
    assert response.status_code == 302
    page = signed_in.get(response["Location"]).content.decode()
    assert "is a weak judge: it only measures how similar a document" in page and "calibrated on the topics the assessors have judged" in page
    assert "not calibrated yet" in page and "prompt v" not in page  # it has thresholds, not prompts
    prompt = reverse("assessments:machine_judge_prompt", args=[campaign.slug, "local", "relevance"])
    assert signed_in.post(prompt, {"template": "t", "answers": '{"0": 0}'}).status_code == 404
    assert not JudgePrompt.objects.exists()


def test_a_prompt_edit_is_version_2_and_version_1_stays_readable(signed_in, campaign, pool):
    judge = add_endpoint(campaign)
    first = JudgePrompt.objects.get(judge=judge, dimension="relevance")
    url = reverse("assessments:machine_judge_prompt", args=[campaign.slug, judge.name, "relevance"])

    response = signed_in.post(url, {"system": first.system, "template": first.template + "\nBe strict.",
                                    "answers": '{"0": 0, "1": 1, "2": 2, "3": 2}'})

    assert response.status_code == 302
    assert list(JudgePrompt.objects.filter(judge=judge, dimension="relevance").values_list("version", flat=True)) == [2, 1]
    second = JudgePrompt.objects.get(judge=judge, dimension="relevance", version=2)
    assert second.template.endswith("Be strict.") and second.answers == {"0": 0, "1": 1, "2": 2, "3": 2}
    page = signed_in.get(reverse("assessments:machine_judge", args=[campaign.slug, judge.name])).content.decode()
    assert "version 2</span>" in page and "Older versions (1), read only" in page
    older = page[page.index("Older versions (1)"):]
    assert "Version 1" in older and "0 → 0, 1 → 1, 2 → 2</span>" in older and first.template[:80] in older
    # Saving it unchanged makes no version 3 (the next run would ask every document again for nothing).
    again = signed_in.post(url, {"system": second.system, "template": second.template, "answers": '{"0": 0, "1": 1, "2": 2, "3": 2}'},
                           follow=True)
    assert "The relevance prompt is unchanged: no new version." in again.content.decode()
    assert JudgePrompt.objects.filter(judge=judge, dimension="relevance").count() == 2
    refused = signed_in.post(url, {"system": "", "template": "t", "answers": '{"yes": 5}'})
    assert refused.status_code == 400 and "not a value of relevance" in refused.content.decode()
    assert JudgePrompt.objects.filter(judge=judge, dimension="relevance").count() == 2


def test_the_cost_estimate_is_shown_before_anything_starts(signed_in, campaign, pool):
    judge = add_endpoint(campaign)
    url = reverse("assessments:machine_judge", args=[campaign.slug, judge.name])

    part = signed_in.get(url, {"estimate": "1", "dimensions": "relevance"}, HTTP_HX_REQUEST="true")

    assert part.templates[0].name == "assessments/machine_judges_estimate.html"
    html = part.content.decode()
    tokens = machine_judges.plan(judge=judge, dimensions=["relevance"]).prompt_tokens
    assert "<strong>3</strong> calls" in html and f"<strong>{tokens:,}</strong> prompt" in html and "Start: 3 calls" in html
    assert not Job.objects.exists()
    refused = signed_in.get(url, {"estimate": "1", "topic": "9"}, HTTP_HX_REQUEST="true")  # not one of the topics
    assert "topic" in refused.content.decode() and "Start:" not in refused.content.decode()


def test_starting_a_run_labels_the_pool_and_the_page_follows_its_job(signed_in, campaign, pool, django_capture_on_commit_callbacks):
    with chat_server() as server:
        judge = add_endpoint(campaign, server.url)
        with django_capture_on_commit_callbacks(execute=True):
            started = signed_in.post(reverse("assessments:machine_judge_run", args=[campaign.slug, judge.name]),
                                     {"dimensions": "relevance"}, HTTP_HX_REQUEST="true")
    assert started.status_code == 200 and started.templates[0].name == "assessments/_job_status.html"
    job = Job.objects.get()
    assert (job.kind, job.status, job.params["estimate"]["calls"], job.result["labelled"]) == ("machine_judge", "succeeded", 3, 3)
    assert server.calls == 3 and MachineLabel.objects.filter(job=job, status="ok").count() == 3

    page = signed_in.get(reverse("assessments:machine_judge", args=[campaign.slug, judge.name]))
    assert page.context["job"] == job and "test-model: 3 labels, 0 failed calls" in page.content.decode()
    labels = signed_in.get(reverse("assessments:machine_judge_labels", args=[campaign.slug, judge.name])).content.decode()
    row = MachineLabel.objects.first()
    for provenance in (row.document.doc_id, row.reason, "##final answer:", "prompt v1", "test-model", f"job #{job.pk}"):
        assert provenance in labels, provenance
    failed = signed_in.get(reverse("assessments:machine_judge_labels", args=[campaign.slug, judge.name]), {"status": "failed"})
    assert failed.context["page"].paginator.count == 0


def test_a_run_is_cancelled_from_the_page(signed_in, campaign, pool):
    judge = add_endpoint(campaign)
    signed_in.post(reverse("assessments:machine_judge_run", args=[campaign.slug, judge.name]), {})  # queued: no worker here
    job = Job.objects.get()
    page = signed_in.get(reverse("assessments:machine_judge", args=[campaign.slug, judge.name])).content.decode()
    cancel = reverse("assessments:job_cancel", args=[campaign.slug, job.pk])
    assert f'action="{cancel}"' in page and job.status == "queued"

    response = signed_in.post(cancel)

    assert response.status_code == 302 and response["Location"].startswith(reverse("assessments:machine_judges", args=[campaign.slug]))
    job.refresh_from_db()
    assert job.status == "cancelled" and not MachineLabel.objects.exists()


def test_no_page_ever_shows_the_key(signed_in, campaign, pool, django_capture_on_commit_callbacks):
    with chat_server(failures=[401] * 3) as server:
        judge = add_endpoint(campaign, server.url)
        with django_capture_on_commit_callbacks(execute=True):
            signed_in.post(reverse("assessments:machine_judge_run", args=[campaign.slug, judge.name]), {"dimensions": "relevance"})
    assert {r["authorization"] for r in server.requests} == {f"Bearer {KEY}"}  # it was used
    seen = [signed_in.get(url) for method, url in urls(campaign, judge).values() if method == "get"]
    seen.append(signed_in.get(reverse("assessments:job", args=[campaign.slug, Job.objects.get().pk])))
    seen.append(signed_in.get(reverse("assessments:timeline", args=[campaign.slug])))
    assert all(response.status_code == 200 for response in seen)
    assert not [response for response in seen if KEY in response.content.decode()]


def test_the_hub_links_the_machine_judges(signed_in, campaign):
    page = signed_in.get(reverse("assessments:campaign", args=[campaign.slug])).content.decode()
    assert f'href="{reverse("assessments:machine_judges", args=[campaign.slug])}"' in page


def test_the_labels_page_costs_the_same_queries_however_many_labels(signed_in, campaign, pool, django_assert_max_num_queries):
    judge = add_endpoint(campaign)
    url = reverse("assessments:machine_judge_labels", args=[campaign.slug, judge.name])

    def label(entry, n):
        MachineLabel.objects.create(judge=judge, topic=entry.topic, document=entry.document, dimension="relevance", status="ok",
                                    labels={"relevance": n % 3}, model="test-model", prompt_version=1, reason=f"because {n}")

    label(pool[0], 0)
    with django_assert_max_num_queries(12) as few:
        signed_in.get(url)
    for n in range(60):
        label(pool[n % 3], n)
    with django_assert_max_num_queries(len(few)):
        assert signed_in.get(url).context["page"].paginator.count == 61
