"""Loading the lab's Task 3 qrels (`topic QUESTION imageId 0|1`: one file gives all three questions) as an import
source's judgments, so an image campaign can start from earlier labels or score runs against the official file.

Each question is a dimension of the image scheme (ONTOPIC, PRO, CON), stored with services.judging's bulk path
exactly as a qrels file of one dimension is; the three are stored in one transaction, so a bad line stores nothing.
A side answered for an image the file says is off topic is kept as the file says it (imports keep what files say).
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

from django.db import transaction

from accounts.models import User
from assessments.formats.errors import FormatError
from assessments.formats.image_qrels import parse_image_qrels
from assessments.models import Campaign
from assessments.services import audit, bulk
from assessments.services.bulk import copy_escape
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.sources import check_source_name, source_user
from assessments.services.judging import RowError, record_judgments_in_bulk


def import_image_qrels(
    *, campaign: Campaign, path: Path, assessor: str, phase: str = "main", source: str | None = None, by: User | None = None
) -> ImportSummary:
    source = source or str(path)
    if not campaign.is_images:
        raise ImportProblem(f"campaign {campaign.slug} does not judge images")
    check_source_name(assessor)
    if not bulk.is_postgresql():
        raise ImportProblem("importing qrels needs PostgreSQL (it loads the file with COPY)")
    judgments = parse_image_qrels(Path(path).read_bytes(), source=source)
    topics = dict(campaign.topics.values_list("number", "id"))
    names = set(campaign.label_scheme.names)
    rows: dict[str, list[str]] = defaultdict(list)
    for j in judgments:
        if j.topic not in topics:
            raise FormatError(source, j.line, f"topic {j.topic} is not a topic of the campaign")
        if j.question not in names:
            raise FormatError(source, j.line, f"question {j.question} is not a dimension of the campaign's scheme")
        rows[j.question].append(f"{j.line}\t{topics[j.topic]}\t{copy_escape(j.image)}\t{j.value}\n")
    recorded = 0
    with transaction.atomic():
        bulk.lock_campaign(campaign)
        owner = source_user(assessor)
        for question in campaign.label_scheme.names:  # ONTOPIC first: the sides' judgments then exist
            if not rows[question]:
                continue
            try:
                done = record_judgments_in_bulk(
                    campaign=campaign, rows=io.BytesIO("".join(rows[question]).encode()), dimension=question,
                    assessor=owner, phase=phase,
                )
            except RowError as exc:
                raise FormatError(source, exc.key, str(exc)) from None
            recorded += done.created + done.updated
        audit.record(
            campaign=campaign, action=audit.Action.QRELS_IMPORTED, by=by, subject=f"{source} as {assessor}",
            details={"kind": "image questions", "phase": phase, "assessor": assessor, "lines": len(judgments)},
        )
    images = len({(j.topic, j.image) for j in judgments})
    return ImportSummary(
        f"{source}: {len(judgments)} answers for {images} images as {assessor} ({recorded} new or changed)", [],
        {"lines": len(judgments), "images": images},
    )
