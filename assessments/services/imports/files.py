"""The input files of an import: their names as errors show them, gzip recognised by its magic bytes, one
progress bar over several files, and the line of a problem found only after a file was parsed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import chain
from pathlib import Path
from typing import BinaryIO

from django.conf import settings

from assessments.formats.errors import FormatError
from assessments.formats.reading import BLOCK_BYTES, gunzipped, line_batches
from assessments.services.imports import ImportProblem
from assessments.services.jobs import Progress


@dataclass(frozen=True)
class InputFile:
    path: Path
    name: str  # as errors show it: the path typed on the command line, or an upload's original name


def input_files(paths: Sequence[str | Path], names: Sequence[str] | None = None) -> list[InputFile]:
    names = list(names) if names is not None else [str(p) for p in paths]
    if len(names) != len(paths):
        raise ValueError("give one name per path")
    if not paths:
        raise ImportProblem("no file to import")
    return [InputFile(Path(p), n) for p, n in zip(paths, names)]


def files_label(files: Sequence[InputFile]) -> str:
    return files[0].name if len(files) == 1 else f"{len(files)} files"


class FilesMeter:
    """One progress bar over several files: bytes of the files already read plus the position in the current one."""

    def __init__(self, progress: Progress, files: Sequence[InputFile]) -> None:
        self.progress = progress
        self.total = sum(f.path.stat().st_size for f in files)
        self.finished = 0
        progress.advance(0, self.total)

    def at(self, position: int) -> None:
        self.progress.advance(self.finished + position, self.total)

    def file_done(self, size: int) -> None:
        self.finished += size
        self.progress.advance(self.finished, self.total)


@contextmanager
def opened(file: InputFile) -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """(raw file, its content): gunzipped when it is gzip (by its magic bytes, not its name), within the limits of
    formats.reading and the deployment's IMPORT_MAX_DECOMPRESSED_BYTES; the raw file's position is the progress."""
    with open(file.path, "rb") as raw:
        yield raw, gunzipped(raw, source=file.name, max_decompressed=settings.IMPORT_MAX_DECOMPRESSED_BYTES)


def count_lines(file: InputFile) -> int:
    """Lines in the file (a progress total), counted in C; a file the reader will refuse counts as far as it goes."""
    count, last = 0, b"\n"
    with opened(file) as (_, stream):
        try:
            for block in iter(partial(stream.read, BLOCK_BYTES), b""):
                count, last = count + block.count(b"\n"), block[-1:]
        except FormatError:
            pass  # the reader says what is wrong, where
    return count + (last != b"\n")


def first_line_where(file: InputFile, test: Callable[[list[str]], bool]) -> int | None:
    """Read the file again for the line number of a problem only found after its lines were parsed (rare).

    `test` gets each line's whitespace-separated fields; lines are numbered as the readers number them.
    """
    with opened(file) as (_, stream):
        lines = chain.from_iterable(line_batches(stream, source=file.name))
        return next((number for number, line in enumerate(lines, 1) if test(line.split())), None)


def named(records: Iterator, file: InputFile) -> Iterator:
    """A reader's records, with its errors naming the file as the organiser knows it (not the upload's path)."""
    try:
        yield from records
    except FormatError as exc:
        raise FormatError(file.name, exc.line, exc.reason) from None
