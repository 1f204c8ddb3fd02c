"""The dashboard's figures: plain Bokeh figures and the glyphs the views draw on them (bars, whiskers, the
diagonal, intervals, a histogram of counts).  The views build them once and then only replace their data
(:mod:`calviz.app.views`); the comparison card and the over-time card use the same ones."""

from __future__ import annotations

from bokeh.models import BasicTickFormatter, ColumnDataSource, HoverTool, NumeralTickFormatter, Range1d
from bokeh.plotting import figure

from calviz.present import frames

_TOOLS = "pan,wheel_zoom,box_zoom,reset,save"


def _figure(height: int, *, title: str = "", small: bool = False, **kwargs):
    fig = figure(
        height=height,
        sizing_mode="stretch_width",
        min_width=110 if small else 300,
        tools=_TOOLS,
        toolbar_location=None if small else "right",
        title=title,
        **kwargs,
    )
    fig.title.text_font_size = "9pt" if small else "11pt"
    for axis in (fig.xaxis, fig.yaxis):
        if type(axis[0].formatter) is BasicTickFormatter:  # linear axes: never "7.000e-3"
            axis[0].formatter = frames.readable_ticks()
        axis.axis_label_text_font_size = "10pt"
        axis.major_label_text_font_size = "8pt" if small else "9pt"
    return fig


def _count_figure(height: int, *, x_range, ticks: int = 3):
    """A histogram's figure: the count per bin on the y-axis, its labels compact ("2 k", "1.5 m") and written
    along the axis.  The counts change with the target, the class and the subsample; written across the
    axis, a label of another width resized the axis, and BokehJS then laid the whole figure out again before
    it painted the change (40-60 ms of a change of target at 10⁷ rows).  Along the axis, a label takes the
    height of its text, the same for every label set: BokehJS measures labels of digits alone by the
    digits' height and any other by the font's ascent and descent, and numbro's "0.[0] a" puts a space in
    every label ("0 ", "5 ", "2 k")."""
    fig = _figure(height, x_range=x_range)
    fig.yaxis.axis_label = "count"
    fig.yaxis.ticker.desired_num_ticks = ticks
    fig.yaxis.formatter = NumeralTickFormatter(format="0.[0] a")
    fig.yaxis.major_label_orientation = "vertical"
    return fig


def _hover(fig, renderer, tooltips) -> None:
    fig.add_tools(HoverTool(renderers=[renderer], tooltips=list(tooltips)))


def interval_glyphs(fig, source: ColumnDataSource):
    """One interval per row of ``source`` (low, high, estimate, row, color): a bar with the point estimate
    as an open circle; returns the bars' renderer (for the hover tool)."""
    segs = fig.segment(x0="low", y0="row", x1="high", y1="row", source=source, color="color", line_width=6,
                       alpha=0.7)
    fig.scatter("estimate", "row", source=source, fill_color="white", line_color="color", size=11,
                line_width=2)
    return segs


def _diagram_axes(height: int, **kwargs):
    """A reliability diagram's frame: observed frequency against predicted probability on [0, 1]²."""
    return _figure(height, y_range=Range1d(-0.02, 1.02), **kwargs)


def _bars(fig, source: ColumnDataSource, **legend) -> None:
    """A diagram's bars (teal / crimson per bin), the diagonal and the per-bin whiskers."""
    quads = fig.quad(
        left="x0",
        right="x1",
        bottom="y0",
        top="y1",
        source=source,
        fill_color="color",
        line_color="white",
        fill_alpha=0.55,
        line_width=1,
    )
    _hover(fig, quads, frames.BIN_TOOLTIPS)
    _diagonal(fig, **legend)
    _whiskers(fig, source, frames.NEUTRAL)


def _legend_above(fig, **style) -> None:
    """The figure's legend in one row above the axes, where it never covers bars, band or lines; entries
    14 px apart so that labels such as "rank 1 (top-1)" and "rank 2" do not run together."""
    fig.legend.update(orientation="horizontal", label_text_font_size="8pt", spacing=14, **style)
    fig.add_layout(fig.legend[0], "above")


def _diagonal(fig, **legend) -> None:
    fig.line([0, 1], [0, 1], color=frames.NEUTRAL, line_dash="dashed", line_width=1.5, **legend)


def _whiskers(fig, source: ColumnDataSource, color: str, **kwargs) -> None:
    fig.segment(
        x0="confidence",
        y0="low",
        x1="confidence",
        y1="high",
        source=source,
        color=color,
        line_width=1.2,
        **kwargs,
    )
