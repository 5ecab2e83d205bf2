"""The terminal side of long work: a progress bar for services that report `progress.advance(done, total)`,
the compiler-style `error: FILE:LINE: what is wrong` exit, and the small checks the import commands share.

Management commands are the twins of Celery jobs: both call the same service, the job with a `JobProgress`
that writes to the Job row, the command with the bar from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn, TextIO

from django.core.management.base import BaseCommand, OutputWrapper
from tqdm import tqdm

from assessments.formats.errors import FormatError
from assessments.models import Campaign
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.jobs import Progress


class TerminalProgress:
    """A tqdm bar driven by absolute positions (`advance(done, total)`), as services report them."""

    def __init__(self, bar: tqdm) -> None:
        self.bar = bar

    def advance(self, done: int, total: int | None = None) -> None:
        if total is not None and total != self.bar.total:
            self.bar.total = total
            self.bar.refresh()
        self.bar.update(done - self.bar.n)


class _Unterminated:
    """Django's OutputWrapper ends every write with a newline; tqdm redraws its line with carriage returns."""

    def __init__(self, wrapper: OutputWrapper) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        # Unstyled: Django styles a terminal's stderr as errors (bold red), and progress is not one.
        self.wrapper.write(text, style_func=_plain, ending="")

    def flush(self) -> None:
        self.wrapper.flush()

    def isatty(self) -> bool:
        return self.wrapper.isatty()


def _plain(text: str) -> str:
    return text


LINE_SECONDS = 10.0  # off a terminal (a log, a pipe), a progress line this often: a bar there is a mess of \r


class LineProgress:
    """Progress as a line every LINE_SECONDS (`desc: done of total (p %)`), for output that is not a terminal;
    work that ends sooner prints nothing, so quick commands and tests stay quiet."""

    def __init__(self, *, desc: str, unit: str, stream: TextIO | OutputWrapper | None, clock: Callable[[], float]) -> None:
        self.desc, self.unit, self.stream, self.clock = desc, unit, stream, clock
        self.last = clock()

    def advance(self, done: int, total: int | None = None) -> None:
        now = self.clock()
        if now - self.last < LINE_SECONDS or self.stream is None:
            return
        self.last = now
        plural = self.unit if self.unit.endswith("s") else self.unit + "s"
        size = (lambda n: f"{n / 2**20:,.1f} MiB") if self.unit == "B" else (lambda n: f"{n:,} {plural}")
        share = f" ({100 * done / total:.0f} %)" if total else ""
        line = f"{self.desc}: {size(done)}" + (f" of {size(total)}" if total else "") + share
        if isinstance(self.stream, OutputWrapper):
            self.stream.write(line, style_func=_plain)
        else:
            self.stream.write(line + "\n")


@contextmanager
def progress_bar(
    *, desc: str, unit: str = "B", stream: TextIO | OutputWrapper | None = None, clock: Callable[[], float] = time.monotonic,
) -> Iterator[TerminalProgress | LineProgress]:
    """Yield a progress object for a service: a bar on a terminal, a line now and then elsewhere (LineProgress).

    `unit="B"` shows bytes with binary prefixes (KiB, MiB); any other unit counts plainly (lines, steps).
    """
    if stream is None or not stream.isatty():
        yield LineProgress(desc=desc, unit=unit, stream=stream, clock=clock)
        return
    file = _Unterminated(stream) if isinstance(stream, OutputWrapper) else stream
    options = {"unit_scale": True, "unit_divisor": 1024} if unit == "B" else {}
    with tqdm(total=0, desc=desc, unit=unit, file=file, leave=False, dynamic_ncols=True, **options) as bar:
        yield TerminalProgress(bar)


def fail(command: BaseCommand, message: object) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit with status 1.

    A FormatError prints as ``FILE:LINE: reason``, so an import's bad line reads ``error: FILE:LINE: reason``,
    the form editors and CI logs link to the line.
    """
    command.stderr.write(f"error: {message}", style_func=command.style.ERROR)
    raise SystemExit(1)


def campaign_or_fail(command: BaseCommand, slug: str) -> Campaign:
    try:
        return Campaign.objects.select_related("collection").get(slug=slug)
    except Campaign.DoesNotExist:
        fail(command, f"no campaign {slug!r} (create it with create_campaign)")


def check_files(command: BaseCommand, files: list[Path]) -> None:
    for file in files:
        if not file.is_file():
            fail(command, f"{file}: no such file")


def run_import(command: BaseCommand, *, desc: str, unit: str, call: Callable[[Progress], ImportSummary]) -> None:
    """Run an import service with a progress bar, then print its warnings and summary, or fail with its error."""
    try:
        with progress_bar(desc=desc, unit=unit, stream=command.stderr) as bar:
            summary = call(bar)
    except (FormatError, ImportProblem) as exc:
        fail(command, "\n  ".join(getattr(exc, "problems", None) or [str(exc)]))  # a refusal's list, one per line
    # Warnings on stderr, one per line, then the one-line summary on stdout.
    for warning in summary.warnings:
        command.stderr.write(f"warning: {warning}", style_func=command.style.WARNING)
    command.stdout.write(summary.text)
