"""Jitted sorting of non-negative 64-bit keys (the bit patterns of non-negative doubles, possibly with a
label bit appended): a least-significant-digit radix sort, O(n) per digit."""

from __future__ import annotations

import numpy as np
from numba import njit

#: bits per digit (2048 buckets: the counters and the 2048 write positions stay in the cache)
_DIGIT_BITS = 11
_DIGITS = 6  # 66 bits: every non-negative int64


@njit(cache=True, nogil=True)
def radix_sort_keys(keys):
    """The non-negative int64 ``keys`` in increasing order.  ``keys`` is used as one of the two buffers
    (its content is lost); the sorted array returned is ``keys`` or a new array of the same size.

    Each pass moves the keys by one 11-bit digit, lowest first, keeping the order of equal digits
    (stable), so after the last pass the keys are sorted; a digit equal in every key is skipped (the
    exponent bits of doubles in [0, 1] mostly are).  The result is the unique sorted sequence of the
    keys, so it equals ``np.sort(keys)`` element for element."""
    n = keys.shape[0]
    size = 1 << _DIGIT_BITS
    mask = size - 1
    hist = np.zeros((_DIGITS, size), dtype=np.int64)
    for i in range(n):
        k = keys[i]
        for d in range(_DIGITS):
            hist[d, (k >> (d * _DIGIT_BITS)) & mask] += 1
    src = keys
    dst = np.empty(0, dtype=keys.dtype)
    position = np.empty(size, dtype=np.int64)
    for d in range(_DIGITS):
        shift = d * _DIGIT_BITS
        if n == 0 or hist[d, (src[0] >> shift) & mask] == n:
            continue  # every key has this digit
        if dst.shape[0] != n:
            dst = np.empty(n, dtype=keys.dtype)
        total = 0
        for b in range(size):
            position[b] = total
            total += hist[d, b]
        for i in range(n):
            k = src[i]
            b = (k >> shift) & mask
            dst[position[b]] = k
            position[b] += 1
        src, dst = dst, src
    return src


@njit(cache=True, nogil=True)
def sort_unit_values_by_label(z, y):
    """``(np.sort(z[y == 1]), np.sort(z[y != 1]))`` for values z ≥ 0 (−0.0 comes out as +0.0, which
    equals it): the two groups' bit patterns gathered in one pass and each sorted by
    :func:`radix_sort_keys` (a non-negative double orders like its bit pattern read as an integer)."""
    n = z.shape[0]
    n_events = 0
    for i in range(n):
        if y[i] == 1:
            n_events += 1
    events = np.empty(n_events, dtype=np.int64)
    others = np.empty(n - n_events, dtype=np.int64)
    bits = z.view(np.int64)
    e = 0
    o = 0
    for i in range(n):
        key = bits[i] & 0x7FFFFFFFFFFFFFFF
        if y[i] == 1:
            events[e] = key
            e += 1
        else:
            others[o] = key
            o += 1
    return radix_sort_keys(events).view(np.float64), radix_sort_keys(others).view(np.float64)


@njit(cache=True)
def count_runs(values, limit):
    """The number of runs of equal neighbours in ``values`` (the distinct values of a sorted array), or
    ``limit + 1`` as soon as there are more than ``limit``: continuous predictions stop after a few
    hundred elements instead of a pass and three temporary arrays over all of them."""
    n = values.shape[0]
    if n == 0:
        return 0
    runs = 1
    for i in range(1, n):
        if values[i] != values[i - 1]:
            runs += 1
            if runs > limit:
                return runs
    return runs


@njit(cache=True)
def pair_fingerprint(z, y):
    """An order-independent 64-bit fingerprint of the pairs (z_i, y_i): the wrapping sum of the
    SplitMix64 finalizer of each key bits(z) << 1 | (y ≠ 0).  Equal multisets of pairs give equal
    fingerprints; a changed pair changes it except with probability about 2⁻⁶⁴.  One pass, no memory."""
    total = np.uint64(0)
    bits = z.view(np.uint64)
    for i in range(z.shape[0]):
        k = ((bits[i] & np.uint64(0x7FFFFFFFFFFFFFFF)) << np.uint64(1)) | np.uint64(1 if y[i] != 0 else 0)
        k = (k ^ (k >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        k = (k ^ (k >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        total += k ^ (k >> np.uint64(31))
    return total


@njit(cache=True)
def split_sorted_keys(keys):
    """``(np.sort(z[y == 1]), np.sort(z[y != 1]))`` from the sorted keys bits(z) << 1 | y of
    :func:`calviz._kernels.tcal.binary_sort_keys` (the result of :func:`sort_unit_values_by_label`,
    without a sort: each group's keys are already in order)."""
    n = keys.shape[0]
    n_events = 0
    for i in range(n):
        n_events += keys[i] & 1
    events = np.empty(n_events, dtype=np.int64)
    others = np.empty(n - n_events, dtype=np.int64)
    e = 0
    o = 0
    for i in range(n):
        k = keys[i]
        if k & 1:
            events[e] = k >> 1
            e += 1
        else:
            others[o] = k >> 1
            o += 1
    return events.view(np.float64), others.view(np.float64)
