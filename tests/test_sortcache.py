"""The sorted keys shared by T-Cal, the cumulative tests and the score decomposition: a hit only for the
same read-only arrays with unchanged contents, and the same numbers with and without the cache."""

from __future__ import annotations

import numpy as np
import pytest

import calviz
from calviz import _sortcache as sc
from calviz._data import as_calibration_data
from calviz._kernels.sorting import radix_sort_keys, sort_unit_values_by_label, split_sorted_keys
from calviz._kernels.tcal import binary_sort_keys


@pytest.fixture
def small_cache(monkeypatch):
    monkeypatch.setattr(sc, "CACHED_ROWS", 50)
    sc._entry = None
    yield
    sc._entry = None


def _data(seed=0, n=3000, decimals=None):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(4, 0.7), size=n)
    if decimals is not None:  # ties
        p = np.round(p, decimals)
        p /= p.sum(axis=1, keepdims=True)
    return as_calibration_data(rng.integers(0, 4, size=n), p)


def test_keys_hit_and_equal_a_fresh_sort(small_cache):
    z, y = _data().top1()
    keys = sc.sorted_keys(z, y)
    assert np.array_equal(keys, radix_sort_keys(binary_sort_keys(z, y).view(np.int64)))
    assert sc.cached_sorted_keys(z, y) is keys
    assert sc.cached_sorted_keys(z.copy(), y) is None  # another array object
    events, others = split_sorted_keys(keys)
    expected = sort_unit_values_by_label(z, y)
    assert np.array_equal(events, expected[0]) and np.array_equal(others, expected[1])


def test_writable_or_small_views_are_not_kept(small_cache):
    z, y = _data().top1()
    sc.sorted_keys(z.copy(), y.copy())  # writable
    assert sc._entry is None
    sc.sorted_keys(z[:10], y[:10])  # below CACHED_ROWS
    assert sc._entry is None


def test_a_change_behind_a_read_only_view_is_a_miss(small_cache):
    rng = np.random.default_rng(1)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(float)
    z_view, y_view = p.view(), y.view()
    z_view.flags.writeable = y_view.flags.writeable = False
    sc.sorted_keys(z_view, y_view)
    assert sc.cached_sorted_keys(z_view, y_view) is not None
    y[3] = 1.0 - y[3]  # the caller's array changed in place
    assert sc.cached_sorted_keys(z_view, y_view) is None
    p[[0, 1]] = p[[1, 0]]  # a permutation keeps the pairs' multiset only if labels move too
    sc.sorted_keys(z_view, y_view)
    p[7] = p[7] / 2
    assert sc.cached_sorted_keys(z_view, y_view) is None


@pytest.mark.parametrize("decimals", [None, 2])
def test_same_numbers_with_and_without_the_cache(monkeypatch, decimals):
    data = _data(seed=3, decimals=decimals)

    def run():
        tcal = calviz.adaptive_tcal(data, resampling="analytic")
        tests = calviz.classical_tests(data)
        dec = calviz.score_decomposition(data)
        return (tcal.statistics.tolist(), tcal.pvalue, [(t.statistic, t.pvalue) for t in tests.tests],
                (dec.mean_score, dec.mcb, dec.dsc, dec.unc))

    monkeypatch.setattr(sc, "CACHED_ROWS", 10**9)
    sc._entry = None
    without = run()
    monkeypatch.setattr(sc, "CACHED_ROWS", 50)
    with_cache = run()
    assert sc._entry is not None  # the view was kept and reused
    assert with_cache == without
    sc._entry = None
