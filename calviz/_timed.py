"""Predictions with a time column: the data of the "over time" view and of ``calviz serve --watch``.

:class:`TimedData` is a :class:`calviz.CalibrationData` that also carries a validated time column
(:class:`calviz._windows.TimeColumn`) and the window the log is cut into.  Every estimator accepts it as
the plain data it is; the over-time view (:func:`calviz.analysis.compute.compute_over_time`) reads its
time.  A subsample keeps the time of the rows it keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calviz._data import CalibrationData, _readonly_view, as_calibration_data
from calviz._windows import TimeColumn, as_time, parse_window

__all__ = ["TimedData", "with_time", "has_time", "auto_window", "AUTO_WINDOW"]

#: the window chosen from the time column (:func:`auto_window`)
AUTO_WINDOW = "auto"
#: most windows the automatic choice makes (a readable chart, a bounded per-window cost)
MOST_AUTO_WINDOWS = 400
#: fewest rows per window on average the automatic choice makes for numbers and batch ids
MIN_AUTO_ROWS = 100
#: durations the automatic window picks from, shortest first
_DURATIONS = (("1h", 3_600), ("6h", 21_600), ("1D", 86_400), ("7D", 604_800), ("28D", 2_419_200))


@dataclass(frozen=True, repr=False)
class TimedData(CalibrationData):
    """Validated predictions and labels with a time per row.

    Attributes
    ----------
    time : TimeColumn
        The validated time column (one value per row).
    window : str, float or None
        The window of the over-time view (``calviz.calibration_over_time``'s ``window``), or ``"auto"``
        (:func:`auto_window`).
    """

    time: TimeColumn | None = None
    window: object = AUTO_WINDOW

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", time: {self.time.kind})"

    def _rows(self, idx: np.ndarray) -> TimedData:
        base = super()._rows(idx)
        time = TimeColumn(_readonly_view(self.time.values[idx]), self.time.kind, self.time.labels)
        return TimedData(base.probs, base.labels, base.confidence_form, time=time, window=self.window,
                         weights=base.weights)

    @classmethod
    def in_row_order(cls, data: CalibrationData) -> TimedData:
        """Data without a time column as a log in row order (the row number is its time)."""
        time = TimeColumn(np.arange(data.n, dtype=np.int64), "number")
        return cls(data.probs, data.labels, data.confidence_form, time=time,
                   weights=getattr(data, "weights", None))

    def over_time_window(self):
        """The window option of the over-time view: the user's, or :func:`auto_window`'s choice."""
        return auto_window(self.time) if self.window == AUTO_WINDOW else self.window


def has_time(data) -> bool:
    """Whether ``data`` carries a time column."""
    return getattr(data, "time", None) is not None


def with_time(data, time, *, window=AUTO_WINDOW) -> TimedData:
    """``data`` (CalibrationData, or a (y_true, y_prob) pair) with its time column, validated once
    (:func:`calviz._windows.as_time`; the window by :func:`calviz._windows.parse_window`)."""
    data = as_calibration_data(*data) if isinstance(data, tuple) else as_calibration_data(data)
    column = time if isinstance(time, TimeColumn) else as_time(time, data.n, "time column")
    if window != AUTO_WINDOW:
        parse_window(window, column.kind, "time window")
    return TimedData(data.probs, data.labels, data.confidence_form, time=column, window=window,
                     weights=data.weights)


def auto_window(time: TimeColumn):
    """A window for a log of this time column: datetimes — the shortest of 1h, 6h, 1D, 7D, 28D giving at
    most :data:`MOST_AUTO_WINDOWS` windows of :data:`MIN_AUTO_ROWS` rows on average (else 28D); numbers
    and batch ids — one window per distinct value when
    there are at most that many holding :data:`MIN_AUTO_ROWS` rows on average, else runs of rows making
    at most that many windows of at least that many rows."""
    values = time.values
    n = values.shape[0]
    if n == 0:
        return None
    if time.kind == "datetime":
        span = (int(values.max()) - int(values.min())) / 1e9
        for text, seconds in _DURATIONS:
            windows = span / seconds + 1
            if windows <= MOST_AUTO_WINDOWS and n >= MIN_AUTO_ROWS * windows:
                return text
        return _DURATIONS[-1][0]
    distinct = np.unique(values).shape[0]
    if distinct <= MOST_AUTO_WINDOWS and n >= MIN_AUTO_ROWS * distinct:
        return None
    return f"{max(math.ceil(n / MOST_AUTO_WINDOWS), MIN_AUTO_ROWS)} rows"
