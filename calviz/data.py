"""Validated, immutable calibration data and its views.

Every public estimator validates its input exactly once, here, and then hands contiguous float64 /
int64 arrays to the jitted kernels.  Validation errors are :class:`InputError` (a ``ValueError``)
whose message names the offending row or column and the rule broken.

Input conventions (scikit-learn order, ``y_true`` first):

* binary: ``y_prob`` of shape (n,) is P(y = 1); ``y_true`` in {0, 1}.
* multiclass: ``y_prob`` of shape (n, K), rows on the simplex (tolerance 1e-6); ``y_true`` integer class
  ids 0..K-1 or one-hot (n, K).
* confidence form: ``(correct, confidence)`` is simply the binary form with y = correct, p = confidence.
* logits: :func:`from_logits`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

__all__ = [
    "InputError",
    "CalibrationData",
    "as_calibration_data",
    "binary_view",
    "from_logits",
    "SIMPLEX_TOLERANCE",
    "check_alpha",
]

#: Row sums of a multiclass ``y_prob`` may deviate from 1 by this much (float32 storage round-off).
SIMPLEX_TOLERANCE = 1e-6

Target = Literal["auto", "binary", "top1", "topk", "classwise", "full"]


class InputError(ValueError):
    """Input that calviz refuses, with a message naming the row/column and the rule broken."""


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask.reshape(mask.shape[0], -1).any(axis=1))[0])


def _as_float_array(values, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
    except Exception as exc:  # ragged lists, exotic objects
        raise InputError(f"{name} could not be read as a numeric array: {exc}") from None
    if arr.dtype == bool:
        arr = arr.astype(np.float64)
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise InputError(
                f"{name} must be numeric; got dtype {arr.dtype} (e.g. value {arr.ravel()[:1].tolist()!r})"
            ) from None
    return np.ascontiguousarray(arr, dtype=np.float64)


def _check_finite_unit(arr: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        i = _first_bad(bad)
        raise InputError(f"{name} has a non-finite value (NaN or inf) at row {i}")
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        i = _first_bad(bad)
        value = arr[i] if arr.ndim == 1 else arr[i][bad[i]][0]
        col = "" if arr.ndim == 1 else f", column {int(np.flatnonzero(bad[i])[0])}"
        raise InputError(f"{name} must lie in [0, 1]; row {i}{col} has {value!r}")


def _labels_from(y_true, n: int, n_classes: int) -> np.ndarray:
    arr = np.asarray(y_true)
    if arr.ndim == 2:
        if arr.shape != (n, n_classes):
            raise InputError(
                f"one-hot y_true has shape {arr.shape}, expected ({n}, {n_classes}) to match y_prob"
            )
        onehot = _as_float_array(arr, "y_true")
        bad = ~np.isfinite(onehot) | ((onehot != 0.0) & (onehot != 1.0))
        bad_rows = bad.any(axis=1) | (onehot.sum(axis=1) != 1.0)
        if bad_rows.any():
            i = int(np.flatnonzero(bad_rows)[0])
            raise InputError(f"one-hot y_true row {i} is not a one-hot vector: {onehot[i].tolist()}")
        return np.ascontiguousarray(onehot.argmax(axis=1), dtype=np.int64)
    if arr.ndim != 1:
        raise InputError(f"y_true must be 1-D labels or a 2-D one-hot array; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise InputError(f"y_true has {arr.shape[0]} rows but y_prob has {n}; lengths must match")
    labels = _as_float_array(arr, "y_true")
    bad = ~np.isfinite(labels)
    if bad.any():
        raise InputError(f"y_true has a non-finite value (NaN or inf) at row {_first_bad(bad)}")
    bad = (labels != np.round(labels)) | (labels < 0) | (labels > n_classes - 1)
    if bad.any():
        i = _first_bad(bad)
        allowed = "{0, 1}" if n_classes == 2 else f"integers 0..{n_classes - 1}"
        raise InputError(f"y_true must be {allowed}; row {i} has {arr[i]!r}")
    return labels.astype(np.int64)


@dataclass(frozen=True, repr=False)
class CalibrationData:
    """Validated predictions and labels.

    ``probs`` is (n,) for binary data (P(y = 1)) and (n, K) for multiclass data; ``labels`` are int64
    class ids.  Instances are immutable (the arrays are read-only) so views can be cached.
    """

    probs: np.ndarray
    labels: np.ndarray
    _cache: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])

    @property
    def is_binary(self) -> bool:
        return self.probs.ndim == 1

    @property
    def n_classes(self) -> int:
        return 2 if self.is_binary else int(self.probs.shape[1])

    def __repr__(self) -> str:
        kind = "binary" if self.is_binary else f"{self.n_classes}-class"
        return f"CalibrationData(n={self.n}, {kind})"

    # -- views -------------------------------------------------------------------------------------
    def full_probs(self) -> np.ndarray:
        """(n, K) probability matrix (binary data as two columns [1-p, p])."""
        if self.is_binary:
            return np.ascontiguousarray(np.column_stack([1.0 - self.probs, self.probs]))
        return self.probs

    def onehot(self) -> np.ndarray:
        """(n, K) float64 one-hot labels."""
        out = np.zeros((self.n, self.n_classes))
        out[np.arange(self.n), self.labels] = 1.0
        return out

    def binary(self) -> tuple[np.ndarray, np.ndarray]:
        """(p, y) for binary data: P(y = 1) and y as float64."""
        if not self.is_binary:
            raise InputError("the binary view needs 1-D y_prob; use top1() or classwise() for multiclass")
        return self.probs, self.labels.astype(np.float64)

    def top1(self) -> tuple[np.ndarray, np.ndarray]:
        """(confidence, correct): the top-1 reduction z~ = max_k z_k, y~ = 1{argmax = label}."""
        if "top1" not in self._cache:
            full = self.full_probs()
            pred = full.argmax(axis=1)
            conf = np.ascontiguousarray(full[np.arange(self.n), pred])
            correct = (pred == self.labels).astype(np.float64)
            self._cache["top1"] = _readonly(conf, correct)
        return self._cache["top1"]

    def topk(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-1-to-k view (seed 003): the k largest probabilities sorted decreasingly (n, k) and the
        matching label indicators (n, k)."""
        k = int(k)
        if not 1 <= k <= self.n_classes:
            raise InputError(f"top_k must be in 1..{self.n_classes}; got {k}")
        key = ("topk", k)
        if key not in self._cache:
            full = self.full_probs()
            # stable sort on -p keeps ties in class order: deterministic for equal probabilities
            order = np.argsort(-full, axis=1, kind="stable")[:, :k]
            z = np.take_along_axis(full, order, axis=1)
            y = (order == self.labels[:, None]).astype(np.float64)
            self._cache[key] = _readonly(np.ascontiguousarray(z), np.ascontiguousarray(y))
        return self._cache[key]

    def classwise(self, class_index: int) -> tuple[np.ndarray, np.ndarray]:
        """One-vs-rest view for one class: (P(y = c), 1{y = c})."""
        c = int(class_index)
        if not 0 <= c < self.n_classes:
            raise InputError(f"class_index must be in 0..{self.n_classes - 1}; got {c}")
        full = self.full_probs()
        return np.ascontiguousarray(full[:, c]), (self.labels == c).astype(np.float64)

    def subsample(self, n: int, seed: int | None = None) -> CalibrationData:
        """A uniform subsample of n rows without replacement (reproducible with ``seed``)."""
        if n >= self.n:
            return self
        idx = np.sort(np.random.default_rng(seed).choice(self.n, size=int(n), replace=False))
        return CalibrationData(_readonly(self.probs[idx])[0], _readonly(self.labels[idx])[0])

    def view(
        self, target: Target = "auto", *, top_k: int = 1, class_index: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The (z, y) arrays for a calibration target.

        ``auto``: binary data → ``binary``; multiclass → ``top1``.  ``binary``/``top1``/``classwise``
        return 1-D arrays; ``topk`` and ``full`` return (n, k) arrays.
        """
        if target == "auto":
            target = "binary" if self.is_binary else "top1"
        if target == "binary":
            return self.binary()
        if target == "top1":
            return self.top1()
        if target == "topk":
            return self.topk(top_k)
        if target == "classwise":
            return self.classwise(class_index)
        if target == "full":
            return self.full_probs(), self.onehot()
        raise InputError(
            f"unknown calibration target {target!r}; use 'auto', 'binary', 'top1', 'topk', 'classwise' or 'full'"
        )


def _readonly(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    for a in arrays:
        a.flags.writeable = False
    return arrays


def as_calibration_data(
    y_true,
    y_prob=None,
    *,
    renormalize: bool = False,
    min_samples: int = 2,
) -> CalibrationData:
    """Validate ``(y_true, y_prob)`` into a :class:`CalibrationData` (or return it unchanged).

    Raises :class:`InputError` for: non-numeric or NaN/inf values, probabilities outside [0, 1], rows not
    summing to 1 (unless ``renormalize``), labels out of range, mismatched lengths, fewer than
    ``min_samples`` rows, and a single-class (n, 1) probability matrix.
    """
    if isinstance(y_true, CalibrationData):
        if y_prob is not None:
            raise InputError("pass either CalibrationData or (y_true, y_prob), not both")
        if y_true.n < min_samples:
            raise InputError(f"need at least {min_samples} samples; got {y_true.n}")
        return y_true
    if y_prob is None:
        raise InputError("y_prob is required")
    probs = _as_float_array(y_prob, "y_prob")
    if probs.ndim == 2 and probs.shape[1] == 1:
        raise InputError(
            "y_prob has a single column (a single class); pass binary P(y=1) as a 1-D array or all K columns"
        )
    if probs.ndim not in (1, 2):
        raise InputError(f"y_prob must be 1-D (binary) or 2-D (n, K); got shape {probs.shape}")
    n = probs.shape[0]
    y_shape = np.shape(y_true)
    if len(y_shape) >= 1 and y_shape[0] != n:
        raise InputError(f"y_true has {y_shape[0]} rows but y_prob has {n}; lengths must match")
    if n < min_samples:
        raise InputError(f"need at least {min_samples} samples; got {n}")
    if probs.ndim == 2:
        bad = ~np.isfinite(probs)
        if bad.any():
            i = _first_bad(bad)
            raise InputError(
                f"y_prob has a non-finite value (NaN or inf) at row {i}, column {int(np.flatnonzero(bad[i])[0])}"
            )
        if renormalize:
            if (probs < 0).any():
                _check_finite_unit(probs, "y_prob")
            sums = probs.sum(axis=1)
            if (sums <= 0).any():
                raise InputError(f"y_prob row {_first_bad(sums <= 0)} sums to 0 and cannot be renormalized")
            probs = probs / sums[:, None]
        _check_finite_unit(probs, "y_prob")
        dev = np.abs(probs.sum(axis=1) - 1.0)
        bad = dev > SIMPLEX_TOLERANCE
        if bad.any():
            i = _first_bad(bad)
            raise InputError(
                f"y_prob rows must sum to 1 (tolerance {SIMPLEX_TOLERANCE:g}); row {i} sums to "
                f"{probs[i].sum()!r}. Pass renormalize=True to rescale rows."
            )
        n_classes = probs.shape[1]
    else:
        _check_finite_unit(probs, "y_prob")
        n_classes = 2
    labels = _labels_from(y_true, n, n_classes)
    return CalibrationData(*_readonly(probs, labels))


def binary_view(
    y_true, y_prob, *, target: Target = "auto", class_index: int = 0, min_samples: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """Validate and reduce to one-dimensional (z, y) float64 arrays: binary, top-1 or one-vs-rest.

    The entry point of every estimator defined for scalar predictions (the distance family, 1-D T-Cal).
    """
    data = as_calibration_data(y_true, y_prob, min_samples=min_samples)
    if target in ("topk", "full"):
        raise InputError(f"target {target!r} is multi-dimensional; this estimator needs a scalar view")
    return data.view(target, class_index=class_index)


def from_logits(logits, y_true=None):
    """Numerically stable softmax of (n, K) logits (or sigmoid of (n,) binary logits).

    Returns the probabilities, or a validated :class:`CalibrationData` when ``y_true`` is given.
    """
    z = _as_float_array(logits, "logits")
    bad = ~np.isfinite(z)
    if bad.any():
        raise InputError(f"logits has a non-finite value (NaN or inf) at row {_first_bad(bad)}")
    if z.ndim == 1:
        probs = np.empty_like(z)
        pos = z >= 0
        probs[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
        ez = np.exp(z[~pos])
        probs[~pos] = ez / (1.0 + ez)
    elif z.ndim == 2:
        shifted = z - z.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        probs = e / e.sum(axis=1, keepdims=True)
    else:
        raise InputError(f"logits must be 1-D or 2-D; got shape {z.shape}")
    if y_true is None:
        return probs
    return as_calibration_data(y_true, probs)


def check_alpha(alpha: float, name: str = "alpha") -> float:
    """α must be a number in the open interval (0, 1)."""
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in (0, 1); got {alpha!r}") from None
    if not (0.0 < a < 1.0):
        raise InputError(f"{name} must be in the open interval (0, 1); got {alpha!r}")
    return a
