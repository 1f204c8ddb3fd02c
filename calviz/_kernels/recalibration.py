"""Jitted passes of the recalibration fits (calviz._recalibration): plain arrays in, no validation."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from calviz._kernels.isotonic import pav_fit


@njit(cache=True, nogil=True)
def temperature_sums(logits, labels, weights, beta, start, stop):
    """(f, f', f'') over the rows start..stop−1 of the negative log-likelihood of temperature scaling as a
    function of the inverse temperature β = 1/T, for logits whose row maximum is 0:
    f = Σ_i log Σ_k e^{β z_ik} − β z_iy, f' = Σ_i E_i[z] − z_iy, f'' = Σ_i Var_i(z) ≥ 0 (moments under
    softmax(β z_i)) — f is convex in β.  Every exponent is ≤ 0 and the row sum ≥ 1 (no overflow).  Row i's
    terms are multiplied by ``weights[i]`` (length 0: unit weights)."""
    K = logits.shape[1]
    weighted = weights.shape[0] > 0
    f = 0.0
    g = 0.0
    h = 0.0
    for i in range(start, stop):
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for k in range(K):
            zk = logits[i, k]
            e = math.exp(beta * zk)
            s0 += e
            s1 += e * zk
            s2 += e * zk * zk
        mean = s1 / s0
        zy = logits[i, labels[i]]
        wi = weights[i] if weighted else 1.0
        f += wi * (math.log(s0) - beta * zy)
        g += wi * (mean - zy)
        h += wi * max(s2 / s0 - mean * mean, 0.0)
    return f, g, h


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
    fitted = np.empty(u)
    pav_fit(uw[:u], uw[:u] * uy[:u], fitted)
    keep = np.ones(u, dtype=np.bool_)
    for j in range(1, u - 1):
        keep[j] = fitted[j] != fitted[j - 1] or fitted[j] != fitted[j + 1]
    return ux[:u][keep].copy(), fitted[keep].copy()
