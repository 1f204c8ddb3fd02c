"""Distance-to-calibration family (estimators.md §6) against independent slow implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog

import calviz
from calviz._data import InputError
from calviz._distance import lower_dce as lower_dce_fn

# ------------------------------------------------------------------------------------------------
# independent reference implementations
# ------------------------------------------------------------------------------------------------


def smce_lp(v, y):
    """smCE by HiGHS on the LP with all adjacent Lipschitz constraints (residuals unscaled for accuracy)."""
    order = np.argsort(v, kind="stable")
    v, y = np.asarray(v, float)[order], np.asarray(y, float)[order]
    n = v.size
    r = y - v
    if n == 1:
        return abs(r[0])
    d = np.diff(v)
    rows = np.repeat(np.arange(n - 1), 2)
    cols = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1).ravel()
    diff = sparse.csr_matrix((np.tile([1.0, -1.0], n - 1), (rows, cols)), shape=(n - 1, n))
    res = linprog(-r, A_ub=sparse.vstack([diff, -diff]), b_ub=np.concatenate([d, d]),
                  bounds=[(-1, 1)] * n, method="highs")
    assert res.status == 0
    return -res.fun / n


def kce_sq_direct(v, y, h):
    r = np.asarray(y, float) - np.asarray(v, float)
    k = np.exp(-np.abs(v[:, None] - v[None, :]) / h)
    return float(r @ k @ r) / v.size ** 2


def rint_at(v, r, width, shift):
    """Σ_j |(1/n) Σ r_i 1{v_i ∈ [shift + j w, shift + (j+1) w)}| by direct binning."""
    j = np.floor((v - shift) / width).astype(np.int64)
    _, inv = np.unique(j, return_inverse=True)
    return float(np.abs(np.bincount(inv.ravel(), weights=r)).sum() / v.size)


def rintce_brute(v, y, width):
    """Average over r ∈ [0, width): every breakpoint v mod width enumerated, value at each midpoint."""
    v = np.asarray(v, float)
    r = np.asarray(y, float) - v
    phase = np.mod(v, width)
    cuts = np.unique(np.concatenate([[0.0, width], phase[(phase > 0) & (phase < width)]]))
    total = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        if hi > lo:
            total += (hi - lo) * rint_at(v, r, width, 0.5 * (lo + hi))
    return total / width


def resolved_ece(v, y):
    r = np.asarray(y, float) - np.asarray(v, float)
    _, inv = np.unique(v, return_inverse=True)
    return float(np.abs(np.bincount(inv.ravel(), weights=r)).sum() / v.size)


def sintce_brute(v, y, max_level=40):
    """min over k ≤ max_level of RintCE(2^-k) + 2^-k, and the k → ∞ limit (resolved ECE)."""
    best = resolved_ece(v, y)
    for k in range(max_level + 1):
        best = min(best, rintce_brute(v, y, 2.0 ** -k) + 2.0 ** -k)
    return best


def random_instance(rng, n, kind):
    if kind == "continuous":
        v = rng.random(n)
    elif kind == "coarse":  # many ties
        v = rng.integers(0, 5, n) / 4.0
    elif kind == "rounded":
        v = np.round(rng.random(n), int(rng.integers(1, 4)))
    elif kind == "endpoints":  # exactly 0 and 1 plus a few interior values
        v = rng.choice([0.0, 1.0, 0.5, 0.25], n)
    else:  # skewed with repeats
        v = np.repeat(rng.random(max(1, n // 3)) ** 3, 3)[:n]
        if v.size < n:
            v = np.concatenate([v, rng.random(n - v.size)])
    p = rng.random()
    label_rule = rng.integers(0, 4)
    if label_rule == 0:
        y = np.zeros(n)
    elif label_rule == 1:
        y = np.ones(n)
    else:
        y = (rng.random(n) < np.clip(v + p - 0.5, 0, 1)).astype(float)
    return v, y


KINDS = ["continuous", "coarse", "rounded", "endpoints", "repeats"]


# ------------------------------------------------------------------------------------------------
# smCE
# ------------------------------------------------------------------------------------------------
def test_smce_equals_lp_on_random_instances():
    rng = np.random.default_rng(20240501)
    checked = 0
    for t in range(220):
        n = 2 if t < 10 else int(np.exp(rng.uniform(np.log(3), np.log(2000))))
        v, y = random_instance(rng, n, KINDS[t % len(KINDS)])
        ref = smce_lp(v, y)
        res = calviz.smce(y, v)
        assert abs(res.value - ref) <= 1e-9, (t, n, res.value, ref)
        w = calviz.smce_witness(y, v)
        assert abs(w.value - res.value) <= 1e-12
        assert np.all(np.abs(w.witness) <= 1 + 1e-12)
        assert np.all(np.abs(np.diff(w.witness)) <= np.diff(w.predictions) + 1e-12)
        attained = float(np.dot(w.labels - w.predictions, w.witness) / n)
        assert abs(attained - ref) <= 1e-9
        checked += 1
    assert checked >= 200


def test_smce_witness_sorted_and_ties_share_weight():
    rng = np.random.default_rng(3)
    v = rng.integers(0, 10, 300) / 9.0
    y = (rng.random(300) < 0.7).astype(float)
    w = calviz.smce_witness(y, v)
    assert np.all(np.diff(w.predictions) >= 0)
    for u in np.unique(v):
        vals = w.witness[w.predictions == u]
        assert np.ptp(vals) == 0.0
    assert float(w) == pytest.approx(calviz.smce(y, v).value, abs=1e-14)


def test_smce_simple_closed_forms():
    # constant prediction 1/2, label frequency 1/2 + e  ->  smCE = e (Hu et al. (2024) Lemma 13)
    y = np.array([1.0] * 7 + [0.0] * 3)
    v = np.full(10, 0.5)
    assert calviz.smce(y, v).value == pytest.approx(0.2, abs=1e-15)
    # perfect 0/1 predictions are calibrated
    assert calviz.smce(y, y).value == pytest.approx(0.0, abs=1e-15)
    # n = 2
    assert calviz.smce([1, 0], [0.0, 1.0]).value == pytest.approx(smce_lp(np.array([0.0, 1.0]), [1, 0]))


def test_multiclass_views_match_binary_reduction():
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(4), 400)
    labels = rng.integers(0, 4, 400)
    conf = p.max(axis=1)
    correct = (p.argmax(axis=1) == labels).astype(float)
    assert calviz.smce(labels, p).value == pytest.approx(calviz.smce(correct, conf).value, abs=1e-14)
    assert calviz.smce(labels, p, target="classwise", class_index=2).value == pytest.approx(
        calviz.smce((labels == 2).astype(float), p[:, 2]).value, abs=1e-14)
    assert calviz.smce(labels, p).target == "top1"


# ------------------------------------------------------------------------------------------------
# Laplace kCE
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bandwidth", [0.01, 0.2, 1.0, 7.0])
def test_laplace_kce_equals_double_sum(bandwidth):
    rng = np.random.default_rng(int(bandwidth * 100))
    for t, n in enumerate([2, 17, 500, 3000]):
        v, y = random_instance(rng, n, KINDS[t % len(KINDS)])
        ref = kce_sq_direct(v, y, bandwidth)
        got = calviz.laplace_kce(y, v, bandwidth=bandwidth, squared=True).value
        assert got == pytest.approx(ref, rel=1e-10, abs=1e-300)
        assert calviz.laplace_kce(y, v, bandwidth=bandwidth).value == pytest.approx(math.sqrt(max(ref, 0)),
                                                                                    rel=1e-9)


# ------------------------------------------------------------------------------------------------
# RintCE / SintCE
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("width", [1.0, 0.5, 0.125, 0.3, 0.07, 1 / 3, 0.01])
def test_rintce_equals_brute_force(width):
    rng = np.random.default_rng(int(width * 1000))
    for t in range(12):
        n = int(rng.integers(2, 120))
        v, y = random_instance(rng, n, KINDS[t % len(KINDS)])
        ref = rintce_brute(v, y, width)
        assert calviz.rintce(y, v, width=width).value == pytest.approx(ref, abs=1e-12)


def test_sintce_equals_brute_force_and_exceeds_lp():
    rng = np.random.default_rng(11)
    for t in range(25):
        n = int(rng.integers(2, 60))
        v, y = random_instance(rng, n, KINDS[t % len(KINDS)])
        res = calviz.sintce(y, v)
        assert res.value == pytest.approx(sintce_brute(v, y), abs=1e-12), t
        low = lower_dce_fn(y, v, grid_step=1e-2)
        assert res.value >= low.value - low.error_bound - 1e-12
        if res.attained:
            k = int(round(-math.log2(res.width)))
            assert res.rintce_values[k] + res.width == pytest.approx(res.value, abs=1e-15)


def test_sintce_rintce_nondecreasing_in_level():
    rng = np.random.default_rng(2)
    v = rng.random(3000)
    y = (rng.random(3000) < v ** 1.3).astype(float)
    res = calviz.sintce(y, v)
    assert np.all(np.diff(res.rintce_values) >= -1e-12)


# ------------------------------------------------------------------------------------------------
# dCE_lower LP
# ------------------------------------------------------------------------------------------------
def test_lower_dce_closed_forms():
    # constant prediction 0.5 with label frequency 0.7: the closest calibrated distribution moves all
    # mass to 0.7 (W1 = 0.2, Hu et al. (2024) Lemma 1 / Jensen)
    y = np.array([1.0] * 7 + [0.0] * 3)
    v = np.full(10, 0.5)
    res = calviz.lower_dce(y, v, grid_step=0.01)
    assert res.value == pytest.approx(0.2, abs=1e-9)
    assert res.lower <= 0.2 <= res.upper
    assert calviz.lower_dce(y, y, grid_step=0.01).value == pytest.approx(0.0, abs=1e-12)


def lower_dce_dual(v, y, m):
    """The dual LP of Błasiok et al. (2023), Lemma 7.11, on the grid k/m: max Σ Γ₀ r₀ + Γ₁ r₁ with r_b
    1-Lipschitz per grid step (unit edge cost) and (1 − u) r₀(u) + u r₁(u) ≤ 0; value divided by m."""
    n = v.size
    idx = np.clip(np.rint(v * m).astype(int), 0, m)
    g0 = np.bincount(idx[y < 0.5], minlength=m + 1) / n
    g1 = np.bincount(idx[y > 0.5], minlength=m + 1) / n
    k = m + 1
    u = np.arange(k) / m
    rows, cols, vals, ub = [], [], [], []
    r = 0
    for b in (0, 1):
        for j in range(m):  # ±(r_b(j+1) − r_b(j)) ≤ 1
            for sgn in (1.0, -1.0):
                rows += [r, r]
                cols += [b * k + j + 1, b * k + j]
                vals += [sgn, -sgn]
                ub.append(1.0)
                r += 1
    for j in range(k):
        rows += [r, r]
        cols += [j, k + j]
        vals += [1 - u[j], u[j]]
        ub.append(0.0)
        r += 1
    a = sparse.csr_matrix((vals, (rows, cols)), shape=(r, 2 * k))
    res = linprog(-np.concatenate([g0, g1]), A_ub=a, b_ub=ub, bounds=(None, None), method="highs")
    assert res.status == 0
    return -res.fun / m


def test_lower_dce_equals_dual_lp():
    rng = np.random.default_rng(12)
    for t in range(8):
        n = int(rng.integers(2, 300))
        v, y = random_instance(rng, n, KINDS[t % len(KINDS)])
        for m in (10, 50):
            got = calviz.lower_dce(y, v, grid_step=1 / m).value
            assert got == pytest.approx(lower_dce_dual(v, y, m), abs=1e-9), (t, m)


def test_lower_dce_within_grid_error_of_finer_grid():
    rng = np.random.default_rng(8)
    v = rng.random(400)
    y = (rng.random(400) < v ** 2).astype(float)
    fine = calviz.lower_dce(y, v, grid_step=1e-3)
    coarse = calviz.lower_dce(y, v, grid_step=2e-2)
    assert coarse.lower <= fine.upper + 1e-9 and fine.lower <= coarse.upper + 1e-9


# ------------------------------------------------------------------------------------------------
# binned ECE + width
# ------------------------------------------------------------------------------------------------
def test_binned_ece_with_width_uses_engine_ece():
    rng = np.random.default_rng(4)
    v = rng.random(1000)
    y = (rng.random(1000) < v).astype(float)
    for scheme in ("equal_width", "equal_mass"):
        res = calviz.binned_ece_with_width(y, v, n_bins=10, scheme=scheme)
        assert res.ece == pytest.approx(calviz.binned_ece(y, v, n_bins=10, scheme=scheme).value, abs=1e-15)
        assert res.value == pytest.approx(res.ece + res.average_width)
    assert calviz.binned_ece_with_width(y, v, n_bins=10).average_width == pytest.approx(0.1)
    # direct check of the equal-mass average width: bins [e_j, e_{j+1}) weighted by their counts
    res = calviz.binned_ece_with_width(y, v, n_bins=4, scheme="equal_mass")
    edges = calviz._binning.equal_mass_edges(v, 4)
    ids = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, edges.size - 2)
    assert res.average_width == pytest.approx(np.mean(np.diff(edges)[ids]))


# ------------------------------------------------------------------------------------------------
# the inequalities of estimators.md §6 (property tests)
# ------------------------------------------------------------------------------------------------
GRID = 1e-2


@st.composite
def samples(draw):
    n = draw(st.integers(2, 40))
    pool = draw(st.sampled_from(["any", "coarse", "endpoints"]))
    if pool == "any":
        vals = st.floats(0.0, 1.0, allow_nan=False)
    elif pool == "coarse":
        vals = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
    else:
        vals = st.sampled_from([0.0, 1.0, 0.5])
    v = np.array(draw(st.lists(vals, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    return v, y


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples())
def test_inequalities_of_section_6_hold(sample):
    v, y = sample
    sm = calviz.smce(y, v).value
    low = lower_dce_fn(y, v, grid_step=GRID)
    dce_lo_max = low.value + GRID  # exact dCE_lower of the sample is in [value − 2ε, value + ε]
    dce_lo_min = max(low.value - 2 * GRID, 0.0)
    si = calviz.sintce(y, v).value
    kc = calviz.laplace_kce(y, v).value
    tol = 1e-12
    assert sm <= 2 * dce_lo_max + tol                       # Thm 7.3, upper
    assert dce_lo_min <= 5 * sm + tol                       # Thm 7.3, lower
    assert si <= 6 * math.sqrt(dce_lo_max) + tol            # Thm 6.11
    assert si >= dce_lo_min - tol                           # dCE_lower ≤ dCE_upper ≤ SintCE
    assert kc >= sm / 3 - tol                               # Thm 8.5
    assert kc <= 2 * math.sqrt(2 * dce_lo_max) + tol        # Lemma 8.7
    for m in (3, 10):
        assert calviz.binned_ece_with_width(y, v, n_bins=m).value >= dce_lo_min - tol   # eq. (5)
    b = calviz.distance_bounds(y, v, grid_step=GRID, n_bins=(3, 10))
    assert b.lower <= b.upper + tol
    assert b.lower <= dce_lo_max + tol


def test_distance_bounds_fields_and_sources():
    rng = np.random.default_rng(9)
    v = rng.random(2000)
    y = (rng.random(2000) < v ** 1.5).astype(float)
    b = calviz.distance_bounds(y, v, grid_step=1e-2, n_bins=(10, 20))
    assert b.lower == max(c.value for c in b.bounds if c.kind == "lower")
    assert b.upper == min(c.value for c in b.bounds if c.kind == "upper")
    assert b.lower_bound.value == b.lower and b.upper_bound.value == b.upper
    assert all("Błasiok et al. (2023)" in c.source for c in b.bounds)
    assert b.smce == pytest.approx(calviz.smce(y, v).value)
    assert b.sintce == pytest.approx(calviz.sintce(y, v).value)
    assert b.laplace_kce == pytest.approx(calviz.laplace_kce(y, v).value)
    assert b.lower_dce == pytest.approx(calviz.lower_dce(y, v, grid_step=1e-2).value)
    assert set(b.binned_ece_width) == {10, 20}
    assert b.bands is None
    assert isinstance(b.to_dict(), dict)


def test_distance_bounds_bootstrap_reproducible():
    rng = np.random.default_rng(10)
    v = rng.random(300)
    y = (rng.random(300) < v).astype(float)
    kw = dict(grid_step=2e-2, n_bins=(10,), n_resamples=8, alpha=0.2)
    b1 = calviz.distance_bounds(y, v, seed=123, **kw)
    b2 = calviz.distance_bounds(y, v, seed=np.random.default_rng(123), **kw)
    assert b1.bands == b2.bands
    for lo, hi in b1.bands.values():
        assert lo <= hi
    assert set(b1.bands) >= {"smce", "lower_dce", "sintce", "laplace_kce", "binned_ece_width_10", "lower",
                             "upper"}


# ------------------------------------------------------------------------------------------------
# tolerant tester
# ------------------------------------------------------------------------------------------------
def test_smce_test_threshold_rule():
    y = np.array([1.0] * 7 + [0.0] * 3)
    v = np.full(10, 0.5)  # smCE = 0.2
    res = calviz.smce_test(y, v, eps0=0.0, eps1=0.5)  # a = 0.25, threshold 0.125
    assert res.threshold == pytest.approx(0.125) and res.answer == "no" and not res.calibrated
    res = calviz.smce_test(y, v, eps0=0.05, eps1=0.9)  # a = 0.35, threshold 0.275
    assert res.answer == "yes" and res.calibrated
    with pytest.raises(InputError, match="a = eps1/2"):
        calviz.smce_test(y, v, eps0=0.1, eps1=0.3)


# ------------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda: calviz.smce([0, 1], [0.5, np.nan]),
        lambda: calviz.smce([0, 1], [0.5, 1.5]),
        lambda: calviz.smce([0, 1, 1], [0.5, 0.2]),
        lambda: calviz.smce([0, 2], [0.5, 0.2]),
        lambda: calviz.smce([1], [0.5]),
        lambda: calviz.smce_witness([0, 1], ["a", "b"]),
        lambda: calviz.smce([0, 1], [[0.5, 0.5], [0.2, 0.8]], target="full"),
        lambda: calviz.rintce([0, 1], [0.5, 0.2], width=0.0),
        lambda: calviz.rintce([0, 1], [0.5, 0.2], width=float("nan")),
        lambda: calviz.laplace_kce([0, 1], [0.5, 0.2], bandwidth=-1.0),
        lambda: calviz.lower_dce([0, 1], [0.5, 0.2], grid_step=0.003),
        lambda: calviz.lower_dce([0, 1], [0.5, 0.2], grid_step=0),
        lambda: calviz.binned_ece_with_width([0, 1], [0.5, 0.2], n_bins=0),
        lambda: calviz.binned_ece_with_width([0, 1], [0.5, 0.2], scheme="distinct"),
        lambda: calviz.distance_bounds([0, 1], [0.5, 0.2], n_bins=()),
        lambda: calviz.distance_bounds([0, 1], [0.5, 0.2], n_resamples=-1),
        lambda: calviz.distance_bounds([0, 1], [0.5, 0.2], alpha=1.5),
        lambda: calviz.smce_test([0, 1], [0.5, 0.2], eps0=0.2, eps1=0.1),
        lambda: calviz.smce_test([0, 1], [0.5, 0.2], eps0="x", eps1=0.1),
    ],
)
def test_bad_input_raises_input_error(call):
    with pytest.raises(InputError):
        call()


def test_distance_bounds_measure_records_carry_bands():
    rng = np.random.default_rng(13)
    v = rng.random(200)
    y = (rng.random(200) < v).astype(float)
    b = calviz.distance_bounds(y, v, grid_step=2e-2, n_bins=(5, 10), n_resamples=5, seed=0)
    assert set(b.measures) == {"smce", "lower_dce", "sintce", "laplace_kce", "binned_ece_width"}
    assert float(b.measures["smce"]) == b.smce
    assert (b.measures["smce"].band_low, b.measures["smce"].band_high) == b.bands["smce"]
    assert b.measures["binned_ece_width"].value == min(b.binned_ece_width.values())
    assert "Błasiok et al. (2023), Thm 7.3" in b.measures["smce"].inequality
    assert calviz.distance_bounds(y, v, grid_step=2e-2).measures["sintce"].band_low is None


def test_rintce_below_smallest_gap_is_resolved_ece():
    rng = np.random.default_rng(14)
    v = np.round(rng.random(200), 3)
    y = (rng.random(200) < 0.4).astype(float)
    assert calviz.rintce(y, v, width=1e-4).value == pytest.approx(resolved_ece(v, y), abs=1e-12)
    assert calviz.sintce(y, v).value <= resolved_ece(v, y) + 1e-12


def test_sintce_predictions_closer_than_deepest_scale():
    # a gap of 1e-19 < 2^-60 with RintCE ≈ 0: the stopping rule cannot fire by scale 2^-60
    v = np.array([0.0, 1e-19])
    y = np.zeros(2)
    res = calviz.sintce(y, v)
    assert not res.converged
    assert res.floor <= res.value == pytest.approx(resolved_ece(v, y), abs=1e-30)
    b = calviz.distance_bounds(y, v, grid_step=1e-2)
    assert b.lower <= b.upper


@pytest.mark.parametrize("seed", [0, 1])
def test_distance_bounds_results_are_the_measures_results(seed):
    """``DistanceBounds.results()`` gives smCE, dCE_lower and SintCE exactly as :func:`calviz.smce`,
    :func:`calviz.lower_dce` and :func:`calviz.sintce` return them for the same sample (ties included)."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(size=300), 1)  # ties
    y = (rng.uniform(size=300) < p).astype(int)
    results = calviz.distance_bounds(y, p).results()
    assert results["smce"] == calviz.smce(y, p) and results["lower_dce"] == calviz.lower_dce(y, p)
    assert results["sintce"].to_dict() == calviz.sintce(y, p).to_dict()
