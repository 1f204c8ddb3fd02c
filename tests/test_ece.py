"""ECE estimators vs independent slow implementations (explicit loops, literal O(n^2) double sums)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import calviz
from calviz._binning import assign_bins
from calviz._ece import (
    BinSums,
    bin_sums,
    binned_sums,
    debiased_ece_sq,
    kumar_ece_sq,
    miscalibrated_variance,
    null_variance,
    plugin_ece_l1,
    plugin_ece_sq,
    prepare_view,
    unbiased_ece_sq,
)


# ------------------------------------------------------------------------------------------------
# slow references: bins from an explicit per-point loop, statistics from literal double sums
# ------------------------------------------------------------------------------------------------
def slow_equal_width_bin(x: float, m: int) -> int:
    """Bin i = [i/m, (i+1)/m) with the float edges i/m, the last bin closed: scan the edges."""
    for i in range(m - 1, -1, -1):
        if x >= i / m:
            return i
    return 0


def slow_groups(z2: np.ndarray, keys: list) -> dict:
    groups: dict = {}
    for j, key in enumerate(keys):
        groups.setdefault(key, []).append(j)
    return groups


def slow_stats(z2: np.ndarray, y2: np.ndarray, keys: list) -> dict:
    """All estimators by literal loops over bins and pairs j != l (z2, y2 are (n, k))."""
    n, k = z2.shape
    v = y2 - z2
    out = dict(l1=0.0, l2sq=0.0, Td=0.0, T=0.0, kumar=0.0, var0_u=0.0, var0_d=0.0)
    sig1_a, sig1_b = 0.0, 0.0
    for idx in slow_groups(z2, keys).values():
        N = len(idx)
        S = sum(v[j] for j in idx)
        out["l1"] += N / n * sum(abs(S[a] / N) for a in range(k))
        out["l2sq"] += N / n * sum((S[a] / N) ** 2 for a in range(k))
        pair = 0.0
        null_pair = 0.0
        for j in idx:
            for l in idx:
                if j != l:
                    pair += float(v[j] @ v[l])
                    Sj = np.diag(z2[j]) - np.outer(z2[j], z2[j])
                    Sl = np.diag(z2[l]) - np.outer(z2[l], z2[l])
                    null_pair += float(np.trace(Sj @ Sl))
        out["Td"] += pair / (n * N)
        out["var0_d"] += 2.0 * null_pair / (n * n * N * N)
        if N >= 2:
            out["T"] += pair / (n * (N - 1))
            out["var0_u"] += 2.0 * null_pair / (n * n * (N - 1) ** 2)
            if k == 1:
                acc = float(np.mean(y2[idx, 0]))
                out["kumar"] += N / n * ((S[0] / N) ** 2 - acc * (1 - acc) / (N - 1))
        u = S / N
        M = sum(np.outer(v[j], v[j]) for j in idx) / N
        sig1_a += N / n * (4 * float(u @ M @ u) - 3 * float(u @ u) ** 2)
        sig1_b += N / n * float(u @ u)
    out["sig1"] = sig1_a - sig1_b**2
    return out


def close(a: float, b: float, scale: float, rtol: float = 1e-12) -> bool:
    """|a - b| <= rtol * max(|b|, scale): estimators that cancel (T ~ 0) are compared relative to the
    magnitude of the terms they are built from."""
    return abs(a - b) <= rtol * max(abs(b), scale, 1e-300)


def check_against_slow(sums: BinSums, z2, y2, keys) -> None:
    ref = slow_stats(z2, y2, keys)
    n = z2.shape[0]
    scale = float(((y2 - z2) ** 2).sum()) / n  # magnitude of the diagonal terms that T^d removes
    assert close(plugin_ece_l1(sums), ref["l1"], 0)
    assert close(plugin_ece_sq(sums), ref["l2sq"], 0)
    assert close(debiased_ece_sq(sums), ref["Td"], scale)
    assert close(unbiased_ece_sq(sums), ref["T"], scale)
    assert close(miscalibrated_variance(sums), ref["sig1"], scale**2)
    nscale = 1.0 / n**2
    assert close(null_variance(sums, "unbiased"), ref["var0_u"], nscale * 1e-3)
    assert close(null_variance(sums, "debiased"), ref["var0_d"], nscale * 1e-3)
    if z2.shape[1] == 1:
        assert close(kumar_ece_sq(sums), ref["kumar"], scale)


def random_binary(rng, n, *, edges_m=None, ties=False):
    z = rng.uniform(size=n)
    if edges_m is not None:  # put a third of the points exactly on bin edges (and 0, 1)
        k = n // 3
        z[:k] = rng.integers(0, edges_m + 1, size=k) / edges_m
    if ties:
        z = np.round(z, 1)
    y = (rng.uniform(size=n) < rng.uniform(size=n)).astype(float)
    return z, y


@pytest.mark.parametrize("n", [2, 3, 7, 40, 200])
@pytest.mark.parametrize("m", [1, 3, 10, 22])
def test_binary_equal_width_matches_slow(n, m):
    rng = np.random.default_rng(1000 * n + m)
    for ties in (False, True):
        z, y = random_binary(rng, n, edges_m=m, ties=ties)
        sums, _, _, _ = binned_sums(z, y, n_bins=m)
        keys = [slow_equal_width_bin(x, m) for x in z]
        assert sorted(set(keys)) == sums.keys.tolist()
        check_against_slow(sums, z[:, None], y[:, None], keys)


@pytest.mark.parametrize("labels", ["all_correct", "all_wrong", "constant_pred"])
def test_degenerate_labels(labels):
    rng = np.random.default_rng(5)
    z = rng.uniform(size=30)
    y = np.ones(30) if labels == "all_correct" else np.zeros(30)
    if labels == "constant_pred":
        z[:] = 0.5
    sums, _, _, _ = binned_sums(z, y, n_bins=4)
    check_against_slow(sums, z[:, None], y[:, None], [slow_equal_width_bin(x, 4) for x in z])


def test_perfect_predictions_are_zero():
    y = np.array([0, 1, 1, 0, 1.0])
    r = calviz.unbiased_ece(y, y, n_bins=3)
    assert r.value == 0.0
    ci = calviz.ece_interval(y, y, n_bins=3)
    assert ci.low == ci.high == ci.estimate == 0.0


@pytest.mark.parametrize("K", [2, 3, 10])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_topk_grid_matches_slow(K, k):
    if k > K:
        pytest.skip("k > K")
    rng = np.random.default_rng(K * 10 + k)
    for n in (2, 9, 60):
        P = rng.dirichlet(np.ones(K) * 0.7, size=n)
        labels = rng.integers(0, K, size=n)
        _, target, z, y = prepare_view(labels, P, top_k=k, target="topk")
        m = 3
        sums, bins, total, scheme = binned_sums(z, y, n_bins=m, target=target)
        assert scheme == "grid" and total == m**k
        keys = [tuple(slow_equal_width_bin(x, m) for x in row) for row in z]
        assert len(set(keys)) == sums.n_nonempty
        check_against_slow(sums, z, y, keys)


@pytest.mark.parametrize("K,m", [(2, 3), (3, 3), (4, 3), (10, 1), (10, 2)])
def test_full_simplex_matches_slow(K, m):
    rng = np.random.default_rng(K + 10 * m)
    P = rng.dirichlet(np.ones(K) * (0.2 if K == 10 else 1.0), size=50)  # K = 10: near vertices, shared cells
    labels = rng.integers(0, K, size=50)
    _, target, z, y = prepare_view(labels, P, target="full")
    sums, bins, total, scheme = binned_sums(z, y, n_bins=m, target=target)
    assert scheme == "simplex" and total == m ** (K - 1)
    assert (sums.count >= 2).sum() >= 1, "test needs bins with pairs"
    check_against_slow(sums, z, y, bins.ids.tolist())


def test_merge_equals_whole():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(5), size=300)
    labels = rng.integers(0, 5, size=300)
    _, _, z, y = prepare_view(labels, P, top_k=2)
    from calviz._binning import cubic_grid_keys

    keys = cubic_grid_keys(z, 4)
    whole = bin_sums(keys, z, y)
    parts = BinSums.empty(2)
    for chunk in np.array_split(np.arange(300), 7):
        parts = parts.merge(bin_sums(keys[chunk], z[chunk], y[chunk]))
    assert parts.n_total == whole.n_total
    np.testing.assert_array_equal(parts.keys, whole.keys)
    for f in ("count", "resid_sum", "resid_outer_sum", "null_cov_sum", "null_cov_sq_trace"):
        np.testing.assert_allclose(getattr(parts, f), getattr(whole, f), rtol=1e-12, atol=1e-12)
    for fin in (debiased_ece_sq, unbiased_ece_sq, miscalibrated_variance, null_variance):
        assert math.isclose(fin(parts), fin(whole), rel_tol=1e-10, abs_tol=1e-15)


def test_fused_1d_path_equals_generic_path():
    rng = np.random.default_rng(11)
    z, y = random_binary(rng, 500, edges_m=15)
    fused, bins, _, _ = binned_sums(z, y, n_bins=15)
    generic = bin_sums(assign_bins(z, n_bins=15), z, y)
    for f in ("keys", "count", "resid_sum", "resid_sq_sum", "resid_outer_sum", "null_cov_sum",
              "null_cov_sq_trace", "z_sum", "y_sum"):
        np.testing.assert_array_equal(getattr(fused, f), getattr(generic, f))


def test_kumar_per_distinct_value():
    rng = np.random.default_rng(2)
    z = rng.choice([0.1, 0.35, 0.35001, 0.9], size=80)
    y = (rng.uniform(size=80) < 0.5).astype(int)
    r = calviz.kumar_debiased_ece(y, z)
    assert r.n_nonempty == 4
    ref = slow_stats(z[:, None], y[:, None].astype(float), z.tolist())["kumar"]
    assert close(r.value, ref, 1e-3)


def test_public_estimators_and_traps():
    # 1.0 lands in the last bin, 0.0 in the first: exactly m bins
    z = np.array([0.0, 1.0, 0.5, 1.0])
    y = np.array([0, 1, 1, 1])
    rel = calviz.reliability(y, z, n_bins=4)
    assert rel.counts.tolist() == [1, 0, 1, 2]
    assert rel.edges.shape == (5,) and rel.level == pytest.approx(0.9)
    r = calviz.binned_ece(y, z, n_bins=4)
    assert r.n_bins_total == 4 and r.n_nonempty == 3
    # binned_ece p=2 is sqrt of the plug-in l2^2
    z, y = random_binary(np.random.default_rng(0), 100)
    b2 = calviz.binned_ece(y, z, p=2, n_bins=5)
    sums, _, _, _ = binned_sums(z, y, n_bins=5)
    assert b2.value == pytest.approx(math.sqrt(plugin_ece_sq(sums)), rel=1e-14)
    d = calviz.debiased_ece(y, z, n_bins=5)
    assert d.squared and d.ece == pytest.approx(math.sqrt(max(d.value, 0)))


def test_reliability_intervals():
    from scipy import stats

    rng = np.random.default_rng(4)
    z, y = random_binary(rng, 300)
    for method in ("wilson", "jeffreys"):
        rel = calviz.reliability(y, z, n_bins=6, alpha=0.2, interval=method)
        assert rel.level == pytest.approx(0.8)
        ok = rel.counts > 0
        assert np.all(rel.low[ok] <= rel.observed_frequency[ok] + 1e-12)
        assert np.all(rel.high[ok] >= rel.observed_frequency[ok] - 1e-12)
        assert np.all((rel.low[ok] >= 0) & (rel.high[ok] <= 1))
        for b in np.flatnonzero(ok):
            x, N = int(round(rel.observed_frequency[b] * rel.counts[b])), int(rel.counts[b])
            if method == "wilson":
                lo, hi = stats.binomtest(x, N).proportion_ci(0.8, method="wilson")
            else:
                lo = stats.beta.ppf(0.1, x + 0.5, N - x + 0.5) if x > 0 else 0.0
                hi = stats.beta.ppf(0.9, x + 0.5, N - x + 0.5) if x < N else 1.0
            assert rel.low[b] == pytest.approx(lo, abs=1e-10)
            assert rel.high[b] == pytest.approx(hi, abs=1e-10)
    rel = calviz.reliability(y, z, n_bins=6, scheme="equal_mass")
    assert rel.counts.sum() == 300


# ------------------------------------------------------------------------------------------------
# statistical properties under calibration (small MC; full-size studies live in benchmarks/)
# ------------------------------------------------------------------------------------------------
def test_mean_zero_under_calibration_and_null_variance():
    rng = np.random.default_rng(7)
    n, m, reps = 400, 8, 1500
    z = rng.beta(2, 2, size=n)
    sums0, _, _, _ = binned_sums(z, (rng.uniform(size=n) < z).astype(float), n_bins=m)
    var_u = null_variance(sums0, "unbiased")  # depends on z only
    var_d = null_variance(sums0, "debiased")
    Ts, Tds = np.empty(reps), np.empty(reps)
    for r in range(reps):
        y = (rng.uniform(size=n) < z).astype(float)
        s, _, _, _ = binned_sums(z, y, n_bins=m)
        Ts[r], Tds[r] = unbiased_ece_sq(s), debiased_ece_sq(s)
    for vals, var, name in ((Ts, var_u, "T"), (Tds, var_d, "T^d")):
        mcse = vals.std(ddof=1) / math.sqrt(reps)
        assert abs(vals.mean()) < 4 * mcse, f"mean of {name} {vals.mean():.3g}, MC se {mcse:.3g}"
        # variance of a sample variance: se ≈ var * sqrt(2/(reps-1)) (normal approx; kurtosis slack x2)
        se_var = var * math.sqrt(2.0 / (reps - 1)) * 2
        assert abs(vals.var(ddof=1) - var) < 4 * se_var, (
            f"Var0({name}) exact {var:.4g} vs simulated {vals.var(ddof=1):.4g}, MC se {se_var:.3g}")


@pytest.mark.parametrize("target,statistic", [("topk", "unbiased"), ("full", "debiased")])
def test_null_variance_multiclass(target, statistic):
    """Labels drawn from the predictions (calibrated): the statistic has mean 0 and the exact
    conditional variance, for the top-2 grid (T) and the full simplex partition (T^d)."""
    rng = np.random.default_rng(8)
    n, K, reps = 300, 4, 800
    P = rng.dirichlet(np.ones(K) * 2, size=n)
    fin = unbiased_ece_sq if statistic == "unbiased" else debiased_ece_sq
    Ts = np.empty(reps)
    var = None
    for r in range(reps):
        labels = (rng.uniform(size=n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
        labels = np.minimum(labels, K - 1)
        _, tgt, z, y = prepare_view(labels, P, top_k=2, target=target)
        s, _, _, _ = binned_sums(z, y, n_bins=3, target=tgt)
        Ts[r] = fin(s)
        var = null_variance(s, statistic) if var is None else var
    mcse = Ts.std(ddof=1) / math.sqrt(reps)
    assert abs(Ts.mean()) < 4 * mcse, f"mean {Ts.mean():.3g}, MC se {mcse:.3g}"
    se_var = var * math.sqrt(2.0 / (reps - 1)) * 2
    assert abs(Ts.var(ddof=1) - var) < 4 * se_var, (
        f"exact {var:.4g} vs simulated {Ts.var(ddof=1):.4g}, MC se {se_var:.3g}")


# ------------------------------------------------------------------------------------------------
# bad input and property-based tests
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [dict(n_bins=0), dict(n_bins=2.5), dict(n_bins=True), dict(p=3), dict(scheme="nope"),
     dict(target="bogus"), dict(scheme="simplex")],
)
def test_bad_options_raise_value_error(kwargs):
    y = np.array([0, 1, 1])
    z = np.array([0.2, 0.5, 0.9])
    fn = calviz.binned_ece if "p" in kwargs else calviz.debiased_ece
    with pytest.raises(ValueError):
        fn(y, z, **kwargs)


def test_bad_data_raise_value_error():
    with pytest.raises(ValueError):
        calviz.debiased_ece([0, 1], [0.5, 1.2])
    with pytest.raises(ValueError):
        calviz.debiased_ece([0, 1], [0.5, np.nan])
    with pytest.raises(ValueError):
        calviz.reliability([0, 1], [0.5, 0.5], alpha=1.0)
    with pytest.raises(ValueError):
        calviz.reliability([0, 1], [0.5, 0.5], interval="exact")


_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    z=arrays(np.float64, st.integers(0, 12), elements=st.one_of(st.floats(0, 1), _floats)),
    y=arrays(np.float64, st.integers(0, 12), elements=st.sampled_from([0.0, 1.0, 2.0, 0.5, -1.0])),
    m=st.integers(-1, 30),
    which=st.sampled_from(["binned", "debiased", "unbiased", "kumar", "reliability"]),
)
def test_property_validate_or_value_error(z, y, m, which):
    fn = {"binned": calviz.binned_ece, "debiased": calviz.debiased_ece, "unbiased": calviz.unbiased_ece,
          "kumar": calviz.kumar_debiased_ece, "reliability": calviz.reliability}[which]
    try:
        out = fn(y, z, n_bins=m)
    except ValueError:
        return
    if which == "reliability":
        ok = out.counts > 0
        assert np.all((out.low[ok] >= 0) & (out.high[ok] <= 1))
        assert out.counts.sum() == len(z)
    else:
        assert np.isfinite(out.value)
        if not out.squared:
            assert 0.0 <= out.value <= 1.0 + 1e-12


@settings(max_examples=40, deadline=None)
@given(
    P=arrays(np.float64, st.tuples(st.integers(2, 10), st.integers(2, 5)), elements=st.floats(0, 1)),
    labels=st.lists(st.integers(-1, 5), min_size=2, max_size=10),
    target=st.sampled_from(["top1", "topk", "full", "classwise"]),
    top_k=st.integers(0, 6),
)
def test_property_multiclass_validate_or_value_error(P, labels, target, top_k):
    row_sums = P.sum(axis=1, keepdims=True)
    Pn = np.divide(P, row_sums, out=np.full_like(P, 1.0 / P.shape[1]), where=row_sums > 0)
    try:
        out = calviz.debiased_ece(labels, Pn, n_bins=3, target=target, top_k=top_k)
    except ValueError:
        return
    assert np.isfinite(out.value)


@pytest.mark.parametrize("K", [2, 3, 5, 10])
def test_topk_view_kernel_equals_data_topk(K):
    from calviz._ece import topk_view

    rng = np.random.default_rng(K)
    P = rng.dirichlet(np.ones(K), size=400)
    P[:100] = np.round(P[:100] * 4) + 1e-3  # heavy ties
    P[:100] /= P[:100].sum(axis=1, keepdims=True)
    P[100:120] = 1.0 / K
    data = calviz.as_calibration_data(rng.integers(0, K, size=400), P)
    for k in range(1, K + 1):
        z, y = topk_view(data, k)
        zr, yr = data.topk(k)
        np.testing.assert_array_equal(z, zr)
        np.testing.assert_array_equal(y, yr)
    for k in (0, K + 1, 1.5, True, "2"):  # refused as CalibrationData.topk refuses them, not truncated
        refused = rf"^The 'k' parameter of topk_view must be an int in \[1, {K}\]"
        with pytest.raises(calviz.InputError, match=refused):
            topk_view(data, k)


def test_huge_bin_counts_use_memory_proportional_to_n():
    rng = np.random.default_rng(12)
    z, y = random_binary(rng, 50, edges_m=1000)
    for m in (1 << 20, 10**9, 1 << 40):
        sums, bins, total, _ = binned_sums(z, y, n_bins=m)
        assert bins is not None and total == m and sums.n_nonempty <= 50
        keys = [slow_equal_width_bin(x, m) if m < 10**6 else None for x in z]
        if keys[0] is not None:
            check_against_slow(sums, z[:, None], y[:, None], keys)
    # beyond the fused-kernel size the same numbers come from the sorting path
    m = (1 << 16) + 3
    a, _, _, _ = binned_sums(z, y, n_bins=m)
    b = bin_sums(assign_bins(z, n_bins=m), z, y)
    np.testing.assert_array_equal(a.keys, b.keys)
    assert unbiased_ece_sq(a) == unbiased_ece_sq(b)
    with pytest.raises(ValueError):
        calviz.reliability(y, z, n_bins=10**7)
    assert calviz.kumar_debiased_ece(y, np.round(z, 1)).n_bins == np.unique(np.round(z, 1)).size


def test_binsums_rejects_inconsistent_arrays():
    s = bin_sums(np.array([3, 1, 3]), np.array([0.2, 0.5, 0.7]), np.array([0.0, 1.0, 1.0]))
    assert s.keys.tolist() == [1, 3] and s.count.tolist() == [1, 2]
    import dataclasses

    with pytest.raises(ValueError):
        dataclasses.replace(s, keys=s.keys[::-1].copy())
    with pytest.raises(ValueError):
        dataclasses.replace(s, count=s.count[:1])
