"""Label schemes: which values an assessor may give, per dimension, and the key that gives each.

Pure data, no Django import: the campaign stores its scheme as JSON (`LabelScheme.to_json`), the
database checks every judgment against that JSON (see the trigger in migration 0002), and the
judge page builds its controls and keyboard shortcuts from it.

The presets follow the Touché task pages and the 2023 lab overview (shared seeds): relevance
0–2 everywhere (2020 Task 1 adds −2 for spam / non-argument), quality 0–2 where it was assessed,
and stance labels that depend on the task (comparative: FIRST/SECOND; argument retrieval:
PRO/CON; causal: SUPPORT/REFUTE; plus NEUTRAL and NO).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, overload

DIMENSIONS = ("relevance", "quality", "stance")


@dataclass(frozen=True)
class LabelValue:
    value: int | str
    name: str
    key: str  # the keyboard key that gives this label on the judge page


@dataclass(frozen=True)
class LabelScheme:
    relevance: tuple[LabelValue, ...]
    quality: tuple[LabelValue, ...] = ()
    stance: tuple[LabelValue, ...] = ()

    @overload
    def values(self, dimension: Literal["stance"]) -> tuple[str, ...]: ...

    @overload
    def values(self, dimension: str) -> tuple[int | str, ...]: ...

    def values(self, dimension: str) -> tuple[int | str, ...]:
        return tuple(v.value for v in getattr(self, dimension))

    def to_json(self) -> dict:
        return {dim: [{"value": v.value, "name": v.name, "key": v.key} for v in getattr(self, dim)] for dim in DIMENSIONS}

    @classmethod
    def from_json(cls, data: dict) -> LabelScheme:
        def dim(name: str) -> tuple[LabelValue, ...]:
            return tuple(LabelValue(v["value"], v["name"], v["key"]) for v in data.get(name, ()))

        scheme = cls(relevance=dim("relevance"), quality=dim("quality"), stance=dim("stance"))
        scheme.check()
        return scheme

    def check(self) -> None:
        """Reject schemes the judge page could not drive: no relevance, mistyped values, clashing keys."""
        if not self.relevance:
            raise ValueError("a label scheme needs at least one relevance value")
        for dim, kind in (("relevance", int), ("quality", int), ("stance", str)):
            values = getattr(self, dim)
            if any(not isinstance(v.value, kind) or isinstance(v.value, bool) for v in values):
                raise ValueError(f"{dim} values must be {kind.__name__}s")
            if len({v.value for v in values}) != len(values):
                raise ValueError(f"{dim} values repeat")
        keys = [v.key for dim in DIMENSIONS for v in getattr(self, dim)]
        if len(set(keys)) != len(keys) or any(len(k) != 1 for k in keys):
            raise ValueError("every label needs its own single keyboard key")

    def errors(self, *, relevance: int, quality: int | None, stance: str | None) -> list[str]:
        """What is wrong with this combination of labels; empty when the scheme allows it."""
        problems = []
        if relevance not in self.values("relevance"):
            problems.append(f"relevance {relevance!r} is not one of {list(self.values('relevance'))}")
        if quality is not None and quality not in self.values("quality"):
            problems.append(f"quality {quality!r} is not one of {list(self.values('quality'))}")
        if stance and stance not in self.values("stance"):
            problems.append(f"stance {stance!r} is not one of {list(self.values('stance'))}")
        return problems


_RELEVANCE = (
    LabelValue(0, "Not relevant", "0"),
    LabelValue(1, "Relevant", "1"),
    LabelValue(2, "Highly relevant", "2"),
)
_QUALITY = (
    LabelValue(0, "Low quality / no argument", "q"),
    LabelValue(1, "Average quality", "w"),
    LabelValue(2, "High quality", "e"),
)


def _stance(*names: tuple[str, str]) -> tuple[LabelValue, ...]:
    return tuple(LabelValue(value, name, value[0].lower() if value != "NO" else "o") for value, name in names)


PRESETS: dict[str, tuple[str, LabelScheme]] = {
    "touche-2020-task1": (
        "Touché 2020 Task 1: argument retrieval (relevance with −2 spam, quality)",
        LabelScheme(relevance=(LabelValue(-2, "Spam / no argument", "x"), *_RELEVANCE), quality=_QUALITY),
    ),
    "touche-2021-task2": (
        "Touché 2021 Task 2: comparative argument retrieval (relevance, quality)",
        LabelScheme(relevance=_RELEVANCE, quality=_QUALITY),
    ),
    "touche-2022-task2": (
        "Touché 2022 Task 2: comparative passages (relevance, quality, stance towards the objects)",
        LabelScheme(
            relevance=_RELEVANCE,
            quality=_QUALITY,
            stance=_stance(("FIRST", "Pro first object"), ("SECOND", "Pro second object"), ("NEUTRAL", "Neutral"), ("NO", "No stance")),
        ),
    ),
    "touche-2023-task1": (
        "Touché 2023 Task 1: argument retrieval for controversial questions (relevance, quality, stance)",
        LabelScheme(
            relevance=_RELEVANCE,
            quality=_QUALITY,
            stance=_stance(("PRO", "Pro"), ("CON", "Con"), ("NEUTRAL", "Neutral"), ("NO", "No stance")),
        ),
    ),
    "touche-2023-task2": (
        "Touché 2023 Task 2: evidence retrieval for causal questions (relevance, stance)",
        LabelScheme(
            relevance=_RELEVANCE,
            stance=_stance(("SUPPORT", "Supports the causal relation"), ("REFUTE", "Refutes it"), ("NEUTRAL", "Neutral"), ("NO", "No stance")),
        ),
    ),
}

for _name, (_, _scheme) in PRESETS.items():
    _scheme.check()
