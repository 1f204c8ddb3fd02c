"""Tests of calibration on few rows: no p-value below the probability of the observed labels, exact
p-values by enumeration checked against the public statistics, resampled ones against the exact ones, and
no asymptotic verdict below the stated minimum."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calviz
from calviz import _small_n
from calviz._classical import TEST_NAMES

#: predictions a newcomer's tiny upload can hold: exact 0/1, near them, ½ and anything in between
EXTREMES = [0.0, 1.0, 1e-12, 1 - 1e-12, 1e-6, 0.5, 0.02, 0.98]
prediction = st.one_of(st.sampled_from(EXTREMES), st.floats(0.0, 1.0, allow_nan=False))


def _log_label_probability(z, y):
    return sum(math.log(p if label else 1.0 - p) if (p if label else 1.0 - p) > 0 else -math.inf
               for p, label in zip(z, y, strict=True))


def _pvalues(y, z):
    """Every p-value of the package's tests of calibration of binary predictions on (y, z) (the test of equal
    calibration of two models, ``calviz.compare``, has another null: not the labels given one model)."""
    out = {}
    classical = calviz.classical_tests(y, z)
    for test in classical.tests:
        out[test.name] = test.pvalue
    for resampling in ("analytic", "y_only", "consistency", "threshold"):
        try:
            result = calviz.adaptive_tcal(y, z, resampling=resampling, seed=0)
        except calviz.InputError:  # (too few rows for one dyadic scale: an error, not a p-value)
            continue
        out[f"adaptive_tcal[{resampling}]"] = result.pvalue
    out["tcal"] = calviz.tcal(y, z).pvalue
    try:
        out["split_tcal"] = calviz.split_tcal(y, z, seed=0).pvalue
    except calviz.InputError:  # (too few rows to split)
        pass
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(st.lists(prediction, min_size=n, max_size=n),
                                                      st.lists(st.booleans(), min_size=n, max_size=n))))
def test_no_pvalue_below_the_probability_of_the_labels(sample):
    # P(labels) under the null (labels ~ Bernoulli(predictions)) is the probability of one point of the
    # sample space that every rejection region containing it includes: no valid p-value is below it
    z, labels = sample
    y = np.array(labels, dtype=int)
    floor = math.exp(_log_label_probability(z, y))
    for name, p in _pvalues(y, np.array(z)).items():
        assert 0.0 <= p <= 1.0, name
        assert p >= floor * (1 - 1e-9), f"{name}: p = {p:.3g} < P(labels) = {floor:.3g} ({z}, {labels})"


def test_three_events_at_small_predictions():
    # the newcomer's case: labels (1, 1, 1), predictions (0.02, 0.05, 0.03); the asymptotic formulas said
    # 10⁻²² to 10⁻²⁰, below P(labels) = 3·10⁻⁵.  Every other label vector is less extreme for all four
    # tests, so the exact p-value is P(labels) itself.
    y, z = [1, 1, 1], [0.02, 0.05, 0.03]
    result = calviz.classical_tests(y, z)
    for test in result.tests:
        assert test.pvalue_method == "exact"
        assert test.pvalue == pytest.approx(0.02 * 0.05 * 0.03, rel=1e-9), test.name
    assert "hosmer_lemeshow" in result.errors  # too few rows for its groups: a state, not an exception
    assert calviz.adaptive_tcal(y, z, resampling="analytic").pvalue >= 0.02 * 0.05 * 0.03


def _abs_statistic(name, y, z):
    test = getattr(calviz, f"{name}_test")(y, z)
    return abs(test.statistic) if name == "spiegelhalter" else test.statistic


@pytest.mark.parametrize("name", ["spiegelhalter", "cox", "kolmogorov_smirnov", "kuiper"])
@pytest.mark.parametrize("seed", [0, 1])
def test_exact_pvalue_by_brute_force(name, seed):
    # independent: enumerate the 2^n label vectors, compute each one's statistic with the public test (the
    # compiled kernels, not the vectorised statistic of the exact p-value) and sum the null probabilities
    rng = np.random.default_rng(seed)
    n = 7
    z = np.round(rng.uniform(size=n), 2)
    z[:2] = z[2]  # ties
    z[3], z[4] = 0.0, 1.0  # a label of probability 0 has no weight
    y = (rng.uniform(size=n) < z).astype(int)
    t_obs = _abs_statistic(name, y, z)
    expected = 0.0
    for labels in itertools.product([0, 1], repeat=n):
        t = _abs_statistic(name, np.array(labels), z)
        if t >= t_obs - 1e-9 * (abs(t_obs) + 1):
            expected += math.exp(_log_label_probability(z, labels))
    result = getattr(calviz, f"{name}_test")(y, z)
    assert result.pvalue_method == "exact"
    assert result.pvalue == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("name", TEST_NAMES)
def test_vectorised_statistic_matches_the_test(name):
    # the statistic the null distribution is computed for is the test's own statistic, on random label
    # vectors with ties (n = 300: resampled)
    from calviz import _classical as c

    rng = np.random.default_rng(3)
    n = 300
    z = np.round(rng.beta(0.7, 0.7, size=n), 2)
    order = np.argsort(z, kind="stable")
    factory = {
        "spiegelhalter": c._spiegelhalter_statistic,
        "cox": lambda zs: c._cox_statistic(c.clipped_logit(zs, c.COX_EPS)),
        "kolmogorov_smirnov": lambda zs: c._cumulative_statistic("kolmogorov_smirnov", zs),
        "kuiper": lambda zs: c._cumulative_statistic("kuiper", zs),
    }
    for _ in range(5):
        y = (rng.uniform(size=n) < z ** 1.3).astype(int)
        if name == "hosmer_lemeshow":
            from calviz._ece import equal_mass_sums

            bin_count = equal_mass_sums(z, y, 10)[0]
            statistic = c._hosmer_lemeshow_statistic(z[order], bin_count, 5.0)
        else:
            statistic = factory[name](z[order])
        vectorised = statistic(y[order][None, :].astype(float))[0]
        assert vectorised == pytest.approx(_abs_statistic(name, y, z), rel=1e-9, abs=1e-12)


def test_resampled_pvalue_agrees_with_exact(monkeypatch):
    # the same 12-row sample: exact by enumeration, then resampled (4 999 draws): within 4 Monte Carlo s.e.
    rng = np.random.default_rng(5)
    z = rng.uniform(0.1, 0.9, size=12)
    y = (rng.uniform(size=12) < z ** 2).astype(int)
    exact = {t.name: t.pvalue for t in calviz.classical_tests(y, z).tests}
    monkeypatch.setattr(_small_n, "EXACT_MAX_ROWS", 0)
    _small_n._null_draws.cache_clear()
    for test in calviz.classical_tests(y, z).tests:
        assert test.pvalue_method == "resampled"
        p = exact[test.name]
        se = math.sqrt(p * (1 - p) / _small_n.NULL_DRAWS) + 1 / _small_n.NULL_DRAWS
        assert abs(test.pvalue - p) <= 4 * se, (test.name, test.pvalue, p)


def test_asymptotic_only_from_the_stated_minimum():
    rng = np.random.default_rng(2)
    least = _small_n.ASYMPTOTIC_MIN_ROWS
    for n, method in ((least - 1, "resampled"), (least, "asymptotic")):
        z = rng.uniform(size=n)
        y = (rng.uniform(size=n) < z).astype(int)
        for test in calviz.classical_tests(y, z).tests:
            assert test.pvalue_method == method and test.asymptotic_min_rows == _small_n.ASYMPTOTIC_MIN_ROWS
        tcal = calviz.adaptive_tcal(y, z, resampling="analytic")
        assert tcal.method == "analytic" and ("Cantelli" in tcal.reason) == (method == "resampled")


def test_resampled_level_at_small_n():
    # valid given the predictions: under calibration at n = 40 each test rejects at most α + 3 s.e.
    rng = np.random.default_rng(7)
    reps, alpha = 150, 0.1
    rejections = dict.fromkeys(("spiegelhalter", "cox", "kolmogorov_smirnov", "kuiper"), 0)
    for _ in range(reps):
        z = rng.uniform(size=40)
        y = (rng.uniform(size=40) < z).astype(int)
        result = calviz.classical_tests(y, z, tests=tuple(rejections))
        for test in result.tests:
            rejections[test.name] += test.rejects(alpha)
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)
    assert all(r / reps <= bound for r in rejections.values()), rejections


def test_analytic_tcal_below_the_minimum_is_at_least_cantelli():
    # below ASYMPTOTIC_MIN_ROWS the analytic p-value of each scale is at least Cantelli's bound with the
    # exact null variance: P(T ≥ t) ≤ Var₀/(Var₀ + t²) for any statistic of mean 0, so the test is valid
    from calviz._tcal_decision import cantelli_bound

    rng = np.random.default_rng(8)
    z = rng.uniform(size=60)
    y = (rng.uniform(size=60) < z ** 3).astype(int)
    result = calviz.adaptive_tcal(y, z, resampling="analytic")
    _, target, zv, yv, K = calviz._tcal._prepare(y, z, "auto", 0, "test")
    sample = calviz._tcal._MemorySample(zv, yv, K, target)
    var = sample.null_variance(len(result.n_bins))
    assert np.all(result.pvalues >= cantelli_bound(result.statistics, var) - 1e-15)
    assert "Cantelli" in result.reason


def test_floor_settles_tcal_decision():
    # P(labels) = 0.9 ** 4 ≈ 0.66 > α: whatever the resampling says, the test cannot reject
    from calviz._tcal import TCalResult, _floor_at_labels

    base = calviz.adaptive_tcal([1, 1, 1, 1, 0, 0], [0.9, 0.9, 0.9, 0.9, 0.3, 0.6], resampling="y_only",
                                seed=0)
    fake = TCalResult(**{**{f: getattr(base, f) for f in base.__dataclass_fields__}, "pvalue": 0.001,
                         "reject": True, "decision": "reject"})
    floored = _floor_at_labels(fake, math.log(0.5))
    assert floored.pvalue == 0.5 and not floored.reject and floored.decision == "accept"
    assert "probability of the observed labels" in floored.reason


def test_undecided_advice_names_what_can_be_done():
    from calviz._tcal_decision import undecided_advice

    small = undecided_advice(40, 100_000)
    assert "max_resamples=1_000_000" in small and "analytic" not in small  # analytic is not used at n = 40
    large = undecided_advice(5000, 100_000)
    assert "analytic critical values" in large and "max_resamples=" in large
    assert "max_resamples" not in undecided_advice(10**9, 100)  # the work limit leaves no larger cap


def test_ece_interval_says_when_its_coverage_was_not_checked():
    from calviz._small_n import INTERVAL_MIN_ROWS

    rng = np.random.default_rng(4)
    z = rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < z).astype(int)
    assert calviz.ece_interval(y, z).reliable and calviz.ece_interval(y, z).small_sample_note == ""
    least = INTERVAL_MIN_ROWS["scalar"]
    assert calviz.ece_interval(y[:least], z[:least]).reliable
    small = calviz.ece_interval(y[:least - 1], z[:least - 1])
    assert not small.reliable and f"n = {least - 1} is below the {least} rows" in small.small_sample_note
    boot = calviz.ece_interval(y[:least - 1], z[:least - 1], method="bootstrap", n_resamples=50, seed=0)
    assert boot.small_sample_note == small.small_sample_note
    probs = rng.dirichlet(np.ones(4), size=300)
    labels = np.array([rng.choice(4, p=row) for row in probs])
    vector = calviz.ece_interval(labels, probs, top_k=2)
    assert "for a vector target" in vector.small_sample_note


def test_sample_size_note_below_the_smallest_minimum():
    assert "Only 3 rows" in _small_n.sample_size_note(3)
    assert _small_n.sample_size_note(min(_small_n.INTERVAL_MIN_ROWS.values())) == ""


def test_the_log_probability_of_the_labels_stops_once_it_cannot_floor_anything():
    """log P(labels) is only ever exponentiated (the floor at P(labels)): once the rows read so far put it
    below −800 (exp = 0.0 in float64) it is −inf without reading the others; above, the one-pass sum."""
    from calviz._small_n import NO_FLOOR_LOG, floor_at_labels, full_label_log_probability

    label_log_probability = _small_n.label_log_probability
    rng = np.random.default_rng(0)
    z = rng.uniform(0.05, 0.95, size=50_000)
    y = rng.uniform(size=50_000) < z
    exact = float(np.sum(np.where(y, np.log(z), np.log1p(-z))))
    assert exact < NO_FLOOR_LOG and label_log_probability(z, y) == -math.inf
    assert floor_at_labels(1e-300, label_log_probability(z, y)) == floor_at_labels(1e-300, exact) == 1e-300
    confident = np.full(20_000, 1 - 1e-6)  # right and sure: P(labels) = e^−0.02, far above the cut
    assert label_log_probability(confident, np.ones(20_000)) == float(np.sum(np.log(confident)))
    rows = rng.dirichlet(np.ones(3), size=30_000)
    classes = rng.integers(0, 3, size=30_000)
    assert full_label_log_probability(rows, classes) == -math.inf
    assert full_label_log_probability(rows[:10], classes[:10]) == float(
        np.sum(np.log(rows[np.arange(10), classes[:10]])))
