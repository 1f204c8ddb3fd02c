"""Jitted passes of the recalibration fits (calviz._recalibration): plain arrays in, no validation."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from calviz._kernels.isotonic import pav_fit


@njit(cache=True, nogil=True)
def temperature_derivatives(logits, labels, weights, beta, start, stop):
    """(f', f'') over the rows start..stop−1 of the negative log-likelihood of temperature scaling
    f(β) = Σ_i log Σ_k e^{β z_ik} − β z_iy as a function of the inverse temperature β = 1/T, for logits
    whose row maximum is 0: f' = Σ_i E_i[z] − z_iy, f'' = Σ_i Var_i(z) ≥ 0 (moments under softmax(β z_i))
    — f is convex in β.  Newton's method needs only these two: f itself (a logarithm per row) is not
    computed, nor e^{β·0} = 1 (the row maximum's term: one of the two exponentials of binary rows).
    Every exponent is ≤ 0 and the row sum ≥ 1 (no overflow).  Row i's terms are multiplied by
    ``weights[i]`` (length 0: unit weights)."""
    K = logits.shape[1]
    weighted = weights.shape[0] > 0
    g = 0.0
    h = 0.0
    for i in range(start, stop):
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for k in range(K):
            zk = logits[i, k]
            e = 1.0 if zk == 0.0 else math.exp(beta * zk)
            s0 += e
            s1 += e * zk
            s2 += e * zk * zk
        mean = s1 / s0
        zy = logits[i, labels[i]]
        wi = weights[i] if weighted else 1.0
        g += wi * (mean - zy)
        h += wi * max(s2 / s0 - mean * mean, 0.0)
    return g, h


@njit(cache=True, nogil=True)
def platt_sums(x, t, weights, intercept, slope, start, stop):
    """(g_a, g_b, i_aa, i_ab, i_bb, loglik) over the rows start..stop−1 of the logistic model
    P = σ(a + b x) with soft targets t: gradient Σ (t − μ)(1, x), information Σ μ(1 − μ)(1, x)(1, x)ᵀ and
    log-likelihood Σ t η − log(1 + e^η), η = a + b x, without overflow for any η; row i's terms multiplied
    by ``weights[i]`` (length 0: unit weights)."""
    weighted = weights.shape[0] > 0
    g_a = 0.0
    g_b = 0.0
    i_aa = 0.0
    i_ab = 0.0
    i_bb = 0.0
    ll = 0.0
    for i in range(start, stop):
        xi = x[i]
        eta = intercept + slope * xi
        if eta >= 0.0:
            e = math.exp(-eta)
            mu = 1.0 / (1.0 + e)
            softplus = eta + math.log1p(e)
        else:
            e = math.exp(eta)
            mu = e / (1.0 + e)
            softplus = math.log1p(e)
        wi = weights[i] if weighted else 1.0
        r = wi * (t[i] - mu)
        w = wi * mu * (1.0 - mu)
        g_a += r
        g_b += r * xi
        i_aa += w
        i_ab += w * xi
        i_bb += w * xi * xi
        ll += wi * (t[i] * eta - softplus)
    return g_a, g_b, i_aa, i_ab, i_bb, ll


@njit(cache=True)
def isotonic_fit(x, y, weights):
    """(thresholds, values) of the isotonic regression of 0/1 labels y on x, x sorted increasingly (in any
    order inside ties: a group's count, and its sum of 0/1 labels, do not depend on it; scikit-learn
    sorts by (x, y)), as scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip")`` builds them: the points ordered by (x, y); values of x
    closer than the float64 resolution (1e−15) to the first of a group pooled into it with their mean
    response and count as weight; :func:`calviz._kernels.isotonic.pav_fit` (the CORP curve's PAV); then
    the interior points whose value equals both neighbours' dropped (they do not change the linear
    interpolation).  Predictions are ``np.interp`` of x clipped to the thresholds, as scikit-learn's
    (scipy's linear interpolation delegates to it).  ``weights`` (length 0: unit weights; positive) are
    the points' sample weights: a group's weight is their sum and its response their weighted mean."""
    n = x.shape[0]
    weighted = weights.shape[0] > 0
    eps = 1e-15
    ux = np.empty(n)
    uy = np.empty(n)
    uw = np.empty(n)
    u = 0
    current_x = x[0]
    current_y = 0.0
    current_w = 0.0
    for j in range(n):
        xj = x[j]
        wj = weights[j] if weighted else 1.0
        if xj - current_x >= eps:
            ux[u] = current_x
            uw[u] = current_w
            uy[u] = current_y / current_w
            u += 1
            current_x = xj
            current_w = wj
            current_y = wj * y[j]
        else:
            current_w += wj
            current_y += wj * y[j]
    ux[u] = current_x
    uw[u] = current_w
    uy[u] = current_y / current_w
    u += 1
    return _isotonic_steps(ux, uw, uy, u)


@njit(cache=True)
def _isotonic_steps(ux, uw, uy, u):
    """The thresholds and values of :func:`isotonic_fit` from its u groups (values ux, weights uw, mean
    responses uy; buffers of at least u entries, overwritten): PAV of the means weighted by uw (the
    weighted sums as uw·uy, as scikit-learn forms them), then the interior points whose value equals both
    neighbours' dropped, compacted in place."""
    sums = uy  # uw·uy written over uy: each mean is read once, before its sum replaces it
    for j in range(u):
        sums[j] = uw[j] * uy[j]
    fitted = np.empty(u)
    pav_fit(uw[:u], sums[:u], fitted)
    kept = 0
    for j in range(u):
        if j == 0 or j == u - 1 or fitted[j] != fitted[j - 1] or fitted[j] != fitted[j + 1]:
            ux[kept] = ux[j]
            fitted[kept] = fitted[j]
            kept += 1
    return ux[:kept].copy(), fitted[:kept].copy()


@njit(cache=True)
def split_by_label(x, positive):
    """(x[positive], x[~positive]), each in a buffer one longer holding +inf last (the sentinel of
    :func:`isotonic_fit_split`), in one pass (``positive`` boolean, ``x`` finite)."""
    n = x.shape[0]
    n1 = 0
    for i in range(n):
        n1 += positive[i]
    x1 = np.empty(n1 + 1)
    x0 = np.empty(n - n1 + 1)
    a = 0
    b = 0
    for i in range(n):
        if positive[i]:
            x1[a] = x[i]
            a += 1
        else:
            x0[b] = x[i]
            b += 1
    x1[n1] = np.inf
    x0[n - n1] = np.inf
    return x1, x0


@njit(cache=True)
def isotonic_fit_split(x1, x0):
    """:func:`isotonic_fit` of unit-weight 0/1 labels from the sorted finite scores of the positive rows
    ``x1`` and of the negative rows ``x0``, each followed by one +inf (:func:`split_by_label`'s buffers):
    the two runs merged in one pass, without branches on the data (the sentinels end each run), and
    pooled on the way.  A group's count and label sum do not depend on the order of its rows, so the
    groups, and the fit, are those of :func:`isotonic_fit` on all rows sorted by score — without the
    permutation of an argsort (two sorts of plain values, each of about half the rows, are several times
    faster than one argsort and two gathers)."""
    n = x1.shape[0] + x0.shape[0] - 2
    eps = 1e-15
    ux = np.empty(n)
    uy = np.empty(n)
    uw = np.empty(n)
    u = 0
    i = 0
    j = 0
    current_x = min(x1[0], x0[0])
    current_y = 0.0
    current_w = 0.0
    for _ in range(n):
        a = x1[i]
        b = x0[j]
        positive = a <= b
        xk = a if positive else b
        i += positive
        j += 1 - positive
        yk = 1.0 if positive else 0.0
        if xk - current_x >= eps:
            ux[u] = current_x
            uw[u] = current_w
            uy[u] = current_y
            u += 1
            current_x = xk
            current_w = 1.0
            current_y = yk
        else:
            current_w += 1.0
            current_y += yk
    ux[u] = current_x
    uw[u] = current_w
    uy[u] = current_y
    u += 1
    for k in range(u):  # the groups' mean responses (divided here, off the merge's dependency chain)
        uy[k] = uy[k] / uw[k]
    return _isotonic_steps(ux, uw, uy, u)


#: cells of :func:`isotonic_apply`'s lookup table per threshold
_CELLS_PER_THRESHOLD = 4


@njit(cache=True, inline="always")
def _interp_one(v, thresholds, values, slopes, lo):
    """``np.interp(v, thresholds, values)`` for thresholds[0] <= v <= thresholds[-1] and thresholds[lo]
    <= v < thresholds[lo + 1] (or lo the last index): numpy's formula and its special cases, so the
    result is the same to the bit."""
    if lo == thresholds.shape[0] - 1 or thresholds[lo] == v:
        return values[lo]
    out = slopes[lo] * (v - thresholds[lo]) + values[lo]
    if np.isnan(out):
        out = slopes[lo] * (v - thresholds[lo + 1]) + values[lo + 1]
        if np.isnan(out) and values[lo] == values[lo + 1]:
            out = values[lo]
    return out


@njit(cache=True)
def isotonic_apply(x, thresholds, values, binary):
    """``np.interp(np.clip(x, thresholds[0], thresholds[-1]), thresholds, values)`` in one pass; with
    ``binary`` also the binary map's last steps on each value q: q within 1e−5 above 1 set to 1, clipped
    to [0, 1], then q / (clip(1 − q, 0, 1) + q).

    The bracket of each value comes from a table of equal-width cells over the thresholds' range (the
    last threshold at or below each cell's left edge, 4 cells per threshold), then a binary search
    inside the cell's thresholds and a step or two correcting the cell's round-off; a binary search over
    all m thresholds instead costs log₂ m dependent loads per value, and numpy's mispredicts about every
    second comparison on unsorted values."""
    m = thresholds.shape[0]
    slopes = np.empty(max(m - 1, 0))
    for k in range(m - 1):
        slopes[k] = (values[k + 1] - values[k]) / (thresholds[k + 1] - thresholds[k])
    lo_x = thresholds[0]
    hi_x = thresholds[m - 1]
    cells = _CELLS_PER_THRESHOLD * m
    width = (hi_x - lo_x) / cells
    scale = 1.0 / width if width > 0.0 else 0.0
    # table[c]: the last threshold at or below lo_x + c·width (c = 0..cells)
    table = np.empty(cells + 1, dtype=np.int64)
    k = 0
    for c in range(cells + 1):
        edge = lo_x + c * width
        while k + 1 < m and thresholds[k + 1] <= edge:
            k += 1
        table[c] = k
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        v = min(max(x[i], lo_x), hi_x)
        c = min(int((v - lo_x) * scale), cells - 1)
        lo = table[c]
        length = table[c + 1] - lo + 1
        while length > 1:
            half = length >> 1
            lo = lo + half if thresholds[lo + half] <= v else lo
            length -= half
        while lo + 1 < m and thresholds[lo + 1] <= v:
            lo += 1
        while lo > 0 and thresholds[lo] > v:
            lo -= 1
        q = _interp_one(v, thresholds, values, slopes, lo)
        if binary:
            if 1.0 < q <= 1.0 + 1e-5:
                q = 1.0
            q = min(max(q, 0.0), 1.0)
            q = q / (min(max(1.0 - q, 0.0), 1.0) + q)
        out[i] = q
    return out


@njit(cache=True)
def temperature_apply_binary(p0, p1, temperature, floor, rows):
    """Temperature scaling of binary rows (p0, p1) in one pass, the same operations as
    ``softmax(log(clip(probs, floor, 1)) / T)`` row by row followed by the clip to [0, 1] and the division
    by the row sum (two terms: the same sums as numpy's): (n, 2) rows if ``rows``, else their second
    column (as (n, 1))."""
    n = p1.shape[0]
    out = np.empty((n, 2 if rows else 1))
    for i in range(n):
        a0 = math.log(min(max(p0[i], floor), 1.0)) / temperature
        a1 = math.log(min(max(p1[i], floor), 1.0)) / temperature
        m = max(a0, a1)
        e0 = math.exp(a0 - m)
        e1 = math.exp(a1 - m)
        s = e0 + e1
        q0 = min(max(e0 / s, 0.0), 1.0)
        q1 = min(max(e1 / s, 0.0), 1.0)
        t = q0 + q1
        if rows:
            out[i, 0] = q0 / t
            out[i, 1] = q1 / t
        else:
            out[i, 0] = q1 / t
    return out
