"""The jitted recalibration fits equal scikit-learn's maps and the direct optimum."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp, softmax

from calviz._kernels.isotonic import pav_fit
from calviz._recalibration import LOG_FLOOR, _fit_map, fit_temperature


def _data(n, K, seed, ties=True):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(K, 0.7), size=n)
    if ties:
        probs[: n // 3] = np.round(probs[: n // 3], 1) + 1e-3
        probs[: n // 3] /= probs[: n // 3].sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(K, p=row ** 1.5 / (row ** 1.5).sum()) for row in probs])
    return probs, labels


def test_pav_equals_scikit_learn():
    from sklearn.isotonic import isotonic_regression

    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 10, 500):
        for trial in range(5):
            y = rng.integers(0, 2, size=n).astype(float) if trial % 2 else rng.normal(size=n)
            w = rng.uniform(0.5, 3.0, size=n) if trial > 2 else np.ones(n)
            fitted = np.empty(n)
            pav_fit(w, w * y, fitted)
            expected = isotonic_regression(y, sample_weight=w)
            np.testing.assert_allclose(fitted, expected, rtol=1e-14, atol=1e-15)
            assert np.all(np.diff(fitted) >= 0)


@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_maps_equal_scikit_learn_calibrated_classifier(K, method, fixed_probability_classifier):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    probs, labels = _data(1500, K, seed=K)
    fitted = _fit_map(method, probs[:800], labels[:800], 15)
    sk = CalibratedClassifierCV(FrozenEstimator(fixed_probability_classifier(K)),
                                method="sigmoid" if method == "platt" else "isotonic")
    sk.fit(probs[:800], labels[:800])
    expected = np.clip(sk.predict_proba(probs[800:]), 0.0, 1.0)
    expected /= expected.sum(axis=1, keepdims=True)
    # isotonic: the same pooling and interpolation (round-off only); Platt: scikit-learn's L-BFGS stops
    # at its gradient tolerance, Newton at the optimum
    tol = 1e-12 if method == "isotonic" else 1e-6
    np.testing.assert_allclose(fitted.transform(probs[800:]), expected, atol=tol)


@pytest.mark.parametrize("K", [2, 3, 10])
def test_temperature_is_the_minimiser(K):
    probs, labels = _data(3000, K, seed=10 + K, ties=False)
    logits = np.log(np.clip(probs, LOG_FLOOR, 1.0))
    t = fit_temperature(logits, labels)

    def nll(log_t):
        s = logits / np.exp(log_t)
        return float(np.sum(logsumexp(s, axis=1) - s[np.arange(len(labels)), labels]))

    ref = minimize_scalar(nll, bounds=(-8.0, 12.0), method="bounded", options={"xatol": 1e-10}).x
    assert np.log(t) == pytest.approx(ref, abs=1e-7)
    assert nll(np.log(t)) <= nll(ref) + 1e-9 * abs(nll(ref))


def test_temperature_at_the_bounds():
    # every top-1 prediction right with margin: the likelihood keeps growing as T -> 0 (the lower bound)
    probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]] * 10)
    labels = np.array([0, 1, 0] * 10)
    t = fit_temperature(np.log(probs), labels)
    assert t < 0.05  # the likelihood is flat to round-off from here to the bound e^-8: the same map
    at_bound = softmax(np.log(probs) / np.exp(-8.0), axis=1)
    np.testing.assert_allclose(softmax(np.log(probs) / t, axis=1), at_bound, rtol=0, atol=1e-20)
    # every top-1 prediction wrong: T -> infinity (the upper bound)
    assert fit_temperature(np.log(probs), 1 - labels) == pytest.approx(np.exp(12.0), rel=1e-6)


def test_isotonic_fit_split_equals_the_fit_on_all_rows_sorted():
    from calviz._kernels.recalibration import isotonic_fit, isotonic_fit_split, split_by_label

    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 10, 400):
        for trial in range(6):
            x = rng.normal(size=n)
            if trial % 2:
                x = np.round(x, 1)  # ties, some spanning both labels
            if trial == 4:
                x[: n // 2] = x[0] + rng.uniform(0, 1e-16, size=n // 2)  # within the tie resolution
            y = (rng.uniform(size=n) < 0.5).astype(float)
            if trial == 5:
                y[:] = float(n % 2)  # one label only (all right / all wrong)
            order = np.argsort(x, kind="stable")
            expected = isotonic_fit(x[order], y[order], np.empty(0))
            x1, x0 = split_by_label(x, y == 1)
            assert x1[-1] == np.inf and x0[-1] == np.inf and x1.size + x0.size == n + 2
            x1[:-1].sort()
            x0[:-1].sort()
            got = isotonic_fit_split(x1, x0)
            for a, b in zip(got, expected, strict=True):
                np.testing.assert_array_equal(a, b)


def test_isotonic_apply_equals_numpy_interp_bit_for_bit():
    from calviz._kernels.recalibration import isotonic_apply

    rng = np.random.default_rng(4)
    for m in (1, 2, 3, 50, 2000):
        thresholds = np.unique(np.concatenate([rng.normal(size=m), rng.normal(size=m) ** 3]))[:m]
        if m >= 50:  # a dense cluster among sparse thresholds (long runs inside one lookup cell)
            thresholds = np.sort(np.concatenate([thresholds[: m // 2], 0.1 + 1e-9 * np.arange(m - m // 2)]))
        values = np.sort(rng.uniform(size=thresholds.size))
        values[: values.size // 3] = values[0]  # flat steps
        x = np.concatenate([rng.normal(size=3000) * 2, thresholds, np.nextafter(thresholds, np.inf),
                            np.nextafter(thresholds, -np.inf), [-1e300, 1e300]])
        clipped = np.clip(x, thresholds[0], thresholds[-1])
        expected = np.interp(clipped, thresholds, values)
        np.testing.assert_array_equal(isotonic_apply(x, thresholds, values, False), expected)
        q = expected.copy()
        q[(1.0 < q) & (q <= 1.0 + 1e-5)] = 1.0
        q = np.clip(q, 0.0, 1.0)
        np.testing.assert_array_equal(isotonic_apply(x, thresholds, values, True),
                                      q / (np.clip(1.0 - q, 0.0, 1.0) + q))


def test_binary_temperature_apply_equals_the_softmax_of_scaled_log_probabilities():
    from calviz._kernels.recalibration import temperature_apply_binary
    from calviz._recalibration import softmax as calviz_softmax

    rng = np.random.default_rng(5)
    p = np.concatenate([rng.uniform(size=500), [0.0, 1.0, 1e-300, 0.5, 1 - 1e-16]])
    probs = np.column_stack([1.0 - p, p])
    for temperature in (1e-3, 0.7, 1.0, 3.0, 1e4):
        expected = np.clip(calviz_softmax(np.log(np.clip(probs, LOG_FLOOR, 1.0)) / temperature), 0.0, 1.0)
        expected /= expected.sum(axis=1, keepdims=True)
        rows = temperature_apply_binary(probs[:, 0], probs[:, 1], temperature, LOG_FLOOR, True)
        np.testing.assert_allclose(rows, expected, rtol=0, atol=1e-15)
        column = temperature_apply_binary(probs[:, 0], probs[:, 1], temperature, LOG_FLOOR, False)
        np.testing.assert_array_equal(column.reshape(-1), rows[:, 1])
