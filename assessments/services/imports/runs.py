"""Importing TREC run files: a run is its tag, and a tag imported again replaces that run's lines."""

from __future__ import annotations

import io
import marshal
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from itertools import chain, count, islice
from operator import attrgetter, gt
from pathlib import Path
from typing import BinaryIO, NamedTuple, Protocol, TypedDict

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from assessments.collector import collector_paused
from assessments.formats.errors import FormatError
from assessments.formats.reading import line_batches
from assessments.formats.trec_run import RunBlock, RunTally, read_run
from assessments.metrics.evaluation import Order, order_positions, single_precision_order, stance_dimension
from assessments.models import Campaign, Document, PoolSource, Ranking, Run, Topic
from assessments.models.fields import max_length
from assessments.services import audit, bulk, rankings
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.files import FilesMeter, InputFile, files_label, first_line_where, input_files, opened
from assessments.services.jobs import NoProgress, Progress
from assessments.services.ranking_stage import RankingStage

TEAM_LENGTH = max_length(Run, "team")

_DOC_ID_LENGTH = max_length(Document, "doc_id")  # a pooled id becomes a Document
_TAG_LENGTH = max_length(Run, "tag")
_INT4 = 2**31  # Ranking.ranks holds 32-bit integers


class StanceRead(TypedDict):
    """The lines of one stance code a run import read, and the stance value they were stored as."""

    value: str
    lines: int


@dataclass
class _ReadRun:
    """One run tag read from a file: its rankings wait in the stage under `key`, a number unique in the import."""

    tag: str
    file: InputFile
    team: str
    key: int
    topics: int = 0
    lines: int = 0
    has_stance: bool = False
    warnings: list[str] = field(default_factory=list)


def import_runs(
    *,
    campaign: Campaign,
    paths: Sequence[str | Path],
    names: Sequence[str] | None = None,
    team: str = "",
    uploaded_by: User | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Store TREC run files; a run is its tag, and a tag imported again replaces that run's lines.

    All files are checked before anything is stored, and all are stored in one transaction. A replaced run
    keeps its Run row, so pool sources still point at it: their positions are updated from the new lines and
    sources whose document left the run are cleared. Pool entries are never removed (they may be judged).
    `team` applies to every file; without it a file named ``TEAM-TAG.txt`` gives TEAM, and a replaced run
    keeps its team.
    """
    progress = progress or NoProgress()
    files = input_files(paths, names)
    if len(team) > TEAM_LENGTH:
        raise ImportProblem(f"the team name is longer than {TEAM_LENGTH} characters")
    topic_ids = dict(Topic.objects.filter(campaign=campaign).values_list("number", "id"))
    require_topics(campaign, bool(topic_ids))
    # The stance column holds labels of the scheme's stance dimension, or the campaign's codes for them (NEU for
    # NEUTRAL), stored as the labels; without a stance dimension, only Q0 (no stance) is read.
    stance = stance_dimension(campaign.label_scheme)
    stances = tuple(str(v) for v in campaign.label_scheme.values(stance.name)) if stance else ()
    stance_codes = {code: value for code, value in (campaign.stance_codes or {}).items() if value in stances}
    meter = FilesMeter(progress, files)

    reading = _Reading(topic_ids=topic_ids, stances=stances, stance_codes=stance_codes, meter=meter)
    with tempfile.TemporaryFile() as spool, _stage(spool) as stage, collector_paused():
        runs: dict[str, _ReadRun] = {}
        for file in files:
            for run in reading.file(file, spool=spool, stage=stage):
                if run.tag in runs:
                    raise FormatError(file.name, None, f"run {run.tag} is also in {runs[run.tag].file.name}; a tag names one run")
                run.team = team or run.team
                runs[run.tag] = run
        checksums = audit.file_checksums((f.name, f.path) for f in files)
        read_stances = reading.stances_read(stance_codes)
        with transaction.atomic():
            stored, replaced = _store_runs(campaign, list(runs.values()), stage=stage, topic_ids=topic_ids, uploaded_by=uploaded_by)
            sources = _repoint_pool_sources(replaced)
            replaced_tags = {run.tag for run in replaced}
            audit.record(
                campaign=campaign, action=audit.Action.RUNS_IMPORTED, by=uploaded_by, subject=files_label(files),
                details={"files": checksums, "runs": [
                    {"tag": r.tag, "lines": r.lines, "topics": r.topics, "replaced": r.tag in replaced_tags} for r in runs.values()
                ], **({"stances": read_stances} if read_stances else {})},
            )

    lines = sum(run.lines for run in runs.values())
    warnings = [warning for run in runs.values() for warning in run.warnings]
    if sources.cleared or sources.kept:
        warnings.append(
            f"the pool was built from the replaced runs: pool sources now pointing at the new lines: {sources.kept},"
            f" cleared (their documents left the runs): {sources.cleared}; pool entries and judgments are kept."
            " Build the pool again to add documents the new versions rank high."
        )
    text = f"{files_label(files)}: {len(runs)} run{'s' if len(runs) != 1 else ''} with {lines:,} lines stored ({len(runs) - len(replaced)} new, {len(replaced)} replaced)"
    if read_stances:
        text += "; stance column: " + ", ".join(_stance_read(code, **s) for code, s in read_stances.items())
    if warnings:
        text += f"; {len(warnings)} warning{'s' if len(warnings) != 1 else ''}"
    return ImportSummary(
        text,
        warnings,
        {
            "runs": [{"tag": r.tag, "team": stored[r.tag].team, "lines": r.lines, "topics": r.topics, "file": r.file.name} for r in runs.values()],
            "lines": lines,
            "replaced": sorted(run.tag for run in replaced),
            # Lines per stance code as the runs wrote it, with the value stored for it (Q0 lines not counted).
            "stances": read_stances,
        },
    )


def _stance_read(code: str, *, value: str, lines: int) -> str:
    """`NEU→NEUTRAL 2 lines`, or `SUPPORT 1 line` for a value written as itself."""
    read_as = code if code == value else f"{code}→{value}"
    return f"{read_as} {lines:,} line{'s' if lines != 1 else ''}"


def require_topics(campaign: Campaign, has_topics: bool) -> None:
    if not has_topics:
        raise ImportProblem(f"campaign {campaign.slug} has no topics yet: import its topics before its runs")


class _Stage(Protocol):
    """Where rankings wait, once read, for the storing transaction (RankingStage on PostgreSQL, _SpoolStage on SQLite)."""

    def add(self, key: int, ranking: _Ranking | bytes) -> None: ...

    def store(self, run_ids: Mapping[int, int]) -> None: ...


def _stage(spool: BinaryIO) -> AbstractContextManager[_Stage]:
    return RankingStage() if bulk.is_postgresql() else _SpoolStage(spool)


class _SpoolStage:
    """SQLite's stage (the demo's): the rankings wait in the import's spool file."""

    def __init__(self, spool: BinaryIO) -> None:
        self._spool = spool
        self._offsets: dict[int, list[int]] = {}

    def __enter__(self) -> _SpoolStage:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass

    def add(self, key: int, ranking: _Ranking | bytes) -> None:
        assert isinstance(ranking, _Ranking), "COPY text is made only for PostgreSQL"
        self._offsets.setdefault(key, []).append(_spool_ranking(self._spool, ranking))

    def store(self, run_ids: Mapping[int, int]) -> None:
        bulk.store_rankings(_unspooled(self._spool, [(run_id, self._offsets.get(key, [])) for key, run_id in run_ids.items()]))


@dataclass
class _Reading:
    """Reads the files of one import, numbering their runs."""

    topic_ids: Mapping[str, int]
    stances: Sequence[str]
    stance_codes: Mapping[str, str]
    meter: FilesMeter
    keys: Iterator[int] = field(default_factory=count)
    codes_read: dict[str, int] = field(default_factory=dict)  # lines per stance code, over the import's files

    def stances_read(self, stance_codes: Mapping[str, str]) -> dict[str, StanceRead]:
        """Each stance code the files wrote, with the value it was stored as and its lines: in the order of the
        scheme's values, a value's codes before the value itself."""
        order = {value: i for i, value in enumerate(self.stances)}

        def place(code: str) -> tuple[int, bool, str]:
            return order.get(stance_codes.get(code, code), len(order)), code not in stance_codes, code

        return {code: StanceRead(value=stance_codes.get(code, code), lines=self.codes_read[code]) for code in sorted(self.codes_read, key=place)}

    def file(self, file: InputFile, *, spool: BinaryIO, stage: _Stage) -> list[_ReadRun]:
        """Check one run file and stage its rankings: on PostgreSQL by the column reader when the file is plain
        enough for it (as COPY text, made in C), else, or when it declines, by the line reader."""
        if bulk.is_postgresql():
            # Imported here, not at the top: Arrow's libraries add some 50 MB to a process, which only run imports need.
            from assessments.formats.trec_run_columns import Declined

            try:
                return self._columns(file, stage)
            except Declined:
                pass  # what it staged is never stored: only the runs returned have their keys stored
        return self._lines(file, spool, stage)

    def _run(self, runs: dict[str, _ReadRun], file: InputFile, tag: str) -> _ReadRun:
        if tag not in runs:
            _check_tag(file, tag)
            runs[tag] = _ReadRun(tag=tag, file=file, team=_team_from_name(file.name, tag), key=next(self.keys))
        return runs[tag]

    def _columns(self, file: InputFile, stage: _Stage) -> list[_ReadRun]:
        from assessments.formats.trec_run_columns import ColumnRunReader

        runs: dict[str, _ReadRun] = {}
        with opened(file) as (raw, stream):
            reader = ColumnRunReader(
                stream, source=file.name, known_topics=self.topic_ids.keys(), stances=self.stances,
                max_doc_id_length=_DOC_ID_LENGTH, read=lambda: self.meter.at(raw.tell()), stance_codes=self.stance_codes,
                max_lines_per_topic=settings.RUN_MAX_LINES_PER_TOPIC,
            )
            for block in reader.blocks():
                run = self._run(runs, file, block.tag)
                stage.add(run.key, f"{self.topic_ids[block.topic]}\t{block.lists}".encode())
                run.topics += 1
                run.lines += block.length
                run.has_stance = run.has_stance or block.has_stance
        return self._read(file, runs, reader)

    def _lines(self, file: InputFile, spool: BinaryIO, stage: _Stage) -> list[_ReadRun]:
        """Check one run file with the line reader, both orders computed per topic.

        Each topic's lines are spooled as soon as they end, so memory holds one topic's lines whatever the size of
        the file. A topic whose lines come back later in the file (rare) is spooled in pieces, which are read back
        and put together once the file has been read: an order needs all of a topic's lines. Then each topic's
        ranking is staged.
        """
        reader = read_run(
            _run_lines(file, self.meter), source=file.name, known_topics=self.topic_ids.keys(), stances=self.stances,
            stance_codes=self.stance_codes, max_lines_per_topic=settings.RUN_MAX_LINES_PER_TOPIC,
        )
        runs: dict[str, _ReadRun] = {}
        pieces: dict[tuple[str, str], list[int]] = {}
        for block in reader.blocks():
            self._run(runs, file, block.tag)
            ranking = _ranking(file, [block], topic_id=self.topic_ids[block.topic])
            pieces.setdefault((block.tag, block.topic), []).append(_spool_ranking(spool, ranking))
        for (tag, number), offsets in pieces.items():
            parts = [_unspool(spool, offset) for offset in offsets]
            if len(parts) > 1:
                blocks = [_block_of(part, tag=tag, topic=number) for part in parts]
                _check_documents_once(file, blocks)
                parts = [_ranking(file, blocks, topic_id=self.topic_ids[number])]
            run = runs[tag]
            stage.add(run.key, parts[0])
            run.topics += 1
            run.lines += parts[0].length
            run.has_stance = run.has_stance or parts[0].stances is not None
        return self._read(file, runs, reader)

    def _read(self, file: InputFile, runs: dict[str, _ReadRun], reader: RunTally) -> list[_ReadRun]:
        """A file read to its end by `reader` (only then: one that declined counted lines the line reader counts again)."""
        self.meter.file_done(file.path.stat().st_size)
        for run in runs.values():
            run.warnings = [str(w) for w in reader.warnings]
        for code, n in reader.stance_codes_read.items():
            self.codes_read[code] = self.codes_read.get(code, 0) + n
        return list(runs.values())


def _spool_ranking(spool: BinaryIO, ranking: _Ranking) -> int:
    """Append a ranking to the spool (its offset is returned), where marshal (the fastest serialiser for lists of strings and numbers, and
    only ever read back by the same process) keeps it after its length: marshal.load would read a file in pieces
    of a few bytes."""
    data = marshal.dumps(tuple(ranking))
    offset = spool.seek(0, io.SEEK_END)
    spool.write(len(data).to_bytes(4, "little") + data)
    return offset


def _unspool(spool: BinaryIO, offset: int) -> _Ranking:
    spool.seek(offset)
    size = int.from_bytes(spool.read(4), "little")
    return _Ranking(*marshal.loads(spool.read(size)))


def _check_documents_once(file: InputFile, parts: list[RunBlock]) -> None:
    """The reader checks documents within a block; the blocks of a topic whose lines resumed are checked here."""
    docs = [doc for part in parts for doc in part.docs]
    if len(set(docs)) == len(docs):
        return
    seen: set[str] = set()
    twice = next(doc for doc in docs if doc in seen or seen.add(doc))  # type: ignore[func-returns-value]
    topic = parts[0].topic
    occurrences = 0

    def second(fields: list[str]) -> bool:
        nonlocal occurrences
        occurrences += len(fields) >= 3 and fields[0] == topic and fields[2] == twice
        return occurrences == 2

    raise FormatError(file.name, first_line_where(file, second), f"document {twice} appears twice for topic {topic}")


def _block_of(ranking: _Ranking, *, tag: str, topic: str) -> RunBlock:
    """A spooled piece of a topic as the lines it was made from (their order does not matter to _ranking)."""
    stances = ranking.stances or [None] * ranking.length
    return RunBlock(topic, tag, ranking.docs, ranking.ranks, ranking.scores, stances, first_line=0)


def _run_lines(file: InputFile, meter: FilesMeter) -> Iterator[str]:
    """The file's text lines, read a megabyte at a time, reporting the bytes read after each batch. The lines of a
    batch are handed on by `chain` in C: a generator resumed once per line costs a tenth of a microsecond each."""
    return chain.from_iterable(_run_line_batches(file, meter))


def _run_line_batches(file: InputFile, meter: FilesMeter) -> Iterator[list[str]]:
    with opened(file) as (raw, stream):
        for lines in line_batches(stream, source=file.name, fields=True):
            yield lines
            meter.at(raw.tell())


def _check_tag(file: InputFile, tag: str) -> None:
    if len(tag) > _TAG_LENGTH:
        raise FormatError(file.name, first_line_where(file, lambda fields: len(fields) >= 6 and tag in " ".join(fields[5:])), f"run tag is longer than {_TAG_LENGTH} characters")


def _team_from_name(name: str, tag: str) -> str:
    """TEAM from a file named TEAM-TAG(.ext)*, the way Touché participants' files are often named."""
    stem = Path(name).name
    while Path(stem).suffix in (".txt", ".gz", ".run", ".tsv", ".trec"):
        stem = Path(stem).stem
    team = stem[: -len(tag) - 1] if stem.endswith("-" + tag) else ""
    return team[:TEAM_LENGTH]


class _Ranking(NamedTuple):
    """One run's lines for one topic as they are stored (see models.Ranking), waiting in the spool."""

    topic_id: int
    length: int
    docs: list[str]
    ranks: list[int]
    scores: list[float]
    stances: list[str | None] | None
    by_rank: list[int] | None
    by_single: list[int] | None


def _ranking(file: InputFile, blocks: list[RunBlock], *, topic_id: int) -> _Ranking:
    """One topic's lines (one block, or several when the topic comes back later in the file) as lists in score
    order, with the rank order and trec_eval 9's order as 1-based indices into them.

    Both orders are metrics.evaluation.order_run's (computed by its column form, order_positions), the one
    evaluation and pooling read runs in (ties broken by document id descending, as trec_eval does), so a stored
    order never disagrees with them. Most runs list lines
    in strictly increasing rank, and many in strictly decreasing score: then there is no tie to break and the
    file order is the answer, without sorting.
    """
    docs, ranks, scores, stances = (list(chain.from_iterable(map(column, blocks))) for column in _BLOCK_COLUMNS)
    if min(ranks) < -_INT4 or max(ranks) >= _INT4:
        bad = next(r for r in ranks if not -_INT4 <= r < _INT4)
        raise FormatError(file.name, _line_of(file, blocks, docs[ranks.index(bad)]), f"rank {bad} is out of range")
    longest = max(docs, key=len)
    if len(longest) > _DOC_ID_LENGTH:
        raise FormatError(file.name, _line_of(file, blocks, longest), f"document id is longer than {_DOC_ID_LENGTH} characters")
    by_score = _file_order(docs, ranks, scores, by="score")
    rank_order = _file_order(docs, ranks, scores, by="rank")
    if list(rank_order) == list(by_score):  # a range and a list are never equal
        by_rank = None
    else:
        index_of = dict(zip(by_score, range(1, len(docs) + 1)))
        by_rank = list(map(index_of.__getitem__, rank_order))
    if not isinstance(by_score, range):
        docs, ranks, scores, stances = ([*map(column.__getitem__, by_score)] for column in (docs, ranks, scores, stances))
    by_single = single_precision_order(docs, scores)
    if by_single is not None:
        by_single = [i + 1 for i in by_single]
    return _Ranking(topic_id, len(docs), docs, ranks, scores, stances if any(stances) else None, by_rank, by_single)


_BLOCK_COLUMNS = tuple(map(attrgetter, ("docs", "ranks", "scores", "stances")))


def _file_order(docs: list[str], ranks: list[int], scores: list[float], *, by: Order) -> Sequence[int]:
    """The 0-based file positions of one topic's lines, read by rank column or by score."""
    if by == "rank" and all(map(gt, islice(ranks, 1, None), ranks)):
        return range(len(ranks))
    if by == "score" and all(map(gt, scores, islice(scores, 1, None))):
        return range(len(scores))
    return order_positions(docs, ranks, scores, by=by)


def _line_of(file: InputFile, blocks: list[RunBlock], doc: str) -> int | None:
    topic = blocks[0].topic
    return first_line_where(file, lambda fields: len(fields) >= 3 and fields[0] == topic and fields[2] == doc)


def _store_runs(
    campaign: Campaign, runs: list[_ReadRun], *, stage: _Stage, topic_ids: Mapping[str, int], uploaded_by: User | None
) -> tuple[dict[str, Run], list[Run]]:
    """Create or replace the Run rows and store their lines; call inside the storing transaction."""
    bulk.lock_campaign(campaign)
    if dict(Topic.objects.filter(campaign=campaign, number__in=topic_ids).values_list("number", "id")) != topic_ids:
        raise ImportProblem("the campaign's topics changed while the runs were read; import the runs again")
    existing = {run.tag: run for run in Run.objects.select_for_update(no_key=True).filter(campaign=campaign, tag__in=[r.tag for r in runs])}
    replaced = list(existing.values())
    Ranking.objects.filter(run__in=replaced).delete()
    stored: dict[str, Run] = {}
    now = timezone.now()
    for spooled in runs:
        run = existing.get(spooled.tag) or Run(campaign=campaign, tag=spooled.tag)
        run.team = spooled.team or run.team
        run.file_name = Path(spooled.file.name).name[:500]
        run.has_stance = spooled.has_stance
        run.line_count = spooled.lines
        run.warnings = spooled.warnings
        run.uploaded_by = uploaded_by
        run.uploaded_at = now
        run.save()
        stored[spooled.tag] = run
    stage.store({r.key: stored[r.tag].pk for r in runs})
    return stored, replaced


def _unspooled(spool: BinaryIO, runs: list[tuple[int, list[int]]]) -> Iterator[tuple[int, _Ranking]]:
    """The rankings back from the spool, as (run id, ranking), for each run id and its rankings' offsets."""
    for run_id, offsets in runs:
        for offset in offsets:
            yield run_id, _unspool(spool, offset)


@dataclass(frozen=True)
class _SourceChanges:
    kept: int = 0
    cleared: int = 0


def _repoint_pool_sources(runs: list[Run]) -> _SourceChanges:
    """Point the pool sources of replaced runs at the new lines, and clear those whose document left the run.

    A source keeps the orders it was pooled by: each position it had is replaced by the document's new one.
    """
    sources = list(PoolSource.objects.filter(run__in=runs).select_related("entry__document"))
    if not sources:
        return _SourceChanges()
    positions = rankings.positions([run.pk for run in runs])
    kept, cleared = [], []
    for source in sources:
        found = positions.get((source.run_id, source.entry.topic_id, source.entry.document.doc_id))
        if found is None:
            cleared.append(source.pk)
            continue
        by_rank, by_score = found
        source.rank_position = by_rank if source.rank_position is not None else None
        source.score_position = by_score if source.score_position is not None else None
        kept.append(source)
    PoolSource.objects.filter(pk__in=cleared).delete()
    PoolSource.objects.bulk_update(kept, ["rank_position", "score_position"], batch_size=1000)
    return _SourceChanges(kept=len(kept), cleared=len(cleared))
