"""The result objects of the distance-to-calibration measures (:mod:`calviz._distance` computes them).

Frozen dataclasses with ``statistic`` / ``value``, a readable ``repr`` and ``to_dict``, like the results of
:mod:`scipy.stats`: :class:`DistanceBounds` holds every measure of one sample and the interval they imply
for the distance to calibration (Błasiok, Gopalan, Hu and Nakkiran, 2023); the others are one measure each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from calviz._results import DISTANCE_RANGE, LevelFromAlpha, ResultMixin, ValueStatistic, clip_interval

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
]


@dataclass(frozen=True, repr=False)
class SmCEResult(ValueStatistic, ResultMixin):
    """The empirical smooth calibration error of a sample, returned by :func:`smce`.

    Attributes
    ----------
    value : float
        smCE (also ``statistic``).
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    n: int
    target: str
    n_classes: int | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True, repr=False)
class SmCEWitness(ValueStatistic, ResultMixin):
    """The optimal weight function of the smCE program, returned by :func:`smce_witness`.

    Where w > 0 the model under-predicts (y tends to exceed v); where w < 0 it over-predicts.

    Attributes
    ----------
    value : float
        smCE = (1/n) Σ (y_i − v_i) w(v_i).
    predictions : ndarray of shape (n,)
        The sorted predictions v_(1) ≤ … ≤ v_(n).
    witness : ndarray of shape (n,)
        w(v_(i)) with |w| ≤ 1 and |w(v_(i+1)) − w(v_(i))| ≤ v_(i+1) − v_(i) (extend linearly between
        points for a 1-Lipschitz function on [0, 1]).
    labels : ndarray of shape (n,)
        The matching labels.
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    n: int
    target: str
    predictions: np.ndarray
    witness: np.ndarray
    labels: np.ndarray
    n_classes: int | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True, repr=False)
class LowerDCEResult(ValueStatistic, ResultMixin):
    """The lower distance to calibration of a sample, returned by :func:`lower_dce`.

    Computed by the grid LP of Błasiok et al. (2023), Lemma 7.10.

    Attributes
    ----------
    value : float
        W₁ distance from the sample rounded to the grid {0, ε, …, 1} to the calibrated distributions on
        that grid (the LP optimum).
    grid_step : float
        ε.
    error_bound : float
        2ε.
    lower, upper : float
        The true dCE_lower of the sample lies in [value − 2ε, value + ε] (Lemmas 7.8, 7.9: rounding
        moves the sample by ≤ ε and the nearest calibrated distribution by ≤ ε), clipped to [0, 1],
        where dCE_lower lies.
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    grid_step: float
    error_bound: float
    lower: float
    upper: float
    n: int
    target: str
    n_classes: int | None = None

    def __float__(self) -> float:
        return float(self.value)


def _lower_dce_result(value: float, eps: float, n: int, target: str, n_classes) -> LowerDCEResult:
    """The LP optimum on the grid of step ε and the bracket of the exact dCE_lower (Lemmas 7.8–7.9)."""
    lower, upper = clip_interval(value - 2 * eps, value + eps, *DISTANCE_RANGE)
    return LowerDCEResult(value, eps, 2 * eps, lower, upper, n, target, n_classes)


@dataclass(frozen=True, repr=False)
class RintCEResult(ValueStatistic, ResultMixin):
    """RintCE(width) of a sample, exact (average over all shifts r ∈ [0, width)); from :func:`rintce`.

    Attributes
    ----------
    value : float
        RintCE.
    width : float
        The interval width ε.
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    width: float
    n: int
    target: str
    n_classes: int | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True, repr=False)
class SintCEResult(ValueStatistic, ResultMixin):
    """SintCE = inf_k RintCE(2^−k) + 2^−k of a sample, exact; returned by :func:`sintce`.

    Attributes
    ----------
    value : float
        SintCE.
    width : float
        The minimising 2^−k, or 0.0 when the infimum is the limit k → ∞ (then ``value`` is the fully
        resolved ECE, every distinct prediction in its own bin, and ``attained`` is False).
    attained : bool
        Whether a finite scale attains the infimum.
    widths, rintce_values : ndarray
        The scales evaluated before the stopping rule fired, and RintCE at each.
    converged : bool
        False only in the pathological case of distinct predictions closer than 2^−60 with the stopping
        rule not met by scale 2^−60.
    floor : float or None
        ``value`` except when not ``converged``: then the exact SintCE lies in [``floor``, ``value``]
        (RintCE is nondecreasing in the scale and bounded by the resolved ECE).
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    width: float
    attained: bool
    widths: np.ndarray
    rintce_values: np.ndarray
    n: int
    target: str
    converged: bool = True
    floor: float | None = None
    n_classes: int | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True, repr=False)
class KCEResult(ValueStatistic, ResultMixin):
    """Laplace-kernel calibration error with kernel e^{−|u−v|/bandwidth}, returned by :func:`laplace_kce`.

    Attributes
    ----------
    value : float
        kCE, or kCE² when ``squared``.
    bandwidth : float
        The kernel's scale.
    squared : bool
        Whether ``value`` is kCE².
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    bandwidth: float
    squared: bool
    n: int
    target: str
    n_classes: int | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True, repr=False)
class BinnedECEWidthResult(ValueStatistic, ResultMixin):
    """ℓ1 binned ECE of an interval partition plus its average width, from :func:`binned_ece_with_width`.

    ``value`` = ``ece`` + ``average_width`` ≥ dCE_upper ≥ dCE (Błasiok et al. 2023, eq. (5) and Thm 6.2,
    part 1).

    Attributes
    ----------
    value : float
        The upper bound.
    ece : float
        The ℓ1 binned ECE.
    average_width : float
        w(I) = Σ_j P(v ∈ I_j)·|I_j|.
    n_bins : int
        Bins.
    scheme : str
        "equal_width" or "equal_mass".
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    ece: float
    average_width: float
    n_bins: int
    scheme: str
    n: int
    target: str
    n_classes: int | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True, repr=False)
class Bound(ResultMixin):
    """One bound on the true distance to calibration dCE, in :class:`DistanceBounds`.

    Attributes
    ----------
    name : str
        Identifier of the bound.
    kind : {"lower", "upper"}
        Which side it bounds.
    value : float
        The bound.
    measure : str
        The measure it is computed from.
    inequality : str
        The chain of inequalities used.
    source : str
        The paper and theorem proving it.
    """

    name: str
    kind: str
    value: float
    measure: str
    inequality: str
    source: str


@dataclass(frozen=True, repr=False)
class Measure(ResultMixin):
    """One measure of a :class:`DistanceBounds`, for display.

    Attributes
    ----------
    name : str
        The measure.
    value : float
        Its value.
    inequality : str
        The bounds on dCE it gives.
    band_low, band_high : float or None
        Its bootstrap band (None without resampling).
    """

    name: str
    value: float
    inequality: str
    band_low: float | None = None
    band_high: float | None = None

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True, repr=False)
class DistanceBounds(LevelFromAlpha, ResultMixin):
    """All distance measures of one sample and the interval [lower, upper] they imply for dCE.

    These are statements about the *empirical* distribution of the sample (predictions and labels as
    given): dCE here is the distance to calibration of that distribution (Błasiok et al. 2023, Def. 5.3),
    which the prediction-access model brackets between dCE_lower and dCE_upper (Lemma 5.4, Thm 5.5):
    ``lower`` = max(dCE_lower(LP) − 2ε, smCE/2, (SintCE/6)², (kCE/(2√2))²) and
    ``upper`` = min(SintCE, binnedECE(I) + w(I) over the equal-width partitions, 4√(5·smCE)).

    Attributes
    ----------
    lower, upper : float
        The bracket for dCE.
    lower_bound, upper_bound : Bound
        The winning candidates (``lower_source`` / ``upper_source`` say them in words).
    measures : dict
        Each measure (binnedECE + width at its best bin count) → a ``Measure`` (value, implied bounds,
        band).
    inequalities : dict
        Each measure → the text of its bounds, for display.
    smce, lower_dce, sintce, laplace_kce : float
        The measures (see :func:`smce`, :func:`lower_dce`, :func:`sintce`, :func:`laplace_kce`).
    grid_step : float
        ε of the LP grid.
    binned_ece_width : dict
        Bin count → binnedECE + average width.
    bounds : tuple of Bound
        Every candidate bound with its inequality and source.
    bands : dict or None
        When ``n_resamples`` > 0: each measure and "lower"/"upper" → a percentile bootstrap interval
        (level 1 − alpha), a rough guide to sampling variability, not a guarantee.
    n_resamples : int
        Bootstrap resamples.
    alpha : float
        1 − the bands' level (``level``).
    n, target, n_classes : int, str, int or None
        The sample.
    """

    lower: float
    upper: float
    lower_bound: Bound
    upper_bound: Bound
    measures: dict
    inequalities: dict
    smce: float
    lower_dce: float
    grid_step: float
    sintce: float
    laplace_kce: float
    binned_ece_width: dict
    bounds: tuple
    bands: dict | None
    n_resamples: int
    alpha: float
    n: int
    target: str
    n_classes: int | None = None
    #: SintCE's result (its RintCE curve): :meth:`results` gives it
    _sintce_result: Any = field(default=None, repr=False, compare=False)

    def results(self) -> dict:
        """smCE, dCE_lower and SintCE as the results :func:`smce`, :func:`lower_dce` and :func:`sintce`
        return for the same sample (e.g. for :func:`calviz.sampling.subsample_interval`)."""
        return {"smce": SmCEResult(self.smce, self.n, self.target, self.n_classes),
                "lower_dce": _lower_dce_result(self.lower_dce, self.grid_step, self.n, self.target,
                                               self.n_classes),
                "sintce": self._sintce_result}

    @property
    def lower_source(self) -> str:
        b = self.lower_bound
        return f"{b.inequality} ({b.source})"

    @property
    def upper_source(self) -> str:
        b = self.upper_bound
        return f"{b.inequality} ({b.source})"


@dataclass(frozen=True, repr=False)
class SmCETestResult(ResultMixin):
    """Decision of the tolerant smCE tester, returned by :func:`smce_test`.

    Attributes
    ----------
    calibrated : bool
        True (answer "yes": dCE ≤ ε₀) iff smCE ≤ ``threshold``.
    answer : {"yes", "no"}
        The answer.
    smce : float
        smCE of the sample.
    threshold : float
        2ε₀ + a/2.
    eps0, eps1 : float
        ε₀ and ε₁.
    a : float
        ε₁/2 − 2ε₀.
    n : int
        Sample size.
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    calibrated: bool
    answer: str
    smce: float
    threshold: float
    eps0: float
    eps1: float
    a: float
    n: int
    target: str
    n_classes: int | None = None

    @property
    def statistic(self) -> float:
        """The smCE of the sample, compared with ``threshold``."""
        return float(self.smce)
