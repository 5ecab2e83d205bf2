"""The campaign archive: one zip file of JSON Lines members and a manifest, written by `export_campaign` and read
by `import_campaign`.

    manifest.json          {"format": FORMAT, "version": VERSION, "campaign": slug, "exported_at": …,
                            "members": [{"name", "bytes", "records", "sha256"}, …]}
    campaign.jsonl …       one JSON object per line; the keys of each member's objects are SPECS[member]
    snapshots/0001.qrels   a qrels snapshot's bytes as exported ("records": its lines)

Records name what they refer to by natural keys (usernames, topic numbers, document ids, run tags), never by
database ids, so an archive imports into any install. A judgment's line holds its whole history and the replies
to it, an adjudication's its history, a pool entry's its sources: each line is complete on its own.

The manifest is written last and read first. Before a record is used, `ArchiveReader.verify` reads every member
and refuses the archive (FormatError naming the member) when one's size, record count or sha256 differs from the
manifest, when a listed member is missing, or when the zip holds one the manifest does not list. Records are
then checked against SPECS as they are read: a wrong one raises FormatError(`archive:member`, line, what is
wrong). Archives are written in VERSION; older versions' records are read as this version's (READS; see
"Version 1" below), and a member added since an older version has no records in its archives. Pure: no Django import.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import IO, Any, BinaryIO

from assessments.labels import upgrade_from_version_1

from .errors import FormatError, shown
from .reading import line_batches

FORMAT = "touchstone-campaign-archive"
# 2: labels as one object keyed by the scheme's dimensions, schemes of version 2. 3: campaign kinds, topic metadata and
# run predictions. 4: machine judges, their labels and their showings to assessors. Older versions are still read.
VERSION = 4
MANIFEST = "manifest.json"
MANIFEST_MAX_BYTES = 1 << 20
MAX_LINE_BYTES = 128 << 20  # a document record (import_documents allows 32 MiB) with its JSON escapes
WRITE_BYTES = 1 << 20  # members are compressed a megabyte at a time
_SNAPSHOT_FILE = re.compile(r"snapshots/[0-9]{4,9}\.qrels")
_INT64 = 1 << 63
_INT32 = 1 << 31


# --- Checks of record fields ------------------------------------------------------------------------------
# A check takes a decoded JSON value and returns it as the importer stores it, or raises _Wrong saying what was
# expected. bool is never an integer here, though Python's isinstance(True, int) says it is.


class _Wrong(ValueError):
    """What a check expected, and where in the record (`path`: keys and list indices, outermost first)."""

    def __init__(self, message: str, path: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message, self.path = message, path

    def __str__(self) -> str:
        where = "".join(step if step.startswith("[") else f".{step}" for step in self.path).lstrip(".")
        return f"{where}: {self.message}" if where else self.message


Check = Callable[[Any], Any]


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number"}[type(value)]


def _expect(what: str, value: object) -> _Wrong:
    return _Wrong(f"expected {what}, got {shown(value) if isinstance(value, str) else _json_type(value)}")


def text(value: Any) -> str:
    if type(value) is not str:
        raise _expect("a string", value)
    return value


def nonempty(value: Any) -> str:
    if not text(value):
        raise _Wrong("expected a non-empty string")
    return value


def integer(value: Any) -> int:
    if type(value) is not int or not -_INT64 < value < _INT64:
        raise _expect("an integer of at most 64 bits", value)
    return value


def count(value: Any) -> int:
    """A PositiveIntegerField's value: 0 up to 2^31 - 1."""
    if type(value) is not int or not 0 <= value < _INT32:
        raise _expect(f"a whole number from 0 to {_INT32 - 1}", value)
    return value


def flag(value: Any) -> bool:
    if type(value) is not bool:
        raise _expect("true or false", value)
    return value


def number(value: Any) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise _expect("a finite number", value)
    return float(value)


def moment(value: Any) -> datetime:
    """An ISO 8601 time with its UTC offset (as `datetime.isoformat` writes an aware time)."""
    try:
        parsed = datetime.fromisoformat(text(value))
    except ValueError:
        raise _expect("an ISO 8601 time", value) from None
    if parsed.tzinfo is None:
        raise _Wrong(f"time {shown(value)} has no UTC offset")
    return parsed


def anything(value: Any) -> Any:
    """Free JSON (metadata, an audit event's before and after): stored as it is."""
    return value


def optional(check: Check) -> Check:
    def optional_check(value: Any) -> Any:
        return None if value is None else check(value)

    return optional_check


def one_of(*choices: str) -> Check:
    def choice(value: Any) -> str:
        if value not in choices:
            raise _expect(" or ".join(map(repr, choices)), value)
        return value

    return choice


def list_of(check: Check) -> Check:
    def checked_list(value: Any) -> list:
        if type(value) is not list:
            raise _expect("a list", value)
        return [_at(check, item, f"[{i}]") for i, item in enumerate(value)]

    return checked_list


def record(spec: Mapping[str, Check]) -> Check:
    """An object with exactly the keys of `spec`, each passing its check."""

    def checked_record(value: Any) -> dict:
        if type(value) is not dict:
            raise _expect("an object", value)
        if missing := [key for key in spec if key not in value]:
            raise _Wrong(f"{missing[0]!r} is missing")
        if extra := [key for key in value if key not in spec]:
            raise _Wrong(f"unknown key {shown(extra[0])}")
        return {key: _at(check, value[key], key) for key, check in spec.items()}

    return checked_record


def _at(check: Check, value: Any, where: str) -> Any:
    try:
        return check(value)
    except _Wrong as exc:  # messages read "history[2].revision: expected …"
        raise _Wrong(exc.message, (where, *exc.path)) from None


# --- The members ------------------------------------------------------------------------------------------


def labels_object(value: Any) -> dict:
    """A judgment's labels: an object from dimension names to integers or strings (which dimensions and values, the
    archived scheme says: the importer checks them against it)."""
    if type(value) is not dict:
        raise _expect("an object of labels", value)
    for name, label in value.items():
        if type(label) is not str:
            _at(integer, label, name)
    return value


_PHASES = one_of("training", "main")


def _specs(
    *, labels: Mapping[str, Check], settings: Mapping[str, Check], topic: Mapping[str, Check] = {}, run: Mapping[str, Check] = {},
    machine: Mapping[str, dict[str, Check]] = {},
) -> dict[str, dict[str, Check]]:
    """The members and their records' keys, with `labels` where a record holds labels, `settings` among the
    campaign's, `topic` and `run` among a topic's and a run's, and the `machine` members after the adjudications
    (the ways the versions differ)."""
    return {
        "campaign.jsonl": {
            "slug": nonempty, "name": text, "preset": text, "scheme": anything, "guidelines": text,
            "phase": one_of("setup", "training", "main", "closed"), "training_round": count,
            "collection": record({"slug": nonempty, "name": text}),
            **settings, "propagate_to_duplicates": flag, "seconds_per_judgment": count,
            "agreement_threshold": number, "overlap_share": number, "created_at": moment, "archived_at": optional(moment),
        },
        # No passwords, e-mail addresses or privileges: people are matched by username (see import_campaign).
        "users.jsonl": {"username": nonempty, "role": one_of("assessor", "organiser", "admin", "source"), "first_name": text, "last_name": text},
        "memberships.jsonl": {"user": nonempty, "role": one_of("organiser", "adjudicator"), "added_by": optional(nonempty), "created_at": moment},
        "topics.jsonl": {
            "number": nonempty, "title": text, "description": text, "narrative": text, "compared_objects": anything,
            "cause": text, "effect": text, "is_training": flag, "pool_seed": integer, "position": count, **topic,
        },
        "documents.jsonl": {
            "doc_id": nonempty, "title": text, "body": text, "is_html": flag, "url": text, "metadata": anything,
            "has_text": flag, "text_hash": text,
        },
        "runs.jsonl": {
            "tag": nonempty, "team": text, "file_name": text, "has_stance": flag, "line_count": count,
            "warnings": anything, "uploaded_by": optional(nonempty), "uploaded_at": moment, **run,
        },
        "rankings.jsonl": {
            "run": nonempty, "topic": nonempty, "length": count, "docs": list_of(text), "ranks": list_of(integer),
            "scores": list_of(number), "stances": optional(list_of(optional(text))),
            "by_rank": optional(list_of(count)), "by_single": optional(list_of(count)),
        },
        "pool.jsonl": {
            "topic": nonempty, "doc": nonempty, "order": count, "strategy": text, "added_at": moment,
            "duplicate_of": optional(nonempty),
            "sources": list_of(record({"run": nonempty, "rank_position": optional(count), "score_position": optional(count)})),
        },
        "assignments.jsonl": {
            "topic": nonempty, "assessor": nonempty, "phase": _PHASES, "scope": one_of("full", "overlap"), "round": count,
            "active": flag, "assigned_by": optional(nonempty), "created_at": moment, "items": list_of(nonempty),
        },
        "judgments.jsonl": {
            "topic": nonempty, "doc": nonempty, "assessor": nonempty, "phase": _PHASES, **labels, "note": text,
            "flagged": flag, "time_spent_ms": count, "source": text, "revision": count, "created_at": moment,
            "updated_at": moment,
            "history": list_of(record({
                "revision": count, "assessor": nonempty, **labels, "note": text, "flagged": flag, "time_spent_ms": count,
                "source": text, "at": moment,
            })),
            "replies": list_of(record({"author": nonempty, "text": nonempty, "resolves": flag, "created_at": moment})),
        },
        "adjudications.jsonl": {
            "topic": nonempty, "doc": nonempty, **labels, "reason": nonempty, "adjudicator": nonempty, "revision": count,
            "created_at": moment, "updated_at": moment,
            "history": list_of(record({"revision": count, "adjudicator": nonempty, **labels, "reason": nonempty, "at": moment})),
        },
        **machine,
        # kind: a dimension of the archived scheme (the importer checks which).
        "snapshots.jsonl": {
            "number": count, "kind": nonempty, "phase": one_of("main", "training", "all"),
            "rule": text, "line_count": count, "sha256": text, "created_by": optional(nonempty), "created_at": moment,
            "file": text,
        },
        "audit.jsonl": {
            "at": moment, "actor": optional(nonempty), "action": nonempty, "subject": text, "before": anything,
            "after": anything, "details": anything,
        },
    }


# A judge's prompts are nested in its record; a label names its judge by name and the prompt it was made with by
# (its dimension and) `prompt_version`, 0 for the local judge's, which has thresholds and no prompt. No key is ever
# in an archive (nor in the database): `key_name` names where an install finds one. An exposure names the label the
# assessor was shown by its line in machine_labels.jsonl (a label has no other key of its own: the same document
# may be labelled again).
_MACHINE_MEMBERS: dict[str, dict[str, Check]] = {
    "machine_judges.jsonl": {
        "name": nonempty, "kind": one_of("endpoint", "local"), "base_url": text, "model": text, "key_name": text,
        "parameters": anything, "in_flight": count, "per_minute": count, "max_attempts": count, "thresholds": anything,
        "created_by": optional(nonempty), "created_at": moment,
        "prompts": list_of(record({
            "dimension": nonempty, "version": count, "system": text, "template": text, "answers": anything,
            "created_by": optional(nonempty), "created_at": moment,
        })),
    },
    "machine_labels.jsonl": {
        "judge": nonempty, "topic": nonempty, "doc": nonempty, "dimension": nonempty, "prompt_version": count,
        "status": one_of("ok", "failed"), "labels": labels_object, "model": text, "parameters": anything, "raw_answer": text,
        "reason": text, "error": text, "attempts": count, "prompt_tokens": count, "completion_tokens": count,
        "duration_ms": count, "at": moment,
    },
    "machine_exposures.jsonl": {"assessor": nonempty, "topic": nonempty, "doc": nonempty, "label": count, "at": moment},
}
_KIND = {"kind": one_of("ranking", "classification", "images")}
SPECS = _specs(
    labels={"labels": labels_object},
    settings={"stance_codes": anything, **_KIND, "reveal_machine_labels": flag, "machine_disagreement": count},
    topic={"metadata": anything}, run={"predictions": anything}, machine=_MACHINE_MEMBERS,
)
MEMBERS = tuple(SPECS)  # the order they are written and imported in: a record names only what came before it


def snapshot_file(number: int) -> str:
    return f"snapshots/{number:04d}.qrels"


# --- Version 1 --------------------------------------------------------------------------------------------
# Archives written before campaigns defined their label dimensions held a record's labels in three columns, and a
# version-1 scheme beside the campaign's "quality and stance only of relevant documents" setting. They are read as
# version 2 records: the columns become `labels` as migration 0020 moved the database's (a null quality and an
# empty stance are absent keys), and the scheme is upgraded by labels.upgrade_from_version_1, the setting becoming
# its dimensions' condition. These column names are the old file's, not dimensions this code knows.

_VERSION_1_LABELS = {"relevance": integer, "quality": optional(integer), "stance": text}
_VERSION_1_SETTING = "ask_details_only_if_relevant"
SPECS_VERSION_1 = _specs(labels=_VERSION_1_LABELS, settings={_VERSION_1_SETTING: flag})


def _from_version_1(name: str, value: dict) -> dict:
    """A checked version-1 record of member `name` as version 2 writes it."""
    if name == "campaign.jsonl":
        value["stance_codes"] = {}  # runs imported before stance codes hold the scheme's own values
        details_only_if_relevant = value.pop(_VERSION_1_SETTING)
        if type(value["scheme"]) is not dict:
            raise _Wrong("expected a version-1 label scheme (an object)", ("scheme",))
        try:
            value["scheme"] = upgrade_from_version_1(value["scheme"], details_only_if_relevant=details_only_if_relevant)
        except TypeError as exc:
            raise _Wrong(f"not a version-1 label scheme ({exc})", ("scheme",)) from None
    elif name in ("judgments.jsonl", "adjudications.jsonl"):
        for labelled in (value, *value["history"]):
            columns = {column: labelled.pop(column) for column in _VERSION_1_LABELS}
            labelled["labels"] = {column: label for column, label in columns.items() if label is not None and label != ""}
    return value


# --- Versions 2 and 3 -------------------------------------------------------------------------------------
# Archives written before classification campaigns (version 2) had no campaign kind, topic metadata or run
# predictions: every campaign then ranked documents, no topic had metadata and no run predicted labels. Archives
# written before machine judges (versions 1 to 3) have no judges, and their campaigns the settings a campaign has
# without one, models.campaigns' defaults: no machine label shown to assessors, adjudication from a difference of two
# grades.

SPECS_VERSION_2 = _specs(labels={"labels": labels_object}, settings={"stance_codes": anything})
SPECS_VERSION_3 = _specs(
    labels={"labels": labels_object}, settings={"stance_codes": anything, **_KIND}, topic={"metadata": anything},
    run={"predictions": anything},
)
_SPECS = {1: SPECS_VERSION_1, 2: SPECS_VERSION_2, 3: SPECS_VERSION_3, VERSION: SPECS}
READS = tuple(_SPECS)  # the versions ArchiveReader reads
# The version that added keys to a member's records -> those keys with the values an older archive's records get.
_ADDED: dict[int, dict[str, dict[str, object]]] = {
    3: {"campaign.jsonl": {"kind": "ranking"}, "topics.jsonl": {"metadata": {}}, "runs.jsonl": {"predictions": {}}},
    4: {"campaign.jsonl": {"reveal_machine_labels": False, "machine_disagreement": 2}},
}


def _from_version(version: int, name: str, value: dict) -> dict:
    """A checked record of member `name` in an archive of an older `version` (version 1's read as version 2's) as
    this version writes it."""
    for added_in, keys in _ADDED.items():
        if version < added_in:
            value = {**value, **keys.get(name, {})}
    return value


# --- Writing ----------------------------------------------------------------------------------------------


def _encode(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not stored in an archive")


class ArchiveWriter:
    """Write an archive to a binary stream: members one after the other, then `finish` writes the manifest."""

    def __init__(self, stream: BinaryIO) -> None:
        self._zip = zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED)
        self.members: list[dict] = []

    @contextmanager
    def member(self, name: str) -> Iterator[MemberWriter]:
        if name not in SPECS and not _SNAPSHOT_FILE.fullmatch(name):
            raise ValueError(f"{name} is not a member of a campaign archive")
        info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])  # else the zip says 1980
        info.compress_type = zipfile.ZIP_DEFLATED
        # force_zip64: a member's size is unknown until it is written, and may pass 4 GiB.
        with self._zip.open(info, "w", force_zip64=True) as raw:
            writer = MemberWriter(raw)
            yield writer
            writer.flush()
        self.members.append({"name": name, "bytes": writer.bytes, "records": writer.records, "sha256": writer.sha256.hexdigest()})

    def finish(self, **about: object) -> dict:
        manifest = {"format": FORMAT, "version": VERSION, **about, "members": self.members}
        self._zip.writestr(MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False, default=_encode) + "\n")
        self._zip.close()
        return manifest


class MemberWriter:
    """One member: JSON lines (`write`) or a file's bytes (`write_bytes`), counted and hashed as they go."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self.sha256 = hashlib.sha256()
        self.bytes = 0
        self.records = 0

    def write(self, value: dict) -> None:
        # ensure_ascii=False: text as UTF-8, a third of the size of \\u escapes for non-Latin scripts.
        data = (json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_encode) + "\n").encode()
        self._pending.append(data)
        self._pending_bytes += len(data)
        self.records += 1
        if self._pending_bytes >= WRITE_BYTES:
            self.flush()

    def write_bytes(self, data: bytes) -> None:
        self._pending.append(data)
        self._pending_bytes += len(data)
        self.records += data.count(b"\n")
        if self._pending_bytes >= WRITE_BYTES:
            self.flush()

    def flush(self) -> None:
        data = b"".join(self._pending)
        self._pending, self._pending_bytes = [], 0
        self.sha256.update(data)
        self.bytes += len(data)
        self._raw.write(data)


# --- Reading ----------------------------------------------------------------------------------------------


class ArchiveReader:
    """An archive opened for import: the manifest is read and checked at once, the members by `verify`."""

    def __init__(self, stream: BinaryIO, *, source: str) -> None:
        self.source = source
        try:
            self._zip = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, OSError) as exc:
            raise FormatError(source, None, f"not a campaign archive (not a zip file: {exc})") from None
        self.manifest = self._read_manifest()
        self.version: int = self.manifest["version"]
        self.specs = _SPECS[self.version]
        self.listed = {member["name"]: member for member in self.manifest["members"]}

    def where(self, member: str) -> str:
        """How errors name a member: ``archive.zip:judgments.jsonl``."""
        return f"{self.source}:{member}"

    def _read_manifest(self) -> dict:
        entries = self._zip.namelist()
        names = set(entries)
        if len(names) != len(entries):
            raise FormatError(self.source, None, "the zip holds two members of one name")
        if MANIFEST not in names:
            raise FormatError(self.source, None, f"not a campaign archive ({MANIFEST} is missing)")
        if self._zip.getinfo(MANIFEST).file_size > MANIFEST_MAX_BYTES:
            raise FormatError(self.where(MANIFEST), None, f"larger than {MANIFEST_MAX_BYTES:,} bytes")
        try:
            manifest = json.loads(self._zip.read(MANIFEST).decode())
        except (ValueError, zipfile.BadZipFile, OSError) as exc:
            raise FormatError(self.where(MANIFEST), None, f"not readable JSON ({exc})") from None
        member = record({"name": text, "bytes": integer, "records": integer, "sha256": text})
        try:
            if type(manifest) is not dict or manifest.get("format") != FORMAT:
                raise _Wrong(f"not a campaign archive (format is not {FORMAT!r})")
            if manifest.get("version") not in READS or type(manifest.get("version")) is not int:
                raise _Wrong(
                    f"archive format version {shown(str(manifest.get('version')))}; this Touchstone reads versions "
                    f"{', '.join(map(str, READS[:-1]))} and {READS[-1]}"
                )
            manifest["members"] = list_of(member)(manifest.get("members"))
        except _Wrong as exc:
            raise FormatError(self.where(MANIFEST), None, str(exc)) from None
        listed = [m["name"] for m in manifest["members"]]
        specs = _SPECS[manifest["version"]]
        problems = [f"member {shown(name)} is listed twice" for name in listed if listed.count(name) > 1]
        problems += [f"member {name} is missing from the list" for name in specs if name not in listed]
        problems += [
            f"{shown(name)} is not a member of a campaign archive of version {manifest['version']}"
            for name in listed if name not in specs and not _SNAPSHOT_FILE.fullmatch(name)
        ]
        problems += [f"member {name} is listed but not in the archive" for name in listed if name not in names]
        problems += [f"{shown(name)} is in the archive but not listed" for name in sorted(names - set(listed) - {MANIFEST})]
        if problems:
            raise FormatError(self.where(MANIFEST), None, problems[0])
        return manifest

    def verify(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Read every member and compare it with the manifest; raise FormatError at the first that differs.
        `progress(done, total)` is told the lines (records) read. Memory stays flat: members are hashed a megabyte
        at a time."""
        total = sum(member["records"] for member in self.manifest["members"])
        done = 0
        for member in self.manifest["members"]:
            name = member["name"]
            sha256, size, lines = hashlib.sha256(), 0, 0
            with self._open(name) as stream:
                # Read at most a byte past the declared size: a member larger than listed ends the read there.
                while size <= member["bytes"] and (block := stream.read(min(1 << 20, member["bytes"] + 1 - size))):
                    sha256.update(block)
                    size += len(block)
                    lines += block.count(b"\n")
                    if progress:
                        progress(done + lines, total)
            if size != member["bytes"]:
                raise FormatError(self.where(name), None, f"{'more' if size > member['bytes'] else 'fewer'} bytes than the manifest lists ({member['bytes']:,})")
            if sha256.hexdigest() != member["sha256"]:
                raise FormatError(self.where(name), None, "its sha256 is not the manifest's: the member was changed after export")
            if lines != member["records"]:
                raise FormatError(self.where(name), None, f"{lines:,} lines where the manifest lists {member['records']:,}")
            done += lines

    @contextmanager
    def _open(self, name: str) -> Iterator[BinaryIO]:
        try:
            with self._zip.open(name) as stream:
                yield stream  # type: ignore[misc]
        except (zipfile.BadZipFile, OSError, EOFError) as exc:  # a corrupt member: bad CRC or deflate stream
            raise FormatError(self.where(name), None, f"cannot be read ({exc})") from None

    def records(self, name: str) -> Iterator[tuple[int, dict]]:
        """The member's records as (line, checked record): fields checked against SPECS[name] (an older version's
        specs in an older archive, its records then read as this version's), times parsed. A member added since the
        archive's version has none."""
        if name not in self.specs:
            return
        check = record(self.specs[name])
        source = self.where(name)
        line = 0
        with self._open(name) as stream:
            for batch in line_batches(stream, source=source, max_line_bytes=MAX_LINE_BYTES):
                for raw in batch:
                    line += 1
                    value = self._decoded(raw, check, source, line)
                    if self.version == 1:
                        try:
                            value = _from_version_1(name, value)
                        except _Wrong as exc:
                            raise FormatError(source, line, str(exc)) from None
                    if self.version < VERSION:
                        value = _from_version(self.version, name, value)
                    yield line, value

    @staticmethod
    def _decoded(raw: str, check: Check, source: str, line: int) -> dict:
        try:
            value = json.loads(raw, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise FormatError(source, line, f"not JSON ({exc.msg} at column {exc.colno})") from None
        except (ValueError, RecursionError) as exc:  # NaN or Infinity; nesting; an integer of thousands of digits
            raise FormatError(source, line, f"not JSON that can be stored ({exc.__class__.__name__}: {str(exc)[:80]})") from None
        if "\\u" in raw:  # the only way to a NUL or a lone surrogate, which PostgreSQL text refuses
            _refuse_escapes(value, source, line)
        try:
            return check(value)
        except _Wrong as exc:
            raise FormatError(source, line, str(exc)) from None

    def chunks(self, name: str) -> Iterator[bytes]:
        """A file member's bytes (a snapshot), a megabyte at a time."""
        with self._open(name) as stream:
            while block := stream.read(1 << 20):
                yield block


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_escapes(value: object, source: str, line: int) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and ("\x00" in item or _SURROGATE.search(item)):
            raise FormatError(source, line, "a string holds a NUL or a lone surrogate, which is not text")
