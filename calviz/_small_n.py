"""Tests of calibration on few rows: the exact null distribution of the labels given the predictions.

Under the null hypothesis of a 1-D calibration target the labels are independent Bernoulli(z_i) given the
predictions z.  Any test's p-value is then a probability over the 2^n label vectors, so

* no valid p-value can be below the probability of the observed labels, Π z_i^{y_i} (1 − z_i)^{1 − y_i}:
  the observed vector lies in every rejection region that contains it, so a test with p(y) < P(y) would
  reject with probability above its level.  :func:`floor_at_labels` applies that bound to p-values from
  asymptotic formulas, which ignore it (three events at predictions 0.02, 0.05, 0.03 gave 10⁻²²; the
  labels themselves have probability 3·10⁻⁵).
* the exact p-value P₀(T(Y) ≥ T(y)) is computable: by enumeration of the 2^n label vectors up to
  :data:`EXACT_MAX_ROWS` rows, and by drawing Y* ~ Bernoulli(z) beyond (:func:`null_pvalue`; the Monte
  Carlo p-value (1 + #{T* ≥ T})/(B + 1) is valid for any number of draws B; Davison & Hinkley,
  *Bootstrap Methods and their Application*, 1997, §4.2.5).  Both are at least P(y): the observed vector
  is among those counted.

Where the asymptotic formula of a test has not been checked (the level of each was verified by simulation
from :data:`ASYMPTOTIC_MIN_ROWS` rows on; BENCHMARKS.md), calviz uses these instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

#: fewest rows from which the asymptotic p-values of the classical tests and the analytic critical values of
#: T-Cal are used: their level at α = 0.05 was checked by simulation at n = 500 (BENCHMARKS.md, "Classical
#: calibration tests: level under calibration" and "T-Cal level under calibration"); below, the p-value comes
#: from the null distribution of the labels given the predictions (exact or resampled)
ASYMPTOTIC_MIN_ROWS = 500
#: fewest rows from which the asymptotic ECE interval's coverage was checked by simulation, for a scalar
#: target (binary, top-1, classwise: n = 20–500 with 15 bins, BENCHMARKS.md "Small-sample coverage of the
#: asymptotic ECE interval") and for a vector one (top-k, full: n = 1000, "Coverage of the Sun et al. (2024)
#: ECE interval", Setting 3).  Below, bins holding one point drop out of the within-bin statistic, which is
#: then biased down, and the interval can cover less than its level (a confident 10-class model, top-3 with
#: 15 bins per axis: 0.854 at n = 100 for 0.9; ``calviz.ece_interval``).
INTERVAL_MIN_ROWS = {"scalar": 20, "vector": 1000}
#: what a sample smaller than every stated minimum gets (:func:`sample_size_note`): the one text of it
SAMPLE_SIZE_NOTE = (
    "Only {n} rows: below {interval} rows the ECE interval's coverage is not established, and below "
    "{asymptotic} rows the tests' p-values are computed exactly (or resampled) given the predictions "
    "instead of by their asymptotic formulas. With so few rows a test rarely rejects unless the "
    "miscalibration is gross; read every number here as rough"
)
#: up to this many rows the p-value is exact: every one of the 2^n label vectors is enumerated
EXACT_MAX_ROWS = 12
#: label vectors drawn from the null beyond EXACT_MAX_ROWS (Monte Carlo s.e. of a p-value near 0.05: 0.003)
NULL_DRAWS = 4999
#: seed of those draws: a p-value does not change from one run to the next
NULL_SEED = 20240
#: elements per block of label vectors (bounds the memory of the enumeration and the draws)
_BLOCK = 1 << 20
#: relative tolerance of ties between a null statistic and the observed one (ties count as exceedances)
_TIE_RTOL = 1e-9


def sample_size_note(n: int) -> str:
    """:data:`SAMPLE_SIZE_NOTE` for a sample of n rows below the smallest stated minimum (the ECE
    interval's for a scalar target); "" from there on.  The surfaces show it with the data (an upload of
    3 rows is accepted, and this says what that means)."""
    n = int(n)
    smallest = min(*INTERVAL_MIN_ROWS.values(), ASYMPTOTIC_MIN_ROWS)
    if n >= smallest:
        return ""
    return SAMPLE_SIZE_NOTE.format(n=n, interval=smallest, asymptotic=ASYMPTOTIC_MIN_ROWS)


#: log P(labels) below this is 0.0 once exponentiated (float64 underflows below about −745.1): the floor of a
#: p-value at P(labels), the only use of it, is then none
NO_FLOOR_LOG = -800.0
#: rows summed at a time: a large sample is below NO_FLOOR_LOG after its first block, the others are not read
_LOG_BLOCK = 8192


def _log_probability(terms: Callable[[int, int], np.ndarray], n: int) -> float:
    """Σ terms(0, n) — the log-probability of n independent labels — or −inf as soon as the rows summed so
    far put it below :data:`NO_FLOOR_LOG` (every term is ≤ 0; exp of either is 0.0).  A sum that stays above
    is the one pass over all rows, bit for bit."""
    with np.errstate(divide="ignore"):
        if n > _LOG_BLOCK:
            running = 0.0
            for start in range(0, n, _LOG_BLOCK):
                running += float(np.sum(terms(start, min(start + _LOG_BLOCK, n))))
                if running < NO_FLOOR_LOG:
                    return -math.inf
        return float(np.sum(terms(0, n)))


def label_log_probability(z: np.ndarray, y: np.ndarray) -> float:
    """log P(Y = y) for independent Y_i ~ Bernoulli(z_i) (−inf when a label has probability 0, or when it is
    certainly below :data:`NO_FLOOR_LOG`, where P(labels) is 0.0 in float64)."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return _log_probability(
        lambda a, b: np.where(y[a:b] > 0.5, np.log(z[a:b]), np.log1p(-z[a:b])), z.shape[0])


def full_label_log_probability(z: np.ndarray, y: np.ndarray) -> float:
    """log P(Y = y) for independent Y_i ~ Categorical(z_i) (rows of ``z``, class ids ``y``; −inf as
    :func:`label_log_probability`)."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    return _log_probability(lambda a, b: np.log(z[np.arange(a, b), y[a:b]]), z.shape[0])


def floor_at_labels(pvalue: float, log_label_probability: float) -> float:
    """``pvalue`` raised to the probability of the observed labels under the null, where no valid p-value
    can be below (module docstring)."""
    return float(min(1.0, max(float(pvalue), math.exp(log_label_probability))))


def _exceeds(t: np.ndarray, t_obs: float) -> np.ndarray:
    if math.isinf(t_obs):
        return t >= t_obs
    return t >= t_obs - _TIE_RTOL * (abs(t_obs) + 1.0)


@lru_cache(maxsize=1)
def _null_draws(z_bytes: bytes) -> np.ndarray:
    """NULL_DRAWS label vectors Y* ~ Bernoulli(z) (bool, read-only), drawn once for all the tests of one
    sample (:func:`calviz.classical_tests` runs five on the same predictions)."""
    z = np.frombuffer(z_bytes, dtype=np.float64)
    draws = np.random.default_rng(NULL_SEED).random((NULL_DRAWS, z.shape[0])) < z[None, :]
    draws.flags.writeable = False
    return draws


def null_pvalue(statistic: Callable[[np.ndarray], np.ndarray], z: np.ndarray, y: np.ndarray) -> tuple:
    """(p-value, method, description) of a test whose statistic ``statistic`` (label vectors (M, n) as
    floats → statistics (M,), larger is more extreme) is computed on the observed labels ``y`` and on the
    null distribution of the labels given the predictions ``z``.

    Up to :data:`EXACT_MAX_ROWS` rows: p = Σ_{y'} P(y') 1{T(y') ≥ T(y)} over all 2^n vectors ("exact").
    Beyond: (1 + #{T(Y*) ≥ T(y)})/(B + 1) over B = :data:`NULL_DRAWS` vectors Y* ~ Bernoulli(z) with a fixed
    seed ("resampled"), raised to P(y) (a Monte Carlo p-value may fall below it by chance).  Both take
    ties as exceedances (relative tolerance 10⁻⁹, float round-off only)."""
    z = np.ascontiguousarray(z, dtype=np.float64)
    n = z.shape[0]
    t_obs = float(statistic(np.asarray(y, dtype=np.float64)[None, :])[0])
    log_py = label_log_probability(z, y)
    if n <= EXACT_MAX_ROWS:
        codes = np.arange(1 << n, dtype=np.int64)
        labels = ((codes[:, None] >> np.arange(n)[None, :]) & 1).astype(np.float64)
        with np.errstate(divide="ignore"):
            log_z, log_1mz = np.log(z), np.log1p(-z)
        # a label of probability 0 (a 1 at z = 0, a 0 at z = 1) makes its vector impossible; 0·log 0 is 0
        impossible = (labels @ (z == 0.0) + (1.0 - labels) @ (z == 1.0)) > 0
        logp = labels @ np.where(z > 0, log_z, 0.0) + (1.0 - labels) @ np.where(z < 1, log_1mz, 0.0)
        prob = np.where(impossible, 0.0, np.exp(logp))
        possible = prob > 0.0
        t = statistic(labels[possible])
        p = float(np.sum(prob[possible][_exceeds(t, t_obs)]))
        # the sum includes the observed vector: at least P(y) up to round-off, which the floor removes
        return floor_at_labels(p, log_py), "exact", f"exact: all {1 << n} label vectors given the predictions"
    draws = _null_draws(z.tobytes())
    block = max(1, _BLOCK // n)
    exceed = 0
    for start in range(0, NULL_DRAWS, block):
        exceed += int(np.sum(_exceeds(statistic(draws[start:start + block].astype(np.float64)), t_obs)))
    p = (1.0 + exceed) / (NULL_DRAWS + 1.0)
    return (floor_at_labels(p, log_py), "resampled",
            f"resampled: {NULL_DRAWS} label vectors y* ~ Bernoulli(z) given the predictions")
