"""Jitted per-window passes over a prediction log sorted by time: window i holds the rows
``first[i]:end[i]``.  Plain arrays in, plain arrays out; no validation (the engine validates once).

:func:`window_tcal_terms` gives every window's analytic T-Cal terms in one pass over the windows
(the terms of :func:`calviz._kernels.tcal.analytic_terms` on the window's rows, bit for bit: the same
sort, split levels and scan) and :func:`window_equal_width_acc` every window's equal-width bin sums, each
for a set of windows, so that plain threads can share the windows.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from calviz._kernels.ece import equal_width_1d_acc
from calviz._kernels.sorting import count_runs, radix_sort_keys
from calviz._kernels.tcal import (
    SCALAR,
    binary_sort_keys,
    dyadic_split_levels,
    finish_terms,
    scan_terms,
    unpack_sort_keys,
)

#: log P(labels) below this is reported as −inf (its exponential is 0.0 in float64 either way)
_NO_FLOOR_LOG = -800.0


@njit(cache=True, nogil=True)
def window_tcal_terms(z, y, first, end, levels, windows, distinct_limit, terms, runs, log_prob):
    """For each window w in ``windows`` (rows ``first[w]:end[w]`` of z, y: predictions and 0/1 outcomes as
    float64), written into the outputs:

    * terms[w, :, :levels[w]] — the (N_TERMS, levels[w]) analytic T-Cal terms of the window's rows sorted
      by prediction (T^d, Var₀, Σ tr A_b, Σ tr A_b², κ₃ per dyadic scale 2^1..2^levels[w]); left alone
      where levels[w] < 1;
    * runs[w] — the distinct predictions of the window, counted up to ``distinct_limit + 1``;
    * log_prob[w] — log P(labels | predictions) under calibration, Σ log(z or 1 − z); −inf once below
      −800 (where its exponential is 0).

    Memory O(largest window); the GIL is released, so threads can share the windows."""
    for k in range(windows.shape[0]):
        w = windows[k]
        a = first[w]
        b = end[w]
        n = b - a
        if n < 1:
            continue
        keys = binary_sort_keys(np.ascontiguousarray(z[a:b]), np.ascontiguousarray(y[a:b]))
        zs, ys = unpack_sort_keys(radix_sort_keys(keys.view(np.int64)).view(np.uint64))
        runs[w] = count_runs(zs, distinct_limit)
        total = 0.0
        for i in range(n):
            total += math.log(zs[i]) if ys[i] > 0.5 else math.log1p(-zs[i])
            if total < _NO_FLOOR_LOG:
                total = -np.inf
                break
        log_prob[w] = total
        L = levels[w]
        if L < 1:
            continue
        split = dyadic_split_levels(zs, L)
        hi, lo, _, _, _, _, _, _ = scan_terms(split, L, zs.reshape(n, 1), ys, SCALAR, n, False)
        terms[w, :, :L] = finish_terms(hi, lo, n)


@njit(cache=True, nogil=True)
def window_equal_width_acc(z, y, m, lower, upper, starts, windows, out):
    """For each window w in ``windows``: out[w] = :func:`calviz._kernels.ece.equal_width_1d_acc` of the rows
    ``starts[w]:starts[w+1]`` (the same bins, sums and summation order), so one call bins every window of
    the log in one pass over its rows."""
    for k in range(windows.shape[0]):
        w = windows[k]
        out[w] = equal_width_1d_acc(z, y, m, lower, upper, starts[w], starts[w + 1])
