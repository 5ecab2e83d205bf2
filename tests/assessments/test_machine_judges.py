"""Machine judges against a real chat-completions server on loopback: labels by the server's rule with full
provenance, retries, recorded failures, resume without paying twice, conditions, and a key that never shows."""

import pytest
from django.db import IntegrityError, InternalError, connection, transaction

from assessments.models import AuditEvent, Job, Judgment, JudgmentEvent, MachineLabel
from assessments.services import machine_judges
from tests.chat_server import chat_server
from tests.factories import CampaignFactory, PoolEntryFactory, TopicFactory

KEY = "sk-test-never-shown-4f1c"


@pytest.fixture(autouse=True)
def _quick_backoff(settings, monkeypatch):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)


@pytest.fixture
def pooled(db):
    """Two topics of a 2022 Task 2 campaign (relevance, then quality and stance only when relevant), six documents
    whose text says the grade the server's rule gives them."""
    campaign = CampaignFactory(slug="machine", preset="touche-2022-task2")
    entries = []
    for number in ("1", "2"):
        topic = TopicFactory(campaign=campaign, number=number)
        for grade in (0, 1, 2):
            entries.append(PoolEntryFactory(topic=topic, document__body=f"Cats and dogs, GRADE{grade}." if grade else "Stock prices."))
    return campaign, entries


def _judge(campaign, url, **options):
    return machine_judges.add_judge(campaign=campaign, name="test-model", kind="endpoint", model="test-model", base_url=url,
                                    key_name="TEST_JUDGE_KEY", by=None, **options)


def test_labels_follow_the_endpoints_answers_with_their_provenance(pooled, command):
    campaign, entries = pooled
    with chat_server() as server:
        result = command("machine_judge", campaign.slug, "--endpoint", server.url, "--model", "test-model",
                         "--key-env", "TEST_JUDGE_KEY", "--kind", "relevance")
    assert result.code == 0, result.err
    assert "estimate: 6 calls (relevance 6)" in result.out
    assert server.calls == 6
    labels = {(row.topic.number, row.document.body): row for row in MachineLabel.objects.select_related("topic", "document")}
    assert {key: row.value for key, row in labels.items()} == {
        (e.topic.number, e.document.body): (int(e.document.body[-2]) if "GRADE" in e.document.body else 0) for e in entries
    }
    row = next(iter(labels.values()))
    assert row.status == "ok" and row.model == "test-model" and row.prompt_version == 1
    assert row.parameters == {"temperature": 0} and row.raw_answer.endswith(f"##final answer: {row.value}")
    assert row.reason.startswith("The document") and row.prompt_tokens > 0 and row.at is not None
    # Sent with the key in the header only; the model's parameters and the topic in the prompt.
    assert {r["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    assert server.requests[0]["body"]["temperature"] == 0
    assert "Which is better, cats or dogs?" in server.requests[0]["body"]["messages"][-1]["content"]
    # Never a human judgment.
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()


def test_the_key_is_never_stored_printed_or_recorded(pooled, command):
    campaign, _ = pooled
    with chat_server(failures=[401] * 6) as server:
        result = command("machine_judge", campaign.slug, "--endpoint", server.url, "--model", "test-model",
                         "--key-env", "TEST_JUDGE_KEY", "--kind", "relevance")
    stored = [str(v) for row in MachineLabel.objects.values() for v in row.values()]
    stored += [str(v) for row in AuditEvent.objects.values() for v in row.values()]
    stored += [str(v) for row in Job.objects.values() for v in row.values()]
    assert not any(KEY in text for text in [*stored, result.out, result.err])
    # A 401 is not retried (the same request fails the same way): one call per document, each a recorded failure.
    assert server.calls == 6 and MachineLabel.objects.filter(status="failed", attempts=1).count() == 6


def test_429_and_500_are_retried_then_recorded_as_failures(pooled):
    campaign, entries = pooled
    with chat_server(failures=[429, 500]) as server:
        judge = _judge(campaign, server.url, in_flight=1, max_attempts=3)
        machine_judges.run_judge(judge=judge, dimensions=["relevance"], topic="1")
        assert server.calls == 3 + 2  # the first document took three attempts, the others one each
        first = MachineLabel.objects.order_by("id").first()
        assert first.status == "ok" and first.attempts == 3
        server.failures.extend([503] * 3)
        machine_judges.run_judge(judge=judge, dimensions=["relevance"], topic="2")
    failed = MachineLabel.objects.filter(status="failed")
    assert failed.count() == 1 and failed[0].labels == {} and failed[0].attempts == 3
    assert "HTTP 503" in failed[0].error and "after 3 attempts" in failed[0].error


def test_an_answer_outside_the_scheme_is_a_failure_never_a_label(pooled):
    campaign, _ = pooled
    with chat_server(answer=lambda prompt: "Very relevant.\n##final answer: 7") as server:
        summary = machine_judges.run_judge(judge=_judge(campaign, server.url), dimensions=["relevance"])
    assert summary["labelled"] == 0 and summary["failed"] == 6
    assert set(MachineLabel.objects.values_list("status", "error").distinct()) == {("failed", "the answer '7' is not one of 0, 1, 2")}


def test_conditional_dimensions_are_asked_only_where_the_judges_own_label_allows(pooled):
    campaign, _ = pooled
    def answer(prompt):  # quality 1 wherever asked; relevance 2 for GRADE2 documents, else 0
        if "document's quality" in prompt:
            return "ok\n##final answer: 1"
        return "ok\n##final answer: " + ("2" if "GRADE2" in prompt.split("Document:")[-1] else "0")

    with chat_server(answer=answer) as server:
        judge = _judge(campaign, server.url)
        summary = machine_judges.run_judge(judge=judge, dimensions=["relevance", "quality"])
    # Relevance for all six; quality only for the two documents the judge found relevant.
    assert summary["labelled"] == 8
    assert MachineLabel.objects.filter(dimension="quality").count() == 2
    assert set(MachineLabel.objects.filter(dimension="quality").values_list("document__body", flat=True)) == {"Cats and dogs, GRADE2."}


def test_a_killed_run_resumes_without_repeating_a_paid_call(pooled):
    campaign, _ = pooled

    class KilledAfter:
        def __init__(self, n):
            self.n = n

        def advance(self, done, total=None):
            if done >= self.n:
                raise SystemExit("worker killed")

    with chat_server() as server:
        judge = _judge(campaign, server.url, in_flight=1)
        job = Job.objects.create(campaign=campaign, kind="machine_judge", params={"judge": judge.pk})
        with pytest.raises(SystemExit):
            machine_judges.run_judge(judge=judge, dimensions=["relevance"], job=job, progress=KilledAfter(4))
        assert MachineLabel.objects.count() == 4
        machine_judges.run_judge(judge=judge, dimensions=["relevance"], job=job)
        assert server.calls == 6  # four before the kill, two after: none twice
    assert MachineLabel.objects.count() == 6
    assert MachineLabel.objects.values("topic", "document").distinct().count() == 6


def test_a_new_run_skips_labelled_documents_and_a_new_prompt_version_asks_again(pooled):
    campaign, _ = pooled
    with chat_server() as server:
        judge = _judge(campaign, server.url)
        machine_judges.run_judge(judge=judge, dimensions=["relevance"])
        assert machine_judges.plan(judge=judge, dimensions=["relevance"]).as_estimate()["calls"] == 0
        machine_judges.run_judge(judge=judge, dimensions=["relevance"])
        assert server.calls == 6
        prompt = machine_judges.current_prompts(judge)["relevance"]
        machine_judges.change_prompt(judge=judge, dimension="relevance", template=prompt.template + "\nBe strict.",
                                     answers={"0": 0, "1": 1, "2": 2}, by=None)
        machine_judges.run_judge(judge=judge, dimensions=["relevance"])
        assert server.calls == 12
    assert sorted(set(MachineLabel.objects.values_list("prompt_version", flat=True))) == [1, 2]


def test_the_estimate_counts_calls_and_prompt_tokens(pooled):
    campaign, _ = pooled
    judge = _judge(campaign, "http://127.0.0.1:9/v1")
    estimate = machine_judges.plan(judge=judge, dimensions=["relevance"], topic="1").as_estimate()
    assert estimate["calls"] == 3 and estimate["completion_tokens"] == 3 * machine_judges.COMPLETION_TOKENS
    prompt = machine_judges.current_prompts(judge)["relevance"]
    assert estimate["prompt_tokens"] >= 3 * len(prompt.template) // 4


def test_a_job_runs_the_judge_and_reports_its_summary(pooled, organiser, django_capture_on_commit_callbacks):
    campaign, _ = pooled
    with chat_server() as server, django_capture_on_commit_callbacks(execute=True):
        judge = _judge(campaign, server.url)
        job = machine_judges.start_judging(judge=judge, dimensions=["relevance"], by=organiser)
    job.refresh_from_db()
    assert job.status == "succeeded", job.message
    assert job.params["estimate"]["calls"] == 6 and job.result["labelled"] == 6
    assert MachineLabel.objects.filter(job=job).count() == 6


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the database's own refusals are PostgreSQL triggers")
def test_the_database_keeps_machine_labels_append_only_and_in_the_scheme(pooled):
    campaign, _ = pooled
    with chat_server() as server:
        machine_judges.run_judge(judge=_judge(campaign, server.url), dimensions=["relevance"], topic="1")
    row = MachineLabel.objects.first()
    for statement in (
        "UPDATE assessments_machinelabel SET labels = '{\"relevance\": 2}' WHERE id = %s",
        "DELETE FROM assessments_machinelabel WHERE id = %s",
    ):
        with pytest.raises(IntegrityError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [row.pk])
    with pytest.raises((IntegrityError, InternalError), match="not in the campaign's label scheme"), transaction.atomic():
        MachineLabel.objects.create(judge=row.judge, topic=row.topic, document=row.document, dimension="relevance",
                                    status="ok", labels={"relevance": 9}, model="x")


def test_judges_refuse_what_they_cannot_do(pooled, image_campaign):
    campaign, _ = pooled
    with pytest.raises(machine_judges.MachineJudgeError, match="base URL"):
        machine_judges.add_judge(campaign=campaign, name="x", kind="endpoint", model="m", base_url="ftp://x", by=None)
    with pytest.raises(machine_judges.MachineJudgeError, match="environment variable"):
        machine_judges.add_judge(campaign=campaign, name="x", kind="endpoint", model="m", base_url="http://h/v1",
                                 key_name="sk-live-123 456", by=None)
    with pytest.raises(machine_judges.MachineJudgeError, match="text documents"):
        machine_judges.add_judge(campaign=image_campaign[0], name="x", kind="local", by=None)
    judge = _judge(campaign, "http://127.0.0.1:9/v1")
    with pytest.raises(machine_judges.MachineJudgeError, match="not a value of relevance"):
        machine_judges.change_prompt(judge=judge, dimension="relevance", template="t", answers={"yes": 5}, by=None)


def test_documents_without_text_are_left_to_people(pooled):
    campaign, entries = pooled
    type(entries[0].document).objects.filter(pk=entries[0].document.pk).update(has_text=False, body="")
    judge = _judge(campaign, "http://127.0.0.1:9/v1")
    assert machine_judges.plan(judge=judge, dimensions=["relevance"]).as_estimate()["calls"] == 5


def test_an_unchanged_prompt_is_no_new_version_and_the_local_judge_has_none(pooled):
    campaign, _ = pooled
    judge = _judge(campaign, "http://127.0.0.1:9/v1")
    prompt = machine_judges.current_prompts(judge)["relevance"]
    same, created = machine_judges.change_prompt(judge=judge, dimension="relevance", template=prompt.template, answers=prompt.answers, by=None)
    assert same.pk == prompt.pk and same.version == 1 and not created
    local = machine_judges.add_judge(campaign=campaign, name="local", kind="local", by=None)
    with pytest.raises(machine_judges.MachineJudgeError, match="thresholds"):
        machine_judges.change_prompt(judge=local, dimension="relevance", template="t", answers={"0": 0}, by=None)
    with pytest.raises(machine_judges.MachineJudgeError, match="environment variable"):
        machine_judges.add_judge(campaign=campaign, name="y", kind="endpoint", model="m", base_url="http://h/v1",
                                 key_name="skprojabc123", by=None)


def test_the_machine_settings_are_campaign_settings(pooled):
    from assessments.services.campaigns import update_settings

    campaign, _ = pooled
    update_settings(campaign=campaign, changes={"machine_disagreement": 1, "reveal_machine_labels": True}, by=None)
    campaign.refresh_from_db()
    assert (campaign.machine_disagreement, campaign.reveal_machine_labels) == (1, True)
