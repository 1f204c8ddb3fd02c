"""Pool-adjacent-violators: the isotonic (non-decreasing) least-squares fit of a sequence."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def pav(y_sorted, w_sorted):
    """The non-decreasing sequence f minimising Σ w_i (y_i − f_i)² for y in the order of the predictor,
    ties of the predictor already pooled by the caller (one entry per distinct value, weight = its
    count), weights > 0 (Barlow, Bartholomew, Bremner and Brunk, 1972; Best and Chakravarti, 1990).

    One pass with backtracking: a block [i..j] is kept as target[i] = j, target[j] = i with its weighted
    mean in y[i] and its weight in w[i]; a decreasing run is merged into one block, which is then
    compared with its left neighbour.  O(n).  The same merges in the same order as scikit-learn's
    ``_inplace_contiguous_isotonic_regression``, hence the same blocks and their means up to the last
    bit (the compiler may fuse a multiply-add).

    Parameters
    ----------
    y_sorted, w_sorted : ndarray of shape (n,)
        Responses in the order of the predictor and their positive weights (not modified).

    Returns
    -------
    ndarray of shape (n,)
        The fitted non-decreasing values.
    """
    n = y_sorted.shape[0]
    y = y_sorted.astype(np.float64)  # copies: the inputs are left as they are
    w = w_sorted.astype(np.float64)
    target = np.arange(n)
    i = 0
    while i < n:
        k = target[i] + 1
        if k == n:
            break
        if y[i] < y[k]:
            i = k
            continue
        sum_wy = w[i] * y[i]
        sum_w = w[i]
        while True:  # inside a decreasing run
            prev_y = y[k]
            sum_wy += w[k] * y[k]
            sum_w += w[k]
            k = target[k] + 1
            if k == n or prev_y < y[k]:
                y[i] = sum_wy / sum_w
                w[i] = sum_w
                target[i] = k - 1
                target[k - 1] = i
                if i > 0:
                    i = target[i - 1]  # backtrack: the merged block may violate its left neighbour
                break
    i = 0
    while i < n:
        k = target[i] + 1
        for j in range(i + 1, k):
            y[j] = y[i]
        i = k
    return y
