"""Binning schemes: exact edges, equal mass without split ties, the equal-volume simplex partition."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from calviz._binning import (
    assign_bins,
    cubic_grid_keys,
    dense_ids,
    equal_mass_edges,
    equal_mass_ids,
    equal_width_edges,
    equal_width_ids,
    simplex_cell_count,
    simplex_cell_keys,
)


# ------------------------------------------------------------------------------------------------
# equal width
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m", [1, 2, 3, 7, 10, 15, 22, 23, 39, 100, 1000])
def test_equal_width_points_on_edges(m):
    edges = equal_width_edges(m)
    ids = equal_width_ids(edges, m)
    expected = np.minimum(np.arange(m + 1), m - 1)  # edge i/m -> bin i, 1.0 -> last bin
    np.testing.assert_array_equal(ids, expected)
    # just below an interior edge is the previous bin
    below = np.nextafter(edges[1:-1], 0.0)
    np.testing.assert_array_equal(equal_width_ids(below, m), np.arange(m - 1))
    above = np.nextafter(edges[1:-1], 1.0)
    np.testing.assert_array_equal(equal_width_ids(above, m), np.arange(1, m))


def test_equal_width_floor_trap_is_handled():
    # floor(22 * (15/22)) == 14 in floating point; the point is on edge 15
    assert math.floor(22 * (15 / 22)) == 14
    assert equal_width_ids(np.array([15 / 22]), 22)[0] == 15


def test_equal_width_exactly_m_bins_and_extremes():
    z = np.array([0.0, 1.0, 1.0, 0.0, 0.5])
    b = assign_bins(z, n_bins=10)
    assert b.n_bins_total == 10 and b.keys.tolist() == [0, 5, 9]
    assert b.edges.shape == (11,) and b.edges[0] == 0.0 and b.edges[-1] == 1.0


@settings(max_examples=200, deadline=None)
@given(x=st.floats(0.0, 1.0), m=st.integers(1, 500))
def test_equal_width_matches_edge_scan(x, m):
    edges = equal_width_edges(m)
    i = int(equal_width_ids(np.array([x]), m)[0])
    assert 0 <= i < m
    assert edges[i] <= x
    assert x < edges[i + 1] or (i == m - 1 and x <= 1.0)


# ------------------------------------------------------------------------------------------------
# equal mass
# ------------------------------------------------------------------------------------------------
def test_equal_mass_balanced_and_ties_not_split():
    rng = np.random.default_rng(0)
    z = rng.uniform(size=1000)
    b = assign_bins(z, n_bins=10, scheme="equal_mass")
    counts = np.bincount(b.ids)
    assert b.n_bins_total == 10 and counts.min() >= 99 and counts.max() <= 101
    zt = np.round(z, 1)  # heavy ties
    b = assign_bins(zt, n_bins=10, scheme="equal_mass")
    for value in np.unique(zt):
        assert np.unique(b.ids[zt == value]).size == 1, f"tie at {value} split"
    assert b.ids.max() < b.n_bins_total <= 10


@settings(max_examples=100, deadline=None)
@given(z=arrays(np.float64, st.integers(1, 60), elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
                | st.floats(0, 1)),
       m=st.integers(1, 20))
def test_equal_mass_properties(z, m):
    edges = equal_mass_edges(z, m)
    assert edges[0] == 0.0 and edges[-1] == 1.0 and np.all(np.diff(edges) >= 0)
    assert edges.size - 1 <= m
    ids = equal_mass_ids(z, edges)
    assert ids.min() >= 0 and ids.max() < edges.size - 1
    for value in np.unique(z):
        assert np.unique(ids[z == value]).size == 1
    # every point lies in its bin [e_i, e_{i+1}]
    assert np.all(edges[ids] <= z) and np.all(z <= edges[ids + 1])


# ------------------------------------------------------------------------------------------------
# the equal-volume simplex partition
# ------------------------------------------------------------------------------------------------
def simplex_grid(K: int, resolution: int) -> np.ndarray:
    """All points of the simplex with coordinates in multiples of 1/resolution (including faces)."""
    pts = [c for c in itertools.product(range(resolution + 1), repeat=K - 1) if sum(c) <= resolution]
    arr = np.array([list(c) + [resolution - sum(c)] for c in pts], dtype=np.float64) / resolution
    return arr


@pytest.mark.parametrize("K,m", [(2, 4), (3, 2), (3, 3), (3, 5), (4, 2), (4, 3)])
def test_simplex_exactly_m_pow_cells_by_dense_sampling(K, m):
    rng = np.random.default_rng(K * 100 + m)
    # dense random interior points plus grid points on faces and vertices
    pts = np.vstack([rng.dirichlet(np.ones(K), size=60000 * K), simplex_grid(K, 4 * m)])
    keys = simplex_cell_keys(pts, m)
    assert np.unique(keys).size == m ** (K - 1) == simplex_cell_count(K, m)
    # boundary points (faces, vertices) land in one of those cells: no extra keys
    face_keys = simplex_cell_keys(simplex_grid(K, 4 * m), m)
    assert set(face_keys.tolist()) <= set(np.unique(keys[:-face_keys.size]).tolist())


@pytest.mark.parametrize("K,m", [(3, 3), (4, 2), (3, 6)])
def test_simplex_equal_volume_chi_square(K, m):
    rng = np.random.default_rng(1 + K + m)
    n = 40000
    keys = simplex_cell_keys(rng.dirichlet(np.ones(K), size=n), m)
    _, counts = np.unique(keys, return_counts=True)
    cells = m ** (K - 1)
    assert counts.size == cells
    chi2 = ((counts - n / cells) ** 2 / (n / cells)).sum()
    p = stats.chi2.sf(chi2, cells - 1)
    assert p > 1e-4, f"chi-square {chi2:.1f} on {cells - 1} df, p = {p:.2g}: cells not of equal volume"


def test_simplex_k2_equals_equal_width():
    rng = np.random.default_rng(3)
    z = np.r_[rng.uniform(size=500), np.arange(23) / 22]
    P = np.column_stack([z, 1 - z])
    np.testing.assert_array_equal(simplex_cell_keys(P, 22), equal_width_ids(z, 22))


def test_simplex_cells_are_small_and_convex():
    """Points sharing a key lie within one cell: their cumulative sums share floor(c) (up to the
    boundary c = m) and the order of fractional parts — checked against a direct construction."""
    rng = np.random.default_rng(9)
    m, K = 4, 4
    pts = rng.dirichlet(np.ones(K), size=3000)
    keys = simplex_cell_keys(pts, m)
    c = m * np.cumsum(pts, axis=1)[:, :-1]
    a = np.minimum(np.floor(c), m - 1)
    order = np.array([tuple(np.lexsort((-np.arange(K - 1), -(ci - ai))))
                      for ci, ai in zip(c, a, strict=True)])
    direct = {}
    for key, ai, oi in zip(keys, a, order, strict=True):
        direct.setdefault(int(key), set()).add((tuple(ai.astype(int)), tuple(oi)))
    assert all(len(v) == 1 for v in direct.values())
    assert len({next(iter(v)) for v in direct.values()}) == len(direct)


def python_simplex_key(row: np.ndarray, m: int) -> int:
    """Reference key in exact Python integers: (a, pi) from the cumulative sums, then
    rank(a) (K-1)! + Lehmer(pi) with rank(a) = sum_j C(a_j + j - 1, j)."""
    d = row.size - 1
    s = np.minimum(np.maximum(np.cumsum(row)[:-1], 0.0), 1.0)
    a = [int(equal_width_ids(np.array([sj]), m)[0]) for sj in s]
    frac = [min(max(m * sj - aj, 0.0), 1.0) for sj, aj in zip(s, a, strict=True)]
    perm = sorted(range(d), key=lambda j: (-frac[j], -j))
    lehmer = 0
    for j in range(d):
        lehmer = lehmer * (d - j) + sum(perm[t] < perm[j] for t in range(j + 1, d))
    rank = sum(math.comb(a[j] + j, j + 1) for j in range(d))
    return rank * math.factorial(d) + lehmer


@pytest.mark.parametrize("K,m", [(3, 2**30), (3, 7), (4, 10**5), (10, 120), (10, 3), (20, 2)])
def test_simplex_keys_match_exact_integer_reference(K, m):
    from calviz._binning import simplex_key_space

    rng = np.random.default_rng(K + m % 1000)
    pts = np.vstack([rng.dirichlet(np.ones(K) * 0.5, size=200), np.eye(K), np.full((1, K), 1.0 / K)])
    keys = simplex_cell_keys(pts, m)
    assert keys.tolist() == [python_simplex_key(r, m) for r in pts]
    assert keys.min() >= 0 and keys.max() < simplex_key_space(K, m)


def test_simplex_key_overflow_is_input_error():
    P = np.full((2, 30), 1 / 30)
    # K = 30: even 2 bins give 29! cells, so the message must not suggest fewer bins
    with pytest.raises(ValueError, match="no number of bins fits") as refused:
        simplex_cell_keys(P, 3)
    assert "fewer bins" not in str(refused.value) and "target='topk'" in str(refused.value)
    with pytest.raises(ValueError, match=r"use at most n_bins = \d+"):  # K = 10: a smaller m fits
        simplex_cell_keys(np.full((2, 10), 0.1), 500)


def test_cubic_grid_keys():
    z = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0], [0.26, 0.74]])
    keys = cubic_grid_keys(z, 4)
    assert keys.tolist() == [0 + 3 * 4, 2 + 2 * 4, 3 + 0, 1 + 2 * 4]
    b = assign_bins(z, n_bins=4, scheme="grid")
    assert b.n_bins_total == 16 and b.n_nonempty == 4


def test_dense_ids_small_and_large_keys():
    keys = np.array([5, 3, 5, 9, 3])
    ids, uniq = dense_ids(keys)
    assert uniq.tolist() == [3, 5, 9] and ids.tolist() == [1, 0, 1, 2, 0]
    big = np.array([2**60, 7, 2**60, -4])
    ids, uniq = dense_ids(big)
    np.testing.assert_array_equal(uniq[ids], big)
    ids, uniq = dense_ids(np.empty(0, np.int64))
    assert ids.size == 0 and uniq.size == 0


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3", None])
def test_bad_n_bins(bad):
    with pytest.raises(ValueError):
        assign_bins(np.array([0.1, 0.2]), n_bins=bad)


def test_bad_scheme_and_values():
    with pytest.raises(ValueError):
        assign_bins(np.array([0.1, 0.2]), scheme="quantile")
    with pytest.raises(ValueError):
        assign_bins(np.array([0.1, np.nan]))
    with pytest.raises(ValueError):
        assign_bins(np.array([0.1, 1.5]))
    with pytest.raises(ValueError):
        assign_bins(np.array([0.1, 0.5]), scheme="simplex")


@settings(max_examples=80, deadline=None)
@given(
    z=arrays(np.float64, st.tuples(st.integers(0, 8), st.integers(1, 4)),
             elements=st.floats(allow_nan=True, allow_infinity=True) | st.floats(0, 1)),
    m=st.integers(-2, 2**41) | st.just(2**40),
    scheme=st.sampled_from(["equal_width", "equal_mass", "simplex", "grid", "distinct", "other"]),
    flat=st.booleans(),
)
def test_property_assign_bins_validates_or_value_error(z, m, scheme, flat):
    arr = z[:, 0] if flat else z
    try:
        b = assign_bins(arr, n_bins=m, scheme=scheme)
    except ValueError:
        return
    assert b.ids.shape == (arr.shape[0],)
    assert b.n_nonempty == b.keys.size <= max(arr.shape[0], 0)
    if b.ids.size:
        assert b.ids.min() >= 0 and b.ids.max() < b.n_nonempty


@settings(max_examples=80, deadline=None)
@given(keys=arrays(np.int64, st.integers(0, 30), elements=st.integers(-(2**62), 2**62) | st.integers(0, 40)))
def test_property_dense_ids(keys):
    ids, uniq = dense_ids(keys)
    np.testing.assert_array_equal(uniq[ids], keys)
    assert np.all(np.diff(uniq) > 0)


@settings(max_examples=80, deadline=None)
@given(z=arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 6)),
                elements=st.floats(0, 1) | st.floats(allow_nan=True, allow_infinity=True)),
       m=st.integers(-1, 10**6), which=st.sampled_from(["simplex", "grid", "width", "mass"]))
def test_property_key_functions_validate_or_value_error(z, m, which):
    try:
        if which == "simplex":
            out = simplex_cell_keys(z, m)
        elif which == "grid":
            out = cubic_grid_keys(z, m)
        elif which == "width":
            out = equal_width_ids(z.ravel(), m)
        else:
            out = equal_mass_edges(z.ravel(), m)
    except ValueError:
        return
    assert np.all(out >= 0)
