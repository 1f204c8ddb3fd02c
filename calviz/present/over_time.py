"""The over-time view's tables and sentences: per-window rows, the window series the card draws, one
window's diagram against the reference, and the caption.

No statistics and no GUI import: every number comes from the result object.
"""

from __future__ import annotations

import math

import numpy as np

from calviz._results import format_pvalue
from calviz.present.labels import format_value

__all__ = ["over_time_caption", "window_label", "over_time_frame", "over_time_windows", "window_diagram"]


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
