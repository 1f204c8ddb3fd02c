"""The tables a view draws: columns, colours and hover fields of every view, from the engine's results.

No statistics and no GUI import at module level: every number comes from a result object (through
:mod:`calviz.analysis`); the dashboard's Bokeh figures and :mod:`calviz.plots`' HoloViews figures draw the
same tables.

Colours are shared by all views: :data:`CALIBRATED` (teal) for "consistent with calibration / not
rejected", :data:`MISCALIBRATED` (crimson) for "miscalibrated / rejected", :data:`ESTIMATE` (dark slate)
for a size that is not a test (the implied interval for the distance to calibration, which describes
the sample and is above 0 even for a calibrated model).
"""

from __future__ import annotations

import numpy as np

from calviz._results import format_pvalue
from calviz.present.labels import MEASURE_LABELS, bound_label, format_value

__all__ = [
    "CALIBRATED", "MISCALIBRATED", "NEUTRAL", "ACCENT", "HIST", "ESTIMATE", "RANK_COLOURS", "rank_colour",
    "readable_ticks", "bins", "BIN_TOOLTIPS", "bar_table", "hist_table", "HIST_TOOLTIPS", "smooth_table",
    "witness_table", "is_multi", "RANK_POINT_COLUMNS", "RANK_HIST_COLUMNS", "rank_tables",
    "class_grid_columns", "tcal_tooltips", "tcal_shown_scales", "critical_values_drawn", "tcal_frame",
    "INTERVAL_TOOLTIPS", "interval_frame", "DISTANCE_TOOLTIPS", "DISTANCE_BAND_TOOLTIPS",
    "distance_measures", "distance_frame", "classical_columns",
]


CALIBRATED = "#0e9384"  # teal
MISCALIBRATED = "#c8102e"  # crimson
NEUTRAL = "#5b6470"  # slate: diagonal, reference lines
ACCENT = "#3a6fb0"  # blue: smooth curve, bootstrap
HIST = "#9aa5b1"
ESTIMATE = "#34495e"  # dark slate: a size, not a test decision


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
    >>> from calviz.present import frames
    >>> frames.rank_colour(1) != frames.rank_colour(2)
    True
    """
    return RANK_COLOURS[(int(r) - 1) % len(RANK_COLOURS)]


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
    >>> from calviz.present import frames
    >>> frames.readable_ticks().use_scientific
    False
    """
    from bokeh.models import BasicTickFormatter

    return BasicTickFormatter(use_scientific=False)


def _arr(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64).ravel()


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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> b = frames.bins(rel)
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
    left, right = edges[:m], edges[1 : m + 1]
    value_range = getattr(reliability, "value_range", None)
    if value_range is not None and getattr(reliability, "scheme", "") == "equal_mass":
        # equal-mass edges run from 0 to 1, but the outer bins hold predictions only from the smallest to
        # the largest one: a bar drawn from 0 would claim predictions that were never made
        left, right = np.clip(left, *value_range), np.clip(right, *value_range)
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
        "left": left,
        "right": right,
        "sel": sel,
        "covered": covered,
    }


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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> table = frames.bar_table(frames.bins(rel))
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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> sorted(frames.hist_table(frames.bins(rel)))
    ['c0', 'c1', 'count', 'x0', 'x1']
    """
    m = b["counts"].shape[0]
    return {"x0": b["left"], "c0": np.zeros(m), "x1": b["right"], "c1": b["counts"],
            "count": b["counts"].astype(np.int64)}


#: hover lines of a confidence-histogram bar
HIST_TOOLTIPS = (("bin", "[@x0{0.000}, @x1{0.000})"), ("count", "@count"))


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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> smooth = calviz.smooth_reliability(y, p, n_resamples=0, grid_size=101)
    >>> sorted(frames.smooth_table(smooth)), len(frames.smooth_table(smooth)["x"])
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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> table = frames.witness_table(calviz.smce_witness(y, p))
    >>> sorted(table), len(table["x"]) <= 2000
    (['w', 'x'], True)
    """
    if witness is None:
        return {"x": np.zeros(0), "w": np.zeros(0)}
    wx = _arr(witness.predictions)
    wy = _arr(witness.witness)
    wx, wy = _display_curve(wx, wy)
    return {"x": wx, "w": wy}


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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> frames.is_multi(calviz.reliability(y, p))
    False
    """
    return getattr(reliability, "panels", None) is not None


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
    >>> from calviz.present import frames
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-perturbed_top2", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="topk", top_k=2))
    >>> tables = frames.rank_tables(multi)
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
    >>> from calviz.present import frames
    >>> [frames.class_grid_columns(k) for k in (2, 3, 4, 7)]
    [2, 3, 2, 3]
    """
    n_panels, max_cols = int(n_panels), max(1, int(max_cols))
    if n_panels == 4 and max_cols < 4:
        return 2
    return max(1, min(n_panels, max_cols))


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
    >>> from calviz.present import frames
    >>> [label for label, _ in frames.tcal_tooltips(False)]
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
    cells).  Finer scales, at which most bins are empty and most occupied bins hold a single row, are
    still tested and counted in the Bonferroni correction (Algorithm 2 of Lee, Huang, Hassani and
    Dobriban, 2023, tests every dyadic scale up to its B); they are only left off the axis, so that the
    axis ends near the sample size (228 rows: 128 bins, not 16,384), and the caption counts them and
    those of them that reject (:func:`calviz.present.text.tcal_hidden_note`).  At least the coarsest
    scale is always drawn.

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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> scales = np.asarray(t.n_bins)
    >>> bool(scales[frames.tcal_shown_scales(t, scales, t.scale_rejections)].max() <= t.n)
    True
    """
    n = getattr(tcal, "n", None)
    if n is None or not scales.size:
        return np.ones(scales.shape, dtype=bool)
    exponent = int(tcal.K) - 1 if tcal.target == "full" else 1
    with np.errstate(over="ignore"):
        cells = scales.astype(np.float64) ** max(exponent, 1)
    shown = cells <= float(n)
    shown[np.argmin(cells)] = True
    return shown


def critical_values_drawn(tcal) -> bool:
    """Whether the T-Cal view draws a critical value: some scale has a finite one.

    A sequential test that settled before estimating them, or a tail bound that settled it without
    resampling, computes none.

    Parameters
    ----------
    tcal : TCalResult
        From :func:`calviz.adaptive_tcal`.

    Returns
    -------
    bool
        True when some scale's critical value is finite.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> frames.critical_values_drawn(calviz.adaptive_tcal(y, p, resampling="analytic"))
    True
    """
    crit = tcal.critical_values
    return crit is not None and bool(np.isfinite(np.asarray(crit, dtype=np.float64)).any())


def tcal_frame(tcal) -> dict:
    """The drawing data of the T-Cal view.

    ``table`` (per scale: ``bins`` — the number of bins, or the distinct predicted value when the engine
    ran the exact binomial test —, ``statistic``, ``critical``, ``pvalue``, ``color`` crimson where the
    scale rejects, ``state``), ``discrete`` (x is a predicted value: linear axis), the axis ranges
    ``xlim``/``ylim``, ``hidden`` (tested scales left off the axis by :func:`tcal_shown_scales`; 0
    for the binomial test) and ``hidden_rejected`` (how many of those reject).

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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> frame = frames.tcal_frame(t)
    >>> sorted(frame)
    ['discrete', 'hidden', 'hidden_rejected', 'table', 'xlim', 'ylim']
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
    hidden_rejected = int(np.asarray(rejected, dtype=bool)[~shown].sum())
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
    return {"table": table, "discrete": discrete, "xlim": xlim, "ylim": ylim, "hidden": hidden,
            "hidden_rejected": hidden_rejected}


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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> frame = frames.interval_frame(ci)
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


DISTANCE_TOOLTIPS = (("measure", "@name"), ("value", "@value{0.00000}"), ("bounds", "@inequality"),
                     ("", "@implies"))


DISTANCE_BAND_TOOLTIPS = (
    ("implied dCE interval", "[@low{0.00000}, @high{0.00000}]"),
    ("lower end from", "@lower_from"),
    ("upper end from", "@upper_from"),
)


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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> [row["name"] for row in frames.distance_measures(b)]
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
            implies = (implies + f"  bootstrap band [{format_value(lo)}, {format_value(hi)}]").strip()
    label = MEASURE_LABELS.get(str(key).lower(), str(key))
    return {"name": label, "value": number, "inequality": str(text), "implies": str(implies)}


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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> sorted(frames.distance_frame(b))
    ['band', 'table', 'xlim', 'ylim', 'yticks']
    """
    rows = distance_measures(bounds) if bounds is not None else []
    if not rows:  # same layers and rows as a real result, empty
        rows = [
            {"name": MEASURE_LABELS[k], "value": np.nan, "inequality": "", "implies": ""}
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
        "lower_from": [bound_label(bounds.lower_bound if bounds is not None else "")],
        "upper_from": [bound_label(bounds.upper_bound if bounds is not None else "")],
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
    >>> from calviz.present import frames
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> tests = calviz.classical_tests(y, p, measures=True)
    >>> columns = frames.classical_columns(tests, alpha=0.01)
    >>> columns["test"][:2], columns["decision"][:2]
    (['Spiegelhalter z', 'Hosmer–Lemeshow'], ['does not reject', 'rejects'])
    """
    from calviz.present.text import decision_cell  # (the sentences read these tables: imported here)

    rows = tests.rows(alpha)
    return {
        "test": [r["test"] for r in rows],
        "statistic": [format_value(r["statistic"]) for r in rows],
        "pvalue": [format_pvalue(r["pvalue"]) for r in rows],
        "decision": [decision_cell(r["reject"]) for r in rows],
        "detects": [r["detects"] for r in rows],
    }
