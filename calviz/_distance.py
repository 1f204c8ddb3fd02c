"""Distance to calibration and the consistent calibration measures around it (Błasiok, Gopalan,
Hu and Nakkiran, 2023).

For binary predictions v ∈ [0, 1] with labels y ∈ {0, 1} (multi-class models through the top-1 or a
one-vs-rest view) and the *empirical* distribution of the sample:

* :func:`smce` / :func:`smce_witness` — smooth calibration error, exactly, with the optimal
  1-Lipschitz witness (Błasiok et al. 2023, Def. 7.2; Hu et al. (2024), Sec. 3).
* :func:`lower_dce` — the lower distance to calibration by the LP of Błasiok et al. (2023), Lemma 7.10 on a
  grid.
* :func:`rintce`, :func:`sintce` — random / surrogate interval calibration error, exactly (Sec. 6).
* :func:`laplace_kce` — Laplace-kernel calibration error, exactly in O(n log n) (Sec. 8).
* :func:`binned_ece_with_width` — ℓ1 binned ECE plus average bin width (eq. (5)).
* :func:`distance_bounds` — every measure and the interval they imply for the true distance dCE.
* :func:`smce_test` — the tolerant tester of Hu et al. (2024), Thm 3.

Every value here is a property of the empirical distribution of the sample given (finite-sample
statements about the population need the sample-complexity results of the papers, or the bootstrap
bands of :func:`distance_bounds` as a rough guide).  The result objects are defined in
:mod:`calviz._distance_results` and importable from here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from calviz._binning import check_n_bins
from calviz._data import InputError, check_alpha
from calviz._distance_results import (
    BinnedECEWidthResult,
    Bound,
    DistanceBounds,
    KCEResult,
    LowerDCEResult,
    Measure,
    RintCEResult,
    SintCEResult,
    SmCEResult,
    SmCETestResult,
    SmCEWitness,
    _lower_dce_result,
)
from calviz._ece import binned_sums, plugin_ece_l1, prepare_view
from calviz._kernels.distance import (
    laplace_kce_sq_kernel,
    merge_labelled_kernel,
    resolved_ece_kernel,
    rintce_kernel,
    sintce_kernel,
    smce_solve,
)
from calviz._lazy import LazyModule
from calviz._params import (
    BOOLEAN,
    INTERVAL_ALPHA,
    POSITIVE_INT,
    POSITIVE_REAL,
    SEED,
    UNIT_OPEN,
    AnyOf,
    Interval,
    ListOf,
    Options,
    as_generator,
    positional_deprecated,
    validate_params,
)
from calviz.targets import SCALAR_TARGETS

# for the lower distance's LP only, imported at its first use: 0.3 s that `calviz serve` would otherwise
# pay before its first page (the distance view runs in a worker process)
sparse = LazyModule("scipy.sparse")
optimize = LazyModule("scipy.optimize")

__all__ = [
    "SmCEResult",
    "SmCEWitness",
    "LowerDCEResult",
    "RintCEResult",
    "SintCEResult",
    "KCEResult",
    "BinnedECEWidthResult",
    "Bound",
    "Measure",
    "DistanceBounds",
    "SmCETestResult",
    "smce",
    "smce_witness",
    "lower_dce",
    "rintce",
    "sintce",
    "laplace_kce",
    "binned_ece_with_width",
    "distance_bounds",
    "smce_test",
]

#: deepest dyadic scale 2^-k tried by :func:`sintce` (floor(v / 2^-k) must fit in an int64)
_SINTCE_MAX_LEVEL = 60
# Cost model: every measure is O(n log n) except the dCE_lower LP, whose HiGHS time grows like
# (1/grid_step)^2.5 whatever n is (≈ 0.1 s at 1/grid_step = 1000, 0.3–1.5 s at 2000 — up to ~2 s when the
# sample's mass sits at 0 and 1, the worst case the fuzz suite found — 3.5–7 s at 4000, about a minute at
# 10⁴); distance_bounds with resampling repeats everything n_resamples times.
#: largest grid (1/grid_step) accepted by :func:`lower_dce`; the LP has about 6/grid_step variables
MAX_LP_GRID = 2000
#: largest accepted n_resamples × (1000·grid_step)^−2.5 in :func:`distance_bounds`: one LP per resample,
#: counted in LPs of the default grid (100 resamples at grid_step 1e-3, 17 at 5e-4)
MAX_RESAMPLED_LPS = 100
#: largest n_resamples of :func:`distance_bounds` whatever the grid: each resample also recomputes every
#: O(n log n) measure (about 2 ms at n = 60), which the LP count above does not see — with a coarse grid
#: (grid_step=0.5) n_resamples=10**5 took 200 s at n = 60 and 10**8 was accepted
MAX_BOOTSTRAP_RESAMPLES = 10_000


# ------------------------------------------------------------------------------------------------
# the sorted sample
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Sample:
    """Predictions sorted ascending with their labels; every measure is a function of (v, y)."""

    v: np.ndarray
    y: np.ndarray
    target: str
    n_classes: int = 2

    @property
    def n(self) -> int:
        return int(self.v.shape[0])

    @property
    def b(self) -> np.ndarray:
        """Per-sample mass times residual: (y_i − v_i)/n."""
        return (self.y - self.v) / self.n

    def resample(self, rng: np.random.Generator) -> _Sample:
        """Bootstrap resample (with replacement), still sorted: repeat each row by its count."""
        counts = np.bincount(rng.integers(0, self.n, self.n), minlength=self.n)
        return _Sample(np.repeat(self.v, counts), np.repeat(self.y, counts), self.target, self.n_classes)


def _sample(y_true, y_prob, target, class_index, caller: str) -> _Sample:
    # the distance measures are defined for scalar predictions only
    data, target, z, y = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                      allowed=("auto", *SCALAR_TARGETS), caller=caller)
    # sort each label group with np.sort and merge: several times faster than an argsort of z (the
    # order within ties is irrelevant to every measure here)
    ones = y > 0.5
    v, labels = merge_labelled_kernel(np.sort(z[~ones]), np.sort(z[ones]))
    return _Sample(v, labels, target, data.n_classes)


def _positive(value, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a positive number; got {value!r}") from None
    if not (math.isfinite(x) and x > 0.0):
        raise InputError(f"{name} must be a positive finite number; got {value!r}")
    return x


# ------------------------------------------------------------------------------------------------
# smooth calibration error
# ------------------------------------------------------------------------------------------------


def _smce_solution(s: _Sample) -> tuple[np.ndarray, float]:
    # the maximiser does not depend on the scale of b; unscaled residuals keep the kink positions O(1)
    x, total = smce_solve(s.v, s.y - s.v)
    return x, max(float(total) / s.n, 0.0)


@validate_params({})  # no option to check; refuses sample_weight with the one message
def smce(y_true, y_prob=None, *, target: str = "auto", class_index: int = 0) -> SmCEResult:
    """Smooth calibration error of the empirical distribution, computed exactly.

    smCE = max (1/n) Σ_i (y_i − v_i) x_i  s.t.  |x_i| ≤ 1,  |x_i − x_{i+1}| ≤ v_{i+1} − v_i  (sorted v),

    the supremum of E[(y − v) w(v)] over 1-Lipschitz w: [0, 1] → [−1, 1] (Błasiok et al. [1]_, Def. 7.2;
    adjacent constraints suffice, Hu et al. [2]_, Lemma 2).  Solved by an exact O(n log n) dynamic
    program over the conjugates of the concave piecewise-linear value functions; agrees with an LP
    solver to round-off.  Ties and repeated predictions are handled (a zero gap forces equal weights).

    Relation to the distance to calibration ([1]_, Thm 7.3): dCE_lower/5 ≤ smCE ≤ 2·dCE_lower.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    SmCEResult
        ``value`` (smCE of the sample), ``n``, ``target`` and ``n_classes``; :func:`smce_witness` also
        returns w.

    See Also
    --------
    smce_witness : The optimal w.
    distance_bounds : Every distance measure and the bracket they imply for dCE.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.
    .. [2] L. Hu, A. Jambulapati, K. Tian and C. Yang. Testing calibration in nearly-linear time.
       arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> round(calviz.smce(y, p).value, 3)
    0.1
    """
    s = _sample(y_true, y_prob, target, class_index, "smce")
    _, value = _smce_solution(s)
    return SmCEResult(value, s.n, s.target, s.n_classes)


@validate_params({})  # no option to check; refuses sample_weight with the one message
def smce_witness(y_true, y_prob=None, *, target: str = "auto", class_index: int = 0) -> SmCEWitness:
    """The smCE together with an optimal 1-Lipschitz witness w at the sorted predictions.

    The witness attains smCE = (1/n) Σ_i (y_i − v_i) w(v_i) (see :func:`smce`; Błasiok et al. [1]_,
    Def. 7.2).  Among the optimal witnesses this one is chosen by backtracking the dynamic program, always
    taking the optimal value nearest to the next one (and w(v_(n)) nearest to 0).  Where w > 0 the
    outcomes exceed the predictions on average, where w < 0 they fall short.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    SmCEWitness
        ``value`` (smCE), ``predictions`` (sorted v), ``witness`` (w at them), ``labels`` (in the same
        order), ``n``, ``target``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.
    .. [2] L. Hu, A. Jambulapati, K. Tian and C. Yang. Testing calibration in nearly-linear time.
       arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> w = calviz.smce_witness(y, p)
    >>> round(w.value, 3), round(float(np.mean((w.labels - w.predictions) * w.witness)), 3)
    (0.1, 0.1)
    >>> bool(np.all(np.abs(np.diff(w.witness)) <= np.diff(w.predictions) + 1e-12))   # 1-Lipschitz
    True
    """
    s = _sample(y_true, y_prob, target, class_index, "smce_witness")
    x, value = _smce_solution(s)
    return SmCEWitness(value, s.n, s.target, s.v, x, s.y, s.n_classes)


# ------------------------------------------------------------------------------------------------
# lower distance to calibration: LP of Błasiok et al. (2023), Lemma 7.10
# ------------------------------------------------------------------------------------------------


def _grid_size(grid_step) -> int:
    eps = _positive(grid_step, "grid_step")
    if eps * MAX_LP_GRID < 1.0 - 1e-9:
        # (checked before m = round(1/eps): 1/eps overflows to inf for a subnormal step such as 5e-324)
        raise InputError(
            f"grid_step must be at least 1/{MAX_LP_GRID} = {1 / MAX_LP_GRID:g} (the dCE_lower LP's cost "
            f"grows like (1/grid_step)^2.5); got {grid_step!r}"
        )
    m = int(round(1.0 / eps))
    if m < 1 or abs(m * eps - 1.0) > 1e-9:
        raise InputError(f"grid_step must be 1/m for an integer m (e.g. 1e-3); got {grid_step!r}")
    return m


def _lower_dce_lp(v: np.ndarray, y: np.ndarray, m: int) -> float:
    """LP (18) of Błasiok et al. (2023) on the grid k/m, k = 0..m, with unit edge costs (value = optimum / m).

    Variables: per label c ∈ {0,1} the flow on every grid edge k→k+1 split as p − q (p, q ≥ 0), then the
    calibrated masses Λ_c(k) ≥ 0.  Rows: conservation Λ_c(k) + h_c(k) − h_c(k−1) = Γ_c(k), and
    calibration (1 − k/m) Λ_1(k) − (k/m) Λ_0(k) = 0.
    """
    n = v.shape[0]
    idx = np.rint(v * m).astype(np.int64)
    np.clip(idx, 0, m, out=idx)
    ones = y > 0.5
    gamma = [np.bincount(idx[~ones], minlength=m + 1) / n, np.bincount(idx[ones], minlength=m + 1) / n]
    n_edges = m
    n_nodes = m + 1
    # column blocks: p0, q0, p1, q1 (edges) then L0, L1 (nodes)
    col_p = [0, 2 * n_edges]
    col_q = [n_edges, 3 * n_edges]
    col_l = [4 * n_edges, 4 * n_edges + n_nodes]
    n_var = 4 * n_edges + 2 * n_nodes
    rows, cols, vals = [], [], []
    nodes = np.arange(n_nodes)
    edges = np.arange(n_edges)
    for c in (0, 1):
        row0 = c * n_nodes
        rows.append(row0 + nodes)
        cols.append(col_l[c] + nodes)
        vals.append(np.ones(n_nodes))
        # out-flow of node k along edge k (k < m): +h(k) = +p − q
        rows += [row0 + edges, row0 + edges]
        cols += [col_p[c] + edges, col_q[c] + edges]
        vals += [np.ones(n_edges), -np.ones(n_edges)]
        # in-flow of node k+1 along edge k: −h(k)
        rows += [row0 + edges + 1, row0 + edges + 1]
        cols += [col_p[c] + edges, col_q[c] + edges]
        vals += [-np.ones(n_edges), np.ones(n_edges)]
    grid = nodes / m
    row0 = 2 * n_nodes
    rows += [row0 + nodes, row0 + nodes]
    cols += [col_l[1] + nodes, col_l[0] + nodes]
    vals += [1.0 - grid, -grid]
    a_eq = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(3 * n_nodes, n_var)
    )
    b_eq = np.concatenate([gamma[0], gamma[1], np.zeros(n_nodes)])
    cost = np.zeros(n_var)
    cost[: 4 * n_edges] = 1.0
    res = optimize.linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"HiGHS failed on the dCE LP: {res.message}")
    return max(float(res.fun) / m, 0.0)


@validate_params({"grid_step": POSITIVE_REAL})
def lower_dce(
    y_true, y_prob=None, *, grid_step: float = 1e-3, target: str = "auto", class_index: int = 0
) -> LowerDCEResult:
    """Lower distance to calibration of the sample, by the linear program of Błasiok et al.

    dCE_lower = the Wasserstein-1 distance from the sample to the calibrated distributions (Błasiok et
    al. [1]_, Def. 5.3, Lemma 7.6), by the LP of Lemma 7.10 solved with HiGHS.  Predictions are rounded
    to the grid {0, ε, …, 1} (ε = ``grid_step``, 1/ε an integer); the LP moves the label-0 and label-1
    masses along the grid at cost |shift| until every grid point u carries label-1 fraction u.  About
    6/ε variables, independent of n; ε ≥ 1/``MAX_LP_GRID`` (the solver's time grows like ε^−2.5).  The
    result's [lower, upper] brackets the exact dCE_lower of the sample (error ≤ 2ε, Lemmas 7.8–7.9).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    grid_step : float, default 0.001
        ε, the grid step (1/ε an integer).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    LowerDCEResult
        ``value`` (the LP optimum), ``lower`` and ``upper`` (the bracket for the exact dCE_lower),
        ``error_bound``, ``grid_step``, ``n``, ``target``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.lower_dce(y, p, grid_step=0.01)
    >>> round(res.value, 3), res.lower <= res.value <= res.upper
    (0.1, True)
    """
    m = _grid_size(grid_step)
    s = _sample(y_true, y_prob, target, class_index, "lower_dce")
    return _lower_dce_result(_lower_dce_lp(s.v, s.y, m), 1.0 / m, s.n, s.target, s.n_classes)


# ------------------------------------------------------------------------------------------------
# interval calibration errors
# ------------------------------------------------------------------------------------------------


@positional_deprecated("width")
@validate_params({"width": Interval(float, 1e-15, None)})
def rintce(
    y_true, y_prob=None, *, width: float, target: str = "auto", class_index: int = 0
) -> RintCEResult:
    """Random interval calibration error at one width, computed exactly.

    RintCE(ε) = E_{r~U[0,ε)} Σ_{j∈ℤ} |(1/n) Σ_i (y_i − v_i) 1{v_i ∈ [r + jε, r + (j+1)ε)}|
    (Błasiok et al. [1]_, Def. 6.5).  As r sweeps [0, ε) each point changes bin once (at r = v_i mod ε),
    so the inner sum is piecewise constant with ≤ n + 1 pieces: sort by v mod ε and sweep, O(n log n)
    (the paper samples r).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    width : float
        ε, the interval width (keyword-only; positional use is deprecated).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    RintCEResult
        ``value``, ``width``, ``n``, ``target``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> round(calviz.rintce(y, p, width=0.1).value, 3)
    0.102
    """
    w = float(width)
    s = _sample(y_true, y_prob, target, class_index, "rintce")
    return RintCEResult(max(float(rintce_kernel(s.v, s.b, w)), 0.0), w, s.n, s.target, s.n_classes)


def _sintce(s: _Sample) -> SintCEResult:
    best, level, values, n_levels, attained, converged = sintce_kernel(s.v, s.b, _SINTCE_MAX_LEVEL)
    values = np.asarray(values[:n_levels])
    widths = 2.0 ** -np.arange(n_levels, dtype=np.float64)
    width = float(widths[level]) if attained else 0.0
    floor = float(best)
    if not converged:  # needs distinct predictions closer than 2^-60
        floor = min(float(best), float(values[-1]))
        resolved = float(resolved_ece_kernel(s.v, s.b))
        if resolved < best:
            best, width, attained = resolved, 0.0, False
    return SintCEResult(float(best), width, bool(attained), widths, values, s.n, s.target, bool(converged),
                        floor, s.n_classes)


@validate_params({})  # no option to check; refuses sample_weight with the one message
def sintce(y_true, y_prob=None, *, target: str = "auto", class_index: int = 0) -> SintCEResult:
    """Surrogate interval calibration error SintCE = inf_{k ≥ 0} RintCE(2^−k) + 2^−k, computed exactly.

    Błasiok et al. [1]_, Def. 6.10, each RintCE by the exact sweep of :func:`rintce`.  Stopping rule (why
    a finite search is exact): the 2^−(k+1)-grid refines the 2^−k-grid at every shift, so RintCE(2^−k)
    is nondecreasing in k.  Once RintCE(2^−k) ≥ the best value so far, every finer scale gives
    RintCE + width > best and the search stops.  Once 2^−k is no larger than the smallest gap between
    distinct predictions, RintCE stays at the fully resolved ECE E₀ for all finer scales, whose infimum
    E₀ is then compared too.  Successive scales cost O(n) each.

    Bounds ([1]_, Thm 6.11): dCE ≤ dCE_upper ≤ intCE ≤ SintCE ≤ 6 √dCE_lower.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    SintCEResult
        ``value``, the attaining ``width``, the ``widths`` searched and their ``rintce_values``,
        ``converged``, ``floor``, ``n``, ``target``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.sintce(y, p)
    >>> round(res.value, 3), res.width
    (0.123, 0.015625)
    """
    return _sintce(_sample(y_true, y_prob, target, class_index, "sintce"))


# ------------------------------------------------------------------------------------------------
# Laplace kernel calibration error
# ------------------------------------------------------------------------------------------------


def _kce_sq(s: _Sample, bandwidth: float) -> float:
    return max(float(laplace_kce_sq_kernel(s.v, s.b, bandwidth)), 0.0)


@validate_params({"bandwidth": POSITIVE_REAL, "squared": BOOLEAN})
def laplace_kce(
    y_true, y_prob=None, *, bandwidth: float = 1.0, squared: bool = False, target: str = "auto",
    class_index: int = 0,
) -> KCEResult:
    """Laplace kernel calibration error, computed exactly in O(n log n).

    kCE² = (1/n²) Σ_{i,j} (y_i − v_i)(y_j − v_j) exp(−|v_i − v_j| / bandwidth)

    (Błasiok et al. [1]_, Sec. 8), by the two-sided exponential recursion on sorted predictions (the
    paper samples 10n pairs).  With bandwidth 1 (the paper's kernel) smCE/3 ≤ kCE (Thm 8.5) and
    kCE ≤ 2√2·√dCE_lower (Lemma 8.7).  The Gaussian kernel is *not* a consistent measure (Thm 8.6).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    bandwidth : float, default 1.0
        Scale of the Laplace kernel.
    squared : bool, default False
        Return kCE² instead of kCE.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    KCEResult
        ``value``, ``bandwidth``, ``squared``, ``n``, ``target``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> round(calviz.laplace_kce(y, p).value, 3)
    0.089
    """
    h = _positive(bandwidth, "bandwidth")
    s = _sample(y_true, y_prob, target, class_index, "laplace_kce")
    sq = _kce_sq(s, h)
    return KCEResult(sq if squared else math.sqrt(sq), h, bool(squared), s.n, s.target, s.n_classes)


# ------------------------------------------------------------------------------------------------
# binned ECE plus width
# ------------------------------------------------------------------------------------------------


def _binned_with_width(s: _Sample, m: int, scheme: str) -> BinnedECEWidthResult:
    if scheme not in ("equal_width", "equal_mass"):
        raise InputError(
            f"scheme must be 'equal_width' or 'equal_mass' (an interval partition); got {scheme!r}"
        )
    sums, bins, _, _ = binned_sums(s.v, s.y, n_bins=m, scheme=scheme, target="binary")
    ece = plugin_ece_l1(sums)
    if bins is None or bins.edges is None:
        # equal-width fused path, or more bins than the edge table holds (m > MAX_EDGE_TABLE, where
        # np.diff(None) raised a bare ValueError): every interval has width 1/m
        avg_width = 1.0 / m
    else:
        widths = np.diff(bins.edges)[sums.keys]
        avg_width = float(np.dot(sums.count, widths) / s.n)
    return BinnedECEWidthResult(ece + avg_width, ece, avg_width, m, scheme, s.n, s.target, s.n_classes)


@validate_params({"n_bins": POSITIVE_INT, "scheme": Options(("equal_width", "equal_mass"))})
def binned_ece_with_width(
    y_true, y_prob=None, *, n_bins: int = 20, scheme: str = "equal_width", target: str = "auto",
    class_index: int = 0,
) -> BinnedECEWidthResult:
    """The ℓ1 binned ECE plus the average bin width: a certified upper bound on the distance to calibration.

    binnedECE(I) + w(I) with w(I) = Σ_j P(v ∈ I_j)·|I_j| bounds the upper distance to calibration
    (Błasiok et al. [1]_, eq. (5), Thm 6.2 part 1), unlike the ECE alone.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 20
        Number of bins (the paper's experiments use 20 equal-width bins, [1]_, Sec. 10).
    scheme : {"equal_width", "equal_mass"}, default "equal_width"
        Equal widths (w = 1/n_bins), or the adaptive intervals [e_j, e_{j+1}) partitioning [0, 1].
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    BinnedECEWidthResult
        ``value`` = ``ece`` + ``average_width``, with ``n_bins``, ``scheme``, ``n``, ``target``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.binned_ece_with_width(y, p, n_bins=20)
    >>> round(res.ece, 3), res.average_width, round(res.value, 3)
    (0.102, 0.05, 0.152)
    """
    m = check_n_bins(n_bins)
    sample = _sample(y_true, y_prob, target, class_index, "binned_ece_with_width")
    return _binned_with_width(sample, m, scheme)


# ------------------------------------------------------------------------------------------------
# bounds on the distance to calibration
# ------------------------------------------------------------------------------------------------


def _display(meas: dict, cands: list[Bound], bands: dict | None) -> tuple[dict, dict]:
    """Measure name -> :class:`Measure`, and measure name -> the bounds on dCE it implies."""
    best_m = min(meas["binned_ece_width"], key=meas["binned_ece_width"].get)
    values = {k: meas[k] for k in ("smce", "lower_dce", "sintce", "laplace_kce")}
    values["binned_ece_width"] = meas["binned_ece_width"][best_m]
    texts, records = {}, {}
    for key, value in values.items():
        parts = [f"{c.kind} bound {c.value:.4g}: {c.inequality} [{c.source}]" for c in cands
                 if c.measure == key and (key != "binned_ece_width" or c.name.endswith(f"_{best_m}"))]
        texts[key] = "; ".join(parts)
        band = None
        if bands is not None:
            band = bands[f"binned_ece_width_{best_m}" if key == "binned_ece_width" else key]
        records[key] = Measure(key, float(value), texts[key], *(band or (None, None)))
    return records, texts


def _sintce_pair(s: _Sample) -> dict:
    res = _sintce(s)
    return {"sintce": res.value, "sintce_floor": res.floor, "sintce_result": res}


def _measures(s: _Sample, m_grid: int, n_bins: tuple[int, ...]) -> dict:
    _, sm = _smce_solution(s)
    return {
        "smce": sm,
        "lower_dce": _lower_dce_lp(s.v, s.y, m_grid),
        **_sintce_pair(s),
        "laplace_kce": math.sqrt(_kce_sq(s, 1.0)),
        "binned_ece_width": {m: _binned_with_width(s, m, "equal_width").value for m in n_bins},
    }


def _bounds_from(meas: dict, eps: float) -> list[Bound]:
    sm, lp, si, kc = meas["smce"], meas["lower_dce"], meas["sintce"], meas["laplace_kce"]
    out = [
        Bound("lower_dce_lp", "lower", max(lp - 2 * eps, 0.0), "lower_dce",
              f"dCE ≥ dCE_lower ≥ LP_ε − 2ε (ε = {eps:g})",
              "Błasiok et al. (2023), Lemma 5.4; Lemma 7.10 LP with Lemmas 7.8–7.9 grid error"),
        Bound("smce", "lower", sm / 2, "smce", "dCE ≥ dCE_lower ≥ smCE/2",
              "Błasiok et al. (2023), Thm 7.3 (smCE ≤ 2·dCE_lower)"),
        Bound("sintce", "lower", (meas["sintce_floor"] / 6) ** 2, "sintce", "dCE ≥ dCE_lower ≥ (SintCE/6)²",
              "Błasiok et al. (2023), Thm 6.11 (SintCE ≤ 6√dCE_lower)"),
        Bound("laplace_kce", "lower", kc ** 2 / 8, "laplace_kce", "dCE ≥ dCE_lower ≥ (kCE/(2√2))²",
              "Błasiok et al. (2023), Lemma 8.7 (|kCE(Γ₁) − kCE(Γ₂)| ≤ 2√(2ε)), kCE = 0 when calibrated"),
        Bound("sintce", "upper", si, "sintce", "dCE ≤ dCE_upper ≤ intCE ≤ SintCE",
              "Błasiok et al. (2023), Lemma 5.4, Thm 6.2, Thm 6.11"),
    ]
    for m, value in meas["binned_ece_width"].items():
        out.append(Bound(f"binned_ece_width_{m}", "upper", value, "binned_ece_width",
                         f"dCE ≤ dCE_upper ≤ binnedECE(I) + w(I), I = {m} equal-width bins",
                         "Błasiok et al. (2023), eq. (5), Thm 6.2 part 1"))
    out.append(Bound("smce", "upper", 4 * math.sqrt(5 * sm), "smce",
                     "dCE ≤ intCE ≤ 4√dCE_lower ≤ 4√(5·smCE)",
                     "Błasiok et al. (2023), Thm 6.2 (intCE ≤ 4√dCE_lower), Thm 7.3 (dCE_lower ≤ 5·smCE)"))
    return out


def _check_bins_tuple(n_bins) -> tuple[int, ...]:
    """The distinct bin counts, ascending (``n_bins`` as :func:`distance_bounds` declares it)."""
    counts = (n_bins,) if isinstance(n_bins, (int, np.integer)) else n_bins
    return tuple(sorted({check_n_bins(m) for m in counts}))  # (check_n_bins: at most 2^40 bins)


@validate_params({"grid_step": POSITIVE_REAL, "n_resamples": Interval(int, 0, MAX_BOOTSTRAP_RESAMPLES),
                  "alpha": UNIT_OPEN, "seed": SEED,
                  "n_bins": AnyOf(POSITIVE_INT, ListOf(POSITIVE_INT, (1, None)))})
def distance_bounds(
    y_true, y_prob=None, *, grid_step: float = 1e-3, n_bins: Sequence[int] = (5, 10, 15, 20, 30, 50),
    n_resamples: int = 0, alpha: float = INTERVAL_ALPHA, seed=None, target: str = "auto",
    class_index: int = 0,
) -> DistanceBounds:
    """Every distance measure of the sample and the bounds they imply on the distance to calibration.

    Computes smCE, dCE_lower (grid LP, step ``grid_step``), SintCE, Laplace kCE (bandwidth 1, the kernel
    of Błasiok et al. [1]_, Thm 8.5) and binnedECE + width for each equal-width bin count in ``n_bins``,
    then (proven constants only)

        lower = max(dCE_lower − 2ε, smCE/2, (SintCE/6)², (kCE/(2√2))²)
        upper = min(SintCE, binnedECE(I) + w(I), 4√(5·smCE)),

    recording for each candidate the inequality and theorem it comes from.  All statements concern the
    empirical distribution of the given sample.  ``n_resamples`` > 0 adds percentile bootstrap bands
    (level 1 − ``alpha``, reproducible with ``seed``) for every measure and for lower/upper.

    Cost: O(n log n) plus one grid LP per sample; ``grid_step`` ≥ 1/``MAX_LP_GRID``,
    ``n_resamples`` · (1000·``grid_step``)^−2.5 ≤ ``MAX_RESAMPLED_LPS`` and ``n_resamples`` ≤
    ``MAX_BOOTSTRAP_RESAMPLES`` (10⁴), else ValueError.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    grid_step : float, default 0.001
        ε of the dCE_lower LP.
    n_bins : sequence of int, default (5, 10, 15, 20, 30, 50)
        Equal-width bin counts for binnedECE + width.
    n_resamples : int, default 0
        Bootstrap resamples for the bands (0: no bands; at most 10⁴).
    alpha : float, default 0.1
        The bands have level 1 − α.
    seed : int, numpy Generator or None
        Seed of the bootstrap.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    DistanceBounds
        ``lower``, ``upper``, the winning bounds and every measure.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.
    .. [2] L. Hu, A. Jambulapati, K. Tian and C. Yang. Testing calibration in nearly-linear time.
       arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> round(b.lower, 3), round(b.upper, 3)
    (0.08, 0.123)
    >>> b.lower <= b.smce * 2 and b.upper <= b.sintce
    True
    """
    m_grid = _grid_size(grid_step)
    eps = 1.0 / m_grid
    bins = _check_bins_tuple(n_bins)
    lp_cost = (m_grid / 1000) ** 2.5  # the LP's time relative to the default grid's
    if n_resamples * lp_cost > MAX_RESAMPLED_LPS:
        most = math.floor(MAX_RESAMPLED_LPS / lp_cost)
        raise InputError(
            f"n_resamples must be at most {most} at grid_step {eps:g} (one dCE_lower LP per resample, "
            f"{MAX_RESAMPLED_LPS} LPs of the default grid at most); got {n_resamples}"
        )
    a = check_alpha(alpha)
    s = _sample(y_true, y_prob, target, class_index, "distance_bounds")

    meas = _measures(s, m_grid, bins)
    cands = _bounds_from(meas, eps)
    lower_bound = max((c for c in cands if c.kind == "lower"), key=lambda c: c.value)
    upper_bound = min((c for c in cands if c.kind == "upper"), key=lambda c: c.value)

    bands = None
    if n_resamples > 0:
        rng = as_generator(seed)
        keys = ["smce", "lower_dce", "sintce", "laplace_kce"] + [f"binned_ece_width_{m}" for m in bins]
        draws = {k: np.empty(n_resamples) for k in keys + ["lower", "upper"]}
        for t in range(n_resamples):
            mt = _measures(s.resample(rng), m_grid, bins)
            for k in ("smce", "lower_dce", "sintce", "laplace_kce"):
                draws[k][t] = mt[k]
            for m in bins:
                draws[f"binned_ece_width_{m}"][t] = mt["binned_ece_width"][m]
            ct = _bounds_from(mt, eps)
            draws["lower"][t] = max(c.value for c in ct if c.kind == "lower")
            draws["upper"][t] = min(c.value for c in ct if c.kind == "upper")
        bands = {k: (float(np.quantile(d, a / 2)), float(np.quantile(d, 1 - a / 2)))
                 for k, d in draws.items()}

    records, texts = _display(meas, cands, bands)
    return DistanceBounds(
        lower_bound.value, upper_bound.value, lower_bound, upper_bound, records, texts, meas["smce"],
        meas["lower_dce"], eps,
        meas["sintce"], meas["laplace_kce"], dict(meas["binned_ece_width"]), tuple(cands), bands,
        int(n_resamples), a, s.n, s.target, s.n_classes, meas["sintce_result"],
    )


# ------------------------------------------------------------------------------------------------
# tolerant tester (Hu et al. 2024, Thm 3)
# ------------------------------------------------------------------------------------------------


@positional_deprecated("eps0", "eps1")
@validate_params({"eps0": Interval(float, 0, 1), "eps1": Interval(float, 0, 1)})
def smce_test(
    y_true, y_prob=None, *, eps0: float, eps1: float, target: str = "auto", class_index: int = 0
) -> SmCETestResult:
    """Tolerant calibration tester of Hu et al.: "dCE ≤ ε₀" (answer "yes") versus "dCE ≥ ε₁" ("no").

    Hu et al. [1]_, Thm 3: with a = ε₁/2 − 2ε₀ (must be > 0, i.e. ε₁ > 4ε₀), answer "yes" iff
    smCE(sample) ≤ 2ε₀ + a/2.  Correct with probability ≥ 2/3 once n ≥ C/a² (C a universal constant
    not given explicitly).  Caveat: the "no" side uses smCE ≥ dCE/2 as quoted in [1]_ (Lemma 12);
    Błasiok et al. [2]_, Thm 7.3 proves only smCE ≥ dCE_lower/5, so the proven guarantee for the "no"
    side needs ε₁/5 − 2ε₀ > 0 instead.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    eps0, eps1 : float
        ε₀ < ε₁/4 in [0, 1] (keyword-only; positional use is deprecated).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction v whose calibration is measured ("auto": binary for 1-D input, the top-1
        confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    SmCETestResult
        ``calibrated`` (bool), ``answer`` ("yes" / "no"), ``smce``, ``threshold``, ``eps0``, ``eps1``,
        ``a``, ``n``, ``target``.

    References
    ----------
    .. [1] L. Hu, A. Jambulapati, K. Tian and C. Yang. Testing calibration in nearly-linear time.
       arXiv preprint, 2024.
    .. [2] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.smce_test(y, p, eps0=0.01, eps1=0.2)
    >>> res.answer, round(res.threshold, 3)
    ('no', 0.06)
    """
    try:
        e0, e1 = float(eps0), float(eps1)
    except (TypeError, ValueError):
        raise InputError(f"eps0 and eps1 must be numbers; got {eps0!r}, {eps1!r}") from None
    if not (math.isfinite(e0) and math.isfinite(e1) and 0.0 <= e0 < e1 <= 1.0):
        raise InputError(f"need 0 ≤ eps0 < eps1 ≤ 1; got eps0={eps0!r}, eps1={eps1!r}")
    a = e1 / 2 - 2 * e0
    if not a > 0:
        raise InputError(f"the tolerant tester (Hu et al. 2024, Thm 3) needs a = eps1/2 − 2·eps0 > 0 "
                         f"(eps1 > 4·eps0); got a = {a:g}")
    s = _sample(y_true, y_prob, target, class_index, "smce_test")
    _, value = _smce_solution(s)
    threshold = 2 * e0 + a / 2
    ok = value <= threshold
    return SmCETestResult(bool(ok), "yes" if ok else "no", value, threshold, e0, e1, a, s.n, s.target,
                          s.n_classes)
