"""MCE, ACE and the classical calibration tests against independent references (slow numpy loops, MAPIE's
published functions, statsmodels' logistic regression), p-value range properties, small fixed-seed level
checks and input errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calviz
from calviz import _classical as classical
from calviz._data import InputError

ALPHA = 0.05


@pytest.fixture(autouse=True)
def asymptotic_everywhere(monkeypatch):
    """This file checks the asymptotic p-values against references at every n: the exact and resampled
    p-values calviz uses below ASYMPTOTIC_MIN_ROWS (and the floor at the probability of the labels, which
    an asymptotic formula at tiny n can violate) are checked in tests/test_small_n.py."""
    monkeypatch.setattr(classical, "ASYMPTOTIC_MIN_ROWS", 0)
    monkeypatch.setattr(classical, "floor_at_labels", lambda p, log_label_probability: p)


def _sample(n, rng, ties=False, power=1.0):
    z = rng.uniform(size=n)
    if ties:
        z = np.round(z * 7) / 7
    y = (rng.uniform(size=n) < z**power).astype(np.int64)
    return y, z


def _cases():
    """(name, y, z) inputs incl. ties, duplicates, n = 2, predictions on bin edges and 0/1."""
    rng = np.random.default_rng(11)
    out = []
    for n in (2, 3, 7, 40, 500):
        out.append((f"uniform-{n}", *_sample(n, rng)))
        out.append((f"ties-{n}", *_sample(n, rng, ties=True)))
        out.append((f"skewed-{n}", *_sample(n, rng, power=2.0)))
    edges = np.arange(16) / 15
    out.append(("edges", rng.integers(0, 2, 64), np.resize(edges, 64)))
    out.append(("zeros-ones", np.array([0, 1, 1, 0, 1]), np.array([0.0, 1.0, 1.0, 0.0, 1.0])))
    out.append(("duplicates", np.repeat([0, 1], 20), np.full(40, 0.3)))
    return out


CASES = _cases()


# ------------------------------------------------------------------------------------------------
# slow references
# ------------------------------------------------------------------------------------------------
def slow_spiegelhalter(y, z):
    num = sum((float(yi) - zi) * (1 - 2 * zi) for yi, zi in zip(y, z, strict=True))
    var = sum((1 - 2 * zi) ** 2 * zi * (1 - zi) for zi in z)
    return num, var


def slow_cumulative(y, z):
    """Max |S|, range of S with S_0 = 0, S read at the last member of each tie group; and Σ z(1 − z)."""
    values = sorted(set(z.tolist()))
    s, path = 0.0, [0.0]
    for v in values:
        s += sum(float(yi) - zi for yi, zi in zip(y, z, strict=True) if zi == v)
        path.append(s)
    var = sum(zi * (1 - zi) for zi in z)
    return max(abs(p) for p in path), max(path) - min(path), var


def slow_bin_means(z, y, edges):
    """|mean(y) − mean(z)| of each non-empty bin [e_i, e_{i+1}) (last closed)."""
    out = []
    for i in range(len(edges) - 1):
        last = i == len(edges) - 2
        inside = [(zi, yi) for zi, yi in zip(z, y, strict=True)
                  if edges[i] <= zi and (zi < edges[i + 1] or (last and zi <= edges[i + 1]))]
        if inside:
            out.append(abs(np.mean([b for _, b in inside]) - np.mean([a for a, _ in inside])))
    return out


def slow_equal_mass_edges(z, m):
    zs = sorted(z)
    n = len(zs)
    ranks = range(1, n) if m >= n else [int(np.round(j * n / m)) for j in range(1, m)]
    interior = sorted({zs[r] for r in ranks if 0 < r < n and zs[r] > 0})
    return [0.0, *interior, 1.0]


# ------------------------------------------------------------------------------------------------
# measures
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,y,z", CASES, ids=[c[0] for c in CASES])
def test_mce_matches_numpy_reference(name, y, z):
    m = 15
    edges = np.arange(m + 1) / m
    expected = max(slow_bin_means(z, y, edges))
    assert calviz.mce(y, z, n_bins=m).value == pytest.approx(expected, abs=1e-12)
    assert calviz.binned_ece(y, z, n_bins=m, p="max").value == calviz.mce(y, z, n_bins=m).value


def test_mce_top1_is_the_torchmetrics_definition():
    """torchmetrics/netcal: largest |accuracy − confidence| of the top-1 prediction over non-empty
    equal-width bins; a confidence of exactly 1.0 belongs to the last bin."""
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(4), size=300)
    probs[:5] = np.eye(4)[:5 % 4 + 1].repeat(5, axis=0)[:5]  # confidences of exactly 1.0
    labels = rng.integers(0, 4, 300)
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(float)
    ids = np.minimum(np.floor(conf * 10).astype(int), 9)
    expected = max(abs(correct[ids == b].mean() - conf[ids == b].mean()) for b in np.unique(ids))
    assert calviz.mce(labels, probs, n_bins=10).value == pytest.approx(expected, abs=1e-12)


def test_mce_vector_target_is_largest_coordinate():
    rng = np.random.default_rng(6)
    probs = rng.dirichlet(np.ones(3), size=200)
    labels = rng.integers(0, 3, 200)
    r = calviz.mce(labels, probs, n_bins=4, target="topk", top_k=2)
    z, y = calviz.as_calibration_data(labels, probs).topk(2)
    keys = np.minimum(np.floor(z * 4).astype(int), 3) @ np.array([1, 4])
    expected = max(np.abs(y[keys == k].mean(axis=0) - z[keys == k].mean(axis=0)).max()
                   for k in np.unique(keys))
    assert r.value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name,y,z", CASES, ids=[c[0] for c in CASES])
def test_ace_binary_matches_direct_computation(name, y, z):
    m = 5
    per_class = []
    for zc, yc in ((z, y), (1.0 - z, 1 - y)):
        per_class.append(np.mean(slow_bin_means(zc, yc, slow_equal_mass_edges(zc, m))))
    assert calviz.ace(y, z, n_bins=m).value == pytest.approx(np.mean(per_class), abs=1e-12)
    single = np.mean(slow_bin_means(z, y, slow_equal_mass_edges(z, m)))
    assert calviz.ace(y, z, n_bins=m, target="binary").value == pytest.approx(single, abs=1e-12)


def test_ace_multiclass_is_nixon_classwise_mean():
    rng = np.random.default_rng(7)
    K, n, m = 4, 400, 8
    probs = rng.dirichlet(np.ones(K), size=n)
    labels = np.array([rng.choice(K, p=p) for p in probs])
    per_class = [np.mean(slow_bin_means(probs[:, c], (labels == c).astype(float),
                                        slow_equal_mass_edges(probs[:, c], m))) for c in range(K)]
    r = calviz.ace(labels, probs, n_bins=m)
    assert r.value == pytest.approx(np.mean(per_class), abs=1e-12)
    assert (r.estimator, r.scheme, r.target, r.n_bins_total) == ("ace", "equal_mass", "classwise", K * m)
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(float)
    top1 = np.mean(slow_bin_means(conf, correct, slow_equal_mass_edges(conf, m)))
    assert calviz.ace(labels, probs, n_bins=m, target="top1").value == pytest.approx(top1, abs=1e-12)


def test_measures_refuse_bad_options():
    y, z = np.array([0, 1, 1]), np.array([0.2, 0.6, 0.9])
    with pytest.raises(InputError, match="The 'p' parameter of binned_ece must be a value among"):
        calviz.binned_ece(y, z, p="min")
    with pytest.raises(InputError, match="target"):
        calviz.ace(y, z, target="full")
    with pytest.raises(InputError, match="n_bins"):
        calviz.ace(y, z, n_bins=0)


def test_dask_mce_equals_in_memory():
    da = pytest.importorskip("dask.array")
    from calviz import dask as cdask

    rng = np.random.default_rng(8)
    y, z = _sample(5000, rng, power=1.5)
    r = cdask.mce(da.from_array(y, chunks=700), da.from_array(z, chunks=700), n_bins=20)
    assert r.value == pytest.approx(calviz.mce(y, z, n_bins=20).value, rel=1e-12)
    assert cdask.binned_ece(da.from_array(y, chunks=999), da.from_array(z, chunks=999), p="max",
                            n_bins=20).value == pytest.approx(r.value, rel=1e-12)


# ------------------------------------------------------------------------------------------------
# tests: statistics against slow references and MAPIE
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,y,z", CASES, ids=[c[0] for c in CASES])
def test_statistics_match_slow_references(name, y, z):
    num, var = slow_spiegelhalter(y, z)
    sp = calviz.spiegelhalter_test(y, z)
    if var > 0:
        assert sp.statistic == pytest.approx(num / math.sqrt(var), rel=1e-9, abs=1e-12)
        z_abs = abs(num / math.sqrt(var))
        assert sp.pvalue == pytest.approx(2 * (1 - 0.5 * (1 + math.erf(z_abs / math.sqrt(2)))), abs=1e-12)
    ks_dev, range_dev, cvar = slow_cumulative(y, z)
    ks, ku = calviz.kolmogorov_smirnov_test(y, z), calviz.kuiper_test(y, z)
    if cvar > 0:
        assert ks.statistic == pytest.approx(ks_dev / math.sqrt(cvar), rel=1e-9, abs=1e-12)
        assert ku.statistic == pytest.approx(range_dev / math.sqrt(cvar), rel=1e-9, abs=1e-12)
    for r in (sp, ks, ku):
        assert 0.0 <= r.pvalue <= 1.0


def test_tie_order_does_not_matter():
    rng = np.random.default_rng(9)
    y, z = _sample(300, rng, ties=True)
    perm = rng.permutation(300)
    for test in (calviz.kolmogorov_smirnov_test, calviz.kuiper_test):
        assert test(y, z).statistic == pytest.approx(test(y[perm], z[perm]).statistic, rel=1e-12)


@pytest.fixture(scope="module")
def mapie_calibration():
    return pytest.importorskip("mapie.metrics.calibration")


def test_against_mapie_without_ties(mapie_calibration):
    """Same statistics as MAPIE's published functions when the predictions are distinct.  Differences
    (documented): MAPIE's Spiegelhalter p-value is one-sided (1 − Φ(z)), ours two-sided; MAPIE's Kuiper
    range omits S_0 = 0; MAPIE breaks ties by a random 1e-8 jitter, ours reads tie-group ends."""
    mc = mapie_calibration
    rng = np.random.default_rng(10)
    for n in (50, 1000):
        for power in (1.0, 1.6):
            y, z = _sample(n, rng, power=power)
            sp = calviz.spiegelhalter_test(y, z)
            assert sp.statistic == pytest.approx(mc.spiegelhalter_statistic(y, z), rel=1e-10)
            one_sided = mc.spiegelhalter_p_value(y, z)
            assert sp.pvalue == pytest.approx(2 * min(one_sided, 1 - one_sided), abs=1e-12)
            ks = calviz.kolmogorov_smirnov_test(y, z)
            assert ks.statistic == pytest.approx(mc.kolmogorov_smirnov_statistic(y, z), rel=1e-6)
            assert ks.pvalue == pytest.approx(mc.kolmogorov_smirnov_p_value(y, z), abs=1e-6)
            cum = mc.cumulative_differences(y, z)
            sigma = mc.length_scale(z)
            ours = (max(cum.max(), 0.0) - min(cum.min(), 0.0)) / sigma
            assert calviz.kuiper_test(y, z).statistic == pytest.approx(ours, rel=1e-6)
            if cum.max() > 0 > cum.min():
                expected = mc.kuiper_statistic(y, z)
                assert calviz.kuiper_test(y, z).statistic == pytest.approx(expected, rel=1e-6)


def test_null_distributions_match_mapie_series(mapie_calibration):
    mc = mapie_calibration
    for x in np.r_[np.linspace(0.2, 5.0, 49), 0.999, 1.0, 1.001, 1.999, 2.0, 2.001]:
        assert classical.brownian_max_abs_sf(x) == pytest.approx(1 - mc.kolmogorov_smirnov_cdf(x), abs=1e-9)
        assert classical.brownian_range_sf(x) == pytest.approx(1 - mc.kuiper_cdf(x), abs=1e-9)


def test_null_distribution_tails_and_limits():
    # the two series agree where they switch, and the tails keep relative precision
    for sf, switch in ((classical.brownian_max_abs_sf, 1.0), (classical.brownian_range_sf, 2.0)):
        assert sf(switch - 1e-9) == pytest.approx(sf(switch), rel=1e-7)
        assert sf(0.0) == 1.0 and sf(-1.0) == 1.0
        values = [sf(x) for x in np.linspace(0.01, 12, 300)]
        assert all(0.0 <= v <= 1.0 for v in values)
        assert all(a >= b for a, b in zip(values, values[1:], strict=False))
    # P(sup|W| ≥ x) ~ 4 Φ̄(x) and P(range ≥ x) ~ 8 Φ̄(x) for large x
    from scipy import stats
    assert classical.brownian_max_abs_sf(8.0) == pytest.approx(4 * stats.norm.sf(8.0), rel=1e-10)
    assert classical.brownian_range_sf(8.0) == pytest.approx(8 * stats.norm.sf(8.0), rel=1e-6)
    with pytest.raises(InputError):
        classical.brownian_range_sf(math.nan)


# ------------------------------------------------------------------------------------------------
# Cox and Hosmer–Lemeshow against statsmodels
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sm():
    return pytest.importorskip("statsmodels.api")


@pytest.mark.parametrize("seed,power", [(0, 1.0), (1, 1.4), (2, 0.7)])
def test_cox_matches_statsmodels(sm, seed, power):
    rng = np.random.default_rng(seed)
    y, z = _sample(2000, rng, power=power)
    z = np.clip(z, 1e-3, 1 - 1e-3)
    x = np.log(z / (1 - z))
    X = sm.add_constant(x)
    r = calviz.cox_test(y, z)
    fit = sm.Logit(y, X).fit(disp=0)
    assert r.fit_converged
    assert (r.intercept, r.slope) == pytest.approx(tuple(fit.params), rel=1e-7, abs=1e-9)
    stat, pvalue, df = sm.GLM(y, X, family=sm.families.Binomial()).score_test(np.array([0.0, 1.0]),
                                                                             k_constraints=2)
    assert r.statistic == pytest.approx(float(np.ravel(stat)[0]), rel=1e-9)
    assert r.pvalue == pytest.approx(float(np.ravel(pvalue)[0]), rel=1e-9, abs=1e-300)
    assert r.df == df == 2


def test_hosmer_lemeshow_matches_statsmodels(sm):
    """HL = Pearson χ² of the 2g cells (events, non-events) of the groups (statsmodels.stats.gof.chisquare
    with ddof chosen for g − 2 or g degrees of freedom), applied to a statsmodels logistic fit."""
    from statsmodels.stats.gof import chisquare

    rng = np.random.default_rng(3)
    n = 3000
    features = rng.normal(size=(n, 2))
    eta = 0.4 + features @ np.array([1.0, -0.7]) + 0.5 * features[:, 0] ** 2  # misspecified for the fit
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    z = sm.Logit(y, sm.add_constant(features)).fit(disp=0).predict()
    edges = slow_equal_mass_edges(z, 10)
    ids = np.searchsorted(edges[1:-1], z, side="right")
    groups = np.unique(ids)
    observed = np.array([[y[ids == g].sum(), (1 - y[ids == g]).sum()] for g in groups]).ravel()
    expected = np.array([[z[ids == g].sum(), (1 - z[ids == g]).sum()] for g in groups]).ravel()
    g = len(groups)
    for fitted, df in ((True, g - 2), (False, g)):
        stat, pvalue = chisquare(observed, expected, ddof=2 * g - 1 - df)
        r = calviz.hosmer_lemeshow_test(y, z, fitted=fitted, min_expected=0)
        assert r.statistic == pytest.approx(stat, rel=1e-10)
        assert r.pvalue == pytest.approx(pvalue, rel=1e-9)
        assert r.df == df


def test_hosmer_lemeshow_groups_keyword_and_ties():
    rng = np.random.default_rng(4)
    y, z = _sample(1000, rng)
    assert calviz.hosmer_lemeshow_test(y, z, n_groups=5).df == 5
    assert calviz.hosmer_lemeshow_test(y, z, n_groups=5, fitted=True).df == 3
    y, z = _sample(1000, rng, ties=True)  # 8 distinct values: at most 8 groups
    assert calviz.hosmer_lemeshow_test(y, z, n_groups=20).df <= 8
    with pytest.raises(InputError, match="gave 1 group"):
        calviz.hosmer_lemeshow_test(np.array([0, 1, 1]), np.full(3, 0.5))
    with pytest.raises(InputError, match="at least 3 groups"):
        calviz.hosmer_lemeshow_test(np.array([0, 1, 1, 0]), np.array([0.2, 0.2, 0.7, 0.7]), fitted=True,
                                    min_expected=0)
    with pytest.raises(InputError, match="min_expected"):
        calviz.hosmer_lemeshow_test(y, z, min_expected=-1)
    with pytest.raises(InputError, match=r"'n_groups' parameter of hosmer_lemeshow_test .* \[3,"):
        calviz.hosmer_lemeshow_test(y, z, n_groups=2)


def test_hosmer_lemeshow_merges_groups_with_small_expected_counts():
    """Deciles of Beta(5, 0.5) predictions expect almost no non-events at the top: adjacent groups are
    merged (in order of risk) until each expects ≥ 5 events and ≥ 5 non-events."""
    rng = np.random.default_rng(16)
    z = rng.beta(5.0, 0.5, 500)
    y = (rng.uniform(size=500) < z).astype(int)
    edges = slow_equal_mass_edges(z, 10)
    ids = np.searchsorted(edges[1:-1], z, side="right")
    merged, current = [], np.zeros(3)
    for g in np.unique(ids):
        current = current + [y[ids == g].sum(), z[ids == g].sum(), (ids == g).sum()]
        if current[1] >= 5 and current[2] - current[1] >= 5:
            merged.append(current)
            current = np.zeros(3)
    if current[2]:
        merged[-1] = merged[-1] + current
    merged = np.array(merged)
    o, e, c = merged.T
    expected_stat = np.sum((o - e) ** 2 / (e * (1 - e / c)))
    r = calviz.hosmer_lemeshow_test(y, z)
    assert r.df == len(merged) < 10
    assert r.statistic == pytest.approx(expected_stat, rel=1e-10)
    assert calviz.hosmer_lemeshow_test(y, z, min_expected=0).df == 10


def test_cox_degenerate_inputs():
    # all predictions equal: one identifiable direction, χ²(1) = Spiegelhalter-type test of the mean
    r = calviz.cox_test(np.array([0, 1, 1, 1]), np.full(4, 0.5))
    assert r.df == 1 and r.statistic == pytest.approx(1.0) and math.isnan(r.slope) and not r.fit_converged
    # confident and right: nothing to reject; confident and wrong: impossible under calibration
    assert calviz.cox_test(np.ones(5, int), np.ones(5)).pvalue == pytest.approx(1.0, abs=1e-5)  # z clipped
    assert calviz.cox_test(np.array([0, 1, 1]), np.array([1.0, 0.9, 0.8])).pvalue < 1e-6
    # perfectly separated labels: the fit does not exist, the score test does
    r = calviz.cox_test(np.array([0, 0, 1, 1]), np.array([0.2, 0.3, 0.6, 0.7]))
    assert math.isnan(r.intercept) and not r.fit_converged and 0 <= r.pvalue <= 1


# ------------------------------------------------------------------------------------------------
# the single entry, top-1, decisions
# ------------------------------------------------------------------------------------------------
def test_classical_tests_runs_each_test_once():
    rng = np.random.default_rng(12)
    y, z = _sample(800, rng, power=1.3)
    res = calviz.classical_tests(y, z, alpha=0.1, n_groups=8)
    assert [t.name for t in res.tests] == list(classical.TEST_NAMES) and not res.errors
    for name, single in (("spiegelhalter", calviz.spiegelhalter_test(y, z)),
                         ("hosmer_lemeshow", calviz.hosmer_lemeshow_test(y, z, n_groups=8)),
                         ("cox", calviz.cox_test(y, z)),
                         ("kolmogorov_smirnov", calviz.kolmogorov_smirnov_test(y, z)),
                         ("kuiper", calviz.kuiper_test(y, z))):
        assert res[name] == single
    rows = res.rows()
    assert [r["reject"] for r in rows] == [t.pvalue <= 0.1 for t in res.tests]
    strict = res.rows(alpha=1e-9)  # the decision follows α without recomputation
    assert not any(r["reject"] for r in strict if r["pvalue"] > 1e-9)


def test_top1_equals_binary_tests_on_confidence_and_correctness():
    rng = np.random.default_rng(13)
    probs = rng.dirichlet(np.ones(5), size=600)
    labels = np.array([rng.choice(5, p=p) for p in probs])
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(int)
    multi = calviz.classical_tests(labels, probs)
    scalar = calviz.classical_tests(correct, conf)
    assert multi.target == "top1" and scalar.target == "binary"
    for a, b in zip(multi.tests, scalar.tests, strict=True):
        assert a.statistic == pytest.approx(b.statistic, rel=1e-12) and a.pvalue == pytest.approx(b.pvalue)
    r = calviz.classical_tests(labels, probs, target="classwise", class_index=2)
    one_vs_rest = calviz.spiegelhalter_test((labels == 2).astype(int), probs[:, 2])
    assert r["spiegelhalter"].statistic == one_vs_rest.statistic and r.target == "classwise"


def test_classical_tests_reports_what_it_cannot_compute():
    res = calviz.classical_tests(np.array([0, 1]), np.array([0.3, 0.8]))
    assert "hosmer_lemeshow" in res.errors and "hosmer_lemeshow" not in res
    assert len(res.tests) == 4
    with pytest.raises(KeyError, match="not computed"):
        res["hosmer_lemeshow"]
    assert res.rows()[-1]["pvalue"] is None


@pytest.mark.parametrize("kwargs,match", [
    ({"target": "full"}, "The 'target' parameter of classical_tests must be a str among"),
    ({"target": "topk"}, "The 'target' parameter of classical_tests must be a str among"),
    ({"alpha": 1.5}, "alpha"),
    ({"n_groups": 2}, "n_groups"),
    ({"n_groups": 2.5}, "n_groups"),
    ({"fitted": "yes"}, "fitted"),
    ({"tests": ("cox", "brier")}, "The 'tests' parameter of classical_tests must be a list, tuple or set"),
    ({"tests": "cox"}, "The 'tests' parameter of classical_tests must be a list"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(InputError, match=match):
        calviz.classical_tests(np.array([0, 1, 1, 0]), np.array([0.1, 0.7, 0.8, 0.4]), **kwargs)


def test_bad_data():
    for y, z, match in ((np.array([0, 1]), np.array([0.2, np.nan]), "NaN"),
                        (np.array([0, 1]), np.array([0.2, 1.2]), r"\[0, 1\]"),
                        (np.array([0]), np.array([0.2]), "at least 2"),
                        (np.array([0, 1, 2]), np.array([0.2, 0.3, 0.4]), "y_true must be")):
        for test in (calviz.spiegelhalter_test, calviz.cox_test, calviz.kuiper_test, calviz.classical_tests):
            with pytest.raises(InputError, match=match):
                test(y, z)


def test_repr_and_json():
    res = calviz.classical_tests(*_sample(200, np.random.default_rng(14)))
    assert "CoxTestResult" in repr(res["cox"]) and "slope=" in repr(res["cox"])
    d = res.to_dict()
    assert d["tests"][2]["name"] == "cox" and "intercept" in d["tests"][2]


# ------------------------------------------------------------------------------------------------
# p-values never leave [0, 1]
# ------------------------------------------------------------------------------------------------
_grid = st.sampled_from([0.0, 1e-12, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1 - 1e-12, 1.0])
_prob = st.one_of(_grid, st.floats(0.0, 1.0, allow_nan=False))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_prob, st.integers(0, 1)), min_size=2, max_size=60), st.sampled_from([3, 5, 10]))
def test_pvalues_stay_in_unit_interval(pairs, n_groups):
    z = np.array([p for p, _ in pairs])
    y = np.array([label for _, label in pairs])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division or overflow warnings either
        res = calviz.classical_tests(y, z, n_groups=n_groups)
    for t in res.tests:
        assert 0.0 <= t.pvalue <= 1.0, t
        assert not math.isnan(t.statistic)
    assert set(res.errors) <= {"hosmer_lemeshow"}


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.booleans(), st.sampled_from([0.5, 0.9, 1.0]))
def test_pvalues_all_correct_or_all_wrong(n, correct, confidence):
    y = np.ones(n, dtype=int) if correct else np.zeros(n, dtype=int)
    res = calviz.classical_tests(y, np.full(n, confidence))
    assert all(0.0 <= t.pvalue <= 1.0 for t in res.tests)
    if correct and confidence == 1.0:
        assert all(t.pvalue == pytest.approx(1.0, abs=1e-5) for t in res.tests)
    if not correct and confidence == 1.0:
        assert all(t.pvalue == 0.0 for t in res.tests)


# ------------------------------------------------------------------------------------------------
# level (small fixed-seed check; benchmarks/classical_level.py runs 2000+ repetitions)
# ------------------------------------------------------------------------------------------------
def test_level_under_calibration_small():
    """400 repetitions at n = 400 from Z ~ U[0, 1], Y ~ Ber(Z): each test's rejection rate at α = 0.05 is
    at most α + 3 Monte Carlo s.e. (s.e. = √(α(1−α)/400) = 0.011, so the bound is 0.083)."""
    rng = np.random.default_rng(2024)
    reps, n = 400, 400
    rejections = dict.fromkeys(classical.TEST_NAMES, 0)
    for _ in range(reps):
        y, z = _sample(n, rng)
        for t in calviz.classical_tests(y, z).tests:
            rejections[t.name] += t.pvalue <= ALPHA
    bound = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
    for name, k in rejections.items():
        assert k / reps <= bound, (name, k / reps)


def test_power_against_overconfidence_small():
    """Predictions twice as extreme on the logit scale as the truth (n = 2000, fixed seed): every test
    rejects (the effect is many standard errors away)."""
    rng = np.random.default_rng(15)
    truth = rng.uniform(0.05, 0.95, 2000)
    logit = np.log(truth / (1 - truth))
    z = 1 / (1 + np.exp(-2 * logit))
    y = (rng.uniform(size=2000) < truth).astype(int)
    res = calviz.classical_tests(y, z)
    assert all(t.pvalue < 1e-4 for t in res.tests), res.rows()
    assert res["cox"].slope == pytest.approx(0.5, abs=0.1)


# ------------------------------------------------------------------------------------------------
# everywhere a user looks: calviz check, the report
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def overconfident_csv(tmp_path_factory):
    import pandas as pd

    rng = np.random.default_rng(17)
    truth = rng.uniform(0.05, 0.95, 3000)
    z = 1 / (1 + np.exp(-2 * np.log(truth / (1 - truth))))
    path = tmp_path_factory.mktemp("classical") / "over.csv"
    labels = (rng.uniform(size=3000) < truth).astype(int)
    pd.DataFrame({"y_true": labels, "y_prob": z}).to_csv(path, index=False)
    return path


def test_check_json_and_text_show_the_classical_tests(overconfident_csv, capsys):
    import json

    from calviz.cli import main

    assert main(["check", str(overconfident_csv), "--json", "--alpha", "0.01", "--n-bins", "12"]) == 0
    out = json.loads(capsys.readouterr().out)
    classical_out = out["classical"]
    assert [t["name"] for t in classical_out["tests"]] == list(classical.TEST_NAMES)
    assert all(0 <= t["pvalue"] <= 0.01 for t in classical_out["tests"])
    assert classical_out["alpha"] == 0.01 and classical_out["target"] == "binary"
    assert classical_out["measures"]["mce"]["n_bins"] == 12 and classical_out["measures"]["ace"]["value"] > 0
    assert classical_out["tests"][2]["slope"] == pytest.approx(0.5, abs=0.1)
    assert main(["check", str(overconfident_csv)]) == 0
    text = capsys.readouterr().out
    assert "other tests at α = 0.05 (binary):" in text and "MCE" in text and "ACE" in text
    lines = [line for line in text.splitlines() if line.strip().startswith(("Spiegelhalter", "Hosmer", "Cox",
                                                                            "Kolmogorov", "Kuiper"))]
    assert len(lines) == 5 and all(line.rstrip().split("  ")[-1].startswith("rejects") or "rejects (" in line
                                   for line in lines)


def test_report_has_the_classical_section():
    from calviz.present.report import render_report

    rng = np.random.default_rng(18)
    y, z = _sample(600, rng, power=1.5)
    html_text = render_report((y, z), resampled=False)
    assert "Other calibration tests" in html_text
    for label in ("Spiegelhalter z", "Hosmer–Lemeshow", "Cox intercept/slope", "Kuiper", "MCE",
                  "ACE"):
        assert label in html_text


def test_dashboard_table_follows_alpha_without_recomputation():
    import holoviews as hv

    from calviz import plots

    rng = np.random.default_rng(19)
    y, z = _sample(2000, rng, power=1.15)
    res = calviz.classical_tests(y, z)
    pvalues = [t.pvalue for t in res.tests]
    for alpha in (0.5, 0.05, min(pvalues) / 2, max(pvalues) * 1.01 if max(pvalues) < 1 else 0.99):
        frame = plots.classical_table(res, alpha=alpha).dframe()
        decision = f"decision at α = {alpha:g}"
        assert frame["test"].tolist() == [t.label for t in res.tests]
        assert frame[decision].tolist() == ["rejects" if p <= alpha else "does not reject" for p in pvalues]
    table = plots.classical_table(res)
    bokeh_table = hv.renderer("bokeh").get_plot(table).handles["table"]
    assert bokeh_table.index_position is None and len(bokeh_table.columns) == 5
    assert isinstance(plots.classical_table(None), hv.Text)
    assert isinstance(plots.classical_table("not computed on Dask"), hv.Text)


def test_analysis_tests_follow_the_options_and_are_refused_on_dask():
    from calviz.analysis import AnalysisOptions, analyze, compute_classical

    rng = np.random.default_rng(20)
    y, z = _sample(800, rng)
    data = calviz.as_calibration_data(y, z)
    res = compute_classical(data, AnalysisOptions(n=300, alpha=0.1, n_bins=7))
    assert (res.n, res.alpha, res.measures["mce"].n_bins, res.measures["ace"].n_bins) == (300, 0.1, 7, 7)
    assert analyze(data, AnalysisOptions(n=300, alpha=0.1, n_bins=7), views=("classical",)).classical == res
    da = pytest.importorskip("dask.array")
    from calviz import dask as cdask

    distributed = cdask.from_dask(da.from_array(y, chunks=200), da.from_array(z, chunks=200))
    with pytest.raises(InputError, match="sort the whole sample"):
        cdask.compute_view("classical", distributed, AnalysisOptions())


def test_dashboard_table_follows_alpha_and_n():
    """The app's classical-tests table (in the T-Cal card): decisions follow α from the stored p-values
    (no recomputation), a new n recomputes; the exported report has the same tests."""
    from calviz.app.page import CalvizApp

    rng = np.random.default_rng(22)
    y, z = _sample(3000, rng, power=1.12)
    app = CalvizApp((y, z))
    app.refresh(inline=True)
    view, store = app.classical, app.store
    assert view.panel in app.views[1].extra.objects
    tests = store.classical.result
    pvalues = [t.pvalue for t in tests.tests]
    for alpha in (0.3, 0.001, 0.05):
        app.controls.alpha = alpha
        app.wait()
        assert list(view.table.source.data["decision"]) == ["rejects" if p <= alpha else "does not reject"
                                                      for p in pvalues]
        assert view.table.columns[3].title == "decision"  # α is stated in the caption, checked next
        assert f"at α = {alpha:g} (binary, n = 3,000" in view.caption.text
    assert store.calls["classical"] == 1  # α never recomputed the tests
    app.controls.n = 1000
    app.wait()
    assert store.calls["classical"] == 2 and "n = 1,000" in view.caption.text
    assert store.classical.result.n == 1000
    assert "Other calibration tests" in app.export_report().getvalue().decode()
@pytest.mark.parametrize("m", [1, 2, 3, 10, 64, 65, 200, 5000])
def test_equal_mass_edges_partial_sort_matches_full_sort(m):
    """equal_mass_edges reads the order statistics at the edge ranks from a partial sort (≤ 64 edges)."""
    from calviz._binning import equal_mass_edges

    rng = np.random.default_rng(21)
    for z in (rng.uniform(size=3000), np.round(rng.uniform(size=3000) * 40) / 40, rng.uniform(size=7),
              np.r_[np.zeros(50), rng.uniform(size=50)]):
        assert np.array_equal(equal_mass_edges(z, m), np.asarray(slow_equal_mass_edges(z, m)))


@pytest.mark.parametrize("shift, beta", [(-0.5, 0.7), (0.0, 1.0)])
def test_cox_fit_warm_start_reaches_the_same_maximum(monkeypatch, shift, beta):
    """On more than 4·WARM_START_ROWS rows the recalibration fit starts from a strided subsample's fit
    (or at the null when that is close): the same maximum-likelihood (a, b) as Newton's method from the
    null, to round-off."""
    from calviz._kernels.classical import clipped_logit

    rng = np.random.default_rng(11)
    n = 4 * classical.WARM_START_ROWS + 1000
    z = rng.uniform(0.01, 0.99, size=n)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(shift + beta * np.log(z / (1 - z)))))).astype(float)
    x = clipped_logit(z, classical.COX_EPS)
    warm = classical._fit_recalibration(x, y)
    monkeypatch.setattr(classical, "WARM_START_ROWS", n)  # no warm start
    cold = classical._fit_recalibration(x, y)
    assert warm[2] and cold[2]
    np.testing.assert_allclose(warm[:2], cold[:2], rtol=1e-12, atol=1e-13)
    assert abs(warm[0] - shift) < 0.05 and abs(warm[1] - beta) < 0.05


def test_cox_logits_on_threads_are_each_value_s_own():
    """Cox's clipped logits, computed in row chunks on threads from ``PARALLEL_MIN_ROWS`` rows, are
    log(p) − log1p(−p) of each prediction clipped to [ε, 1 − ε], value by value (the ends included)."""
    from calviz._classical import COX_EPS
    from calviz._kernels.classical import clipped_logit
    from calviz._threads import PARALLEL_MIN_ROWS

    rng = np.random.default_rng(12)
    z = rng.uniform(size=PARALLEL_MIN_ROWS + 5)
    z[:6] = [0.0, 1.0, COX_EPS / 2, 1.0 - COX_EPS / 2, COX_EPS, 0.5]
    x = clipped_logit(z, COX_EPS)
    rows = np.concatenate([np.arange(6), rng.integers(0, z.shape[0], 3000), [z.shape[0] - 1]])
    for i in rows.tolist():
        p = min(max(float(z[i]), COX_EPS), 1.0 - COX_EPS)
        assert x[i] == math.log(p) - math.log1p(-p)
