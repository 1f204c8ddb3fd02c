"""Confidence interval for the ℓ2 ECE (Sun, Chaudhari, Barnett and Dobriban, 2024, "A confidence interval for
the expected calibration error", eq. 5 and Algorithm 1).

With the within-bin unbiased statistic T (Sun et al. 2024, eq. 4), the mis-calibrated-regime variance σ̂₁²
(s = √(max(σ̂₁², 0)/n)) and the exact conditional null sd sd₀ = √Var₀(T | Z), z₁ = Φ⁻¹(1 − α),
z₂ = Φ⁻¹(1 − α/2) and T₊ = max(T, 0):

    U = T₊ + z₂ s
    L = T₊ − z₂ s             if T₊ ≥ 2 z₂ s
      = T₊ / 2                if 2 z₁ s ≤ T₊ < 2 z₂ s
      = max(T₊ − z₁ s, 0)     if T₊ < 2 z₁ s
    L = 0                     if T₊ < z₁ sd₀ (the test of calibration does not reject)

is a 1 − α interval for the binned ECE²; [√L, √U] for the binned ECE.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from calviz._binning import check_n_bins
from calviz._data import InputError, check_alpha
from calviz._ece import (
    BinSums,
    binned_sums,
    miscalibrated_variance,
    null_variance,
    prepare_view,
    unbiased_ece_sq,
)
from calviz._kernels.ece import bootstrap_unbiased_kernel
from calviz._lazy import LazyModule
from calviz._params import (
    INTERVAL_ALPHA,
    POSITIVE_INT,
    SEED,
    UNIT_OPEN,
    Interval,
    Options,
    kernel_seed,
    validate_params,
)
from calviz._results import HasInterval, ResultMixin
from calviz._small_n import INTERVAL_MIN_ROWS

stats = LazyModule("scipy.stats")
special = LazyModule("scipy.special")

__all__ = ["ECEInterval", "BootstrapDraws", "ece_interval", "ece_ci", "interval_from_sums",
           "small_sample_note", "bootstrap_at_alpha"]

#: Largest accepted ``n_resamples`` of the bootstrap interval.
MAX_RESAMPLES = 100_000
#: Work budget of the bootstrap interval: resamples × n × k (one pass over the n rows of k coordinates
#: per resample, ≈ 1 ns each).  Above it the interval uses fewer resamples and ``regime`` says so.
BOOTSTRAP_WORK_BUDGET = 2 * 10**9


#: what an interval below that range says (``ECEInterval.small_sample_note``): the one text of it
SMALL_SAMPLE_NOTE = (
    "n = {n} is below the {min_rows} rows from which this interval's coverage was checked by simulation "
    "for a {kind} target: with few rows a bin, bins holding one row bias the statistic down and the "
    "interval can cover less than its level (the percentile bootstrap covers less still). Use fewer bins; "
    "whether the model is calibrated at all is better read from T-Cal's resampled test, exact given the "
    "predictions"
)


def small_sample_note(n: int, dim: int = 1) -> str:
    """:data:`SMALL_SAMPLE_NOTE` for an interval on n rows of a target with ``dim`` coordinates (1: scalar)
    below ``INTERVAL_MIN_ROWS`` of its kind; "" otherwise."""
    kind = "scalar" if int(dim) == 1 else "vector"
    if n >= INTERVAL_MIN_ROWS[kind]:
        return ""
    return SMALL_SAMPLE_NOTE.format(n=n, min_rows=INTERVAL_MIN_ROWS[kind], kind=kind)


@dataclass(frozen=True, repr=False)
class ECEInterval(HasInterval, ResultMixin):
    """A confidence interval for the binned ℓ2 ECE and for ECE², returned by :func:`ece_interval`.

    Attributes
    ----------
    estimate, low, high : float
        Point estimate √T₊ and the interval on the ℓ2-ECE scale (``confidence_interval()``).
    estimate_sq, low_sq, high_sq : float
        The same on the ECE² scale (``estimate_sq`` = T₊ = max(T, 0)).
    statistic : float
        T itself (Sun et al.'s unbiased statistic; may be negative).
    se : float
        s, the miscalibrated-regime standard error of T.
    null_sd : float
        sd₀, the exact conditional standard deviation of T under calibration.
    level, alpha : float
        Confidence level 1 − α and α.
    n, n_bins, n_nonempty : int
        Sample size, bins per axis and non-empty bins.
    method : str
        "asymptotic" or "bootstrap".
    regime : str
        Which rule set the lower end (for the bootstrap: the resamples drawn).
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    small_sample_note : str
        Empty when n is in the range where the asymptotic interval's coverage was checked by simulation
        (``calviz._small_n.INTERVAL_MIN_ROWS``: 20 rows for a scalar target, 1000 for a vector one);
        otherwise what that means for reading it (:data:`SMALL_SAMPLE_NOTE`).
    """

    estimate: float
    low: float
    high: float
    estimate_sq: float
    low_sq: float
    high_sq: float
    statistic: float
    se: float
    null_sd: float
    level: float
    alpha: float
    n: int
    n_bins: int
    n_nonempty: int
    method: str
    regime: str
    target: str = "binary"
    n_classes: int | None = None
    small_sample_note: str = ""
    #: the bootstrap's resampled statistics (``method="bootstrap"``): the interval at another α is their
    #: quantiles (:func:`bootstrap_at_alpha`), no resampling again
    _draws: BootstrapDraws | None = field(default=None, repr=False, compare=False)

    @property
    def reliable(self) -> bool:
        """Whether the sample is in the range where the interval's coverage was checked (no
        ``small_sample_note``)."""
        return not self.small_sample_note


@dataclass(frozen=True, repr=False)
class BootstrapDraws:
    """The resampled statistics of a percentile-bootstrap interval, kept with it (``ECEInterval._draws``).

    Attributes
    ----------
    statistics : ndarray of shape (R,)
        The statistic T of each of the R resamples of pairs.
    max_sq : float
        The largest ECE² of the target (1 scalar, 2 vector): the interval's ends are clipped to
        [0, ``max_sq``].
    """

    statistics: np.ndarray
    max_sq: float


def _percentile_ends(draws: BootstrapDraws, alpha: float) -> tuple[float, float]:
    """(low, high) on the ECE² scale: the α/2 and 1 − α/2 quantiles of the draws, clipped to the range."""
    low = min(max(float(np.quantile(draws.statistics, alpha / 2.0)), 0.0), draws.max_sq)
    high = min(max(float(np.quantile(draws.statistics, 1.0 - alpha / 2.0)), 0.0), draws.max_sq)
    return low, high


def bootstrap_at_alpha(result: ECEInterval, alpha: float) -> ECEInterval:
    """The percentile-bootstrap interval ``result`` at level 1 − ``alpha`` from its stored resamples: equal
    to :func:`ece_interval` with ``method="bootstrap"``, the same seed and resamples and this α.

    Parameters
    ----------
    result : ECEInterval
        A bootstrap interval computed by :func:`ece_interval` (it carries its resampled statistics).
    alpha : float
        The new α.

    Returns
    -------
    ECEInterval
        The interval at level 1 − α (its resamples kept).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz._intervals import bootstrap_at_alpha
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> boot = calviz.ece_interval(y, p, n_bins=10, method="bootstrap", n_resamples=200, seed=0)
    >>> again = bootstrap_at_alpha(boot, 0.2)
    >>> fresh = calviz.ece_interval(y, p, n_bins=10, method="bootstrap", n_resamples=200, seed=0, alpha=0.2)
    >>> (again.low, again.high) == (fresh.low, fresh.high)
    True
    """
    alpha = check_alpha(alpha)
    draws = getattr(result, "_draws", None)
    if not isinstance(result, ECEInterval) or draws is None:
        raise InputError("bootstrap_at_alpha needs a bootstrap ECEInterval that carries its resamples "
                         "(ece_interval(..., method='bootstrap'))")
    low_sq, high_sq = _percentile_ends(draws, alpha)
    return dataclasses.replace(result, low=float(np.sqrt(low_sq)), high=float(np.sqrt(high_sq)),
                               low_sq=low_sq, high_sq=high_sq, level=1.0 - alpha, alpha=alpha)


def _interval(T: float, s: float, sd0: float, alpha: float) -> tuple[float, float, str]:
    """(L, U, regime) of the interval's case rule (Sun et al. 2024, Algorithm 1) on the ECE² scale (before
    clipping to the range)."""
    z1 = float(special.ndtri(1.0 - alpha))  # = norm.ppf, without scipy.stats' per-call overhead
    z2 = float(special.ndtri(1.0 - alpha / 2.0))
    t = max(T, 0.0)
    upper = t + z2 * s
    if t >= 2.0 * z2 * s:
        lower, regime = t - z2 * s, "far: T+ >= 2 z2 s, L = T+ - z2 s"
    elif t >= 2.0 * z1 * s:
        lower, regime = t / 2.0, "middle: 2 z1 s <= T+ < 2 z2 s, L = T+/2"
    else:
        lower, regime = max(t - z1 * s, 0.0), "near: T+ < 2 z1 s, L = max(T+ - z1 s, 0)"
    if t < z1 * sd0:
        lower, regime = 0.0, "calibrated: T+ < z1 null_sd, L = 0"
    return lower, upper, regime


def _max_ece_sq(dim: int) -> float:
    """Largest possible ECE²: 1 for a scalar target, 2 for a vector (two points of the simplex are at
    squared distance ≤ 2)."""
    return 1.0 if dim == 1 else 2.0


def interval_from_sums(
    sums: BinSums, alpha: float = INTERVAL_ALPHA, *, n_bins: int = 0, target: str = "binary",
    n_classes: int | None = None,
) -> ECEInterval:
    """The asymptotic ECE interval of Sun et al. from merged per-bin sums.

    In-memory (:func:`ece_interval`) and distributed (:mod:`calviz.dask`) intervals are finalised by this
    one function.

    With the within-bin unbiased statistic T (Sun et al. [1]_, eq. 4; :func:`unbiased_ece`), the
    miscalibrated-regime variance estimate σ̂₁² (eqs. 6–7; s = √(max(σ̂₁², 0)/n)), the exact conditional
    null standard deviation sd₀ = √Var₀(T | Z), z₁ = Φ⁻¹(1 − α), z₂ = Φ⁻¹(1 − α/2) and T₊ = max(T, 0),
    the interval for the binned ECE² is [L, U] (eq. 5, Algorithm 1):

        U = T₊ + z₂ s
        L = T₊ − z₂ s             if T₊ ≥ 2 z₂ s
          = T₊ / 2                if 2 z₁ s ≤ T₊ < 2 z₂ s
          = max(T₊ − z₁ s, 0)     if T₊ < 2 z₁ s
        L = 0                     if T₊ < z₁ sd₀ (the test of calibration does not reject)

    and [√L, √U] for the binned ℓ2 ECE; both ends are clipped to the parameter's range (ECE² ≤ 1 for a
    scalar target, ≤ 2 for a vector).

    Parameters
    ----------
    sums : BinSums
        Per-bin sufficient statistics (:func:`calviz._sums.bin_sums`), possibly merged from chunks.
    alpha : float, default 0.1
        The interval has confidence 1 − α.
    n_bins : int, default 0
        Bins per axis, only recorded in the result (0: not recorded).
    target : str, default "binary"
        The calibration target, recorded in the result.
    n_classes : int, optional
        Classes of the input, recorded in the result.

    Returns
    -------
    ECEInterval
        As :func:`ece_interval` with ``method="asymptotic"``.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> from calviz._binning import assign_bins
    >>> from calviz._intervals import interval_from_sums
    >>> from calviz._sums import bin_sums
    >>> sums = bin_sums(assign_bins(p, n_bins=10), p, y.astype(float))
    >>> ci = interval_from_sums(sums, 0.1, n_bins=10)
    >>> round(ci.low, 3), round(ci.high, 3)
    (0.091, 0.125)
    """
    alpha = check_alpha(alpha)
    n_bins = 0 if isinstance(n_bins, (int, np.integer)) and n_bins == 0 else check_n_bins(n_bins)
    if not isinstance(sums, BinSums):
        raise InputError(f"sums must be a BinSums; got {type(sums).__name__}")
    n = sums.n_total
    if n <= 0:
        raise InputError("no samples: the BinSums are empty")
    T = unbiased_ece_sq(sums)
    s = float(np.sqrt(max(miscalibrated_variance(sums), 0.0) / n))
    sd0 = float(np.sqrt(null_variance(sums, "unbiased")))
    lower, upper, regime = _interval(T, s, sd0, alpha)
    top = _max_ece_sq(sums.dim)
    lower, upper = min(lower, top), min(upper, top)
    t = min(max(T, 0.0), top)
    return ECEInterval(
        estimate=float(np.sqrt(t)), low=float(np.sqrt(lower)), high=float(np.sqrt(upper)),
        estimate_sq=t, low_sq=float(lower), high_sq=float(upper), statistic=float(T), se=s, null_sd=sd0,
        level=1.0 - alpha, alpha=alpha, n=int(n), n_bins=int(n_bins), n_nonempty=sums.n_nonempty,
        method="asymptotic", regime=regime, target=target, n_classes=n_classes,
        small_sample_note=small_sample_note(int(n), sums.dim),
    )


@validate_params({"n_bins": POSITIVE_INT, "alpha": UNIT_OPEN, "method": Options(("asymptotic", "bootstrap")),
                  "n_resamples": Interval(int, 2, MAX_RESAMPLES), "seed": SEED})
def ece_interval(
    y_true, y_prob=None, *, n_bins: int = 15, alpha: float = INTERVAL_ALPHA, top_k: int = 1,
    method: Literal["asymptotic", "bootstrap"] = "asymptotic", n_resamples: int = 1000, seed=None,
    target: str = "auto", class_index: int = 0,
) -> ECEInterval:
    """Confidence interval for the binned ℓ2 ECE (Sun et al.'s asymptotic interval, or a bootstrap).

    The binned ℓ2 ECE with m = ``n_bins`` equal-width bins per axis.  1-D binary input targets
    P(y = 1); (n, K) input targets top-1-to-k calibration with ``top_k`` (k = 1: the confidence),
    binned on the cubic grid of the sorted top-k vector (Sun et al. [1]_, Sec. 2), or, with
    ``target="full"``, full calibration E[y | z] = z: the probability vector itself on the m^(K−1)
    equal-volume cells of the simplex, the partition of :func:`debiased_ece` and :func:`adaptive_tcal`
    (Lee et al. [2]_).  Sorting forgets which class has which probability, so top-1-to-K calibration is
    weaker than full calibration: a binary model whose P(y = 1) is 0.1 too low everywhere, on
    predictions symmetric about 1/2, is top-1-to-2 calibrated.  The interval's asymptotics hold
    for any fixed partition.

    ``method="asymptotic"`` (default, no resampling).  With the within-bin unbiased statistic T (Sun et
    al. [1]_, eq. 4; :func:`unbiased_ece`), the miscalibrated-regime variance estimate σ̂₁² (eqs. 6–7;
    s = √(max(σ̂₁², 0)/n)), the exact conditional null standard deviation sd₀ = √Var₀(T | Z),
    z₁ = Φ⁻¹(1 − α), z₂ = Φ⁻¹(1 − α/2) and T₊ = max(T, 0), the interval for the binned ECE² is [L, U]
    (eq. 5, Algorithm 1):

        U = T₊ + z₂ s
        L = T₊ − z₂ s             if T₊ ≥ 2 z₂ s
          = T₊ / 2                if 2 z₁ s ≤ T₊ < 2 z₂ s
          = max(T₊ − z₁ s, 0)     if T₊ < 2 z₁ s
        L = 0                     if T₊ < z₁ sd₀ (the test of calibration does not reject)

    and [√L, √U] for the binned ℓ2 ECE; both ends are clipped to the parameter's range (ECE² ≤ 1 for a
    scalar target, ≤ 2 for a vector).

    A bin holding one point contributes nothing to T, so E[T] = ECE²_m − Σ_b ‖μ_b‖² p_b (1 − p_b)^(n−1)
    (μ_b the bin's mean residual, p_b its probability): with many sparsely filled bins — a vector target
    with m bins per axis, or tiny n — T is biased down and the interval covers less than its level (a
    confident 10-class model, top-3 with 15 bins per axis: 0.854 and 0.881 at n = 100 and 300 for 0.9).
    Fewer bins keep every bin populated.

    ``method="bootstrap"``: the percentile bootstrap of T, resampling (z, y) pairs ``n_resamples`` times
    (reproducible with ``seed``), clipped at 0 on the ECE² scale — the baseline Sun et al. show to
    under-cover.  Cost of the bootstrap: ``n_resamples`` × n × k ≤ ``BOOTSTRAP_WORK_BUDGET``; above it
    fewer resamples are drawn and ``regime`` says how many.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_bins : int, default 15
        Equal-width bins per axis.
    alpha : float, default 0.1
        The interval has confidence 1 − α.
    top_k : int, default 1
        k of the top-1-to-k target for (n, K) input.
    method : {"asymptotic", "bootstrap"}, default "asymptotic"
        The interval of Sun et al. [1]_ (no resampling), or the percentile bootstrap of the same statistic.
    n_resamples : int, default 1000
        Bootstrap resamples.
    seed : int, numpy Generator or None
        Seed of the bootstrap.
    target : {"auto", "binary", "top1", "classwise", "topk", "full"}, default "auto"
        As for :func:`calviz.binned_ece`.
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    ECEInterval
        ``estimate`` = √max(T, 0), ``low``, ``high`` (the ℓ2-ECE scale) and the same on the squared scale
        (``estimate_sq``, ``low_sq``, ``high_sq``), ``level``, ``regime`` (which case set the lower end),
        the standard errors and the bins.

    See Also
    --------
    unbiased_ece : The statistic T.
    compare : The interval for the difference of two models' ECE² on the same examples.

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
    >>> ci = calviz.ece_interval(y, p, n_bins=10, alpha=0.1)
    >>> round(ci.estimate, 3), round(ci.low, 3), round(ci.high, 3), ci.level
    (0.11, 0.091, 0.125, 0.9)
    >>> boot = calviz.ece_interval(y, p, n_bins=10, method="bootstrap", n_resamples=200, seed=0)
    >>> boot.low <= boot.high
    True
    """
    m = check_n_bins(n_bins)
    data, target, z, y = prepare_view(y_true, y_prob, target=target, top_k=top_k, class_index=class_index,
                                      integer_labels=True, caller="ece_interval")
    sums, bins, _, _ = binned_sums(z, y, n_bins=m, scheme="equal_width", target=target)
    asym = interval_from_sums(sums, alpha, n_bins=m, target=target, n_classes=data.n_classes)
    if method == "asymptotic":
        return asym
    asked = int(n_resamples)
    R = bootstrap_resamples(z.size, asked)
    if bins is None:  # fused 1-D path did not materialise ids
        from calviz._binning import assign_bins

        bins = assign_bins(z, n_bins=m, scheme="equal_width")
    v = np.ascontiguousarray((y - z).reshape(z.shape[0], -1))
    reps = bootstrap_unbiased_kernel(bins.ids, bins.n_nonempty, v, R, kernel_seed(seed, high=2**31 - 1))
    return bootstrap_from_replicates(asym, reps, asked, alpha, v.shape[1])


def bootstrap_resamples(n_values: int, asked: int) -> int:
    """Resamples the bootstrap interval draws for ``n_values`` = n·k numbers: ``asked`` within the work
    budget n_resamples·n·k ≤ :data:`BOOTSTRAP_WORK_BUDGET`, and at least 2."""
    return max(2, min(int(asked), BOOTSTRAP_WORK_BUDGET // max(1, int(n_values))))


def bootstrap_from_replicates(asym: ECEInterval, reps: np.ndarray, asked: int, alpha: float,
                              k: int) -> ECEInterval:
    """The percentile-bootstrap :class:`ECEInterval` from its replicates ``reps`` of T (of ``asked``
    resamples asked) and the asymptotic interval ``asym`` of the same rows, bins and target."""
    R = int(reps.shape[0])
    draws = BootstrapDraws(reps, _max_ece_sq(k))
    lo_sq, hi_sq = _percentile_ends(draws, alpha)
    regime = f"percentile bootstrap, {R} resamples of pairs"
    if R < asked:
        regime += f" ({asked} asked; work budget n_resamples·n·k ≤ {BOOTSTRAP_WORK_BUDGET:.0e})"
    return ECEInterval(
        estimate=asym.estimate, low=float(np.sqrt(lo_sq)), high=float(np.sqrt(hi_sq)),
        estimate_sq=asym.estimate_sq, low_sq=lo_sq, high_sq=hi_sq, statistic=asym.statistic,
        se=float(np.std(reps, ddof=1)), null_sd=asym.null_sd, level=1.0 - alpha, alpha=alpha, n=asym.n,
        n_bins=asym.n_bins, n_nonempty=asym.n_nonempty, method="bootstrap",
        regime=regime, target=asym.target, n_classes=asym.n_classes, small_sample_note=asym.small_sample_note,
        _draws=draws,
    )


def ece_ci(y_true, y_prob=None, **options) -> ECEInterval:
    """Deprecated alias of :func:`ece_interval`; it will be removed in the next release.

    Parameters
    ----------
    y_true, y_prob : array-like
        As for :func:`ece_interval`.
    **options
        Keywords of :func:`ece_interval`.

    Returns
    -------
    ECEInterval
        The result of ``ece_interval(y_true, y_prob, **options)``.

    Examples
    --------
    >>> import warnings
    >>> import calviz
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     ci = calviz.ece_ci([0, 1, 1, 0, 1, 1], [0.2, 0.7, 0.9, 0.4, 0.6, 0.8], n_bins=2)
    >>> caught[0].category.__name__, ci.n
    ('DeprecationWarning', 6)
    """
    warnings.warn("calviz.ece_ci is deprecated; use calviz.ece_interval", DeprecationWarning, stacklevel=2)
    return ece_interval(y_true, y_prob, **options)
