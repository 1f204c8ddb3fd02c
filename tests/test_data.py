"""Input validation (product.md "Input conventions") and the views of CalibrationData."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from calviz._data import (
    SIMPLEX_TOLERANCE,
    CalibrationData,
    InputError,
    as_calibration_data,
    binary_view,
    check_alpha,
    from_logits,
)

P3 = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]])
Y3 = np.array([1, 0, 2, 2])


def err(y_true, y_prob, **kw) -> str:
    with pytest.raises(InputError) as info:
        as_calibration_data(y_true, y_prob, **kw)
    assert isinstance(info.value, ValueError)
    return str(info.value)


# -- valid inputs --------------------------------------------------------------------------------------
def test_binary_multiclass_and_dtypes():
    d = as_calibration_data([0, 1, 1], [0.1, 0.9, 1.0])
    assert d.is_binary and d.n == 3 and d.n_classes == 2 and repr(d) == "CalibrationData(n=3, binary)"
    assert d.labels.dtype == np.int64 and d.probs.dtype == np.float64
    for labels in (
        [0, 1, 1],
        [0.0, 1.0, 1.0],
        [False, True, True],
        np.array([0, 1, 1], dtype=np.uint8),
        np.array([0, 1, 1], dtype=np.int32),
        np.array([0, 1, 1], dtype=object),
    ):
        np.testing.assert_array_equal(as_calibration_data(labels, [0.1, 0.9, 1.0]).labels, [0, 1, 1])
    for probs in (
        np.array([0.25, 0.5, 1.0], np.float32),
        np.array([0.25, 0.5, 1.0], np.float16),
        np.array([0, 1, 1]),
        [0.25, 0.5, 1],
    ):
        d = as_calibration_data([0, 1, 1], probs)
        assert d.probs.dtype == np.float64 and d.probs.flags.c_contiguous
    d = as_calibration_data(Y3, P3)
    assert not d.is_binary and d.n_classes == 3 and repr(d) == "CalibrationData(n=4, 3-class)"
    d = as_calibration_data(Y3.tolist(), P3.tolist())  # nested lists
    np.testing.assert_array_equal(d.probs, P3)


def test_all_correct_all_wrong_and_constant_labels_are_valid():
    assert as_calibration_data([1, 1], [0.3, 0.9]).n == 2
    assert as_calibration_data([0, 0, 0], [0.3, 0.9, 0.1]).n == 3
    assert as_calibration_data([0, 0], P3[:2]).n == 2  # only one class observed: fine


def test_one_hot_labels():
    onehot = np.eye(3)[Y3]
    np.testing.assert_array_equal(as_calibration_data(onehot, P3).labels, Y3)
    np.testing.assert_array_equal(as_calibration_data(onehot.astype(bool), P3).labels, Y3)
    np.testing.assert_array_equal(
        as_calibration_data(np.eye(2)[[0, 1, 1]], [0.2, 0.7, 0.9]).labels, [0, 1, 1]
    )
    bad = onehot.copy()
    bad[2] = [0, 1, 1]
    m = err(bad, P3)
    assert "row 2" in m and "one-hot" in m
    bad = onehot.copy()
    bad[1] = [0, 0, 0]
    assert "row 1" in err(bad, P3)
    bad = onehot.copy()
    bad[3] = [0, 0.5, 0.5]
    assert "row 3" in err(bad, P3)
    bad = onehot.copy()
    bad[0, 0] = np.nan
    assert "row 0" in err(bad, P3)
    assert "shape (4, 2)" in err(onehot[:, :2], P3)


def test_float32_storage_round_off_is_accepted():
    rng = np.random.default_rng(0)
    p32 = rng.dirichlet(np.ones(50), size=1000).astype(np.float32)
    dev = np.abs(p32.astype(np.float64).sum(axis=1) - 1)
    assert dev.max() > 1e-9  # the rows really are off (by ~1e-7)
    d = as_calibration_data(rng.integers(0, 50, 1000), p32)
    assert d.probs.dtype == np.float64
    off = P3.copy()
    off[0] += [SIMPLEX_TOLERANCE / 4, 0, 0]
    assert as_calibration_data(Y3, off).n == 4
    off[0] += [2 * SIMPLEX_TOLERANCE, 0, 0]
    m = err(Y3, off)
    assert "row 0" in m and "sum to 1" in m and "renormalize=True" in m


def test_renormalize():
    raw = P3 * np.array([[2.0], [1.0], [0.5], [3.0]])
    m = err(Y3, raw)
    assert "row 0" in m
    d = as_calibration_data(Y3, raw, renormalize=True)
    np.testing.assert_allclose(d.probs, P3, rtol=1e-15)
    np.testing.assert_allclose(d.probs.sum(axis=1), 1, rtol=0, atol=1e-15)
    zero = raw.copy()
    zero[2] = 0
    assert "row 2 sums to 0" in err(Y3, zero, renormalize=True)
    neg = raw.copy()
    neg[1, 2] = -0.1
    m = err(Y3, neg, renormalize=True)
    assert "row 1, column 2" in m
    nan = raw.copy()
    nan[3, 1] = np.nan
    assert "row 3, column 1" in err(Y3, nan, renormalize=True)


# -- every rule of the input conventions, with row/column in the message -------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_probabilities(bad):
    p = np.array([0.1, 0.2, 0.3, 0.4])
    p[2] = bad
    m = err([0, 1, 0, 1], p)
    assert "row 2" in m and ("non-finite" in m or "[0, 1]" in m)
    q = P3.copy()
    q[1, 2] = bad
    m = err(Y3, q)
    assert "row 1" in m and "column 2" in m


@pytest.mark.parametrize("value", [-1e-12, 1 + 1e-12, 2.0, -5.0])
def test_probabilities_outside_unit_interval(value):
    p = np.array([0.1, 0.2, 0.3, 0.4])
    p[3] = value
    m = err([0, 1, 0, 1], p)
    assert "row 3" in m and "[0, 1]" in m and repr(float(value)) in m
    q = np.array([[0.5, 0.5], [1.2, -0.2]])
    m = err([0, 1], q)
    assert "row 1, column 0" in m and "1.2" in m


@pytest.mark.parametrize("bad_label", [2, -1, 0.5, np.nan, np.inf, 1e300])
def test_labels_out_of_range_or_not_integer(bad_label):
    labels = np.array([0, 1, 0, 1], dtype=float)
    labels[1] = bad_label
    m = err(labels, [0.1, 0.2, 0.3, 0.4])
    assert "row 1" in m and "y_true" in m
    labels3 = np.array([0, 1, 2, 2], dtype=float)
    labels3[3] = bad_label if bad_label != 2 else 3
    m = err(labels3, P3)
    assert "row 3" in m


def test_integer_labels_out_of_range():
    assert "row 2" in err(np.array([0, 1, 5], dtype=np.int8), [0.1, 0.2, 0.3])
    assert "row 0" in err(np.array([-1, 1, 1]), [0.1, 0.2, 0.3])
    assert "0..2" in err(np.array([0, 1, 3, 0]), P3)


def test_mismatched_lengths():
    m = err([0, 1, 1], [0.1, 0.2])
    assert "3 rows" in m and "2" in m and "lengths" in m
    assert "lengths" in err([0, 1], P3)
    assert "lengths" in err(np.eye(3)[[0, 1]], P3)


def test_fewer_than_two_samples():
    assert "at least 2 samples; got 1" in err([1], [0.5])
    assert "got 0" in err([], [])
    assert "got 1" in err([0], P3[:1])
    assert as_calibration_data([], np.zeros(0), min_samples=0).n == 0  # dask partitions may be empty
    assert as_calibration_data(np.zeros(0), np.zeros((0, 3)), min_samples=0).n_classes == 3


def test_single_class_and_bad_shapes():
    m = err([0, 0], np.ones((2, 1)))
    assert "single column" in m
    assert "no columns" in err([0, 0], np.ones((2, 0)))
    assert "1-D (binary) or 2-D" in err([0, 1], np.full((2, 2, 2), 0.25))
    assert "shape ()" in err(1, [0.5, 0.5])
    assert "1-D (binary) or 2-D" in err([0], 0.5)
    assert "y_prob is required" in err([0, 1], None)
    assert "1-D labels or a 2-D one-hot" in err(np.zeros((2, 2, 1)), [0.1, 0.2])


@pytest.mark.parametrize(
    "values,fragment",
    [
        (["0.1", "0.2"], "strings"),
        (np.array([0.1 + 1j, 0.2]), "complex"),
        (np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"), "dates"),
        ([object(), 0.2], "object"),
        ([None, 0.2], "row 0"),  # None becomes NaN: a missing value
        ([[0.1, 0.2], [0.3]], "could not be read"),
        ({"a": 1}, "numeric"),
    ],
)
def test_non_numeric_input(values, fragment):
    m = err([0, 1], values)
    assert fragment in m


def test_strings_as_labels_are_rejected():
    assert "strings" in err(["cat", "dog"], [0.1, 0.2])


def test_calibration_data_passthrough_and_min_samples():
    d = as_calibration_data(Y3, P3)
    assert as_calibration_data(d) is d
    with pytest.raises(InputError, match="not both"):
        as_calibration_data(d, P3)
    with pytest.raises(InputError, match="at least 10"):
        as_calibration_data(d, min_samples=10)


def test_validation_never_touches_the_callers_arrays():
    p = np.array([0.1, 0.9, 0.4])
    y = np.array([0, 1, 1])
    d = as_calibration_data(y, p)
    assert p.flags.writeable and y.flags.writeable
    assert not d.probs.flags.writeable and not d.labels.flags.writeable
    with pytest.raises(ValueError):
        d.probs[0] = 0.5


def test_check_alpha():
    assert check_alpha(0.1) == 0.1
    for bad in (0, 1, -0.1, 1.5, np.nan, "x", None):
        with pytest.raises(InputError):
            check_alpha(bad)


# -- from_logits ------------------------------------------------------------------------------------------
def test_from_logits_softmax_is_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0, -1000.0], [1e308, 1e308, -1e308], [-800.0, -800.0, -801.0], [0, 0, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = from_logits(logits)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(p[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(p[1], [0.5, 0.5, 0.0])
    e = np.exp([0.0, 0.0, -1.0])
    np.testing.assert_allclose(p[2], e / e.sum(), rtol=1e-14)
    np.testing.assert_allclose(p[3], [1 / 3] * 3)
    # agrees with the naive softmax where that does not overflow
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 5)) * 5
    naive = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(from_logits(x), naive, rtol=1e-13)


def test_from_logits_sigmoid_1d():
    x = np.array([-1000.0, -30.0, 0.0, 2.0, 30.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = from_logits(x)
    from scipy.special import expit

    np.testing.assert_allclose(p, expit(x), rtol=1e-14)
    assert p[0] == 0.0 and p[-1] == 1.0 and p[2] == 0.5
    d = from_logits(x, y_true=[0, 0, 1, 1, 1, 1])
    assert isinstance(d, CalibrationData) and d.is_binary
    d = from_logits(np.zeros((4, 3)), y_true=Y3)
    assert d.n_classes == 3


def test_from_logits_rejects_bad_input():
    with pytest.raises(InputError, match="row 1, column 0"):
        from_logits(np.array([[0.0, 1.0], [np.nan, 0.0]]))
    with pytest.raises(InputError, match="row 2"):
        from_logits(np.array([0.0, 1.0, np.inf]))
    with pytest.raises(InputError, match="K >= 2"):
        from_logits(np.zeros((3, 1)))
    with pytest.raises(InputError, match="1-D"):
        from_logits(np.zeros((2, 2, 2)))
    with pytest.raises(InputError, match="lengths"):
        from_logits(np.zeros((3, 2)), y_true=[0, 1])


# -- views --------------------------------------------------------------------------------------------
def test_binary_views():
    p = np.array([0.2, 0.5, 0.9, 0.0, 1.0])
    y = np.array([1, 0, 1, 0, 0])
    d = as_calibration_data(y, p)
    z, yy = d.binary()
    np.testing.assert_array_equal(z, p)
    assert yy.dtype == np.float64 and yy.tolist() == [1, 0, 1, 0, 0]
    conf, correct = d.top1()
    # top-1 of [1-p, p]: ties (p = 0.5) go to class 0
    np.testing.assert_allclose(conf, [0.8, 0.5, 0.9, 1.0, 1.0])
    assert correct.tolist() == [0, 1, 1, 1, 0]
    z1, y1 = d.topk(1)
    np.testing.assert_array_equal(z1[:, 0], conf)
    np.testing.assert_array_equal(y1[:, 0], correct)
    c0, y0 = d.classwise(0)
    np.testing.assert_allclose(c0, 1 - p)
    assert y0.tolist() == [0, 1, 0, 1, 1]
    full, onehot = d.view("full")
    np.testing.assert_allclose(full, np.column_stack([1 - p, p]))
    np.testing.assert_array_equal(onehot, np.eye(2)[y])
    np.testing.assert_array_equal(d.view("auto")[0], p)
    z2, y2 = d.topk(2)
    np.testing.assert_allclose(z2.sum(axis=1), 1.0)
    np.testing.assert_array_equal(y2.sum(axis=1), 1.0)


def test_going_through_the_classes_keeps_one_class_view_and_one_top_k_view():
    """A class's one-vs-rest view (16 bytes a row) and a top-k view are kept one of each kind, the most
    recently used: going through K classes held K of them before (1.6 GB at 10⁷ × 10 in a server).  A view
    formed again is equal to the first; the top-1 view and a kept view are the same arrays on every call."""
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(5), size=200)
    y = rng.integers(0, 5, size=200)
    d = as_calibration_data(y, p)
    top1 = d.top1()
    first = {c: d.classwise(c) for c in range(5)}
    assert [k for k in d._cache if isinstance(k, tuple) and k[0] == "classwise"] == [("classwise", 4)]
    assert d.classwise(4) is first[4] and d.top1() is top1
    again = d.classwise(0)  # formed again: the same values
    for got, want in zip(again, first[0], strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(again[0], p[:, 0])
    np.testing.assert_array_equal(again[1], (y == 0).astype(float))
    assert [k for k in d._cache if isinstance(k, tuple) and k[0] == "classwise"] == [("classwise", 0)]
    for k in (2, 3, 4):
        z, ind = d.topk(k)
        assert z.shape == (200, k)
    assert [key for key in d._cache if isinstance(key, tuple) and key[0] == "topk"] == [("topk", 4)]
    z2, _ = d.topk(2)
    np.testing.assert_array_equal(z2, -np.sort(-p, axis=1)[:, :2])


def test_multiclass_views_and_top_k_ties():
    p = np.array([[0.4, 0.4, 0.2], [0.1, 0.3, 0.6], [0.25, 0.25, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    y = np.array([1, 2, 0, 2])
    d = as_calibration_data(y, p)
    with pytest.raises(InputError):
        d.binary()
    conf, correct = d.top1()
    np.testing.assert_allclose(conf, [0.4, 0.6, 0.5, 1 / 3])
    # ties: the lowest class index wins (row 0 predicts class 0, row 3 predicts class 0)
    assert correct.tolist() == [0, 1, 0, 0]
    z, ind = d.topk(2)
    np.testing.assert_allclose(z, [[0.4, 0.4], [0.6, 0.3], [0.5, 0.25], [1 / 3, 1 / 3]])
    # tie order is class order: row 0 sorts (class 0, class 1), label 1 is the second entry
    np.testing.assert_array_equal(ind, [[0, 1], [1, 0], [0, 1], [0, 0]])
    z3, ind3 = d.topk(3)
    assert np.all(np.diff(z3, axis=1) <= 0)  # sorted decreasingly
    np.testing.assert_array_equal(ind3.sum(axis=1), 1)
    np.testing.assert_array_equal(d.topk(1)[0][:, 0], conf)
    np.testing.assert_array_equal(d.topk(1)[1][:, 0], correct)
    for c in range(3):
        pc, yc = d.classwise(c)
        np.testing.assert_array_equal(pc, p[:, c])
        np.testing.assert_array_equal(yc, (y == c).astype(float))
    full, onehot = d.view("full")
    np.testing.assert_array_equal(full, p)
    np.testing.assert_array_equal(onehot, np.eye(3)[y])
    np.testing.assert_array_equal(d.view("topk", top_k=2)[0], z)
    np.testing.assert_array_equal(d.view("classwise", class_index=2)[0], p[:, 2])
    for bad in (0, 4, 1.5, True):
        with pytest.raises(InputError):
            d.topk(bad)
    for bad in (-1, 3, 0.5):
        with pytest.raises(InputError):
            d.classwise(bad)
    with pytest.raises(InputError, match="'target' parameter of CalibrationData.view must be a str among"):
        d.view("nonsense")
    # views are read-only and cached
    assert d.topk(2) is d.topk(2)
    assert not d.top1()[0].flags.writeable


def test_binary_view_helper():
    z, y = binary_view(Y3, P3)  # auto → top-1
    np.testing.assert_allclose(z, P3.max(axis=1))
    z, y = binary_view(Y3, P3, target="classwise", class_index=2)
    np.testing.assert_array_equal(z, P3[:, 2])
    with pytest.raises(InputError, match="'target' parameter must be a str among"):
        binary_view(Y3, P3, target="topk")


def test_subsample_is_reproducible():
    rng = np.random.default_rng(0)
    d = as_calibration_data(rng.integers(0, 3, 500), rng.dirichlet(np.ones(3), 500))
    a, b, c = d.subsample(100, seed=1), d.subsample(100, seed=1), d.subsample(100, seed=2)
    np.testing.assert_array_equal(a.probs, b.probs)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not np.array_equal(a.probs, c.probs)
    assert a.n == 100 and a.n_classes == 3
    g = d.subsample(100, seed=np.random.default_rng(1))
    np.testing.assert_array_equal(g.probs, a.probs)
    assert d.subsample(500) is d and d.subsample(10_000) is d
    # rows stay paired: every subsampled row is a row of the original
    rows = {tuple(r) + (lab,) for r, lab in zip(d.probs.tolist(), d.labels.tolist(), strict=True)}
    assert all(tuple(r) + (lab,) in rows for r, lab in zip(a.probs.tolist(), a.labels.tolist(), strict=True))
    for bad in (1, 0, -5, 2.5):
        with pytest.raises(InputError):
            d.subsample(bad)


# -- property-based: anything either validates or raises ValueError ------------------------------------
_dtypes = st.sampled_from(
    [
        np.float64,
        np.float32,
        np.float16,
        np.int64,
        np.int8,
        np.uint8,
        np.bool_,
        np.complex128,
        "U3",
        "datetime64[s]",
        object,
    ]
)


@st.composite
def arrays(draw):
    kind = draw(st.sampled_from(["array", "list", "ragged", "scalar", "objects"]))
    if kind == "scalar":
        return draw(st.one_of(st.floats(), st.integers(), st.none(), st.text(max_size=3)))
    if kind == "ragged":
        return [draw(st.lists(st.floats(allow_nan=True), max_size=3)) for _ in range(draw(st.integers(0, 4)))]
    if kind == "objects":
        return draw(
            st.lists(
                st.one_of(
                    st.floats(),
                    st.integers(-3, 3),
                    st.none(),
                    st.text(max_size=2),
                    st.booleans(),
                    st.just(object()),
                ),
                max_size=6,
            )
        )
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    dtype = draw(_dtypes)
    if dtype in (object, "U3", "datetime64[s]", np.complex128):
        values = np.asarray(
            draw(st.lists(st.floats(-2, 2), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
        ).reshape(shape)
        arr = values.astype(dtype) if dtype is not object else values.astype(object)
    else:
        elements = None
        if np.dtype(dtype).kind == "f":
            elements = st.one_of(
                st.floats(-0.5, 1.5, width=np.dtype(dtype).itemsize * 8),
                st.sampled_from([0.0, 1.0, 0.5, np.nan, np.inf]).map(np.dtype(dtype).type),
            )
        arr = draw(hnp.arrays(dtype, shape, elements=elements))
    return arr.tolist() if kind == "list" else arr


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(y_true=arrays(), y_prob=arrays(), renormalize=st.booleans())
def test_random_arrays_validate_or_raise_value_error(y_true, y_prob, renormalize):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no RuntimeWarning from casts/comparisons either
            data = as_calibration_data(y_true, y_prob, renormalize=renormalize)
    except ValueError as exc:
        assert isinstance(exc, InputError), f"a bare {type(exc).__name__}: {exc}"
        assert str(exc)
        return
    # anything accepted really satisfies the conventions
    assert data.n >= 2
    assert np.all(np.isfinite(data.probs)) and np.all((data.probs >= 0) & (data.probs <= 1))
    if data.is_binary:
        assert np.all((data.labels == 0) | (data.labels == 1))
    else:
        assert data.n_classes >= 2
        assert np.all(np.abs(data.probs.sum(axis=1) - 1) <= SIMPLEX_TOLERANCE)
        assert np.all((data.labels >= 0) & (data.labels < data.n_classes))


@settings(max_examples=200, deadline=None)
@given(
    probs=hnp.arrays(
        np.float64,
        st.tuples(st.integers(2, 20), st.integers(2, 6)),
        elements=st.floats(0, 1, allow_subnormal=False),
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_valid_random_multiclass_views_are_consistent(probs, seed):
    sums = probs.sum(axis=1, keepdims=True)
    probs = np.where(sums > 0, probs / np.where(sums > 0, sums, 1), 1.0 / probs.shape[1])
    y = np.random.default_rng(seed).integers(0, probs.shape[1], probs.shape[0])
    d = as_calibration_data(y, probs)
    conf, correct = d.top1()
    np.testing.assert_array_equal(conf, probs.max(axis=1))
    z, ind = d.topk(d.n_classes)
    np.testing.assert_allclose(np.sort(z, axis=1), np.sort(probs, axis=1))
    np.testing.assert_array_equal(ind[:, 0], correct)
    assert np.all(ind.sum(axis=1) == 1)


def test_messages_name_rows_not_tracebacks():
    """One line, names the rule — never a numba or numpy internals message."""
    for y, p in [([0, 1], [0.5, np.nan]), ([0, 3], [0.5, 0.5]), ([0, 1], [[0.5, 0.6], [0.5, 0.5]])]:
        m = err(y, p)
        assert "\n" not in m and re.search(r"row \d", m), m
        assert "numba" not in m.lower() and "Traceback" not in m


def test_the_confidence_form_is_summarised_as_the_top1_reduction_it_is(tmp_path):
    """(confidence, correct) columns are the top-1 reduction of a classifier: the summary's accuracy is the
    fraction correct and its mean confidence the mean of the confidences, which may be below 0.5.  They
    were summarised as binary P(y = 1) data: accuracy = 1{confidence ≥ 0.5} = correct, confidence =
    max(c, 1 − c)."""
    from calviz.analysis import AnalysisOptions, DataSummary
    from calviz.io import read_predictions

    rng = np.random.default_rng(5)
    confidence = rng.uniform(0.1, 0.6, size=400)  # a 10-class model's top-1 confidences
    correct = (rng.uniform(size=400) < 0.8).astype(int)
    path = tmp_path / "top1.csv"
    rows = np.column_stack([confidence, correct]).tolist()
    path.write_text("confidence,correct\n" + "".join(f"{c!r},{k}\n" for c, k in rows))
    data = read_predictions(path)
    assert data.confidence_form and data.is_binary and "confidence form" in repr(data)
    np.testing.assert_array_equal(data.top1()[0], confidence)
    np.testing.assert_array_equal(data.top1()[1], correct)
    assert data.subsample(50, seed=1).confidence_form  # kept by every view of its rows
    summary = DataSummary.of(data, AnalysisOptions())
    assert summary.accuracy == pytest.approx(correct.mean(), abs=1e-12)
    assert summary.mean_confidence == pytest.approx(confidence.mean(), abs=1e-12)
    # the same numbers as P(y = 1) columns are binary data, summarised by thresholding at 0.5
    path.write_text("y_true,y_prob\n" + "".join(f"{k},{c!r}\n" for c, k in rows))
    binary = read_predictions(path)
    assert not binary.confidence_form
    thresholded = np.mean((confidence >= 0.5) == correct)
    assert DataSummary.of(binary, AnalysisOptions()).accuracy == pytest.approx(thresholded)


def test_named_confidence_columns_are_read_as_the_confidence_form_or_refused(tmp_path):
    """--confidence / --correct (confidence=, correct=) name the confidence form: it is read with the
    mark, or refused when a named column is missing; a file of y_true + p_0..p_{K-1} was read silently
    as K classes with the named confidence column ignored."""
    from calviz.io import read_predictions

    path = tmp_path / "top1.csv"
    path.write_text("conf,ok\n0.3,1\n0.45,0\n0.8,1\n")
    data = read_predictions(path, confidence="conf", correct="ok")
    assert data.confidence_form and data.probs.tolist() == [0.3, 0.45, 0.8]
    with pytest.raises(InputError, match=r"missing column\(s\) \['correct'\] of the confidence form"):
        read_predictions(path, confidence="conf")
    multiclass = tmp_path / "three.csv"
    multiclass.write_text("y_true,p_0,p_1,p_2\n0,0.7,0.2,0.1\n2,0.1,0.3,0.6\n")
    with pytest.raises(InputError, match=r"missing column\(s\) \['correct'\] of the confidence form \('p_0'"):
        read_predictions(multiclass, confidence="p_0")


def test_a_row_exactly_at_the_tolerance_is_accepted_despite_round_off():
    """Decimals that sum to exactly 1 + 1e-6 add up to 1.0000010000000001 in floating point; the row is
    within the tolerance and accepted (it was refused), while 1 + 2e-6 is still refused."""
    at_tolerance = np.array([[0.333334, 0.333333, 0.333334], [0.2, 0.3, 0.5]])
    assert float(np.abs(at_tolerance.sum(axis=1) - 1).max()) > 1e-6  # the round-off
    assert as_calibration_data([0, 1], at_tolerance).n == 2
    beyond = np.array([[0.333334, 0.333334, 0.333334], [0.2, 0.3, 0.5]])
    with pytest.raises(InputError, match=r"row 0 sums to 1\.000002"):
        as_calibration_data([0, 1], beyond)


def test_as_calibration_data_sets_or_keeps_the_confidence_form():
    """confidence_form=True marks 1-D pairs and refuses (n, K) rows; None keeps a CalibrationData's mark."""
    marked = as_calibration_data([1, 0, 1], [0.4, 0.3, 0.9], confidence_form=True)
    assert marked.confidence_form and marked.top1()[0].tolist() == [0.4, 0.3, 0.9]
    assert as_calibration_data(marked) is as_calibration_data(marked, confidence_form=True) is marked
    assert not as_calibration_data(marked, confidence_form=False).confidence_form
    assert not as_calibration_data([1, 0], [0.4, 0.3]).confidence_form
    rows = [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]
    with pytest.raises(InputError, match=r"the confidence form holds one confidence per row \(1-D\)"):
        as_calibration_data([0, 2], rows, confidence_form=True)
    with pytest.raises(InputError, match=r"'confidence_form' parameter of as_calibration_data"):
        as_calibration_data([1, 0], [0.4, 0.3], confidence_form="yes")
