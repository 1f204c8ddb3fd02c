"""One-pass sums behind the classical calibration tests (calviz.classical).

Plain arrays in, plain numbers out; the caller validates, sorts and turns the sums into statistics and
p-values.  ``y`` may be the int64 binary labels or a float64 0/1 indicator (numba compiles both).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from calviz._kernels.binning import edge_count, edge_count_table, top_bucket
from calviz._threads import map_chunks


@njit(cache=True)
def spiegelhalter_sums(z, y):
    """(Σ (y − z)(1 − 2z), Σ (1 − 2z)² z (1 − z)): numerator and null variance of Spiegelhalter's z."""
    num = 0.0
    var = 0.0
    for i in range(z.shape[0]):
        p = z[i]
        w = 1.0 - 2.0 * p
        num += (y[i] - p) * w
        var += w * w * p * (1.0 - p)
    return num, var


@njit(cache=True)
def cumulative_difference_extremes(z_events, z_non_events):
    """Extremes of the cumulative sums S_k = Σ_{j ≤ k} (y_j − z_j) over all predictions in increasing
    order, given the sorted predictions of the events (y = 1) and of the non-events (y = 0) — two
    sorts without an argsort, merged here.  S is read only at the end of each group of tied predictions
    (so the order inside a tie does not matter) and S_0 = 0 is included; also returns Σ z (1 − z), the
    null variance of S_n.

    Returns (max_k S_k, min_k S_k, Σ z(1 − z))."""
    n1 = z_events.shape[0]
    n0 = z_non_events.shape[0]
    i = 0
    j = 0
    s = 0.0
    top = 0.0
    bottom = 0.0
    var = 0.0
    while i < n1 or j < n0:
        if j >= n0 or (i < n1 and z_events[i] <= z_non_events[j]):
            p = z_events[i]
            s += 1.0 - p
            i += 1
        else:
            p = z_non_events[j]
            s -= p
            j += 1
        var += p * (1.0 - p)
        following_same = (i < n1 and z_events[i] == p) or (j < n0 and z_non_events[j] == p)
        if not following_same:
            if s > top:
                top = s
            if s < bottom:
                bottom = s
    return top, bottom, var


@njit(cache=True)
def logistic_terms(xi, yi, intercept, slope):
    """(y − μ, μ(1 − μ), y η − log(1 + e^η)) of one observation under the logistic model at (a, b),
    η = a + b x (without overflow for any η): the terms :func:`logistic_sums` adds."""
    eta = intercept + slope * xi
    if eta >= 0.0:
        e = math.exp(-eta)
        mu = 1.0 / (1.0 + e)
        softplus = eta + math.log1p(e)
    else:
        e = math.exp(eta)
        mu = e / (1.0 + e)
        softplus = math.log1p(e)
    return yi - mu, mu * (1.0 - mu), yi * eta - softplus


@njit(cache=True)
def add_logistic_terms(sums, xi, r, w, ll):
    """``sums`` = (g_a, g_b, i_aa, i_ab, i_bb, loglik) with one observation's terms (:func:`logistic_terms`)
    added: the one sequence of additions of both logistic kernels, so their sums agree bit for bit."""
    g_a, g_b, i_aa, i_ab, i_bb, loglik = sums
    return g_a + r, g_b + r * xi, i_aa + w, i_ab + w * xi, i_bb + w * xi * xi, loglik + ll


@njit(cache=True)
def logistic_sums(x, y, intercept, slope):
    """Gradient, information and log-likelihood of the logistic model P(y = 1) = σ(a + b x) at (a, b).

    Returns (g_a, g_b, i_aa, i_ab, i_bb, loglik) with g = Σ (y − μ)(1, x), I = Σ μ(1 − μ)(1, x)(1, x)ᵀ,
    loglik = Σ y η − log(1 + e^η), η = a + b x (computed without overflow for any η)."""
    sums = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(x.shape[0]):
        xi = x[i]
        r, w, ll = logistic_terms(xi, y[i], intercept, slope)
        sums = add_logistic_terms(sums, xi, r, w, ll)
    return sums


#: rows per block of :func:`logistic_sums_threaded` (three term arrays of this many doubles are held)
_LOGISTIC_BLOCK = 1 << 20


@njit(cache=True, nogil=True)
def logistic_terms_into(x, y, intercept, slope, offset, start, stop, r, w, ll):
    """The terms (:func:`logistic_terms`) of the rows offset + start .. offset + stop − 1 into r, w, ll at
    start..stop−1."""
    for j in range(start, stop):
        r[j], w[j], ll[j] = logistic_terms(x[offset + j], y[offset + j], intercept, slope)


@njit(cache=True)
def add_logistic_block(sums, x, offset, r, w, ll, size):
    """``sums`` with the first ``size`` terms of a block added in row order (rows offset.., as
    :func:`logistic_sums` adds them)."""
    for j in range(size):
        sums = add_logistic_terms(sums, x[offset + j], r[j], w[j], ll[j])
    return sums


def logistic_sums_threaded(x, y, intercept, slope):
    """:func:`logistic_sums`, bit for bit, with the terms (two logarithm-and-exponential evaluations per
    row: most of the time) computed a block at a time in row chunks on several threads
    (:func:`calviz._threads.map_chunks`: blocked threads wait without spinning, so a busy machine costs
    no more than one thread) and added by one thread in row order — the same additions in the same
    order, so the same sums."""
    n = x.shape[0]
    size = min(_LOGISTIC_BLOCK, n)
    r = np.empty(size)
    w = np.empty(size)
    ll = np.empty(size)
    sums = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for offset in range(0, n, _LOGISTIC_BLOCK):
        rows = min(_LOGISTIC_BLOCK, n - offset)
        map_chunks(lambda start, stop, offset=offset: logistic_terms_into(  # noqa: B023
            x, y, intercept, slope, offset, start, stop, r, w, ll), rows)
        sums = add_logistic_block(sums, x, offset, r, w, ll, rows)
    return sums


@njit(cache=True, nogil=True)
def clipped_logit_into(z, eps, start, stop, out):
    """:func:`clipped_logit` of z[start:stop] into out[start:stop]."""
    lo = eps
    hi = 1.0 - eps
    for i in range(start, stop):
        p = min(max(z[i], lo), hi)
        out[i] = math.log(p) - math.log1p(-p)


def clipped_logit(z, eps):
    """log(p / (1 − p)) with p = z clipped to [eps, 1 − eps] (predictions of exactly 0 or 1 have no
    finite logit); large arrays in row chunks on several threads (each value computed alone: the same
    values on any number of threads)."""
    z = np.ascontiguousarray(z, dtype=np.float64)
    out = np.empty(z.shape[0])
    map_chunks(lambda start, stop: clipped_logit_into(z, eps, start, stop, out), z.shape[0])
    return out


@njit(cache=True, nogil=True)
def edge_bin_sums(z, y, inner_edges, label=-1):
    """Per-bin count, Σz and Σy for the bins [e_i, e_{i+1}) cut at the sorted ``inner_edges`` (the
    outer edges 0 and 1 implicit, the last bin closed), z in [0, 1]: the bin of z is
    ``searchsorted(inner_edges, z, side="right")``, summed in the same pass in row order (no id array).
    The bin is read from a table on the top 16 bits of z's bit pattern
    (:func:`calviz._kernels.binning.edge_count_table`), searched only for the values sharing those
    bits with an edge — a binary search per value costs several mispredicted branches.  Used for
    equal-mass bins (ACE, Hosmer–Lemeshow groups).  ``label ≥ 0``: y holds class ids and the summed
    indicator is 1{y = label} (one class against the rest without an indicator array)."""
    m = inner_edges.shape[0]
    count = np.zeros(m + 1, dtype=np.int64)
    z_sum = np.zeros(m + 1)
    y_sum = np.zeros(m + 1)
    table = edge_count_table(inner_edges)
    bits = z.view(np.int64)
    for i in range(z.shape[0]):
        v = z[i]
        b = table[top_bucket(bits[i])]
        if b < 0:
            b = edge_count(inner_edges, v)
        count[b] += 1
        z_sum[b] += v
        if label < 0:
            y_sum[b] += y[i]
        elif y[i] == label:
            y_sum[b] += 1.0
    return count, z_sum, y_sum
