"""The classical calibration tests users already know, beside T-Cal.

Every test takes ``(y_true, y_prob)`` and a scalar calibration target (``binary``: P(y = 1);
``top1``: the confidence and whether the top class is right; ``classwise``: one class against the rest)
and returns a :class:`CalibrationTestResult` (statistic, p-value in [0, 1], its null distribution and
what the test detects).  :func:`classical_tests` runs them all on one validated view; the command line,
the report and the dashboard make that one call.

* :func:`spiegelhalter_test` — Spiegelhalter (1986): z = Σ (y − z)(1 − 2z) / √Σ (1 − 2z)² z(1 − z),
  two-sided normal p-value.
* :func:`hosmer_lemeshow_test` — Hosmer & Lemeshow (1980): χ² over g groups of equal size by predicted
  risk (calviz's equal-mass bins: ties never split; adjacent groups merged until each expects ≥ 5 events
  and non-events), against χ²(g) for held-out predictions or χ²(g − 2) with ``fitted=True``.
* :func:`cox_test` — Cox (1958): logistic recalibration logit P(y = 1 | z) = a + b logit(z); score test
  of a = 0, b = 1 (χ²₂), with the fitted a and b.
* :func:`kolmogorov_smirnov_test`, :func:`kuiper_test` — Arrieta-Ibarra, Gujral, Tannen, Tygert & Xu
  (2022, JMLR): the cumulative differences of y − z over the predictions in increasing order, scaled
  by their null standard deviation, against the maximum of |W| and the range of a standard Brownian
  motion W on [0, 1].

All tests are conditional on the predictions.  From :data:`~calviz._small_n.ASYMPTOTIC_MIN_ROWS` rows on
the p-values are asymptotic (n → ∞; their level was checked by simulation from there), each test O(n) or
O(n log n) (one sort).  Below, the p-value is the exact one of the test's statistic under the null
distribution of the labels given the predictions (Y_i ~ Bernoulli(z_i)): by enumeration of the 2^n label
vectors up to 12 rows, else from 4 999 label vectors drawn with a fixed seed (:mod:`calviz._small_n`); the
result's ``pvalue_method`` says which.  Every p-value is at least the probability of the observed labels
under the null, which no valid p-value can be below.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from calviz._binning import check_n_bins
from calviz._brownian import brownian_max_abs_sf, brownian_range_sf, chi2_sf, normal_sf
from calviz._data import InputError, check_alpha
from calviz._ece import equal_mass_sums, prepare_view
from calviz._kernels.classical import (
    clipped_logit,
    cumulative_difference_extremes,
    logistic_sums,
    logistic_sums_threaded,
    spiegelhalter_sums,
)
from calviz._kernels.sorting import sort_unit_values_by_label, split_sorted_keys
from calviz._params import ALPHA, BOOLEAN, POSITIVE_INT, UNIT_OPEN, Interval, ListOf, Options, validate_params
from calviz._results import ResultMixin, with_classes
from calviz._small_n import ASYMPTOTIC_MIN_ROWS, floor_at_labels, label_log_probability, null_pvalue
from calviz._sortcache import cached_sorted_keys
from calviz._weights import check_sample_weight, weighted_bins
from calviz.targets import SCALAR_TARGETS

__all__ = [
    "CalibrationTestResult",
    "CoxTestResult",
    "ClassicalTests",
    "spiegelhalter_test",
    "hosmer_lemeshow_test",
    "cox_test",
    "kolmogorov_smirnov_test",
    "kuiper_test",
    "classical_tests",
    "brownian_max_abs_sf",
    "brownian_range_sf",
    "TEST_NAMES",
    "TEST_LABELS",
]

#: the tests :func:`classical_tests` runs, in the order it reports them
TEST_NAMES = ("spiegelhalter", "hosmer_lemeshow", "cox", "kolmogorov_smirnov", "kuiper")
#: predictions are clipped to [COX_EPS, 1 − COX_EPS] before the logit in Cox's test
COX_EPS = 1e-12


# ------------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class CalibrationTestResult(ResultMixin):
    """One classical calibration test.

    Attributes
    ----------
    name : str
        Short identifier (one of ``TEST_NAMES``).
    label : str
        Display name.
    statistic : float
        The test statistic.
    pvalue : float
        In [0, 1], asymptotic, conditional on the predictions.
    null_distribution : str
        What the statistic is compared with.
    hypothesis : str
        The null hypothesis tested.
    detects : str
        What kind of miscalibration the test is sensitive to, and what it misses.
    reference : str
        The paper.
    n, target : int, str
        The sample.
    df : int or None
        Degrees of freedom of a χ² null.
    n_classes : int or None
        Classes of the input.
    pvalue_method : {"asymptotic", "exact", "resampled"}
        How ``pvalue`` was computed: the asymptotic null (from ``asymptotic_min_rows`` rows on), or, below,
        the null distribution of the labels given the predictions — every label vector enumerated
        ("exact", n ≤ 12) or 4 999 drawn ("resampled").
    asymptotic_min_rows : int
        The fewest rows from which the asymptotic p-value is used.

    Notes
    -----
    ``rejects(alpha)`` is ``pvalue <= alpha``.  ``pvalue`` is never below the probability of the observed
    labels under the null (Π z^y (1 − z)^(1 − y)), which no valid p-value can be.
    """

    name: str
    label: str
    statistic: float
    pvalue: float
    null_distribution: str
    hypothesis: str
    detects: str
    reference: str
    n: int
    target: str
    df: int | None = None
    n_classes: int | None = None
    pvalue_method: str = "asymptotic"
    asymptotic_min_rows: int = ASYMPTOTIC_MIN_ROWS

    def rejects(self, alpha: float) -> bool:
        """The decision at level α: p-value ≤ α."""
        return bool(self.pvalue <= check_alpha(alpha))


@dataclass(frozen=True, repr=False)
class CoxTestResult(CalibrationTestResult):
    """Cox's test with the maximum-likelihood recalibration fit logit P(y = 1 | z) = a + b logit(z).

    The test itself is the score test at (a, b) = (0, 1) and needs no fit.

    Attributes
    ----------
    intercept, slope : float
        The fitted a and b (NaN when the fit does not exist, e.g. perfectly separated labels).
    fit_converged : bool
        Whether Newton's method converged.
    name, label, statistic, pvalue, null_distribution, hypothesis, detects, reference, n, target, df
        As for :class:`CalibrationTestResult`.
    n_classes, pvalue_method, asymptotic_min_rows
        As for :class:`CalibrationTestResult`.
    """

    intercept: float = math.nan
    slope: float = math.nan
    fit_converged: bool = False


@dataclass(frozen=True, repr=False)
class ClassicalTests(ResultMixin):
    """All classical tests on one sample, returned by :func:`classical_tests`.

    Attributes
    ----------
    tests : tuple of CalibrationTestResult
        The results that could be computed, in the order of ``TEST_NAMES``; ``result["cox"]`` picks one.
    errors : dict
        Test name → why it could not be computed (e.g. too few groups).
    alpha : float
        The level of the decisions.
    n, target : int, str
        The sample.
    measures : dict
        The binned measures users know beside them, ``{"mce": ECEResult, "ace": ECEResult}`` (empty when
        not requested).
    n_classes : int or None
        Classes of the input.

    Notes
    -----
    ``rows(alpha=None)`` gives one dict per test (test, statistic, p-value, decision at α, what it
    detects), then one per test that could not be computed.
    """

    tests: tuple
    errors: dict
    alpha: float
    n: int
    target: str
    measures: dict = dataclasses.field(default_factory=dict, repr=False)
    n_classes: int | None = None

    def __getitem__(self, name: str) -> CalibrationTestResult:
        for test in self.tests:
            if test.name == name:
                return test
        if name in self.errors:
            raise KeyError(f"{name} was not computed: {self.errors[name]}")
        raise KeyError(name)

    def __contains__(self, name: str) -> bool:
        return any(test.name == name for test in self.tests)

    def rows(self, alpha: float | None = None) -> list[dict]:
        """One dict per test (``test``, ``statistic``, ``pvalue``, ``reject`` at α, ``detects``), then
        one per test that could not be computed (``statistic``/``pvalue``/``reject`` None, ``detects``
        the reason).  ``alpha`` defaults to the level the tests were run at; changing it needs no
        recomputation."""
        a = self.alpha if alpha is None else check_alpha(alpha)
        out = [{"test": t.label, "statistic": t.statistic, "pvalue": t.pvalue, "reject": t.rejects(a),
                "detects": t.detects} for t in self.tests]
        out += [{"test": TEST_LABELS[name], "statistic": None, "pvalue": None, "reject": None,
                 "detects": f"not computed: {message}"} for name, message in self.errors.items()]
        return out


# ------------------------------------------------------------------------------------------------
# what each test is
# ------------------------------------------------------------------------------------------------
#: each test's name for display
TEST_LABELS = {
    "spiegelhalter": "Spiegelhalter z",
    "hosmer_lemeshow": "Hosmer–Lemeshow",
    "cox": "Cox intercept/slope",
    "kolmogorov_smirnov": "Kolmogorov–Smirnov",
    "kuiper": "Kuiper",
}
_DETECTS = {
    "spiegelhalter": "a Brier score off its calibrated value: over- or under-confidence on the whole; "
                     "misses miscalibration that cancels across predictions (oscillations)",
    "hosmer_lemeshow": "observed vs expected events in groups of equal size by predicted risk; misses "
                       "structure finer than the groups",
    "cox": "overall bias (intercept ≠ 0) and over/under-confidence (slope ≠ 1) of a logistic recalibration; "
           "misses non-monotone (oscillating) miscalibration",
    "kolmogorov_smirnov": "a one-signed excess of events over a range of predictions; weak when "
                          "deviations alternate quickly",
    "kuiper": "like Kolmogorov–Smirnov, also deviations of opposite signs in two ranges; weak when "
              "deviations alternate quickly",
}
_REFERENCES = {
    "spiegelhalter": "Spiegelhalter (1986), Statistics in Medicine 5, 421-433",
    "hosmer_lemeshow": "Hosmer & Lemeshow (1980), Communications in Statistics A 9, 1043-1069",
    "cox": "Cox (1958), Biometrika 45, 562-565; score test as in Lee, Huang, Hassani & Dobriban (2023), §4.1",
    "kolmogorov_smirnov": "Arrieta-Ibarra, Gujral, Tannen, Tygert & Xu (2022), JMLR 23(351)",
    "kuiper": "Arrieta-Ibarra, Gujral, Tannen, Tygert & Xu (2022), JMLR 23(351)",
}


def _result(name, statistic, pvalue, null, hypothesis, z, y, target, null_statistic, df=None,
            cls=CalibrationTestResult, w=None, **extra) -> CalibrationTestResult:
    """The result of test ``name`` on the view (z, y).  From ASYMPTOTIC_MIN_ROWS rows on the asymptotic
    ``pvalue`` (raised to the probability of the observed labels); below, the p-value of the statistic
    ``null_statistic(z_sorted)`` (a function of label vectors in increasing order of z → statistics, larger
    more extreme) under the null distribution of the labels given the predictions
    (:func:`calviz._small_n.null_pvalue`)."""
    p = float(pvalue)
    if math.isnan(p):
        raise AssertionError(f"{name}: NaN p-value")  # every degenerate case is handled before this
    n = int(z.shape[0])
    if w is not None:  # frequency weights (see _weighted_view): the asymptotic p-value, n = Σ w
        n = int(round(float(w.sum())))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_labels = float(np.sum(w * np.where(np.asarray(y) > 0.5, np.log(z), np.log1p(-z))))
        p, method = floor_at_labels(min(max(p, 0.0), 1.0), log_labels), "asymptotic"
    elif n >= ASYMPTOTIC_MIN_ROWS:
        p, method = floor_at_labels(min(max(p, 0.0), 1.0), label_log_probability(z, y)), "asymptotic"
    else:
        order = np.argsort(z, kind="stable")
        p, method, how = null_pvalue(null_statistic(z[order]), z[order], y[order])
        null = f"{how} (the asymptotic {null} is used from n = {ASYMPTOTIC_MIN_ROWS} on)"
    return cls(name=name, label=TEST_LABELS[name], statistic=float(statistic), pvalue=p,
               null_distribution=null, hypothesis=hypothesis, detects=_DETECTS[name],
               reference=_REFERENCES[name], n=n, target=target, df=df, pvalue_method=method, **extra)


# ------------------------------------------------------------------------------------------------
# the view: a scalar target
# ------------------------------------------------------------------------------------------------
def _scalar_view(y_true, y_prob, target, class_index, caller):
    # the classical tests are defined for scalar predictions only
    data, target, z, y = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                      integer_labels=True, allowed=("auto", *SCALAR_TARGETS), caller=caller)
    return target, np.ascontiguousarray(z, dtype=np.float64), np.ascontiguousarray(y), data.n_classes


# ------------------------------------------------------------------------------------------------
# the tests on a prepared view (z, y)
# ------------------------------------------------------------------------------------------------
def _weighted_view(z, y, sample_weight, caller):
    """The view with its frequency weights (a row of weight k counts as k copies): rows of weight 0
    dropped; below :data:`ASYMPTOTIC_MIN_ROWS` total weight, integer weights become repeated rows (at most
    that many: the small-sample null distribution of the unweighted test then applies exactly, as to the
    repeated sample).  Returns (z, y, w) with w None for unweighted rows."""
    w = check_sample_weight(sample_weight, z.shape[0], caller)
    if w is None:
        return z, y, None
    keep = w > 0
    z, y, w = z[keep], y[keep], w[keep]
    if w.sum() < ASYMPTOTIC_MIN_ROWS and np.all(w == np.round(w)):
        counts = w.astype(np.int64)
        return np.ascontiguousarray(np.repeat(z, counts)), np.ascontiguousarray(np.repeat(y, counts)), None
    return z, y, w


def _spiegelhalter(z, y, target, w=None) -> CalibrationTestResult:
    if w is None:
        num, var = spiegelhalter_sums(z, y)
    else:  # Σ w (y − z)(1 − 2z) and its null variance Σ w (1 − 2z)² z (1 − z): independent copies
        lever = 1.0 - 2.0 * z
        num, var = float(np.sum(w * (y - z) * lever)), float(np.sum(w * lever * lever * z * (1.0 - z)))
    if var > 0.0:
        stat = num / math.sqrt(var)
        p = 2.0 * normal_sf(abs(stat))
    else:  # every prediction is 0, 1/2 or 1: the statistic has no variance under calibration
        stat, p = (0.0, 1.0) if num == 0.0 else (math.copysign(math.inf, num), 0.0)
    return _result("spiegelhalter", stat, p, "N(0, 1), two-sided",
                   "E[(y − z)(1 − 2z)] = 0: the Brier score equals its expectation under calibration",
                   z, y, target, _spiegelhalter_statistic, w=w)


def _spiegelhalter_statistic(z):
    """|z| of Spiegelhalter's test for a block of label vectors (rows), the two-sided statistic."""
    w = 1.0 - 2.0 * z
    var = float(np.sum(w * w * z * (1.0 - z)))

    def statistic(labels):
        num = np.abs((labels - z[None, :]) @ w)
        if var > 0.0:
            return num / math.sqrt(var)
        return np.where(num > 1e-12, math.inf, 0.0)

    return statistic


def _check_groups(n_groups) -> int:
    g = check_n_bins(n_groups, "n_groups")
    if g < 3:
        raise InputError(f"Hosmer–Lemeshow needs n_groups >= 3; got {g}")
    return g


def _merge_plan(expected, count, min_expected: float) -> np.ndarray:
    """The merged group of each group (in order of predicted risk): adjacent groups are merged until every
    group expects at least ``min_expected`` events and ``min_expected`` non-events; a short last group
    joins the one before.  Cochran's rule for the χ² approximation: Beta(5, 0.5) predictions at n = 500
    give deciles that expect 0.01 non-events, and χ² then rejects a calibrated model 18 % of the time at
    α = 0.05.  Depends on the predictions only (not on the labels)."""
    group = np.zeros(len(count), dtype=np.int64)
    g, e, c = 0, 0.0, 0.0
    for i, (ei, ci) in enumerate(zip(expected, count, strict=True)):
        e, c = e + ei, c + ci
        group[i] = g
        if e >= min_expected and c - e >= min_expected:
            g, e, c = g + 1, 0.0, 0.0
    if c > 0 and g > 0:
        group[group == g] = g - 1
    return group


def _merge_small_groups(observed, expected, count, min_expected: float):
    """(observed, expected, count) of the merged groups of :func:`_merge_plan`."""
    group = _merge_plan(expected, count, min_expected)
    return tuple(np.bincount(group, weights=np.asarray(v, dtype=np.float64))
                 for v in (observed, expected, count))


def _hosmer_lemeshow(z, y, target, n_groups, fitted, min_expected, w=None) -> CalibrationTestResult:
    g_requested = _check_groups(n_groups)
    if w is None:
        bin_count, expected, observed, _ = equal_mass_sums(z, y, g_requested)
    else:  # the groups of the repeated sample: equal-mass edges by weight, weighted sums per group
        ids, nonempty, _, _, _ = weighted_bins(z, w, g_requested, "equal_mass")
        bin_count, expected, observed = (np.bincount(ids, weights=w * v, minlength=nonempty)
                                         for v in (np.ones_like(z), z, np.asarray(y, dtype=np.float64)))
    formed = bin_count.shape[0]
    observed, expected, count = _merge_small_groups(observed, expected, bin_count.astype(np.float64),
                                                    min_expected)
    g = observed.shape[0]
    if g < 3:
        raise InputError(
            f"Hosmer–Lemeshow needs at least 3 groups; the n = {z.shape[0]} predictions gave "
            f"{formed} group(s) of distinct predictions (n_groups = {g_requested}) and {g} after "
            f"merging groups that expect fewer than min_expected = {min_expected:g} events or non-events")
    lost = 2 if fitted else 0
    # (O − E)²/E + (O − E)²/(N − E): events and non-events of each group; a group whose predictions are
    # all 0 (E = 0) or all 1 (E = N) contributes 0 if it agrees exactly and +inf otherwise
    diff2 = (observed - expected) ** 2
    denom = expected * (count - expected) / count
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # overflow → +inf → p = 0
        terms = np.where(denom > 0, diff2 / np.where(denom > 0, denom, 1.0),
                         np.where(diff2 > 0, math.inf, 0.0))
    stat = float(terms.sum())
    df = g - lost
    p = 0.0 if math.isinf(stat) else chi2_sf(stat, df)
    hypothesis = (f"observed = expected events in each of {g} groups by predicted risk")
    return _result("hosmer_lemeshow", stat, p, f"χ²({df})", hypothesis, z, y, target,
                   lambda zs: _hosmer_lemeshow_statistic(zs, bin_count, min_expected), df=df, w=w)


def _hosmer_lemeshow_statistic(zs, bin_count, min_expected):
    """Hosmer–Lemeshow's C for a block of label vectors (rows) in increasing order of the predictions ``zs``:
    the groups depend on the predictions only (equal-mass bins, contiguous in that order, with the count
    ``bin_count`` each, then merged)."""
    bins = np.repeat(np.arange(bin_count.shape[0]), bin_count.astype(np.int64))
    expected_bins = np.bincount(bins, weights=zs)
    group = _merge_plan(expected_bins, bin_count.astype(np.float64), min_expected)[bins]
    members = np.zeros((zs.shape[0], int(group.max()) + 1))
    members[np.arange(zs.shape[0]), group] = 1.0
    expected, count = zs @ members, members.sum(axis=0)
    denom = expected * (count - expected) / count

    def statistic(labels):
        diff2 = (labels @ members - expected[None, :]) ** 2
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            terms = np.where(denom > 0, diff2 / np.where(denom > 0, denom, 1.0),
                             np.where(diff2 > 1e-18, math.inf, 0.0))
        return terms.sum(axis=1)

    return statistic


#: from this many rows the logistic sums' terms are evaluated on all threads (the same sums, bit for bit)
THREADED_ROWS = 1 << 18


def _logistic_sums(x, y, intercept, slope):
    kernel = logistic_sums_threaded if x.shape[0] >= THREADED_ROWS else logistic_sums
    return kernel(x, y, intercept, slope)


#: from this many rows the fit starts where a fit on an evenly strided subsample of about
#: :data:`WARM_START_ROWS` rows ended: Newton's method then needs 3–4 passes over all rows instead of 6–8
WARM_START_ROWS = 1 << 16
#: ... unless that fit is this close to the null (0, 1) in both coordinates: a start at the null, whose
#: sums the score test has computed, is then as good and costs no pass
WARM_START_DISTANCE = 0.05


def _fit_recalibration(x, y, max_iter: int = 50, null_sums=None) -> tuple[float, float, bool]:
    """Maximum-likelihood (a, b) of logit P(y = 1) = a + b x by Newton's method with step halving; one
    pass over the data per iteration.  Started at the null (0, 1) (``null_sums``: the sums there, when
    already computed) or, on more than 4·:data:`WARM_START_ROWS` rows, at the fit of an evenly strided
    subsample when that is farther than :data:`WARM_START_DISTANCE` from the null (the same maximum:
    the start only changes how many iterations reach it).  (nan, nan,
    False) when the maximum does not exist (perfectly separated or constant labels) or is not
    reached."""
    theta = np.array([0.0, 1.0])
    n = x.shape[0]
    start = None
    if n > 4 * WARM_START_ROWS:
        stride = n // WARM_START_ROWS
        a, b, converged = _fit_recalibration(np.ascontiguousarray(x[::stride]),
                                             np.ascontiguousarray(y[::stride]), max_iter)
        if converged and max(abs(a), abs(b - 1.0)) > WARM_START_DISTANCE:
            start = np.array([a, b])
    if start is not None:
        theta, sums = start, _logistic_sums(x, y, start[0], start[1])
    else:
        sums = null_sums if null_sums is not None else _logistic_sums(x, y, theta[0], theta[1])
    for _ in range(max_iter):
        g_a, g_b, i_aa, i_ab, i_bb, loglik = sums
        info = np.array([[i_aa, i_ab], [i_ab, i_bb]])
        if not np.all(np.isfinite(info)) or np.linalg.cond(info) > 1e12:
            return math.nan, math.nan, False  # slope not identifiable, or separation (weights → 0)
        step = np.linalg.solve(info, np.array([g_a, g_b]))
        for _ in range(40):  # halve until the likelihood does not decrease
            candidate = theta + step
            new = _logistic_sums(x, y, candidate[0], candidate[1])
            if new[5] >= loglik - 1e-12 * abs(loglik):
                break
            step = step / 2.0
        theta, sums = candidate, new
        if np.max(np.abs(step)) <= 1e-9 * (1.0 + np.max(np.abs(theta))):
            return float(theta[0]), float(theta[1]), True
        if np.max(np.abs(theta)) > 1e6:
            break  # diverging: perfectly separated labels
    return math.nan, math.nan, False


def _cox(z, y, target, fit: bool = True) -> CoxTestResult:
    x = clipped_logit(z, COX_EPS)
    null_sums = _logistic_sums(x, y, 0.0, 1.0)
    g_a, g_b, i_aa, i_ab, i_bb, _ = null_sums
    score = np.array([g_a, g_b])
    info = np.array([[i_aa, i_ab], [i_ab, i_bb]])
    # rank 1 when all predictions are equal (the slope is then confounded with the intercept): test the
    # identifiable direction only, with one degree of freedom
    eigval, eigvec = np.linalg.eigh(info)
    keep = eigval > 1e-10 * max(eigval.max(), 0.0)
    df = int(keep.sum())
    if df == 0 or eigval.max() <= 0.0:
        stat = 0.0 if not np.any(score) else math.inf
        df = max(df, 1)
    else:
        proj = eigvec[:, keep].T @ score
        stat = float(np.sum(proj**2 / eigval[keep]))
    p = 0.0 if math.isinf(stat) else chi2_sf(stat, df)
    a, b, converged = _fit_recalibration(x, y, null_sums=null_sums) if fit else (math.nan, math.nan, False)
    return _result("cox", stat, p, f"χ²({df}), score test", "intercept a = 0 and slope b = 1 in "
                   "logit P(y = 1 | z) = a + b·logit(z)", z, y, target,
                   lambda zs: _cox_statistic(clipped_logit(zs, COX_EPS)), df=df,
                   cls=CoxTestResult, intercept=a, slope=b, fit_converged=converged)


def _cox_statistic(x):
    """Cox's score statistic S = Uᵀ I⁻¹ U at (a, b) = (0, 1) for a block of label vectors (rows), on the
    identifiable directions of I as in :func:`_cox` (x the clipped logits)."""
    mu = np.exp(-np.logaddexp(0.0, -x))
    design = np.stack([np.ones_like(x), x], axis=1)
    info = design.T @ ((mu * (1.0 - mu))[:, None] * design)
    eigval, eigvec = np.linalg.eigh(info)
    keep = eigval > 1e-10 * max(eigval.max(), 0.0)
    if not keep.any() or eigval.max() <= 0.0:
        return lambda labels: np.where(np.abs((labels - mu[None, :]) @ design).max(axis=1) > 0, math.inf, 0.0)
    directions = design @ eigvec[:, keep]

    def statistic(labels):
        proj = (labels - mu[None, :]) @ directions
        return np.sum(proj**2 / eigval[keep][None, :], axis=1)

    return statistic


def _cumulative_extremes(z, y):
    keys = cached_sorted_keys(z, y)  # the view T-Cal sorted (the same numbers, without a sort)
    return cumulative_difference_extremes(*(sort_unit_values_by_label(z, y) if keys is None
                                            else split_sorted_keys(keys)))


#: test name → (the deviation of the cumulative sums it measures, its null survival function, the null)
_CUMULATIVE = {
    "kolmogorov_smirnov": (lambda top, bottom: max(top, -bottom), brownian_max_abs_sf,
                           "sup |W| of a standard Brownian motion on [0, 1]"),
    "kuiper": (lambda top, bottom: top - bottom, brownian_range_sf,
               "range max W − min W of a standard Brownian motion on [0, 1]"),
}


def _cumulative_test(name, z, y, target, extremes=None) -> CalibrationTestResult:
    """Kolmogorov–Smirnov or Kuiper statistic of the cumulative differences, scaled by their null
    standard deviation √Σ z(1 − z), with its Brownian-motion p-value."""
    deviation, sf, null = _CUMULATIVE[name]
    top, bottom, var = extremes if extremes is not None else _cumulative_extremes(z, y)
    dev = deviation(top, bottom)
    if var > 0.0:
        stat = dev / math.sqrt(var)
    else:  # all predictions 0 or 1: no null variance
        stat = 0.0 if dev <= 1e-12 else math.inf
    return _result(name, stat, sf(stat) if math.isfinite(stat) else 0.0, null,
                   "the cumulative sum of y − z over predictions in increasing order stays near 0",
                   z, y, target, lambda zs: _cumulative_statistic(name, zs))


def _cumulative_statistic(name, zs):
    """The Kolmogorov–Smirnov or Kuiper statistic for a block of label vectors (rows) in increasing order of
    the predictions ``zs``: the cumulative sums of y − z, read at the last member of each group of tied
    predictions, with S_0 = 0 (as :func:`calviz._kernels.classical.cumulative_difference_extremes`)."""
    last = np.append(zs[1:] != zs[:-1], True)
    var = float(np.sum(zs * (1.0 - zs)))

    def statistic(labels):
        sums = np.cumsum(labels - zs[None, :], axis=1)
        if not last.all():
            sums = sums[:, last]
        top = np.maximum(sums.max(axis=1), 0.0)
        bottom = np.minimum(sums.min(axis=1), 0.0)
        dev = np.maximum(top, -bottom) if name == "kolmogorov_smirnov" else top - bottom
        if var > 0.0:
            return dev / math.sqrt(var)
        return np.where(dev <= 1e-12, 0.0, math.inf)

    return statistic


# ------------------------------------------------------------------------------------------------
# public tests
# ------------------------------------------------------------------------------------------------
@validate_params({})  # no option to check
def spiegelhalter_test(
    y_true, y_prob=None, *, target: str = "auto", class_index: int = 0, sample_weight=None,
) -> CalibrationTestResult:
    """Spiegelhalter's z test of calibration.

    z = Σ_i (y_i − z_i)(1 − 2z_i) / √(Σ_i (1 − 2z_i)² z_i(1 − z_i)) (Spiegelhalter [1]_); under
    calibration (given the predictions) z has mean 0 and variance 1 and is asymptotically N(0, 1).  It is
    the standardised Brier score, Σ (y − z)² − Σ z(1 − z) = Σ (y − z)(1 − 2z).  p-value 2 Φ̄(|z|)
    (two-sided).  When every prediction is 0, ½ or 1 the variance is 0: z = 0, p = 1 if the numerator
    is 0, else ±∞, p = 0.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Frequency weights (a row of weight k counts as k copies): the sums become Σ w (y − z)(1 − 2z) and
        Σ w (1 − 2z)² z(1 − z), n = Σ w.  Below 500 total weight, integer weights are the repeated rows
        (the small-sample null applies); otherwise the p-value is asymptotic.

    Returns
    -------
    CalibrationTestResult
        ``statistic``, ``pvalue`` (asymptotic, conditional on the predictions), ``null_distribution``,
        what the test ``detects``, its ``reference``; ``rejects(alpha)`` gives the decision.

    References
    ----------
    .. [1] D. J. Spiegelhalter. Probabilistic prediction in patient management and clinical trials.
       *Statistics in Medicine* 5(5), 421–433, 1986.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.spiegelhalter_test(y, p)
    >>> round(res.statistic, 2), res.pvalue < 0.05
    (-1.24, False)
    """
    target, z, y, n_classes = _scalar_view(y_true, y_prob, target, class_index, "spiegelhalter_test")
    z, y, w = _weighted_view(z, y, sample_weight, "spiegelhalter_test")
    return with_classes(_spiegelhalter(z, y, target, w), n_classes)


#: Hosmer–Lemeshow's options and their constraints
_HL = {"n_groups": Interval(int, 3, None), "fitted": BOOLEAN, "min_expected": Interval(float, 0, None)}


@validate_params(_HL)
def hosmer_lemeshow_test(
    y_true, y_prob=None, *, n_groups: int = 10, fitted: bool = False, min_expected: float = 5.0,
    target: str = "auto", class_index: int = 0, sample_weight=None,
) -> CalibrationTestResult:
    """Hosmer–Lemeshow goodness-of-fit test on groups of equal size by predicted risk.

    The predictions are split into ``n_groups`` equal-mass groups (deciles of risk by default; calviz's
    equal-mass bins, so tied predictions are never split and heavy ties give fewer groups); with O_g,
    E_g, N_g the events, expected events Σ z and size of group g,
    C = Σ_g (O_g − E_g)² / (E_g (1 − E_g/N_g)) (Hosmer and Lemeshow [1]_), compared with χ²(g − 2)
    when the predictions come from a logistic model fitted on the same data (``fitted=True``, the 1980
    setting) and with χ²(g) for held-out predictions (``fitted=False``, the default: no parameter was
    estimated on this sample; Hosmer, Lemeshow and Sturdivant, *Applied Logistic Regression*, 3rd ed.,
    2013, §5.2.2).  Before that, adjacent groups are merged until each expects at least
    ``min_expected`` events and non-events (Cochran's rule for the χ² approximation; 0 keeps every
    group); g is the number of groups left.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    n_groups : int, default 10
        Groups before merging.
    fitted : bool, default False
        The predictions were fitted on this sample (χ²(g − 2) instead of χ²(g)).
    min_expected : float, default 5.0
        Fewest expected events and non-events per group.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Frequency weights (a row of weight k counts as k copies): groups of equal total weight, O_g, E_g
        and N_g summed with the weights.  Below 500 total weight, integer weights are the repeated rows
        (the small-sample null applies); otherwise the p-value is asymptotic.

    Returns
    -------
    CalibrationTestResult
        ``statistic``, ``pvalue`` (asymptotic, conditional on the predictions), ``null_distribution``,
        what the test ``detects``, its ``reference``; ``rejects(alpha)`` gives the decision.

    Raises
    ------
    InputError
        When fewer than 3 groups are left (e.g. fewer than 3 distinct predictions).

    References
    ----------
    .. [1] D. W. Hosmer and S. Lemeshow. Goodness of fit tests for the multiple logistic regression model.
       *Communications in Statistics – Theory and Methods* 9(10), 1043–1069, 1980.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.hosmer_lemeshow_test(y, p)
    >>> round(res.statistic, 1), res.df, res.pvalue < 0.05
    (126.0, 10, True)
    """
    fitted, min_expected = bool(fitted), float(min_expected)
    target, z, y, n_classes = _scalar_view(y_true, y_prob, target, class_index, "hosmer_lemeshow_test")
    z, y, w = _weighted_view(z, y, sample_weight, "hosmer_lemeshow_test")
    return with_classes(_hosmer_lemeshow(z, y, target, n_groups, fitted, min_expected, w), n_classes)


@validate_params({})  # no option to check; refuses sample_weight with the one message
def cox_test(y_true, y_prob=None, *, target: str = "auto", class_index: int = 0) -> CoxTestResult:
    """Cox's test of calibration intercept 0 and slope 1, as a score test.

    Model logit P(y = 1 | z) = a + b x with x = logit(z) (Cox [1]_; z clipped to [1e-12, 1 − 1e-12]); at
    the null (a, b) = (0, 1) the model probability is z itself, the score is U = Σ (y − z)(1, x) and the
    Fisher information I = Σ z(1 − z)(1, x)(1, x)ᵀ; S = Uᵀ I⁻¹ U is asymptotically χ²₂ (χ²₁ when all
    predictions are equal, so that only one direction is identifiable).  This is the test compared with
    T-Cal by Lee et al. [2]_, §4.1.  The result also carries the maximum-likelihood a and b (Newton's
    method; NaN when the labels are perfectly separated or all equal).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    CoxTestResult
        ``statistic`` S, ``pvalue``, ``df``, and the fitted ``intercept`` and ``slope``.

    References
    ----------
    .. [1] D. R. Cox. Two further applications of a model for binary regression. *Biometrika* 45(3/4),
       562–565, 1958.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.cox_test(y, p)
    >>> round(res.intercept, 2), round(res.slope, 2), res.pvalue < 0.05
    (-0.66, 1.17, True)
    """
    target, z, y, n_classes = _scalar_view(y_true, y_prob, target, class_index, "cox_test")
    return with_classes(_cox(z, y, target), n_classes)


@validate_params({})  # no option to check; refuses sample_weight with the one message
def kolmogorov_smirnov_test(
    y_true, y_prob=None, *, target: str = "auto", class_index: int = 0,
) -> CalibrationTestResult:
    """Kolmogorov–Smirnov test of calibration on cumulative differences (no bins).

    With the predictions sorted increasingly, S_k = Σ_{j≤k} (y_j − z_j) (S_0 = 0) and
    σ = √Σ_j z_j(1 − z_j): statistic G = max_k |S_k| / σ (the (1/n)-scaled ECCE-MAD of Arrieta-Ibarra
    et al. [1]_ divided by its null standard deviation); under calibration G → sup_{t≤1} |W_t|
    (:func:`brownian_max_abs_sf`).  S_k is read only at the last member of each group of tied
    predictions, so the result does not depend on how ties are ordered.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    CalibrationTestResult
        ``statistic``, ``pvalue`` (asymptotic, conditional on the predictions), ``null_distribution``,
        what the test ``detects``, its ``reference``; ``rejects(alpha)`` gives the decision.

    References
    ----------
    .. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu. Metrics of calibration for
       probabilistic predictions. *Journal of Machine Learning Research* 23(351), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.kolmogorov_smirnov_test(y, p)
    >>> round(res.statistic, 2), res.pvalue < 0.05
    (11.22, True)
    """
    target, z, y, n_classes = _scalar_view(y_true, y_prob, target, class_index, "kolmogorov_smirnov_test")
    return with_classes(_cumulative_test("kolmogorov_smirnov", z, y, target), n_classes)


@validate_params({})  # no option to check; refuses sample_weight with the one message
def kuiper_test(y_true, y_prob=None, *, target: str = "auto", class_index: int = 0) -> CalibrationTestResult:
    """Kuiper test of calibration on cumulative differences (no bins).

    Statistic H = (max_k S_k − min_k S_k) / σ with S, σ as in :func:`kolmogorov_smirnov_test`
    (S_0 = 0 included; Arrieta-Ibarra et al. [1]_); under calibration H → max W − min W on [0, 1]
    (:func:`brownian_range_sf`).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    CalibrationTestResult
        ``statistic``, ``pvalue`` (asymptotic, conditional on the predictions), ``null_distribution``,
        what the test ``detects``, its ``reference``; ``rejects(alpha)`` gives the decision.

    References
    ----------
    .. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu. Metrics of calibration for
       probabilistic predictions. *Journal of Machine Learning Research* 23(351), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.kuiper_test(y, p)
    >>> round(res.statistic, 2), res.pvalue < 0.05
    (11.22, True)
    """
    target, z, y, n_classes = _scalar_view(y_true, y_prob, target, class_index, "kuiper_test")
    return with_classes(_cumulative_test("kuiper", z, y, target), n_classes)


def _unweighted_only(name: str, weighted: bool) -> None:
    """Refuse a test without a weighted form in a weighted run (listed in ``errors`` with this reason)."""
    if weighted:
        raise InputError(f"calviz has no weighted {TEST_LABELS[name]} test, so it is left out of a weighted "
                         "run (the weighted tests: Spiegelhalter z, Hosmer–Lemeshow)")


@validate_params({**_HL, "alpha": UNIT_OPEN, "measures": BOOLEAN, "n_bins": POSITIVE_INT,
                  "tests": ListOf(Options(TEST_NAMES))})
def classical_tests(
    y_true, y_prob=None, *, alpha: float = ALPHA, target: str = "auto", class_index: int = 0,
    n_groups: int = 10, fitted: bool = False, min_expected: float = 5.0, tests: tuple[str, ...] = TEST_NAMES,
    measures: bool = False, n_bins: int = 15, sample_weight=None,
) -> ClassicalTests:
    """Run the classical calibration tests on one sample and collect them with their decisions.

    Spiegelhalter's z [1]_, Hosmer–Lemeshow [2]_, Cox's intercept/slope test [3]_ and the
    Kolmogorov–Smirnov and Kuiper tests on cumulative differences [4]_, on one validated scalar view.
    A test that cannot be computed on this sample (e.g. Hosmer–Lemeshow with fewer distinct predictions
    than groups) is listed in ``errors`` with the reason instead of failing the others; bad input raises
    :class:`InputError` as every calviz function does.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    alpha : float, default 0.05
        Level of the decisions.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    n_groups, fitted, min_expected
        Hosmer–Lemeshow's options (:func:`hosmer_lemeshow_test`).
    tests : tuple of str
        A subset of ``TEST_NAMES`` (default: all five).
    measures : bool, default False
        Also compute the maximum calibration error (:func:`calviz.mce`, ``n_bins`` equal-width bins) and
        the adaptive calibration error (:func:`calviz.ace`, ``n_bins`` equal-mass bins, over all
        classes) into ``measures``.
    n_bins : int, default 15
        Bins of the measures.
    sample_weight : array-like of shape (n,), optional
        Non-negative frequency weights (a row of weight k counts as k rows).  The tests with a standard
        weighted form take them — Spiegelhalter's z and Hosmer–Lemeshow (:func:`spiegelhalter_test`,
        :func:`hosmer_lemeshow_test`) — and so do the MCE and ACE; Cox's test and the cumulative
        (Kolmogorov–Smirnov, Kuiper) tests have none in calviz and are listed in ``errors`` saying so,
        never computed unweighted in a weighted analysis.

    Returns
    -------
    ClassicalTests
        ``tests``, ``errors``, ``alpha``, ``measures``; ``rows()`` tabulates them.

    References
    ----------
    .. [1] D. J. Spiegelhalter. Probabilistic prediction in patient management and clinical trials.
       *Statistics in Medicine* 5(5), 421–433, 1986.
    .. [2] D. W. Hosmer and S. Lemeshow. Goodness of fit tests for the multiple logistic regression model.
       *Communications in Statistics – Theory and Methods* 9(10), 1043–1069, 1980.
    .. [3] D. R. Cox. Two further applications of a model for binary regression. *Biometrika* 45(3/4),
       562–565, 1958.
    .. [4] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu. Metrics of calibration for
       probabilistic predictions. *Journal of Machine Learning Research* 23(351), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.classical_tests(y, p, alpha=0.05)
    >>> for row in res.rows():
    ...     print(row["test"], row["reject"])
    Spiegelhalter z False
    Hosmer–Lemeshow True
    Cox intercept/slope True
    Kolmogorov–Smirnov True
    Kuiper True
    """
    alpha = float(alpha)
    fitted, min_expected = bool(fitted), float(min_expected)
    asked = target  # (a Target names its class itself: the measures get it as it was asked for)
    target, z, y, n_classes = _scalar_view(y_true, y_prob, target, class_index, "classical_tests")
    weighted = sample_weight is not None
    if weighted:  # (validated once; each weighted test drops the rows of weight 0 from the same view)
        sample_weight = check_sample_weight(sample_weight, z.shape[0], "classical_tests")
        wz, wy, w = _weighted_view(z, y, sample_weight, "classical_tests")
    else:
        wz, wy, w = z, y, None
    extremes = (_cumulative_extremes(z, y) if {"kolmogorov_smirnov", "kuiper"} & set(tests) and not weighted
                else None)
    run = {
        "spiegelhalter": lambda: _spiegelhalter(wz, wy, target, w),
        "hosmer_lemeshow": lambda: _hosmer_lemeshow(wz, wy, target, n_groups, fitted, min_expected, w),
        "cox": lambda: _unweighted_only("cox", weighted) or _cox(z, y, target),
        "kolmogorov_smirnov": lambda: _unweighted_only("kolmogorov_smirnov", weighted) or _cumulative_test(
            "kolmogorov_smirnov", z, y, target, extremes),
        "kuiper": lambda: _unweighted_only("kuiper", weighted) or _cumulative_test("kuiper", z, y, target,
                                                                                   extremes),
    }
    results, errors = [], {}
    for name in TEST_NAMES:
        if name not in tests:
            continue
        try:
            results.append(with_classes(run[name](), n_classes))
        except InputError as exc:
            errors[name] = str(exc)
    found = {}
    if measures:
        from calviz._ece import ace, mce

        weights = {} if not weighted else {"sample_weight": sample_weight}
        found = {"mce": mce(y_true, y_prob, n_bins=n_bins, target=asked, class_index=class_index, **weights),
                 "ace": ace(y_true, y_prob, n_bins=n_bins, target="classwise", **weights)}
    return ClassicalTests(tuple(results), errors, alpha, int(z.shape[0]), target, found, n_classes)
