from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, models

from .campaigns import Phase


class PoolEntry(models.Model):
    """A document to judge for a topic. Assessors see `order`, never the runs behind the entry."""

    # Both indexes below lead with the topic, so it needs none of its own. Neither key is checked by the database:
    # checking them took a quarter of a depth-100 build of Touché's largest campaign (87,000 entries, 1.2 s at
    # commit). Only the pooling service inserts entries, in the transaction that creates or reads the documents and
    # while holding the campaign's lock that topic imports take; Django still cascades and protects on delete, and
    # `manage.py check_integrity` finds entries that point nowhere.
    topic = models.ForeignKey(
        "assessments.Topic", on_delete=models.CASCADE, related_name="pool_entries", db_constraint=False, db_index=False
    )
    # No index on `document` alone either: a pool build inserted into it once per entry (7 % of a depth-100 build of
    # short runs), and every query of entries is by topic, so (topic, document) serves it; the few that start from
    # documents join through their topics (services.pairs) or read entries whole (a document import's pooled ones).
    document = models.ForeignKey(
        "assessments.Document", on_delete=models.PROTECT, related_name="pool_entries", db_constraint=False, db_index=False
    )
    order = models.PositiveIntegerField(default=0)
    # Twins (exact or near duplicates) point at the entry judged for them. Most entries have none, so the index
    # holds only the twins (see Meta) and a new entry costs no insertion into it.
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="twins", db_index=False
    )
    strategy = models.CharField(max_length=32, blank=True)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "order"]
        constraints = [models.UniqueConstraint(fields=["topic", "document"], name="poolentry_unique_doc_per_topic")]
        indexes = [
            models.Index(fields=["topic", "order"], name="poolentry_queue"),
            models.Index(fields=["duplicate_of"], name="poolentry_twins", condition=models.Q(duplicate_of__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"pool entry {self.pk} (topic {self.topic_id}, document {self.document_id})"


class PoolSource(models.Model):
    """A run that put a pool entry there, with the entry's 1-based position in each order the pool read the run in:
    the rank column (`rank_position`) and the score (`score_position`, trec_eval's order). A position is null when
    the build did not read that order or the document lay below the cut in it.
    """

    # No database foreign keys, and no index on `run` alone: a depth-100 pool of Touché's largest campaign has
    # 420,000 sources, and checking the keys and maintaining a second index took most of the build. The pooling
    # service writes sources only together with their entries, in one transaction; Django still cascades deletes
    # (`manage.py check_integrity` finds sources that point nowhere).
    # The unique (entry, run) index serves lookups by entry.
    entry = models.ForeignKey(PoolEntry, on_delete=models.CASCADE, related_name="sources", db_constraint=False, db_index=False)
    run = models.ForeignKey(
        "assessments.Run", on_delete=models.CASCADE, related_name="pool_sources", db_constraint=False, db_index=False
    )
    rank_position = models.PositiveIntegerField(null=True, blank=True)
    score_position = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["entry", "run"], name="poolsource_unique_run_per_entry")]

    def __str__(self) -> str:
        return f"run {self.run_id} for pool entry {self.entry_id}"


class Assignment(models.Model):
    """A topic given to an assessor for a phase.

    In training every assessor gets the same topics; in the main phase one assessor per topic,
    plus optional `overlap` assignments covering a share of another assessor's entries
    (listed in AssignmentItem) so agreement can be watched after training.
    """

    class Scope(models.TextChoices):
        FULL = "full", "Whole pool"
        OVERLAP = "overlap", "Overlap slice"

    topic = models.ForeignKey("assessments.Topic", on_delete=models.CASCADE, related_name="assignments")
    assessor = models.ForeignKey("accounts.User", on_delete=models.CASCADE, related_name="assignments")
    phase = models.CharField(max_length=16, choices=Phase.choices)
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.FULL)
    round = models.PositiveSmallIntegerField(default=1)
    active = models.BooleanField(default=True)
    assigned_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "assessor"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "assessor", "phase"], name="assignment_unique_per_phase"),
            models.CheckConstraint(
                condition=models.Q(phase__in=[Phase.TRAINING, Phase.MAIN]), name="assignment_phase_is_training_or_main"
            ),
        ]
        indexes = [models.Index(fields=["assessor", "active"], name="assignment_by_assessor")]

    def __str__(self) -> str:
        return f"assignment {self.pk} (topic {self.topic_id}, assessor {self.assessor_id}, {self.phase})"


class AssignmentItem(models.Model):
    """A pool entry inside an overlap assignment (an overlap slice, or the items given to a classification coder),
    with its place in the assignment's queue.

    `queue_position` is the item's 1-based place in its assignment's queue (its entry's pool `order`, then id) and
    `entry_document` a copy of its entry's document (which never changes), so an item assignment's queue is read
    from the assignment's own rows in the `assignmentitem_queue` index alone: before, it joined the item list to
    the topic's pool and sorted, a tenth of an item page's time at 2,400 comments (bench/label_page.py). Every
    write of an assignment's items therefore ends with `renumber` (services.assignments, services.item_assignments,
    the archive import); `for_entry` builds a row for bulk_create, and `save()` renumbers by itself.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    entry = models.ForeignKey(PoolEntry, on_delete=models.CASCADE, related_name="+")
    queue_position = models.PositiveIntegerField()
    # No database key and no index of its own: the entry's document, which the entry's own key protects.
    entry_document = models.ForeignKey(
        "assessments.Document", on_delete=models.DO_NOTHING, related_name="+", db_constraint=False, db_index=False
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "entry"], name="assignmentitem_unique")]
        indexes = [
            # The queue in order with what it reads (index-only on PostgreSQL). Not unique: renumbering moves
            # positions in one UPDATE, which a unique index would check row by row.
            models.Index(fields=["assignment", "queue_position"], include=["entry", "entry_document"], name="assignmentitem_queue"),
        ]

    def __str__(self) -> str:
        return f"entry {self.entry_id} of assignment {self.assignment_id}"

    def save(self, *args, **kwargs):
        if self.entry_document_id is None:
            self.entry_document_id = self.entry.document_id
        if self.queue_position is None:
            self.queue_position = 0  # numbered below
        super().save(*args, **kwargs)
        type(self).renumber([self.assignment_id])
        self.queue_position = type(self).objects.values_list("queue_position", flat=True).get(pk=self.pk)

    @classmethod
    def for_entry(cls, assignment: Assignment | int, entry: PoolEntry | tuple[int, int], position: int) -> AssignmentItem:
        """The item of `entry` (a PoolEntry, or its id and document id) at `position` of `assignment` (or its id),
        for bulk_create. A caller that cannot know every position (items added to a list already there) stores the
        rows and then calls `renumber`."""
        pk, document_id = (entry.pk, entry.document_id) if isinstance(entry, PoolEntry) else entry
        link = {"assignment": assignment} if isinstance(assignment, Assignment) else {"assignment_id": assignment}
        return cls(**link, entry_id=pk, entry_document_id=document_id, queue_position=position)

    @classmethod
    def renumber(cls, assignment_ids: Iterable[int]) -> int:
        """Number the items of these assignments 1, 2, ... in queue order (pool `order`, then entry id), writing only
        the rows whose position changes; how many changed."""
        ids, changed = sorted(set(assignment_ids)), 0
        item, entry = cls._meta.db_table, PoolEntry._meta.db_table
        with connection.cursor() as cursor:
            for start in range(0, len(ids), 500):
                some = ids[start : start + 500]
                cursor.execute(
                    f"""UPDATE {item} SET queue_position = numbered.position
                          FROM (SELECT i.id, row_number() OVER (PARTITION BY i.assignment_id ORDER BY e."order", e.id) AS position
                                  FROM {item} i JOIN {entry} e ON e.id = i.entry_id
                                 WHERE i.assignment_id IN ({", ".join(["%s"] * len(some))})) numbered
                         WHERE {item}.id = numbered.id AND {item}.queue_position <> numbered.position""",
                    some,
                )
                changed += cursor.rowcount
        return changed
