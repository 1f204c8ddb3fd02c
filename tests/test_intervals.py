"""The Sun et al. (2024) ECE confidence interval (estimators.md §4) and its percentile-bootstrap baseline."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats
from test_ece import slow_equal_width_bin, slow_stats

import calviz
from calviz._ece import BinSums, binned_sums, prepare_view
from calviz._intervals import _interval, ece_ci, ece_interval, interval_from_sums

Z1 = stats.norm.ppf(0.9)
Z2 = stats.norm.ppf(0.95)


def test_regimes_exactly_as_specified():
    s, sd0 = 1.0, 0.0
    # far: T+ >= 2 z2 s
    lo, hi, reg = _interval(2 * Z2 * s + 0.1, s, sd0, 0.1)
    assert lo == pytest.approx(2 * Z2 + 0.1 - Z2) and hi == pytest.approx(2 * Z2 + 0.1 + Z2)
    assert reg.startswith("far")
    # middle: 2 z1 s <= T+ < 2 z2 s
    t = (2 * Z1 + 2 * Z2) / 2
    lo, hi, reg = _interval(t, s, sd0, 0.1)
    assert lo == pytest.approx(t / 2) and hi == pytest.approx(t + Z2) and reg.startswith("middle")
    # near: T+ < 2 z1 s
    t = 1.5 * Z1
    lo, _, reg = _interval(t, s, sd0, 0.1)
    assert lo == pytest.approx(max(t - Z1, 0)) and reg.startswith("near")
    lo, _, _ = _interval(0.5 * Z1, s, sd0, 0.1)
    assert lo == 0.0
    # calibrated: T+ < z1 sd0 overrides
    lo, hi, reg = _interval(10.0, s, 10.0 / Z1 + 1e-9, 0.1)
    assert lo == 0.0 and hi == pytest.approx(10.0 + Z2) and reg.startswith("calibrated")
    # negative T is clipped to 0
    lo, hi, _ = _interval(-3.0, s, sd0, 0.1)
    assert lo == 0.0 and hi == pytest.approx(Z2)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.3])
def test_interval_from_sums_matches_slow_formulas(alpha):
    rng = np.random.default_rng(int(alpha * 100))
    n, m = 120, 6
    z = rng.uniform(size=n)
    z[:10] = rng.integers(0, m + 1, size=10) / m
    y = (rng.uniform(size=n) < z**2).astype(float)
    ci = ece_interval(y, z, n_bins=m, alpha=alpha)
    ref = slow_stats(z[:, None], y[:, None], [slow_equal_width_bin(x, m) for x in z])
    s = math.sqrt(max(ref["sig1"], 0) / n)
    sd0 = math.sqrt(ref["var0_u"])
    assert ci.statistic == pytest.approx(ref["T"], rel=1e-12)
    assert ci.se == pytest.approx(s, rel=1e-10)
    assert ci.null_sd == pytest.approx(sd0, rel=1e-10)
    lo, hi, reg = _interval(ref["T"], s, sd0, alpha)
    assert (ci.low_sq, ci.high_sq, ci.regime) == (pytest.approx(lo, rel=1e-9, abs=1e-15),
                                                  pytest.approx(hi, rel=1e-9), reg)
    assert ci.level == pytest.approx(1 - alpha) and ci.alpha == alpha
    assert ci.low == pytest.approx(math.sqrt(lo)) and ci.high == pytest.approx(math.sqrt(hi))
    assert ci.estimate == pytest.approx(math.sqrt(max(ref["T"], 0)))


def test_topk_interval_and_alias():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(10), size=2000)
    labels = rng.integers(0, 10, size=2000)
    with pytest.warns(DeprecationWarning, match="use calviz.ece_interval"):
        ci = ece_ci(labels, P, n_bins=4, top_k=2)
    assert ci.target == "topk" and ci.n == 2000
    assert 0 <= ci.low <= ci.estimate <= ci.high
    # labels independent of P: strongly mis-calibrated at top-1, the lower bound is positive
    assert ci.low > 0.1
    # top_k = K: top-1-to-K calibration of the sorted vector
    P3 = P[:300, :3] / P[:300, :3].sum(1, keepdims=True)
    ci_full = ece_interval(labels[:300] % 3, P3, n_bins=2, top_k=3)
    assert ci_full.high >= ci_full.low >= 0


def test_full_target_interval_is_of_full_calibration_not_of_the_sorted_vector():
    """A binary model whose P(y = 1) is 0.1 too low everywhere, on predictions symmetric about 1/2: the
    sorted vector is calibrated (at every top-1 value the model is under-confident where class 1 is on top
    and over-confident where class 0 is, equally often), the model is not.  The full target's interval
    bins the vector itself on the simplex partition: its statistic is the unbiased ECE² of those bins,
    and it excludes 0 as the binary interval does."""
    rng = np.random.default_rng(3)
    n, m = 20_000, 10
    p = rng.uniform(0.15, 0.85, n)
    y = (rng.uniform(size=n) < p + 0.1).astype(int)
    P = np.c_[1 - p, p]
    full = ece_interval(y, P, n_bins=m, target="full")
    binary = ece_interval(y, p, n_bins=m)
    sorted_vector = ece_interval(y, P, n_bins=m, top_k=2)
    assert full.target == "full" and full.low > 0.1 and binary.low > 0.05
    assert sorted_vector.low == 0.0  # top-1-to-2 calibrated: it cannot see this miscalibration
    # the statistic of the simplex cells, by a direct sum over each cell's pairs (cells of the K = 2 simplex
    # are equal-width bins of z_1 = P(y = 0))
    cells = np.minimum((P[:, 0] * m).astype(int), m - 1)
    residual = np.eye(2)[y] - P
    total = 0.0
    for c in np.unique(cells):
        r = residual[cells == c]
        if len(r) >= 2:
            s = r.sum(axis=0)
            total += (s @ s - np.sum(r * r)) / (len(r) - 1)
    assert full.statistic == pytest.approx(total / n, rel=1e-9)
    assert np.isclose(full.statistic, calviz.unbiased_ece(y, P, n_bins=m, target="full").value, rtol=1e-12)


def test_interval_from_merged_sums_equals_in_memory():
    rng = np.random.default_rng(2)
    z = rng.uniform(size=1000)
    y = (rng.uniform(size=1000) < z).astype(float)
    whole = ece_interval(y, z, n_bins=10)
    parts = BinSums.empty(1)
    for chunk in np.array_split(np.arange(1000), 5):
        s, _, _, _ = binned_sums(z[chunk], y[chunk], n_bins=10)
        parts = parts.merge(s)
    merged = interval_from_sums(parts, 0.1, n_bins=10)
    for f in ("estimate_sq", "low_sq", "high_sq", "se", "null_sd"):
        assert getattr(merged, f) == pytest.approx(getattr(whole, f), rel=1e-10, abs=1e-15)


def test_bootstrap_reproducible_and_matches_explicit_resampling():
    rng = np.random.default_rng(3)
    n, m = 60, 4
    z = rng.uniform(size=n)
    y = (rng.uniform(size=n) < 0.3 + 0.4 * z).astype(float)
    a = ece_interval(y, z, n_bins=m, method="bootstrap", n_resamples=3000, seed=5)
    b = ece_interval(y, z, n_bins=m, method="bootstrap", n_resamples=3000, seed=5)
    assert a == b and a.method == "bootstrap"
    # reference: explicit resamples of pairs, T recomputed from scratch per bin (pairs j != l of the
    # resample: (S^2 - sum v^2) / (N - 1))
    keys = np.array([slow_equal_width_bin(x, m) for x in z])
    ref = np.empty(1500)
    for r in range(ref.size):
        idx = rng.integers(0, n, size=n)
        v, kk = y[idx] - z[idx], keys[idx]
        total = 0.0
        for b in set(kk.tolist()):
            vb = v[kk == b]
            if vb.size >= 2:
                total += (vb.sum() ** 2 - (vb**2).sum()) / (vb.size - 1)
        ref[r] = total / n
    from calviz._kernels.ece import bootstrap_unbiased_kernel

    _, _, zz, yy = prepare_view(y, z)
    ids = keys  # dense already (0..m-1 all present?) -> compress
    uniq, dense = np.unique(ids, return_inverse=True)
    reps = bootstrap_unbiased_kernel(dense.astype(np.int64), uniq.size, (yy - zz).reshape(-1, 1), 3000, 11)
    ks = stats.ks_2samp(reps, ref)
    assert ks.pvalue > 1e-3, f"bootstrap replicates differ from explicit resampling: KS p = {ks.pvalue:.2g}"
    lo, hi = np.quantile(reps, [0.05, 0.95])
    assert a.low_sq == pytest.approx(max(lo, 0), abs=3 * reps.std() / 10)
    assert a.high_sq == pytest.approx(max(hi, 0), abs=3 * reps.std() / 10)


def _true_binned_ece_sq(power: float, m: int) -> float:
    """Binned ECE² for z ~ U[0,1], P(y=1|z) = z^power: Σ_b (1/m) (E[z^power - z | bin b])²."""
    e = np.arange(m + 1) / m
    a, b = e[:-1], e[1:]
    mean_gap = ((b ** (power + 1) - a ** (power + 1)) / (power + 1) - (b**2 - a**2) / 2) / (b - a)
    return float((mean_gap**2).sum() / m)


@pytest.mark.parametrize("power", [1.0, 1.6])
def test_coverage_sanity_small(power):
    """Coverage of the 90 % interval for the binned ECE² at n = 1000 (full study: benchmarks/)."""
    rng = np.random.default_rng(int(power * 10))
    n, m, reps = 1000, 8, 300
    truth = _true_binned_ece_sq(power, m)
    hits = 0
    for _ in range(reps):
        z = rng.uniform(size=n)
        y = (rng.uniform(size=n) < z**power).astype(float)
        ci = ece_interval(y, z, n_bins=m, alpha=0.1)
        hits += ci.low_sq <= truth <= ci.high_sq
    cov = hits / reps
    mcse = math.sqrt(0.9 * 0.1 / reps)
    assert cov >= 0.9 - 3 * mcse, f"coverage {cov:.3f} < 0.9 - 3 MC se ({mcse:.3f}); truth {truth:.3g}"


@pytest.mark.parametrize(
    "kwargs",
    [dict(alpha=0), dict(alpha=1), dict(alpha="x"), dict(n_bins=0), dict(method="subsample"),
     dict(method="bootstrap", n_resamples=1), dict(method="bootstrap", n_resamples=2.5), dict(top_k=0),
     dict(top_k=3)],
)
def test_bad_options(kwargs):
    with pytest.raises(ValueError):
        ece_interval([0, 1, 1], [0.2, 0.6, 0.9], **kwargs)


def test_public_name():
    assert calviz.ece_interval is ece_interval
    assert calviz.ECEInterval.__name__ == "ECEInterval"


@settings(max_examples=60, deadline=None)
@given(
    z=arrays(np.float64, st.integers(0, 10), elements=st.floats(-0.5, 1.5) | st.floats(0, 1)),
    y=arrays(np.float64, st.integers(0, 10), elements=st.sampled_from([0.0, 1.0, 3.0])),
    m=st.integers(0, 12),
    alpha=st.floats(-0.2, 1.2),
    method=st.sampled_from(["asymptotic", "bootstrap"]),
)
def test_property_interval_validates_or_value_error(z, y, m, alpha, method):
    try:
        ci = ece_interval(y, z, n_bins=m, alpha=alpha, method=method, n_resamples=20, seed=0)
    except ValueError:
        return
    assert 0.0 <= ci.low <= ci.high and np.isfinite(ci.high)
    assert 0.0 <= ci.low_sq <= ci.estimate_sq + 1e-15 or ci.method == "bootstrap"
    assert ci.level == pytest.approx(1 - alpha)


def test_the_analysis_keeps_the_full_targets_cells_populated():
    """15 bins per axis of a 10-class simplex are 15⁹ cells: nearly every row alone, nothing left of the
    statistic.  The analysis lowers the bins per axis to keep ~10 rows per cell and says so."""
    from calviz import plots
    from calviz.analysis import AnalysisOptions, compute_interval, interval_bins
    from calviz.datasets import load_dataset

    digits = load_dataset("digits-gnb")
    interval = compute_interval(digits, AnalysisOptions(target="full"))
    assert interval.n_bins == interval_bins(digits.n, "full", 10, 15) == 2
    assert interval.low > 0.05  # over-confident naive Bayes: the interval excludes 0, as T-Cal rejects
    assert plots.interval_title(interval).endswith("(2 bins per axis, 512 simplex cells)")
    assert interval_bins(10 * 4**3, "full", 4, 15) == 4 and interval_bins(10 * 4**3 - 1, "full", 4, 15) == 3
    assert interval_bins(50, "full", 4, 15) == 2 and interval_bins(10**9, "full", 3, 15) == 15
    assert interval_bins(50, "full", 2, 15) == 15  # K = 2: the bins of the one probability
