"""The comparison mode's card: drawing data (pure functions of a comparison outcome) and the view.

Three comparisons of the current predictions: before/after recalibration (temperature, Platt,
isotonic, histogram binning; the map fitted on half of the rows, every "after" number computed on the
other half), model A vs model B on the same examples (an embedded model of the same test set — by
default the current model's temperature-scaled version —, a second uploaded file, or a second set of
probability columns in the uploaded file) and calibration by group (a column of the uploaded file, or
the label).  The card overlays the reliability diagrams on shared axes, draws every compared item's
T-Cal statistics and ECE interval, tabulates the decisions and states a one-line verdict.

The comparison mode (:mod:`calviz.app.comparison_mode`) builds the request from the app's state; the
:class:`~calviz.app.comparison_store.ComparisonStore` computes it; :class:`ComparisonView` draws the
store's entry (Bokeh sources replaced in place) and computes nothing.
"""

from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np
import panel as pn
from bokeh.layouts import column
from bokeh.models import (
    ColumnDataSource,
    DataTable,
    Div,
    FixedTicker,
    HTMLTemplateFormatter,
    Range1d,
    TableColumn,
)
from bokeh.palettes import Category10

from calviz._results import format_pvalue
from calviz.app.comparison_store import ComparisonStore
from calviz.app.figures import _diagram_axes, _figure, _hover, _legend_above, interval_glyphs
from calviz.app.views import LOW_HEIGHT, _set, _set_rows, _text, card, redraws_with_its_rows
from calviz.present import comparisons, frames, text

#: the comparison's note is Markdown (its verdict lists items); the live views' captions are plain HTML
_NOTE = dict(sizing_mode="stretch_width", margin=(0, 10), styles={"font-size": "12px"})

__all__ = ["ComparisonView", "reliability_tables", "tcal_tables", "interval_table", "summary_table"]


# -- drawing data (pure functions of an outcome) --------------------------------------------------------
def log_ticks(start: float, end: float) -> list[float]:
    """Ticks of a log axis from ``start`` to ``end`` whose labels never touch: the powers of 10 when the
    axis spans more than 1.5 decades, else 1, 2 and 5 times them."""
    mantissas = (1,) if np.log10(end / start) > 1.5 else (1, 2, 5)
    return [m * 10.0**k for k in range(-3, 10) for m in mantissas if start <= m * 10.0**k <= end]


def verdict_colour(outcome) -> str:
    """The comparison verdict's colour: crimson for bad news (a group's calibration rejected, a
    recalibration that made things worse), teal for good news (the recalibrated model is better
    calibrated), neutral otherwise (no supported difference; one of two models better: neither news)."""
    if outcome.groups is not None:
        return frames.MISCALIBRATED if outcome.groups.rejected else frames.NEUTRAL
    comparison = outcome.comparison
    if not comparison.reject:
        return frames.NEUTRAL
    if outcome.mode == "recalibration":
        recalibrated = comparison.names[-1]
        return frames.CALIBRATED if comparison.better == recalibrated else frames.MISCALIBRATED
    return frames.NEUTRAL


def _colors(k: int) -> list[str]:
    return [Category10[10][i % 10] for i in range(k)]


def _column(name: str, values) -> np.ndarray:
    """A source column; text columns stay text when empty (BokehJS refuses an empty float colour array)."""
    return np.asarray(values, dtype=object if name in ("item", "color") else float)


def _parts(outcome) -> list[tuple]:
    """(item, ECE interval or None, T-Cal result or None) per compared item."""
    if outcome.groups is not None:
        return [(str(g.group), g.interval, g.tcal) for g in outcome.groups.groups]
    c = outcome.comparison
    return [(c.names[0], c.ece_a, c.tcal_a), (c.names[1], c.ece_b, c.tcal_b)]


def reliability_tables(outcome) -> tuple[dict, dict]:
    """(lines, points): one line per item through its non-empty bins, and the bins as points."""
    lines = {"xs": [], "ys": [], "color": [], "item": []}
    points = {k: [] for k in ("confidence", "frequency", "count", "item", "color")}
    if outcome is None:
        return lines, {k: _column(k, []) for k in points}
    for item, rel, colour in zip(
        outcome.items, outcome.reliability, _colors(len(outcome.items)), strict=True
    ):
        if rel is None:
            continue
        b = frames.bins(rel)
        sel = b["sel"]
        lines["xs"].append(b["conf"][sel])
        lines["ys"].append(b["freq"][sel])
        lines["color"].append(colour)
        lines["item"].append(item)
        points["confidence"].extend(b["conf"][sel])
        points["frequency"].extend(b["freq"][sel])
        points["count"].extend(b["counts"][sel])
        points["item"].extend([item] * int(sel.sum()))
        points["color"].extend([colour] * int(sel.sum()))
    return lines, {k: _column(k, v) for k, v in points.items()}


def tcal_tables(outcome) -> dict:
    """Per tested item: statistic and critical value per scale (x = number of bins; a discrete test's
    distinct values are drawn at their rank)."""
    out = {"xs": [], "statistic": [], "critical": [], "color": [], "item": []}
    if outcome is None:
        return out
    for (item, _, tcal), colour in zip(_parts(outcome), _colors(len(outcome.items)), strict=True):
        if tcal is None:
            continue
        table = frames.tcal_frame(tcal)["table"]
        x = np.asarray(table["bins"], dtype=float)
        if frames.tcal_frame(tcal)["discrete"]:
            x = np.arange(1, x.size + 1, dtype=float)
        out["xs"].append(x)
        out["statistic"].append(np.asarray(table["statistic"], dtype=float))
        out["critical"].append(np.asarray(table["critical"], dtype=float))
        out["color"].append(colour)
        out["item"].append(item)
    return out


def interval_table(outcome) -> dict:
    """One row per item with an ECE interval: estimate, low, high, row position, colour."""
    rows = {k: [] for k in ("row", "estimate", "low", "high", "item", "color")}
    if outcome is not None:
        for (item, interval, _), colour in zip(_parts(outcome), _colors(len(outcome.items)), strict=True):
            if interval is None:
                continue
            rows["row"].append(float(len(rows["row"])))
            rows["estimate"].append(float(interval.estimate))
            rows["low"].append(float(interval.low))
            rows["high"].append(float(interval.high))
            rows["item"].append(item)
            rows["color"].append(colour)
    return {k: _column(k, v) for k, v in rows.items()}


def summary_table(outcome) -> dict:
    """The decisions, one row per item: n, ECE interval, T-Cal decision and p-value, Holm-adjusted
    p-value (groups), status."""
    columns = ("item", "n", "ece", "tcal", "pvalue", "holm", "status")
    rows = {k: [] for k in columns}
    if outcome is None:
        return rows
    groups = outcome.groups.groups if outcome.groups is not None else None
    for i, (item, interval, tcal) in enumerate(_parts(outcome)):
        rows["item"].append(item)
        rows["n"].append(groups[i].n if groups is not None else outcome.n)
        rows["ece"].append(
            "—" if interval is None else f"{interval.estimate:.4f} [{interval.low:.4f}, {interval.high:.4f}]"
        )
        rows["tcal"].append(text.tcal_decision_words(tcal))
        rows["pvalue"].append(format_pvalue(None if tcal is None else tcal.pvalue))
        if groups is not None:
            g = groups[i]
            rows["holm"].append(format_pvalue(g.adjusted_pvalue))
            status = comparisons.GROUP_STATUS.get(g.decision, g.status)
            rows["status"].append(status + (f": {g.reason}" if g.reason and g.status != "too small" else ""))
        else:
            rows["holm"].append("—")
            rows["status"].append("tested")
    return rows


# -- the card -------------------------------------------------------------------------------------------

class ComparisonFigures(NamedTuple):
    """The comparison card's own three figures (the models' results overlaid)."""

    reliability: object
    tcal: object
    interval: object

class ComparisonView:
    """The comparison card: overlaid reliability diagrams, T-Cal of every item, ECE intervals, the table
    of decisions and the verdict; drawn from the store's ``entry``."""

    TABLE = {
        "item": ("compared", 110),
        "n": ("n", 60),
        "ece": ("ℓ2-ECE [interval]", 170),
        "tcal": ("T-Cal", 110),
        "pvalue": ("p-value", 70),
        "holm": ("Holm p", 70),
        "status": ("status", 260),
    }

    def __init__(self, store: ComparisonStore):
        self.store = store
        height = LOW_HEIGHT + 60
        rel = _diagram_axes(height, x_range=Range1d(0, 1), title="reliability diagrams (shared axes)")
        rel.xaxis.axis_label = "predicted probability (scalar target)"
        rel.yaxis.axis_label = "observed frequency"
        rel.line([0, 1], [0, 1], color=frames.NEUTRAL, line_dash="dashed", line_width=1.5)
        lines, points = reliability_tables(None)
        self.lines, self.points = ColumnDataSource(lines), ColumnDataSource(points)
        rel.multi_line("xs", "ys", source=self.lines, color="color", line_width=2, legend_field="item")
        marks = rel.scatter(
            "confidence", "frequency", source=self.points, color="color", size=6, line_color="white"
        )
        _hover(
            rel,
            marks,
            [
                ("", "@item"),
                ("confidence", "@confidence{0.000}"),
                ("frequency", "@frequency{0.000}"),
                ("count", "@count"),
            ],
        )
        _legend_above(rel)  # (inside the frame it covered the curves of a well-calibrated model)
        tcal = _figure(
            height,
            x_axis_type="log",
            x_range=Range1d(1, 1024),
            y_range=Range1d(-1, 1),
            title="T-Cal per scale (dashed: critical value)",
        )
        tcal.xaxis.axis_label = "number of bins m (a discrete test: rank of the value)"
        # ticks set per range (_fit_tcal): the log axis' own ticker labels every 10 within a decade, and
        # "60" ran into "70"
        tcal.xaxis.ticker = FixedTicker(ticks=[1, 10, 100, 1000])
        tcal.xaxis.formatter = frames.readable_ticks()
        tcal.yaxis.axis_label = "debiased ECE² statistic"
        self.tcal_source = ColumnDataSource(tcal_tables(None))
        tcal.multi_line(
            "xs", "statistic", source=self.tcal_source, color="color", line_width=2, legend_field="item"
        )
        tcal.multi_line(
            "xs", "critical", source=self.tcal_source, color="color", line_width=1.5, line_dash="dashed"
        )
        _legend_above(tcal)
        interval = _figure(
            LOW_HEIGHT - 40,
            x_range=Range1d(0, 0.1),
            y_range=Range1d(-0.6, 1.6),
            title="ℓ2-ECE with confidence interval",
        )
        interval.xaxis.axis_label = "ℓ2 expected calibration error"
        interval.yaxis.ticker = FixedTicker(ticks=[])  # its ticks are set in place (_fit_intervals)
        self.interval_source = ColumnDataSource(interval_table(None))
        _hover(
            interval,
            interval_glyphs(interval, self.interval_source),
            [("", "@item"), ("ECE", "@estimate{0.0000}"), ("interval", "[@low{0.0000}, @high{0.0000}]")],
        )
        self.figures = ComparisonFigures(rel, tcal, interval)
        columns = [TableColumn(field=k, title=t, width=w) for k, (t, w) in self.TABLE.items()]
        colour = f"<%= value == 'rejects' ? '{frames.MISCALIBRATED}' : '{frames.CALIBRATED}' %>"
        columns[3].formatter = HTMLTemplateFormatter(
            template=f'<span style="color:{colour}"><%= value %></span>'
        )
        self.table = DataTable(
            source=ColumnDataSource({k: [] for k in self.TABLE}),
            columns=columns,
            index_position=None,
            height=160,
            sizing_mode="stretch_width",
            autosize_mode="none",
            name="comparison_table",
            reorderable=False,  # (reordering needs jquery-ui, which the page does not load)
        )
        redraws_with_its_rows(self.table)
        self.verdict = Div(
            text="",
            sizing_mode="stretch_width",
            name="comparison_verdict",
            styles={"font-size": "13px", "font-weight": "600"},
        )
        self.alert = pn.pane.Alert(
            "",
            alert_type="danger",
            visible=False,
            sizing_mode="stretch_width",
            css_classes=["calviz-comparison-alert"],
        )
        self.note = pn.pane.Markdown("", **_NOTE)
        self.top = pn.pane.Bokeh(
            column(self.verdict, sizing_mode="stretch_width"), sizing_mode="stretch_width"
        )
        self.panel = card(
            "5 · Comparison",
            self.alert,
            self.top,
            pn.Row(
                pn.pane.Bokeh(rel, sizing_mode="stretch_width", min_width=320),
                pn.pane.Bokeh(tcal, sizing_mode="stretch_width", min_width=320),
                sizing_mode="stretch_width",
            ),
            pn.pane.Bokeh(interval, sizing_mode="stretch_width", min_width=320),
            # the table in a row of its own: its 850 px of columns were cut at half the card's width
            pn.pane.Bokeh(self.table, sizing_mode="stretch_width", min_width=320),
            self.note,
        )
        self._drawn = None
        store.param.watch(lambda *_: self.draw(), ["entry"])

    def show_error(self, message: str) -> None:
        self.alert.object = (
            f"**Comparison input refused.** {html.escape(message, quote=False)} "
            "The loaded data and the last comparison stay."
        )
        self.alert.visible = True

    def clear_error(self) -> None:
        if self.alert.visible:
            self.alert.visible = False
            self.alert.object = ""

    def draw(self) -> None:
        entry = self.store.entry
        mark = (entry.key, entry.pending, id(entry.result), entry.error)
        if mark == self._drawn:
            return
        self._drawn = mark
        outcome = entry.result
        if entry.pending:
            self.verdict.text = f"computing: {html.escape(entry.pending)}…"
            return
        if outcome is None:
            self.verdict.text = html.escape(entry.error or "")
            for source, table in (
                (self.lines, reliability_tables(None)[0]),
                (self.points, reliability_tables(None)[1]),
                (self.tcal_source, tcal_tables(None)),
                (self.interval_source, interval_table(None)),
            ):
                source.data = dict(table)
            _set_rows(self.table, {k: np.asarray([]) for k in self.TABLE})
            return
        lines, points = reliability_tables(outcome)
        self.lines.data = lines
        _set(self.points, points)
        tcal = tcal_tables(outcome)
        self.tcal_source.data = tcal
        self._fit_tcal(tcal)
        intervals = interval_table(outcome)
        _set(self.interval_source, intervals)
        self._fit_intervals(intervals)
        _set_rows(self.table, {k: np.asarray(v, dtype=object) for k, v in summary_table(outcome).items()})
        colour = verdict_colour(outcome)
        self.verdict.text = f"<span style='color:{colour}'>{html.escape(outcome.verdict)}</span>"
        _text(self.note, self._note(outcome))

    def _fit_tcal(self, tcal: dict) -> None:
        xs = np.concatenate(tcal["xs"]) if tcal["xs"] else np.array([1.0, 1024.0])
        ys = np.concatenate([*tcal["statistic"], *tcal["critical"]]) if tcal["xs"] else np.array([-1.0, 1.0])
        ys = ys[np.isfinite(ys)] if np.isfinite(ys).any() else np.array([-1.0, 1.0])
        pad = 0.08 * max(float(ys.max() - ys.min()), 1e-6)
        start, end = max(float(xs.min()) / 1.5, 0.5), float(xs.max()) * 1.5
        self.figures.tcal.x_range.update(start=start, end=end)
        self.figures.tcal.xaxis.ticker.ticks = log_ticks(start, end)
        self.figures.tcal.y_range.update(start=float(ys.min()) - pad, end=float(ys.max()) + pad)

    def _fit_intervals(self, rows: dict) -> None:
        fig = self.figures.interval
        k = len(rows["row"])
        high = float(np.nanmax(rows["high"])) if k else 0.1
        fig.x_range.update(start=0.0, end=max(high * 1.1, 1e-3))
        fig.y_range.update(start=-0.6, end=max(k, 2) - 0.4)
        fig.yaxis[0].ticker.ticks = [float(r) for r in rows["row"]]
        fig.yaxis.major_label_overrides = {
            float(r): str(i) for r, i in zip(rows["row"], rows["item"], strict=True)
        }

    @staticmethod
    def _note(outcome) -> str:
        level = 100 * (1 - (outcome.groups.alpha if outcome.groups is not None else outcome.comparison.alpha))
        note = (
            f"Target **{outcome.target}**, {outcome.n:,} rows. Intervals: {level:.0f}% for the binned "
            "ℓ2-ECE (Sun, Chaudhari, Barnett and Dobriban, 2024); T-Cal: adaptive test of Lee, Huang, "
            "Hassani and Dobriban (2023)."
        )
        if outcome.groups is not None:
            note += (
                " Holm's correction across the tested groups; groups below "
                f"{outcome.groups.min_group_size} rows are listed as too small, not tested."
            )
        else:
            note += (
                " The difference of the debiased ECE² is tested with a paired interval (both models on "
                "the same examples)."
            )
        if outcome.groups is None:  # the two models' Brier score decompositions, side by side
            c = comparisons.comparison_summary({"comparison": outcome.comparison})["comparison"]
            splits = "; ".join(f"{html.escape(name)}: {comparisons.decomposition_text(m['decomposition'])}"
                               for name, m in c["models"].items())
            contrast = comparisons.decomposition_contrast(c)
            note += f" Score decomposition — {splits}." + (f" {html.escape(contrast)}." if contrast else "")
        if outcome.mode == "recalibration":
            note += " Before and after are both judged on the held-out rows only."
        if outcome.source:
            note += f" {html.escape(outcome.source)}"
        return note
