"""The conventions every public result follows, in one place.

Every result is a frozen dataclass with a readable ``repr`` (in the style of scipy.stats) and
``to_dict()``; an estimate or test also has

* ``statistic`` — the estimate or test statistic, a float;
* ``pvalue`` — for a test;
* ``level`` — the confidence level (e.g. 0.9) of a result carrying an interval, and
  ``confidence_interval()`` → :class:`ConfidenceInterval` ``(low, high)``;
* ``n`` (samples), ``n_classes`` (classes of the input) and ``target`` (the calibration target).

(``ECEResult`` names its estimator ``estimator``; ``statistic`` is the estimate itself.)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, NamedTuple

import numpy as np


class ConfidenceInterval(NamedTuple):
    """A confidence interval ``(low, high)`` (floats, or arrays for pointwise / per-bin intervals)."""

    low: Any
    high: Any


#: The range of the distance-to-calibration measures (smCE, dCE_lower, SintCE, intCE, kCE) of predictions
#: and labels in [0, 1]: each is at most E|y − v| ≤ 1 (Błasiok, Gopalan, Hu and Nakkiran 2023, Sec. 4–6:
#: the constant predictor E[y] is calibrated), and 1 is reached by v ≡ 0 with y ≡ 1.
DISTANCE_RANGE = (0.0, 1.0)


def clip_interval(low, high, lowest: float, highest: float) -> ConfidenceInterval:
    """An interval's ends clipped to ``[lowest, highest]``, the range of the quantity it covers.

    A normal-approximation or deviation-bound interval can reach past the range (a difference of two
    ECE² ∈ [−1, 1] got [−3.58, 3.58]); the quantity never lies there, so the clipped interval covers it
    exactly when the raw one does, and says no more than the raw one.  Floats stay floats; arrays
    (per-bin, pointwise) are clipped elementwise, NaN kept.

    Parameters
    ----------
    low, high : float or ndarray
        The interval's ends.
    lowest, highest : float
        The quantity's range.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` clipped.

    Examples
    --------
    >>> from calviz._results import clip_interval
    >>> clip_interval(-3.58, 3.58, -1.0, 1.0)
    ConfidenceInterval(low=-1.0, high=1.0)
    """
    if np.ndim(low) == 0 and np.ndim(high) == 0:
        return ConfidenceInterval(float(np.clip(float(low), lowest, highest)),
                                  float(np.clip(float(high), lowest, highest)))
    return ConfidenceInterval(np.clip(low, lowest, highest), np.clip(high, lowest, highest))


def _short(value) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            return np.array2string(value, precision=4, separator=", ", suppress_small=True)
        return f"array(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, tuple) and len(value) > 8:
        return f"({len(value)} items)"
    if isinstance(value, tuple) and value and all(dataclasses.is_dataclass(v) for v in value):
        return f"({len(value)} × {type(value[0]).__name__})"  # nested results: one line, not a screenful
    return repr(value)


#: properties that :meth:`ResultMixin.to_dict` adds to the fields when a result has them
CONVENTION_PROPERTIES = ("statistic", "pvalue", "level", "n", "n_classes", "target")


class ResultMixin:
    """Mixin for frozen result dataclasses: a one-field-per-line repr that abbreviates long arrays
    and hides fields whose name starts with an underscore."""

    def __repr__(self) -> str:
        fields = [f for f in dataclasses.fields(self) if not f.name.startswith("_") and f.repr]
        body = ",\n".join(f"    {f.name}={_short(getattr(self, f.name))}" for f in fields)
        return f"{type(self).__name__}(\n{body}\n)"

    def to_dict(self) -> dict:
        """Plain-Python dict (arrays as lists) for JSON output."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            out[f.name] = _jsonable(value)
        for name in CONVENTION_PROPERTIES:
            if name not in out and isinstance(getattr(type(self), name, None), property):
                out[name] = _jsonable(getattr(self, name))
        return out


class HasInterval:
    """Mixin for results carrying a confidence interval at level ``level``: the fields named by
    ``_interval_fields`` (default ``("low", "high")``)."""

    _interval_fields: ClassVar[tuple[str, str]] = ("low", "high")

    def confidence_interval(self) -> ConfidenceInterval:
        """``ConfidenceInterval(low, high)`` at confidence level ``level``."""
        low, high = self._interval_fields
        return ConfidenceInterval(getattr(self, low), getattr(self, high))


class ValueStatistic:
    """Mixin for results whose estimate is the field ``value``: ``statistic`` is that float."""

    @property
    def statistic(self) -> float:
        """The estimate (the ``value`` field), a float."""
        return float(self.value)


class LevelFromAlpha:
    """Mixin for results carrying ``alpha`` = 1 − confidence level: ``level`` is 1 − alpha."""

    @property
    def level(self) -> float:
        """The confidence level, 1 − alpha."""
        return 1.0 - float(self.alpha)


def with_classes(result, n_classes: int):
    """``result`` with its ``n_classes`` field set (the estimators fill it from the validated data)."""
    return dataclasses.replace(result, n_classes=int(n_classes))


def _jsonable(value):
    if isinstance(value, (np.datetime64, np.ndarray)) and np.asarray(value).dtype.kind == "M":
        return np.datetime_as_string(value).tolist()  # ISO 8601 (the ints of .tolist() are no time)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(value.to_dict() if hasattr(value, "to_dict") else dataclasses.asdict(value))
    return value


def strict_json(value):
    """``value`` in strict JSON's types: numpy scalars and arrays and result objects as Python values
    (:func:`_jsonable`), and non-finite floats as None, since JSON has no NaN or Infinity and strict
    parsers reject them (``calviz check --json``)."""
    return _finite_or_null(_jsonable(value))


def _finite_or_null(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite_or_null(v) for v in value]
    return value


def format_pvalue(p, *, bound: bool = False) -> str:
    """A p-value for display: four decimals, and below 10⁻⁴ as '< 0.0001'.

    A resampling p-value is never exactly 0, so none is shown as 0; a p-value that was not computed
    (None or not finite) is '—'.

    Parameters
    ----------
    p : float or None
        The p-value.
    bound : bool, default False
        ``p`` is only an upper bound (``TCalResult.pvalue_is_bound``): shown as '≤ 0.0375'.

    Returns
    -------
    str
        The text shown.

    Examples
    --------
    >>> from calviz import plots
    >>> plots.format_pvalue(0.01234), plots.format_pvalue(1e-7), plots.format_pvalue(None)
    ('0.0123', '< 0.0001', '—')
    >>> plots.format_pvalue(0.0375, bound=True)
    '≤ 0.0375'
    """
    if p is None or not math.isfinite(float(p)):
        return "—"
    p = float(p)
    return "< 0.0001" if p < 1e-4 else f"{'≤ ' if bound else ''}{p:.4f}"


def pvalue_phrase(p, *, bound: bool = False) -> str:
    """'p = 0.1234', 'p ≤ 0.0375', 'p < 0.0001' or 'p —' (not computed): :func:`format_pvalue` in a
    sentence."""
    text = format_pvalue(p, bound=bound)
    return f"p {text}" if text.startswith(("<", "—", "≤")) else f"p = {text}"


def format_number(x) -> str:
    """A statistic in text output: four decimals, in scientific notation below 10⁻³ or from 10⁴ on; None is
    '—'."""
    if x is None:
        return "—"
    x = float(x)
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e4):
        return f"{x:.3e}"
    return f"{x:.4f}"
