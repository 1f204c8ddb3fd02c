"""The dashboard's views: one class per card, reading the result store and drawing with plain Bokeh.

Each view builds its Bokeh figures once and afterwards only replaces the data of their
``ColumnDataSource`` objects, titles and axis ranges, so a change sends a few small patches to the
browser instead of new figures.  Figures are rebuilt only when their kind changes (scalar diagram ↔ one
curve per rank ↔ one panel per class; T-Cal over bin counts ↔ over distinct values).  A view redraws a
part only when the store's entry for it changed (:attr:`calviz.app.store.Entry.key`).  The drawing data
come from the pure functions of :mod:`calviz.plots` (the report's HoloViews figures use the same ones);
views compute no statistics.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
import panel as pn
from bokeh.layouts import column, gridplot
from bokeh.models import (
    ColumnDataSource,
    CustomJS,
    DataTable,
    Div,
    FixedTicker,
    HTMLTemplateFormatter,
    Range1d,
    Span,
    TableColumn,
)

from calviz import plots
from calviz._data import message_for
from calviz.analysis import is_distributed, resolve_target, scalar_target
from calviz.analysis.views import card_title, view
from calviz.app.figures import (
    _bars,
    _count_figure,
    _diagonal,
    _diagram_axes,
    _figure,
    _hover,
    _legend_above,
    _whiskers,
    interval_glyphs,
)
from calviz.app.store import redecision_of
from calviz.app.texts import Text, alert
from calviz.present import frames, labels, progress, text
from calviz.present.verdict import overall_verdict
from calviz.present.verification import CORP_MARKS, corp_caption, corp_tables, is_corp

__all__ = [
    "ReliabilityView", "TCalView", "ClassicalView", "IntervalView", "DistanceView", "TableView", "StatusView",
    "VerdictView", "card",
]

REL_HEIGHT = 430  # first row: reliability diagram (3 stacked panels) beside T-Cal
LOW_HEIGHT = 280  # second row: ECE interval beside the distance bounds
CLASS_PANEL_HEIGHT = 150  # full target: height of each per-class reliability panel (the pane grows)


# a small circled "i" drawn with CSS (the character ⓘ is missing from many fonts)
_INFO_ICON_STYLE = (
    "cursor:help;display:inline-block;width:1.15em;height:1.15em;line-height:1.15em;border-radius:50%;"
    "border:1px solid #0f766e;color:#0f766e;font-size:0.75em;text-align:center;font-style:italic;"
    "vertical-align:middle"
)


def card(title: str, *parts, view: str | None = None) -> pn.Column:
    """A titled card; ``view`` adds its one-sentence explanation, with the mathematics in the tooltip of a
    circled "i" after the title.  Title, "i" and sentence are one Bokeh ``Div``: every extra model on the
    page (a Markdown pane, a TooltipIcon and its tooltips) takes part in the browser's style and layout
    passes that each live change triggers."""
    head = ("<div style='font-size:1.15em;font-weight:600;margin:0.4em 0 0.2em 0'>"
            f"<span>{html.escape(title)}</span>")
    if view is not None:
        sentence, maths = plots.VIEW_EXPLANATIONS[view]
        head += (f" <span title='{html.escape(maths, quote=True)}' style='{_INFO_ICON_STYLE}'>i</span>"
                 f"</div>{html.escape(sentence)}")
    else:
        head += "</div>"
    heading = Text(css_classes=["calviz-card-head"])
    heading.object = head
    return pn.Column(heading, *parts, sizing_mode="stretch_width", margin=(5, 5))


def _holds(source: ColumnDataSource, table: dict) -> bool:
    """Whether ``source`` holds exactly these columns (numpy arrays)."""
    current = source.data
    return current.keys() == table.keys() and all(_same(current[k], v) for k, v in table.items())


def _set(source: ColumnDataSource, table: dict) -> None:
    """Give ``source`` these columns — unless it holds them already (nothing is sent then: e.g. an α
    change leaves the confidence histogram as it is)."""
    table = {k: np.asarray(v) for k, v in table.items()}
    if not _holds(source, table):
        source.data = table


def _set_rows(table: DataTable, rows: dict) -> None:
    """Give a ``DataTable`` these rows, in its own source (one data patch; nothing when it holds them)."""
    rows = {k: np.asarray(v) for k, v in rows.items()}
    redraws_with_its_rows(table)
    if not _holds(table.source, rows):
        table.source.data = rows


def redraws_with_its_rows(table: DataTable) -> DataTable:
    """Make the browser redraw ``table``'s rows whenever its source's data is replaced; returns it.

    Bokeh 3.9.1–3.9.2 tables do not redraw when their source's data is replaced by as many rows
    (bokeh/bokeh#15328: the browser kept showing the first rows).  The table's rows are redrawn from its
    source when its ``CDSView`` signals a change (what a change of the row count does), so a callback on
    the source's data sends that signal: the grid's cells are refilled in place.  (A change of any of the
    table's own properties redraws it as well, but by rebuilding the whole grid — its DOM, stylesheets and
    layout — in the browser on every change; a new source per change makes Bokeh walk every model of the
    session's document on the server.)  Call it where the table is built: added later, the callback is one
    more model sent to a page already shown."""
    callbacks = table.source.js_property_callbacks.get("change:data", [])
    if not any(isinstance(c, CustomJS) and c.args.get("table") is table for c in callbacks):
        table.source.js_on_change("data", CustomJS(args={"table": table}, code="table.view.change.emit()"))
    return table


def _fit(axis: Range1d, lim: tuple, *, drawn: bool) -> None:
    """Set ``axis`` to ``lim`` where the figure draws something: an emptied figure (still computing, or
    nothing to show) keeps its axes, so that its next data — often on the same scales: the same test at
    another α, the target shown before — send none (Bokeh sends only values that change)."""
    if drawn:
        axis.update(start=lim[0], end=lim[1])


def _text(note: Text, text: str) -> None:
    note.object = text


def _same(old, new: np.ndarray) -> bool:
    old = np.asarray(old)
    if old.shape != new.shape or old.dtype.kind != new.dtype.kind:
        return False
    if new.dtype.kind == "f":
        return bool(np.array_equal(old, new, equal_nan=True))
    return bool(np.array_equal(old, new))


def _error_text(*entries) -> str:
    msgs = [e.error for e in entries if e is not None and e.error]
    if not msgs:
        return ""
    # the fixes named as sidebar controls, not API keywords
    return "<br><span style='color:#8a6d3b'>" + "<br>".join(
        html.escape(message_for(m, "app")) for m in msgs) + "</span>"


class _View:
    """A card of the page: ``panel`` (what the page shows); ``draw`` runs when a slot it reads changes."""

    slots: tuple[str, ...] = ()

    def __init__(self, store):
        self.store = store
        self._drawn: dict[str, tuple | None] = {}
        self._later: Callable[[Callable[[], None]], None] | None = None  # see draw_later
        self._due = False  # a draw is scheduled and has not run yet
        store.param.watch(self._on_store, list(self.slots))

    def draw_later(self, schedule: Callable[[Callable[[], None]], None]) -> None:
        """Draw through ``schedule`` (a served page's next tick) instead of within the store's update.

        The update's own patch then carries only the views drawn at once, and the browser shows them
        without first applying this card's changes; this card follows in the next message.  Several
        store changes before the scheduled draw runs give one draw (of the store's state then)."""
        self._later = schedule

    def _on_store(self, *events) -> None:
        if self._later is None:
            self.draw()
        elif not self._due:
            self._due = True
            self._later(self._draw_due)

    def _draw_due(self) -> None:
        self._due = False
        self.draw()

    def _changed(self, slot: str) -> bool:
        """Whether the store's entry for ``slot`` differs from the one drawn (and mark it drawn)."""
        entry = getattr(self.store, slot)
        mark = (entry.key, entry.pending, id(entry.result))
        if self._drawn.get(slot) == mark:
            return False
        self._drawn[slot] = mark
        return True

    def draw(self) -> None:
        raise NotImplementedError


# -- 1. reliability ------------------------------------------------------------------------------------


class ReliabilityView(_View):
    """The reliability diagram: scalar targets draw bars, whiskers, the smooth curve (with its band),
    the confidence histogram and the smCE witness; top-k one curve per rank; full one panel per class."""

    slots = ("reliability", "smooth", "distance", "inputs")

    def __init__(self, store):
        self.holder = pn.Column(sizing_mode="stretch_width", margin=0)
        self.note = Text()
        self.panel = card(card_title("reliability"), self.holder, self.note, view="reliability")
        self.structure: tuple | None = None
        self.sources: dict[str, ColumnDataSource] = {}
        self.figures: list = []
        super().__init__(store)

    def draw(self) -> None:
        rel_entry, smooth_entry, dist_entry = self.store.reliability, self.store.smooth, self.store.distance
        rel = rel_entry.result
        if rel_entry.options is None:
            return
        if is_corp(rel) or (rel is None and rel_entry.options.scheme == "corp"):
            self._draw_corp(rel_entry)
            return
        if frames.is_multi(rel):
            self._draw_multi(rel_entry)
            return
        if self.structure != ("scalar",):
            self._build_scalar()
            self._drawn.clear()
        if self._changed("reliability"):
            b = frames.bins(rel)
            _set(self.sources["bars"], frames.bar_table(b))
            _set(self.sources["hist"], frames.hist_table(b))
            self.figures[0].title.text = self._scalar_title(rel_entry)
        if self._changed("smooth"):
            _set(self.sources["smooth"], frames.smooth_table(smooth_entry.result))
            # the legend names the curve only when one is drawn (the box unticked: none)
            shown = smooth_entry.result is not None or bool(smooth_entry.pending)
            if self.smooth_legend.visible != shown:
                self.smooth_legend.visible = shown
        if self._changed("distance"):
            dist = dist_entry.result
            _set(self.sources["witness"], frames.witness_table(dist[1] if dist is not None else None))
        _text(self.note, self._scalar_note(rel_entry, smooth_entry))

    # scalar diagram
    def _show(self, model, height: int) -> None:
        """A new kind of figure: a new pane (a pane's height cannot follow a new model's in place)."""
        self.pane = pn.pane.Bokeh(model, height=height, sizing_mode="stretch_width", min_width=320)
        self.holder[:] = [self.pane]

    def _build_scalar(self) -> None:
        height = REL_HEIGHT - 190
        src = self.sources = {
            "bars": ColumnDataSource(frames.bar_table(frames.bins(None))),
            "hist": ColumnDataSource(frames.hist_table(frames.bins(None))),
            "smooth": ColumnDataSource(frames.smooth_table(None)),
            "witness": ColumnDataSource(frames.witness_table(None)),
        }
        x_range = Range1d(0, 1)
        main = _diagram_axes(height, x_range=x_range)
        main.yaxis.axis_label = "observed frequency"
        _bars(main, src["bars"], legend_label="perfect calibration")
        main.scatter("confidence", "frequency", source=src["bars"], color="color", size=5, line_color="white")
        main.varea(x="x", y1="low", y2="high", source=src["smooth"], fill_color=frames.ACCENT,
                   fill_alpha=0.18)
        main.line(
            "x", "y", source=src["smooth"], color=frames.ACCENT, line_width=2, legend_label="smooth curve"
        )
        _legend_above(main, padding=2, margin=0, border_line_alpha=0, label_height=12, glyph_height=12)
        self.smooth_legend = next(item for item in main.legend[0].items if item.label.value == "smooth curve")
        hist = _count_figure(max(90, height // 3), x_range=x_range)
        bars_h = hist.quad(
            left="x0",
            right="x1",
            bottom="c0",
            top="c1",
            source=src["hist"],
            fill_color=frames.HIST,
            line_color="white",
        )
        _hover(hist, bars_h, frames.HIST_TOOLTIPS)
        witness = _figure(max(90, height // 3), x_range=x_range, y_range=Range1d(-1.05, 1.05))
        witness.yaxis.axis_label = "w(v)"
        witness.yaxis.ticker = FixedTicker(ticks=[-1, 0, 1])
        line = witness.line("x", "w", source=src["witness"], color=frames.MISCALIBRATED, line_width=1.5)
        _hover(witness, line, [("v", "@x{0.000}"), ("w(v)", "@w{0.000}")])
        self.figures = [main, hist, witness]
        self.structure = ("scalar",)
        self._show(column(main, hist, witness, sizing_mode="stretch_width"), REL_HEIGHT)

    def _scalar_title(self, entry) -> str:
        options, data = entry.options, entry.data
        if entry.result is None:
            return f"reliability: {entry.pending}…" if entry.pending else text.RELIABILITY_MISSING
        used = scalar_target(data, resolve_target(data, options))
        m = int(np.asarray(entry.result.counts).size)
        n_used = int(entry.result.n)
        self.figures[2].xaxis.axis_label = {
            "binary": "predicted P(y = 1)",
            "top1": "top-1 confidence",
            "classwise": f"predicted P(class {options.class_index})",
        }.get(used, "confidence")
        return f"{used} · {m} {options.scheme.replace('_', '-')} bins · n = {labels.short_count(n_used)}"

    def _scalar_note(self, entry, smooth_entry) -> str:
        data, options = self.store.inputs or (entry.data, entry.options)
        note = "Bars: observed frequency per bin; whiskers: per-bin interval at level 1 − α. "
        note += (
            f"<span style='color:{frames.MISCALIBRATED}'>Crimson</span> bins' intervals miss the diagonal, "
            f"<span style='color:{frames.CALIBRATED}'>teal</span> ones cover it."
        )
        target = resolve_target(data, options)
        if scalar_target(data, target) != target:
            # binary data: top-k and full calibration of a binary model are its binary calibration
            note += f" (For binary data the {target} target is this binary diagram.)"
        if is_distributed(data):
            note += (
                " All rows computed on Dask; the smooth curve is not available there (it needs the "
                "whole sample in one process)."
            )
        bandwidth = None if smooth_entry.result is None else smooth_entry.result.bandwidth
        if bandwidth is not None:
            band = "(band computing…)" if smooth_entry.pending else "with its pointwise band"
            note += f" Blue: smooth curve {band}, bandwidth σ = {float(bandwidth):.3f}."
        note += " Red, below: the smCE witness w(v)" + (
            " (computing…)."
            if self.store.distance.pending
            else "; it marks where the predictions are most off — above 0 where outcomes exceed them, "
            "below 0 where they fall short — not how much (smCE, in the distance view, says how much)."
        )
        return note + _error_text(entry, smooth_entry)

    # the CORP mode: isotonic curve and consistency band, no bins
    def _build_corp(self) -> None:
        height = REL_HEIGHT - 120
        tables = corp_tables(None)
        src = self.sources = {name: ColumnDataSource(table) for name, table in tables.items()}
        x_range = Range1d(0, 1)
        main = _diagram_axes(height, x_range=x_range)
        main.yaxis.axis_label = "observed frequency"
        main.varea(x="x", y1="low", y2="high", source=src["band"], fill_color=frames.ACCENT, fill_alpha=0.2,
                   legend_label="consistency band")
        _diagonal(main, legend_label="perfect calibration")
        line = main.line("x", "y", source=src["curve"], color="black", line_width=2,
                         legend_label="CORP curve")
        _hover(main, line, [("prediction", "@x{0.000}"), ("recalibrated", "@y{0.000}")])
        _legend_above(main, padding=2, margin=0, border_line_alpha=0, label_height=12, glyph_height=12)
        hist = _count_figure(max(90, height // 3), x_range=x_range)
        bars = hist.quad(left="x0", right="x1", bottom="c0", top="c1", source=src["hist"],
                         fill_color=frames.HIST, line_color="white")
        _hover(hist, bars, frames.HIST_TOOLTIPS)
        self.figures = [main, hist]
        self.structure = ("corp",)
        self._show(column(main, hist, sizing_mode="stretch_width"), REL_HEIGHT)

    def _draw_corp(self, entry) -> None:
        if self.structure != ("corp",):
            self._build_corp()
            self._drawn.clear()
        if not self._changed("reliability"):
            return
        corp = entry.result
        for name, table in corp_tables(corp).items():
            _set(self.sources[name], table)
        data, options = entry.data, entry.options
        used = scalar_target(data, resolve_target(data, options))
        self.figures[1].xaxis.axis_label = {
            "binary": "predicted P(y = 1)", "top1": "top-1 confidence",
            "classwise": f"predicted P(class {options.class_index})"}.get(used, "confidence")
        if corp is None:
            self.figures[0].title.text = (f"reliability: {entry.pending}…" if entry.pending
                                          else text.RELIABILITY_MISSING)
            _text(self.note, _error_text(entry))
            return
        band = " · band computing…" if entry.pending else ""
        self.figures[0].title.text = f"{used} · CORP (isotonic) · n = {int(corp.n):,}{band}"
        _text(self.note, html.escape(f"{corp_caption(corp)} {CORP_MARKS}") + _error_text(entry))

    # vector targets
    def _draw_multi(self, entry) -> None:
        rel = entry.result
        labels = tuple(rel.labels)
        structure = (rel.kind, labels)
        if self.structure != structure:
            self._build_ranks(rel) if structure[0] == "rank" else self._build_classes(rel)
            self.structure = structure
            self._drawn.clear()
        if not self._changed("reliability"):
            return
        scheme = entry.options.scheme.replace("_", "-")
        if structure[0] == "rank":
            tables = frames.rank_tables(rel)
            _set(self.sources["points"], tables["points"])
            _set(self.sources["bars"], tables["bars"])
            for (_, _, x, y), source in zip(tables["lines"], self.sources["lines"], strict=True):
                _set(source, {"x": x, "y": y})
            self.figures[0].title.text = (
                f"top-{len(labels)} · {entry.options.n_bins} {scheme} bins · "
                f"n = {int(rel.n):,}"
            )
        else:
            positives = rel.positives
            for i, (panel, source) in enumerate(
                zip(rel.panels, self.sources["panels"], strict=True)
            ):
                _set(source, frames.bar_table(frames.bins(panel)))
                self.figures[i].title.text = f"{labels[i]} · {int(positives[i]):,}"
        note = html.escape(text.reliability_caption(rel))
        note += (
            " <i>The smooth curve and the smCE witness are defined for scalar predictions and are omitted for"
            " this target (select top1 or classwise to see them).</i>"
        )
        _text(self.note, note + _error_text(entry))

    def _build_ranks(self, rel) -> None:
        height = REL_HEIGHT - 120
        tables = frames.rank_tables(rel)
        x_range = Range1d(0, 1)
        main = _diagram_axes(height, x_range=x_range)
        main.yaxis.axis_label = "observed frequency"
        points = ColumnDataSource(tables["points"])
        _diagonal(main)
        _whiskers(main, points, "color", alpha=0.8)
        lines = []
        for label, colour, x, y in tables["lines"]:
            lines.append(ColumnDataSource({"x": x, "y": y}))
            main.line("x", "y", source=lines[-1], color=colour, line_width=2, legend_label=label)
        marks = main.scatter(
            "confidence",
            "frequency",
            source=points,
            color="color",
            size=7,
            line_color="outline",
            line_width=1.5,
        )
        _hover(main, marks, [("", "@rank"), *frames.BIN_TOOLTIPS])
        _legend_above(main, location="top_left")
        hist = _count_figure(max(90, height // 3), x_range=x_range, ticks=2)
        hist.xaxis.axis_label = "r-th largest predicted probability"
        bars = ColumnDataSource(tables["bars"])
        quads = hist.quad(
            left="x0",
            right="x1",
            bottom="c0",
            top="c1",
            source=bars,
            fill_color="color",
            fill_alpha=0.25,
            line_color="color",
            line_width=1.2,
        )
        _hover(hist, quads, [("", "@rank"), *frames.HIST_TOOLTIPS])
        self.sources = {"points": points, "bars": bars, "lines": lines}
        self.figures = [main, hist]
        self._show(column(main, hist, sizing_mode="stretch_width"), REL_HEIGHT)

    def _build_classes(self, rel) -> None:
        panels = list(rel.panels)
        ncols = frames.class_grid_columns(len(panels))
        rows = max(1, -(-len(panels) // ncols))
        panel_height = max(CLASS_PANEL_HEIGHT, min(200, (REL_HEIGHT - 10) // rows))
        self.sources = {"panels": []}
        self.figures = []
        for _ in panels:
            fig = _diagram_axes(panel_height, small=True, x_range=Range1d(0, 1))
            fig.xaxis.ticker = fig.yaxis.ticker = FixedTicker(ticks=[0, 0.5, 1])
            source = ColumnDataSource(frames.bar_table(frames.bins(None)))
            _bars(fig, source)
            self.sources["panels"].append(source)
            self.figures.append(fig)
        self._show(
            gridplot(self.figures, ncols=ncols, sizing_mode="stretch_width", toolbar_location=None),
            max(REL_HEIGHT, rows * panel_height + 10),
        )


# -- 2. T-Cal ------------------------------------------------------------------------------------------


class TCalView(_View):
    """Debiased statistic and critical value per dyadic scale; title and caption: the verdict.

    ``extra`` (below the caption) is room for one more result of the same data — e.g. a table of
    classical calibration tests — drawn by its own view from its own store slot."""

    slots = ("tcal", "inputs")  # (inputs: the target asked for, which the caption names)

    def __init__(self, store):
        self.pane = pn.pane.Bokeh(None, height=REL_HEIGHT, sizing_mode="stretch_width", min_width=320)
        self.note = Text()
        self.extra = pn.Column(sizing_mode="stretch_width", margin=0)
        self.panel = card(card_title("tcal"), self.pane, self.note, self.extra, view="tcal")
        self.discrete: bool | None = None
        self.target: str | None = None  # the target whose caption is shown
        self.shown: tuple | None = None  # (store key, result) of the test the figure shows (None: none)
        super().__init__(store)

    def _build(self, discrete: bool) -> None:
        fig = _figure(
            REL_HEIGHT - 20,
            x_axis_type="linear" if discrete else "log",
            x_range=Range1d(1, 1024),
            y_range=Range1d(-1, 1),
        )
        fig.xaxis.axis_label = labels.tcal_xlabel(discrete)
        fig.yaxis.axis_label = "debiased ECE² statistic"
        fig.add_layout(Span(location=0, dimension="width", line_color=frames.HIST, line_width=1))
        self.source = ColumnDataSource(frames.tcal_frame(None)["table"])
        fig.line("bins", "statistic", source=self.source, color=frames.NEUTRAL, line_width=1.5)
        fig.line(
            "bins", "critical", source=self.source, color=frames.NEUTRAL, line_dash="dashed", line_width=1.5
        )
        points = fig.scatter(
            "bins", "statistic", source=self.source, color="color", size=10, line_color="white"
        )
        _hover(fig, points, frames.tcal_tooltips(discrete))
        self.figure, self.discrete = fig, discrete
        self.pane.object = fig

    def draw(self) -> None:
        entry = self.store.tcal
        if entry.options is None:
            return
        # the caption depends on the target asked for as well (top-k is tested on the full vector): the
        # same result under another target gets its own caption
        target = (self.store.inputs or (None, entry.options))[1].target
        changed = self._changed("tcal")
        if not changed and target == self.target:
            return
        self.target = target
        result = entry.result
        if result is None and entry.pending and self.shown and redecision_of(entry.key, self.shown[0]):
            self._draw_redeciding(entry)
            return
        self.shown = None if result is None else (entry.key, result)
        frame = frames.tcal_frame(result)
        if frame["discrete"] != self.discrete:
            self._build(frame["discrete"])
        self.figure.xaxis.axis_label = labels.tcal_xlabel(frame["discrete"], result)
        _set(self.source, frame["table"])
        _fit(self.figure.x_range, frame["xlim"], drawn=result is not None)
        _fit(self.figure.y_range, frame["ylim"], drawn=result is not None)
        title, _ = text.tcal_verdict(result, method=False)
        self.figure.title.text = title if result is not None else (entry.pending or title)
        note = text.tcal_view_note(result, target=target)
        if frame["hidden"]:
            note += "; " + text.tcal_hidden_note(frame["hidden"], frame["hidden_rejected"])
        if entry.pending:
            running = f" — <i>{html.escape(text.running_note(entry.options.resampling, result))}</i>"
        else:
            running = ""
        # no result (refused input, still computing): no verdict colour
        colour = frames.NEUTRAL if result is None else (
            frames.MISCALIBRATED if result.reject else frames.CALIBRATED)
        _text(self.note, f"<b style='color:{colour}'>{html.escape(note)}{running}</b>" + _error_text(entry))

    def _draw_redeciding(self, entry) -> None:
        """A new α whose test re-decides the one drawn (the same statistics, other critical values and
        decisions) in a background job, with no stand-in to show meanwhile: the figure keeps the test drawn
        until the job's result replaces it.  Emptied, its source and both axes would be sent twice — empty,
        then all over again with the same scales and statistics — and the figure would flash empty.  The
        title and the caption say what runs."""
        self.figure.title.text = entry.pending
        running = text.running_note(entry.options.resampling, self.shown[1], alpha=entry.options.alpha)
        _text(self.note, f"<b style='color:{frames.NEUTRAL}'>{html.escape(running)}</b>" + _error_text(entry))


class ClassicalView(_View):
    """The classical tests beside T-Cal (Spiegelhalter, Hosmer–Lemeshow, Cox, Kolmogorov–Smirnov, Kuiper)
    as a compact table — statistic, p-value, decision at the α stated in the caption, what each detects —
    under a caption with the MCE and ACE; shown in the T-Cal card's ``extra``.  The decisions follow the α
    control from the stored p-values (the slot's result does not depend on α); a change of n or of the
    target brings new tests.  Caption and table are plain Bokeh models in one pane, updated in place."""

    slots = ("classical", "inputs")
    #: column → (title, width in px): four columns, 385 px, that fit a card at 1280 px ("fit_columns"
    #: autosizing throws in Bokeh 3.9.2's browser code, which stops every later patch); what each test
    #: detects is the test name's tooltip (as a fifth column it was cut at 1280 px).  The
    #: titles never change: the caption above the table states α, and a retitled column makes the browser
    #: rebuild the whole table on every α change
    COLUMNS = {"test_cell": ("test", 140), "statistic": ("statistic", 72), "pvalue": ("p-value", 68),
               "decision": ("decision", 105)}
    #: the source's columns: the shown ones (the test's name as HTML with its tooltip), its name as text
    #: and what it detects
    FIELDS = (*COLUMNS, "test", "detects")

    def __init__(self, store):
        columns = [TableColumn(field=k, title=t, width=w) for k, (t, w) in self.COLUMNS.items()]
        colour = f"<%= value == 'rejects' ? '{frames.MISCALIBRATED}' : '{frames.CALIBRATED}' %>"
        decision = f'<span style="color:{colour}"><%= value %></span>'
        columns[3].formatter = HTMLTemplateFormatter(template=decision)
        columns[0].formatter = HTMLTemplateFormatter(template="<%= value %>")
        self.table = redraws_with_its_rows(DataTable(
            source=ColumnDataSource({k: [] for k in self.FIELDS}), columns=columns, index_position=None,
            height=160, sizing_mode="stretch_width", autosize_mode="none", name="classical_tests",
            reorderable=False,  # (reordering needs jquery-ui, which the page does not load)
        ))
        self.caption = Div(text="", sizing_mode="stretch_width", styles={"font-size": "12px"},
                           name="classical_caption")
        self.panel = pn.pane.Bokeh(column(self.caption, self.table, sizing_mode="stretch_width"),
                                   sizing_mode="stretch_width", margin=(0, 10))
        super().__init__(store)

    def _caption(self, text: str) -> None:
        if self.caption.text != text:
            self.caption.text = text

    def draw(self) -> None:
        entry, inputs = self.store.classical, self.store.inputs
        if entry.options is None or inputs is None:
            return
        tests = entry.result
        if tests is None and entry.pending:
            # computed in the background only on the served page's first load (and on Dask, which refuses
            # it at once): nothing to say until it arrives.  (A "running" caption sent from that first
            # update could reach the browser after the result's caption and stay.)
            return
        alpha = inputs[1].alpha
        if tests is None:
            _set_rows(self.table, {k: [] for k in self.FIELDS})
            self._caption("Other tests: not computed" + _error_text(entry))
            return
        rows = frames.classical_columns(tests, alpha=alpha)
        rows["test_cell"] = [
            f'<span title="{html.escape(d, quote=True)}" style="cursor:help">{html.escape(t)}</span>'
            for t, d in zip(rows["test"], rows["detects"], strict=True)]
        _set_rows(self.table, rows)
        self._caption(f"<b>Other tests</b> {html.escape(text.classical_caption(tests, alpha=alpha))}"
                      " <small>(hover a test's name: what it detects)</small>")


# -- 3. ECE interval -----------------------------------------------------------------------------------


class IntervalView(_View):
    """The ℓ2-ECE with the asymptotic interval and, when computed, the percentile bootstrap's."""

    slots = ("interval", "bootstrap")

    def __init__(self, store):
        # a title from the start: a figure first drawn without one is not relaid out when it gets one
        fig = _figure(LOW_HEIGHT - 20, title="computing the interval…", x_range=Range1d(0, 0.1),
                      y_range=Range1d(-0.6, 1.6))
        fig.xaxis.axis_label = "ℓ2 expected calibration error"
        frame = frames.interval_frame(None, None)
        fig.yaxis.ticker = FixedTicker(ticks=list(frame["table"]["row"]))
        fig.yaxis.major_label_overrides = {
            float(r): m for r, m in zip(frame["table"]["row"], frame["table"]["method"], strict=True)
        }
        fig.add_layout(Span(location=0, dimension="height", line_color=frames.NEUTRAL, line_width=1))
        self.source = ColumnDataSource(frame["table"])
        _hover(fig, interval_glyphs(fig, self.source), frames.INTERVAL_TOOLTIPS)
        self.figure = fig
        self.pane = pn.pane.Bokeh(fig, height=LOW_HEIGHT, sizing_mode="stretch_width", min_width=320)
        self.note = Text()
        self.panel = card(card_title("interval"), self.pane, self.note, view="interval")
        super().__init__(store)

    def draw(self) -> None:
        entry, boot = self.store.interval, self.store.bootstrap
        changed = self._changed("interval") | self._changed("bootstrap")
        if entry.options is None or not changed:
            return
        interval = entry.result
        frame = frames.interval_frame(interval, boot.result)
        _set(self.source, frame["table"])
        _fit(self.figure.x_range, frame["xlim"], drawn=interval is not None or boot.result is not None)
        if interval is not None:
            level = 100 * float(interval.level)
            bins = text.bins_phrase(interval.n_bins, interval.target, interval.n_classes)
            # the title keeps the bins per axis; the simplex cells of the full target go to the caption (a
            # title with both was cut at 1280 px)
            short, _, cells = bins.partition(", ")
            title = f"{level:.0f}% intervals · {short}"
            self.figure.title.text = title + (" · bootstrap…" if boot.pending else "")
            lead = f"{bins.capitalize()}. " if cells else ""
        else:
            self.figure.title.text = text.interval_title(None) + (" · computing…" if entry.pending else "")
            lead = ""
        _text(self.note, html.escape(lead + text.interval_caption(interval)) + _error_text(entry, boot))


# -- 4. distance ---------------------------------------------------------------------------------------


class DistanceView(_View):
    """Every distance-to-calibration measure and the dCE interval they imply."""

    slots = ("distance", "inputs")

    def __init__(self, store):
        frame = frames.distance_frame(None)
        fig = _figure(LOW_HEIGHT - 20, title="computing the distance bounds…",
                      x_range=Range1d(*frame["xlim"]), y_range=Range1d(*frame["ylim"]))
        fig.xaxis.axis_label = "calibration error"
        fig.yaxis.ticker = FixedTicker(ticks=[y for y, _ in frame["yticks"]])
        fig.yaxis.major_label_overrides = {float(y): name for y, name in frame["yticks"]}
        self.source = ColumnDataSource(self._stems(frame["table"]))
        self.band = ColumnDataSource(frame["band"])
        fig.segment(
            x0="zero",
            y0="measure_row",
            x1="value",
            y1="measure_row",
            source=self.source,
            color=frames.HIST,
            line_width=2,
        )
        pts = fig.scatter(
            "value", "measure_row", source=self.source, color=frames.ACCENT, size=10, line_color="white"
        )
        seg = fig.segment(
            x0="v0", y0="r0", x1="v1", y1="r1", source=self.band, color="color", line_width=8, alpha=0.75
        )
        _hover(fig, pts, frames.DISTANCE_TOOLTIPS)
        _hover(fig, seg, frames.DISTANCE_BAND_TOOLTIPS)
        self.figure = fig
        self.pane = pn.pane.Bokeh(fig, height=LOW_HEIGHT, sizing_mode="stretch_width", min_width=320)
        self.note = Text()
        self.panel = card(card_title("distance"), self.pane, self.note, view="distance")
        super().__init__(store)

    @staticmethod
    def _stems(table: dict) -> dict:
        return {**table, "zero": np.zeros(len(table["value"]))}

    def draw(self) -> None:
        entry = self.store.distance
        if entry.options is None:
            return
        if self._changed("distance"):
            self._draw_figure(entry)
        bounds = entry.result[0] if entry.result is not None else None
        note = "Computing…" if entry.pending else html.escape(text.distance_caption(bounds))
        data, options = self.store.inputs or (entry.data, entry.options)
        target = resolve_target(data, options)
        if not data.is_binary and target in ("topk", "full"):
            note += " (The distance family is defined for scalar predictions: shown for the top-1 reduction"
            note += f" of the {target} target.)"
        _text(self.note, note + _error_text(entry))

    def _draw_figure(self, entry) -> None:
        bounds = entry.result[0] if entry.result is not None else None
        frame = frames.distance_frame(bounds)
        _set(self.source, self._stems(frame["table"]))
        _set(self.band, frame["band"])
        _fit(self.figure.x_range, frame["xlim"], drawn=bounds is not None)
        title = text.distance_title(bounds)
        if title is None:
            title = "computing the distance bounds…" if entry.pending else text.DISTANCE_MISSING
        self.figure.title.text = title


# -- views drawn as a table ----------------------------------------------------------------------------


class TableView(_View):
    """The card of a view drawn as a table (its registry ``View.frame``): its registry title and
    explanation, its columns in a compact ``DataTable`` and its caption (``View.caption``).  One class for
    every such view: a new table view needs its frame and caption, no card of its own."""

    def __init__(self, store, name: str):
        record = view(name)
        self.name, self.slot, self.label = name, record.slot, record.label
        self.slots = (record.slot,)
        self.frame, self.caption_of = record.frame, record.caption
        self.table = redraws_with_its_rows(DataTable(
            source=ColumnDataSource({}), columns=[], index_position=None, height=130,
            sizing_mode="stretch_width", name=f"{name}_table", reorderable=False))
        self.caption = Div(text="", sizing_mode="stretch_width", styles={"font-size": "12px"},
                           name=f"{name}_caption")
        self.pane = pn.pane.Bokeh(column(self.table, self.caption, sizing_mode="stretch_width"),
                                  sizing_mode="stretch_width", margin=(0, 10))
        self.panel = card(card_title(name), self.pane, view=name if record.explanation else None)
        super().__init__(store)

    def draw(self) -> None:
        entry = getattr(self.store, self.slot)
        if not self._changed(self.slot) or entry.options is None:
            return
        if entry.result is None:
            self.caption.text = (f"computing the {html.escape(self.label)}…" if entry.pending
                                 else "not computed" + _error_text(entry))
            return
        columns = self.frame(entry.result)
        if [c.field for c in self.table.columns] != list(columns):
            self.table.columns = [TableColumn(field=k, title=k) for k in columns]
        _set_rows(self.table, columns)
        self.caption.text = html.escape(self.caption_of(entry.result))


# -- the overall verdict -------------------------------------------------------------------------------


class VerdictView(_View):
    """One line above the cards: the overall verdict (:func:`calviz.present.verdict.overall_verdict`) and,
    when the methods disagree, why — the same text as the report's and ``calviz check``'s."""

    slots = ("tcal", "interval", "bootstrap", "classical", "inputs")

    def __init__(self, store):
        self.text = Text(css_classes=["calviz-verdict"], styles={"font-size": "13px"}, margin=(0, 10, 4, 10))
        self.panel = self.text.pane
        super().__init__(store)

    def draw(self) -> None:
        store = self.store
        if store.tcal.options is None or store.inputs is None:
            return
        if any(getattr(store, slot).pending and getattr(store, slot).result is None
               for slot in ("tcal", "interval")):
            self.text.object = ""  # (a verdict before T-Cal and the interval would change under the reader)
            return
        verdict, reasons = overall_verdict(
            tcal=store.tcal.result, interval=store.interval.result, bootstrap=store.bootstrap.result,
            classical=store.classical.result, alpha=store.inputs[1].alpha)
        head, _, rest = verdict.partition(": ")
        colour = {"Miscalibrated": frames.MISCALIBRATED,
                  "No evidence of miscalibration": frames.CALIBRATED}.get(head, frames.NEUTRAL)
        shown = f"<b style='color:{colour}'>{html.escape(head)}</b>"
        shown += f": {html.escape(rest)}" if rest else ""
        if reasons:
            items = "".join(f"<li>{html.escape(r)}</li>" for r in reasons)
            shown += (f" <details style='display:inline'><summary style='display:inline;cursor:pointer;"
                      f"color:{frames.ACCENT}'>why the methods disagree</summary><ul style='margin:2px 0'>"
                      f"{items}</ul></details>")
        self.text.object = shown


# -- status --------------------------------------------------------------------------------------------


def _weights_note(data, options) -> str:
    """The status line's note on sample weights: the views that ignore them ("" for unweighted data)."""
    if getattr(data, "weights", None) is None:
        return ""
    from calviz.analysis.views import unweighted_views

    return text.weights_note("", unweighted_views(data, options))


class StatusView(_View):
    """The status line (n, K, target, time of the last update), the running jobs and the alert."""

    slots = ("jobs", "timings")

    def __init__(self, store, controls):
        self.controls = controls
        self.text = Text(css_classes=["calviz-status"])
        self.progress = pn.indicators.Progress(
            active=False, visible=False, width=160, height=14, margin=(8, 10), bar_color="info"
        )
        self.progress_text = Text(css_classes=["calviz-jobs"])  # the running jobs; empty when idle
        self.alert = alert(margin=(4, 10))
        # the jobs on a line of their own and of fixed height, under the status text: a change that starts
        # or ends jobs never moves the rest of the page, and a long list of jobs wraps instead of
        # squeezing the status text
        self.panel = pn.Column(
            self.text,
            pn.Row(self.progress, self.progress_text, height=36, sizing_mode="stretch_width"),
            self.alert,
            sizing_mode="stretch_width",
        )
        self.data = None
        self.kernels = ""  # how the compiled kernels became ready (a served page's first update), in words
        super().__init__(store)

    def draw(self) -> None:
        jobs = [label for label in self.store.jobs.values() if label]
        self.progress_text.object = "computing: " + html.escape(", ".join(jobs)) + "…" if jobs else ""
        self.progress.active = self.progress.visible = bool(jobs)
        data = self.data
        if data is None:
            return
        summary, details = progress.compute_times(self.store.timings)
        if summary:  # the total and the slowest computation; every computation in the tooltip
            total, _, rest = summary.partition(", ")
            took = (f"<span title='{html.escape(details, quote=True)}'><b>{html.escape(total)}</b>"
                    + (f" <small>({html.escape(rest)})</small>" if rest else "") + "</span>")
        else:  # nothing computed yet for this change
            took = "<b>computing</b>" if jobs else "<b>from the cache</b>"
        options = self.controls.options(data.n)
        where = f" · on <b>Dask</b> ({html.escape(data.scheduler)})" if is_distributed(data) else ""
        self.text.object = (
            f"<b>n</b> = {min(self.controls.n, data.n):,} of {data.n:,} · <b>K</b> = {data.n_classes}{where}"
            f" · target <strong>{resolve_target(data, options)}</strong>"
            f" · last update {took}"
            + (f" · <small>{html.escape(self.kernels)}</small>" if self.kernels else "")
            + (f" · <small>{html.escape(note)}</small>" if (note := _weights_note(data, options)) else "")
        )

    def show_error(self, message: str, *, refused: str = "Input refused.",
                   kept: str = "The previous dataset stays loaded.") -> None:
        message = message.rstrip()
        end = "" if message.endswith((".", "!", "?")) else "."
        self.alert.object = f"<strong>{refused}</strong> {html.escape(message)}{end} {kept}"
        self.alert.visible = True
        self.draw()  # ends a "preparing …" line

    def clear_error(self) -> None:
        self.alert.visible = False
        self.alert.object = ""
        self.draw()

    def show_preparing(self, text: str) -> None:
        self.progress_text.object = html.escape(text)  # (a Dask path may hold any character)
        self.progress.active = self.progress.visible = True
