"""Pure functions: engine result objects → HoloViews elements (Bokeh backend).

No widgets, no state, no statistics: every number drawn here was computed by the engine (through
``calviz.analysis``), every table comes from :mod:`calviz.present.frames` and every word from
:mod:`calviz.present.text` and :mod:`calviz.present.labels` (whose public names are importable from here
too, as they were).  Each function accepts ``None`` for an optional input and returns a readable
placeholder when its main result is missing, so a dashboard or report never breaks because one engine
is absent.  Whether a notebook has been sent BokehJS is :mod:`calviz._notebook`'s to remember.

Colours are shared by all views: :data:`CALIBRATED` (teal) for "consistent with calibration / not
rejected", :data:`MISCALIBRATED` (crimson) for "miscalibrated / rejected", :data:`ESTIMATE` (dark slate)
for a size that is not a test (the implied interval for the distance to calibration, which describes
the sample and is above 0 even for a calibrated model).
"""

from __future__ import annotations

import numpy as np

from calviz._lazy import LazyModule
from calviz._notebook import ensure_backend, no_notebook_output  # noqa: F401
from calviz._results import format_pvalue, pvalue_phrase  # noqa: F401
from calviz.analysis.views import REGISTRY
from calviz.present.frames import (  # noqa: F401  (public names of calviz.plots before they moved)
    ACCENT,
    BIN_TOOLTIPS,
    CALIBRATED,
    DISTANCE_BAND_TOOLTIPS,
    DISTANCE_TOOLTIPS,
    ESTIMATE,
    HIST,
    HIST_TOOLTIPS,
    INTERVAL_TOOLTIPS,
    MISCALIBRATED,
    NEUTRAL,
    RANK_COLOURS,
    RANK_HIST_COLUMNS,
    RANK_POINT_COLUMNS,
    bar_table,
    bins,
    class_grid_columns,
    classical_columns,
    distance_frame,
    distance_measures,
    hist_table,
    interval_frame,
    is_multi,
    rank_colour,
    rank_tables,
    readable_ticks,
    smooth_table,
    tcal_frame,
    tcal_shown_scales,
    tcal_tooltips,
    witness_table,
)
from calviz.present.labels import METHOD_NAMES, format_value, measure_label, method_name, tcal_xlabel  # noqa: F401
from calviz.present.text import (  # noqa: F401
    BOOTSTRAP_NOTE,
    DISTANCE_MISSING,
    RELIABILITY_MISSING,
    bins_phrase,
    classical_caption,
    distance_caption,
    distance_title,
    interval_caption,
    interval_details,
    interval_title,
    rank_reliability_title,
    reliability_caption,
    scalar_reliability_title,
    tcal_caption,
    tcal_hidden_note,
    tcal_marks,
    tcal_verdict,
)
from calviz.present.verification import corp_tables
from calviz.targets import simplex_cells  # noqa: F401

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
    "corp_plot",
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


_FONT = {"title": "11pt", "labels": "10pt", "xticks": "9pt", "yticks": "9pt"}
_TOOLS = ["hover"]


#: view name → (what the view shows, in one plain sentence; the mathematics behind it, for a tooltip or a
#: "more" link): the registry's ``View.explanation``.  The app's cards and the report's sections read these.
VIEW_EXPLANATIONS = {record.name: record.explanation for record in REGISTRY if record.explanation is not None}
#: what each figure's marks mean (the registry's ``View.marks``)
GLYPHS = {record.name: record.marks for record in REGISTRY if record.marks is not None}


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
    ensure_backend()
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


def _frequency_axes(title: str, height: int, **legend):
    """Options of a reliability diagram's main panel: observed frequency against confidence on [0, 1]²
    (the x label sits under the histogram panel below it), with a legend placed by ``legend``."""
    return hv.opts.Overlay(title=title, xlim=(0, 1), ylim=(-0.02, 1.02), xlabel="",
                           ylabel="observed frequency", height=height, responsive=True, show_legend=True,
                           fontsize=_FONT, min_width=300, **legend)


#: a legend in rows above the axes: small labels with room between entries (so they never run together)
_LEGEND_OPTS = {"label_text_font_size": "8pt", "spacing": 14, "padding": 2, "margin": 0,
                "label_height": 12, "glyph_height": 12, "glyph_width": 18, "label_standoff": 4}


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
    ensure_backend()
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
    ensure_backend()
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
    ensure_backend()
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
        out["no classes"] = placeholder(RELIABILITY_MISSING, height=panel_height)
    return out


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
    ensure_backend()
    if reliability.kind == "rank":
        parts = rank_reliability_elements(reliability, title=title, height=height)
        opts = hv.opts.Layout(shared_axes=True, merge_tools=True, toolbar="right")
        return hv.Layout([parts["main"], parts["hist"]]).cols(1).opts(opts)
    opts = hv.opts.Layout(shared_axes=False, merge_tools=True, toolbar="right")
    ncols = class_grid_columns(len(reliability.panels), max_cols)
    panels = class_reliability_elements(reliability, panel_height=max(130, height // 2))
    return hv.Layout(list(panels.values())).cols(ncols).opts(opts)


def corp_plot(corp, *, title: str | None = None, xlabel: str = "confidence (predicted probability)",
              height: int = 330) -> hv.Layout:
    """The CORP reliability diagram: the isotonic curve, its consistency band and the predictions' histogram.

    Black steps: the isotonic recalibration curve; shaded: its consistency band; dashed: the diagonal;
    below: the predictions' distribution.  Where the curve leaves the band, a calibrated model would
    rarely have produced it: the model is miscalibrated there (Dimitriadis, Gneiting and Jordan [1]_, Fig.
    1).  The drawing data are :func:`calviz.present.verification.corp_tables`.

    Parameters
    ----------
    corp : CORPReliability
        From :func:`calviz.corp_reliability` (the consistency band is drawn when it was computed).
    title : str, optional
        Default: the target, n and the miscalibration MCB.
    xlabel : str
        The x axis' label.
    height : int, default 330
        Height of the main panel in pixels.

    Returns
    -------
    holoviews.Layout
        The diagram above the histogram.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan. Stable reliability diagrams for probabilistic
       classifiers. *Proceedings of the National Academy of Sciences* 118(8), e2016191118, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz import plots
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> layout = plots.corp_plot(calviz.corp_reliability(y, p, n_resamples=50, seed=0))
    >>> type(layout).__name__, len(layout)
    ('Layout', 2)
    """
    ensure_backend()
    from bokeh.models import HoverTool

    tables = corp_tables(corp)
    band = tables["band"]
    shade = hv.Area((band["x"], band["low"], band["high"]), "x", ["y", "y2"],
                    label="consistency band").opts(color=ACCENT, alpha=0.2, line_alpha=0)
    diagonal = hv.Curve(([0, 1], [0, 1]), "x", "y", label="perfect calibration").opts(
        color=NEUTRAL, line_dash="dashed", line_width=1.5)
    curve = hv.Curve((tables["curve"]["x"], tables["curve"]["y"]), "x", "y", label="CORP curve").opts(
        color="black", line_width=2, tools=[HoverTool(tooltips=[("prediction", "@x{0.000}"),
                                                                ("recalibrated", "@y{0.000}")])])
    if title is None and corp is not None:
        title = f"{corp.target} · CORP (isotonic) · n = {int(corp.n):,} · MCB = {format_value(corp.mcb)}"
    main = (shade * diagonal * curve).opts(
        _frequency_axes(title or "CORP reliability diagram", height, legend_position="top", legend_cols=3,
                        legend_opts=_LEGEND_OPTS))
    hist = hv.Rectangles(tables["hist"], kdims=["x0", "c0", "x1", "c1"], vdims=["count"]).opts(
        color=HIST, line_color="white", tools=[HoverTool(tooltips=list(HIST_TOOLTIPS))], xlim=(0, 1),
        height=max(90, height // 3), responsive=True, xlabel=xlabel, ylabel="count", yticks=3, title="",
        fontsize=_FONT, min_width=300, framewise=True)
    return hv.Layout([main, hist]).cols(1).opts(hv.opts.Layout(shared_axes=True, merge_tools=True,
                                                              toolbar="right"))


# -- 2. multi-scale T-Cal ---------------------------------------------------------------------------


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
    ensure_backend()
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
        caption = f"{caption}; {tcal_hidden_note(frame['hidden'], frame['hidden_rejected'])}"
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
    ensure_backend()
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
    ensure_backend()
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
        else DISTANCE_MISSING
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
    ensure_backend()
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
