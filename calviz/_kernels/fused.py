"""One-pass first-order equal-width bin sums that check their input while they read it.

The plug-in ECEs, the MCE and the reliability data read only count, Σz and Σy of each bin (Σv = Σy − Σz).
These kernels read each prediction and label once, as stored (float32 predictions, bool or small-int
labels are not widened: every value is converted to float64 in a register and summed in float64), and in
the same pass:

* check what :func:`calviz.as_calibration_data` checks of such arrays — every probability finite and in
  [0, 1], every (n, K) row summing to 1 within a tolerance, every label a class id — and answer only
  "all valid?" (the caller words the message on its slow path, as :mod:`calviz._kernels.validation`);
* for (n, K) rows, reduce each row to its top-1 pair (the largest probability, the lowest index among
  ties, and whether that index is the label), as :func:`calviz._kernels.views.top1_rows_into`;
* bin the prediction among m equal-width bins, as :func:`equal_width_1d_acc`, and add it up.

The three sums of a bin share one row of an (m, 4) float64 table (one cache line; the count is exact
in float64 up to 2⁵³ rows).  A row that fails a check is binned as a 0 (its sums are discarded: the
caller takes the slow path).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: columns of a bin's row in the tables of these kernels
COUNT, Z_SUM, Y_SUM = 0, 1, 2


@njit(cache=True, inline="always")
def _class_id(value, hi: int):
    """(class id, valid) of a label of any real dtype: valid iff it is an integer in 0..hi (NaN is not);
    the logic of :func:`calviz._kernels.validation.labels_to_int64` (clamped before the cast, so an
    out-of-range float never reaches an undefined float → int conversion)."""
    v = np.float64(value)
    c = min(max(v, -1.0), hi + 1.0)
    iv = np.int64(c) if c == c else np.int64(-1)
    return iv, (iv == v) & (iv >= 0) & (iv <= hi)


@njit(cache=True, nogil=True)
def binary_first_order_rows(p, y, m: int, lower, upper, start: int, stop: int):
    """Rows start..stop−1 of binary predictions p (any real dtype) and labels y (any real dtype): (the
    (m, 4) table of count, Σp, Σy per bin, valid) where valid means every p lies in [0, 1] and every y
    is 0 or 1.  Also the first-order sums of an already validated scalar view (z, y).

    The bin is :func:`calviz._kernels.binning.equal_width_bin`'s, its edge correction behind a branch
    taken only within an ulp of an edge (almost never, so always predicted).  The loop body is written
    out (no helper, the label added as the number it is): measured 2-4x faster than with an inlined
    helper and a 0/1 select."""
    acc = np.zeros((m, 4))
    ok = True
    for i in range(start, stop):
        zi = np.float64(p[i])
        v = y[i]
        in_unit = (zi >= 0.0) & (zi <= 1.0)
        ok &= in_unit & ((v == 0) | (v == 1))
        z = zi if in_unit else 0.0
        b = min(int(z * m), m - 1)
        if z < lower[b] or z >= upper[b]:
            b -= z < lower[b]
            b += z >= upper[b]
        acc[b, COUNT] += 1.0
        acc[b, Z_SUM] += z
        acc[b, Y_SUM] += np.float64(v)
    return acc, ok


@njit(cache=True, nogil=True)
def top1_first_order_rows(probs, labels, m: int, lower, upper, limit: float, start: int, stop: int):
    """Rows start..stop−1 of an (n, K) probability matrix (any real dtype) and class ids (any real dtype),
    reduced to the top-1 view (confidence = the row maximum, correct = 1 where its lowest index is the
    label) and summed in its equal-width bins: (the (m, 4) table of count, Σconfidence, Σcorrect per bin,
    valid), valid meaning every probability lies in [0, 1], every row sum (added in float64 in column
    order) within ``limit`` of 1 and every label in 0..K−1.  Binned as :func:`binary_first_order_rows`."""
    k = probs.shape[1]
    hi = k - 1
    acc = np.zeros((m, 4))
    ok = True
    for i in range(start, stop):
        best = np.float64(probs[i, 0])
        total = best
        in_unit = (best >= 0.0) & (best <= 1.0)
        index = 0
        for j in range(1, k):
            v = np.float64(probs[i, j])
            total += v
            in_unit &= (v >= 0.0) & (v <= 1.0)
            above = v > best
            index = j if above else index
            best = v if above else best
        label, label_ok = _class_id(labels[i], hi)
        row_ok = in_unit & (abs(total - 1.0) <= limit) & label_ok
        ok &= row_ok
        z = best if row_ok else 0.0
        b = min(int(z * m), m - 1)
        if z < lower[b] or z >= upper[b]:
            b -= z < lower[b]
            b += z >= upper[b]
        acc[b, COUNT] += 1.0
        acc[b, Z_SUM] += z
        acc[b, Y_SUM] += np.float64(index == label)
    return acc, ok
