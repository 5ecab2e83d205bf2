"""Read and write the files of Touché 2023 Task 4 (CoFE, stance of a comment towards a proposal).

The lab hands out comments and proposals as pandas writes them: TAB-separated with a header, fields quoted in
CSV fashion when they hold a TAB, a quote or a line break, and comments do span lines (the toy input has a French
comment of seven lines). Splitting on lines would cut such a comment into bogus rows, so these files are read
with the csv module, and an error names the physical line where its record starts, which is where an organiser
opening the file in an editor finds it. Line ends are read as Python's text mode reads them (``\\n``, ``\\r\\n``,
a lone ``\\r``), inside quoted fields too, so a file saved on Windows gives the same texts as the original.

Submissions are the lab's ``comment_id<TAB>label`` lines without a header (``toy-run/run.tsv``). Whether their
ids and labels match the gold is for the service to say; this module only reads them.

The gold export (`write_comments`) keeps the input's layout with the ``label`` column filled, so the organisers'
``evaluation.py`` reads it as their own truth file, and `parse_comments` reads it back unchanged.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from .errors import FormatError, shown
from .reading import CONTROL, line_batches

# The 24 official EU languages, plus Catalan and Esperanto, which the Conference on the Future of Europe also took.
LANGUAGES = frozenset("bg cs da de el en es et fi fr ga hr hu it lt lv mt nl pl pt ro sk sl sv ca eo".split())
LABELS = ("In favor", "Against", "Other")  # as the lab spells them in data and runs
UNLABELLED = "---"  # the lab's mark for a comment without a label
# The lab's header (toy-input/data.tsv).
COMMENT_COLUMNS = tuple(
    "id id_prop alignment comment depth thread_id last_comment_in_thread upvote downvote Topic lan time label".split()
)
COMMENT_REQUIRED = ("id", "id_prop", "comment", "lan")
PROPOSAL_REQUIRED = ("id", "title", "proposal")
# A CoFE comment is a few paragraphs at most; the limit keeps a hostile field out of every page that shows it.
MAX_COMMENT_CHARS = 100_000
PREDICTION_LAYOUT = "comment_id<TAB>label"

# The input is in memory whole, so no field can be longer than it; csv's own limit (128 KiB) would otherwise
# turn an overlong comment into a bare csv.Error before the length check can say what is wrong.
_FIELD_LIMIT = 2**31 - 1
_COMMENT_OWN = frozenset({"id", "id_prop", "comment", "lan", "label"})
_PROPOSAL_OWN = frozenset({"id", "title", "proposal", "title_en", "proposal_en", "lan"})


@dataclass(frozen=True)
class Comment:
    id: str
    proposal: str  # id_prop as written: pandas exports may say 238.0, and that is the proposal's id there
    text: str
    language: str
    label: str | None  # None: unlabelled (---); the self-annotated `alignment` column stays in fields
    fields: dict[str, str] = field(default_factory=dict)  # the other columns, by header name, in file order
    line: int = 0  # where the record starts, for messages about this comment


@dataclass(frozen=True)
class Proposal:
    id: str
    title: str
    text: str
    title_en: str
    text_en: str  # the lab's machine translation; empty when the file has none
    language: str  # empty when the file says nothing
    fields: dict[str, str] = field(default_factory=dict)
    line: int = 0


@dataclass(frozen=True)
class Prediction:
    id: str
    label: str
    line: int = 0


def parse_comments(data: bytes, *, source: str, languages: Collection[str] = LANGUAGES) -> list[Comment]:
    """Return the comments in file order, or raise `FormatError` naming the first bad record's line."""
    comments: list[Comment] = []
    first_line: dict[str, int] = {}
    for line, row in _table(data, source, COMMENT_REQUIRED):
        ident = _identifier(row["id"], "comment id", source, line)
        if ident in first_line:
            raise FormatError(source, line, f"{ident} appears twice (first on line {first_line[ident]})")
        first_line[ident] = line
        proposal = _identifier(row["id_prop"], f"comment {ident}: proposal id (id_prop)", source, line)
        text = _text(row["comment"], f"comment {ident}", source, line)
        language = row["lan"].strip()
        if language not in languages:
            raise FormatError(
                source,
                line,
                f"comment {ident}: unknown language code {shown(language)}"
                f" (expected one of {', '.join(sorted(languages))})",
            )
        label = row.get("label", "").strip()
        comments.append(
            Comment(
                id=ident,
                proposal=proposal,
                text=text,
                language=language,
                label=None if label in ("", UNLABELLED) else label,
                fields={name: value for name, value in row.items() if name not in _COMMENT_OWN},
                line=line,
            )
        )
    if not comments:
        raise FormatError(source, None, "no comments: the file has a header but no rows")
    return comments


def parse_proposals(data: bytes, *, source: str, languages: Collection[str] = LANGUAGES) -> list[Proposal]:
    """Return the proposals in file order, or raise `FormatError` naming the first bad record's line.

    ``lan`` may be missing or empty (the proposal's language is then unknown), but a code it gives must be known.
    """
    proposals: list[Proposal] = []
    first_line: dict[str, int] = {}
    for line, row in _table(data, source, PROPOSAL_REQUIRED):
        ident = _identifier(row["id"], "proposal id", source, line)
        if ident in first_line:
            raise FormatError(source, line, f"proposal {ident} appears twice (first on line {first_line[ident]})")
        first_line[ident] = line
        what = f"proposal {ident}"
        language = row.get("lan", "").strip()
        if language and language not in languages:
            raise FormatError(source, line, f"{what}: unknown language code {shown(language)}")
        text_en = row.get("proposal_en", "")
        if len(text_en) > MAX_COMMENT_CHARS:
            raise _too_long(source, line, f"{what}: its English text", len(text_en))
        proposals.append(
            Proposal(
                id=ident,
                title=row["title"].strip(),
                text=_text(row["proposal"], what, source, line),
                title_en=row.get("title_en", "").strip(),
                text_en=text_en,
                language=language,
                fields={name: value for name, value in row.items() if name not in _PROPOSAL_OWN},
                line=line,
            )
        )
    if not proposals:
        raise FormatError(source, None, "no proposals: the file has a header but no rows")
    return proposals


def parse_predictions(data: bytes, *, source: str) -> list[Prediction]:
    """Return a submission's lines in file order, or raise `FormatError` naming the first bad line.

    Spaces around a field are dropped (editors leave them), though the organisers' scorer would take
    ``In favor `` for a label of its own: the service checks labels against the scheme and says so.
    """
    predictions: list[Prediction] = []
    first_line: dict[str, int] = {}
    # The shared line reader refuses NUL, bytes that are not UTF-8, overlong lines and control characters.
    lines = chain.from_iterable(line_batches(io.BytesIO(data), source=source, fields=True))
    for line_no, line in enumerate(lines, 1):
        if line_no == 1:
            line = line.lstrip("\ufeff")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise FormatError(
                source, line_no, f"expected {PREDICTION_LAYOUT}, found {len(fields)} tab-separated field(s)"
            )
        ident, label = (value.strip() for value in fields)
        if not ident or len(ident.split()) != 1:
            raise FormatError(source, line_no, f"comment id {shown(ident)} is empty or contains whitespace")
        if not label:
            raise FormatError(source, line_no, f"{ident} has an empty label")
        if ident in first_line:
            raise FormatError(source, line_no, f"{ident} appears twice (first on line {first_line[ident]})")
        first_line[ident] = line_no
        predictions.append(Prediction(id=ident, label=label, line=line_no))
    if not predictions:
        raise FormatError(source, None, f"no predictions: expected {PREDICTION_LAYOUT} lines")
    return predictions


def write_comments(
    comments: Iterable[Comment],
    header: Sequence[str] = COMMENT_COLUMNS,
    *,
    labels: Mapping[str, str | None] | None = None,
) -> str:
    """The comments as a truth file in the lab's layout: ``header`` (a ``label`` column added if it lacks one),
    one record per comment, ``---`` where a comment has no label.

    ``labels`` (by comment id) replaces the comments' own labels, so the gold can be written over the imported
    input. Columns that ``header`` does not name are left out; a column a comment lacks is written empty. Line
    ends in values are written as ``\\n``, as `parse_comments` reads them: csv quotes a field with a ``\\n`` but
    not one with a lone ``\\r``, which a reader would then take for the record's end.
    """
    columns = list(header) if "label" in header else [*header, "label"]
    missing = [name for name in COMMENT_REQUIRED if name not in columns]
    if missing or len(set(columns)) != len(columns):
        raise ValueError(f"a comment file's header needs {', '.join(COMMENT_REQUIRED)} once each, got {columns}")
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow(columns)
    for comment in comments:
        label = comment.label if labels is None else labels.get(comment.id)
        own = {
            "id": comment.id,
            "id_prop": comment.proposal,
            "comment": comment.text,
            "lan": comment.language,
            "label": UNLABELLED if label is None else label,
        }
        writer.writerow([_one_line_end(own[name] if name in own else comment.fields.get(name, "")) for name in columns])
    return out.getvalue()


def _table(data: bytes, source: str, required: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """The records after the header, as (line where the record starts, column -> value); blank lines skipped."""
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    reader = csv.reader(io.StringIO(_decoded(data, source)), delimiter="\t", quotechar='"', strict=True)
    header: list[str] | None = None
    done = 0  # physical lines the reader has consumed
    while True:
        start = done + 1
        try:
            row = next(reader, None)
        except csv.Error as exc:
            # csv names the delimiter it expected as a raw TAB, which a message would show as blank space.
            reason = str(exc).replace("\t", "\\t")
            raise FormatError(source, start, f"not valid TSV: {reason}{_runs_on(start, reader.line_num)}") from None
        if row is None:
            break
        done = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if header is None:
            header = _header(row, source, start, required)
        elif len(row) != len(header):
            raise FormatError(
                source,
                start,
                f"expected {len(header)} tab-separated fields as in the header, found {len(row)}{_runs_on(start, done)}",
            )
        else:
            yield start, dict(zip(header, row))
    if header is None:
        raise FormatError(source, None, f"the file is empty: expected a header with {', '.join(required)}")


def _header(row: list[str], source: str, line: int, required: Sequence[str]) -> list[str]:
    header = [name.strip() for name in row]
    missing = [name for name in required if name not in header]
    if missing:
        raise FormatError(
            source,
            line,
            f"the header lacks {', '.join(missing)} (it has {', '.join(shown(name, 30) for name in header[:16])}"
            f"{', …' if len(header) > 16 else ''})",
        )
    twice = next((name for at, name in enumerate(header) if name in header[:at]), None)
    if twice is not None:
        raise FormatError(source, line, f"the header names column {shown(twice, 30)} twice")
    return header


def _decoded(data: bytes, source: str) -> str:
    if b"\x00" in data:
        raise FormatError(source, _line_at(data, data.index(b"\x00")), "the line contains a NUL byte")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = exc.start - max(data.rfind(b"\n", 0, exc.start), data.rfind(b"\r", 0, exc.start))
        raise FormatError(
            source, _line_at(data, exc.start), f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column})"
        ) from None
    return _one_line_end(text.removeprefix("\ufeff"))


def _line_at(data: bytes, at: int) -> int:
    """The physical line of byte ``at``, counting \\r\\n, \\n and a lone \\r as one line end each."""
    before = data[:at]
    return before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1


def _one_line_end(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _runs_on(start: int, end: int) -> str:
    if end <= start:
        return ""
    return f" (the record runs from line {start} to line {end}: is a quoted field left open?)"


def _identifier(value: str, what: str, source: str, line: int) -> str:
    """An id as runs and the database hold it: stripped, one word, no control character."""
    ident = value.strip()
    if not ident or len(ident.split()) != 1 or CONTROL.search(ident):
        raise FormatError(source, line, f"{what} {shown(value)} is empty or contains whitespace or a control character")
    return ident


def _text(value: str, what: str, source: str, line: int) -> str:
    """A comment's or proposal's text, kept exactly as written (line breaks are part of it)."""
    if not value.strip():
        raise FormatError(source, line, f"{what} has no text")
    if len(value) > MAX_COMMENT_CHARS:
        raise _too_long(source, line, what, len(value))
    return value


def _too_long(source: str, line: int, what: str, length: int) -> FormatError:
    return FormatError(
        source, line, f"{what} is {length:,} characters long, more than the limit of {MAX_COMMENT_CHARS:,}"
    )
