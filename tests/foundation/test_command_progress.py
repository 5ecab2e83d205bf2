"""A command's progress: a bar on a terminal, not styled as an error; elsewhere (a log, a pipe) a plain line every
ten seconds, and nothing for work that ends sooner."""

import io

from django.core.management.base import OutputWrapper

from assessments.management.progress import LINE_SECONDS, progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_progress_is_a_line_every_ten_seconds():
    out, now = io.StringIO(), [0.0]
    with progress_bar(desc="runs", unit="B", stream=out, clock=lambda: now[0]) as progress:
        progress.advance(1 << 20, 4 << 20)  # at once: nothing yet
        now[0] = LINE_SECONDS + 1
        progress.advance(2 << 20, 4 << 20)
        now[0] += 1
        progress.advance(3 << 20, 4 << 20)  # a second later: not again
        now[0] += LINE_SECONDS
        progress.advance(4 << 20, 4 << 20)
    assert out.getvalue() == "runs: 2.0 MiB of 4.0 MiB (50 %)\nruns: 4.0 MiB of 4.0 MiB (100 %)\n"
    counted = io.StringIO()
    with progress_bar(desc="export", unit="records", stream=counted, clock=iter([0.0, 11.0]).__next__) as progress:
        progress.advance(1200)
    assert counted.getvalue() == "export: 1,200 records\n"


def test_on_a_terminal_the_bar_is_drawn_without_the_error_style():
    terminal = Terminal()
    wrapper = OutputWrapper(terminal)
    wrapper.style_func = lambda text: f"\x1b[31;1m{text}\x1b[0m"  # what Django gives a terminal's stderr
    with progress_bar(desc="lines", unit="line", stream=wrapper) as progress:
        progress.advance(5, 10)
    drawn = terminal.getvalue()
    assert "lines" in drawn and "/10 " in drawn  # the bar (redrawn at most ten times a second)
    assert "\x1b[31;1m" not in drawn
