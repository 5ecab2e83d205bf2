"""Giving the items of a classification campaign to coders by the languages they read, with an overlap share
coded by several for agreement.

A coder is given only comments in languages they read (`User.languages`): a label on a comment the coder could
not read is noise, and the lab's gold set rests on agreement. Each item goes to the least-loaded coder who reads
it; a share of the items (`overlap`, drawn per language from a seeded generator so the same call gives the same
draw) goes to `coders` coders, the others least-loaded first, so agreement can be measured per language on them.

An item's coders hold it through an assignment of its proposal (a topic) that lists the items given
(Assignment.Scope.OVERLAP: only the listed entries), so the queue, the judge page and access work as for any
assignment. Calling again gives only items no coder holds yet (new imports), keeping what was given.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max

from accounts.models import Role, User
from assessments.models import Assignment, AssignmentItem, Campaign, Phase, PoolEntry
from assessments.services import audit, bulk


class ItemAssignmentError(ValueError):
    """Items that cannot be given as asked (the message says why and what to do)."""


@dataclass(frozen=True)
class ItemsGiven:
    items: int  # items given to at least one coder by this call
    per_coder: dict[str, int]  # coder -> items given by this call
    overlap: dict[str, int]  # language -> items given to several coders
    unreadable: dict[str, int]  # language -> items no coder reads (given to nobody)

    def describe(self) -> str:
        coders = ", ".join(f"{name} {n}" for name, n in sorted(self.per_coder.items()))
        text = f"{self.items} items given ({coders or 'none'})"
        if self.overlap:
            text += "; coded by several: " + ", ".join(f"{lan} {n}" for lan, n in sorted(self.overlap.items()))
        if self.unreadable:
            text += "; no coder reads these (items given to nobody): " + ", ".join(f"{lan} {n}" for lan, n in sorted(self.unreadable.items()))
        return text


def assign_items(
    *,
    campaign: Campaign,
    coders: Sequence[User],
    overlap: float = 0.0,
    per_overlap_item: int = 2,
    batch: int | None = None,
    seed: int = 0,
    by: User | None = None,
) -> ItemsGiven:
    """Give the campaign's items no coder holds yet to `coders` by language (the module docstring); with `batch`,
    at most that many to each coder in this call (work handed out in batches; the rest waits for the next call)."""
    if not campaign.is_classification:
        raise ItemAssignmentError(f"campaign {campaign.slug} is not a classification campaign: assign its topics instead")
    if not 0 <= overlap <= 1:
        raise ItemAssignmentError(f"overlap {overlap} is not a share between 0 and 1")
    if per_overlap_item < 2:
        raise ItemAssignmentError("an overlap item needs at least 2 coders")
    if not coders:
        raise ItemAssignmentError("no coders given")
    if batch is not None and batch < 1:
        raise ItemAssignmentError(f"a batch of {batch} items gives nothing: give at least 1")
    for coder in coders:
        if coder.role != Role.ASSESSOR:
            raise ItemAssignmentError(f"{coder.username} is not an assessor ({coder.role})")
        if not coder.languages:
            raise ItemAssignmentError(
                f"{coder.username} reads no language yet: set the languages they read "
                f"(create_user {coder.username} --role assessor --languages de,fr)"
            )
    phase = Phase.TRAINING if campaign.phase == Phase.TRAINING else Phase.MAIN
    with transaction.atomic():
        bulk.lock_campaign(campaign)
        held = set(
            AssignmentItem.objects.filter(assignment__topic__campaign=campaign, assignment__phase=phase, assignment__active=True)
            .values_list("entry_id", flat=True)
        )
        entries = [
            (pk, topic_id, language, document_id)
            for pk, topic_id, language, document_id in PoolEntry.objects.filter(topic__campaign=campaign)
            .order_by("topic__position", "topic__number", "order", "pk")
            .values_list("pk", "topic_id", "document__metadata__language", "document_id")
            if pk not in held
        ]
        load = Counter({c.pk: n for c, n in _current_load(campaign, phase, coders).items()})
        rng = random.Random(f"{campaign.pk}:{seed}")
        # (topic, coder) -> (entry, document) in queue order
        given: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
        per_coder: Counter[str] = Counter()
        several: Counter[str] = Counter()
        unreadable: Counter[str] = Counter()
        items = 0
        for pk, topic_id, language, document_id in entries:
            readers = [c for c in coders if language in c.languages]
            if not readers:
                unreadable[str(language)] += 1
                continue
            if batch is not None:
                readers = [c for c in readers if per_coder[c.username] < batch]
                if not readers:
                    continue  # everyone who reads it has a full batch: it waits for the next call
            wanted = per_overlap_item if overlap and rng.random() < overlap else 1
            chosen = sorted(readers, key=lambda c: (load[c.pk], c.username))[:wanted]
            if len(chosen) > 1:
                several[str(language)] += 1
            for coder in chosen:
                load[coder.pk] += 1
                per_coder[coder.username] += 1
                given[(topic_id, coder.pk)].append((pk, document_id))
            items += 1
        _store(given, phase, by)
        result = ItemsGiven(items, dict(per_coder), dict(several), dict(unreadable))
        audit.record(
            campaign=campaign, action=audit.Action.ASSIGNED, by=by, subject=f"{items} items by language",
            details={"kind": "items", "phase": phase, "overlap": overlap, "per_overlap_item": per_overlap_item,
                     "seed": seed, "per_coder": result.per_coder, "several": result.overlap, "unreadable": result.unreadable},
        )
    return result


def _current_load(campaign: Campaign, phase: str, coders: Sequence[User]) -> dict[User, int]:
    counts = Counter(
        AssignmentItem.objects.filter(
            assignment__topic__campaign=campaign, assignment__phase=phase, assignment__active=True,
            assignment__assessor__in=coders,
        ).values_list("assignment__assessor_id", flat=True)
    )
    return {c: counts[c.pk] for c in coders}


def _store(given: dict[tuple[int, int], list[tuple[int, int]]], phase: str, by: User | None) -> None:
    """The assignments (one per proposal and coder, listing its items) and their items, in bulk. `given` holds each
    assignment's new entries as (id, document id) in queue order. An item stores its queue position
    (AssignmentItem): a new assignment's items are numbered here, and an assignment that held items already gets
    the new ones after its last and is then renumbered, which moves nothing when they came later in the pool
    (a re-import's new comments) and puts them in pool order among the old ones when they did not (items a
    withdrawn coder held)."""
    existing = {
        (a.topic_id, a.assessor_id): a
        for a in Assignment.objects.filter(
            topic_id__in={t for t, _ in given}, assessor_id__in={c for _, c in given}, phase=phase
        )
    }
    new = [
        Assignment(topic_id=topic, assessor_id=coder, phase=phase, scope=Assignment.Scope.OVERLAP, assigned_by=by)
        for topic, coder in given if (topic, coder) not in existing
    ]
    extended = [a.pk for key, a in existing.items() if key in given]
    last = dict(
        AssignmentItem.objects.filter(assignment_id__in=extended).values("assignment_id").annotate(last=Max("queue_position"))
        .values_list("assignment_id", "last")
    )
    for assignment in Assignment.objects.bulk_create(new):
        existing[(assignment.topic_id, assignment.assessor_id)] = assignment
    reopened = [a for key, a in existing.items() if key in given and not a.active]
    for assignment in reopened:
        assignment.active = True
    Assignment.objects.bulk_update(reopened, ["active"])
    AssignmentItem.objects.bulk_create(
        [
            AssignmentItem.for_entry(existing[key], entry, last.get(existing[key].pk, 0) + i)
            for key, entries in given.items() for i, entry in enumerate(entries, 1)
        ],
        ignore_conflicts=True, batch_size=5000,
    )
    AssignmentItem.renumber(extended)
