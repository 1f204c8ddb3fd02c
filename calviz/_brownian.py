"""Tail probabilities of Brownian-motion functionals: the asymptotic null distributions of the
cumulative-difference calibration tests (Kolmogorov–Smirnov and Kuiper, :mod:`calviz._classical`).
"""

from __future__ import annotations

import math

import numpy as np

from calviz._data import InputError
from calviz._lazy import LazyModule

special = LazyModule("scipy.special")

__all__ = ["brownian_max_abs_sf", "brownian_range_sf"]


def normal_sf(x):
    """P(N(0, 1) > x), elementwise, without importing scipy.stats.

    ``scipy.stats.norm.sf`` to the last bit (it evaluates ``ndtr(−x)``); importing scipy.stats costs about
    half a second of a command's start-up.

    Parameters
    ----------
    x : float or array_like
        The thresholds.

    Returns
    -------
    numpy.ndarray or numpy.float64
        The upper-tail probabilities, in [0, 1].

    Examples
    --------
    >>> from calviz._brownian import normal_sf
    >>> round(float(normal_sf(1.959963984540054)), 6)
    0.025
    """
    return special.ndtr(-np.asarray(x, dtype=np.float64))


def chi2_sf(x: float, df: int):
    """P(χ²(df) > x), without importing scipy.stats.

    ``scipy.stats.chi2.sf`` to the last bit (it evaluates ``chdtrc``), NaN for df ≤ 0 as it gives.

    Parameters
    ----------
    x : float
        The threshold.
    df : int
        The degrees of freedom.

    Returns
    -------
    numpy.float64
        The upper-tail probability, in [0, 1] (NaN for df ≤ 0).

    Examples
    --------
    >>> from calviz._brownian import chi2_sf
    >>> round(float(chi2_sf(3.841458820694124, 1)), 6)
    0.05
    """
    return special.chdtrc(df, x) if df > 0 else np.float64(np.nan)


def _brownian_sf(x, negligible: float, switch: float, cdf_small, sf_large) -> float:
    """A survival function from a series for its cdf (x < ``switch``) and one for its tail, clipped to
    [0, 1]; 1 below ``negligible``, where the cdf is below 1e-200 (and x² may underflow)."""
    x = float(x)
    if math.isnan(x):
        raise InputError("the statistic is NaN")
    if x < negligible:
        return 1.0
    p = 1.0 - cdf_small(x) if x < switch else sf_large(x)
    return float(min(max(p, 0.0), 1.0))


def brownian_max_abs_sf(x: float) -> float:
    """P(sup_{0≤t≤1} |W_t| ≥ x) for a standard Brownian motion W.

    The asymptotic null distribution of the scaled Kolmogorov–Smirnov statistic of
    :func:`kolmogorov_smirnov_test` (Arrieta-Ibarra et al. [1]_, §3.3).  For x < 1:
    1 − (4/π) Σ_{k≥0} (−1)^k/(2k+1) exp(−π²(2k+1)²/(8x²)) (rapidly converging there); for x ≥ 1:
    4 Σ_{k≥0} (−1)^k Φ̄((2k+1)x) (reflection principle; accurate far into the tail).

    Parameters
    ----------
    x : float
        The threshold (≥ 0).

    Returns
    -------
    float
        The tail probability, in [0, 1].

    References
    ----------
    .. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu. Metrics of calibration for
       probabilistic predictions. *Journal of Machine Learning Research* 23(351), 2022.

    Examples
    --------
    >>> from calviz._brownian import brownian_max_abs_sf
    >>> round(brownian_max_abs_sf(2.2414), 3)          # the 5 % critical value
    0.05
    """

    def cdf_small(x):
        odd = 2.0 * np.arange(12) + 1.0
        signs = (-1.0) ** np.arange(12)
        return 4.0 / math.pi * np.sum(signs / odd * np.exp(-(math.pi**2) * odd**2 / (8.0 * x * x)))

    def sf_large(x):
        odd = 2.0 * np.arange(int(40.0 / x) + 2) + 1.0
        return 4.0 * np.sum((-1.0) ** np.arange(odd.size) * normal_sf(odd * x))

    return _brownian_sf(x, 0.05, 1.0, cdf_small, sf_large)


def brownian_range_sf(x: float) -> float:
    """P(max_{t≤1} W_t − min_{t≤1} W_t ≥ x) for a standard Brownian motion W.

    The asymptotic null distribution of the scaled Kuiper statistic of :func:`kuiper_test`
    (Arrieta-Ibarra et al. [1]_, §3.3; Feller [2]_).  For x < 2:
    1 − Σ_{k≥0} (8/x² + 2/(π²(k+½)²)) exp(−2π²(k+½)²/x²); for x ≥ 2: 8 Σ_{k≥1} (−1)^{k−1} k Φ̄(kx)
    (the integral of Feller's density 8 Σ (−1)^{k−1} k² φ(kx)).

    Parameters
    ----------
    x : float
        The threshold (≥ 0).

    Returns
    -------
    float
        The tail probability, in [0, 1].

    References
    ----------
    .. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu. Metrics of calibration for
       probabilistic predictions. *Journal of Machine Learning Research* 23(351), 2022.
    .. [2] W. Feller. The asymptotic distribution of the range of sums of independent random variables.
       *Annals of Mathematical Statistics* 22(3), 427–432, 1951.

    Examples
    --------
    >>> from calviz._brownian import brownian_range_sf
    >>> round(brownian_range_sf(2.4977), 3)            # the 5 % critical value
    0.05
    """

    def cdf_small(x):
        half = np.arange(40) + 0.5
        weights = 8.0 / (x * x) + 2.0 / (math.pi**2 * half**2)
        return np.sum(weights * np.exp(-2.0 * math.pi**2 * half**2 / (x * x)))

    def sf_large(x):
        k = np.arange(1, int(40.0 / x) + 3)
        return 8.0 * np.sum((-1.0) ** (k - 1) * k * normal_sf(k * x))

    return _brownian_sf(x, 0.1, 2.0, cdf_small, sf_large)
