"""Score decompositions: the CORP decomposition against model-diagnostics' ``decompose`` (and probcal),
the exact identity S̄ = MCB − DSC + UNC, bootstrap intervals, and the Murphy decomposition against
direct numpy sums."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import xlogy

import calviz

model_diagnostics = pytest.importorskip("model_diagnostics.scoring")


def _data(seed, n, *, weighted, decimals=2):
    rng = np.random.default_rng(seed)
    z = np.clip(np.round(rng.uniform(size=n), decimals), 0.005, 0.995)  # ties; log loss finite
    y = (rng.uniform(size=n) < z ** 1.3).astype(int)
    w = rng.uniform(0.2, 4.0, size=n) if weighted else None
    return z, y, w


@pytest.mark.parametrize("score", ["brier", "log"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [2, 40, 3000])
def test_equals_model_diagnostics(score, weighted, n):
    z, y, w = _data(n, n, weighted=weighted)
    if n == 2:
        y = np.array([0, 1])
    scoring = model_diagnostics.SquaredError() if score == "brier" else model_diagnostics.LogLoss()
    reference = model_diagnostics.decompose(y, z, weights=w, scoring_function=scoring).to_dicts()[0]
    d = calviz.score_decomposition(y, z, score=score, sample_weight=w)
    assert d.mean_score == pytest.approx(reference["score"], abs=1e-10)
    assert d.mcb == pytest.approx(reference["miscalibration"], abs=1e-10)
    assert d.dsc == pytest.approx(reference["discrimination"], abs=1e-10)
    assert d.unc == pytest.approx(reference["uncertainty"], abs=1e-10)
    assert abs(d.mcb - d.dsc + d.unc - d.mean_score) < 1e-12
    assert d.mcb >= -1e-15 and d.dsc >= -1e-15


@pytest.mark.parametrize("score", ["brier", "log"])
def test_unit_sums_equal_the_per_row_fit(score):
    """The decomposition from the units' sums (unweighted, no resamples) equals the one from the full
    isotonic fit (per-row arrays), on continuous predictions, ties closer than the tie resolution,
    n = 2 and all-0 / all-1 labels."""
    from calviz._corp import _SCORE_KIND, _unit_scores, isotonic_fit

    rng = np.random.default_rng(5)
    kind = _SCORE_KIND[score]
    cases = [rng.uniform(0.01, 0.99, size=4000), 0.3 + 1e-16 * rng.uniform(size=50), np.array([0.2, 0.7]),
             np.round(rng.uniform(0.01, 0.99, size=500), 1)]
    for i, z in enumerate(cases):
        for y in ((rng.uniform(size=z.size) < z).astype(float), np.zeros(z.size), np.ones(z.size)):
            fit = isotonic_fit(z, y)
            expected = (fit.mean_score(kind, fit.x), fit.mean_score(kind),
                        fit.mean_score(kind, np.full_like(fit.x, fit.climatology)), z.size)
            np.testing.assert_allclose(_unit_scores(z, y, kind), expected, rtol=1e-12, atol=1e-13,
                                       err_msg=f"case {i}")


def test_equals_probcal():
    """probcal clips its log-loss levels to [1e-12, 1 − 1e-12]: a difference below 1e-10 here."""
    probcal = pytest.importorskip("probcal")
    z, y, w = _data(9, 2000, weighted=True)
    reference = probcal.corp_reliability(y, z, sample_weight=w, bands=None)
    for score, prefix in (("brier", "brier"), ("log", "log_loss")):
        d = calviz.score_decomposition(y, z, score=score, sample_weight=w)
        assert d.mean_score == pytest.approx(getattr(reference, prefix), abs=1e-10)
        assert d.mcb == pytest.approx(getattr(reference, f"{prefix}_mcb"), abs=1e-10)
        assert d.dsc == pytest.approx(getattr(reference, f"{prefix}_dsc"), abs=1e-10)
        assert d.unc == pytest.approx(getattr(reference, f"{prefix}_unc"), abs=1e-10)
    corp = calviz.corp_reliability(y, z, sample_weight=w, n_resamples=0)
    np.testing.assert_allclose(corp.predict(np.asarray(reference.block_lo)), reference.block_level,
                               rtol=0, atol=1e-12)


def test_brier_by_hand_and_corp_fields():
    z = np.array([0.2, 0.2, 0.6, 0.9])
    y = np.array([0, 1, 0, 1])
    # PAV: units 0.2 → 1/2 (2 rows), 0.6 → 0, 0.9 → 1; 0.5 > 0 pools to 1/3 over three rows
    recal = np.array([1 / 3, 1 / 3, 1 / 3, 1.0])
    d = calviz.score_decomposition(y, z)
    assert d.mean_score == pytest.approx(np.mean((z - y) ** 2), abs=1e-15)
    assert d.mcb == pytest.approx(np.mean((z - y) ** 2) - np.mean((recal - y) ** 2), abs=1e-15)
    assert d.unc == pytest.approx(0.25, abs=1e-15)
    corp = calviz.corp_reliability(y, z, n_resamples=0)
    assert (corp.mcb, corp.dsc, corp.unc) == pytest.approx((d.mcb, d.dsc, d.unc), abs=1e-15)
    log = calviz.score_decomposition(y, z, score="log")
    expected = -np.mean(xlogy(y, recal) + xlogy(1 - y, 1 - recal))
    assert log.mean_score - log.mcb == pytest.approx(expected, abs=1e-14)


def test_log_loss_of_a_certain_wrong_prediction_is_infinite():
    d = calviz.score_decomposition([0, 1, 1], [1.0, 0.5, 0.7], score="log")
    assert np.isinf(d.mean_score) and np.isinf(d.mcb) and np.isfinite(d.dsc) and np.isfinite(d.unc)


def test_bootstrap_intervals():
    z, y, w = _data(4, 1500, weighted=True)
    a = calviz.score_decomposition(y, z, sample_weight=w, n_resamples=300, seed=3)
    b = calviz.score_decomposition(y, z, sample_weight=w, n_resamples=300, seed=3)
    np.testing.assert_array_equal(a.low, b.low)
    point = np.array([a.mean_score, a.mcb, a.dsc, a.unc])
    assert np.all(a.low <= point + 0.01) and np.all(point - 0.01 <= a.high)
    assert np.all(a.high - a.low > 0) and a.n_resamples == 300 and a.level == pytest.approx(0.9)
    assert a.confidence_interval().high is a.high
    assert "ScoreDecomposition(" in repr(a) and "mcb=" in repr(a)


@pytest.mark.parametrize("target", ["top1", "classwise"])
def test_multiclass_targets(target):
    rng = np.random.default_rng(8)
    probs = np.round(rng.dirichlet([1.0, 1.0, 1.0], size=1200), 2)
    probs[:, 2] = 1.0 - probs[:, 0] - probs[:, 1]
    probs = np.clip(probs, 0.0, 1.0)
    probs /= probs.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(3, p=row) for row in probs])
    data = calviz.as_calibration_data(labels, probs)
    z, y = data.top1() if target == "top1" else data.classwise(1)
    d = calviz.score_decomposition(data, target=target, class_index=1)
    scoring = model_diagnostics.SquaredError()
    reference = model_diagnostics.decompose(y, z, scoring_function=scoring).to_dicts()[0]
    assert d.mcb == pytest.approx(reference["miscalibration"], abs=1e-10)
    assert d.dsc == pytest.approx(reference["discrimination"], abs=1e-10)
    assert d.target == target and d.n_classes == 3


def slow_murphy(z, y, w, edges):
    """The binned Brier terms by explicit loops over the bins [e_i, e_{i+1}) (last closed)."""
    m = len(edges) - 1
    ids = np.array([min(np.searchsorted(edges, x, side="right") - 1, m - 1) for x in z])
    W = w.sum()
    ybar = (w * y).sum() / W
    rel = res = wbv = wbc = 0.0
    for b in range(m):
        i = ids == b
        if not i.any():
            continue
        Wb = w[i].sum()
        zb = (w[i] * z[i]).sum() / Wb
        yb = (w[i] * y[i]).sum() / Wb
        rel += Wb * (zb - yb) ** 2 / W
        res += Wb * (yb - ybar) ** 2 / W
        wbv += (w[i] * (z[i] - zb) ** 2).sum() / W
        wbc += 2 * (w[i] * (z[i] - zb) * (y[i] - yb)).sum() / W
    return (w * (z - y) ** 2).sum() / W, rel, res, ybar * (1 - ybar), wbv, wbc


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_bins", [1, 7, 10])
def test_murphy_equals_direct_sum(weighted, n_bins):
    z, y, w = _data(n_bins, 800, weighted=weighted, decimals=1)  # predictions on bin edges
    d = calviz.murphy_decomposition(y, z, n_bins=n_bins, sample_weight=w)
    expected = slow_murphy(z, y.astype(float), np.ones(800) if w is None else w,
                           np.arange(n_bins + 1) / n_bins)  # the edges i/m
    got = (d.brier, d.reliability, d.resolution, d.uncertainty, d.within_bin_variance,
           d.within_bin_covariance)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)
    terms = d.reliability - d.resolution + d.uncertainty + d.within_bin_variance - d.within_bin_covariance
    assert abs(terms - d.brier) < 1e-12


def test_murphy_constant_within_bins_has_no_extra_terms():
    z = np.repeat([0.05, 0.35, 0.85], 10)
    y = np.tile([0, 1], 15)
    d = calviz.murphy_decomposition(y, z, n_bins=10)
    assert abs(d.within_bin_variance) < 1e-15 and abs(d.within_bin_covariance) < 1e-15
