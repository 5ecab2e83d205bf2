"""Label schemes: what a campaign judges, as a list of dimensions the campaign defines.

Pure data, no Django import. A dimension has a name (its id in files, the API and `--kind`), a title, a kind
(graded: ordinal integer grades; category: named classes; question: yes/no, stored as 1/0), its values with names
and keyboard keys, whether a judgment is complete without it, and an optional condition on another dimension
("asked only when relevance ≥ 1"). The campaign stores its scheme as JSON (`LabelScheme.to_json`, version 2);
the database checks every stored label against that JSON (triggers in migration 0020), and every page, export,
agreement figure and evaluation reads the dimensions from here instead of naming them.

This module and its presets are the only code that knows the names of Touché's dimensions. The presets follow
the task pages and the 2023 lab overview (shared seeds): relevance 0–2 everywhere (2020 Task 1 adds −2 for spam /
non-argument), quality 0–2 where it was assessed, coherence 0–2 for 2022's sentence pairs, and stance labels that
depend on the task (comparative: FIRST/SECOND; argument retrieval: PRO/CON; causal: SUPPORT/REFUTE; plus NEUTRAL
and NO). Touché asked quality, stance and coherence only of documents judged relevant: their condition.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

GRADED, CATEGORY, QUESTION = "graded", "category", "question"
KINDS = (GRADED, CATEGORY, QUESTION)
SCHEME_VERSION = 2
# A dimension's name is a word that files and command lines carry as it is (`--kind coherence`, `ONTOPIC`).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,15}")  # qrels snapshots keep it in 16 characters

Value = int | str
Labels = Mapping[str, Value]


class SchemeError(ValueError):
    """A scheme the judge page could not drive (the message says what and where)."""


@dataclass(frozen=True)
class LabelValue:
    value: Value
    name: str
    key: str  # the keyboard key that gives this label on the judge page


@dataclass(frozen=True)
class Condition:
    """When a dimension is asked: `dimension` has a value of at least `min` (graded and question dimensions), or one
    of `any_of`. A dimension whose condition fails is not asked, and a value it had is cleared."""

    dimension: str
    min: int | None = None
    any_of: tuple[Value, ...] = ()

    def holds(self, labels: Labels) -> bool:
        value = labels.get(self.dimension)
        if value is None:
            return False
        if self.min is not None:
            return isinstance(value, int) and value >= self.min
        return value in self.any_of

    def describe(self) -> str:
        if self.min is not None:
            return f"{self.dimension} ≥ {self.min}"
        return f"{self.dimension} is {' or '.join(map(str, self.any_of))}"

    def to_json(self) -> dict[str, Any]:
        if self.min is not None:
            return {"dimension": self.dimension, "min": self.min}
        return {"dimension": self.dimension, "in": list(self.any_of)}


@dataclass(frozen=True)
class Dimension:
    name: str
    title: str
    kind: str
    values: tuple[LabelValue, ...]
    required: bool = False  # a judgment counts as complete only with a value here (when the dimension is asked)
    condition: Condition | None = None
    # What files and measures take for this dimension where its condition does not hold: relevance 0 for a causal
    # document of the wrong direction. None: such a judgment has no value here.
    otherwise: Value | None = None
    # What files and measures take for this optional dimension where it is asked but left unanswered in a complete
    # judgment: an on-topic image not marked as supporting a side does not support it (Touché Task 3's qrels give
    # every judged image all three answers). None: no value.
    unanswered: Value | None = None

    @property
    def ordinal(self) -> bool:
        """Whether its values are ordered grades (ordinal agreement, graded measures) rather than classes."""
        return self.kind == GRADED

    @property
    def value_type(self) -> type:
        return str if self.kind == CATEGORY else int

    def allows(self, value: object) -> bool:
        return not isinstance(value, bool) and any(v.value == value and type(v.value) is type(value) for v in self.values)

    def parse(self, text: str) -> Value:
        """A value as a file writes it (`2`, `PRO`); ValueError when it is not of the dimension's type."""
        return text if self.kind == CATEGORY else int(text)

    def name_of(self, value: Value) -> str:
        return next((v.name for v in self.values if v.value == value), str(value))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name, "title": self.title, "kind": self.kind, "required": self.required,
            "values": [{"value": v.value, "name": v.name, "key": v.key} for v in self.values],
        }
        if self.condition is not None:
            data["condition"] = self.condition.to_json()
        if self.otherwise is not None:
            data["otherwise"] = self.otherwise
        if self.unanswered is not None:
            data["unanswered"] = self.unanswered
        return data


@dataclass(frozen=True)
class LabelScheme:
    dimensions: tuple[Dimension, ...]
    _by_name: dict[str, Dimension] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {d.name: d for d in self.dimensions})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dimensions)

    def dimension(self, name: str) -> Dimension:
        try:
            return self._by_name[name]
        except KeyError:
            raise SchemeError(f"unknown label dimension {name!r} (this campaign's: {', '.join(self.names)})") from None

    def has(self, name: str) -> bool:
        return name in self._by_name

    def values(self, name: str) -> tuple[Value, ...]:
        return tuple(v.value for v in self.dimension(name).values)

    @property
    def primary(self) -> Dimension:
        """The dimension a pool's judged/unjudged count and a plain `evaluate_runs` go by: the first required graded
        one (relevance in every Touché preset), else the first dimension."""
        return next((d for d in self.dimensions if d.required and d.ordinal), self.dimensions[0])

    def asked(self, labels: Labels) -> tuple[Dimension, ...]:
        """The dimensions asked for these labels: those without a condition, or whose condition holds."""
        return tuple(d for d in self.dimensions if d.condition is None or d.condition.holds(labels))

    def cleared(self, labels: Labels) -> dict[str, Value]:
        """The labels without the values of dimensions their conditions no longer ask for (followed through chains:
        clearing one may clear another that depended on it)."""
        kept = dict(labels)
        while True:
            gone = [d.name for d in self.dimensions if d.name in kept and d.condition is not None and not d.condition.holds(kept)]
            if not gone:
                return kept
            for name in gone:
                del kept[name]

    def value_for_files(self, name: str, labels: Labels) -> Value | None:
        """The value exports and measures take for dimension `name`: the label, or the dimension's `otherwise` where
        its condition does not hold."""
        d = self.dimension(name)
        if name in labels:
            return labels[name]
        # Only where the condition was answered and fails: a judgment with no answer there yet has no value either.
        if d.otherwise is not None and d.condition is not None and d.condition.dimension in labels and not d.condition.holds(labels):
            return d.otherwise
        if d.unanswered is not None and (d.condition is None or d.condition.holds(labels)) and self.complete(labels):
            return d.unanswered
        return None

    def complete(self, labels: Labels) -> bool:
        return all(d.name in labels for d in self.asked(labels) if d.required)

    def errors(self, labels: Labels, *, conditions: bool = True) -> list[str]:
        """What is wrong with these labels; empty when the scheme allows them. With `conditions`, a value for a
        dimension its condition does not ask for is wrong too."""
        problems = []
        for name, value in labels.items():
            if name not in self._by_name:
                problems.append(f"{name!r} is not a label dimension of this campaign (its: {', '.join(self.names)})")
                continue
            dimension = self._by_name[name]
            if not dimension.allows(value):
                problems.append(f"{name} {value!r} is not one of {list(self.values(name))}")
            elif conditions and dimension.condition is not None and not dimension.condition.holds(labels):
                problems.append(f"{name} is asked only when {dimension.condition.describe()}")
        return problems

    def keys(self) -> list[dict[str, Any]]:
        """Every label's key with its dimension, value and name, in the scheme's order (the judge page's keymap)."""
        return [{"dimension": d.name, "value": v.value, "name": v.name, "key": v.key} for d in self.dimensions for v in d.values]

    def to_json(self) -> dict[str, Any]:
        return {"version": SCHEME_VERSION, "dimensions": [d.to_json() for d in self.dimensions]}

    @classmethod
    def from_json(cls, data: object) -> LabelScheme:
        """The scheme a JSON document (a campaign's, a file given to `--scheme`) describes; SchemeError says what is
        wrong, naming the dimension."""
        if not isinstance(data, dict) or not isinstance(data.get("dimensions"), list):
            raise SchemeError('a label scheme is a JSON object with a list of "dimensions"')
        if data.get("version", SCHEME_VERSION) != SCHEME_VERSION:
            raise SchemeError(f"label scheme version {data.get('version')!r} is not known (this is version {SCHEME_VERSION})")
        scheme = cls(tuple(_dimension_from_json(i, d) for i, d in enumerate(data["dimensions"], 1)))
        scheme.check()
        return scheme

    def check(self) -> None:
        """Refuse what the judge page could not drive: no dimension, a repeated name or value, clashing or long keys,
        a condition on an unknown dimension or on itself, a cycle of conditions."""
        if not self.dimensions:
            raise SchemeError("a label scheme needs at least one dimension")
        if len(self._by_name) != len(self.dimensions):
            raise SchemeError("dimension names repeat")
        seen_keys: dict[str, str] = {}
        for d in self.dimensions:
            if not _NAME.fullmatch(d.name):
                raise SchemeError(f"dimension name {d.name!r}: a letter, then up to 15 letters, digits or _")
            if d.kind not in KINDS:
                raise SchemeError(f"dimension {d.name}: kind {d.kind!r} is not one of {', '.join(KINDS)}")
            if not d.values:
                raise SchemeError(f"dimension {d.name}: it has no values")
            if any(type(v.value) is not d.value_type for v in d.values):
                raise SchemeError(f"dimension {d.name}: {d.kind} values must be {d.value_type.__name__}s")
            if d.kind == QUESTION and sorted(v.value for v in d.values) != [0, 1]:
                raise SchemeError(f"dimension {d.name}: a question's values are 1 (yes) and 0 (no)")
            if len({v.value for v in d.values}) != len(d.values):
                raise SchemeError(f"dimension {d.name}: its values repeat")
            for v in d.values:
                if len(v.key) != 1:
                    raise SchemeError(f"dimension {d.name}: the key of {v.name!r} must be one character, not {v.key!r}")
                key = v.key.lower()
                if key in seen_keys:
                    raise SchemeError(f"key {v.key!r} is given to both {seen_keys[key]} and {d.name} {v.value!r}")
                seen_keys[key] = f"{d.name} {v.value!r}"
        for d in self.dimensions:
            _check_condition(self, d)
            if d.unanswered is not None and (d.required or not d.allows(d.unanswered)):
                raise SchemeError(
                    f"dimension {d.name}: 'unanswered' needs an optional dimension and one of its values, not {d.unanswered!r}"
                )


def _check_condition(scheme: LabelScheme, d: Dimension) -> None:
    if d.condition is None:
        return
    target = scheme._by_name.get(d.condition.dimension)
    if target is None:
        raise SchemeError(f"dimension {d.name}: its condition names an unknown dimension {d.condition.dimension!r}")
    if d.condition.min is not None and (type(d.condition.min) is not int):
        raise SchemeError(f"dimension {d.name}: its condition's 'min' must be a whole number, not {d.condition.min!r}")
    if d.condition.min is not None and target.kind == CATEGORY:
        raise SchemeError(f"dimension {d.name}: 'min' needs a graded or yes/no dimension, {target.name} is a category")
    if d.condition.min is None and not d.condition.any_of:
        raise SchemeError(f"dimension {d.name}: its condition needs 'min' or 'in'")
    if d.otherwise is not None and not d.allows(d.otherwise):
        raise SchemeError(f"dimension {d.name}: 'otherwise' {d.otherwise!r} is not one of its values")
    for value in d.condition.any_of:
        if not target.allows(value):
            raise SchemeError(f"dimension {d.name}: its condition's value {value!r} is not one of {target.name}'s")
    chain, current = [d.name], target
    while current.condition is not None:
        chain.append(current.name)
        if current.name == d.name:
            raise SchemeError(f"conditions form a cycle: {' → '.join(chain)}")
        current = scheme._by_name[current.condition.dimension] if current.condition.dimension in scheme._by_name else current
        if len(chain) > len(scheme.dimensions) + 1:
            raise SchemeError(f"conditions form a cycle: {' → '.join(chain)}")


def stored_scheme(data: object) -> LabelScheme:
    """LabelScheme.from_json of a scheme as the database holds it, parsed and checked once per process for each
    distinct document: every judge page and label save reads its campaign's scheme (the page twice), and parsing it
    cost as much Python as the rest of a save. A scheme is immutable, so one object serves every request. The key is
    the document's repr: the database gives a document's keys in one order, so equal schemes have equal reprs
    (json.dumps cost ten times as much)."""
    key = repr(data)
    scheme = _STORED_SCHEMES.get(key)
    if scheme is None:
        scheme = LabelScheme.from_json(data)
        if len(_STORED_SCHEMES) >= 256:  # campaigns whose schemes changed many times: start afresh
            _STORED_SCHEMES.clear()
        _STORED_SCHEMES[key] = scheme
    return scheme


_STORED_SCHEMES: dict[str, LabelScheme] = {}


def _dimension_from_json(position: int, data: object) -> Dimension:
    where = f"dimension {position}"
    if not isinstance(data, dict):
        raise SchemeError(f"{where}: must be a JSON object")
    where = f"dimension {data.get('name', position)!s}"
    try:
        values = tuple(LabelValue(v["value"], str(v.get("name", v["value"])), str(v["key"])) for v in data["values"])
        condition = None
        if (c := data.get("condition")) is not None:
            condition = Condition(str(c["dimension"]), c.get("min"), tuple(c.get("in", ())))
        if not isinstance(data.get("required", False), bool):
            raise SchemeError(f"{where}: 'required' is true or false, not {data['required']!r}")
        return Dimension(
            name=str(data["name"]), title=str(data.get("title", data["name"])), kind=str(data.get("kind", GRADED)),
            values=values, required=data.get("required", False), condition=condition, otherwise=data.get("otherwise"),
            unanswered=data.get("unanswered"),
        )
    except (KeyError, TypeError) as e:
        raise SchemeError(f"{where}: missing or malformed {e}") from None


def upgrade_from_version_1(data: Mapping[str, Any], *, details_only_if_relevant: bool) -> dict[str, Any]:
    """A version-1 scheme (`{"relevance": [...], "quality": [...], "stance": [...]}`, before campaigns defined their
    dimensions) as version-2 JSON: the same values and keys, and the campaign's old "quality and stance only of
    relevant documents" setting as those dimensions' condition. Read by the migration and by old archives."""
    condition = {"dimension": "relevance", "min": 1} if details_only_if_relevant else None
    dimensions = []
    for name, kind in (("relevance", GRADED), ("quality", GRADED), ("stance", CATEGORY)):
        if not data.get(name):
            continue
        d: dict[str, Any] = {"name": name, "title": name.capitalize(), "kind": kind, "required": name == "relevance", "values": list(data[name])}
        if name != "relevance" and condition:
            d["condition"] = condition
        dimensions.append(d)
    return {"version": SCHEME_VERSION, "dimensions": dimensions}


# --------------------------------------------------------------------------------------------------------------
# Presets: one per Touché text task, 2020–2023.


def _values(*triples: tuple[Value, str, str]) -> tuple[LabelValue, ...]:
    return tuple(LabelValue(value, name, key) for value, name, key in triples)


_GRADES = ((0, "Not relevant", "0"), (1, "Relevant", "1"), (2, "Highly relevant", "2"))
_RELEVANT = Condition("relevance", min=1)


def _relevance(*extra: tuple[Value, str, str], title: str = "Relevance") -> Dimension:
    return Dimension("relevance", title, GRADED, _values(*extra, *_GRADES), required=True)


def _graded(name: str, title: str, names: Iterable[str], keys: str) -> Dimension:
    return Dimension(name, title, GRADED, _values(*((i, n, k) for i, (n, k) in enumerate(zip(names, keys, strict=True)))), condition=_RELEVANT)


_QUALITY = _graded("quality", "Argument quality", ("Low quality / no argument", "Average quality", "High quality"), "qwe")
# 2021 Task 1 graded both on four levels, 0 (low / not relevant) to 3 (high), beside −2 for spam (its task page).
_QUALITY_4 = _graded("quality", "Argument quality", ("Low quality", "Fair quality", "Good quality", "High quality"), "qwer")
_COHERENCE = _graded("coherence", "Coherence of the pair", ("Incoherent", "Partly coherent", "Coherent"), "asd")
# 2022 Task 1's three qrels files are line-aligned: every judged pair is in each, and a pair judged not relevant has
# quality and coherence 0 there (ir_datasets zips the files line by line). So files and measures take 0 for them.
_PAIR_QUALITY = replace(_QUALITY, otherwise=0)
_PAIR_COHERENCE = replace(_COHERENCE, otherwise=0)


# Touché Task 3 asked three yes/no questions of each image, named as its qrels name them: on topic; then, of an
# on-topic image, whether it supports the pro side and whether it supports the con side (both may be yes). A support
# left unmarked is a no, and an off-topic image supports neither: the qrels give every judged image all three.
_ON_TOPIC = Condition("ONTOPIC", min=1)
_IMAGES = LabelScheme((
    Dimension("ONTOPIC", "On topic", QUESTION, _values((1, "On topic", "o"), (0, "Off topic", "n")), required=True),
    Dimension("PRO", "Supports the pro side", QUESTION, _values((1, "Supports pro", "p"), (0, "Not pro", "q")),
              condition=_ON_TOPIC, otherwise=0, unanswered=0),
    Dimension("CON", "Supports the con side", QUESTION, _values((1, "Supports con", "c"), (0, "Not con", "x")),
              condition=_ON_TOPIC, otherwise=0, unanswered=0),
))
# Presets whose campaigns judge images (Campaign.kind): image collections, image runs, the precision@10 measures.
IMAGE_PRESETS = frozenset({"touche-2022-task3", "touche-2023-task3"})


def _stance(title: str, *pairs: tuple[str, str]) -> Dimension:
    values = [(value, name, value[0].lower() if value != "NO" else "o") for value, name in pairs]
    return Dimension("stance", title, CATEGORY, _values(*values), condition=_RELEVANT)


_PRO_CON = _stance("Stance towards the topic", ("PRO", "Pro"), ("CON", "Con"), ("NEUTRAL", "Neutral"), ("NO", "No stance"))
_COMPARATIVE = _stance(
    "Stance towards the objects",
    ("FIRST", "Pro first object"), ("SECOND", "Pro second object"), ("NEUTRAL", "Neutral"), ("NO", "No stance"),
)
_SPAM = (-2, "Spam / no argument", "x")

PRESETS: dict[str, tuple[str, LabelScheme]] = {
    "touche-2020-task1": (
        "Touché 2020 Task 1: argument retrieval from debate portals (relevance with −2 spam, quality)",
        LabelScheme((_relevance(_SPAM), _QUALITY)),
    ),
    "touche-2020-task2": (
        "Touché 2020 Task 2: comparative argument retrieval from ClueWeb12 (relevance, quality)",
        LabelScheme((_relevance(), _QUALITY)),
    ),
    "touche-2021-task1": (
        "Touché 2021 Task 1: argument retrieval for controversial questions (relevance −2 spam, 0–3; quality 0–3)",
        LabelScheme((Dimension("relevance", "Relevance", GRADED, _values(
            _SPAM, (0, "Not relevant", "0"), (1, "Marginally relevant", "1"), (2, "Relevant", "2"), (3, "Highly relevant", "3"),
        ), required=True), _QUALITY_4)),
    ),
    "touche-2021-task2": (
        "Touché 2021 Task 2: comparative argument retrieval (relevance, quality)",
        LabelScheme((_relevance(), _QUALITY)),
    ),
    "touche-2022-task1": (
        "Touché 2022 Task 1: argument gists, pairs of sentences (relevance, quality, coherence)",
        LabelScheme((_relevance(), _PAIR_QUALITY, _PAIR_COHERENCE)),
    ),
    "touche-2022-task2": (
        "Touché 2022 Task 2: comparative passages (relevance, quality, stance towards the objects)",
        LabelScheme((_relevance(), _QUALITY, _COMPARATIVE)),
    ),
    "touche-2023-task1": (
        "Touché 2023 Task 1: argument retrieval for controversial questions (relevance, quality, stance)",
        LabelScheme((_relevance(), _QUALITY, _PRO_CON)),
    ),
    "touche-2023-task2": (
        "Touché 2023 Task 2: evidence retrieval for causal questions (direction, relevance, evidence, causal stance)",
        LabelScheme((
            # Asked first: a document that has the effect cause the cause is off-topic (lab overview, Task 2).
            Dimension("direction", "Direction of causality", CATEGORY, _values(
                ("CAUSE_EFFECT", "Cause → effect, as asked", "c"), ("WRONG", "Wrong direction: off-topic", "w"),
            ), required=True),
            Dimension("relevance", "Relevance", GRADED, _values(*_GRADES), required=True,
                      condition=Condition("direction", any_of=("CAUSE_EFFECT",)), otherwise=0),
            Dimension("evidence", "Evidence", CATEGORY, _values(
                ("CIRCUMSTANTIAL", "Circumstantial", "e"), ("STRONGER", "Stronger than circumstantial (direct)", "d"),
            ), condition=_RELEVANT),
            _stance("Causal stance", ("SUPPORT", "Supports the causal relation"), ("REFUTE", "Refutes it"),
                    ("NEUTRAL", "Neutral"), ("NO", "No evidence")),
        )),
    ),
    "touche-2022-task3": ("Touché 2022 Task 3: image retrieval for arguments (on topic, supports pro, supports con)", _IMAGES),
    "touche-2023-task3": ("Touché 2023 Task 3: image retrieval for arguments (on topic, supports pro, supports con)", _IMAGES),
    "touche-2023-task4": (
        "Touché 2023 Task 4: stance of a comment towards its proposal (In favor, Against, Other), multilingual",
        LabelScheme((
            # The values are the label strings of the lab's files (comments TSV, submissions), exactly.
            Dimension("stance", "Stance towards the proposal", CATEGORY, _values(
                ("In favor", "In favor", "f"), ("Against", "Against", "a"), ("Other", "Other", "o"),
            ), required=True),
        )),
    ),
}

# Presets whose campaigns classify items beside their context instead of judging pooled documents (Campaign.kind).
CLASSIFICATION_PRESETS = frozenset({"touche-2023-task4"})

# The stance codes runs of a preset's task wrote in column 2, and the stance values they stand for: a campaign made
# from the preset starts with these (Campaign.stance_codes), so its runs import as the lab's did. Touché 2023 Task 2
# runs wrote SUP, REF, NEU and NO (the organisers' baseline writes NEU for every document).
PRESET_STANCE_CODES: dict[str, dict[str, str]] = {
    "touche-2023-task2": {"SUP": "SUPPORT", "REF": "REFUTE", "NEU": "NEUTRAL", "NO": "NO"},
}

for _name, (_, _scheme) in PRESETS.items():
    _scheme.check()
