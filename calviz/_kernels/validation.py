"""Single-pass input checks for calviz._data.

No Python objects and no messages: the kernels only answer "is everything valid?" in one branch-free
(vectorisable) pass, large arrays in row chunks on several threads (:func:`calviz._threads.map_chunks`: a
chunk's answer is a bool, so the answer does not depend on the threads); calviz._data finds the first
offending row on the slow path and words the message.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from calviz._threads import map_chunks


@njit(cache=True, nogil=True)
def all_in_unit_rows(x, start, stop):
    """True iff every x[start:stop] lies in [0, 1] (NaN fails)."""
    ok = True
    for i in range(start, stop):
        v = x[i]
        ok &= (v >= 0.0) & (v <= 1.0)
    return ok


def all_in_unit(x) -> bool:
    """True iff every element of the flat array x lies in [0, 1] (NaN fails)."""
    return all(map_chunks(lambda start, stop: all_in_unit_rows(x, start, stop), x.shape[0]))


@njit(cache=True, nogil=True)
def simplex_rows_ok(p, limit, start, stop):
    """True iff every p[i, j] of the rows start..stop−1 lies in [0, 1] (NaN fails) and every row sum
    (added in column order, as :func:`max_row_sum_deviation`) is within ``limit`` of 1."""
    k = p.shape[1]
    ok = True
    for i in range(start, stop):
        s = 0.0
        for j in range(k):
            v = p[i, j]
            s += v
            ok &= (v >= 0.0) & (v <= 1.0)
        ok &= abs(s - 1.0) <= limit
    return ok


def on_simplex(p, limit: float) -> bool:
    """True iff every value of the (n, K) array p lies in [0, 1] and every row sums to 1 within ``limit``:
    the range check and the row-sum check in one read."""
    return all(map_chunks(lambda start, stop: simplex_rows_ok(p, limit, start, stop), p.shape[0]))


@njit(cache=True, nogil=True)
def class_columns_top1(columns, labels, limit, conf, correct):
    """The checks of :func:`simplex_rows_ok` and :func:`int_labels_in_range_rows` and the top-1 view of
    :func:`calviz._kernels.views.top1_rows_into` in one pass, for probabilities stored by class: row i of
    the predictions is columns[:, i] of the (K, n) array.  True iff every value lies in [0, 1], every row
    sum (added in class order) is within ``limit`` of 1 and every label lies in 0..K−1; conf and correct
    are written row by row (the row maximum, the first among ties, and whether its class is the label)."""
    k = columns.shape[0]
    ok = True
    for i in range(columns.shape[1]):
        best = columns[0, i]
        index = 0
        s = 0.0
        s += best
        ok &= (best >= 0.0) & (best <= 1.0)
        for j in range(1, k):
            v = columns[j, i]
            s += v
            ok &= (v >= 0.0) & (v <= 1.0)
            above = v > best
            index = j if above else index
            best = v if above else best
        ok &= abs(s - 1.0) <= limit
        label = labels[i]
        ok &= (label >= 0) & (label <= k - 1)
        conf[i] = best
        correct[i] = 1.0 if index == label else 0.0
    return ok


@njit(cache=True)
def max_row_sum_deviation(p):
    """max_i |Σ_j p[i, j] − 1| for an (n, K) array (NaN propagates as a failing value: returns inf)."""
    n, k = p.shape
    worst = 0.0
    for i in range(n):
        s = 0.0
        for j in range(k):
            s += p[i, j]
        d = abs(s - 1.0)
        if not d <= worst:
            worst = d if d == d else np.inf
    return worst


@njit(cache=True)
def labels_to_int64(labels, n_classes):
    """(int64 copy of labels, ok) where ok means every label is an integer in 0..n_classes−1.

    One pass for any numeric dtype (bool, integers, floats; NaN fails the equality test)."""
    n = labels.shape[0]
    out = np.empty(n, dtype=np.int64)
    ok = True
    hi = n_classes - 1
    for i in range(n):
        v = labels[i]
        # clamp before the cast so out-of-range floats never hit an undefined float -> int conversion
        c = min(max(v, -1.0), hi + 1.0)
        iv = np.int64(c) if c == c else np.int64(-1)
        out[i] = iv
        ok &= (iv == v) & (iv >= 0) & (iv <= hi)
    return out, ok


@njit(cache=True, nogil=True)
def int_labels_in_range_rows(labels, n_classes, start, stop):
    """True iff every integer label of labels[start:stop] lies in 0..n_classes−1."""
    ok = True
    hi = n_classes - 1
    for i in range(start, stop):
        v = labels[i]
        ok &= (v >= 0) & (v <= hi)
    return ok


def int_labels_in_range(labels, n_classes: int) -> bool:
    """True iff every integer label lies in 0..n_classes−1 (int64 input is then used without a copy)."""
    return all(map_chunks(lambda start, stop: int_labels_in_range_rows(labels, n_classes, start, stop),
                          labels.shape[0]))
