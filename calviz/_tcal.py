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
    liberal at coarse scales); for 1-D targets ν also matches the exact third cumulant, and where that
    leaves ν < 1 the p-value is at least Cantelli's bound (see :func:`analytic_pvalues`), for full
    calibration it is Satterthwaite's; meant for live use;
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
resampling stops once the decision at α is settled with resampling risk ≤ 10⁻³ (mixture martingales per
scale), or says "undecided" at the cap — so the decision does not depend on the seed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numba
import numpy as np

from calviz import _tcal_decision as _decision
from calviz._binning import check_n_bins, simplex_cell_keys
from calviz._data import InputError, check_alpha, validate_once
from calviz._ece import binned_sums, debiased_ece_sq, prepare_view
from calviz._kernels import tcal as _k
from calviz._kernels.sorting import count_runs
from calviz._params import (
    ALPHA,
    BOOLEAN,
    POSITIVE_INT,
    POSITIVE_REAL,
    SEED,
    TEST_LEVEL,
    UNIT_OPEN,
    Interval,
    NoneOr,
    Options,
    as_generator,
    validate_params,
)
from calviz._results import ResultMixin, with_classes
from calviz._small_n import floor_at_labels, full_label_log_probability, label_log_probability
from calviz._sortcache import sorted_keys
from calviz._sums import BinSums, MomentSums, finish_terms, null_moments_from_sums  # noqa: F401 (re-exported)
from calviz._tcal_decision import (  # noqa: F401 (the decision rules, shared with calviz.dask; re-exported)
    DEFAULT_MAX_RESAMPLES,
    DEFAULT_RESAMPLE_WORK,
    DEFAULT_TIME_BUDGET,
    DISCRETE_FORCED_MAX,
    DISCRETE_MAX_VALUES,
    DISCRETE_MIN_COUNT,
    FIRST_BATCH,
    MAX_LEVEL,
    MAX_RESAMPLE_WORK,
    MAX_RESAMPLES,
    RESAMPLING_RISK,
    analytic_decision,
    analytic_pvalues,
    base_seed,
    chebyshev_pvalue,
    chebyshev_threshold,
    check_choice,
    check_n_resamples,
    check_options,
    dyadic_scales,
    resample_cap,
    undecided_advice,
)
from calviz._tcal_decision import TARGETS as _TARGETS
from calviz._tcal_decision import adaptive as _adaptive_decision
from calviz._tcal_decision import adjusted_interval as _adjusted_interval  # noqa: F401
from calviz._tcal_decision import settled as _settled  # noqa: F401

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

#: resampling jobs with fewer point-resamples (n × N) than this run single-threaded
_PARALLEL_MIN_WORK = 4_000_000
#: permutation budget of :func:`split_tcal`: at most this many permutations, and permutations × n × K at
#: most MAX_PERMUTATION_WORK (the default count is lowered to fit; an explicit one beyond is refused)
MAX_PERMUTATIONS = 20_000
MAX_PERMUTATION_WORK = 200_000_000

Resampling = Literal["y_only", "consistency", "analytic", "threshold"]
Combine = Literal["bonferroni", "max"]
_RESAMPLING = ("y_only", "consistency", "analytic", "threshold")
_COMBINE = ("bonferroni", "max")


#: the end of ``TCalResult.test`` for classwise T-Cal over all classes (each class tested at α/K)
ALL_CLASSES = " (classwise)"


@dataclass(frozen=True, repr=False)
class TCalResult(ResultMixin):
    """Outcome of a calibration test (:func:`tcal`, :func:`adaptive_tcal`, :func:`split_tcal`).

    Attributes
    ----------
    reject : bool
        Whether H₀ (the model is calibrated) is rejected at level ``alpha``.
    pvalue : float
        The p-value, adjusted for the multiple scales (or values) tested.
    alpha : float
        The level of the test.
    n_bins : tuple of int
        The scales m (bins per axis) tested.
    statistics : ndarray
        T^d per scale (binomial test: the observed frequencies).
    critical_values : ndarray
        Per scale, the value the statistic must exceed for the overall test to reject (binomial test:
        the predicted values).
    pvalues : ndarray
        Unadjusted per-scale p-values.
    method : str
        How critical values were obtained ("y_only", "consistency", "analytic", "threshold", …).
    combine : str
        How scales were combined ("bonferroni", "max" or "none").
    n, K : int
        Sample size and number of classes of the tested target.
    n_resamples : int
        Resamples used (0 for none).
    min_attainable_pvalue : float
        The smallest adjusted p-value this configuration can produce (resampling: B/(N + 1) for
        Bonferroni, N the fixed count or the sequential rule's cap); rejection is impossible when it
        exceeds ``alpha``.
    test : str
        Which test ran.
    reason : str
        Why, in one sentence.
    target : str
        The calibration target tested.
    values, counts : ndarray or None
        For the binomial test (discrete predictors): the distinct predictions and their counts.
    decision : str
        "reject", "accept" (H₀ not rejected) or "undecided" (resampling stopped at its cap with the
        p-value's Monte Carlo interval still containing α: no decision is claimed and ``reject`` is
        False).
    pvalue_interval : tuple of float or None
        Monte Carlo interval (low, high) of the adjusted p-value — for the sequential rule it holds at
        every look simultaneously with probability ≥ 1 − ``resampling_risk``; (p, p) without resampling.
    resampling_risk : float
        Bound on the probability that ``decision`` differs from the decision with infinitely many
        resamples (0 without resampling, NaN for a fixed ``n_resamples``).
    max_resamples : int
        The cap of the sequential rule (0: not sequential).
    n_classes : int or None
        Classes of the input.
    analytic_pvalue : float or None
        Beside an "undecided" resampled result: the adjusted p-value of the analytic test (scaled
        chi-square, ``resampling="analytic"``) on the same data; None otherwise.
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
    analytic_pvalue: float | None = None
    #: a resampled test's resamples (:class:`calviz._tcal_decision.Resamples`): ``reuse`` of
    #: :func:`adaptive_tcal` decides at another α, or with a larger cap, from them
    _draws: object = dataclasses.field(default=None, repr=False, compare=False)

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
    def advice(self) -> str:
        """What the user can do about an undecided decision ("" when it is settled): the one text of
        :func:`calviz._tcal_decision.undecided_advice`."""
        if self.decision != "undecided":
            return ""
        return undecided_advice(self.n, self.max_resamples or self.n_resamples)

    @property
    def pvalue_is_bound(self) -> bool:
        """True when ``pvalue`` is only an upper bound: a resampled test whose rejection a tail bound of the
        null distribution settled before any resample (the p-value lies in ``pvalue_interval``)."""
        return self.method in ("y_only", "consistency") and not self.n_resamples and self.decision == "reject"

    @property
    def scales(self) -> tuple:
        """The scales m (same as ``n_bins``)."""
        return self.n_bins

    @property
    def rejected_scales(self) -> tuple:
        """The scales (the predicted values, when the binomial test of discrete predictors ran) that reject
        (:attr:`scale_rejections`; empty unless ``reject``)."""
        binomial = self.values is not None and len(self.values) == len(self.statistics)
        scales = self.values if binomial else self.n_bins
        return tuple(m for m, hit in zip(scales, self.scale_rejections, strict=True) if hit)

    @property
    def scale_rejections(self) -> np.ndarray:
        """Per scale, whether it rejects: with Bonferroni, its p-value is at most α/B (α/(KB) for
        classwise over all K classes) — the decision's own
        rule (a resampled critical value is a quantile of a discrete law, which the statistic can equal
        with a p-value far above α/B); with ``combine="max"``, the statistic reaches its critical value.
        Never where T^d = 0 (a scale without a bin of two points, where T^d ≡ 0), and none while the
        resampled decision is undecided."""
        t = np.asarray(self.statistics, dtype=np.float64)
        if self.combine == "bonferroni" and self.pvalues is not None:
            # (classwise over all K classes: the scales shown are one class's, tested at α/K)
            classes = self.K if self.test.endswith(ALL_CLASSES) else 1
            hit = np.asarray(self.pvalues, dtype=np.float64) <= self.alpha / (classes * max(len(t), 1))
        elif self.critical_values is not None:
            with np.errstate(invalid="ignore"):
                hit = t >= np.asarray(self.critical_values, dtype=np.float64)
        else:
            hit = np.zeros(t.shape, dtype=bool)
        if self.values is None:  # (the binomial test's statistics are observed frequencies: 0 is one)
            hit &= t != 0
        return hit & (self.decision != "undecided")

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
    keys (bits << 1 | y) sorts both arrays — ~10x faster than a stable argsort plus two gathers; the keys
    (below 2^63) are radix sorted, twice as fast as ``np.sort`` at 10⁷ and the same sequence."""
    keys = sorted_keys(np.ascontiguousarray(z, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64))
    return _k.unpack_sort_keys(keys.view(np.uint64))


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
    return TCalResult(*analytic_decision(t, moments.T, tuple(int(m) for m in n_bins), alpha, n, int(K),
                                         target, "adaptive T-Cal", "analytic critical values from bin sums"))


# ------------------------------------------------------------------------------------------------
# discrete predictors: exact binomial test (App. B.4)
# ------------------------------------------------------------------------------------------------
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
    """Fixed-scale T-Cal test ξ_{m,n}(α) with Chebyshev's threshold (Lee et al., Theorem 3).

    The debiased statistic T^d_{m,n} (eq. 6, :func:`calviz.debiased_ece`) on m equal-width bins (the
    simplex partition for ``target="full"``) is compared with the threshold of Theorem 3 /
    Algorithm 1 of Lee et al. [1]_: reject iff

        T^d_{m,n} ≥ √(2K²/α) · min(m^{(K−1)/2}/n, m^{−(K−1)/2})

    (halved for the scalar statistic of 1-D targets), with m = ``n_bins`` or m* = ⌊n^{2/(4s+K−1)}⌋ for
    Hölder smoothness s = ``smoothness``.  The threshold comes from Chebyshev's inequality: the test is
    valid but conservative; ``pvalue`` is the smallest α at which it rejects, min(1, 2K²r²/T²).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    alpha : float, default 0.05
        Level of the test.
    n_bins : int, optional
        The number m of bins per axis; default m* from ``smoothness``.
    smoothness : float, default 1.0
        Hölder smoothness s of the calibration curve assumed by m*.
    target : {"auto", "binary", "top1", "classwise", "full"}, default "auto"
        Which probabilities are tested ("auto": binary for 1-D input, top-1 otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    TCalResult
        ``reject``, ``pvalue``, the scale tested (``n_bins``), ``statistics`` and ``critical_values``.

    See Also
    --------
    adaptive_tcal : The adaptive test over all dyadic scales, with exact resampled critical values.

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
    >>> result = calviz.tcal(y, p)
    >>> result.reject, result.n_bins, round(result.pvalue, 4)
    (False, (20,), 0.0653)
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
    p = chebyshev_pvalue(T, m, n, K, scalar=not full)
    how = "given n_bins" if n_bins is not None else f"m* = floor(n^(2/(4s+K-1))) with s = {s:g}"
    return TCalResult(bool(T >= thr), p, alpha, (m,), np.array([T]), np.array([thr]), np.array([p]),
                      "threshold", "none", n, K, 0, 0.0, "T-Cal (fixed scale)",
                      f"Theorem 3 Chebyshev threshold at m = {m} ({how})", target, n_classes=data.n_classes)


@validate_params({
    "alpha": TEST_LEVEL, "resampling": Options(_RESAMPLING),
    "n_resamples": NoneOr(Interval(int, 1, MAX_RESAMPLES)),
    "max_resamples": NoneOr(Interval(int, FIRST_BATCH, MAX_RESAMPLES)), "resampling_risk": UNIT_OPEN,
    "combine": Options(_COMBINE), "class_index": NoneOr(Interval(int, 0, None)), "discrete": NoneOr(BOOLEAN),
    "seed": SEED, "time_budget": NoneOr(Interval(float, 0, None, closed="neither")),
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
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    reuse: TCalResult | None = None,
) -> TCalResult:
    """Adaptive T-Cal: the multi-scale test of calibration of Lee et al., with a p-value.

    The debiased statistic T^d (Lee et al. [1]_, eq. 6; :func:`calviz.debiased_ece`) is computed at every
    dyadic number of bins m = 2^1..2^B and compared with its distribution under calibration; the test
    rejects when some scale rejects at level α/B (Bonferroni; eq. 7 and Algorithm 2 of [1]_).  With
    y-only resampling the critical values come from labels redrawn from the predictions, which makes
    the test exact given the predictions; the number of resamples is chosen sequentially (Notes).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (omitted for CalibrationData).
    alpha : float, default 0.05
        Level in [1e-300, 1) (it is divided among the scales and then divided by; a smaller level would
        underflow to 0).
    resampling : {"y_only", "consistency", "analytic", "threshold"}, default "y_only"
        "y_only" (exactly valid given the predictions), "consistency", "analytic" (scaled chi-square,
        no resampling) or "threshold" (Chebyshev, conservative); see the module docstring.
    n_resamples : int, optional
        None (default) for the sequential rule below; an integer for exactly that many resamples with
        p = (1 + #{T* ≥ T})/(N + 1) per scale.  A fixed count warns when it cannot reject
        (B/(N+1) > α) and when the p-value's Monte Carlo interval contains α (another seed may decide
        otherwise).  At most :data:`MAX_RESAMPLES`, and n·N (×K for full calibration) at most
        :data:`MAX_RESAMPLE_WORK`.
    max_resamples : int, optional
        Cap of the sequential rule (its budget of resamples); default :data:`DEFAULT_MAX_RESAMPLES`
        (10⁵), lowered to :data:`DEFAULT_RESAMPLE_WORK`/n for n > 2·10⁵ (never below one first batch of
        :data:`FIRST_BATCH`).  Same limits as ``n_resamples``.
    resampling_risk : float, default 0.001
        Bound ε on the probability that the sequential decision differs from the decision with
        infinitely many resamples.
    combine : {"bonferroni", "max"}, default "bonferroni"
        "bonferroni" (reject iff min_b p_b ≤ α/B) or "max" (resampling only; max over standardised
        scales against its resampled distribution).
    target : {"auto", "binary", "top1", "classwise", "full"}, default "auto"
        "auto" (binary P(y=1), or top-1 for (n, K) input), "binary", "top1", "classwise" (one class
        with ``class_index``, or all classes with Bonferroni over K when class_index is None: each
        class at α/K with risk ε/K; sequential resampling shares one cap: the classes are tested from
        the smallest analytic p-value on, each with half of what is left (at least 128), and a
        rejection ends the test) or "full" (K-class calibration on the simplex partition).
    class_index : int, optional
        The class of the ``classwise`` target (None: every class).
    discrete : bool, optional
        None detects discrete predictors (1-D targets) and then runs the exact binomial test; True
        forces it, False never uses it.
    seed : int, numpy Generator or None
        Seed of the resampling.
    time_budget : float or None, default None
        The sequential rule's budget of time: at most this many seconds of resampling (None: only the cap
        of resamples limits it; classwise over all classes: one budget for all).  Whichever budget ends
        first, an unsettled decision is "undecided" with its Monte Carlo interval and the analytic
        p-value (``analytic_pvalue``) beside it; the decision itself never depends on the budget when
        it is settled.  With a time budget, whether a borderline case is settled or "undecided" (and
        its interval) depends on the machine's speed; the default, None, gives results that depend on the
        seed alone.
    reuse : TCalResult, optional
        An earlier resampled result of this test on the same data with the same resampling and seed (e.g.
        at another ``alpha``, or with a smaller cap): its resamples are reused — the rule draws only those
        beyond them — and the result equals the one computed without ``reuse`` (with a time budget, reused
        resamples take no time).  InputError when it was computed on other data, resampling or seed, or
        has no resamples; not for ``target="classwise"`` without ``class_index``.

    Returns
    -------
    TCalResult
        ``reject``, ``decision`` ("reject", "accept" or "undecided"), the adjusted ``pvalue`` and its Monte
        Carlo ``pvalue_interval`` (and, when undecided, ``analytic_pvalue``), and per scale the number of
        bins (``n_bins``), the statistic, the critical value and the p-value.

    See Also
    --------
    tcal : The fixed-scale test with Chebyshev's threshold.
    classical_tests : Spiegelhalter, Hosmer–Lemeshow, Cox, Kolmogorov–Smirnov and Kuiper.

    Notes
    -----
    **The sequential rule.**
    Resample r uses its own random stream, so the first N resamples are the same whatever the batches.
    After each batch, scale b's exceedance count S_b = #{T*_b ≥ T_b} of N resamples is compared with the
    level t = α/B (Bonferroni; t = α and the single count of the maximum for "max") through Robbins'
    (1970) beta-binomial mixtures

        M_N(q) = B(1 + S, β + N − S)/B(1, β) / (q^S (1 − q)^{N−S}),

    nonnegative martingales with mean 1 under exceedance probability q.  The rule rejects when the
    average over the scales of M_b(t)·1{S_b < tN} (prior ½ Beta(1, 1/t − 1) + ½ Beta(1, 10/t)) reaches
    1/ε, and accepts when every scale's
    M_b(t)·1{S_b > tN} (β = 1/t − 1) does.  By Ville's inequality a wrong rejection (every p_b > t) has
    probability ≤ ε whatever the dependence between the scales — the average pools the evidence of
    several significant scales — and a wrong acceptance needs the scale with p_b ≤ t to cross, also
    probability ≤ ε: the reported decision differs from the infinite-resample one with probability ≤ ε,
    uniformly in the p-values (the guarantee of Gandy (2009), "Sequential implementation of Monte Carlo
    tests with uniformly bounded resampling risk", with a different boundary; see also Ding, Gandy & Hahn
    (2020)).  The level is therefore ≤ α + ε.  Clear acceptances stop after a few hundred resamples; p-values
    close to α need many: if the cap or the time budget is reached first the result says
    ``decision = "undecided"`` (``reject`` False) with the interval.  A rejection that must resample
    needs about ln(1/ε)/(−ln(1 − α/B)) resamples under any rule with risk ≤ ε (3 313 at n = 10⁴,
    α = 0.05, ε = 10⁻³; the argument is in :func:`calviz._tcal_decision._sequential_resampling`), so for
    y-only resampling (Bonferroni) a rejection is first tried without resampling: Cantelli's inequality
    with the exact conditional null variance, then (1-D targets) a Chernoff bound of the y-only null
    distribution (independent bins, Kearns–Saul sub-Gaussian labels) — either one below α/B at some scale
    settles the rejection with no Monte Carlo error.  For "max" the standardising sd is re-estimated at
    every look, so the guarantee holds for the final standardisation only approximately.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    .. [2] H. Robbins. Statistical methods related to the law of the iterated logarithm. *Annals of
       Mathematical Statistics* 41(5), 1397–1409, 1970.
    .. [3] A. Gandy. Sequential implementation of Monte Carlo tests with uniformly bounded resampling
       risk. *Journal of the American Statistical Association* 104(488), 1504–1511, 2009.

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
    started = _decision.clock()  # the time budget counts the validation and the sort too
    alpha, n_resamples, max_resamples, risk = check_options(
        alpha=alpha, resampling=resampling, n_resamples=n_resamples, max_resamples=max_resamples,
        resampling_risk=resampling_risk, combine=combine, target=target, discrete=discrete)
    drawn = _resamples_of(reuse)
    if target == "classwise" and class_index is None:
        if reuse is not None:
            raise InputError("reuse is not available for target='classwise' over all classes: give "
                             "class_index")
        return _classwise_all(y_true, y_prob, alpha=alpha, resampling=resampling, n_resamples=n_resamples,
                              max_resamples=max_resamples, risk=risk, combine=combine, discrete=discrete,
                              seed=seed, time_budget=time_budget)
    data, target, z, y, K = _prepare(y_true, y_prob, target, 0 if class_index is None else class_index,
                                     "adaptive_tcal")
    sample = _MemorySample(z, y, K, target)
    if time_budget is not None:
        time_budget = max(time_budget - (_decision.clock() - started), 1e-9)
    return with_classes(_adaptive(sample, alpha, resampling, n_resamples, max_resamples, risk, combine,
                                  discrete, seed, time_budget, reuse=drawn), data.n_classes)


def _resamples_of(reuse) -> _decision.Resamples | None:
    """The resamples an earlier result hands to ``adaptive_tcal(..., reuse=...)``."""
    if reuse is None:
        return None
    if not isinstance(reuse, TCalResult) or reuse._draws is None:
        raise InputError("reuse must be an earlier result of adaptive_tcal with resampling='y_only' or "
                         "'consistency' (it keeps its resamples)")
    return reuse._draws


def _classwise_all(y_true, y_prob, *, alpha, resampling, n_resamples, max_resamples, risk, combine, discrete,
                   seed, time_budget=None) -> TCalResult:
    data = validate_once(y_true, y_prob)
    K = data.n_classes
    rng = as_generator(seed)
    n = data.n
    # each class's view sorted once: the analytic ordering pass and its resampled test share it
    samples = [_MemorySample(*(np.ascontiguousarray(a) for a in data.classwise(c)), 2, "classwise")
               for c in range(K)]
    sequential = n_resamples is None and resampling in ("y_only", "consistency")
    order = list(range(K))
    cap = resample_cap(max_resamples, n)
    if sequential:
        # Settling a resampled rejection at α/(K·B) takes ~ln(K/ε)·K·B/α resamples (24 000 for K = 10 and
        # 13 scales): an equal share of the budget per class (cap/K) left nearly every such test undecided.
        # The classes are tested from the smallest analytic p-value on, each with half of what is left (at
        # least one batch): the most significant get room to settle, a borderline one cannot starve the
        # rest (a calibrated class accepts after a few hundred resamples), and a rejection at α/K settles
        # the Bonferroni test.  Each class's cap is fixed before its own resamples are drawn, so its
        # resampling risk stays ε/K (union bound over classes).
        analytic = [_adaptive(sample, alpha / K, "analytic", None, None, risk, combine, discrete, None,
                              small_sample=False).pvalue
                    for sample in samples]
        order = sorted(order, key=lambda c: analytic[c])
    results = {}
    left = cap
    started = _decision.clock()
    for c in order:
        class_cap = max(FIRST_BATCH, left // 2) if sequential else None
        # one time budget for all classes: each class may use half of the time left (as of the cap)
        time_left = None if time_budget is None else max(time_budget - (_decision.clock() - started), 0.0)
        results[c] = _adaptive(samples[c], alpha / K, resampling, n_resamples, class_cap, risk / K, combine,
                               discrete, rng, None if time_left is None else max(time_left / 2, 1e-9))
        left -= results[c].n_resamples
        if sequential and results[c].decision == "reject":
            break
    best = min(results, key=lambda c: results[c].pvalue)
    r = results[best]
    padj = float(min(1.0, K * r.pvalue))
    decisions = [res.decision for res in results.values()]
    decision = ("reject" if "reject" in decisions else "undecided" if "undecided" in decisions else "accept")
    untested = K - len(results)
    shared = (f", resampling risk ε/K, one cap of {cap} resamples: classes from the smallest analytic "
              f"p-value on, each with half of what is left (at least {FIRST_BATCH})") if sequential else ""
    reason = (f"classwise over {K} one-vs-rest targets, Bonferroni over classes (each at level α/K{shared}); "
              f"decisions: {decisions.count('reject')} reject, {decisions.count('accept')} accept, "
              f"{decisions.count('undecided')} undecided"
              f"{f', {untested} not tested (a rejection settled the test)' if untested else ''}; "
              f"smallest p-value for class {best}: {r.reason}")
    low = float(min(1.0, K * min(res.pvalue_interval[0] for res in results.values())))
    high = float(min(1.0, K * min(res.pvalue_interval[1] for res in results.values())))
    return TCalResult(decision == "reject", padj, alpha, r.n_bins, r.statistics, r.critical_values, r.pvalues,
                      r.method, r.combine, r.n, K, int(sum(res.n_resamples for res in results.values())),
                      float(min(1.0, K * r.min_attainable_pvalue)),
                      r.test + ALL_CLASSES, reason, "classwise", r.values, r.counts, decision, (low, high),
                      float(risk if sequential else r.resampling_risk),
                      int(cap if sequential else r.max_resamples), K)


class _MemorySample:
    """The sample of :func:`calviz._tcal_decision.adaptive` held in memory: 1-D predictions sorted once
    (for the discrete check and the scan), the scan order built at the first use."""

    def __init__(self, z, y, K, target):
        self.n, self.K, self.target, self.full = z.shape[0], K, target, target == "full"
        self.z, self.y = (z, y) if self.full else _sort_binary(z, y)
        self._scan = None

    def distinct(self, limit):
        z = self.z
        if z.ndim == 1 and count_runs(z, limit) > limit:
            return None
        starts = np.flatnonzero(np.concatenate(([True], z[1:] != z[:-1])))
        if starts.shape[0] > limit:
            return None
        return z[starts], np.diff(np.append(starts, z.shape[0])), np.add.reduceat(self.y, starts)

    def scan(self, levels):
        if self._scan is None or self._scan.max_level != levels:
            self._scan = _scan_order(self.z, self.y, levels, self.full, presorted=True)
        return self._scan

    def analytic_terms(self, levels):
        # T^d and the moments from one scan with compensated sums (the same numbers as BinSums on Dask)
        scan = self.scan(levels)
        return _k.analytic_terms(scan.split, levels, scan.z, np.ascontiguousarray(scan.y, dtype=np.float64),
                                 scan.kind), ""

    def observed(self, levels):
        scan = self.scan(levels)
        return _k.observed_statistics(scan.split, levels, scan.z, scan.y, scan.kind)

    def null_variance(self, levels):
        scan = self.scan(levels)
        return _k.null_moments(scan.split, levels, scan.z, scan.kind)[0]

    def resample(self, levels, source, base, start, count):
        return _resample(self.scan(levels), levels, source, base, start, count)

    def label_log_probability(self):
        """log P(labels | predictions) under calibration: Bernoulli(z) indicators for a 1-D target,
        Categorical(z) class ids for full calibration."""
        if self.full:
            return full_label_log_probability(self.z, self.y)
        return label_log_probability(self.z, self.y)

    def y_only_log_mgf_bounds(self, levels, level, thetas):
        # the Chernoff certificate of the sequential rule: 1-D targets only (None for full calibration)
        if self.full:
            return None
        scan = self.scan(levels)
        return _k.y_only_log_mgf_bounds(scan.split, level, np.ascontiguousarray(scan.z[:, 0]), thetas)


def _adaptive(sample: _MemorySample, alpha, resampling, n_resamples, max_resamples, risk, combine, discrete,
              seed, time_budget=DEFAULT_TIME_BUDGET, small_sample: bool = True, reuse=None) -> TCalResult:
    """Adaptive T-Cal of an in-memory sample; with ``small_sample`` its p-value is raised to the probability
    of the observed labels under calibration, below which no valid p-value can be (only a resampled
    p-value at tiny n can fall there: below ASYMPTOTIC_MIN_ROWS rows the analytic one is at least
    Cantelli's bound, :func:`calviz._tcal_decision.analytic_decision`)."""
    result = TCalResult(*_adaptive_decision(
        sample, alpha=alpha, resampling=resampling, n_resamples=n_resamples,
        max_resamples=max_resamples, risk=risk, combine=combine, discrete=discrete, seed=seed,
        work_limit=MAX_RESAMPLE_WORK, time_budget=time_budget, reuse=reuse))
    return _floor_at_labels(result, sample.label_log_probability()) if small_sample else result


def _floor_at_labels(result: TCalResult, log_label_probability: float) -> TCalResult:
    """``result`` with its p-value (and the ends of its Monte Carlo interval) raised to the probability of
    the observed labels under calibration; a floor above α settles the decision: not rejected."""
    floor = floor_at_labels(0.0, log_label_probability)
    if not result.pvalue < floor:
        return result
    low, high = result.pvalue_interval
    changes = {"pvalue": floor, "pvalue_interval": (max(float(low), floor), max(float(high), floor)),
               "reason": (f"{result.reason}; p-value raised to {floor:.3g}, the probability of the observed "
                          f"labels under calibration, below which no valid p-value can be")}
    if floor > result.alpha:
        changes.update(reject=False, decision="accept")
    return dataclasses.replace(result, **changes)


def _resample(scan: _ScanOrder, levels: int, source: int, base, start: int, count: int) -> np.ndarray:
    """Resampled statistics (count, levels) of the resamples start..start+count−1 (stream r for resample
    r, so any cut of a run into calls gives the same rows)."""
    if scan.z.shape[0] * count >= _PARALLEL_MIN_WORK:
        return _k.resampled_statistics(scan.split, levels, scan.z, scan.kind, source, base, count, start,
                                       numba.get_num_threads())
    # small jobs run on the calling thread (same output): waking the thread pool would cost more
    return _k.resampled_statistics_serial(scan.split, levels, scan.z, scan.kind, source, base, count, start)


# ------------------------------------------------------------------------------------------------
# sample-splitting test (Sec. 6, Algorithm 3)
# ------------------------------------------------------------------------------------------------
def _chi2_two_sample(v_keys: np.ndarray, w_keys: np.ndarray, n_cells: int) -> float:
    """Γ = Σ_cells (n2·v_cell − n1·w_cell)² (unnormalised chi-square of Arias-Castro et al., App. B.2)."""
    n1, n2 = v_keys.shape[0], w_keys.shape[0]
    cv = np.bincount(v_keys, minlength=n_cells).astype(np.float64)
    cw = np.bincount(w_keys, minlength=n_cells).astype(np.float64)
    return float(((n2 * cv - n1 * cw) ** 2).sum())


@validate_params({"alpha": TEST_LEVEL, "smoothness": POSITIVE_REAL,
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
    """Sample-splitting calibration test ξ^split (Lee et al., Sec. 6, Algorithm 3).

    The rows are split at random (by ``seed``) into halves of ⌊n/2⌋ and ⌈n/2⌉ rows: the first half keeps
    its labels, the second gets synthetic labels ỹ ~ Cat(z).  For each class
    k: reject if |T_{1,k}| = |mean (y − z)_k| or |T_{2,k}| = |mean z_k (y − z)_k| ≥ √(3K/(αn)), or if
    the two-sample test at level α/(3K) says that the predictions of first-half samples with y = k and
    second-half samples with ỹ = k have different distributions.  Two-sample test: the chi-square
    statistic Γ on m* = ⌊min(n₁, n₂)^{2/(4s+d)}⌋ equal-width cells per axis of the first d = K − 1
    coordinates (Lee et al. [1]_, App. B.2, Theorem 19), with permutation critical values (the pooled
    sample is exchangeable under H₀, so the permutation p-value (1 + #{Γ* ≥ Γ})/(P + 1) is exact).
    For 1-D targets K = 2 with classes y = 1 and y = 0 of the binary view.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    alpha : float, default 0.05
        Level of the test, in [1e-300, 1) (each of the 3K components is tested at α/(3K)).
    smoothness : float, default 1.0
        Hölder smoothness s used for the number of cells m*.
    n_permutations : int, optional
        Permutations of each two-sample test; default max(199, ⌈2·3K/α⌉) within the budget (at most
        :data:`MAX_PERMUTATIONS` and :data:`MAX_PERMUTATION_WORK` / (nK)); when the budget is too small
        to reach α/(3K) the reason says so.  An explicit count beyond the budget raises ValueError.
    target : {"auto", "binary", "top1", "classwise", "full"}, default "auto"
        Which probabilities are tested.
    class_index : int, default 0
        The class of the ``classwise`` target.
    seed : int, numpy Generator or None
        Seed of the split, the synthetic labels and the permutations.

    Returns
    -------
    TCalResult
        ``reject``, ``pvalue`` (3K times the smallest sub-test p-value, at most 1), the per-class
        two-sample ``pvalues`` and the ``reason``.

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
    >>> result = calviz.split_tcal(y, p, seed=0)
    >>> result.reject, result.test
    (False, 'sample-splitting T-Cal')
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
        P = check_n_resamples(n_permutations, "n_permutations", MAX_PERMUTATIONS)
        if P * n * K > MAX_PERMUTATION_WORK:
            raise InputError(f"n_permutations = {P} with n = {n} and K = {K} exceeds the permutation work "
                             f"limit of {MAX_PERMUTATION_WORK:.0e} (calviz.tcal.MAX_PERMUTATION_WORK); "
                             f"use at most {max(1, MAX_PERMUTATION_WORK // (n * K))}")
    rng = as_generator(seed)
    # a random split: the halves must be two samples of one distribution, whatever the row order (rows
    # sorted by prediction split by position compare low with high predictions and reject a calibrated model)
    order = rng.permutation(n)
    z, y = z[order], y[order]
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

