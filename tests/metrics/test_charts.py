"""The dashboard's chart geometry: points land where the numbers say, the largest value reaches the top, labels
stay inside the chart, and colours order from worse to better. Figures are plain objects, as the module reads
them by attribute only."""

import re
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from assessments import charts
from assessments.charts import CHART_H, CHART_W, PAD_B, PAD_L, PAD_R, PAD_T
from assessments.labels import GRADED, PRESETS, QUESTION, Dimension, LabelScheme, LabelValue
from assessments.metrics.agreement import PairKappa, RaterAgreement

BOTTOM, TOP, LEFT, RIGHT = CHART_H - PAD_B, PAD_T, PAD_L, CHART_W - PAD_R


def points(polyline: str) -> list[tuple[float, float]]:
    return [tuple(map(float, point.split(","))) for point in polyline.split()]


def hue(colour: str) -> float:
    return float(re.match(r"hsl\((\d+) ", colour).group(1))


def hours(n: int, start=datetime(2024, 3, 4, 9)) -> list[datetime]:
    return [start + timedelta(hours=i) for i in range(n)]


class TestKappaColour:
    def test_it_runs_from_red_through_amber_to_green_as_agreement_rises(self):
        hues = [hue(charts.kappa_colour(k, threshold=0.6)) for k in (-0.3, 0.0, 0.3, 0.6, 0.8, 1.0)]

        assert hues[:2] == [0, 0]  # at or below chance
        assert hues == sorted(hues)
        assert hues[3] == 60 and hues[-1] == 130  # the pass mark is yellow, perfect agreement green

    def test_an_undefined_kappa_is_grey(self):
        assert charts.kappa_colour(None, threshold=0.6) == "#ecebe8"


class TestLineChart:
    def test_each_assessor_is_a_cumulative_line_and_the_largest_total_reaches_the_top(self):
        chart = charts.line_chart(hours(3), {"alice": [2, 0, 2], "bob": [1, 1, 0]})

        alice, bob = (points(line["points"]) for line in chart["lines"])
        assert [line["total"] for line in chart["lines"]] == [4, 2]
        # From 0 at the start of the first hour to the running total at the end of each.
        assert [x for x, _ in alice] == pytest.approx([LEFT + (RIGHT - LEFT) * i / 3 for i in range(4)], abs=0.05)
        assert [y for _, y in alice] == pytest.approx([BOTTOM - (BOTTOM - TOP) * v / 4 for v in (0, 2, 2, 4)], abs=0.05)
        assert bob[-1][1] == pytest.approx((BOTTOM + TOP) / 2, abs=0.05)  # 2 of 4: half way up
        assert chart["y_ticks"] == [(BOTTOM, 0), ((BOTTOM + TOP) / 2, 2), (TOP, 4)]

    def test_a_single_bucket_rises_across_the_whole_width_with_both_ends_labelled(self):
        chart = charts.line_chart(hours(1), {"alice": [3]})

        assert points(chart["lines"][0]["points"]) == [(LEFT, BOTTOM), (RIGHT, TOP)]
        assert [(x, text) for x, text, _ in chart["x_ticks"]] == [(LEFT, "09:00"), (RIGHT, "10:00")]

    def test_a_total_of_one_is_not_labelled_0_twice(self):
        assert [label for _, label in charts.line_chart(hours(1), {"alice": [1]})["y_ticks"]] == [0, 1]

    def test_no_activity_draws_no_chart(self):
        assert charts.line_chart([], {}) is None


class TestBarChart:
    def test_bar_heights_are_proportional_and_the_tallest_fills_the_height(self):
        chart = charts.bar_chart(hours(4), [4, 2, 0, 1], "hour")

        heights = [bar["h"] for bar in chart["bars"]]
        assert heights == pytest.approx([(BOTTOM - TOP) * n / 4 for n in (4, 2, 0, 1)])
        assert all(bar["y"] + bar["h"] == pytest.approx(BOTTOM) for bar in chart["bars"])
        assert chart["bars"][0]["title"] == "04 Mar 09:00–10:00: 4"
        xs = [bar["x"] for bar in chart["bars"]]
        assert xs == sorted(xs) and xs[0] > LEFT and xs[-1] + chart["bars"][-1]["w"] < RIGHT

    def test_one_bucket_is_a_bar_in_the_middle_not_the_whole_chart(self):
        chart = charts.bar_chart([datetime(2024, 3, 4, 14, 3)], [12], "minute", timedelta(minutes=1))

        (bar,) = chart["bars"]
        assert bar["w"] == charts.MAX_BAR_W and bar["x"] + bar["w"] / 2 == pytest.approx((LEFT + RIGHT) / 2)
        assert bar["title"] == "04 Mar 14:03–14:04: 12"
        assert [text for _, text, _ in chart["x_ticks"]] == ["14:03", "14:04"] and chart["day"] == "Mon 04 Mar 2024"

    def test_day_and_week_bars_are_titled_by_their_days(self):
        day = charts.bar_chart([datetime(2024, 3, 4)], [5], "day", timedelta(days=1))
        week = charts.bar_chart([datetime(2024, 3, 4)], [5], "week", timedelta(days=7))

        assert day["bars"][0]["title"] == "04 Mar 2024: 5" and day["day"] == ""
        assert week["bars"][0]["title"] == "04 Mar – 10 Mar 2024: 5"


def tick_texts(chart) -> list[str]:
    return [text for _, text, _ in chart["x_ticks"]]


class TestTicks:
    def test_within_one_day_ticks_are_times_and_the_caption_gives_the_day(self):
        chart = charts.line_chart(hours(12), {"alice": [1] * 12})

        texts = tick_texts(chart)
        assert texts[0] == "09:00" and texts[-1] == "21:00" and 3 <= len(texts) <= charts.MAX_X_LABELS
        assert chart["day"] == "Mon 04 Mar 2024"

    def test_minutes_are_labelled_on_round_minutes(self):
        starts = [datetime(2024, 3, 4, 14, 3) + timedelta(minutes=i) for i in range(11)]
        chart = charts.bar_chart(starts, [1] * 11, "minute", timedelta(minutes=1))

        assert tick_texts(chart) == ["14:05", "14:10", "14:14"]

    def test_sixty_days_are_labelled_by_day_two_weeks_apart(self):
        starts = [datetime(2024, 3, 4) + timedelta(days=i) for i in range(60)]
        chart = charts.bar_chart(starts, [1] * 60, "day", timedelta(days=1))

        assert tick_texts(chart) == ["04 Mar", "18 Mar", "01 Apr", "15 Apr", "29 Apr"] and chart["day"] == ""

    def test_labels_never_overlap_nor_leave_the_chart(self):
        for n, step in ((1, timedelta(minutes=1)), (11, timedelta(minutes=1)), (33, timedelta(minutes=15)),
                        (60, timedelta(hours=1)), (60, timedelta(days=1)), (80, timedelta(days=7))):
            starts = [datetime(2024, 3, 4, 9, 7 if step < timedelta(hours=1) else 0) + i * step for i in range(n)]
            ticks = charts.bar_chart(starts, [1] * n, "x", step)["x_ticks"]
            extents = sorted(charts._extent(t) for t in ticks)
            assert len(ticks) >= 2, (n, step)
            assert extents[0][0] >= 0 and extents[-1][1] <= CHART_W, (n, step, ticks)
            assert all(a[1] < b[0] for a, b in zip(extents, extents[1:])), (n, step, ticks)

    def test_the_outermost_labels_are_anchored_inwards_where_they_would_be_cut(self):
        ticks = charts.line_chart(hours(30, start=datetime(2024, 3, 4)), {"alice": [1] * 30})["x_ticks"]

        assert ticks[0][0] == LEFT and ticks[0][2] == "start"  # "04 Mar 00:00" is wider than the left margin
        assert ticks[-1][0] == RIGHT and ticks[-1][2] == "end"
        assert {anchor for _, _, anchor in ticks[1:-1]} == {"middle"}


class TestSparkline:
    def test_it_climbs_to_the_share_of_the_target_reached(self):
        line = points(charts.sparkline([1, 1, 2], expected=8, w=120, h=22))

        assert [x for x, _ in line] == [0, 60, 120]
        # 4 of 8 judged: half way up the 20 pixels between the bottom (21) and the top (1).
        assert line[-1][1] == pytest.approx(21 - 20 * 4 / 8)

    def test_more_than_the_target_is_scaled_to_the_total(self):
        line = points(charts.sparkline([5, 5], expected=4))

        assert line[-1][1] == pytest.approx(1.0)


class TestTables:
    def test_the_largest_cell_is_darkest_and_an_empty_one_nearly_white(self):
        table = charts.shaded_table([[10, 0], [3, 6]], categories=(0, 1))

        cells = [cell for _, row in table["rows"] for cell in row]
        assert [c["alpha"] for c in cells] == [0.88, 0.08, 0.32, 0.56]
        assert [c["dark"] for c in cells] == [True, False, False, True]

    def test_the_confusion_of_all_pairs_is_symmetric(self):
        report = SimpleNamespace(categories=(0, 1, 2), confusion={("a", "b"): [[1, 2, 0], [0, 3, 1], [0, 0, 4]]})

        counts = [[cell["n"] for cell in row] for _, row in charts.pooled_confusion(report)["rows"]]
        assert counts == [[2, 2, 0], [2, 6, 1], [0, 1, 8]]


def test_the_heatmap_is_symmetric_with_means_and_flags():
    report = SimpleNamespace(
        ordinal=True,
        cohen=[PairKappa("bob", "alice", 12, 0.5, 0.7), PairKappa("alice", "carol", 10, 0.1, 0.2)],
    )
    dim = SimpleNamespace(
        report=report,
        assessors=[RaterAgreement("alice", 0.45, 2), RaterAgreement("bob", 0.7, 1), RaterAgreement("carol", 0.2, 1)],
        flagged=[RaterAgreement("carol", 0.2, 1)],
    )

    heatmap = charts.kappa_heatmap(dim, threshold=0.4)

    assert heatmap["names"] == ["alice", "bob", "carol"]
    grid = {(row["name"], cell["other"]): cell["value"] for row in heatmap["rows"] for cell in row["cells"]}
    assert grid["alice", "bob"] == grid["bob", "alice"] == 0.7  # the weighted kappa of an ordinal scale
    assert grid["bob", "carol"] is None and grid["alice", "alice"] is None
    assert [(row["mean"], row["flagged"]) for row in heatmap["rows"]] == [(0.45, False), (0.7, False), (0.2, True)]


def test_time_segments_share_each_assessors_timed_judgments():
    timing = [SimpleNamespace(timed=10, buckets=[5, 0, 3, 2, 0, 0]), SimpleNamespace(timed=0, buckets=[0] * 6)]

    rows = charts.time_segments(timing, labels=("a", "b", "c", "d", "e", "f"))

    assert [(s["label"], s["share"]) for s in rows[0]["segments"]] == [("a", 50.0), ("c", 30.0), ("d", 20.0)]
    assert rows[1]["segments"] == []


def test_label_mix_bars_darken_along_an_ordinal_scale_and_name_stances_in_the_legend():
    mix = {
        "relevance": [SimpleNamespace(shares=[(0, "Not", 0.5), (1, "Rel", 0.0), (2, "High", 0.5)])],
        "stance": [SimpleNamespace(shares=[("PRO", "Pro", 1.0), ("CON", "Con", 0.0)])],
    }

    relevance, stance = charts.label_mix_bars(mix, PRESETS["touche-2023-task1"][1])

    lightness = [float(re.search(r"(\d+)%\)$", colour).group(1)) for _, colour in relevance["legend"]]
    assert lightness == sorted(lightness, reverse=True)
    assert [(s["name"], s["share"], s["text"]) for s in relevance["rows"][0]["segments"]] == [("Not", 50.0, 0), ("High", 50.0, 2)]
    assert [name for name, _ in stance["legend"]] == ["Pro", "Con"]
    assert stance["rows"][0]["segments"][0]["text"] == ""
    assert (relevance["title"], stance["title"]) == ("Relevance", "Stance towards the topic")


def test_label_mix_bars_go_by_the_kind_of_dimension_not_its_name():
    scheme = LabelScheme((
        Dimension("usefulness", "Usefulness", GRADED, (LabelValue(0, "No", "0"), LabelValue(1, "Yes", "1")), required=True),
        Dimension("ontopic", "On topic?", QUESTION, (LabelValue(1, "Yes", "y"), LabelValue(0, "No", "n"))),
    ))
    mix = {
        "usefulness": [SimpleNamespace(shares=[(0, "No", 0.5), (1, "Yes", 0.5)])],
        "ontopic": [SimpleNamespace(shares=[(1, "Yes", 0.5), (0, "No", 0.5)])],
    }

    useful, on_topic = charts.label_mix_bars(mix, scheme)

    assert [s["text"] for s in useful["rows"][0]["segments"]] == [0, 1]  # graded: the grade is written in
    assert [s["text"] for s in on_topic["rows"][0]["segments"]] == ["", ""]  # yes/no: the legend names them
    assert useful["legend"][0][1].startswith("hsl(") and not on_topic["legend"][0][1].startswith("hsl(")


def test_label_chips_name_each_label_by_the_scheme():
    scheme = PRESETS["touche-2023-task2"][1]

    def name(dimension, value):
        return f"{scheme.dimension(dimension).title}: {scheme.dimension(dimension).name_of(value)}"

    chips = charts.label_chips(scheme, {"direction": "CAUSE_EFFECT", "relevance": 2, "stance": "SUPPORT"})

    # A category by its name in the scheme, as the judge page's button calls it; a grade by its value.
    assert [(c["text"], c["css"], c["title"]) for c in chips] == [
        ("Cause → effect, as asked", "lab stance", name("direction", "CAUSE_EFFECT")),
        ("R2", "lab rel r-2", name("relevance", 2)),
        ("Supports the causal relation", "lab stance", name("stance", "SUPPORT")),
    ]
    assert name("relevance", 2) == "Relevance: Highly relevant"
    lined_up = charts.label_chips(scheme, {"direction": "WRONG"}, missing=True)
    assert [(c["text"], c["css"]) for c in lined_up] == [
        ("Wrong direction: off-topic", "lab stance"), ("R–", "lab none"), ("–", "lab none"), ("–", "lab none")]
    assert lined_up[1]["title"] == "Relevance: not given"
    coherence = charts.label_chips(PRESETS["touche-2022-task1"][1], {"relevance": 1, "quality": 0, "coherence": 2})
    assert [(c["text"], c["css"]) for c in coherence] == [("R1", "lab rel r-1"), ("Q0", "lab"), ("C2", "lab")]
