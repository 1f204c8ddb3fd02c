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

The kernels return an (m, 4) float64 table of count, Σz, Σy per bin (the three sums of a bin in one
cache line; the count is exact in float64 up to 2⁵³ rows).  Σz is added in row order, so it equals the
other equal-width kernels' sum to the last bit.  A row that fails a check is binned as a 0 (its sums are
discarded: the caller takes the slow path).

The binary kernel is written for the machine (per thread at 4·10⁶ rows, measured 13.7 ms against 22.8 ms
for the straightforward loop in one run): the rows are read through a slice starting at 0 and the bin is
unsigned, so the loop carries no negative-index wraparound; count and Σy are integers packed in one
int64 per bin (count in the low 32 bits, Σy above: one integer add per row for both), moved into the
table every ``PACKED_ROWS`` rows; and the float edges are read only when m z lies within rounding of an
integer (:func:`near_edge_margin`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from calviz._kernels.validation import row_top1_range_sum

#: columns of a bin's row in the tables of these kernels
COUNT, Z_SUM, Y_SUM = 0, 1, 2
#: rows added into the packed integer (count, Σy) of a bin before it is moved into the float table: each
#: half of the int64 stays below 2³¹
PACKED_ROWS = (1 << 31) - 1
_LOW = (1 << 32) - 1


@njit(cache=True, inline="always")
def _class_id(value, hi: int):
    """(class id, valid) of a label of any real dtype: valid iff it is an integer in 0..hi (NaN is not);
    the logic of :func:`calviz._kernels.validation.labels_to_int64` (clamped before the cast, so an
    out-of-range float never reaches an undefined float → int conversion)."""
    v = np.float64(value)
    c = min(max(v, -1.0), hi + 1.0)
    iv = np.int64(c) if c == c else np.int64(-1)
    return iv, (iv == v) & (iv >= 0) & (iv <= hi)


@njit(cache=True, inline="always")
def near_edge_margin(m: int) -> float:
    """How close the fraction of t = fl(z·m) must come to 0 or 1 before the float edges i/m decide z's
    bin.  With u = 2⁻⁵³, |t − z·m| ≤ u·m and |fl(i/m) − i/m| ≤ u, so floor(t) is z's bin among the float
    edges whenever frac(t) lies in (2u·m, 1 − 2u·m); the margin is 4 times that."""
    return m * 2.0 ** -50


@njit(cache=True, nogil=True)
def binary_first_order_rows(p, y, m: int, lower, upper, start: int, stop: int):
    """Rows start..stop−1 of binary predictions p (any real dtype) and labels y (any real dtype): (the
    (m, 4) table of count, Σp, Σy per bin, valid) where valid means every p lies in [0, 1] and every y
    is 0 or 1.  Also the first-order sums of an already validated scalar view (z, y).

    The bin is :func:`calviz._kernels.binning.equal_width_bin`'s: floor(m z), corrected against the float
    edges ``lower``/``upper`` behind a branch taken only when m z lies within :func:`near_edge_margin` of
    an integer (rarely on continuous data, so predicted; no edge is read otherwise).  A bin's packed
    (count, Σy) integer and its running Σz share 16 bytes.  The loop body is written out (no helper,
    which measured slower)."""
    acc = np.zeros((m, 4))
    packed = np.zeros((m, 2), dtype=np.int64)  # per bin: count + (Σy << 32), and Σz's float64 bits
    z_sums = packed.view(np.float64)
    margin = near_edge_margin(m)
    ok = True
    for block in range(start, stop, PACKED_ROWS):
        ps = p[block:min(stop, block + PACKED_ROWS)]
        ys = y[block:min(stop, block + PACKED_ROWS)]
        for i in range(ps.shape[0]):
            zi = np.float64(ps[i])
            v = ys[i]
            in_unit = (zi >= 0.0) & (zi <= 1.0)
            one = v == 1
            ok &= in_unit & ((v == 0) | one)
            z = zi if in_unit else 0.0
            t = z * m
            whole = int(t)
            frac = t - whole
            b = np.uint64(min(whole, m - 1))
            if frac <= margin or frac >= 1.0 - margin:
                b -= np.uint64(z < lower[b])
                b += np.uint64(z >= upper[b])
            packed[b, 0] += 1 + (np.int64(one) << 32)
            z_sums[b, 1] += z
        for b in range(m):
            acc[b, COUNT] += np.float64(packed[b, 0] & _LOW)
            acc[b, Y_SUM] += np.float64(packed[b, 0] >> 32)
            acc[b, Z_SUM] += z_sums[b, 1]
            packed[b] = 0
    return acc, ok


@njit(cache=True, nogil=True)
def top1_first_order_rows(probs, labels, m: int, lower, upper, limit: float, start: int, stop: int):
    """Rows start..stop−1 of an (n, K) probability matrix (any real dtype) and class ids (any real dtype),
    reduced to the top-1 view (confidence = the row maximum, correct = 1 where its lowest index is the
    label) and summed in its equal-width bins: (the (m, 4) table of count, Σconfidence, Σcorrect per bin,
    valid), valid meaning every probability lies in [0, 1], every row sum (added in float64 in column
    order) within ``limit`` of 1 and every label in 0..K−1.  The row reduction is
    :func:`calviz._kernels.validation.row_top1_range_sum`'s; binned as :func:`binary_first_order_rows`."""
    hi = probs.shape[1] - 1
    acc = np.zeros((m, 4))
    ok = True
    for i in range(start, stop):
        best, index, lo, total = row_top1_range_sum(probs[i])
        label, label_ok = _class_id(labels[i], hi)
        row_ok = (lo >= 0.0) & (best <= 1.0) & (abs(total - 1.0) <= limit) & label_ok
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
