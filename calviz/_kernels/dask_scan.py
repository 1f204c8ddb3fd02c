"""Jitted per-partition kernels for calviz.dask: the partition summaries of the Laplace-kernel scan and
of y-only resampled T-Cal (:func:`y_only_partition`).

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

from calviz._kernels.tcal import _GOLDEN, LANES, stream_seed, y_only_walk


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
def y_only_partition(split, max_level, z, base_seed, start, count, offset):
    """Y-only resamples start..start+count−1 of one sorted partition (global rows offset..offset+p−1):
    the partition's share of every resampled T^d (Lee, Huang, Hassani and Dobriban, 2023, App. C.3).

    Resample r draws y* ~ Ber(z) from the SplitMix64 stream stream_seed(base_seed, r) of the in-memory
    kernels, point by point in sorted order: the stream's state after g steps is seed + g·golden, so the
    partition starts its draws at the state of its first global row and gets exactly the in-memory draws
    (the walk is the in-memory one, :func:`calviz._kernels.tcal.y_only_walk`).  Returns ``interior``
    (count, max_level) Σ (S*² − Q*)/N over the bins inside the partition (not divided by n),
    ``first_s, first_q, last_s, last_q`` (count, max_level) the resampled sums of the first and last bin
    of every scale — they may continue in the neighbouring partitions — and ``first_n, last_n``
    (max_level,) their sizes (last_n = 0 when the first bin is also the last).
    """
    out = [np.zeros((count, max_level)) for _ in range(5)]
    first_n = np.zeros(max_level, dtype=np.int64)
    last_n = np.zeros(max_level, dtype=np.int64)
    skip = np.uint64(offset) * _GOLDEN
    for block in range(0, count, LANES):
        R = min(LANES, count - block)
        states = np.empty(R, dtype=np.uint64)
        for r in range(R):
            states[r] = stream_seed(base_seed, start + block + r) + skip
        lanes = [np.zeros((max_level, R)) for _ in range(5)]
        y_only_walk(split, max_level, z, states, lanes[0], True, lanes[1], lanes[2], lanes[3], lanes[4],
                    first_n, last_n)
        for j in range(5):
            out[j][block:block + R] = lanes[j].T
    return out[0], out[1], out[2], out[3], out[4], first_n, last_n
