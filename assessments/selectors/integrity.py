"""Rows whose foreign keys point nowhere, where the database does not check them.

A few foreign keys have no database constraint, for the speed of bulk writes (Document.collection, PoolEntry.topic
and .document, PoolSource.entry and .run, AssignmentItem.entry_document; see the models for the figures). Judgments'
and their history rows' keys are checked by the database once per statement instead (migration 0027), which a
restore of some tables only would still pass by, so they are checked here too. Only the services that own those tables
write them, inside the campaign's lock, and Django cascades deletes; a row inserted or deleted around them (by hand
in psql, by a restore of some tables only, by a bug) would leave an orphan no constraint reports. The relations are
read from the models, so a key that loses its constraint later is checked without changing this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db.models import Exists, ForeignKey, OuterRef

SAMPLE = 10  # orphan ids listed per relation


@dataclass(frozen=True)
class Orphans:
    """The rows of `model` whose `field` names a `target` row that does not exist."""

    model: str
    field: str
    target: str
    count: int
    sample: list[int]  # the first SAMPLE ids

    @property
    def relation(self) -> str:
        return f"{self.model}.{self.field} → {self.target}"


def unchecked_keys() -> list[ForeignKey]:
    """Every foreign key of the project's models that the database does not enforce, in a stable order."""
    keys = [
        field
        for model in apps.get_app_config("assessments").get_models()
        for field in model._meta.get_fields()
        if isinstance(field, ForeignKey) and not field.db_constraint  # type: ignore[attr-defined]  # missing from the stubs
    ]
    return sorted(keys, key=lambda f: (f.model._meta.label, f.name))


def orphans() -> list[Orphans]:
    """For each unchecked key, the rows that point at nothing (an empty list per key is the healthy state); two
    queries per key, each an anti-join on the target's primary key."""
    found = []
    for field in unchecked_keys():
        model, target = field.model, field.related_model
        pointing = model._default_manager.filter(**{f"{field.attname}__isnull": False})
        missing = pointing.filter(~Exists(target._default_manager.filter(pk=OuterRef(field.attname))))
        count = missing.count()
        sample = list(missing.order_by("pk").values_list("pk", flat=True)[:SAMPLE]) if count else []
        found.append(Orphans(model._meta.label, field.name, target._meta.label, count, sample))
    return found
