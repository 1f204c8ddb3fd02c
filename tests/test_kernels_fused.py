"""The one-pass checking kernels (validation + top-1 view + first-order equal-width sums in one read) give
the numbers of a direct computation and of the validating path, and refuse bad input with the validating
path's message: ties, predictions on bin edges, 0 and 1, n = 2, all-correct / all-wrong labels, chunk
edges of the threaded split, float32 = float64 cast, every label dtype."""

import numba
import numpy as np
import pytest

import calviz
from calviz import _threads
from calviz._sums import (
    checked_first_order_sums,
    equal_width_1d_sums,
    equal_width_first_order_sums,
    plugin_ece_l1,
    plugin_ece_sq,
    plugin_mce,
)

M = 22  # floor(m z) disagrees with the float edges i/m for some z (e.g. 15/22)


@pytest.fixture
def small_chunks(monkeypatch):
    """Split from 64 rows on, so that small inputs take the chunked, threaded path."""
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ROWS", 64)


def direct(z, y, m):
    """Per-bin count, Σz, Σy by a binary search on the float edges i/m (the last bin closed at 1)."""
    edges = np.arange(m + 1) / m
    ids = np.clip(np.searchsorted(edges, z, side="right") - 1, 0, m - 1)
    count = np.bincount(ids, minlength=m)
    z_sum = np.bincount(ids, weights=z, minlength=m)
    y_sum = np.bincount(ids, weights=y.astype(np.float64), minlength=m)
    return count, z_sum, y_sum


def direct_estimates(z, y, m):
    """(ℓ1 ECE, ℓ2 ECE, MCE) and the reliability counts / means by the direct per-bin sums."""
    count, z_sum, y_sum = direct(z, y, m)
    full = count > 0
    gap = y_sum[full] - z_sum[full]
    n = z.shape[0]
    l1 = np.abs(gap).sum() / n
    l2 = np.sqrt((gap ** 2 / count[full]).sum() / n)
    mce = np.abs(gap / count[full]).max()
    return (l1, l2, mce), count, z_sum, y_sum


def assert_same_reliability(a, b):
    """Every field of two ReliabilityData equal (arrays elementwise, NaN equal to NaN)."""
    for name in a.__dataclass_fields__:
        left, right = getattr(a, name), getattr(b, name)
        if isinstance(left, np.ndarray):
            np.testing.assert_array_equal(left, right)
        else:
            assert left == right, name


def direct_top1(probs, labels):
    return probs.max(axis=1), (probs.argmax(axis=1) == labels).astype(np.float64)


def binary_sample(n, seed, labels="random"):
    rng = np.random.default_rng(seed)
    p = rng.integers(0, 4 * M + 1, size=n) / (4 * M)  # many exactly on edges, 0 and 1 included
    p[: n // 2] = rng.uniform(size=n // 2)
    p[:2] = [0.0, 1.0]
    y = {"random": (rng.uniform(size=n) < p).astype(np.int64), "all_correct": np.ones(n, dtype=np.int64),
         "all_wrong": np.zeros(n, dtype=np.int64)}[labels]
    return p, y


def multiclass_sample(n, seed, k=4):
    """Rows with tied maxima (the lowest index wins) and rows whose maximum is on a bin edge."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(k), size=n)
    probs[::5] = np.full(k, 1.0 / k)  # all tied
    tied = np.zeros(k)
    tied[1] = tied[2] = 0.5
    probs[1::7] = tied
    edge = np.full(k, 5 / (11 * (k - 1)))
    edge[0] = 6 / 11
    probs[2::9] = edge
    labels = rng.integers(0, k, size=n)
    return probs, labels


def check_estimates(y, p, m, z_ref, y_ref):
    (l1, l2, mce), count, z_sum, y_sum = direct_estimates(z_ref, y_ref, m)
    assert calviz.binned_ece(y, p, n_bins=m).value == pytest.approx(l1, rel=1e-12, abs=1e-15)
    assert calviz.binned_ece(y, p, n_bins=m, p=2).value == pytest.approx(l2, rel=1e-12, abs=1e-15)
    assert calviz.mce(y, p, n_bins=m).value == pytest.approx(mce, rel=1e-12, abs=1e-15)
    rel = calviz.reliability(y, p, n_bins=m)
    np.testing.assert_array_equal(rel.counts, count)
    full = count > 0
    np.testing.assert_allclose(rel.mean_confidence[full], z_sum[full] / count[full], rtol=1e-12)
    np.testing.assert_allclose(rel.observed_frequency[full], y_sum[full] / count[full], rtol=1e-12)
    assert np.isnan(rel.mean_confidence[~full]).all()
    # the validating path (validated data, as every surface hands down) gives the same result
    data = calviz.as_calibration_data(y, p)
    assert calviz.binned_ece(data, n_bins=m) == calviz.binned_ece(y, p, n_bins=m)
    assert calviz.binned_ece(data, n_bins=m, p="max") == calviz.binned_ece(y, p, n_bins=m, p="max")
    assert_same_reliability(calviz.reliability(data, n_bins=m), rel)


@pytest.mark.parametrize("n", [2, 3, 63, 64, 65, 1001])
@pytest.mark.parametrize("labels", ["random", "all_correct", "all_wrong"])
def test_binary_equals_direct_sums(small_chunks, n, labels):
    p, y = binary_sample(n, n, labels)
    check_estimates(y, p, M, p, y)


@pytest.mark.parametrize("n", [2, 64, 1001])
def test_top1_equals_direct_sums(small_chunks, n):
    probs, labels = multiclass_sample(n, n)
    conf, correct = direct_top1(probs, labels)
    check_estimates(labels, probs, M, conf, correct)
    check_estimates(labels, probs, 1, conf, correct)
    result = calviz.binned_ece(labels, probs, n_bins=M)
    assert (result.target, result.n_classes, result.n, result.n_bins_total) == ("top1", 4, n, M)


def test_all_correct_and_all_wrong_top1(small_chunks):
    probs, _ = multiclass_sample(500, 1)
    for labels in (probs.argmax(axis=1), (probs.argmax(axis=1) + 1) % 4):
        conf, correct = direct_top1(probs, labels)
        check_estimates(labels, probs, 15, conf, correct)


def test_equal_the_full_sums_and_do_not_depend_on_the_threads(small_chunks):
    p, y = binary_sample(5000, 7)
    full = equal_width_1d_sums(p, y, 15)
    first = checked_first_order_sums(p, y, 15, 1e-6)
    np.testing.assert_array_equal(first.keys, full.keys)
    np.testing.assert_array_equal(first.count, full.count)
    np.testing.assert_array_equal(first.z_sum, full.z_sum)  # same rows, same chunks, same order
    np.testing.assert_array_equal(first.y_sum, full.y_sum)
    for finaliser in (plugin_ece_l1, plugin_ece_sq, plugin_mce):
        assert finaliser(first) == pytest.approx(finaliser(full), rel=1e-12)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = checked_first_order_sums(p, y, 15, 1e-6)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one.z_sum, first.z_sum)
    np.testing.assert_array_equal(one.count, first.count)
    np.testing.assert_array_equal(equal_width_first_order_sums(p, y, 15).z_sum, first.z_sum)


@pytest.mark.parametrize("label_dtype", [np.bool_, np.int8, np.uint8, np.int32, np.uint64, np.float32, float])
def test_narrow_inputs_equal_the_wide_ones(small_chunks, label_dtype):
    """float32 predictions are read as stored: the result equals that of the same values cast to
    float64, whatever the labels' dtype."""
    p, y = binary_sample(777, 3)
    p32 = p.astype(np.float32)
    wide = p32.astype(np.float64)
    for p_ece in (1, 2, "max"):
        assert calviz.binned_ece(y.astype(label_dtype), p32, p=p_ece) == calviz.binned_ece(y, wide, p=p_ece)
    assert_same_reliability(calviz.reliability(y.astype(label_dtype), p32), calviz.reliability(y, wide))
    probs, labels = multiclass_sample(777, 4)
    probs32 = probs.astype(np.float32)
    probs32 /= probs32.sum(axis=1, keepdims=True)
    if label_dtype is not np.bool_:
        narrow = calviz.binned_ece(labels.astype(label_dtype), probs32)
        assert narrow == calviz.binned_ece(labels, probs32.astype(np.float64))
        conf, correct = direct_top1(probs32.astype(np.float64), labels)
        check_estimates(labels.astype(label_dtype), probs32, 15, conf, correct)


def message(y, p):
    with pytest.raises(calviz.InputError) as refused:
        calviz.as_calibration_data(y, p)
    return str(refused.value)


def assert_same_refusal(y, p):
    expected = message(y, p)
    for call in (lambda: calviz.binned_ece(y, p), lambda: calviz.binned_ece(y, p, p=2),
                 lambda: calviz.reliability(y, p), lambda: calviz.mce(y, p)):
        with pytest.raises(calviz.InputError) as refused:
            call()
        assert str(refused.value) == expected


def test_bad_values_at_every_chunk_edge_give_the_validating_message(small_chunks):
    n = 301
    bounds = _threads.chunk_bounds(n)
    assert len(bounds) == _threads.CHUNKS
    p, y = binary_sample(n, 11)
    probs, labels = multiclass_sample(n, 12, k=3)
    for start, stop in bounds:
        for row in (start, stop - 1):
            for bad in (np.nan, np.inf, -0.25, 1.0 + 4e-16):
                q = p.copy()
                q[row] = bad
                assert_same_refusal(y, q)
                r = probs.copy()
                r[row, 1] = bad
                assert_same_refusal(labels, r)
            for bad in (2, -1, 0.5, np.nan):
                z = y.astype(float)
                z[row] = bad
                assert_same_refusal(z, p)
                k = labels.astype(float)
                k[row] = 3 if bad == 2 else bad
                assert_same_refusal(k, probs)
            r = probs.copy()
            r[row] = [0.5, 0.5, 2e-6]  # in [0, 1], sums to 1 + 2e-6
            assert_same_refusal(labels, r)
            small = labels.astype(np.uint8)
            small[row] = 200
            assert_same_refusal(small, probs)


def test_row_sums_at_the_tolerance_are_accepted():
    probs = np.array([[0.5, 0.5 + 1e-6], [0.3, 0.7], [0.2, 0.8 - 1e-6]])
    labels = np.array([1, 1, 0])
    expected = calviz.binned_ece(calviz.as_calibration_data(labels, probs))
    assert calviz.binned_ece(labels, probs) == expected


def test_other_inputs_take_the_validating_path():
    """Lists, Fortran order, one-hot labels, weights, other targets and schemes: the results of the
    validating path (which these inputs take)."""
    probs, labels = multiclass_sample(200, 5)
    data = calviz.as_calibration_data(labels, probs)
    assert calviz.binned_ece(labels.tolist(), probs.tolist()) == calviz.binned_ece(data)
    assert calviz.binned_ece(labels, np.asfortranarray(probs)) == calviz.binned_ece(data)
    assert calviz.binned_ece(np.eye(4)[labels], probs) == calviz.binned_ece(data)
    mass = calviz.binned_ece(labels, probs, scheme="equal_mass")
    assert mass == calviz.binned_ece(data, scheme="equal_mass")
    assert calviz.binned_ece(labels, probs, target="classwise", class_index=2) == calviz.binned_ece(
        data, target="classwise", class_index=2)
    weighted = calviz.binned_ece(labels, probs, sample_weight=np.ones(200))
    assert weighted.value == pytest.approx(calviz.binned_ece(data).value, rel=1e-12)
    with pytest.raises(calviz.InputError, match="binary target"):
        calviz.binned_ece(labels, probs, target="binary")
    with pytest.raises(calviz.InputError, match="at least 2 samples"):
        calviz.binned_ece(np.array([1]), np.array([0.5]))


def test_chunked_range_checks_see_every_chunk(small_chunks):
    """The threaded validation checks fail on one bad value at the first or last row of any chunk."""
    from calviz._kernels.validation import all_in_unit, int_labels_in_range, on_simplex

    n = 301
    z = np.full(n, 0.5)
    rows = np.full((n, 2), 0.5)
    labels = np.zeros(n, dtype=np.int64)
    assert all_in_unit(z) and int_labels_in_range(labels, 2) and on_simplex(rows, 1e-6)
    for start, stop in _threads.chunk_bounds(n):
        for row in (start, stop - 1):
            for bad in (np.nan, -0.1, 1.0 + 4e-16):
                z[row] = bad
                assert not all_in_unit(z)
                rows[row, 1] = bad
                assert not on_simplex(rows, 1e-6)
            z[row] = 0.5
            rows[row] = [0.5, 0.5 + 2e-6]
            assert not on_simplex(rows, 1e-6)
            rows[row] = 0.5
            for bad in (2, -1):
                labels[row] = bad
                assert not int_labels_in_range(labels, 2)
            labels[row] = 0
    assert all_in_unit(np.empty(0)) and int_labels_in_range(np.empty(0, dtype=np.int64), 2)


@pytest.mark.parametrize("m", [1, 3, 10, 15, 22, 49, 1000, (1 << 16) + 3])
def test_values_within_ulps_of_every_edge_are_binned_by_the_float_edges(m):
    """The binary kernel reads the float edges i/m only when m z is within rounding of an integer: values
    0–3 ulps either side of every edge (and 0 and 1) land where a binary search on the edges puts them."""
    from calviz._binning import equal_width_bounds
    from calviz._kernels.fused import COUNT, Y_SUM, Z_SUM, binary_first_order_rows

    edges = np.arange(m + 1) / m
    z = edges
    for _ in range(3):
        z = np.concatenate([z, np.nextafter(z, 2.0), np.nextafter(z, -1.0)])
    z = np.unique(np.clip(z, 0.0, 1.0))
    y = (np.arange(z.shape[0]) % 3 == 0).astype(np.int64)
    acc, ok = binary_first_order_rows(z, y, m, *equal_width_bounds(m), 0, z.shape[0])
    count, z_sum, y_sum = direct(z, y, m)
    assert ok
    np.testing.assert_array_equal(acc[:, COUNT], count)
    np.testing.assert_array_equal(acc[:, Y_SUM], y_sum)
    np.testing.assert_allclose(acc[:, Z_SUM], z_sum, rtol=1e-12, atol=0)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 64, 67, 301])
def test_top1_view_four_rows_at_a_time_equals_argmax(small_chunks, n):
    """The validated top-1 view (rows reduced four at a time, the rest one by one, in threaded chunks
    whose lengths are not multiples of 4) equals argmax / max, ties to the lowest index."""
    from calviz._kernels.views import top1_of_rows

    for k in (3, 4, 10):
        probs, labels = multiclass_sample(n, n + k, k=k)
        for matrix in (probs, probs.astype(np.float32)):
            conf, correct = top1_of_rows(matrix, labels)
            np.testing.assert_array_equal(conf, matrix.max(axis=1))
            np.testing.assert_array_equal(correct, (matrix.argmax(axis=1) == labels).astype(np.float64))


@pytest.mark.parametrize("n", [2, 3, 67, 301])
def test_binary_top1_view_equals_the_argmax_of_the_two_columns(small_chunks, n):
    """The top-1 view of binary data (in threaded chunks) is the argmax of [1 − p, p] (p = ½ goes to
    class 0) and whether it is the label."""
    from calviz._kernels.views import top1_of_binary

    p, y = binary_sample(n, n + 1)
    p[1::5] = 0.5
    full = np.column_stack([1.0 - p, p])
    conf, correct = top1_of_binary(p, y)
    np.testing.assert_array_equal(conf, full.max(axis=1))
    np.testing.assert_array_equal(correct, (full.argmax(axis=1) == y).astype(np.float64))


@pytest.mark.parametrize("n", [2, 3, 5, 67, 301])
def test_checking_top1_view_equals_the_two_passes(small_chunks, n):
    """The validation read of an (n, K) matrix that also reduces it to its top-1 view (two rows side by
    side, the odd row alone, in threaded chunks of odd lengths) answers as :func:`on_simplex` and writes
    argmax / max, ties to the lowest index; the view kept by ``as_calibration_data`` is that one."""
    from calviz._kernels.validation import on_simplex, on_simplex_top1

    for k in (3, 4, 10):
        probs, labels = multiclass_sample(n, n + k, k=k)
        ok, conf, correct = on_simplex_top1(probs, labels, 1e-6)
        assert ok
        np.testing.assert_array_equal(conf, probs.max(axis=1))
        np.testing.assert_array_equal(correct, (probs.argmax(axis=1) == labels).astype(np.float64))
        data = calviz.as_calibration_data(labels, probs)
        kept = data.top1()
        np.testing.assert_array_equal(kept[0], conf)
        np.testing.assert_array_equal(kept[1], correct)
        assert not kept[0].flags.writeable and not kept[1].flags.writeable
        fresh = calviz.CalibrationData(data.probs, data.labels).top1()  # the lazy view, computed alone
        np.testing.assert_array_equal(fresh[0], kept[0])
        np.testing.assert_array_equal(fresh[1], kept[1])
        for start, stop in _threads.chunk_bounds(n):
            for row in {start, stop - 1}:
                for column in {0, k - 1}:
                    for bad in (np.nan, np.inf, -np.inf, -0.25, 1.0 + 4e-16):
                        r = probs.copy()
                        r[row, column] = bad
                        assert not on_simplex_top1(r, labels, 1e-6)[0] and not on_simplex(r, 1e-6)
                    r = probs.copy()
                    r[row, column] += 2e-6  # in [0, 1] unless the value was 1: sums to 1 + 2e-6
                    assert not on_simplex_top1(r, labels, 1e-6)[0] and not on_simplex(r, 1e-6)
                    r[row, column] = -0.0  # a negative zero is in [0, 1]
                    r[row, (column + 1) % k] += probs[row, column]
                    assert on_simplex_top1(r, labels, 1e-6)[0] == on_simplex(r, 1e-6)


def test_refusals_keep_their_order_when_the_labels_are_read_first():
    """Bad y_prob and bad y_true together: y_prob's refusal, as before the labels were read first; bad
    labels alone: theirs (one-hot, class names, pos_label, out of range, strings)."""
    probs, labels = multiclass_sample(40, 3, k=3)
    bad_probs = probs.copy()
    bad_probs[7, 1] = np.nan
    for bad_labels in (np.full(40, 5), np.full(40, 0.5), np.array(["a"] * 40), np.zeros((40, 3))):
        with pytest.raises(calviz.InputError, match="non-finite value .* at row 7, column 1"):
            calviz.as_calibration_data(bad_labels, bad_probs)
    with pytest.raises(calviz.InputError, match="non-finite value .* at row 7, column 1"):
        calviz.as_calibration_data(labels, bad_probs, pos_label=1)
    with pytest.raises(calviz.InputError, match="row 0 has 5"):
        calviz.as_calibration_data(np.full(40, 5), probs)
    with pytest.raises(calviz.InputError, match="pos_label is for binary predictions"):
        calviz.as_calibration_data(labels, probs, pos_label=1)
    with pytest.raises(calviz.InputError, match="one-hot y_true row 0"):
        calviz.as_calibration_data(np.zeros((40, 3)), probs)
    with pytest.raises(calviz.InputError, match="confidence form"):
        calviz.as_calibration_data(labels, probs, confidence_form=True)
    names = np.array(["a", "b", "c"])[labels]
    by_name = calviz.as_calibration_data(names, probs)
    np.testing.assert_array_equal(by_name.top1()[1], (probs.argmax(axis=1) == labels).astype(np.float64))


@pytest.mark.parametrize("n", [2, 3, 67, 301])
@pytest.mark.parametrize("labels_of", ["random", "all_correct", "all_wrong"])
def test_a_float32_matrix_gives_the_numbers_of_its_float64_copy(small_chunks, n, labels_of):
    """An (n, K) float32 matrix is checked and reduced to its top-1 view as given (the data hold it
    without a float64 copy until a view reads ``probs``); the rule: every view, estimate and message is
    the one of the same values widened to float64 (widening is exact), bit for bit.  Ties, maxima on bin
    edges (0.5, 0.75), n = 2, all-correct / all-wrong labels, chunk edges of the threaded split."""
    k = 4
    probs, labels = multiclass_sample(n, 11 * n, k=k)
    matrix = probs.astype(np.float32)
    matrix[3::11] = [0.75, 0.125, 0.125, 0.0]  # a maximum on an edge of 4, 8, 20 ... equal-width bins
    top = matrix.argmax(axis=1)
    labels = {"random": labels, "all_correct": top, "all_wrong": (top + 1) % k}[labels_of]
    wide = matrix.astype(np.float64)
    narrow_data = calviz.as_calibration_data(labels, matrix)
    wide_data = calviz.as_calibration_data(labels, wide)
    for a, b in zip(narrow_data.top1(), wide_data.top1(), strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == np.float64
    assert narrow_data._probs_as_stored().dtype == np.float32  # the top-1 view did not widen it
    for m in (4, 15):
        for scheme in ("equal_width", "equal_mass"):
            for p in (1, 2, "max"):
                expected = calviz.binned_ece(wide_data, n_bins=m, scheme=scheme, p=p)
                assert calviz.binned_ece(narrow_data, n_bins=m, scheme=scheme, p=p) == expected
                assert calviz.binned_ece(labels, matrix, n_bins=m, scheme=scheme, p=p) == expected
        assert_same_reliability(calviz.reliability(narrow_data, n_bins=m),
                                calviz.reliability(wide_data, n_bins=m))
    for c in range(k):
        for a, b in zip(narrow_data.classwise(c), wide_data.classwise(c), strict=True):
            np.testing.assert_array_equal(a, b)
    assert narrow_data._probs_as_stored().dtype == np.float32  # one column widened at a time
    half = narrow_data.subsample(max(2, n // 2), seed=1)
    for a, b in zip(half.top1(), wide_data.subsample(max(2, n // 2), seed=1).top1(), strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(narrow_data.topk(2), wide_data.topk(2), strict=True):
        np.testing.assert_array_equal(a, b)
    assert narrow_data.probs.dtype == np.float64 and not narrow_data.probs.flags.writeable
    np.testing.assert_array_equal(narrow_data.probs, wide)
    assert narrow_data._probs_as_stored() is narrow_data.probs  # widened once, then kept
    scaled = matrix * np.float32(3.0)
    rescaled = calviz.as_calibration_data(labels, scaled, renormalize=True)
    np.testing.assert_array_equal(rescaled.probs, calviz.as_calibration_data(
        labels, scaled.astype(np.float64), renormalize=True).probs)  # divided in float64, as before


def test_a_float32_matrix_is_refused_with_the_message_of_its_float64_copy():
    """Refusals of a float32 matrix word the float64 values (a row sum, the bad value) as before."""
    probs, labels = multiclass_sample(40, 5, k=3)
    for bad in (np.nan, -0.25, 1.5, 2e-5):
        matrix = probs.astype(np.float32)
        matrix[7, 1] = bad if bad != 2e-5 else matrix[7, 1] + np.float32(bad)
        with pytest.raises(calviz.InputError) as narrow:
            calviz.as_calibration_data(labels, matrix)
        with pytest.raises(calviz.InputError) as wide:
            calviz.as_calibration_data(labels, matrix.astype(np.float64))
        assert str(narrow.value) == str(wide.value)
        assert "row 7" in str(narrow.value)
