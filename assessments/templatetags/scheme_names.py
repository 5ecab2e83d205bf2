"""Label values in templates as the campaign's scheme names them (assessments.charts.value_text and label_text, the
one place that decides how a page writes a value): `{% load scheme_names %}`, then
`{{ line.old|value_text:dimension }}` in a table cell, `{{ value|value_named:dimension }}` where the value is what
is typed, `{% label_text scheme "stance" "PRO" %}` in a sentence."""

from django import template

from assessments import charts
from assessments.labels import Dimension, LabelScheme, Value

register = template.Library()


@register.filter
def value_text(value: Value | None, dimension: Dimension | None) -> Value | str | None:
    """A value of `dimension` where space is short: a category by its name, a grade by its value. None (no label)
    stays None, for `default_if_none`; without a dimension the value is shown as it is."""
    if value is None or dimension is None:
        return value
    return charts.value_text(dimension, value)


@register.filter
def value_named(value: Value, dimension: Dimension | None) -> Value | str:
    """A value where the value itself is what is typed or stored, with its name: "FIRST (Pro first object)"."""
    return value if dimension is None else charts.value_named(dimension, value)


@register.simple_tag
def label_text(scheme: LabelScheme, dimension: str, value: Value) -> str:
    """One label as a sentence writes it, "Stance: Pro"; a dimension the scheme no longer has by its bare name."""
    if not scheme.has(dimension):
        return f"{dimension} {value}"
    return charts.label_text(scheme.dimension(dimension), value)
