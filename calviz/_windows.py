"""Calibration over time: a time column, windows of a prediction log, and per-window statistics.

A prediction log is a sample with a time (or batch id) per row.  The rows are sorted by time once; a
window is then a contiguous run of rows, and every window statistic except T-Cal is a function of the
window's mergeable bin sums (:class:`calviz._sums.BinSums`): expanding windows and windows "since a
reference window" are merges of the fixed windows' sums, and appending rows to the log
(:meth:`CalibrationOverTime.append`) merges the new rows' sums into the open window instead of
recomputing the others.

Windows (``window=``):

* ``None`` — one window per distinct time value (batch ids);
* ``"10000 rows"`` — consecutive runs of that many rows (in time order; the last may be shorter);
* a duration ``"1D"``, ``"6h"``, ``"30min"``, ``"2W"`` (units W, D, h, min, s, ms, us, ns) or a
  ``numpy.timedelta64`` / ``datetime.timedelta`` for datetime times — windows [k·w, (k+1)·w) aligned
  to the Unix epoch (``"1D"`` windows start at midnight UTC);
* a positive number for numeric times — windows [k·w, (k+1)·w).

Empty windows are not listed.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import re
import threading
from dataclasses import dataclass
from typing import Any, Literal

import numba
import numpy as np

from calviz._binning import check_n_bins, equal_width_edges
from calviz._data import InputError, _readonly_view, as_calibration_data
from calviz._ece import binomial_interval, reliability_from_sums
from calviz._intervals import interval_from_sums
from calviz._lazy import LazyModule
from calviz._params import (
    ALPHA,
    BOOLEAN,
    CONFIDENCE_LEVEL,
    POSITIVE_INT,
    UNIT_OPEN,
    Interval,
    InvalidParameterError,
    Options,
    check_int_in,
    parameter_message,
    validate_params,
)
from calviz._results import ResultMixin
from calviz._sums import BinSums, equal_width_1d_sums

special = LazyModule("scipy.special")

__all__ = ["calibration_over_time", "CalibrationOverTime", "as_time", "parse_window", "TimeWindows"]

#: the targets of calibration over time: one scalar prediction per row
OVER_TIME_TARGETS = ("auto", "binary", "top1")
MODES = ("fixed", "expanding", "since_reference")

_NS = {"W": 7 * 86_400 * 10**9, "D": 86_400 * 10**9, "h": 3_600 * 10**9, "min": 60 * 10**9,
       "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_UNIT_ALIASES = {"w": "W", "W": "W", "d": "D", "D": "D", "h": "h", "H": "h", "min": "min", "T": "min",
                 "s": "s", "S": "s", "sec": "s", "ms": "ms", "L": "ms", "us": "us", "U": "us", "ns": "ns",
                 "N": "ns"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([A-Za-z]+)\s*$")
_ROWS = re.compile(r"^\s*(\d+)\s*rows?\s*$", re.IGNORECASE)


# ------------------------------------------------------------------------------------------------
# the time column
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TimeColumn:
    """A validated time column, one value per row.

    Attributes
    ----------
    values : ndarray
        int64 nanoseconds since the epoch (``kind="datetime"``), int64 or float64 numbers (``"number"``),
        or int64 codes of the sorted ``labels`` (``"label"``: string batch ids).
    kind : {"datetime", "number", "label"}
        What the user's time column held.
    labels : ndarray or None
        The sorted distinct batch ids of a ``"label"`` column (None otherwise).
    """

    values: np.ndarray
    kind: str
    labels: np.ndarray | None = None

    def show(self, values: np.ndarray) -> np.ndarray:
        """Values of this column's scale as the user's type (datetime64[ns], numbers or labels)."""
        if self.kind == "datetime":
            return np.asarray(values, dtype=np.int64).view("datetime64[ns]")
        if self.kind == "label":
            return self.labels[np.asarray(values, dtype=np.int64)]
        return np.asarray(values)


def as_time(time, n: int, caller: str = "calibration_over_time") -> TimeColumn:
    """Validate a time column of ``n`` rows: datetimes (numpy datetime64, pandas timestamps — time-zone
    aware ones in UTC — or Python datetimes), real numbers, or string batch ids (ordered as strings).
    No missing values (NaT, NaN), no infinities; ties are allowed."""
    if time is None:
        raise InputError(f"{caller}: time is required (one time, number or batch id per row)")
    arr = _time_array(time)
    if arr.ndim != 1:
        raise InputError(f"{caller}: time must be one-dimensional; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise InputError(f"{caller}: time has {arr.shape[0]} rows but the predictions have {n}")
    if arr.dtype.kind == "M":
        ns = arr.astype("datetime64[ns]", copy=False)  # (a read-only view, as CalibrationData's: no copy)
        bad = np.isnat(ns)
        if bad.any():
            raise InputError(f"{caller}: time is missing (NaT) at row {int(np.flatnonzero(bad)[0])}")
        return TimeColumn(_readonly_view(ns.view(np.int64)), "datetime")
    if arr.dtype.kind == "b":
        raise InputError(f"{caller}: time must be datetimes, numbers or batch ids; got booleans")
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise InputError(f"{caller}: time values must fit in int64")
        return TimeColumn(_readonly_view(arr.astype(np.int64, copy=False)), "number")
    if arr.dtype.kind == "f":
        values = arr.astype(np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{caller}: time is missing or not finite ({values[i]}) at row {i}")
        return TimeColumn(values, "number")
    if arr.dtype.kind in "US":
        labels, codes = np.unique(arr, return_inverse=True)
        return TimeColumn(codes.astype(np.int64).reshape(-1), "label", labels)
    raise InputError(f"{caller}: time must be datetimes, numbers or batch ids; got values of type "
                     f"{type(arr.flat[0]).__name__ if arr.size else arr.dtype}")


def _time_array(time) -> np.ndarray:
    dtype = getattr(time, "dtype", None)
    if dtype is not None and getattr(dtype, "tz", None) is not None:  # pandas tz-aware: to naive UTC
        import pandas as pd

        return np.asarray(pd.DatetimeIndex(time).tz_convert("UTC").tz_localize(None), dtype="datetime64[ns]")
    if dtype is not None and str(dtype) in ("string", "str", "category") or str(dtype).startswith("string"):
        time = np.asarray(time, dtype=object)
    arr = np.asarray(time)
    if arr.dtype == object:
        return _object_time(arr)
    return arr


def _object_time(arr: np.ndarray) -> np.ndarray:
    flat = arr.reshape(-1)
    if flat.size == 0:
        return np.asarray([], dtype=np.float64)
    if all(isinstance(v, str) for v in flat):
        return flat.astype(str)
    if all(isinstance(v, (_dt.datetime, np.datetime64, _dt.date)) or v is None for v in flat):
        import pandas as pd

        try:
            index = pd.DatetimeIndex(pd.to_datetime(flat, utc=True)).tz_localize(None)
        except (TypeError, ValueError) as exc:
            raise InputError(f"time could not be read as datetimes ({exc})") from None
        return np.asarray(index, dtype="datetime64[ns]")
    try:
        return flat.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError("time must be datetimes, numbers or batch ids; got mixed or unreadable values "
                         f"(e.g. {flat[0]!r})") from None


# ------------------------------------------------------------------------------------------------
# windows
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WindowSpec:
    """A parsed ``window=`` option.

    Attributes
    ----------
    kind : {"each", "rows", "width"}
        One window per distinct time, runs of ``size`` rows, or windows ``size`` time units wide.
    size : float
        Rows of a ``"rows"`` window, width of a ``"width"`` window (nanoseconds for datetimes); 0 for
        ``"each"``.
    text : str
        The window in words, as shown to the user.
    """

    kind: str
    size: float
    text: str


def parse_window(window, time_kind: str, caller: str = "calibration_over_time") -> WindowSpec:
    """The window specification (module docstring) for a time column of kind ``time_kind``."""
    if window is None:
        return WindowSpec("each", 0, "one window per distinct time")
    rule = ("None, 'N rows', a duration such as '1D' or '6h' (datetime time) or a positive number "
            "(numeric time)")
    if isinstance(window, str):
        rows = _ROWS.match(window)
        if rows:
            size = int(rows.group(1))
            if size < 1:
                raise InvalidParameterError(parameter_message("window", caller, rule, window))
            return WindowSpec("rows", min(size, _WIDEST), f"{size} rows")
        match = _DURATION.match(window)
        unit = _UNIT_ALIASES.get(match.group(2)) if match else None
        if match and match.group(2) in ("m", "M", "Y", "y"):
            raise InvalidParameterError(parameter_message(
                "window", caller, rule + " — months and years have no fixed length; use 'min' for minutes",
                window))
        if unit is None:
            raise InvalidParameterError(parameter_message("window", caller, rule, window))
        width = float(match.group(1)) * _NS[unit]
        if time_kind != "datetime":
            raise InputError(f"{caller}: window={window!r} is a duration, but time is not datetimes; give a "
                             f"number (the width in time units), 'N rows' or None")
        if not (width >= 1 and width == math.floor(width)):
            raise InvalidParameterError(parameter_message("window", caller, rule, window))
        return WindowSpec("width", int(min(width, _WIDEST)), window.strip())
    if isinstance(window, (np.timedelta64, _dt.timedelta)):
        if time_kind != "datetime":
            raise InputError(f"{caller}: window is a duration, but time is not datetimes")
        width = int(np.timedelta64(window, "ns").astype(np.int64))
        if width < 1:
            raise InvalidParameterError(parameter_message("window", caller, rule, window))
        return WindowSpec("width", width, str(window))
    if isinstance(window, (int, float, np.integer, np.floating)) and not isinstance(window, (bool, np.bool_)):
        if time_kind == "datetime":
            raise InputError(f"{caller}: time is datetimes; give window as a duration such as '1D' or "
                             f"'6h', or 'N rows'")
        if time_kind == "label":
            raise InputError(f"{caller}: time holds batch ids (strings); give window=None (one window per "
                             f"batch) or 'N rows'")
        if not (math.isfinite(float(window)) and float(window) > 0):
            raise InvalidParameterError(parameter_message("window", caller, rule, window))
        # an integer width beyond int64 is the same single window as a float one (no overflow)
        size = window if abs(window) < _WIDEST else float(window)
        return WindowSpec("width", size, f"width {window}")
    raise InvalidParameterError(parameter_message("window", caller, rule, window))


class WindowConstraint:
    """The ``window=`` option's form, checked before any work (whether it fits the time column's kind is
    checked with the data by :func:`parse_window`)."""

    def __str__(self) -> str:
        return ("None, 'N rows', a duration such as '1D' or '6h' (datetime time) or a positive number "
                "(numeric time)")

    def accepts(self, value) -> bool:
        try:
            parse_window(value, "datetime" if isinstance(value, (str, np.timedelta64, _dt.timedelta))
                         else "number")
        except InputError:
            return False
        return True


WINDOW = WindowConstraint()


#: widths (rows, nanoseconds, time units) from which every log is one window: kept below int64's range so
#: the window keys' integer division never overflows
_WIDEST = 2**62


def window_keys(t: np.ndarray, spec: WindowSpec, first_row: int = 0) -> np.ndarray:
    """A key per sorted row, equal within a window and increasing across windows; ``first_row`` is the
    row number of t[0] in the whole log (row windows continue counting)."""
    if spec.kind == "each":
        return t
    if spec.kind == "rows":
        return (first_row + np.arange(t.shape[0], dtype=np.int64)) // int(spec.size)
    if t.dtype.kind == "f" or isinstance(spec.size, float):
        return np.floor(t / spec.size).astype(np.int64)
    return t // np.int64(spec.size)  # floor division: windows aligned to 0 (the epoch) also before it


@dataclass(frozen=True)
class TimeWindows:
    """The fixed windows of a log sorted by time.

    Attributes
    ----------
    keys : ndarray
        The key of each window (increasing).
    starts : ndarray
        Window i holds the sorted rows ``starts[i]:starts[i+1]`` (one more entry than windows).
    first, last : ndarray
        The first and last time in each window.
    """

    keys: np.ndarray
    starts: np.ndarray
    first: np.ndarray
    last: np.ndarray

    @classmethod
    def of(cls, t_sorted: np.ndarray, spec: WindowSpec, first_row: int = 0) -> TimeWindows:
        n = t_sorted.shape[0]
        if n == 0:
            keys = window_keys(t_sorted, spec, first_row)
            return cls(keys[:0], np.zeros(1, np.int64), t_sorted[:0], t_sorted[:0])
        # the keys a block of rows at a time: no key array of the log's length (80 MB at 10⁷ rows)
        cuts, last = [np.zeros(1, np.int64)], None
        for a in range(0, n, _KEY_BLOCK):
            keys = window_keys(t_sorted[a:a + _KEY_BLOCK], spec, first_row + a)
            if last is not None and keys[0] != last:
                cuts.append(np.array([a], dtype=np.int64))
            cuts.append(np.flatnonzero(keys[1:] != keys[:-1]) + (a + 1))
            last = keys[-1]
        cuts.append(np.array([n], dtype=np.int64))
        starts = np.concatenate(cuts).astype(np.int64)
        first = starts[:-1]
        if spec.kind == "rows":  # (a row window's key counts rows from the log's first)
            keys = (first_row + first) // int(spec.size)
        else:
            keys = window_keys(t_sorted[first], spec, first_row)
        return cls(keys, starts, t_sorted[first], t_sorted[starts[1:] - 1])

    @property
    def count(self) -> int:
        return int(self.keys.shape[0])


def window_bounds(windows: TimeWindows, spec: WindowSpec) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) per window on the time scale: [k·w, (k+1)·w) for width windows; the first and last
    time of the window otherwise."""
    if spec.kind == "width":
        k = windows.keys
        if isinstance(spec.size, (int, np.integer)) and windows.first.dtype.kind in "iu":
            return k * np.int64(spec.size), (k + 1) * np.int64(spec.size)
        return k * float(spec.size), (k + 1) * float(spec.size)
    return windows.first, windows.last


#: rows per block of the passes over the time column that would otherwise hold a temporary of its length
_KEY_BLOCK = 1 << 20


def is_sorted(t: np.ndarray) -> bool:
    """Whether ``t`` is non-decreasing (checked a block at a time: no temporary of the log's length)."""
    n = t.shape[0]
    for a in range(0, n - 1, _KEY_BLOCK):
        b = min(a + _KEY_BLOCK, n - 1)
        if not bool(np.all(t[a + 1:b + 1] >= t[a:b])):
            return False
    return True


def sort_by_time(t: np.ndarray) -> np.ndarray | None:
    """The stable order that sorts ``t`` (None when it already is non-decreasing)."""
    if t.shape[0] < 2 or is_sorted(t):
        return None
    return np.argsort(t, kind="stable")


# ------------------------------------------------------------------------------------------------
# per-window statistics
# ------------------------------------------------------------------------------------------------
def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)) over the m
    finite p-values (NaN stays NaN); rejecting p̃ ≤ α controls the family-wise error rate at α."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.shape[0]
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out


def scalar_view(y_true, y_prob, target, caller: str, min_samples: int = 2):
    """Validate once: (data, resolved target, z, y) of the binary or top-1 view, y as float64 0/1."""
    from calviz.targets import resolve

    data = as_calibration_data(y_true, y_prob, min_samples=min_samples)
    resolved = resolve(data, target, allowed=OVER_TIME_TARGETS, caller=caller)
    z, y = resolved.view(data)
    return data, resolved.name, np.ascontiguousarray(z), np.asarray(y, dtype=np.float64)


def tcal_analytic_pvalue(z: np.ndarray, y: np.ndarray, alpha: float, target: str) -> float:
    """The p-value of ``calviz.adaptive_tcal(y, z, resampling="analytic")`` on one window's validated
    scalar view (NaN when the window is too small for one dyadic scale)."""
    from calviz._tcal import _adaptive, _MemorySample
    from calviz._tcal_decision import RESAMPLING_RISK

    if z.shape[0] < 2:
        return math.nan
    try:
        result = _adaptive(_MemorySample(np.ascontiguousarray(z), np.ascontiguousarray(y, dtype=np.float64),
                                         2, target), alpha, "analytic", None, None, RESAMPLING_RISK,
                           "bonferroni", None, None)
    except InputError:
        return math.nan
    return float(result.pvalue)


def window_tcal_pvalues(z: np.ndarray, y: np.ndarray, first: np.ndarray, end: np.ndarray, alpha: float,
                        target: str) -> np.ndarray:
    """:func:`tcal_analytic_pvalue` of every window ``first[i]:end[i]`` of the time-sorted (z, y) at
    once: one jitted pass sorts each window by prediction and scans its dyadic bins (the windows shared
    among threads), then the scaled chi-square p-values of all windows' scales are evaluated together.  The
    same numbers as the per-window calls (the same kernels on the same sorted rows; windows of a discrete
    predictor, whose test is the binomial one, go through :func:`tcal_analytic_pvalue`)."""
    from calviz._kernels.tcal import N_TERMS
    from calviz._kernels.windows import window_tcal_terms
    from calviz._small_n import ASYMPTOTIC_MIN_ROWS
    from calviz._tcal_decision import (
        DISCRETE_MAX_VALUES,
        analytic_pvalues,
        cantelli_bound,
        dyadic_scales,
    )

    first = np.ascontiguousarray(first, dtype=np.int64)
    end = np.ascontiguousarray(end, dtype=np.int64)
    counts = end - first
    W = counts.shape[0]
    levels = np.array([dyadic_scales(int(c), 2)[1] for c in counts], dtype=np.int64)
    z64 = np.ascontiguousarray(z, dtype=np.float64)
    y64 = np.ascontiguousarray(y, dtype=np.float64)
    terms = np.zeros((W, N_TERMS, max(int(levels.max(initial=0)), 1)))
    runs = np.zeros(W, dtype=np.int64)
    log_prob = np.zeros(W)
    # the windows dealt round-robin to the threads (each window's numbers do not depend on the thread)
    # (small work on the calling thread: starting a thread costs more than it saves)
    threads = max(1, min(numba.get_num_threads(), W)) if int(counts.sum()) >= _THREADED_ROWS else 1
    _on_threads([lambda t=t: window_tcal_terms(z64, y64, first, end, levels, np.arange(t, W, threads),
                                               DISCRETE_MAX_VALUES, terms, runs, log_prob)
                 for t in range(threads)])
    out = np.full(W, np.nan)
    tested = (counts >= 2) & (levels >= 1)
    # all windows' scales in one call: the p-value of a scale depends on that scale's terms only
    mask = np.arange(terms.shape[2])[None, :] < levels[:, None]
    mask &= tested[:, None]
    t, var, sa, sa2, k3 = (terms[:, j, :][mask] for j in range(5))
    p_scales = np.full(mask.shape, np.inf)
    p, _, _ = analytic_pvalues(t, var, sa, sa2, k3)
    small = np.repeat(counts < ASYMPTOTIC_MIN_ROWS, mask.shape[1]).reshape(mask.shape)[mask]
    p_scales[mask] = np.where(small, np.maximum(p, cantelli_bound(t, var)), p)
    with np.errstate(invalid="ignore"):
        padj = np.minimum(1.0, levels * p_scales.min(axis=1))
    floor = np.minimum(1.0, np.exp(log_prob))  # no p-value below P(labels) under calibration
    out[tested] = np.where(padj < floor, floor, padj)[tested]
    for w in np.flatnonzero(tested & (runs <= DISCRETE_MAX_VALUES)):  # possibly a discrete predictor
        out[w] = tcal_analytic_pvalue(z[first[w]:end[w]], y[first[w]:end[w]], alpha, target)
    return out


#: rows from which the per-window passes share the windows among threads
_THREADED_ROWS = 1 << 18


def _on_threads(tasks: list) -> None:
    """Run the callables ``tasks`` (jitted with ``nogil=True``) on one thread each, the first on the calling
    thread; re-raise the first error."""
    errors: list = []

    def work(task) -> None:
        try:
            task()
        except BaseException as exc:  # re-raised on the calling thread
            errors.append(exc)

    helpers = [threading.Thread(target=work, args=(task,), daemon=True) for task in tasks[1:]]
    for h in helpers:
        h.start()
    work(tasks[0])
    for h in helpers:
        h.join()
    if errors:
        raise errors[0]


_SUM_FIELDS = ("n", "z", "z2", "y", "v", "v2")


def _totals(sums: BinSums) -> tuple:
    """(n, Σz, Σz², Σy, Σv, Σv²) of a scalar BinSums (Σz² = Σz − Σz(1 − z))."""
    z = float(sums.z_sum.sum())
    return (int(sums.n_total), z, z - float(sums.null_cov_sum.sum()), float(sums.y_sum.sum()),
            float(sums.resid_sum.sum()), float(sums.resid_sq_sum.sum()))


def _mean_intervals(total, total_sq, n, zq) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per window: the mean and its normal interval mean ± z_q s/√n (NaN interval for n < 2)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / n, np.nan)
        var = np.maximum(total_sq - n * mean * mean, 0.0) / (n - 1)
        half = np.where(n >= 2, zq * np.sqrt(var / n), np.nan)
    return mean, mean - half, mean + half


_ROW_FIELDS = ("n", "mean_prediction", "mean_prediction_low", "mean_prediction_high", "observed_rate",
               "observed_low", "observed_high", "gap", "gap_low", "gap_high", "ece", "ece_low", "ece_high",
               "tcal_pvalue")


def window_row(sums: BinSums, z: np.ndarray, y: np.ndarray, *, alpha: float, level: float, n_bins: int,
               target: str, tcal: bool, tcal_pvalue: float | None = None) -> dict:
    """The per-window numbers of one window: its totals (n, Σz, Σz², Σy, Σv, Σv²; the intervals of the
    means are computed for all windows at once by :func:`window_columns`), its ECE interval from its bin
    sums, and its T-Cal p-value from its rows (``tcal_pvalue``: already computed by
    :func:`window_tcal_pvalues`)."""
    row = dict(zip(_SUM_FIELDS, _totals(sums), strict=True))
    if row["n"] >= 1:
        ci = interval_from_sums(sums, 1.0 - level, n_bins=n_bins, target=target)
        row.update(ece=ci.estimate, ece_low=ci.low, ece_high=ci.high)
    else:
        row.update(ece=math.nan, ece_low=math.nan, ece_high=math.nan)
    if not tcal:
        row["tcal_pvalue"] = math.nan
    else:
        row["tcal_pvalue"] = tcal_analytic_pvalue(z, y, alpha, target) if tcal_pvalue is None else tcal_pvalue
    return row


def window_columns(rows: list[dict], level: float) -> dict:
    """The per-window columns of :class:`CalibrationOverTime` from the windows' :func:`window_row`."""
    raw = {f: np.array([r[f] for r in rows], dtype=np.float64) for f in (*_SUM_FIELDS, "ece", "ece_low",
                                                                        "ece_high", "tcal_pvalue")}
    n = raw["n"]
    zq = float(special.ndtri(0.5 + level / 2.0))
    mean, mean_low, mean_high = _mean_intervals(raw["z"], raw["z2"], n, zq)
    gap, gap_low, gap_high = _mean_intervals(raw["v"], raw["v2"], n, zq)
    obs_low, obs_high = binomial_interval(np.round(raw["y"]), n, 1.0 - level)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.where(n > 0, raw["y"] / n, np.nan)
    return dict(n=n.astype(np.int64), mean_prediction=mean, mean_prediction_low=np.maximum(mean_low, 0.0),
                mean_prediction_high=np.minimum(mean_high, 1.0), observed_rate=observed,
                observed_low=np.asarray(obs_low, dtype=np.float64),
                observed_high=np.asarray(obs_high, dtype=np.float64), gap=gap, gap_low=gap_low,
                gap_high=gap_high, ece=raw["ece"], ece_low=raw["ece_low"], ece_high=raw["ece_high"],
                tcal_pvalue=raw["tcal_pvalue"])


# ------------------------------------------------------------------------------------------------
# the result
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Log:
    """The sorted log and its fixed windows (private state of :class:`CalibrationOverTime`)."""

    time: TimeColumn
    t: np.ndarray  # sorted time values
    z: np.ndarray  # sorted scalar predictions
    y: np.ndarray  # sorted 0/1 outcomes (float64)
    spec: WindowSpec
    windows: TimeWindows
    sums: tuple  # BinSums per fixed window
    buffers: Any = dataclasses.field(default=None, compare=False)  # room to append (:class:`_Buffers`)


@dataclass(frozen=True, repr=False)
class CalibrationOverTime(ResultMixin):
    """Calibration of a prediction log per time window, returned by :func:`calibration_over_time`.

    One entry per window (arrays of equal length, in time order).

    Attributes
    ----------
    start, end : ndarray
        The window's span: [start, end) for duration or width windows, else its first and last time
        (datetime64[ns] for datetimes, numbers, or the batch ids).
    n : ndarray of int
        Rows in the window (for ``mode="expanding"``: all rows up to its end).
    mean_prediction, mean_prediction_low, mean_prediction_high : ndarray
        Mean prediction z̄ and its normal-approximation interval z̄ ± z_{(1+level)/2} s_z/√n.
    observed_rate, observed_low, observed_high : ndarray
        Observed rate ȳ (outcome rate; top-1 accuracy) and its Wilson interval.
    gap, gap_low, gap_high : ndarray
        ȳ − z̄ (calibration in the large) and its interval ± z_{(1+level)/2} s_v/√n, v = y − z.
    ece, ece_low, ece_high : ndarray
        The binned ℓ2 ECE and its interval (:func:`calviz.ece_interval`, asymptotic method).
    tcal_pvalue : ndarray
        The analytic adaptive T-Cal p-value of each window (:func:`calviz.adaptive_tcal` with
        ``resampling="analytic"``), unadjusted (NaN: window too small).
    tcal_pvalue_adjusted : ndarray
        Holm-adjusted over the windows (``correction``).
    reject : ndarray of bool
        ``tcal_pvalue_adjusted ≤ alpha``: the window is miscalibrated, with family-wise error ≤ α over all
        windows listed.
    alpha, level : float
        Test level and confidence level of the intervals.
    n_bins : int
        Equal-width bins of the ECE.
    window, mode : str
        The window specification and the mode ("fixed", "expanding", "since_reference").
    reference : int
        Index (among the fixed windows) of the reference window.
    correction : str
        "holm": the per-window tests are Holm-corrected for the number of windows (looks).
    target : str
        "binary" or "top1".
    n_classes : int or None
        Classes of the input.
    """

    start: np.ndarray
    end: np.ndarray
    n: np.ndarray
    mean_prediction: np.ndarray
    mean_prediction_low: np.ndarray
    mean_prediction_high: np.ndarray
    observed_rate: np.ndarray
    observed_low: np.ndarray
    observed_high: np.ndarray
    gap: np.ndarray
    gap_low: np.ndarray
    gap_high: np.ndarray
    ece: np.ndarray
    ece_low: np.ndarray
    ece_high: np.ndarray
    tcal_pvalue: np.ndarray
    tcal_pvalue_adjusted: np.ndarray
    reject: np.ndarray
    alpha: float
    level: float
    n_bins: int
    window: str
    mode: str
    reference: int
    correction: str
    target: str
    n_classes: int | None = None
    _log: Any = dataclasses.field(default=None, compare=False)
    _rows: Any = dataclasses.field(default=None, compare=False)
    _tcal: bool = dataclasses.field(default=True, compare=False)

    @property
    def n_windows(self) -> int:
        return int(self.n.shape[0])

    def to_frame(self):
        """A pandas DataFrame, one row per window (the per-window attributes as columns)."""
        import pandas as pd

        columns = ["start", "end", *_ROW_FIELDS, "tcal_pvalue_adjusted", "reject"]
        return pd.DataFrame({c: getattr(self, c) for c in columns})

    def window_sums(self, i: int) -> BinSums:
        """The merged bin sums of window ``i`` (as listed)."""
        return self._rows[int(i)][0]

    def reliability(self, i: int, *, alpha: float | None = None):
        """The reliability diagram data (:class:`calviz.ReliabilityData`) of window ``i``; compare it
        with :meth:`reference_reliability`."""
        return reliability_from_sums(self.window_sums(i), equal_width_edges(self.n_bins),
                                     alpha=1.0 - self.level if alpha is None else alpha, n_bins=self.n_bins,
                                     target=self.target, n_classes=self.n_classes)

    def reference_reliability(self, *, alpha: float | None = None):
        """The reliability diagram data of the reference window."""
        sums = self._log.sums[self.reference]
        return reliability_from_sums(sums, equal_width_edges(self.n_bins),
                                     alpha=1.0 - self.level if alpha is None else alpha, n_bins=self.n_bins,
                                     target=self.target, n_classes=self.n_classes)

    def append(self, y_true, y_prob=None, *, time) -> CalibrationOverTime:
        """The result for the log with more rows appended (none earlier than the last time seen).

        The new rows' bin sums are merged into the open (last) window and the new windows; only the windows
        whose rows changed are recomputed (their T-Cal p-value needs their rows); the Holm adjustment is
        redone over all windows.  Equal to :func:`calibration_over_time` on the whole log up to
        floating-point summation order."""
        log = self._log
        _, target, z_new, y_new = scalar_view(y_true, y_prob, self.target, "append", min_samples=1)
        new_time = as_time(time, z_new.shape[0], "append")
        if new_time.kind != log.time.kind or new_time.kind == "label":
            raise InputError("append: the new times must be of the same kind as the log's (datetimes or "
                             "numbers; string batch ids cannot be appended — their order is the strings')")
        order = sort_by_time(new_time.values)
        t_new = new_time.values if order is None else new_time.values[order]
        if order is not None:
            z_new, y_new = z_new[order], y_new[order]
        if t_new.shape[0] == 0:
            return self
        if log.t.shape[0] and t_new[0] < log.t[-1]:
            raise InputError(f"append: the log is append-only; the new rows start at "
                             f"{log.time.show(t_new[:1])[0]}, before its last time "
                             f"{log.time.show(log.t[-1:])[0]}")
        y_new = np.asarray(y_new, dtype=np.float64)
        n_old = log.t.shape[0]
        new_windows = TimeWindows.of(t_new, log.spec, first_row=n_old)
        new_sums = list(window_sums(z_new, y_new, new_windows.starts, self.n_bins))
        old = log.windows
        merge_first = old.count > 0 and new_windows.keys[0] == old.keys[-1]
        sums = list(log.sums)
        if merge_first:
            sums[-1] = sums[-1].merge(new_sums[0])
            new_sums = new_sums[1:]
            changed = old.count - 1
        else:
            changed = old.count
        sums.extend(new_sums)
        keys = np.concatenate((old.keys, new_windows.keys[int(merge_first):]))
        starts = np.concatenate((old.starts[:-1], n_old + new_windows.starts[int(merge_first):]))
        first = np.concatenate((old.first, new_windows.first[int(merge_first):]))
        last = np.concatenate((old.last[:old.count - int(merge_first)], new_windows.last))
        windows = TimeWindows(keys, starts.astype(np.int64), first, last)
        t_all, z_all, y_all, buffers = _grown(log, t_new, z_new, y_new)
        log = _Log(log.time, t_all, z_all, y_all, log.spec, windows, tuple(sums), buffers)
        return _assemble(log, mode=self.mode, reference=self.reference, alpha=self.alpha, level=self.level,
                         n_bins=self.n_bins, target=self.target, n_classes=self.n_classes, tcal=self._tcal,
                         previous=self._rows, changed=changed)


class _Buffers:
    """Storage of a log's sorted (t, z, y) with room to grow: appending k rows costs O(k), not O(n), while
    the rows are appended to the newest result (a log's arrays are views of the first ``used`` rows; a
    second append to an older result, whose rows end before ``used``, copies instead — never overwriting
    rows another result shows)."""

    def __init__(self, t: np.ndarray, z: np.ndarray, y: np.ndarray, capacity: int):
        self.t = np.empty(capacity, dtype=t.dtype)
        self.z = np.empty(capacity, dtype=z.dtype)
        self.y = np.empty(capacity, dtype=np.float64)
        n = t.shape[0]
        self.t[:n], self.z[:n], self.y[:n] = t, z, y
        self.used = n


#: a log's growth reserve: the buffers hold this factor of the rows (and at least 2^16 more)
_GROWTH = 1.5


def _grown(log: _Log, t_new, z_new, y_new):
    """(t, z, y, buffers) of ``log`` with the new rows after its own (views of shared :class:`_Buffers`)."""
    n, k = log.t.shape[0], t_new.shape[0]
    buffers = log.buffers
    if (buffers is None or buffers.used != n or buffers.t.shape[0] < n + k or buffers.t.dtype != t_new.dtype
            or buffers.z.dtype != z_new.dtype):
        buffers = _Buffers(log.t, log.z, log.y, int((n + k) * _GROWTH) + (1 << 16))
    buffers.t[n:n + k], buffers.z[n:n + k], buffers.y[n:n + k] = t_new, z_new, y_new
    buffers.used = n + k
    return buffers.t[:n + k], buffers.z[:n + k], buffers.y[:n + k], buffers


def _mode_ranges(windows: TimeWindows, mode: str, reference: int) -> list[tuple[int, int, int, int]]:
    """Per listed window: (first fixed window, last fixed window, first row, end row)."""
    s = windows.starts
    W = windows.count
    if mode == "fixed":
        return [(i, i, int(s[i]), int(s[i + 1])) for i in range(W)]
    if mode == "expanding":
        return [(0, i, 0, int(s[i + 1])) for i in range(W)]
    return [(reference + 1, i, int(s[reference + 1]), int(s[i + 1])) for i in range(reference + 1, W)]


def _assemble(log: _Log, *, mode, reference, alpha, level, n_bins, target, n_classes, tcal,
              previous=None, changed: int = 0) -> CalibrationOverTime:
    windows = log.windows
    ranges = _mode_ranges(windows, mode, reference)
    rows = []  # (sums, row dict) per listed window
    merged = None

    def kept(j, b):  # rows of this window unchanged: keep its statistics
        return previous is not None and b < changed and j < len(previous)

    redo = [j for j, (_, b, _, _) in enumerate(ranges) if not kept(j, b)]
    tcal_p = dict.fromkeys(redo)
    if tcal and redo:  # every recomputed window's T-Cal in one pass
        tcal_p = dict(zip(redo, window_tcal_pvalues(log.z, log.y, [ranges[j][2] for j in redo],
                                                    [ranges[j][3] for j in redo], alpha, target).tolist(),
                          strict=True))
    for j, (_, b, r0, r1) in enumerate(ranges):
        if mode == "fixed":
            sums = log.sums[b]
        else:  # running merge of the fixed windows a..b
            merged = log.sums[b] if merged is None else merged.merge(log.sums[b])
            sums = merged
        if kept(j, b):
            rows.append(previous[j])
            continue
        rows.append((sums, window_row(sums, log.z[r0:r1], log.y[r0:r1], alpha=alpha, level=level,
                                      n_bins=n_bins, target=target, tcal=tcal, tcal_pvalue=tcal_p[j])))
    start, end = window_bounds(windows, log.spec)
    listed = np.array([b for _, b, _, _ in ranges], dtype=np.int64)
    if mode != "fixed":  # cumulative windows span from their first fixed window's start
        first_fixed = np.array([a for a, _, _, _ in ranges], dtype=np.int64)
        start_shown, end_shown = start[first_fixed], end[listed]
    else:
        start_shown, end_shown = start[listed], end[listed]
    columns = window_columns([r for _, r in rows], level)
    adjusted = holm(columns["tcal_pvalue"])
    with np.errstate(invalid="ignore"):
        reject = adjusted <= alpha
    return CalibrationOverTime(
        start=log.time.show(start_shown), end=log.time.show(end_shown), **columns,
        tcal_pvalue_adjusted=adjusted, reject=reject, alpha=alpha, level=level, n_bins=n_bins,
        window=log.spec.text, mode=mode, reference=reference, correction="holm", target=target,
        n_classes=n_classes, _log=log, _rows=tuple(rows), _tcal=tcal)


@validate_params({"window": WINDOW, "mode": Options(MODES), "reference": Interval(int, None, None),
                  "alpha": UNIT_OPEN, "level": UNIT_OPEN, "n_bins": POSITIVE_INT, "tcal": BOOLEAN})
def calibration_over_time(
    y_true,
    y_prob=None,
    *,
    time,
    window: str | float | None = "1D",
    mode: Literal["fixed", "expanding", "since_reference"] = "fixed",
    reference: int = 0,
    alpha: float = ALPHA,
    level: float = CONFIDENCE_LEVEL,
    n_bins: int = 15,
    target: Literal["auto", "binary", "top1"] = "auto",
    tcal: bool = True,
) -> CalibrationOverTime:
    """Calibration of a prediction log per time window: ECE, rates, calibration in the large, T-Cal.

    The rows are sorted by ``time`` once (stably); ``window`` cuts the sorted log into fixed windows and
    ``mode`` chooses what each listed window holds: its own rows (``"fixed"``), every row up to its end
    (``"expanding"``), or every row after the reference window up to its end (``"since_reference"``; the
    windows up to the reference are not listed).  Per window, with n rows, predictions z, outcomes y
    (0/1; for top-1 the correctness of the top class), v = y − z and z_q = Φ⁻¹((1 + level)/2):

    * mean prediction z̄ ± z_q s_z/√n and observed rate ȳ with Wilson's interval;
    * the gap ȳ − z̄ ± z_q s_v/√n (calibration in the large);
    * the binned ℓ2 ECE with the interval of Sun, Chaudhari, Barnett & Dobriban (2024, eq. 5 and
      Algorithm 1; :func:`calviz.ece_interval`);
    * the analytic adaptive T-Cal p-value (Lee, Huang, Hassani & Dobriban 2023, eq. 7 and Algorithm 2;
      :func:`calviz.adaptive_tcal` with ``resampling="analytic"``), **Holm-corrected** over the listed
      windows: p̃_(i) = max_{j ≤ i} min(1, (W − j + 1) p_(j)) (Holm 1979), so that ``reject`` (p̃ ≤ α) has
      family-wise error ≤ α over all W windows.  The correction is for the windows listed *now*: rerun
      on a grown log, it is for the larger number of looks.  For a monitor that may be read after every
      batch at no cost in level, use :func:`calviz.monitor_calibration`.

    Every statistic but T-Cal is a function of the window's mergeable bin sums: expanding windows merge
    the fixed windows' sums, and :meth:`CalibrationOverTime.append` merges appended rows into the open
    window.  The bin sums of all windows come from one jitted pass over the time-sorted rows.  T-Cal needs
    the window's rows sorted by prediction: all windows' T-Cal statistics come from one jitted pass that
    sorts and scans each window in turn (O(n log n) per window; for expanding windows on all rows so far —
    pass ``tcal=False`` to skip it).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions, class indices for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample.
    time : array-like of shape (n,)
        A time per row: datetime64 / pandas timestamps (time-zone aware ones in UTC), numbers, or batch
        ids (strings, ordered as strings).  No NaT or NaN; ties allowed.
    window : str, number, timedelta or None, default "1D"
        ``None`` (one window per distinct time), ``"N rows"``, a duration (``"1D"``, ``"6h"``,
        ``"30min"``; datetimes; aligned to the Unix epoch) or a width (numbers).
    mode : {"fixed", "expanding", "since_reference"}, default "fixed"
        What each window holds (above).
    reference : int, default 0
        The reference window among the fixed windows (negative counts from the end): the start of
        ``"since_reference"`` windows and :meth:`CalibrationOverTime.reference_reliability`.
    alpha : float, default 0.05
        Level of the per-window tests (family-wise, Holm).
    level : float, default 0.9
        Confidence level of the intervals.
    n_bins : int, default 15
        Equal-width bins of the ECE and the reliability diagrams.
    target : {"auto", "binary", "top1"}, default "auto"
        Binary P(y = 1), or top-1 (confidence) calibration of (n, K) input.
    tcal : bool, default True
        Compute the per-window T-Cal p-values.

    Returns
    -------
    CalibrationOverTime
        Per-window arrays (``to_frame()`` for a pandas DataFrame), ``reliability(i)``, ``append(...)``.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    .. [3] S. Holm. A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70, 1979.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> seconds = np.sort(rng.integers(0, 4 * 86400, 4000)).astype("timedelta64[s]")
    >>> time = np.datetime64("2026-01-01") + seconds                 # four days of predictions
    >>> p = rng.uniform(size=4000)
    >>> drift = time >= np.datetime64("2026-01-03")                   # miscalibrated from day 3 on
    >>> y = (rng.uniform(size=4000) < np.where(drift, p ** 2, p)).astype(int)
    >>> result = calviz.calibration_over_time(y, p, time=time, window="1D")
    >>> result.n.tolist()
    [986, 985, 991, 1038]
    >>> result.reject.tolist()
    [False, False, True, True]
    >>> frame = result.to_frame()
    >>> list(frame.columns[:4])
    ['start', 'end', 'n', 'mean_prediction']
    """
    alpha, level, m = float(alpha), float(level), check_n_bins(n_bins)
    data, target, z, y = scalar_view(y_true, y_prob, target, "calibration_over_time")
    time_col = as_time(time, z.shape[0])
    spec = parse_window(window, time_col.kind)
    log = build_log(time_col, z, y, spec, m)
    W = log.windows.count
    if W == 0:
        raise InputError("calibration_over_time: no rows")
    reference = check_int_in(reference, "reference", -W, W - 1, "calibration_over_time",
                             f" (the {W} windows)") % W
    if mode == "since_reference" and reference == W - 1:
        raise InputError("calibration_over_time: mode='since_reference' needs windows after the reference "
                         f"window ({reference}, the last one)")
    return _assemble(log, mode=mode, reference=reference, alpha=alpha, level=level, n_bins=m, target=target,
                     n_classes=data.n_classes, tcal=tcal)


def build_log(time_col: TimeColumn, z: np.ndarray, y: np.ndarray, spec: WindowSpec, n_bins: int) -> _Log:
    """Sort the log by time once, cut it into fixed windows and sum each window's bins."""
    order = sort_by_time(time_col.values)
    if order is None:
        t, z, y = time_col.values, np.ascontiguousarray(z), np.asarray(y, dtype=np.float64)
    else:
        t, z, y = time_col.values[order], z[order], np.asarray(y, dtype=np.float64)[order]
    windows = TimeWindows.of(t, spec)
    return _Log(time_col, t, z, y, spec, windows, window_sums(z, y, windows.starts, n_bins))


def window_sums(z: np.ndarray, y: np.ndarray, starts: np.ndarray, n_bins: int) -> tuple:
    """The equal-width BinSums of every window ``starts[i]:starts[i+1]`` of the time-sorted (z, y): one
    jitted pass over the rows (the windows shared among threads), each window's sums those of
    ``equal_width_1d_sums`` on its rows, bit for bit (a window large enough to be summed in row chunks
    goes through it)."""
    from calviz._binning import equal_width_bounds
    from calviz._kernels.ece import split_equal_width_acc
    from calviz._kernels.windows import window_equal_width_acc
    from calviz._sums import _from_1d
    from calviz._threads import PARALLEL_MIN_ROWS

    starts = np.ascontiguousarray(starts, dtype=np.int64)
    W = starts.shape[0] - 1
    counts = np.diff(starts)
    lower, upper = equal_width_bounds(n_bins)
    acc = np.zeros((W, n_bins, 8))
    small = np.flatnonzero(counts < PARALLEL_MIN_ROWS)
    threads = max(1, min(numba.get_num_threads(), small.shape[0])) if z.shape[0] >= _THREADED_ROWS else 1
    if small.shape[0]:
        _on_threads([lambda t=t: window_equal_width_acc(z, y, n_bins, lower, upper, starts,
                                                        np.ascontiguousarray(small[t::threads]),
                                                        acc) for t in range(threads)])
    sums = []
    for w in range(W):
        if counts[w] >= PARALLEL_MIN_ROWS:
            sums.append(equal_width_1d_sums(z[starts[w]:starts[w + 1]], y[starts[w]:starts[w + 1]], n_bins))
            continue
        count, rs, rq, zs, ys, nc, nq = split_equal_width_acc(acc[w])
        keep = np.flatnonzero(count)
        sums.append(_from_1d(keep.astype(np.int64), count[keep], rs[keep], rq[keep], zs[keep], ys[keep],
                             nc[keep], nq[keep]))
    return tuple(sums)
