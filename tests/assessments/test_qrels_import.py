"""Importing earlier qrels as judgments: every real Touché file, merging dimensions, round trips, errors with
file:line that change nothing, and rows identical to record_judgment's."""

import io
from collections import Counter
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.models import Role, User
from assessments.formats.errors import FormatError
from assessments.formats.qrels import topic_sort_key
from assessments.models import Document, Job, Judgment, JudgmentEvent
from assessments.services.exports import export_qrels
from assessments.services.imports import ImportProblem
from assessments.services.imports.qrels import import_qrels
from assessments.services.judging import Labels, record_judgment
from tests.factories import CampaignFactory, DocumentFactory, TopicFactory

pytestmark = pytest.mark.django_db


def campaign_with_topics(preset: str, numbers, slug: str | None = None):
    campaign = CampaignFactory(preset=preset, **({"slug": slug} if slug else {}))
    for position, number in enumerate(numbers):
        TopicFactory(campaign=campaign, number=str(number), position=position)
    return campaign


def labels_of(campaign, assessor: str, kind: str) -> Counter:
    judgments = Judgment.objects.filter(topic__campaign=campaign, assessor__username=assessor)
    return Counter(labels[kind] for labels in judgments.values_list("labels", flat=True) if kind in labels)


def file_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def exported_lines(campaign, kind: str, assessor: str) -> list[str]:
    return b"".join(export_qrels(campaign=campaign, kind=kind, rule=f"assessor:{assessor}")).decode().splitlines()


def in_qrels_order(lines: list[str]) -> list[str]:
    return sorted(lines, key=lambda line: (topic_sort_key(line.split()[0]), line.split()[2]))


# --- The real files -----------------------------------------------------------------------------------------

# (file, preset, topic numbers, lines, topics, label counts): the counts are those the data README states.
REAL_FILES = [
    ("2020-task1/qrels-relevance.txt", "touche-2020-task1", range(1, 51), 2298, 49, {-2: 751, 0: 615, 1: 296, 2: 636}),
    ("2020-task2/qrels-relevance.txt", "touche-2021-task2", range(1, 51), 1783, 50, {0: 961, 1: 448, 2: 374}),
    ("2021-task2/qrels-relevance.txt", "touche-2021-task2", range(51, 101), 2076, 50, {0: 1435, 1: 377, 2: 264}),
    ("beir-webis-touche2020/qrels.beir-v1.0.0-webis-touche2020.test.txt", "touche-2020-task1", range(1, 51), 932, 49, {1: 296, 2: 636}),
]


@pytest.mark.parametrize(("name", "preset", "numbers", "lines", "topics", "labels"), REAL_FILES)
def test_every_real_relevance_file_imports_and_exports_back_line_for_line(touche_data, name, preset, numbers, lines, topics, labels):
    campaign = campaign_with_topics(preset, numbers)
    path = touche_data / name
    summary = import_qrels(campaign=campaign, path=path, kind="relevance", assessor="touche")
    assert (summary.counts["lines"], summary.counts["topics"], summary.counts["created"], summary.counts["updated"]) == (lines, topics, lines, 0)
    assert labels_of(campaign, "touche", "relevance") == labels
    assert Judgment.objects.filter(source="import", revision=1, phase="main").count() == lines
    assert JudgmentEvent.objects.filter(source="import", revision=1).count() == lines
    # No text was loaded: every document is a stub.
    assert summary.counts["stubs"] == Document.objects.filter(has_text=False).count() == len({line.split()[2] for line in file_lines(path)})
    assert exported_lines(campaign, "relevance", "touche") == in_qrels_order(file_lines(path))


def test_relevance_and_quality_files_merge_into_the_same_judgments(touche_data):
    campaign = campaign_with_topics("touche-2021-task2", range(51, 101))
    folder = touche_data / "2021-task2"
    import_qrels(campaign=campaign, path=folder / "qrels-relevance.txt", kind="relevance", assessor="touche")
    quality = import_qrels(campaign=campaign, path=folder / "qrels-quality.txt", kind="quality", assessor="touche")
    assert (quality.counts["created"], quality.counts["updated"], quality.counts["lines"]) == (0, 2076, 2076)
    assert Judgment.objects.count() == 2076
    assert labels_of(campaign, "touche", "quality") == {0: 695, 1: 516, 2: 865}
    assert set(Judgment.objects.values_list("revision", flat=True)) == {2}
    assert JudgmentEvent.objects.count() == 2 * 2076
    assert exported_lines(campaign, "quality", "touche") == in_qrels_order(file_lines(folder / "qrels-quality.txt"))
    assert exported_lines(campaign, "relevance", "touche") == in_qrels_order(file_lines(folder / "qrels-relevance.txt"))


def test_the_five_column_tab_separated_variant_agrees_with_the_official_files(touche_data):
    campaign = campaign_with_topics("touche-2021-task2", range(51, 101))
    folder = touche_data / "2021-task2"
    tsv = folder / "participant-merged-relevance-quality.tsv"
    for kind in ("relevance", "quality"):
        import_qrels(campaign=campaign, path=folder / f"qrels-{kind}.txt", kind=kind, assessor="official")
        import_qrels(campaign=campaign, path=tsv, kind=kind, assessor="participant")
    for kind in ("relevance", "quality"):
        assert exported_lines(campaign, kind, "participant") == exported_lines(campaign, kind, "official")
    # Importing the TSV again over the official labels changes nothing: they agree line for line.
    again = import_qrels(campaign=campaign, path=tsv, kind="quality", assessor="official")
    assert (again.counts["created"], again.counts["updated"], again.counts["unchanged"]) == (0, 0, 2076)


def test_importing_the_same_file_twice_adds_nothing(touche_data):
    campaign = campaign_with_topics("touche-2020-task1", range(1, 51))
    path = touche_data / "2020-task1" / "qrels-relevance.txt"
    import_qrels(campaign=campaign, path=path, kind="relevance", assessor="touche")
    again = import_qrels(campaign=campaign, path=path, kind="relevance", assessor="touche")
    assert (again.counts["created"], again.counts["updated"], again.counts["unchanged"], again.counts["stubs"]) == (0, 0, 2298, 0)
    assert JudgmentEvent.objects.count() == 2298


# --- Errors -------------------------------------------------------------------------------------------------


def first_line_where(path: Path, condition) -> int:
    return next(number for number, line in enumerate(file_lines(path), 1) if condition(line.split()))


def assert_nothing_stored():
    assert not Judgment.objects.exists()
    assert not JudgmentEvent.objects.exists()
    assert not Document.objects.exists()
    assert not User.objects.filter(username="touche").exists()


def test_a_spam_label_in_a_scheme_without_it_is_refused_at_its_line(touche_data):
    campaign = campaign_with_topics("touche-2021-task2", range(1, 51))
    path = touche_data / "2020-task1" / "qrels-relevance.txt"
    line = first_line_where(path, lambda fields: fields[3] == "-2")
    assert line > 1  # valid lines come first, and none of them may be stored
    with pytest.raises(FormatError) as error:
        import_qrels(campaign=campaign, path=path, kind="relevance", assessor="touche")
    assert str(error.value) == f"{path}:{line}: relevance -2 is not in the campaign's scheme (allowed: 0, 1, 2)"
    assert_nothing_stored()


def test_a_topic_the_campaign_lacks_is_an_error_at_its_line(touche_data):
    campaign = campaign_with_topics("touche-2020-task1", range(1, 25))
    path = touche_data / "2020-task1" / "qrels-relevance.txt"
    line = first_line_where(path, lambda fields: int(fields[0]) >= 25)
    with pytest.raises(FormatError, match=rf"qrels-relevance.txt:{line}: topic \d+ is not a topic of this campaign"):
        import_qrels(campaign=campaign, path=path, kind="relevance", assessor="touche")
    assert_nothing_stored()


@pytest.mark.parametrize(
    ("content", "kind", "message"),
    [
        ("1 0 d1 1\n1 0 d2 x\n", "relevance", r"bad.qrels:2: relevance label 'x' is not an integer"),
        ("1 0 d1 1\n\n1 0 d1 2\n", "relevance", r"bad.qrels:3: topic 1 judges document d1 twice \(first on line 1\)"),
        ("1 0 d1 1\n1 0 d2\n", "relevance", r"bad.qrels:2: expected 4 fields"),
        ("1 0 d1 PRO\n", "stance", r"bad.qrels:1: unknown stance label 'PRO'"),
        ("1 0 d1 3\n", "quality", r"bad.qrels:1: quality 3 is not in the campaign's scheme"),
        ("", "relevance", r"bad.qrels: the file has no judgments"),
        ("1 0 d1 1\n1 0 caf\xe9 1\n", "relevance", r"bad.qrels:2: not UTF-8 text \(byte 0xe9 at column 8\)"),
    ],
)
def test_bad_lines_are_reported_with_file_and_line_and_nothing_is_stored(tmp_path, campaign, content, kind, message):
    TopicFactory(campaign=campaign, number="1")
    path = tmp_path / "bad.qrels"
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(FormatError, match=message):
        import_qrels(campaign=campaign, path=path, kind=kind, assessor="touche")
    assert_nothing_stored()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kind": "quality", "assessor": "touche"},
         r"kind: unknown label dimension 'quality' \(this campaign's: direction, relevance, evidence, stance\)"),
        ({"kind": "relevance", "assessor": "two words"}, "assessor name 'two words'"),
        ({"kind": "relevance", "assessor": "touche", "phase": "all"}, "unknown phase"),
    ],
)
def test_impossible_options_are_refused(tmp_path, options, message):
    campaign = campaign_with_topics("touche-2023-task2", [1])
    path = tmp_path / "ok.qrels"
    path.write_text("1 0 d1 1\n")
    with pytest.raises(ImportProblem, match=message):
        import_qrels(campaign=campaign, path=path, **options)
    assert_nothing_stored()


# --- Same rows as record_judgment ---------------------------------------------------------------------------


def judgment_rows(assessor: str):
    judgments = Judgment.objects.filter(assessor__username=assessor).order_by("topic__number", "document__doc_id")
    fields = ("topic__number", "document__doc_id", "phase", "labels", "note", "flagged", "time_spent_ms", "source", "revision")
    events = JudgmentEvent.objects.filter(assessor__username=assessor).order_by("judgment__topic__number", "judgment__document__doc_id", "revision")
    event_fields = ("judgment__topic__number", "judgment__document__doc_id", "revision", "labels", "note", "flagged",
                    "time_spent_ms", "source")
    return list(judgments.values_list(*fields)), list(events.values_list(*event_fields))


def test_the_bulk_path_writes_the_rows_record_judgment_writes(tmp_path, campaign):
    for number in ("1", "2"):
        TopicFactory(campaign=campaign, number=number)
    relevance = [("1", "d1", 2), ("1", "d2", 0), ("2", "d1", 1)]
    quality = [("1", "d1", 1), ("2", "d1", 2)]
    stance = [("1", "d1", "SECOND")]
    relevance_again = [("1", "d1", 2), ("1", "d2", 1), ("2", "d1", 1)]  # one label changed
    files = []
    for kind, rows in (("relevance", relevance), ("quality", quality), ("stance", stance), ("relevance", relevance_again)):
        path = tmp_path / f"{len(files)}-{kind}.qrels"
        path.write_text("".join(f"{t} 0 {d} {label}\n" for t, d, label in rows))
        files.append((kind, rows, path))

    for kind, rows, path in files:
        import_qrels(campaign=campaign, path=path, kind=kind, assessor="bulk")
        # The slow path: one record_judgment per line, keeping the other dimensions as they are.
        for number, doc_id, label in rows:
            topic = campaign.topics.get(number=number)
            document = Document.objects.get(doc_id=doc_id)
            slow = User.objects.get_or_create(username="slow")[0]
            current = Judgment.objects.filter(topic=topic, document=document, assessor=slow).first()
            labels = dict(current.labels) if current else {}
            labels[kind] = label
            record_judgment(topic=topic, document=document, assessor=slow, labels=Labels(labels), phase="main", source="import")

    bulk, slow = judgment_rows("bulk"), judgment_rows("slow")
    assert bulk == slow
    assert [(row[3], row[-1]) for row in bulk[0]] == [
        ({"relevance": 2, "quality": 1, "stance": "SECOND"}, 3), ({"relevance": 1}, 2), ({"relevance": 1, "quality": 2}, 2),
    ]
    assert len(bulk[1]) == 7


def test_an_import_in_an_assessors_name_is_refused_and_leaves_her_judgment_as_it_was(tmp_path, campaign, pool, alice):
    topic, document = pool[0].topic, pool[0].document
    record_judgment(topic=topic, document=document, assessor=alice, phase="training",
                    labels=Labels({"relevance": 1, "quality": 2, "stance": "FIRST"}, note="careful"))
    path = tmp_path / "alice.qrels"
    path.write_text(f"{topic.number} 0 {document.doc_id} 2\n")
    with pytest.raises(ImportProblem, match="assessor name 'alice' is a person's account \\(assessor\\)"):
        import_qrels(campaign=campaign, path=path, kind="relevance", assessor="alice", phase="training")
    judgment = Judgment.objects.get(assessor=alice)
    assert (judgment.labels, judgment.note, judgment.revision, judgment.source) == (
        {"relevance": 1, "quality": 2, "stance": "FIRST"}, "careful", 1, "web"
    )
    assert list(judgment.events.values_list("revision", "labels__relevance", "source")) == [(1, 1, "web")]


def test_the_imported_assessor_is_a_source_that_cannot_log_in(tmp_path, campaign):
    TopicFactory(campaign=campaign, number="1")
    DocumentFactory(collection=campaign.collection, doc_id="has-text")
    path = tmp_path / "q.qrels"
    path.write_text("1 0 has-text 1\n1 0 never-loaded 0\n")
    summary = import_qrels(campaign=campaign, path=path, kind="relevance", assessor="touche2020")
    user = User.objects.get(username="touche2020")
    assert user.role == Role.SOURCE and user.is_source and not user.is_active and not user.has_usable_password()
    assert summary.counts["stubs"] == 1
    assert Document.objects.get(doc_id="has-text").has_text
    assert not Document.objects.get(doc_id="never-loaded").has_text


# --- Command, page and API ----------------------------------------------------------------------------------


def test_the_command_imports_and_reports(touche_data):
    campaign = campaign_with_topics("touche-2020-task1", range(1, 51), slug="t20")
    out = io.StringIO()
    path = touche_data / "2020-task1" / "qrels-relevance.txt"
    call_command("import_qrels", "t20", str(path), "--kind", "relevance", "--assessor", "touche", stdout=out, stderr=io.StringIO())
    assert "2298 relevance labels on 49 topics as touche: 2298 new judgments" in out.getvalue()
    assert Judgment.objects.filter(topic__campaign=campaign).count() == 2298


def test_the_command_stops_with_file_and_line(touche_data):
    campaign_with_topics("touche-2021-task2", range(1, 51), slug="t21")
    path = touche_data / "2020-task1" / "qrels-relevance.txt"
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("import_qrels", "t21", str(path), "--kind", "relevance", "--assessor", "touche", stderr=err)
    assert exit_.value.code == 1
    line = first_line_where(path, lambda fields: fields[3] == "-2")
    assert err.getvalue().strip() == f"error: {path}:{line}: relevance -2 is not in the campaign's scheme (allowed: 0, 1, 2)"
    assert_nothing_stored()


def test_the_command_takes_any_dimension_of_the_scheme_and_defaults_to_the_primary_one(tmp_path, campaign):
    TopicFactory(campaign=campaign, number="1")
    path = tmp_path / "q.qrels"
    path.write_text("1 0 d1 2\n")
    out = io.StringIO()
    call_command("import_qrels", "touche22", str(path), "--assessor", "touche", stdout=out, stderr=io.StringIO())
    call_command("import_qrels", "touche22", str(path), "--kind", "quality", "--assessor", "touche", stdout=out, stderr=io.StringIO())
    assert "q.qrels: 1 relevance labels on 1 topic as touche: 1 new judgments" in out.getvalue()
    assert "q.qrels: 1 quality labels on 1 topic as touche: 0 new judgments, 1 changed" in out.getvalue()
    assert Judgment.objects.get().labels == {"relevance": 2, "quality": 2}
    err = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("import_qrels", "touche22", str(path), "--kind", "coherence", "--assessor", "touche", stderr=err)
    assert err.getvalue().strip() == "error: kind: unknown label dimension 'coherence' (this campaign's: relevance, quality, stance)"


def test_an_upload_on_the_page_runs_as_a_job(client, organiser, campaign, django_capture_on_commit_callbacks):
    TopicFactory(campaign=campaign, number="1")
    client.force_login(organiser)
    upload = SimpleUploadedFile("last-year.qrels", b"1 0 d1 2\n1 0 d2 0\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/campaigns/touche22/qrels/import/",
                               {"file": upload, "kind": "relevance", "assessor": "touche21", "phase": "main"})
    assert response.status_code == 302
    job = Job.objects.get(kind="import_qrels")
    assert (job.status, job.result["created"], job.created_by) == ("succeeded", 2, organiser)
    assert "last-year.qrels: 2 relevance labels on 1 topic as touche21" in job.message
    page = client.get("/campaigns/touche22/qrels/").content.decode()
    assert "last-year.qrels" in page and "Succeeded" in page


def test_a_bad_upload_fails_its_job_naming_the_file_and_line(client, organiser, campaign, django_capture_on_commit_callbacks):
    TopicFactory(campaign=campaign, number="1")
    client.force_login(organiser)
    upload = SimpleUploadedFile("spam.qrels", b"1 0 d1 2\n1 0 d2 -2\n")
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/campaigns/touche22/qrels/import/", {"file": upload, "kind": "relevance", "assessor": "touche21", "phase": "main"})
    job = Job.objects.get(kind="import_qrels")
    assert job.status == "failed"
    assert job.errors == ["spam.qrels:2: relevance -2 is not in the campaign's scheme (allowed: 0, 1, 2)"]
    assert not Judgment.objects.exists()


def test_the_api_queues_an_import(organiser, campaign, django_capture_on_commit_callbacks):
    TopicFactory(campaign=campaign, number="1")
    api = APIClient()
    api.force_authenticate(organiser)
    upload = SimpleUploadedFile("q.qrels", b"1 0 d1 FIRST\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/campaigns/touche22/qrels/import/", {"file": upload, "kind": "stance", "assessor": "x"})
    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"])
    # A stance file needs no relevance imported first (the rule before labels by dimension): it creates the judgment.
    assert job.status == "succeeded" and "q.qrels: 1 stance labels on 1 topic as x: 1 new judgments" in job.message
    assert Judgment.objects.get(assessor__username="x").labels == {"stance": "FIRST"}
    refused = api.post("/api/campaigns/touche22/qrels/import/",
                       {"file": SimpleUploadedFile("q.qrels", b""), "kind": "relevance", "assessor": "bad name"})
    assert refused.status_code == 400
    unknown = api.post("/api/campaigns/touche22/qrels/import/",
                       {"file": SimpleUploadedFile("q.qrels", b"1 0 d1 1\n"), "kind": "coherence", "assessor": "x"})
    assert unknown.status_code == 400
    assert "unknown label dimension 'coherence' (this campaign's: relevance, quality, stance)" in unknown.json()["detail"]


@pytest.mark.parametrize(("who", "status"), [("alice", 404), ("mallory", 404)])
def test_assessors_cannot_import(who, status, client, alice, mallory, campaign):
    client.force_login({"alice": alice, "mallory": mallory}[who])
    upload = SimpleUploadedFile("q.qrels", b"1 0 d1 2\n")
    response = client.post("/campaigns/touche22/qrels/import/", {"file": upload, "kind": "relevance", "assessor": who})
    assert response.status_code == status
    api = APIClient()
    api.force_authenticate({"alice": alice, "mallory": mallory}[who])
    upload = SimpleUploadedFile("q.qrels", b"1 0 d1 2\n")
    assert api.post("/api/campaigns/touche22/qrels/import/", {"file": upload, "kind": "relevance", "assessor": who}).status_code == 403
    assert not Job.objects.exists()
