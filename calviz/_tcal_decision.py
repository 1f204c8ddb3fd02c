"""Adaptive T-Cal without the data: the scale plan and every decision rule, for any backend.

The in-memory test (:func:`calviz.adaptive_tcal`) and its Dask driver (:func:`calviz.dask.adaptive_tcal`)
differ only in how they reach the sample; both hand :func:`adaptive` an object with

* ``n``, ``K``, ``target`` — sample size, classes of the statistic (2 for 1-D targets), resolved target;
* ``distinct(limit)`` — for 1-D targets ``(values, counts, successes)`` of the distinct predictions, or
  ``None`` when there are more than ``limit``;
* ``analytic_terms(levels)`` — ``((5, L) [T^d, Var₀, Σ tr A_b, Σ tr A_b², κ₃] per scale, note)`` with
  L ≤ levels (L < levels: the finer scales were omitted, ``note`` says why);
* ``observed(levels)`` and ``null_variance(levels)`` — T^d and Var₀(T^d | Z) per scale 2^1..2^levels;
* ``resample(levels, source, base_seed, start, count)`` — the resampled statistics (count, levels) of
  the resamples start..start+count−1, resample r drawing from the SplitMix64 stream
  ``stream_seed(base_seed, r)`` point by point in scan order (sorted predictions), so that any backend
  that draws the same stream at the same positions gives the same numbers;
* ``y_only_log_mgf_bounds(levels, level, thetas)`` — the bounds of
  :func:`calviz._kernels.tcal.y_only_log_mgf_bounds` at scale 2^level of the scan (None for full
  calibration): the Chernoff certificate of :func:`_tail_bound_reject`, which settles clear y-only
  rejections without resampling — every backend must give it, or its results differ.

Lee, Huang, Hassani and Dobriban (2023), "T-Cal: an optimal test for the calibration of predictive
models", JMLR 24: Algorithm 2 (adaptive test), Theorem 3 (thresholds), App. B.4 (discrete predictors),
App. C.3 (resampling).  The sequential rule: Robbins (1970); Gandy (2009); Ding, Gandy and Hahn (2020).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import special

from calviz._data import InputError, check_alpha
from calviz._kernels import tcal as _k
from calviz._lazy import LazyModule
from calviz._params import Interval, Options, check_param, kernel_seed
from calviz.targets import TARGETS as ALL_TARGETS

stats = LazyModule("scipy.stats")

#: a 1-D predictor with at most this many distinct values ...
DISCRETE_MAX_VALUES = 20
#: ... each predicted for at least this many samples is treated as discrete (App. B.4).  Continuous
#: predictors essentially never repeat a value, so repeated values are the signature of a discrete one.
DISCRETE_MIN_COUNT = 2
#: most distinct values ``discrete=True`` accepts (one exact binomial test per value)
DISCRETE_FORCED_MAX = 10_000
#: largest dyadic level (bin ids are int64)
MAX_LEVEL = 62
#: default bound on the resampling risk: the probability that the decision reported by the sequential
#: rule differs from the decision with infinitely many resamples
RESAMPLING_RISK = 1e-3
#: default cap of the sequential rule (resamples; every resample gives a statistic at every scale): a
#: borderline p-value 0.2 % from α needs a few 10⁵ resamples to settle (give ``max_resamples`` up to
#: MAX_RESAMPLES, or a ``time_budget``), a genuine coin flip never does; the default keeps the stored
#: resamples (8·B bytes each) and a Dask worker's share of them small
DEFAULT_MAX_RESAMPLES = 100_000
#: default time budget of the sequential rule, in seconds of resampling: none, so that a result depends on
#: the seed alone (a budget of time makes an undecided case's resamples depend on the machine's speed);
#: the budget of resamples (DEFAULT_MAX_RESAMPLES, DEFAULT_RESAMPLE_WORK) bounds the work.  A caller that
#: gives seconds stops at the budget of time or of resamples, whichever comes first, and gets "undecided"
#: with the Monte Carlo interval (and the analytic p-value) if the decision is not settled by then
DEFAULT_TIME_BUDGET = None
#: the clock of the time budget (monotonic seconds); tests replace it to check the budget deterministically
clock = time.monotonic
#: default cap on resampling work, in point-resamples (n × resamples; × K for full calibration): the cap
#: falls below DEFAULT_MAX_RESAMPLES only beyond n = 2·10⁵ (about a minute of work at most)
DEFAULT_RESAMPLE_WORK = 20_000_000_000
#: hard limits of an explicit ``n_resamples`` / ``max_resamples`` (memory 8·B bytes per resample)
MAX_RESAMPLES = 1_000_000
MAX_RESAMPLE_WORK = 100_000_000_000
#: resamples of the first look of the sequential rule (two blocks of the kernels' 64 lanes)
FIRST_BATCH = 128
#: relative tolerance when comparing resampled statistics with the observed one: mathematically equal
#: values computed in different orders must count as ties (ties count against rejection)
_TIE_RTOL = 1e-9

RESAMPLINGS = ("y_only", "consistency", "analytic", "threshold")
COMBINES = ("bonferroni", "max")
#: T-Cal tests scalar targets and full calibration (the top-k vector has no T-Cal)
TARGETS = tuple(t for t in ALL_TARGETS if t != "topk")


#: what a user can do about an undecided resampled T-Cal — written here once, where the decision is made
#: (:func:`undecided_advice` fills it in; ``TCalResult.advice``)
UNDECIDED_ADVICE = ("the p-value is too close to α to settle with {cap} resamples: read it as borderline "
                    "evidence")
#: ... and the remedies that apply: the analytic critical values (from ASYMPTOTIC_MIN_ROWS rows on) ...
UNDECIDED_ANALYTIC = "choose the analytic critical values for a decision without resampling error"
#: ... and a larger cap of the sequential rule
UNDECIDED_MORE = "settle it in Python with calviz.adaptive_tcal(y_true, y_prob, max_resamples={more})"


def undecided_advice(n: int, cap: int) -> str:
    """:data:`UNDECIDED_ADVICE` for an undecided test of n rows that reached the cap of ``cap`` resamples,
    with the remedies that apply: the analytic critical values (used from ASYMPTOTIC_MIN_ROWS rows on)
    and a larger cap (up to MAX_RESAMPLES and the work limit)."""
    from calviz._small_n import ASYMPTOTIC_MIN_ROWS

    more = int(min(MAX_RESAMPLES, MAX_RESAMPLE_WORK // max(int(n), 1), 10 * int(cap)))
    remedies = [UNDECIDED_ANALYTIC] if n >= ASYMPTOTIC_MIN_ROWS else []
    if more > cap:
        remedies.append(UNDECIDED_MORE.format(more=f"{more:_}"))
    return UNDECIDED_ADVICE.format(cap=cap) + "".join(f"; or {r}" if k else f"; {r}"
                                                      for k, r in enumerate(remedies))


@dataclass(frozen=True, repr=False)
class Resamples:
    """The resampled statistics of a resampled T-Cal, kept with its result (``TCalResult._draws``).

    The test at another α, or with a larger cap, reuses them (``adaptive_tcal(..., reuse=result)``); a
    reuse on other data, with another seed or another resampling is refused.

    Attributes
    ----------
    statistics : ndarray of shape (N, B)
        T^d at each scale of resamples 0..N−1 (resample r in row r, drawn from the SplitMix64 stream
        ``stream_seed(base, r)``).
    source : int
        The resampling (the kernels' y-only or consistency code).
    base : int
        The base seed of the streams.
    observed : ndarray of shape (B,)
        The observed statistics of the data they were drawn for.
    """

    statistics: np.ndarray
    source: int
    base: int
    observed: np.ndarray


def _reused(reuse: Resamples | None, t_obs, source: int, base) -> np.ndarray | None:
    """The statistics of an earlier run's resamples when they are this run's too, else an InputError."""
    if reuse is None:
        return None
    if not isinstance(reuse, Resamples):
        raise InputError("reuse must be an earlier resampled T-Cal result (TCalResult)")
    if (reuse.source != source or reuse.base != int(base) or reuse.observed.shape != t_obs.shape
            or not np.array_equal(reuse.observed, t_obs)):
        raise InputError("reuse: the earlier result was computed on other data, with another resampling or "
                         "with another seed; its resamples are not this test's")
    return reuse.statistics


def _draw(sample, levels: int, source: int, base, start: int, count: int, drawn: np.ndarray | None):
    """The statistics of resamples start..start+count−1: those in ``drawn`` (rows 0..D−1, resample r at
    row r) reused, the others drawn (stream r for resample r, so the rows are the same either way)."""
    have = 0 if drawn is None else drawn.shape[0]
    if start + count <= have:
        return drawn[start:start + count]
    if start >= have:
        return sample.resample(levels, source, base, start, count)
    more = sample.resample(levels, source, base, have, start + count - have)
    return np.concatenate([drawn[start:have], more])


def _kept(boot, store, drawn, source, base, t_obs) -> Resamples:
    """The resamples a sequential result keeps: every one drawn so far (those reused included), in a
    buffer of their own size."""
    if drawn is not None and drawn.shape[0] > boot.shape[0]:
        return Resamples(drawn, source, int(base), t_obs)
    return Resamples(boot if store.shape[0] == boot.shape[0] else boot.copy(), source, int(base), t_obs)


def _result(*fields) -> tuple:
    """The fields of a :class:`calviz.tcal.TCalResult` in order: the callers build the result with the
    in-memory constructor (``TCalResult(*fields)``), so its conventions hold on every backend."""
    return fields


def check_options(*, alpha, resampling, n_resamples, max_resamples, resampling_risk, combine, target,
                  discrete, caller: str = "adaptive_tcal") -> tuple:
    """The checks of :func:`calviz.adaptive_tcal`'s options; returns (alpha, n_resamples, max_resamples,
    risk) validated."""
    alpha = check_alpha(alpha)
    check_choice(resampling, RESAMPLINGS, "resampling", caller)
    check_choice(combine, COMBINES, "combine", caller)
    if combine == "max" and resampling not in ("y_only", "consistency"):
        raise InputError("combine='max' needs a resampling distribution: "
                         "use resampling='y_only' or 'consistency'")
    if n_resamples is not None:
        n_resamples = check_n_resamples(n_resamples)
    if max_resamples is not None:
        if n_resamples is not None:
            raise InputError("give n_resamples (a fixed count) or max_resamples (the cap of the sequential "
                             "rule), not both")
        max_resamples = check_n_resamples(max_resamples, "max_resamples")
        if max_resamples < FIRST_BATCH:
            raise InputError(f"max_resamples must be at least one batch of the sequential rule "
                             f"({FIRST_BATCH}); got {max_resamples}")
    risk = check_alpha(resampling_risk, "resampling_risk")
    if discrete not in (None, True, False):
        raise InputError(f"discrete must be None, True or False; got {discrete!r}")
    check_choice(target, TARGETS, "target", caller)
    return alpha, n_resamples, max_resamples, risk


def scale_plan(n: int, K: int, full: bool) -> tuple[int, int, str]:
    """(B of Algorithm 2, number of scales tested, text) for n samples: :func:`dyadic_scales`, and for
    full calibration also the int64 bound of the simplex cell keys, m^{K−1}(K−1)! < 2^63."""
    B_paper, levels = dyadic_scales(n, K)
    if full:
        while levels >= 1 and (K - 1) * levels + math.log2(math.factorial(K - 1)) >= 63:
            levels -= 1
    if levels < 1:
        raise InputError(
            f"n = {n} is too small for even one dyadic scale with K = {K} classes (scale 2 has 2^{K - 1} "
            f"bins > n²); use target='top1' or 'classwise', or more samples"
        )
    text = f"{levels} dyadic scales 2..2^{levels}" + (
        f" (Algorithm 2's B = {B_paper}; finer scales capped)" if levels < B_paper else "")
    return B_paper, levels, text


def adaptive(sample, *, alpha, resampling, n_resamples, max_resamples, risk, combine, discrete, seed,
             work_limit=MAX_RESAMPLE_WORK, time_budget=DEFAULT_TIME_BUDGET, reuse: Resamples | None = None
             ) -> tuple:
    """Adaptive T-Cal of ``sample`` (see the module docstring) with validated options: the discrete
    predictor test, then the analytic, threshold or resampled decision over the dyadic scales.  Returns the
    fields of the :class:`calviz.tcal.TCalResult`.  ``work_limit``: most point-resamples (n × resamples);
    ``time_budget``: most seconds of sequential resampling (None: no time limit); ``reuse``: the resamples
    of an earlier run on the same sample, resampling and seed (e.g. at another α): the rule takes its
    resamples from them as far as they go and draws only the ones beyond, so the result is the one computed
    without them (a time budget aside: reused resamples take no time)."""
    started = clock()  # the time budget counts from here
    n, K, target = int(sample.n), int(sample.K), sample.target
    full = target == "full"
    if not full and discrete is not False:
        summary = sample.distinct(DISCRETE_FORCED_MAX if discrete else DISCRETE_MAX_VALUES)
        if (summary is not None and summary[0].shape[0] <= DISCRETE_MAX_VALUES
                and summary[1].min() >= DISCRETE_MIN_COUNT):
            return binomial_decision(*summary, alpha, target, K)
        if discrete:
            if summary is None:
                raise InputError(f"discrete=True, but the predictions take more than {DISCRETE_FORCED_MAX} "
                                 f"distinct values; the per-value binomial test allows at most "
                                 f"{DISCRETE_FORCED_MAX}")
            return binomial_decision(*summary, alpha, target, K, why="discrete=True: exact binomial test per "
                                     "distinct value (App. B.4), Bonferroni over the values")
    B_paper, levels, scale_text = scale_plan(n, K, full)
    kind_text = "full K-class calibration on the simplex partition" if full else f"{target} calibration"
    if resampling == "analytic":
        terms, note = sample.analytic_terms(levels)
        kept = terms.shape[1]
        if note:
            warnings.warn(f"adaptive_tcal: {note}", stacklevel=3)
            scale_text = f"{kept} dyadic scales 2..2^{kept} ({note})"
        moments = terms[1:4] if full else terms[1:]  # no third cumulant for vector residuals: Satterthwaite
        return analytic_decision(terms[0], moments, tuple(2**b for b in range(1, kept + 1)), alpha, n, K,
                                 target, "adaptive T-Cal",
                                 f"{kind_text}; {scale_text}; scaled chi-square critical values, Bonferroni")
    scales = tuple(2**b for b in range(1, levels + 1))
    t_obs = sample.observed(levels)
    if resampling == "threshold":
        return threshold_decision(t_obs, scales, alpha, n, K, target,
                                  f"{kind_text}; {scale_text}; Theorem 3 Chebyshev thresholds at α/B")
    source = _k.Y_ONLY if resampling == "y_only" else _k.CONSISTENCY
    cost = n * (K if full else 1)  # point-resamples per resample
    if n_resamples is not None:
        _check_work(n_resamples, cost, "n_resamples", work_limit)
    else:
        max_resamples = resample_cap(max_resamples, cost)
        _check_work(max_resamples, cost, "max_resamples", work_limit)
    base = base_seed(seed)
    drawn = _reused(reuse, t_obs, source, base)
    head = f"{kind_text}; {scale_text}; {resampling.replace('_', '-')} resampling"
    if n_resamples is not None:
        return _fixed_resampling(sample, t_obs, levels, scales, source, base, n_resamples, alpha, combine, n,
                                 K, target, head, drawn)
    return _sequential_resampling(sample, t_obs, levels, scales, source, base, max_resamples, alpha, combine,
                                  risk, n, K, target, head, cost, time_budget, started, drawn)


def threshold_decision(t_obs, scales, alpha, n, K, target, reason):
    """Adaptive T-Cal with the Theorem 3 Chebyshev thresholds at level α/B."""
    levels, scalar = len(scales), target != "full"
    p = np.array([chebyshev_pvalue(t, m, n, K, scalar) for t, m in zip(t_obs, scales, strict=True)])
    crit = np.array([chebyshev_threshold(m, n, K, alpha / levels, scalar=scalar) for m in scales])
    padj = float(min(1.0, levels * p.min()))
    return _result(bool(np.any(t_obs >= crit)), padj, alpha, scales, t_obs, crit, p, "threshold",
                   "bonferroni", n, K, 0, 0.0, "adaptive T-Cal", reason, target)


def binomial_decision(values, counts, successes, alpha, target, K, why="") -> tuple:
    """Exact binomial test of P(y = 1 | z = v) = v per distinct prediction v (App. B.4), Bonferroni over
    the values; ``successes`` are the label sums of each value."""
    successes = np.rint(np.asarray(successes, dtype=np.float64)).astype(np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
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
    return _result(bool(padj <= alpha), padj, alpha, (t,), successes / counts, values, pvals, "binomial",
                   "bonferroni", int(counts.sum()), K, 0, float(min(1.0, t * min_p)),
                   "binomial (discrete predictor)", reason, target, values, counts)


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


def chebyshev_pvalue(T: float, m: int, n: int, K: int, scalar: bool) -> float:
    """Smallest level at which the Theorem 3 test rejects: min(1, 2K²r²/T_vec²) (1 if T ≤ 0)."""
    t_vec = 2.0 * T if scalar else T
    if not t_vec > 0.0:
        return 1.0
    r = min(m ** ((K - 1) / 2.0) / n, m ** (-(K - 1) / 2.0))
    ratio = r / t_vec  # (T² underflows to 0 for T below 1e-154: the ratio first)
    return float(min(1.0, 2.0 * K * K * ratio * ratio))


def check_choice(value, allowed, name, caller: str | None = None):
    return check_param(value, name, Options(allowed), caller)


def check_n_resamples(n_resamples, name: str = "n_resamples", limit: int | None = None) -> int:
    return int(check_param(n_resamples, name, Interval(int, 1, MAX_RESAMPLES if limit is None else limit)))


def base_seed(seed) -> np.uint64:
    """The base of the per-resample SplitMix64 streams (the library's seed policy)."""
    return np.uint64(kernel_seed(seed))


def cantelli_bound(t, var) -> np.ndarray:
    """Cantelli's bound of P(T ≥ t) for any T of mean 0 and variance ``var``: var/(var + t²) for t > 0,
    else 1 (per scale)."""
    t, var = np.asarray(t, dtype=np.float64), np.asarray(var, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(t > 0, var / (var + t * t), 1.0)
    return np.nan_to_num(bound, nan=1.0)


def cantelli_critical(var, level: float) -> np.ndarray:
    """Where :func:`cantelli_bound` reaches ``level``: sqrt(var (1 − level)/level)."""
    return np.sqrt(np.asarray(var, dtype=np.float64) * (1.0 - level) / level)


#: below this many degrees of freedom the κ₃-matched c(χ²_ν − ν) is no longer trusted alone
#: (:func:`analytic_pvalues`)
MIN_CHI2_DF = 1.0


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

    p = P(χ²_ν ≥ ν + T^d/c).  Where κ₃ gives ν < 1 (:data:`MIN_CHI2_DF`) — a scale whose few occupied bins
    hold predictions very near 0 or 1 — χ²_ν piles nearly all its mass at 0, and the approximation can put
    the mode of T^d below 0 where the mode of the true law is the small positive value of the likeliest
    labels (all 0 or all 1): calibrated confident models were rejected at 0.17–0.6 instead of 0.05 (a
    softmax model of 10 classes, Beta(0.2, 0.4) predictions).  There p is at least Cantelli's bound
    Var₀/(Var₀ + T²), valid for every law of mean 0 and variance Var₀ (:func:`cantelli_bound`); the level
    is then 0.01–0.05 in those settings, and the scales with ν ≥ 1 carry the test's power.

    Arguments are per-scale arrays (see :func:`null_moments_from_sums`).  Returns (pvalues, nu, c).  A scale
    without any bin of ≥ 2 points (or zero null variance) has T^d ≡ 0 under H₀: p = 1 if T^d ≤ 0 else 0.
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
        p[chi] = special.chdtrc(nu[chi], np.maximum(nu[chi] + t[chi] / c[chi], 0.0))  # = chi2.sf
    normal = ok & ~np.isfinite(nu)
    if normal.any():
        p[normal] = special.ndtr(-t[normal] / np.sqrt(var[normal]))  # = norm.sf
    weak = chi & (nu < MIN_CHI2_DF)
    p[weak] = np.maximum(p[weak], cantelli_bound(t[weak], var[weak]))
    return np.clip(p, 0.0, 1.0), nu, c


def _analytic_critical(level: float, nu: np.ndarray, c: np.ndarray, var: np.ndarray) -> np.ndarray:
    crit = np.full(nu.shape, np.inf)
    chi = np.isfinite(nu)
    crit[chi] = c[chi] * (special.chdtri(nu[chi], level) - nu[chi])  # chdtri(ν, q) = chi2.isf(q, ν)
    weak = chi & (nu < MIN_CHI2_DF)  # (the p-value is at least Cantelli's bound there)
    crit[weak] = np.maximum(crit[weak], cantelli_critical(var[weak], level))
    normal = np.isinf(nu) & (var > 0)
    crit[normal] = np.sqrt(var[normal]) * -special.ndtri(level)  # = norm.isf
    return crit


def analytic_decision(t, moments, scales, alpha, n, K, target, test, reason):
    """Adaptive T-Cal with the analytic (scaled chi-square) critical values from per-scale T^d and null
    moments [Var₀, Σ tr A_b, Σ tr A_b², (κ₃)] (see :func:`analytic_pvalues`), Bonferroni over the scales.

    Below ASYMPTOTIC_MIN_ROWS rows (where the approximation's level was not checked) each scale's p-value is
    at least Cantelli's bound Var₀/(Var₀ + T²), an upper bound of the exact p-value given the predictions
    for any law of mean 0 and variance Var₀ (:func:`cantelli_bound`): the test is then valid at every n,
    conservatively (the resampled test is exact and more powerful there), and no p-value falls below the
    probability of the observed labels."""
    from calviz._small_n import ASYMPTOTIC_MIN_ROWS

    B = len(scales)
    k3 = moments[3] if len(moments) > 3 else None
    # (scipy.special's functions, not scipy.stats' wrappers: ~0.5 ms a call saved, once per window of a log)
    p, nu, c = analytic_pvalues(t, moments[0], moments[1], moments[2], k3)
    var = np.asarray(moments[0], dtype=np.float64)
    crit = _analytic_critical(alpha / B, nu, c, var)
    if n < ASYMPTOTIC_MIN_ROWS:
        p = np.maximum(p, cantelli_bound(t, var))
        crit = np.where(var > 0, np.maximum(crit, cantelli_critical(np.maximum(var, 0.0), alpha / B)), crit)
        reason += (f"; n < {ASYMPTOTIC_MIN_ROWS}: each p-value at least Cantelli's bound Var₀/(Var₀ + T²), "
                   f"valid at any n")
    padj = float(min(1.0, B * p.min()))
    return _result(bool(p.min() <= alpha / B), padj, alpha, scales, t, crit, p, "analytic", "bonferroni",
                      n, K, 0, 0.0, test, reason, target)


def resample_cap(max_resamples: int | None, cost: int) -> int:
    """The cap of the sequential rule for ``cost`` point-resamples per resample."""
    if max_resamples is None:
        return int(min(DEFAULT_MAX_RESAMPLES, max(FIRST_BATCH, DEFAULT_RESAMPLE_WORK // max(cost, 1))))
    return int(max_resamples)


def _check_work(count: int, cost: int, name: str, limit: int) -> None:
    if count * cost > limit:
        raise InputError(f"{name} = {count} with {cost} point-draws per resample exceeds the resampling work "
                         f"limit of {limit:.0e} point-resamples (calviz.tcal.MAX_RESAMPLE_WORK); "
                         f"use at most {limit // cost}")


def _fixed_resampling(sample, t_obs, levels, scales, source, base, N, alpha, combine, n, K, target, head,
                      drawn=None):
    """Today's fixed-count rule: N resamples, p = (1 + #{T* ≥ T})/(N + 1); warns when N cannot settle."""
    floor = levels / (N + 1) if combine == "bonferroni" else 1.0 / (N + 1)
    if floor > alpha:
        need = math.ceil(levels / alpha) if combine == "bonferroni" else math.ceil(1 / alpha)
        warnings.warn(
            f"n_resamples = {N} is too few: the smallest attainable p-value is {floor:.3g} > "
            f"alpha = {alpha:g}"
            f" ({'Bonferroni over ' + str(levels) + ' scales' if combine == 'bonferroni' else 'max'}), so the"
            f" test cannot reject; use n_resamples ≥ {need}", stacklevel=4)
    boot = _draw(sample, levels, source, base, 0, N, drawn)
    reject, padj, crit, p = _resampling_decision(t_obs, boot, alpha, combine)
    exceed, level = _exceedances(t_obs, boot, alpha, combine)
    interval = adjusted_interval(exceed, N, level, RESAMPLING_RISK, combine, levels, sequential=False)
    if floor <= alpha and interval[0] <= alpha < interval[1]:
        warnings.warn(
            f"n_resamples = {N} cannot settle the decision: the adjusted p-value's Monte Carlo interval "
            f"[{interval[0]:.3g}, {interval[1]:.3g}] contains alpha = {alpha:g}, so another seed may give "
            f"the "
            f"opposite decision; leave n_resamples=None for the sequential rule", stacklevel=4)
    reason = f"{head} ({N} resamples, fixed), {combine}"
    return _result(reject, padj, alpha, scales, t_obs, crit, p, _method_name(source), combine, n, K, N,
                      float(min(1.0, floor)), "adaptive T-Cal", reason, target, None, None,
                      "reject" if reject else "accept", interval, float("nan"), 0, None, None,
                      Resamples(boot, source, int(base), t_obs))


def _method_name(source: int) -> str:
    return "y_only" if source == _k.Y_ONLY else "consistency"


def _sequential_resampling(sample, t_obs, levels, scales, source, base, cap, alpha, combine, risk, n, K,
                           target, head, cost, time_budget=None, started=None, drawn=None):
    """The sequential rule (see :func:`adaptive_tcal`): resample in growing batches until the decision at
    ``alpha`` is settled with resampling risk ≤ ``risk``, or ``cap`` resamples are spent, or
    ``time_budget`` seconds (:data:`clock`, counted from ``started``): a batch that does not fit in half of
    the time left at the rate measured so far (the larger of the run's average and the last batch's) is cut
    to whole blocks of 64 that do and is the last one (none is drawn when fewer than a block fit); until
    the budget binds, the looks, and so the result, depend on the seed alone.  Stopping at a budget never
    changes a decision the rule settles (its guarantee holds at any stopping time); it only leaves the
    result "undecided" with the Monte Carlo interval and the analytic p-value beside it.

    Rule.  Scale b's exceedance indicators 1{T*_b ≥ T_b} are Bernoulli(p_b), p_b the infinite-resample
    p-value; the decision is "reject" iff min_b p_b ≤ t (t = α/B; "max": one count, t = α).  After N
    resamples with S_b exceedances, M_b(q) = ∫ Π_r f_θ(x_r)/f_q(x_r) dπ(θ) is a beta-binomial mixture
    likelihood ratio (Robbins 1970), a nonnegative martingale with mean 1 under p_b = q, increasing in q
    for q > S_b/N and decreasing below.

    * Reject when R(t) = (1/B) Σ_b M_b(t)·1{S_b < tN} ≥ 1/ε, with π = ½ Beta(1, 1/t − 1) + ½ Beta(1, 10/t)
      (half the mass near t, half near the small p-values of clear rejections).  If every p_b > t
      (accept is right), each term is ≤ M_b(p_b), so R(t) is dominated by the average of B martingales
      of mean 1 — whatever the dependence between scales —
      and Ville's inequality bounds the chance that it ever reaches 1/ε by ε.  Averaging, not a union
      bound, lets several clearly significant scales pool their evidence.
    * Accept when A_b(t) = M_b(t)·1{S_b > tN} ≥ 1/ε at every scale, with Robbins' π = Beta(1, 1/t − 1).
      If some p_c ≤ t (reject is right), a wrong acceptance needs A_c(t) ≥ 1/ε, dominated by M_c(p_c):
      probability ≤ ε, for that one scale — no split of ε over the scales is needed on this side.

    So the reported decision differs from the infinite-resample one with probability ≤ ε, uniformly in
    the p-values and in the joint law of the scales (Gandy 2009 gives the same guarantee with a
    different boundary).  The reported Monte Carlo interval of the adjusted p-value is
    [B·min_b L_b, B·U] with L_b = sup{q : A_b(q) ≥ 1/ε} and U = inf{q : R(q) ≥ 1/ε} — each end fails with
    probability ≤ ε by the same arguments — so "reject" ⇔ B·U ≤ α and "accept" ⇔ B·min L_b > α.
    Looks: the first after 128 resamples, then at the count where the current exceedance rates would
    settle the decision, 1.5–4× the previous count, in whole blocks of 64.

    Lower bound: no rule can reject cheaply.  Take data where scale b's p_b ≈ 0 (no resample exceeds
    there) and the same data with p_b just above t instead, where accepting is right.  A path of m
    resamples without an exceedance at b is (1 − t)^m times as likely under the second, so any rule with
    risk ≤ ε rejects the first within m resamples with probability ≤ ε(1 − t)^−m.  At α = 0.05, B = 24
    (n = 10⁴), ε = 10⁻³: ≤ 2.3 % within 1,499 resamples (1.5× the fixed 999), ≤ 50 % within 2,980, and
    with certainty only from ln(1/ε)/(−ln(1 − t)) ≈ 3,313 (3.3×).  So "a clear rejection within 1.5× the
    cost of 999 resamples" is impossible for any resampling rule with risk ≤ 10⁻³; only a deterministic
    bound (the Cantelli and Chernoff certificates of :func:`_tail_bound_reject`) settles it cheaper.  This
    rule needs ln(B/(kε))/t plus the prior's cost with k scales at zero exceedances: 4,900 resamples for
    k = 3, 5,457 for k = 1 (6,092 with the previous two-sided per-scale sequences at ε/B).
    """
    level = alpha / levels if combine == "bonferroni" else alpha
    method = _method_name(source)
    if source == _k.Y_ONLY and combine == "bonferroni":
        certified = _tail_bound_reject(sample, t_obs, levels, level)
        if certified is not None:
            bounds, crit, b, how = certified
            padj = float(min(1.0, levels * bounds.min()))
            reason = (f"{head}: settled without resampling — at m = {scales[b]} {how} bounds the y-only "
                      f"p-value by {bounds[b]:.3g} ≤ α/B, so the resampled test rejects for every number of "
                      f"resamples; bonferroni")
            return _result(True, padj, alpha, scales, t_obs, crit, bounds, method, combine, n, K, 0, 0.0,
                              "adaptive T-Cal", reason, target, None, None, "reject", (0.0, padj), 0.0, cap,
                              None, None, Resamples(np.empty((0, levels)), source, int(base), t_obs))
    store = np.empty((FIRST_BATCH, levels))  # grows by doubling up to the cap (8·B bytes per resample)
    N = 0
    look = FIRST_BATCH
    exceed = np.zeros(levels, dtype=np.int64)
    tol = None
    started = clock() if started is None else started
    out_of_time = last_batch = False
    # measured rates: seconds per resample (the whole run and the last batch; the larger is used, so a
    # machine that slows down is followed) and seconds per exceedance count (the whole run)
    resampling_seconds = counting_seconds = 0.0
    last_rate = 0.0
    counted_values = 0
    while True:
        count = min(look, cap) - N
        if N and time_budget is not None:
            left = time_budget - (clock() - started)
            per_value = counting_seconds / max(counted_values, 1)
            rate = max(resampling_seconds / N, last_rate) + FINAL_PASSES * per_value * levels
            # a batch must fit in half of what is left, after the final count and decision over all the
            # resamples (about FINAL_PASSES counting passes over them); it is cut to the time left only as
            # the budget's last one (whole blocks): until the budget binds, the batches, and so the looks of
            # the rule and the result, depend on the seed alone
            fits = int((0.5 * left - FINAL_PASSES * per_value * levels * N) / max(rate, 1e-12))
            if fits < count:
                fits = fits // _BLOCK * _BLOCK
                if fits < _BLOCK:
                    out_of_time = True
                    break
                count, last_batch = fits, True
        batch_started = clock()
        rows = _draw(sample, levels, source, base, N, count, drawn)
        spent = clock() - batch_started
        resampling_seconds += spent
        last_rate = spent / count
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
            counted = clock()
            exceed += (rows >= (t_obs - tol)[None, :]).sum(axis=0)
            counting_seconds += clock() - counted
            counted_values += rows.size
        else:  # the standardisation of "max" uses every resample so far: recount
            exceed, _ = _exceedances(t_obs, store[:N], alpha, combine)
        if last_batch and not any(settled(exceed, N, level, risk)):
            out_of_time = True
            break
        if any(settled(exceed, N, level, risk)) or N >= cap:
            break
        look = _next_look(exceed, N, level, risk, cap)
    boot = store[:N]
    reject, padj, crit, p = _resampling_decision(t_obs, boot, alpha, combine)
    # the reported p-values and interval come from the final counts (the same up to exact ties)
    if combine == "bonferroni":  # the counts behind p = (1 + #{T* ≥ T})/(N + 1)
        exceed = np.rint(p * (N + 1.0) - 1.0).astype(np.int64)
    else:
        exceed, _ = _exceedances(t_obs, boot, alpha, combine)
    rejected, accepted = settled(exceed, N, level, risk)
    interval = adjusted_interval(exceed, N, level, risk, combine, levels)
    decision = "reject" if rejected else "accept" if accepted else "undecided"
    reject = decision == "reject"
    # the smallest p-value this configuration can produce is reached at the cap
    floor = levels / (cap + 1) if combine == "bonferroni" else 1.0 / (cap + 1)
    analytic = None
    if decision == "undecided":
        budget = (f"time budget of {time_budget:g} s of resampling spent" if out_of_time
                  else f"cap {cap} resamples reached")
        analytic = _analytic_adjusted_pvalue(sample, levels, alpha, n, K, target)
        state = (f"undecided at this budget ({budget} with the p-value's Monte Carlo interval "
                 f"[{interval[0]:.3g}, {interval[1]:.3g}] containing α; analytic p-value {analytic:.3g}): "
                 f"{undecided_advice(n, cap)}")
    else:
        state = {"reject": "settled: reject", "accept": "settled: not rejected"}[decision]
    reason = (f"{head} (sequential, {N} resamples, resampling risk ≤ {risk:g}), {combine}; {state}")
    return _result(reject, padj, alpha, scales, t_obs, crit, p, method, combine, n, K, N,
                      float(min(1.0, floor)), "adaptive T-Cal", reason, target, None, None, decision,
                      interval,
                      float(risk), int(cap), None, analytic, _kept(boot, store, drawn, source, base, t_obs))


#: resamples of one block of the resampling kernels' lanes (a batch is cut to whole blocks)
_BLOCK = 64
#: the final decision over N resamples costs about this many passes counting the exceedances of N
#: resamples (the variance, the counts, the order statistic): the time budget keeps room for them
FINAL_PASSES = 12


def _analytic_adjusted_pvalue(sample, levels, alpha, n, K, target) -> float:
    """The adjusted p-value of the analytic test (scaled chi-square, Bonferroni) of ``sample``, shown beside
    an undecided resampled result (NaN where the backend cannot give its terms)."""
    try:
        terms, _ = sample.analytic_terms(levels)
    except (InputError, NotImplementedError):
        return math.nan
    kept = terms.shape[1]
    moments = terms[1:4] if target == "full" else terms[1:]
    return float(analytic_decision(terms[0], moments, tuple(2**b for b in range(1, kept + 1)), alpha, n, K,
                                   target, "adaptive T-Cal", "")[1])


#: parameters θ of the Chernoff bound tried (any θ in (0, 2) gives a valid bound; clear rejections have
#: their optimum near the top of the range)
CHERNOFF_THETAS = np.array([0.5, 1.0, 1.4, 1.7, 1.9])
#: the Chernoff bound is tried at the (at most two) scales whose T/sd is largest and at least this
#: (below it the bound cannot reach α/B: it only saves work)
CHERNOFF_MIN_Z = 4.0


def _tail_bound_reject(sample, t_obs, levels, level):
    """(per-scale p-value bounds, critical values, the scale that settles, its bound in words) when a
    deterministic upper bound of a y-only p-value is ≤ α/B at some scale, else None.

    Given the predictions, y-only resampling draws T* with E[T*] = 0 and Var(T*) = Var₀(T^d | Z) exactly
    (the analytic scan).  Two bounds of P(T* ≥ T), both valid for every number of resamples (no Monte
    Carlo error):

    * Cantelli: Var₀/(Var₀ + T²) for T > 0; critical value sqrt(Var₀ (1 − t)/t) at level t.
    * Chernoff (1-D targets; the sample's ``y_only_log_mgf_bounds``, in memory and on Dask alike):
      P(T* ≥ T) ≤ exp(−θnT + Λ(θ)) for every θ ∈ (0, 2), Λ the upper bound of log E exp(θ n T*) of
      :func:`calviz._kernels.tcal.y_only_log_mgf_bounds` (independent bins; labels sub-Gaussian with the
      Kearns–Saul constant).  Minimised over a few θ; the critical value min_θ (Λ(θ) − ln t)/(θn) is
      where the bound reaches t.

    If either is ≤ t = α/B at some scale, the infinite-resample p-value of that scale is ≤ α/B and the
    resampled test rejects.  T is lowered by the tie tolerance first (ties count as exceedances).
    """
    var = np.maximum(sample.null_variance(levels), 0.0)
    bounds = cantelli_bound(t_obs, var)
    # a scale with zero null variance (no bin of two points) has T* ≡ 0: nothing can be exceeded there
    crit = np.where(var > 0, cantelli_critical(var, level), np.inf)
    if bounds.min() <= level:
        return bounds, crit, int(np.argmin(bounds)), ("Cantelli's inequality with the exact null variance "
                                                      "given the predictions")
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        zscore = np.where(var > 0, t_obs / np.where(var > 0, sd, 1.0), -np.inf)
    n = float(sample.n)
    for b in np.argsort(-zscore, kind="stable")[:2]:
        if not zscore[b] >= CHERNOFF_MIN_Z:
            break
        lam = sample.y_only_log_mgf_bounds(levels, int(b) + 1, CHERNOFF_THETAS)
        if lam is None:
            return None
        t_low = t_obs[b] - _TIE_RTOL * (abs(t_obs[b]) + sd[b])
        log_bound = float(np.min(-CHERNOFF_THETAS * n * t_low + lam))
        bounds[b] = min(bounds[b], math.exp(min(log_bound, 0.0)))
        crit[b] = min(crit[b], float(np.min((lam - math.log(level)) / (CHERNOFF_THETAS * n))))
        # a margin far above the float round-off of the bound
        if log_bound <= math.log(level) - 1e-9:
            return bounds, crit, int(b), ("a Chernoff bound (independent bins, Kearns–Saul sub-Gaussian "
                                          "labels)")
    return None


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


#: the rejection side's mixture prior is ½ Beta(1, 1/t − 1) + ½ Beta(1, REJECT_PRIOR/t): half its mass
#: near t (Robbins' prior: borderline rejections) and half at the small exceedance probabilities of clear
#: rejections (mean ≈ t/REJECT_PRIOR), which then stop near the lower bound of
#: :func:`_sequential_resampling` (Beta(1, 10/t) alone: 5 % fewer resamples there, but it lost most
#: borderline rejections of the stability cases)
REJECT_PRIOR = 10.0


def _mixture(exceed, N, *betas: float) -> tuple:
    """(S, F, c) of the beta-binomial mixture likelihood ratio (Robbins 1970) of N Bernoulli exceedance
    indicators with S = ``exceed`` successes and F = N − S failures, prior the equal mixture of the
    Beta(1, β) for β in ``betas``: log M_N(q) = c − S ln q − F ln(1 − q) with
    c = ln mean_β [B(1 + S, β + F)/B(1, β)]."""
    S = np.asarray(exceed, dtype=np.float64)
    F = np.asarray(N, dtype=np.float64) - S
    parts = [special.betaln(1.0 + S, beta + F) - special.betaln(1.0, beta) for beta in betas]
    return S, F, special.logsumexp(parts, axis=0) - math.log(len(betas))


def _reject_evidence(mix, q):
    """log R(q) = log((1/B) Σ_b M_b(q)·1{S_b < qN}) over the last axis (the B scales) of ``mix``."""
    S, F, c = mix
    lm = np.where(S < q * (S + F), c - S * np.log(q) - F * np.log1p(-q), -np.inf)
    top = np.max(lm, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)  # (all −inf: the sum is 0, its log −inf)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(lm - shift), axis=-1)) + shift[..., 0] - math.log(S.shape[-1])


def _accept_evidence(mix, q):
    """log A_b(q) = log(M_b(q)·1{S_b > qN}) per count of ``mix``."""
    S, F, c = mix
    return np.where(S > q * (S + F), c - S * np.log(q) - F * np.log1p(-q), -np.inf)


def _log_reject_evidence(exceed, N, q, level: float):
    """:func:`_reject_evidence` with the rejection prior (see REJECT_PRIOR)."""
    return _reject_evidence(_mixture(exceed, N, *_reject_betas(level)), q)


def _reject_betas(level: float) -> tuple:
    return 1.0 / level - 1.0, REJECT_PRIOR / level


def _log_accept_evidence(exceed, N, q, level: float):
    """:func:`_accept_evidence` with Robbins' prior Beta(1, 1/t − 1)."""
    return _accept_evidence(_mixture(exceed, N, 1.0 / level - 1.0), q)


def settled(exceed, N: int, level: float, risk: float) -> tuple[bool, bool]:
    """(rejection settled, acceptance settled) after N resamples with the per-scale counts ``exceed``
    (see :func:`_sequential_resampling`): R(t) ≥ 1/ε, resp. A_b(t) ≥ 1/ε at every scale."""
    bound = math.log(1.0 / risk)
    return (bool(_log_reject_evidence(exceed, N, level, level) >= bound),
            bool(np.all(_log_accept_evidence(exceed, N, level, level) >= bound)))


def _next_look(exceed, N: int, level: float, risk: float, cap: int) -> int:
    """Resample count of the next look: the count at which the current exceedance rates would settle the
    decision, at least 1.5× and at most 4× the current count, in whole blocks of 64."""
    rate = np.asarray(exceed, dtype=np.float64) / N
    grid = np.unique(np.minimum(cap, np.ceil(N * 1.02 ** np.arange(1, 400))).astype(np.int64))
    counts = rate[None, :] * grid[:, None]
    bound = math.log(1.0 / risk)
    reject = _log_reject_evidence(counts, grid[:, None], level, level) >= bound
    accept = np.all(_log_accept_evidence(counts, grid[:, None], level, level) >= bound, axis=1)
    ok = reject | accept
    target = int(grid[np.argmax(ok)]) if ok.any() else cap
    look = int(min(max(target, 1.5 * N), 4 * N, cap))
    return int(min(cap, -(-look // 64) * 64))


def adjusted_interval(exceed, N: int, level: float, risk: float, combine: str, levels: int,
                       sequential: bool = True) -> tuple:
    """Monte Carlo interval of the adjusted p-value.  Sequential: [B·min_b L_b, B·U] from the evidence
    processes of the rule (:func:`_sequential_resampling`; each end at risk ``risk``).  Fixed N: per count
    the exact Clopper–Pearson interval at risk/B, then Bonferroni's B·min over scales (both ends)."""
    n_tests = levels if combine == "bonferroni" else 1
    factor = levels if combine == "bonferroni" else 1
    counts = np.asarray(exceed, dtype=np.int64)
    if sequential:
        bound = math.log(1.0 / risk)
        accept_mix = _mixture(counts, N, 1.0 / level - 1.0)
        reject_mix = _mixture(counts, N, *_reject_betas(level))
        lows = _evidence_end(lambda q: _accept_evidence(accept_mix, q), bound, upper=False,
                             shape=counts.shape)
        high = _evidence_end(lambda q: _reject_evidence(reject_mix, q), bound, upper=True)
        return float(min(1.0, factor * np.min(lows))), float(min(1.0, factor * high))
    tail = risk / n_tests / 2.0
    lows = np.where(counts > 0, stats.beta.ppf(tail, counts, N - counts + 1), 0.0)
    highs = np.where(counts < N, stats.beta.isf(tail, counts + 1, N - counts), 1.0)
    return float(min(1.0, factor * np.min(lows))), float(min(1.0, factor * np.min(highs)))


#: halvings of the log-q range [ln 1e−300, 0] (690 / 2⁴⁰ < 10⁻⁹)
_BISECTIONS = 40


def _evidence_end(log_evidence, bound: float, upper: bool, shape=()):
    """upper: inf{q : E(q) ≥ bound} for an evidence E nondecreasing in q (1 if none); else
    sup{q : E(q) ≥ bound} for a nonincreasing one (0 if none); elementwise for an evidence of ``shape``.
    Bisection in log q, all elements at once (the ends can be far below the smallest double's square
    root; the halvings leave a relative error below 10⁻⁹)."""
    lo = np.full(shape, math.log(1e-300))
    hi = np.full(shape, math.log1p(-1e-16))
    at_lo = log_evidence(np.exp(lo)) >= bound
    at_hi = log_evidence(np.exp(hi)) >= bound
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        inside = log_evidence(np.exp(mid)) >= bound
        if upper:
            hi, lo = np.where(inside, mid, hi), np.where(inside, lo, mid)
        else:
            lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    if upper:
        return np.where(at_lo, 0.0, np.where(at_hi, np.exp(hi), 1.0))
    return np.where(at_hi, 1.0, np.where(at_lo, np.exp(lo), 0.0))


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
        # (the (j+1)-th largest by selection, O(N) per scale: the same order statistic as a sort)
        k = N - 1 - min(j, N - 1)
        crit = np.full(levels, np.inf) if j < 0 else np.partition(boot, k, axis=0)[k]
        return bool(p.min() <= alpha / levels), float(min(1.0, levels * p.min())), crit, p
    live = sd > 0
    scale_sd = np.where(live, sd, 1.0)
    m_obs = np.max(np.where(live, t_obs / scale_sd, -np.inf))
    if not np.isfinite(m_obs):
        return False, 1.0, np.full(levels, np.inf), p
    m_boot = np.max(np.where(live[None, :], boot / scale_sd[None, :], -np.inf), axis=1)
    padj = float((1.0 + np.sum(m_boot >= m_obs - _TIE_RTOL * (abs(m_obs) + 1.0))) / (N + 1.0))
    j = math.floor(alpha * (N + 1) + 1e-12) - 1
    c_max = np.inf if j < 0 else float(np.partition(m_boot, N - 1 - min(j, N - 1))[N - 1 - min(j, N - 1)])
    return bool(padj <= alpha), padj, np.where(live, c_max * sd, np.inf), p
