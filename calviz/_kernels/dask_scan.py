"""Jitted per-partition kernels for calviz.dask: the partition summaries of the Laplace-kernel scan.

Partitions are contiguous, sorted runs of the globally sorted predictions.  For a run v_0 ≤ … ≤ v_{p−1}
with residuals r_i the kernel returns

    total = Σ_{i,j in run} r_i r_j e^{−|v_i − v_j|/h}   (= Σ_i r_i (r_i + 2 L_i), L_i the left sums)
    tail  = Σ_j r_j e^{−(v_{p−1} − v_j)/h}             (the left sum carried out of the run)
    head  = Σ_i r_i e^{−(v_i − v_0)/h}                  (how the run absorbs a carry arriving at v_0)

Every exponential factor is ≤ 1, so nothing overflows; sums are compensated (Neumaier).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def laplace_run_summary(v: np.ndarray, r: np.ndarray, inv_h: float):
    n = v.shape[0]
    total = 0.0
    comp = 0.0
    left = 0.0
    head = 0.0
    head_comp = 0.0
    for i in range(n):
        if i > 0:
            left = np.exp(-(v[i] - v[i - 1]) * inv_h) * (left + r[i - 1])
        term = r[i] * (r[i] + 2.0 * left)
        s = total + term
        if abs(total) >= abs(term):
            comp += (total - s) + term
        else:
            comp += (term - s) + total
        total = s
        h = r[i] * np.exp(-(v[i] - v[0]) * inv_h)
        s = head + h
        if abs(head) >= abs(h):
            head_comp += (head - s) + h
        else:
            head_comp += (h - s) + head
        head = s
    tail = left + r[n - 1] if n > 0 else 0.0
    return total + comp, tail, head + head_comp


@njit(cache=True)
def y_only_bin_sums(ids: np.ndarray, z: np.ndarray, n_cells: int, n_resamples: int, seed: int):
    """Y-only resampling of one partition (Lee et al. 2023, App. C.3): for every resample r and every point,
    y* ~ Ber(z); returns the per-bin sums S*[r, b] = Σ (y* − z) and Q*[r, b] = Σ (y* − z)² over the dense
    bin ids ``ids`` in [0, n_cells).  The stream is numba's np.random seeded with ``seed`` (the caller
    gives every partition its own seed), so a resample never materialises n labels."""
    np.random.seed(seed)
    S = np.zeros((n_resamples, n_cells))
    Q = np.zeros((n_resamples, n_cells))
    n = z.shape[0]
    for r in range(n_resamples):
        for i in range(n):
            zi = z[i]
            v = (1.0 - zi) if np.random.random() < zi else -zi
            S[r, ids[i]] += v
            Q[r, ids[i]] += v * v
    return S, Q
