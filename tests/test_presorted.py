"""The presorted view answers every 1-D binned statistic as the direct estimators do (to 1e−12)."""

import dataclasses

import numpy as np
import pytest

import calviz
from calviz._data import InputError
from calviz._kernels import tcal as _kt
from calviz._presorted import BootstrapBins, ClasswiseACE, Presorted
from calviz._tcal import _scan_order

RTOL = 1e-12
ATOL = 1e-14


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def _binary(n, seed, kind="ties"):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    if kind == "ties":  # heavy ties, duplicates and values exactly on equal-width edges of many m
        p[: n // 3] = rng.integers(0, 23, size=n // 3) / 22.0
        p[n // 3: n // 2] = 0.5
        p[:3] = [0.0, 1.0, 15 / 22][:n]
    y = (rng.uniform(size=n) < p ** 1.3).astype(int)
    if kind == "ones":
        y[:] = 1
    elif kind == "zeros":
        y[:] = 0
    return calviz.as_calibration_data(y, p)


def _multiclass(n, K, seed):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(K), size=n)
    probs[: n // 4] = np.round(probs[: n // 4], 1)
    probs[: n // 4] /= probs[: n // 4].sum(axis=1, keepdims=True)
    probs[n // 4: n // 4 + 5] = 1.0 / K  # ties across classes
    labels = rng.integers(0, K, size=n)
    return calviz.as_calibration_data(labels, probs)


CASES = [("ties", 3000), ("uniform", 2500), ("ones", 400), ("zeros", 400), ("ties", 2), ("uniform", 3)]
BINS = [1, 2, 7, 15, 22, 64, 1000, 10**7, 2**40]


@pytest.mark.parametrize("kind,n", CASES)
def test_binned_estimators_equal_direct(kind, n):
    data = _binary(n, seed=n, kind=kind)
    view = Presorted.from_data(data)
    for m in BINS:
        for scheme in ("equal_width", "equal_mass", "distinct"):
            for p in (1, 2, "max"):
                a = view.binned_ece(m, p, scheme)
                b = calviz.binned_ece(data, n_bins=m, p=p, scheme=scheme)
                _close(a.value, b.value)
                assert (a.n_bins, a.n_bins_total, a.n_nonempty, a.scheme, a.target) == (
                    b.n_bins, b.n_bins_total, b.n_nonempty, b.scheme, b.target)
            _close(view.estimate("debiased_l2_sq", m, scheme).value,
                   calviz.debiased_ece(data, n_bins=m, scheme=scheme).value)
            _close(view.estimate("unbiased_l2_sq", m, scheme).value,
                   calviz.unbiased_ece(data, n_bins=m, scheme=scheme).value)
            _close(view.estimate("kumar_l2_sq", m, scheme).value,
                   calviz.kumar_debiased_ece(data, n_bins=m, scheme=scheme).value)
        _close(view.ace(m).value, calviz.ace(data, n_bins=m, target="binary").value)


@pytest.mark.parametrize("kind,n", CASES)
def test_reliability_and_interval_equal_direct(kind, n):
    data = _binary(n, seed=n + 1, kind=kind)
    view = Presorted.from_data(data)
    for m in (1, 3, 15, 22, 500):
        for scheme in ("equal_width", "equal_mass"):
            a = view.reliability(scheme, m, alpha=0.05, interval="jeffreys")
            b = calviz.reliability(data, n_bins=m, scheme=scheme, alpha=0.05, interval="jeffreys")
            np.testing.assert_array_equal(a.edges, b.edges)
            np.testing.assert_array_equal(a.counts, b.counts)
            for name in ("mean_confidence", "observed_frequency", "low", "high"):
                _close(getattr(a, name), getattr(b, name))
            _close(a.ece_l1, b.ece_l1)
        if n >= 2:
            a = view.interval(m, 0.1)
            b = calviz.ece_interval(data, n_bins=m, alpha=0.1)
            for name in ("statistic", "se", "null_sd", "low", "high", "estimate"):
                _close(getattr(a, name), getattr(b, name))
            assert a.regime == b.regime


@pytest.mark.parametrize("target", ["top1", "classwise"])
def test_multiclass_views(target):
    data = _multiclass(2000, 4, seed=3)
    for c in (0, 3) if target == "classwise" else (0,):
        view = Presorted.from_data(data, target, class_index=c)
        for m in (5, 15, 33):
            for scheme in ("equal_width", "equal_mass"):
                a = view.binned_ece(m, 2, scheme)
                b = calviz.binned_ece(data, n_bins=m, p=2, scheme=scheme, target=target, class_index=c)
                _close(a.value, b.value)
                assert a.target == b.target
            r = view.reliability("equal_width", m)
            s = calviz.reliability(data, n_bins=m, target=target, class_index=c)
            np.testing.assert_array_equal(r.counts, s.counts)
            _close(r.observed_frequency, s.observed_frequency)
    # the top-1 view is read from the matrix without materialising it: same sorted arrays
    if target == "top1":
        conf, correct = data.top1()
        order = np.lexsort((correct, conf))
        view = Presorted.from_data(data, "top1")
        np.testing.assert_array_equal(view.z, conf[order])
        np.testing.assert_array_equal(view.y, correct[order])


@pytest.mark.parametrize("kind,n", [("ties", 3000), ("uniform", 5000), ("ones", 300), ("uniform", 2)])
def test_tcal_terms_every_dyadic_scale(kind, n):
    data = _binary(n, seed=7, kind=kind)
    view = Presorted.from_data(data)
    levels = 14
    scan = _scan_order(data.probs, data.labels.astype(np.float64), levels, False)
    direct = _kt.analytic_terms(scan.split, levels, scan.z, scan.y, _kt.SCALAR)
    np.testing.assert_array_equal(view.tcal_terms(levels), direct)  # the same scan: bit for bit
    for b in range(1, levels + 1):  # each scale also from the prefix sums alone
        if n >= 2:
            terms = view.bin_sums("equal_width", 2**b, compensated=True).terms()
            _close(terms, direct[:, b - 1])
            _close(direct[0, b - 1], calviz.debiased_ece(data, n_bins=2**b).value)


def test_block_sizes_agree():
    data = _binary(5000, seed=11)
    ref = Presorted.from_data(data, block=1).bin_sums("equal_mass", 17)
    for block in (2, 5, 64, 10**6):
        got = Presorted.from_data(data, block=block).bin_sums("equal_mass", 17)
        np.testing.assert_array_equal(got.count, ref.count)
        _close(got.resid_sum, ref.resid_sum)
        _close(got.null_cov_sq_trace, ref.null_cov_sq_trace)


def test_memory_and_errors():
    data = _binary(6400, seed=1)
    view = Presorted.from_data(data)
    assert view.nbytes / view.n == pytest.approx(9 + 144 / 64, rel=0.01)
    assert not view.z.flags.writeable
    with pytest.raises(InputError):
        view.binned_ece(0)
    with pytest.raises(InputError):
        view.runs("simplex", 5)
    with pytest.raises(InputError):
        Presorted.from_data(data, "full")
    with pytest.raises(InputError):
        Presorted.from_data(data, block=0)
    with pytest.raises(InputError):
        view.reliability("distinct", 5)


def _same_tcal(a, b):
    assert (a.reject, a.decision, a.method, a.target, a.n, a.n_classes, a.test) == (
        b.reject, b.decision, b.method, b.target, b.n, b.n_classes, b.test)
    _close(a.pvalue, b.pvalue)
    _close(a.statistics, b.statistics)
    _close(a.pvalues, b.pvalues)
    _close(a.critical_values, b.critical_values)
    assert tuple(a.n_bins) == tuple(b.n_bins)


@pytest.mark.parametrize("kind,n", [("ties", 3000), ("uniform", 2500), ("uniform", 600), ("ones", 400),
                                    ("uniform", 40)])
def test_analytic_tcal_equals_adaptive_tcal(kind, n):
    """Presorted.tcal(alpha) is adaptive_tcal(resampling="analytic"): the analytic scales, Cantelli's floor
    below 500 rows, the floor at the labels' probability; every α from the one cached scan."""
    data = _binary(n, seed=n + 1, kind=kind)
    view = Presorted.from_data(data)
    for alpha in (0.05, 0.2, 1e-6):
        _same_tcal(view.tcal(alpha), calviz.adaptive_tcal(data, alpha=alpha, resampling="analytic"))


def test_analytic_tcal_discrete_predictions_and_multiclass_targets():
    rng = np.random.default_rng(5)
    p = rng.integers(1, 5, size=4000) / 5.0  # four distinct values: the exact binomial test
    y = (rng.uniform(size=4000) < p).astype(int)
    data = calviz.as_calibration_data(y, p)
    _same_tcal(Presorted.from_data(data).tcal(0.05), calviz.adaptive_tcal(data, resampling="analytic"))
    data = _multiclass(3000, 4, seed=6)
    for target, c in (("top1", 0), ("classwise", 2)):
        view = Presorted.from_data(data, target, class_index=c)
        _same_tcal(view.tcal(0.1), calviz.adaptive_tcal(data, alpha=0.1, target=target, class_index=c,
                                                        resampling="analytic"))


def test_pickled_view_answers_the_same():
    import pickle

    data = _binary(3000, seed=9)
    view = Presorted.from_data(data)
    copy = pickle.loads(pickle.dumps(view))
    assert not copy.z.flags.writeable
    _close(copy.reliability("equal_mass", 12).observed_frequency,
           view.reliability("equal_mass", 12).observed_frequency)


def _ace_cases():
    rng = np.random.default_rng(11)
    probs = rng.dirichlet(np.ones(4) * 0.6, size=1500)
    probs[:500] = np.round(probs[:500], 1)  # ties, and values on equal-width edges
    probs[:500] /= probs[:500].sum(axis=1, keepdims=True)
    labels = rng.integers(0, 4, size=1500)
    p = rng.uniform(size=400)
    p[:200] = 0.5  # one heavy tie: fewer bins than asked
    yield "multiclass ties", calviz.as_calibration_data(labels, probs)
    yield "binary ties", calviz.as_calibration_data((rng.uniform(size=400) < p).astype(int), p)
    yield "n = 2", calviz.as_calibration_data(np.array([0, 1]), np.array([[0.3, 0.7], [0.6, 0.4]]))
    yield "all correct", calviz.as_calibration_data(probs.argmax(axis=1), probs)
    yield "all wrong", calviz.as_calibration_data((probs.argmax(axis=1) + 1) % 4, probs)


@pytest.mark.parametrize("case", list(_ace_cases()), ids=lambda case: case[0])
def test_classwise_ace_table_equals_ace_at_every_bin_count(case):
    _, data = case
    table = ClasswiseACE.from_data(data, max_bins=40)
    for m in range(1, 41):
        found, direct = table.ace(m), calviz.ace(data, n_bins=m)
        assert abs(found.value - direct.value) <= 1e-12, m
        fields = ("n", "n_bins", "n_bins_total", "n_nonempty", "scheme", "target", "n_classes")
        assert [getattr(found, f) for f in fields] == [getattr(direct, f) for f in fields], m
    assert table.ace(41) is None and table.nbytes == 3 * 8 * data.n_classes * 40
    with pytest.raises(InputError):
        ClasswiseACE.from_data(dataclasses.replace(data, weights=np.ones(data.n), _cache={}))



@pytest.mark.parametrize("case", list(_ace_cases()), ids=lambda case: case[0])
def test_the_bin_tables_of_every_class_equal_the_direct_diagram_and_interval(case):
    """Each class's BinTable (kept in the ACE table: the classwise diagram and interval of a class before its
    sorted view is built) equals its sorted view exactly and the direct estimators to 1e-12, in both
    schemes and at several α; above its bin counts it refuses (the caller then passes over the rows)."""
    _, data = case
    table = ClasswiseACE.from_data(data, max_bins=40)
    assert len(table.tables) == data.n_classes and table.tables_nbytes > 0
    for c in range(data.n_classes):
        bins, view = table.table(c), Presorted.from_data(data, "classwise", class_index=c)
        assert (bins.target, bins.class_index, bins.n, bins.max_bins) == ("classwise", c, data.n, 40)
        for m, alpha in ((1, 0.05), (2, 0.3), (3, 0.1), (7, 0.05), (13, 0.01), (40, 0.2)):
            for scheme in ("equal_width", "equal_mass"):
                found = bins.reliability(scheme, m, alpha=alpha)
                _same_fields(found, view.reliability(scheme, m, alpha=alpha), exact=True)
                _same_fields(found, calviz.reliability(data, n_bins=m, scheme=scheme, target="classwise",
                                                       class_index=c, alpha=alpha))
            found = bins.interval(m, alpha)
            _same_fields(found, view.interval(m, alpha), exact=True)
            direct = calviz.ece_interval(data, n_bins=m, alpha=alpha, target="classwise", class_index=c)
            assert abs(found.statistic - direct.statistic) <= 1e-12
            np.testing.assert_allclose(found.confidence_interval(), direct.confidence_interval(),
                                       rtol=1e-12, atol=1e-14)
        assert not bins.has(41) and bins.has(40)
        with pytest.raises(InputError):
            bins.reliability("equal_width", 41)
        with pytest.raises(InputError):
            bins.reliability("distinct", 5)


def _same_fields(a, b, *, exact: bool = False):
    """Two results of one type equal field by field: exactly, or floats to 1e-12."""
    assert type(a) is type(b)
    for field in dataclasses.fields(a):
        x, z = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray) and x.dtype.kind == "f" and not exact:
            np.testing.assert_allclose(x, z, rtol=1e-12, atol=1e-14, err_msg=field.name)
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, z, err_msg=field.name)
        elif isinstance(x, float) and not exact:
            np.testing.assert_allclose(x, z, rtol=1e-12, atol=1e-14, err_msg=field.name)
        else:
            assert x == z or (x != x and z != z), field.name


@pytest.mark.parametrize("n", [2, 3, 700])
def test_bootstrap_bins_equal_the_direct_bootstrap_at_every_bin_count(n):
    rng = np.random.default_rng(n)
    z = rng.uniform(size=n)
    z[: n // 2] = rng.integers(0, 21, size=n // 2) / 20  # ties, and values on the bins' edges
    y = (rng.uniform(size=n) < z).astype(np.int64)
    table = BootstrapBins(z, y, n_resamples=60, seed=5, max_bins=40)
    for m in range(1, 41):
        direct = calviz.ece_interval(y, z, n_bins=m, method="bootstrap", n_resamples=60, seed=5)
        np.testing.assert_allclose(table.replicates(m), direct._draws.statistics, rtol=1e-12, atol=1e-15)
    assert table.replicates(41) is None and table.nbytes == 8 * 40 * 60
