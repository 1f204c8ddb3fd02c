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


@njit(cache=True, inline="always")
def row_top1_range_sum(row):
    """(maximum, its index, minimum, sum) of one row of probabilities (a 1-D array of K ≥ 1 values, any
    stride): the maximum is the first among ties and its index a float (exact: K < 2⁵³, and selected in
    vector registers like the maximum); the sum is added in float64 in column order.  Every value is
    widened to float64 where it is read (exact), so a float32 row gives the numbers of its float64 copy —
    and runs as fast: comparing float32 values with float64 ones converts at every use (measured per
    thread on 2·10⁶ rows of K = 10, one run at load 13: 76 ms against 22 ms widened once, float64 21 ms).

    The row's range check is its minimum ≥ 0 and its maximum ≤ 1: the same answer as checking every
    value (a NaN makes the sum NaN, which fails the sum check; ±inf is the maximum or the minimum), with
    one select per value instead of two compares."""
    best = np.float64(row[0])
    lo = best
    s = 0.0
    s += best
    index = 0.0
    for j in range(1, row.shape[0]):
        v = np.float64(row[j])
        s += v
        lo = v if v < lo else lo
        above = v > best
        index = np.float64(j) if above else index
        best = v if above else best
    return best, index, lo, s


@njit(cache=True, nogil=True)
def simplex_rows_top1_into(p, labels, limit, start, stop, conf, correct):
    """:func:`simplex_rows_ok` and :func:`calviz._kernels.views.top1_rows_into` in one read of the rows
    start..stop−1 of the (n, K) array p (float64 or float32), for labels already validated (class ids
    0..K−1): True iff every value lies in [0, 1] (NaN fails) and every row sum (added in float64 in
    column order) is within ``limit`` of 1; conf and correct are written row by row (the row maximum, the
    first among ties, and 1.0 where its index is the label, else 0.0).  When the answer is False the
    written views mean nothing (the caller refuses the data).

    The row reduction is :func:`row_top1_range_sum`'s, for two rows side by side (their dependent chains
    of compares overlap).  Measured per thread on 2·10⁶ rows of K = 10 (CPU time, minimum of 15
    alternating calls, one run at load 15): 19.5 ms against 17.4 + 13.2 ms for the check and the view as
    two passes; one row at a time 23.2 ms, four rows side by side 21.5 ms."""
    k = p.shape[1]
    rows, ids = p[start:stop], labels[start:stop]
    top, hit = conf[start:stop], correct[start:stop]
    n = rows.shape[0]
    ok = True
    for i in range(0, n - n % 2, 2):
        b0, b1 = np.float64(rows[i, 0]), np.float64(rows[i + 1, 0])
        l0, l1 = b0, b1
        s0 = 0.0
        s1 = 0.0
        s0 += b0
        s1 += b1
        x0 = x1 = 0.0
        for j in range(1, k):
            fj = np.float64(j)
            v0, v1 = np.float64(rows[i, j]), np.float64(rows[i + 1, j])
            s0 += v0
            s1 += v1
            l0 = v0 if v0 < l0 else l0
            l1 = v1 if v1 < l1 else l1
            a0, a1 = v0 > b0, v1 > b1
            x0 = fj if a0 else x0
            x1 = fj if a1 else x1
            b0 = v0 if a0 else b0
            b1 = v1 if a1 else b1
        ok &= (l0 >= 0.0) & (b0 <= 1.0) & (abs(s0 - 1.0) <= limit)
        ok &= (l1 >= 0.0) & (b1 <= 1.0) & (abs(s1 - 1.0) <= limit)
        top[i], top[i + 1] = b0, b1
        hit[i] = np.float64(x0 == ids[i])
        hit[i + 1] = np.float64(x1 == ids[i + 1])
    for i in range(n - n % 2, n):
        best, index, lo, s = row_top1_range_sum(rows[i])
        ok &= (lo >= 0.0) & (best <= 1.0) & (abs(s - 1.0) <= limit)
        top[i] = best
        hit[i] = np.float64(index == ids[i])
    return ok


def on_simplex_top1(p, labels, limit: float):
    """(ok, confidence, correct): :func:`on_simplex` of the (n, K) array p (float64 or float32) and, in
    the same read, its top-1 view with the validated class ids ``labels`` (the view of
    :func:`calviz._kernels.views.top1_of_rows`, meaningful only when ok; float64 whatever p's dtype).
    Large matrices are read in row chunks on several threads (a chunk's answer is a bool and its rows'
    views its own)."""
    n = p.shape[0]
    conf = np.empty(n)
    correct = np.empty(n)
    ok = all(map_chunks(
        lambda start, stop: simplex_rows_top1_into(p, labels, limit, start, stop, conf, correct), n))
    return ok, conf, correct


@njit(cache=True, nogil=True)
def class_columns_top1(columns, labels, limit, conf, correct):
    """The checks of :func:`simplex_rows_ok` and :func:`int_labels_in_range_rows` and the top-1 view of
    :func:`calviz._kernels.views.top1_rows_into` in one pass, for probabilities stored by class: row i of
    the predictions is columns[:, i] of the (K, n) array.  True iff every value lies in [0, 1], every row
    sum (added in class order) is within ``limit`` of 1 and every label lies in 0..K−1; conf and correct
    are written row by row (the row maximum, the first among ties, and whether its class is the label).
    The row reduction is :func:`row_top1_range_sum`'s (per thread on 2·10⁶ rows of K = 10, one run at
    load 19: 23.7 ms against 28.3 ms checking every value)."""
    hi = columns.shape[0] - 1
    ok = True
    for i in range(columns.shape[1]):
        best, index, lo, s = row_top1_range_sum(columns[:, i])
        label = labels[i]
        ok &= (lo >= 0.0) & (best <= 1.0) & (abs(s - 1.0) <= limit) & (label >= 0) & (label <= hi)
        conf[i] = best
        correct[i] = np.float64(index == label)
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
