"""calviz.compare (paired ECE² difference) and calviz.calibration_by_group (Holm across groups)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

import calviz
from calviz._comparison import calibration_by_group, compare, holm_adjust, paired_difference
from calviz._data import InputError
from calviz._ece import bin_sums, miscalibrated_variance


# -- the paired statistic against a slow O(n²) implementation ----------------------------------------------
def _slow_paired(za, ya, zb, yb, m):
    """D, Var̂(φ) and Σ_{i≠j} h(i, j)² straight from the definitions (pairs enumerated)."""
    n = len(za)
    ba, bb = calviz._binning.equal_width_ids(za, m), calviz._binning.equal_width_ids(zb, m)
    u, w = ya - za, yb - zb
    Na, Nb = np.bincount(ba, minlength=m), np.bincount(bb, minlength=m)
    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                h[i, j] = ((ba[i] == ba[j]) * u[i] * u[j] / Na[ba[i]]
                           - (bb[i] == bb[j]) * w[i] * w[j] / Nb[bb[i]])
    D = h.sum() / n
    mua = np.array([u[ba == k].mean() if Na[k] else 0.0 for k in range(m)])
    mub = np.array([w[bb == k].mean() if Nb[k] else 0.0 for k in range(m)])
    phi = (2 * mua[ba] * u - mua[ba] ** 2) - (2 * mub[bb] * w - mub[bb] ** 2)
    return D, phi.var(), (h**2).sum()


def _random_pair(rng, n, kind):
    if kind == "edges":  # predictions exactly on bin edges k/m, duplicates
        za = rng.integers(0, 16, n) / 15
        zb = rng.integers(0, 16, n) / 15
    elif kind == "ties":
        za = np.round(rng.random(n), 1)
        zb = za.copy()
        zb[: n // 2] = rng.random(n // 2)
    else:
        za, zb = rng.random(n), rng.random(n)
    y = (rng.random(n) < za).astype(float)
    if kind == "all_correct":
        y[:] = 1.0
    elif kind == "all_wrong":
        y[:] = 0.0
    return za, y, zb, y.copy() if kind != "different_labels" else (rng.random(n) < zb).astype(float)


@pytest.mark.parametrize("kind", ["random", "edges", "ties", "all_correct", "all_wrong", "different_labels"])
@pytest.mark.parametrize("n", [2, 3, 17, 60])
def test_paired_difference_matches_slow_implementation(kind, n):
    rng = np.random.default_rng(n * 31 + len(kind))
    za, ya, zb, yb = _random_pair(rng, n, kind)
    m = 15
    res = paired_difference(za, ya, zb, yb, n_bins=m)
    D, var_phi, hsq = _slow_paired(za, ya, zb, yb, m)
    assert res.difference == pytest.approx(D, abs=1e-12)
    assert res.ece_sq_a == pytest.approx(calviz.debiased_ece(ya, za, n_bins=m).value, abs=1e-12)
    assert res.ece_sq_b == pytest.approx(calviz.debiased_ece(yb, zb, n_bins=m).value, abs=1e-12)
    v2 = 2 * hsq / n**2
    assert res.se_second_order == pytest.approx(np.sqrt(v2), abs=1e-12)
    assert res.se_first_order == pytest.approx(np.sqrt(max(var_phi / n - 2 * v2, 0)), abs=1e-9)
    assert res.se == pytest.approx(np.hypot(res.se_first_order, res.se_second_order), abs=1e-15)


def test_first_order_variance_of_one_model_is_sun_et_al_sigma1():
    """With model b's residuals all zero the influence-function variance is σ̂₁² of the ECE interval."""
    rng = np.random.default_rng(3)
    n, m = 4000, 10
    za = rng.random(n)
    ya = (rng.random(n) < za**1.5).astype(float)
    yb = (rng.random(n) < 0.5).astype(float)
    res = paired_difference(za, ya, yb, yb, n_bins=m)
    sums = bin_sums(calviz._binning.equal_width_ids(za, m), za, ya)
    expected = miscalibrated_variance(sums) / n
    assert res.se_first_order**2 + 2 * res.se_second_order**2 == pytest.approx(expected, rel=1e-9)


# -- compare ----------------------------------------------------------------------------------------------
def _models(n, seed, K=3):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, K)) * 1.5
    q = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(K, p=row) for row in q])
    over = np.exp(2 * logits) / np.exp(2 * logits).sum(axis=1, keepdims=True)
    return y, q, over


def test_compare_reports_each_models_public_estimators():
    y, good, bad = _models(3000, 0)
    c = compare(y, bad, good, names=("old", "new"), alpha=0.1, n_bins=12, resampling="analytic")
    assert c.target == "top1" and c.n == 3000 and c.level == pytest.approx(0.9)
    for mine, probs in ((c.ece_a, bad), (c.ece_b, good)):
        ref = calviz.ece_interval(y, probs, n_bins=12, alpha=0.1)
        expected = (ref.estimate, ref.low, ref.high)
        assert (mine.estimate, mine.low, mine.high) == pytest.approx(expected, abs=1e-12)
        assert mine.target == "top1"
    for mine, probs in ((c.tcal_a, bad), (c.tcal_b, good)):
        ref = calviz.adaptive_tcal(y, probs, alpha=0.1, resampling="analytic")
        assert mine.reject == ref.reject and mine.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
    direct = calviz.debiased_ece(y, bad, n_bins=12).value - calviz.debiased_ece(y, good, n_bins=12).value
    assert c.difference == pytest.approx(direct, abs=1e-12)
    z = stats.norm.ppf(0.95)
    assert (c.low, c.high) == pytest.approx((c.difference - z * c.se, c.difference + z * c.se))
    assert c.pvalue == pytest.approx(2 * stats.norm.sf(abs(c.difference) / c.se))
    assert c.reject and c.better == "new" and "new is better calibrated than old" in c.verdict
    # swapping the models flips the sign and keeps the standard error
    s = compare(y, good, bad, alpha=0.1, n_bins=12, tcal=False)
    assert s.difference == pytest.approx(-c.difference, abs=1e-15)
    assert s.se == pytest.approx(c.se, rel=1e-12) and s.tcal_a is None


def test_compare_tcal_is_the_library_default_rule():
    """By default each model's T-Cal is adaptive_tcal's own decision (sequential y-only resampling)."""
    y, good, bad = _models(1500, 3)
    c = compare(y, good, bad, seed=5)
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(5).spawn(2)]
    for mine, probs, seed in ((c.tcal_a, good, seeds[0]), (c.tcal_b, bad, seeds[1])):
        ref = calviz.adaptive_tcal(y, probs, seed=seed)
        assert mine.method == ref.method and mine.max_resamples == ref.max_resamples > 0
        assert (mine.decision, mine.pvalue, mine.n_resamples) == (ref.decision, ref.pvalue, ref.n_resamples)


def test_compare_resampled_tcal_is_reproducible():
    y, good, bad = _models(800, 1)
    a = compare(y, good, bad, resampling="y_only", n_resamples=499, seed=4)
    b = compare(y, good, bad, resampling="y_only", n_resamples=499, seed=4)
    assert a.tcal_a.pvalue == b.tcal_a.pvalue and a.tcal_b.pvalue == b.tcal_b.pvalue


def test_identical_models_are_not_different():
    y, good, _ = _models(500, 2)
    c = compare(y, good, good, tcal=False)
    assert abs(c.difference) < 1e-15 and c.pvalue == 1.0 and not c.reject and c.better is None
    assert "No statistically supported difference" in c.verdict


def test_binary_and_classwise_targets():
    rng = np.random.default_rng(5)
    q = rng.random(2000)
    y = (rng.random(2000) < q).astype(int)
    c = compare(y, q, expit(3 * (q - 0.5)), tcal=False)
    assert c.target == "binary" and c.reject and c.better == "A"
    y3, good, bad = _models(1000, 6)
    cw = compare(y3, good, bad, target="classwise", class_index=2, tcal=False)
    ref = calviz.debiased_ece(y3, good, target="classwise", class_index=2).value
    assert cw.ece_sq_a == pytest.approx(ref, abs=1e-12) and cw.target == "classwise"


def test_level_of_the_equal_calibration_test_for_an_exchangeable_pair():
    """Two differently noisy copies of one miscalibrated model: equal binned ECE² by symmetry."""
    rng = np.random.default_rng(11)
    reps, n, rejections = 300, 2000, 0
    for _ in range(reps):
        g = rng.normal(size=n)
        q = expit(1.5 * g)
        e1 = rng.normal(size=n)
        e2 = 0.8 * e1 + 0.6 * rng.normal(size=n)
        y = (rng.random(n) < q).astype(int)
        rejections += compare(y, expit(2.2 * g + 0.5 * e1), expit(2.2 * g + 0.5 * e2), tcal=False).reject
    rate = rejections / reps
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)


@pytest.mark.parametrize("call", [
    lambda y, a, b: compare(y, a, b[:-1]),
    lambda y, a, b: compare(y, a, b[:, :2] / b[:, :2].sum(axis=1, keepdims=True)),
    lambda y, a, b: compare(y, a, b, target="topk"),
    lambda y, a, b: compare(y, a, b, names=("x", "x")),
    lambda y, a, b: compare(y, a, b, alpha=1.5),
    lambda y, a, b: compare(y, a, b, n_bins=0),
    lambda y, a, b: compare(y, a, np.full_like(b, np.nan)),
])
def test_compare_refuses_bad_input(call):
    y, a, b = _models(50, 7)
    with pytest.raises(InputError):
        call(y, a, b)


# -- subgroups --------------------------------------------------------------------------------------------
def _slow_holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return np.array(out)


@pytest.mark.parametrize("p", [[0.01, 0.04, 0.03, 0.5], [0.2, 0.2, 0.2], [0.0, 1.0], [0.001], []])
def test_holm_matches_slow_implementation(p):
    np.testing.assert_allclose(holm_adjust(p), _slow_holm(p))


def test_group_numbers_equal_the_estimators_on_each_groups_rows():
    y, good, bad = _models(2400, 8)
    probs = good.copy()
    groups = np.array(["north", "south", "east"])[np.random.default_rng(0).integers(0, 3, 2400)]
    probs[groups == "east"] = bad[groups == "east"]  # one miscalibrated group
    groups[:12] = "tiny"
    res = calibration_by_group(y, probs, groups, n_bins=10, alpha=0.05, resampling="analytic", seed=1)
    assert [g.group for g in res.groups] == ["east", "north", "south", "tiny"]  # sorted, none dropped
    assert sum(g.n for g in res.groups) == 2400
    tiny = res["tiny"]
    assert tiny.status == "too small" and tiny.interval is None and tiny.tcal is None and tiny.reject is None
    assert tiny.reliability.n == 12 and res.too_small == ("tiny",)
    for g in res.groups:
        rows = groups == g.group
        rel = calviz.reliability(y[rows], probs[rows], n_bins=10, alpha=0.05)
        np.testing.assert_array_equal(g.reliability.counts, rel.counts)
        np.testing.assert_allclose(g.reliability.observed_frequency, rel.observed_frequency, equal_nan=True)
        if g.status != "tested":
            continue
        ci = calviz.ece_interval(y[rows], probs[rows], n_bins=10, alpha=0.05)
        assert (g.interval.estimate, g.interval.low, g.interval.high) == (ci.estimate, ci.low, ci.high)
        t = calviz.adaptive_tcal(y[rows], probs[rows], alpha=0.05, resampling="analytic")
        assert g.pvalue == t.pvalue and g.tcal.reject == t.reject
    tested = [g for g in res.groups if g.status == "tested"]
    np.testing.assert_allclose([g.adjusted_pvalue for g in tested], _slow_holm([g.pvalue for g in tested]))
    assert all(g.reject == (g.adjusted_pvalue <= 0.05) for g in tested)
    assert res.worst_group == "east" and "east" in res.rejected
    assert "worst group east" in res.verdict and "tiny" in res.verdict


def test_family_wise_level_when_every_group_is_calibrated():
    rng = np.random.default_rng(21)
    reps, sizes = 200, [60, 200, 600]
    labels = np.repeat([0, 1, 2], sizes)
    any_rejection = 0
    for _ in range(reps):
        q = rng.random(labels.size)
        y = (rng.random(labels.size) < q).astype(int)
        any_rejection += bool(calibration_by_group(y, q, labels, alpha=0.05, resampling="analytic").rejected)
    assert any_rejection / reps <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)


def _three_groups_one_overconfident(seed):
    rng = np.random.default_rng(seed)
    labels = np.repeat(["a", "b", "c", "d"], 300)
    q = rng.random(labels.size)
    y = (rng.random(labels.size) < q).astype(int)
    z = q.copy()
    z[labels == "d"] = expit(12 * (q[labels == "d"] - 0.5))  # overconfident
    return y, z, labels


def test_group_tcal_is_the_library_default_rule():
    """By default each group's T-Cal is adaptive_tcal's own sequential y-only decision on its rows, and
    the Holm step-down on sequential decisions rejects the miscalibrated group only."""
    y, z, labels = _three_groups_one_overconfident(2)
    res = calibration_by_group(y, z, labels, seed=0)
    assert res.rejected == ("d",) and res.worst_group == "d"
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(0).spawn(4)]
    for g, seed in zip(res.groups, seeds, strict=True):
        rows = labels == g.group
        ref = calviz.adaptive_tcal(y[rows], z[rows], seed=seed)
        assert g.tcal.method == ref.method and g.tcal.max_resamples == ref.max_resamples > 0
        mine = (g.tcal.decision, g.tcal.pvalue, g.tcal.n_resamples)
        assert mine == (ref.decision, ref.pvalue, ref.n_resamples)


def test_group_decisions_name_an_undecided_group(monkeypatch):
    """``GroupResult.decision`` says "undecided" for a group whose sequential test hit its cap at its Holm
    level (not rejected, the reason says why), "reject" and "accept" for the others; None untested."""
    from calviz import _tcal as tcal

    y, z, labels = _three_groups_one_overconfident(2)
    labels = labels.astype(object)
    labels[:10] = "tiny"
    real = tcal.adaptive_tcal

    def capped_in_group_c(rows, **kwargs):  # group c's sequential test reaches its cap undecided
        result = real(rows, **kwargs)
        if rows.n == 300 and np.array_equal(rows.probs, z[labels == "c"]):
            return dataclasses.replace(result, reject=False, decision="undecided")
        return result

    monkeypatch.setattr(tcal, "adaptive_tcal", capped_in_group_c)
    res = calibration_by_group(y, z, labels, seed=0, min_group_size=20)
    decisions = {g.group: (g.decision, g.reject) for g in res.groups}
    assert decisions == {"a": ("accept", False), "b": ("accept", False), "c": ("undecided", False),
                         "d": ("reject", True), "tiny": (None, None)}
    assert "undecided at the Holm level" in next(g.reason for g in res.groups if g.group == "c")


def _slow_sequential_holm(pvalues, alpha):
    """Holm with exact p-values written as the step-down on decisions (the textbook definition)."""
    order = np.argsort(pvalues, kind="stable")
    rejected = set()
    for rank, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - rank):
            break
        rejected.add(int(i))
    return rejected


@pytest.mark.parametrize("seed", range(6))
def test_sequential_holm_steps_equal_holm_on_exact_pvalues(seed, monkeypatch):
    """The step-down on decisions (test every remaining group at α/m, drop the rejected, repeat) rejects
    the same set as Holm on the p-values, checked with a test whose decision is an exact p-value."""
    from calviz import _comparison as comparison
    from calviz import _tcal as tcal

    rng = np.random.default_rng(seed)
    pvalues = rng.choice([0.001, 0.004, 0.01, 0.012, 0.02, 0.03, 0.2, 0.6], size=rng.integers(1, 7))
    calls = []

    class Decision:
        def __init__(self, p, alpha):
            self.reject = p <= alpha
            self.decision = "reject" if self.reject else "accept"
            self.pvalue_interval = (p, p)

    def fake(rows, *, alpha, **kwargs):  # (a group's rows stand for its exact p-value here)
        calls.append(alpha)
        return Decision(float(rows), alpha)

    monkeypatch.setattr(tcal, "adaptive_tcal", fake)
    groups = [(i, pv, 0) for i, pv in enumerate(pvalues)]
    rejected, _ = comparison._sequential_holm(groups, alpha=0.05, resampling="y_only", target="binary",
                                              class_index=0)
    assert rejected == _slow_sequential_holm(pvalues, 0.05)
    assert rejected == set(np.flatnonzero(holm_adjust(pvalues) <= 0.05).tolist())
    g = len(pvalues)
    assert len(calls) <= g * (g + 1) // 2


@pytest.mark.parametrize("kwargs", [
    {"groups": None}, {"groups": np.zeros(5)}, {"groups": np.zeros((100, 2))}, {"min_group_size": 1},
    {"target": "full"}, {"alpha": 0},
])
def test_groups_refuse_bad_input(kwargs):
    y, good, _ = _models(100, 9)
    kwargs.setdefault("groups", np.zeros(100))
    with pytest.raises(InputError):
        calibration_by_group(y, good, **kwargs)


def test_groups_accept_mixed_values_and_missing():
    y, good, _ = _models(200, 10)
    groups = np.array(["x", None, 3, "x"] * 50, dtype=object)
    res = calibration_by_group(y, good, groups)
    assert sum(g.n for g in res.groups) == 200 and len(res.groups) == 3


def test_a_group_where_the_test_cannot_run_is_listed_with_the_reason(monkeypatch):
    import calviz._comparison

    real = calviz._comparison.adaptive_tcal

    def picky(rows, **kwargs):
        if rows.n == 80:
            raise InputError("cannot test this group")
        return real(rows, **kwargs)

    monkeypatch.setattr(calviz._comparison, "adaptive_tcal", picky)
    y, good, _ = _models(200, 12)
    res = calibration_by_group(y, good, np.repeat(["a", "b"], [80, 120]))
    assert res["a"].status == "not testable" and res["a"].reason == "cannot test this group"
    assert res.not_testable == ("a",) and res["b"].status == "tested" and res.worst_group == "b"
    assert res["b"].adjusted_pvalue == res["b"].pvalue  # a family of one tested group
    assert "not testable: a" in res.verdict


# --------------------------------------------------------------------------------------------------
# group= on calviz.analysis.analyze
# --------------------------------------------------------------------------------------------------
def _grouped(n=1500, seed=31):
    rng = np.random.default_rng(seed)
    q = rng.random(n)
    y = (rng.random(n) < q).astype(int)
    region = rng.choice(np.array(["north", "south", "west"]), n)
    z = np.where(region == "west", expit(14 * (q - 0.5)), q)
    return y, z, region


def _same_groups(mine, ref):
    assert [g.group for g in mine.groups] == [g.group for g in ref.groups]
    for a, b in zip(mine.groups, ref.groups, strict=True):
        assert (a.n, a.status, a.pvalue, a.adjusted_pvalue, a.reject) == (b.n, b.status, b.pvalue,
                                                                          b.adjusted_pvalue, b.reject)
    assert mine.worst_group == ref.worst_group and mine.rejected == ref.rejected


def test_analyze_group_array_equals_calibration_by_group():
    from calviz.analysis import analyze

    y, z, region = _grouped()
    res = analyze((y, z), group=region, views=("reliability",), n_bins=10, alpha=0.1, seed=3,
                  resampling="analytic")
    _same_groups(res.groups, calibration_by_group(y, z, region, n_bins=10, alpha=0.1, seed=3,
                                                  resampling="analytic"))
    assert "west" in res.groups.rejected and res.to_dict()["groups"]["worst_group"] == "west"
    # a subsample: the groups of the analysed rows (the rows CalibrationData.subsample keeps)
    sub = analyze((y, z), group=region, views=("reliability",), n=700, seed=5, resampling="analytic")
    rows = np.sort(np.random.default_rng(5).choice(y.size, size=700, replace=False))
    assert sub.groups.n == 700
    _same_groups(sub.groups, calibration_by_group(y[rows], z[rows], region[rows], seed=5,
                                                  resampling="analytic"))


def test_analyze_group_column_of_a_file(tmp_path):
    import pandas as pd

    from calviz.analysis import analyze

    y, z, region = _grouped(900, 32)
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y_true": y, "y_prob": z, "region": region}).to_csv(path, index=False)
    res = analyze(path, group="region", views=("reliability",), seed=1)  # the library's T-Cal rule
    _same_groups(res.groups, calibration_by_group(y, z, region, seed=1))
    by_label = analyze(str(path), group="y_true", views=("reliability",), resampling="analytic")
    assert [g.group for g in by_label.groups.groups] == [0, 1]
    with pytest.raises(InputError, match="no column 'nope'"):
        analyze(path, group="nope", views=("reliability",))
    with pytest.raises(InputError, match="names a column"):
        analyze((y, z), group="region", views=("reliability",))
    with pytest.raises(InputError, match="one value per row"):
        analyze((y, z), group=region[:-1], views=("reliability",))


def _confidence_rows(n=600, seed=8):
    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.1, 0.6, size=n)
    correct = (rng.uniform(size=n) < confidence + 0.2).astype(int)
    return calviz.as_calibration_data(correct, confidence, confidence_form=True)


def test_comparisons_keep_the_confidence_form():
    """(confidence, correct) rows stay that form inside compare and calibration_by_group: the top-1 view of
    the same predictions is the same (compare reported D = 0.034, p = 6e-7, "B is better" for identical
    predictions, and the groups' ECEs were those of max(c, 1 − c))."""
    data = _confidence_rows()
    same = calviz.compare(data, None, data.probs, target="top1", tcal=False)
    assert same.difference == 0.0 and not same.reject
    groups = np.where(np.arange(data.n) % 3 == 0, "a", "b")
    by_group = calviz.calibration_by_group(data, groups=groups, target="top1", resampling="analytic")
    for name in ("a", "b"):
        alone = calviz.ece_interval(data._rows(np.flatnonzero(groups == name)), target="top1")
        assert by_group[name].ece == pytest.approx(alone.estimate, abs=1e-12)


def test_missing_group_values_form_a_group_that_can_be_named():
    """A NaN group is found by res[nan] and named "(missing)" in the verdict (res.verdict raised KeyError
    when it was the worst group); int groups with a None stay ints (they became the strings '0', '1')."""
    rng = np.random.default_rng(9)
    # groups of ~600 rows: the analytic test's Cantelli floor below 500 rows would reject none of them
    p = rng.uniform(size=1800)
    y = (rng.uniform(size=1800) < p**2).astype(int)
    floats = np.where(p > 0.66, np.nan, np.where(p > 0.33, 1.0, 2.0))
    res = calviz.calibration_by_group(y, p, groups=floats, resampling="analytic")
    assert res[np.nan].n == int(np.sum(p > 0.66)) and "(missing)" in res.verdict
    ints = [0 if v < 0.5 else 1 if v < 0.8 else None for v in p]
    res = calviz.calibration_by_group(y, p, groups=ints, resampling="analytic")
    assert res[0].n == int(np.sum(p < 0.5)) and res[1].n == int(np.sum((p >= 0.5) & (p < 0.8)))
    assert res[None].n == int(np.sum(p >= 0.8))
