"""The campaign archive's file format, without a database: members written and read back, a manifest that catches
any change, and records checked field by field, each problem named by member, line and key."""

import hashlib
import io
import json
import zipfile

import pytest

from assessments.formats.archive import MEMBERS, SPECS, ArchiveReader, ArchiveWriter
from assessments.formats.errors import FormatError

TOPIC = {
    "number": "1", "title": "Cats or dogs?", "description": "", "narrative": "", "compared_objects": ["cats", "dogs"],
    "cause": "", "effect": "", "is_training": False, "pool_seed": 7, "position": 0, "metadata": {},
}
JUDGMENT = {
    "topic": "1", "doc": "d1", "assessor": "alice", "phase": "main", "labels": {"relevance": 2, "stance": "PRO"},
    "note": "", "flagged": False, "time_spent_ms": 10, "source": "web", "revision": 2,
    "created_at": "2024-05-01T10:00:00+00:00", "updated_at": "2024-05-01T10:05:00.123456+00:00",
    "history": [
        {"revision": 1, "assessor": "alice", "labels": {"relevance": 1}, "note": "", "flagged": False,
         "time_spent_ms": 5, "source": "web", "at": "2024-05-01T10:00:00+00:00"},
        {"revision": 2, "assessor": "alice", "labels": {"relevance": 2, "stance": "PRO"}, "note": "", "flagged": False,
         "time_spent_ms": 10, "source": "web", "at": "2024-05-01T10:05:00.123456+00:00"},
    ],
    "replies": [],
}


# Members that came with format version 4 (machine judges): an archive of an older version lists none of them.
SINCE_VERSION_4 = ("machine_judges.jsonl", "machine_labels.jsonl", "machine_exposures.jsonl")


def archive(lines: dict[str, list[bytes]] | None = None, **manifest_changes) -> io.BytesIO:
    """An archive with the given members' lines (others empty), written by ArchiveWriter; `manifest_changes`
    replace keys of its manifest (an older `version` lists that version's members only)."""
    stream = io.BytesIO()
    writer = ArchiveWriter(stream)
    older = manifest_changes.get("version") in (1, 2, 3)
    for name in MEMBERS:
        if older and name in SINCE_VERSION_4:
            continue
        with writer.member(name) as member:
            for raw in (lines or {}).get(name, []):
                member.write_bytes(raw)
    with writer.member("snapshots/0001.qrels") as member:
        member.write_bytes(b"1 0 d1 2\n")
    manifest = writer.finish(campaign="c", exported_at="2024-05-01T10:00:00+00:00")
    if manifest_changes:
        stream = rezip(stream, {"manifest.json": json.dumps({**manifest, **manifest_changes}).encode()})
    stream.seek(0)
    return stream


def rezip(stream: io.BytesIO, replaced: dict[str, bytes | None]) -> io.BytesIO:
    """The archive with members replaced (None: removed) or added, the manifest untouched unless replaced."""
    stream.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(stream) as old, zipfile.ZipFile(out, "w") as new:
        for name in old.namelist():
            if name not in replaced:
                new.writestr(name, old.read(name))
        for name, data in replaced.items():
            if data is not None:
                new.writestr(name, data)
    out.seek(0)
    return out


def line(value: dict) -> bytes:
    return json.dumps(value).encode() + b"\n"


def test_records_come_back_as_written_with_times_parsed():
    stream = io.BytesIO()
    writer = ArchiveWriter(stream)
    for name in MEMBERS:
        with writer.member(name) as member:
            if name == "topics.jsonl":
                member.write(TOPIC)
                member.write({**TOPIC, "number": "2", "title": "Tea or coffee? 猫 😀 \\ \t \n"})
            if name == "judgments.jsonl":
                member.write(JUDGMENT)
    manifest = writer.finish(campaign="c")
    stream.seek(0)
    reader = ArchiveReader(stream, source="c.zip")
    reader.verify()
    topics = list(reader.records("topics.jsonl"))
    assert [(n, r["title"]) for n, r in topics] == [(1, "Cats or dogs?"), (2, "Tea or coffee? 猫 😀 \\ \t \n")]
    (_, judgment), = reader.records("judgments.jsonl")
    assert judgment["history"][1]["at"].isoformat() == "2024-05-01T10:05:00.123456+00:00"
    listed = {m["name"]: m for m in manifest["members"]}
    assert listed["topics.jsonl"]["records"] == 2 and listed["users.jsonl"] == {
        "name": "users.jsonl", "bytes": 0, "records": 0, "sha256": hashlib.sha256(b"").hexdigest()
    }


@pytest.mark.parametrize(
    ("record", "error"),
    [
        ({**TOPIC, "position": -1}, "topics.jsonl:1: position: expected a whole number from 0 to 2147483647, got an integer"),
        ({**TOPIC, "is_training": 0}, "topics.jsonl:1: is_training: expected true or false, got an integer"),
        ({**TOPIC, "pool_seed": True}, "topics.jsonl:1: pool_seed: expected an integer of at most 64 bits, got true"),
        ({**TOPIC, "pool_seed": 2**64}, "topics.jsonl:1: pool_seed: expected an integer of at most 64 bits, got an integer"),
        ({k: v for k, v in TOPIC.items() if k != "title"}, "topics.jsonl:1: 'title' is missing"),
        ({**TOPIC, "secret": 1}, "topics.jsonl:1: unknown key 'secret'"),
        ({**TOPIC, "number": ""}, "topics.jsonl:1: number: expected a non-empty string"),
    ],
)
def test_a_wrong_field_is_named_by_member_line_and_key(record, error):
    reader = ArchiveReader(archive({"topics.jsonl": [line(record)]}), source="c.zip")
    with pytest.raises(FormatError) as refused:
        list(reader.records("topics.jsonl"))
    assert str(refused.value) == f"c.zip:{error}"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda j: j["history"][1].update(revision="2"), "history[1].revision: expected a whole number from 0 to 2147483647, got '2'"),
        (lambda j: j["history"][0].update(at="2024-05-01 10:00"), "history[0].at: time '2024-05-01 10:00' has no UTC offset"),
        (lambda j: j.update(created_at="yesterday"), "created_at: expected an ISO 8601 time, got 'yesterday'"),
        (lambda j: j.update(phase="setup"), "phase: expected 'training' or 'main', got 'setup'"),
        (lambda j: j.update(labels=[2]), "labels: expected an object of labels, got a list"),
        (lambda j: j["history"][0]["labels"].update(relevance=1.5), "history[0].labels.relevance: expected an integer of at most 64 bits, got a number"),
        (lambda j: j["labels"].update(flagged=True), "labels.flagged: expected an integer of at most 64 bits, got true"),
        (lambda j: j.update(replies=[{"author": "olivia", "text": "", "resolves": False, "created_at": "2024-05-01T10:00:00+00:00"}]),
         "replies[0].text: expected a non-empty string"),
    ],
)
def test_a_wrong_nested_field_is_named_by_its_path(change, error):
    judgment = json.loads(json.dumps(JUDGMENT))
    change(judgment)
    reader = ArchiveReader(archive({"judgments.jsonl": [line(JUDGMENT), line(judgment)]}), source="c.zip")
    with pytest.raises(FormatError) as refused:
        list(reader.records("judgments.jsonl"))
    assert str(refused.value) == f"c.zip:judgments.jsonl:2: {error}"


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"{not json\n", "not JSON (Expecting property name enclosed in double quotes at column 2)"),
        (b"\n", "not JSON (Expecting value at column 1)"),
        (line(TOPIC).replace(b'"pool_seed": 7', b'"pool_seed": NaN'), "not JSON that can be stored (ValueError: NaN is not a JSON number)"),
        (line(TOPIC).replace(b'"cause": ""', b'"cause": "a\\u0000b"'), "a string holds a NUL or a lone surrogate, which is not text"),
        (line(TOPIC).replace(b'"cause": ""', b'"cause": "\\ud800"'), "a string holds a NUL or a lone surrogate, which is not text"),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "not JSON that can be stored (RecursionError"),
        (line(TOPIC).replace(b'"title": "Cats', b'"title": "\xff'), "not UTF-8 text (byte 0xff at column 27)"),
    ],
)
def test_a_line_that_is_not_storable_json_is_refused_at_its_line(raw, error):
    reader = ArchiveReader(archive({"topics.jsonl": [line(TOPIC), raw]}), source="c.zip")
    with pytest.raises(FormatError) as refused:
        list(reader.records("topics.jsonl"))
    assert (refused.value.source, refused.value.line) == ("c.zip:topics.jsonl", 2)
    assert refused.value.reason.startswith(error)


def test_escaped_text_outside_the_basic_plane_is_text():
    raw = line(TOPIC).replace(b'"cause": ""', b'"cause": "\\ud83d\\ude00"')  # 😀 as json.dumps writes it by default
    (_, topic), = ArchiveReader(archive({"topics.jsonl": [raw]}), source="c.zip").records("topics.jsonl")
    assert topic["cause"] == "😀"


@pytest.mark.parametrize(
    ("replaced", "error"),
    [
        ({"audit.jsonl": None}, "c.zip:manifest.json: member audit.jsonl is listed but not in the archive"),
        ({"extra.txt": b"x"}, "c.zip:manifest.json: 'extra.txt' is in the archive but not listed"),
        ({"snapshots/0001.qrels": b"1 0 d1 1\n"}, "c.zip:snapshots/0001.qrels: its sha256 is not the manifest's: the member was changed after export"),
        ({"topics.jsonl": line(TOPIC)}, "c.zip:topics.jsonl: more bytes than the manifest lists (0)"),
        ({"manifest.json": b"{"}, "c.zip:manifest.json: not readable JSON"),
        ({"manifest.json": None}, "c.zip: not a campaign archive (manifest.json is missing)"),
    ],
)
def test_an_archive_that_differs_from_its_manifest_is_refused(replaced, error):
    with pytest.raises(FormatError) as refused:
        ArchiveReader(rezip(archive(), replaced), source="c.zip").verify()
    assert str(refused.value).startswith(error)


def test_a_member_with_other_line_count_than_listed_is_refused():
    stream = archive({"topics.jsonl": [line(TOPIC)]})
    with zipfile.ZipFile(stream) as old:
        manifest = json.loads(old.read("manifest.json"))
    for member in manifest["members"]:
        if member["name"] == "topics.jsonl":
            member["records"] = 3
    with pytest.raises(FormatError, match="c.zip:topics.jsonl: 1 lines where the manifest lists 3"):
        ArchiveReader(rezip(stream, {"manifest.json": json.dumps(manifest).encode()}), source="c.zip").verify()


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"version": 5}, "archive format version '5'; this Touchstone reads versions 1, 2, 3 and 4"),
        ({"version": True}, "archive format version 'True'; this Touchstone reads versions 1, 2, 3 and 4"),
        ({"format": "something-else"}, "not a campaign archive (format is not 'touchstone-campaign-archive')"),
        ({"members": [{"name": "../../etc/passwd", "bytes": 0, "records": 0, "sha256": ""}]}, "member campaign.jsonl is missing from the list"),
    ],
)
def test_a_manifest_of_another_format_or_version_is_refused(changes, error):
    with pytest.raises(FormatError) as refused:
        ArchiveReader(archive(**changes), source="c.zip")
    assert str(refused.value) == f"c.zip:manifest.json: {error}"


def test_a_file_that_is_not_a_zip_is_not_an_archive():
    with pytest.raises(FormatError, match=r"^c.zip: not a campaign archive \(not a zip file"):
        ArchiveReader(io.BytesIO(b"1 Q0 d1 1 1.0 run\n"), source="c.zip")


def test_every_member_has_a_spec_and_the_manifest_comes_last():
    stream = archive()
    with zipfile.ZipFile(stream) as written:
        assert written.namelist() == [*MEMBERS, "snapshots/0001.qrels", "manifest.json"]
    assert set(MEMBERS) == set(SPECS)


# As the code before label dimensions wrote them (format version 1): three label columns, a version-1 scheme and the
# campaign's "quality and stance only of relevant documents" setting.
CAMPAIGN_VERSION_1 = {
    "slug": "c", "name": "C", "preset": "touche-2021-task2", "guidelines": "", "phase": "main", "training_round": 1,
    "collection": {"slug": "c", "name": "C"}, "ask_details_only_if_relevant": True, "propagate_to_duplicates": True,
    "seconds_per_judgment": 30, "agreement_threshold": 0.4, "overlap_share": 0.0,
    "created_at": "2024-05-01T10:00:00+00:00", "archived_at": None,
    "scheme": {
        "relevance": [{"value": v, "name": str(v), "key": str(v)} for v in (0, 1, 2)],
        "quality": [{"value": v, "name": str(v), "key": k} for v, k in ((0, "q"), (1, "w"), (2, "e"))], "stance": [],
    },
}
JUDGMENT_VERSION_1 = {
    **{k: v for k, v in JUDGMENT.items() if k != "labels"}, "relevance": 2, "quality": 1, "stance": "PRO",
    "history": [
        {**{k: v for k, v in JUDGMENT["history"][0].items() if k != "labels"}, "relevance": 1, "quality": None, "stance": ""},
        {**{k: v for k, v in JUDGMENT["history"][1].items() if k != "labels"}, "relevance": 2, "quality": 1, "stance": "PRO"},
    ],
}


def test_a_version_1_archive_is_read_as_version_2_records():
    stream = archive({"campaign.jsonl": [line(CAMPAIGN_VERSION_1)], "judgments.jsonl": [line(JUDGMENT_VERSION_1)]}, version=1)
    reader = ArchiveReader(stream, source="c.zip")

    (_, campaign), = reader.records("campaign.jsonl")
    (_, judgment), = reader.records("judgments.jsonl")
    assert "ask_details_only_if_relevant" not in campaign
    assert [(d["name"], d.get("condition")) for d in campaign["scheme"]["dimensions"]] == [
        ("relevance", None), ("quality", {"dimension": "relevance", "min": 1}),
    ]
    # As migration 0020 moved the columns: a null quality and an empty stance are absent.
    assert judgment["labels"] == {"relevance": 2, "quality": 1, "stance": "PRO"}
    assert [h["labels"] for h in judgment["history"]] == [{"relevance": 1}, {"relevance": 2, "quality": 1, "stance": "PRO"}]
    assert not {"relevance", "quality", "stance"} & {*judgment, *judgment["history"][0]}


def test_a_version_1_record_is_checked_against_version_1s_keys():
    stream = archive({"judgments.jsonl": [line(JUDGMENT)]}, version=1)  # a version 2 record in a version 1 archive

    with pytest.raises(FormatError, match="judgments.jsonl:1: 'relevance' is missing"):
        list(ArchiveReader(stream, source="c.zip").records("judgments.jsonl"))
