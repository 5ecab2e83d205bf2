"""The agreement dashboard's charts as geometry and colours: inline SVG coordinates, heatmap and table shading,
and the segments of stacked bars, computed on the server so the page needs no chart library and fetches nothing;
and the label chips the disagreement, adjudication and discussion pages show a judgment's labels with.

Plain Python with no Django import: it reads the selectors' figures (selectors.agreement, selectors.monitoring)
and the campaign's label scheme (assessments.labels) by their attributes, so it is tested with plain objects. It
draws what it is given and computes no statistic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate

from assessments.labels import CATEGORY, GRADED, LabelScheme

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


def agreement_panels(agreement) -> list[dict]:
    """Per dimension of an Agreement (selectors.agreement): its figures, the kappa heatmap, the confusion table of
    all pairs together, and each pair's own table."""
    return [
        {
            "figures": dim,
            "heatmap": kappa_heatmap(dim, agreement.threshold),
            "confusion": pooled_confusion(dim.report),
            "pairs": [(a, b, shaded_table(m, dim.report.categories)) for (a, b), m in dim.report.confusion.items()],
        }
        for dim in agreement.dimensions.values()
    ]


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


def shaded_table(table: Sequence[Sequence[int]], categories: Sequence) -> dict:
    """A count table shaded by count, darkest at its largest cell."""
    largest = max((n for row in table for n in row), default=0) or 1
    return {
        "categories": list(categories),
        "rows": [
            (category, [{"n": n, "alpha": round(0.08 + 0.8 * n / largest, 2), "dark": n / largest > 0.55} for n in row])
            for category, row in zip(categories, table)
        ],
    }


def pooled_confusion(report) -> dict:
    """All pairs' confusion tables added up and made symmetric (a pair's order is arbitrary)."""
    k = len(report.categories)
    pooled = [[0] * k for _ in range(k)]
    for table in report.confusion.values():
        for i in range(k):
            for j in range(k):
                pooled[i][j] += table[i][j] + table[j][i]
    return shaded_table(pooled, report.categories)


CHART_W, CHART_H, PAD_L, PAD_B, PAD_T, PAD_R = 720, 210, 44, 24, 10, 24


def _ticks(starts: Sequence, width: float) -> list[tuple[float, str, str]]:
    """About five time labels (x, text, text-anchor); the outermost are anchored inwards so they are not cut off.

    Within one day the labels are times only, and the chart's caption gives the day.
    """
    if not starts:
        return []
    step = max(1, len(starts) // 5)
    same_day = starts[0].date() == starts[-1].date()
    fmt = "%H:%M" if same_day else "%d %b %H:%M" if (starts[-1] - starts[0]).days < 5 else "%d %b"
    n = max(len(starts) - 1, 1)
    last = len(starts) - 1
    return [
        (PAD_L + width * i / n, starts[i].strftime(fmt), "start" if i == 0 else "end" if i == last else "middle")
        for i in sorted({*range(0, len(starts), step), last})
        if i == last or last - i >= step
    ]


def _day(starts: Sequence) -> str:
    """The day, when the whole chart lies within it (the tick labels then show times only)."""
    return starts[0].strftime("%a %d %b %Y") if starts and starts[0].date() == starts[-1].date() else ""


def line_chart(starts: Sequence, series: dict[str, list[int]]) -> dict | None:
    """Cumulative judgments per assessor over time: one polyline each (the template draws the legend)."""
    if not starts:
        return None
    width, height = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    totals = {name: list(accumulate(values)) for name, values in series.items()}
    top = max((values[-1] for values in totals.values()), default=0) or 1
    n = max(len(starts) - 1, 1)
    lines = []
    for i, (name, values) in enumerate(totals.items()):
        points = [(PAD_L + width * j / n, PAD_T + height * (1 - v / top)) for j, v in enumerate(values)]
        if len(points) == 1:
            points.append((PAD_L + width, points[0][1]))
        lines.append({
            "name": name, "colour": PALETTE[i % len(PALETTE)], "total": values[-1],
            "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in points),
        })
    return {
        "w": CHART_W, "h": CHART_H, "lines": lines, "x_ticks": _ticks(starts, width), "day": _day(starts),
        "y_ticks": [(PAD_T + height * (1 - f), round(top * f)) for f in (0, 0.5, 1)],
        "left": PAD_L, "right": PAD_L + width, "bottom": PAD_T + height,
    }


def bar_chart(starts: Sequence, totals: Sequence[int], unit: str) -> dict | None:
    """New judgments per hour (or day) as bars."""
    if not starts:
        return None
    width, height = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    top = max(totals, default=0) or 1
    slot = width / len(totals)
    fmt = "%d %b %H:00" if unit == "hour" else "%d %b"
    bars = [
        {
            "x": PAD_L + i * slot + slot * 0.1, "w": max(slot * 0.8, 0.5), "y": PAD_T + height * (1 - n / top),
            "h": height * n / top, "title": f"{start.strftime(fmt)}: {n}",
        }
        for i, (start, n) in enumerate(zip(starts, totals))
    ]
    return {
        "w": CHART_W, "h": CHART_H, "bars": bars, "unit": unit, "x_ticks": _ticks(starts, width), "day": _day(starts),
        "y_ticks": [(PAD_T + height * (1 - f), round(top * f)) for f in (0, 0.5, 1)],
        "left": PAD_L, "right": PAD_L + width, "bottom": PAD_T + height,
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


def label_chips(scheme: LabelScheme, labels: Mapping | None, *, missing: bool = False) -> list[dict]:
    """A judgment's labels (dimension -> value) as short chips in the scheme's order, each titled with its
    dimension's title and its value's name: a grade or a yes/no answer as the dimension's initial and the value
    (R2, Q1), a category as its value (PRO). The primary dimension's grades are coloured (CSS `rel r-<value>`).
    With `missing`, a dimension without a label is a dash, so that chips line up in columns."""
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
        chips.append({"text": f"{initial}{value}", "css": css, "title": f"{d.title}: {d.name_of(value)}"})
    return chips
