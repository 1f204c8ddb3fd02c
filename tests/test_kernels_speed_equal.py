"""The chunked, threaded one-pass kernels give the numbers of the direct sequential ones."""

import numba
import numpy as np
import pytest

import calviz
from calviz import _threads
from calviz._binning import assign_bins, equal_width_bounds
from calviz._kernels.ece import equal_width_1d_acc
from calviz._kernels.views import top1_of_binary, top1_of_rows
from calviz._sums import bin_sums, equal_width_1d_sums


@pytest.fixture
def small_chunks(monkeypatch):
    """Split from 1000 rows on, so that small inputs take the chunked, threaded path."""
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 1000)


def _sample(n, seed):
    rng = np.random.default_rng(seed)
    z = rng.uniform(size=n)
    z[: n // 4] = rng.integers(0, 23, size=n // 4) / 22.0  # on the edges i/22 and i/11, 0 and 1
    z[n // 4: n // 3] = 0.5
    y = (rng.uniform(size=n) < z).astype(np.int64)
    return z, y


@pytest.mark.parametrize("m", [1, 2, 11, 15, 22, 1000])
def test_equal_width_sums_equal_the_direct_sums(small_chunks, m):
    z, y = _sample(5003, seed=m)
    fused = equal_width_1d_sums(z, y, m)
    direct = bin_sums(assign_bins(z, n_bins=m), z, y.astype(np.float64))
    np.testing.assert_array_equal(fused.keys, direct.keys)
    np.testing.assert_array_equal(fused.count, direct.count)
    for name in ("resid_sum", "resid_sq_sum", "z_sum", "y_sum", "null_cov_sum", "null_cov_sq_trace"):
        np.testing.assert_allclose(getattr(fused, name), getattr(direct, name), rtol=1e-12, atol=1e-12)


def test_chunked_sums_do_not_depend_on_the_threads(small_chunks):
    z, y = _sample(20000, seed=5)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = equal_width_1d_sums(z, y, 15)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = equal_width_1d_sums(z, y, 15)
    finally:
        numba.set_num_threads(before)
    for name in ("count", "resid_sum", "resid_sq_sum", "z_sum", "null_cov_sq_trace"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))


def test_narrow_dtypes_read_as_they_are():
    z, y = _sample(3000, seed=2)
    z32 = z.astype(np.float32)
    lower, upper = equal_width_bounds(22)
    wide = equal_width_1d_acc(z32.astype(np.float64), y, 22, lower, upper, 0, z.shape[0])
    narrow = equal_width_1d_acc(z32, y.astype(np.uint8), 22, lower, upper, 0, z.shape[0])
    np.testing.assert_array_equal(narrow, wide)


def test_binned_ece_and_reliability_unchanged(small_chunks):
    z, y = _sample(4000, seed=9)
    for m in (10, 22):
        ids = assign_bins(z, n_bins=m).ids
        resid = np.bincount(ids, weights=y - z)
        assert calviz.binned_ece(y, z, n_bins=m).value == pytest.approx(np.abs(resid).sum() / z.size,
                                                                         rel=1e-12)
        rel = calviz.reliability(y, z, n_bins=m)
        counts = np.bincount(assign_bins(z, n_bins=m).ids)
        np.testing.assert_array_equal(rel.counts[rel.counts > 0], counts)


def test_top1_views_equal_argmax(small_chunks):
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(5), size=3001)
    probs[:500] = np.round(probs[:500], 1)  # ties inside rows
    probs[500:600] = 0.2
    labels = rng.integers(0, 5, size=3001)
    conf, correct = top1_of_rows(probs, labels)
    np.testing.assert_array_equal(conf, probs.max(axis=1))
    np.testing.assert_array_equal(correct, (probs.argmax(axis=1) == labels).astype(float))
    p = rng.uniform(size=3001)
    p[:300] = 0.5
    y = rng.integers(0, 2, size=3001)
    conf, correct = top1_of_binary(p, y)
    full = np.column_stack([1 - p, p])
    np.testing.assert_array_equal(conf, full.max(axis=1))
    np.testing.assert_array_equal(correct, (full.argmax(axis=1) == y).astype(float))
    data = calviz.as_calibration_data(y, p)
    np.testing.assert_array_equal(data.top1()[0], conf)


def test_chunk_bounds_cover_every_row():
    for n in (0, 1, 5, _threads.PARALLEL_MIN_ROWS - 1, _threads.PARALLEL_MIN_ROWS + 3):
        bounds = _threads.chunk_bounds(n)
        assert bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))


def test_kernel_errors_reach_the_caller(small_chunks):
    def failing(start, stop):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        _threads.map_chunks(failing, 5000)
