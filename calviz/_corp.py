"""CORP reliability diagrams and score decompositions (Dimitriadis, Gneiting and Jordan, 2021), and the
Murphy decomposition of binned Brier scores.

The isotonic recalibration of the predictions — the pool-adjacent-violators (PAV) fit of the labels on
the predictions, with tied predictions pooled first — is the CORP reliability curve: consistent,
optimally binned, reproducible, with no bin count to choose.  The same fit splits a mean proper score
exactly into miscalibration, discrimination and uncertainty.

Cost model: one sort of the n predictions (a radix sort of packed (prediction, label) keys without
weights, a comparison sort with them: the only step beyond O(n)), then O(n) to pool
ties and fit; every resample of the bands or intervals is O(n) on the sorted rows (no re-sort), and the
work n_resamples × n is capped by :data:`RESAMPLE_WORK_BUDGET` (fewer resamples beyond it, said in the
result's ``note``).  Bands are held at no more than :data:`MAX_BAND_POINTS` predictions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from calviz._binning import assign_bins, check_n_bins
from calviz._data import InputError, check_alpha
from calviz._ece import prepare_view
from calviz._kernels import isotonic as _k
from calviz._kernels.sorting import radix_sort_keys
from calviz._kernels.tcal import binary_sort_keys
from calviz._params import (
    INTERVAL_ALPHA,
    SEED,
    UNIT_OPEN,
    Interval,
    ListOf,
    Options,
    kernel_seed,
    validate_params,
)
from calviz._results import HasInterval, LevelFromAlpha, ResultMixin
from calviz._sortcache import sorted_keys
from calviz._weights import check_sample_weight, weighted_bin_sums
from calviz.targets import SCALAR_TARGETS

__all__ = [
    "CORPReliability",
    "ScoreDecomposition",
    "MurphyDecomposition",
    "corp_reliability",
    "score_decomposition",
    "murphy_decomposition",
    "isotonic_fit",
    "bands_at_alpha",
]

#: Largest accepted ``n_resamples``.
MAX_RESAMPLES = 100_000
#: Work budget of the resampling, in rows drawn (n_resamples × n, ≈ 2–5 ns each on one core).  Above it
#: fewer resamples are drawn and the result's ``note`` says so.
RESAMPLE_WORK_BUDGET = 2 * 10**9
#: The bands are evaluated at every distinct prediction up to this many, else at this many predictions
#: equally spaced in rank (the resampled curves are held in memory: 8 bytes × points × resamples).
MAX_BAND_POINTS = 1000
BANDS = ("consistency", "confidence")
SCORES = ("brier", "log")
_SCORE_KIND = {"brier": _k.BRIER, "log": _k.LOG}


# ------------------------------------------------------------------------------------------------
# the isotonic fit of a prepared scalar view
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _IsotonicFit:
    """A scalar view sorted once, its ties pooled into m units, and the PAV fit of the units."""

    y: np.ndarray  # labels, sorted by prediction (float64 0/1)
    w: np.ndarray  # weights in the same order (length 0: unit weights)
    x: np.ndarray  # (m,) distinct predictions, increasing
    weight: np.ndarray  # (m,) total weight of each
    label_sum: np.ndarray  # (m,) weighted label sum of each
    start: np.ndarray  # (m + 1,) first sorted row of each unit, n appended
    fit: np.ndarray  # (m,) the recalibrated probability of each

    @property
    def unit_of(self) -> np.ndarray:
        return np.repeat(np.arange(self.x.shape[0], dtype=np.int64), np.diff(self.start))

    def mean_score(self, kind: int, fit: np.ndarray | None = None) -> float:
        return float(_k.block_mean_score(self.weight, self.label_sum, self.fit if fit is None else fit, kind))

    @property
    def climatology(self) -> float:
        return float(self.label_sum.sum() / self.weight.sum())


def isotonic_fit(z: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> _IsotonicFit:
    """Sort a validated scalar view once, pool tied predictions and fit PAV (rows of zero weight are
    dropped: they carry no information and have no fitted value of their own)."""
    z = np.ascontiguousarray(z, dtype=np.float64)
    y = np.asarray(y)
    if w is not None:
        keep = w > 0
        if not keep.all():
            z, y, w = z[keep], y[keep], w[keep]
    if w is None:
        # unweighted 0/1 labels: (z, y) packed into one non-negative 64-bit key and radix-sorted, O(n) per
        # digit — a few times faster than a comparison sort of n doubles
        keys = radix_sort_keys(binary_sort_keys(z, np.ascontiguousarray(y)).view(np.int64))
        x, weight, label_sum, start, ys = _k.pool_sorted_keys(keys)
        ws = np.empty(0)
    else:
        order = np.argsort(z, kind="stable")
        ys = np.ascontiguousarray(y[order], dtype=np.float64)
        ws = np.ascontiguousarray(w[order])
        x, weight, label_sum, start = _k.pool_ties(z[order], ys, ws)
    fit = np.empty_like(x)
    _k.pav_fit(weight, label_sum, fit)
    return _IsotonicFit(ys, ws, x, weight, label_sum, start, fit)


def _unit_scores(z: np.ndarray, y: np.ndarray, kind: int) -> tuple[float, float, float, int]:
    """(mean score of the predictions, of their PAV recalibration, of the climatology, n) of unweighted
    0/1 labels: the numbers of :func:`isotonic_fit`'s units without its per-row arrays — the units' sums
    only, the PAV blocks written over them (3 arrays of the units at most, instead of 6 of the rows: the
    difference between fitting and not fitting in memory at 10⁷ rows).  The recalibrated score is summed
    over the blocks, in which the fit is constant (equal to the sum over the units up to round-off)."""
    keys = sorted_keys(np.ascontiguousarray(z, dtype=np.float64), np.ascontiguousarray(y))
    n = int(keys.shape[0])
    x, weight, label_sum, _, _ = _k.pool_sorted_keys(keys, False)
    del keys
    with np.errstate(divide="ignore"):
        mean_score = float(_k.block_mean_score(weight, label_sum, x, kind))
    del x
    climatology = label_sum.sum() / weight.sum()
    clim = float(_k.block_mean_score(weight, label_sum, np.full_like(weight, climatology), kind))
    # the blocks overwrite the units they pool: block b is written after unit b is read
    top = _k.pav_blocks(weight, label_sum, weight, label_sum, np.empty(weight.shape[0] + 1, dtype=np.int64))
    bw, bs = weight[:top], label_sum[:top]
    recal = float(_k.block_mean_score(bw, bs, bs / bw, kind))
    return mean_score, recal, clim, n


def _prepare(y_true, y_prob, target, class_index, sample_weight, caller):
    data, target, z, y = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                      allowed=("auto", *SCALAR_TARGETS), caller=caller)
    w = check_sample_weight(sample_weight, data.n, caller)
    return data, target, z, y, w


def _resample_plan(n_resamples: int, n: int) -> tuple[int, str]:
    kept = min(int(n_resamples), max(1, RESAMPLE_WORK_BUDGET // max(n, 1)))
    note = f"{kept} of the {n_resamples} resamples asked for (work budget n_resamples·n ≤ " \
           f"{RESAMPLE_WORK_BUDGET:.0e})" if kept < n_resamples else ""
    return kept, note


# ------------------------------------------------------------------------------------------------
# CORP reliability diagram
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class CORPReliability(LevelFromAlpha, HasInterval, ResultMixin):
    """The CORP reliability diagram of a scalar view, returned by :func:`corp_reliability`.

    Attributes
    ----------
    x : ndarray of shape (m,)
        The distinct predictions, increasing.
    recalibrated : ndarray of shape (m,)
        The isotonic (PAV) recalibration at each: the estimated conditional event probability
        P(y = 1 | prediction), non-decreasing.  The diagram is the step function through
        (x, recalibrated); the diagonal means calibrated.
    weight : ndarray of shape (m,)
        Rows (total weight) at each prediction.
    band_x : ndarray of shape (E,)
        The predictions at which the bands are given (all of ``x`` when m ≤ 1000).
    consistency_low, consistency_high : ndarray of shape (E,) or None
        Pointwise consistency band at level 1 − α: where the recalibrated curve of a *calibrated* model
        with these predictions falls (labels redrawn as Bernoulli(prediction)).  Points of the curve
        outside it are evidence of miscalibration there.
    confidence_low, confidence_high : ndarray of shape (E,) or None
        Pointwise bootstrap confidence band for the recalibrated curve at level 1 − α
        (``confidence_interval()``).
    alpha : float
        1 − level of the bands.
    n_resamples : int
        Resamples drawn for each band.
    mean_brier, mcb, dsc, unc : float
        The Brier score and its CORP decomposition S̄ = MCB − DSC + UNC (:func:`score_decomposition`).
    n, target, n_classes : int, str, int
        Sample size (rows of positive weight), the scalar target, classes of the input.
    weighted : bool
        Whether sample weights were given.
    note : str
        Said when fewer resamples were drawn than asked (work budget).
    """

    x: np.ndarray
    recalibrated: np.ndarray
    weight: np.ndarray
    band_x: np.ndarray
    consistency_low: np.ndarray | None
    consistency_high: np.ndarray | None
    confidence_low: np.ndarray | None
    confidence_high: np.ndarray | None
    alpha: float
    n_resamples: int
    mean_brier: float
    mcb: float
    dsc: float
    unc: float
    n: int
    target: str
    n_classes: int
    weighted: bool = False
    note: str = ""
    #: each band's resampled curves at ``band_x`` (band name → (n_resamples, E)): the bands at another α
    #: are their pointwise quantiles (:func:`bands_at_alpha`), no resampling again
    _draws: dict | None = field(default=None, repr=False, compare=False)

    _interval_fields = ("confidence_low", "confidence_high")

    @property
    def statistic(self) -> float:
        """The Brier score's miscalibration component MCB."""
        return float(self.mcb)

    def predict(self, p) -> np.ndarray:
        """The recalibrated probability at predictions ``p``: the step function of the diagram
        (constant between distinct predictions, right-continuous; constant beyond the ends)."""
        idx = np.searchsorted(self.x, np.asarray(p, dtype=np.float64), side="right") - 1
        return self.recalibrated[np.clip(idx, 0, self.x.shape[0] - 1)]


def _band_units(fit: _IsotonicFit) -> np.ndarray:
    m = fit.x.shape[0]
    if m <= MAX_BAND_POINTS:
        return np.arange(m, dtype=np.int64)
    n = fit.y.shape[0]
    rows = np.round(np.linspace(0, n - 1, MAX_BAND_POINTS)).astype(np.int64)
    return np.unique(np.searchsorted(fit.start, rows, side="right") - 1)


def band_quantiles(fits: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise α/2 and 1 − α/2 quantiles of resampled curves (rows), linear interpolation."""
    low = np.quantile(fits, alpha / 2.0, axis=0, method="lower")
    high = np.quantile(fits, 1.0 - alpha / 2.0, axis=0, method="higher")
    return low, high


def bands_at_alpha(result: CORPReliability, alpha: float) -> CORPReliability:
    """The CORP diagram ``result`` with its bands at level 1 − ``alpha`` from its stored resampled curves:
    equal to :func:`corp_reliability` with the same seed, resamples and bands and this α.

    Parameters
    ----------
    result : CORPReliability
        A diagram computed with bands (``n_resamples`` > 0; it carries its resampled curves).
    alpha : float
        The new α.

    Returns
    -------
    CORPReliability
        The diagram with its bands at level 1 − α (its resampled curves kept).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz._corp import bands_at_alpha
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> corp = calviz.corp_reliability(y, p, n_resamples=100, seed=0)
    >>> fresh = calviz.corp_reliability(y, p, n_resamples=100, seed=0, alpha=0.3)
    >>> bool(np.array_equal(bands_at_alpha(corp, 0.3).consistency_low, fresh.consistency_low))
    True
    """
    alpha = check_alpha(alpha)
    if not isinstance(result, CORPReliability) or result._draws is None:
        raise InputError("bands_at_alpha needs a CORPReliability computed with bands (n_resamples > 0)")
    changes = {}
    for name, fits in result._draws.items():
        changes[f"{name}_low"], changes[f"{name}_high"] = band_quantiles(fits, alpha)
    return dataclasses.replace(result, **changes, alpha=float(alpha))


@validate_params({"alpha": UNIT_OPEN, "n_resamples": Interval(int, 0, MAX_RESAMPLES),
                  "bands": ListOf(Options(BANDS)), "seed": SEED})
def corp_reliability(
    y_true, y_prob=None, *, target: Literal["auto", "binary", "top1", "classwise"] = "auto",
    class_index: int = 0, sample_weight=None, alpha: float = INTERVAL_ALPHA, n_resamples: int = 1000,
    bands: tuple[str, ...] = BANDS, seed=None,
) -> CORPReliability:
    """CORP reliability diagram: the isotonic recalibration curve with consistency and confidence bands.

    The curve is the PAV (pool-adjacent-violators) solution of
    min_{f non-decreasing} Σ_i w_i (y_i − f(z_i))², tied predictions pooled (Dimitriadis, Gneiting and
    Jordan [1]_, Sec. 2, eq. 2): the conditional event probability P(y = 1 | z) estimated with the bins
    chosen optimally and automatically by the data — a consistent, reproducible reliability diagram with
    no bin count.  Bands, pointwise at level 1 − α (ibid., Sec. 2.2):

    * consistency: labels redrawn y*_i ~ Bernoulli(z_i), PAV refitted; the α/2 and 1 − α/2 quantiles
      of the refits at each prediction show where the curve of a calibrated model would fall;
    * confidence: rows resampled with replacement (their weights with them), PAV refitted; the
      percentile band of the refits around the estimated curve.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar view ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights (a row of weight k counts as k copies).
    alpha : float, default 0.1
        The bands have pointwise level 1 − α.
    n_resamples : int, default 1000
        Resamples per band (0: no bands).
    bands : list of {"consistency", "confidence"}, default both
        The bands computed.
    seed : None, int or numpy.random.Generator
        Seed of the resampling.

    Returns
    -------
    CORPReliability
        ``x``, ``recalibrated`` and ``weight`` per distinct prediction, the bands at ``band_x`` and the
        Brier score's decomposition ``mcb``, ``dsc``, ``unc``.

    See Also
    --------
    score_decomposition : The CORP decomposition of the Brier score or the log loss, with intervals.
    reliability : The binned reliability diagram.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan. Stable reliability diagrams for probabilistic
       classifiers. *Proceedings of the National Academy of Sciences* 118(8), e2016191118, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> corp = calviz.corp_reliability(y, p, n_resamples=200, seed=0)
    >>> bool(np.all(np.diff(corp.recalibrated) >= 0))         # the curve is non-decreasing
    True
    >>> float(np.round(corp.predict(0.5), 2))                  # P(y = 1 | p = 0.5) < 0.5: over-confident
    0.41
    >>> round(corp.mcb, 4), abs(corp.mcb - corp.dsc + corp.unc - corp.mean_brier) < 1e-12
    (0.016, True)
    """
    caller = "corp_reliability"
    data, target, z, y, w = _prepare(y_true, y_prob, target, class_index, sample_weight, caller)
    fit = isotonic_fit(z, y, w)
    mean_brier = fit.mean_score(_k.BRIER, fit.x)
    recal, clim = fit.mean_score(_k.BRIER), fit.mean_score(_k.BRIER, np.full_like(fit.x, fit.climatology))
    n = int(fit.y.shape[0])
    kept, note = _resample_plan(n_resamples, n) if n_resamples else (0, "")
    units = _band_units(fit)
    band = {"consistency": (None, None), "confidence": (None, None)}
    draws = {} if kept else None
    if kept:
        base = kernel_seed(seed, caller=caller)
        for name in dict.fromkeys(bands):
            mode = _k.CONSISTENCY if name == "consistency" else _k.BOOTSTRAP
            # the two bands draw from different streams of the one seed
            fits = _k.corp_resample_fits(fit.x, fit.start, fit.y, fit.w, mode, kept,
                                         (base + 7919 * (mode + 1)) % (2**63 - 1), units)
            band[name] = band_quantiles(fits, alpha)
            draws[name] = fits
    return CORPReliability(
        fit.x, fit.fit, fit.weight, fit.x[units], *band["consistency"], *band["confidence"], float(alpha),
        kept, mean_brier, mean_brier - recal, clim - recal, clim, n, target, data.n_classes,
        w is not None, note, _draws=draws)


# ------------------------------------------------------------------------------------------------
# CORP score decomposition
# ------------------------------------------------------------------------------------------------
#: the components of a score decomposition, in the order of its interval arrays
COMPONENTS = ("mean_score", "mcb", "dsc", "unc")


@dataclass(frozen=True, repr=False)
class ScoreDecomposition(LevelFromAlpha, HasInterval, ResultMixin):
    """The CORP decomposition S̄ = MCB − DSC + UNC of a mean score, returned by :func:`score_decomposition`.

    Attributes
    ----------
    score : {"brier", "log"}
        The proper scoring rule.
    mean_score : float
        S̄, the mean score of the predictions (also ``statistic``).
    mcb : float
        Miscalibration S̄ − S̄_rc ≥ 0: the score improvement of the isotonic recalibration.
    dsc : float
        Discrimination S̄_c − S̄_rc ≥ 0: the improvement of the recalibrated predictions over the
        climatology (the mean label).
    unc : float
        Uncertainty S̄_c, the climatology's score.
    low, high : ndarray of shape (4,) or None
        Percentile bootstrap intervals of (mean_score, mcb, dsc, unc) at level 1 − α
        (``confidence_interval()``); None without resamples.
    alpha : float
        1 − level of the intervals.
    n_resamples : int
        Bootstrap resamples drawn (0: no intervals).
    n, target, n_classes : int, str, int
        Sample size (rows of positive weight), the scalar target, classes of the input.
    weighted : bool
        Whether sample weights were given.
    note : str
        Said when fewer resamples were drawn than asked.
    """

    score: str
    mean_score: float
    mcb: float
    dsc: float
    unc: float
    low: np.ndarray | None
    high: np.ndarray | None
    alpha: float
    n_resamples: int
    n: int
    target: str
    n_classes: int
    weighted: bool = False
    note: str = ""

    @property
    def statistic(self) -> float:
        """The mean score S̄."""
        return float(self.mean_score)


@validate_params({"score": Options(SCORES), "alpha": UNIT_OPEN,
                  "n_resamples": Interval(int, 0, MAX_RESAMPLES), "seed": SEED})
def score_decomposition(
    y_true, y_prob=None, *, score: Literal["brier", "log"] = "brier",
    target: Literal["auto", "binary", "top1", "classwise"] = "auto", class_index: int = 0,
    sample_weight=None, n_resamples: int = 0, alpha: float = INTERVAL_ALPHA, seed=None,
) -> ScoreDecomposition:
    """CORP decomposition of the mean Brier score or log loss: S̄ = MCB − DSC + UNC.

    With the isotonic (PAV) recalibration ẑ of the predictions (:func:`corp_reliability`) and the
    climatology ȳ = Σ w_i y_i / Σ w_i (Dimitriadis, Gneiting and Jordan [1]_, Sec. 3, eq. 4):

        MCB = S̄(z) − S̄(ẑ),   DSC = S̄(ȳ) − S̄(ẑ),   UNC = S̄(ȳ),

    S̄ the weighted mean score, S(p, y) = (p − y)² (Brier) or −y log p − (1 − y) log(1 − p) (log loss,
    natural logarithm, 0 log 0 = 0).  The identity holds exactly up to round-off; MCB, DSC ≥ 0 because
    the PAV fit minimises every proper score among non-decreasing recalibrations.  The log loss of a
    prediction of exactly 0 or 1 with the other label is infinite, and so are S̄ and MCB.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample.
    score : {"brier", "log"}, default "brier"
        The proper scoring rule.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar view ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights.
    n_resamples : int, default 0
        Bootstrap resamples for percentile intervals of the four components (0: none).  Each resample
        refits the recalibration and the climatology.
    alpha : float, default 0.1
        The intervals have level 1 − α.
    seed : None, int or numpy.random.Generator
        Seed of the bootstrap.

    Returns
    -------
    ScoreDecomposition
        ``mean_score``, ``mcb``, ``dsc``, ``unc`` and, with resamples, their intervals ``low``, ``high``.

    See Also
    --------
    corp_reliability : The recalibration curve behind MCB and DSC.
    murphy_decomposition : The decomposition of the Brier score over bins.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan. Stable reliability diagrams for probabilistic
       classifiers. *Proceedings of the National Academy of Sciences* 118(8), e2016191118, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> d = calviz.score_decomposition(y, p)
    >>> round(d.mean_score, 4), round(d.mcb, 4), round(d.dsc, 4), round(d.unc, 4)
    (0.1604, 0.016, 0.0953, 0.2398)
    >>> abs(d.mcb - d.dsc + d.unc - d.mean_score) < 1e-12
    True
    """
    caller = "score_decomposition"
    data, target, z, y, w = _prepare(y_true, y_prob, target, class_index, sample_weight, caller)
    kind = _SCORE_KIND[score]
    if w is None and not n_resamples:
        mean_score, recal, clim, n = _unit_scores(z, y, kind)
        return ScoreDecomposition(score, mean_score, mean_score - recal, clim - recal, clim, None, None,
                                  float(alpha), 0, n, target, data.n_classes, False, "")
    fit = isotonic_fit(z, y, w)
    # every row of a unit has the unit's prediction: the mean score is a sum over the units
    with np.errstate(divide="ignore"):
        mean_score = fit.mean_score(kind, fit.x)
    recal = fit.mean_score(kind)
    clim = fit.mean_score(kind, np.full_like(fit.x, fit.climatology))
    n = int(fit.y.shape[0])
    kept, note = _resample_plan(n_resamples, n) if n_resamples else (0, "")
    low = high = None
    if kept:
        zs = np.repeat(fit.x, np.diff(fit.start))
        sorted_scores = _k.row_scores(zs, fit.y, kind)
        reps = _k.decomposition_bootstrap(fit.x, fit.start, fit.y, fit.w, fit.unit_of, sorted_scores, kind,
                                          kept, kernel_seed(seed, caller=caller))
        low, high = band_quantiles(reps, alpha)
    return ScoreDecomposition(score, mean_score, mean_score - recal, clim - recal, clim, low, high,
                              float(alpha), kept, n, target, data.n_classes, w is not None, note)


# ------------------------------------------------------------------------------------------------
# Murphy decomposition of the binned Brier score
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class MurphyDecomposition(ResultMixin):
    """The binned Brier score BS = REL − RES + UNC + WBV − WBC, returned by :func:`murphy_decomposition`.

    Attributes
    ----------
    brier : float
        The mean Brier score (also ``statistic``).
    reliability : float
        REL = Σ_b (W_b/W) (z̄_b − ȳ_b)².
    resolution : float
        RES = Σ_b (W_b/W) (ȳ_b − ȳ)².
    uncertainty : float
        UNC = ȳ (1 − ȳ).
    within_bin_variance : float
        WBV = (1/W) Σ_b Σ_{i∈b} w_i (z_i − z̄_b)².
    within_bin_covariance : float
        WBC = (2/W) Σ_b Σ_{i∈b} w_i (z_i − z̄_b)(y_i − ȳ_b).
    n_bins, n_nonempty, scheme : int, int, str
        The binning.
    n, target, n_classes : int, str, int
        Sample size, scalar target, classes of the input.
    weighted : bool
        Whether sample weights were given.
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float
    within_bin_covariance: float
    n_bins: int
    n_nonempty: int
    scheme: str
    n: int
    target: str
    n_classes: int
    weighted: bool = False

    @property
    def statistic(self) -> float:
        """The mean Brier score."""
        return float(self.brier)


@validate_params({"n_bins": Interval(int, 1, None), "scheme": Options(("equal_width", "equal_mass"))})
def murphy_decomposition(
    y_true, y_prob=None, *, n_bins: int = 10, scheme: str = "equal_width",
    target: Literal["auto", "binary", "top1", "classwise"] = "auto", class_index: int = 0,
    sample_weight=None,
) -> MurphyDecomposition:
    """Murphy decomposition of the Brier score over bins, with the two within-bin terms.

    With bins b of total weight W_b, mean prediction z̄_b, mean label ȳ_b and overall mean label ȳ
    (Murphy [1]_; the within-bin terms of Stephenson, Coelho and Jolliffe [2]_, eq. 9):

        BS = REL − RES + UNC + WBV − WBC,

    REL = Σ_b (W_b/W)(z̄_b − ȳ_b)², RES = Σ_b (W_b/W)(ȳ_b − ȳ)², UNC = ȳ(1 − ȳ),
    WBV = (1/W) Σ_b Σ_{i∈b} w_i (z_i − z̄_b)², WBC = (2/W) Σ_b Σ_{i∈b} w_i (z_i − z̄_b)(y_i − ȳ_b).
    The identity is exact; Murphy's three-term form is the case of predictions constant within bins.
    Equal-mass edges are those of the unweighted predictions.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample.
    n_bins : int, default 10
        Number of bins.
    scheme : {"equal_width", "equal_mass"}, default "equal_width"
        Bin edges (as :func:`reliability`).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar view.
    class_index : int, default 0
        The class of the ``classwise`` target.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights.

    Returns
    -------
    MurphyDecomposition
        ``brier``, ``reliability``, ``resolution``, ``uncertainty``, ``within_bin_variance`` and
        ``within_bin_covariance``.

    References
    ----------
    .. [1] A. H. Murphy. A new vector partition of the probability score. *Journal of Applied
       Meteorology* 12(4), 595–600, 1973.
    .. [2] D. B. Stephenson, C. A. S. Coelho and I. T. Jolliffe. Two extra components in the Brier score
       decomposition. *Weather and Forecasting* 23(4), 752–757, 2008.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> d = calviz.murphy_decomposition(y, p, n_bins=10)
    >>> round(d.brier, 4), round(d.reliability, 4), round(d.resolution, 4), round(d.uncertainty, 4)
    (0.1604, 0.0128, 0.0911, 0.2398)
    >>> terms = d.reliability - d.resolution + d.uncertainty + d.within_bin_variance - d.within_bin_covariance
    >>> abs(terms - d.brier) < 1e-12
    True
    """
    caller = "murphy_decomposition"
    data, target, z, y, w = _prepare(y_true, y_prob, target, class_index, sample_weight, caller)
    m = check_n_bins(n_bins)
    z = np.ascontiguousarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    weights = np.ones_like(z) if w is None else w
    bins = assign_bins(z, n_bins=m, scheme=scheme)
    W_b, z_sum, y_sum = weighted_bin_sums(bins.ids, bins.n_nonempty, z, y, weights)
    W_b, z_sum, y_sum = W_b, z_sum[:, 0], y_sum[:, 0]
    total = W_b.sum()
    occupied = W_b > 0
    zbar = np.where(occupied, z_sum / np.where(occupied, W_b, 1.0), 0.0)
    ybar_b = np.where(occupied, y_sum / np.where(occupied, W_b, 1.0), 0.0)
    ybar = y_sum.sum() / total
    rel = float(np.sum(W_b * (zbar - ybar_b) ** 2) / total)
    res = float(np.sum(W_b * (ybar_b - ybar) ** 2) / total)
    unc = float(ybar * (1.0 - ybar))
    dz = z - zbar[bins.ids]
    wbv = float(np.sum(weights * dz * dz) / total)
    wbc = float(2.0 * np.sum(weights * dz * (y - ybar_b[bins.ids])) / total)
    brier = float(np.sum(weights * (z - y) ** 2) / total)
    return MurphyDecomposition(brier, rel, res, unc, wbv, wbc, m, int(occupied.sum()), scheme, data.n, target,
                               data.n_classes, w is not None)
