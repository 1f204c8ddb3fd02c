"""T-Cal: testing H₀ "the model is calibrated" (Lee, Huang, Hassani and Dobriban, 2023).

* :func:`tcal` — the fixed-scale test ξ_{m,n}(α) of Theorem 3: reject iff
  T^d ≥ sqrt(2K²/α)·min(m^{(K−1)/2}/n, m^{−(K−1)/2}) (Chebyshev; conservative), m* = ⌊n^{2/(4s+K−1)}⌋.
* :func:`adaptive_tcal` — adaptive T-Cal (eq. 7, Algorithm 2) over the dyadic scales m = 2^b,
  b = 1..B, B = ⌈(2/(K−1))·log₂(n/√ln n)⌉, with per-scale critical values from

  - ``"y_only"``: y* ~ Cat(z) with the predictions kept (App. C.3) — exactly valid given the
    predictions: p_b = (1 + #{T*_b ≥ T_b})/(N + 1);
  - ``"consistency"``: z* drawn with replacement, y* ~ Cat(z*) (Bröcker & Smith; App. C.3) — not exact;
    at fine scales the duplicated draws share bins, which makes it conservative there;
  - ``"analytic"``: no resampling — a moment-matched scaled chi-square T^d ≈ c(χ²_ν − ν) with the exact
    conditional null variance given the predictions (the normal tail is 4–9× too
    liberal at coarse scales); for 1-D targets ν also matches the exact third cumulant (see
    :func:`analytic_pvalues`), for full calibration it is Satterthwaite's; meant for live use;
  - ``"threshold"``: the paper's Chebyshev threshold at level α/B.

  ``combine="bonferroni"`` rejects iff min_b p_b ≤ α/B (the paper's rule); ``combine="max"`` (resampling
  only) compares max_b T_b/sd_b with the resampled maxima, sd_b the standard deviation of
  {T_b, T*_{1,b}, …, T*_{N,b}} — a symmetric function of the exchangeable set, so y-only "max" is exactly
  valid too, and it does not pay the Bonferroni factor.
* Discrete predictors (App. B.4): predictions taking at most :data:`DISCRETE_MAX_VALUES` distinct values,
  each at least :data:`DISCRETE_MIN_COUNT` times, get the exact binomial test of P(y=1 | z=v) = v per value
  (``scipy.stats.binomtest``), Bonferroni over the values.
* :func:`split_tcal` — the sample-splitting test of Sec. 6 (Algorithm 3) with the chi-square two-sample
  statistic of Arias-Castro et al. (App. B.2) and permutation critical values.

Scales.  Scale b is used when m^{K−1} = 2^{b(K−1)} ≤ n² (beyond that almost every bin holds at most one
point, T^d is essentially identically 0 and the scale would only cost Bonferroni level; for K = 2 the
paper's B never exceeds this except for n < 8) and b ≤ 62 (int64 bin ids); for full calibration also
m^{K−1}(K−1)! < 2^63 (simplex cell keys).  B in Bonferroni is the number of scales actually tested.

Units.  For 1-D targets (binary / top-1 / classwise) the statistic is T^d of the scalar residual y − z,
exactly :func:`calviz.debiased_ece`; the paper's statistic uses the 2-vector residual and is twice that,
so the Chebyshev thresholds are halved for the scalar statistic.  ``target="full"`` uses the K-vector
residual on the equal-volume simplex partition (App. B.3).

Speed.  All scales of a resample come from one O(n) pass over the predictions in an order in which every
bin of every scale is a contiguous run (:mod:`calviz._kernels.tcal`); resamples run in parallel with one
random stream each, so results do not depend on the number of threads nor on how resamples are batched;
y-only and consistency resampling of 1-D targets walk the stack once for a block of up to 64 resamples.
Memory O(n + B) per thread (plus n × lanes int8 draw counts for consistency resampling) and the N × B
resampled statistics — never N × n.

Decisions.  Resampled critical values use the sequential rule of :func:`adaptive_tcal` by default:
resampling stops once the decision at α is settled with resampling risk ≤ 10⁻³ (a confidence sequence per
scale), or says "undecided" at the cap — so the decision does not depend on the seed.
"""

from __future__ import annotations

import math
import sys
import types
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numba
import numpy as np
from scipy import optimize, special, stats

from calviz._kernels import tcal as _k
from calviz._params import (
    ALPHA,
    BOOLEAN,
    POSITIVE_INT,
    POSITIVE_REAL,
    SEED,
    UNIT_OPEN,
    Interval,
    NoneOr,
    Options,
    as_generator,
    check_param,
    kernel_seed,
    validate_params,
)
from calviz._results import ResultMixin, with_classes
from calviz.binning import check_n_bins, simplex_cell_keys
from calviz.data import InputError, as_calibration_data, check_alpha
from calviz.ece import BinSums, binned_sums, debiased_ece_sq, prepare_view
from calviz.targets import TARGETS

__all__ = [
    "TCalResult",
    "tcal",
    "adaptive_tcal",
    "split_tcal",
    "dyadic_scales",
    "chebyshev_threshold",
    "multiscale_statistics",
    "analytic_pvalues",
    "analytic_pvalues_from_sums",
    "analytic_tcal_from_sums",
    "null_moments_from_sums",
    "MomentSums",
    "DISCRETE_MAX_VALUES",
    "DISCRETE_MIN_COUNT",
]

#: a 1-D predictor with at most this many distinct values ...
DISCRETE_MAX_VALUES = 20
#: ... each predicted for at least this many samples is treated as discrete (App. B.4).  Continuous
#: predictors essentially never repeat a value, so repeated values are the signature of a discrete one.
DISCRETE_MIN_COUNT = 2
#: most distinct values ``discrete=True`` accepts (one exact binomial test per value)
DISCRETE_FORCED_MAX = 10_000
#: largest dyadic level (bin ids are int64)
MAX_LEVEL = 62
#: resampling jobs with fewer point-resamples (n × N) than this run single-threaded
_PARALLEL_MIN_WORK = 4_000_000
#: default bound on the resampling risk: the probability that the decision reported by the sequential
#: rule differs from the decision with infinitely many resamples
RESAMPLING_RISK = 1e-3
#: default cap of the sequential rule (resamples; every resample gives a statistic at every scale)
DEFAULT_MAX_RESAMPLES = 100_000
#: default cap on resampling work, in point-resamples (n × resamples; × K for full calibration): the cap
#: falls below DEFAULT_MAX_RESAMPLES only beyond n = 2·10⁵ (about a minute of work at most)
DEFAULT_RESAMPLE_WORK = 20_000_000_000
#: hard limits of an explicit ``n_resamples`` / ``max_resamples`` (memory 8·B bytes per resample)
MAX_RESAMPLES = 1_000_000
MAX_RESAMPLE_WORK = 100_000_000_000
#: permutation budget of :func:`split_tcal`: at most this many permutations, and permutations × n × K at
#: most MAX_PERMUTATION_WORK (the default count is lowered to fit; an explicit one beyond is refused)
MAX_PERMUTATIONS = 20_000
MAX_PERMUTATION_WORK = 200_000_000
#: resamples of the first look of the sequential rule (two blocks of the kernels' 64 lanes)
FIRST_BATCH = 128
#: relative tolerance when comparing resampled statistics with the observed one: mathematically equal
#: values computed in different orders must count as ties (ties count against rejection)
_TIE_RTOL = 1e-9

Resampling = Literal["y_only", "consistency", "analytic", "threshold"]
Combine = Literal["bonferroni", "max"]
_RESAMPLING = ("y_only", "consistency", "analytic", "threshold")
_COMBINE = ("bonferroni", "max")
#: T-Cal tests scalar targets and full calibration (the top-k vector has no T-Cal)
_TARGETS = tuple(t for t in TARGETS if t != "topk")


@dataclass(frozen=True, repr=False)
class TCalResult(ResultMixin):
    """Outcome of a calibration test.

    reject: whether H₀ (calibrated) is rejected at level ``alpha``; pvalue: the p-value adjusted for the
    multiple scales (or values); n_bins: the scales m (bins per axis) tested; statistics: T^d per scale;
    critical_values: per scale, the value the statistic must exceed for the overall test to reject;
    pvalues: unadjusted per-scale p-values; method: how critical values were obtained; combine: how scales
    were combined; n, K: sample size and number of classes of the tested target; n_resamples: resamples
    used (0 for none); min_attainable_pvalue: the smallest adjusted p-value this configuration can
    produce (resampling: B/(N+1) for Bonferroni, N the fixed count or the sequential rule's cap) —
    rejection is impossible when it exceeds alpha;
    test: which test ran; reason: why, in one sentence; target: the calibration target tested.
    For the binomial test (discrete predictors) ``values``/``counts`` are the distinct predictions and
    their counts, ``statistics`` the observed frequencies and ``critical_values`` the predicted values.

    decision: "reject", "accept" (H₀ not rejected) or "undecided" (resampling stopped at its cap with
    the p-value's Monte Carlo interval still containing α: no decision is claimed and ``reject`` is
    False); pvalue_interval: (low, high) Monte Carlo interval of the adjusted p-value — for the
    sequential rule it holds at every look simultaneously with probability ≥ 1 − resampling_risk (for
    a fixed ``n_resamples`` it is the same interval at the final count; (p, p) without resampling);
    resampling_risk: bound on the probability that ``decision`` differs from the decision with
    infinitely many resamples (0 without resampling, NaN for a fixed ``n_resamples``);
    max_resamples: the cap of the sequential rule (0: not sequential).
    """

    reject: bool
    pvalue: float
    alpha: float
    n_bins: tuple
    statistics: np.ndarray
    critical_values: np.ndarray
    pvalues: np.ndarray
    method: str
    combine: str
    n: int
    K: int
    n_resamples: int
    min_attainable_pvalue: float
    test: str
    reason: str
    target: str
    values: np.ndarray | None = None
    counts: np.ndarray | None = None
    decision: str = ""
    pvalue_interval: tuple | None = None
    resampling_risk: float = 0.0
    max_resamples: int = 0
    n_classes: int | None = None

    def __post_init__(self):
        # results built without the sequential fields (no resampling error): the decision is the
        # rejection and the p-value is exact
        if not self.decision:
            object.__setattr__(self, "decision", "reject" if self.reject else "accept")
        if self.pvalue_interval is None:
            object.__setattr__(self, "pvalue_interval", (float(self.pvalue), float(self.pvalue)))

    @property
    def undecided(self) -> bool:
        """True when the resampled decision was not settled within the resampling budget."""
        return self.decision == "undecided"

    @property
    def scales(self) -> tuple:
        """The scales m (same as ``n_bins``)."""
        return self.n_bins

    @property
    def rejected_scales(self) -> tuple:
        """The scales whose statistic reaches its critical value (empty unless ``reject``)."""
        rows = zip(self.n_bins, self.statistics, self.critical_values, strict=True)
        return tuple(m for m, t, c in rows if t >= c)

    def __bool__(self) -> bool:
        return bool(self.reject)

    @property
    def statistic(self) -> float:
        """The test statistic of the deciding scale (or value): the entry of ``statistics`` with the
        smallest unadjusted p-value (the only one for a fixed-scale test)."""
        return float(self.statistics[int(np.argmin(self.pvalues))])


# ------------------------------------------------------------------------------------------------
# scales, thresholds, validation
# ------------------------------------------------------------------------------------------------
def dyadic_scales(n: int, K: int = 2) -> tuple[int, int]:
    """(B of Algorithm 2, number of scales actually tested).

    B = ⌈(2/(K−1))·log₂(n/√ln n)⌉; scale b is tested when 2^{b(K−1)} ≤ n² and b ≤ 62 (module docstring).
    """
    n = int(n)
    K = int(K)
    if n < 2:
        return 0, 0
    B = math.ceil((2.0 / (K - 1)) * math.log2(n / math.sqrt(math.log(n))))
    used = 0
    for b in range(1, min(B, MAX_LEVEL) + 1):
        if b * (K - 1) > 2.0 * math.log2(n):
            break
        used = b
    return B, used


def chebyshev_threshold(m: int, n: int, K: int, level: float, *, scalar: bool = False) -> float:
    """Theorem 3 threshold sqrt(2K²/level)·min(m^{(K−1)/2}/n, m^{−(K−1)/2}) for the K-vector statistic;
    half of it for the scalar statistic of a 1-D target (K = 2)."""
    r = min(m ** ((K - 1) / 2.0) / n, m ** (-(K - 1) / 2.0))
    thr = math.sqrt(2.0 * K * K / level) * r
    return thr / 2.0 if scalar else thr


def _chebyshev_pvalue(T: float, m: int, n: int, K: int, scalar: bool) -> float:
    """Smallest level at which the Theorem 3 test rejects: min(1, 2K²r²/T_vec²) (1 if T ≤ 0)."""
    t_vec = 2.0 * T if scalar else T
    if not t_vec > 0.0:
        return 1.0
    r = min(m ** ((K - 1) / 2.0) / n, m ** (-(K - 1) / 2.0))
    return float(min(1.0, 2.0 * K * K * r * r / (t_vec * t_vec)))


def _check_choice(value, allowed, name):
    return check_param(value, name, Options(allowed))


def _check_n_resamples(n_resamples, name: str = "n_resamples", limit: int | None = None) -> int:
    return int(check_param(n_resamples, name, Interval(int, 1, MAX_RESAMPLES if limit is None else limit)))


def _base_seed(seed) -> np.uint64:
    """The base of the per-resample SplitMix64 streams (the library's seed policy)."""
    return np.uint64(kernel_seed(seed))


def _prepare(y_true, y_prob, target, class_index, caller):
    data, target, z, y = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                      allowed=_TARGETS, caller=caller)
    if target == "full":
        K = data.n_classes
        return data, target, np.ascontiguousarray(z), np.ascontiguousarray(y.argmax(axis=1)), K
    return data, target, np.ascontiguousarray(z), np.ascontiguousarray(y, dtype=np.float64), 2


# ------------------------------------------------------------------------------------------------
# the multi-scale engine
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _ScanOrder:
    """The sample in an order where every bin of every dyadic scale is a contiguous run."""

    z: np.ndarray  # (n, k) predictions in scan order (k = 1 for 1-D targets)
    y: np.ndarray  # labels in scan order (1-D: float indicators; full: class ids)
    split: np.ndarray  # (n - 1,) split level of neighbours
    kind: int  # _k.SCALAR or _k.VECTOR
    max_level: int


def _sort_binary(z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(z, y) sorted by z.  Nonnegative doubles order like their bit patterns, so one sort of the 64-bit
    keys (bits << 1 | y) sorts both arrays — ~10x faster than a stable argsort plus two gathers."""
    keys = _k.binary_sort_keys(np.ascontiguousarray(z, dtype=np.float64),
                               np.ascontiguousarray(y, dtype=np.float64))
    keys.sort()
    return _k.unpack_sort_keys(keys)


def _scan_order(z: np.ndarray, y: np.ndarray, max_level: int, full: bool,
                presorted: bool = False) -> _ScanOrder:
    if not full:
        zs, ys = (z, y) if presorted else _sort_binary(z, y)
        split = _k.dyadic_split_levels(zs, max_level)
        return _ScanOrder(zs.reshape(-1, 1), ys, split, _k.SCALAR, max_level)
    # Simplex partition: refine level by level.  Sorting by (cell at level b−1 [as a rank], cell at b)
    # keeps each level-(b−1) group in place and orders its sub-cells, so a gap between positions i and
    # i + 1 that separates two cells at level b stays a separation at every finer level.
    n = z.shape[0]
    group = np.zeros(n, dtype=np.int64)
    order = np.arange(n)
    split = np.full(max(n - 1, 0), max_level + 1, dtype=np.int64)
    for b in range(1, max_level + 1):
        key = simplex_cell_keys(z, 2**b)
        order = np.lexsort((key, group))
        ks, gs = key[order], group[order]
        change = (ks[1:] != ks[:-1]) | (gs[1:] != gs[:-1])
        split[change & (split > b)] = b
        group[order] = np.concatenate(([0], np.cumsum(change)))
        # (the cells nest, so the groups are exactly the cells of scale b; tests/test_tcal.py checks the
        # statistics against calviz.debiased_ece at every scale, which would catch a cell split in two)
    return _ScanOrder(np.ascontiguousarray(z[order]), np.ascontiguousarray(y[order]), split, _k.VECTOR,
                      max_level)


def multiscale_statistics(y_true, y_prob, *, target: str = "auto", class_index: int = 0,
                          max_level: int | None = None) -> tuple[tuple, np.ndarray]:
    """(scales, T^d at every scale 2^1..2^max_level) in one pass — each equals
    ``calviz.debiased_ece(y_true, y_prob, n_bins=2**b, target=...)``.  Default max_level: the scales of
    :func:`adaptive_tcal`."""
    _, target, z, y, K = _prepare(y_true, y_prob, target, class_index, "multiscale_statistics")
    levels = dyadic_scales(z.shape[0], K)[1] if max_level is None else int(max_level)
    if not 1 <= levels <= MAX_LEVEL:
        raise InputError(f"max_level must be in 1..{MAX_LEVEL}; got {levels}")
    scan = _scan_order(z, y, levels, target == "full")
    stats_ = _k.observed_statistics(scan.split, levels, scan.z, scan.y, scan.kind)
    return tuple(2**b for b in range(1, levels + 1)), stats_


# ------------------------------------------------------------------------------------------------
# analytic critical values (scaled chi-square), reusable on distributed bin sums
# ------------------------------------------------------------------------------------------------
def analytic_pvalues(statistics, null_var, sum_trace, sum_trace_sq,
                     third_cumulant=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Analytic p-values of T^d per scale from a moment-matched scaled chi-square T^d ≈ c(χ²_ν − ν).

    * Without ``third_cumulant`` (Satterthwaite): ν = (Σ_b tr A_b)² / Σ_b tr A_b² and
      2c²ν = Var₀(T^d | Z).
    * With the exact third cumulant κ₃ of T^d given Z (1-D targets, computed by the kernel): ν and c match
      variance and skewness, c = κ₃/(4 Var₀), ν = 8 Var₀³/κ₃² (κ₃ ≤ 0: the normal tail).  Satterthwaite
      ignores the skewness of the residuals themselves; with predictions near 0 or 1 (e.g. Z ~ Beta(5, 0.5))
      rare pairs of wrong labels give fine scales a heavy right tail and Satterthwaite rejected 2–4× too
      often at α/B there (n = 1000, 2000 simulations); matching κ₃ holds the level (tests/test_tcal.py).

    p = P(χ²_ν ≥ ν + T^d/c).  Arguments are per-scale arrays (see :func:`null_moments_from_sums`).
    Returns (pvalues, nu, c).  A scale without any bin of ≥ 2 points (or zero null variance) has T^d ≡ 0
    under H₀: p = 1 if T^d ≤ 0 else 0.
    """
    t = np.asarray(statistics, dtype=np.float64)
    var = np.asarray(null_var, dtype=np.float64)
    sa = np.asarray(sum_trace, dtype=np.float64)
    sa2 = np.asarray(sum_trace_sq, dtype=np.float64)
    ok = (var > 0) & (sa2 > 0) & (sa > 0)
    safe_var = np.where(ok, var, 1.0)
    if third_cumulant is None:
        nu = np.where(ok, sa * sa / np.where(ok, sa2, 1.0), np.nan)
    else:
        k3 = np.asarray(third_cumulant, dtype=np.float64)
        pos = ok & (k3 > 0)
        nu = np.where(pos, 8.0 * safe_var**3 / np.where(pos, k3 * k3, 1.0), np.inf)
        nu = np.where(ok, nu, np.nan)
    c = np.where(ok, np.sqrt(safe_var / (2.0 * np.where(ok, nu, 1.0))), np.nan)
    p = np.where(t > 0, 0.0, 1.0)
    chi = ok & np.isfinite(nu)
    if chi.any():
        p[chi] = stats.chi2.sf(nu[chi] + t[chi] / c[chi], nu[chi])
    normal = ok & ~np.isfinite(nu)
    if normal.any():
        p[normal] = stats.norm.sf(t[normal] / np.sqrt(var[normal]))
    return np.clip(p, 0.0, 1.0), nu, c


def _analytic_critical(level: float, nu: np.ndarray, c: np.ndarray, var: np.ndarray) -> np.ndarray:
    crit = np.full(nu.shape, np.inf)
    chi = np.isfinite(nu)
    crit[chi] = c[chi] * (stats.chi2.isf(level, nu[chi]) - nu[chi])
    normal = np.isinf(nu) & (var > 0)
    crit[normal] = np.sqrt(var[normal]) * stats.norm.isf(level)
    return crit


def null_moments_from_sums(sums: BinSums) -> tuple[float, float, float]:
    """(Var₀(T^d | Z), Σ_b tr A_b, Σ_b tr A_b²) of one scale's :class:`~calviz.ece.BinSums`, bins with
    N_b ≥ 2, A_b = C_b/(n N_b), C_b = Σ_{j∈b} Σ(z_j) — the per-bin formula of the
    in-memory test (:func:`calviz._kernels.tcal._bin_terms`) on the BinSums fields, summed over the bins
    in double-double.  (BinSums carry no third moments: the p-values from them are Satterthwaite's.)"""
    k = sums.dim
    B = sums.n_nonempty
    if k == 1:
        kind, K = _k.SCALAR, 2
        feats = np.zeros((B, 7))
        feats[:, 0] = sums.resid_sum[:, 0]
        feats[:, 2] = sums.null_cov_sum[:, 0, 0]
    else:
        kind, K = _k.VECTOR, k
        feats = np.zeros((B, k + 2 + k * k))
        feats[:, :k] = sums.resid_sum
        feats[:, k + 1:k + 1 + k * k] = sums.null_cov_sum.reshape(B, k * k)
    feats[:, k] = sums.resid_sq_sum  # Q (column 1 for k = 1)
    feats[:, -1 if k > 1 else 3] = sums.null_cov_sq_trace
    hi, lo = _k.features_terms(sums.count, feats, np.zeros_like(feats), int(sums.n_total), kind, K, 0, B)
    terms = _k.finish_terms(hi.reshape(-1, 1), lo.reshape(-1, 1), int(sums.n_total))[:, 0]
    return float(terms[1]), float(terms[2]), float(terms[3])


@dataclass(frozen=True, repr=False)
class MomentSums:
    """Mergeable per-bin sums from which T^d and the null moments of the analytic test follow exactly as
    in memory (the distributed path of ``adaptive_tcal(..., resampling="analytic")``).

    keys (B,) sorted bin keys; count (B,) N_b; hi, lo (B, d): double-double sums (value hi + lo) of the
    per-point features of :func:`calviz._kernels.tcal._point_features` — scalar targets
    [Σv, Σv², Σs, Σs², Σs³, Σμ₃, Σμ₃²] with s = z(1 − z), μ₃ = s(1 − 2z); full calibration
    [Σv (K), Σ‖v‖², Σ Σ(z) (K×K), Σ tr Σ(z)²].  Compensated sums make the result independent of how the
    sample was split and merged (up to rare 1-ulp ties), which the far tail of the p-value needs.
    ``full``: vector residuals (full calibration) with ``K`` classes; else a scalar target (K = 2)."""

    keys: np.ndarray
    count: np.ndarray
    hi: np.ndarray
    lo: np.ndarray
    K: int = 2
    full: bool = False

    @property
    def kind(self) -> int:
        return _k.VECTOR if self.full else _k.SCALAR

    @property
    def n_nonempty(self) -> int:
        return int(self.keys.shape[0])

    @classmethod
    def empty(cls, K: int = 2, full: bool = False) -> MomentSums:
        d = K + 2 + K * K if full else 7
        return cls(np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, d)), np.empty((0, d)), int(K),
                   bool(full))

    @classmethod
    def of(cls, z: np.ndarray, y: np.ndarray, keys: np.ndarray) -> MomentSums:
        """Per-bin sums of one sample: z (n,) with labels y (n,) in {0, 1} for a scalar target, or z (n, K)
        with y the class ids (n,) or one-hot labels (n, K) for full calibration; ``keys`` the bin keys."""
        from calviz.binning import dense_ids

        z = np.asarray(z, dtype=np.float64)
        y = np.asarray(y)
        if z.ndim == 1:
            kind, K, z2 = _k.SCALAR, 2, z.reshape(-1, 1)
            labels = y.astype(np.float64).reshape(-1)
        else:
            kind, K, z2 = _k.VECTOR, int(z.shape[1]), z
            labels = (y.argmax(axis=1) if y.ndim == 2 else y).astype(np.float64)
        full = kind == _k.VECTOR
        if z2.shape[0] == 0:
            return cls.empty(K, full)
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        if keys.shape[0] > 1 and np.all(keys[1:] >= keys[:-1]):  # sorted (e.g. sorted predictions): runs
            new = np.concatenate(([True], keys[1:] != keys[:-1]))
            ids, unique = np.cumsum(new) - 1, keys[new]
        else:
            ids, unique = dense_ids(keys)
        count, hi, lo = _k.bin_features(ids, unique.shape[0], np.ascontiguousarray(z2),
                                        np.ascontiguousarray(labels), kind)
        return cls(unique, count, hi, lo, K, full)

    def merge(self, other: MomentSums) -> MomentSums:
        """The sums of the union of two disjoint samples binned alike."""
        if self.n_nonempty == 0:
            return other
        if other.n_nonempty == 0:
            return self
        return MomentSums(*_k.merge_features(self.keys, self.count, self.hi, self.lo,
                                             other.keys, other.count, other.hi, other.lo), self.K, self.full)

    def coarsen(self, shift: int) -> MomentSums:
        """Nested coarser equal-width bins: key >> shift (as :func:`calviz.dask.coarsen`)."""
        if self.n_nonempty == 0 or shift == 0:
            return self
        return MomentSums(*_k.group_features(self.keys, self.count, self.hi, self.lo, int(shift)), self.K,
                          self.full)

    def take(self, rows) -> MomentSums:
        return MomentSums(self.keys[rows], self.count[rows], self.hi[rows], self.lo[rows], self.K, self.full)

    def partial_terms(self, n: int, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Double-double totals (hi, lo) of [Σ_b (‖S_b‖² − Q_b)/N_b, Var₀, Σ tr A_b, Σ tr A_b², κ₃] over the
        bins start..stop−1 with N_b ≥ 2, n the global sample size; add pieces with
        :func:`calviz._kernels.tcal.add_terms`, finish with :func:`finish_terms`."""
        stop = self.n_nonempty if stop is None else int(stop)
        return _k.features_terms(self.count, self.hi, self.lo, int(n), self.kind, int(self.K), int(start),
                                 stop)

    def terms(self, n: int) -> np.ndarray:
        """[T^d, Var₀(T^d | Z), Σ_b tr A_b, Σ_b tr A_b², κ₃ (0 for full calibration)] of this scale."""
        return finish_terms(*self.partial_terms(n), n)


def finish_terms(hi: np.ndarray, lo: np.ndarray, n: int) -> np.ndarray:
    """[T^d, Var₀, Σ tr A_b, Σ tr A_b², κ₃] from double-double totals (as the in-memory kernel finishes)."""
    return _k.finish_terms(np.asarray(hi, dtype=np.float64).reshape(-1, 1),
                           np.asarray(lo, dtype=np.float64).reshape(-1, 1), int(n))[:, 0]


def analytic_pvalues_from_sums(sums_per_scale: Sequence[BinSums]) -> tuple[np.ndarray, np.ndarray]:
    """(statistics T^d, analytic p-values) per scale from per-scale BinSums (e.g. reduced on a cluster)."""
    t = np.array([debiased_ece_sq(s) for s in sums_per_scale])
    moments = np.array([null_moments_from_sums(s) for s in sums_per_scale]).reshape(-1, 3)
    p, _, _ = analytic_pvalues(t, moments[:, 0], moments[:, 1], moments[:, 2])
    return t, p


def analytic_tcal_from_sums(sums_per_scale: Sequence[BinSums], n_bins: Sequence[int], *, alpha: float = 0.05,
                            K: int = 2, target: str = "binary") -> TCalResult:
    """Adaptive T-Cal with analytic critical values from the BinSums of each scale (Bonferroni).  BinSums
    carry no third moments, so ν is Satterthwaite's: for full calibration this is the test of
    ``adaptive_tcal(..., resampling="analytic")``; for 1-D targets that test also matches the third
    cumulant (use :class:`MomentSums` to reproduce it from distributed sums)."""
    alpha = check_alpha(alpha)
    if len(sums_per_scale) != len(n_bins) or not n_bins:
        raise InputError("need one BinSums per scale and at least one scale")
    t = np.array([debiased_ece_sq(s) for s in sums_per_scale])
    moments = np.array([null_moments_from_sums(s) for s in sums_per_scale]).reshape(-1, 3)
    n = int(sums_per_scale[0].n_total)
    return _analytic_result(t, moments.T, tuple(int(m) for m in n_bins), alpha, n, int(K), target,
                            "adaptive T-Cal", "analytic critical values from bin sums")


def _analytic_result(t, moments, scales, alpha, n, K, target, test, reason) -> TCalResult:
    B = len(scales)
    k3 = moments[3] if len(moments) > 3 else None
    p, nu, c = analytic_pvalues(t, moments[0], moments[1], moments[2], k3)
    crit = _analytic_critical(alpha / B, nu, c, np.asarray(moments[0], dtype=np.float64))
    padj = float(min(1.0, B * p.min()))
    return TCalResult(bool(p.min() <= alpha / B), padj, alpha, scales, t, crit, p, "analytic", "bonferroni",
                      n, K, 0, 0.0, test, reason, target)


# ------------------------------------------------------------------------------------------------
# discrete predictors: exact binomial test (App. B.4)
# ------------------------------------------------------------------------------------------------
def _discrete_summary(z_sorted: np.ndarray):
    """(values, counts) if the sorted 1-D predictions look discrete (see DISCRETE_*), else None."""
    n = z_sorted.shape[0]
    starts = np.flatnonzero(np.concatenate(([True], z_sorted[1:] != z_sorted[:-1])))
    if starts.shape[0] > DISCRETE_MAX_VALUES:
        return None
    counts = np.diff(np.append(starts, n))
    if counts.min() < DISCRETE_MIN_COUNT:
        return None
    return z_sorted[starts], counts


def _binomial_test(z, y, alpha, target, K, values=None, counts=None, why="") -> TCalResult:
    order = np.argsort(z, kind="stable")
    zs, ys = z[order], y[order]
    if values is None:
        starts = np.flatnonzero(np.concatenate(([True], zs[1:] != zs[:-1])))
        values, counts = zs[starts], np.diff(np.append(starts, zs.shape[0]))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    successes = np.add.reduceat(ys, starts).astype(np.int64)
    t = values.shape[0]
    pvals = np.array([stats.binomtest(int(k), int(N), float(v)).pvalue
                      for k, N, v in zip(successes, counts, values, strict=True)])
    pvals = np.clip(pvals, 0.0, 1.0)
    # the smallest two-sided p-value of a value is reached at 0 or N successes
    min_p = min(min(stats.binomtest(0, int(N), float(v)).pvalue,
                    stats.binomtest(int(N), int(N), float(v)).pvalue)
                for N, v in zip(counts, values, strict=True))
    padj = float(min(1.0, t * pvals.min()))
    reason = why or (f"the predictions take {t} distinct values (≤ {DISCRETE_MAX_VALUES}), each at least "
                     f"{DISCRETE_MIN_COUNT} times: exact binomial test per value (App. B.4), "
                     f"Bonferroni over {t}")
    return TCalResult(bool(padj <= alpha), padj, alpha, (t,), successes / counts, values.astype(np.float64),
                      pvals, "binomial", "bonferroni", int(z.shape[0]), K, 0, float(min(1.0, t * min_p)),
                      "binomial (discrete predictor)", reason, target, values.astype(np.float64),
                      counts.astype(np.int64))


# ------------------------------------------------------------------------------------------------
# public tests
# ------------------------------------------------------------------------------------------------
@validate_params({"alpha": UNIT_OPEN, "n_bins": NoneOr(POSITIVE_INT), "smoothness": POSITIVE_REAL})
def tcal(
    y_true,
    y_prob=None,
    *,
    alpha: float = ALPHA,
    n_bins: int | None = None,
    smoothness: float = 1.0,
    target: str = "auto",
    class_index: int = 0,
) -> TCalResult:
    """Fixed-scale T-Cal ξ_{m,n}(α) (Lee et al. 2023, Theorem 3 / Algorithm 1).

    Rejects iff T^d_{m,n} ≥ sqrt(2K²/α)·min(m^{(K−1)/2}/n, m^{−(K−1)/2}) (halved for the scalar statistic
    of 1-D targets, see the module docstring), with m = ``n_bins`` or m* = ⌊n^{2/(4s+K−1)}⌋ for Hölder
    smoothness s = ``smoothness``.  T^d is :func:`calviz.debiased_ece` on m equal-width bins (the simplex
    partition for ``target="full"``).  The threshold comes from Chebyshev's inequality: the test is
    valid but conservative; ``pvalue`` is the smallest α at which it rejects, min(1, 2K²r²/T²).
    """
    s = float(smoothness)
    data, target, z, y, K = _prepare(y_true, y_prob, target, class_index, "tcal")
    n = z.shape[0]
    # (+1e-9: exact powers such as 1000^(1/3) = 9.999999999999998 in floating point must floor to 10)
    m = max(1, math.floor(n ** (2.0 / (4.0 * s + K - 1)) + 1e-9)) if n_bins is None else check_n_bins(n_bins)
    full = target == "full"
    y_view = np.eye(K)[y] if full else y
    sums, _, _, _ = binned_sums(z, y_view, n_bins=m, target=target)
    T = debiased_ece_sq(sums)
    thr = chebyshev_threshold(m, n, K, alpha, scalar=not full)
    p = _chebyshev_pvalue(T, m, n, K, scalar=not full)
    how = "given n_bins" if n_bins is not None else f"m* = floor(n^(2/(4s+K-1))) with s = {s:g}"
    return TCalResult(bool(T >= thr), p, alpha, (m,), np.array([T]), np.array([thr]), np.array([p]),
                      "threshold", "none", n, K, 0, 0.0, "T-Cal (fixed scale)",
                      f"Theorem 3 Chebyshev threshold at m = {m} ({how})", target, n_classes=data.n_classes)


def _default_resamples(B: int, alpha: float, combine: str) -> int:
    if combine == "max":
        return max(999, math.ceil(2.0 / alpha))
    return max(999, math.ceil(2.0 * B / alpha))


@validate_params({
    "alpha": UNIT_OPEN, "resampling": Options(_RESAMPLING),
    "n_resamples": NoneOr(Interval(int, 1, MAX_RESAMPLES)),
    "max_resamples": NoneOr(Interval(int, FIRST_BATCH, MAX_RESAMPLES)), "resampling_risk": UNIT_OPEN,
    "combine": Options(_COMBINE), "class_index": NoneOr(Interval(int, 0, None)), "discrete": NoneOr(BOOLEAN),
    "seed": SEED,
})
def adaptive_tcal(
    y_true,
    y_prob=None,
    *,
    alpha: float = ALPHA,
    resampling: Resampling = "y_only",
    n_resamples: int | None = None,
    max_resamples: int | None = None,
    resampling_risk: float = RESAMPLING_RISK,
    combine: Combine = "bonferroni",
    target: str = "auto",
    class_index: int | None = None,
    discrete: bool | None = None,
    seed=None,
) -> TCalResult:
    """Adaptive T-Cal (Lee et al. 2023, eq. 7 and Algorithm 2) over the dyadic scales 2^1..2^B.

    Parameters
    ----------
    alpha: level in (0, 1).
    resampling: "y_only" (default, exactly valid given the predictions), "consistency", "analytic"
        (scaled chi-square, no resampling) or "threshold" (Chebyshev, conservative); module docstring.
    n_resamples: None (default) for the sequential rule below; an integer for exactly that many
        resamples with p = (1 + #{T* ≥ T})/(N + 1) per scale.  A fixed count warns when it cannot reject
        (B/(N+1) > α) and when the p-value's Monte Carlo interval contains α (another seed may decide
        otherwise).  At most :data:`MAX_RESAMPLES`, and n·N (×K for full calibration) at most
        :data:`MAX_RESAMPLE_WORK`.
    max_resamples: cap of the sequential rule; default :data:`DEFAULT_MAX_RESAMPLES`, lowered to
        :data:`DEFAULT_RESAMPLE_WORK`/n for n > 2·10⁵ (never below one first batch of
        :data:`FIRST_BATCH`).  Same limits as ``n_resamples``.
    resampling_risk: bound ε on the probability that the sequential decision differs from the decision
        with infinitely many resamples (default 10⁻³).
    combine: "bonferroni" (reject iff min_b p_b ≤ α/B) or "max" (resampling only; max over standardised
        scales against its resampled distribution).
    target: "auto" (binary P(y=1), or top-1 for (n, K) input), "binary", "top1", "classwise" (one class
        with ``class_index``, or all classes with Bonferroni over K when class_index is None: each class at
        α/K with risk ε/K and cap max_resamples/K) or "full" (K-class calibration on the simplex
        partition).
    discrete: None detects discrete predictors (1-D targets) and then runs the exact binomial test;
        True forces it, False never uses it.
    seed: int or numpy Generator for the resampling.

    The sequential rule
    -------------------
    Resample r uses its own random stream, so the first N resamples are the same whatever the batches.
    After each batch, for every scale b the exceedance count S_b = #{T*_b ≥ T_b} of N resamples is
    compared with the level t = α/B (Bonferroni; t = α and the single count of the maximum for "max")
    through Robbins' (1970) beta-binomial mixture

        M_N(q) = B(1 + S, β + N − S)/B(1, β) / (q^S (1 − q)^{N−S}),   β = 1/t − 1,

    a nonnegative martingale with mean 1 under exceedance probability q.  Ville's inequality gives
    P_q(M_N(q) ≥ B/ε for some N) ≤ ε/B, so {q : M_N(q) < B/ε} is a confidence sequence for the
    infinite-resample p-value p_b, valid at every look at once.  The rule stops as soon as the sequences
    settle the decision — some scale's lies below t (reject) or every scale's above t (accept) — and
    after a union bound over the B scales the reported decision differs from the infinite-resample one
    with probability ≤ ε, uniformly in the p-values (the same guarantee as Gandy (2009), "Sequential
    implementation of Monte Carlo tests with uniformly bounded resampling risk", with a simpler
    boundary; see also Ding, Gandy & Hahn (2020)).  The level is therefore ≤ α + ε.  Clear cases stop
    after a few hundred resamples; p-values close to α need many: if the cap is reached first the
    result says ``decision = "undecided"`` (``reject`` False) with the interval.  For y-only resampling
    (Bonferroni) a rejection is settled without resampling when Cantelli's inequality with the exact
    conditional null variance already puts some scale's p-value below α/B.  For "max" the standardising
    sd is re-estimated at every look, so the guarantee holds for the final standardisation only
    approximately.

    Returns
    -------
    TCalResult
        ``reject``, ``decision`` ("reject", "accept" or "undecided"), the adjusted ``pvalue`` and its Monte
        Carlo ``pvalue_interval``, and per scale the number of bins (``n_bins``), the statistic, the
        critical value and the p-value.

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
    >>> result = calviz.adaptive_tcal(y, p, alpha=0.05, seed=0)
    >>> result.reject, result.method
    (True, 'y_only')
    """
    if combine == "max" and resampling not in ("y_only", "consistency"):
        raise InputError("combine='max' needs a resampling distribution: "
                         "use resampling='y_only' or 'consistency'")
    if n_resamples is not None and max_resamples is not None:
        raise InputError("give n_resamples (a fixed count) or max_resamples (the cap of the sequential "
                         "rule), not both")
    n_resamples = None if n_resamples is None else int(n_resamples)
    max_resamples = None if max_resamples is None else int(max_resamples)
    risk = float(resampling_risk)
    if target == "classwise" and class_index is None:
        return _classwise_all(y_true, y_prob, alpha=alpha, resampling=resampling, n_resamples=n_resamples,
                              max_resamples=max_resamples, risk=risk, combine=combine, discrete=discrete,
                              seed=seed)
    data, target, z, y, K = _prepare(y_true, y_prob, target, 0 if class_index is None else class_index,
                                     "adaptive_tcal")
    return with_classes(_adaptive(z, y, K, target, alpha, resampling, n_resamples, max_resamples, risk,
                                  combine, discrete, seed), data.n_classes)


def _classwise_all(y_true, y_prob, *, alpha, resampling, n_resamples, max_resamples, risk, combine, discrete,
                   seed) -> TCalResult:
    data = as_calibration_data(y_true, y_prob)
    K = data.n_classes
    rng = as_generator(seed)
    # the budget and the resampling risk are shared by the K tests (union bound over classes)
    n = data.n
    cap = _resample_cap(max_resamples, n)
    class_cap = max(FIRST_BATCH, cap // K)
    results = []
    for c in range(K):
        z, y = data.classwise(c)
        results.append(_adaptive(np.ascontiguousarray(z), np.ascontiguousarray(y), 2, "classwise", alpha / K,
                                 resampling, n_resamples, None if n_resamples is not None else class_cap,
                                 risk / K, combine, discrete, rng))
    best = min(range(K), key=lambda c: results[c].pvalue)
    r = results[best]
    padj = float(min(1.0, K * r.pvalue))
    decisions = [res.decision for res in results]
    decision = ("reject" if "reject" in decisions else "undecided" if "undecided" in decisions else "accept")
    reason = (f"classwise over {K} one-vs-rest targets, Bonferroni over classes (each at level α/K"
              f"{', resampling risk ε/K and cap ' + str(class_cap) if n_resamples is None else ''}); "
              f"decisions: {decisions.count('reject')} reject, {decisions.count('accept')} accept, "
              f"{decisions.count('undecided')} undecided; smallest p-value for class {best}: {r.reason}")
    low = float(min(1.0, K * min(res.pvalue_interval[0] for res in results)))
    high = float(min(1.0, K * min(res.pvalue_interval[1] for res in results)))
    return TCalResult(decision == "reject", padj, alpha, r.n_bins, r.statistics, r.critical_values, r.pvalues,
                      r.method, r.combine, r.n, K, int(sum(res.n_resamples for res in results)),
                      float(min(1.0, K * r.min_attainable_pvalue)),
                      r.test + " (classwise)", reason, "classwise", r.values, r.counts, decision, (low, high),
                      float(risk if n_resamples is None else r.resampling_risk), int(class_cap), K)


def _resample_cap(max_resamples: int | None, cost: int) -> int:
    """The cap of the sequential rule for ``cost`` point-resamples per resample."""
    if max_resamples is None:
        return int(min(DEFAULT_MAX_RESAMPLES, max(FIRST_BATCH, DEFAULT_RESAMPLE_WORK // max(cost, 1))))
    return int(max_resamples)


def _check_work(count: int, cost: int, name: str) -> None:
    if count * cost > MAX_RESAMPLE_WORK:
        raise InputError(f"{name} = {count} with {cost} point-draws per resample exceeds the resampling work "
                         f"limit of {MAX_RESAMPLE_WORK:.0e} point-resamples (calviz.tcal.MAX_RESAMPLE_WORK); "
                         f"use at most {MAX_RESAMPLE_WORK // cost}")


def _adaptive(z, y, K, target, alpha, resampling, n_resamples, max_resamples, risk, combine, discrete,
              seed) -> TCalResult:
    n = z.shape[0]
    full = target == "full"
    if not full:
        z, y = _sort_binary(z, y)  # sorted once: for the discrete check and the scan
    if not full and discrete is not False:
        summary = _discrete_summary(z)
        if summary is not None or discrete:
            if summary is None:
                t = int(np.count_nonzero(z[1:] != z[:-1])) + 1
                if t > DISCRETE_FORCED_MAX:
                    raise InputError(f"discrete=True, but the predictions take {t} distinct values; the "
                                     f"per-value binomial test allows at most {DISCRETE_FORCED_MAX}")
                return _binomial_test(z, y, alpha, target, K, why="discrete=True: exact binomial test per "
                                      "distinct value (App. B.4), Bonferroni over the values")
            return _binomial_test(z, y, alpha, target, K, *summary)
    B_paper, levels = dyadic_scales(n, K)
    if full:
        # simplex cell keys must fit in int64: m^{K-1} (K-1)! < 2^63
        while levels >= 1 and (K - 1) * levels + math.log2(math.factorial(K - 1)) >= 63:
            levels -= 1
    if levels < 1:
        raise InputError(
            f"n = {n} is too small for even one dyadic scale with K = {K} classes (scale 2 has 2^{K - 1} "
            f"bins > n²); use target='top1' or 'classwise', or more samples"
        )
    scan = _scan_order(z, y, levels, full, presorted=True)
    scales = tuple(2**b for b in range(1, levels + 1))
    scale_text = f"{levels} dyadic scales 2..2^{levels}" + (
        f" (Algorithm 2's B = {B_paper}; finer scales capped)" if levels < B_paper else "")
    kind_text = "full K-class calibration on the simplex partition" if full else f"{target} calibration"
    if resampling == "analytic":
        # T^d and the moments from one scan with compensated sums (the same numbers as MomentSums on Dask)
        terms = _k.analytic_terms(scan.split, levels, scan.z, np.ascontiguousarray(scan.y, dtype=np.float64),
                                  scan.kind)
        moments = terms[1:4] if full else terms[1:]  # no third cumulant for vector residuals: Satterthwaite
        return _analytic_result(terms[0], moments, scales, alpha, n, K, target, "adaptive T-Cal",
                                f"{kind_text}; {scale_text}; scaled chi-square critical values, Bonferroni")
    t_obs = _k.observed_statistics(scan.split, levels, scan.z, scan.y, scan.kind)
    if resampling == "threshold":
        p = np.array([_chebyshev_pvalue(t, m, n, K, not full) for t, m in zip(t_obs, scales, strict=True)])
        crit = np.array([chebyshev_threshold(m, n, K, alpha / levels, scalar=not full) for m in scales])
        padj = float(min(1.0, levels * p.min()))
        return TCalResult(bool(np.any(t_obs >= crit)), padj, alpha, scales, t_obs, crit, p, "threshold",
                          "bonferroni", n, K, 0, 0.0, "adaptive T-Cal",
                          f"{kind_text}; {scale_text}; Theorem 3 Chebyshev thresholds at α/B", target)
    source = _k.Y_ONLY if resampling == "y_only" else _k.CONSISTENCY
    cost = n * (K if full else 1)  # point-resamples per resample
    if n_resamples is not None:
        _check_work(n_resamples, cost, "n_resamples")
    else:
        max_resamples = _resample_cap(max_resamples, cost)
        _check_work(max_resamples, cost, "max_resamples")
    base = _base_seed(seed)
    head = f"{kind_text}; {scale_text}; {resampling.replace('_', '-')} resampling"
    if n_resamples is not None:
        return _fixed_resampling(scan, t_obs, levels, scales, source, base, n_resamples, alpha, combine, n, K,
                                 target, head)
    return _sequential_resampling(scan, t_obs, levels, scales, source, base, max_resamples, alpha, combine,
                                  risk, n, K, target, head, cost)


def _resample(scan: _ScanOrder, levels: int, source: int, base, start: int, count: int) -> np.ndarray:
    """Resampled statistics (count, levels) of the resamples start..start+count−1 (stream r for resample
    r, so any cut of a run into calls gives the same rows)."""
    if scan.z.shape[0] * count >= _PARALLEL_MIN_WORK:
        return _k.resampled_statistics(scan.split, levels, scan.z, scan.kind, source, base, count, start,
                                       numba.get_num_threads())
    # small jobs run on the calling thread (same output): waking the thread pool would cost more
    return _k.resampled_statistics_serial(scan.split, levels, scan.z, scan.kind, source, base, count, start)


def _fixed_resampling(scan, t_obs, levels, scales, source, base, N, alpha, combine, n, K, target, head):
    """Today's fixed-count rule: N resamples, p = (1 + #{T* ≥ T})/(N + 1); warns when N cannot settle."""
    floor = levels / (N + 1) if combine == "bonferroni" else 1.0 / (N + 1)
    if floor > alpha:
        need = math.ceil(levels / alpha) if combine == "bonferroni" else math.ceil(1 / alpha)
        warnings.warn(
            f"n_resamples = {N} is too few: the smallest attainable p-value is {floor:.3g} > "
            f"alpha = {alpha:g}"
            f" ({'Bonferroni over ' + str(levels) + ' scales' if combine == 'bonferroni' else 'max'}), so the"
            f" test cannot reject; use n_resamples ≥ {need}", stacklevel=5)
    boot = _resample(scan, levels, source, base, 0, N)
    reject, padj, crit, p = _resampling_decision(t_obs, boot, alpha, combine)
    exceed, level = _exceedances(t_obs, boot, alpha, combine)
    interval = _adjusted_interval(exceed, N, level, RESAMPLING_RISK, combine, levels, sequential=False)
    if floor <= alpha and interval[0] <= alpha < interval[1]:
        warnings.warn(
            f"n_resamples = {N} cannot settle the decision: the adjusted p-value's Monte Carlo interval "
            f"[{interval[0]:.3g}, {interval[1]:.3g}] contains alpha = {alpha:g}, so another seed may give "
            f"the "
            f"opposite decision; leave n_resamples=None for the sequential rule", stacklevel=5)
    reason = f"{head} ({N} resamples, fixed), {combine}"
    return TCalResult(reject, padj, alpha, scales, t_obs, crit, p, _method_name(source), combine, n, K, N,
                      float(min(1.0, floor)), "adaptive T-Cal", reason, target, None, None,
                      "reject" if reject else "accept", interval, float("nan"), 0)


def _method_name(source: int) -> str:
    return "y_only" if source == _k.Y_ONLY else "consistency"


def _sequential_resampling(scan, t_obs, levels, scales, source, base, cap, alpha, combine, risk, n, K, target,
                           head, cost):
    """The sequential rule (see :func:`adaptive_tcal`): resample in growing batches until the decision at
    ``alpha`` is settled with resampling risk ≤ ``risk`` or ``cap`` resamples are spent."""
    level = alpha / levels if combine == "bonferroni" else alpha
    n_tests = levels if combine == "bonferroni" else 1
    log_bound = math.log(n_tests / risk)
    method = _method_name(source)
    if source == _k.Y_ONLY and combine == "bonferroni":
        settled = _cantelli_reject(scan, t_obs, levels, level)
        if settled is not None:
            bounds, crit = settled
            padj = float(min(1.0, levels * bounds.min()))
            b = int(np.argmin(bounds))
            reason = (f"{head}: settled without resampling — at m = {scales[b]} Cantelli's inequality with "
                      f"the "
                      f"exact null variance given the predictions bounds the y-only p-value by "
                      f"{bounds[b]:.3g} ≤ α/B, so the resampled test rejects for every number of resamples; "
                      f"bonferroni")
            return TCalResult(True, padj, alpha, scales, t_obs, crit, bounds, method, combine, n, K, 0, 0.0,
                              "adaptive T-Cal", reason, target, None, None, "reject", (0.0, padj), 0.0, cap)
    store = np.empty((FIRST_BATCH, levels))  # grows by doubling up to the cap (8·B bytes per resample)
    N = 0
    look = FIRST_BATCH
    exceed = np.zeros(levels, dtype=np.int64)
    tol = None
    while True:
        count = min(look, cap) - N
        rows = _resample(scan, levels, source, base, N, count)
        if N + count > store.shape[0]:
            grown = np.empty((min(cap, max(N + count, 2 * store.shape[0])), levels))
            grown[:N] = store[:N]
            store = grown
        store[N:N + count] = rows
        N += count
        if combine == "bonferroni":
            # counted batch by batch; the tie tolerance (float round-off only) is fixed at the first look
            if tol is None:
                sd = np.sqrt(np.concatenate([rows, t_obs[None, :]]).var(axis=0))
                tol = _TIE_RTOL * (np.abs(t_obs) + sd)
            exceed += (rows >= (t_obs - tol)[None, :]).sum(axis=0)
        else:  # the standardisation of "max" uses every resample so far: recount
            exceed, _ = _exceedances(t_obs, store[:N], alpha, combine)
        below, above = _settled(exceed, N, level, log_bound)
        if bool(below.any() or above.all()) or N >= cap:
            break
        look = _next_look(exceed, N, level, log_bound, cap, below, above)
    boot = store[:N]
    reject, padj, crit, p = _resampling_decision(t_obs, boot, alpha, combine)
    # the reported p-values and interval come from the final counts (the same up to exact ties)
    exceed, _ = _exceedances(t_obs, boot, alpha, combine)
    below, above = _settled(exceed, N, level, log_bound)
    interval = _adjusted_interval(exceed, N, level, risk, combine, levels)
    if below.any():
        decision = "reject"
    elif above.all():
        decision = "accept"
    else:
        decision = "undecided"
    reject = decision == "reject"
    # the smallest p-value this configuration can produce is reached at the cap
    floor = levels / (cap + 1) if combine == "bonferroni" else 1.0 / (cap + 1)
    state = {"reject": "settled: reject", "accept": "settled: not rejected",
             "undecided": f"undecided at this budget (cap {cap} resamples reached with the p-value's Monte "
                          f"Carlo interval [{interval[0]:.3g}, {interval[1]:.3g}] containing α)"}[decision]
    reason = (f"{head} (sequential, {N} resamples, resampling risk ≤ {risk:g}), {combine}; {state}")
    return TCalResult(reject, padj, alpha, scales, t_obs, crit, p, method, combine, n, K, N,
                      float(min(1.0, floor)), "adaptive T-Cal", reason, target, None, None, decision,
                      interval,
                      float(risk), int(cap))


def _cantelli_reject(scan, t_obs, levels, level):
    """(per-scale bounds, critical values) when Cantelli's inequality already settles a y-only rejection,
    else None.

    Given the predictions, y-only resampling draws T* with E[T*] = 0 exactly (T^d is a sum of products
    of independent centred residuals) and Var(T*) = Var₀(T^d | Z), computed exactly by the analytic scan.
    Cantelli: P(T* ≥ T) ≤ Var₀/(Var₀ + T²) for T > 0.  If that bound is ≤ α/B at some scale, the
    infinite-resample p-value of that scale is ≤ α/B and the resampled test rejects: no Monte Carlo
    error is involved.  The critical value T_c = sqrt(Var₀ (1 − α/B)/(α/B)) is where the bound equals α/B.
    """
    var = _k.null_moments(scan.split, levels, scan.z, scan.kind)[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        bounds = np.where(t_obs > 0, var / (var + t_obs * t_obs), 1.0)
    bounds = np.nan_to_num(bounds, nan=1.0)
    if not (bounds.min() <= level):
        return None
    # a scale with zero null variance (no bin of two points) has T* ≡ 0: nothing can be exceeded there
    crit = np.where(var > 0, np.sqrt(np.maximum(var, 0.0) * (1.0 - level) / level), np.inf)
    return bounds, crit


def _exceedances(t_obs: np.ndarray, boot: np.ndarray, alpha: float, combine: str) -> tuple[np.ndarray, float]:
    """(#{T* ≥ T} per scale for Bonferroni, or #{max* ≥ max} as a 1-vector for "max"; the level each
    count's p-value is compared with is returned by the caller's rule) — the counts of
    :func:`_resampling_decision`."""
    N, levels = boot.shape
    sd = np.sqrt(np.concatenate([boot, t_obs[None, :]]).var(axis=0))
    if combine == "bonferroni":
        tol = _TIE_RTOL * (np.abs(t_obs) + sd)
        return (boot >= (t_obs - tol)[None, :]).sum(axis=0), alpha / levels
    live = sd > 0
    if not live.any():
        return np.array([N]), alpha
    scale_sd = np.where(live, sd, 1.0)
    m_obs = np.max(np.where(live, t_obs / scale_sd, -np.inf))
    m_boot = np.max(np.where(live[None, :], boot / scale_sd[None, :], -np.inf), axis=1)
    return np.array([np.sum(m_boot >= m_obs - _TIE_RTOL * (abs(m_obs) + 1.0))]), alpha


def _log_mixture(exceed, N: int, q, level: float):
    """log M_N(q): Robbins' (1970) beta-binomial mixture likelihood ratio of N Bernoulli(p) exceedance
    indicators with S = ``exceed`` successes against p = q, prior Beta(1, 1/level − 1) (mean = the level
    the p-value is compared with, which puts the prior mass where the decision is made)."""
    b = 1.0 / level - 1.0
    S = np.asarray(exceed, dtype=np.float64)
    F = N - S
    with np.errstate(divide="ignore"):
        return (special.betaln(1.0 + S, b + F) - special.betaln(1.0, b) - S * np.log(q) - F * np.log1p(-q))


def _settled(exceed, N: int, level: float, log_bound: float) -> tuple[np.ndarray, np.ndarray]:
    """Per count: (p ≤ level settled, p > level settled) — the confidence sequence
    {q : M_N(q) < n_tests/risk} excludes every q ≥ level (resp. ≤ level).  M_N(q) is convex in log-odds
    with its minimum at q = S/N, so that is M_N(level) ≥ bound with S/N on the right side of level."""
    lm = _log_mixture(exceed, N, level, level)
    rate = np.asarray(exceed) / N
    return (rate < level) & (lm >= log_bound), (rate > level) & (lm >= log_bound)


def _next_look(exceed, N, level, log_bound, cap, below, above) -> int:
    """Resample count of the next look: the count at which the current exceedance rates would settle the
    decision (the earliest scale for a rejection, the last scale for an acceptance), at least 1.5× and
    at most 4× the current count, in whole blocks of 64."""
    rate = np.asarray(exceed, dtype=np.float64) / N
    grid = np.unique(np.minimum(cap, np.ceil(N * 1.1 ** np.arange(1, 80))).astype(np.int64))
    lm = _log_mixture(rate[:, None] * grid[None, :], grid[None, :], level, level)
    ok = lm >= log_bound
    first = np.where(ok.any(axis=1), grid[np.argmax(ok, axis=1)], cap)
    candidates = rate < level
    target = first[candidates].min() if candidates.any() else first[~above].max()
    look = int(min(max(target, 1.5 * N), 4 * N, cap))
    return int(min(cap, -(-look // 64) * 64))


def _adjusted_interval(exceed, N: int, level: float, risk: float, combine: str, levels: int,
                       sequential: bool = True) -> tuple:
    """Monte Carlo interval of the adjusted p-value: per count an interval for its exceedance probability
    at risk/n_tests — the confidence sequence of the sequential rule, or for a fixed N the exact
    Clopper–Pearson interval — then Bonferroni's B·min over scales (both ends)."""
    n_tests = levels if combine == "bonferroni" else 1
    counts = np.asarray(exceed, dtype=np.int64)
    if sequential:
        log_bound = math.log(n_tests / risk)
        lows = [_sequence_end(int(S), N, level, log_bound, lower=True) for S in counts]
        highs = [_sequence_end(int(S), N, level, log_bound, lower=False) for S in counts]
    else:
        tail = risk / n_tests / 2.0
        lows = np.where(counts > 0, stats.beta.ppf(tail, counts, N - counts + 1), 0.0)
        highs = np.where(counts < N, stats.beta.isf(tail, counts + 1, N - counts), 1.0)
    factor = levels if combine == "bonferroni" else 1
    return float(min(1.0, factor * np.min(lows))), float(min(1.0, factor * np.min(highs)))


def _sequence_end(S: int, N: int, level: float, log_bound: float, lower: bool) -> float:
    """Lower or upper end of {q : log M_N(q) < log_bound} (an interval around S/N), found in log q (the
    lower end can be far below the smallest double's square root)."""
    centre = min(max(S / N, 1e-300), 1.0 - 1e-16)

    def f(log_q):
        return float(_log_mixture(S, N, math.exp(log_q), level)) - log_bound

    lo_q, hi_q = math.log(1e-300), math.log(1.0 - 1e-16)
    if lower:
        if S == 0 or f(lo_q) < 0:
            return 0.0
        return math.exp(optimize.brentq(f, lo_q, math.log(centre), xtol=1e-12, maxiter=200))
    if S == N or f(hi_q) < 0:
        return 1.0
    return math.exp(optimize.brentq(f, math.log(centre), hi_q, xtol=1e-12, maxiter=200))


def _resampling_decision(t_obs: np.ndarray, boot: np.ndarray, alpha: float, combine: str):
    """(reject, adjusted p-value, per-scale critical values, per-scale p-values) from the observed
    statistics (B,) and the resampled ones (N, B)."""
    N, levels = boot.shape
    sd = np.sqrt(np.concatenate([boot, t_obs[None, :]]).var(axis=0))
    tol = _TIE_RTOL * (np.abs(t_obs) + sd)
    exceed = (boot >= (t_obs - tol)[None, :]).sum(axis=0)
    p = (1.0 + exceed) / (N + 1.0)
    if combine == "bonferroni":
        # reject at scale b iff #{T* ≥ T} ≤ j with j = floor(α(N+1)/B) − 1: T must exceed the (j+1)-th
        # largest resampled value
        j = math.floor(alpha * (N + 1) / levels + 1e-12) - 1
        crit = np.full(levels, np.inf) if j < 0 else -np.sort(-boot, axis=0)[min(j, N - 1)]
        return bool(p.min() <= alpha / levels), float(min(1.0, levels * p.min())), crit, p
    live = sd > 0
    scale_sd = np.where(live, sd, 1.0)
    m_obs = np.max(np.where(live, t_obs / scale_sd, -np.inf))
    if not np.isfinite(m_obs):
        return False, 1.0, np.full(levels, np.inf), p
    m_boot = np.max(np.where(live[None, :], boot / scale_sd[None, :], -np.inf), axis=1)
    padj = float((1.0 + np.sum(m_boot >= m_obs - _TIE_RTOL * (abs(m_obs) + 1.0))) / (N + 1.0))
    j = math.floor(alpha * (N + 1) + 1e-12) - 1
    c_max = np.inf if j < 0 else float(-np.sort(-m_boot)[min(j, N - 1)])
    return bool(padj <= alpha), padj, np.where(live, c_max * sd, np.inf), p


# ------------------------------------------------------------------------------------------------
# sample-splitting test (Sec. 6, Algorithm 3)
# ------------------------------------------------------------------------------------------------
def _chi2_two_sample(v_keys: np.ndarray, w_keys: np.ndarray, n_cells: int) -> float:
    """Γ = Σ_cells (n2·v_cell − n1·w_cell)² (unnormalised chi-square of Arias-Castro et al., App. B.2)."""
    n1, n2 = v_keys.shape[0], w_keys.shape[0]
    cv = np.bincount(v_keys, minlength=n_cells).astype(np.float64)
    cw = np.bincount(w_keys, minlength=n_cells).astype(np.float64)
    return float(((n2 * cv - n1 * cw) ** 2).sum())


@validate_params({"alpha": UNIT_OPEN, "smoothness": POSITIVE_REAL,
                  "n_permutations": NoneOr(Interval(int, 1, MAX_PERMUTATIONS)), "seed": SEED})
def split_tcal(
    y_true,
    y_prob=None,
    *,
    alpha: float = ALPHA,
    smoothness: float = 1.0,
    n_permutations: int | None = None,
    target: str = "auto",
    class_index: int = 0,
    seed=None,
) -> TCalResult:
    """Sample-splitting calibration test ξ^split (Lee et al. 2023, Sec. 6, Algorithm 3).

    The first ⌊n/2⌋ samples keep their labels, the rest get synthetic labels ỹ ~ Cat(z).  For each class
    k: reject if |T_{1,k}| = |mean (y − z)_k| or |T_{2,k}| = |mean z_k (y − z)_k| ≥ sqrt(3K/(αn)), or if
    the two-sample test at level α/(3K) says that the predictions of first-half samples with y = k and
    second-half samples with ỹ = k have different distributions.  Two-sample test: the chi-square
    statistic Γ on m* = ⌊min(n1, n2)^{2/(4s+d)}⌋ equal-width cells per axis of the first d = K − 1
    coordinates (App. B.2, Theorem 19), with permutation critical values (the pooled sample is
    exchangeable under H₀, so the permutation p-value (1 + #{Γ* ≥ Γ})/(P + 1) is exact).
    For 1-D targets K = 2 with classes y = 1 and y = 0 of the binary view.

    ``n_permutations``: default max(199, ⌈2·3K/α⌉) within the budget (at most :data:`MAX_PERMUTATIONS`
    and :data:`MAX_PERMUTATION_WORK` / (nK)); when the budget is too small to reach α/(3K) the reason
    says so.  An explicit count beyond the budget raises ValueError.
    """
    s = float(smoothness)
    data, target, z, y, K = _prepare(y_true, y_prob, target, class_index, "split_tcal")
    n = z.shape[0]
    if n < 4:
        raise InputError(f"split_tcal needs at least 4 samples (two halves with two each); got {n}")
    level_ts = alpha / (3 * K)
    if n_permutations is None:
        # enough permutations to reach the level, within the budget (the moment checks still run)
        P = min(max(199, math.ceil(2.0 / level_ts)), MAX_PERMUTATIONS,
                max(199, MAX_PERMUTATION_WORK // (n * K)))
    else:
        P = int(n_permutations)
        if P * n * K > MAX_PERMUTATION_WORK:
            raise InputError(f"n_permutations = {P} with n = {n} and K = {K} exceeds the permutation work "
                             f"limit of {MAX_PERMUTATION_WORK:.0e} (calviz.tcal.MAX_PERMUTATION_WORK); "
                             f"use at most {max(1, MAX_PERMUTATION_WORK // (n * K))}")
    rng = as_generator(seed)
    probs = np.column_stack([1.0 - z, z]) if z.ndim == 1 else z
    labels = y.astype(np.int64) if z.ndim == 1 else y
    n1 = n // 2
    cum = np.cumsum(probs[n1:], axis=1)
    synthetic = np.minimum((cum < rng.random(n - n1)[:, None]).sum(axis=1), K - 1)
    onehot = np.eye(K)[labels]
    resid = onehot - probs
    thr = math.sqrt(3.0 * K / (alpha * n))
    d = K - 1
    coords = probs[:, :d]
    # every component is a test at level α/(3K) (Bonferroni over 3K components): the moment checks are
    # Chebyshev bounds with Var ≤ 1/n, so their p-value is min(1, 1/(n T²))
    pvals = np.ones(K)
    stat = np.zeros(K)
    moment_p = 1.0
    for k in range(K):
        for t in (resid[:, k].mean(), (probs[:, k] * resid[:, k]).mean()):
            moment_p = min(moment_p, 1.0 / (n * t * t) if t != 0 else 1.0)
        v = coords[:n1][labels[:n1] == k]
        w = coords[n1:][synthetic == k]
        if v.shape[0] < 2 or w.shape[0] < 2:
            continue
        m = max(1, math.floor(min(v.shape[0], w.shape[0]) ** (2.0 / (4.0 * s + d))))
        m = min(m, max(1, math.floor((2.0**62) ** (1.0 / d))))
        pooled = np.concatenate([v, w])
        cell = np.minimum(np.floor(pooled * m).astype(np.int64), m - 1)
        keys = (cell * (m ** np.arange(d))).sum(axis=1)
        _, keys = np.unique(keys, return_inverse=True)
        keys = keys.reshape(-1)
        n_cells = int(keys.max()) + 1
        nv = v.shape[0]
        g_obs = _chi2_two_sample(keys[:nv], keys[nv:], n_cells)
        exceed = 0
        for _ in range(P):
            perm = rng.permutation(keys)
            exceed += _chi2_two_sample(perm[:nv], perm[nv:], n_cells) >= g_obs * (1 - 1e-12)
        pvals[k] = (1.0 + exceed) / (P + 1.0)
        stat[k] = g_obs
    moment_reject = moment_p <= level_ts
    reject = bool(moment_reject or pvals.min() <= level_ts)
    padj = float(min(1.0, 3 * K * min(pvals.min(), moment_p)))
    reason = (f"sample splitting (Algorithm 3): moment checks at sqrt(3K/(αn)) = {thr:.3g} "
              f"{'reject' if moment_reject else 'pass'}; chi-square two-sample tests per class with {P} "
              f"permutations; every component at level α/(3K)")
    if 1.0 / (P + 1.0) > level_ts:
        reason += (f"; with {P} permutations (the budget) the two-sample tests cannot reach α/(3K) = "
                   f"{level_ts:.3g}: only the moment checks can reject")
    return TCalResult(reject, padj, alpha, (K,), stat, np.full(K, np.nan), pvals, "permutation",
                      "bonferroni", n, K, P, float(min(1.0, 3 * K / (P + 1.0))), "sample-splitting T-Cal",
                      reason, target, n_classes=data.n_classes)


# ``calviz.tcal`` names both this module and the function :func:`tcal`.  Importing the submodule (e.g.
# ``from calviz.tcal import adaptive_tcal``) rebinds the package attribute ``calviz.tcal`` to the module,
# which would break ``calviz.tcal(y_true, y_prob)``; making the module callable keeps both spellings working.
class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return tcal(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
