"""Calibration over time of a partitioned prediction log: per-window sums on each partition, merged.

A window of a duration (``"1D"``) or a width, or one window per distinct time, is a function of each row's
time alone, so every partition sums its rows per window (:class:`calviz.BinSums`, the same equal-width
bins as :func:`calviz.calibration_over_time`) and the partitions' sums are merged per window — a window may
span partitions and the partitions need not be in time order.  The per-window statistics are then the
in-memory ones from the merged sums (ECE interval, mean prediction, observed rate, gap).  T-Cal's
per-window p-value needs each window's rows sorted in one process and is not computed here (NaN).
"""

from __future__ import annotations

import numpy as np

from calviz._binning import check_n_bins
from calviz._data import InputError
from calviz._params import ALPHA, CONFIDENCE_LEVEL
from calviz._sums import equal_width_1d_sums
from calviz._windows import (
    CalibrationOverTime,
    TimeWindows,
    as_time,
    holm,
    parse_window,
    scalar_view,
    window_bounds,
    window_columns,
    window_row,
)

__all__ = ["calibration_over_time"]


def _partition_windows(frame, time_column: str, y_true: str, y_prob, spec_of, n_bins: int, target: str,
                       index: int):
    """{window key: (BinSums, first time, last time)} of one partition (a pandas DataFrame), and the kind
    of its time column."""
    if frame.shape[0] == 0:
        return {}, None
    probs = frame[y_prob].to_numpy() if isinstance(y_prob, str) else frame[list(y_prob)].to_numpy()
    try:
        _, _, z, y = scalar_view(frame[y_true].to_numpy(), probs, target,
                                 "calviz.dask.calibration_over_time", min_samples=1)
        time = as_time(frame[time_column], z.shape[0], "calviz.dask.calibration_over_time")
    except InputError as exc:
        raise InputError(f"partition {index}: {exc}") from None
    if time.kind == "label":
        raise InputError("calviz.dask.calibration_over_time: time holds batch ids (strings); give numbers or "
                         "datetimes (the partitions' ids would be coded apart)")
    spec = spec_of(time.kind)
    order = np.argsort(time.values, kind="stable")
    t, z, y = time.values[order], z[order], y[order]
    windows = TimeWindows.of(t, spec)
    s = windows.starts
    out = {}
    for i, key in enumerate(windows.keys.tolist()):
        a, b = int(s[i]), int(s[i + 1])
        out[key] = (equal_width_1d_sums(z[a:b], y[a:b], n_bins), t[a], t[b - 1])
    return out, time.kind


def _merge(parts):
    merged, kinds = {}, set()
    for windows, kind in parts:
        if kind is not None:
            kinds.add(kind)
        for key, (sums, first, last) in windows.items():
            if key in merged:
                old = merged[key]
                merged[key] = (old[0].merge(sums), min(old[1], first), max(old[2], last))
            else:
                merged[key] = (sums, first, last)
    if len(kinds) > 1:
        raise InputError("calviz.dask.calibration_over_time: the partitions' time columns are of different "
                         f"kinds ({', '.join(sorted(kinds))})")
    return merged, kinds.pop() if kinds else None


def calibration_over_time(path_or_frame, *, time_column: str, y_true: str = "y_true", y_prob="y_prob",
                          window="1D", alpha: float = ALPHA, level: float = CONFIDENCE_LEVEL,
                          n_bins: int = 15, target: str = "auto", client=None) -> CalibrationOverTime:
    """Per-window calibration of a partitioned log (Parquet path or dask DataFrame), fixed windows.

    Each partition sums its rows per window; the sums are merged per window (module docstring), and every
    statistic of :func:`calviz.calibration_over_time` but T-Cal is finalised from them — equal to the
    in-memory result (``tcal=False``) up to floating-point summation order.  ``tcal_pvalue`` is NaN.

    Parameters
    ----------
    path_or_frame : str, path-like or dask.dataframe.DataFrame
        A Parquet file or directory (read lazily, the needed columns only), or a dask DataFrame.
    time_column, y_true : str
        The time column (datetimes or numbers) and the label column.
    y_prob : str or list of str, default "y_prob"
        The binary probability column, or the K probability columns (top-1 calibration).
    window : str, number or None, default "1D"
        A duration (datetimes), a width (numbers) or None (one window per distinct time); ``"N rows"``
        windows need the global row order and are refused.
    alpha, level, n_bins, target
        As :func:`calviz.calibration_over_time`.
    client : distributed.Client, optional
        The client to compute on (default: dask's current scheduler).

    Returns
    -------
    CalibrationOverTime
        One entry per window with rows; ``reliability(i)`` works, ``append`` and the reference window's
        diagram need the rows (in memory).

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, pandas as pd, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> time = np.datetime64("2026-01-01") + np.sort(rng.integers(0, 3 * 86400, 3000)).astype("m8[s]")
    >>> p = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < p).astype(int)
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     for i in range(2):
    ...         rows = slice(1500 * i, 1500 * (i + 1))
    ...         pd.DataFrame({"ts": time[rows], "y_true": y[rows], "y_prob": p[rows]}).to_parquet(
    ...             os.path.join(directory, f"part-{i}.parquet"))
    ...     on_dask = calviz.dask.calibration_over_time(directory, time_column="ts", window="1D")
    >>> in_memory = calviz.calibration_over_time(y, p, time=time, window="1D", tcal=False)
    >>> on_dask.n.tolist() == in_memory.n.tolist()
    True
    >>> bool(np.allclose(on_dask.ece, in_memory.ece, rtol=1e-12))
    True
    """
    import dask
    import dask.dataframe as dd

    m = check_n_bins(n_bins)
    if isinstance(window, str) and window.strip().lower().endswith(("row", "rows")):
        raise InputError("calviz.dask.calibration_over_time: 'N rows' windows need the log's global row "
                         "order; use a duration, a width or None (or calviz.calibration_over_time in memory)")
    parse_window(window, "datetime" if isinstance(window, str) else "number",
                 "calviz.dask.calibration_over_time")
    columns = [time_column, y_true, *([y_prob] if isinstance(y_prob, str) else list(y_prob))]
    frame = dd.read_parquet(path_or_frame, columns=columns) if not hasattr(path_or_frame, "to_delayed") \
        else path_or_frame[columns]

    def spec_of(kind):
        return parse_window(window, kind, "calviz.dask.calibration_over_time")

    parts = [dask.delayed(_partition_windows)(part, time_column, y_true, y_prob, spec_of, m, target, i)
             for i, part in enumerate(frame.to_delayed())]
    merged = dask.delayed(_merge)(parts)
    merged, kind = (client.compute(merged).result() if client is not None else dask.compute(merged)[0])
    if not merged:
        raise InputError("calviz.dask.calibration_over_time: no rows")
    spec = spec_of(kind)
    keys = np.asarray(sorted(merged))
    first = np.asarray([merged[k][1] for k in keys])
    last = np.asarray([merged[k][2] for k in keys])
    windows = TimeWindows(keys, np.zeros(keys.shape[0] + 1, np.int64), first, last)
    resolved = _resolved_target(target, y_prob)
    rows = []
    for key in keys.tolist():
        sums = merged[key][0]
        rows.append((sums, window_row(sums, np.empty(0), np.empty(0), alpha=float(alpha), level=float(level),
                                      n_bins=m, target=resolved, tcal=False)))
    columns = window_columns([r for _, r in rows], float(level))
    start, end = window_bounds(windows, spec)
    if kind == "datetime":
        def show(values):
            return np.asarray(values, dtype=np.int64).view("datetime64[ns]")
    else:
        show = np.asarray
    adjusted = holm(columns["tcal_pvalue"])
    return CalibrationOverTime(
        start=show(start), end=show(end), **columns, tcal_pvalue_adjusted=adjusted,
        reject=np.zeros(keys.shape[0], dtype=bool), alpha=float(alpha), level=float(level), n_bins=m,
        window=spec.text, mode="fixed", reference=0, correction="holm", target=resolved,
        n_classes=None if isinstance(y_prob, str) else len(y_prob), _log=None, _rows=tuple(rows), _tcal=False)


def _resolved_target(target: str, y_prob) -> str:
    if target != "auto":
        return target
    return "binary" if isinstance(y_prob, str) else "top1"

