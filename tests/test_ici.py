"""ICI, E50, E90, Emax: against a direct evaluation of calviz's kernel curve at the predictions, and
against the LOESS summaries of Austin and Steyerberg (statsmodels' lowess, span 0.75, which is what
probcal reports).  The smoothers differ (kernel at the SmoothECE bandwidth vs local-linear LOESS over
three quarters of the data), so the comparison with LOESS has a tolerance: on smooth miscalibration with
n = 4000 the ICIs agree to 0.015 and E50, E90 to 0.035 (measured: ICI 0.0055–0.011, E50 ≤ 0.028 where
LOESS flattens the curvature of p², E90 ≤ 0.022; Emax, a maximum at the sparse ends, up to 0.044 and
not compared)."""

from __future__ import annotations

import numpy as np
import pytest

import calviz


def _sample(seed, n, power):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.01, 0.99, size=n)
    return p, (rng.uniform(size=n) < p ** power).astype(int)


def direct_kernel_curve(p, y, sigma, points):
    """Nadaraya–Watson with the reflected Gaussian K(t, v) = Σ_k φ(t − v − 2k) + φ(t + v − 2k), summed
    literally over all pairs."""
    t = points[:, None]
    k = np.zeros((points.shape[0], p.shape[0]))
    for shift in range(-3, 4):
        k += np.exp(-0.5 * ((t - p - 2 * shift) / sigma) ** 2)
        k += np.exp(-0.5 * ((t + p - 2 * shift) / sigma) ** 2)
    return (k * y).sum(axis=1) / k.sum(axis=1)


def test_equals_direct_kernel_evaluation():
    p, y = _sample(1, 600, 1.5)
    r = calviz.ici(y, p)
    d = np.abs(direct_kernel_curve(p, y, r.bandwidth, p) - p)
    np.testing.assert_allclose([r.ici, r.e50, r.e90, r.emax],
                               [d.mean(), np.median(d), np.quantile(d, 0.9), d.max()], atol=1e-4)
    given = calviz.ici(y, p, bandwidth=0.05)
    d = np.abs(direct_kernel_curve(p, y, 0.05, p) - p)
    assert given.bandwidth == 0.05 and given.ici == pytest.approx(d.mean(), abs=1e-4)


@pytest.mark.parametrize("power", [0.7, 1.5, 2.0])
def test_close_to_loess(power):
    lowess = pytest.importorskip("statsmodels.nonparametric.smoothers_lowess").lowess
    p, y = _sample(int(power * 10), 4000, power)
    d = np.abs(lowess(y, p, frac=0.75, it=0, return_sorted=False) - p)
    r = calviz.ici(y, p)
    assert r.ici == pytest.approx(d.mean(), abs=0.015)
    assert r.e50 == pytest.approx(np.median(d), abs=0.035)
    assert r.e90 == pytest.approx(np.quantile(d, 0.9), abs=0.035)
    probcal = pytest.importorskip("probcal.metrics")  # the LOESS reference is probcal's ICI and E90
    assert probcal.ici(y, p, grid_size=None) == pytest.approx(d.mean(), abs=1e-12)
    assert probcal.e90(y, p, grid_size=None) == pytest.approx(np.quantile(d, 0.9), abs=1e-12)


def test_calibrated_model_has_small_ici_and_result_conventions():
    p, y = _sample(3, 5000, 1.0)
    r = calviz.ici(y, p)
    assert r.ici < 0.03 and r.e50 <= r.e90 <= r.emax
    assert r.statistic == r.ici and "ICIResult(" in repr(r) and r.to_dict()["e90"] == r.e90
    data = calviz.datasets.load_dataset("digits-gnb")
    top1 = calviz.ici(data)
    conf, correct = data.top1()
    assert top1.target == "top1" and top1.ici == pytest.approx(calviz.ici(correct.astype(int), conf).ici)
