"""Jitted kernels of multi-scale T-Cal (Lee et al. 2023, Sec. 3.2, Algorithm 2 and App. C.3).

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
result does not depend on how ``prange`` distributes resamples over threads, nor on how a run of
resamples is cut into calls (the sequential rule of :func:`calviz.adaptive_tcal` draws batch after batch).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_INV_2_53 = 1.0 / 9007199254740992.0
_LOW_32 = np.uint64(0xFFFFFFFF)

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


@njit(cache=True, nogil=True)
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
    acc = np.zeros((max_level, R))
    none = np.zeros((0, 0))
    counts = np.zeros(0, dtype=np.int64)
    y_only_walk(split, max_level, z, seeds.copy(), acc, False, none, none, none, none, counts, counts)
    for r in range(R):
        for lev in range(max_level):
            out[r, lev] = acc[lev, r] / n


@njit(cache=True)
def y_only_walk(split, max_level, z, states, acc, edges, first_s, first_q, last_s, last_q, first_n, last_n):
    """The stack walk of y-only resampling for len(states) lanes: acc[lev, r] += Σ (S*² − Q*)/N over the
    bins of scale lev + 1 (not divided by n), y* ~ Ber(z) drawn from each lane's SplitMix64 ``states``.

    ``edges=True`` (a contiguous run of a larger sorted sample, see :mod:`calviz._kernels.dask_scan`): the
    bins holding the run's first or last point may continue outside the run, so their sums go to
    first_s/first_q/last_s/last_q (max_level, lanes) with sizes first_n/last_n (max_level,) instead of
    their contributions (last_n = 0 where the first bin is also the last)."""
    n = z.shape[0]
    R = states.shape[0]
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
            lo = (h if h > g else g) - 1
            if edges and (k == 0 or i == n):  # holds the run's first (k = 0) or last point
                for lev in range(lo, hi):
                    if k == 0:
                        first_n[lev] = a_n
                    else:
                        last_n[lev] = a_n
                    for r in range(R):
                        if k == 0:
                            first_s[lev, r] = a_s[r]
                            first_q[lev, r] = a_q[r]
                        else:
                            last_s[lev, r] = a_s[r]
                            last_q[lev, r] = a_q[r]
            elif a_n >= 2 and lo < hi:
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


#: most (points x lanes) per-lane draw counts :func:`_consistency_block` holds at once (two int8 tables):
#: the lanes of a block shrink for large n so that a thread never holds more than 8 MB of them (fresh
#: memory costs a page fault per 4 kB on first touch, ~ as much per byte as the draws that fill it)
CONSISTENCY_WEIGHT_CELLS = 1 << 22


#: terms of the Poisson inversion tables (the rest is a rare loop, :func:`_poisson_tail`: for z ~ U[0, 1]
#: some of a point's 2 x 64 lane draws need it at 1.2 % of the points, 40 % with 4 terms); the branch-free
#: :func:`_poisson_count` and the loads in :func:`consistency_draws` are written out for exactly 6
_POISSON_TERMS = 6
_MAX_U32 = 4294967295
_TWO_32 = 4294967296.0
#: draws of one point in one resample that the int8 count tables hold (a multinomial(n; 1/n, ...) count
#: reaches it with probability < 1/126! ~ 10^-211; the check below makes that an error, never a wrap-around)
_MAX_DRAW_COUNT = 126


@njit(cache=True, inline="always")
def _poisson_table(lam, table):
    """table[k] = floor(2^32 P(Poisson(lam) <= k)), k < _POISSON_TERMS: thresholds for 32-bit uniforms."""
    p = np.exp(-lam)
    cdf = p
    for k in range(_POISSON_TERMS):
        table[k] = np.int64(cdf * _TWO_32)
        p *= lam / (k + 1)
        cdf += p


@njit(cache=True)
def poisson_tables(z):
    """(n, 2 _POISSON_TERMS) uint32: row i = the inversion thresholds of Poisson(z_i) (the ones) followed
    by those of Poisson(1 - z_i) (the zeros), each stored as t - 1 so that the test u >= t becomes u > t - 1
    in 32-bit integers (t = floor(2^32 cdf) >= 1 as P(Poisson(lam) = 0) = e^-lam >= e^-1; t <= 2^32, and
    t = 2^32, never reached by a 32-bit u, stays unreachable as 2^32 - 1): twice the lanes per vector
    compare.  Built once per call and shared by every block and thread (two exponentials per point would
    otherwise be recomputed for every block of lanes)."""
    n = z.shape[0]
    out = np.empty((n, 2 * _POISSON_TERMS), dtype=np.uint32)
    table = np.empty(_POISSON_TERMS, dtype=np.int64)
    for i in range(n):
        for half in range(2):
            _poisson_table(z[i] if half == 0 else 1.0 - z[i], table)
            for k in range(_POISSON_TERMS):
                out[i, half * _POISSON_TERMS + k] = np.uint32(min(table[k] - 1, _MAX_U32))
    return out


@njit(cache=True, inline="always")
def _poisson_count(u, t0, t1, t2, t3, t4, t5):
    """Poisson draw by inversion of the 32-bit uniform integer u against the thresholds t0..t5 of
    :func:`poisson_tables`, capped at _POISSON_TERMS: a branch-free count against scalars (so that the loop
    over lanes vectorises)."""
    return (1 if u > t0 else 0) + (1 if u > t1 else 0) + (1 if u > t2 else 0) + (1 if u > t3 else 0) + \
        (1 if u > t4 else 0) + (1 if u > t5 else 0)


@njit(cache=True)
def _poisson_tail(u, lam):
    """The Poisson(lam) inversion of u beyond the table (u >= the last threshold; for lam <= 1 this happens
    with probability < 0.06 %)."""
    p = np.exp(-lam)
    cdf = 0.0
    for j in range(_POISSON_TERMS):
        cdf += p
        p *= lam / (j + 1)
    cdf += p
    k = _POISSON_TERMS
    while u >= np.int64(cdf * _TWO_32) and p > 0.0:
        k += 1
        p *= lam / k
        cdf += p
    return k


@njit(cache=True)
def consistency_draws(z, tables, seeds, ones, zeros):
    """Per point of the scan order and lane r: (ones[i, r], zeros[i, r]) = how many of the n draws with
    replacement of resample r hit point i with label 1 / 0, y* ~ Ber(z_i) (Bröcker & Smith) — from the
    stream seeds[r] (tables: :func:`poisson_tables` of z), without a random scatter per draw:

    1. Poissonization: with W_i ~ Poisson(1) independent and labels Ber(z_i), the counts of ones and zeros
       are independent Poisson(z_i) and Poisson(1 - z_i); given M = sum W_i the labelled draws are
       multinomial(M; 1/n, ..., 1/n) with independent labels.  Drawn point by point (inversion).
    2. Exact size n: if M < n, add n - M draws (point uniform, label Ber(z_i)); if M > n, remove M - n
       draws uniformly at random without replacement (a point with probability W_i / max W by rejection,
       then one of its draws: a one with probability ones_i / W_i).  Adding independent draws to, or
       removing a uniform random subset from, multinomial draws gives multinomial(n; 1/n, ..., 1/n)
       labelled draws — the resample of the consistency bootstrap exactly.
    """
    n = z.shape[0]
    R = seeds.shape[0]
    states = seeds.copy()
    total = np.zeros(R, dtype=np.int64)
    wmax = np.zeros(R, dtype=np.int64)
    for i in range(n):
        zi = z[i]
        p0, p1, p2, p3, p4, p5 = (tables[i, 0], tables[i, 1], tables[i, 2], tables[i, 3], tables[i, 4],
                                  tables[i, 5])
        q0, q1, q2, q3, q4, q5 = (tables[i, 6], tables[i, 7], tables[i, 8], tables[i, 9], tables[i, 10],
                                  tables[i, 11])
        tail = 0
        for r in range(R):  # branch-free: vectorised across lanes (64-bit multiplies)
            # one 64-bit output gives both uniforms (32 bits each: probabilities exact to 2^-32)
            states[r] = states[r] + _GOLDEN
            x = _mix(states[r])
            a = _poisson_count(np.uint32(x >> np.uint64(32)), p0, p1, p2, p3, p4, p5)
            b = _poisson_count(np.uint32(x & _LOW_32), q0, q1, q2, q3, q4, q5)
            ones[i, r] = a  # every cell of the buffers is written here before it is read
            zeros[i, r] = b
            tail += 1 if (a == _POISSON_TERMS) | (b == _POISSON_TERMS) else 0
            total[r] += a + b
            wmax[r] = max(wmax[r], a + b)
        if tail > 0:  # the rare draws beyond the tables, from the same uniforms
            for r in range(R):
                a0 = ones[i, r]
                b0 = zeros[i, r]
                if a0 == _POISSON_TERMS or b0 == _POISSON_TERMS:
                    x = _mix(states[r])
                    if a0 == _POISSON_TERMS:
                        ones[i, r] = _poisson_tail(np.int64(x >> np.uint64(32)), zi)
                    if b0 == _POISSON_TERMS:
                        zeros[i, r] = _poisson_tail(np.int64(x & _LOW_32), 1.0 - zi)
                    total[r] += ones[i, r] - a0 + zeros[i, r] - b0
                    wmax[r] = max(wmax[r], ones[i, r] + zeros[i, r])
    for r in range(R):
        state = states[r]
        while total[r] < n:
            state, u = _next_uniform(state)
            i = min(int(u * n), n - 1)
            state, u = _next_uniform(state)
            if ones[i, r] + zeros[i, r] >= _MAX_DRAW_COUNT:  # int8 counts, see _MAX_DRAW_COUNT
                raise ValueError("consistency resampling: a point drawn more than 126 times")
            if u < z[i]:
                ones[i, r] += 1
            else:
                zeros[i, r] += 1
            total[r] += 1
        while total[r] > n:
            state, u = _next_uniform(state)
            i = min(int(u * n), n - 1)
            state, u = _next_uniform(state)
            w = ones[i, r] + zeros[i, r]
            if u * wmax[r] >= w:
                continue  # rejected: point i is chosen with probability proportional to its draws
            state, u = _next_uniform(state)
            if u * w < ones[i, r]:
                ones[i, r] -= 1
            else:
                zeros[i, r] -= 1
            total[r] -= 1


@njit(cache=True)
def _consistency_block(split, max_level, z, tables, seeds, out, ones, zeros):
    """Scalar consistency resampling for len(seeds) resamples at once (out: (lanes, max_level)).

    The draws of every lane come from :func:`consistency_draws`; the scan adds, per point, S = ones - w z
    and Q = ones (1 - z)^2 + zeros z^2 (w = ones + zeros).  As in :func:`_y_only_block` the stack walk is
    shared by the lanes: a point a lane did not draw is present with weight 0 (it adds nothing to that
    lane's sums), so every lane sees the same bins and only sums and counts differ per lane.  Counts are
    carried as floats (exact) so that the per-lane loops have no branches: a union holding one copy adds
    exactly 0 (S^2 = Q) and one holding none adds 0 / 1.
    """
    n = z.shape[0]
    R = seeds.shape[0]
    depth = max_level + 2
    consistency_draws(z, tables, seeds, ones, zeros)
    st_h = np.zeros(depth, dtype=np.int64)
    st_p = np.zeros(depth, dtype=np.int64)  # distinct points of the segment (all lanes)
    st_n = np.zeros((depth, R))
    st_s = np.zeros((depth, R))
    st_q = np.zeros((depth, R))
    a_s = np.zeros(R)
    a_q = np.zeros(R)
    a_n = np.zeros(R)
    c = np.zeros(R)
    s_pt = np.zeros(R)
    q_pt = np.zeros(R)
    w_pt = np.zeros(R)
    acc = np.zeros((max_level, R))
    # a union of one point adds its copies' (S^2 - Q)/N to every scale it spans, lo..max_level - 1 (it is
    # always the top segment, the first popped: hi = max_level): added at the start of the span and summed
    # over the scales at the end (1 add per lane instead of one per scale)
    ends = np.zeros((max_level, R))
    top = -1
    gap = max_level + 1
    for i in range(n + 1):
        if i == n:
            if top < 0:
                break
            g = 1
            for r in range(R):
                s_pt[r] = 0.0
                q_pt[r] = 0.0
                w_pt[r] = 0.0
        else:
            if i > 0 and split[i - 1] < gap:
                gap = split[i - 1]
            zi = z[i]
            a1 = (1.0 - zi) * (1.0 - zi)
            a0 = zi * zi
            for r in range(R):
                k1 = float(ones[i, r])
                k0 = float(zeros[i, r])
                s_pt[r] = k1 - (k1 + k0) * zi
                q_pt[r] = k1 * a1 + k0 * a0
                w_pt[r] = k1 + k0
            if top < 0:
                top = 0
                st_h[0] = 0
                st_p[0] = 1
                for r in range(R):
                    st_s[0, r] = s_pt[r]
                    st_q[0, r] = q_pt[r]
                    st_n[0, r] = w_pt[r]
                gap = max_level + 1
                continue
            g = gap
            gap = max_level + 1
            if g > max_level:
                st_p[top] += 1
                for r in range(R):
                    st_s[top, r] += s_pt[r]
                    st_q[top, r] += q_pt[r]
                    st_n[top, r] += w_pt[r]
                continue
        hi = max_level
        k = top
        for r in range(R):  # the union starts as the top segment (no zeroing and adding)
            a_s[r] = st_s[k, r]
            a_q[r] = st_q[k, r]
            a_n[r] = st_n[k, r]
        a_p = st_p[k]
        while True:
            h = st_h[k]
            lo = (h if h > g else g) - 1
            if lo < hi and a_p == 1:
                for r in range(R):
                    c[r] = (a_s[r] * a_s[r] - a_q[r]) / (a_n[r] if a_n[r] > 1.0 else 1.0)
                    ends[lo, r] += c[r]
            elif lo < hi:
                for r in range(R):
                    c[r] = (a_s[r] * a_s[r] - a_q[r]) / (a_n[r] if a_n[r] > 1.0 else 1.0)
                for lev in range(lo, hi):
                    for r in range(R):
                        acc[lev, r] += c[r]
            if h < g:
                break
            hi = h - 1
            k -= 1
            for r in range(R):
                a_s[r] += st_s[k, r]
                a_q[r] += st_q[k, r]
                a_n[r] += st_n[k, r]
            a_p += st_p[k]
        for r in range(R):
            st_s[k, r] = a_s[r]
            st_q[k, r] = a_q[r]
            st_n[k, r] = a_n[r]
        st_p[k] = a_p
        top = k + 1
        st_h[top] = g
        st_p[top] = 1
        for r in range(R):
            st_s[top, r] = s_pt[r]
            st_q[top, r] = q_pt[r]
            st_n[top, r] = w_pt[r]
    run = np.zeros(R)
    for lev in range(max_level):
        for r in range(R):
            run[r] += ends[lev, r]
            acc[lev, r] += run[r]
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
def _resample_block(split, max_level, z, z1, kind, source, base_seed, start, stop, out, offset, tables, ones,
                    zeros):
    """Resamples start..stop-1 into out[start - offset:stop - offset]; resample r uses the stream
    stream_seed(base_seed, r).  Scalar targets: one :func:`_y_only_block` / :func:`_consistency_block`
    pass for the whole block (tables, ones, zeros: that one's Poisson tables and draw buffers); full
    calibration, and scalar consistency resampling beyond MIN_CONSISTENCY_LANES: one scan per resample."""
    n = z.shape[0]
    if kind == SCALAR and (source == Y_ONLY or _batched_consistency(n)):
        seeds = np.empty(stop - start, dtype=np.uint64)
        for r in range(start, stop):
            seeds[r - start] = stream_seed(base_seed, r)
        rows = np.zeros((stop - start, max_level))
        if source == Y_ONLY:
            _y_only_block(split, max_level, z1, seeds, rows)
        else:
            _consistency_block(split, max_level, z1, tables, seeds, rows, ones, zeros)
        for r in range(start, stop):
            for lev in range(max_level):
                out[r - offset, lev] = rows[r - start, lev]
        return
    no_labels = np.zeros(0, np.int64)
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
            _scan_scalar(split, max_level, z1, np.zeros(0), source, weights, seed, row)
        else:
            _scan_vector(split, max_level, z, no_labels, source, weights, seed, row)
        for lev in range(max_level):
            out[r - offset, lev] = row[lev]


#: fewest lanes for which scalar consistency resampling runs batched: below it (n > 2^18) the per-point
#: Poisson tables and short lane loops cost more than the shared stack walk saves, and resamples run one at
#: a time (multinomial weights scattered per resample, :func:`_scan_scalar`)
MIN_CONSISTENCY_LANES = 16


@njit(cache=True)
def _batched_consistency(n):
    return CONSISTENCY_WEIGHT_CELLS // max(n, 1) >= MIN_CONSISTENCY_LANES


@njit(cache=True)
def _block_tables(z1, kind, source):
    """The Poisson tables of batched scalar consistency resampling (empty otherwise)."""
    if kind == SCALAR and source == CONSISTENCY and _batched_consistency(z1.shape[0]):
        return poisson_tables(z1)
    return np.zeros((0, 2 * _POISSON_TERMS), dtype=np.uint32)


@njit(cache=True)
def block_lanes(n, kind, source):
    """Resamples per block: LANES, fewer for batched scalar consistency resampling (their per-lane draw
    counts, 2 x n x lanes int8, stay within CONSISTENCY_WEIGHT_CELLS cells per table)."""
    if kind == SCALAR and source == CONSISTENCY and _batched_consistency(n):
        return max(1, min(LANES, CONSISTENCY_WEIGHT_CELLS // max(n, 1)))
    return LANES


@njit(cache=True)
def _run_blocks(split, max_level, z, z1, kind, source, base_seed, start, n_resamples, out, worker, workers,
                tables):
    """Blocks worker, worker + workers, ... of the resamples start..start+n_resamples-1 into out.  The
    draw buffers of scalar consistency resampling are allocated once per worker (fresh pages cost a page
    fault per 4 kB on first touch, as much as the draws themselves)."""
    lanes = block_lanes(z.shape[0], kind, source)
    n_blocks = (n_resamples + lanes - 1) // lanes
    buffered = kind == SCALAR and source == CONSISTENCY and _batched_consistency(z.shape[0])
    cells = z.shape[0] if buffered else 0
    ones = np.empty((cells, lanes if buffered else 0), dtype=np.int8)
    zeros = np.empty((cells, lanes if buffered else 0), dtype=np.int8)
    for blk in range(worker, n_blocks, workers):
        _resample_block(split, max_level, z, z1, kind, source, base_seed, start + blk * lanes,
                        start + min((blk + 1) * lanes, n_resamples), out, start, tables, ones, zeros)


@njit(cache=True, parallel=True)
def resampled_statistics(split, max_level, z, kind, source, base_seed, n_resamples, start=0, workers=2):
    """(n_resamples, max_level) resampled T^d (source Y_ONLY or CONSISTENCY) of the resamples
    start..start+n_resamples-1, blocks of :func:`block_lanes` resamples spread over ``workers`` parallel
    tasks (pass numba.get_num_threads()).
    Resample r uses its own stream stream_seed(base_seed, r), so the output depends neither on the number
    of threads (nor on using :func:`resampled_statistics_serial`) nor on how a run of resamples is cut
    into calls: the rows of (300 resamples from 0) are those of (100 from 0) followed by (200 from 100).
    Memory: per running thread O(n) (O(n x lanes) int8 draw counts for scalar consistency resampling,
    see CONSISTENCY_WEIGHT_CELLS), never resamples x n."""
    out = np.zeros((n_resamples, max_level))
    z1 = z[:, 0].copy() if kind == SCALAR else np.zeros(0)
    tables = _block_tables(z1, kind, source)
    lanes = block_lanes(z.shape[0], kind, source)
    workers = max(1, min(workers, (n_resamples + lanes - 1) // lanes))
    for worker in prange(workers):
        _run_blocks(split, max_level, z, z1, kind, source, base_seed, start, n_resamples, out, worker,
                    workers, tables)
    return out


@njit(cache=True)
def resampled_statistics_serial(split, max_level, z, kind, source, base_seed, n_resamples, start=0):
    """:func:`resampled_statistics` on the calling thread (identical output): for small jobs, where
    waking the thread pool costs more than the work."""
    out = np.zeros((n_resamples, max_level))
    z1 = z[:, 0].copy() if kind == SCALAR else np.zeros(0)
    _run_blocks(split, max_level, z, z1, kind, source, base_seed, start, n_resamples, out, 0, 1,
                _block_tables(z1, kind, source))
    return out


# ------------------------------------------------------------------------------------------------
# analytic critical values: T^d and the null moments from compensated per-bin sums
# ------------------------------------------------------------------------------------------------
# Both the in-memory scan (:func:`analytic_terms`) and the mergeable per-bin tables of calviz.dask
# (:class:`calviz.tcal.MomentSums`, via :func:`bin_features` / :func:`group_features` /
# :func:`merge_features` / :func:`features_terms`) use the same three pieces, so that the two paths hand
# the same numbers to the p-value formula:
#
# * per point, :func:`_point_features` — one row of "features" whose per-bin sums are all that T^d and
#   the moments need;
# * per bin, the features are summed in double-double (TwoSum, value = hi + lo): the rounded sum is the
#   correctly rounded exact sum except in rare near-ties, whatever the order in which points, segments
#   and partitions were added; then :func:`_bin_terms` turns the rounded sums into the bin's terms;
# * per scale, the bins' terms are again summed in double-double.
#
# Plain float sums in different orders agree only to ~1e-15 relative, and the tail p-value amplifies
# that by |d ln p / d ln x| (≈ 2|ln p| in the normal regime: ~1e3 at p = 1e-300).

#: rows of :func:`analytic_terms`: T^d, Var0(T^d | Z), sum tr A_b, sum tr A_b^2, third cumulant
N_TERMS = 5


@njit(cache=True, inline="always")
def n_features(kind, K):
    """Columns of a feature row: SCALAR [S, Q, C, D, P3, M1, M2]; VECTOR [S (K), Q, C (K x K), D]."""
    return 7 if kind == SCALAR else K + 2 + K * K


@njit(cache=True, inline="always")
def _two_sum(a, b):
    """(fl(a + b), exact error): a + b = s + e exactly (Knuth)."""
    s = a + b
    bp = s - a
    return s, (a - (s - bp)) + (b - bp)


@njit(cache=True, inline="always")
def _point_features(z, y, i, kind, out):
    """Feature row of point i (z (n, k) in any order; y float labels: SCALAR 0/1, VECTOR class ids;
    y empty: no labels, residual features 0).  With v = y - z and Sigma(z) = diag(z) - z z^T:

    SCALAR: v, v^2, s, s^2, s^3, mu3, mu3^2 with s = z(1 - z), mu3 = E[(y - z)^3 | z] = s(1 - 2z);
    VECTOR: v (K), ||v||^2, Sigma (K x K, row-major), tr Sigma^2.

    The variances are evaluated as z (1 - z) (1 - z is exact for z >= 1/2), not z - z^2, which loses
    all digits for z near 1 (overconfident predictions)."""
    has_y = y.shape[0] > 0
    if kind == SCALAR:
        zi = z[i, 0]
        v = (y[i] - zi) if has_y else 0.0
        s = zi * (1.0 - zi)
        mu3 = s * (1.0 - 2.0 * zi)
        out[0] = v
        out[1] = v * v
        out[2] = s
        out[3] = s * s
        out[4] = s * s * s
        out[5] = mu3
        out[6] = mu3 * mu3
        return
    K = z.shape[1]
    c = int(y[i]) if has_y else -1
    q = 0.0
    for a in range(K):
        v = ((1.0 if a == c else 0.0) - z[i, a]) if has_y else 0.0
        out[a] = v
        q += v * v
    out[K] = q
    d2 = 0.0
    for a in range(K):
        za = z[i, a]
        for b in range(K):
            sab = za * (1.0 - za) if a == b else -(za * z[i, b])
            out[K + 1 + a * K + b] = sab
            d2 += sab * sab
    out[K + 1 + K * K] = d2


@njit(cache=True, inline="always")
def _bin_terms(f, count, n, kind, K, out):
    """The terms of one bin with N_b = count >= 2 from its (rounded) feature sums f:

    out[0] = (||S_b||^2 - Q_b) / N_b                 (T^d = sum_b out[0] / n)
    out[1] = 2 (||C_b||_F^2 - D_b) / (n N_b)^2        Var0(T^d | Z) (exact, w_b = 1/N_b)
    out[2] = tr C_b / (n N_b),  out[3] = ||C_b||_F^2 / (n N_b)^2   (tr A_b, tr A_b^2, A_b = C_b / (n N_b))
    out[4] (SCALAR; else 0) = E[W_b^3] / (n N_b)^3, the bin's part of the exact third cumulant of T^d
           given Z, W_b = sum_{j != l in b} v_j v_l:
           E[W_b^3] = 8 [sum_{j<l} mu3_j mu3_l + 6 sum_{j<l<k} s_j s_l s_k]
                    = 8 [(M1^2 - M2)/2 + C^3 - 3 C D + 2 P3]
           (only a pair repeated three times and triangles of distinct points have nonzero mean).
    ||C_b||_F^2 - D_b = sum_{j != l} tr(Sigma_j Sigma_l) >= 0; round-off below 0 is clipped."""
    wn = float(n) * count
    if kind == SCALAR:
        S = f[0]
        out[0] = (S * S - f[1]) / count
        C = f[2]
        D = f[3]
        cc = C * C
        trc = C
        out[4] = 8.0 * (0.5 * (f[5] * f[5] - f[6]) + C * C * C - 3.0 * C * D + 2.0 * f[4]) / (wn * wn * wn)
    else:
        ss = 0.0
        for a in range(K):
            ss += f[a] * f[a]
        out[0] = (ss - f[K]) / count
        cc = 0.0
        trc = 0.0
        for a in range(K):
            trc += f[K + 1 + a * K + a]
            for b in range(K):
                x = f[K + 1 + a * K + b]
                cc += x * x
        D = f[K + 1 + K * K]
        out[4] = 0.0
    cross = cc - D
    if cross < 0.0:
        cross = 0.0
    out[1] = 2.0 * cross / (wn * wn)
    out[2] = trc / wn
    out[3] = cc / (wn * wn)


@njit(cache=True)
def finish_terms(hi, lo, n):
    """Per-scale totals (N_TERMS, ...) from double-double sums of :func:`_bin_terms`: hi + lo, row 0 / n."""
    out = hi + lo
    out[0] = out[0] / n
    return out


@njit(cache=True, nogil=True)
def analytic_terms(split, max_level, z, y, kind):
    """(N_TERMS, max_level): per scale 2^1..2^max_level, over the bins with N_b >= 2, T^d and the null
    moments of :func:`_bin_terms` — one stack scan (as :func:`_scan_scalar`) with double-double segment
    sums, z in scan order ((n, 1) for SCALAR), y float labels (SCALAR 0/1, VECTOR class ids) or empty
    (row 0 is then 0)."""
    out_hi, out_lo, _, _, _, _, _, _ = scan_terms(split, max_level, z, y, kind, z.shape[0], False)
    return finish_terms(out_hi, out_lo, z.shape[0])


@njit(cache=True)
def scan_terms(split, max_level, z, y, kind, n_total, edges):
    """The scan of :func:`analytic_terms` for a run of a larger sample of size ``n_total``: double-double
    per-scale totals (out_hi, out_lo) of the bins' terms, and — with ``edges`` (a sorted partition of the
    distributed scan, whose first and last bins may continue in the neighbouring partitions) — the first
    and last bin of every scale are left out of the totals and returned as feature sums instead:
    (first_n, first_hi, first_lo, last_n, last_hi, last_lo), one row per scale (last_n = 0 when the scale
    has a single bin in the run)."""
    n = z.shape[0]
    K = z.shape[1]
    d = n_features(kind, K)
    depth = max_level + 2
    st_h = np.zeros(depth, dtype=np.int64)
    st_hi = np.zeros((depth, d))
    st_lo = np.zeros((depth, d))
    st_n = np.zeros(depth, dtype=np.int64)
    pt = np.zeros(d)
    acc_hi = np.zeros(d)
    acc_lo = np.zeros(d)
    f = np.zeros(d)
    terms = np.zeros(N_TERMS)
    out_hi = np.zeros((N_TERMS, max_level))
    out_lo = np.zeros((N_TERMS, max_level))
    n_edge = max_level if edges else 0
    first_n = np.zeros(n_edge, dtype=np.int64)
    first_hi = np.zeros((n_edge, d))
    first_lo = np.zeros((n_edge, d))
    last_n = np.zeros(n_edge, dtype=np.int64)
    last_hi = np.zeros((n_edge, d))
    last_lo = np.zeros((n_edge, d))
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
            _point_features(z, y, i, kind, pt)
            if top < 0:
                top = 0
                st_h[0] = 0
                for a in range(d):
                    st_hi[0, a] = pt[a]
                    st_lo[0, a] = 0.0
                st_n[0] = w
                gap = max_level + 1
                continue
            g = gap
            gap = max_level + 1
            if g > max_level:
                for a in range(d):
                    s, e = _two_sum(st_hi[top, a], pt[a])
                    st_hi[top, a] = s
                    st_lo[top, a] += e
                st_n[top] += w
                continue
        for a in range(d):
            acc_hi[a] = 0.0
            acc_lo[a] = 0.0
        a_n = 0
        hi = max_level
        kk = top
        while True:
            for a in range(d):
                s, e = _two_sum(acc_hi[a], st_hi[kk, a])
                acc_hi[a] = s
                acc_lo[a] += st_lo[kk, a] + e
            a_n += st_n[kk]
            h = st_h[kk]
            lo_lev = (h if h > g else g) - 1
            if lo_lev < hi and (a_n >= 2 or edges):
                # the union is the bin ending here at the scales lo_lev + 1 .. hi
                if a_n >= 2:
                    for a in range(d):
                        f[a] = acc_hi[a] + acc_lo[a]
                    _bin_terms(f, a_n, n_total, kind, K, terms)
                for lev in range(lo_lev, hi):
                    if edges and first_n[lev] == 0:  # the first bin of this scale in the run
                        first_n[lev] = a_n
                        for a in range(d):
                            first_hi[lev, a] = acc_hi[a]
                            first_lo[lev, a] = acc_lo[a]
                    elif edges and i == n:  # the last bin
                        last_n[lev] = a_n
                        for a in range(d):
                            last_hi[lev, a] = acc_hi[a]
                            last_lo[lev, a] = acc_lo[a]
                    elif a_n >= 2:
                        for j in range(N_TERMS):
                            s, e = _two_sum(out_hi[j, lev], terms[j])
                            out_hi[j, lev] = s
                            out_lo[j, lev] += e
            if h < g:
                break
            hi = h - 1
            kk -= 1
        for a in range(d):
            st_hi[kk, a] = acc_hi[a]
            st_lo[kk, a] = acc_lo[a]
        st_n[kk] = a_n
        top = kk + 1
        st_h[top] = g
        for a in range(d):
            st_hi[top, a] = pt[a]
            st_lo[top, a] = 0.0
        st_n[top] = w
    return out_hi, out_lo, first_n, first_hi, first_lo, last_n, last_hi, last_lo


@njit(cache=True)
def null_moments(split, max_level, z, kind):
    """(4, max_level): rows 1..4 of :func:`analytic_terms` (no labels) — per scale Var0(T^d | Z),
    sum_b tr A_b, sum_b tr A_b^2 and (SCALAR only, else 0) the exact third cumulant of T^d given Z."""
    return analytic_terms(split, max_level, z, np.zeros(0), kind)[1:].copy()


@njit(cache=True)
def bin_features(ids, n_bins, z, y, kind):
    """(count, hi, lo) per dense bin id in [0, n_bins): double-double sums of :func:`_point_features`
    (z (n, k), y float labels as in :func:`analytic_terms`), points added in the given order."""
    n = z.shape[0]
    d = n_features(kind, z.shape[1])
    count = np.zeros(n_bins, dtype=np.int64)
    hi = np.zeros((n_bins, d))
    lo = np.zeros((n_bins, d))
    pt = np.zeros(d)
    for i in range(n):
        b = ids[i]
        _point_features(z, y, i, kind, pt)
        count[b] += 1
        for a in range(d):
            s, e = _two_sum(hi[b, a], pt[a])
            hi[b, a] = s
            lo[b, a] += e
    return count, hi, lo


@njit(cache=True)
def group_features(keys, count, hi, lo, shift):
    """Merge the rows whose ``keys >> shift`` are equal (``keys`` nondecreasing) — the nested coarser bins:
    (parent keys, count, hi, lo), rows added left to right in double-double.  When no two rows merge the
    input arrays are returned with the shifted keys (no copy)."""
    B, d = hi.shape
    m = 0
    for i in range(B):
        if i == 0 or (keys[i] >> shift) != (keys[i - 1] >> shift):
            m += 1
    if m == B:
        return keys >> shift, count, hi, lo
    out_keys = np.empty(m, dtype=np.int64)
    out_n = np.empty(m, dtype=np.int64)
    out_hi = np.empty((m, d))
    out_lo = np.empty((m, d))
    r = -1
    for i in range(B):
        k = keys[i] >> shift
        if r < 0 or k != out_keys[r]:
            r += 1
            out_keys[r] = k
            out_n[r] = count[i]
            for a in range(d):
                out_hi[r, a] = hi[i, a]
                out_lo[r, a] = lo[i, a]
        else:
            out_n[r] += count[i]
            for a in range(d):
                s, e = _two_sum(out_hi[r, a], hi[i, a])
                out_hi[r, a] = s
                out_lo[r, a] += lo[i, a] + e
    return out_keys, out_n, out_hi, out_lo


@njit(cache=True)
def merge_features(ka, na, ha, la, kb, nb, hb, lb):
    """Union of two feature tables with sorted unique keys (rows of equal keys added in double-double)."""
    A = ka.shape[0]
    Bn = kb.shape[0]
    d = ha.shape[1] if A > 0 else hb.shape[1]
    m = 0
    i = 0
    j = 0
    while i < A or j < Bn:  # count the union first: outputs are allocated once, at their size
        if j >= Bn or (i < A and ka[i] < kb[j]):
            i += 1
        elif i >= A or kb[j] < ka[i]:
            j += 1
        else:
            i += 1
            j += 1
        m += 1
    keys = np.empty(m, dtype=np.int64)
    cnt = np.empty(m, dtype=np.int64)
    hi = np.empty((m, d))
    lo = np.empty((m, d))
    i = 0
    j = 0
    for r in range(m):
        if j >= Bn or (i < A and ka[i] < kb[j]):  # a row of one table only: copied
            keys[r], cnt[r], hi[r], lo[r] = ka[i], na[i], ha[i], la[i]
            i += 1
        elif i >= A or kb[j] < ka[i]:
            keys[r], cnt[r], hi[r], lo[r] = kb[j], nb[j], hb[j], lb[j]
            j += 1
        else:
            keys[r] = ka[i]
            cnt[r] = na[i] + nb[j]
            for a in range(d):
                s, e = _two_sum(ha[i, a], hb[j, a])
                hi[r, a] = s
                lo[r, a] = la[i, a] + lb[j, a] + e
            i += 1
            j += 1
    return keys, cnt, hi, lo


@njit(cache=True)
def features_terms(count, hi, lo, n, kind, K, start, stop):
    """Double-double (hi, lo) totals (N_TERMS,) of :func:`_bin_terms` over the rows start..stop-1 of a
    feature table with N_b >= 2, in row order (finish with :func:`finish_terms`)."""
    d = hi.shape[1]
    f = np.zeros(d)
    terms = np.zeros(N_TERMS)
    t_hi = np.zeros(N_TERMS)
    t_lo = np.zeros(N_TERMS)
    for r in range(start, stop):
        if count[r] < 2:
            continue
        for a in range(d):
            f[a] = hi[r, a] + lo[r, a]
        _bin_terms(f, count[r], n, kind, K, terms)
        for j in range(N_TERMS):
            s, e = _two_sum(t_hi[j], terms[j])
            t_hi[j] = s
            t_lo[j] += e
    return t_hi, t_lo


@njit(cache=True)
def add_terms(a_hi, a_lo, b_hi, b_lo):
    """Sum of two double-double term vectors."""
    hi = np.empty_like(a_hi)
    lo = np.empty_like(a_lo)
    for j in range(a_hi.shape[0]):
        s, e = _two_sum(a_hi[j], b_hi[j])
        hi[j] = s
        lo[j] = a_lo[j] + b_lo[j] + e
    return hi, lo


@njit(cache=True, inline="always")
def _bernoulli_proxy(p):
    """Kearns–Saul sub-Gaussian variance proxy of a Bernoulli(p) indicator: the least s² with
    E exp(a(X − p)) ≤ exp(a² s²/2) for all real a, i.e. (1 − 2p)/(2 ln((1 − p)/p)); 1/4 (its maximum,
    Hoeffding's constant) near p = 1/2, where the formula is 0/0, and 0 at p ∈ {0, 1}."""
    if p <= 0.0 or p >= 1.0:
        return 0.0
    if abs(p - 0.5) < 1e-4:
        return 0.25
    return (1.0 - 2.0 * p) / (2.0 * np.log((1.0 - p) / p))


@njit(cache=True, parallel=True)
def y_only_log_mgf_bounds(split, level, z, thetas):
    """Upper bounds of log E exp(θ n T*) for each θ in ``thetas`` (all in (0, 2)), T* the statistic at
    scale 2^level under y-only resampling (y*_i ~ Ber(z_i) independent), z sorted (1-D targets).

    n T* = Σ_k (S_k² − Q_k)/n_k over the bins with n_k ≥ 2 (S_k, Q_k: sum and sum of squares of the
    residuals e_i = y*_i − z_i of bin k; a bin of one point contributes exactly 0).  With λ = θ/n_k and
    g ~ N(0, 1), E exp(λS²) = E_g exp(√(2λ) g S), so E exp(λ(S² − Q)) = E_g Π_i φ_i(√(2λ) g) with
    φ_i(a) = E exp(a e_i − λ e_i²) = z e^{a(1−z) − λ(1−z)²} + (1 − z) e^{−az − λz²}.  φ_i(a)/φ_i(0) is the
    moment generating function of e = X − z, X ~ Ber(p'), p' = z e^{−λ(1−z)²}/φ_i(0), so by Kearns and
    Saul (1998) log φ_i(a) ≤ c_i + a μ_i + a² s_i²/2 with c_i = log φ_i(0), μ_i = p' − z and s_i² their
    Bernoulli proxy (≤ 1/4).  Summing over the bin (C, D, V) and integrating over g:
    log E exp(λ(S_k² − Q_k)) ≤ C + λD²/(1 − 2λV) − ½ log(1 − 2λV), finite because 2λV ≤ θ/2 < 1.  Bins
    are independent, so the bin bounds add (:func:`y_only_log_mgf_run`, :func:`log_mgf_bin_bound`).
    """
    out = np.zeros(thetas.shape[0])
    for j in prange(thetas.shape[0]):  # one θ per thread: the sums do not depend on the thread count
        out[j] = y_only_log_mgf_run(split, level, z, thetas[j], 0, 0, np.zeros((0, 3)))
    return out


@njit(cache=True)
def y_only_log_mgf_run(split, level, z, theta, first_size, last_size, edge):
    """Σ of the bin bounds of :func:`y_only_log_mgf_bounds` for one θ over the bins of ≥ 2 points of a
    sorted run z at scale 2^level, bin by bin in sorted order.

    ``edge`` of shape (0, 3): the run is the whole sample.  Shape (2, 3) (a sorted partition of a larger
    sample, see :mod:`calviz._kernels.dask_scan`): the run's first and last bin may continue in the
    neighbouring partitions, so instead of their bounds their sums (C, D, V) go to edge[0] and edge[1],
    with λ = θ/first_size and θ/last_size, their sizes in the whole sample (edge[1] stays untouched when
    the first bin is also the last); :func:`log_mgf_bin_bound` bounds the merged sums."""
    n = z.shape[0]
    edges = edge.shape[0] > 0
    total = 0.0
    start = 0
    for i in range(1, n + 1):
        if i < n and split[i - 1] > level:
            continue  # i is in the bin of i − 1 at this scale
        count = i - start
        if edges and (start == 0 or i == n):
            row = 0 if start == 0 else 1
            c, d, v = _log_mgf_sums(z, start, i, theta / (first_size if start == 0 else last_size))
            edge[row, 0] = c
            edge[row, 1] = d
            edge[row, 2] = v
        elif count >= 2:
            lam = theta / count
            c, d, v = _log_mgf_sums(z, start, i, lam)
            total += log_mgf_bin_bound(c, d, v, lam)
        start = i
    return total


@njit(cache=True, inline="always")
def _log_mgf_sums(z, start, stop, lam):
    """(C, D, V) of the points start..stop−1 for λ (see :func:`y_only_log_mgf_bounds`): the sums of
    c_i = log φ_i(0), μ_i and s_i², additive over the pieces of a bin."""
    c = 0.0
    d = 0.0
    v = 0.0
    for t in range(start, stop):
        zt = z[t]
        hit = zt * np.exp(-lam * (1.0 - zt) * (1.0 - zt))
        miss = (1.0 - zt) * np.exp(-lam * zt * zt)
        phi = hit + miss
        p = hit / phi
        c += np.log(phi)
        d += p - zt
        v += _bernoulli_proxy(p)
    return c, d, v


@njit(cache=True)
def log_mgf_bin_bound(c, d, v, lam):
    """The bound C + λD²/(1 − 2λV) − ½ log(1 − 2λV) of log E exp(λ(S² − Q)) of one bin from its sums
    (scalars, or arrays elementwise)."""
    return c + lam * d * d / (1.0 - 2.0 * lam * v) - 0.5 * np.log(1.0 - 2.0 * lam * v)
