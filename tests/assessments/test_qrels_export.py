"""Qrels export: the exact bytes trec_eval reads, the aggregation rules, numbered snapshots and their diffs,
streaming, and who may export."""

import hashlib
import io

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from assessments.formats.qrels import topic_sort_key
from assessments.models import Document, QrelsSnapshot
from assessments.services import exports
from assessments.services.exports import (
    AggregationRule,
    ExportError,
    diff_snapshots,
    export_qrels,
    snapshot_content,
)
from assessments.services.imports.qrels import import_qrels
from assessments.services.judging import Labels, record_judgment
from tests.factories import DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db
SCHEME_0_2 = (0, 1, 2)
SCHEME_SPAM = (-2, 0, 1, 2)
STANCES = ("FIRST", "SECOND", "NEUTRAL", "NO")


@pytest.fixture
def judge(campaign):
    """judge(assessor, topic number, doc id, relevance, phase="main", **labels): record one judgment."""
    topics, docs = {}, {}

    def save(assessor, number, doc_id, relevance, phase="main", **labels):
        if number not in topics:
            topics[number] = campaign.topics.filter(number=number).first() or TopicFactory(campaign=campaign, number=number)
        topic = topics[number]
        document = docs.get(doc_id) or docs.setdefault(doc_id, DocumentFactory(collection=campaign.collection, doc_id=doc_id))
        return record_judgment(topic=topic, document=document, assessor=assessor, phase=phase,
                               labels=Labels({"relevance": relevance, **labels}))

    return save


@pytest.fixture
def carol(db):
    return UserFactory(username="carol")


def exported(campaign, kind="relevance", **options) -> bytes:
    export = export_qrels(campaign=campaign, kind=kind, **options)
    return b"".join(export)


# --- Format -------------------------------------------------------------------------------------------------


def test_lines_are_qid_0_doc_label_single_spaced_lf_sorted_by_topic_number_then_doc_id(judge, alice, campaign):
    judge(alice, "10", "b-doc", 2)
    judge(alice, "2", "a-doc", 0)
    judge(alice, "2", "B-doc", 1)  # upper case sorts before lower case, byte-wise
    judge(alice, "T1", "z", 1)  # a non-numeric topic comes after the numeric ones
    judge(alice, "2", "a-doc:2019-04-18T14:32:52Z", 2)
    assert exported(campaign) == (
        b"2 0 B-doc 1\n"
        b"2 0 a-doc 0\n"
        b"2 0 a-doc:2019-04-18T14:32:52Z 2\n"
        b"10 0 b-doc 2\n"
        b"T1 0 z 1\n"
    )


def test_the_sql_order_is_the_python_order_of_topic_sort_key_then_doc_id(judge, alice, campaign):
    pairs = [("100", "x"), ("9", "é-doc"), ("9", "e-doc"), ("09", "a"), ("1", "Z"), ("1", "_"), ("abc", "a"), ("10", "10")]
    for number, doc in pairs:
        judge(alice, number, doc, 1)
    lines = exported(campaign).decode().splitlines()
    assert [(line.split()[0], line.split()[2]) for line in lines] == sorted(pairs, key=lambda p: (topic_sort_key(p[0]), p[1]))


def test_quality_and_stance_files_hold_only_documents_with_that_label(judge, alice, campaign):
    judge(alice, "1", "d1", 2, quality=1, stance="FIRST")
    judge(alice, "1", "d2", 0)  # not relevant: no quality, no stance asked
    judge(alice, "1", "d3", 1, quality=0, stance="NO")
    assert exported(campaign, "quality") == b"1 0 d1 1\n1 0 d3 0\n"
    assert exported(campaign, "stance") == b"1 0 d1 FIRST\n1 0 d3 NO\n"
    assert exported(campaign, "relevance") == b"1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n"


def test_training_judgments_are_exported_only_when_asked_for(judge, alice, campaign):
    judge(alice, "1", "d1", 2, phase="training")
    judge(alice, "2", "d2", 1)
    assert exported(campaign) == b"2 0 d2 1\n"
    assert exported(campaign, phase="training") == b"1 0 d1 2\n"
    assert exported(campaign, phase="all") == b"1 0 d1 2\n2 0 d2 1\n"


# --- Aggregation rules --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "labels", "scheme", "expected"),
    [
        ("majority", [2, 2, 0], SCHEME_0_2, 2),
        ("majority", [1, 2], SCHEME_0_2, 1),  # tie: the lower, stricter label
        ("majority", [2, 1, 2, 1, 0], SCHEME_0_2, 1),
        ("majority", [-2, 2], SCHEME_SPAM, -2),
        ("majority", ["SECOND", "FIRST"], STANCES, "FIRST"),  # tie: first in the scheme
        ("majority", ["NO", "SECOND", "NO"], STANCES, "NO"),
        ("max", [0, 2, 1], SCHEME_0_2, 2),
        ("max", [-2, 0], SCHEME_SPAM, 0),
        ("mean", [1, 2], SCHEME_0_2, 2),  # 1.5 rounds up
        ("mean", [0, 1], SCHEME_0_2, 1),  # 0.5 rounds up
        ("mean", [0, 0, 1], SCHEME_0_2, 0),  # 0.33
        ("mean", [1, 2, 2], SCHEME_0_2, 2),  # 1.67
        ("mean", [-2, 1], SCHEME_SPAM, 0),  # -0.5 rounds up to 0
        ("mean", [-2, 0], SCHEME_SPAM, -2),  # -1 is no label: nearest are -2 and 0, the lower wins
        ("mean", [-2, 2, 2], SCHEME_SPAM, 1),  # 0.67
    ],
)
def test_aggregation_rules_on_hand_cases(rule, labels, scheme, expected):
    assert AggregationRule.parse(rule).combine(labels, scheme) == expected


def test_several_assessors_are_combined_by_the_chosen_rule(judge, alice, bob, carol, campaign):
    for assessor, label in ((alice, 2), (bob, 1), (carol, 1)):
        judge(assessor, "1", "three-judges", label, phase="training")
    judge(alice, "1", "tie", 2, phase="training")
    judge(bob, "1", "tie", 1, phase="training")
    judge(alice, "1", "alone", 0, phase="training")
    options = {"phase": "training"}
    assert exported(campaign, rule="majority", **options) == b"1 0 alone 0\n1 0 three-judges 1\n1 0 tie 1\n"
    assert exported(campaign, rule="max", **options) == b"1 0 alone 0\n1 0 three-judges 2\n1 0 tie 2\n"
    assert exported(campaign, rule="mean", **options) == b"1 0 alone 0\n1 0 three-judges 1\n1 0 tie 2\n"
    assert exported(campaign, rule="assessor:bob", **options) == b"1 0 three-judges 1\n1 0 tie 1\n"
    assert list(QrelsSnapshot.objects.order_by("number").values_list("rule", flat=True)) == [
        "majority", "max", "mean", "assessor:bob"
    ]


def test_the_file_holds_only_qrels_lines_and_the_snapshot_records_the_rule(judge, alice, bob, campaign):
    judge(alice, "1", "d", 2)
    judge(bob, "1", "d", 0)
    export = export_qrels(campaign=campaign, kind="relevance", rule="max")
    assert b"".join(export) == b"1 0 d 2\n"  # no header or comment: trec_eval reads every line
    assert (export.snapshot.rule, export.snapshot.kind, export.snapshot.phase) == ("max", "relevance", "main")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kind": "stance", "rule": "mean"}, "mean rule needs numeric labels"),
        ({"kind": "stance", "rule": "max"}, "max rule needs numeric labels"),
        ({"kind": "relevance", "rule": "median"}, "unknown rule 'median'"),
        ({"kind": "relevance", "rule": "assessor:nobody"}, "no assessor named 'nobody'"),
        ({"kind": "relevance", "phase": "setup"}, "unknown phase"),
        ({"kind": "grade"}, r"kind: unknown label dimension 'grade' \(this campaign's: relevance, quality, stance\)"),
    ],
)
def test_impossible_exports_are_refused_before_any_byte(options, message, campaign):
    with pytest.raises(ExportError, match=message):
        export_qrels(campaign=campaign, **options)
    assert not QrelsSnapshot.objects.exists()


def test_a_campaign_without_quality_labels_cannot_export_quality(db):
    campaign = TopicFactory(campaign__preset="touche-2023-task2").campaign
    with pytest.raises(ExportError, match=r"unknown label dimension 'quality' \(this campaign's: direction, relevance, evidence, stance\)"):
        export_qrels(campaign=campaign, kind="quality")


def labelled(campaign, assessor, doc_id, labels, note=""):
    """Record `labels` (any dimensions of the campaign's scheme, or none) for topic 1 of the campaign."""
    topic = campaign.topics.get_or_create(number="1")[0]
    document = Document.objects.get_or_create(collection=campaign.collection, doc_id=doc_id)[0]
    record_judgment(topic=topic, document=document, assessor=assessor, phase="main", labels=Labels(labels, note=note))


def test_the_kind_is_any_dimension_of_the_scheme_and_defaults_to_the_primary_one(db):
    campaign = TopicFactory(campaign__preset="touche-2022-task1", number="1").campaign  # relevance, quality, coherence
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    labelled(campaign, alice, "pair-1", {"relevance": 2, "quality": 1, "coherence": 2})
    labelled(campaign, bob, "pair-1", {"relevance": 1, "coherence": 1})
    labelled(campaign, alice, "pair-2", {"coherence": 0})  # a judgment needs no relevance
    labelled(campaign, alice, "pair-3", {}, note="come back to it")  # nor any label: it is in no file

    assert b"".join(export := export_qrels(campaign=campaign)) == b"1 0 pair-1 1\n"  # majority: tie to the lower
    assert export.snapshot.kind == "relevance"
    assert exported(campaign, "coherence") == b"1 0 pair-1 1\n1 0 pair-2 0\n"
    assert exported(campaign, "coherence", rule="max") == b"1 0 pair-1 2\n1 0 pair-2 0\n"
    assert exported(campaign, "quality", rule="assessor:alice") == b"1 0 pair-1 1\n"


def test_a_dimension_with_otherwise_gives_it_where_its_condition_was_answered_and_fails(db):
    """2023 Task 2: a document of the wrong causal direction is off-topic, relevance 0 in the files, though the
    judge page never asks its relevance."""
    campaign = TopicFactory(campaign__preset="touche-2023-task2", number="1").campaign
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    labelled(campaign, alice, "as-asked", {"direction": "CAUSE_EFFECT", "relevance": 2, "evidence": "STRONGER"})
    labelled(campaign, alice, "wrong-way", {"direction": "WRONG"})
    labelled(campaign, bob, "wrong-way", {"direction": "CAUSE_EFFECT", "relevance": 2})
    labelled(campaign, alice, "unanswered", {}, note="the direction is unclear")  # no direction yet: no relevance either

    assert exported(campaign, "relevance") == b"1 0 as-asked 2\n1 0 wrong-way 0\n"  # 0 and 2 tie: the lower
    assert exported(campaign, "relevance", rule="max") == b"1 0 as-asked 2\n1 0 wrong-way 2\n"
    assert exported(campaign, "relevance", rule="assessor:alice") == b"1 0 as-asked 2\n1 0 wrong-way 0\n"
    assert exported(campaign, "evidence") == b"1 0 as-asked STRONGER\n"  # no otherwise: only the labelled
    assert exported(campaign, "direction") == b"1 0 as-asked CAUSE_EFFECT\n1 0 wrong-way CAUSE_EFFECT\n"


# --- Snapshots ----------------------------------------------------------------------------------------------


def test_every_export_is_a_new_numbered_snapshot_that_later_judgments_do_not_touch(judge, alice, organiser, campaign):
    judge(alice, "1", "d1", 1)
    first = export_qrels(campaign=campaign, kind="relevance", created_by=organiser)
    first_bytes = b"".join(first)
    judge(alice, "1", "d1", 2)
    judge(alice, "1", "d2", 0)
    second = export_qrels(campaign=campaign, kind="relevance")
    second_bytes = b"".join(second)

    one, two = QrelsSnapshot.objects.order_by("number")
    assert (one.number, two.number) == (1, 2)
    assert (one.created_by, one.line_count, two.line_count) == (organiser, 1, 2)
    assert b"".join(snapshot_content(one)) == first_bytes == b"1 0 d1 1\n"
    assert b"".join(snapshot_content(two)) == second_bytes == b"1 0 d1 2\n1 0 d2 0\n"
    for snapshot, data in ((one, first_bytes), (two, second_bytes)):
        assert snapshot.sha256 == hashlib.sha256(data).hexdigest()


def test_numbers_count_per_campaign(judge, alice, campaign, mallory):
    judge(alice, "1", "d1", 1)
    other = TopicFactory(number="1").campaign
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    b"".join(export_qrels(campaign=other, kind="relevance"))
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    assert sorted(QrelsSnapshot.objects.values_list("campaign__slug", "number")) == [
        (other.slug, 1), ("touche22", 1), ("touche22", 2)
    ]


def test_an_abandoned_download_leaves_no_snapshot_and_no_file(judge, alice, campaign, monkeypatch, tmp_path):
    monkeypatch.setattr(exports, "LINES_PER_WRITE", 1)
    monkeypatch.setattr(exports.tempfile, "tempdir", str(tmp_path))
    for i in range(5):
        judge(alice, "1", f"d{i}", 1)
    stream = iter(export_qrels(campaign=campaign, kind="relevance"))
    assert next(stream) == b"1 0 d0 1\n"
    stream.close()  # what the WSGI server does when the client goes away
    assert not QrelsSnapshot.objects.exists()
    assert not list(tmp_path.glob("touchstone-qrels-*"))


# --- Diffs --------------------------------------------------------------------------------------------------


def test_a_diff_lists_added_removed_and_changed_lines_with_who_changed_them(judge, alice, bob, campaign):
    judge(alice, "1", "kept", 1)
    judge(alice, "1", "relabelled", 0, quality=1)
    judge(alice, "1", "loses-quality", 1, quality=2)
    b"".join(export_qrels(campaign=campaign, kind="quality"))
    judge(alice, "1", "relabelled", 2, quality=2)
    judge(alice, "1", "loses-quality", 0)  # not relevant any more: quality cleared
    judge(bob, "1", "new", 2, quality=0)
    b"".join(export_qrels(campaign=campaign, kind="quality"))
    older, newer = QrelsSnapshot.objects.order_by("number")

    diff = diff_snapshots(older=newer, newer=older)  # either order
    assert (diff.older.number, diff.newer.number) == (1, 2)
    summary = [(line.status, line.doc_id, line.old, line.new, [(c.assessor, c.label) for c in line.changes]) for line in diff.lines]
    assert summary == [
        ("removed", "loses-quality", 2, None, [("alice", None)]),
        ("added", "new", None, 0, [("bob", 0)]),
        ("changed", "relabelled", 1, 2, [("alice", 2)]),
    ]
    assert diff.counts == {"added": 1, "removed": 1, "changed": 1}


def test_a_diff_from_an_empty_export_lists_every_line_as_added(judge, alice, campaign):
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    judge(alice, "1", "d1", 1)
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    empty, full = QrelsSnapshot.objects.order_by("number")
    assert (empty.line_count, b"".join(snapshot_content(empty))) == (0, b"")
    diff = diff_snapshots(older=empty, newer=full)
    assert [(line.status, line.doc_id, [c.assessor for c in line.changes]) for line in diff.lines] == [("added", "d1", ["alice"])]


def tamper(snapshot: QrelsSnapshot, data: bytes) -> None:
    """Change a snapshot's stored bytes the only way left: as a superuser, with the database's triggers off."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("UPDATE assessments_qrelssnapshotpart SET data = %s WHERE snapshot_id = %s", [data, snapshot.pk])
        cursor.execute("SET LOCAL session_replication_role = DEFAULT")


def test_a_diff_refuses_a_snapshot_changed_after_export(judge, alice, campaign):
    judge(alice, "1", "d1", 1)
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    tampered = QrelsSnapshot.objects.get(number=1)
    tamper(tampered, b"1 0 d1 2\n")
    with pytest.raises(ExportError, match="snapshot #1 no longer matches its checksum"):
        diff_snapshots(older=tampered, newer=QrelsSnapshot.objects.get(number=2))


def test_a_snapshot_is_kept_in_the_database_in_parts(judge, alice, campaign, monkeypatch):
    """So a database backup alone restores it, and a million-line export never sits in memory."""
    monkeypatch.setattr(exports, "PART_BYTES", 10)
    for doc in ("d1", "d2", "d3"):
        judge(alice, "1", doc, 1)
    data = b"".join(export_qrels(campaign=campaign, kind="relevance"))
    snapshot = QrelsSnapshot.objects.get()
    parts = list(snapshot.parts.order_by("index").values_list("index", "data"))
    assert [(index, bytes(part)) for index, part in parts] == [(0, data[:10]), (1, data[10:20]), (2, data[20:])]
    rows = exports._snapshot_rows(snapshot, campaign.label_scheme.dimension("relevance"))
    assert list(rows) == [("1", "d1", 1), ("1", "d2", 1), ("1", "d3", 1)]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE assessments_qrelssnapshotpart SET data = '1 0 d1 2\n'::bytea",
        "UPDATE assessments_qrelssnapshot SET sha256 = repeat('0', 64)",
        "UPDATE assessments_qrelssnapshot SET line_count = 7",
    ],
)
def test_the_database_refuses_to_change_a_snapshot(judge, alice, campaign, statement):
    judge(alice, "1", "d1", 1)
    data = b"".join(export_qrels(campaign=campaign, kind="relevance"))
    with pytest.raises(IntegrityError, match="qrels snapshots never change after export"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(statement)
    assert b"".join(snapshot_content(QrelsSnapshot.objects.get())) == data


def test_snapshots_of_different_kinds_are_not_compared(judge, alice, campaign):
    judge(alice, "1", "d1", 1, quality=1)
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    b"".join(export_qrels(campaign=campaign, kind="quality"))
    one, two = QrelsSnapshot.objects.order_by("number")
    with pytest.raises(ExportError, match="holds relevance labels and #2 quality labels"):
        diff_snapshots(older=one, newer=two)


# --- Streaming ----------------------------------------------------------------------------------------------


def _qrels_file(tmp_path, lines: int):
    path = tmp_path / f"{lines}.qrels"
    path.write_text("".join(f"{1 + i % 3} 0 doc-{i:06d} {i % 3}\n" for i in range(lines)))
    return path


def test_export_queries_do_not_grow_with_the_number_of_judgments(campaign, tmp_path, django_assert_max_num_queries):
    for number in "123":
        TopicFactory(campaign=campaign, number=number)
    import_qrels(campaign=campaign, path=_qrels_file(tmp_path, 30), kind="relevance", assessor="small")
    with CaptureQueriesContext(connection) as small:
        assert len(exported(campaign, rule="majority", chunk_size=10).splitlines()) == 30
    import_qrels(campaign=campaign, path=_qrels_file(tmp_path, 3000), kind="relevance", assessor="large")
    with django_assert_max_num_queries(len(small.captured_queries)):
        assert len(exported(campaign, rule="majority", chunk_size=10).splitlines()) == 3000


def test_an_export_reaches_the_reader_in_pieces(campaign, tmp_path, monkeypatch):
    monkeypatch.setattr(exports, "LINES_PER_WRITE", 100)
    for number in "123":
        TopicFactory(campaign=campaign, number=number)
    import_qrels(campaign=campaign, path=_qrels_file(tmp_path, 1000), kind="relevance", assessor="touche")
    chunks = list(export_qrels(campaign=campaign, kind="relevance", chunk_size=50))
    assert len(chunks) == 10 and all(chunk.count(b"\n") == 100 for chunk in chunks)


# --- Command, page and API ----------------------------------------------------------------------------------


def test_the_command_writes_the_file_and_reports_the_snapshot(judge, alice, campaign, tmp_path):
    judge(alice, "1", "d1", 2)
    output, err = tmp_path / "out.qrels", io.StringIO()
    call_command("export_qrels", "touche22", "--kind", "relevance", "--output", str(output), stderr=err)
    assert output.read_bytes() == b"1 0 d1 2\n"
    assert "qrels snapshot #1: 1 relevance lines (main phase, rule majority)" in err.getvalue()
    out = io.StringIO()
    call_command("export_qrels", "touche22", "--kind", "relevance", "--rule", "assessor:alice", stdout=out, stderr=io.StringIO())
    assert out.getvalue() == "1 0 d1 2\n"
    assert QrelsSnapshot.objects.get(number=2).rule == "assessor:alice"
    err = io.StringIO()
    call_command("export_qrels", "touche22", stdout=io.StringIO(), stderr=err)  # the scheme's primary dimension
    assert "qrels snapshot #3: 1 relevance lines" in err.getvalue()
    err = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("export_qrels", "touche22", "--kind", "coherence", stderr=err)
    assert err.getvalue().strip() == "error: kind: unknown label dimension 'coherence' (this campaign's: relevance, quality, stance)"


def test_the_download_on_the_page_streams_the_file_and_keeps_a_snapshot(client, organiser, judge, alice, campaign):
    judge(alice, "2", "d1", 1)
    judge(alice, "10", "d1", 2)
    client.force_login(organiser)
    response = client.post("/campaigns/touche22/qrels/export/", {"kind": "relevance", "phase": "main", "rule": "majority"})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Disposition"] == 'attachment; filename="touche22-relevance-main.qrels"'
    assert b"".join(response.streaming_content) == b"2 0 d1 1\n10 0 d1 2\n"
    snapshot = QrelsSnapshot.objects.get()
    assert (snapshot.number, snapshot.created_by) == (1, organiser)
    page = client.get("/campaigns/touche22/qrels/")
    assert page.status_code == 200 and snapshot.sha256[:12] in page.content.decode()
    download = client.get(f"/campaigns/touche22/qrels/{snapshot.number}/")
    assert b"".join(download.streaming_content) == b"2 0 d1 1\n10 0 d1 2\n"
    assert download["Content-Disposition"] == 'attachment; filename="touche22-0001-relevance-main.qrels"'


def test_a_snapshot_changed_after_export_is_not_downloaded(client, organiser, judge, alice, campaign):
    judge(alice, "1", "d1", 1)
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    tamper(QrelsSnapshot.objects.get(), b"1 0 d1 2\n")
    client.force_login(organiser)
    page = client.get("/campaigns/touche22/qrels/1/")
    assert page.status_code == 409 and not page.streaming
    assert "Download refused: qrels snapshot #1 no longer matches its checksum" in page.content.decode()
    api = APIClient()
    api.force_authenticate(organiser)
    answer = api.get("/api/campaigns/touche22/qrels/1/")
    assert answer.status_code == 409
    assert answer.json()["detail"].startswith("qrels snapshot #1 no longer matches its checksum")


def test_the_diff_page_shows_who_changed_a_line(client, organiser, judge, alice, bob, campaign):
    judge(alice, "1", "d1", 1)
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    judge(bob, "1", "d2", 2)
    b"".join(export_qrels(campaign=campaign, kind="relevance"))
    client.force_login(organiser)
    page = client.get("/campaigns/touche22/qrels/diff/", {"older": 1, "newer": 2}).content.decode()
    assert "1 added" in page and "bob set 2" in page


def test_the_api_exports_lists_and_diffs_snapshots(organiser, judge, alice, bob, campaign):
    judge(alice, "1", "d1", 1)
    api = APIClient()
    api.force_authenticate(organiser)
    response = api.post("/api/campaigns/touche22/qrels/", {"kind": "relevance"}, format="json")
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"1 0 d1 1\n"
    judge(alice, "1", "d1", 2)
    b"".join(api.post("/api/campaigns/touche22/qrels/", {"kind": "relevance"}, format="json").streaming_content)
    listed = api.get("/api/campaigns/touche22/qrels/").json()
    assert [(s["number"], s["line_count"], s["created_by"]) for s in listed] == [(2, 1, "olivia"), (1, 1, "olivia")]
    assert b"".join(api.get(listed[1]["file"]).streaming_content) == b"1 0 d1 1\n"
    diff = api.get("/api/campaigns/touche22/qrels/1/diff/2/").json()
    assert diff["changed"] == 1 and diff["lines"][0]["changes"][0]["assessor"] == "alice"
    bad = api.post("/api/campaigns/touche22/qrels/", {"kind": "stance", "rule": "mean"}, format="json")
    assert bad.status_code == 400 and "numeric labels" in bad.json()["detail"]


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/campaigns/touche22/qrels/"),
        ("post", "/campaigns/touche22/qrels/export/"),
        ("get", "/campaigns/touche22/qrels/1/"),
        ("get", "/campaigns/touche22/qrels/diff/?older=1&newer=1"),
    ],
)
def test_assessors_get_404_on_the_qrels_pages(method, url, client, alice, mallory, judge):
    judge(alice, "1", "d1", 1)
    b"".join(export_qrels(campaign=alice.assignments.get().topic.campaign, kind="relevance"))
    for assessor in (alice, mallory):
        client.force_login(assessor)
        assert getattr(client, method)(url, {"kind": "relevance"} if method == "post" else None).status_code == 404
    assert QrelsSnapshot.objects.count() == 1


@pytest.mark.parametrize(("who", "status"), [("anonymous", 401), ("alice", 403), ("olivia", 200)])
def test_the_qrels_api_is_for_organisers(who, status, alice, organiser, campaign):
    api = APIClient()
    if who != "anonymous":
        api.force_authenticate({"alice": alice, "olivia": organiser}[who])
    assert api.get("/api/campaigns/touche22/qrels/").status_code == status
    if who != "olivia":
        assert api.post("/api/campaigns/touche22/qrels/", {"kind": "relevance"}, format="json").status_code == status
        assert not QrelsSnapshot.objects.exists()


def test_an_export_with_no_line_says_so_on_the_page_and_the_command_but_the_api_keeps_the_empty_snapshot(
    judge, alice, organiser, campaign, client, command
):
    from django.urls import reverse

    client.force_login(organiser)
    answer = client.post(reverse("assessments:qrels_export", args=[campaign.slug]),
                         {"kind": "relevance", "phase": "main", "rule": "majority"}, follow=True)
    assert "Export not made: no relevance labels of the main phase yet: nothing to export" in answer.content.decode()
    assert not QrelsSnapshot.objects.exists()  # no download, no snapshot
    done = command("export_qrels", campaign.slug, "--kind", "relevance")
    assert done.code == 0 and done.out == "" and "warning: no relevance labels of the main phase yet" in done.err
    judge(alice, "1", "d1", 1)
    done = command("export_qrels", campaign.slug, "--kind", "relevance")
    assert done.out == "1 0 d1 1\n" and "warning" not in done.err
