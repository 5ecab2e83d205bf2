"""The agreement dashboard's charts as geometry and colours: inline SVG coordinates, heatmap and table shading,
and the segments of stacked bars, computed on the server so the page needs no chart library and fetches nothing;
and the label chips the disagreement, adjudication and discussion pages show a judgment's labels with.

Plain Python with no Django import: it reads the selectors' figures (selectors.agreement, selectors.monitoring)
and the campaign's label scheme (assessments.labels) by their attributes, so it is tested with plain objects. It
draws what it is given and computes no statistic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import accumulate

from assessments.labels import CATEGORY, GRADED, Dimension, LabelScheme, Value

PALETTE = ("#2f5d8a", "#c0622f", "#2e7d4f", "#8a4f9e", "#b8860b", "#1f8a8a", "#b3261e", "#5a6b7b", "#c2477a", "#6b8e23")
CATEGORY_COLOURS = ("#9fc5e8", "#f6b26b", "#d9d2e9", "#cccccc", "#b6d7a8", "#ffe599")
# One colour per time bucket of selectors.monitoring.TIME_BUCKETS, from "not read" red to thorough green.
TIME_COLOURS = ("#b3261e", "#e69138", "#f1c232", "#93c47d", "#6aa84f", "#45818e")


def kappa_colour(value: float | None, threshold: float) -> str:
    """Red at or below chance, amber up to the pass mark, green above it; grey where undefined."""
    if value is None:
        return "#ecebe8"
    t = min(max(threshold, 0.05), 0.95)
    v = min(value, 1.0)
    hue = 0.0 if v <= 0 else 40 * v / t if v < t else 60 + 70 * (v - t) / (1 - t)
    return f"hsl({hue:.0f} 62% 80%)"


def agreement_panels(agreement, scheme: LabelScheme | None = None) -> list[dict]:
    """Per dimension of an Agreement (selectors.agreement): its figures, the kappa heatmap, the confusion table of
    all pairs together, and each pair's own table; with the campaign's `scheme`, the tables' rows and columns are
    headed as value_text writes the dimension's values (a category by its name)."""
    panels = []
    for dim in agreement.dimensions.values():
        d = scheme.dimension(dim.name) if scheme is not None and scheme.has(dim.name) else None
        names = [value_text(d, c) for c in dim.report.categories] if d is not None else None
        panels.append({
            "figures": dim,
            "heatmap": kappa_heatmap(dim, agreement.threshold),
            "confusion": pooled_confusion(dim.report, names),
            "pairs": [(a, b, shaded_table(m, dim.report.categories, names)) for (a, b), m in dim.report.confusion.items()],
        })
    return panels


def kappa_heatmap(dim, threshold: float) -> dict:
    """An assessor × assessor grid of pairwise kappas (weighted for ordinal scales), with each one's mean. `dim` is a
    dimension's figures (selectors.agreement.DimensionFigures: its report, assessors and flagged)."""
    report = dim.report
    names = sorted({name for pair in report.cohen for name in (pair.rater_a, pair.rater_b)})
    pairs = {}
    for p in report.cohen:
        value = p.linear if report.ordinal else p.unweighted
        pairs[p.rater_a, p.rater_b] = pairs[p.rater_b, p.rater_a] = (value, p.n_items)
    means = {r.rater: r.mean_kappa for r in dim.assessors}
    flagged = {r.rater for r in dim.flagged}
    rows = []
    for a in names:
        cells = []
        for b in names:
            value, n = pairs.get((a, b), (None, 0))
            cells.append({"value": value, "n": n, "colour": kappa_colour(value, threshold), "self": a == b, "other": b})
        mean = means.get(a)
        rows.append(
            {"name": a, "cells": cells, "mean": mean, "mean_colour": kappa_colour(mean, threshold), "flagged": a in flagged}
        )
    return {"names": names, "rows": rows}


def shaded_table(table: Sequence[Sequence[int]], categories: Sequence, names: Sequence[str] | None = None) -> dict:
    """A count table shaded by count, darkest at its largest cell; its rows and columns headed by `names` (the
    categories themselves when not given)."""
    largest = max((n for row in table for n in row), default=0) or 1
    categories = list(names) if names is not None else list(categories)
    return {
        "categories": categories,
        "rows": [
            (category, [{"n": n, "alpha": round(0.08 + 0.8 * n / largest, 2), "dark": n / largest > 0.55} for n in row])
            for category, row in zip(categories, table)
        ],
    }


def pooled_confusion(report, names: Sequence[str] | None = None) -> dict:
    """All pairs' confusion tables added up and made symmetric (a pair's order is arbitrary)."""
    k = len(report.categories)
    pooled = [[0] * k for _ in range(k)]
    for table in report.confusion.values():
        for i in range(k):
            for j in range(k):
                pooled[i][j] += table[i][j] + table[j][i]
    return shaded_table(pooled, report.categories, names)


CHART_W, CHART_H, PAD_L, PAD_B, PAD_T, PAD_R = 720, 218, 52, 38, 10, 24


MAX_BAR_W = 28  # a bar is at most this wide, so one or two buckets are bars, not a filled chart
MAX_X_LABELS = 6
# How far apart x labels may be: round spans, so that labels fall on round times (every 5 minutes, every 6 hours).
_LABEL_EVERY = tuple(timedelta(minutes=m) for m in (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720)) + tuple(
    timedelta(days=d) for d in (1, 2, 7, 14, 28, 56, 112, 364)
)


def _step_of(starts: Sequence, step: timedelta | None) -> timedelta:
    if step is not None:
        return step
    return starts[1] - starts[0] if len(starts) > 1 else timedelta(hours=1)


def _time_format(first: datetime, end: datetime, step: timedelta) -> str:
    """Times within one day (the caption gives the day), day and time over a few days, days beyond a day's buckets;
    the year where the chart crosses one."""
    if step >= timedelta(days=1):
        return "%d %b %Y" if first.year != end.year else "%d %b"
    return "%H:%M" if _same_day(first, end) else "%d %b %H:%M"


def _same_day(first: datetime, end: datetime) -> bool:
    """Whether the buckets from `first` up to `end` (the last bucket's end, excluded) lie within one day."""
    return first.date() == (end - timedelta(microseconds=1)).date()


def _round_time(at: datetime, every: timedelta) -> bool:
    """Whether `at` is a round time for labels `every` apart: a multiple of it since midnight (sub-day steps)."""
    since_midnight = at - at.replace(hour=0, minute=0, second=0, microsecond=0)
    return since_midnight % every == timedelta(0)


def _ticks(starts: Sequence, step: timedelta, left: float, width: float) -> list[tuple[float, str, str]]:
    """Labels (x, text, text-anchor) at bucket edges: at most MAX_X_LABELS, on round times (14:05, 14:10 …), with the
    first and last edges labelled too where there is room; those near an end are anchored inwards so they are never cut
    off. The edge after the last bucket counts, so one bucket still has a start and an end on its axis."""
    n = len(starts)
    edges = [starts[0] + i * step for i in range(n + 1)]
    fmt = _time_format(edges[0], edges[-1], step)
    every = next((e for e in _LABEL_EVERY if e % step == timedelta(0) and n * step / e <= MAX_X_LABELS - 1), None)
    stride = every // step if every is not None else math.ceil(n / (MAX_X_LABELS - 1))
    if every is not None and every < timedelta(days=1):
        chosen = [i for i, at in enumerate(edges) if _round_time(at, every)]
    else:
        chosen = list(range(0, n + 1, stride))
    ticks = [_tick(left + width * i / n, edges[i].strftime(fmt), left, width) for i in chosen]
    for end in (0, n):  # the axis's own ends, where they are not crowded by a round label
        tick = _tick(left + width * end / n, edges[end].strftime(fmt), left, width)
        crowded = any(abs(end - i) <= stride / 2 for i in chosen) or any(_overlap(tick, other) for other in ticks)
        if end not in chosen and not crowded:
            ticks.append(tick)
    return sorted(ticks)


TICK_CHAR_W = 7.5  # the width of a tick label's character (13 px figures), to keep labels apart


def _tick(x: float, text: str, left: float, width: float) -> tuple[float, str, str]:
    """A label at `x`, anchored inwards near an end of the axis so that it is never cut off (the labels sit below
    the y axis's 0, so one may reach into the left margin)."""
    half = len(text) * TICK_CHAR_W / 2
    anchor = "start" if x - half < left - PAD_L * 0.75 else "end" if x + half > left + width + PAD_R / 2 else "middle"
    return (x, text, anchor)


def _extent(tick: tuple[float, str, str]) -> tuple[float, float]:
    x, text, anchor = tick
    w = len(text) * TICK_CHAR_W
    return (x, x + w) if anchor == "start" else (x - w, x) if anchor == "end" else (x - w / 2, x + w / 2)


def _overlap(a: tuple[float, str, str], b: tuple[float, str, str], gap: float = 8) -> bool:
    (a0, a1), (b0, b1) = _extent(a), _extent(b)
    return a0 < b1 + gap and b0 < a1 + gap


def _minor(ticks: Sequence) -> list[int]:
    """The labels a phone leaves out (every other one between the first and the last, where there are more than
    three), since there a chart is drawn at half its size and its labels at twice theirs."""
    return [i for i in range(1, len(ticks)) if i % 2] if len(ticks) > 3 else []


def _day(starts: Sequence, step: timedelta) -> str:
    """The day, when the whole chart lies within it (the tick labels then show times only)."""
    if not starts or step >= timedelta(days=1):
        return ""
    end = starts[-1] + step
    return starts[0].strftime("%a %d %b %Y") if _same_day(starts[0], end) else ""


def _y_ticks(top: int, bottom: float, height: float) -> list[tuple[float, int]]:
    """0, the middle (when it is a whole number apart from both) and the top, each where its value lies."""
    values = sorted({0, round(top / 2), top}) if top >= 2 else [0, top]
    return [(bottom - height * v / top, v) for v in values]


def _bucket_title(start: datetime, step: timedelta, n: int) -> str:
    """A bar's tooltip: its time span and its count ("04 Mar 14:05–14:10: 7"; "04 Mar: 12"; "04 Mar – 10 Mar: 40")."""
    if step == timedelta(days=1):
        span = start.strftime("%d %b %Y")
    elif step > timedelta(days=1):
        span = f"{start.strftime('%d %b')} – {(start + step - timedelta(days=1)).strftime('%d %b %Y')}"
    else:
        span = f"{start.strftime('%d %b %H:%M')}–{(start + step).strftime('%H:%M')}"
    return f"{span}: {n}"


def line_chart(starts: Sequence, series: dict[str, list[int]], step: timedelta | None = None) -> dict | None:
    """Cumulative judgments per assessor over time: one polyline each, from 0 at the start of the first bucket to
    each bucket's running total at its end, so even a single bucket draws a rise (the template draws the legend)."""
    if not starts:
        return None
    step = _step_of(starts, step)
    width, height = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    bottom = PAD_T + height
    totals = {name: list(accumulate(values)) for name, values in series.items()}
    top = max((values[-1] for values in totals.values()), default=0) or 1
    n = len(starts)
    lines = []
    for i, (name, values) in enumerate(totals.items()):
        points = [(PAD_L, bottom)] + [(PAD_L + width * (j + 1) / n, bottom - height * v / top) for j, v in enumerate(values)]
        lines.append({
            "name": name, "colour": PALETTE[i % len(PALETTE)], "total": values[-1],
            "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in points),
        })
    ticks = _ticks(starts, step, PAD_L, width)
    return {
        "w": CHART_W, "h": CHART_H, "lines": lines, "x_ticks": ticks, "minor": _minor(ticks), "day": _day(starts, step),
        "y_ticks": _y_ticks(top, bottom, height), "left": PAD_L, "right": PAD_L + width, "bottom": bottom,
    }


def bar_chart(starts: Sequence, totals: Sequence[int], unit: str, step: timedelta | None = None) -> dict | None:
    """New judgments per bucket (`unit`: "minute", "5 minutes" … "day") as bars, each centred in its bucket and at
    most MAX_BAR_W wide, with its time span and count as its title."""
    if not starts:
        return None
    step = _step_of(starts, step)
    width, height = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    bottom = PAD_T + height
    top = max(totals, default=0) or 1
    slot = width / len(totals)
    bar_w = max(min(slot * 0.8, MAX_BAR_W), 0.5)
    bars = [
        {
            "x": PAD_L + i * slot + (slot - bar_w) / 2, "w": bar_w, "y": bottom - height * n / top,
            "h": height * n / top, "title": _bucket_title(start, step, n),
        }
        for i, (start, n) in enumerate(zip(starts, totals))
    ]
    ticks = _ticks(starts, step, PAD_L, width)
    return {
        "w": CHART_W, "h": CHART_H, "bars": bars, "unit": unit, "x_ticks": ticks, "minor": _minor(ticks),
        "day": _day(starts, step), "y_ticks": _y_ticks(top, bottom, height),
        "left": PAD_L, "right": PAD_L + width, "bottom": bottom,
    }


def sparkline(values: Sequence[int], expected: int, w: int = 120, h: int = 22) -> str:
    """Polyline points of a cumulative count against its target, on a small fixed canvas."""
    if not values:
        return ""
    running = list(accumulate(values))
    top = max(expected, running[-1], 1)
    n = max(len(running) - 1, 1)
    points = [(w * i / n, h - 1 - (h - 2) * v / top) for i, v in enumerate(running)]
    if len(points) == 1:
        points.append((w, points[0][1]))
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def progress_rows(rows: Sequence, activity) -> list[dict]:
    """Each assignment's progress (selectors.monitoring.ProgressRow) as a percentage and a sparkline of its activity."""
    return [
        {
            "row": row, "percent": round(100 * row.share),
            "spark": sparkline(activity.by_pair.get((row.assessor, row.topic), []), row.expected),
        }
        for row in rows
    ]


def time_segments(timing: Sequence, labels: Sequence[str]) -> list[dict]:
    """Each assessor's time per judgment (selectors.monitoring.Timing) as a bar of segments, one per time bucket
    (named by `labels`)."""
    return [
        {
            "t": t,
            "segments": [
                {"share": 100 * n / t.timed, "colour": colour, "label": label, "n": n}
                for n, colour, label in zip(t.buckets, TIME_COLOURS, labels)
                if n
            ] if t.timed else [],
        }
        for t in timing
    ]


def _segment_colours(ordinal: bool, n: int) -> list[tuple[str, str]]:
    """(fill, text colour) per label: graded scales run from pale to dark green, so "more" reads as "darker";
    categories and yes/no answers have no order, so each gets a colour of its own."""
    if not ordinal:
        return [(CATEGORY_COLOURS[i % len(CATEGORY_COLOURS)], "inherit") for i in range(n)]
    lightness = [88 - 50 * i / max(n - 1, 1) for i in range(n)]
    return [(f"hsl(140 40% {light:.0f}%)", "#fff" if light < 60 else "inherit") for light in lightness]


def label_mix_bars(mix: Mapping[str, Sequence], scheme: LabelScheme) -> list[dict]:
    """Per dimension of the scheme, each assessor's labels (selectors.monitoring.LabelMix) as a bar of coloured
    shares, titled as the scheme titles the dimension; a grade's value is written in its segment."""
    charts = []
    for dimension, rows in mix.items():
        d = scheme.dimension(dimension)
        ordinal = d.ordinal
        colours = _segment_colours(ordinal, len(rows[0].shares))
        charts.append({
            "dimension": dimension,
            "title": d.title,
            "legend": [(name, colour) for (_, name, _), (colour, _) in zip(rows[0].shares, colours)],
            "rows": [
                {
                    "mix": row,
                    "segments": [
                        {
                            "share": 100 * share, "colour": colour, "ink": ink, "name": name,
                            "text": value if ordinal else "",
                        }
                        for (value, name, share), (colour, ink) in zip(row.shares, colours)
                        if share
                    ],
                }
                for row in rows
            ],
        })
    return charts


def value_text(dimension: Dimension, value: Value) -> str:
    """How a page writes one value of a dimension where space is short (chips, table cells, matrix headings): a
    category by the name the campaign's scheme gives it (never its bare value, never a name of the page's own, so
    every page calls a stance what the judge page's button does), a grade or a yes/no answer by its value (its name
    goes in the title)."""
    return dimension.name_of(value) if dimension.kind == CATEGORY else str(value)


def value_named(dimension: Dimension, value: Value) -> str:
    """A value where the value itself is what is typed or stored (a prompt's answers, a setting): a category's value
    with its name in the scheme in brackets ("FIRST (Pro first object)"), a grade or a yes/no answer by its value, as
    value_text writes them."""
    name = dimension.name_of(value)
    return f"{value} ({name})" if dimension.kind == CATEGORY and name != str(value) else str(value)


def label_text(dimension: Dimension, value: Value) -> str:
    """One label as a sentence writes it (the timeline, a machine judge's answer): the dimension's title and the
    value's name in the scheme, a grade's value before its name ("Relevance: 2 · Highly relevant")."""
    name = dimension.name_of(value)
    shown = f"{value} · {name}" if dimension.kind == GRADED and name != str(value) else name
    return f"{dimension.title}: {shown}"


def labels_text(scheme: LabelScheme, labels: Mapping) -> str:
    """A judgment's labels (dimension -> value) as label_text writes each, in the scheme's order; a dimension the
    scheme no longer has keeps its bare name and value."""
    known = [label_text(d, labels[d.name]) for d in scheme.dimensions if d.name in labels]
    unknown = [f"{name} {value}" for name, value in labels.items() if not scheme.has(name)]
    return "; ".join(known + unknown) or "no label"


def label_chips(scheme: LabelScheme, labels: Mapping | None, *, missing: bool = False) -> list[dict]:
    """A judgment's labels (dimension -> value) as short chips in the scheme's order, each titled with its
    dimension's title and its value's name: a grade or a yes/no answer as the dimension's initial and the value
    (R2, Q1), a category by its name in the scheme (value_text). The primary dimension's grades are coloured (CSS
    `rel r-<value>`). With `missing`, a dimension without a label is a dash, so that chips line up in columns."""
    chips = []
    given, primary = labels or {}, scheme.primary.name
    for d in scheme.dimensions:
        initial = "" if d.kind == CATEGORY else d.name[0].upper()
        if d.name not in given:
            if missing:
                chips.append({"text": f"{initial}–", "css": "lab none", "title": f"{d.title}: not given"})
            continue
        value = given[d.name]
        css = "lab stance" if d.kind == CATEGORY else f"lab rel r-{value}" if d.name == primary and d.kind == GRADED else "lab"
        chips.append({"text": f"{initial}{value_text(d, value)}", "css": css, "title": f"{d.title}: {d.name_of(value)}"})
    return chips
