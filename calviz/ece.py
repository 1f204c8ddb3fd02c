"""Binned ECE estimators on mergeable per-bin sufficient statistics.

Everything is computed in two steps:

1. :func:`bin_sums` — one jitted pass over the data gives a :class:`BinSums` (per non-empty bin:
   count, Σv, Σ‖v‖², Σvvᵀ, Σz, Σy, ΣΣ(z), Σtr(Σ(z)²) with v = y − z, Σ(z) = diag(z) − zzᵀ).
   BinSums of disjoint chunks of data :meth:`BinSums.merge` into the BinSums of their union, so a
   distributed computation gives exactly the in-memory numbers.
2. finalisers — plain functions of a BinSums: :func:`plugin_ece_l1`, :func:`plugin_ece_sq`,
   :func:`debiased_ece_sq` (T^d, Lee et al. (2023), eq. 6), :func:`unbiased_ece_sq` (T, Sun et al. (2024),
   eq. 4), :func:`kumar_ece_sq`, :func:`miscalibrated_variance` (σ̂₁², Sun et al. (2024), Algorithm 1),
   :func:`null_variance` (exact conditional Var₀(· | Z), §4 step 3) and :func:`reliability_rows`.

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
from scipy import stats

from calviz._kernels.classical import edge_bin_sums
from calviz._kernels.ece import (
    bin_sums_1d_kernel,
    bin_sums_equal_width_1d_kernel,
    bin_sums_kernel,
)
from calviz._params import INTERVAL_ALPHA, POSITIVE_INT, UNIT_OPEN, Options, validate_params
from calviz._results import HasInterval, ResultMixin, ValueStatistic
from calviz.binning import (
    MAX_EDGE_TABLE,
    Bins,
    assign_bins,
    check_n_bins,
    dense_ids,
    equal_mass_edges,
    equal_width_bounds,
    equal_width_edges,
)
from calviz.data import CalibrationData, InputError, as_calibration_data, check_alpha
from calviz.targets import SCALAR_TARGETS, TARGETS, Target, TargetName, resolve, topk_view

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
# sufficient statistics
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class BinSums(ResultMixin):
    """Per-bin sufficient statistics of B non-empty bins for k-dimensional predictions.

    With v = y − z and Σ(z) = diag(z) − z zᵀ (the multinomial covariance of y given z):

    keys (B,) int64 sorted bin keys; count (B,) int64 N_b; resid_sum (B, k) S_b = Σ v;
    resid_sq_sum (B,) Q_b = Σ ‖v‖²; resid_outer_sum (B, k, k) O_b = Σ v vᵀ; z_sum, y_sum (B, k);
    null_cov_sum (B, k, k) C_b = Σ_j Σ(z_j); null_cov_sq_trace (B,) D_b = Σ_j tr(Σ(z_j)²);
    n_total = Σ_b N_b.  Binary/1-D data has k = 1 (the arrays keep their 2-D/3-D shapes).
    """

    keys: np.ndarray
    count: np.ndarray
    resid_sum: np.ndarray
    resid_sq_sum: np.ndarray
    resid_outer_sum: np.ndarray
    z_sum: np.ndarray
    y_sum: np.ndarray
    null_cov_sum: np.ndarray
    null_cov_sq_trace: np.ndarray
    n_total: int

    def __post_init__(self):
        B = self.keys.shape[0]
        if self.keys.ndim != 1 or any(getattr(self, f).shape[0] != B for f in _ARRAY_FIELDS):
            raise InputError("BinSums arrays must all have one row per key")
        if B > 1 and not np.all(self.keys[1:] > self.keys[:-1]):
            raise InputError("BinSums keys must be strictly increasing (sorted, unique)")

    @property
    def n_nonempty(self) -> int:
        return int(self.keys.shape[0])

    @property
    def dim(self) -> int:
        """k, the dimension of the predictions."""
        return int(self.resid_sum.shape[1])

    @classmethod
    def empty(cls, dim: int = 1) -> BinSums:
        """The BinSums of no data (neutral element of :meth:`merge`)."""
        k = int(dim)
        return cls(
            np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, k)), np.empty(0),
            np.empty((0, k, k)), np.empty((0, k)), np.empty((0, k)), np.empty((0, k, k)), np.empty(0), 0,
        )

    def merge(self, other: BinSums) -> BinSums:
        """BinSums of the union of two disjoint samples binned with the same scheme (keys united,
        sums added)."""
        if self.dim != other.dim:
            raise InputError(f"cannot merge BinSums of dimension {self.dim} and {other.dim}")
        keys = np.union1d(self.keys, other.keys).astype(np.int64)
        ia = np.searchsorted(keys, self.keys)
        ib = np.searchsorted(keys, other.keys)
        arrays = {}
        for name in _ARRAY_FIELDS:
            a, b = getattr(self, name), getattr(other, name)
            out = np.zeros((keys.shape[0],) + a.shape[1:], dtype=a.dtype)
            out[ia] += a  # keys are unique within each side, so fancy-index += is safe
            out[ib] += b
            arrays[name] = out
        return BinSums(keys=keys, n_total=int(self.n_total + other.n_total), **arrays)


_ARRAY_FIELDS = ("count", "resid_sum", "resid_sq_sum", "resid_outer_sum", "z_sum", "y_sum",
                 "null_cov_sum", "null_cov_sq_trace")


def _as_2d(a: np.ndarray) -> np.ndarray:
    return a.reshape(a.shape[0], 1) if a.ndim == 1 else a


def _from_1d(keys, count, resid_sum, resid_sq, z_sum, y_sum, null_cov, null_cov_sq) -> BinSums:
    B = keys.shape[0]
    return BinSums(
        keys=keys, count=count, resid_sum=resid_sum.reshape(B, 1), resid_sq_sum=resid_sq,
        resid_outer_sum=resid_sq.reshape(B, 1, 1).copy(), z_sum=z_sum.reshape(B, 1),
        y_sum=y_sum.reshape(B, 1), null_cov_sum=null_cov.reshape(B, 1, 1), null_cov_sq_trace=null_cov_sq,
        n_total=int(count.sum()),
    )


def bin_sums(bins, z, y) -> BinSums:
    """Per-bin sums (one numba pass, O(n k²)) of (z, y) for a binning.

    ``bins`` is a :class:`~calviz.binning.Bins` or an int64 array of per-sample bin keys (any
    integers; they are compressed to dense ids here).  z, y: (n,) or (n, k) float arrays, y the label
    indicators; they are assumed validated (see :func:`prepare_view`).
    """
    if isinstance(bins, Bins):
        ids, keys = bins.ids, bins.keys
    else:
        ids, keys = dense_ids(bins)
    z = np.ascontiguousarray(z, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if z.shape != y.shape or z.ndim not in (1, 2) or z.shape[0] != ids.shape[0]:
        raise InputError(f"z {z.shape}, y {y.shape} and bins ({ids.shape[0]},) must have matching shapes")
    B = keys.shape[0]
    if z.ndim == 1:
        return _from_1d(keys, *bin_sums_1d_kernel(ids, B, z, y))
    count, rs, rq, ro, zs, ys, nc, nq = bin_sums_kernel(ids, B, z, y)
    return BinSums(keys, count, rs, rq, ro, zs, ys, nc, nq, int(z.shape[0]))


def _equal_width_1d_sums(z: np.ndarray, y: np.ndarray, m: int) -> BinSums:
    """Fused fast path for 1-D equal-width bins: no id array, no sort; keys are the bin indices."""
    count, rs, rq, zs, ys, nc, nq = bin_sums_equal_width_1d_kernel(z, y, m, *equal_width_bounds(m))
    keep = np.flatnonzero(count)
    return _from_1d(keep.astype(np.int64), count[keep], rs[keep], rq[keep], zs[keep], ys[keep],
                    nc[keep], nq[keep])


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
    data = as_calibration_data(y_true, y_prob)
    resolved = resolve(data, target, top_k, class_index, allowed=allowed, caller=caller)
    z, y = resolved.view(data, integer_labels=integer_labels)
    return data, resolved.name, z, y


def binned_sums(
    z: np.ndarray, y: np.ndarray, *, n_bins: int, scheme: str = "equal_width", target: str = "binary"
) -> tuple[BinSums, Bins | None, int, str]:
    """BinSums of a prepared view, choosing the partition from the target.

    Returns (sums, bins or None for the fused 1-D path, total number of bins, resolved scheme).
    1-D views accept ``equal_width``/``equal_mass``/``distinct``; ``topk`` uses the cubic grid and
    ``full`` the equal-volume simplex partition (``equal_width`` selects them by default).
    """
    m = check_n_bins(n_bins)
    if z.ndim == 1:
        if scheme in ("grid", "simplex"):
            raise InputError(f"scheme {scheme!r} needs a multi-dimensional target ('topk' or 'full')")
        if scheme == "equal_width" and m <= min(max(_FUSED_MAX_BINS, z.shape[0] // 4), MAX_EDGE_TABLE):
            # the fused kernel keeps 8 doubles for each of the m bins: only when that is O(n)
            return _equal_width_1d_sums(z, y, m), None, m, scheme
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
def _s_sq(s: BinSums) -> np.ndarray:
    return np.einsum("ba,ba->b", s.resid_sum, s.resid_sum)


def _n(s: BinSums) -> int:
    if s.n_total <= 0:
        raise InputError("no samples: the BinSums are empty")
    return s.n_total


def plugin_ece_l1(s: BinSums) -> float:
    """Plug-in ℓ1 ECE Σ_b (N_b/n) ‖S_b/N_b‖₁ = (1/n) Σ_b ‖S_b‖₁."""
    return float(np.abs(s.resid_sum).sum() / _n(s))


def plugin_mce(s: BinSums) -> float:
    """Maximum calibration error max_b ‖S_b/N_b‖_∞ over the non-empty bins: the largest
    |mean(y) − mean(z)| of any bin (and coordinate, for vector targets); Naeini, Cooper & Hauskrecht
    (2015)."""
    _n(s)
    return float(np.abs(s.resid_sum / s.count[:, None]).max())


def plugin_ece_sq(s: BinSums) -> float:
    """Plug-in ℓ2² ECE T^b = Σ_b (N_b/n) ‖S_b/N_b‖² (Lee et al. 2023, Sec. 3)."""
    return float((_s_sq(s) / s.count).sum() / _n(s))


def debiased_ece_sq(s: BinSums) -> float:
    """Debiased plug-in estimator T^d = (1/n) Σ_b (‖S_b‖² − Σ_j‖v_j‖²)/N_b (Lee et al. 2023, eq. 6)
    = (1/n) Σ_b (1/N_b) Σ_{j≠l∈I_b} ⟨v_j, v_l⟩; mean zero under calibration, can be negative."""
    return float(((_s_sq(s) - s.resid_sq_sum) / s.count).sum() / _n(s))


def unbiased_ece_sq(s: BinSums) -> float:
    """Within-bin unbiased estimator T = (1/n) Σ_{b: N_b≥2} (‖S_b‖² − Σ_j‖v_j‖²)/(N_b − 1)
    (Sun et al. 2024, eq. 4): unbiased for the binned ECE²_m = Σ_b P(B_b)‖E[V | Z∈B_b]‖²."""
    big = s.count >= 2
    num = _s_sq(s)[big] - s.resid_sq_sum[big]
    return float((num / (s.count[big] - 1)).sum() / _n(s))


def kumar_ece_sq(s: BinSums) -> float:
    """Kumar et al.'s debiased ℓ2² ECE (Lee et al. 2023, App. C.1):
    Σ_b (N_b/n) [(ȳ_b − z̄_b)² − ā_b(1−ā_b)/(N_b−1)] with ā_b = ȳ_b the bin accuracy; bins with one point
    contribute 0 (as in Kumar et al.'s code).  Scalar predictions only."""
    if s.dim != 1:
        raise InputError("Kumar's debiased ECE is defined for scalar (binary / top-1) predictions")
    big = s.count >= 2
    nb = s.count[big].astype(np.float64)
    mean_resid = s.resid_sum[big, 0] / nb
    acc = s.y_sum[big, 0] / nb
    per_bin = mean_resid**2 - acc * (1.0 - acc) / (nb - 1.0)
    return float((nb * per_bin).sum() / _n(s))


def miscalibrated_variance(s: BinSums) -> float:
    """σ̂₁² = Σ_b p̂_b (4 ū_bᵀ M_b ū_b − 3‖ū_b‖⁴) − (Σ_b p̂_b ‖ū_b‖²)² (Sun et al. (2024), Algorithm 1), with
    p̂_b = N_b/n, ū_b = S_b/N_b, M_b = O_b/N_b.  May be negative in finite samples (the standard error
    uses max(σ̂₁², 0))."""
    n = _n(s)
    nb = s.count.astype(np.float64)
    u = s.resid_sum / nb[:, None]
    quad = np.einsum("ba,bac,bc->b", u, s.resid_outer_sum, u) / nb
    u2 = np.einsum("ba,ba->b", u, u)
    p = nb / n
    return float((p * (4.0 * quad - 3.0 * u2 * u2)).sum() - (p * u2).sum() ** 2)


def null_variance(s: BinSums, statistic: Literal["unbiased", "debiased"] = "unbiased") -> float:
    """Exact conditional null variance given the predictions.

    Under calibration E[v | z] = 0 and Cov(v | z) = Σ(z), so for
    T_w = (1/n) Σ_b w_b Σ_{j≠l∈I_b} ⟨v_j, v_l⟩:
    Var₀(T_w | Z) = (2/n²) Σ_b w_b² (tr(C_b²) − D_b),
    using Σ_{j≠l} tr(Σ_jΣ_l) = tr((Σ_jΣ_j)²) − Σ_j tr(Σ_j²).
    ``statistic="unbiased"``: w_b = 1/(N_b − 1) (Sun et al. (2024)'s T, bins with N_b = 1 contribute 0);
    ``"debiased"``: w_b = 1/N_b (T^d of Lee et al. (2023), used by T-Cal's analytic test).
    """
    n = _n(s)
    cross = np.einsum("bac,bca->b", s.null_cov_sum, s.null_cov_sum) - s.null_cov_sq_trace
    nb = s.count.astype(np.float64)
    if statistic == "unbiased":
        big = s.count >= 2
        w2 = np.zeros_like(nb)
        w2[big] = 1.0 / (nb[big] - 1.0) ** 2
    elif statistic == "debiased":
        w2 = 1.0 / nb**2
    else:
        raise InputError(f"statistic must be 'unbiased' or 'debiased'; got {statistic!r}")
    # cross is a sum of nonnegative terms tr(Σ_jΣ_l) (products of PSD matrices); clip round-off
    return float(2.0 * (w2 * np.maximum(cross, 0.0)).sum() / (n * n))


def reliability_rows(s: BinSums) -> dict[str, np.ndarray]:
    """Per non-empty bin: key, count, mean prediction z̄_b (B, k) and observed frequency ȳ_b (B, k)."""
    nb = s.count.astype(np.float64)[:, None]
    return {"key": s.keys, "count": s.count, "mean_confidence": s.z_sum / nb,
            "observed_frequency": s.y_sum / nb}


# ------------------------------------------------------------------------------------------------
# public estimators
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class ECEResult(ValueStatistic, ResultMixin):
    """A binned ECE estimate.

    value (= ``statistic``): the estimate — on the ECE scale for the plug-in ℓ1/ℓ2 ECE
    (``squared=False``), on the ECE² scale for the debiased / unbiased / Kumar estimators
    (``squared=True``; may be negative).  ``ece`` is the estimate on the ECE scale (√max(value, 0) when
    squared).  estimator: which estimator ("plugin_l1", "plugin_l2", "max", "debiased_l2_sq",
    "unbiased_l2_sq", "kumar_l2_sq", "ace"); n_classes: classes of the input.
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


def _estimate(y_true, y_prob, finaliser, statistic: str, squared: bool, *, n_bins, scheme, target, top_k,
              class_index, post=None, caller: str) -> ECEResult:
    data, target, z, y = prepare_view(y_true, y_prob, target=target, top_k=top_k, class_index=class_index,
                                      integer_labels=True, caller=caller)
    sums, _, total, scheme = binned_sums(z, y, n_bins=n_bins, scheme=scheme, target=target)
    value = finaliser(sums)
    if post is not None:
        value = post(value)
    m = total if scheme == "distinct" else check_n_bins(n_bins)
    return ECEResult(float(value), statistic, squared, int(sums.n_total), m, total, sums.n_nonempty, scheme,
                     target, data.n_classes)


@validate_params({**_BINNED, "p": Options((1, 2, "max"))})
def binned_ece(
    y_true, y_prob=None, *, n_bins: int = 15, p: int = 1, scheme: str = "equal_width",
    target: TargetName = "auto", top_k: int = 1, class_index: int = 0,
) -> ECEResult:
    """Plug-in binned ECE: p = 1 gives Σ_b (N_b/n)‖ȳ_b − z̄_b‖₁ (Guo et al.'s ECE with
    15 equal-width bins); p = 2 gives the ℓ2 ECE √T^b, T^b = Σ_b (N_b/n)‖ȳ_b − z̄_b‖² (Lee et al. 2023, Sec.
    3); p = "max" the maximum calibration error max_b ‖ȳ_b − z̄_b‖_∞ over non-empty bins (:func:`mce`).
    Biased upwards for small bins; see :func:`debiased_ece` / :func:`unbiased_ece`.

    Parameters
    ----------
    y_true : array-like, (n,) or (n, K)
        Labels: 0/1 for binary predictions, class indices 0..K−1 (or one-hot rows) for (n, K) ones.
    y_prob : array-like, (n,) or (n, K)
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Number of bins (per axis for vector targets).
    p : {1, 2, "max"}, default 1
        The norm: ℓ1 ECE, ℓ2 ECE, or the maximum calibration error.
    scheme : {"equal_width", "equal_mass"}, default "equal_width"
        Bin edges: equal widths, or equal numbers of predictions (ties never split).
    target : {"auto", "binary", "top1", "classwise", "topk", "full"}, default "auto"
        Which probabilities are checked ("auto": binary for 1-D input, top-1 confidence otherwise).
    top_k, class_index : int
        k of the ``topk`` target; the class of the ``classwise`` target.

    Returns
    -------
    ECEResult
        ``value`` (the ECE), ``n``, the bins used (``n_bins``, ``n_nonempty``, ``scheme``) and ``target``.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks. *ICML*
       2017.
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
    """
    if p == 1:
        return _estimate(y_true, y_prob, plugin_ece_l1, "plugin_l1", False, n_bins=n_bins, scheme=scheme,
                         target=target, top_k=top_k, class_index=class_index, caller="binned_ece")
    if p == 2:
        return _estimate(y_true, y_prob, plugin_ece_sq, "plugin_l2", False, n_bins=n_bins, scheme=scheme,
                         target=target, top_k=top_k, class_index=class_index, post=np.sqrt,
                         caller="binned_ece")
    if p == "max":
        return _estimate(y_true, y_prob, plugin_mce, "max", False, n_bins=n_bins, scheme=scheme,
                         target=target, top_k=top_k, class_index=class_index, caller="binned_ece")


@validate_params(_BINNED)
def debiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: TargetName = "auto",
    top_k: int = 1, class_index: int = 0,
) -> ECEResult:
    """Debiased plug-in estimator T^d of ℓ2-ECE² (Lee et al. 2023, eq. 6; T-Cal's statistic):
    T^d = (1/n) Σ_b (1/N_b) Σ_{j≠l∈I_b} ⟨v_j, v_l⟩, v = y − z.  Mean zero under calibration."""
    return _estimate(y_true, y_prob, debiased_ece_sq, "debiased_l2_sq", True, n_bins=n_bins, scheme=scheme,
                     target=target, top_k=top_k, class_index=class_index, caller="debiased_ece")


@validate_params(_BINNED)
def unbiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: TargetName = "auto",
    top_k: int = 1, class_index: int = 0,
) -> ECEResult:
    """Within-bin unbiased estimator of the binned ℓ2-ECE² (Sun et al. 2024, eq. 4):
    T = (1/n) Σ_{b: N_b≥2} (1/(N_b − 1)) Σ_{j≠l∈I_b} ⟨v_j, v_l⟩."""
    return _estimate(y_true, y_prob, unbiased_ece_sq, "unbiased_l2_sq", True, n_bins=n_bins, scheme=scheme,
                     target=target, top_k=top_k, class_index=class_index, caller="unbiased_ece")


@validate_params(_BINNED)
def kumar_debiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "distinct", target: TargetName = "auto",
    class_index: int = 0,
) -> ECEResult:
    """Kumar et al. (2019) debiased ℓ2-ECE² for discrete predictors (Lee et al. 2023, App. C.1): by default
    one bin per distinct predicted value; Σ_b (N_b/n)[(ȳ_b − z̄_b)² − ā_b(1 − ā_b)/(N_b − 1)]."""
    return _estimate(y_true, y_prob, kumar_ece_sq, "kumar_l2_sq", True, n_bins=n_bins, scheme=scheme,
                     target=target, top_k=1, class_index=class_index, caller="kumar_debiased_ece")


@validate_params(_BINNED)
def mce(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: TargetName = "auto",
    top_k: int = 1, class_index: int = 0,
) -> ECEResult:
    """Maximum calibration error (Naeini, Cooper & Hauskrecht 2015): max_b |ȳ_b − z̄_b| over the
    non-empty bins (``binned_ece(..., p="max")``), with calviz's bins: ``n_bins=m`` equal-width bins
    [i/m, (i+1)/m), the last one closed so that a prediction of exactly 1.0 falls in it.  For vector
    targets (``topk``, ``full``) the largest coordinate of any bin, max_b ‖ȳ_b − z̄_b‖_∞.

    This is torchmetrics' ``max_calibration_error`` / netcal's ``MCE`` for the top-1 target (largest
    |accuracy − confidence| over the non-empty equal-width bins); those libraries may place a
    prediction lying exactly on an inner edge i/m in the bin below."""
    return _estimate(y_true, y_prob, plugin_mce, "max", False, n_bins=n_bins, scheme=scheme, target=target,
                     top_k=top_k, class_index=class_index, caller="mce")


@validate_params({"n_bins": POSITIVE_INT, "target": Options(("classwise", "binary", "top1"))})
def ace(
    y_true, y_prob=None, *, n_bins: int = 15, target: Literal["classwise", "binary", "top1"] = "classwise",
) -> ECEResult:
    """Adaptive calibration error (Nixon, Dusenberry, Zhang, Jerfel & Tran 2019, §4.1).

    ``target="classwise"`` (their definition): for every class c the predictions P(y = c) of all n
    samples are split into ``n_bins`` equal-mass bins and ACE = (1/K) Σ_c mean_b |ȳ_{c,b} − z̄_{c,b}|,
    the unweighted mean over the non-empty bins of |observed frequency − mean prediction|, averaged over
    the classes (binary data: the two classes, P(y = 1) and 1 − P(y = 1)).  ``"binary"`` / ``"top1"``:
    the same unweighted mean for one scalar view (P(y = 1); the top-1 confidence).  Bins are calviz's
    equal-mass bins: ties are never split, so heavily tied predictions give fewer bins (the mean is over
    the bins formed; Nixon et al. divide by the requested number).
    """
    m = check_n_bins(n_bins)
    data = as_calibration_data(y_true, y_prob)
    if target == "classwise":
        # one class at a time, not kept: K cached views of 10⁷ rows would hold K · 160 MB
        views = (data.classwise(c, cache=False) for c in range(data.n_classes))
    else:
        views = [resolve(data, target, allowed=("binary", "top1"), caller="ace").view(data)]
    per_view, nonempty, total = [], 0, 0
    for z, y in views:
        count, z_sum, y_sum, n_total = equal_mass_sums(z, y, m)
        per_view.append(float(np.abs((y_sum - z_sum) / count).mean()))
        nonempty += count.shape[0]
        total += n_total
    return ECEResult(float(np.mean(per_view)), "ace", False, data.n, m, total, nonempty, "equal_mass", target,
                     data.n_classes)


def equal_mass_sums(z: np.ndarray, y: np.ndarray, n_bins: int):
    """(count, Σz, Σy) of the non-empty equal-mass bins of a validated scalar view, in increasing order of
    z, and the number of bins formed: calviz's equal-mass edges (:func:`calviz.binning.equal_mass_edges`:
    ties never split) and one fused binary-search-and-sum pass (no id array)."""
    edges = equal_mass_edges(z, n_bins)
    count, z_sum, y_sum = edge_bin_sums(z, y, np.ascontiguousarray(edges[1:-1]))
    keep = count > 0
    return count[keep], z_sum[keep], y_sum[keep], int(edges.shape[0] - 1)


# ------------------------------------------------------------------------------------------------
# reliability diagram data
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class ReliabilityData(HasInterval, ResultMixin):
    """Per-bin reliability-diagram data over all bins of a 1-D binning (empty bins have count 0 and NaN
    elsewhere).

    edges (B+1,) bin edges; counts (B,); mean_confidence (B,) mean prediction; observed_frequency (B,)
    mean label; low, high (B,) the per-bin ``interval`` ("wilson" or "jeffreys") for the frequency at
    ``level`` = 1 − α (``confidence_interval()``); ece_l1 (= ``statistic``) the plug-in ℓ1 ECE of the
    same bins; n_classes: classes of the input.
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


@validate_params({"n_bins": POSITIVE_INT, "scheme": Options(("equal_width", "equal_mass")),
                  "alpha": UNIT_OPEN, "interval": Options(("wilson", "jeffreys"))})
def reliability(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", alpha: float = INTERVAL_ALPHA,
    interval: str = "wilson", target: TargetName = "auto", class_index: int = 0,
) -> ReliabilityData:
    """Reliability-diagram data for a scalar target (binary, top-1 or one class): per bin the count, mean
    confidence, observed frequency and a Wilson or Jeffreys interval for the frequency at level 1 − α
    (α = 0.1 gives 90 % intervals)."""
    data, target, z, y = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                      allowed=("auto", *SCALAR_TARGETS), caller="reliability")
    m = check_n_bins(n_bins)
    if m > MAX_RELIABILITY_BINS:
        raise InputError(f"reliability data list every bin; n_bins must be at most {MAX_RELIABILITY_BINS:,}")
    sums, bins, _, _ = binned_sums(z, y, n_bins=m, scheme=scheme, target=target)
    edges = equal_width_edges(m) if bins is None else bins.edges
    return reliability_from_sums(sums, edges, alpha=alpha, interval=interval, n_bins=m, scheme=scheme,
                                 target=target, n_classes=data.n_classes)


def reliability_from_sums(
    sums: BinSums, edges: np.ndarray, *, alpha: float = INTERVAL_ALPHA, interval: str = "wilson",
    n_bins: int | None = None, scheme: str = "equal_width", target: str = "binary",
    n_classes: int | None = None,
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
                           plugin_ece_l1(sums), n_classes)
