"""The campaign's audit trail: one append-only AuditEvent per state change.

Services that change a campaign call `record` inside the transaction that makes the change (Zulip's
RealmAuditLog habit), so the change and its event commit together or not at all; nothing else writes events.
"""

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from django.db import transaction

from accounts.models import User
from assessments.models import AuditEvent, Campaign

Action = AuditEvent.Action


def record(
    *,
    campaign: Campaign,
    action: str,
    by: User | None,
    subject: str = "",
    before: Mapping | None = None,
    after: Mapping | None = None,
    details: Mapping | None = None,
) -> AuditEvent:
    """Append one event (`by` None: a management command). Call inside the changing service's transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record belongs inside the transaction of the change it records")
    return AuditEvent.objects.create(
        campaign=campaign, action=action, actor=by, subject=subject[:300],
        before=dict(before) if before is not None else None,
        after=dict(after) if after is not None else None,
        details=dict(details or {}),
    )


def file_checksums(paths: Iterable[tuple[str, Path]]) -> list[dict]:
    """[{"name", "bytes", "sha256"}] for an import's input files (as given, compressed or not), so the trail
    says exactly which files went in."""
    files = []
    for name, path in paths:
        with open(path, "rb") as stream:
            digest = hashlib.file_digest(stream, "sha256").hexdigest()
        files.append({"name": name, "bytes": Path(path).stat().st_size, "sha256": digest})
    return files

