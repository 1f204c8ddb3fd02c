"""Jitted kernels of the presorted scalar view (:mod:`calviz._presorted`): plain arrays in, no validation.

A scalar view (z, y) — predictions in [0, 1] and 0/1 labels — is sorted once by z (ties by y).  Every
1-D binning of calviz (equal width, equal mass, distinct values, the dyadic scales of T-Cal) is
monotone in z, so each bin is a contiguous run [start, stop) of the sorted view, found by binary search.
The sums of the per-point features over a run come from double-double prefix sums kept at every
``block``-th position plus at most two partial blocks summed on the fly: O(block) per bin, independent
of n, and — being double-double — the bin sums are the exactly rounded sums of the features (to
~2⁻¹⁰⁶ of the prefix), whatever the order of the points.

Features of a point (the T-Cal features of :func:`calviz._kernels.tcal._point_features`, then z and y):
v, v², s, s², s³, μ₃, μ₃², z, y with v = y − z, s = z(1 − z), μ₃ = s(1 − 2z).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from calviz._kernels.binning import equal_width_bin_exact
from calviz._kernels.sorting import radix_sort_keys

#: columns of a feature row
N_FEATURES = 9
#: column of Σz and of Σy in a feature row (the first 7 are the T-Cal features)
Z_SUM = 7
Y_SUM = 8
_SIGN_OFF = 0x7FFFFFFFFFFFFFFF


@njit(cache=True, inline="always")
def _two_sum(a, b):
    """(fl(a + b), exact error): a + b = s + e exactly (Knuth)."""
    s = a + b
    bp = s - a
    return s, (a - (s - bp)) + (b - bp)


@njit(cache=True, inline="always")
def _features(z, y, i, out):
    zi = z[i]
    v = y[i] - zi
    s = zi * (1.0 - zi)
    mu3 = s * (1.0 - 2.0 * zi)
    out[0] = v
    out[1] = v * v
    out[2] = s
    out[3] = s * s
    out[4] = s * s * s
    out[5] = mu3
    out[6] = mu3 * mu3
    out[7] = zi
    out[8] = y[i]


@njit(cache=True)
def _keys_to_view(keys):
    """Sorted keys (bits of z) << 1 | y → (z float64, y uint8); z is written over the keys' memory."""
    n = keys.shape[0]
    y = np.empty(n, dtype=np.uint8)
    for i in range(n):
        k = keys[i]
        y[i] = k & 1
        keys[i] = k >> 1
    return keys.view(np.float64), y


@njit(cache=True)
def sort_scalar(z, y, label):
    """(z sorted, y uint8 in the same order) of a scalar view, ties ordered by y: one radix sort of the
    64-bit keys (bits of z) << 1 | y (a non-negative double orders like its bit pattern; −0.0 becomes
    +0.0, which equals it).  ``label < 0``: y holds 0/1 labels (any numeric dtype); ``label ≥ 0``: y holds
    class ids and the label is 1{y = label}."""
    n = z.shape[0]
    keys = np.empty(n, dtype=np.int64)
    buf = np.empty(1, dtype=np.float64)
    bits = buf.view(np.int64)
    for i in range(n):
        buf[0] = z[i]
        yi = (1 if y[i] == label else 0) if label >= 0 else (1 if y[i] != 0 else 0)
        keys[i] = ((bits[0] & _SIGN_OFF) << 1) | yi
    return _keys_to_view(radix_sort_keys(keys))


@njit(cache=True)
def sort_top1(probs, labels):
    """:func:`sort_scalar` of the top-1 view of an (n, K) matrix — the row maximum (the first one among
    ties, as ``argmax``) and 1{its index = label} — without materialising the view."""
    n, k = probs.shape
    keys = np.empty(n, dtype=np.int64)
    buf = np.empty(1, dtype=np.float64)
    bits = buf.view(np.int64)
    for i in range(n):
        best = probs[i, 0]
        index = 0
        for j in range(1, k):
            if probs[i, j] > best:
                best = probs[i, j]
                index = j
        buf[0] = best
        keys[i] = ((bits[0] & _SIGN_OFF) << 1) | (1 if index == labels[i] else 0)
    return _keys_to_view(radix_sort_keys(keys))


@njit(cache=True)
def block_prefix(z, y, block):
    """Double-double prefix sums (hi, lo) of the features at the positions 0, block, 2 block, ...:
    row r = the sums over the points [0, r·block), shape (⌊n/block⌋ + 1, N_FEATURES)."""
    n = z.shape[0]
    rows = n // block + 1
    hi = np.zeros((rows, N_FEATURES))
    lo = np.zeros((rows, N_FEATURES))
    f = np.empty(N_FEATURES)
    acc_hi = np.zeros(N_FEATURES)
    acc_lo = np.zeros(N_FEATURES)
    for r in range(1, rows):
        for i in range((r - 1) * block, r * block):
            _features(z, y, i, f)
            for a in range(N_FEATURES):
                s, e = _two_sum(acc_hi[a], f[a])
                acc_hi[a] = s
                acc_lo[a] += e
        for a in range(N_FEATURES):
            # renormalised, so that every row is a canonical double-double
            s, e = _two_sum(acc_hi[a], acc_lo[a])
            hi[r, a] = s
            lo[r, a] = e
            acc_hi[a] = s
            acc_lo[a] = e
    return hi, lo


@njit(cache=True, inline="always")
def lower_bound(z, x, lo, hi):
    """The first position in [lo, hi) of sorted z whose value is ≥ x (hi if none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if z[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def equal_width_runs(z, m):
    """(keys, starts) of the non-empty equal-width bins of sorted z (m bins [i/m, (i+1)/m), the last
    closed, the rule of :func:`calviz._kernels.binning.equal_width_bin_exact`): bin keys[j] holds the
    points starts[j]..starts[j+1]−1.  O(B log n) for B non-empty bins: from the first point of a bin its
    end is the first point ≥ the bin's upper edge (b + 1)/m."""
    n = z.shape[0]
    keys = []
    starts = [0]
    pos = 0
    while pos < n:
        b = equal_width_bin_exact(z[pos], m)
        keys.append(b)
        pos = n if b >= m - 1 else lower_bound(z, (b + 1) / m, pos + 1, n)
        starts.append(pos)
    return np.array(keys, dtype=np.int64), np.array(starts, dtype=np.int64)


@njit(cache=True)
def edge_runs(z, inner_edges):
    """(keys, starts) of the non-empty bins [e_i, e_{i+1}) cut at the sorted ``inner_edges`` (outer edges
    0 and 1, the last bin closed): the bin of a value is the number of inner edges ≤ it."""
    n = z.shape[0]
    m = inner_edges.shape[0]
    keys = []
    starts = [0]
    pos = 0
    for b in range(m + 1):
        stop = n if b == m else lower_bound(z, inner_edges[b], pos, n)
        if stop > pos:
            keys.append(b)
            starts.append(stop)
            pos = stop
    return np.array(keys, dtype=np.int64), np.array(starts, dtype=np.int64)


@njit(cache=True)
def distinct_runs(z):
    """(keys, starts) of the runs of equal values of sorted z: key j is the j-th distinct value."""
    n = z.shape[0]
    starts = [0]
    for i in range(1, n):
        if z[i] != z[i - 1]:
            starts.append(i)
    if n > 0:
        starts.append(n)
    s = np.array(starts, dtype=np.int64)
    return np.arange(s.shape[0] - 1, dtype=np.int64), s


@njit(cache=True, inline="always")
def _add_points(z, y, start, stop, f, acc_hi, acc_lo, sign):
    for i in range(start, stop):
        _features(z, y, i, f)
        for a in range(N_FEATURES):
            s, e = _two_sum(acc_hi[a], sign * f[a])
            acc_hi[a] = s
            acc_lo[a] += e


@njit(cache=True)
def run_sums(z, y, pre_hi, pre_lo, block, starts):
    """(count, hi, lo) of the runs [starts[j], starts[j+1]): double-double feature sums (B, N_FEATURES).
    A short run is summed point by point; a long one as the difference of the block prefix sums at the
    block boundaries inside it plus its partial first and last blocks (at most 2·block points)."""
    B = starts.shape[0] - 1
    count = np.empty(B, dtype=np.int64)
    hi = np.empty((B, N_FEATURES))
    lo = np.empty((B, N_FEATURES))
    f = np.empty(N_FEATURES)
    acc_hi = np.empty(N_FEATURES)
    acc_lo = np.empty(N_FEATURES)
    for j in range(B):
        a = starts[j]
        c = starts[j + 1]
        count[j] = c - a
        acc_hi[:] = 0.0
        acc_lo[:] = 0.0
        first = (a + block - 1) // block  # first block boundary ≥ a
        last = c // block  # last block boundary ≤ c
        if c - a <= 2 * block or first >= last:
            _add_points(z, y, a, c, f, acc_hi, acc_lo, 1.0)
        else:
            for k in range(N_FEATURES):
                s, e = _two_sum(pre_hi[last, k], -pre_hi[first, k])
                acc_hi[k] = s
                acc_lo[k] = e + (pre_lo[last, k] - pre_lo[first, k])
            _add_points(z, y, a, first * block, f, acc_hi, acc_lo, 1.0)
            _add_points(z, y, last * block, c, f, acc_hi, acc_lo, 1.0)
        for k in range(N_FEATURES):
            s, e = _two_sum(acc_hi[k], acc_lo[k])
            hi[j, k] = s
            lo[j, k] = e
    return count, hi, lo


@njit(cache=True)
def bootstrap_unbiased_table(atom, n_atoms, starts, offsets, v, n_resamples, seed):
    """Percentile-bootstrap replicates of Sun et al.'s statistic T for several binnings of the same rows at
    once: ``out[i, r]`` is :func:`calviz._kernels.ece.bootstrap_unbiased_kernel`'s replicate r for the
    binning i (the same seed draws the same rows whatever the bins).

    The rows are grouped into *atoms*, numbered in increasing order of the prediction — rows in the same bin
    under every binning (``atom``: each row's atom) — and each draw is accumulated into its atom; binning
    i's bins are runs of atoms, bin b holding atoms ``starts[offsets[i] + b]`` up to
    ``starts[offsets[i] + b + 1]`` (excluded), whose sums are differences of the atoms' prefix sums.
    O(n) per resample for the draws plus O(atoms + Σ bins) for the binnings."""
    np.random.seed(seed)
    n = v.shape[0]
    n_binnings = offsets.shape[0] - 1
    vsq = np.empty(n)
    for i in range(n):
        vsq[i] = v[i] * v[i]
    out = np.empty((n_binnings, n_resamples))
    a_count = np.zeros(n_atoms + 1, dtype=np.int64)
    a_sum = np.zeros(n_atoms + 1)
    a_sq = np.zeros(n_atoms + 1)
    for r in range(n_resamples):
        a_count[:] = 0
        a_sum[:] = 0.0
        a_sq[:] = 0.0
        for _t in range(n):
            j = np.random.randint(0, n)
            a = atom[j] + 1
            a_count[a] += 1
            a_sq[a] += vsq[j]
            a_sum[a] += v[j]
        for a in range(1, n_atoms + 1):  # prefix sums: entry a holds atoms 0..a−1
            a_count[a] += a_count[a - 1]
            a_sum[a] += a_sum[a - 1]
            a_sq[a] += a_sq[a - 1]
        for i in range(n_binnings):
            total = 0.0
            for k in range(offsets[i], offsets[i + 1] - 1):
                lo = starts[k]
                hi = starts[k + 1]
                nb = a_count[hi] - a_count[lo]
                if nb >= 2:
                    s = a_sum[hi] - a_sum[lo]
                    total += (s * s - (a_sq[hi] - a_sq[lo])) / (nb - 1)
            out[i, r] = total / n
    return out
