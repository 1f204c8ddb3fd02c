"""The dashboard's "over time" card: calibration per time window of a prediction log.

Shown when the data have a time column (:func:`calviz._timed.has_time`).  Three figures share one
``ColumnDataSource`` of the windows (:func:`calviz.present.over_time.over_time_windows`): the ECE with its
interval, the mean prediction against the observed rate, and the monitor's e-process on a log scale with
the 1/α line and the alarm.  A click on a window (Bokeh's tap tool: the source's selection) draws its
reliability diagram against the reference window (:func:`calviz.present.over_time.window_diagram`).  The
card computes nothing: it draws the store's ``over_time`` entry.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, Div, Range1d, Span, TapTool

from calviz._timed import has_time
from calviz.app.figures import _diagonal, _figure, _hover, _legend_above
from calviz.app.views import _error_text, _set, _View, card
from calviz.present.over_time import over_time_caption, over_time_windows, window_diagram, window_label

__all__ = ["OverTimeView", "OWN_CARDS"]

#: table views (a registry ``View.frame``) that the page draws with a card of their own
#: instead of the generic table card
OWN_CARDS = ("over_time",)

HEIGHT = 210
DIAGRAM_HEIGHT = 330
WINDOW_TOOLTIPS = (("window", "@label"), ("rows", "@n{0,0}"), ("ECE", "@ece{0.0000}"),
                   ("mean prediction", "@mean{0.0000}"), ("observed rate", "@observed{0.0000}"),
                   ("e-value", "@evalue{0.000g}"))
_COLORS = {"window": "#0f766e", "reference": "#6b7280"}


def _empty_diagram() -> dict:
    return {k: np.zeros(0) for k in ("x", "y", "low", "high", "count")}


def _patch_rows(source: ColumnDataSource, table: dict) -> None:
    """Give ``source`` these columns, sending only what changed when the windows only grew (a watched log:
    the open window's numbers, the Holm-adjusted tests, new windows): the changed cells as a patch, the
    new rows as a stream — not every window again.  Anything else replaces the columns (copies: a patch
    writes into the source's arrays, which must not be a result's own)."""
    table = {k: np.asarray(v) for k, v in table.items()}
    current = source.data
    old = len(current["n"]) if "n" in current else 0
    count = len(table["n"])

    def replace() -> None:
        _set(source, {k: v.copy() for k, v in table.items()})

    if current.keys() != table.keys() or old == 0 or count < old:
        return replace()
    patches = {}
    for name, new in table.items():
        was = np.asarray(current[name])
        head = new[:old]
        if was.dtype != new.dtype or was.shape[1:] != new.shape[1:]:
            return replace()
        differ = was != head
        if new.dtype.kind == "f":
            differ &= ~(np.isnan(was) & np.isnan(head))
        changed = np.flatnonzero(differ)
        if changed.size > max(old // 2, 1) or (changed.size and new.dtype.kind in "MUSO"):
            return replace()
        if changed.size:
            patches[name] = [(int(i), head[i].item()) for i in changed]
    if patches:
        source.patch(patches)
    if count > old:
        source.stream({k: v[old:].copy() for k, v in table.items()})


class OverTimeView(_View):
    """The over-time card (module docstring); ``selected`` is the window whose diagram is drawn."""

    slots = ("over_time", "inputs")

    def __init__(self, store):
        from calviz.analysis.views import view

        record = view("over_time")
        self.source = ColumnDataSource({})
        self.diagram = {name: ColumnDataSource(_empty_diagram()) for name in ("window", "reference")}
        self.threshold = Span(location=20.0, dimension="width", line_color="#b91c1c", line_dash="dashed",
                              line_width=1.5)
        self.alarm = Span(location=0, dimension="height", line_color="#b91c1c", line_width=2, visible=False)
        self.caption = Div(text="", sizing_mode="stretch_width", styles={"font-size": "12px"},
                           name="over_time_caption")
        self.diagram_title = Div(text="", styles={"font-size": "12px"}, name="over_time_diagram_title")
        self._datetime: bool | None = None
        self.result = None
        self.selected: int | None = None
        self.pane = pn.pane.Bokeh(column(self.caption, sizing_mode="stretch_width"),
                                  sizing_mode="stretch_width", margin=(0, 10))
        self.panel = card(record.title, self.pane, view="over_time")
        self.panel.visible = False
        self.source.selected.on_change("indices", self._on_tap)
        super().__init__(store)

    # -- figures ----------------------------------------------------------------------------------
    def _build(self, datetime: bool) -> None:
        """The figures, for windows on a datetime axis or numbered (rebuilt only when that changes)."""
        self._datetime = datetime
        axis = {"x_axis_type": "datetime"} if datetime else {}
        ece = _figure(HEIGHT, title="ECE per window (click a window)", **axis)
        ece.segment(x0="x", y0="ece_low", x1="x", y1="ece_high", source=self.source, color="#0f766e",
                    line_width=2, alpha=0.6)
        dots = ece.scatter("x", "ece", source=self.source, size=7, color="#0f766e",
                           selection_color="#f59e0b", nonselection_alpha=0.5, name="over_time_ece")
        ece.yaxis.axis_label = "ℓ2 ECE"
        rates = _figure(HEIGHT, title="mean prediction and observed rate", x_range=ece.x_range, **axis)
        rates.segment(x0="x", y0="observed_low", x1="x", y1="observed_high", source=self.source,
                      color="#c2410c", line_width=2, alpha=0.5)
        rates.line("x", "mean", source=self.source, color="#1d4ed8", line_width=2,
                   legend_label="mean prediction")
        observed = rates.scatter("x", "observed", source=self.source, color="#c2410c", size=6,
                                 legend_label="observed rate", selection_color="#f59e0b")
        _legend_above(rates)
        # (a fixed range, set per result: an automatic one would leave the 1/α line out of view)
        evalues = _figure(HEIGHT, title="monitor: e-process (alarm at 1/α)", x_range=ece.x_range,
                          y_axis_type="log", y_range=Range1d(0.01, 100.0), **axis)
        line = evalues.line("x", "evalue", source=self.source, color="#7c3aed", line_width=2)
        evalues.add_layout(self.threshold)
        evalues.add_layout(self.alarm)
        evalues.yaxis.axis_label = "e-value"
        for fig, renderer in ((ece, dots), (rates, observed), (evalues, line)):
            fig.add_tools(TapTool(renderers=[renderer]))
            _hover(fig, renderer, WINDOW_TOOLTIPS)
            fig.xaxis.axis_label = "window start" if datetime else "window"
        diagram = _figure(DIAGRAM_HEIGHT, title="window against the reference window",
                          x_range=Range1d(-0.02, 1.02), y_range=Range1d(-0.02, 1.02))
        _diagonal(diagram)
        for name, size in (("reference", 7), ("window", 9)):
            src, color = self.diagram[name], _COLORS[name]
            diagram.segment(x0="x", y0="low", x1="x", y1="high", source=src, color=color, line_width=1.5)
            diagram.scatter("x", "y", source=src, color=color, size=size, legend_label=f"{name}",
                            name=f"over_time_{name}")
        _legend_above(diagram)
        diagram.xaxis.axis_label = "mean prediction"
        diagram.yaxis.axis_label = "observed frequency"
        self.figures = (ece, rates, evalues, diagram)
        series = column(ece, rates, evalues, sizing_mode="stretch_width")
        chosen = column(self.diagram_title, diagram, sizing_mode="stretch_width")
        # stacked: the page's grid gives the card half its width beside another card
        self.pane.object = column(series, chosen, self.caption, sizing_mode="stretch_width")

    # -- drawing ----------------------------------------------------------------------------------
    def draw(self) -> None:
        inputs = self.store.inputs
        self.panel.visible = inputs is not None and has_time(inputs[0])
        entry = self.store.over_time
        if not self._changed("over_time") or entry.options is None or not self.panel.visible:
            return
        result = entry.result
        if result is None:
            self.caption.text = ("computing calibration over time…" if entry.pending
                                 else "not computed" + _error_text(entry))
            return
        table = over_time_windows(result)
        datetime = table["x"].dtype.kind == "M"
        if datetime != self._datetime:
            self._build(datetime)
        count = len(table["n"])
        previous_count = len(self.source.data.get("n", ()))
        _patch_rows(self.source, table)
        monitor = result.monitor
        self.threshold.location = float(monitor.threshold)
        shown = np.concatenate((table["evalue"], [monitor.threshold, 1.0]))
        self.figures[2].y_range.update(start=float(shown.min()) / 3.0, end=float(shown.max()) * 3.0)
        if monitor.alarm and monitor.alarm_index < count:
            x = table["x"][monitor.alarm_index]
            self.alarm.location = float(x.astype("datetime64[ms]").astype(np.int64)) if datetime else float(x)
            self.alarm.visible = True
        else:
            self.alarm.visible = False
        self.caption.text = html.escape(over_time_caption(result))
        self.result = result
        # the window shown: the one clicked, else the newest (which follows the log as it grows)
        keep = self.selected is not None and self.selected < count and self.selected < previous_count - 1
        self.show_window(self.selected if keep else count - 1)

    def _on_tap(self, attr, old, new) -> None:
        if new:
            self.show_window(int(new[0]), from_tap=True)

    def show_window(self, index: int, *, from_tap: bool = False) -> None:
        """Draw window ``index``'s reliability diagram against the reference window."""
        if self.result is None:
            return
        windows = self.result.windows
        index = int(np.clip(index, 0, windows.n_windows - 1))
        self.selected = index
        for name, table in window_diagram(self.result, index).items():
            _set(self.diagram[name], table)
        label = window_label(windows.start[index])
        reference = window_label(windows.start[windows.reference])
        self.diagram_title.text = (f"<b>window {html.escape(label)}</b> ({int(windows.n[index]):,} rows) "
                                   f"against the reference window {html.escape(reference)}")
        if not from_tap and list(self.source.selected.indices) != [index]:
            self.source.selected.indices = [index]
