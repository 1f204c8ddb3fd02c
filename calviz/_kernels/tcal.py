"""Jitted kernels of multi-scale T-Cal (seed 000, Sec. 3.2, Algorithm 2 and App. C.3).

The idea that makes every resample cost O(n) for *all* dyadic scales at once
------------------------------------------------------------------------------
The bins at scale m = 2^b nest: a bin at scale b is the union of bins at scale b + 1 (equal-width bins
on [0, 1], and the Freudenthal cells of the simplex partition, whose hyperplanes at scale 2m contain
those at scale m).  Put the sample in an order in which every bin of every scale is a contiguous run
(1-D: sorted predictions; simplex: the hierarchical order built in :mod:`calviz.tcal`) and record for
each pair of neighbours i, i+1 its *split level* L_i: they share a bin at every scale b < L_i and are in
different bins at every scale b >= L_i (L_i = B + 1: same bin at every scale).

One left-to-right scan with a stack then yields the per-bin sums at every scale: the stack holds the
open bins as segments with strictly increasing "left split levels" h; a gap of level g closes the open
bins of every scale >= g (each closed union contributes (||S||^2 - Q) / N to the scales it spans) and
merges the segments that stay joined at the scales < g.  Every segment is pushed and popped once, the
stack depth is at most B + 1, and a union with one point contributes exactly 0 (S^2 - Q = v*v - v*v),
so nothing of size n x B is ever built.  The contribution of a union is added to each scale it spans
directly (not through a difference array) so that identical bin contents give bit-identical statistics
— that matters for ties between the observed statistic and resampled ones.

Random numbers: a SplitMix64 stream per resample, seeded from (user seed, resample index), so the
result does not depend on how ``prange`` distributes resamples over threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_INV_2_53 = 1.0 / 9007199254740992.0

#: residual kinds
SCALAR = 0  # binary / top-1 / classwise: scalar residual v = y - z, z = P(y = 1)
VECTOR = 1  # full K-class calibration: v = e_y - z in R^K
#: per-point value sources of the scan
GIVEN = 0  # observed labels
Y_ONLY = 1  # y* ~ Cat(z) for every point (App. C.3, "Y-only bootstrapping")
CONSISTENCY = 2  # z* drawn with replacement from the z's, y* ~ Cat(z*) (multinomial weights)


# Implementation note: the scan loops below are written out by hand inside each kernel.  Factoring
# the stack operations into small jitted helpers that take the stack arrays was measured ~10x slower
# (reference counting of the array arguments on every call), and the per-point work is tiny.


@njit(cache=True, inline="always")
def _mix(x):
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def _next_uniform(state):
    """SplitMix64 step: (new state, U[0, 1) double with 53 random bits)."""
    state = state + _GOLDEN
    return state, float(_mix(state) >> np.uint64(11)) * _INV_2_53


@njit(cache=True)
def stream_seed(base_seed, index):
    """Seed of the independent stream number ``index`` derived from ``base_seed``."""
    return _mix(_mix(np.uint64(base_seed)) ^ (np.uint64(index) * _GOLDEN + np.uint64(1)))


@njit(cache=True, inline="always")
def _bit_length(x):
    h = 0
    if x >= np.int64(1) << np.int64(32):
        x >>= np.int64(32)
        h += 32
    if x >= 1 << 16:
        x >>= 16
        h += 16
    if x >= 1 << 8:
        x >>= 8
        h += 8
    if x >= 1 << 4:
        x >>= 4
        h += 4
    if x >= 1 << 2:
        x >>= 2
        h += 2
    if x >= 2:
        x >>= 1
        h += 1
    return h + x


@njit(cache=True)
def binary_sort_keys(z, y):
    """uint64 keys (bits of z) << 1 | y: nonnegative doubles order like their bit patterns, so sorting
    the keys sorts (z, y) by z in one go (-0.0 becomes +0.0)."""
    n = z.shape[0]
    out = np.empty(n, dtype=np.uint64)
    bits = z.view(np.uint64)
    for i in range(n):
        out[i] = (bits[i] << np.uint64(1)) | (np.uint64(1) if y[i] != 0.0 else np.uint64(0))
    return out


@njit(cache=True)
def unpack_sort_keys(keys):
    """Inverse of :func:`binary_sort_keys`: (z, y) float64 arrays."""
    n = keys.shape[0]
    bits = np.empty(n, dtype=np.uint64)
    y = np.empty(n)
    for i in range(n):
        bits[i] = keys[i] >> np.uint64(1)
        y[i] = float(keys[i] & np.uint64(1))
    return bits.view(np.float64), y


@njit(cache=True)
def dyadic_split_levels(z_sorted: np.ndarray, max_level: int) -> np.ndarray:
    """Split levels of neighbours in sorted 1-D predictions for the scales m = 2^b, b = 1..max_level.

    The equal-width bin at scale 2^b is min(floor(2^b z), 2^b - 1) = id >> (max_level - b) with
    id = min(floor(2^max_level z), 2^max_level - 1) (multiplying by a power of two is exact and the
    clamp of z = 1 commutes with the shift), so two points first differ at b = max_level - h, h being
    the index of the highest differing bit of their finest ids.
    """
    n = z_sorted.shape[0]
    out = np.empty(max(n - 1, 0), dtype=np.int64)
    scale = 2.0**max_level
    top = (np.int64(1) << np.int64(max_level)) - 1
    prev = min(np.int64(z_sorted[0] * scale), top) if n > 0 else 0
    for i in range(1, n):
        cur = min(np.int64(z_sorted[i] * scale), top)
        x = prev ^ cur
        out[i - 1] = max_level + 1 if x == 0 else max_level - _bit_length(x) + 1
        prev = cur
    return out


@njit(cache=True)
def _scan_scalar(split, max_level, z, y, source, weights, seed, out):
    """T^d at the scales 2^1..2^max_level (out[b-1]) for scalar residuals, one pass over the scan order.

    source GIVEN: residuals y - z; Y_ONLY: y* ~ Ber(z) from the stream ``seed``; CONSISTENCY: point i
    appears weights[i] times, each copy with its own label y* ~ Ber(z_i).
    """
    n = z.shape[0]
    depth = max_level + 2
    st_h = np.zeros(depth, dtype=np.int64)  # left split level of each open segment (increasing)
    st_s = np.zeros(depth)  # sum of residuals of the segment
    st_q = np.zeros(depth)  # sum of squared residuals
    st_n = np.zeros(depth, dtype=np.int64)  # number of (copies of) points
    state = np.uint64(seed)
    top = -1
    gap = max_level + 1
    for i in range(n + 1):
        if i == n:  # close everything: a virtual gap of level 1
            if top < 0:
                break
            g = 1
            s = 0.0
            q = 0.0
            w = 0
        else:
            if i > 0 and split[i - 1] < gap:
                gap = split[i - 1]
            zi = z[i]
            if source == GIVEN:
                s = y[i] - zi
                q = s * s
                w = 1
            elif source == Y_ONLY:
                state, u = _next_uniform(state)
                s = (1.0 if u < zi else 0.0) - zi
                q = s * s
                w = 1
            else:
                w = weights[i]
                if w == 0:
                    continue  # the split level to the next present point is the min over the gaps
                ones = 0
                for _ in range(w):
                    state, u = _next_uniform(state)
                    if u < zi:
                        ones += 1
                s = ones - w * zi
                q = ones * (1.0 - zi) * (1.0 - zi) + (w - ones) * zi * zi
            if top < 0:
                top = 0
                st_h[0] = 0
                st_s[0] = s
                st_q[0] = q
                st_n[0] = w
                gap = max_level + 1
                continue
            g = gap
            gap = max_level + 1
            if g > max_level:  # same bin at every scale: joins the top segment
                st_s[top] += s
                st_q[top] += q
                st_n[top] += w
                continue
        # a gap of level g closes the open bins of every scale >= g ...
        a_s = 0.0
        a_q = 0.0
        a_n = 0
        hi = max_level
        k = top
        while True:
            a_s += st_s[k]
            a_q += st_q[k]
            a_n += st_n[k]
            h = st_h[k]
            if a_n >= 2:
                c = (a_s * a_s - a_q) / a_n
                for lev in range((h if h > g else g) - 1, hi):
                    out[lev] += c
            if h < g:
                break
            hi = h - 1
            k -= 1
        # ... and the segments still joined at the scales < g merge into one
        st_s[k] = a_s
        st_q[k] = a_q
        st_n[k] = a_n
        top = k + 1
        st_h[top] = g
        st_s[top] = s
        st_q[top] = q
        st_n[top] = w
    for lev in range(max_level):
        out[lev] /= n


@njit(cache=True)
def _scan_vector(split, max_level, z, labels, source, weights, seed, out):
    """:func:`_scan_scalar` for K-class residuals v = e_y - z (full calibration), y* ~ Cat(z)."""
    n, K = z.shape
    depth = max_level + 2
    st_h = np.zeros(depth, dtype=np.int64)
    st_s = np.zeros((depth, K))
    st_q = np.zeros(depth)
    st_n = np.zeros(depth, dtype=np.int64)
    pt = np.zeros(K)
    acc = np.zeros(K)
    state = np.uint64(seed)
    top = -1
    gap = max_level + 1
    for i in range(n + 1):
        if i == n:
            if top < 0:
                break
            g = 1
            q = 0.0
            w = 0
            for a in range(K):
                pt[a] = 0.0
        else:
            if i > 0 and split[i - 1] < gap:
                gap = split[i - 1]
            w = 1 if source != CONSISTENCY else weights[i]
            if w == 0:
                continue
            for a in range(K):
                pt[a] = 0.0
            q = 0.0
            for _ in range(w):
                if source == GIVEN:
                    c = labels[i]
                else:
                    state, u = _next_uniform(state)
                    c = -1
                    last = 0
                    cum = 0.0
                    for a in range(K):
                        if z[i, a] > 0.0:
                            last = a
                            cum += z[i, a]
                            if u < cum:
                                c = a
                                break
                    if c < 0:  # u beyond the float row sum: the last class with positive mass
                        c = last
                for a in range(K):
                    v = (1.0 if a == c else 0.0) - z[i, a]
                    pt[a] += v
                    q += v * v
            if top < 0:
                top = 0
                st_h[0] = 0
                for a in range(K):
                    st_s[0, a] = pt[a]
                st_q[0] = q
                st_n[0] = w
                gap = max_level + 1
                continue
            g = gap
            gap = max_level + 1
            if g > max_level:
                for a in range(K):
                    st_s[top, a] += pt[a]
                st_q[top] += q
                st_n[top] += w
                continue
        for a in range(K):
            acc[a] = 0.0
        a_q = 0.0
        a_n = 0
        hi = max_level
        k = top
        while True:
            s2 = 0.0
            for a in range(K):
                acc[a] += st_s[k, a]
                s2 += acc[a] * acc[a]
            a_q += st_q[k]
            a_n += st_n[k]
            h = st_h[k]
            if a_n >= 2:
                c = (s2 - a_q) / a_n
                for lev in range((h if h > g else g) - 1, hi):
                    out[lev] += c
            if h < g:
                break
            hi = h - 1
            k -= 1
        for a in range(K):
            st_s[k, a] = acc[a]
        st_q[k] = a_q
        st_n[k] = a_n
        top = k + 1
        st_h[top] = g
        for a in range(K):
            st_s[top, a] = pt[a]
        st_q[top] = q
        st_n[top] = w
    for lev in range(max_level):
        out[lev] /= n


#: resamples processed together by :func:`_y_only_block` (one stack walk serves all lanes)
LANES = 64


@njit(cache=True)
def _y_only_block(split, max_level, z, seeds, out):
    """Scalar y-only resampling for len(seeds) resamples at once (out: (lanes, max_level)).

    With the predictions fixed, every resample has the same bins, so the stack walk — the control flow
    of :func:`_scan_scalar` — is shared and only the sums differ per lane (SIMD-friendly inner loops).
    Each lane consumes its own stream exactly as :func:`_scan_scalar` would and does the same floating
    point operations in the same order, so the results are bit-identical to one-resample-at-a-time.
    """
    n = z.shape[0]
    R = seeds.shape[0]
    depth = max_level + 2
    st_h = np.zeros(depth, dtype=np.int64)
    st_n = np.zeros(depth, dtype=np.int64)
    st_s = np.zeros((depth, R))
    st_q = np.zeros((depth, R))
    a_s = np.zeros(R)
    a_q = np.zeros(R)
    c = np.zeros(R)
    s_pt = np.zeros(R)
    q_pt = np.zeros(R)
    acc = np.zeros((max_level, R))
    states = seeds.copy()
    top = -1
    gap = max_level + 1
    for i in range(n + 1):
        if i == n:
            if top < 0:
                break
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
            if a_n >= 2:
                lo = (h if h > g else g) - 1
                if lo < hi:
                    for r in range(R):
                        c[r] = (a_s[r] * a_s[r] - a_q[r]) / a_n
                    for lev in range(lo, hi):
                        for r in range(R):
                            acc[lev, r] += c[r]
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
    for r in range(R):
        for lev in range(max_level):
            out[r, lev] = acc[lev, r] / n


@njit(cache=True)
def observed_statistics(split, max_level, z, y, kind):
    """T^d at the scales 2^1..2^max_level for the observed labels, z in scan order.

    SCALAR: z (n, 1) with y (n,) float labels in {0, 1}; VECTOR: z (n, K) with y (n,) class ids.
    """
    out = np.zeros(max_level)
    no_weights = np.zeros(0, np.int64)
    if kind == SCALAR:
        _scan_scalar(split, max_level, z[:, 0].copy(), y, GIVEN, no_weights, np.uint64(0), out)
    else:
        _scan_vector(split, max_level, z, y.astype(np.int64), GIVEN, no_weights, np.uint64(0), out)
    return out


@njit(cache=True)
def _resample_block(split, max_level, z, z1, kind, source, base_seed, start, stop, out):
    """Resamples start..stop-1 into out[start:stop]; resample r uses the stream stream_seed(base_seed, r).
    Scalar y-only: one :func:`_y_only_block` pass for the whole block; otherwise one scan per resample."""
    n = z.shape[0]
    if kind == SCALAR and source == Y_ONLY:
        seeds = np.empty(stop - start, dtype=np.uint64)
        for r in range(start, stop):
            seeds[r - start] = stream_seed(base_seed, r)
        rows = np.zeros((stop - start, max_level))
        _y_only_block(split, max_level, z1, seeds, rows)
        for r in range(start, stop):
            for lev in range(max_level):
                out[r, lev] = rows[r - start, lev]
        return
    no_labels = np.zeros(0, np.int64)
    no_y = np.zeros(0)
    row = np.zeros(max_level)
    weights = np.zeros(n if source == CONSISTENCY else 0, dtype=np.int64)
    for r in range(start, stop):
        seed = stream_seed(base_seed, r)
        row[:] = 0.0
        if source == CONSISTENCY:
            # z* drawn with replacement = multinomial(n; 1/n, ..., 1/n) weights on the scan order, so
            # the sample never needs re-sorting.  The weights use their own stream.
            weights[:] = 0
            state = stream_seed(seed, 0)
            for _ in range(n):
                state, u = _next_uniform(state)
                weights[min(int(u * n), n - 1)] += 1
        if kind == SCALAR:
            _scan_scalar(split, max_level, z1, no_y, source, weights, seed, row)
        else:
            _scan_vector(split, max_level, z, no_labels, source, weights, seed, row)
        for lev in range(max_level):
            out[r, lev] = row[lev]


@njit(cache=True, parallel=True)
def resampled_statistics(split, max_level, z, kind, source, base_seed, n_resamples):
    """(n_resamples, max_level) resampled T^d (source Y_ONLY or CONSISTENCY), blocks of LANES resamples
    spread over the threads.  Resample r uses its own stream stream_seed(base_seed, r), so the output does
    not depend on the number of threads (nor on using :func:`resampled_statistics_serial`).
    Memory: O(n) per running thread (consistency weights), never resamples x n."""
    out = np.zeros((n_resamples, max_level))
    z1 = z[:, 0].copy() if kind == SCALAR else np.zeros(0)
    n_blocks = (n_resamples + LANES - 1) // LANES
    for blk in prange(n_blocks):
        _resample_block(split, max_level, z, z1, kind, source, base_seed, blk * LANES,
                        min((blk + 1) * LANES, n_resamples), out)
    return out


@njit(cache=True)
def resampled_statistics_serial(split, max_level, z, kind, source, base_seed, n_resamples):
    """:func:`resampled_statistics` on the calling thread (identical output): for small jobs, where
    waking the thread pool costs more than the work."""
    out = np.zeros((n_resamples, max_level))
    z1 = z[:, 0].copy() if kind == SCALAR else np.zeros(0)
    n_blocks = (n_resamples + LANES - 1) // LANES
    for blk in range(n_blocks):
        _resample_block(split, max_level, z, z1, kind, source, base_seed, blk * LANES,
                        min((blk + 1) * LANES, n_resamples), out)
    return out


@njit(cache=True)
def null_moments(split, max_level, z, kind):
    """(4, max_level): per scale, over the bins with N_b >= 2,

    row 0: Var0(T^d | Z) = (2/n^2) sum_b (||C_b||_F^2 - D_b) / N_b^2   (exact, estimators.md §4 with 1/N_b)
    row 1: sum_b tr A_b,   row 2: sum_b tr A_b^2,   A_b = C_b / (n N_b)   (Satterthwaite, §5)
    row 3 (SCALAR only, else 0): the exact third cumulant of T^d given Z,
           sum_b E[W_b^3] / (n N_b)^3,  W_b = sum_{j != l in b} v_j v_l,
           E[W_b^3] = 8 [sum_{j<l} mu3_j mu3_l + 6 sum_{j<l<k} s_j s_l s_k]
                    = 8 [(m1^2 - m2)/2 + p1^3 - 3 p1 p2 + 2 p3]
           with s = z(1 - z), mu3 = E[(y - z)^3 | z] = s (1 - 2z), p_r = sum s^r, m_r = sum mu3^r (only the
           pair repeated three times and triangles of distinct points have nonzero mean).

    with C_b = sum_{j in b} Sigma(z_j), D_b = sum_{j in b} tr Sigma(z_j)^2, Sigma(z) = diag(z) - z z^T
    (SCALAR: z(1 - z)).  Point features: (tr Sigma, tr Sigma^2, entries of Sigma[, s^3, mu3, mu3^2]).
    """
    n = z.shape[0]
    k = 1 if kind == SCALAR else z.shape[1]
    d = 2 + k * k + (3 if kind == SCALAR else 0)
    depth = max_level + 2
    st_h = np.zeros(depth, dtype=np.int64)
    st_f = np.zeros((depth, d))
    st_n = np.zeros(depth, dtype=np.int64)
    pt = np.zeros(d)
    acc = np.zeros(d)
    out = np.zeros((4, max_level))
    top = -1
    gap = max_level + 1
    for i in range(n + 1):
        if i == n:
            if top < 0:
                break
            g = 1
            w = 0
            for a in range(d):
                pt[a] = 0.0
        else:
            if i > 0 and split[i - 1] < gap:
                gap = split[i - 1]
            w = 1
            if kind == SCALAR:
                zi = z[i, 0]
                sv = zi - zi * zi
                mu3 = sv * (1.0 - 2.0 * zi)
                pt[0] = sv
                pt[1] = sv * sv
                pt[2] = sv
                pt[3] = sv * sv * sv
                pt[4] = mu3
                pt[5] = mu3 * mu3
            else:
                t1 = 0.0
                t2 = 0.0
                for a in range(k):
                    for c in range(k):
                        sac = (z[i, a] if a == c else 0.0) - z[i, a] * z[i, c]
                        pt[2 + a * k + c] = sac
                        t2 += sac * sac
                    t1 += z[i, a] - z[i, a] * z[i, a]
                pt[0] = t1
                pt[1] = t2
            if top < 0:
                top = 0
                st_h[0] = 0
                for a in range(d):
                    st_f[0, a] = pt[a]
                st_n[0] = w
                gap = max_level + 1
                continue
            g = gap
            gap = max_level + 1
            if g > max_level:
                for a in range(d):
                    st_f[top, a] += pt[a]
                st_n[top] += w
                continue
        for a in range(d):
            acc[a] = 0.0
        a_n = 0
        hi = max_level
        kk = top
        while True:
            for a in range(d):
                acc[a] += st_f[kk, a]
            a_n += st_n[kk]
            h = st_h[kk]
            if a_n >= 2:
                cc = 0.0
                for a in range(2, 2 + k * k):
                    cc += acc[a] * acc[a]
                wn = float(n) * a_n
                c0 = 2.0 * (cc - acc[1]) / (wn * wn)
                c1 = acc[0] / wn
                c2 = cc / (wn * wn)
                c3 = 0.0
                if kind == SCALAR:
                    p1 = acc[0]
                    c3 = 8.0 * (0.5 * (acc[4] * acc[4] - acc[5]) + p1 * p1 * p1 - 3.0 * p1 * acc[1]
                                + 2.0 * acc[3]) / (wn * wn * wn)
                for lev in range((h if h > g else g) - 1, hi):
                    out[0, lev] += c0
                    out[1, lev] += c1
                    out[2, lev] += c2
                    out[3, lev] += c3
            if h < g:
                break
            hi = h - 1
            kk -= 1
        for a in range(d):
            st_f[kk, a] = acc[a]
        st_n[kk] = a_n
        top = kk + 1
        st_h[top] = g
        for a in range(d):
            st_f[top, a] = pt[a]
        st_n[top] = w
    return out
