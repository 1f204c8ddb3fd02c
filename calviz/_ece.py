"""Binned ECE estimators on mergeable per-bin sufficient statistics.

Everything is computed in two steps:

1. :func:`bin_sums` — one jitted pass over the data gives a :class:`BinSums` (per non-empty bin:
   count, Σv, Σ‖v‖², Σvvᵀ, Σz, Σy, ΣΣ(z), Σtr(Σ(z)²) with v = y − z, Σ(z) = diag(z) − zzᵀ).
   BinSums of disjoint chunks of data :meth:`BinSums.merge` into the BinSums of their union, so a
   distributed computation gives exactly the in-memory numbers.
2. finalisers — plain functions of a BinSums: :func:`plugin_ece_l1`, :func:`plugin_ece_sq`,
   :func:`debiased_ece_sq` (T^d, Lee et al. (2023), eq. 6), :func:`unbiased_ece_sq` (T, Sun et al. (2024),
   eq. 4), :func:`kumar_ece_sq`, :func:`miscalibrated_variance` (σ̂₁², Sun et al. (2024), Algorithm 1),
   :func:`null_variance` (exact conditional Var₀(· | Z), for the interval's calibrated regime) and
   :func:`reliability_rows`.

The public estimators (:func:`binned_ece`, :func:`debiased_ece`, :func:`unbiased_ece`,
:func:`kumar_debiased_ece`, :func:`reliability`) validate once, pick the calibration target and the
binning, and return small frozen result objects.

Cost model: one O(n·k²) jitted pass plus finalisers over the non-empty bins (at most n); the number of
bins never multiplies the work — only occupied bins are stored, the fused equal-width path keeps all m
bins only while m ≤ max(2¹⁶, n/4), and partitions whose cells cannot be keyed in int64 are refused —
so no option of these estimators has a cost beyond that of reading the data.  (The resampled interval's
budget is in :mod:`calviz.intervals`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from calviz._binning import (
    MAX_EDGE_TABLE,
    Bins,
    assign_bins,
    check_n_bins,
    equal_mass_edges,
    equal_width_edges,
)
from calviz._data import ROW_SUM_LIMIT, CalibrationData, InputError, check_alpha, plain_arrays, validate_once
from calviz._kernels.classical import edge_bin_sums
from calviz._lazy import LazyModule
from calviz._params import INTERVAL_ALPHA, POSITIVE_INT, UNIT_OPEN, Interval, Options, validate_params
from calviz._results import HasInterval, ResultMixin, ValueStatistic
from calviz._sums import (  # the shared sums type and its finalisers (in-memory and Dask alike)
    BinSums,
    bin_sums,
    checked_first_order_sums,
    debiased_ece_sq,
    equal_width_1d_sums,
    equal_width_first_order_sums,
    kumar_ece_sq,
    miscalibrated_variance,
    null_variance,
    plugin_ece_l1,
    plugin_ece_sq,
    plugin_mce,
    reliability_rows,
    unbiased_ece_sq,
)
from calviz._threads import PARALLEL_MIN_ROWS, map_items
from calviz._weights import check_sample_weight, weighted_bin_sums, weighted_bins, weighted_plugin
from calviz.targets import SCALAR_TARGETS, TARGETS, Target, TargetName, resolve_once, topk_view

stats = LazyModule("scipy.stats")

__all__ = [
    "BinSums",
    "bin_sums",
    "binned_sums",
    "prepare_view",
    "topk_view",
    "plugin_ece_l1",
    "plugin_ece_sq",
    "plugin_mce",
    "debiased_ece_sq",
    "unbiased_ece_sq",
    "kumar_ece_sq",
    "miscalibrated_variance",
    "null_variance",
    "reliability_rows",
    "ECEResult",
    "ReliabilityData",
    "binned_ece",
    "debiased_ece",
    "unbiased_ece",
    "kumar_debiased_ece",
    "mce",
    "ace",
    "reliability",
    "reliability_from_sums",
    "binomial_interval",
    "equal_mass_sums",
]


# ------------------------------------------------------------------------------------------------
# binning of a validated sample
# ------------------------------------------------------------------------------------------------
#: the fused 1-D equal-width kernel is used up to this many bins (or n/4 bins), the sorting path beyond
_FUSED_MAX_BINS = 1 << 16
#: reliability data list every bin, so their number is bounded
MAX_RELIABILITY_BINS = 1_000_000


def prepare_view(
    y_true, y_prob=None, *, target: TargetName | Target = "auto", top_k: int = 1, class_index: int = 0,
    integer_labels: bool = False, allowed: tuple[str, ...] = TARGETS, caller: str | None = None,
) -> tuple[CalibrationData, str, np.ndarray, np.ndarray]:
    """Validate once (validated :class:`CalibrationData` is used as it is) and return
    (data, resolved target name, z, y): :func:`calviz.targets.resolve` decides the target and
    :meth:`calviz.targets.Target.view` gives the arrays."""
    data = validate_once(y_true, y_prob)
    resolved = resolve_once(data, target, top_k, class_index, allowed=allowed, caller=caller)
    z, y = resolved.view(data, integer_labels=integer_labels)
    return data, resolved.name, z, y


def _fused_1d(m: int, n: int) -> bool:
    """Whether 1-D equal-width sums of n rows in m bins take the fused kernels, which keep a few numbers
    for each of the m bins: only when that is O(n)."""
    return m <= min(max(_FUSED_MAX_BINS, n // 4), MAX_EDGE_TABLE)


def binned_sums(
    z: np.ndarray, y: np.ndarray, *, n_bins: int, scheme: str = "equal_width", target: str = "binary",
    first_order: bool = False,
) -> tuple[BinSums, Bins | None, int, str]:
    """BinSums of a prepared view, choosing the partition from the target.

    Returns (sums, bins or None for the fused 1-D path, total number of bins, resolved scheme).
    ``first_order``: the caller reads only count, Σz, Σy and Σv (:data:`FIRST_ORDER`), so the fused 1-D
    path may leave out the second-order sums (:func:`calviz._sums.equal_width_first_order_sums`).
    1-D views accept ``equal_width``/``equal_mass``/``distinct``; ``topk`` uses the cubic grid and
    ``full`` the equal-volume simplex partition (``equal_width`` selects them by default).
    """
    m = check_n_bins(n_bins)
    if z.ndim == 1:
        if scheme in ("grid", "simplex"):
            raise InputError(f"scheme {scheme!r} needs a multi-dimensional target ('topk' or 'full')")
        if scheme == "equal_width" and _fused_1d(m, z.shape[0]):
            fused = equal_width_first_order_sums if first_order else equal_width_1d_sums
            return fused(z, y, m), None, m, scheme
        bins = assign_bins(z, n_bins=m, scheme=scheme)
        return bin_sums(bins, z, y), bins, bins.n_bins_total, scheme
    default = "simplex" if target == "full" else "grid"
    if scheme == "equal_width":
        scheme = default
    if scheme not in ("grid", "simplex"):
        raise InputError(
            f"scheme {scheme!r} is for 1-D targets; target {target!r} uses 'grid' (top-k) or 'simplex' (full)"
        )
    bins = assign_bins(z, n_bins=m, scheme=scheme)
    return bin_sums(bins, z, y), bins, bins.n_bins_total, scheme


# ------------------------------------------------------------------------------------------------
# finalisers: plain functions of BinSums
# ------------------------------------------------------------------------------------------------
# ------------------------------------------------------------------------------------------------
# public estimators
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class ECEResult(ValueStatistic, ResultMixin):
    """A binned ECE estimate, returned by :func:`binned_ece` and its siblings.

    Attributes
    ----------
    value : float
        The estimate (also ``statistic``): on the ECE scale for the plug-in ℓ1/ℓ2 ECE and the MCE
        (``squared=False``), on the ECE² scale for the debiased / unbiased / Kumar estimators
        (``squared=True``; these may be negative in finite samples).
    estimator : str
        Which estimator: "plugin_l1", "plugin_l2", "max", "debiased_l2_sq", "unbiased_l2_sq",
        "kumar_l2_sq" or "ace".
    squared : bool
        Whether ``value`` is on the ECE² scale.
    n : int
        Sample size.
    n_bins : int
        Bins requested (per axis for vector targets).
    n_bins_total : int
        Bins of the partition, empty ones included.
    n_nonempty : int
        Bins holding at least one prediction.
    scheme : str
        The binning ("equal_width", "equal_mass", "distinct", "grid" or "simplex").
    target : str
        The calibration target tested.
    n_classes : int or None
        Classes of the input.

    Notes
    -----
    ``ece`` is the estimate on the ECE scale, √max(value, 0) when ``squared``; ``float(result)`` is
    ``value``.
    """

    value: float
    estimator: str
    squared: bool
    n: int
    n_bins: int
    n_bins_total: int
    n_nonempty: int
    scheme: str
    target: str
    n_classes: int | None = None

    @property
    def ece(self) -> float:
        return float(np.sqrt(max(self.value, 0.0))) if self.squared else self.value

    def __float__(self) -> float:
        return float(self.value)


#: the options of the binned estimators and their constraints
_BINNED = {"n_bins": POSITIVE_INT,
           "scheme": Options(("equal_width", "equal_mass", "distinct", "grid", "simplex"))}


#: the binned estimators by their result label: (finaliser of the BinSums, value on the ECE² scale)
ESTIMATORS = {
    "plugin_l1": (plugin_ece_l1, False),
    "plugin_l2": (lambda s: float(np.sqrt(plugin_ece_sq(s))), False),
    "max": (plugin_mce, False),
    "debiased_l2_sq": (debiased_ece_sq, True),
    "unbiased_l2_sq": (unbiased_ece_sq, True),
    "kumar_l2_sq": (kumar_ece_sq, True),
}
#: the estimators whose finalisers read only count, Σv, Σz and Σy of the BinSums
FIRST_ORDER = frozenset({"plugin_l1", "plugin_l2", "max"})


def checked_first_order(y_true, y_prob, *, n_bins, scheme, target, top_k, sample_weight
                        ) -> tuple[BinSums, str, int] | None:
    """(first-order sums, target name, K) of unvalidated arrays in one checking pass, or None.

    For plain numpy arrays (:func:`calviz._data.plain_arrays`: float64 or float32 predictions read as
    stored), unweighted, equal-width bins of the binary or top-1 target (``auto``), validation, the top-1
    reduction and the bin sums are one threaded read of the data
    (:func:`calviz._sums.checked_first_order_sums`) instead of a pass per check, one per view and one for
    the sums.  The sums are those of the validating path to round-off (Σv = Σy − Σz).  None when the
    input takes the validating path — other arrays or options, or a value :func:`as_calibration_data`
    refuses, whose message that path gives."""
    if sample_weight is not None or scheme != "equal_width" or not isinstance(target, str):
        return None
    if not isinstance(top_k, (int, np.integer)) or isinstance(top_k, bool) or top_k != 1:
        return None
    arrays = plain_arrays(y_true, y_prob)
    if arrays is None:
        return None
    probs, labels = arrays
    name = "binary" if probs.ndim == 1 else "top1"
    m = check_n_bins(n_bins)
    if target not in ("auto", name) or not _fused_1d(m, labels.shape[0]):
        return None
    sums = checked_first_order_sums(probs, labels, m, ROW_SUM_LIMIT)
    if sums is None:
        return None
    return sums, name, 2 if probs.ndim == 1 else int(probs.shape[1])


def binned_statistic(p) -> str:
    """The label of the plug-in estimator of :func:`binned_ece` for ``p`` (1, 2 or "max")."""
    if p == 1 and not isinstance(p, bool):
        return "plugin_l1"
    if p == 2:
        return "plugin_l2"
    if p == "max":
        return "max"
    raise InputError(f"p must be 1, 2 or 'max'; got {p!r}")


def ece_from_sums(sums: BinSums, statistic: str, *, n_bins: int, n_bins_total: int, scheme: str,
                  target: str, n_classes: int) -> ECEResult:
    """The :class:`ECEResult` of the estimator ``statistic`` (a key of :data:`ESTIMATORS`) from merged
    BinSums — in memory and on Dask alike."""
    finaliser, squared = ESTIMATORS[statistic]
    return ECEResult(float(finaliser(sums)), statistic, squared, int(sums.n_total), int(n_bins),
                     int(n_bins_total), sums.n_nonempty, scheme, target, int(n_classes))


def _estimate(y_true, y_prob, statistic: str, *, n_bins, scheme, target, top_k, class_index,
              caller: str, sample_weight=None) -> ECEResult:
    if statistic in FIRST_ORDER:
        checked = checked_first_order(y_true, y_prob, n_bins=n_bins, scheme=scheme, target=target,
                                      top_k=top_k, sample_weight=sample_weight)
        if checked is not None:
            sums, name, n_classes = checked
            m = check_n_bins(n_bins)
            return ece_from_sums(sums, statistic, n_bins=m, n_bins_total=m, scheme=scheme, target=name,
                                 n_classes=n_classes)
    data, target, z, y = prepare_view(y_true, y_prob, target=target, top_k=top_k, class_index=class_index,
                                      integer_labels=sample_weight is None, caller=caller)
    w = check_sample_weight(sample_weight, data.n, caller)
    if w is not None:
        return _weighted_estimate(data, target, z, y, w, statistic, n_bins=n_bins, scheme=scheme)
    sums, _, total, scheme = binned_sums(z, y, n_bins=n_bins, scheme=scheme, target=target,
                                         first_order=statistic in FIRST_ORDER)
    m = total if scheme == "distinct" else check_n_bins(n_bins)
    return ece_from_sums(sums, statistic, n_bins=m, n_bins_total=total, scheme=scheme, target=target,
                         n_classes=data.n_classes)


def _weighted_scheme(z: np.ndarray, scheme: str, target: str) -> str:
    """The binning of weighted data: the rules of :func:`binned_sums` (vector targets bin on the grid /
    simplex)."""
    if z.ndim == 1:
        if scheme in ("grid", "simplex"):
            raise InputError(f"scheme {scheme!r} needs a multi-dimensional target ('topk' or 'full')")
        return scheme
    if scheme == "equal_width":
        return "simplex" if target == "full" else "grid"
    if scheme not in ("grid", "simplex"):
        raise InputError(f"scheme {scheme!r} is for 1-D targets; target {target!r} uses 'grid' (top-k) or "
                         "'simplex' (full)")
    return scheme


def _weighted_estimate(data, target, z, y, w, statistic: str, *, n_bins, scheme) -> ECEResult:
    """A plug-in estimate of weighted data: each bin's weight, weighted mean prediction and weighted
    frequency in place of its count and means (a row of integer weight k counts as k copies)."""
    m = check_n_bins(n_bins)
    scheme = _weighted_scheme(z, scheme, target)
    ids, n_occupied, total, _, _ = weighted_bins(z, w, m, scheme)
    weight, z_sum, y_sum = weighted_bin_sums(ids, n_occupied, z, y, w)
    value = weighted_plugin(weight, z_sum, y_sum, statistic)
    return ECEResult(value, statistic, False, data.n, total if scheme == "distinct" else m, total,
                     int((weight > 0).sum()), scheme, target, data.n_classes)


@validate_params({**_BINNED, "p": Options((1, 2, "max"))})
def binned_ece(
    y_true, y_prob=None, *, n_bins: int = 15, p: int = 1, scheme: str = "equal_width",
    target: TargetName = "auto", top_k: int = 1, class_index: int = 0, sample_weight=None,
) -> ECEResult:
    """Plug-in binned expected calibration error (ℓ1, ℓ2 or maximum).

    With bins I_b holding N_b of the n predictions, mean prediction z̄_b and mean label ȳ_b:
    p = 1 gives Σ_b (N_b/n) ‖ȳ_b − z̄_b‖₁ (the ECE of Guo et al. [1]_ with 15 equal-width bins); p = 2
    gives the ℓ2 ECE √T^b with T^b = Σ_b (N_b/n) ‖ȳ_b − z̄_b‖² (Lee et al. [2]_, Sec. 3, eq. 5); p = "max"
    gives the maximum calibration error max_b ‖ȳ_b − z̄_b‖_∞ over the non-empty bins (:func:`mce`).
    The plug-in estimate is biased upwards when bins hold few predictions; :func:`debiased_ece` and
    :func:`unbiased_ece` remove that bias on the ECE² scale.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Number of bins (per axis for vector targets).
    p : {1, 2, "max"}, default 1
        The norm: ℓ1 ECE, ℓ2 ECE, or the maximum calibration error.
    scheme : {"equal_width", "equal_mass", "distinct", "grid", "simplex"}, default "equal_width"
        Bin edges: equal widths, or equal numbers of predictions (ties never split); "distinct" puts
        every distinct prediction in its own bin; "grid" / "simplex" are the partitions of the ``topk``
        / ``full`` targets (chosen automatically).
    target : {"auto", "binary", "top1", "classwise", "topk", "full"}, default "auto"
        Which probabilities are checked ("auto": binary for 1-D input, the top-1 confidence otherwise).
    top_k : int, default 1
        k of the ``topk`` target.
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights: bins weigh W_b = Σ_{i∈b} w_i with weighted means (a row of integer
        weight k counts as k copies; equal-mass edges are those of the weighted sample).

    Returns
    -------
    ECEResult
        ``value`` (the ECE), ``estimator``, ``n``, the bins used (``n_bins``, ``n_nonempty``,
        ``scheme``), ``target`` and ``n_classes``.

    See Also
    --------
    debiased_ece, unbiased_ece : Estimators of ECE² without the upward bias.
    ece_interval : A confidence interval for the ℓ2 ECE.
    reliability : The per-bin data behind the estimate.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> round(calviz.binned_ece(y, p, n_bins=10).value, 3)
    0.1
    >>> round(calviz.binned_ece(y, p, n_bins=10, p=2).value, 3)
    0.113
    """
    return _estimate(y_true, y_prob, binned_statistic(p), n_bins=n_bins, scheme=scheme, target=target,
                     top_k=top_k, class_index=class_index, caller="binned_ece", sample_weight=sample_weight)


@validate_params(_BINNED)
def debiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: TargetName = "auto",
    top_k: int = 1, class_index: int = 0,
) -> ECEResult:
    """Debiased plug-in estimator T^d of the squared ℓ2 ECE (T-Cal's test statistic).

    T^d = (1/n) Σ_b (1/N_b) Σ_{j≠l ∈ I_b} ⟨v_j, v_l⟩ with residuals v = y − z (Lee et al. [1]_, eq. 6):
    the plug-in T^b = Σ_b (N_b/n) ‖ȳ_b − z̄_b‖² with each bin's diagonal terms ‖v_j‖² removed, so that
    E[T^d] = 0 for a calibrated model.  Negative values are possible and mean "no evidence of
    miscalibration at this resolution".

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Number of bins (per axis for vector targets).
    scheme : {"equal_width", "equal_mass", "distinct", "grid", "simplex"}, default "equal_width"
        The binning, as for :func:`binned_ece`.
    target : {"auto", "binary", "top1", "classwise", "topk", "full"}, default "auto"
        Which probabilities are checked ("auto": binary for 1-D input, the top-1 confidence otherwise).
    top_k : int, default 1
        k of the ``topk`` target.
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    ECEResult
        ``value`` = T^d on the ECE² scale (``squared=True``; ``ece`` = √max(T^d, 0)), with the bins used.

    See Also
    --------
    adaptive_tcal : The test built on T^d at every dyadic number of bins.
    unbiased_ece : The within-bin unbiased estimator of Sun et al.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> result = calviz.debiased_ece(y, p, n_bins=10)
    >>> round(result.value, 4), round(result.ece, 3), result.squared
    (0.012, 0.109, True)
    """
    return _estimate(y_true, y_prob, "debiased_l2_sq", n_bins=n_bins, scheme=scheme,
                     target=target, top_k=top_k, class_index=class_index, caller="debiased_ece")


@validate_params(_BINNED)
def unbiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: TargetName = "auto",
    top_k: int = 1, class_index: int = 0,
) -> ECEResult:
    """Within-bin unbiased estimator of the squared binned ℓ2 ECE (Sun et al.'s statistic T).

    T = (1/n) Σ_{b: N_b ≥ 2} (1/(N_b − 1)) Σ_{j≠l ∈ I_b} ⟨v_j, v_l⟩ with v = y − z (Sun et al. [1]_, eq. 4).
    Dividing by N_b − 1 instead of N_b (T^d of Lee et al. [2]_, eq. 6) makes each bin's term unbiased
    for P(bin) ‖E[v | bin]‖²; it is the statistic of :func:`ece_interval`.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Number of bins (per axis for vector targets).
    scheme : {"equal_width", "equal_mass", "distinct", "grid", "simplex"}, default "equal_width"
        The binning, as for :func:`binned_ece`.
    target : {"auto", "binary", "top1", "classwise", "topk", "full"}, default "auto"
        Which probabilities are checked ("auto": binary for 1-D input, the top-1 confidence otherwise).
    top_k : int, default 1
        k of the ``topk`` target.
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    ECEResult
        ``value`` = T on the ECE² scale (``squared=True``, may be negative), with the bins used.

    See Also
    --------
    ece_interval : The confidence interval built on T.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> round(calviz.unbiased_ece(y, p, n_bins=10).value, 4)
    0.012
    """
    return _estimate(y_true, y_prob, "unbiased_l2_sq", n_bins=n_bins, scheme=scheme,
                     target=target, top_k=top_k, class_index=class_index, caller="unbiased_ece")


@validate_params(_BINNED)
def kumar_debiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "distinct", target: TargetName = "auto",
    class_index: int = 0,
) -> ECEResult:
    """Debiased squared ℓ2 ECE of Kumar, Liang and Ma for predictors with few distinct values.

    Σ_b (N_b/n) [(ȳ_b − z̄_b)² − ȳ_b (1 − ȳ_b)/(N_b − 1)] over the bins with N_b ≥ 2: the plug-in
    squared error minus an estimate of the sampling variance of ȳ_b (Kumar et al. [1]_; as compared in
    Lee et al. [2]_, App. C.1).  By default each distinct predicted value is its own bin
    (``scheme="distinct"``), the setting it was designed for.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Number of bins when ``scheme`` is not "distinct".
    scheme : {"distinct", "equal_width", "equal_mass"}, default "distinct"
        The binning, as for :func:`binned_ece`.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar view checked ("auto": binary for 1-D input, the top-1 confidence otherwise;
        ``classwise``: P(y = ``class_index``) one-vs-rest).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    ECEResult
        ``value`` on the ECE² scale (``squared=True``, may be negative), with the bins used.

    References
    ----------
    .. [1] A. Kumar, P. Liang and T. Ma. Verified uncertainty calibration. *NeurIPS*, 2019.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.choice([0.2, 0.5, 0.8], size=2000)            # a predictor with three values
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> result = calviz.kumar_debiased_ece(y, p)
    >>> result.n_nonempty, round(result.value, 4)
    (3, 0.0096)
    """
    return _estimate(y_true, y_prob, "kumar_l2_sq", n_bins=n_bins, scheme=scheme,
                     target=target, top_k=1, class_index=class_index, caller="kumar_debiased_ece")


@validate_params(_BINNED)
def mce(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: TargetName = "auto",
    top_k: int = 1, class_index: int = 0, sample_weight=None,
) -> ECEResult:
    """Maximum calibration error: the largest |observed frequency − mean prediction| over the bins.

    MCE = max_b |ȳ_b − z̄_b| over the non-empty bins (Naeini et al. [1]_), i.e.
    ``binned_ece(..., p="max")``, with calviz's bins: ``n_bins = m`` equal-width bins [i/m, (i+1)/m), the
    last one closed so that a prediction of exactly 1.0 falls in it.  For vector targets (``topk``,
    ``full``) the largest coordinate of any bin, max_b ‖ȳ_b − z̄_b‖_∞.

    This is torchmetrics' ``max_calibration_error`` / netcal's ``MCE`` for the top-1 target; those
    libraries may place a prediction lying exactly on an inner edge i/m in the bin below.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Number of bins (per axis for vector targets).
    scheme : {"equal_width", "equal_mass", "distinct", "grid", "simplex"}, default "equal_width"
        The binning, as for :func:`binned_ece`.
    target : {"auto", "binary", "top1", "classwise", "topk", "full"}, default "auto"
        Which probabilities are checked ("auto": binary for 1-D input, the top-1 confidence otherwise).
    top_k : int, default 1
        k of the ``topk`` target.
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights: bins weigh W_b = Σ_{i∈b} w_i with weighted means (a row of integer
        weight k counts as k copies; equal-mass edges are those of the weighted sample).

    Returns
    -------
    ECEResult
        ``value`` = the MCE (``estimator="max"``), with the bins used.

    References
    ----------
    .. [1] M. P. Naeini, G. F. Cooper and M. Hauskrecht. Obtaining well calibrated probabilities using
       Bayesian binning. *AAAI*, 2015.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> round(calviz.mce(y, p, n_bins=10).value, 3)
    0.167
    """
    return _estimate(y_true, y_prob, "max", n_bins=n_bins, scheme=scheme, target=target,
                     top_k=top_k, class_index=class_index, caller="mce", sample_weight=sample_weight)


@validate_params({"n_bins": POSITIVE_INT, "target": Options(("classwise", "binary", "top1")),
                  "scheme": Options(("equal_mass", "equal_width"))})
def ace(
    y_true, y_prob=None, *, n_bins: int = 15, target: Literal["classwise", "binary", "top1"] = "classwise",
    scheme: Literal["equal_mass", "equal_width"] = "equal_mass", sample_weight=None,
) -> ECEResult:
    """Adaptive calibration error: equal-mass bins, unweighted mean over bins and classes.

    ``target="classwise"`` (the definition of Nixon et al. [1]_, §4.1): for every class c the predictions
    P(y = c) of all n samples are split into ``n_bins`` equal-mass bins and
    ACE = (1/K) Σ_c mean_b |ȳ_{c,b} − z̄_{c,b}|, the unweighted mean over the non-empty bins of
    |observed frequency − mean prediction|, averaged over the classes (binary data: the two classes,
    P(y = 1) and 1 − P(y = 1)).  ``"binary"`` / ``"top1"``: the same unweighted mean for one scalar view
    (P(y = 1); the top-1 confidence).  Bins are calviz's equal-mass bins: ties are never split, so
    heavily tied predictions give fewer bins (the mean is over the bins formed; Nixon et al. divide by
    the requested number).

    ``scheme="equal_width"``: the same unweighted mean over the non-empty bins of ``n_bins`` equal-width
    bins — the "average calibration error" of Neumann, Zisserman and Vedaldi [2]_ (netcal's ``ACE``
    with its default equal-width bins).  With ``sample_weight`` each bin's frequency and mean prediction
    are weighted means (bins still count once each in the mean over bins).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Equal-mass bins per class.
    target : {"classwise", "binary", "top1"}, default "classwise"
        Average over all classes, or one scalar view.
    scheme : {"equal_mass", "equal_width"}, default "equal_mass"
        Bin edges: equal mass (adaptive, Nixon et al.) or equal width (Neumann et al.).
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights (a row of integer weight k counts as k copies; equal-mass edges are
        those of the weighted sample).

    Returns
    -------
    ECEResult
        ``value`` = the ACE (``estimator="ace"``, ``scheme="equal_mass"``); ``n_nonempty`` and
        ``n_bins_total`` are summed over the classes.

    References
    ----------
    .. [1] J. Nixon, M. W. Dusenberry, L. Zhang, G. Jerfel and D. Tran. Measuring calibration in deep
       learning. *CVPR Workshops*, 2019.
    .. [2] L. Neumann, A. Zisserman and A. Vedaldi. Relaxed softmax: Efficient confidence auto-calibration
       for safe pedestrian detection. *NeurIPS Workshop on Machine Learning for Intelligent Transportation
       Systems*, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet([1.0, 1.0, 1.0], size=1500)     # 3 classes
    >>> labels = np.array([rng.choice(3, p=row ** 2 / (row ** 2).sum()) for row in probs])
    >>> round(calviz.ace(labels, probs, n_bins=10).value, 3)
    0.095
    """
    m = check_n_bins(n_bins)
    data = validate_once(y_true, y_prob)
    w = check_sample_weight(sample_weight, data.n, "ace")
    if target == "classwise":
        # one class at a time, not kept (K views of 10⁷ rows hold K · 160 MB); labels stand for 1{y = c}
        items, view = range(data.n_classes), lambda c: (data._class_probs(c), data.labels, c)
    else:
        scalar = (*resolve_once(data, target, allowed=("binary", "top1"), caller="ace").view(data), None)
        items, view = [None], lambda _: scalar
    def bin_sums(item):
        z, y, label = view(item)
        if w is None and scheme == "equal_mass":
            return equal_mass_sums(z, y, m, label=label)
        indicator = (y == label) if label is not None else y
        weights = np.ones(z.shape[0]) if w is None else w
        ids, occupied, n_total, _, _ = weighted_bins(z, weights, m, scheme)
        count, z_sum, y_sum = weighted_bin_sums(ids, occupied, z, indicator, weights)
        keep = count > 0
        return count[keep], z_sum[keep, 0], y_sum[keep, 0], n_total

    # large data: the classes on threads, two at a time on two (each one's sums exactly as alone; in order)
    binned = map_items(bin_sums, items) if data.n >= PARALLEL_MIN_ROWS else map(bin_sums, items)
    per_view, nonempty, total = [], 0, 0
    for count, z_sum, y_sum, n_total in binned:
        per_view.append(float(np.abs((y_sum - z_sum) / count).mean()))
        nonempty += count.shape[0]
        total += n_total
    return ECEResult(float(np.mean(per_view)), "ace", False, data.n, m, total, nonempty, scheme, target,
                     data.n_classes)


def equal_mass_sums(z: np.ndarray, y: np.ndarray, n_bins: int, *, label: int | None = None):
    """(count, Σz, Σy) of the non-empty equal-mass bins of a validated scalar view, in increasing order of
    z, and the number of bins formed: calviz's equal-mass edges (:func:`calviz.binning.equal_mass_edges`:
    ties never split) and one fused bin-and-sum pass (no id array).  ``label``: y holds class ids and
    the view is one class against the rest, indicator 1{y = label}."""
    z = np.ascontiguousarray(z, dtype=np.float64)
    edges = equal_mass_edges(z, n_bins)
    count, z_sum, y_sum = edge_bin_sums(z, y, np.ascontiguousarray(edges[1:-1]),
                                        -1 if label is None else int(label))
    keep = count > 0
    return count[keep], z_sum[keep], y_sum[keep], int(edges.shape[0] - 1)


# ------------------------------------------------------------------------------------------------
# reliability diagram data
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class ReliabilityData(HasInterval, ResultMixin):
    """Per-bin reliability-diagram data of a 1-D binning, returned by :func:`reliability`.

    Every bin of the partition is listed; empty bins have count 0 and NaN elsewhere.

    Attributes
    ----------
    edges : ndarray of shape (B + 1,)
        Bin edges.
    counts : ndarray of shape (B,)
        Predictions per bin.
    mean_confidence : ndarray of shape (B,)
        Mean prediction z̄_b of each bin.
    observed_frequency : ndarray of shape (B,)
        Mean label ȳ_b of each bin.
    low, high : ndarray of shape (B,)
        The per-bin ``interval`` for the frequency at confidence ``level`` (``confidence_interval()``).
    level : float
        Confidence level 1 − α of the per-bin intervals.
    interval : str
        "wilson" or "jeffreys".
    n, n_bins, scheme, target : int, int, str, str
        Sample size, bins requested, binning scheme and calibration target.
    ece_l1 : float
        The plug-in ℓ1 ECE of the same bins (also ``statistic``).
    n_classes : int or None
        Classes of the input.
    value_range : (float, float) or None
        The smallest and largest prediction binned (equal-mass bins only; None otherwise): an equal-mass
        diagram draws its outer bins from them, not from the edges 0 and 1.
    """

    edges: np.ndarray
    counts: np.ndarray
    mean_confidence: np.ndarray
    observed_frequency: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    interval: str
    n: int
    n_bins: int
    scheme: str
    target: str
    ece_l1: float
    n_classes: int | None = None
    value_range: tuple[float, float] | None = None

    @property
    def statistic(self) -> float:
        """The plug-in ℓ1 ECE of these bins (``ece_l1``)."""
        return float(self.ece_l1)


def binomial_interval(
    successes, trials, alpha: float, method: str = "wilson"
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided 1 − α interval for a binomial proportion, elementwise (NaN where trials = 0).

    ``wilson``: (p̂ + z²/2N ± z√(p̂(1−p̂)/N + z²/4N²)) / (1 + z²/N), z = Φ⁻¹(1 − α/2).
    ``jeffreys``: Beta(x + ½, N − x + ½) quantiles α/2 and 1 − α/2, with low = 0 at x = 0 and high = 1
    at x = N (Brown, Cai & DasGupta 2001).
    """
    x = np.asarray(successes, dtype=np.float64)
    N = np.asarray(trials, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "wilson":
            zq = stats.norm.ppf(1.0 - alpha / 2.0)
            phat = x / N
            denom = 1.0 + zq * zq / N
            center = (phat + zq * zq / (2.0 * N)) / denom
            half = zq * np.sqrt(phat * (1.0 - phat) / N + zq * zq / (4.0 * N * N)) / denom
            low, high = center - half, center + half
        elif method == "jeffreys":
            low = stats.beta.ppf(alpha / 2.0, x + 0.5, N - x + 0.5)
            high = stats.beta.ppf(1.0 - alpha / 2.0, x + 0.5, N - x + 0.5)
            low = np.where(x <= 0, 0.0, low)
            high = np.where(x >= N, 1.0, high)
        else:
            raise InputError(f"interval must be 'wilson' or 'jeffreys'; got {method!r}")
    empty = N <= 0
    low = np.where(empty, np.nan, np.clip(low, 0.0, 1.0))
    high = np.where(empty, np.nan, np.clip(high, 0.0, 1.0))
    return low, high


@validate_params({"n_bins": Interval(int, 1, MAX_RELIABILITY_BINS),
                  "scheme": Options(("equal_width", "equal_mass")), "alpha": UNIT_OPEN,
                  "interval": Options(("wilson", "jeffreys"))})
def reliability(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", alpha: float = INTERVAL_ALPHA,
    interval: str = "wilson", target: TargetName = "auto", class_index: int = 0, sample_weight=None,
) -> ReliabilityData:
    """Reliability-diagram data: per bin the mean prediction, the observed frequency and its interval.

    For a scalar target (binary, top-1 confidence or one class) and bins I_b: count N_b, mean confidence
    z̄_b, observed frequency ȳ_b and a two-sided 1 − α interval for the frequency — Wilson's
    (p̂ + z²/2N ± z √(p̂(1 − p̂)/N + z²/4N²)) / (1 + z²/N), z = Φ⁻¹(1 − α/2), or Jeffreys' Beta(x + ½,
    N − x + ½) quantiles (Brown, Cai and DasGupta [1]_).  The default α = 0.1 gives 90 % intervals.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Number of bins (at most 10⁶: every bin is listed).
    scheme : {"equal_width", "equal_mass"}, default "equal_width"
        Bin edges.
    alpha : float, default 0.1
        The per-bin intervals have confidence 1 − α.
    interval : {"wilson", "jeffreys"}, default "wilson"
        The binomial interval.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar view checked ("auto": binary for 1-D input, the top-1 confidence otherwise;
        ``classwise``: P(y = ``class_index``) one-vs-rest).
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights: ``counts`` are then each bin's total weight W_b, the means are weighted
        and the interval is that of W_b trials with Σ_b w y successes (frequency weights: a row of integer
        weight k counts as k copies).

    Returns
    -------
    ReliabilityData
        ``edges``, ``counts``, ``mean_confidence``, ``observed_frequency``, ``low``, ``high`` per bin, the
        ``level`` and the plug-in ℓ1 ECE ``ece_l1`` of the same bins.

    See Also
    --------
    calviz.plots.reliability_plot : Draws these data.
    smooth_reliability : A binning-free reliability curve.

    References
    ----------
    .. [1] L. D. Brown, T. T. Cai and A. DasGupta. Interval estimation for a binomial proportion.
       *Statistical Science* 16(2), 101–133, 2001.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> rel = calviz.reliability(y, p, n_bins=5)
    >>> rel.counts.tolist()
    [419, 396, 394, 379, 412]
    >>> np.round(rel.observed_frequency - rel.mean_confidence, 3)
    array([-0.055, -0.145, -0.146, -0.121, -0.038])
    >>> rel.level
    0.9
    """
    m = check_n_bins(n_bins)  # (at most MAX_RELIABILITY_BINS: declared above, the uniform message)
    checked = checked_first_order(y_true, y_prob, n_bins=m, scheme=scheme, target=target, top_k=1,
                                  sample_weight=sample_weight)
    if checked is not None:
        sums, name, n_classes = checked
        return reliability_from_sums(sums, equal_width_edges(m), alpha=alpha, interval=interval, n_bins=m,
                                     scheme=scheme, target=name, n_classes=n_classes)
    data, target, z, y = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                      integer_labels=sample_weight is None, allowed=("auto", *SCALAR_TARGETS),
                                      caller="reliability")
    w = check_sample_weight(sample_weight, data.n, "reliability")
    return reliability_of_view(z, y, w, n_bins=m, scheme=scheme, alpha=alpha, interval=interval,
                               target=target, n_classes=data.n_classes)


def reliability_of_view(
    z: np.ndarray, y: np.ndarray, w: np.ndarray | None, *, n_bins: int, scheme: str, alpha: float,
    target: str, n_classes: int, interval: str = "wilson",
) -> ReliabilityData:
    """:func:`reliability` of a scalar view already validated: ``z``, ``y`` (n,) float64 arrays of a
    validated :class:`~calviz.CalibrationData`'s view (e.g. one rank of its top-k view), ``w`` its checked
    weights or None, ``n_bins`` checked (:func:`check_n_bins`); ``target`` and ``n_classes`` label the
    result.  An outer call that validated the data hands its views down here instead of validating each
    again (the per-rank and per-class panels)."""
    if w is not None:
        return _weighted_reliability(z, y, w, n_bins, scheme=scheme, alpha=alpha, interval=interval,
                                     target=target, n=z.shape[0], n_classes=n_classes)
    sums, bins, _, _ = binned_sums(z, y, n_bins=n_bins, scheme=scheme, target=target,
                                    first_order=True)
    edges = equal_width_edges(n_bins) if bins is None else bins.edges
    return reliability_from_sums(sums, edges, alpha=alpha, interval=interval, n_bins=n_bins, scheme=scheme,
                                 target=target, n_classes=n_classes, value_range=drawn_range(z, scheme))


def drawn_range(z: np.ndarray, scheme: str, *, is_sorted: bool = False) -> tuple[float, float] | None:
    """:attr:`ReliabilityData.value_range` of predictions ``z`` binned by ``scheme``: their (min, max) for
    equal-mass bins, whose outer bars are drawn over the predictions made; None for equal-width bins, which
    are the grid itself (as on Dask, which has no global min/max) and for no predictions.  ``is_sorted``:
    ``z`` is ascending (read its ends)."""
    if not z.size or scheme != "equal_mass":
        return None
    return (float(z[0]), float(z[-1])) if is_sorted else (float(z.min()), float(z.max()))


def reliability_from_sums(
    sums: BinSums, edges: np.ndarray, *, alpha: float = INTERVAL_ALPHA, interval: str = "wilson",
    n_bins: int | None = None, scheme: str = "equal_width", target: str = "binary",
    n_classes: int | None = None, value_range: tuple[float, float] | None = None,
) -> ReliabilityData:
    """:class:`ReliabilityData` from scalar BinSums whose keys are 1-D bin indices into ``edges``
    (equal-width: ``equal_width_edges(m)``; equal-mass: the edges of the binning).  In-memory and
    distributed reliability data are assembled by this one function."""
    alpha = check_alpha(alpha)
    if sums.dim != 1:
        raise InputError("reliability data need scalar (1-D) BinSums")
    edges = np.asarray(edges, dtype=np.float64)
    B = edges.shape[0] - 1
    counts = np.zeros(B, dtype=np.int64)
    counts[sums.keys] = sums.count
    zs = np.zeros(B)
    ys = np.zeros(B)
    zs[sums.keys] = sums.z_sum[:, 0]
    ys[sums.keys] = sums.y_sum[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(counts > 0, zs / counts, np.nan)
        freq = np.where(counts > 0, ys / counts, np.nan)
    # y is 0/1, so ys is an integer count up to float round-off
    low, high = binomial_interval(np.round(ys), counts, alpha, interval)
    return ReliabilityData(edges, counts, mean_conf, freq, low, high, 1.0 - alpha, interval,
                           int(sums.n_total), int(n_bins if n_bins is not None else B), scheme, target,
                           plugin_ece_l1(sums), n_classes, value_range)


def _weighted_reliability(z, y, w, m: int, *, scheme: str, alpha: float, interval: str, target: str, n: int,
                          n_classes: int) -> ReliabilityData:
    """:class:`ReliabilityData` of weighted rows: ``counts`` hold each bin's weight."""
    ids, occupied, _, edges, keys = weighted_bins(z, w, m, scheme)
    edges = equal_width_edges(m) if scheme == "equal_width" else edges
    weight, z_sum, y_sum = weighted_bin_sums(ids, occupied, z, y, w)
    B = edges.shape[0] - 1
    counts, zs, ys = np.zeros(B), np.zeros(B), np.zeros(B)
    counts[keys], zs[keys], ys[keys] = weight, z_sum[:, 0], y_sum[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(counts > 0, zs / counts, np.nan)
        freq = np.where(counts > 0, ys / counts, np.nan)
    low, high = binomial_interval(ys, counts, alpha, interval)
    r = np.abs(ys - zs)
    return ReliabilityData(edges, counts, mean_conf, freq, low, high, 1.0 - alpha, interval, int(n), int(m),
                           scheme, target, float(r.sum() / counts.sum()), n_classes)
