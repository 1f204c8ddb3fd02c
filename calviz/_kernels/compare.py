"""Jitted sums for the paired difference of two debiased ECE² estimates on the same examples.

Model a puts example i in equal-width bin a(i) of its own scalar prediction, model b in bin b(i); with
residuals u_i = y_i^a - z_i^a and w_i = y_i^b - z_i^b the statistic is

    D = T^d_a - T^d_b = (1/n) sum_{i != j} h(i, j),
    h(i, j) = 1[a(i) = a(j)] u_i u_j / N^a_{a(i)} - 1[b(i) = b(j)] w_i w_j / N^b_{b(i)}.

Two passes: the first accumulates, per bin of each model, N, S = sum v, Q = sum v^2, Q4 = sum v^4, and
per joint cell (a, b) C1 = sum u w, C2 = sum (u w)^2; the second evaluates the influence-function
values phi_i = (2 mu^a u_i - (mu^a)^2) - (2 mu^b w_i - (mu^b)^2) (mu = S/N of the example's bin) and
their mean and variance (Welford).  sum_{i != j} h(i, j)^2 follows from the sums exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from calviz._kernels.binning import equal_width_bin


@njit(cache=True)
def paired_debiased_kernel(za, ya, zb, yb, m, lower, upper):
    """(T^d_a, T^d_b, mean phi, var phi (ddof 0), sum_{i != j} h^2) for scalar predictions of two
    models on the same n examples, both binned into the m equal-width bins given by lower/upper."""
    n = za.shape[0]
    Na = np.zeros(m)
    Sa = np.zeros(m)
    Qa = np.zeros(m)
    Q4a = np.zeros(m)
    Nb = np.zeros(m)
    Sb = np.zeros(m)
    Qb = np.zeros(m)
    Q4b = np.zeros(m)
    C1 = np.zeros((m, m))
    C2 = np.zeros((m, m))
    for i in range(n):
        ia = equal_width_bin(za[i], m, lower, upper)
        ib = equal_width_bin(zb[i], m, lower, upper)
        u = ya[i] - za[i]
        w = yb[i] - zb[i]
        u2 = u * u
        w2 = w * w
        Na[ia] += 1.0
        Sa[ia] += u
        Qa[ia] += u2
        Q4a[ia] += u2 * u2
        Nb[ib] += 1.0
        Sb[ib] += w
        Qb[ib] += w2
        Q4b[ib] += w2 * w2
        uw = u * w
        C1[ia, ib] += uw
        C2[ia, ib] += uw * uw
    ta = 0.0
    tb = 0.0
    sq = 0.0
    mua = np.zeros(m)
    mub = np.zeros(m)
    for k in range(m):
        if Na[k] > 0:
            ta += (Sa[k] * Sa[k] - Qa[k]) / Na[k]
            sq += (Qa[k] * Qa[k] - Q4a[k]) / (Na[k] * Na[k])
            mua[k] = Sa[k] / Na[k]
        if Nb[k] > 0:
            tb += (Sb[k] * Sb[k] - Qb[k]) / Nb[k]
            sq += (Qb[k] * Qb[k] - Q4b[k]) / (Nb[k] * Nb[k])
            mub[k] = Sb[k] / Nb[k]
    for k in range(m):
        for c in range(m):
            if C2[k, c] > 0.0:
                sq -= 2.0 * (C1[k, c] * C1[k, c] - C2[k, c]) / (Na[k] * Nb[c])
    mean = 0.0
    m2 = 0.0
    for i in range(n):
        ia = equal_width_bin(za[i], m, lower, upper)
        ib = equal_width_bin(zb[i], m, lower, upper)
        phi = (2.0 * mua[ia] * (ya[i] - za[i]) - mua[ia] * mua[ia]) - (
            2.0 * mub[ib] * (yb[i] - zb[i]) - mub[ib] * mub[ib])
        delta = phi - mean
        mean += delta / (i + 1)
        m2 += delta * (phi - mean)
    return ta / n, tb / n, mean, m2 / n, sq
