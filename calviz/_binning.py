"""Binning schemes: every scheme gives one integer bin per sample.

* equal-width 1-D: m bins [i/m, (i+1)/m), the last one closed, so 0 goes to the first bin, 1.0 to the
  last and ``n_bins=m`` means exactly m bins; a point exactly on the float edge ``i / m`` goes to bin i.
* equal-mass 1-D: as near as possible equal counts, ties never split.
* equal-volume simplex partition (Lee et al. 2023, Sec. 3.1 and App. B.3): cumulative-sum map + Freudenthal
  cells, m^{K-1} cells of equal volume, one int64 key per cell.
* cubic grid on [0, 1]^k for the top-1-to-k vector (Sun et al., 2024): m bins per axis.

Only observed keys are ever materialised (:func:`dense_ids`), so the total number of cells may be
astronomically large; it is reported as a Python int (exact).

:func:`assign_bins` is the one entry point used by the estimators; the lower-level functions take
already validated arrays (they check shapes and ranges cheaply but do not re-validate labels).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from calviz._data import InputError
from calviz._kernels.binning import (
    cubic_grid_keys_kernel,
    dense_ids_small_kernel,
    equal_width_ids_kernel,
    order_statistics_kernel,
    simplex_cell_keys_kernel,
)
from calviz._kernels.validation import all_in_unit
from calviz._results import ResultMixin

__all__ = [
    "Bins",
    "Scheme",
    "assign_bins",
    "equal_width_edges",
    "equal_width_ids",
    "equal_width_bounds",
    "equal_mass_edges",
    "equal_mass_ids",
    "simplex_cell_keys",
    "simplex_cell_count",
    "cubic_grid_keys",
    "dense_ids",
]

Scheme = Literal["equal_width", "equal_mass", "simplex", "grid", "distinct"]

_INT64_MAX = np.iinfo(np.int64).max
# keys below this bound are compressed with a presence table instead of a sort
_DIRECT_TABLE_MAX = 1 << 20
#: equal-width edge arrays are materialised up to this many bins
MAX_EDGE_TABLE = 1 << 24


def check_n_bins(n_bins, name: str = "n_bins") -> int:
    """n_bins must be an integer >= 1 (bools and non-integral floats are refused)."""
    if isinstance(n_bins, (bool, np.bool_)):
        raise InputError(f"{name} must be a positive integer; got {n_bins!r}")
    try:
        m = int(n_bins)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be a positive integer; got {n_bins!r}") from None
    if m != n_bins or m < 1:
        raise InputError(f"{name} must be a positive integer; got {n_bins!r}")
    if m > 1 << 40:
        raise InputError(f"{name} = {m} is too large (at most 2^40)")
    return m


def _as_unit_array(z, ndim: int, name: str = "z") -> np.ndarray:
    arr = np.ascontiguousarray(z, dtype=np.float64)
    if arr.ndim != ndim:
        raise InputError(f"{name} must be {ndim}-D; got shape {arr.shape}")
    if arr.size and not all_in_unit(arr.reshape(-1)):  # also catches NaN
        raise InputError(f"{name} must lie in [0, 1] (no NaN)")
    return arr


def equal_width_edges(n_bins: int) -> np.ndarray:
    """Edges ``i / m`` (float division), i = 0..m; the bin rule of :func:`equal_width_ids` uses them.
    At most ``MAX_EDGE_TABLE`` bins (the binning itself works for any m without an edge table)."""
    m = check_n_bins(n_bins)
    if m > MAX_EDGE_TABLE:
        raise InputError(f"an edge table for {m:,} bins is too large (at most {MAX_EDGE_TABLE:,})")
    return np.arange(m + 1, dtype=np.float64) / m


def equal_width_bounds(n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) bounds of the m equal-width bins as the kernels use them: lower[i] = i/m,
    upper[i] = (i+1)/m, upper[m-1] = +inf (the last bin is closed at 1)."""
    edges = equal_width_edges(n_bins)
    upper = edges[1:].copy()
    upper[-1] = np.inf
    return edges[:-1].copy(), upper


def equal_width_ids(z, n_bins: int) -> np.ndarray:
    """Equal-width bin ids ``min(floor(m z), m - 1)`` made exact on the float edges ``i / m``.

    Bin i is ``[edges[i], edges[i+1])`` (the last one closed); ``floor(m * (i/m))`` is sometimes i - 1
    in floating point (e.g. m = 22, i = 15), so the kernel corrects the guess against the edges.
    """
    m = check_n_bins(n_bins)
    return equal_width_ids_kernel(_as_unit_array(z, 1), m)


def equal_mass_edges(z, n_bins: int) -> np.ndarray:
    """Edges [0, e_1, ..., 1] of at most m bins with counts as equal as possible; ties never split.

    The interior edge j is the sorted value at rank round(j n / m); a bin is [e_i, e_{i+1}) (the last
    closed), so a group of tied values always falls into one bin.  Duplicate candidate edges are
    dropped, hence fewer than m bins when ties are heavy.
    """
    m = check_n_bins(n_bins)
    z = _as_unit_array(z, 1)
    n = z.shape[0]
    if n == 0:
        return np.array([0.0, 1.0])
    ranks = equal_mass_ranks(n, m)
    # only the order statistics at these ranks are needed: for few bins a radix selection (a few O(n)
    # passes over z, which is neither sorted nor copied)
    return equal_mass_edges_from(np.sort(z)[ranks] if ranks.size > 64 else order_statistics(z, ranks))


def equal_mass_ranks(n: int, m: int) -> np.ndarray:
    """The ranks round(j n / m), j = 1..m−1, inside (0, n) whose order statistics are the candidate
    interior edges of :func:`equal_mass_edges` (every rank 1..n−1 when m ≥ n)."""
    if m >= n:  # steps n/m <= 1 hit every rank: each distinct value gets its own bin
        ranks = np.arange(1, n, dtype=np.int64)
    else:
        ranks = np.round(np.arange(1, m) * (n / m)).astype(np.int64)
    return ranks[(ranks > 0) & (ranks < n)]


def equal_mass_edges_from(candidates: np.ndarray) -> np.ndarray:
    """Edges [0, e_1, ..., 1] from the order statistics at :func:`equal_mass_ranks`: duplicates and
    candidates at 0 dropped (a bin [0, 0) would be empty)."""
    interior = np.unique(candidates)
    interior = interior[interior > 0.0]
    return np.concatenate([[0.0], interior, [1.0]])


def order_statistics(z, ranks) -> np.ndarray:
    """``np.sort(z)[ranks]`` for values z in [0, 1] (float64, contiguous) and nondecreasing int ranks in
    [0, n), without sorting z (:func:`calviz._kernels.binning.order_statistics_kernel`); −0.0 is
    returned as 0.0."""
    ranks = np.ascontiguousarray(ranks, dtype=np.int64)
    return order_statistics_kernel(np.ascontiguousarray(z, dtype=np.float64).view(np.int64),
                                   ranks).view(np.float64)


def equal_mass_ids(z, edges) -> np.ndarray:
    """Bin ids for the edges of :func:`equal_mass_edges` (bins [e_i, e_{i+1}), last closed)."""
    z = _as_unit_array(z, 1)
    edges = np.asarray(edges, dtype=np.float64)
    ids = np.searchsorted(edges[1:-1], z, side="right")
    return ids.astype(np.int64, copy=False)


def simplex_cell_count(n_classes: int, n_bins: int) -> int:
    """m^{K-1}: the number of cells of the equal-volume simplex partition (exact Python int)."""
    return int(n_bins) ** (int(n_classes) - 1)


def simplex_key_space(n_classes: int, n_bins: int) -> int:
    """Size of the key range of :func:`simplex_cell_keys`: C(m+K-2, K-1) (K-1)! = m (m+1) ... (m+K-2)."""
    d = int(n_classes) - 1
    return math.comb(int(n_bins) + d - 1, d) * math.factorial(d)


def simplex_cell_keys(z, n_bins: int) -> np.ndarray:
    """One int64 key per row of z (n, K) for the equal-volume simplex partition (Lee et al. 2023, App. B.3).

    c_j = m (z_1 + ... + z_j), j = 1..K-1; the cell is (floor(c), the permutation sorting the
    fractional parts decreasingly).  Deterministic boundary rule: floors use the equal-width edge
    arithmetic (c_j = m lands in a_j = m - 1 with fractional part 1), ties among fractional parts are
    broken towards the larger coordinate index — that is the order that keeps the cell inside the
    order simplex 0 <= c_1 <= ... <= c_{K-1} <= m, so every point lands in exactly one of its m^{K-1}
    cells.  Key = rank(a) (K-1)! + Lehmer rank of the permutation, rank(a) = sum_j C(a_j + j - 1, j)
    (combinatorial number system of the nondecreasing floor vector); keys lie in
    [0, m (m+1) ... (m+K-2)), which must fit in int64 (e.g. K = 10 allows m <= 120, K = 20 m <= 2),
    otherwise :class:`InputError`.
    """
    m = check_n_bins(n_bins)
    arr = _as_unit_array(z, 2)
    K = arr.shape[1]
    if K < 2:
        raise InputError(f"the simplex partition needs K >= 2 columns; got {K}")
    check_simplex_bins(K, m)
    return simplex_cell_keys_kernel(arr, m)


def _simplex_keys_fit(n_classes: int, n_bins: int) -> bool:
    """Whether :func:`simplex_key_space` = m (m+1) ... (m+K-2) ≤ 2^63 − 1, multiplied until it exceeds:
    at most 63 factors (each ≥ 2), whatever K is (K! itself has a million digits at K = 2·10⁵)."""
    space = 1
    for factor in range(int(n_bins), int(n_bins) + int(n_classes) - 1):
        space *= factor
        if space > _INT64_MAX:
            return False
    return True


def largest_simplex_bins(n_classes: int, n_bins: int) -> int:
    """The largest m' ≤ ``n_bins`` whose simplex partition of K = ``n_classes`` classes can be numbered
    in int64 (:func:`simplex_key_space` ≤ 2^63 − 1), or 0 when none ≥ 2 can.  The key space grows with m,
    so a bisection finds it: O(log n_bins) key-space evaluations, whatever ``n_bins`` is."""
    if not _simplex_keys_fit(n_classes, 2):
        return 0
    lo, hi = 2, int(n_bins)  # key_space(lo) fits; find the last m in [lo, hi] that fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _simplex_keys_fit(n_classes, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def check_simplex_bins(n_classes: int, n_bins: int) -> None:
    """Refuse (:class:`InputError`, in O(log n_bins)) a simplex partition whose cells cannot be numbered
    in int64, naming the largest number of bins that can, or the targets to use instead."""
    K, m = int(n_classes), int(n_bins)
    if _simplex_keys_fit(K, m):
        return
    fits = largest_simplex_bins(K, m - 1)
    # fewer bins only helps when some bin count fits: with K ≥ 21 not even 2 bins do (K! > 2^63)
    fix = (f"use at most n_bins = {fits}, or target='topk'" if fits
           else "no number of bins fits; use target='topk' (the k largest probabilities) or "
                "target='classwise' (one class against the rest)")
    raise InputError(
        f"full calibration of K = {K} classes bins the probability simplex into m (m+1) ... (m+K-2) "
        f"cells, too many to number with n_bins = {m}: {fix}"
    )


def cubic_grid_keys(z, n_bins: int) -> np.ndarray:
    """Cell keys of the cubic grid on [0, 1]^k (m equal-width bins per axis): key = sum_a i_a m^a."""
    m = check_n_bins(n_bins)
    arr = _as_unit_array(z, 2)
    k = arr.shape[1]
    if m**k > _INT64_MAX:
        raise InputError(f"cubic grid with {k} axes and n_bins = {m} has >= 2^63 cells; use fewer bins")
    return cubic_grid_keys_kernel(arr, m)


def dense_ids(keys) -> tuple[np.ndarray, np.ndarray]:
    """(ids, unique_keys): ids in [0, B) with ``unique_keys[ids] == keys``, unique_keys sorted.

    Small non-negative key ranges use an O(n + range) presence table, others ``np.unique``.
    """
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if keys.ndim != 1:
        raise InputError(f"keys must be 1-D; got shape {keys.shape}")
    if keys.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    lo, hi = int(keys.min()), int(keys.max())
    if lo >= 0 and hi < max(_DIRECT_TABLE_MAX, 2 * keys.size):
        return dense_ids_small_kernel(keys, hi + 1)
    unique, ids = np.unique(keys, return_inverse=True)
    return ids.astype(np.int64, copy=False).reshape(-1), unique


@dataclass(frozen=True, repr=False)
class Bins(ResultMixin):
    """A binning of n samples, returned by :func:`assign_bins`.

    Attributes
    ----------
    ids : ndarray of shape (n,)
        int64 dense bin ids in [0, n_nonempty).
    keys : ndarray of shape (n_nonempty,)
        int64 sorted cell keys of the non-empty bins (for 1-D schemes the bin index itself).
    n_nonempty : int
        Non-empty bins.
    n_bins_total : int
        Bins of the partition including empty ones (m^{K−1} for the simplex).
    n_bins : int
        m as requested.
    scheme : str
        The binning scheme.
    edges : ndarray or None
        Bin edges of 1-D schemes (None for multi-dimensional schemes and for more than
        ``MAX_EDGE_TABLE`` equal-width bins; for ``distinct`` the distinct values).
    """

    ids: np.ndarray
    keys: np.ndarray
    n_nonempty: int
    n_bins_total: int
    n_bins: int
    scheme: str
    edges: np.ndarray | None = None


def assign_bins(z, *, n_bins: int = 15, scheme: Scheme = "equal_width") -> Bins:
    """Bin predictions: 1-D equal-width, equal-mass or distinct bins, or the multi-dimensional partitions.

    ``equal_width``: m bins [i/m, (i+1)/m), the last one closed; ``equal_mass``: edges at the quantiles,
    ties never split (so heavy ties give fewer bins); ``distinct``: every distinct value in its own bin
    (Kumar et al.'s discrete predictors; ``n_bins`` is ignored); ``simplex``: the equal-volume partition
    of the probability simplex into m^{K−1} cells of Lee et al. (2023, Sec. 8.2.3) for (n, K) rows;
    ``grid``: the cubic grid with m cells per axis for (n, k) vectors.

    Parameters
    ----------
    z : array-like of shape (n,) or (n, K)
        Predictions in [0, 1] (rows on the simplex for ``simplex``).
    n_bins : int, default 15
        m, bins (per axis).
    scheme : {"equal_width", "equal_mass", "distinct", "simplex", "grid"}, default "equal_width"
        The partition.

    Returns
    -------
    Bins
        Per-sample dense ids, the keys of the non-empty bins and the edges of 1-D schemes.

    Examples
    --------
    >>> from calviz._binning import assign_bins
    >>> bins = assign_bins([0.05, 0.3, 0.35, 0.95], n_bins=4)
    >>> bins.ids.tolist(), bins.keys.tolist(), bins.n_bins_total
    ([0, 1, 1, 2], [0, 1, 3], 4)
    """
    m = check_n_bins(n_bins)
    if scheme == "equal_width":
        z = _as_unit_array(z, 1)
        edges = equal_width_edges(m) if m <= MAX_EDGE_TABLE else None
        ids, keys = dense_ids(equal_width_ids_kernel(z, m))
        return Bins(ids, keys, int(keys.size), m, m, scheme, edges)
    if scheme == "equal_mass":
        z = _as_unit_array(z, 1)
        edges = equal_mass_edges(z, m)
        ids, keys = dense_ids(equal_mass_ids(z, edges))
        return Bins(ids, keys, int(keys.size), int(edges.size - 1), m, scheme, edges)
    if scheme == "distinct":
        z = _as_unit_array(z, 1)
        values, ids = np.unique(z, return_inverse=True)
        ids = ids.astype(np.int64, copy=False).reshape(-1)
        keys = np.arange(values.size, dtype=np.int64)
        return Bins(ids, keys, int(values.size), int(values.size), m, scheme, values)
    if scheme == "simplex":
        arr = _as_unit_array(z, 2)
        ids, keys = dense_ids(simplex_cell_keys(arr, m))
        return Bins(ids, keys, int(keys.size), simplex_cell_count(arr.shape[1], m), m, scheme, None)
    if scheme == "grid":
        arr = _as_unit_array(z, 2)
        ids, keys = dense_ids(cubic_grid_keys(arr, m))
        return Bins(ids, keys, int(keys.size), m ** arr.shape[1], m, scheme, None)
    raise InputError(
        f"unknown binning scheme {scheme!r}; use 'equal_width', 'equal_mass', 'simplex', 'grid' or 'distinct'"
    )
