"""Weighted Spiegelhalter and Hosmer–Lemeshow tests: integer weights equal the unweighted tests on the rows
repeated by their weights (frequency weights), on both sides of the small-sample switch."""

from __future__ import annotations

import numpy as np
import pytest

import calviz


@pytest.mark.parametrize("test", ["spiegelhalter_test", "hosmer_lemeshow_test"])
@pytest.mark.parametrize("n, top", [(120, 3), (400, 4)])  # total weight below / above 500
def test_integer_weights_are_repeated_rows(test, n, top):
    rng = np.random.default_rng(n + top)
    p = np.round(rng.uniform(0.05, 0.95, n), 2)  # ties
    y = (rng.uniform(size=n) < p ** 1.3).astype(int)
    w = rng.integers(0, top + 1, n)  # zeros too: those rows are dropped
    fn = getattr(calviz, test)
    weighted = fn(y, p, sample_weight=w)
    repeated = fn(np.repeat(y, w), np.repeat(p, w))
    assert weighted.n == repeated.n == int(w.sum())
    assert weighted.pvalue_method == repeated.pvalue_method
    assert weighted.statistic == pytest.approx(repeated.statistic, rel=1e-12, abs=1e-12)
    assert weighted.pvalue == pytest.approx(repeated.pvalue, rel=1e-10, abs=1e-300)
    assert weighted.df == repeated.df


def test_real_weights_use_the_weighted_sums_and_bad_weights_are_refused():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, 800)
    y = (rng.uniform(size=800) < p).astype(int)
    w = rng.uniform(0.5, 2.0, 800)
    res = calviz.spiegelhalter_test(y, p, sample_weight=w)
    lever = 1 - 2 * p
    direct = np.sum(w * (y - p) * lever) / np.sqrt(np.sum(w * lever ** 2 * p * (1 - p)))
    assert res.statistic == pytest.approx(direct, rel=1e-12)
    with pytest.raises(calviz.InputError, match="non-negative"):
        calviz.hosmer_lemeshow_test(y, p, sample_weight=-w)
    with pytest.raises(calviz.InputError, match="one weight per row"):
        calviz.spiegelhalter_test(y, p, sample_weight=w[:-1])
    with pytest.raises(calviz.InputError, match="spiegelhalter_test, hosmer_lemeshow_test"):
        calviz.cox_test(y, p, sample_weight=w)  # the one message names every function that takes weights


@pytest.mark.parametrize("method", ["temperature", "platt", "isotonic"])
@pytest.mark.parametrize("classes", [2, 3])
def test_weighted_recalibration_maps_are_the_repeated_rows_maps(method, classes):
    """The map fitted with integer weights is the map fitted on the rows repeated by their weights (the
    split is drawn on the rows, so the fits are compared on the same calibration rows)."""
    from calviz._recalibration import _fit_map

    rng = np.random.default_rng(classes)
    n = 600
    probs = rng.dirichlet(np.ones(classes) * 0.8, size=n)
    labels = (probs ** 2 / (probs ** 2).sum(axis=1, keepdims=True)).cumsum(axis=1)
    labels = (labels < rng.random((n, 1))).sum(axis=1).clip(0, classes - 1)
    w = rng.integers(0, 4, n)
    weighted = _fit_map(method, probs, labels, 15, w.astype(float))
    repeated = _fit_map(method, np.repeat(probs, w, axis=0), np.repeat(labels, w), 15)
    test = rng.dirichlet(np.ones(classes), size=200)
    np.testing.assert_allclose(weighted.transform(test), repeated.transform(test), rtol=1e-9, atol=1e-12)
    # through the public entry point: the evaluation rows keep their weights, the map is the weighted fit
    res = calviz.recalibrate(labels, probs, method=method, sample_weight=w, seed=1)
    cal = res.calibration_indices
    direct = _fit_map(method, probs[cal], labels[cal], 15, w[cal].astype(float))
    np.testing.assert_array_equal(res.maps[0].transform(test), direct.transform(test))
    np.testing.assert_array_equal(res.sample_weight, w[res.eval_indices])


def test_histogram_recalibration_refuses_weights():
    with pytest.raises(calviz.InputError, match="histogram recalibration does not take sample_weight"):
        calviz.recalibrate([0, 1] * 10, np.linspace(0.1, 0.9, 20), method="histogram",
                           sample_weight=np.ones(20))
