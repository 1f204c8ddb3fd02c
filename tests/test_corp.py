"""CORP reliability diagrams: the PAV curve against scikit-learn's IsotonicRegression and a brute-force
min-max formula, the bands' reproducibility and, by a small simulation, the consistency band's coverage."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

import calviz
from calviz._corp import isotonic_fit


def _tied_data(rng, n, *, decimals=2, power=1.0):
    z = np.round(rng.uniform(size=n), decimals)
    y = (rng.uniform(size=n) < z ** power).astype(int)
    return z, y


def brute_force_isotonic(z, y, w):
    """The weighted isotonic regression by its min-max formula over the distinct predictions u:
    f(u_i) = max_{s ≤ i} min_{t ≥ i} (Σ_{s..t} w y) / (Σ_{s..t} w) (Robertson, Wright and Dykstra 1988)."""
    xs = np.unique(z)
    sw = np.array([w[z == x].sum() for x in xs])
    swy = np.array([(w * y)[z == x].sum() for x in xs])
    m = len(xs)
    fit = np.empty(m)
    for i in range(m):
        fit[i] = max(min(swy[s:t + 1].sum() / sw[s:t + 1].sum() for t in range(i, m)) for s in range(i + 1))
    return xs, fit


@pytest.mark.parametrize("n", [2, 3, 17, 500, 4000])
@pytest.mark.parametrize("weighted", [False, True])
def test_pav_equals_sklearn_isotonic(n, weighted):
    rng = np.random.default_rng(n + 7 * weighted)
    z, y = _tied_data(rng, n, power=1.4)
    w = rng.uniform(0.1, 3.0, size=n) if weighted else None
    corp = calviz.corp_reliability(y, z, sample_weight=w, n_resamples=0)
    reference = IsotonicRegression(out_of_bounds="clip").fit(z, y, sample_weight=w)
    np.testing.assert_allclose(corp.predict(z), reference.predict(z), rtol=0, atol=1e-12)
    np.testing.assert_allclose(corp.recalibrated, reference.predict(corp.x), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(corp.x, np.unique(z))
    total = np.ones(n) if w is None else w
    np.testing.assert_allclose(corp.weight, [total[z == x].sum() for x in corp.x], rtol=1e-12)


@pytest.mark.parametrize("label", [0, 1])
def test_all_one_label(label):
    z = np.array([0.1, 0.4, 0.4, 0.9])
    y = np.full(4, label)
    corp = calviz.corp_reliability(y, z, n_resamples=20, seed=0)
    np.testing.assert_array_equal(corp.recalibrated, np.full(3, float(label)))
    assert corp.dsc == 0.0 and corp.unc == 0.0
    np.testing.assert_allclose(corp.mcb, np.mean((z - label) ** 2), atol=1e-15)


def test_brute_force_min_max_formula():
    rng = np.random.default_rng(3)
    for n in (2, 5, 30, 80):
        z = np.round(rng.uniform(size=n), 1)
        y = (rng.uniform(size=n) < 1 - z).astype(float)  # decreasing: much pooling
        w = rng.integers(1, 5, size=n).astype(float)
        xs, fit = brute_force_isotonic(z, y, w)
        corp = calviz.corp_reliability(y, z, sample_weight=w, n_resamples=0)
        np.testing.assert_array_equal(corp.x, xs)
        np.testing.assert_allclose(corp.recalibrated, fit, rtol=0, atol=1e-12)


def test_zero_weights_drop_rows():
    rng = np.random.default_rng(4)
    z, y = _tied_data(rng, 300)
    w = rng.integers(0, 3, size=300).astype(float)
    a = calviz.corp_reliability(y, z, sample_weight=w, n_resamples=0)
    keep = w > 0
    b = calviz.corp_reliability(y[keep], z[keep], sample_weight=w[keep], n_resamples=0)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_allclose(a.recalibrated, b.recalibrated, atol=1e-15)


def test_multiclass_targets_are_their_scalar_views():
    data = calviz.datasets.load_dataset("digits-gnb")
    conf, correct = data.top1()
    top1 = calviz.corp_reliability(data, target="top1", n_resamples=0)
    direct = calviz.corp_reliability(correct.astype(int), conf, n_resamples=0)
    np.testing.assert_array_equal(top1.recalibrated, direct.recalibrated)
    assert top1.target == "top1" and top1.n_classes == 10
    z, y = data.classwise(3)
    cw = calviz.corp_reliability(data, target="classwise", class_index=3, n_resamples=0)
    ref = IsotonicRegression(out_of_bounds="clip").fit(z, y)
    np.testing.assert_allclose(cw.recalibrated, ref.predict(cw.x), atol=1e-12)


def test_bands_reproducible_and_ordered():
    rng = np.random.default_rng(5)
    z, y = _tied_data(rng, 1500, decimals=3, power=1.5)
    a = calviz.corp_reliability(y, z, n_resamples=200, seed=11)
    b = calviz.corp_reliability(y, z, n_resamples=200, seed=11)
    for name in ("consistency_low", "consistency_high", "confidence_low", "confidence_high"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert np.all(a.consistency_low <= a.consistency_high)
    assert np.all(a.confidence_low <= a.confidence_high)
    assert a.confidence_interval().low is a.confidence_low and a.level == pytest.approx(0.9)
    # the consistency band is about the diagonal, the confidence band about the curve
    inside = (a.band_x >= a.consistency_low - 0.05) & (a.band_x <= a.consistency_high + 0.05)
    assert inside.mean() > 0.95
    curve = a.predict(a.band_x)
    assert np.mean((curve >= a.confidence_low) & (curve <= a.confidence_high)) > 0.9
    only = calviz.corp_reliability(y, z, n_resamples=50, bands=["consistency"], seed=1)
    assert only.confidence_low is None and only.consistency_low is not None
    assert "CORPReliability(" in repr(a) and "band_x=array(shape=" in repr(a)


def _refit_left_step(x, y, w, at):
    """scikit-learn's isotonic fit of (x, y, w) read as the diagram's right-continuous step function at
    ``at`` (a point with no weight of its own takes the value of the nearest weighted point on its left,
    the first one's before it)."""
    keep = w > 0
    xs = np.unique(x[keep])
    fitted = IsotonicRegression().fit(x[keep], y[keep], sample_weight=w[keep]).predict(xs)
    return fitted[np.clip(np.searchsorted(xs, at, side="right") - 1, 0, xs.size - 1)]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("mode", ["consistency", "bootstrap"])
def test_band_refits_equal_sklearn_on_the_same_draws(weighted, mode):
    """Each resample of the band kernel (one sort reused, unit sums redrawn, PAV read at the band points)
    equals scikit-learn's isotonic refit of the same resampled rows, the draws replayed from the stream."""
    from calviz._kernels import isotonic as k
    from calviz._kernels.tcal import _next_uniform, stream_seed

    rng = np.random.default_rng(8)
    z, y = _tied_data(rng, 300, decimals=2, power=1.4)
    w = rng.integers(1, 4, 300).astype(float) if weighted else None
    fit = isotonic_fit(z, y, w)
    zs = np.repeat(fit.x, np.diff(fit.start))  # the sorted predictions, tied ones at their unit's value
    ws = fit.w if weighted else np.ones_like(fit.y)
    units = np.arange(fit.x.shape[0], dtype=np.int64)
    kind = k.CONSISTENCY if mode == "consistency" else k.BOOTSTRAP
    fits = k.corp_resample_fits(fit.x, fit.start, fit.y, fit.w, kind, 6, 12345, units)
    n = zs.size
    for r in range(6):
        state = np.uint64(stream_seed(12345, r))  # the kernel's state type (a Python int mixes badly)
        draws = np.empty(n)
        for i in range(n):
            state, draws[i] = _next_uniform(state)
            state = np.uint64(state)
        if mode == "consistency":
            yr, wr = (draws < zs).astype(float), ws
        else:
            counts = np.bincount(np.minimum((draws * n).astype(np.int64), n - 1), minlength=n)
            yr, wr = fit.y, ws * counts
        np.testing.assert_allclose(fits[r], _refit_left_step(zs, yr, wr, fit.x), rtol=0, atol=1e-12)


def test_band_points_are_capped():
    rng = np.random.default_rng(6)
    z = rng.uniform(size=20_000)
    y = (rng.uniform(size=20_000) < z).astype(int)
    corp = calviz.corp_reliability(y, z, n_resamples=5, seed=0)
    assert corp.x.shape[0] == 20_000 and corp.band_x.shape[0] <= 1000
    assert corp.band_x[0] == corp.x[0] and corp.band_x[-1] == corp.x[-1]


def test_consistency_band_pointwise_coverage_under_calibration():
    """Simulation: for a calibrated model the observed curve falls in the consistency band at each point
    with probability ≈ 1 − α (the bands use outward quantiles, so at least 1 − α up to the resampling's
    discreteness).  120 replications of n = 150, α = 0.2: the Monte Carlo se of a point's coverage is
    √(0.8·0.2/120) ≈ 0.037; the mean over points has se ≤ 0.037.  The larger simulation is in
    benchmarks/bench_corp.py (BENCHMARKS.md)."""
    rng = np.random.default_rng(12)
    n, alpha, reps = 150, 0.2, 120
    z = np.sort(rng.uniform(size=n))
    inside = []
    for r in range(reps):
        y = (rng.uniform(size=n) < z).astype(int)
        corp = calviz.corp_reliability(y, z, n_resamples=200, bands=["consistency"], alpha=alpha, seed=r)
        curve = corp.predict(corp.band_x)
        inside.append((curve >= corp.consistency_low) & (curve <= corp.consistency_high))
    coverage = np.mean(inside, axis=0)
    se = np.sqrt(alpha * (1 - alpha) / reps)
    assert abs(coverage.mean() - (1 - alpha)) < 2 * se
    # pointwise: the middle half of the points (the ends are discrete, few rows per block)
    middle = coverage[n // 4: 3 * n // 4]
    assert np.mean(np.abs(middle - (1 - alpha)) < 3 * se) > 0.9


def test_validation():
    with pytest.raises(calviz.InputError, match="n_resamples"):
        calviz.corp_reliability([0, 1], [0.2, 0.8], n_resamples=-1)
    with pytest.raises(calviz.InputError, match="bands"):
        calviz.corp_reliability([0, 1], [0.2, 0.8], bands=["both"])
    with pytest.raises(calviz.InputError, match="target"):
        calviz.corp_reliability([0, 1], [0.2, 0.8], target="full")


def test_isotonic_fit_sorted_once_units():
    z = np.array([0.3, 0.1, 0.3, 0.2, 0.1])
    y = np.array([1, 0, 0, 1, 1])
    fit = isotonic_fit(z, y)
    np.testing.assert_array_equal(fit.x, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(fit.weight, [2, 1, 2])
    np.testing.assert_array_equal(fit.start, [0, 2, 3, 5])
    # unit means 0.5, 1, 0.5: the last two violate the order and pool to (1 + 1) / 3
    np.testing.assert_allclose(fit.fit, [0.5, 2 / 3, 2 / 3], atol=1e-15)
