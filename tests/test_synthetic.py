"""The paper scenarios: reproducible, valid input, and their ground truth matches simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calviz import _synthetic as S
from calviz._data import InputError, as_calibration_data

ALL = sorted(S.SCENARIOS)

# every scenario in a calibrated configuration (the truth says ECE = 0)
CALIBRATED = [
    ("tcal_p0", {}),
    ("beta_calibrated", {}),
    ("logit_distorted", {"beta": 1.0}),
    ("beta_top1", {"beta": 1.0}),
    ("perturbed_top2", {"epsilon": 0.0}),
    ("temperature_family", {"beta": 1.0}),
    ("shifted_uniform", {"epsilon": 0.0}),
    ("dirichlet_calibrated", {}),
    ("dirichlet_temperature", {"beta": 1.0}),
]

# miscalibrated configurations with a known (scalar-target) calibration curve
MISCALIBRATED_1D = [
    ("tcal_p1m", {"m": 4, "s": 0.5, "rho": 25.0}),
    ("tcal_example1", {"m": 8, "s": 0.3}),
    ("logit_distorted", {"beta": 0.3}),
    ("beta_top1", {"beta": 0.6}),
    ("temperature_family", {"beta": 3.0}),
    ("temperature_family", {"beta": 0.4}),
    ("shifted_uniform", {"epsilon": 0.05}),
]


@pytest.mark.parametrize("name", ALL)
def test_reproducible_and_valid(name):
    gen = S.SCENARIOS[name]
    a, b, c = gen(500, 7), gen(500, 7), gen(500, 8)
    np.testing.assert_array_equal(a.y_true, b.y_true)
    np.testing.assert_array_equal(a.y_prob, b.y_prob)
    assert not np.array_equal(a.y_prob, c.y_prob)
    # a Generator works as seed too and gives the same stream as the int seed
    d = gen(500, np.random.default_rng(7))
    np.testing.assert_array_equal(a.y_prob, d.y_prob)
    assert a.n == 500 and a.y_true.shape == (500,)
    assert a.y_prob.shape[0] == 500 and a.y_prob.ndim in (1, 2)
    data = as_calibration_data(a.y_true, a.y_prob)  # passes validation as is
    z, y = a.view()
    assert z.shape[0] == 500 and y.shape == z.shape
    assert a.params["seed"] == 7
    assert a.true_ece is None or a.true_ece >= 0
    assert not a.y_prob.flags.writeable
    assert data.n == 500
    assert name in repr(a)
    assert isinstance(a.to_dict()["params"], dict)


def test_shapes_and_targets():
    assert S.tcal_p0(10, 0).y_prob.shape == (10,)
    assert S.logit_distorted(10, 0).y_prob.shape == (10, 2)
    sc = S.perturbed_top2(10, 0)
    assert sc.y_prob.shape == (10, 10) and sc.target == "topk" and sc.top_k == 2
    assert S.dirichlet_temperature(10, 0, n_classes=5).y_prob.shape == (10, 5)
    assert S.perturbed_top2(10, 0, n_classes=4, epsilon=0.1).y_prob.shape == (10, 4)


@pytest.mark.parametrize(
    "call",
    [
        lambda: S.tcal_p0(1, 0),
        lambda: S.tcal_p1m(10, 0, m=2, s=0.0, rho=100.0),  # g would leave [0, 1]
        lambda: S.tcal_example1(10, 0, m=6),  # not a multiple of 4
        lambda: S.tcal_example1(10, 0, m=8, rho=1000.0),
        lambda: S.perturbed_top2(10, 0, epsilon=0.2),  # > 1/K
        lambda: S.shifted_uniform(10, 0, epsilon=1.5),
        lambda: S.temperature_family(10, 0, beta=0.0),
        lambda: S.dirichlet_calibrated(10, 0, n_classes=1),
        lambda: S.tcal_p0(100, 0).binned_ece_sq(0),
        lambda: S.dirichlet_temperature(100, 0).binned_ece_sq(10),
    ],
)
def test_bad_parameters_raise_input_error(call):
    with pytest.raises(InputError):
        call()


def _bin_z_scores(z, y, mean, n_bins=10):
    """Per-bin standardised Σ(y − mean(z)) under y ~ Ber(mean(z)) given z (exact conditional variance)."""
    ids = np.minimum((z * n_bins).astype(int), n_bins - 1)
    resid = np.bincount(ids, y - mean, n_bins)
    var = np.bincount(ids, mean * (1 - mean), n_bins)
    used = var > 0
    return resid[used] / np.sqrt(var[used])


@pytest.mark.parametrize("name,params", CALIBRATED)
def test_calibrated_scenarios_have_conditional_mean_z(name, params):
    sc = S.SCENARIOS[name](100_000, 11, **params)
    assert sc.true_ece == 0.0 and sc.is_calibrated
    data = sc.data()
    views = (
        [sc.view()] if sc.target in ("binary", "top1") else [data.classwise(c) for c in range(data.n_classes)]
    )
    if sc.target == "topk":
        z, y = data.topk(sc.top_k)
        views = [(z[:, j].copy(), y[:, j].copy()) for j in range(sc.top_k)]
    for z, y in views:
        scores = _bin_z_scores(z, y, z)
        # 10 bins per view, |N(0,1)| > 4.5 has probability 7e-6 per bin: a failure is a real bias
        assert np.max(np.abs(scores)) < 4.5, f"{name}: binned E[y|z] != z, z-scores {np.round(scores, 2)}"


@pytest.mark.parametrize("name,params", MISCALIBRATED_1D)
def test_labels_follow_calibration_curve_and_true_ece_matches_monte_carlo(name, params):
    n = 200_000
    sc = S.SCENARIOS[name](n, 3, **params)
    z, y = sc.view()
    curve = np.asarray(sc.calibration_curve(z), float)
    assert np.all((curve >= 0) & (curve <= 1))
    scores = _bin_z_scores(z, y, curve, n_bins=20)
    assert np.max(np.abs(scores)) < 4.5, (
        f"{name}: labels do not follow the curve, z-scores {np.round(scores, 2)}"
    )
    # true ℓ2 / ℓ1 ECE against the Monte Carlo mean of the squared / absolute residual of the curve
    r = curve - z
    for p, true in ((2, sc.true_ece**2), (1, sc.true_ece_l1)):
        vals = np.abs(r) ** p
        se = vals.std() / math.sqrt(n)
        assert abs(vals.mean() - true) <= 4 * se + 1e-12, (
            f"{name}: E|r|^{p} Monte Carlo {vals.mean():.6g} vs truth {true:.6g} "
            f"(MC s.e. {se:.2g}, bound 4 s.e.)"
        )


@pytest.mark.parametrize("name,params", MISCALIBRATED_1D)
def test_binned_ece_matches_monte_carlo(name, params):
    n, m = 400_000, 12
    sc = S.SCENARIOS[name](n, 5, **params)
    target = sc.binned_ece_sq(m)
    assert 0 <= target <= sc.true_ece**2 * (1 + 1e-9) + 1e-15  # Jensen: binning never increases ECE²
    z, _ = sc.view()
    r = np.asarray(sc.calibration_curve(z), float) - z
    ids = np.minimum((z * m).astype(int), m - 1)
    counts = np.bincount(ids, minlength=m)
    sums = np.bincount(ids, r, m)
    used = counts > 0
    mc = float(np.sum(sums[used] ** 2 / counts[used]) / n)
    # delta-method s.e. of Σ_b p_b r̄_b²: Var ≈ (1/n) Var(2 r̄_{b(Z)} r(Z) − r̄_{b(Z)}²) with bin means r̄
    means = np.where(used, sums / np.maximum(counts, 1), 0.0)
    infl = 2 * means[ids] * r - means[ids] ** 2
    se = infl.std() / math.sqrt(n)
    assert abs(mc - target) <= 4 * se + 1e-9, (
        f"{name}: binned ECE² MC {mc:.6g} vs quadrature {target:.6g} (s.e. {se:.2g})"
    )


def test_binned_target_converges_to_true_ece():
    sc = S.logit_distorted(10, 0, beta=0.4)
    values = [sc.binned_ece_sq(m) for m in (2, 10, 50, 400)]  # nested partitions: ECE²_m non-decreasing
    assert all(a <= b * (1 + 1e-9) for a, b in zip(values, values[1:], strict=False)), values
    assert values[-1] <= sc.true_ece**2 * (1 + 1e-9)
    assert values[-1] == pytest.approx(sc.true_ece**2, rel=1e-3)


@pytest.mark.parametrize(
    "name,params",
    [
        ("tcal_p1m", {"m": 8, "s": 0.5, "rho": 25.0}),
        ("tcal_p1m", {"m": 3, "s": 1.0, "rho": 30.0}),
        ("tcal_example1", {"m": 12, "s": 0.3, "rho": 20.0}),
    ],
)
def test_bump_closed_form_ece_matches_quadrature(name, params):
    """estimators.md §5: ℓ2-ECE(P_{1,m}) = ρ m^{-s}‖ζ‖_{L2}/√2 — check against integrating the curve."""
    sc = S.SCENARIOS[name](10, 0, **params)
    scale = params["rho"] * params["m"] ** (-params["s"])
    assert sc.true_ece == pytest.approx(scale * S.zeta_norm(2) / math.sqrt(2), rel=1e-12)
    assert sc.true_ece_l1 == pytest.approx(scale * S.zeta_norm(1) / 2, rel=1e-12)
    generic = sc._truth.quadrature  # adaptive quadrature of the scalar curve, bump by bump
    assert generic.ece(2) == pytest.approx(sc.true_ece, rel=1e-7)
    assert generic.ece(1) == pytest.approx(sc.true_ece_l1, rel=1e-7)
    for m in (1, 3, 7, 16, 50):  # bin edges cutting bumps, several bumps per bin, bumps per bin edge
        assert sc.binned_ece_sq(m) == pytest.approx(generic.binned_ece_sq(m), rel=1e-7, abs=1e-15)


def test_zeta_and_p1m_curve():
    assert S.zeta(0.5) == pytest.approx(math.exp(-4))
    assert S.zeta(np.array([-1.0, 0.0, 1.0, 2.0])).tolist() == [0.0, 0.0, 0.0, 0.0]
    sc = S.tcal_p1m(10, 0, m=4, s=0.5, rho=25.0)
    t = np.linspace(0, 1, 100_001)
    g = sc.calibration_curve(t)
    assert np.all(g[(t < 0.25) | (t > 0.75)] == t[(t < 0.25) | (t > 0.75)])  # bumps only on (1/4, 3/4)
    r = g - t
    assert r.max() > 0 and r.min() < 0  # alternating signs


def test_example1_pushes_down_below_half_and_up_above():
    sc = S.tcal_example1(10_000, 0)  # paper defaults: s = 0.3, rho = 100, m* = ⌊n^{2/(4s+1)}⌋
    assert sc.params["m"] % 4 == 0 and sc.params["m"] == 4 * (int(10_000 ** (2 / 2.2)) // 4)
    assert sc.params["rho"] == 100.0
    t = np.linspace(0, 1, 200_001)
    r = sc.calibration_curve(t) - t
    assert np.all(r * (2 * t - 1) >= -1e-15)  # res·(2z − 1) ≥ 0 (proof of Lee et al. (2023) Prop. 7)
    assert r[t < 0.5].min() < 0 < r[t > 0.5].max()
    # small n: rho is capped so that g stays inside [0, 1]
    small = S.tcal_example1(1000, 0)
    assert small.params["rho"] < 100.0
    assert np.all((small.calibration_curve(t) >= 0) & (small.calibration_curve(t) <= 1))


def test_perturbed_top2_truth():
    sc = S.perturbed_top2(50_000, 1, epsilon=0.05)
    assert sc.true_ece == pytest.approx(math.sqrt(2) * 0.05)
    assert sc.binned_ece_sq(20) == pytest.approx(2 * 0.05**2)
    z, y = sc.view()
    resid = (y - z).mean(axis=0)
    se = (y - z).std(axis=0) / math.sqrt(z.shape[0])
    assert np.all(np.abs(resid - [-0.05, 0.05]) < 4 * se), (resid, se)


def test_temperature_family_symmetry_with_setting1():
    """σ(β logit) with β and 1/β give the same ECE by the change of variables v ↔ f (a cross-check of two
    independent truth computations: integration in f for D_β, in c for Setting 1)."""
    for beta in (0.3, 0.5, 0.8):
        a = S.temperature_family(10, 0, beta=1 / beta).true_ece
        b = S.logit_distorted(10, 0, beta=beta).true_ece
        assert a == pytest.approx(b, rel=1e-8)


def test_dirichlet_temperature_truth_matches_fresh_monte_carlo():
    sc = S.dirichlet_temperature(200_000, 9, n_classes=4, beta=2.0)
    z = sc.y_prob
    p = sc.calibration_curve(z)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    sq = np.sum((p - z) ** 2, axis=1)
    se = math.hypot(sq.std() / math.sqrt(sq.size), sc.params["true_ece_sq_se"])
    assert abs(sq.mean() - sc.true_ece**2) < 4 * se
    # labels follow p = E[y | z]
    onehot = np.eye(4)[sc.y_true]
    dev = (onehot - p).mean(axis=0) / np.sqrt((p * (1 - p)).mean(axis=0) / sq.size)
    assert np.all(np.abs(dev) < 4.5)
