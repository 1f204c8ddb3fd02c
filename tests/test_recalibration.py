"""calviz.recalibrate: honest splits, and every map equal to a direct scipy / scikit-learn computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logsumexp, softmax

import calviz
from calviz._data import InputError
from calviz._recalibration import LOG_FLOOR, recalibrate
from calviz.datasets import load_dataset


def _direct_temperature(probs: np.ndarray, labels: np.ndarray) -> float:
    """Temperature by an independent route: scipy's L-BFGS-B on log T (not the bounded scalar search)."""
    logits = np.log(np.clip(probs, LOG_FLOOR, 1.0))

    def nll(x):
        s = logits / np.exp(x[0])
        return float(np.sum(logsumexp(s, axis=1) - s[np.arange(len(labels)), labels]))

    return float(np.exp(minimize(nll, [0.0], method="L-BFGS-B", bounds=[(-8, 12)], tol=1e-12).x[0]))


@pytest.mark.parametrize("name", ["tabular-gnb", "digits-gnb"])
def test_temperature_on_embedded_naive_bayes_uses_held_out_rows_only(name, fixed_probability_classifier):
    data = load_dataset(name)
    res = recalibrate(data, method="temperature", calibration_size=0.5, seed=3)
    ev, cal = res.eval_indices, res.calibration_indices
    # the split: disjoint, together every row once, increasing; the maps saw the calibration rows only
    assert np.intersect1d(ev, cal).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([ev, cal])), np.arange(data.n))
    assert np.all(np.diff(ev) > 0) and np.all(np.diff(cal) > 0)
    assert abs(cal.size - data.n / 2) <= 1 and res.maps[0].n_fit == cal.size
    np.testing.assert_array_equal(res.y_true, data.labels[ev])
    np.testing.assert_array_equal(res.y_prob_before, data.probs[ev])
    # the fitted temperature and the recalibrated held-out predictions equal a direct scipy computation
    t_direct = _direct_temperature(data.probs[cal], data.labels[cal])
    assert res.temperature == pytest.approx(t_direct, rel=1e-4)
    direct = softmax(np.log(np.clip(data.probs[ev], LOG_FLOOR, 1.0)) / t_direct, axis=1)
    np.testing.assert_allclose(res.y_prob, direct, atol=1e-5)
    # ... and scikit-learn's own temperature scaling fitted on the same calibration rows
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    sk = CalibratedClassifierCV(FrozenEstimator(fixed_probability_classifier(data.n_classes)),
                                method="temperature", cv=2).fit(data.probs[cal], data.labels[cal])
    np.testing.assert_allclose(res.y_prob, sk.predict_proba(data.probs[ev]), atol=1e-3)
    # the held-out T-Cal decision and ECE interval are those of the direct predictions on the held-out rows
    ours_ci = calviz.ece_interval(res.y_true, res.y_prob)
    direct_ci = calviz.ece_interval(data.labels[ev], direct)
    assert ours_ci.n == ev.size
    assert ours_ci.estimate == pytest.approx(direct_ci.estimate, abs=1e-4)
    assert ours_ci.low == pytest.approx(direct_ci.low, abs=1e-4)
    assert ours_ci.high == pytest.approx(direct_ci.high, abs=1e-4)
    ours_t = calviz.adaptive_tcal(res.y_true, res.y_prob, resampling="analytic")
    direct_t = calviz.adaptive_tcal(data.labels[ev], direct, resampling="analytic")
    assert ours_t.n == ev.size and ours_t.reject == direct_t.reject
    assert ours_t.pvalue == pytest.approx(direct_t.pvalue, rel=1e-2, abs=1e-12)
    # recalibration helps the overconfident naive Bayes model on the held-out rows
    cmp = calviz.compare(res.y_true, res.y_prob_before, res.y_prob, names=("before", "after"), tcal=False)
    assert cmp.n == ev.size and cmp.difference > 0
    if data.n > 1000:  # digits' 359 held-out rows are too few for the difference to be significant
        assert cmp.reject and cmp.better == "after"


def _binary_data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.02, 0.98, n)
    y = (rng.random(n) < q).astype(int)
    p = expit(2.0 * np.log(q / (1 - q)))  # overconfident
    return y, p


def test_platt_equals_a_direct_platt_fit():
    y, p = _binary_data()
    res = recalibrate(y, p, method="platt", calibration_size=0.4, seed=1)
    cal = res.calibration_indices
    f = np.log(np.clip(p[cal], LOG_FLOOR, 1)) - np.log(np.clip(1 - p[cal], LOG_FLOOR, 1))
    n_pos = y[cal].sum()
    n_neg = cal.size - n_pos
    # Platt (1999): targets (N+ + 1)/(N+ + 2) and 1/(N- + 2), P = 1/(1 + exp(A f + B))
    t = np.where(y[cal] == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(ab):
        q = np.clip(expit(-(ab[0] * f + ab[1])), 1e-15, 1 - 1e-15)
        return -np.sum(t * np.log(q) + (1 - t) * np.log(1 - q))

    a, b = minimize(loss, [-1.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
    ev = res.eval_indices
    fe = np.log(np.clip(p[ev], LOG_FLOOR, 1)) - np.log(np.clip(1 - p[ev], LOG_FLOOR, 1))
    np.testing.assert_allclose(res.y_prob, expit(-(a * fe + b)), atol=1e-4)
    assert res.y_prob.shape == (ev.size,)


def test_isotonic_equals_scikit_learn_isotonic_regression():
    from sklearn.isotonic import IsotonicRegression

    y, p = _binary_data(seed=2)
    res = recalibrate(y, p, method="isotonic", calibration_size=600, seed=2)
    cal, ev = res.calibration_indices, res.eval_indices
    logit = lambda v: np.log(np.clip(v, LOG_FLOOR, 1)) - np.log(np.clip(1 - v, LOG_FLOOR, 1))  # noqa: E731
    iso = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(logit(p[cal]), y[cal])
    np.testing.assert_allclose(res.y_prob, np.clip(iso.predict(logit(p[ev])), 0, 1), atol=1e-12)


def test_histogram_binning_equals_a_slow_implementation():
    y, p = _binary_data(n=500, seed=4)
    p = np.round(p, 2)  # ties: a group of equal values is never split between bins
    res = recalibrate(y, p, method="histogram", n_bins=7, calibration_size=0.5, seed=4)
    cal, ev = res.calibration_indices, res.eval_indices
    edges = calviz._binning.equal_mass_edges(p[cal], 7)
    for i, out in zip(ev, res.y_prob, strict=True):
        b = min(np.searchsorted(edges, p[i], side="right") - 1, len(edges) - 2)
        in_bin = (p[cal] >= edges[b]) & ((p[cal] < edges[b + 1]) | (b == len(edges) - 2))
        expected = y[cal][in_bin].mean() if in_bin.any() else 0.5 * (edges[b] + edges[b + 1])
        assert out == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("method", ["temperature", "platt", "isotonic", "histogram"])
def test_multiclass_outputs_are_probability_rows(method):
    data = load_dataset("tabular-rf")
    res = recalibrate(data, method=method, calibration_size=0.3, seed=0)
    assert res.y_prob.shape == (res.n_eval, 4)
    np.testing.assert_allclose(res.y_prob.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(res.y_prob >= 0)
    # the map applies to new predictions the same way
    np.testing.assert_allclose(res.maps[0].transform(res.y_prob_before), res.y_prob, atol=1e-12)


def test_cross_fitting_recalibrates_every_row_with_a_map_that_did_not_see_it():
    data = load_dataset("breast-cancer-gnb")
    res = recalibrate(data, method="temperature", folds=4, seed=5)
    assert res.calibration_indices is None
    np.testing.assert_array_equal(res.eval_indices, np.arange(data.n))
    assert set(np.unique(res.folds)) == {0, 1, 2, 3}
    for f, fitted in enumerate(res.maps):
        inside = res.folds == f
        assert fitted.n_fit == int((~inside).sum())
        full = np.column_stack([1 - data.probs, data.probs])
        t = _direct_temperature(full[~inside], data.labels[~inside])
        assert fitted.parameters["temperature"] == pytest.approx(t, rel=1e-4)
        np.testing.assert_allclose(res.y_prob[inside], fitted.transform(data.probs[inside]), atol=1e-14)


def test_same_seed_same_split():
    y, p = _binary_data(n=300)
    a = recalibrate(y, p, method="platt", seed=9)
    b = recalibrate(y, p, method="platt", seed=9)
    np.testing.assert_array_equal(a.eval_indices, b.eval_indices)
    np.testing.assert_array_equal(a.y_prob, b.y_prob)


@pytest.mark.parametrize("kwargs", [
    {"method": "beta"}, {"calibration_size": 0.0}, {"calibration_size": 1.0}, {"calibration_size": 299},
    {"calibration_size": "half"}, {"calibration_size": True}, {"calibration_size": None},
    {"folds": 1, "calibration_size": None}, {"folds": 2.5, "calibration_size": None},
    {"folds": 3, "calibration_size": 0.3}, {"n_bins": 0},
])
def test_bad_arguments_raise_input_error(kwargs):
    y, p = _binary_data(n=300)
    with pytest.raises(InputError):
        recalibrate(y, p, **kwargs)


def test_platt_needs_every_class_in_the_calibration_rows():
    y = np.array([0] * 50 + [1] * 2 + [2] * 50)
    p = np.full((102, 3), 1 / 3)
    with pytest.raises(InputError, match="class 1"):
        recalibrate(y, p, method="platt", calibration_size=0.2, seed=0)
    with pytest.raises(InputError):
        fitted = calviz.RecalibrationMap("temperature", 3, {"temperature": 1.0}, 10)
        fitted.transform(np.ones((2, 4)))


@pytest.mark.parametrize("method", ["temperature", "platt", "isotonic", "histogram"])
def test_two_probability_columns_stay_two_columns(method):
    """(n, 2) probability rows come back as (n, 2) rows — the 1-D recalibration of P(y = 1) in the second
    column — with one split or cross-fitted; they came back 1-D, so compare(before, after) refused them as
    different classes and cross-fitting crashed or wrote 1-D values into both columns."""
    rng = np.random.default_rng(3)
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p**2).astype(int)
    rows = np.column_stack([1.0 - p, p])
    one_d = calviz.recalibrate(y, p, method=method, seed=0)
    two_d = calviz.recalibrate(y, rows, method=method, seed=0)
    assert two_d.y_prob.shape == two_d.y_prob_before.shape == (200, 2)
    np.testing.assert_allclose(two_d.y_prob[:, 1], one_d.y_prob, atol=1e-12)
    np.testing.assert_allclose(two_d.y_prob.sum(axis=1), 1.0, atol=1e-12)
    calviz.compare(two_d.y_true, two_d.y_prob_before, two_d.y_prob, tcal=False)
    crossed = calviz.recalibrate(y, rows, method=method, seed=0, folds=4, calibration_size=None)
    assert crossed.y_prob.shape == (400, 2)
    np.testing.assert_allclose(crossed.y_prob.sum(axis=1), 1.0, atol=1e-12)
