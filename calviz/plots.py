"""Pure functions: engine result objects → HoloViews elements (Bokeh backend).

No widgets, no state, no statistics: every number drawn here was computed by the engine (through
``calviz.analysis``).  Each function accepts ``None`` for an optional input and returns a readable
placeholder when its main result is missing, so a dashboard or report never breaks because one engine
is absent.

Colours are shared by all views: :data:`CALIBRATED` (teal) for "consistent with calibration / not
rejected", :data:`MISCALIBRATED` (crimson) for "miscalibrated / rejected", :data:`ESTIMATE` (dark slate)
for a size that is not a test (the implied interval for the distance to calibration, which describes
the sample and is above 0 even for a calibrated model).
"""

from __future__ import annotations

import contextlib
import math
import sys

import numpy as np

from calviz._lazy import LazyModule
from calviz._results import format_pvalue, pvalue_phrase
from calviz.analysis.views import REGISTRY
from calviz.targets import simplex_cells

# the report's figures: the dashboard draws plain Bokeh figures and needs only this module's tables, so a
# served page does not import HoloViews (and pandas) before it is sent
hv = LazyModule("holoviews")

__all__ = [
    "CALIBRATED",
    "MISCALIBRATED",
    "NEUTRAL",
    "placeholder",
    "reliability_plot",
    "reliability_view",
    "reliability_caption",
    "rank_reliability_elements",
    "class_reliability_elements",
    "RANK_COLOURS",
    "tcal_plot",
    "tcal_caption",
    "tcal_shown_scales",
    "tcal_verdict",
    "interval_plot",
    "interval_caption",
    "distance_plot",
    "distance_caption",
]

CALIBRATED = "#0e9384"  # teal
MISCALIBRATED = "#c8102e"  # crimson
NEUTRAL = "#5b6470"  # slate: diagonal, reference lines
ACCENT = "#3a6fb0"  # blue: smooth curve, bootstrap
HIST = "#9aa5b1"
ESTIMATE = "#34495e"  # dark slate: a size, not a test decision


def readable_ticks():
    """A Bokeh tick formatter for linear axes that never switches to scientific notation.

    "0.007", not "7.000e-3"; a tick at a rounding residue such as 1e-18 would otherwise turn every label
    into "0.000e+0".

    Returns
    -------
    bokeh.models.BasicTickFormatter
        With ``use_scientific=False``.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.readable_ticks().use_scientific
    False
    """
    from bokeh.models import BasicTickFormatter

    return BasicTickFormatter(use_scientific=False)

_FONT = {"title": "11pt", "labels": "10pt", "xticks": "9pt", "yticks": "9pt"}
_TOOLS = ["hover"]


_BACKEND_LOADED = False
#: whether BokehJS has been sent to this notebook kernel's page (by a display, not by a report)
_NOTEBOOK_SHOWN = False
#: > 0 while figures are built for a file only (:func:`no_notebook_output`)
_QUIET = 0


def _notebook_shell():
    """The IPython shell of a notebook kernel, or None (a served page, a script, a terminal IPython)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell if getattr(shell, "kernel", None) is not None else None


def _ensure_backend() -> None:
    """Load HoloViews' Bokeh backend once per process.  Checking ``hv.Store.renderers`` is not enough:
    importing ``holoviews.plotting.bokeh`` (Panel does) registers the renderer but not the ``hv.opts``
    builders, which only ``hv.extension`` sets up.  In a notebook, ``hv.extension`` also prints BokehJS
    (about 3 MB) into the cell: only a cell that will display plots gets it, not one that writes a report
    (:func:`no_notebook_output`)."""
    global _BACKEND_LOADED, _NOTEBOOK_SHOWN
    shell = _notebook_shell()
    if _BACKEND_LOADED and (shell is None or _NOTEBOOK_SHOWN or _QUIET):
        return
    if shell is not None and _QUIET:
        from IPython.utils.capture import capture_output

        with capture_output(stdout=False, stderr=False, display=True):
            hv.extension("bokeh", logo=False, inline=True)
    else:
        hv.extension("bokeh", logo=False, inline=True)  # in a notebook: BokehJS inline, no CDN
        if shell is not None:
            _show_offline_in_notebooks(shell)
            _NOTEBOOK_SHOWN = True
    _BACKEND_LOADED = True


@contextlib.contextmanager
def no_notebook_output():
    """Build figures for a file (a report) without printing BokehJS into a notebook cell.

    In a notebook, loading HoloViews' Bokeh backend prints BokehJS (about 3 MB) into the cell; inside this
    context it prints nothing, and the first plot displayed afterwards sends it to the page.  Outside a
    notebook it changes nothing.

    Returns
    -------
    contextlib.AbstractContextManager
        The context (it yields None).

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> with plots.no_notebook_output():
    ...     figure = plots.reliability_plot(calviz.reliability([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4]))
    >>> type(figure).__name__
    'Layout'
    """
    global _QUIET
    _QUIET += 1
    try:
        yield
    finally:
        _QUIET -= 1


def _show_offline_in_notebooks(shell) -> None:
    """In a notebook kernel, show HoloViews objects through Panel with every stylesheet inline.
    HoloViews' own display builds the Panel models around a plot with stylesheets that point at Panel's
    CDN, which an offline notebook cannot load; Panel's display inlines them when its config says inline."""
    import panel as pn

    pn.config.inline = True
    shell.display_formatter.mimebundle_formatter.for_type(
        hv.core.Dimensioned,
        lambda obj, include=None, exclude=None: pn.panel(obj)._repr_mimebundle_(include, exclude),
    )


#: view name → (what the view shows, in one plain sentence; the mathematics behind it, for a tooltip or a
#: "more" link): the registry's ``View.explanation``.  The app's cards and the report's sections read these.
VIEW_EXPLANATIONS = {record.name: record.explanation for record in REGISTRY if record.explanation is not None}


def _arr(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64).ravel()


def _fmt(x) -> str:
    if x is None:
        return "—"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e4):
        return f"{x:.2e}"
    return f"{x:.4f}"


def _display_curve(x: np.ndarray, y: np.ndarray, max_points: int = 2000):
    """A piecewise-linear function given at n sorted points, evaluated on at most ``max_points`` evenly
    spaced points for drawing (the witness is 1-Lipschitz, so the drawing error is at most the spacing;
    sending 10⁵ points to the browser on every update would dominate the dashboard's latency)."""
    if x.size <= max_points:
        return x, y
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    grid = np.linspace(x[0], x[-1], max_points)
    return grid, np.interp(grid, x, y)


def placeholder(message: str, title: str = "", *, height: int = 300) -> hv.Element:
    """An empty plot carrying a message (engine not available, input refused, still computing).

    Parameters
    ----------
    message : str
        The text shown in the middle of the plot.
    title : str, default ""
        The plot's title.
    height : int, default 300
        Height in pixels.

    Returns
    -------
    holoviews.Element
        A Text element on an empty frame.

    Examples
    --------
    >>> from calviz import plots
    >>> type(plots.placeholder("computing…", "T-Cal")).__name__
    'Text'
    """
    _ensure_backend()
    text = hv.Text(0.5, 0.5, message).opts(text_font_size="10pt", text_color=NEUTRAL)
    return text.opts(
        title=title,
        xaxis=None,
        yaxis=None,
        height=height,
        responsive=True,
        xlim=(0, 1),
        ylim=(0, 1),
        toolbar=None,
        fontsize=_FONT,
    )


def bins(reliability) -> dict:
    """Per-bin arrays of one reliability diagram, with the non-empty selection and diagonal coverage.

    Whether each bin's interval covers its mean confidence (i.e. the diagonal) decides its colour.

    Parameters
    ----------
    reliability : ReliabilityData or None
        From :func:`calviz.reliability` (None: no bins).

    Returns
    -------
    dict
        Arrays by name: ``edges``, ``left``, ``right``, ``counts``, ``conf`` (mean confidence), ``freq``,
        ``low``, ``high``, ``sel`` (non-empty bins) and ``covered`` (interval covers the diagonal).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> b = plots.bins(rel)
    >>> int(b["sel"].sum()), int(b["covered"][b["sel"]].sum())
    (10, 6)
    """
    empty = np.zeros(0)
    if reliability is not None:
        edges = _arr(reliability.edges)
        counts = _arr(reliability.counts)
        conf = _arr(reliability.mean_confidence)
        freq = _arr(reliability.observed_frequency)
        low, high = (_arr(v) for v in reliability.confidence_interval())
    else:
        edges, counts, conf, freq, low, high = np.zeros(1), empty, empty, empty, empty, empty
    m = counts.shape[0]
    sel = counts > 0
    with np.errstate(invalid="ignore"):
        covered = (low <= conf + 1e-12) & (conf <= high + 1e-12)
    return {
        "edges": edges,
        "counts": counts,
        "conf": conf,
        "freq": freq,
        "low": low,
        "high": high,
        "left": edges[:m],
        "right": edges[1 : m + 1],
        "sel": sel,
        "covered": covered,
    }


def _frequency_axes(title: str, height: int, **legend):
    """Options of a reliability diagram's main panel: observed frequency against confidence on [0, 1]²
    (the x label sits under the histogram panel below it), with a legend placed by ``legend``."""
    return hv.opts.Overlay(title=title, xlim=(0, 1), ylim=(-0.02, 1.02), xlabel="",
                           ylabel="observed frequency", height=height, responsive=True, show_legend=True,
                           fontsize=_FONT, min_width=300, **legend)


#: a legend in rows above the axes: small labels with room between entries (so they never run together)
_LEGEND_OPTS = {"label_text_font_size": "8pt", "spacing": 14, "padding": 2, "margin": 0,
                "label_height": 12, "glyph_height": 12, "glyph_width": 18, "label_standoff": 4}


#: hover lines of one reliability bin (bars and rank markers carry these columns)
BIN_TOOLTIPS = (
    ("bin", "[@x0{0.000}, @x1{0.000})"),
    ("count", "@count"),
    ("mean predicted probability", "@confidence{0.0000}"),  # (a class panel: of that class)
    ("observed frequency", "@frequency{0.0000}"),
    ("interval", "[@low{0.000}, @high{0.000}]"),
    ("", "@status"),
)


def bar_table(b: dict) -> dict:
    """Columns of one reliability diagram's non-empty bins, for the bars and their hover.

    Bar corners, mean confidence, frequency, per-bin interval, count, colour (teal: the interval covers
    the diagonal) and a hover line saying so.

    Parameters
    ----------
    b : dict
        From :func:`bins`.

    Returns
    -------
    dict
        Column name → array, one row per non-empty bin.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> table = plots.bar_table(plots.bins(rel))
    >>> len(table["count"]), sorted(table)
    (10, ['color', 'confidence', 'count', 'frequency', 'high', 'low', 'status', 'x0', 'x1', 'y0', 'y1'])
    """
    sel, covered = b["sel"], b["covered"]
    conf, freq, low, high = b["conf"], b["freq"], b["low"], b["high"]
    color = np.where(covered, CALIBRATED, MISCALIBRATED)
    status = np.where(covered, "interval covers confidence", "interval misses confidence")
    return {
        "x0": b["left"][sel],
        "y0": np.zeros(int(sel.sum())),
        "x1": b["right"][sel],
        "y1": freq[sel],
        "confidence": conf[sel],
        "frequency": freq[sel],
        "low": low[sel],
        "high": high[sel],
        "count": b["counts"][sel].astype(np.int64),
        "color": color[sel],
        "status": status[sel],
    }


def hist_table(b: dict) -> dict:
    """Columns of the confidence histogram on a diagram's bins (every bin, empty ones too).

    Parameters
    ----------
    b : dict
        From :func:`bins`.

    Returns
    -------
    dict
        Column name → array, one row per bin.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> sorted(plots.hist_table(plots.bins(rel)))
    ['c0', 'c1', 'count', 'x0', 'x1']
    """
    m = b["counts"].shape[0]
    return {"x0": b["left"], "c0": np.zeros(m), "x1": b["right"], "c1": b["counts"],
            "count": b["counts"].astype(np.int64)}


def _bar_layers(b: dict, *, size: int = 5, name: str | None = None):
    """Bars (coloured by whether the interval covers the diagonal), the diagonal, the per-bin whiskers
    and the bin markers of one reliability diagram (``name``: a first hover line, e.g. "class 3")."""
    from bokeh.models import HoverTool

    sel = b["sel"]
    table = bar_table(b)
    conf, freq, low, high, color = (table[k] for k in ("confidence", "frequency", "low", "high", "color"))
    hover = HoverTool(tooltips=list(BIN_TOOLTIPS))
    vdims = ["confidence", "frequency", "low", "high", "count", "color", "status"]
    if name is not None:
        table["panel"] = np.full(int(sel.sum()), name, dtype=object)
        vdims.append("panel")
        hover.tooltips = [("", "@panel"), *hover.tooltips]
    bars = hv.Rectangles(table, kdims=["x0", "y0", "x1", "y1"], vdims=vdims).opts(
        color="color", line_color="white", alpha=0.55, tools=[hover], line_width=1
    )
    diagonal = hv.Curve(([0.0, 1.0], [0.0, 1.0]), "x", "y", label="perfect calibration").opts(
        color=NEUTRAL, line_dash="dashed", line_width=1.5
    )
    errs = hv.ErrorBars(
        (conf, freq, freq - low, high - freq),
        kdims=["confidence"],
        vdims=["frequency", "neg", "pos"],
    ).opts(color=NEUTRAL, line_width=1.2, lower_head=None, upper_head=None)
    marks = hv.Scatter((conf, freq, color), "confidence", ["frequency", "color"]).opts(
        color="color", size=size, line_color="white"
    )
    return bars, diagonal, errs, marks


# -- 1. reliability diagram -------------------------------------------------------------------------


#: hover lines of a confidence-histogram bar
HIST_TOOLTIPS = (("bin", "[@x0{0.000}, @x1{0.000})"), ("count", "@count"))


def scalar_reliability_title(reliability) -> str:
    """Default title of a scalar reliability diagram: non-empty bins, n and the bins that miss the diagonal.

    Parameters
    ----------
    reliability : ReliabilityData
        From :func:`calviz.reliability`.

    Returns
    -------
    str
        The title.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> plots.scalar_reliability_title(rel)
    '10 non-empty of 10 bins, n = 500, 4 miss the diagonal'
    """
    if reliability is None:
        return "reliability data not available"
    b = bins(reliability)
    sel = b["sel"]
    n_missed = int((~b["covered"] & sel).sum())
    return (f"{int(sel.sum())} non-empty of {b['counts'].shape[0]} bins, n = {int(b['counts'].sum()):,}, "
            f"{n_missed} miss the diagonal")


def smooth_table(smooth) -> dict:
    """Columns of the smooth reliability curve and its band, for drawing.

    ``x``, ``y`` (the curve) and ``low``/``high`` (its band; the curve itself while the band is not
    computed).  The curve is left out (NaN) where the density of predictions is below 1 % of its
    maximum: far from the data a kernel regression extrapolates.

    Parameters
    ----------
    smooth : SmoothReliability or None
        From :func:`calviz.smooth_reliability`.

    Returns
    -------
    dict
        Column name → array; empty for ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> smooth = calviz.smooth_reliability(y, p, n_resamples=0, grid_size=101)
    >>> sorted(plots.smooth_table(smooth)), len(plots.smooth_table(smooth)["x"])
    (['high', 'low', 'x', 'y'], 101)
    """
    empty = np.zeros(0)
    if smooth is None:
        return {"x": empty, "y": empty, "low": empty, "high": empty}
    grid = _arr(smooth.grid)
    curve = _arr(smooth.curve)
    band_low, band_high = smooth.confidence_interval()
    s_low = _arr(band_low) if band_low is not None else curve
    s_high = _arr(band_high) if band_high is not None else curve
    density = smooth.density
    if density is not None and _arr(density).size == grid.size:
        density = _arr(density)
        sparse = density < 0.01 * np.nanmax(density)
        curve, s_low, s_high = (np.where(sparse, np.nan, a) for a in (curve, s_low, s_high))
    return {"x": grid, "y": curve, "low": s_low, "high": s_high}


def witness_table(witness) -> dict:
    """Columns ``x``, ``w`` of the smCE witness function for drawing (at most 2000 points).

    Parameters
    ----------
    witness : SmCEWitness or None
        From :func:`calviz.smce_witness`.

    Returns
    -------
    dict
        Column name → array; empty for ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> table = plots.witness_table(calviz.smce_witness(y, p))
    >>> sorted(table), len(table["x"]) <= 2000
    (['w', 'x'], True)
    """
    if witness is None:
        return {"x": np.zeros(0), "w": np.zeros(0)}
    wx = _arr(witness.predictions)
    wy = _arr(witness.witness)
    wx, wy = _display_curve(wx, wy)
    return {"x": wx, "w": wy}



def reliability_elements(
    reliability,
    *,
    smooth=None,
    witness=None,
    title: str | None = None,
    xlabel: str = "confidence (predicted probability)",
    height: int = 330,
) -> dict[str, hv.Element]:
    """The three panels of the reliability diagram as elements of a fixed structure.

    Missing inputs give empty layers (never a different element type), so a live view can stream new
    results into the same Bokeh figures (``hv.DynamicMap``) instead of rebuilding them.  See
    :func:`reliability_plot`.

    Parameters
    ----------
    reliability, smooth, witness, title, xlabel, height
        As for :func:`reliability_plot`.

    Returns
    -------
    dict
        ``{"main": Overlay, "hist": Rectangles, "witness": Overlay}``.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> {k: type(v).__name__ for k, v in plots.reliability_elements(rel).items()}
    {'main': 'Overlay', 'hist': 'Rectangles', 'witness': 'Curve'}
    """
    _ensure_backend()
    from bokeh.models import HoverTool

    b = bins(reliability)
    bars, diagonal, errs, marks = _bar_layers(b)
    sm = smooth_table(smooth)
    band = hv.Area((sm["x"], sm["low"], sm["high"]), "x", ["y", "y2"]).opts(
        color=ACCENT, alpha=0.18, line_alpha=0
    )
    smooth_curve = hv.Curve((sm["x"], sm["y"]), "x", "y", label="smooth curve").opts(
        color=ACCENT, line_width=2
    )
    main = (bars * diagonal * errs * marks * band * smooth_curve).opts(
        # legend above the axes, never over bars or band (an under-confident model fills the top left)
        _frequency_axes(title or scalar_reliability_title(reliability), height, legend_position="top",
                        legend_cols=2, legend_opts=_LEGEND_OPTS)
    )
    # distinct y dimension names: the histogram's count axis must not be linked to the frequency axis
    hist = hv.Rectangles(hist_table(b), kdims=["x0", "c0", "x1", "c1"], vdims=["count"]).opts(
        color=HIST,
        line_color="white",
        tools=[HoverTool(tooltips=list(HIST_TOOLTIPS))],
        xlim=(0, 1),
        height=max(90, height // 3),
        responsive=True,
        xlabel="",
        ylabel="count",
        yticks=3,
        title="",
        fontsize=_FONT,
        min_width=300,
        framewise=True,
    )
    wt = witness_table(witness)
    # "x0": the histogram's x dimension, so the panels share their x axis
    wit_panel = hv.Curve((wt["x"], wt["w"]), hv.Dimension("x0", label="prediction v"), "witness").opts(
        color=MISCALIBRATED,
        line_width=1.5,
        tools=[HoverTool(tooltips=[("prediction v", "@x0{0.000}"), ("witness w(v)", "@witness{0.000}")])],
        xlim=(0, 1),
        ylim=(-1.05, 1.05),
        height=max(90, height // 3),
        responsive=True,
        xlabel=xlabel,
        ylabel="w(v)",
        yticks=[-1, 0, 1],
        show_grid=True,
        fontsize=_FONT,
        min_width=300,
    )
    return {"main": main, "hist": hist, "witness": wit_panel}


def reliability_plot(
    reliability,
    *,
    smooth=None,
    witness=None,
    title: str | None = None,
    xlabel: str = "confidence (predicted probability)",
    height: int = 330,
) -> hv.Layout:
    """Reliability diagram: observed frequency against mean predicted probability per bin.

    Bars span each bin; whiskers at the bin's mean confidence show the per-bin interval; bins whose
    interval misses the mean confidence (i.e. the diagonal) are crimson, the others teal.  Below: the
    histogram of confidences on the same bins.  ``smooth`` adds the kernel-smoothed curve and its band;
    ``witness`` adds a panel with the optimal smCE witness w(v) — where it is far from 0 the model is
    miscalibrated.  Panels share the x axis.

    Parameters
    ----------
    reliability : ReliabilityData
        From :func:`calviz.reliability` (bin ``edges``, ``counts``, ``mean_confidence``,
        ``observed_frequency`` and its per-bin interval ``low``/``high``).
    smooth : SmoothReliability, optional
        From :func:`calviz.smooth_reliability`.
    witness : SmCEWitness, optional
        From :func:`calviz.smce_witness`.
    title : str, optional
        Default :func:`scalar_reliability_title`.
    xlabel : str
        The x axis' label.
    height : int, default 330
        Height of the main panel in pixels.

    Returns
    -------
    holoviews.Layout
        The panels, one above the other.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.
    .. [2] J. Błasiok and P. Nakkiran. Smooth ECE: Principled reliability diagrams via kernel smoothing.
       arXiv preprint, 2023.
    .. [3] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> layout = plots.reliability_plot(rel, witness=calviz.smce_witness(y, p))
    >>> type(layout).__name__, len(layout)
    ('Layout', 3)
    """
    parts = reliability_elements(
        reliability, smooth=smooth, witness=witness, title=title, xlabel=xlabel, height=height
    )
    hist = parts["hist"].opts(xlabel=xlabel if witness is None else "")
    panels = [parts["main"], hist] + ([parts["witness"]] if witness is not None else [])
    return hv.Layout(panels).cols(1).opts(hv.opts.Layout(shared_axes=True, merge_tools=True, toolbar="right"))


# -- 1b. reliability of vector targets: one curve per rank (top-k), one panel per class (full) ---------

#: one colour per rank (colour-blind-friendly order; teal and crimson keep their calibrated / rejected
#: meaning elsewhere, so they are not used here); ranks beyond the list reuse it
RANK_COLOURS = (
    "#1f6fb4",  # blue
    "#e69f00",  # orange
    "#8e4fb0",  # purple
    "#6b8e23",  # olive green
    "#d6609c",  # pink
    "#8c564b",  # brown
    "#17a2c8",  # cyan
    "#5b6470",  # slate
    "#b8a000",  # mustard
    "#2c3e91",  # navy
)


def is_multi(reliability) -> bool:
    """Whether a reliability result holds one diagram per rank or per class.

    Parameters
    ----------
    reliability : ReliabilityData or MultiReliability
        A reliability result.

    Returns
    -------
    bool
        True for a ``MultiReliability`` (top-k or full targets).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> plots.is_multi(calviz.reliability(y, p))
    False
    """
    return getattr(reliability, "panels", None) is not None


def rank_colour(r: int) -> str:
    """Colour of rank r (1-based) in the top-k views.

    Parameters
    ----------
    r : int
        The rank.

    Returns
    -------
    str
        A CSS colour.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.rank_colour(1) != plots.rank_colour(2)
    True
    """
    return RANK_COLOURS[(int(r) - 1) % len(RANK_COLOURS)]


RANK_POINT_COLUMNS = ("confidence", "frequency", "x0", "x1", "low", "high", "count", "rank", "status",
                      "color", "outline")
RANK_HIST_COLUMNS = ("x0", "c0", "x1", "c1", "count", "rank", "color")


def rank_tables(multi) -> dict:
    """The drawing data of a top-k reliability view.

    ``points`` (every rank's non-empty bins, :data:`RANK_POINT_COLUMNS`, coloured per rank; ``outline``
    crimson where the bin's interval misses the diagonal), ``bars`` (every rank's histogram,
    :data:`RANK_HIST_COLUMNS`), ``lines`` (per rank: label, colour, x, y), ``n_missed``, ``n_bins``.

    Parameters
    ----------
    multi : MultiReliability
        Of kind ``"rank"`` (:func:`calviz.analysis.compute_reliability` with ``target="topk"``).

    Returns
    -------
    dict
        The tables.

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-perturbed_top2", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="topk", top_k=2))
    >>> tables = plots.rank_tables(multi)
    >>> sorted(tables), [line[0] for line in tables["lines"]]
    (['bars', 'lines', 'n_bins', 'n_missed', 'points'], ['rank 1 (top-1)', 'rank 2'])
    """
    panels = list(multi.panels)
    labels = list(multi.labels or [f"rank {r + 1}" for r in range(len(panels))])
    points, bars, lines = [], [], []
    n_missed = n_bins = 0
    for r, (rel, label) in enumerate(zip(panels, labels, strict=True), start=1):
        b = bins(rel)
        sel, conf, freq = b["sel"], b["conf"], b["freq"]
        colour = rank_colour(r)
        covered = b["covered"][sel]
        n_missed += int((~covered).sum())
        n_bins += int(sel.sum())
        size, m = int(sel.sum()), b["counts"].shape[0]
        points.append({
            "confidence": conf[sel], "frequency": freq[sel], "x0": b["left"][sel], "x1": b["right"][sel],
            "low": b["low"][sel], "high": b["high"][sel], "count": b["counts"][sel].astype(np.int64),
            "rank": np.full(size, label, dtype=object),
            "status": np.where(covered, "interval covers confidence", "interval misses confidence"),
            "color": np.full(size, colour, dtype=object),
            "outline": np.where(covered, "white", MISCALIBRATED).astype(object),
        })
        bars.append({**hist_table(b), "rank": np.full(m, label, dtype=object),
                     "color": np.full(m, colour, dtype=object)})
        lines.append((str(label), colour, conf[sel], freq[sel]))

    def stack(parts, columns):
        return {c: np.concatenate([t[c] for t in parts]) if parts else np.zeros(0) for c in columns}

    return {"points": stack(points, RANK_POINT_COLUMNS), "bars": stack(bars, RANK_HIST_COLUMNS),
            "lines": lines, "n_missed": n_missed, "n_bins": n_bins}


def rank_reliability_title(multi, tables: dict | None = None) -> str:
    """Default title of the top-k view: k, n and how many bins miss the diagonal.

    Parameters
    ----------
    multi : MultiReliability
        Of kind ``"rank"``.
    tables : dict, optional
        :func:`rank_tables` of it, if already computed.

    Returns
    -------
    str
        The title.

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-perturbed_top2", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="topk", top_k=2))
    >>> plots.rank_reliability_title(multi)
    'top-2: one curve per rank · n = 2,000 · 6 of 14 bins miss the diagonal'
    """
    if multi is None:
        return "reliability data not available"
    tables = tables or rank_tables(multi)
    return (f"top-{len(tables['lines'])}: one curve per rank · n = {int(multi.n):,} · "
            f"{tables['n_missed']} of {tables['n_bins']} bins miss the diagonal")


def rank_reliability_elements(
    multi,
    *,
    title: str | None = None,
    xlabel: str = "r-th largest predicted probability",
    height: int = 330,
) -> dict[str, hv.Element]:
    """Top-k reliability: one curve per rank r = 1..k on the same axes, and their histograms.

    Per rank: markers at (mean r-th largest probability, frequency that the true class is the r-th
    ranked one) of every non-empty bin, joined by a line (legend "rank 1 (top-1)", "rank 2", …), with
    the per-bin interval as whiskers, all in the rank's colour; hover gives rank, bin, count, mean
    confidence, frequency, interval and whether it covers the diagonal.  The histogram panel has one
    outlined histogram per rank on the bins of that rank.  The structure depends only on k.

    Parameters
    ----------
    multi : MultiReliability
        Of kind ``"rank"``.
    title : str, optional
        Default :func:`rank_reliability_title`.
    xlabel : str
        The x axis' label.
    height : int, default 330
        Height of the main panel in pixels.

    Returns
    -------
    dict
        ``{"main": Overlay, "hist": Overlay}``.

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-perturbed_top2", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="topk", top_k=2))
    >>> sorted(plots.rank_reliability_elements(multi))
    ['hist', 'main']
    """
    _ensure_backend()
    from bokeh.models import HoverTool

    panels = list(multi.panels)
    hover = HoverTool(tooltips=[("", "@rank"), *BIN_TOOLTIPS])
    hist_hover = HoverTool(tooltips=[("", "@rank"), *HIST_TOOLTIPS])
    # unlabelled: the legend above the plot lists the ranks only (the dashed diagonal is in the caption)
    diagonal = hv.Curve(([0.0, 1.0], [0.0, 1.0]), "x", "y").opts(
        color=NEUTRAL, line_dash="dashed", line_width=1.5
    )
    # one line per rank (they carry the legend); the whiskers, markers and histogram bars of all ranks
    # are one element each, coloured per row — 3 + k layers instead of 4k keeps the figure quick to build
    tables = rank_tables(multi)
    table = tables["points"]
    lines = [
        hv.Curve((x, y), "confidence", "frequency", label=str(label)).opts(color=colour, line_width=2)
        for label, colour, x, y in tables["lines"]
    ]
    whisk = hv.Segments(
        {"confidence": table["confidence"], "low": table["low"], "c1": table["confidence"],
         "high": table["high"], "color": table["color"]},
        kdims=["confidence", "low", "c1", "high"],
        vdims=["color"],
    ).opts(color="color", line_width=1.2, alpha=0.8)
    marks = hv.Scatter(table, kdims=["confidence"], vdims=list(RANK_POINT_COLUMNS[1:])).opts(
        color="color", size=7, line_color="outline", line_width=1.5, tools=[hover]
    )
    layers = [diagonal, whisk, *lines, marks]
    hist_cols = list(RANK_HIST_COLUMNS)
    hists = [
        hv.Rectangles(tables["bars"], kdims=hist_cols[:4], vdims=hist_cols[4:]).opts(
            color="color", alpha=0.25, line_color="color", line_width=1.2, tools=[hist_hover], framewise=True
        )
    ]
    default_title = rank_reliability_title(multi, tables)
    main = hv.Overlay(layers).opts(
        _frequency_axes(
            title or default_title,
            height,
            # outside the axes, in rows above them: an inside legend would hide curves (a low-confidence
            # rank of an overconfident model can reach frequency 1 anywhere)
            legend_position="top",
            legend_cols=min(max(len(panels), 1), 5),
            legend_limit=10_000,  # HoloViews hides legends of overlays with many layers (3 per rank)
            legend_opts=_LEGEND_OPTS,
        )
    )
    hist = hv.Overlay(hists).opts(
        hv.opts.Overlay(
            xlim=(0, 1),
            height=max(90, height // 3),
            responsive=True,
            xlabel=xlabel,
            ylabel="count",
            yticks=3,
            title="",
            fontsize=_FONT,
            min_width=300,
            show_legend=False,
            framewise=True,
        )
    )
    return {"main": main, "hist": hist}


def class_grid_columns(n_panels: int, max_cols: int = 3) -> int:
    """Columns of the per-class grid of the full-calibration view.

    At most ``max_cols`` (3 fit half of a 1280-px page), one row when the panels fit, and 2 × 2 rather
    than 3 + 1 for four panels.

    Parameters
    ----------
    n_panels : int
        Panels to lay out.
    max_cols : int, default 3
        Most columns.

    Returns
    -------
    int
        Columns.

    Examples
    --------
    >>> from calviz import plots
    >>> [plots.class_grid_columns(k) for k in (2, 3, 4, 7)]
    [2, 3, 2, 3]
    """
    n_panels, max_cols = int(n_panels), max(1, int(max_cols))
    if n_panels == 4 and max_cols < 4:
        return 2
    return max(1, min(n_panels, max_cols))


def class_reliability_elements(multi, *, panel_height: int = 150) -> dict[str, hv.Element]:
    """Full calibration: one small reliability diagram per class (its one-vs-rest marginal).

    Each panel has the bars of the scalar diagram (crimson where the per-bin interval misses the
    diagonal, teal where it covers it), the whiskers, the diagonal and a title "class c · N" (N =
    samples of that class); hover on a bar gives the class, bin, count, mean predicted probability,
    frequency and interval.  x = predicted P(class c), y = observed frequency of class c on [0, 1] in
    every panel.

    Parameters
    ----------
    multi : MultiReliability
        Of kind ``"class"`` (``target="full"``).
    panel_height : int, default 150
        Height of each panel in pixels.

    Returns
    -------
    dict
        ``{label: Overlay}`` in class order.

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-dirichlet_temperature", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="full"))
    >>> list(plots.class_reliability_elements(multi))
    ['class 0', 'class 1', 'class 2']
    """
    _ensure_backend()
    panels, labels, positives = list(multi.panels), list(multi.labels), multi.positives
    out = {}
    for i, (rel, label) in enumerate(zip(panels, labels, strict=True)):
        b = bins(rel)
        # no bin markers: the bar tops show the frequencies, and fewer glyphs keep the grid quick to build
        bars, diagonal, errs, _ = _bar_layers(b, name=str(label))
        support = f" · {int(positives[i]):,}" if positives is not None else ""
        out[str(label)] = (bars * diagonal.relabel("") * errs).opts(
            hv.opts.Overlay(
                title=f"{label}{support}",
                xlim=(0, 1),
                ylim=(-0.02, 1.02),
                xlabel="",
                ylabel="",
                xticks=[0, 0.5, 1],
                yticks=[0, 0.5, 1],
                height=panel_height,
                responsive=True,
                show_legend=False,
                fontsize={"title": "9pt", "xticks": "8pt", "yticks": "8pt"},
                min_width=110,
                toolbar=None,
            )
        )
    if not out:
        out["no classes"] = placeholder("reliability data not available", height=panel_height)
    return out


def reliability_caption(reliability) -> str:
    """What a per-rank or per-class reliability view shows, in one or two sentences.

    Parameters
    ----------
    reliability : ReliabilityData or MultiReliability
        A reliability result.

    Returns
    -------
    str
        The caption ('' for a scalar diagram).

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-perturbed_top2", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="topk", top_k=2))
    >>> import textwrap
    >>> print(textwrap.fill(plots.reliability_caption(multi), 90))
    Top-2 calibration: one curve per rank r = 1..2: x = the r-th largest predicted probability
    (bin mean), y = how often the true class is the r-th ranked class, whiskers = 95% per-bin
    intervals, dashed = the diagonal (perfect calibration); markers outlined in crimson miss
    the diagonal. Each rank's marginal being calibrated is necessary (not sufficient) for
    top-1-to-k calibration. Below: the histogram of each rank's probabilities.
    """
    if not is_multi(reliability):
        return ""
    kind = reliability.kind
    level = reliability.panels[0].level if len(reliability.panels) else None
    level_txt = f"{100 * float(level):.0f}% " if level is not None else ""
    if kind == "rank":
        k = len(reliability.panels)
        return (
            f"Top-{k} calibration: one curve per rank r = 1..{k}: x = the r-th largest predicted "
            "probability (bin mean), y = how often the true class is the r-th ranked class, whiskers = "
            f"{level_txt}per-bin intervals, dashed = the diagonal (perfect calibration); markers outlined in "
            "crimson miss the diagonal. Each rank's "
            "marginal being calibrated is necessary (not sufficient) for top-1-to-k calibration. Below: "
            "the histogram of each rank's probabilities."
        )
    shown = len(reliability.panels)
    K = reliability.n_classes
    omitted = int(reliability.n_omitted or 0)
    text = (
        "Full calibration: one panel per class c, x = predicted P(class c), y = observed frequency of "
        f"class c, whiskers = {level_txt}per-bin intervals; crimson bins' intervals miss the diagonal, teal "
        "ones cover it. Every class marginal being calibrated is necessary (not sufficient) for full "
        "calibration. Every panel: x and y from 0 to 1, dashed = the diagonal; title: class · number of "
        "samples of that class."
    )
    if omitted:
        text += (
            f" Showing the {shown} classes with the most samples of K = {K} ({omitted} omitted)."
        )
    return text


def reliability_view(
    reliability,
    *,
    smooth=None,
    witness=None,
    title: str | None = None,
    xlabel: str = "confidence (predicted probability)",
    height: int = 330,
    max_cols: int = 3,
) -> hv.Layout:
    """The reliability view of any result: scalar diagram, one curve per rank, or one panel per class.

    The scalar diagram is :func:`reliability_plot` (with the smooth curve and witness); top-k results
    give :func:`rank_reliability_elements`, full calibration a grid of
    :func:`class_reliability_elements`.  The smooth curve and the smCE witness are defined for scalar
    predictions only and are not drawn for top-k / full.

    Parameters
    ----------
    reliability : ReliabilityData or MultiReliability
        A reliability result.
    smooth, witness, title, xlabel, height
        As for :func:`reliability_plot`.
    max_cols : int, default 3
        Columns of the per-class grid (each panel is ``height / 2`` high, at least 130 px).

    Returns
    -------
    holoviews.Layout
        The view.

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-dirichlet_temperature", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="full"))
    >>> type(plots.reliability_view(multi)).__name__
    'Layout'
    """
    if not is_multi(reliability):
        return reliability_plot(
            reliability, smooth=smooth, witness=witness, title=title, xlabel=xlabel, height=height
        )
    _ensure_backend()
    if reliability.kind == "rank":
        parts = rank_reliability_elements(reliability, title=title, height=height)
        opts = hv.opts.Layout(shared_axes=True, merge_tools=True, toolbar="right")
        return hv.Layout([parts["main"], parts["hist"]]).cols(1).opts(opts)
    opts = hv.opts.Layout(shared_axes=False, merge_tools=True, toolbar="right")
    ncols = class_grid_columns(len(reliability.panels), max_cols)
    panels = class_reliability_elements(reliability, panel_height=max(130, height // 2))
    return hv.Layout(list(panels.values())).cols(ncols).opts(opts)


# -- 2. multi-scale T-Cal ---------------------------------------------------------------------------


def _tcal_decision(tcal) -> str:
    """The T-Cal decision in words: "REJECT calibration", "calibration not rejected" or "undecided at this
    resampling budget" (the sequential rule reached its cap with the p-value's interval containing α)."""
    if tcal.decision == "undecided":
        return "undecided at this resampling budget"
    return "REJECT calibration" if bool(tcal.reject) else "calibration not rejected"


def tcal_verdict(tcal, *, method: bool = True) -> tuple[str, str]:
    """The T-Cal view's title and one-line caption, both from the result alone.

    The title gives the decision and the adjusted p-value (e.g. "REJECT · p = 0.0120 (Y-only
    resampling)", "UNDECIDED · …"), the caption is :func:`tcal_caption`.  Everything the live view and the
    report say about the verdict is written here.

    Parameters
    ----------
    tcal : TCalResult
        From :func:`calviz.adaptive_tcal`.
    method : bool, default True
        Name the critical values' method in the title too (the caption always does; a half-width card
        has no room for both).

    Returns
    -------
    tuple of str
        (title, caption).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> title, caption = plots.tcal_verdict(t)
    >>> title
    'REJECT · p < 0.0001 (analytic critical values)'
    """
    if tcal is None:
        return "T-Cal not available", tcal_caption(None)
    if tcal.decision == "undecided":
        decision = "UNDECIDED"
    else:
        decision = "REJECT" if bool(tcal.reject) else "not rejected"
    p = pvalue_phrase(tcal.pvalue, bound=tcal.pvalue_is_bound)
    named = f" ({method_name(tcal.method)})" if method else ""
    return f"{decision} · {p}{named}", tcal_caption(tcal)


def _critical_values_drawn(tcal) -> bool:
    """Whether the T-Cal view draws a critical value: some scale has a finite one."""
    crit = tcal.critical_values
    return crit is not None and bool(np.isfinite(np.asarray(crit, dtype=np.float64)).any())


def tcal_marks(tcal) -> str:
    """What the T-Cal view's marks mean, for its caption.

    The dashed critical value is named only when one was computed: a sequential test that settled
    before estimating them, or a tail bound that settled it without resampling, computes none.

    Parameters
    ----------
    tcal : TCalResult or None
        The result shown (None: the general sentence).

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> print(plots.tcal_marks(calviz.adaptive_tcal(y, p, resampling="analytic")).split(";")[1])
     dashed: its critical value
    >>> "dashed" in plots.tcal_marks(calviz.adaptive_tcal(y, p, seed=0))   # settled before estimating them
    False
    """
    dashed = "; dashed: its critical value" if tcal is None or _critical_values_drawn(tcal) else ""
    return (f"Solid line: the statistic at each number of bins{dashed}; dots crimson where that bin count "
            "rejects (its p-value is at most α over the number of scales), teal where it does not.")


def _title_lines(text: str, width: int = 72) -> str:
    """``text`` broken into lines after "; ", joining clauses while a line stays within ``width``
    characters (a Bokeh title does not wrap: a long one is cut at the figure's edge; a clause is never
    split, so a line may hold one longer clause)."""
    lines: list[str] = []
    for part in text.split("; "):
        if lines and len(lines[-1]) + 2 + len(part) <= width:
            lines[-1] += "; " + part
        else:
            lines.append(part)
    return ";\n".join(lines)


def tcal_caption(tcal) -> str:
    """One line on a T-Cal result: decision, adjusted p-value and how critical values were obtained.

    With its Monte Carlo interval and the resamples used when resampled.

    Parameters
    ----------
    tcal : TCalResult
        From :func:`calviz.adaptive_tcal`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> import textwrap
    >>> print(textwrap.fill(plots.tcal_caption(t), 90))
    T-Cal (analytic critical values): REJECT calibration at α = 0.05; adjusted p < 0.0001
    """
    if tcal is None:
        return "T-Cal not available"
    alpha = tcal.alpha
    p = tcal.pvalue
    method = tcal.method
    alpha_txt = f" at α = {float(alpha):g}" if alpha is not None else ""
    p_txt = pvalue_phrase(p, bound=tcal.pvalue_is_bound)
    text = f"T-Cal ({method_name(method)}): {_tcal_decision(tcal)}{alpha_txt}; adjusted {p_txt}"
    resamples = tcal.n_resamples or 0
    interval = tcal.pvalue_interval
    if interval is not None and resamples and method in ("y_only", "consistency"):
        low, high = (float(v) for v in interval)
        text += (f" (Monte Carlo interval [{_fmt_interval_end(low)}, {_fmt_interval_end(high)}], "
                 f"{resamples} resamples")
        risk = tcal.resampling_risk
        if tcal.max_resamples:
            text += f"; decision settled with resampling risk ≤ {float(risk):g}" if (
                tcal.decision != "undecided") else "; raise the number of resamples to settle"
        text += ")"
    elif method in ("y_only", "consistency") and not resamples and tcal.decision == "reject":
        text += " (settled without resampling: a tail bound of the null distribution is already below α)"
    if resamples and method in ("y_only", "consistency") and not _critical_values_drawn(tcal):
        # the sequential rule stops once the p-value's Monte Carlo interval clears α
        text += "; no critical values are drawn: the decision was settled before they could be estimated"
    return text


#: how T-Cal's critical values were obtained, in words (the result's ``method`` field → display name)
METHOD_NAMES = {
    "analytic": "analytic critical values",
    "y_only": "Y-only resampling",
    "consistency": "consistency resampling",
    "threshold": "Chebyshev thresholds",
}


def method_name(method) -> str:
    """The display name of a T-Cal critical-value method; unknown ones as given.

    Parameters
    ----------
    method : str
        ``TCalResult.method``.

    Returns
    -------
    str
        Its name in words.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.method_name("y_only"), plots.method_name("analytic")
    ('Y-only resampling', 'analytic critical values')
    """
    return METHOD_NAMES.get(str(method), str(method).replace("_", " "))


#: what each view's marks mean (a caption under the figure)
GLYPHS = {
    "reliability": (
        "Bars: observed frequency per bin, crimson where the bin's interval misses the diagonal, teal where "
        "it covers it; whiskers: per-bin intervals; dashed: the diagonal (perfect calibration); blue: the "
        "smooth curve and its band; grey, below: how many predictions fall in each bin; red, bottom: the "
        "witness w(v), far from 0 where the observed frequency is above (w > 0) or below (w < 0) the "
        "prediction."
    ),
    "tcal": tcal_marks(None),
    "interval": (
        "Bars: the intervals (crimson when they exclude 0, teal when they include it); white dots: the "
        "point estimate; grey line: 0."
    ),
}


def _fmt_interval_end(x: float) -> str:
    return "0" if x == 0 else format_pvalue(x).replace("< ", "<")


def tcal_xlabel(discrete: bool, tcal=None) -> str:
    """The x-axis label of the T-Cal view.

    Parameters
    ----------
    discrete : bool
        Whether the exact binomial test ran (x is a predicted value).
    tcal : TCalResult, optional
        The result: full calibration of K > 2 classes counts bins per axis of the simplex partition.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.tcal_xlabel(False)
    'number of bins at each dyadic scale (log scale)'
    """
    if discrete:
        return "distinct predicted value"
    if tcal is not None and simplex_cells(tcal.target, tcal.K) is not None:
        exponent = str(int(tcal.K) - 1).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
        return f"bins per axis m (m{exponent} simplex cells; log scale)"
    return "number of bins at each dyadic scale (log scale)"


def tcal_tooltips(discrete: bool) -> list:
    """The hover fields of the T-Cal view's points.

    Parameters
    ----------
    discrete : bool
        Whether the exact binomial test ran (x is a predicted value).

    Returns
    -------
    list of (str, str)
        Bokeh tooltips: label and field.

    Examples
    --------
    >>> from calviz import plots
    >>> [label for label, _ in plots.tcal_tooltips(False)]
    ['bins', 'statistic', 'critical value', 'p-value (this scale)', '']
    """
    return [
        ("value" if discrete else "bins", "@bins"),
        ("statistic", "@statistic{0.000e}"),
        ("critical value", "@critical{0.000e}"),
        ("p-value (this scale)", "@pvalue{0.0000}"),
        ("", "@state"),
    ]


def tcal_shown_scales(tcal, scales: np.ndarray, rejected: np.ndarray) -> np.ndarray:
    """Which scales the T-Cal axis shows: it stops where bins are mostly empty.

    Rule: a scale of m bins per axis is drawn when it has no more bins than rows — m ≤ n for the 1-D
    targets, m^{K−1} ≤ n for full calibration of K classes (the simplex partition has about m^{K−1}
    cells) — or when it rejects.  Finer scales, at which most bins are empty and most occupied bins hold a
    single row (so T^d is nearly 0), are still tested and counted in the Bonferroni correction
    (Algorithm 2 of Lee, Huang, Hassani and Dobriban, 2023, tests every dyadic scale up to its B); they
    are only left off the axis.

    Parameters
    ----------
    tcal : TCalResult
        The result (its n, K and target).
    scales : ndarray
        Bins per axis of every tested scale.
    rejected : ndarray of bool
        Whether each scale rejects.

    Returns
    -------
    ndarray of bool
        Per scale: drawn or not.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> scales = np.asarray(t.n_bins)
    >>> bool(scales[plots.tcal_shown_scales(t, scales, t.scale_rejections)].max() <= t.n)
    True
    """
    n = getattr(tcal, "n", None)
    if n is None or not scales.size:
        return np.ones(scales.shape, dtype=bool)
    exponent = int(tcal.K) - 1 if tcal.target == "full" else 1
    with np.errstate(over="ignore"):
        cells = scales.astype(np.float64) ** max(exponent, 1)
    return (cells <= float(n)) | rejected


def tcal_hidden_note(hidden: int) -> str:
    """What the T-Cal caption says about the scales left off the axis.

    Parameters
    ----------
    hidden : int
        Scales tested but not drawn (:func:`tcal_shown_scales`).

    Returns
    -------
    str
        The note.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.tcal_hidden_note(3)
    '3 finer scales with more bins than rows (mostly empty bins) tested but not drawn'
    """
    return (f"{hidden} finer scale{'s' if hidden != 1 else ''} with more bins than rows (mostly empty bins) "
            "tested but not drawn")


def tcal_frame(tcal) -> dict:
    """The drawing data of the T-Cal view.

    ``table`` (per scale: ``bins`` — the number of bins, or the distinct predicted value when the engine
    ran the exact binomial test —, ``statistic``, ``critical``, ``pvalue``, ``color`` crimson where the
    scale rejects, ``state``), ``discrete`` (x is a predicted value: linear axis), the axis ranges
    ``xlim``/``ylim`` and ``hidden`` (tested scales left off the axis by :func:`tcal_shown_scales`; 0
    for the binomial test).

    Parameters
    ----------
    tcal : TCalResult or None
        From :func:`calviz.adaptive_tcal`.

    Returns
    -------
    dict
        The drawing data.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> frame = plots.tcal_frame(t)
    >>> sorted(frame)
    ['discrete', 'hidden', 'table', 'xlim', 'ylim']
    >>> sorted(frame["table"])
    ['bins', 'color', 'critical', 'pvalue', 'state', 'statistic']
    """
    empty = np.zeros(0)
    discrete = False
    if tcal is not None:
        discrete = "binom" in str(tcal.test).lower() and tcal.values is not None
        scales = _arr(tcal.values if discrete else tcal.n_bins)
        stats = _arr(tcal.statistics)
        crit = tcal.critical_values
        crit = _arr(crit) if crit is not None else np.full_like(stats, np.nan)
        pvals = tcal.pvalues
        pvals = _arr(pvals) if pvals is not None else np.full_like(stats, np.nan)
    else:
        scales = stats = crit = pvals = empty
    rejected = tcal.scale_rejections if tcal is not None else np.zeros(stats.shape, dtype=bool)
    shown = np.ones(scales.shape, dtype=bool) if discrete else tcal_shown_scales(tcal, scales, rejected)
    hidden = int(scales.size - shown.sum())
    scales, stats, crit, pvals, rejected = (a[shown] for a in (scales, stats, crit, pvals, rejected))
    table = {
        "bins": scales,
        "statistic": stats,
        "critical": crit,
        "pvalue": pvals,
        "color": np.where(rejected, MISCALIBRATED, CALIBRATED),
        "state": np.where(rejected, "this scale rejects", "this scale does not reject"),
    }
    xlim, ylim = (1.0, 1024.0), (-1.0, 1.0)
    both = np.concatenate([stats, crit])
    finite = both[np.isfinite(both)]
    if scales.size:
        lo, hi = min(0.0, float(finite.min(initial=0.0))), max(0.0, float(finite.max(initial=0.0)))
        pad = 0.08 * (hi - lo) or 1e-12
        if discrete:
            xpad = 0.05 * (float(scales.max()) - float(scales.min()) or 1.0)
            xlim = (float(scales.min()) - xpad, float(scales.max()) + xpad)
        else:
            xlim = (float(scales.min()) / 1.5, float(scales.max()) * 1.5)
        ylim = (lo - pad, hi + pad)
    return {"table": table, "discrete": discrete, "xlim": xlim, "ylim": ylim, "hidden": hidden}


def tcal_plot(tcal, *, title: str | None = None, height: int = 330, pending: str | None = None) -> hv.Overlay:
    """T-Cal view: the debiased statistic T^d against its critical value at each dyadic scale.

    x = number of bins (log axis).  Scales that reject (``TCalResult.scale_rejections``) are crimson,
    the others teal; the title carries the adaptive decision and the adjusted p-value.  When
    the engine ran the exact binomial test for discrete predictors, x is the distinct predicted value
    instead (linear axis).  ``tcal=None`` gives the same (empty) layers.

    Parameters
    ----------
    tcal : TCalResult or None
        From :func:`calviz.adaptive_tcal`.
    title : str, optional
        Default from :func:`tcal_verdict`.
    height : int, default 330
        Height in pixels.
    pending : str, optional
        A note such as "resampling running…".

    Returns
    -------
    holoviews.Overlay
        The view.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> type(plots.tcal_plot(t)).__name__
    'Overlay'
    """
    _ensure_backend()
    from bokeh.models import HoverTool

    frame = tcal_frame(tcal)
    data, discrete = frame["table"], frame["discrete"]
    scales, stats, crit = data["bins"], data["statistic"], data["critical"]
    hover = HoverTool(tooltips=tcal_tooltips(discrete))
    stat_line = hv.Curve((scales, stats), "bins", "statistic", label="statistic").opts(
        color=NEUTRAL, line_width=1.5
    )
    crit_line = hv.Curve((scales, crit), "bins", "statistic", label="critical value").opts(
        color=NEUTRAL, line_dash="dashed", line_width=1.5
    )
    points = hv.Points(
        data, kdims=["bins", "statistic"], vdims=["critical", "pvalue", "color", "state"]
    ).opts(color="color", size=10, line_color="white", tools=[hover])
    zero = hv.HLine(0, kdims=["bins", "statistic"]).opts(color=HIST, line_width=1)
    caption = tcal_caption(tcal)
    if frame["hidden"]:
        caption = f"{caption}; {tcal_hidden_note(frame['hidden'])}"
    if pending:
        caption = f"{caption} — {pending}"
    # explicit ranges on every frame: a streamed frame must not inherit the previous frame's limits (an
    # empty "computing…" frame first, then the result, would otherwise keep the axes of the empty one)
    extra = {"xlim": frame["xlim"], "ylim": frame["ylim"]}
    return (
        (zero * stat_line * crit_line * points).opts(
            hv.opts.Overlay(
                title=title or _title_lines(caption),
                logx=not discrete,
                xlabel=tcal_xlabel(discrete, tcal),
                ylabel="debiased ECE² statistic",
                yformatter=readable_ticks(),
                height=height,
                responsive=True,
                show_legend=False,  # solid = statistic, dashed = critical value: said in the caption
                fontsize=_FONT,
                min_width=300,
                framewise=True,
                **extra,
            )
        )
    )


# -- 3. ECE interval --------------------------------------------------------------------------------


def interval_caption(interval) -> str:
    """The ECE interval in words: what it says about calibration and why its lower end is there.

    Also why the bootstrap row may not contain the point estimate — plain sentences, no formulas (the
    case rule is :func:`interval_details`).

    Parameters
    ----------
    interval : ECEInterval
        From :func:`calviz.ece_interval`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> import textwrap
    >>> print(textwrap.fill(plots.interval_caption(ci), 90))
    90% interval for the ℓ2-ECE: [0.0777, 0.1385]. Miscalibrated: the estimate is moderately
    far from 0; the interval starts at half of it (on the squared scale). The bootstrap row
    resamples (prediction, label) pairs of the same statistic; repeated rows in a bin inflate
    it, so with few rows per bin its interval can lie above the point estimate.
    """
    if interval is None:
        return "ECE interval not available"
    regime = str(interval.regime or "")
    level = interval.level
    level_txt = f"{100 * float(level):.0f}% " if level is not None else ""
    low, high = interval.confidence_interval()
    head = f"{level_txt}interval for the ℓ2-ECE: [{_fmt(low)}, {_fmt(high)}]. "
    kind = regime.split(":", 1)[0].strip().lower()
    explain = {
        "calibrated": "Consistent with calibration: the estimate is within the noise of a calibrated "
        "model, so the interval starts at 0.",
        "far": "Clearly miscalibrated: the estimate is far from 0, so the interval is centred on it.",
        "middle": "Miscalibrated: the estimate is moderately far from 0; the interval starts at half of it "
        "(on the squared scale).",
        # T₊ < 2 z₁ s: small for its own noise, which says nothing about calibration until the lower end does
        "near": "Miscalibrated: the interval excludes 0, though the estimate is small for its noise, so the "
        "interval starts a one-sided error margin below it." if low is not None and float(low) > 0 else
        "Consistent with calibration: the estimate is small for its noise, so the interval reaches 0.",
    }.get(kind)
    if explain is None:
        explain = (
            f"{regime}."
            if regime
            else (
                "Excludes 0: miscalibrated."
                if low is not None and float(low) > 0
                else "Includes 0: consistent with calibration."
            )
        )
    return head + explain + " " + BOOTSTRAP_NOTE


#: why the percentile-bootstrap row can lie beside (not around) the point estimate, in one sentence
BOOTSTRAP_NOTE = (
    "The bootstrap row resamples (prediction, label) pairs of the same statistic; repeated rows in a bin "
    "inflate it, so with few rows per bin its interval can lie above the point estimate."
)


def interval_details(interval) -> str:
    """The case rule that set the interval's lower end, as a formula (for a tooltip or "more").

    Parameters
    ----------
    interval : ECEInterval
        From :func:`calviz.ece_interval`.

    Returns
    -------
    str
        The rule.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> plots.interval_details(ci)[:47]
    '2 z₁ s ≤ T₊ < 2 z₂ s, so the lower end is T₊/2.'
    """
    regime = str(getattr(interval, "regime", "") or "")
    kind = regime.split(":", 1)[0].strip().lower()
    rule = {
        "calibrated": "T₊ < z₁ × the exact null sd of T, so the lower end is 0.",
        "far": "T₊ ≥ 2 z₂ s, so the interval is T₊ ± z₂ s.",
        "middle": "2 z₁ s ≤ T₊ < 2 z₂ s, so the lower end is T₊/2.",
        "near": "T₊ < 2 z₁ s, so the lower end is max(T₊ − z₁ s, 0).",
    }.get(kind, "")
    return (f"{rule} " if rule else "") + VIEW_EXPLANATIONS["interval"][1]


INTERVAL_TOOLTIPS = (
    ("method", "@method"),
    ("ECE", "@estimate{0.0000}"),
    ("interval", "[@low{0.0000}, @high{0.0000}]"),
    ("ECE²", "@estimate_sq{0.000e}"),
    ("ECE² interval", "[@low_sq{0.000e}, @high_sq{0.000e}]"),
)


def interval_frame(interval, bootstrap=None) -> dict:
    """The drawing data of the ECE-interval view.

    ``table`` with two rows (row 1: the asymptotic interval of Sun, Chaudhari, Barnett and Dobriban
    (2024); row 0: the percentile bootstrap, NaN while it is computed) — estimate, interval, their
    squares, method, colour (crimson when the interval excludes 0) — and ``xlim``.

    Parameters
    ----------
    interval : ECEInterval
        The asymptotic interval.
    bootstrap : ECEInterval, optional
        The bootstrap interval.

    Returns
    -------
    dict
        The drawing data.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> frame = plots.interval_frame(ci)
    >>> sorted(frame), len(frame["table"]["estimate"])
    (['table', 'xlim'], 2)
    """
    rows = [("asymptotic (Sun et al. 2024)", interval), ("percentile bootstrap", bootstrap)]
    cols = {k: [] for k in ("estimate", "low", "high", "estimate_sq", "low_sq", "high_sq", "method", "color")}
    for name, res in rows:
        cols["method"].append(name)
        for key in ("estimate", "low", "high", "estimate_sq", "low_sq", "high_sq"):
            cols[key].append(np.nan if res is None else float(getattr(res, key)))
        cols["color"].append(MISCALIBRATED if cols["low"][-1] > 0 else CALIBRATED)
    finite = [v for v in (*cols["high"], *cols["estimate"]) if np.isfinite(v)]
    upper = max(finite) if finite else 0.1
    return {"table": {"row": np.array([1.0, 0.0]), **cols}, "xlim": (-0.02 * upper, 1.15 * upper)}


def interval_title(interval) -> str:
    """The ECE-interval view's title: level and bin count of the interval.

    Parameters
    ----------
    interval : ECEInterval
        From :func:`calviz.ece_interval`.

    Returns
    -------
    str
        The title.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> plots.interval_title(ci)
    'ℓ2-ECE, 90% intervals (10 bins)'
    """
    if interval is None:
        return "ECE interval not available"
    level = interval.level
    n_bins = interval.n_bins
    head = "ℓ2-ECE with confidence interval"
    if level is not None:
        head = f"ℓ2-ECE, {100 * float(level):.0f}% intervals"
    if n_bins is not None:
        head += f" ({bins_phrase(int(np.asarray(n_bins).ravel()[0]), interval.target, interval.n_classes)})"
    return head


def bins_phrase(n_bins: int, target: str | None, n_classes: int | None) -> str:
    """'15 bins', or for full calibration of K > 2 classes '2 bins per axis, 512 simplex cells'.

    Parameters
    ----------
    n_bins : int
        Bins (per axis).
    target : str or None
        The result's target.
    n_classes : int or None
        K.

    Returns
    -------
    str
        The phrase.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.bins_phrase(15, "top1", 10), plots.bins_phrase(2, "full", 10)
    ('15 bins', '2 bins per axis, 512 simplex cells')
    """
    cells = simplex_cells(target, n_classes, n_bins)
    return f"{n_bins} bins" if cells is None else f"{n_bins} bins per axis, {cells:,} simplex cells"


def interval_plot(
    interval, bootstrap=None, *, title: str | None = None, height: int = 330, pending: str | None = None
) -> hv.Overlay:
    """ECE view: point estimate and confidence interval for the ℓ2 ECE, asymptotic and bootstrap.

    Two rows, always: the asymptotic interval of Sun, Chaudhari, Barnett and Dobriban (2024; exact
    conditional null variance) and the percentile bootstrap (empty while it is computed); x = ECE.
    Crimson when the interval excludes 0 (miscalibrated regime), teal otherwise; hover shows the ECE²
    numbers too.

    Parameters
    ----------
    interval : ECEInterval or None
        The asymptotic interval.
    bootstrap : ECEInterval, optional
        The bootstrap interval.
    title : str, optional
        Default :func:`interval_title`.
    height : int, default 330
        Height in pixels.
    pending : str, optional
        A note such as "bootstrap running…".

    Returns
    -------
    holoviews.Overlay
        The view.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> type(plots.interval_plot(ci)).__name__
    'Overlay'
    """
    _ensure_backend()
    from bokeh.models import HoverTool

    frame = interval_frame(interval, bootstrap)
    table, names, ys = frame["table"], frame["table"]["method"], frame["table"]["row"]
    hover = HoverTool(tooltips=list(INTERVAL_TOOLTIPS))
    segs = hv.Segments(
        table,
        kdims=["low", "row", "high", "row"],
        vdims=["estimate", "estimate_sq", "low_sq", "high_sq", "method", "color"],
    ).opts(color="color", line_width=6, alpha=0.7, tools=[hover])
    pts = hv.Points(table, kdims=["estimate", "row"], vdims=["low", "high", "method", "color"]).opts(
        color="white", line_color="color", size=11, line_width=2
    )
    head = interval_title(interval)
    if pending:
        head += f" — {pending}"
    zero = hv.VLine(0, kdims=["low", "row"]).opts(color=NEUTRAL, line_width=1)
    return (
        (zero * segs * pts).opts(
            hv.opts.Overlay(
                title=title or _title_lines(head),
                xlabel="ℓ2 expected calibration error",
                xformatter=readable_ticks(),
                ylabel="",
                yticks=[(float(y), n) for y, n in zip(ys, names, strict=True)],
                ylim=(-0.6, 1.6),
                xlim=frame["xlim"],
                height=height,
                responsive=True,
                fontsize=_FONT,
                min_width=300,
                framewise=True,
            )
        )
    )


# -- 4. distance to calibration ---------------------------------------------------------------------

_MEASURE_LABELS = {
    "smce": "smCE",
    "dce_lower": "dCE_lower (LP)",
    "lower_dce": "dCE_lower (LP)",
    "kce": "kCE (Laplace)",
    "laplace_kce": "kCE (Laplace)",
    "sintce": "SintCE",
    "binned_ece_width": "binnedECE + width",
    "binned_ece_with_width": "binnedECE + width",
    "binned_ece": "binnedECE (ℓ1)",
    "intce": "intCE",
}


def measure_label(key) -> str:
    """The display name of a distance measure's key.

    Parameters
    ----------
    key : str
        A key of ``DistanceBounds.measures``.

    Returns
    -------
    str
        Its name.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.measure_label("lower_dce")
    'dCE_lower (LP)'
    """
    return _MEASURE_LABELS.get(str(key).lower(), str(key))


def distance_measures(bounds) -> list[dict]:
    """One row per measure of a ``DistanceBounds``: name, value, inequality and what it implies.

    Accepts the engine's layouts: a ``measures`` mapping name → value (plus optional ``inequalities`` /
    ``notes`` mappings), a sequence of measure records, or plain attributes.

    Parameters
    ----------
    bounds : DistanceBounds
        From :func:`calviz.distance_bounds`.

    Returns
    -------
    list of dict
        ``{name, value, inequality, implies}`` per measure.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> [row["name"] for row in plots.distance_measures(b)]
    ['smCE', 'dCE_lower (LP)', 'SintCE', 'kCE (Laplace)', 'binnedECE + width']
    """
    rows = []
    measures = bounds.measures
    inequalities = bounds.inequalities or {}
    if isinstance(measures, dict):
        for key, value in measures.items():
            rec = _measure_record(key, value, inequalities)
            if rec is not None:
                rows.append(rec)
    elif isinstance(measures, (list, tuple)):
        for item in measures:
            key = getattr(item, "name", "?")
            rec = _measure_record(key, item, inequalities)
            if rec is not None:
                rows.append(rec)
    else:
        for key in (
            "smce",
            "lower_dce",
            "dce_lower",
            "laplace_kce",
            "kce",
            "sintce",
            "binned_ece_with_width",
            "binned_ece_width",
        ):
            value = getattr(bounds, key, None)
            if value is not None:
                rec = _measure_record(key, value, inequalities)
                if rec is not None:
                    rows.append(rec)
    return rows


def _measure_record(key, value, inequalities):
    if isinstance(value, (int, float, np.floating, np.integer)):
        number, text, implies = float(value), inequalities.get(key, ""), ""
    else:
        number = getattr(value, "value", None)
        if number is None:
            return None
        number = float(number)
        text = getattr(value, "inequality", None) or inequalities.get(key, "")
        implies = ""
        lo, hi = getattr(value, "band_low", None), getattr(value, "band_high", None)
        if lo is not None and hi is not None:
            implies = (implies + f"  bootstrap band [{_fmt(lo)}, {_fmt(hi)}]").strip()
    label = _MEASURE_LABELS.get(str(key).lower(), str(key))
    return {"name": label, "value": number, "inequality": str(text), "implies": str(implies)}


def _bound_text(bound) -> str:
    """'measure: inequality [paper, theorem]' for a Bound record (or the text itself)."""
    if isinstance(bound, str):
        return bound
    measure, inequality, source = bound.measure, bound.inequality, bound.source
    return f"{_MEASURE_LABELS.get(str(measure), measure)}: {inequality}" + (f" [{source}]" if source else "")


def distance_caption(bounds) -> str:
    """The distance view's caption: glyphs, the empirical-distribution caveat and the kernel note.

    Parameters
    ----------
    bounds : DistanceBounds
        From :func:`calviz.distance_bounds`.

    Returns
    -------
    str
        One short paragraph.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> len(plots.distance_caption(b)) > 0
    True
    """
    lower, upper = (bounds.lower, bounds.upper) if bounds is not None else (None, None)
    txt = ""
    if lower is not None and upper is not None:
        txt = f"Implied interval for the distance to calibration dCE: [{_fmt(lower)}, {_fmt(upper)}]. "
    return txt + (
        "Blue dots: each measure's value; dark bar (bottom row): the interval for dCE they imply (hover for "
        "the inequality behind each end). All measures describe this sample (its empirical distribution), "
        "not the population, so the "
        "bar stays above 0 even for a calibrated model: T-Cal and the ECE interval say whether the error "
        "is real. kCE uses the Laplace kernel with bandwidth 1 (the smooth-curve bandwidth "
        "option does not change it): a Gaussian kernel would not be consistent (Błasiok et al. 2023, "
        "Thm 8.6)."
    )


def distance_title(bounds) -> str | None:
    """The distance view's title: the implied interval for dCE.

    Parameters
    ----------
    bounds : DistanceBounds
        From :func:`calviz.distance_bounds`.

    Returns
    -------
    str or None
        'implied dCE ∈ [low, high]' (None when it has no bounds).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> plots.distance_title(b)
    'implied dCE ∈ [0.0808, 0.1432]'
    """
    lo, hi = (bounds.lower, bounds.upper) if bounds is not None else (None, None)
    if lo is None or hi is None:
        return None
    return f"implied dCE ∈ [{_fmt(lo)}, {_fmt(hi)}]"


DISTANCE_TOOLTIPS = (("measure", "@name"), ("value", "@value{0.00000}"), ("bounds", "@inequality"),
                     ("", "@implies"))
DISTANCE_BAND_TOOLTIPS = (
    ("implied dCE interval", "[@low{0.00000}, @high{0.00000}]"),
    ("lower end from", "@lower_from"),
    ("upper end from", "@upper_from"),
)


def distance_frame(bounds) -> dict:
    """The drawing data of the distance view.

    ``table`` (one row per measure: value, row position, name, the inequality behind it and what it
    implies; NaN rows of the usual measures while computing), ``band`` (the implied dCE interval at row
    0, in :data:`ESTIMATE` colour, with the bound behind each end), ``yticks`` (row → name), ``xlim``,
    ``ylim``.

    Parameters
    ----------
    bounds : DistanceBounds or None
        From :func:`calviz.distance_bounds`.

    Returns
    -------
    dict
        The drawing data.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> sorted(plots.distance_frame(b))
    ['band', 'table', 'xlim', 'ylim', 'yticks']
    """
    rows = distance_measures(bounds) if bounds is not None else []
    if not rows:  # same layers and rows as a real result, empty
        rows = [
            {"name": _MEASURE_LABELS[k], "value": np.nan, "inequality": "", "implies": ""}
            for k in ("smce", "lower_dce", "sintce", "laplace_kce", "binned_ece_width")
        ]
    lo = float(bounds.lower) if bounds is not None else np.nan
    hi = float(bounds.upper) if bounds is not None else np.nan
    names = [r["name"] for r in rows]
    ys = np.arange(len(rows), dtype=float)[::-1] + 1.0
    values = np.array([r["value"] for r in rows], dtype=float)
    table = {
        "value": values,
        "measure_row": ys,
        "name": names,
        "inequality": [r["inequality"] for r in rows],
        "implies": [r["implies"] for r in rows],
    }
    band = {
        "v0": [lo],
        "r0": [0.0],
        "v1": [hi],
        "r1": [0.0],
        "low": [lo],
        "high": [hi],
        "lower_from": [_bound_text(bounds.lower_bound if bounds is not None else "")],
        "upper_from": [_bound_text(bounds.upper_bound if bounds is not None else "")],
        # a size, not a decision: the empirical distribution is almost never exactly calibrated, so the
        # interval excludes 0 even for a calibrated model — crimson would always "reject"
        "color": [ESTIMATE],
    }
    finite = [v for v in [*values, lo, hi] if np.isfinite(v)]
    vmax = max(finite) if finite else 0.1  # empty (still computing): a readable default axis
    return {
        "table": table,
        "band": band,
        "yticks": [(float(y), n) for y, n in zip(ys, names, strict=True)] + [(0.0, "dCE (implied)")],
        "xlim": (-0.02 * vmax, 1.12 * vmax),
        "ylim": (-0.7, len(rows) + 0.7),
    }


def distance_plot(bounds, *, title: str | None = None, height: int = 330) -> hv.Overlay:
    """Distance view: every distance-to-calibration measure on one axis, and the implied interval for dCE.

    Hover shows the inequality (paper, theorem) behind each measure's contribution to the bounds, and
    for the implied interval the bound that produced each end (dark slate: a size, not a test).

    Parameters
    ----------
    bounds : DistanceBounds or None
        From :func:`calviz.distance_bounds`.
    title : str, optional
        Default :func:`distance_title`.
    height : int, default 330
        Height in pixels.

    Returns
    -------
    holoviews.Overlay
        The view.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.
    .. [2] L. Hu, A. Jambulapati, K. Tian and C. Yang. Testing calibration in nearly-linear time.
       arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> type(plots.distance_plot(b)).__name__
    'Overlay'
    """
    _ensure_backend()
    from bokeh.models import HoverTool

    frame = distance_frame(bounds)
    table, band = frame["table"], frame["band"]
    hover = HoverTool(tooltips=list(DISTANCE_TOOLTIPS))
    pts = hv.Points(table, kdims=["value", "measure_row"], vdims=["name", "inequality", "implies"]).opts(
        color=ACCENT, size=10, line_color="white", tools=[hover]
    )
    stems = hv.Segments(
        {"v0": np.zeros(len(table["value"])), "r0": table["measure_row"], "v1": table["value"],
         "r1": table["measure_row"]},
        kdims=["v0", "r0", "v1", "r1"],
    ).opts(color=HIST, line_width=2)
    seg = hv.Segments(
        band, kdims=["v0", "r0", "v1", "r1"], vdims=["low", "high", "lower_from", "upper_from", "color"]
    ).opts(
        color="color",
        line_width=8,
        alpha=0.75,
        tools=[HoverTool(tooltips=list(DISTANCE_BAND_TOOLTIPS))],
    )
    default = (
        "Distance to calibration (empirical distribution)"
        if bounds is not None
        else ("distance bounds not available")
    )
    return (
        (stems * pts * seg).opts(
            hv.opts.Overlay(
                title=title or default,
                xlabel="calibration error",
                xformatter=readable_ticks(),
                ylabel="",
                yticks=frame["yticks"],
                ylim=frame["ylim"],
                xlim=frame["xlim"],
                height=height,
                responsive=True,
                fontsize=_FONT,
                min_width=300,
                framewise=True,
            )
        )
    )


def classical_columns(tests, *, alpha: float | None = None) -> dict[str, list]:
    """Display columns of the classical tests beside T-Cal, one row per test.

    ``test``, ``statistic``, ``pvalue``, ``decision`` (at ``alpha``, by default the level the tests were
    run at: re-deciding from the stored p-values needs no recomputation, so a table follows the α
    control) and ``detects``; tests that could not be computed say why in ``detects``.

    Parameters
    ----------
    tests : ClassicalTests
        From :func:`calviz.classical_tests`.
    alpha : float, optional
        The level of the decisions.

    Returns
    -------
    dict of list
        Column name → values.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> tests = calviz.classical_tests(y, p, measures=True)
    >>> columns = plots.classical_columns(tests, alpha=0.01)
    >>> columns["test"][:2], columns["decision"][:2]
    (['Spiegelhalter z', 'Hosmer–Lemeshow'], ['does not reject', 'rejects'])
    """
    rows = tests.rows(alpha)
    return {
        "test": [r["test"] for r in rows],
        "statistic": [_fmt(r["statistic"]) for r in rows],
        "pvalue": [format_pvalue(r["pvalue"]) for r in rows],
        "decision": ["—" if r["reject"] is None else ("rejects" if r["reject"] else "does not reject")
                     for r in rows],
        "detects": [r["detects"] for r in rows],
    }


def classical_caption(tests, *, alpha: float | None = None) -> str:
    """One line on the classical tests: the level, target, n, and the MCE and ACE computed with them.

    Parameters
    ----------
    tests : ClassicalTests
        From :func:`calviz.classical_tests`.
    alpha : float, optional
        The level shown.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> tests = calviz.classical_tests(y, p, measures=True)
    >>> import textwrap
    >>> print(textwrap.fill(plots.classical_caption(tests), 90))
    at α = 0.05 (binary, n = 500; asymptotic p-values) · MCE 0.2609 (largest gap observed −
    predicted, 15 equal-width bins) · ACE 0.1110 (15 equal-mass bins, averaged over classes)
    """
    level = tests.alpha if alpha is None else alpha
    text = f"at α = {level:g} ({tests.target}, n = {tests.n:,}; asymptotic p-values)"
    mce, ace = tests.measures.get("mce"), tests.measures.get("ace")
    if mce is not None:
        # (no "|": a caption may be rendered as Markdown, where pipes start a table)
        text += f" · MCE {_fmt(mce.value)} (largest gap observed − predicted, {mce.n_bins} equal-width bins)"
    if ace is not None:
        text += f" · ACE {_fmt(ace.value)} ({ace.n_bins} equal-mass bins, averaged over classes)"
    return text


def classical_table(tests, *, alpha: float | None = None, height: int = 190) -> hv.Element:
    """The classical tests as a compact HoloViews table titled with n and the target.

    Parameters
    ----------
    tests : ClassicalTests, str or None
        From :func:`calviz.classical_tests`; ``None`` or a message string give a placeholder.
    alpha : float, optional
        The level of the decisions.
    height : int, default 190
        Height in pixels.

    Returns
    -------
    holoviews.Element
        A Table (or a placeholder).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> tests = calviz.classical_tests(y, p, measures=True)
    >>> type(plots.classical_table(tests)).__name__
    'Table'
    """
    title = "Other tests"
    if tests is None or isinstance(tests, str):
        return placeholder(tests or "other tests not computed", title, height=height)
    _ensure_backend()
    columns = classical_columns(tests, alpha=alpha)
    level = tests.alpha if alpha is None else alpha
    names = {"statistic": "statistic", "pvalue": "p-value", "decision": f"decision at α = {level:g}",
             "detects": "what it detects"}
    table = hv.Table({"test": columns["test"], **{names[k]: columns[k] for k in names}},
                     kdims=["test"], vdims=list(names.values()))
    return table.opts(title=f"{title} (n = {tests.n:,}, {tests.target})", height=height, width=900,
                      hooks=[_compact_table])


def _compact_table(plot, element) -> None:
    """Bokeh DataTable look: no index column, stretch to the panel, narrow number columns."""
    table = plot.handles["table"]
    table.index_position = None
    table.sizing_mode = "stretch_width"
    table.autosize_mode = "none"
    for column, width in zip(table.columns, (190, 80, 80, 130, 520), strict=False):
        column.width = width


__all__ += ["classical_columns", "classical_caption", "classical_table"]
