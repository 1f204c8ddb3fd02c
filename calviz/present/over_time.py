"""The over-time view's tables and sentences: per-window rows, the window series the card draws, one
window's diagram against the reference, and the caption.

No statistics and no GUI import: every number comes from the result object.
"""

from __future__ import annotations

import math

import numpy as np

from calviz._results import format_pvalue
from calviz.present.labels import format_value

__all__ = ["over_time_caption", "window_label", "over_time_frame", "over_time_windows", "window_diagram",
           "over_time_svg"]


def over_time_caption(over_time) -> str:
    """The over-time view in sentences: the monitor's state and the per-window tests' rejections.

    The monitor's alarm (the window where its e-value reached 1/α), or its largest e-value against 1/α,
    and how many windows the per-window T-Cal tests reject after Holm's correction.

    Parameters
    ----------
    over_time : OverTime
        From :func:`calviz.analysis.compute.compute_over_time`.

    Returns
    -------
    str
        The sentences.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz._timed import with_time
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_over_time
    >>> from calviz.present import over_time
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < p).astype(int)
    >>> print(over_time.over_time_caption(compute_over_time(with_time((y, p), np.repeat([1, 2, 3], 1000)),
    ...                                                 AnalysisOptions())))
    No alarm: the monitor's largest e-value is 1 < 1/α = 20 (anytime-valid p = 1.0000). 3 windows (one
    window per distinct time, 3,000 rows); per-window T-Cal: 0 of 3 reject at α = 0.05 after Holm's
    correction for the 3 windows.
    """
    w, m = over_time.windows, over_time.monitor
    count = w.n_windows
    if m.alarm:
        when = m.start[m.alarm_index] if m.alarm_index < len(m.start) else m.alarm_time
        from calviz.present.over_time import window_label

        state = (f"Alarm: the monitor's e-value reached 1/α = {m.threshold:g} in window {m.alarm_index + 1} "
                 f"(from {window_label(when)}); it is {m.statistic:.3g} now — calibration is rejected at "
                 f"level α = {m.alpha:g}, valid however often the log was checked")
    else:
        top = float(np.exp(min(float(np.max(m.log_evalues)), 700.0))) if m.log_evalues.size else 1.0
        state = (f"No alarm: the monitor's largest e-value is {top:.3g} < 1/α = {m.threshold:g} "
                 f"(anytime-valid p = {m.pvalue:.4f})")
    rejected = int(np.sum(w.reject))
    return (f"{state}. {count} windows ({w.window}, {int(np.sum(w.n)):,} rows); per-window T-Cal: "
            f"{rejected} of {count} reject at α = {w.alpha:g} after Holm's correction for the "
            f"{count} windows.")


def window_label(value) -> str:
    """A window's start (an element of ``CalibrationOverTime.start``) as a short label.

    Parameters
    ----------
    value : numpy.datetime64, number or str
        The start: a datetime (its date, and its time when not midnight), a number or a batch id.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz.present import over_time
    >>> over_time.window_label(np.datetime64("2026-01-02T00:00:00", "ns")), over_time.window_label("batch-7")
    ('2026-01-02', 'batch-7')
    """
    if isinstance(value, np.datetime64):
        seconds = value.astype("datetime64[s]")
        day = seconds.astype("datetime64[D]")
        return str(day) if seconds == day else str(seconds).replace("T", " ")
    if isinstance(value, (float, np.floating)):
        return format_value(float(value))
    return str(value.item() if isinstance(value, np.generic) else value)


def over_time_frame(over_time) -> dict[str, list]:
    """Display columns of the over-time view, one row per window.

    ``window`` (its start), ``n``, ``mean prediction``, ``observed rate``, ``ECE [interval]``,
    ``T-Cal p (Holm)`` (the Holm-adjusted analytic p-value, "*" when it rejects) and ``e-value`` (the
    monitor's e-process after the window).

    Parameters
    ----------
    over_time : OverTime
        From :func:`calviz.analysis.compute.compute_over_time`.

    Returns
    -------
    dict of list
        Column name → values.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz._timed import with_time
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_over_time
    >>> from calviz.present import over_time
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < p).astype(int)
    >>> data = with_time((y, p), np.repeat([1, 2, 3], 1000))
    >>> columns = over_time.over_time_frame(compute_over_time(data, AnalysisOptions()))
    >>> columns["window"], columns["n"]
    (['1', '2', '3'], ['1,000', '1,000', '1,000'])
    """
    w, m = over_time.windows, over_time.monitor
    evalues = m.log_evalues if m.log_evalues.shape[0] == w.n_windows else np.full(w.n_windows, np.nan)
    return {
        "window": [window_label(v) for v in w.start],
        "n": [f"{int(v):,}" for v in w.n],
        "mean prediction": [format_value(v) for v in w.mean_prediction],
        "observed rate": [format_value(v) for v in w.observed_rate],
        "ECE [interval]": [f"{format_value(e)} [{format_value(lo)}, {format_value(hi)}]"
                           for e, lo, hi in zip(w.ece, w.ece_low, w.ece_high, strict=True)],
        "T-Cal p (Holm)": [format_pvalue(p) + (" *" if r else "")
                           for p, r in zip(w.tcal_pvalue_adjusted, w.reject, strict=True)],
        "e-value": [f"{math.exp(min(float(v), 700.0)):.3g}" if np.isfinite(v) else "—" for v in evalues],
    }


def over_time_windows(over_time) -> dict[str, np.ndarray]:
    """The drawing table of the over-time figures, one row per window.

    ``x`` (the window's start: datetime64 for datetimes, else the window's index), ``label``, ``n``,
    ``ece`` / ``ece_low`` / ``ece_high``, ``mean`` / ``mean_low`` / ``mean_high`` (prediction),
    ``observed`` / ``observed_low`` / ``observed_high``, ``evalue`` (the monitor's e-process after the
    window, kept within [e⁻⁶⁹⁰, e⁷⁰⁰] for a log axis), ``reject`` (the window's Holm-corrected T-Cal) and
    ``alarm`` (the monitor has alarmed by then).

    Parameters
    ----------
    over_time : OverTime
        From :func:`calviz.analysis.compute.compute_over_time`.

    Returns
    -------
    dict of ndarray
        Column name → values.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz._timed import with_time
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_over_time
    >>> from calviz.present import over_time
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> table = over_time.over_time_windows(compute_over_time(with_time((y, p), np.repeat([5, 9], 1000)),
    ...                                                    AnalysisOptions()))
    >>> table["x"].tolist(), table["n"].tolist()
    ([0, 1], [1000, 1000])
    """
    w, m = over_time.windows, over_time.monitor
    count = w.n_windows
    datetimes = np.asarray(w.start).dtype.kind == "M"
    log_e = m.log_evalues if m.log_evalues.shape[0] == count else np.zeros(count)
    alarm = np.zeros(count, dtype=bool)
    if m.alarm_index is not None and m.log_evalues.shape[0] == count:
        alarm[m.alarm_index:] = True
    return {
        "x": np.asarray(w.start) if datetimes else np.arange(count),
        "label": np.asarray([window_label(v) for v in w.start], dtype=object),
        "n": np.asarray(w.n),
        "ece": w.ece, "ece_low": w.ece_low, "ece_high": w.ece_high,
        "mean": w.mean_prediction, "mean_low": w.mean_prediction_low, "mean_high": w.mean_prediction_high,
        "observed": w.observed_rate, "observed_low": w.observed_low, "observed_high": w.observed_high,
        "evalue": np.exp(np.clip(log_e, -690.0, 700.0)),
        "reject": np.asarray(w.reject, dtype=bool), "alarm": alarm,
    }


def window_diagram(over_time, index: int) -> dict[str, dict[str, np.ndarray]]:
    """The reliability diagram of window ``index`` against the reference window.

    Per diagram (``"window"``, ``"reference"``) the non-empty bins' ``x`` (mean prediction), ``y``
    (observed frequency), ``low`` / ``high`` (its interval) and ``count``.

    Parameters
    ----------
    over_time : OverTime
        From :func:`calviz.analysis.compute.compute_over_time`.
    index : int
        The window (as listed).

    Returns
    -------
    dict of dict of ndarray
        ``{"window": columns, "reference": columns}``.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz._timed import with_time
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_over_time
    >>> from calviz.present import over_time
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> result = compute_over_time(with_time((y, p), np.repeat([5, 9], 1000)), AnalysisOptions(n_bins=10))
    >>> diagram = over_time.window_diagram(result, 1)
    >>> int(diagram["window"]["count"].sum()), int(diagram["reference"]["count"].sum())
    (1000, 1000)
    """
    w = over_time.windows
    out = {}
    for name, rel in (("window", w.reliability(int(index))), ("reference", w.reference_reliability())):
        keep = np.asarray(rel.counts) > 0
        out[name] = {"x": np.asarray(rel.mean_confidence)[keep],
                     "y": np.asarray(rel.observed_frequency)[keep],
                     "low": np.asarray(rel.low)[keep], "high": np.asarray(rel.high)[keep],
                     "count": np.asarray(rel.counts)[keep]}
    return out


def over_time_svg(over_time, width: int = 760) -> str:
    """The over-time view as a static SVG (the report's figure: no script, opens offline).

    Two panels over the windows in time order: the ECE with its interval per window (a window whose
    Holm-corrected T-Cal rejects is drawn in red), and the monitor's e-process on a log scale with the
    1/α line and, after an alarm, the alarm window marked.  Every number is read from
    :func:`over_time_windows`.

    Parameters
    ----------
    over_time : OverTime
        From :func:`calviz.analysis.compute.compute_over_time`.
    width : int, default 760
        Width in pixels.

    Returns
    -------
    str
        An ``<svg>`` element.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz._timed import with_time
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_over_time
    >>> from calviz.present import over_time
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> svg = over_time.over_time_svg(compute_over_time(with_time((y, p), np.repeat([5, 9], 1000)),
    ...                                                 AnalysisOptions()))
    >>> svg.startswith("<svg") and "1/α = 20" in svg
    True
    """
    import html

    table = over_time_windows(over_time)
    m = over_time.monitor
    count = int(table["n"].shape[0])
    left, right, panel, gap, top = 70, 20, 150, 50, 24
    height = top + 2 * panel + gap + 40
    plot_w = width - left - right

    def x_of(i: int) -> float:
        return left + (plot_w * (i + 0.5) / max(count, 1))

    def y_scale(lo: float, hi: float, y0: float):
        span = hi - lo if hi > lo else 1.0
        return lambda v: y0 + panel - panel * (v - lo) / span

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="over-time-figure" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">']

    def frame(y0: float, title: str, lo_text: str, hi_text: str) -> None:
        parts.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{panel}" fill="none" '
                     'stroke="#999"/>')
        parts.append(f'<text x="{left}" y="{y0 - 6}" font-weight="bold">{html.escape(title)}</text>')
        parts.append(f'<text x="{left - 4}" y="{y0 + panel}" text-anchor="end">{html.escape(lo_text)}</text>')
        parts.append(f'<text x="{left - 4}" y="{y0 + 10}" text-anchor="end">{html.escape(hi_text)}</text>')

    # panel 1: the ECE and its interval per window
    high = table["ece_high"][np.isfinite(table["ece_high"])]
    ece_top = float(max(high.max(initial=0.0), np.nanmax(table["ece"], initial=0.0), 1e-6))
    y1 = y_scale(0.0, ece_top, top)
    frame(top, "ECE per window with its interval (red: T-Cal rejects, Holm)", "0", format_value(ece_top))
    for i in range(count):
        e, lo, hi = (float(table[k][i]) for k in ("ece", "ece_low", "ece_high"))
        color = "#c0392b" if table["reject"][i] else "#1f77b4"
        if math.isfinite(lo) and math.isfinite(hi):
            parts.append(f'<line x1="{x_of(i):.1f}" x2="{x_of(i):.1f}" y1="{y1(max(lo, 0.0)):.1f}" '
                         f'y2="{y1(hi):.1f}" stroke="{color}" stroke-opacity="0.6"/>')
        if math.isfinite(e):
            parts.append(f'<circle cx="{x_of(i):.1f}" cy="{y1(e):.1f}" r="2" fill="{color}">'
                         f'<title>{html.escape(str(table["label"][i]))}: ECE {format_value(e)} '
                         f'[{format_value(lo)}, {format_value(hi)}]</title></circle>')
    # panel 2: log10 of the e-process after each window, the 1/α line, the alarm
    y0 = top + panel + gap
    log10_e = np.log10(table["evalue"])
    line = math.log10(m.threshold)
    lo_e, hi_e = float(min(log10_e.min(initial=0.0), 0.0)), float(max(log10_e.max(initial=0.0), line) + 0.5)
    y2 = y_scale(lo_e, hi_e, y0)
    frame(y0, f"monitor e-process (log scale) against 1/α = {m.threshold:g}", f"1e{round(lo_e):d}",
          f"1e{round(hi_e):d}")
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y2(line):.1f}" y2="{y2(line):.1f}" '
                 f'stroke="#c0392b" stroke-dasharray="5,3"/>')
    parts.append(f'<text x="{left + plot_w - 4}" y="{y2(line) - 4:.1f}" text-anchor="end" fill="#c0392b">'
                 f'1/α = {m.threshold:g}</text>')
    if count:
        points = " ".join(f"{x_of(i):.1f},{y2(v):.1f}" for i, v in enumerate(log10_e))
        parts.append(f'<polyline points="{points}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
    if table["alarm"].any():
        first = int(np.argmax(table["alarm"]))
        parts.append(f'<line x1="{x_of(first):.1f}" x2="{x_of(first):.1f}" y1="{y0}" y2="{y0 + panel}" '
                     f'stroke="#c0392b"/>')
        parts.append(f'<text x="{x_of(first) + 4:.1f}" y="{y0 + 12}" fill="#c0392b">alarm: '
                     f'{html.escape(str(table["label"][first]))}</text>')
    # the time axis: first and last window
    if count:
        base = y0 + panel + 16
        parts.append(f'<text x="{left}" y="{base}">{html.escape(str(table["label"][0]))}</text>')
        parts.append(f'<text x="{left + plot_w}" y="{base}" text-anchor="end">'
                     f'{html.escape(str(table["label"][-1]))} ({count} windows)</text>')
    parts.append("</svg>")
    return "".join(parts)
