"""Pairs of sentences as documents: Touché 2022 Task 1 (argument gists) retrieved two sentences of args.me at a time.

A run names a pair by joining two sentence ids with a comma (``Sc065954f-Ae72bc9c6__PREMISE__41,Sc065954f-
Ae72bc9c6__CONC__1``), and sentence ids are ``<argument id>__<PREMISE|CONC>__<n>``. The collection holds the
sentences (`formats.argsme_sentences`: one document per sentence, titled with its argument's conclusion); a pool
build stores the pair ids as stubs like any other document it does not know. `resolve_pairs` gives each pooled pair
its text, the two sentences in the order the run gave them, each with its argument's conclusion, so the judge page
shows it as any plain-text document, and duplicate grouping (services.duplicates, by text hash) finds pairs of the
same text, whose labels are then copied.

A pair is resolved by a pool build (before it groups duplicates) and by every document import into its collection
(the sentences may come after the pool). A pair one of whose sentences the collection lacks stays a stub, and is
named in that build's or import's warnings. A pair document that holds text of another origin (imported with its
own text) is left as it is: only stubs and pairs this module wrote are (re)written, and a judged pair keeps its
text (named in the warnings) when its sentences change, as a judged document keeps it through an import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction

from assessments.models import Document, Judgment, PoolEntry
from assessments.services.imports.documents import text_hash

SENTENCE_ID = re.compile(r"(?P<argument>\S+?)__(?:PREMISE|CONC)__[0-9]+")
_LOOKUP_CHUNK = 5000
MISSING_NAMED = 20  # pairs named one by one in the warnings; the rest are counted
_FIELDS = ["title", "body", "is_html", "metadata", "has_text", "text_hash"]


def pair_parts(doc_id: str) -> tuple[str, str] | None:
    """The two sentence ids of a pair id, or None when `doc_id` is not two sentence ids joined by a comma."""
    parts = doc_id.split(",")
    if len(parts) == 2 and all(SENTENCE_ID.fullmatch(part) for part in parts):
        return parts[0], parts[1]
    return None


def sentence_ids_of(doc_ids: Iterable[str]) -> set[str]:
    """The sentence ids the pairs among `doc_ids` are made of (for an import that keeps only pooled documents)."""
    return {sentence for doc_id in doc_ids if (parts := pair_parts(doc_id)) for sentence in parts}


def pair_text(first: tuple[str, str], second: tuple[str, str]) -> str:
    """The body of a pair from its two (sentence, conclusion of its argument), in the run's order: each sentence
    with its conclusion, as the two paragraphs the judge page shows."""
    return "\n\n".join(
        f"Sentence {n}: {sentence}\nConclusion of its argument: {conclusion}"
        for n, (sentence, conclusion) in enumerate((first, second), 1)
    )


@dataclass
class PairSummary:
    resolved: int = 0  # pair documents given (or given new) text
    unchanged: int = 0
    missing: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (pair, its sentences not in the collection)
    missing_total: int = 0
    judged_kept: list[str] = field(default_factory=list)  # judged pairs whose sentences changed: their text is kept

    @property
    def warnings(self) -> list[str]:
        named = [
            f"pair {pair}: sentence {' and '.join(sentences)} {'is' if len(sentences) == 1 else 'are'} not in the collection"
            for pair, sentences in self.missing
        ]
        if self.missing_total > len(self.missing):
            named.append(f"… {self.missing_total - len(self.missing)} more pairs lack a sentence (the export_pool SLUG --missing command lists them)")
        named += [
            f"pair {pair} has judgments, so it keeps the text they were given to, though its sentences changed"
            for pair in self.judged_kept
        ]
        return named


def resolve_pairs(*, collection_id: int) -> PairSummary:
    """Give every pooled pair of the collection (of any campaign over it) the text of its two sentences, where it
    is a stub or was written here before and its text changed; report the pairs whose sentences are missing."""
    summary = PairSummary()
    # The documents whose id could be a pair first, then which of them are pooled: a collection rarely holds pairs,
    # while its pools may hold 400,000 entries, which a join would gather (and, with the statistics of the table
    # from before a large build, hash) whether or not there is a pair among them. An entry points at a document of
    # its campaign's collection.
    commas = list(
        Document.objects.filter(collection_id=collection_id, doc_id__contains=",").order_by("pk").values_list("pk", flat=True)
    )
    pooled: list[int] = []
    for start in range(0, len(commas), _LOOKUP_CHUNK):
        # Through the topics of the campaigns over the collection: entries are indexed by (topic, document) only.
        found = PoolEntry.objects.filter(
            topic__campaign__collection_id=collection_id, document_id__in=commas[start : start + _LOOKUP_CHUNK]
        ).values_list("document_id", flat=True)
        pooled += sorted(set(found))
    # A pool holds thousands of pairs, not millions: read each batch at once (no cursor open across the writes).
    for start in range(0, len(pooled), _LOOKUP_CHUNK):
        batch = list(Document.objects.filter(pk__in=pooled[start : start + _LOOKUP_CHUNK]).order_by("pk").only(*_FIELDS, "doc_id"))
        pairs = [(document, parts) for document in batch if (parts := pair_parts(document.doc_id)) and _ours(document)]
        sentences = _sentences(collection_id, {sentence for _, parts in pairs for sentence in parts})
        changed, rewritten = [], []
        for document, parts in pairs:
            absent = tuple(dict.fromkeys(part for part in parts if part not in sentences))
            if absent:
                summary.missing_total += 1
                if len(summary.missing) < MISSING_NAMED:
                    summary.missing.append((document.doc_id, absent))
                continue
            first, second = (sentences[part] for part in parts)
            body = pair_text(first[:2], second[:2])
            metadata = {"pair": list(parts), "arguments": [first[2], second[2]], "conclusions": [first[1], second[1]]}
            if document.has_text and document.body == body and document.metadata == metadata:
                summary.unchanged += 1
                continue
            if document.has_text and document.body != body:
                rewritten.append(document)
            document.title, document.body, document.is_html = "", body, False
            document.metadata, document.has_text, document.text_hash = metadata, True, text_hash(body)
            changed.append(document)
        if rewritten:
            # A judged document's text is not changed (as services.bulk.upsert_documents keeps it): the labels were
            # given to the text as it is.
            judged = set(Judgment.objects.filter(document__in=rewritten).values_list("document_id", flat=True))
            changed = [d for d in changed if d.pk not in judged]
            summary.judged_kept += sorted(d.doc_id for d in rewritten if d.pk in judged)
        if changed:
            with transaction.atomic():
                Document.objects.bulk_update(changed, _FIELDS, batch_size=1000)
            summary.resolved += len(changed)
    return summary


def _ours(document: Document) -> bool:
    """A stub, or a pair this module wrote: a pair imported with a text of its own is not overwritten."""
    return not document.has_text or (isinstance(document.metadata, dict) and "pair" in document.metadata)


def _sentences(collection_id: int, ids: set[str]) -> dict[str, tuple[str, str, str]]:
    """sentence id -> (text, conclusion of its argument, argument id), for those with text in the collection. The
    conclusion is the sentence's title (as formats.argsme_sentences stores it)."""
    found: dict[str, tuple[str, str, str]] = {}
    wanted = sorted(ids)
    for start in range(0, len(wanted), _LOOKUP_CHUNK):
        rows = Document.objects.filter(
            collection_id=collection_id, doc_id__in=wanted[start : start + _LOOKUP_CHUNK], has_text=True
        ).values_list("doc_id", "body", "title", "metadata")
        for doc_id, body, title, metadata in rows:
            argument = metadata.get("argument") if isinstance(metadata, dict) else None
            match = SENTENCE_ID.fullmatch(doc_id)
            found[doc_id] = (body, title, str(argument) if argument else match["argument"] if match else "")
    return found
