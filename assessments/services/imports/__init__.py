"""Loading what a campaign is built from: its topics (.topics), its document collection (.documents), the
participants' runs (.runs) and earlier judgments (.qrels), from files on disk or from uploads kept for a Job
(.uploads).

The organiser page, the REST API and the management commands all end here. Every import has the same shape,
because a bad line must leave the campaign exactly as it was and a poller must still see progress:

1. Read and check every input file completely, reporting progress (`progress.advance`, outside any
   transaction, so a page polling the Job row sees it at once). Rows to store go to a spool file on disk in
   PostgreSQL's COPY format, so memory stays flat whatever the input size.
2. Store the spool in one transaction. A FormatError (file and line) or an ImportProblem raised before or
   during it stores nothing.

Runs and documents are stored by services.bulk: COPY on PostgreSQL, batches on SQLite (the demo database).
Everything else is shared (.files: the input files, their names in errors, gzip and progress).

This module holds what every import answers with: its summary, or ImportProblem.
"""

from dataclasses import dataclass, field

WARNINGS_KEPT = 200  # per job; each run keeps all of its own warnings on its Run row


class ImportProblem(ValueError):
    """An import that cannot be done as asked (the message says why); nothing was stored."""


@dataclass(frozen=True)
class ImportSummary:
    """What an import stored: one line for people, the warnings to look at, and counts for machines."""

    text: str
    warnings: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)

    def as_result(self) -> dict:
        """The Job result (services.jobs: "summary" and "warnings" are shown to the organiser)."""
        kept = self.warnings[:WARNINGS_KEPT]
        if len(self.warnings) > WARNINGS_KEPT:
            kept.append(f"… and {len(self.warnings) - WARNINGS_KEPT} more warnings")
        return {"summary": self.text, "warnings": kept, **self.counts}
