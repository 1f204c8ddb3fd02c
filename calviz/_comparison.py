"""Comparisons: two models on the same examples, and one model across subgroups.

* :func:`compare` — the paired difference of the debiased ECE² of two models evaluated on the same
  examples, with a confidence interval and a test of equal calibration that account for the pairing,
  plus each model's ECE interval and T-Cal decision.
* :func:`calibration_by_group` — reliability data, ECE interval and T-Cal decision in every group of a
  grouping variable, Holm's correction across the groups, the worst group named and the groups too
  small for a test listed as such.

Before/after recalibration is a comparison of two models on the same held-out rows: see
:func:`calviz.recalibrate` (its ``y_prob_before`` and ``y_prob``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from calviz._binning import MAX_EDGE_TABLE, check_n_bins, equal_width_bounds
from calviz._data import CalibrationData, InputError, as_calibration_data, check_alpha
from calviz._ece import reliability
from calviz._intervals import ece_interval
from calviz._kernels.compare import paired_debiased_kernel
from calviz._lazy import LazyModule
from calviz._params import (
    ALPHA,
    BOOLEAN,
    SEED,
    STR,
    Interval,
    InvalidParameterError,
    ListOf,
    check_n_groups,
    parameter_message,
    spawn_seeds,
    validate_params,
)
from calviz._results import HasInterval, ResultMixin, clip_interval, pvalue_phrase
from calviz._tcal import adaptive_tcal
from calviz.targets import SCALAR_TARGETS, resolve

stats = LazyModule("scipy.stats")

__all__ = [
    "ModelComparison",
    "compare",
    "paired_difference",
    "PairedDifference",
    "GroupResult",
    "GroupCalibration",
    "calibration_by_group",
    "holm_adjust",
    "check_same_examples",
    "MIN_GROUP_SIZE",
]

#: groups with fewer rows get reliability data only: no ECE interval and no T-Cal decision
MIN_GROUP_SIZE = 30
#: the joint-cell table of the paired variance has n_bins² entries
_MAX_PAIRED_BINS = 2048


# --------------------------------------------------------------------------------------------------
# the paired difference
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class PairedDifference(ResultMixin):
    """The paired difference of two models' debiased ECE² with its standard error (see :func:`compare`).

    Attributes
    ----------
    difference : float
        D = T^d_a − T^d_b.
    ece_sq_a, ece_sq_b : float
        T^d of each model.
    se : float
        √(V₁ + V₂).
    se_first_order : float
        √V₁ (influence-function term, plug-in noise removed).
    se_second_order : float
        √V₂ (degenerate pair term).
    n, n_bins : int
        Examples and bins.
    """

    difference: float
    ece_sq_a: float
    ece_sq_b: float
    se: float
    se_first_order: float
    se_second_order: float
    n: int
    n_bins: int


def paired_difference(z_a, y_a, z_b, y_b, *, n_bins: int = 15) -> PairedDifference:
    """The paired statistic of :func:`compare` on already reduced scalar views.

    D = T^d_a − T^d_b (Lee et al. [1]_, eq. 6) with the variance V₁ + V₂ of its Hoeffding decomposition
    (see :func:`compare`).

    Parameters
    ----------
    z_a, y_a : ndarray of shape (n,)
        Model a's predictions in [0, 1] and 0/1 outcomes.
    z_b, y_b : ndarray of shape (n,)
        Model b's, on the same n examples (row i of a and of b is the same example).
    n_bins : int, default 15
        Equal-width bins of each model's prediction.

    Returns
    -------
    PairedDifference
        D, both T^d and the standard errors.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    .. [2] W. Hoeffding. A class of statistics with asymptotically normal distribution. *Annals of
       Mathematical Statistics* 19(3), 293–325, 1948.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> from calviz._comparison import paired_difference
    >>> d = paired_difference(p, y.astype(float), p ** 1.5, y.astype(float), n_bins=10)
    >>> round(d.difference, 4), round(d.se, 4)
    (0.0117, 0.0022)
    """
    m = check_n_bins(n_bins)
    if m > _MAX_PAIRED_BINS:
        raise InputError(f"n_bins must be at most {_MAX_PAIRED_BINS} for a paired comparison; got {m}")
    arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (z_a, y_a, z_b, y_b)]
    n = arrays[0].shape[0]
    if any(a.ndim != 1 or a.shape[0] != n for a in arrays):
        raise InputError("paired_difference needs four 1-D arrays of the same length")
    if n < 2:
        raise InputError(f"need at least 2 examples; got {n}")
    lower, upper = equal_width_bounds(min(m, MAX_EDGE_TABLE))
    ta, tb, _, var_phi, pair_sq = paired_debiased_kernel(*arrays, m, lower, upper)
    # Σ_{i≠j} h² is a sum of squares; clip round-off below 0
    v2 = 2.0 * max(pair_sq, 0.0) / (n * n)
    # the plug-in variance of φ carries the estimation noise of the bin means μ̂: its expectation
    # exceeds the first-order variance by ≈ 2 V₂ (see compare's docstring), removed here
    v1 = max(var_phi / n - 2.0 * v2, 0.0)
    se1, se2 = float(np.sqrt(v1)), float(np.sqrt(v2))
    return PairedDifference(float(ta - tb), float(ta), float(tb), float(np.hypot(se1, se2)), se1, se2,
                            int(n), m)


@dataclass(frozen=True, repr=False)
class ModelComparison(HasInterval, ResultMixin):
    """Two models compared on the same examples, returned by :func:`compare`.

    Attributes
    ----------
    names : tuple of str
        The models' labels.
    difference : float
        T^d_a − T^d_b, the difference of the debiased ℓ2-ECE² estimates (negative: model a is better
        calibrated).
    low, high : float
        Its 1 − α confidence interval (``confidence_interval()``), clipped to [−1, 1], where the
        difference of two ECE² lies.
    ece_sq_a, ece_sq_b : float
        Each model's T^d.
    se, se_first_order, se_second_order : float
        √(V₁ + V₂), √V₁ and √V₂.
    statistic, pvalue : float
        difference / se and the two-sided p-value of the test of equal (binned) calibration.
    reject : bool
        p ≤ α.
    better : str or None
        The better calibrated model's name when the test rejects.
    alpha, level : float
        α and 1 − α.
    n, n_bins, target, method : int, int, str, str
        The sample, bins, target and how the interval was obtained.
    ece_a, ece_b : ECEInterval
        Each model's ECE interval (:func:`calviz.ece_interval`).
    tcal_a, tcal_b : TCalResult or None
        Each model's adaptive T-Cal result (None when ``tcal=False``).
    decomposition_a, decomposition_b : ScoreDecomposition
        Each model's Brier score split S̄ = MCB − DSC + UNC (:func:`calviz.score_decomposition`): a model
        with the better discrimination DSC and the worse miscalibration MCB is one recalibration fixes.
    n_classes : int or None
        Classes of the input.

    Notes
    -----
    ``verdict`` states the outcome in one sentence.
    """

    names: tuple
    difference: float
    low: float
    high: float
    ece_sq_a: float
    ece_sq_b: float
    se: float
    se_first_order: float
    se_second_order: float
    statistic: float
    pvalue: float
    reject: bool
    better: str | None
    alpha: float
    level: float
    n: int
    n_bins: int
    target: str
    method: str
    ece_a: object = field(default=None, repr=False)
    ece_b: object = field(default=None, repr=False)
    tcal_a: object = field(default=None, repr=False)
    tcal_b: object = field(default=None, repr=False)
    n_classes: int | None = None
    decomposition_a: object = field(default=None, repr=False)
    decomposition_b: object = field(default=None, repr=False)

    @property
    def verdict(self) -> str:
        """One sentence: what changed and whether the change is statistically supported."""
        a, b = self.names
        pct = f"{100 * self.level:.0f}%"
        diff = (f"ECE²({a}) − ECE²({b}) = {self.difference:.3g}, {pct} interval "
                f"[{self.low:.3g}, {self.high:.3g}], {pvalue_phrase(self.pvalue)}")
        if self.reject:
            worse = b if self.better == a else a
            return f"{self.better} is better calibrated than {worse} ({diff})."
        return f"No statistically supported difference in calibration between {a} and {b} ({diff})."


def _scalar_view(data: CalibrationData, target: str, class_index: int, caller: str):
    resolved = resolve(data, target, 1, class_index, allowed=("auto", *SCALAR_TARGETS), caller=caller)
    z, y = resolved.view(data)
    return resolved.name, np.ascontiguousarray(z), np.ascontiguousarray(y)


def _model_results(z, y, target, *, n_bins, alpha, tcal, resampling, n_resamples, seed):
    """(ECE interval, T-Cal result or None, Brier score decomposition) of one model's scalar view, labelled
    with its target.

    The public estimators receive the reduced view (0/1 outcome, scalar prediction) as binary data,
    validated once: the same numbers as on the original input with ``target``, without reducing it
    again."""
    view = as_calibration_data(y, z)
    interval = ece_interval(view, n_bins=n_bins, alpha=alpha, target="binary")
    interval = dataclasses.replace(interval, target=target)
    decision = None
    if tcal:
        decision = adaptive_tcal(view, alpha=alpha, resampling=resampling, n_resamples=n_resamples,
                                 target="binary", seed=seed)
        decision = dataclasses.replace(decision, target=target)
    from calviz._corp import score_decomposition

    split = dataclasses.replace(score_decomposition(view, score="brier", target="binary"), target=target)
    return interval, decision, split


def check_same_examples(
    data_a: CalibrationData, data_b: CalibrationData, names: tuple[str, str] = ("A", "B")
) -> None:
    """Refuse two prediction sets unless they hold the same examples in the same order.

    Same number of rows and identical labels — what :func:`compare` assumes of a second file.

    Parameters
    ----------
    data_a, data_b : CalibrationData
        The two models' validated predictions.
    names : tuple of str, default ("A", "B")
        The models' names, for the message.

    Returns
    -------
    None
        Returns only when the two sets hold the same examples.

    Raises
    ------
    InputError
        Naming the first row whose label differs, or the two lengths.

    Examples
    --------
    >>> import calviz
    >>> from calviz._comparison import check_same_examples
    >>> a = calviz.as_calibration_data([0, 1, 1], [0.2, 0.9, 0.6])
    >>> check_same_examples(a, calviz.as_calibration_data([0, 1, 1], [0.3, 0.8, 0.7]))
    >>> check_same_examples(a, calviz.as_calibration_data([0, 1, 0], [0.3, 0.8, 0.7]))
    Traceback (most recent call last):
    ...
    calviz.InputError: ...
    """
    if data_a.n != data_b.n or not np.array_equal(data_a.labels, data_b.labels):
        raise InputError(f"{names[1]}: the labels differ from {names[0]}'s: a comparison needs the same "
                         f"examples in the same order ({data_b.n} and {data_a.n} rows)")


#: the T-Cal options both functions pass on, checked with adaptive_tcal's own rules
_TCAL_RESAMPLING = adaptive_tcal.parameter_constraints["resampling"]
# T-Cal's level and resample count (a count above adaptive_tcal's cap was refused naming adaptive_tcal by
# compare and turned every group "not testable" in calibration_by_group)
_TCAL_LEVEL = adaptive_tcal.parameter_constraints["alpha"]
_TCAL_RESAMPLES = adaptive_tcal.parameter_constraints["n_resamples"]


class _TwoLabels(ListOf):
    """The two models' labels: a list or tuple of two different strs."""

    def __init__(self):
        super().__init__(STR, (2, 2))

    def __str__(self) -> str:
        return "a list or tuple of two different strs"

    def accepts(self, value) -> bool:
        return isinstance(value, (list, tuple)) and super().accepts(value) and value[0] != value[1]


@validate_params({"n_bins": Interval(int, 1, _MAX_PAIRED_BINS), "alpha": _TCAL_LEVEL, "tcal": BOOLEAN,
                  "names": _TwoLabels(),
                  "resampling": _TCAL_RESAMPLING, "n_resamples": _TCAL_RESAMPLES, "seed": SEED})
def compare(
    y_true,
    y_prob_a,
    y_prob_b,
    *,
    n_bins: int = 15,
    alpha: float = ALPHA,
    target: str = "auto",
    class_index: int = 0,
    names: tuple[str, str] = ("A", "B"),
    tcal: bool = True,
    resampling: str = "y_only",
    n_resamples: int | None = None,
    seed=None,
) -> ModelComparison:
    """Compare the calibration of two models evaluated on the same examples.

    The statistic is the difference of the debiased plug-in ℓ2-ECE² estimates (Lee, Huang, Hassani &
    Dobriban 2023, eq. 6) of model a and model b, each binned into ``n_bins`` equal-width bins of its own
    scalar prediction (binary P(y = 1), top-1 confidence or one class):

        D = T^d_a − T^d_b,   T^d = (1/n) Σ_bins (1/N_b) Σ_{i≠j in the bin} v_i v_j,   v = y − z.

    It estimates θ_a − θ_b with θ = Σ_b P(bin b) μ_b², μ_b = E[y − z | bin b] (the binned ECE²).

    **Interval.** Both estimates use the same examples, so they are dependent; the variance of the
    *paired* difference is estimated example by example.  D is, up to the random bin counts, a
    second-order U-statistic in the examples; Hoeffding's decomposition (Hoeffding 1948; van der Vaart
    1998, Ch. 12) splits its variance into a first-order term and a degenerate pair term:

    * first order (delta method / influence function; van der Vaart 1998, Ch. 20): the influence
      function of θ at an example in bin b is 2 μ_b v − μ_b² − θ, so example i contributes
      φ_i = (2 μ̂ᵃ v_iᵃ − (μ̂ᵃ)²) − (2 μ̂ᵇ v_iᵇ − (μ̂ᵇ)²) (each μ̂ taken in the example's bin of that
      model) and Var̂(φ)/n estimates the first-order variance.  For one model Var̂(φ) is the variance
      σ̂₁² of Sun, Chaudhari, Barnett & Dobriban (their mis-calibrated regime); the pairing enters
      through the covariance of the two influence values of the same example.
    * second order: with h(i, j) the pair kernel of D (1[same bin of a] vᵢᵃvⱼᵃ/Nᵃ − 1[same bin of b]
      vᵢᵇvⱼᵇ/Nᵇ), V₂ = (2/n²) Σ_{i≠j} h(i, j)², computed exactly from per-bin and per-joint-cell sums.
      It dominates when both models are (nearly) calibrated, where V₁ vanishes to first order and the
      normal approximation of V₁ alone would be anti-conservative (the degenerate case that motivates
      the calibrated-regime rule of Sun et al.).
    * the plug-in Var̂(φ) uses the estimated bin means μ̂ = S/N, whose noise (variance ≈ E[v² | bin]/N)
      inflates its expectation by 4/n² Σ (per-bin and per-joint-cell squared sums) ≈ 2 V₂; it is
      removed: V₁ = max(Var̂(φ)/n − 2 V₂, 0).

    The interval is D ± Φ⁻¹(1 − α/2) √(V₁ + V₂) and the test of equal binned calibration θ_a = θ_b
    rejects when |D| / √(V₁ + V₂) > Φ⁻¹(1 − α/2) (two-sided p-value from the normal distribution).

    **Assumptions.** Examples are independent draws (y_i, z_iᵃ, z_iᵇ) from one distribution (the two
    models may be arbitrarily dependent, e.g. one a recalibration of the other on other data); the
    bins are fixed and every bin's mass is large compared with 1/n (so N_b/n ≈ P(bin b)); the normal
    approximation of D.  V₂ uses E h² ≥ Var h, so near two calibrated models the variance is over-
    rather than under-estimated (the interval is conservative there); the coverage of the interval
    and the level of the test are checked by simulation in
    ``benchmarks/compare_validity.py`` (BENCHMARKS.md).  The target is the *binned* ECE² of each
    model, so the comparison is of calibration at the resolution of ``n_bins`` bins.  Below a few hundred
    examples the normal approximation is liberal: between two equally miscalibrated models (z ± 0.05,
    z ~ U(0, 1), y ~ Bernoulli(z), 15 bins), 4000 simulations at α = 0.05 (Monte Carlo s.e. 0.0034)
    rejected 0.063 at n = 100 and 0.053 at n = 300 (``benchmarks/compare_small_n.py``).  For multiclass
    views it lasts longer, and there the standard error is too small: between two equally calibrated
    3-class models, the classwise view of a class rejected 0.089 at n = 200, 0.070 at n = 500 and 0.055 at
    n = 2000, with the spread of D 15 %, 8 % and 2 % above the reported standard error (the top-1 view:
    0.072, 0.062, 0.058); read a p-value near α at such n as borderline.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K)
        Labels of the n examples (binary 0/1 or class ids 0..K−1, or one-hot).
    y_prob_a, y_prob_b : array-like of shape (n,) or (n, K)
        The two models' predictions for the same examples.
    n_bins : int, default 15
        Equal-width bins of each model's scalar prediction.
    alpha : float, default 0.05
        Level of the interval (1 − α), of the test and of each T-Cal decision (at least 1e-300, as for
        :func:`calviz.adaptive_tcal`).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction compared ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    names : tuple of str, default ("A", "B")
        Labels of the two models in the result and its verdict.
    tcal : bool, default True
        Run each model's adaptive T-Cal (:func:`calviz.adaptive_tcal` with ``resampling``,
        ``n_resamples`` and a seed derived from ``seed``).  The defaults are adaptive_tcal's own: y-only
        resampling with its sequential Monte Carlo stopping rule (``n_resamples=None``), so each model's
        decision is the one ``calviz.adaptive_tcal`` gives on that model alone; ``resampling="analytic"``
        is the fast scaled chi-square approximation.
    resampling : str, default "y_only"
        T-Cal's critical values.
    n_resamples : int, optional
        A fixed number of T-Cal resamples instead of the sequential rule (at most 10⁶, adaptive_tcal's
        cap).
    seed : int, numpy Generator or None
        Seed of the T-Cal resampling.

    Returns
    -------
    ModelComparison
        The difference, its interval and test, each model's ECE interval and T-Cal decision, and a
        one-line ``verdict``.

    See Also
    --------
    recalibrate : Before/after recalibration, on held-out rows.
    calibration_by_group : One model in every group.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    .. [2] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [3] W. Hoeffding. A class of statistics with asymptotically normal distribution. *Annals of
       Mathematical Statistics* 19(3), 293–325, 1948.
    .. [4] A. W. van der Vaart. *Asymptotic Statistics*. Cambridge University Press, 1998.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.compare(y, p, p ** 1.5, names=("raw", "fixed"), tcal=False)
    >>> res.better, round(res.difference, 3), res.reject
    ('fixed', 0.013, True)
    """
    alpha = check_alpha(alpha)
    names = tuple(names)
    data_a = as_calibration_data(y_true, y_prob_a)
    # the labels are validated once; model b only needs its predictions checked (in a's form: b's
    # confidences of the same top-1 correctness, when a's rows are the confidence form)
    try:
        data_b = as_calibration_data(data_a.labels, y_prob_b, confidence_form=data_a.confidence_form)
    except InputError as exc:
        raise InputError(f"y_prob_b: {exc}") from None
    if data_a.n_classes != data_b.n_classes or data_a.is_binary != data_b.is_binary:
        raise InputError(f"the two models must predict the same classes: y_prob_a has shape "
                         f"{data_a.probs.shape}, y_prob_b {data_b.probs.shape}")
    resolved, za, ya = _scalar_view(data_a, target, class_index, "compare")
    _, zb, yb = _scalar_view(data_b, resolved, class_index, "compare")
    paired = paired_difference(za, ya, zb, yb, n_bins=n_bins)
    zq = float(stats.norm.ppf(1.0 - alpha / 2.0))
    D, se = paired.difference, paired.se
    if se > 0.0:
        statistic = D / se
        pvalue = float(2.0 * stats.norm.sf(abs(statistic)))
    else:  # identical residuals in every bin: nothing to compare
        statistic, pvalue = 0.0, 1.0
    reject = bool(pvalue <= alpha)
    better = (names[0] if D < 0 else names[1]) if reject else None
    seeds = spawn_seeds(seed, 2)
    common = dict(n_bins=paired.n_bins, alpha=alpha, tcal=tcal, resampling=resampling,
                  n_resamples=n_resamples)
    ece_a, tcal_a, split_a = _model_results(za, ya, resolved, seed=seeds[0], **common)
    ece_b, tcal_b, split_b = _model_results(zb, yb, resolved, seed=seeds[1], **common)
    # the difference of two ECE² of scalar targets lies in [−1, 1]
    low, high = clip_interval(D - zq * se, D + zq * se, -1.0, 1.0)
    return ModelComparison(
        names=names, difference=D, low=low, high=high, ece_sq_a=paired.ece_sq_a,
        ece_sq_b=paired.ece_sq_b, se=se, se_first_order=paired.se_first_order,
        se_second_order=paired.se_second_order, statistic=float(statistic), pvalue=pvalue, reject=reject,
        better=better, alpha=alpha, level=1.0 - alpha, n=paired.n, n_bins=paired.n_bins, target=resolved,
        method="paired influence function + degenerate pair term, normal approximation",
        ece_a=ece_a, ece_b=ece_b, tcal_a=tcal_a, tcal_b=tcal_b, n_classes=data_a.n_classes,
        decomposition_a=split_a, decomposition_b=split_b,
    )


# --------------------------------------------------------------------------------------------------
# subgroups
# --------------------------------------------------------------------------------------------------
def holm_adjust(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values.

    With p₍₁₎ ≤ … ≤ p₍ₘ₎, p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1) p₍ⱼ₎) (Holm [1]_).  Rejecting every
    hypothesis with p̃ ≤ α controls the family-wise error rate at α for any dependence between the tests.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        The unadjusted p-values.

    Returns
    -------
    ndarray of shape (m,)
        The adjusted p-values, in the input's order.

    References
    ----------
    .. [1] S. Holm. A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70, 1979.

    Examples
    --------
    >>> from calviz._comparison import holm_adjust
    >>> holm_adjust([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise InputError("pvalues must be 1-D")
    if p.size and not (np.all(p >= 0.0) and np.all(p <= 1.0)):
        raise InputError("p-values must lie in [0, 1]")
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(stepped)
    return out


@dataclass(frozen=True, repr=False)
class GroupResult(ResultMixin):
    """One group of :func:`calibration_by_group`.

    Attributes
    ----------
    group : object
        The group value.
    n : int
        Its rows.
    status : str
        "tested", "too small" (fewer than ``min_group_size`` rows: reliability data only) or
        "not testable".
    reason : str
        Why it was not tested or not rejected, in words.
    reliability : ReliabilityData or None
        Per-bin data (None below 2 rows).
    interval : ECEInterval or None
        ECE interval.
    tcal : TCalResult or None
        Adaptive T-Cal.
    pvalue, adjusted_pvalue : float or None
        T-Cal's p-value and Holm's adjustment across the tested groups.
    reject : bool or None
        The Holm-adjusted decision.
    decision : {"reject", "accept", "undecided"} or None
        The same decision in one word: "undecided" when the group's sequential test reached its
        resampling cap at its Holm level (not rejected; ``reason`` gives its p-value interval); None for
        a group not tested.
    """

    group: object
    n: int
    status: str
    reason: str
    reliability: object = field(default=None, repr=False)
    interval: object = field(default=None, repr=False)
    tcal: object = field(default=None, repr=False)
    pvalue: float | None = None
    adjusted_pvalue: float | None = None
    reject: bool | None = None
    decision: str | None = None

    @property
    def ece(self) -> float | None:
        return None if self.interval is None else float(self.interval.estimate)


@dataclass(frozen=True, repr=False)
class GroupCalibration(ResultMixin):
    """Calibration in every group, returned by :func:`calibration_by_group`.

    Attributes
    ----------
    groups : tuple of GroupResult
        One per distinct group value (sorted); none dropped.
    worst_group : object
        The tested group with the largest lower confidence bound of its ℓ2-ECE (then the smallest
        Holm-adjusted p-value, then the largest estimate; None if no group was tested).
    rejected : tuple
        Groups whose calibration is rejected with family-wise error rate α (Holm).
    too_small : tuple
        Groups with fewer than ``min_group_size`` rows (listed, not tested).
    not_testable : tuple
        Groups where the test could not run (their ``reason`` says why).
    alpha, min_group_size, n, n_bins, target, n_classes
        The options and the sample.

    Notes
    -----
    ``verdict`` states the outcome in one sentence.
    """

    groups: tuple
    worst_group: object
    rejected: tuple
    too_small: tuple
    not_testable: tuple
    alpha: float
    min_group_size: int
    n: int
    n_bins: int
    target: str
    n_classes: int | None = None

    def __getitem__(self, group) -> GroupResult:
        for g in self.groups:
            if g.group == group or (_missing(g.group) and _missing(group)):  # (NaN ≠ NaN)
                return g
        raise KeyError(group)

    @property
    def verdict(self) -> str:
        tested = [g for g in self.groups if g.status == "tested"]
        parts = [f"{len(tested)} of {len(self.groups)} groups tested"]
        if self.rejected:
            parts.append(f"calibration rejected (Holm, α = {self.alpha:g}) in "
                         + ", ".join(_shown(g) for g in self.rejected))
        elif tested:
            parts.append(f"calibration rejected in no group (Holm, α = {self.alpha:g})")
        if self.worst_group is not None:
            parts.append(f"worst group {_shown(self.worst_group)} (ℓ2-ECE {self[self.worst_group].ece:.3g})")
        if self.too_small:
            parts.append(f"too small to test (< {self.min_group_size} rows): "
                         + ", ".join(_shown(g) for g in self.too_small))
        if self.not_testable:
            parts.append("not testable: " + ", ".join(_shown(g) for g in self.not_testable))
        return "; ".join(parts) + "."


def _group_codes(groups, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values sorted, code per row) of a grouping variable of length n."""
    values = np.asarray(groups)
    if values.ndim != 1 or values.shape[0] != n:
        raise InputError(f"groups must be 1-D with one value per row ({n}); got shape {values.shape}")
    try:
        uniques, codes = np.unique(values, return_inverse=True)
    except TypeError:  # mixed types (numbers and None, say): the values themselves, ordered by their text
        import pandas as pd

        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        order = np.argsort([str(u) for u in uniques], kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.shape[0])
        uniques, codes = np.asarray(uniques, dtype=object)[order], rank[codes]
    return uniques, codes.reshape(-1)


def _python_value(value):
    return value.item() if isinstance(value, np.generic) else value


def _missing(value) -> bool:
    """A missing group value: None or NaN (the rows without a group form one group of their own)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _shown(value) -> str:
    """A group's name in a sentence: a missing value (None, NaN, an empty cell) says so."""
    return "(missing)" if _missing(value) or value == "" else str(value)


def _sequential_holm(groups, *, alpha, resampling, target, class_index) -> tuple[set, dict]:
    """Holm's step-down procedure on sequential T-Cal decisions (see :func:`calibration_by_group`).

    ``groups``: (index, rows as CalibrationData, seed) of each tested group.  Returns the indices rejected
    and, for groups left undecided at their last level, why."""
    from calviz._tcal import RESAMPLING_RISK, adaptive_tcal

    g = len(groups)
    risk = RESAMPLING_RISK / max(1, g * (g + 1) // 2)  # at most G + (G − 1) + … + 1 decisions
    rejected: set = set()
    reasons: dict = {}
    while len(rejected) < g:
        remaining = [grp for grp in groups if grp[0] not in rejected]
        level = alpha / len(remaining)
        new = set()
        for index, rows, seed in remaining:
            test = adaptive_tcal(rows, alpha=level, resampling=resampling, resampling_risk=risk,
                                 target=target, class_index=class_index, seed=seed)
            if test.reject:
                new.add(index)
            elif test.decision == "undecided":
                reasons[index] = (f"undecided at the Holm level α/{len(remaining)} = {level:.3g} (resampling "
                                  f"cap reached, p-value interval {test.pvalue_interval[0]:.3g}–"
                                  f"{test.pvalue_interval[1]:.3g}): not rejected")
            else:
                reasons.pop(index, None)
        if not new:
            break
        rejected |= new
    return rejected, {i: r for i, r in reasons.items() if i not in rejected}


@validate_params({"n_bins": reliability.parameter_constraints["n_bins"], "alpha": _TCAL_LEVEL,
                  "min_group_size": Interval(int, 2, None),
                  "resampling": _TCAL_RESAMPLING, "n_resamples": _TCAL_RESAMPLES,
                  "interval": reliability.parameter_constraints["interval"], "seed": SEED})
def calibration_by_group(
    y_true,
    y_prob=None,
    groups=None,
    *,
    n_bins: int = 15,
    alpha: float = ALPHA,
    target: str = "auto",
    class_index: int = 0,
    min_group_size: int = MIN_GROUP_SIZE,
    resampling: str = "y_only",
    n_resamples: int | None = None,
    interval: str = "wilson",
    seed=None,
) -> GroupCalibration:
    """Calibration of one model within every group of a grouping variable.

    For each distinct value g of ``groups`` (one value per row; any sortable values) the rows of g are
    analysed with the same estimators as the whole data: :func:`calviz.reliability` (per-bin data with
    a ``interval`` interval at level 1 − α), :func:`calviz.ece_interval` (Sun et al.'s interval for
    the binned ℓ2-ECE) and :func:`calviz.adaptive_tcal` (Lee et al. 2023, Algorithm 2, with
    ``resampling``; a seed per group derived from ``seed``).  Groups with fewer than
    ``min_group_size`` rows get reliability data only and are listed as "too small"; a group where the
    test cannot run (e.g. a single class) is listed as "not testable" with the reason.  No group is
    dropped.

    Multiplicity: with G tested groups, the G T-Cal p-values are adjusted by Holm's (1979) step-down
    procedure, so that the probability of rejecting calibration in *any* group when the model is
    calibrated in every group is at most α (family-wise error rate; valid under any dependence).

    T-Cal runs with adaptive_tcal's own defaults: y-only resampling with its sequential Monte Carlo
    stopping rule (``n_resamples=None``); each group's ``tcal`` is then exactly
    ``calviz.adaptive_tcal(y_g, p_g, alpha=alpha, seed=…)`` on its rows.  A sequential test estimates
    its p-value only as precisely as its decision at one threshold needs, so Holm's procedure is run
    in its equivalent step-down form on decisions: every remaining group is tested at α/m (m = the
    number of groups not yet rejected); the groups rejected leave, m shrinks, and the rest are tested
    again at the new α/m (the same resamples: each resample has its own random stream), until a step
    rejects nothing.  With exact p-values this rejects exactly the groups with Holm-adjusted p ≤ α.
    Each of these sequential decisions is made with resampling risk ε/(number of decisions that can
    be needed, G(G + 1)/2), so with probability ≥ 1 − ε (ε = 10⁻³, adaptive_tcal's default) the
    rejected set is the one Holm's procedure gives with infinitely many resamples.  A group whose test
    reaches the resampling cap undecided at its Holm level is not rejected (its ``reason`` says so).
    ``adjusted_pvalue`` is Holm's adjustment of the groups' Monte Carlo p-value estimates, for
    reading; ``reject`` is the sequential decision.  With ``resampling="analytic"`` or a fixed
    ``n_resamples`` the p-values are taken as they are and ``reject`` is Holm-adjusted p ≤ α (a fixed
    count N can reject a group only if B/(N + 1) ≤ α/G, B the number of scales).  The worst group is
    the tested group with the largest lower confidence bound for its ℓ2-ECE (ties, e.g. several at 0:
    the smallest Holm-adjusted p-value, then the larger estimate).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    groups : array-like of shape (n,)
        One group value per row (any sortable values); at most ``MAX_GROUPS`` = 1,000 distinct values
        (every group costs a diagram, an interval and a test).
    n_bins : int, default 15
        Bins of the reliability data and ECE intervals (at most 10⁶, as for :func:`calviz.reliability`).
    alpha : float, default 0.05
        Family-wise level of the decisions and 1 − the intervals' level: at least 1e-300 per group, since
        Holm's levels α/m are :func:`calviz.adaptive_tcal`'s, at least 1e-300.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction compared ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    min_group_size : int, default 30
        Groups with fewer rows are listed as "too small" and not tested.
    resampling : str, default "y_only"
        T-Cal's critical values.
    n_resamples : int, optional
        A fixed number of T-Cal resamples instead of the sequential rule (at most 10⁶, adaptive_tcal's
        cap).
    interval : {"wilson", "jeffreys"}, default "wilson"
        The per-bin interval of the reliability data.
    seed : int, numpy Generator or None
        Seed of the T-Cal resampling (one derived seed per group).

    Returns
    -------
    GroupCalibration
        Every group's result, the rejected groups, the worst group and a one-line ``verdict``.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    .. [2] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [3] S. Holm. A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70, 1979.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> groups = np.where(p > 0.5, "high", "low")
    >>> res = calviz.calibration_by_group(y, p, groups, resampling="analytic")
    >>> [(g.group, g.n, g.status) for g in res.groups], res.worst_group
    ([('high', 993, 'tested'), ('low', 1007, 'tested')], 'low')
    """
    alpha = check_alpha(alpha)
    m = check_n_bins(n_bins)
    if groups is None:
        raise InputError("groups is required: one group value per row")
    data = as_calibration_data(y_true, y_prob)
    resolved, _, _ = _scalar_view(data, target, class_index, "calibration_by_group")
    if resolved != "classwise":
        # ignored unless the target is classwise, as by every estimator (it was passed on to each group's
        # adaptive_tcal, which refused e.g. -1 or NaN, so every group was silently "not testable")
        class_index = 0
    uniques, codes = _group_codes(groups, data.n)
    check_n_groups(uniques.shape[0])
    floor = _TCAL_LEVEL.low * uniques.shape[0]
    if alpha < floor:  # Holm tests at α/m (m ≤ the number of groups) with adaptive_tcal, whose α ≥ 1e-300
        raise InvalidParameterError(parameter_message(
            "alpha", "calibration_by_group", f"a float in [{floor:g}, 1) (Holm's level α/m for up to "
            f"{uniques.shape[0]} groups is adaptive_tcal's alpha, at least {_TCAL_LEVEL.low:g})", alpha))
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(uniques.shape[0] + 1))
    seeds = spawn_seeds(seed, uniques.shape[0])
    sequential = n_resamples is None and resampling in ("y_only", "consistency")
    results, group_rows = [], []
    for g, value in enumerate(uniques):
        rows = np.sort(order[starts[g]:starts[g + 1]])
        group_rows.append(rows)
        n_g = int(rows.shape[0])
        label = _python_value(value)
        group = data._rows(rows)  # (validated already; the confidence form kept)
        rel = None
        if n_g >= 2:
            rel = reliability(group, n_bins=m, alpha=alpha, interval=interval, target=resolved,
                              class_index=class_index)
        if n_g < min_group_size:
            results.append(GroupResult(label, n_g, "too small",
                                       f"{n_g} rows < min_group_size = {min_group_size}: not tested", rel))
            continue
        try:
            ci = ece_interval(group, n_bins=m, alpha=alpha, target=resolved, class_index=class_index)
            test = adaptive_tcal(group, alpha=alpha, resampling=resampling, n_resamples=n_resamples,
                                 target=resolved, class_index=class_index, seed=seeds[g])
        except InputError as exc:
            results.append(GroupResult(label, n_g, "not testable", str(exc), rel))
            continue
        results.append(GroupResult(label, n_g, "tested", "", rel, ci, test, float(test.pvalue)))
    tested = [i for i, r in enumerate(results) if r.status == "tested"]
    adjusted = holm_adjust([results[i].pvalue for i in tested])
    if sequential:
        rejected, reasons = _sequential_holm(
            [(i, data._rows(group_rows[i]), seeds[i]) for i in tested],
            alpha=alpha, resampling=resampling, target=resolved, class_index=class_index)
    for i, p_adj in zip(tested, adjusted, strict=True):
        reject = i in rejected if sequential else bool(p_adj <= alpha)
        decision = "reject" if reject else "undecided" if sequential and i in reasons else "accept"
        results[i] = dataclasses.replace(results[i], adjusted_pvalue=float(p_adj), reject=reject,
                                         decision=decision, reason=reasons.get(i, "") if sequential else "")
    # ranked by the lower end of the ECE interval, then by the evidence against calibration (Holm p),
    # then the estimate: a small group's noisy, upward-biased estimate alone should not make it the worst
    worst = max(tested, key=lambda i: (results[i].interval.low, -results[i].adjusted_pvalue, results[i].ece),
                default=None)
    return GroupCalibration(
        groups=tuple(results),
        worst_group=None if worst is None else results[worst].group,
        rejected=tuple(r.group for r in results if r.reject),
        too_small=tuple(r.group for r in results if r.status == "too small"),
        not_testable=tuple(r.group for r in results if r.status == "not testable"),
        alpha=alpha, min_group_size=int(min_group_size), n=data.n, n_bins=m, target=resolved,
        n_classes=data.n_classes,
    )
