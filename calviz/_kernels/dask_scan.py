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

from calviz._kernels.tcal import _GOLDEN, LANES, _next_uniform, stream_seed


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
    partition starts its draws at the state of its first global row and gets exactly the in-memory draws.
    The stack walk is that of :func:`calviz._kernels.tcal._y_only_block`.  The bins containing the
    partition's first or last point may continue in the neighbouring partitions: their sums are returned
    instead of their contributions.  Returns ``interior`` (count, max_level) Σ (S*² − Q*)/N over the
    bins inside the partition (not divided by n), ``first_s, first_q, last_s, last_q`` (count, max_level)
    the resampled sums of the first and last bin of every scale, ``first_n, last_n`` (max_level,) their
    sizes (last_n = 0 when the first bin is also the last).
    """
    n = z.shape[0]
    interior = np.zeros((count, max_level))
    first_s = np.zeros((count, max_level))
    first_q = np.zeros((count, max_level))
    last_s = np.zeros((count, max_level))
    last_q = np.zeros((count, max_level))
    first_n = np.zeros(max_level, dtype=np.int64)
    last_n = np.zeros(max_level, dtype=np.int64)
    if n == 0:
        return interior, first_s, first_q, last_s, last_q, first_n, last_n
    skip = np.uint64(offset) * _GOLDEN
    depth = max_level + 2
    for block in range(0, count, LANES):
        R = min(LANES, count - block)
        states = np.empty(R, dtype=np.uint64)
        for r in range(R):
            states[r] = stream_seed(base_seed, start + block + r) + skip
        st_h = np.zeros(depth, dtype=np.int64)
        st_n = np.zeros(depth, dtype=np.int64)
        st_s = np.zeros((depth, R))
        st_q = np.zeros((depth, R))
        a_s = np.zeros(R)
        a_q = np.zeros(R)
        s_pt = np.zeros(R)
        q_pt = np.zeros(R)
        top = -1
        gap = max_level + 1
        for i in range(n + 1):
            if i == n:
                g = 1
                w = 0
                for r in range(R):
                    s_pt[r] = 0.0
                    q_pt[r] = 0.0
            else:
                if i > 0 and split[i - 1] < gap:
                    gap = split[i - 1]
                zi = z[i]
                w = 1
                for r in range(R):
                    states[r], u = _next_uniform(states[r])
                    v = (1.0 if u < zi else 0.0) - zi
                    s_pt[r] = v
                    q_pt[r] = v * v
                if top < 0:
                    top = 0
                    st_h[0] = 0
                    st_n[0] = 1
                    for r in range(R):
                        st_s[0, r] = s_pt[r]
                        st_q[0, r] = q_pt[r]
                    gap = max_level + 1
                    continue
                g = gap
                gap = max_level + 1
                if g > max_level:
                    st_n[top] += 1
                    for r in range(R):
                        st_s[top, r] += s_pt[r]
                        st_q[top, r] += q_pt[r]
                    continue
            for r in range(R):
                a_s[r] = 0.0
                a_q[r] = 0.0
            a_n = 0
            hi = max_level
            k = top
            while True:
                for r in range(R):
                    a_s[r] += st_s[k, r]
                    a_q[r] += st_q[k, r]
                a_n += st_n[k]
                h = st_h[k]
                lo = (h if h > g else g) - 1
                if k == 0:  # holds the partition's first point: an edge bin at these scales
                    for lev in range(lo, hi):
                        first_n[lev] = a_n
                        for r in range(R):
                            first_s[block + r, lev] = a_s[r]
                            first_q[block + r, lev] = a_q[r]
                elif i == n:  # closed at the end: holds the partition's last point
                    for lev in range(lo, hi):
                        last_n[lev] = a_n
                        for r in range(R):
                            last_s[block + r, lev] = a_s[r]
                            last_q[block + r, lev] = a_q[r]
                elif a_n >= 2:
                    for lev in range(lo, hi):
                        for r in range(R):
                            interior[block + r, lev] += (a_s[r] * a_s[r] - a_q[r]) / a_n
                if h < g:
                    break
                hi = h - 1
                k -= 1
            st_n[k] = a_n
            for r in range(R):
                st_s[k, r] = a_s[r]
                st_q[k, r] = a_q[r]
            top = k + 1
            st_h[top] = g
            st_n[top] = w
            for r in range(R):
                st_s[top, r] = s_pt[r]
                st_q[top, r] = q_pt[r]
    return interior, first_s, first_q, last_s, last_q, first_n, last_n
