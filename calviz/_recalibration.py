"""Recalibration maps fitted on a calibration split, evaluated on rows the map never saw.

:func:`recalibrate` fits one of four maps on a random calibration split (``calibration_size``) or
cross-fits it (``folds``: each row is recalibrated by a map fitted on the other folds) and returns the
recalibrated *held-out* predictions, the split and the fitted maps as a frozen
:class:`RecalibrationResult`.  Every statistic "after recalibration" must be computed on
``result.y_true`` / ``result.y_prob`` (the held-out rows ``result.eval_indices``), never on the
calibration rows: a map evaluated on its own training rows looks better calibrated than it is.

Methods (K classes; binary input is P(y = 1)):

* ``temperature`` — softmax(log p / T) with the T > 0 minimising the negative log-likelihood on the
  calibration rows (Guo, Pleiss, Sun & Weinberger 2017, Sec. 4.2), log T in [−8, 12], by safeguarded
  Newton steps on 1/T.  One parameter for all K classes; the top-1 class never changes.
* ``platt`` — Platt (1999) scaling: a logistic regression of the label on the logit of the predicted
  probability, with Platt's smoothed targets, fitted by Newton's method; the map of scikit-learn's
  ``CalibratedClassifierCV(method="sigmoid")``, one-vs-rest and renormalised for K > 2.
* ``isotonic`` — isotonic regression of the label on the predicted probability (Zadrozny & Elkan
  2002) by pool-adjacent-violators (:func:`calviz._kernels.isotonic.pav_fit`); the map of scikit-learn's
  ``CalibratedClassifierCV(method="isotonic")``, one-vs-rest and renormalised.  The regression is
  fitted on the log-odds (the score scikit-learn is given): the same fitted steps as on the
  probability, with scikit-learn's linear interpolation between them taken on the log-odds.
* ``histogram`` — histogram binning (Zadrozny & Elkan 2001): equal-mass bins of the predicted
  probability on the calibration rows (ties never split), each bin mapped to its observed frequency;
  one-vs-rest and renormalised for K > 2.  scikit-learn has no histogram binning.

The embedded datasets (:mod:`calviz.datasets`) use the same temperature fit and the same
scikit-learn wrapper for their ``-temperature``, ``-platt`` and ``-isotonic`` models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from calviz._data import InputError, validate_once
from calviz._kernels.recalibration import (
    isotonic_apply,
    isotonic_fit,
    isotonic_fit_split,
    platt_sums,
    split_by_label,
    temperature_apply_binary,
    temperature_derivatives,
)
from calviz._params import (
    POSITIVE_INT,
    SEED,
    AnyOf,
    Interval,
    NoneOr,
    Options,
    as_generator,
    validate_params,
)
from calviz._results import ResultMixin
from calviz._threads import map_chunks
from calviz._weights import check_sample_weight

__all__ = [
    "METHODS",
    "RecalibrationMap",
    "RecalibrationResult",
    "recalibrate",
    "fit_temperature",
    "softmax",
    "calibrated_classifier",
]

Method = Literal["temperature", "platt", "isotonic", "histogram"]
METHODS = ("temperature", "platt", "isotonic", "histogram")

#: probabilities are clipped to [LOG_FLOOR, 1] before taking logs (a probability of exactly 0 has no
#: finite logit; 1e-12 keeps softmax(log p / T) = p at T = 1 up to round-off)
LOG_FLOOR = 1e-12


# --------------------------------------------------------------------------------------------------
# the maps themselves (also used by calviz.datasets)
# --------------------------------------------------------------------------------------------------
def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of (n, K) logits, shifted by the row maximum so that exp() stays finite.

    Parameters
    ----------
    logits : ndarray of shape (n, K)
        Scores.

    Returns
    -------
    ndarray of shape (n, K)
        Per row, exp(x_k − max x) / Σ_j exp(x_j − max x).

    Examples
    --------
    >>> import numpy as np
    >>> from calviz._recalibration import softmax
    >>> softmax(np.array([[0.0, np.log(3.0)]])).round(3).tolist()
    [[0.25, 0.75]]
    """
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def fit_temperature(logits: np.ndarray, labels: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Temperature scaling: the temperature T > 0 minimising the held-out negative log-likelihood.

    T = argmin −Σ_i log softmax(logits_i / T)[y_i] (Guo et al. [1]_, Sec. 4.2) over log T ∈ [−8, 12], by
    safeguarded Newton steps on β = 1/T, in which the negative log-likelihood is convex (its second
    derivative is the sum of the variances of the logits under the scaled softmax); one jitted pass
    gives the function and both derivatives.

    Parameters
    ----------
    logits : ndarray of shape (n, K)
        Logits (or log-probabilities) of the calibration rows.
    labels : ndarray of shape (n,)
        Their class ids.
    sample_weight : ndarray of shape (n,), optional
        Row weights of the log-likelihood (a row of weight k counts as k copies).

    Returns
    -------
    float
        T (> 1: the model was over-confident).

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz._recalibration import fit_temperature
    >>> rng = np.random.default_rng(0)
    >>> true_logits = rng.normal(size=(2000, 3))
    >>> labels = np.array([rng.choice(3, p=np.exp(l) / np.exp(l).sum()) for l in true_logits])
    >>> round(fit_temperature(3.0 * true_logits, labels), 1)       # three times over-confident
    3.0
    """
    z = np.asarray(logits, dtype=np.float64)
    z = np.ascontiguousarray(z - z.max(axis=1, keepdims=True))  # shift invariant; every exponent ≤ 0
    y = np.ascontiguousarray(labels, dtype=np.int64)
    w = _weights_or_empty(sample_weight)
    beta = _newton_convex(lambda b: _sum_chunks(
        lambda start, stop: temperature_derivatives(z, y, w, b, start, stop), z.shape[0]), 1.0, _BETA_MIN,
        _BETA_MAX, flat=1e-30 * (z.shape[0] if sample_weight is None else float(w.sum())))
    return float(1.0 / beta)


def _weights_or_empty(sample_weight) -> np.ndarray:
    """Kernel weights: the rows' weights, or an empty array for unit weights."""
    return np.empty(0) if sample_weight is None else np.ascontiguousarray(sample_weight, dtype=np.float64)


#: the inverse temperature β = 1/T is searched in [e^−12, e^8], i.e. log T in [−8, 12]
_BETA_MIN = float(np.exp(-12.0))
_BETA_MAX = float(np.exp(8.0))


def _sum_chunks(kernel, n: int) -> tuple:
    """Elementwise sums, in chunk order, of a kernel's tuple of sums over the row chunks of n rows (on
    several threads for large n: :func:`calviz._threads.map_chunks`)."""
    parts = map_chunks(kernel, n)
    total = list(parts[0])
    for part in parts[1:]:
        for j, value in enumerate(part):
            total[j] += value
    return tuple(total)


def _newton_convex(sums, start: float, lo: float, hi: float, flat: float, rtol: float = 1e-12,
                   max_iter: int = 200) -> float:
    """The minimiser over [lo, hi] of a convex function f of one variable given by ``sums(x) = (f', f'')``:
    Newton's method safeguarded by the bracket [lo, hi] of the minimiser (f' < 0 left of it, > 0 right),
    a step leaving the bracket replaced by its geometric midpoint.  Converges quadratically near the
    minimum: 5–8 passes over the data where the bounded scalar minimiser takes 20–30.  Also stops when
    the decrease a step promises, |f'·Δx|, is below ``flat`` (a function flat to round-off towards a
    bound, e.g. a likelihood saturating as every prediction becomes certain)."""
    x = min(max(start, lo), hi)
    bounds = [lo, hi]  # not yet evaluated: a step beyond one first checks whether the minimum is there
    for _ in range(max_iter):
        g, h = sums(x)
        if g > 0.0:
            hi = x
        elif g < 0.0:
            lo = x
        else:
            return x
        step = g / h if h > 0.0 else np.nan
        if abs(step) <= rtol * x:  # converged (the step may even round to nothing)
            return min(max(x - step, lo), hi)
        new = x - step
        side = 0 if not new > lo else 1 if not new < hi else -1
        if side >= 0 and bounds[side] is not None:
            bound, bounds[side] = bounds[side], None
            g_bound, _ = sums(bound)
            if (g_bound >= 0.0) if side == 0 else (g_bound <= 0.0):
                return bound  # f increases (decreases) all the way from the bound: the minimum is there
        if not lo < new < hi:
            new = float(np.sqrt(lo * hi))
        if hi - lo <= rtol * lo or abs(g * (new - x)) <= flat:
            return new
        x = new
    return x


def _platt_fit(f: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> tuple[float, float]:
    """(A, B) of Platt's sigmoid P(y = 1) = 1/(1 + exp(A f + B)) (Platt 1999): the maximum-likelihood fit
    to Platt's smoothed targets t = (N₊ + 1)/(N₊ + 2) for y = 1 and 1/(N₋ + 2) for y = 0, started at
    A = 0, B = log((N₋ + 1)/(N₊ + 1)) as scikit-learn's ``_sigmoid_calibration``, but by Newton's method
    with the analytic gradient and information and a halving line search on the log-likelihood (each
    step one jitted pass) instead of L-BFGS on function values — the same optimum, to the last digits
    rather than to L-BFGS's tolerance.  Weights ``w`` count a row w times (N₊, N₋ and every sum)."""
    f = np.ascontiguousarray(f, dtype=np.float64)
    positive = y > 0
    weights = _weights_or_empty(w)
    n1 = float(np.count_nonzero(positive)) if w is None else float(weights[positive].sum())
    n0 = (float(y.shape[0]) if w is None else float(weights.sum())) - n1
    t = np.where(positive, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    n = f.shape[0]

    def at(a, b):  # sums at intercept a, slope b of η = a + b f (η = −(A f + B))
        return _sum_chunks(lambda start, stop: platt_sums(f, t, weights, a, b, start, stop), n)

    theta = np.array([-np.log((n0 + 1.0) / (n1 + 1.0)), 0.0])
    sums = at(*theta)
    for _ in range(100):
        g_a, g_b, i_aa, i_ab, i_bb, ll = sums
        det = i_aa * i_bb - i_ab * i_ab
        if not det > 0.0:
            break
        step = np.array([i_bb * g_a - i_ab * g_b, i_aa * g_b - i_ab * g_a]) / det
        # the Newton decrement gᵀ I⁻¹ g (twice the gain the step promises): once it is below the round-off
        # of the log-likelihood (a sum of n terms) the line search can only chase noise, so the last step
        # is taken without another pass (quadratic convergence: its own error is then negligible)
        if step[0] * g_a + step[1] * g_b <= 1e-15 * (1.0 + abs(ll)):
            theta = theta + step
            break
        scale = 1.0
        while True:
            candidate = theta + scale * step
            new = at(*candidate)
            if new[5] >= ll - 1e-14 * abs(ll) or scale < 1e-10:
                break
            scale *= 0.5
        theta, sums = candidate, new
    return float(-theta[1]), float(-theta[0])


def _ovr_scores(probs: np.ndarray) -> np.ndarray:
    """The score each one-vs-rest calibrator is fitted on (scikit-learn's ``decision_function`` of the
    fixed-probability classifier): binary, the log-odds log p₁ − log p₀ (one column); K > 2, log p_k."""
    if probs.shape[1] == 2:
        return _binary_scores(probs[:, 1], probs[:, 0]).reshape(-1, 1)
    return _log_probs(probs)


def _binary_scores(p1: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """log p₁ − log p₀, each probability clipped to [LOG_FLOOR, 1] (1-D, no (n, 2) temporaries)."""
    return _log_probs(p1) - _log_probs(p0)


def _calibrate(method: str, params, x: np.ndarray) -> np.ndarray:
    """One calibrator applied to its scores: Platt's 1/(1 + exp(A x + B)), or the isotonic steps
    interpolated linearly (x clipped to the thresholds)."""
    if method == "platt":
        a, b = params
        return _expit(-(a * x + b))
    thresholds, values = params
    return isotonic_apply(np.ascontiguousarray(x, dtype=np.float64), thresholds, values, False)


def _fit_calibrators(method: str, probs: np.ndarray, labels: np.ndarray,
                     w: np.ndarray | None = None) -> tuple:
    """One calibrator per column of :func:`_ovr_scores` (class 1 for binary data): Platt's (A, B) or the
    isotonic (thresholds, values)."""
    scores = _ovr_scores(probs)
    classes = (1,) if probs.shape[1] == 2 else range(probs.shape[1])
    fitted = []
    for col, c in enumerate(classes):
        x = np.ascontiguousarray(scores[:, col])
        if method == "platt":
            fitted.append(_platt_fit(x, (labels == c).astype(np.float64), w))
        elif w is None:
            # each label's scores sorted apart and merged by the fit: two sorts of plain values (numpy's
            # vectorised sort) instead of an argsort and the gathers of its permutation
            x1, x0 = split_by_label(x, labels == c)
            x1.sort()
            x0.sort()
            fitted.append(isotonic_fit_split(x1, x0))
        else:
            order = np.argsort(x)  # numpy's sort: several times numba's
            fitted.append(isotonic_fit(x[order], (labels == c).astype(np.float64)[order], w[order]))
    return tuple(fitted)


def _apply_calibrators(method: str, fitted: tuple, probs: np.ndarray) -> np.ndarray:
    """Probability rows from the one-vs-rest calibrators, as scikit-learn's ``CalibratedClassifierCV``
    combines them: binary [1 − q, q]; K > 2 each row divided by its sum (uniform where the sum is 0);
    values within 1e−5 above 1 set to 1."""
    scores = _ovr_scores(probs)
    cols = []
    for col, params in enumerate(fitted):
        cols.append(_calibrate(method, params, scores[:, col]))
    if probs.shape[1] == 2:
        proba = np.column_stack([1.0 - cols[0], cols[0]])
    else:
        proba = np.column_stack(cols)
        denominator = proba.sum(axis=1, keepdims=True)
        proba = np.divide(proba, denominator, out=np.full_like(proba, 1.0 / proba.shape[1]),
                          where=denominator != 0)
    proba[(1.0 < proba) & (proba <= 1.0 + 1e-5)] = 1.0
    return proba


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return expit(x)


def calibrated_classifier(est, method: str):
    """A scikit-learn ``CalibratedClassifierCV`` around an already fitted classifier.

    One calibrator (``method`` "sigmoid" — Platt [1]_ — or "isotonic" — Zadrozny and Elkan [2]_) per
    class, fitted on the data passed to ``fit``.

    Parameters
    ----------
    est : fitted scikit-learn classifier
        The classifier whose probabilities are recalibrated.
    method : {"sigmoid", "isotonic"}
        The calibrator.

    Returns
    -------
    sklearn.calibration.CalibratedClassifierCV
        Unfitted; call ``fit`` on calibration data.

    References
    ----------
    .. [1] J. Platt. Probabilistic outputs for support vector machines and comparisons to regularized
       likelihood methods. *Advances in Large Margin Classifiers*, 1999.
    .. [2] B. Zadrozny and C. Elkan. Transforming classifier scores into accurate multiclass probability
       estimates. *KDD*, 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from calviz._recalibration import calibrated_classifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    >>> model = GaussianNB().fit(X[:200], y[:200])
    >>> calibrated = calibrated_classifier(model, "isotonic").fit(X[200:300], y[200:300])
    >>> calibrated.predict_proba(X[300:]).shape
    (100, 2)
    """
    from sklearn.calibration import CalibratedClassifierCV

    try:  # scikit-learn >= 1.6: wrap the fitted model instead of cv="prefit"
        from sklearn.frozen import FrozenEstimator

        return CalibratedClassifierCV(FrozenEstimator(est), method=method)
    except ImportError:  # pragma: no cover - older scikit-learn
        return CalibratedClassifierCV(est, method=method, cv="prefit")


def _log_probs(probs: np.ndarray) -> np.ndarray:
    return np.log(np.clip(probs, LOG_FLOOR, 1.0))


def _histogram_fit(p: np.ndarray, y: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(edges, bin frequencies) of histogram binning of one column: equal-mass edges of the calibration
    probabilities (calviz.binning: ties never split), each bin's mean label (empty bins: bin midpoint)."""
    from calviz._binning import equal_mass_edges, equal_mass_ids

    edges = equal_mass_edges(p, n_bins)
    ids = equal_mass_ids(p, edges)
    B = edges.shape[0] - 1
    counts = np.bincount(ids, minlength=B)
    hits = np.bincount(ids, weights=y, minlength=B)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = np.where(counts > 0, hits / np.maximum(counts, 1), 0.5 * (edges[:-1] + edges[1:]))
    return edges, freq


@dataclass(frozen=True, repr=False)
class RecalibrationMap(ResultMixin):
    """A fitted recalibration map.

    Attributes
    ----------
    method : str
        "temperature", "platt", "isotonic" or "histogram".
    n_classes : int
        K.
    parameters : dict
        The temperature, or the number of bins / calibrators.
    n_fit : int
        Calibration rows it was fitted on.

    Notes
    -----
    ``transform(y_prob)`` applies it to new predictions of the same shape as the ones it was fitted on.
    """

    method: str
    n_classes: int
    parameters: dict
    n_fit: int
    _fitted: object = field(default=None, repr=False, compare=False)

    def transform(self, y_prob) -> np.ndarray:
        """Recalibrated probabilities for ``y_prob``, in its shape: (n,) P(y = 1), or (n, K) rows (also for
        K = 2)."""
        if self.method in ("platt", "isotonic") and self.n_classes == 2 and np.ndim(y_prob) == 1:
            # binary P(y = 1): the steps below on 1-D arrays, without the (n, 2) matrices
            p = np.asarray(y_prob, dtype=np.float64)
            if self.method == "isotonic":  # the interpolation and the steps below in one jitted pass
                thresholds, values = self._fitted[0]
                return isotonic_apply(_binary_scores(p, 1.0 - p), thresholds, values, True)
            q = _calibrate(self.method, self._fitted[0], _binary_scores(p, 1.0 - p))
            q[(1.0 < q) & (q <= 1.0 + 1e-5)] = 1.0
            q = np.clip(q, 0.0, 1.0)
            return q / (np.clip(1.0 - q, 0.0, 1.0) + q)
        if self.method == "temperature" and self.n_classes == 2:  # one jitted pass, no (n, 2) temporaries
            p = np.asarray(y_prob, dtype=np.float64)
            if p.ndim == 1:
                return temperature_apply_binary(1.0 - p, p, self.parameters["temperature"], LOG_FLOOR,
                                                False).reshape(-1)
            probs = _full_probs(p, 2)
            return temperature_apply_binary(probs[:, 0], probs[:, 1], self.parameters["temperature"],
                                            LOG_FLOOR, True)
        probs = _full_probs(y_prob, self.n_classes)
        if self.method == "temperature":
            out = softmax(_log_probs(probs) / self.parameters["temperature"])
        elif self.method in ("platt", "isotonic"):
            out = _apply_calibrators(self.method, self._fitted, probs)
        else:  # histogram
            cols = []
            for c, (edges, freq) in enumerate(self._fitted):
                from calviz._binning import equal_mass_ids

                cols.append(freq[equal_mass_ids(np.clip(probs[:, c], 0.0, 1.0), edges)])
            out = np.column_stack(cols)
            if self.n_classes == 2:
                out = np.column_stack([1.0 - out[:, 1], out[:, 1]])
            else:
                out = _renormalise(out)
        out = np.clip(np.asarray(out, dtype=np.float64), 0.0, 1.0)
        out /= out.sum(axis=1, keepdims=True)  # exact simplex rows after clipping round-off
        return out[:, 1].copy() if np.ndim(y_prob) == 1 else out


def _renormalise(out: np.ndarray) -> np.ndarray:
    """One-vs-rest outputs → probability rows (rows summing to 0 become uniform, as in scikit-learn)."""
    s = out.sum(axis=1, keepdims=True)
    k = out.shape[1]
    return np.where(s > 0, out / np.where(s > 0, s, 1.0), 1.0 / k)


def _full_probs(y_prob, n_classes: int) -> np.ndarray:
    p = np.asarray(y_prob, dtype=np.float64)
    if n_classes == 2 and p.ndim == 1:
        return np.column_stack([1.0 - p, p])
    if p.ndim != 2 or p.shape[1] != n_classes:
        raise InputError(f"this map was fitted on {n_classes}-class predictions; got shape {p.shape}")
    return p


def _fit_map(method: str, probs: np.ndarray, labels: np.ndarray, n_bins: int,
             w: np.ndarray | None = None) -> RecalibrationMap:
    K = probs.shape[1]
    if w is not None:  # rows of weight 0 take no part in any fit
        if method == "histogram":
            raise InputError("histogram recalibration does not take sample_weight; the temperature, platt "
                             "and isotonic methods do")
        keep = w > 0
        probs, labels, w = probs[keep], labels[keep], w[keep]
        if not w.size:
            raise InputError("every calibration row has weight 0: no map can be fitted")
    n = int(labels.shape[0])
    if method == "temperature":
        temperature = fit_temperature(_log_probs(probs), labels, w)
        return RecalibrationMap("temperature", K, {"temperature": temperature}, n)
    if method in ("platt", "isotonic"):
        counts = np.bincount(labels, weights=w, minlength=K)  # (weighted: the repeated rows' counts)
        # (from the counts: np.unique would sort the labels, 4 % of an isotonic fit and application)
        if np.count_nonzero(counts) < 2:
            raise InputError(f"{method} recalibration needs both outcomes among the calibration rows")
        if counts.min() < 2:
            raise InputError(f"{method} recalibration needs at least 2 calibration rows of every class; "
                             f"class {int(np.argmin(counts))} has {float(counts.min()):g}")
        # one calibrator per class on every calibration row, as scikit-learn's CalibratedClassifierCV
        # around the frozen fixed-probability classifier fits them
        fitted = _fit_calibrators(method, probs, labels, w)
        return RecalibrationMap(method, K, {"calibrators": K if K > 2 else 1}, n, fitted)
    if method == "histogram":
        columns = range(K) if K > 2 else (1,)
        fitted = [_histogram_fit(probs[:, c], (labels == c).astype(np.float64), n_bins) for c in columns]
        if K == 2:
            fitted = [(np.array([0.0, 1.0]), np.array([0.5]))] + fitted  # column 0 is 1 − column 1
        return RecalibrationMap("histogram", K, {"n_bins": int(n_bins)}, n, tuple(fitted))
    raise InputError(f"method must be one of {', '.join(METHODS)}; got {method!r}")


# --------------------------------------------------------------------------------------------------
# public entry point
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class RecalibrationResult(ResultMixin):
    """Recalibrated held-out predictions, returned by :func:`recalibrate`.

    Attributes
    ----------
    method : str
        The recalibration method.
    y_true, y_prob : ndarray
        Labels and recalibrated predictions of the evaluation rows ``eval_indices`` — the only rows on
        which "after" statistics may be computed.
    y_prob_before : ndarray
        The original predictions of the same rows (compare them with :func:`calviz.compare`).
    eval_indices : ndarray
        Indices into the input, increasing.
    calibration_indices : ndarray or None
        Split mode: the rows the single map in ``maps`` was fitted on, disjoint from ``eval_indices``
        (None when cross-fitting).
    folds : ndarray or None
        Cross-fitting: ``folds[i]`` is row i's fold and ``maps[f]`` (fitted on every fold but f)
        recalibrated the rows of fold f (None in split mode).
    maps : tuple of RecalibrationMap
        The fitted maps.
    n_classes : int
        K.
    seed : int or None
        The seed of the split.
    sample_weight : ndarray or None
        The weights of the evaluation rows (None without sample weights).
    """

    method: str
    y_true: np.ndarray
    y_prob: np.ndarray
    y_prob_before: np.ndarray
    eval_indices: np.ndarray
    calibration_indices: np.ndarray | None
    folds: np.ndarray | None
    maps: tuple
    n_classes: int
    seed: int | None
    sample_weight: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_eval(self) -> int:
        return int(self.eval_indices.shape[0])

    @property
    def temperature(self) -> float | None:
        """The fitted temperature (split mode, method "temperature"), else None."""
        if self.method != "temperature" or len(self.maps) != 1:
            return None
        return float(self.maps[0].parameters["temperature"])


def _calibration_count(calibration_size, n: int) -> int:
    """Rows of the calibration part: a row count, or a fraction of the ``n`` rows (checked by
    :func:`recalibrate`'s declared rule; here only what depends on ``n``)."""
    if isinstance(calibration_size, (int, np.integer)):
        m = int(calibration_size)
    else:
        m = int(round(float(calibration_size) * n))
    if not 2 <= m <= n - 2:
        raise InputError(f"calibration_size must leave at least 2 calibration and 2 evaluation rows of "
                         f"{n}; got {calibration_size!r} ({m} rows)")
    return m


@validate_params({"method": Options(METHODS), "folds": NoneOr(Interval(int, 2, None)), "n_bins": POSITIVE_INT,
                  "seed": SEED, "calibration_size": NoneOr(AnyOf(Interval(float, 0, 1, closed="neither"),
                                                                 Interval(int, 2, None)))})
def recalibrate(
    y_true,
    y_prob=None,
    *,
    method: Method = "temperature",
    calibration_size: float | int | None = 0.5,
    folds: int | None = None,
    n_bins: int = 15,
    seed: int | None = 0,
    sample_weight=None,
) -> RecalibrationResult:
    """Fit a recalibration map on part of the data and recalibrate the rest.

    Methods: temperature scaling (one T for all classes, Guo et al. [1]_), Platt's sigmoid [2]_ and
    isotonic regression [3]_ (scikit-learn's calibrators, one per class), and histogram binning
    (Zadrozny and Elkan [4]_, equal-mass bins).  The map is fitted on a random part of the rows and
    applied to the others, so statistics of the recalibrated predictions are computed on rows the map
    never saw.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    method : {"temperature", "platt", "isotonic", "histogram"}, default "temperature"
        The recalibration map.
    calibration_size : float or int or None, default 0.5
        Rows used to fit the map — a fraction in (0, 1) or a count; drawn uniformly without replacement
        with ``seed``.  The remaining rows are recalibrated and returned.
    folds : int, optional
        Cross-fitting instead of one split (pass ``calibration_size=None``): rows are dealt at random into
        ``folds`` ≥ 2 folds and each fold is recalibrated by a map fitted on the other folds, so every row
        is returned and no row's prediction comes from a map that saw it.  (Rows of different folds share
        most of their maps' training data, so they are not independent given the maps; statistics on the
        pooled rows are then approximations, as for any cross-fitted estimate.)
    n_bins : int, default 15
        Bins of the histogram method (ignored by the others).
    seed : int or None, default 0
        Seed of the split.
    sample_weight : array-like of shape (n,), optional
        Row weights of the fits (a row of weight k counts as k copies in the log-likelihood of temperature
        scaling and Platt's sigmoid, and in the isotonic regression's pooled means); they travel with
        their rows through the split (``sample_weight`` of the result: the evaluation rows').  The
        histogram method does not take weights.

    Returns
    -------
    RecalibrationResult
        Held-out labels, recalibrated and original predictions, the split and the maps.

    See Also
    --------
    compare : Judge the recalibration on the held-out rows.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.
    .. [2] J. Platt. Probabilistic outputs for support vector machines and comparisons to regularized
       likelihood methods. *Advances in Large Margin Classifiers*, 1999.
    .. [3] B. Zadrozny and C. Elkan. Transforming classifier scores into accurate multiclass probability
       estimates. *KDD*, 2002.
    .. [4] B. Zadrozny and C. Elkan. Obtaining calibrated probability estimates from decision trees and
       naive Bayesian classifiers. *ICML*, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet([1.0, 1.0, 1.0], size=1500)     # 3 classes
    >>> labels = np.array([rng.choice(3, p=row ** 2 / (row ** 2).sum()) for row in probs])
    >>> res = calviz.recalibrate(labels, probs, method="temperature", seed=0)
    >>> res.y_prob.shape, round(res.maps[0].parameters["temperature"], 2)
    ((750, 3), 0.52)
    >>> cmp = calviz.compare(res.y_true, res.y_prob_before, res.y_prob, names=("before", "after"), tcal=False)
    >>> round(cmp.ece_a.estimate, 3), round(cmp.ece_b.estimate, 3)
    (0.169, 0.032)
    """
    from calviz._binning import check_n_bins

    data = validate_once(y_true, y_prob)
    n_bins = check_n_bins(n_bins)
    n, K = data.n, data.n_classes
    w = check_sample_weight(sample_weight, n, "recalibrate")
    probs = data.full_probs()
    labels = data.labels
    rng = as_generator(seed)
    order = rng.permutation(n)
    if folds is not None and calibration_size not in (None, 0.5):
        raise InputError("pass either calibration_size (one split) or folds (cross-fitting), not both")
    if folds is None:
        if calibration_size is None:
            raise InputError("pass calibration_size (one split) or folds (cross-fitting)")
        m = _calibration_count(calibration_size, n)
        cal = np.sort(order[:m])
        ev = np.sort(order[m:])
        fitted = _fit_map(method, probs[cal], labels[cal], n_bins, None if w is None else w[cal])
        after = fitted.transform(data.probs[ev])
        return RecalibrationResult(method, labels[ev].copy(), after, data.probs[ev].copy(), ev, cal, None,
                                   (fitted,), K, seed, None if w is None else w[ev])
    if isinstance(folds, (bool, np.bool_)) or not isinstance(folds, (int, np.integer)) \
            or not 2 <= folds <= n // 2:
        raise InputError(f"folds must be an integer in 2..n/2 = {n // 2}; got {folds!r}")
    fold_of = np.empty(n, dtype=np.int64)
    fold_of[order] = np.arange(n) % int(folds)
    after = np.empty_like(data.probs, dtype=np.float64)
    maps = []
    for f in range(int(folds)):
        inside = fold_of == f
        fitted = _fit_map(method, probs[~inside], labels[~inside], n_bins, None if w is None else w[~inside])
        after[inside] = fitted.transform(data.probs[inside])
        maps.append(fitted)
    ev = np.arange(n)
    return RecalibrationResult(method, labels.copy(), after, np.array(data.probs), ev, None, fold_of,
                               tuple(maps), K, seed, w)
