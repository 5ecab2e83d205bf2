"""The queue's SQL for "judged" says what LabelScheme.complete says, for every preset and a custom scheme: the
scheme written out as SQL once per query (scheme_complete_sql) and the scheme's JSON walked per row (complete_sql)."""

import itertools
import json
from pathlib import Path

import pytest
from django.db import connection

from assessments.labels import PRESETS, LabelScheme
from assessments.selectors.queues import complete_sql, scheme_complete_sql

CUSTOM = LabelScheme.from_json(json.loads((Path(__file__).parents[1] / "data" / "schemes" / "four-dimensions.json").read_text()))
SCHEMES = {**{name: scheme for name, (_, scheme) in PRESETS.items()}, "four-dimensions": CUSTOM}


def _label_sets(scheme: LabelScheme) -> list[dict]:
    """Every combination of no value or one value for the first three dimensions (and the fourth's first value)."""
    choices = [[None, *scheme.values(d.name)] for d in scheme.dimensions[:3]]
    sets = []
    for combination in itertools.product(*choices):
        labels = {d.name: v for d, v in zip(scheme.dimensions, combination, strict=False) if v is not None}
        sets.append(labels)
        if len(scheme.dimensions) > 3:
            sets.append({**labels, scheme.dimensions[3].name: scheme.values(scheme.dimensions[3].name)[0]})
    return sets


@pytest.mark.django_db
@pytest.mark.parametrize("name", SCHEMES)
def test_both_sql_forms_agree_with_the_scheme(name):
    scheme = SCHEMES[name]
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    written, params = scheme_complete_sql(scheme, f"%(labels)s{cast}", connection.vendor)
    walked = complete_sql(f"%(labels)s{cast}", f"%(scheme)s{cast}", connection.vendor)
    with connection.cursor() as cursor:
        for labels in _label_sets(scheme):
            values = {**params, "labels": json.dumps(labels), "scheme": json.dumps(scheme.to_json())}
            cursor.execute(f"SELECT {written}, {walked}", values)
            assert tuple(map(bool, cursor.fetchone())) == (scheme.complete(labels),) * 2, (name, labels)
