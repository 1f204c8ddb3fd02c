"""Single-pass input checks for calviz._data.

No Python objects and no messages: the kernels only answer "is everything valid?" in one branch-free
(vectorisable) pass; calviz._data finds the first offending row on the slow path and words the message.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def all_in_unit(x):
    """True iff every element of the flat array x lies in [0, 1] (NaN fails)."""
    ok = True
    for i in range(x.shape[0]):
        v = x[i]
        ok &= (v >= 0.0) & (v <= 1.0)
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


@njit(cache=True)
def int_labels_in_range(labels, n_classes):
    """True iff every integer label lies in 0..n_classes−1 (int64 input is then used without a copy)."""
    ok = True
    hi = n_classes - 1
    for i in range(labels.shape[0]):
        v = labels[i]
        ok &= (v >= 0) & (v <= hi)
    return ok
