"""The training admin's pages: the agreement dashboard, the disagreements for the follow-up discussion, a judged
document's text, and the buttons that close a training round or start the main phase.

Only admins (User.is_campaign_admin) reach the dashboard and the phase buttons, through access.get_campaign_for_admin;
the disagreements and a judged document's text are also open to the campaign's adjudicators, who decide them
(access.get_campaign_for_adjudicator). They put named assessors' labels side by side, which assessors must never
see during training.

The charts are inline SVG and CSS drawn on the server, with no chart library and nothing fetched from elsewhere.
The helpers at the end of this module turn the service's figures into coordinates and colours. They compute no
statistic.
"""

from collections.abc import Sequence
from itertools import accumulate

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from assessments import access
from assessments.models import Campaign, Phase
from assessments.rendering import document_html, safe_link
from assessments.services import agreement as agreement_service
from assessments.services import assignments, campaigns
from assessments.services.agreement import TIME_BUCKETS, AgreementError, Scope

# The document page shows untrusted HTML (sanitised by assessments.rendering); as on the judge page, nothing on it
# may run a script, load a foreign resource or post elsewhere.
DOCUMENT_PAGE_CSP = "; ".join([
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'", "object-src 'none'",
])
PALETTE = ("#2f5d8a", "#c0622f", "#2e7d4f", "#8a4f9e", "#b8860b", "#1f8a8a", "#b3261e", "#5a6b7b", "#c2477a", "#6b8e23")
STANCE_COLOURS = ("#9fc5e8", "#f6b26b", "#d9d2e9", "#cccccc", "#b6d7a8", "#ffe599")
PHASE_CHOICES = [(Phase.TRAINING, "Training"), (Phase.MAIN, "Main phase"), ("all", "All phases")]
TIME_COLOURS = ("#b3261e", "#e69138", "#f1c232", "#93c47d", "#6aa84f", "#45818e")


def _scope(request: HttpRequest, campaign: Campaign) -> Scope:
    """The scope from the query string; a bad one falls back to the default with a message."""
    phase = request.GET.get("phase") or agreement_service.default_phase(campaign)
    round_ = request.GET.get("round", "")
    try:
        return Scope(
            phase,
            round=int(round_) if round_.isdigit() and phase == Phase.TRAINING else None,
            topic=request.GET.get("topic") or None,
        )
    except AgreementError as exc:
        messages.error(request, str(exc))
        return Scope(agreement_service.default_phase(campaign))


@login_required
def agreement_page(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_admin(request.user, slug)
    board = agreement_service.dashboard(campaign=campaign, scope=_scope(request, campaign))
    figures = board.agreement
    activity = board.monitoring.activity
    dimensions = [
        {
            "figures": dim,
            "heatmap": _heatmap(dim, figures.threshold),
            "confusion": _confusion(dim.report),
            "pairs": [(a, b, _matrix(m, dim.report.categories)) for (a, b), m in dim.report.confusion.items()],
        }
        for dim in figures.dimensions.values()
    ]
    context = {
        "campaign": campaign,
        "board": board,
        "scope": board.scope,
        "dimensions": dimensions,
        "flagged": figures.flagged,
        "topic_table": _topic_table(figures),
        "progress_chart": _lines(activity.starts, activity.by_assessor),
        "rate_chart": _bars(activity.starts, activity.totals, activity.unit),
        "progress_rows": _progress_rows(board.monitoring.progress, activity),
        "timing": _timing(board.monitoring.timing),
        "time_buckets": list(zip(TIME_BUCKETS, TIME_COLOURS)),
        "label_mix": _label_mix(board.monitoring.label_mix),
        "rounds": board.rounds,
        "phases": PHASE_CHOICES,
    }
    return render(request, "assessments/agreement.html", context)


@login_required
def disagreement_page(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_adjudicator(request.user, slug)
    scope = _scope(request, campaign)
    order = request.GET.get("order", "total")
    try:
        found = agreement_service.list_disagreements(
            campaign=campaign, scope=scope, order=order, page=request.GET.get("page", 1)
        )
    except AgreementError as exc:
        messages.error(request, str(exc))
        order = "total"
        found = agreement_service.list_disagreements(campaign=campaign, scope=scope, page=request.GET.get("page", 1))
    scheme = campaign.label_scheme
    names = {dim: {v.value: v.name for v in getattr(scheme, dim)} for dim in found.dimensions}
    def named(labels: dict | None) -> dict | None:
        return labels and {**labels, **{f"{d}_name": names[d].get(labels[d], "") for d in found.dimensions}}

    rows = [(row, [named(labels) for labels in row.labels]) for row in found.page.object_list]
    context = {
        "campaign": campaign,
        "scope": scope,
        "found": found,
        "rows": rows,
        "order": order,
        "orders": ["total", *found.dimensions],
        "rounds": agreement_service.training_rounds(campaign),
        "phases": PHASE_CHOICES,
    }
    return render(request, "assessments/agreement_disagreements.html", context)


@login_required
def document_page(request: HttpRequest, slug: str, document_id: int) -> HttpResponse:
    campaign = access.get_campaign_for_adjudicator(request.user, slug)
    document = access.get_document_for_campaign(campaign, document_id)
    context = {
        "campaign": campaign,
        "document": document,
        "document_url": safe_link(document.url),
        "body_html": document_html(document.body, is_html=document.is_html) if document.has_text else "",
    }
    response = render(request, "assessments/agreement_document.html", context)
    response["Content-Security-Policy"] = DOCUMENT_PAGE_CSP
    return response


@require_POST
@login_required
def change_phase(request: HttpRequest, slug: str) -> HttpResponse:
    """Start training, close a training round and start the next, or close training and start the main phase."""
    campaign = access.get_campaign_for_admin(request.user, slug)
    step = request.POST.get("step")
    try:
        if step == "start_training":
            campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING)
            messages.success(request, f"Training started: round {campaign.training_round}")
        elif step in ("next_round", "main"):
            closed = campaign.training_round
            campaign = assignments.close_training_round(campaign=campaign, then=step)
            follow = f"round {campaign.training_round} is open" if step == "next_round" else "the main phase has started"
            messages.success(request, f"Training round {closed} closed; {follow}")
        else:
            messages.error(request, f"unknown step {step!r}")
    except (campaigns.CampaignError, assignments.AssignmentError) as exc:
        messages.error(request, str(exc))
    return redirect("assessments:agreement", campaign.slug)


urlpatterns = [
    path("<slug:slug>/agreement/", agreement_page, name="agreement"),
    path("<slug:slug>/agreement/disagreements/", disagreement_page, name="disagreements"),
    path("<slug:slug>/agreement/documents/<int:document_id>/", document_page, name="agreement_document"),
    path("<slug:slug>/agreement/phase/", change_phase, name="agreement_phase"),
]


# --------------------------------------------------------------------------------------------------------------
# Chart geometry


def _kappa_colour(value: float | None, threshold: float) -> str:
    """Red at or below chance, amber up to the pass mark, green above it; grey where undefined."""
    if value is None:
        return "#ecebe8"
    t = min(max(threshold, 0.05), 0.95)
    v = min(value, 1.0)
    hue = 0.0 if v <= 0 else 40 * v / t if v < t else 60 + 70 * (v - t) / (1 - t)
    return f"hsl({hue:.0f} 62% 80%)"


def _heatmap(dim: agreement_service.DimensionFigures, threshold: float) -> dict:
    """An assessor × assessor grid of pairwise kappas (weighted for ordinal scales), with each one's mean."""
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
            cells.append({"value": value, "n": n, "colour": _kappa_colour(value, threshold), "self": a == b, "other": b})
        mean = means.get(a)
        rows.append(
            {"name": a, "cells": cells, "mean": mean, "mean_colour": _kappa_colour(mean, threshold), "flagged": a in flagged}
        )
    return {"names": names, "rows": rows}


def _matrix(table: Sequence[Sequence[int]], categories: Sequence) -> dict:
    """A count table shaded by count, darkest at its largest cell."""
    largest = max((n for row in table for n in row), default=0) or 1
    return {
        "categories": list(categories),
        "rows": [
            (category, [{"n": n, "alpha": round(0.08 + 0.8 * n / largest, 2), "dark": n / largest > 0.55} for n in row])
            for category, row in zip(categories, table)
        ],
    }


def _confusion(report) -> dict:
    """All pairs' confusion tables added up and made symmetric (a pair's order is arbitrary)."""
    k = len(report.categories)
    pooled = [[0] * k for _ in range(k)]
    for table in report.confusion.values():
        for i in range(k):
            for j in range(k):
                pooled[i][j] += table[i][j] + table[j][i]
    return _matrix(pooled, report.categories)


def _topic_table(figures: agreement_service.Agreement) -> list[dict]:
    """One row per topic with each dimension's figures side by side (dimensions without the topic get None)."""
    rows: dict[str, dict] = {}
    for name, dim in figures.dimensions.items():
        for topic in dim.topics:
            rows.setdefault(topic.number, {"number": topic.number, "n_items": 0, "dims": {}})
            rows[topic.number]["n_items"] = max(rows[topic.number]["n_items"], topic.n_items)
            rows[topic.number]["dims"][name] = topic
    return [{**row, "cells": [row["dims"].get(name) for name in figures.dimensions]} for row in rows.values()]


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


def _lines(starts: Sequence, series: dict[str, list[int]]) -> dict | None:
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


def _bars(starts: Sequence, totals: Sequence[int], unit: str) -> dict | None:
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


def _sparkline(values: Sequence[int], expected: int, w: int = 120, h: int = 22) -> str:
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


def _progress_rows(rows: Sequence[agreement_service.ProgressRow], activity: agreement_service.Activity) -> list[dict]:
    return [
        {
            "row": row, "percent": round(100 * row.share),
            "spark": _sparkline(activity.by_pair.get((row.assessor, row.topic), []), row.expected),
        }
        for row in rows
    ]


def _timing(timing: Sequence[agreement_service.Timing]) -> list[dict]:
    return [
        {
            "t": t,
            "segments": [
                {"share": 100 * n / t.timed, "colour": colour, "label": label, "n": n}
                for n, colour, label in zip(t.buckets, TIME_COLOURS, TIME_BUCKETS)
                if n
            ] if t.timed else [],
        }
        for t in timing
    ]


def _segment_colours(dimension: str, n: int) -> list[tuple[str, str]]:
    """(fill, text colour) per label: ordinal scales run from pale to dark green, so "more" reads as "darker"."""
    if dimension == "stance":
        return [(STANCE_COLOURS[i % len(STANCE_COLOURS)], "inherit") for i in range(n)]
    lightness = [88 - 50 * i / max(n - 1, 1) for i in range(n)]
    return [(f"hsl(140 40% {light:.0f}%)", "#fff" if light < 60 else "inherit") for light in lightness]


def _label_mix(mix: dict[str, list[agreement_service.LabelMix]]) -> list[dict]:
    charts = []
    for dimension, rows in mix.items():
        colours = _segment_colours(dimension, len(rows[0].shares))
        charts.append({
            "dimension": dimension,
            "legend": [(name, colour) for (_, name, _), (colour, _) in zip(rows[0].shares, colours)],
            "rows": [
                {
                    "mix": row,
                    "segments": [
                        {
                            "share": 100 * share, "colour": colour, "ink": ink, "name": name,
                            "text": value if dimension != "stance" else "",
                        }
                        for (value, name, share), (colour, ink) in zip(row.shares, colours)
                        if share
                    ],
                }
                for row in rows
            ],
        })
    return charts
