"""Sample weights: a weighted estimate equals the unweighted one on the data with each row repeated by its
integer weight; bad weights get a clear error; functions without a weighted version refuse them naming
the functions that take them."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calviz
from calviz._params import WEIGHTED_FUNCTIONS


@st.composite
def weighted_samples(draw):
    n = draw(st.integers(2, 60))
    grid = draw(st.sampled_from([4, 10, 100]))  # coarse grids: ties and predictions on bin edges
    z = np.array(draw(st.lists(st.integers(0, grid), min_size=n, max_size=n))) / grid
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    if w.sum() == 0:
        w[0] = 1
    return z, y, w


def _repeated(z, y, w):
    return np.repeat(z, w), np.repeat(y, w)


ESTIMATES = [
    (calviz.binned_ece, {"n_bins": 10}),
    (calviz.binned_ece, {"n_bins": 7, "p": 2}),
    (calviz.binned_ece, {"n_bins": 5, "scheme": "equal_mass"}),
    (calviz.mce, {"n_bins": 10}),
    (calviz.ace, {"n_bins": 4, "target": "binary"}),
    (calviz.ace, {"n_bins": 6, "scheme": "equal_width"}),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted_samples())
def test_weighted_equals_repeated_rows(sample):
    z, y, w = sample
    zr, yr = _repeated(z, y, w)
    if zr.shape[0] < 2:
        return
    for function, options in ESTIMATES:
        weighted = function(y, z, sample_weight=w, **options)
        repeated = function(yr, zr, **options)
        assert weighted.value == pytest.approx(repeated.value, abs=1e-12), (function.__name__, options)
        assert weighted.n_nonempty == repeated.n_nonempty
    a = calviz.reliability(y, z, sample_weight=w, n_bins=5)
    b = calviz.reliability(yr, zr, n_bins=5)
    np.testing.assert_allclose(a.counts, b.counts)
    np.testing.assert_allclose(a.observed_frequency, b.observed_frequency, atol=1e-12)
    np.testing.assert_allclose(a.low, b.low, atol=1e-12)
    assert a.ece_l1 == pytest.approx(b.ece_l1, abs=1e-12)
    for score in ("brier", "log"):
        zc = np.clip(z, 0.01, 0.99)
        wd = calviz.score_decomposition(y, zc, score=score, sample_weight=w)
        rd = calviz.score_decomposition(yr, np.repeat(zc, w), score=score)
        np.testing.assert_allclose([wd.mean_score, wd.mcb, wd.dsc, wd.unc],
                                   [rd.mean_score, rd.mcb, rd.dsc, rd.unc], atol=1e-12)
    wc = calviz.corp_reliability(y, z, sample_weight=w, n_resamples=0)
    rc = calviz.corp_reliability(yr, zr, n_resamples=0)
    np.testing.assert_allclose(wc.recalibrated, rc.recalibrated, atol=1e-12)
    wm = calviz.murphy_decomposition(y, z, sample_weight=w, n_bins=4)
    rm = calviz.murphy_decomposition(yr, zr, n_bins=4)
    assert wm.reliability == pytest.approx(rm.reliability, abs=1e-12)


def test_n_equals_two_and_multiclass():
    assert calviz.binned_ece([0, 1], [0.3, 0.3], sample_weight=[1, 3]).value == pytest.approx(abs(0.75 - 0.3))
    rng = np.random.default_rng(1)
    probs = rng.dirichlet([1, 1, 1], size=300)
    labels = np.array([rng.choice(3, p=row) for row in probs])
    w = rng.integers(1, 4, size=300)
    for target in ("top1", "full"):
        a = calviz.binned_ece(labels, probs, target=target, n_bins=4, sample_weight=w)
        b = calviz.binned_ece(np.repeat(labels, w), np.repeat(probs, w, axis=0), target=target, n_bins=4)
        assert a.value == pytest.approx(b.value, abs=1e-12)
    a = calviz.ace(labels, probs, sample_weight=w, n_bins=5)
    b = calviz.ace(np.repeat(labels, w), np.repeat(probs, w, axis=0), n_bins=5)
    assert a.value == pytest.approx(b.value, abs=1e-12)


def test_unit_weights_are_the_unweighted_estimate():
    rng = np.random.default_rng(2)
    z = rng.uniform(size=400)
    y = (rng.uniform(size=400) < z).astype(int)
    for function, options in ESTIMATES:
        assert function(y, z, sample_weight=np.ones(400), **options).value == pytest.approx(
            function(y, z, **options).value, abs=1e-12)


@pytest.mark.parametrize("bad, message", [
    ([1.0, -1.0, 2.0], "non-negative; row 1"),
    ([1.0, np.nan, 2.0], "finite; row 1"),
    ([1.0, np.inf, 2.0], "finite; row 1"),
    ([0, 0, 0], "all zero"),
    ([1.0, 2.0], "has 2 entries but the data have 3 rows"),
    ([[1.0, 2.0, 3.0]], "1-D"),
    (["a", "b", "c"], "real numbers"),
])
@pytest.mark.parametrize("function", ["binned_ece", "mce", "ace", "reliability", "corp_reliability",
                                      "score_decomposition", "murphy_decomposition",
                                      "spiegelhalter_test", "hosmer_lemeshow_test", "classical_tests",
                                      "recalibrate"])
def test_bad_weights(function, bad, message):
    with pytest.raises(calviz.InputError, match=message):
        getattr(calviz, function)([0, 1, 1], [0.2, 0.7, 0.9], sample_weight=bad)


@pytest.mark.parametrize("function", ["debiased_ece", "unbiased_ece", "kumar_debiased_ece", "ece_interval",
                                      "tcal", "smooth_ece", "lower_dce", "ici", "cox_test",
                                      "kuiper_test", "smce"])
def test_functions_without_weights_refuse_them_naming_those_with(function):
    with pytest.raises(calviz.InputError, match="does not take sample_weight") as info:
        getattr(calviz, function)([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4], sample_weight=[1, 1, 1, 1])
    assert f"{function} does not take" in str(info.value)
    for name in WEIGHTED_FUNCTIONS:
        assert name in str(info.value)
        assert "sample_weight" in inspect.signature(getattr(calviz, name)).parameters
