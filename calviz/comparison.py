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
from dataclasses import dataclass, field

import numpy as np

from calviz._kernels.compare import paired_debiased_kernel
from calviz._lazy import LazyModule
from calviz._params import (
    ALPHA,
    BOOLEAN,
    POSITIVE_INT,
    SEED,
    UNIT_OPEN,
    Interval,
    NoneOr,
    spawn_seeds,
    validate_params,
)
from calviz._results import HasInterval, ResultMixin
from calviz.binning import MAX_EDGE_TABLE, check_n_bins, equal_width_bounds
from calviz.data import CalibrationData, InputError, as_calibration_data, check_alpha
from calviz.targets import SCALAR_TARGETS, resolve, topk_view

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
    """D = T^d_a − T^d_b with its standard error (see :func:`compare` for the method).

    ``se_first_order`` = √V₁ (influence-function term, plug-in noise removed), ``se_second_order`` = √V₂
    (degenerate pair term), ``se`` = √(V₁ + V₂)."""

    difference: float
    ece_sq_a: float
    ece_sq_b: float
    se: float
    se_first_order: float
    se_second_order: float
    n: int
    n_bins: int


def paired_difference(z_a, y_a, z_b, y_b, *, n_bins: int = 15) -> PairedDifference:
    """The paired statistic of :func:`compare` on already reduced scalar views: predictions z (n,) in
    [0, 1] and 0/1 outcomes y (n,) of model a and model b on the same n examples (row i of a and of b
    is the same example)."""
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
    """Two models on the same examples (see :func:`compare`).

    ``difference`` = T^d_a − T^d_b, the difference of the debiased ℓ2-ECE² estimates (negative: model a
    is better calibrated); ``low``, ``high``: its 1 − α confidence interval; ``se`` and its two parts;
``se_first_order`` = √V₁, ``se_second_order`` = √V₂;
    ``statistic`` = difference / se and ``pvalue``: the two-sided test of equal (binned) calibration;
    ``reject``: p ≤ α; ``better``: the name of the better calibrated model when the test rejects, else
    None.  ``ece_a``, ``ece_b``: each model's ECE interval (:func:`calviz.ece_interval`); ``tcal_a``,
    ``tcal_b``: each model's adaptive T-Cal result (None when ``tcal=False``).  ``names``: the models'
    labels; ``method``: how the interval was obtained.
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

    @property
    def verdict(self) -> str:
        """One sentence: what changed and whether the change is statistically supported."""
        a, b = self.names
        pct = f"{100 * self.level:.0f}%"
        diff = (f"ECE²({a}) − ECE²({b}) = {self.difference:.3g}, {pct} interval "
                f"[{self.low:.3g}, {self.high:.3g}], p {_p_text(self.pvalue)}")
        if self.reject:
            worse = b if self.better == a else a
            return f"{self.better} is better calibrated than {worse} ({diff})."
        return f"No statistically supported difference in calibration between {a} and {b} ({diff})."


def _p_text(p: float) -> str:
    return "< 0.0001" if p < 1e-4 else f"= {p:.4f}"


def _scalar_view(data: CalibrationData, target: str, class_index: int, caller: str):
    resolved = resolve(data, target, 1, class_index, allowed=("auto", *SCALAR_TARGETS), caller=caller)
    if resolved.name == "top1" and not data.is_binary:
        # the jitted partial sort (same arrays as data.top1(), 5x faster at n = 10^6)
        z, y = topk_view(data, 1)
        return resolved.name, np.ascontiguousarray(z[:, 0]), np.ascontiguousarray(y[:, 0])
    z, y = resolved.view(data)
    return resolved.name, np.ascontiguousarray(z), np.ascontiguousarray(y)


def _model_results(z, y, target, *, n_bins, alpha, tcal, resampling, n_resamples, seed):
    """(ECE interval, T-Cal result or None) of one model's scalar view, labelled with its target.

    The public estimators receive the reduced view (0/1 outcome, scalar prediction) as binary data:
    the same numbers as on the original input with ``target``, without reducing it again."""
    from calviz.intervals import ece_interval
    from calviz.tcal import adaptive_tcal

    interval = ece_interval(y, z, n_bins=n_bins, alpha=alpha, target="binary")
    interval = dataclasses.replace(interval, target=target)
    decision = None
    if tcal:
        decision = adaptive_tcal(y, z, alpha=alpha, resampling=resampling, n_resamples=n_resamples,
                                 target="binary", seed=seed)
        decision = dataclasses.replace(decision, target=target)
    return interval, decision


def check_same_examples(
    data_a: CalibrationData, data_b: CalibrationData, names: tuple[str, str] = ("A", "B")
) -> None:
    """Raise :class:`InputError` unless two loaded prediction sets hold the same examples in the same order
    (same number of rows and identical labels) — what :func:`compare` assumes of a second file."""
    if data_a.n != data_b.n or not np.array_equal(data_a.labels, data_b.labels):
        raise InputError(f"{names[1]}: the labels differ from {names[0]}'s: a comparison needs the same "
                         f"examples in the same order ({data_b.n} and {data_a.n} rows)")


@validate_params({"n_bins": POSITIVE_INT, "alpha": UNIT_OPEN, "tcal": BOOLEAN,
                  "n_resamples": NoneOr(POSITIVE_INT), "seed": SEED})
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
    model, so the comparison is of calibration at the resolution of ``n_bins`` bins.

    Parameters
    ----------
    y_true: labels of the n examples (binary 0/1 or class ids 0..K−1, or one-hot).
    y_prob_a, y_prob_b: the two models' predictions for the same examples, same shape conventions as
        everywhere in calviz ((n,) P(y = 1) or (n, K)).
    n_bins: equal-width bins of each model's scalar prediction.
    alpha: level of the interval (1 − α), of the test and of each T-Cal decision.
    target: "auto" (binary, or top-1 for K classes), "binary", "top1" or "classwise" (``class_index``).
    names: labels of the two models in the result and its verdict.
    tcal: run each model's adaptive T-Cal (:func:`calviz.adaptive_tcal` with ``resampling``,
        ``n_resamples`` and a seed derived from ``seed``).  The defaults are adaptive_tcal's own:
        y-only resampling with its sequential Monte Carlo stopping rule (``n_resamples=None``), so each
        model's decision is the one ``calviz.adaptive_tcal`` gives on that model alone;
        ``resampling="analytic"`` is the fast scaled chi-square approximation.
    """
    alpha = check_alpha(alpha)
    if len(names) != 2 or names[0] == names[1]:
        raise InputError(f"names must be two different labels; got {names!r}")
    names = (str(names[0]), str(names[1]))
    data_a = as_calibration_data(y_true, y_prob_a)
    # the labels are validated once; model b only needs its predictions checked
    try:
        data_b = as_calibration_data(data_a.labels, y_prob_b)
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
    ece_a, tcal_a = _model_results(za, ya, resolved, seed=seeds[0], **common)
    ece_b, tcal_b = _model_results(zb, yb, resolved, seed=seeds[1], **common)
    return ModelComparison(
        names=names, difference=D, low=D - zq * se, high=D + zq * se, ece_sq_a=paired.ece_sq_a,
        ece_sq_b=paired.ece_sq_b, se=se, se_first_order=paired.se_first_order,
        se_second_order=paired.se_second_order, statistic=float(statistic), pvalue=pvalue, reject=reject,
        better=better, alpha=alpha, level=1.0 - alpha, n=paired.n, n_bins=paired.n_bins, target=resolved,
        method="paired influence function + degenerate pair term, normal approximation",
        ece_a=ece_a, ece_b=ece_b, tcal_a=tcal_a, tcal_b=tcal_b, n_classes=data_a.n_classes,
    )


# --------------------------------------------------------------------------------------------------
# subgroups
# --------------------------------------------------------------------------------------------------
def holm_adjust(pvalues) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values: with p₍₁₎ ≤ … ≤ p₍ₘ₎,
    p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1) p₍ⱼ₎).  Rejecting every hypothesis with p̃ ≤ α controls the
    family-wise error rate at α for any dependence between the tests."""
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
    """One group: its ``group`` value, ``n`` rows, ``status`` ("tested", "too small" — fewer than
    ``min_group_size`` rows: reliability data only — or "not testable", with the ``reason``);
    ``reliability`` (per-bin data, None below 2 rows), ``interval`` (ECE interval), ``tcal`` (adaptive
    T-Cal), ``pvalue`` (T-Cal's p-value), ``adjusted_pvalue`` (Holm across the tested groups) and
    ``reject`` (Holm-adjusted p ≤ α)."""

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

    @property
    def ece(self) -> float | None:
        return None if self.interval is None else float(self.interval.estimate)


@dataclass(frozen=True, repr=False)
class GroupCalibration(ResultMixin):
    """Calibration in every group (see :func:`calibration_by_group`).

    ``groups``: one :class:`GroupResult` per distinct group value (sorted), none dropped;
    ``worst_group``: the tested group with the largest lower confidence bound of its ℓ2-ECE (then the
    smallest Holm-adjusted p-value, then the largest estimate; None if no group was tested);
    ``rejected``: groups whose Holm-adjusted T-Cal p-value is ≤ α (calibration rejected with family-wise
    error rate α); ``too_small``: groups with fewer than ``min_group_size`` rows (listed, not tested);
    ``not_testable``: groups where the test could not run (their ``reason`` says why).
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
            if g.group == group:
                return g
        raise KeyError(group)

    @property
    def verdict(self) -> str:
        tested = [g for g in self.groups if g.status == "tested"]
        parts = [f"{len(tested)} of {len(self.groups)} groups tested"]
        if self.rejected:
            parts.append(f"calibration rejected (Holm, α = {self.alpha:g}) in "
                         + ", ".join(str(g) for g in self.rejected))
        elif tested:
            parts.append(f"calibration rejected in no group (Holm, α = {self.alpha:g})")
        if self.worst_group is not None:
            parts.append(f"worst group {self.worst_group} (ℓ2-ECE {self[self.worst_group].ece:.3g})")
        if self.too_small:
            parts.append(f"too small to test (< {self.min_group_size} rows): "
                         + ", ".join(str(g) for g in self.too_small))
        if self.not_testable:
            parts.append("not testable: " + ", ".join(str(g) for g in self.not_testable))
        return "; ".join(parts) + "."


def _group_codes(groups, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values sorted, code per row) of a grouping variable of length n."""
    values = np.asarray(groups)
    if values.ndim != 1 or values.shape[0] != n:
        raise InputError(f"groups must be 1-D with one value per row ({n}); got shape {values.shape}")
    try:
        uniques, codes = np.unique(values, return_inverse=True)
    except TypeError:  # mixed types (e.g. strings and None): group by their text
        uniques, codes = np.unique(values.astype(str), return_inverse=True)
    return uniques, codes.reshape(-1)


def _python_value(value):
    return value.item() if isinstance(value, np.generic) else value


def _sequential_holm(groups, *, alpha, resampling, target, class_index) -> tuple[set, dict]:
    """Holm's step-down procedure on sequential T-Cal decisions (see :func:`calibration_by_group`).

    ``groups``: (index, labels, predictions, seed) of each tested group.  Returns the indices rejected
    and, for groups left undecided at their last level, why."""
    from calviz.tcal import RESAMPLING_RISK, adaptive_tcal

    g = len(groups)
    risk = RESAMPLING_RISK / max(1, g * (g + 1) // 2)  # at most G + (G − 1) + … + 1 decisions
    rejected: set = set()
    reasons: dict = {}
    while len(rejected) < g:
        remaining = [grp for grp in groups if grp[0] not in rejected]
        level = alpha / len(remaining)
        new = set()
        for index, y, p, seed in remaining:
            test = adaptive_tcal(y, p, alpha=level, resampling=resampling, resampling_risk=risk,
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


@validate_params({"n_bins": POSITIVE_INT, "alpha": UNIT_OPEN, "min_group_size": Interval(int, 2, None),
                  "n_resamples": NoneOr(POSITIVE_INT), "seed": SEED})
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
    """
    from calviz.ece import reliability
    from calviz.intervals import ece_interval
    from calviz.tcal import adaptive_tcal

    alpha = check_alpha(alpha)
    m = check_n_bins(n_bins)
    if groups is None:
        raise InputError("groups is required: one group value per row")
    data = as_calibration_data(y_true, y_prob)
    resolved, _, _ = _scalar_view(data, target, class_index, "calibration_by_group")
    uniques, codes = _group_codes(groups, data.n)
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
        y_g, p_g = data.labels[rows], data.probs[rows]
        rel = None
        if n_g >= 2:
            rel = reliability(y_g, p_g, n_bins=m, alpha=alpha, interval=interval, target=resolved,
                              class_index=class_index)
        if n_g < min_group_size:
            results.append(GroupResult(label, n_g, "too small",
                                       f"{n_g} rows < min_group_size = {min_group_size}: not tested", rel))
            continue
        try:
            ci = ece_interval(y_g, p_g, n_bins=m, alpha=alpha, target=resolved, class_index=class_index)
            test = adaptive_tcal(y_g, p_g, alpha=alpha, resampling=resampling, n_resamples=n_resamples,
                                 target=resolved, class_index=class_index, seed=seeds[g])
        except InputError as exc:
            results.append(GroupResult(label, n_g, "not testable", str(exc), rel))
            continue
        results.append(GroupResult(label, n_g, "tested", "", rel, ci, test, float(test.pvalue)))
    tested = [i for i, r in enumerate(results) if r.status == "tested"]
    adjusted = holm_adjust([results[i].pvalue for i in tested])
    if sequential:
        rejected, reasons = _sequential_holm(
            [(i, data.labels[group_rows[i]], data.probs[group_rows[i]], seeds[i]) for i in tested],
            alpha=alpha, resampling=resampling, target=resolved, class_index=class_index)
    for i, p_adj in zip(tested, adjusted, strict=True):
        if sequential:
            results[i] = dataclasses.replace(results[i], adjusted_pvalue=float(p_adj), reject=i in rejected,
                                             reason=reasons.get(i, ""))
        else:
            results[i] = dataclasses.replace(results[i], adjusted_pvalue=float(p_adj),
                                             reject=bool(p_adj <= alpha))
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
