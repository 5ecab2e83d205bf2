"""What a parser reports when a file is wrong (`FormatError`) or only suspicious (`FormatWarning`).

Both print as ``source:line: reason``, the form compilers and linters use, so an organiser can jump
to the line and the import service can show the message as is. ``line`` is 1-based and physical
(blank lines count); it is ``None`` when the problem belongs to the whole file (empty, too large).
"""

from __future__ import annotations

from dataclasses import dataclass


def shown(text: str, width: int = 60) -> str:
    """A field as a message quotes it: repr, cut short, since a hostile line may hold a megabyte in one field."""
    return repr(text) if len(text) <= width else repr(text[:width]) + f"… ({len(text):,} characters)"


def _located(source: str, line: int | None, text: str) -> str:
    return f"{source}: {text}" if line is None else f"{source}:{line}: {text}"


class FormatError(ValueError):
    """The file cannot be imported as it is; nothing from it may be stored."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        super().__init__(source, line, reason)
        self.source = source
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        return _located(self.source, self.line, self.reason)


@dataclass(frozen=True)
class FormatWarning:
    """The file imports, but an organiser should look at this before relying on it."""

    source: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return _located(self.source, self.line, self.message)
