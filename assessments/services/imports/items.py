"""Loading the items of a classification campaign (Touché 2023 Task 4, CoFE): comments, each judged beside the
proposal it answers.

A proposal is a topic (its number the proposal's id, its text the description, its language and English
translation in `Topic.metadata`), a comment a document of the campaign's collection with one pool entry under its
proposal, so assignment, the judge page, autosave, history, agreement and adjudication work on items as they do on
pooled documents. A label the comments file already carries (`In favor`) is a prior label of the import source
named by `assessor`, kept as that source's judgment exactly as an imported qrels line is (services.judging's bulk
path), never as a person's.

The files are parsed and checked whole before anything is stored (formats.cofe names file and line), then stored
in one transaction: a failed import leaves the campaign as it was. Re-importing the same files changes nothing. A
comment that has been judged keeps its text: a file that would change it is refused, as for documents.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from django.db import transaction

from accounts.models import User
from assessments.formats.cofe import Comment, Proposal, parse_comments, parse_proposals
from assessments.formats.errors import FormatError, shown
from assessments.models import Campaign, Document, Judgment, PoolEntry, Topic
from assessments.services import audit, bulk
from assessments.services.imports import ImportProblem, ImportSummary
from assessments.services.imports.documents import check_collection_writer, text_hash
from assessments.services.imports.sources import check_source_name, source_user
from assessments.services.judging import RowError, record_judgments_in_bulk

ITEM_STRATEGY = "items"  # PoolEntry.strategy of an item: given, not pooled from runs


def import_items(
    *,
    campaign: Campaign,
    comments: Path,
    proposals: Path | None = None,
    assessor: str | None = None,
    comments_name: str | None = None,
    proposals_name: str | None = None,
    by: User | None = None,
) -> ImportSummary:
    """Import the comments file (and the proposals file) into `campaign`; all or nothing.

    Raises FormatError (file:line) for a bad row and ImportProblem for what the options or the campaign forbid.
    """
    _require_classification(campaign)
    check_collection_writer(campaign, by)
    comments_name = comments_name or str(comments)
    items = parse_comments(_read(comments, comments_name), source=comments_name)
    contexts: dict[str, Proposal] = {}
    if proposals is not None:
        proposals_name = proposals_name or str(proposals)
        contexts = {p.id: p for p in parse_proposals(_read(proposals, proposals_name), source=proposals_name)}
    dimension = campaign.label_scheme.primary
    allowed = {str(value.value): value.value for value in dimension.values}
    labelled = [c for c in items if c.label is not None]
    for comment in labelled:
        if comment.label not in allowed:
            raise FormatError(
                comments_name, comment.line,
                f"label {shown(comment.label or '')} of {comment.id} is not one of the campaign's: {', '.join(allowed)} "
                "(or --- for none)",
            )
    if labelled and not assessor:
        raise ImportProblem(
            f"{comments_name} gives {len(labelled)} labels: name the source they come from with --assessor (a name no "
            "person's account has, e.g. cofe-test), or import a file whose labels are ---"
        )
    if assessor:
        check_source_name(assessor)
    if labelled and not bulk.is_postgresql():
        raise ImportProblem("importing prior labels needs PostgreSQL (they are stored with COPY, as qrels are)")

    with transaction.atomic():
        bulk.lock_campaign(campaign)
        _refuse_changed_judged_text(campaign, items, comments_name)
        topics = _store_proposals(campaign, items, contexts)
        created, changed = _store_comments(campaign, items)
        entries = _store_entries(campaign, items, topics)
        recorded = 0
        if labelled:
            rows = io.BytesIO("".join(
                f"{c.line}\t{topics[c.proposal].pk}\t{bulk.copy_escape(c.id)}\t{bulk.copy_escape(c.label or '')}\n"
                for c in labelled
            ).encode())
            try:
                done = record_judgments_in_bulk(
                    campaign=campaign, rows=rows, dimension=dimension.name, assessor=source_user(assessor or ""),
                    phase="main",
                )
            except RowError as exc:
                raise FormatError(comments_name, exc.key, str(exc)) from None
            recorded = done.created + done.updated
        languages = Counter(c.language for c in items)
        audit.record(
            campaign=campaign, action=audit.Action.DOCUMENTS_IMPORTED, by=by, subject=comments_name,
            details={
                "kind": "items", "files": audit.file_checksums(
                    [(comments_name, comments), *([(proposals_name or "", proposals)] if proposals else [])]
                ),
                "comments": len(items), "proposals": len(topics), "new": created, "changed": changed,
                "pool_entries": entries, "prior_labels": len(labelled), "assessor": assessor or "",
            },
        )
    by_language = ", ".join(f"{code} {n}" for code, n in sorted(languages.items()))
    text = (
        f"{comments_name}: {len(items)} comments on {len(topics)} proposal{'s' if len(topics) != 1 else ''} "
        f"({by_language}): {created} new, {changed} changed, {entries} newly given to judge"
    )
    if labelled:
        text += f"; {len(labelled)} prior labels as {assessor} ({recorded} new or changed)"
    if proposals is not None:
        missing = sorted({c.proposal for c in items} - contexts.keys())
        if missing:
            text += f"; {len(missing)} proposals not in {proposals_name}: {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}"
    counts = {"comments": len(items), "proposals": len(topics), "created": created, "changed": changed,
              "entries": entries, "prior_labels": len(labelled)}
    return ImportSummary(text, [], counts)


def check_item_options(campaign: Campaign, *, assessor: str | None, files: int) -> None:
    """What can be refused before an upload is kept: the campaign's kind, the source's name, the files' count."""
    _require_classification(campaign)
    if assessor:
        check_source_name(assessor)
    if files not in (1, 2):
        raise ImportProblem("upload the comments file, and the proposals file if you have one")


def _require_classification(campaign: Campaign) -> None:
    if not campaign.is_classification:
        raise ImportProblem(
            f"campaign {campaign.slug} judges pooled documents: items are imported into a classification campaign "
            "(create_campaign --preset touche-2023-task4, or --kind classification)"
        )


def _read(path: Path, name: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ImportProblem(f"{name}: {exc.strerror or exc}") from None


def _refuse_changed_judged_text(campaign: Campaign, items: Sequence[Comment], name: str) -> None:
    """A judged comment's text is what its labels were given to: refuse a file that would change it."""
    texts = {c.id: c for c in items}
    judged = Document.objects.filter(
        collection=campaign.collection, doc_id__in=list(texts), has_text=True,
        pk__in=Judgment.objects.filter(document__collection=campaign.collection).values("document_id"),
    ).values_list("doc_id", "body")
    for doc_id, body in judged:
        if body != texts[doc_id].text:
            raise FormatError(name, texts[doc_id].line, f"{doc_id} has been judged: its text cannot change")


def _store_proposals(campaign: Campaign, items: Sequence[Comment], contexts: dict[str, Proposal]) -> dict[str, Topic]:
    """The topic of each proposal the comments answer, made or updated from the proposals file, in file order."""
    existing = {t.number: t for t in Topic.objects.filter(campaign=campaign)}
    position = max((t.position for t in existing.values()), default=-1)
    topics: dict[str, Topic] = {}
    for number in dict.fromkeys(c.proposal for c in items):
        context = contexts.get(number)
        topic = existing.get(number)
        if topic is None:
            position += 1
            topic = Topic(campaign=campaign, number=number, title=f"Proposal {number}", position=position)
        if context is not None:
            topic.title, topic.description = context.title or topic.title, context.text
            topic.metadata = {
                "language": context.language, "title_en": context.title_en, "text_en": context.text_en,
                "fields": context.fields,
            }
        if topic.pk is None or context is not None:
            topic.save()
        topics[number] = topic
    return topics


def _store_comments(campaign: Campaign, items: Sequence[Comment]) -> tuple[int, int]:
    """Each comment as a document of the collection, with its language and the file's other columns."""
    current = dict(
        Document.objects.filter(collection=campaign.collection, doc_id__in=[c.id for c in items])
        .values_list("doc_id", "body")
    )
    documents = [
        Document(
            collection=campaign.collection, doc_id=c.id, title="", body=c.text, is_html=False, has_text=True,
            text_hash=text_hash(c.text),
            metadata={"language": c.language, "proposal": c.proposal, "fields": c.fields},
        )
        for c in items
    ]
    Document.objects.bulk_create(
        documents, batch_size=2000, update_conflicts=True, unique_fields=["collection", "doc_id"],
        update_fields=["body", "is_html", "has_text", "text_hash", "metadata"],
    )
    created = sum(1 for c in items if c.id not in current)
    changed = sum(1 for c in items if c.id in current and current[c.id] != c.text)
    return created, changed


def _store_entries(campaign: Campaign, items: Sequence[Comment], topics: dict[str, Topic]) -> int:
    """One pool entry per comment under its proposal, in file order; entries there already are kept."""
    ids = dict(
        Document.objects.filter(collection=campaign.collection, doc_id__in=[c.id for c in items]).values_list("doc_id", "pk")
    )
    held = set(PoolEntry.objects.filter(topic__campaign=campaign).values_list("topic_id", "document_id"))
    next_order = Counter[int]()
    for topic_id, order in PoolEntry.objects.filter(topic__campaign=campaign).values_list("topic_id", "order"):
        next_order[topic_id] = max(next_order[topic_id], order + 1)
    new = []
    for comment in items:
        topic = topics[comment.proposal]
        key = (topic.pk, ids[comment.id])
        if key in held:
            continue
        held.add(key)
        new.append(PoolEntry(topic=topic, document_id=ids[comment.id], order=next_order[topic.pk], strategy=ITEM_STRATEGY))
        next_order[topic.pk] += 1
    PoolEntry.objects.bulk_create(new, batch_size=2000)
    return len(new)
