"""T-Cal (Lee et al., 2023): statistics vs slow references, resampling kernels vs a Python replay of their
random streams, thread independence, level by simulation (with Monte Carlo standard errors), power sanity,
discrete predictors, bad input."""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np
import pytest
from scipy import stats

import calviz
import calviz._tcal as T
from calviz import InputError
from calviz._ece import binned_sums
from calviz._kernels import tcal as K

MASK64 = (1 << 64) - 1


# ------------------------------------------------------------------------------------------------
# slow references
# ------------------------------------------------------------------------------------------------
def slow_dpe(z, onehot_or_y, m, full=False):
    """T^d by explicit pairs: (1/n) Σ_b (1/N_b) Σ_{j≠l∈b} <v_j, v_l> on equal-width (or simplex) bins."""
    if full:
        from calviz._binning import simplex_cell_keys

        ids = simplex_cell_keys(z, m)
        v = onehot_or_y - z
    else:
        edges = np.arange(m + 1) / m
        ids = np.clip(np.searchsorted(edges, z, side="right") - 1, 0, m - 1)
        v = (onehot_or_y - z)[:, None]
    n = len(z)
    total = 0.0
    for b in np.unique(ids):
        idx = np.flatnonzero(ids == b)
        if len(idx) < 2:
            continue
        g = v[idx] @ v[idx].T
        total += (g.sum() - np.trace(g)) / len(idx)
    return total / n


def random_binary(rng, n, kind):
    if kind == "uniform":
        z = rng.random(n)
    elif kind == "ties":
        z = rng.integers(0, 7, n) / 6.0  # many ties, values on dyadic-ish edges, includes 0 and 1
    elif kind == "edges":
        z = rng.integers(0, 65, n) / 64.0  # exactly on dyadic bin edges, including 1.0
    else:
        z = rng.beta(5, 0.5, n)
    y = (rng.random(n) < z).astype(np.int64)
    return z, y


def splitmix_stream(seed):
    """SplitMix64 uniforms in [0, 1): the top 53 bits of each raw output."""
    for x in splitmix_raw(seed):
        yield (x >> 11) * (1.0 / 9007199254740992.0)


def mc_se(p, reps):
    return math.sqrt(max(p * (1 - p), 1e-12) / reps)


# ------------------------------------------------------------------------------------------------
# statistics
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["uniform", "ties", "edges", "beta"])
@pytest.mark.parametrize("n", [2, 3, 17, 400])
def test_statistics_equal_debiased_ece_and_slow_pairs(kind, n):
    rng = np.random.default_rng(n * 7 + len(kind))
    z, y = random_binary(rng, n, kind)
    scales, t = T.multiscale_statistics(y, z, max_level=12)
    scale_mag = np.mean((y - z) ** 2) + 1e-300
    for m, tb in zip(scales, t, strict=True):
        d = calviz.debiased_ece(y, z, n_bins=m).value
        assert abs(tb - d) <= 1e-12 * (abs(d) + scale_mag / n), (m, tb, d)
        if m <= 256:
            s = slow_dpe(z, y, m)
            assert abs(tb - s) <= 1e-12 * (abs(s) + scale_mag), (m, tb, s)


@pytest.mark.parametrize("labels", ["all_correct", "all_wrong"])
def test_statistics_extreme_labels(labels):
    rng = np.random.default_rng(3)
    z = rng.random(300)
    y = (z >= 0.5).astype(int) if labels == "all_correct" else (z < 0.5).astype(int)
    scales, t = T.multiscale_statistics(y, z, max_level=10)
    for m, tb in zip(scales, t, strict=True):
        d = calviz.debiased_ece(y, z, n_bins=m).value
        assert abs(tb - d) <= 1e-12 * (abs(d) + 1.0 / 300)


def test_adaptive_statistics_are_the_debiased_ece_at_every_scale():
    rng = np.random.default_rng(11)
    z, y = random_binary(rng, 1000, "uniform")
    r = calviz.adaptive_tcal(y, z, resampling="analytic")
    assert r.n_bins == tuple(2**b for b in range(1, len(r.n_bins) + 1))
    for m, tb in zip(r.n_bins, r.statistics, strict=True):
        d = calviz.debiased_ece(y, z, n_bins=m).value
        assert abs(tb - d) <= 1e-12 * (abs(d) + 1e-3)


@pytest.mark.parametrize("n_classes", [2, 3, 4])
def test_full_calibration_statistics_on_the_simplex(n_classes):
    rng = np.random.default_rng(n_classes)
    n = 600
    z = rng.dirichlet(np.ones(n_classes), n)
    z[:5] = np.eye(n_classes)[rng.integers(0, n_classes, 5)]  # vertices of the simplex
    z[5:10] = 1.0 / n_classes  # the barycentre (ties)
    labels = (z.cumsum(1) < rng.random(n)[:, None]).sum(1).clip(0, n_classes - 1)
    scales, t = T.multiscale_statistics(labels, z, target="full")
    onehot = np.eye(n_classes)[labels]
    for m, tb in zip(scales, t, strict=True):
        d = calviz.debiased_ece(labels, z, n_bins=m, target="full").value
        assert abs(tb - d) <= 1e-12 * (abs(d) + 1.0 / n), (m, tb, d)
        if m <= 16:
            s = slow_dpe(z, onehot, m, full=True)
            assert abs(tb - s) <= 1e-12 * (abs(s) + 1.0), (m, tb, s)


# ------------------------------------------------------------------------------------------------
# resampling kernels: replay the random streams in Python
# ------------------------------------------------------------------------------------------------
# (the kernels are called with every argument, the optional start and workers too, as calviz calls them:
# numba compiles a call that leaves one out as a signature of its own, tens of CPU-s in each test process
# of a fresh checkout)
def _scan(z, y, levels):
    order = np.argsort(z, kind="stable")
    zs = np.ascontiguousarray(z[order])
    return zs, y[order], K.dyadic_split_levels(zs, levels)


def test_y_only_kernel_equals_statistic_of_replayed_labels():
    rng = np.random.default_rng(5)
    z, _ = random_binary(rng, 200, "ties")
    levels = 9
    zs, _, split = _scan(z, np.zeros(200), levels)
    base = np.uint64(123456789)
    boot = K.resampled_statistics(split, levels, zs.reshape(-1, 1), K.SCALAR, K.Y_ONLY, base, 5, 0, 2)
    for r in range(5):
        u = splitmix_stream(int(K.stream_seed(base, r)))
        ystar = np.array([1.0 if next(u) < zi else 0.0 for zi in zs])
        expected = K.observed_statistics(split, levels, zs.reshape(-1, 1), ystar, K.SCALAR)
        np.testing.assert_array_equal(boot[r], expected)
        for b in (1, 4, 9):
            assert abs(expected[b - 1] - slow_dpe(zs, ystar, 2**b)) < 1e-13


def splitmix_raw(seed):
    """The raw 64-bit SplitMix64 outputs (as the kernels' _mix(state))."""
    state = int(seed)
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        x = state
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
        yield x ^ (x >> 31)


def replay_consistency_draws(zs, seed):
    """Python replay of the consistency draws of one resample: Poisson(z_i) ones and Poisson(1 − z_i)
    zeros per point by inversion of two 32-bit uniforms, then exact size n by adding or removing draws."""
    n = len(zs)
    raw = splitmix_raw(seed)

    def uniform():
        return (next(raw) >> 11) * (1.0 / 9007199254740992.0)

    def poisson(u32, lam):
        k, p = 0, math.exp(-lam)
        cdf = p
        while u32 >= int(cdf * 2.0**32) and p > 0:
            k += 1
            p *= lam / k
            cdf += p
        return k

    ones, zeros = np.zeros(n, int), np.zeros(n, int)
    for i, zi in enumerate(zs):
        x = next(raw)
        ones[i] = poisson(x >> 32, zi)
        zeros[i] = poisson(x & 0xFFFFFFFF, 1.0 - zi)
    total, wmax = int((ones + zeros).sum()), int((ones + zeros).max())
    while total < n:
        i = min(int(uniform() * n), n - 1)
        if uniform() < zs[i]:
            ones[i] += 1
        else:
            zeros[i] += 1
        total += 1
    while total > n:
        i = min(int(uniform() * n), n - 1)
        w = ones[i] + zeros[i]
        if uniform() * wmax >= w:
            continue
        if uniform() * w < ones[i]:
            ones[i] -= 1
        else:
            zeros[i] -= 1
        total -= 1
    return ones, zeros


@pytest.mark.parametrize("n", [2, 3, 150])
def test_consistency_kernel_equals_statistic_of_replayed_multiset(n):
    rng = np.random.default_rng(6)
    z = rng.random(n)
    z[: n // 3] = 0.5  # ties: duplicated points share every bin
    if n > 3:
        z[-2:] = (0.0, 1.0)  # Poisson(0) draws: the inversion thresholds at their 2^32 limit
    levels = 8
    zs, _, split = _scan(z, np.zeros(n), levels)
    base = np.uint64(99)
    boot = K.resampled_statistics(split, levels, zs.reshape(-1, 1), K.SCALAR, K.CONSISTENCY, base, 70, 0, 2)
    for r in (0, 1, 69):  # two blocks of lanes
        ones, zeros = replay_consistency_draws(zs, K.stream_seed(base, r))
        assert ones.sum() + zeros.sum() == n
        zz = np.concatenate([np.repeat(zs, ones), np.repeat(zs, zeros)])
        yy = np.concatenate([np.ones(ones.sum()), np.zeros(zeros.sum())])
        for b in range(1, levels + 1):
            assert abs(boot[r, b - 1] - slow_dpe(zz, yy, 2**b)) < 1e-12, (r, b)


def test_consistency_kernel_one_at_a_time_for_large_n():
    """Beyond MIN_CONSISTENCY_LANES lanes (n > 2^18) resamples run one at a time: weights from the
    stream stream_seed(seed, 0), a label per copy from the stream seed (replayed here for one resample)."""
    n = K.CONSISTENCY_WEIGHT_CELLS // K.MIN_CONSISTENCY_LANES + 1
    assert not K._batched_consistency(n) and K._batched_consistency(n - 1)
    rng = np.random.default_rng(9)
    zs = np.sort(rng.random(n))
    levels = 3
    split = K.dyadic_split_levels(zs, levels)
    base = np.uint64(4)
    boot = K.resampled_statistics(split, levels, zs.reshape(-1, 1), K.SCALAR, K.CONSISTENCY, base, 1, 0, 2)
    seed = K.stream_seed(base, 0)
    u = np.fromiter(splitmix_stream(int(K.stream_seed(np.uint64(seed), 0))), float, count=n)
    weights = np.bincount(np.minimum((u * n).astype(np.int64), n - 1), minlength=n)
    zz = np.repeat(zs, weights)
    labels = np.fromiter(splitmix_stream(int(seed)), float, count=n) < zz
    v = labels - zz
    for b in range(1, levels + 1):  # (S_b² − Q_b)/N_b per bin (the pair sum; pairs are too many here)
        ids = np.minimum((zz * 2**b).astype(np.int64), 2**b - 1)
        S, Q, N = (np.bincount(ids, w, minlength=2**b) for w in (v, v * v, None))
        expected = np.sum(np.where(N >= 2, (S * S - Q) / np.maximum(N, 1), 0.0)) / n
        assert abs(boot[0, b - 1] - expected) < 1e-12


def test_consistency_draws_are_multinomial_with_bernoulli_labels():
    """The Poissonised draws with the exact-size correction are multinomial(n; 1/n, ...) with labels
    Ber(z_i): per point E[w] = 1, Var[w] = 1 − 1/n, E[ones] = z_i, and Σ w = n always."""
    n, R = 7, 64
    z = np.linspace(0.05, 0.95, n)
    seeds = np.array([K.stream_seed(np.uint64(3), r) for r in range(R)], dtype=np.uint64)
    ones = np.empty((n, R), np.int8)
    zeros = np.empty((n, R), np.int8)
    w_all, o_all = [], []
    for rep in range(300):
        seeds = np.array([K.stream_seed(np.uint64(rep), r) for r in range(R)], dtype=np.uint64)
        K.consistency_draws(z, K.poisson_tables(z), seeds, ones, zeros)
        w = ones.astype(int) + zeros
        assert (w.sum(axis=0) == n).all()
        w_all.append(w)
        o_all.append(ones.astype(int))
    w = np.concatenate(w_all, axis=1)
    o = np.concatenate(o_all, axis=1)
    reps = w.shape[1]
    np.testing.assert_allclose(w.mean(axis=1), 1.0, atol=5 * math.sqrt(1 / reps))
    np.testing.assert_allclose(w.var(axis=1), 1 - 1 / n, atol=6 * math.sqrt(2 / reps))
    np.testing.assert_allclose(o.mean(axis=1), z, atol=5 * math.sqrt(1 / reps))
    # P(w_i = 0) = (1 − 1/n)^n
    np.testing.assert_allclose((w == 0).mean(axis=1), (1 - 1 / n) ** n, atol=5 * math.sqrt(0.25 / reps))


def test_vector_y_only_kernel_equals_replayed_categorical_labels():
    rng = np.random.default_rng(8)
    n, k = 120, 3
    z = rng.dirichlet(np.ones(k), n)
    labels = rng.integers(0, k, n)
    scan = T._scan_order(z, labels, 4, True)
    base = np.uint64(7)
    boot = K.resampled_statistics(scan.split, 4, scan.z, K.VECTOR, K.Y_ONLY, base, 2, 0, 2)
    for r in range(2):
        u = splitmix_stream(int(K.stream_seed(base, r)))
        ystar = np.array([int(np.searchsorted(np.cumsum(row), next(u), side="right")) for row in scan.z])
        ystar = np.minimum(ystar, k - 1)
        expected = K.observed_statistics(scan.split, 4, scan.z, ystar, K.VECTOR)
        np.testing.assert_allclose(boot[r], expected, rtol=0, atol=1e-15)


def test_null_moments_match_bin_sums_and_simulation():
    rng = np.random.default_rng(9)
    z, y = random_binary(rng, 500, "uniform")
    r = calviz.adaptive_tcal(y, z, resampling="analytic")
    sums = [binned_sums(z, y.astype(float), n_bins=m)[0] for m in r.n_bins]
    t, p = T.analytic_pvalues_from_sums(sums)
    np.testing.assert_allclose(t, r.statistics, rtol=1e-10, atol=1e-15)
    # the bin-sum moments (Satterthwaite) equal the kernel's rows 0-2
    levels = len(r.n_bins)
    zs, _, split = _scan(z, y, levels)
    kernel = K.null_moments(split, levels, zs.reshape(-1, 1), K.SCALAR)
    from_sums = np.array([T.null_moments_from_sums(s) for s in sums]).T
    np.testing.assert_allclose(from_sums, kernel[:3], rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(p, T.analytic_pvalues(t, *kernel[:3])[0], rtol=1e-9, atol=1e-12)
    via = T.analytic_tcal_from_sums(sums, r.n_bins, alpha=0.05)
    assert via.pvalue == pytest.approx(min(1.0, levels * p.min()), rel=1e-9, abs=1e-12)
    # in-memory 1-D analytic p-values also match the third cumulant
    np.testing.assert_allclose(r.pvalues, T.analytic_pvalues(t, *kernel)[0], rtol=1e-9, atol=1e-12)
    # the exact conditional null sd equals the y-only resampling sd (within Monte Carlo error)
    zs, _, split = _scan(z, y, 8)
    var0 = K.null_moments(split, 8, zs.reshape(-1, 1), K.SCALAR)[0]
    boot = K.resampled_statistics(split, 8, zs.reshape(-1, 1), K.SCALAR, K.Y_ONLY, np.uint64(1), 4000, 0, 2)
    ratio = boot.var(axis=0) / var0
    # Var of a sample variance ≈ 2σ⁴/N (+ kurtosis) -> relative s.e. ≈ sqrt(2/4000) ≈ 0.022 (coarse scales
    # are skewed, allow 5 s.e.)
    assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(4 / 4000)), ratio


# ------------------------------------------------------------------------------------------------
# reproducibility and threads
# ------------------------------------------------------------------------------------------------
def test_reproducible_and_seed_dependent():
    rng = np.random.default_rng(12)
    z, y = random_binary(rng, 800, "uniform")
    a = calviz.adaptive_tcal(y, z, seed=42, n_resamples=399)
    b = calviz.adaptive_tcal(y, z, seed=42, n_resamples=399)
    c = calviz.adaptive_tcal(y, z, seed=43, n_resamples=399)
    np.testing.assert_array_equal(a.pvalues, b.pvalues)
    np.testing.assert_array_equal(a.critical_values, b.critical_values)
    assert not np.array_equal(a.critical_values, c.critical_values)
    g1 = calviz.adaptive_tcal(y, z, seed=np.random.default_rng(5), n_resamples=399)
    g2 = calviz.adaptive_tcal(y, z, seed=np.random.default_rng(5), n_resamples=399)
    np.testing.assert_array_equal(g1.pvalues, g2.pvalues)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
@pytest.mark.filterwarnings("ignore:n_resamples")
@pytest.mark.parametrize("resampling", ["y_only", "consistency"])
@pytest.mark.parametrize("target", ["binary", "full"])
def test_one_and_two_threads_give_identical_results(resampling, target):
    rng = np.random.default_rng(13)
    if target == "binary":
        z, y = random_binary(rng, 700, "beta")
        z, y = T._sort_binary(z, y.astype(float))
        scan = T._scan_order(z, y, 10, False, presorted=True)
    else:
        z = rng.dirichlet(np.ones(3), 700)
        y = rng.integers(0, 3, 700)
        scan = T._scan_order(z, y, 5, True)
    source = K.Y_ONLY if resampling == "y_only" else K.CONSISTENCY
    args = (scan.split, scan.max_level, scan.z, scan.kind, source, np.uint64(3), 301)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = K.resampled_statistics(*args, 0, 2)
        numba.set_num_threads(2)
        two = K.resampled_statistics(*args, 0, 2)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, K.resampled_statistics_serial(*args, 0))
    # and through the public function (which picks the serial kernel for a job this small)
    big = calviz.adaptive_tcal(np.tile(y, 30), np.tile(z, (30, 1)) if z.ndim == 2 else np.tile(z, 30),
                               resampling=resampling, n_resamples=301, seed=4,
                               target="full" if target == "full" else "auto")
    try:
        numba.set_num_threads(1)
        big1 = calviz.adaptive_tcal(np.tile(y, 30), np.tile(z, (30, 1)) if z.ndim == 2 else np.tile(z, 30),
                                    resampling=resampling, n_resamples=301, seed=4,
                                    target="full" if target == "full" else "auto")
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(big.pvalues, big1.pvalues)
    np.testing.assert_array_equal(big.critical_values, big1.critical_values)


# ------------------------------------------------------------------------------------------------
# thresholds, scales, result object
# ------------------------------------------------------------------------------------------------
def test_fixed_scale_threshold_formula():
    rng = np.random.default_rng(14)
    z, y = random_binary(rng, 1000, "uniform")
    r = calviz.tcal(y, z, alpha=0.05)
    m = math.floor(1000 ** (2 / 5))  # s = 1, K = 2: m* = 15
    assert r.n_bins == (m,) and m == 15
    thr_vec = math.sqrt(2 * 4 / 0.05) * min(math.sqrt(m) / 1000, 1 / math.sqrt(m))
    assert r.critical_values[0] == pytest.approx(thr_vec / 2, rel=1e-12)  # scalar statistic = T_vec / 2
    assert r.statistics[0] == pytest.approx(calviz.debiased_ece(y, z, n_bins=m).value, rel=1e-12)
    assert r.reject == (r.statistics[0] >= r.critical_values[0])
    assert r.reject == (r.pvalue <= 0.05)
    # explicit bins and smoothness
    assert calviz.tcal(y, z, n_bins=7).n_bins == (7,)
    assert calviz.tcal(y, z, smoothness=0.5).n_bins == (math.floor(1000 ** (2 / 3) + 1e-9),)
    # full calibration, K = 3: m* = floor(n^(2/(4s+2))) = 10 (exact power: no float floor trap)
    zf = rng.dirichlet(np.ones(3), 1000)
    lf = rng.integers(0, 3, 1000)
    rf = calviz.tcal(lf, zf, target="full")
    assert rf.n_bins == (10,) and rf.K == 3
    assert rf.critical_values[0] == pytest.approx(math.sqrt(2 * 9 / 0.05) * min(10 / 1000, 1 / 10))


def test_threshold_pvalue_is_consistent_with_rejection():
    rng = np.random.default_rng(16)
    z = rng.random(20000)
    y = (rng.random(20000) < z**2).astype(int)  # ℓ2-ECE² = ∫(z − z²)² = 1/30
    r = calviz.tcal(y, z, n_bins=4)
    assert r.reject and r.pvalue <= 0.05
    ra = calviz.adaptive_tcal(y, z, resampling="threshold")
    assert ra.reject
    assert ra.reject == (ra.pvalue <= 0.05) == bool(np.any(ra.statistics >= ra.critical_values))


def test_dyadic_scales():
    assert T.dyadic_scales(10_000, 2) == (24, 24)
    B = math.ceil(2 * math.log2(10**6 / math.sqrt(math.log(10**6))))
    assert T.dyadic_scales(10**6, 2) == (B, B)
    # K = 3: B = ceil(log2(n / sqrt(ln n)))
    assert T.dyadic_scales(10_000, 3)[0] == math.ceil(math.log2(10_000 / math.sqrt(math.log(10_000))))
    # cap: 2^{b(K-1)} <= n^2
    B10, used10 = T.dyadic_scales(1000, 10)
    assert all(b * 9 <= 2 * math.log2(1000) for b in range(1, used10 + 1)) and used10 <= B10


def test_result_fields_and_callable_module():
    rng = np.random.default_rng(16)
    z, y = random_binary(rng, 500, "uniform")
    r = calviz.adaptive_tcal(y, z, seed=0)
    B = len(r.n_bins)
    # calibrated: the sequential rule settles "accept" after a few hundred resamples, in whole blocks
    assert r.decision == "accept" and not r.reject and not r.undecided
    assert T.FIRST_BATCH <= r.n_resamples < 999 and r.n_resamples % 64 == 0
    assert r.max_resamples == T.DEFAULT_MAX_RESAMPLES and r.resampling_risk == T.RESAMPLING_RISK
    assert r.min_attainable_pvalue == pytest.approx(B / (r.max_resamples + 1))
    low, high = r.pvalue_interval
    assert 0 <= low <= r.pvalue <= high <= 1 and low > r.alpha
    assert r.statistics.shape == r.critical_values.shape == r.pvalues.shape == (B,)
    assert 0 <= r.pvalue <= 1 and np.all((r.pvalues > 0) & (r.pvalues <= 1))
    assert r.pvalue == pytest.approx(min(1.0, B * r.pvalues.min()))
    assert r.test == "adaptive T-Cal" and r.K == 2 and r.n == 500 and r.target == "binary"
    assert r.scales == r.n_bins and "y-only" in r.reason
    d = r.to_dict()
    assert d["method"] == "y_only" and len(d["pvalues"]) == B and d["decision"] == "accept"
    a = calviz.adaptive_tcal(y, z, resampling="analytic")
    assert a.decision == ("reject" if a.reject else "accept") and a.pvalue_interval == (a.pvalue, a.pvalue)
    assert a.resampling_risk == 0.0
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        r.reject = True  # frozen
    # `calviz.tcal` keeps working after the submodule import rebinds the package attribute
    assert calviz.tcal(y, z).test == "T-Cal (fixed scale)"


def test_few_resamples_warn_and_cannot_reject():
    from calviz._synthetic import tcal_p1m

    sc = tcal_p1m(3000, seed=1, m=4, s=0.5, rho=25)
    with pytest.warns(UserWarning, match="too few"):
        r = calviz.adaptive_tcal(sc.y_true, sc.y_prob, n_resamples=50, seed=0)
    assert r.min_attainable_pvalue > 0.05 and not r.reject
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*too few")
        calviz.adaptive_tcal(sc.y_true, sc.y_prob, n_resamples=50, combine="max", seed=0)  # 1/51 < α


# ------------------------------------------------------------------------------------------------
# level (small simulations; the full-size ones are in benchmarks/tcal_level.py)
# ------------------------------------------------------------------------------------------------
def _calibrated(rng, n, scenario):
    z = rng.random(n) if scenario == "P0" else rng.beta(5.0, 0.5, n)
    return (rng.random(n) < z).astype(np.int64), z


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["P0", "beta"])
@pytest.mark.parametrize("resampling,combine", [("y_only", "bonferroni"), ("consistency", "bonferroni"),
                                                ("y_only", "max"), ("threshold", "bonferroni")])
def test_level_under_calibration(scenario, resampling, combine):
    rng = np.random.default_rng(100 + len(scenario) + len(resampling) + len(combine))
    reps, n, alpha = 300, 300, 0.05  # B = 14 scales: 299 resamples can reach α/B
    rejections = 0
    for rep in range(reps):
        y, z = _calibrated(rng, n, scenario)
        r = calviz.adaptive_tcal(y, z, alpha=alpha, resampling=resampling, combine=combine, n_resamples=299,
                                 seed=rep)
        rejections += r.reject
    rate = rejections / reps
    se = mc_se(alpha, reps)
    assert rate <= alpha + 3 * se, f"{resampling}/{combine} under {scenario}: reject rate {rate:.3f} > " \
                                   f"{alpha} + 3 MC s.e. ({se:.4f}), {reps} reps"


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["P0", "beta"])
def test_analytic_level_at_the_bonferroni_level(scenario):
    """The scaled chi-square must hold the level scale by scale at α/B, not only overall at α."""
    rng = np.random.default_rng(7 + len(scenario))
    reps, n, alpha = 2000, 1000, 0.05
    per_scale = None
    overall = 0
    for _ in range(reps):
        y, z = _calibrated(rng, n, scenario)
        r = calviz.adaptive_tcal(y, z, alpha=alpha, resampling="analytic")
        B = len(r.n_bins)
        hit = r.pvalues <= alpha / B
        per_scale = hit.astype(int) if per_scale is None else per_scale + hit
        overall += r.reject
    level = alpha / B
    se_scale = mc_se(level, reps)
    pooled = per_scale.sum() / (reps * B)
    se_pooled = mc_se(level, reps * B)
    assert pooled <= level + 3 * se_pooled, f"pooled per-scale rate {pooled:.5f} > α/B = {level:.5f} + 3 s.e."
    coarse = per_scale[:5] / reps  # 2..32 bins: the skewed regime where the normal tail fails
    assert np.all(coarse <= level + 3 * se_scale), \
        f"coarse-scale rates {coarse} > α/B = {level:.5f} + 3 MC s.e. ({se_scale:.5f}), {reps} reps"
    se = mc_se(alpha, reps)
    assert overall / reps <= alpha + 3 * se, f"overall {overall / reps:.4f} > {alpha} + 3 s.e. ({se:.4f})"


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["beta_extreme", "softmax10_classwise"])
def test_analytic_level_with_predictions_near_0_and_1(scenario):
    """Confident calibrated models: few-point bins of predictions like 1e−5 at the fine scales, where the
    κ₃-matched χ²_ν has ν ≪ 1.  The test rejected 0.17 (Beta(0.2, 0.4), n = 200) and 0.58 (softmax of
    10 classes, classwise, n = 200) of these samples at α = 0.05; with Cantelli's bound as the floor of
    the p-value where ν < 1 it holds the level (0.013 in 300 runs and 0.027 in 150)."""
    rng = np.random.default_rng(23 + len(scenario))
    reps, n, alpha = 300, 200, 0.05
    rejections = 0
    for _ in range(reps):
        if scenario == "beta_extreme":
            z = rng.beta(0.2, 0.4, n)
            y, options = (rng.random(n) < z).astype(np.int64), {}
        else:
            logits = 6.0 * rng.normal(size=(n, 10))
            z = np.exp(logits - logits.max(axis=1, keepdims=True))
            z /= z.sum(axis=1, keepdims=True)
            y = (z.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1)  # labels drawn from the rows
            options = {"target": "classwise", "class_index": 0}
        rejections += calviz.adaptive_tcal(y, z, alpha=alpha, resampling="analytic", **options).reject
    rate, se = rejections / reps, mc_se(alpha, reps)
    assert rate <= alpha + 3 * se, f"{scenario}: reject rate {rate:.3f} > {alpha} + 3 MC s.e. ({se:.4f})"


def test_analytic_pvalue_is_at_least_cantelli_where_few_degrees_of_freedom():
    from calviz._tcal_decision import MIN_CHI2_DF, analytic_pvalues, cantelli_bound

    t = np.array([1e-9, 1e-9, 0.05])
    var = np.array([1e-6, 1e-6, 1e-4])
    k3 = np.array([1e-4, 1e-12, 1e-12])  # ν = 8 Var³/κ₃²: 8e-10 (≪ 1), then 8e6 and 8e12
    p, nu, _ = analytic_pvalues(t, var, np.ones(3), np.ones(3), k3)
    assert nu[0] < MIN_CHI2_DF <= nu[1]
    assert p[0] >= cantelli_bound(t, var)[0] > 0.99  # (the χ² approximation alone gave ≈ 0)
    assert p[1] == pytest.approx(0.5, abs=0.01) and p[2] < 1e-3


# ------------------------------------------------------------------------------------------------
# power sanity on P_{1,m}
# ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_power_on_oscillating_alternative():
    from calviz._synthetic import tcal_p1m

    reps = 20
    hits = {"y_only": 0, "analytic": 0, "max": 0, "fixed15": 0}
    for rep in range(reps):
        sc = tcal_p1m(3000, seed=rep, m=8, s=0.5, rho=25)
        hits["y_only"] += calviz.adaptive_tcal(sc.y_true, sc.y_prob, seed=rep).reject
        hits["analytic"] += calviz.adaptive_tcal(sc.y_true, sc.y_prob, resampling="analytic").reject
        hits["max"] += calviz.adaptive_tcal(sc.y_true, sc.y_prob, combine="max", seed=rep).reject
        hits["fixed15"] += calviz.tcal(sc.y_true, sc.y_prob, n_bins=15).reject
    assert hits["y_only"] >= 0.8 * reps and hits["analytic"] >= 0.8 * reps and hits["max"] >= 0.8 * reps, hits
    assert hits["fixed15"] <= hits["y_only"], hits


def test_full_and_classwise_targets_detect_a_miscalibrated_multiclass_model():
    rng = np.random.default_rng(21)
    n, k = 4000, 3
    z = rng.dirichlet(np.ones(k), n)
    truth = z**3 / (z**3).sum(1, keepdims=True)  # over-confident in reverse: strongly miscalibrated
    labels = (truth.cumsum(1) < rng.random(n)[:, None]).sum(1).clip(0, k - 1)
    full = calviz.adaptive_tcal(labels, z, target="full", resampling="analytic")
    assert full.reject and full.K == 3 and full.target == "full"
    cw = calviz.adaptive_tcal(labels, z, target="classwise", resampling="analytic")
    assert cw.reject and cw.target == "classwise" and "classwise" in cw.reason
    top = calviz.adaptive_tcal(labels, z, seed=0)  # default for (n, K): top-1
    assert top.target == "top1"


# ------------------------------------------------------------------------------------------------
# discrete predictors (App. B.4)
# ------------------------------------------------------------------------------------------------
def test_discrete_predictor_runs_exact_binomial_test():
    rng = np.random.default_rng(30)
    values = np.array([0.1, 0.25, 0.5, 0.8, 1.0])
    z = rng.choice(values, 2000)
    y = (rng.random(2000) < z).astype(int)
    r = calviz.adaptive_tcal(y, z)
    assert r.test == "binomial (discrete predictor)" and r.method == "binomial"
    assert "5 distinct values" in r.reason
    np.testing.assert_array_equal(r.values, values)
    for v, N, p in zip(r.values, r.counts, r.pvalues, strict=True):
        k = int(y[z == v].sum())
        assert N == (z == v).sum()
        assert p == pytest.approx(stats.binomtest(k, int(N), v).pvalue, rel=1e-12)
    assert r.pvalue == pytest.approx(min(1.0, 5 * r.pvalues.min()))
    # miscalibrated discrete predictor is rejected
    y_bad = (rng.random(2000) < np.clip(z - 0.08, 0, 1)).astype(int)
    assert calviz.adaptive_tcal(y_bad, z).reject
    # overrides
    assert calviz.adaptive_tcal(y, z, discrete=False, resampling="analytic").test == "adaptive T-Cal"
    zc = rng.random(300)
    yc = (rng.random(300) < zc).astype(int)
    assert calviz.adaptive_tcal(yc, zc, resampling="analytic").test == "adaptive T-Cal"
    forced = calviz.adaptive_tcal(yc, zc, discrete=True)
    assert forced.method == "binomial" and forced.n_bins == (300,)


# ------------------------------------------------------------------------------------------------
# sample-splitting test (Sec. 6)
# ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_split_tcal_level_and_power():
    rng = np.random.default_rng(40)
    reps = 60
    rej = 0
    for rep in range(reps):
        y, z = _calibrated(rng, 400, "P0")
        rej += calviz.split_tcal(y, z, seed=rep).reject
    assert rej / reps <= 0.05 + 3 * mc_se(0.05, reps), f"split_tcal level {rej / reps:.3f} over {reps} reps"
    z = rng.random(4000)
    y = (rng.random(4000) < z**2).astype(int)
    r = calviz.split_tcal(y, z, seed=0)
    assert r.reject and r.test == "sample-splitting T-Cal"
    zf = rng.dirichlet(np.ones(3), 600)
    lf = rng.integers(0, 3, 600)
    assert calviz.split_tcal(lf, zf, target="full", seed=0).K == 3


def test_split_tcal_holds_its_level_whatever_the_row_order():
    """The halves are drawn at random: rows sorted by prediction are not split into low and high
    predictions (which rejected every calibrated sample of this loop before), and the order of the rows
    does not change the p-value's distribution.  Level checked by simulation: 40 calibrated samples,
    sorted, at α = 0.05; the bound is the level plus 3 Monte Carlo standard errors (≈ 0.153)."""
    rng = np.random.default_rng(41)
    reps, rejections = 40, 0
    for rep in range(reps):
        z = np.sort(rng.random(500))
        y = (rng.random(500) < z).astype(int)
        rejections += calviz.split_tcal(y, z, seed=rep).reject
    assert rejections / reps <= 0.05 + 3 * mc_se(0.05, reps), f"{rejections} of {reps} sorted samples reject"


# ------------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, "a", None, float("nan")])
def test_bad_alpha(alpha):
    z, y = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1])
    with pytest.raises(InputError, match="alpha"):
        calviz.adaptive_tcal(y, z, alpha=alpha)
    with pytest.raises(InputError, match="alpha"):
        calviz.tcal(y, z, alpha=alpha)


@pytest.mark.parametrize("n_resamples", [0, -3, 1.5, True, "10"])
def test_bad_n_resamples(n_resamples):
    z, y = np.array([0.2, 0.7, 0.4]), np.array([0, 1, 1])
    with pytest.raises(InputError, match="n_resamples"):
        calviz.adaptive_tcal(y, z, n_resamples=n_resamples)


def test_bad_options_and_data():
    z, y = np.array([0.2, 0.7, 0.4, 0.9]), np.array([0, 1, 1, 1])
    with pytest.raises(InputError, match="resampling"):
        calviz.adaptive_tcal(y, z, resampling="bootstrap")
    with pytest.raises(InputError, match="combine"):
        calviz.adaptive_tcal(y, z, combine="fisher")
    with pytest.raises(InputError, match="combine='max'"):
        calviz.adaptive_tcal(y, z, combine="max", resampling="analytic")
    with pytest.raises(InputError, match="target"):
        calviz.adaptive_tcal(y, z, target="topk")
    with pytest.raises(InputError, match="discrete"):
        calviz.adaptive_tcal(y, z, discrete="yes")
    with pytest.raises(InputError, match="smoothness"):
        calviz.tcal(y, z, smoothness=0)
    with pytest.raises(InputError, match="n_bins"):
        calviz.tcal(y, z, n_bins=0)
    with pytest.raises(InputError, match="seed"):
        calviz.adaptive_tcal(y, z, seed="abc")
    # data errors come from the shared validation, named
    with pytest.raises(InputError, match="non-finite"):
        calviz.adaptive_tcal(y, np.array([0.2, np.nan, 0.4, 0.9]))
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        calviz.adaptive_tcal(y, np.array([0.2, 1.5, 0.4, 0.9]))
    with pytest.raises(InputError, match="lengths must match"):
        calviz.adaptive_tcal(y[:3], z)
    with pytest.raises(InputError, match="y_true"):
        calviz.adaptive_tcal(np.array([0, 2, 1, 1]), z)
    with pytest.raises(ValueError):
        calviz.split_tcal(y, z, n_permutations=0)


def test_too_few_samples_for_one_scale():
    with pytest.raises(InputError, match="at least 2"):
        calviz.adaptive_tcal(np.array([1]), np.array([0.3]))
    rng = np.random.default_rng(50)
    k = 40  # the coarsest scale has 2^39 simplex cells > n^2
    z = rng.dirichlet(np.ones(k), 100)
    labels = rng.integers(0, k, 100)
    with pytest.raises(InputError, match="too small for even one dyadic scale"):
        calviz.adaptive_tcal(labels, z, target="full")
    # n = 2 works for binary data (two scales)
    r = calviz.adaptive_tcal(np.array([0, 1]), np.array([0.3, 0.6]), resampling="analytic")
    assert r.n_bins == (2, 4) and not r.reject


def test_third_cumulant_matches_simulation():
    """Row 3 of the null moments is the exact third cumulant of T^d given Z (skewed: Beta(5, 0.5))."""
    rng = np.random.default_rng(60)
    zs = np.sort(rng.beta(5, 0.5, 200))
    split = K.dyadic_split_levels(zs, 6)
    kappa3 = K.null_moments(split, 6, zs.reshape(-1, 1), K.SCALAR)[3]
    boot = K.resampled_statistics(split, 6, zs.reshape(-1, 1), K.SCALAR, K.Y_ONLY, np.uint64(2), 100_000,
                                  0, 2)
    centred = boot - boot.mean(axis=0)
    # relative Monte Carlo error of a third moment with 1e5 draws of a skewed variable: a few percent
    np.testing.assert_allclose((centred**3).mean(axis=0), kappa3, rtol=0.12)


@pytest.mark.slow
def test_full_calibration_analytic_level_at_the_bonferroni_level():
    """Full K = 3 calibration (simplex partition, Satterthwaite) with peaked Dirichlet(0.3) predictions."""
    rng = np.random.default_rng(70)
    reps, n, alpha = 1500, 1000, 0.05
    per_scale = None
    for _ in range(reps):
        z = rng.dirichlet(np.full(3, 0.3), n)
        labels = (z.cumsum(1) < rng.random(n)[:, None]).sum(1).clip(0, 2)
        r = calviz.adaptive_tcal(labels, z, target="full", resampling="analytic", alpha=alpha)
        hit = (r.pvalues <= alpha / len(r.n_bins)).astype(int)
        per_scale = hit if per_scale is None else per_scale + hit
    B = len(r.n_bins)
    level = alpha / B
    pooled = per_scale.sum() / (reps * B)
    se = mc_se(level, reps * B)
    assert pooled <= level + 3 * se, \
        f"pooled per-scale rate {pooled:.5f} > α/B = {level:.5f} + 3 MC s.e. ({se:.5f}), {reps} reps"
    se1 = mc_se(level, reps)
    assert np.all(per_scale / reps <= level + 3 * se1), (per_scale / reps, level, se1)


def test_scales_without_a_pair_in_a_bin_never_count_as_rejected():
    """At a scale whose bins each hold one point, T^d = 0 and the critical value is 0: that tie is no
    evidence, and an accepted test listed such scales in rejected_scales (21 of 400 calibrated top-1
    samples of 100 rows)."""
    from calviz import plots

    rng = np.random.default_rng(0)
    found = 0
    for seed in range(100):
        P = rng.dirichlet(np.ones(3), size=100)
        y = (P.cumsum(axis=1) < rng.random((100, 1))).sum(axis=1)
        result = calviz.adaptive_tcal(y, P, target="top1", seed=seed)
        degenerate = (np.asarray(result.statistics) == 0) & (np.asarray(result.critical_values) == 0)
        found += degenerate.any()
        assert not result.scale_rejections[degenerate].any()
        if not result.reject:
            assert result.rejected_scales == ()
            assert plots.CALIBRATED in set(plots.tcal_frame(result)["table"]["color"])
            assert plots.MISCALIBRATED not in set(plots.tcal_frame(result)["table"]["color"])
    assert found  # the case occurs in this setting


def test_binomial_test_rejections_name_the_predicted_value():
    """Discrete predictors: the statistics are observed frequencies, 0 among them; a value never followed
    by a 1 rejects (p ≈ 1e−157) and rejected_scales names it (it raised ValueError, then hid it)."""
    values = np.repeat([0.3, 0.5, 0.7], 300)
    rng = np.random.default_rng(0)
    y = (rng.uniform(size=values.size) < values).astype(int)
    y[values == 0.7] = 0
    result = calviz.adaptive_tcal(y, values, seed=0)
    assert result.test.startswith("binomial") and result.reject
    assert result.rejected_scales == (0.7,)
    assert result.scale_rejections.tolist() == [False, False, True]
