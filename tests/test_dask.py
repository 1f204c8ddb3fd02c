"""calviz.dask on a real distributed LocalCluster (2 worker processes): every distributed result equals the
in-memory result on the same data (1e-12 relative), for uneven partitions including empty ones, and bad
partitions raise the in-memory InputError naming the partition and the row."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

import calviz.dask as cdask  # noqa: E402
from calviz import _ece as ece  # noqa: E402
from calviz import _intervals as intervals  # noqa: E402
from calviz._data import InputError  # noqa: E402
from calviz.analysis import COMPUTE, AnalysisOptions  # noqa: E402

RTOL = 1e-12
#: uneven row partitions with empty ones (sum = 2000)
CHUNKS = (0, 1, 613, 0, 1100, 17, 269, 0)
N = sum(CHUNKS)


@pytest.fixture(scope="module")
def client(local_cluster_client):
    return local_cluster_client


def close(a, b, rtol=RTOL, scale=None):
    """|a - b| <= rtol * max(|b|, scale): relative agreement; ``scale`` guards values that cancel to ~0
    (a difference of sums of size `scale` cannot be known better than rtol * scale)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    ref = np.maximum(np.abs(b), 0.0 if scale is None else scale)
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):  # (inf − inf: equal infinities pass by a == b)
        ok = both_nan | (a == b) | (np.abs(a - b) <= rtol * ref)
        rel = np.abs(a - b)[~ok] / np.where(ref[~ok] > 0, ref[~ok], np.inf)
    assert ok.all(), (f"max abs diff {np.nanmax(np.abs(a - b))}, max rel diff of the failing entries "
                      f"{rel.max() if rel.size else 0:.3g}, reference {b[~ok][:5]}")


def binary_data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    p[:40] = np.arange(40) % 16 / 15.0  # exactly on the 15-bin edges, and 0 / 1
    p[40:80] = 0.5  # ties
    p[80:90] = 1.0
    y = (rng.random(n) < p**1.3).astype(np.int64)
    return y, p


def multiclass_data(n=N, K=3, seed=1):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, K)) * 2.0
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    probs[:20] = np.eye(K)[np.arange(20) % K]  # vertices of the simplex
    labels = np.array([rng.choice(K, p=row) for row in probs])
    return labels, probs


def as_dask(y, p, chunks=CHUNKS):
    P = da.from_array(p, chunks=(chunks,) + p.shape[1:])
    Y = da.from_array(y, chunks=(chunks,))
    return Y, P


def same_result(a, b, scale=None, scaled=None):
    """Field by field: floats (arrays and tuples of floats too) by :func:`close` — with ``scale`` for every
    one, or only for the fields named in ``scaled`` —, everything else equal."""
    assert type(a) is type(b)
    for f in dataclasses.fields(a):
        if not f.compare:  # (e.g. the resamples a result keeps for a re-decision: not part of its value)
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        floats = (isinstance(y, (float, np.floating)) or (isinstance(y, np.ndarray) and y.dtype.kind == "f")
                  or (isinstance(y, tuple) and y != () and all(isinstance(v, float) for v in y)))
        if floats:
            close(x, y, scale=scale if scaled is None or f.name in scaled else None)
        elif isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y, f.name


def test_import_is_top_level_dask():
    # ``import dask`` inside calviz/dask.py is an absolute import of the real package
    assert cdask.dask.__name__ == "dask" and hasattr(cdask.dask, "compute")


@pytest.mark.parametrize("p", [1, 2])
def test_binned_ece_binary(client, p):
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    same_result(cdask.binned_ece(Y, P, n_bins=15, p=p), ece.binned_ece(y, prob, n_bins=15, p=p))


@pytest.mark.parametrize("kwargs", [dict(), dict(target="classwise", class_index=2), dict(target="full"),
                                    dict(top_k=2), dict(target="top1", n_bins=7)])
def test_debiased_and_unbiased_multiclass(client, kwargs):
    y, prob = multiclass_data()
    Y, P = as_dask(y, prob)
    for name in ("debiased_ece", "unbiased_ece", "binned_ece"):
        got = getattr(cdask, name)(Y, P, **kwargs)
        want = getattr(ece, name)(y, prob, **kwargs)
        scale = 1e-3  # T^d is a difference of O(1e-3)-sized sums here
        same_result(got, want, scale=scale)


def test_all_dyadic_scales_at_once(client):
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    exps = range(1, 21)  # the in-memory reference allocates 2^b dense bins
    got = cdask.multiscale_debiased_ece(Y, P, exponents=exps)
    for b, res in zip(exps, got, strict=True):
        want = ece.debiased_ece(y, prob, n_bins=2**b)
        mean_sq = float(np.mean((y - prob) ** 2))  # size of the cancelling terms of T^d
        same_result(res, want, scale=mean_sq / len(y))


def test_all_scales_simplex(client):
    y, prob = multiclass_data()
    Y, P = as_dask(y, prob)
    got = cdask.multiscale_debiased_ece(Y, P, exponents=range(1, 5), target="full")
    for b, res in zip(range(1, 5), got, strict=True):
        same_result(res, ece.debiased_ece(y, prob, n_bins=2**b, target="full"), scale=1e-4)


@pytest.mark.parametrize("top_k", [1, 2])
def test_ece_interval(client, top_k):
    if top_k == 1:
        y, prob = binary_data()
    else:
        y, prob = multiclass_data()
    Y, P = as_dask(y, prob)
    for alpha in (0.1, 0.05):
        same_result(cdask.ece_interval(Y, P, n_bins=10, alpha=alpha, top_k=top_k),
                    intervals.ece_interval(y, prob, n_bins=10, alpha=alpha, top_k=top_k), scale=1e-4)


def test_reliability(client):
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    for interval in ("wilson", "jeffreys"):
        same_result(cdask.reliability(Y, P, n_bins=15, alpha=0.1, interval=interval),
                    ece.reliability(y, prob, n_bins=15, alpha=0.1, interval=interval))


def _write_parquet(directory, frame, sizes):
    directory.mkdir()
    start = 0
    for i, size in enumerate(sizes):
        frame.iloc[start:start + size].to_parquet(directory / f"part.{i:03d}.parquet", index=False)
        start += size
    return directory


def test_parquet_and_dataframe_inputs(client, tmp_path):
    y, prob = multiclass_data()
    frame = pd.DataFrame({"y_true": y, **{f"p_{k}": prob[:, k] for k in range(prob.shape[1])}})
    path = _write_parquet(tmp_path / "preds", frame, CHUNKS)
    want = intervals.ece_interval(y, prob, n_bins=8, top_k=2)
    same_result(cdask.ece_interval(str(path), n_bins=8, top_k=2), want, scale=1e-4)
    ddf = dd.from_pandas(frame, npartitions=5)
    same_result(cdask.ece_interval(ddf, n_bins=8, top_k=2), want, scale=1e-4)
    # explicit column names, confidence form
    y1, p1 = binary_data()
    frame1 = pd.DataFrame({"correct": y1, "confidence": p1})
    data = cdask.from_dataframe(dd.from_pandas(frame1, npartitions=3), y_true="correct", y_prob="confidence")
    same_result(cdask.binned_ece(data), ece.binned_ece(y1, p1))
    # the columns are found by the rule of calviz.io.read_predictions; named ones must exist
    found = cdask.from_dataframe(dd.from_pandas(frame1, npartitions=3))
    same_result(cdask.binned_ece(found), ece.binned_ece(y1, p1))
    with pytest.raises(InputError, match=r"missing probability column\(s\) \['conf'\]"):
        cdask.from_dataframe(ddf, y_prob="conf")
    listed = cdask.from_dataframe(ddf, y_prob=[f"p_{k}" for k in range(prob.shape[1])])
    assert listed.n_classes == prob.shape[1] and not listed.is_binary


def test_nan_in_a_partition_names_partition_and_row(client):
    y, prob = binary_data()
    prob = prob.copy()
    prob[614 + 100] = np.nan  # partition 4 (after 0, 1, 613, 0 rows), local row 100
    Y, P = as_dask(y, prob)
    with pytest.raises(InputError, match=r"non-finite.*row 714 \(partition 4, row 100 within it\)"):
        cdask.debiased_ece(Y, P)


def test_out_of_range_in_parquet_partition(client, tmp_path):
    y, prob = binary_data()
    prob = prob.copy()
    prob[1714 + 5] = 1.5  # partition 5 (sizes 0, 1, 613, 0, 1100), local row 5
    frame = pd.DataFrame({"y_true": y, "y_prob": prob})
    path = _write_parquet(tmp_path / "bad", frame, CHUNKS)
    # dask may fuse small Parquet files into one partition: the global row is what must be exact
    with pytest.raises(InputError, match=r"\[0, 1\].*row 1719 \(partition \d+, row \d+ within it\) has 1.5"):
        cdask.ece_interval(path)
    y2 = y.copy()
    y2[3] = 2  # label out of range in partition 2
    with pytest.raises(InputError, match=r"y_true must be \{0, 1\}; row 3 \(partition 2, row 2 within it\)"):
        cdask.reliability(*as_dask(y2, binary_data()[1]))


def test_refusals():
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    with pytest.raises(InputError, match="not available on Dask"):
        cdask.debiased_ece(Y, P, scheme="equal_mass")
    with pytest.raises(InputError, match="asymptotic"):
        cdask.ece_interval(Y, P, method="bootstrap")
    with pytest.raises(InputError, match="at least 2 samples"):
        cdask.binned_ece(*as_dask(y[:1], prob[:1], chunks=(0, 1, 0)))


def _tcal_module():
    import importlib

    return importlib.import_module("calviz._tcal")  # the attribute calviz.tcal is the function


@pytest.mark.parametrize("resampling", ["analytic", "threshold"])
def test_adaptive_tcal_analytic_equals_in_memory(client, resampling):
    tcal = _tcal_module()
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    got = cdask.adaptive_tcal(Y, P, resampling=resampling)
    want = tcal.adaptive_tcal(y, prob, resampling=resampling)
    assert got.n_bins == want.n_bins and got.reject == want.reject and got.reason == want.reason
    scale = float(np.mean((y - prob) ** 2)) / len(y)
    close(got.statistics, want.statistics, scale=scale)
    close(got.pvalues, want.pvalues, scale=1e-12)
    close(got.critical_values, want.critical_values)
    close(got.pvalue, want.pvalue, scale=1e-12)


#: uneven partitions with empty ones for the strongly miscalibrated data below (sum = 12000)
TAIL_CHUNKS = (0, 1, 4999, 0, 3000, 17, 0, 3983)
TAIL_N = sum(TAIL_CHUNKS)


def miscalibrated_data(kind, n=TAIL_N, seed=0, sharpen=2.5):
    """Strongly miscalibrated predictions: the analytic p-values span ~1e-3 down to far below 1e-50.
    Binary: y ~ Ber(z²); multiclass (K = 3): overconfident, the true logits times ``sharpen``."""
    rng = np.random.default_rng(seed)
    if kind == "binary":
        z = rng.random(n)
        return (rng.random(n) < z**2).astype(np.int64), z
    logits = rng.normal(size=(n, 3)) * 1.5
    true = np.exp(logits)
    true /= true.sum(axis=1, keepdims=True)
    labels = (rng.random(n)[:, None] > np.cumsum(true, axis=1)).sum(axis=1).clip(0, 2)
    probs = np.exp(sharpen * logits)
    return labels, probs / probs.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("target, max_bins", [("binary", None), ("binary", 64), ("top1", None), ("top1", 64),
                                              ("classwise", None), ("full", None)])
def test_adaptive_tcal_analytic_tiny_pvalues(client, target, max_bins):
    # The tail amplifies relative errors of the inputs (T^d, Var₀, κ₃, ...) by |d ln p / d ln x| ≈ 2|ln p|:
    # with plainly summed bin sums in different orders, p ≈ 1e-100 agreed only to ~1e-11 (each case here
    # failed that way before the sums were compensated).  max_bins=64 forces the global-sort scan
    # (1-D targets).
    tcal = _tcal_module()
    if target == "binary":
        y, prob = miscalibrated_data("binary")
    else:  # (full: milder, so that some scales still have moderate p-values)
        y, prob = miscalibrated_data("multiclass", seed=2, sharpen=2.0 if target == "full" else 2.5)
    kwargs = dict(target=target, class_index=1) if target == "classwise" else dict(target=target)
    want = tcal.adaptive_tcal(y, prob, resampling="analytic", **kwargs)
    extra = {} if max_bins is None else dict(max_bins=max_bins)
    got = cdask.adaptive_tcal(*as_dask(y, prob, chunks=TAIL_CHUNKS), resampling="analytic", **kwargs, **extra)
    assert got.n_bins == want.n_bins and got.reason == want.reason and got.reject == want.reject
    p = want.pvalues
    assert np.any((p > 1e-300) & (p <= 1e-50)), p  # far tail, not underflowed
    assert np.any((p >= 1e-4) & (p <= 0.02)), p  # and moderate p-values at other scales
    close(got.statistics, want.statistics)
    close(got.critical_values, want.critical_values)
    close(got.pvalues, want.pvalues, scale=1e-300)  # the guard only matters for underflow (p < 1e-300)
    close(got.pvalue, want.pvalue, scale=1e-300)


def test_compensated_sums_equal_the_in_memory_scan(client):
    # the inputs of the p-value formula (T^d, Var₀, Σ tr A, Σ tr A², κ₃ per scale): merged compensated
    # BinSums of uneven partitions vs the in-memory one-pass kernel
    tcal = _tcal_module()
    from calviz._kernels import tcal as kernels

    y, prob = miscalibrated_data("binary")
    levels = tcal.dyadic_scales(len(y), 2)[1]
    zs, ys = tcal._sort_binary(prob, y.astype(float))
    scan = tcal._scan_order(zs, ys, levels, False, presorted=True)
    want = kernels.analytic_terms(scan.split, levels, scan.z, scan.y, scan.kind)
    sums, _ = cdask.scale_sums(*as_dask(y, prob, chunks=TAIL_CHUNKS), exponents=range(1, levels + 1),
                               third_moments=True)
    got = np.array([s.terms(len(y)) for s in sums]).T
    close(got, want)
    # (the plain sums of the same BinSums still give the Satterthwaite moments)
    with pytest.warns(DeprecationWarning, match="third_cumulant is deprecated"):
        close([cdask.third_cumulant(s) for s in sums], want[4])
    close(np.array([tcal.null_moments_from_sums(s) for s in sums]).T, want[1:4], rtol=1e-10)


def test_adaptive_tcal_full_and_discrete(client):
    tcal = _tcal_module()
    y, prob = multiclass_data()
    got = cdask.adaptive_tcal(*as_dask(y, prob), resampling="analytic", target="full")
    want = tcal.adaptive_tcal(y, prob, resampling="analytic", target="full")
    assert got.n_bins == want.n_bins
    close(got.statistics, want.statistics, scale=1e-6)
    close(got.pvalues, want.pvalues, scale=1e-12)
    rng = np.random.default_rng(3)
    z = rng.choice([0.1, 0.4, 0.75], size=N)
    yd = (rng.random(N) < z).astype(np.int64)
    got = cdask.adaptive_tcal(*as_dask(yd, z))
    want = tcal.adaptive_tcal(yd, z, resampling="analytic")
    assert got.test == want.test == "binomial (discrete predictor)"
    close(got.pvalues, want.pvalues)
    np.testing.assert_array_equal(got.counts, want.counts)


@pytest.mark.parametrize("bandwidth", [1.0, 0.05])
def test_laplace_kce_exact(client, bandwidth):
    import importlib

    distance = importlib.import_module("calviz._distance")
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    squared = bandwidth < 1
    same_result(cdask.laplace_kce(Y, P, bandwidth=bandwidth, squared=squared),
                distance.laplace_kce(y, prob, bandwidth=bandwidth, squared=squared))
    if bandwidth == 1.0:
        ym, pm = multiclass_data()
        same_result(cdask.laplace_kce(*as_dask(ym, pm), target="classwise", class_index=1),
                    distance.laplace_kce(ym, pm, target="classwise", class_index=1))


def test_kce_scan_against_double_sum():
    # the cross-partition carry on hand-made sorted runs, including empty runs and ties across runs
    rng = np.random.default_rng(5)
    v = np.sort(np.r_[rng.random(40), [0.5] * 5])
    r = rng.normal(size=v.shape[0])
    from calviz._kernels.dask_scan import laplace_run_summary

    cuts = [0, 0, 7, 20, 20, 22, 45]
    inv_h = 1 / 0.3
    summaries = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        total, tail, head = laplace_run_summary(v[a:b], r[a:b], inv_h)
        summaries.append((b - a, v[a] if b > a else np.nan, v[b - 1] if b > a else np.nan, total, tail, head))
    n, total = cdask._combine_runs(summaries, inv_h)
    direct = float(r @ np.exp(-np.abs(v[:, None] - v[None, :]) * inv_h) @ r)
    assert n == v.shape[0]
    close(total, direct, rtol=1e-12)


def test_subsample_reads_each_partition_twice(monkeypatch):
    """The subsample of the distance measures reads every partition twice: once to count its rows and
    label-1 rows, once to take the drawn rows (the label count no longer takes a pass of its own); a
    dashboard source, whose rows were counted when it was opened, reads them once."""
    from calviz.dask import _data
    from calviz.dask._app import _source

    reads, validate = [], _data.validate
    monkeypatch.setattr(_data, "validate", lambda part, index, offset, form=False: reads.append(index) or
                        validate(part, index, offset, form))
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    with dask.config.set(scheduler="synchronous"):
        z, labels, n, positive, _, every_row = cdask.uniform_subsample(Y, P, size=300, seed=3)
    assert sorted(reads) == sorted(2 * list(range(Y.numblocks[0]))) and n == N and not every_row
    assert positive == y.mean() and z.shape == labels.shape == (300,)
    # the dashboard's source counted the rows when it was opened: its subsamples take one pass
    with dask.config.set(scheduler="synchronous"):
        frame = dd.from_pandas(pd.DataFrame({"y_true": y, "y_prob": prob}), npartitions=4)
        source = _source(cdask.from_dataframe(frame), None, None, 1000)  # (as open_source, on this process)
        reads.clear()
        rows = source.rows(300, 3)
    assert sorted(reads) == [0, 1, 2, 3] and rows.n == 300 and source.data.lengths is not None


def test_subsample_measures_report_their_sampling_error(client):
    import importlib

    distance = importlib.import_module("calviz._distance")
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    for measure in ("smce", "sintce", "lower_dce"):
        est = cdask.subsample_measure(measure, Y, P, size=1500, seed=7)
        full = getattr(distance, measure)(y, prob)
        assert est.sample_size == 1500 and est.n == N and 0 < est.error_bound < 1
        assert est.low <= full.value <= est.high, (measure, est, full)
        # 5 rows: the deviation bound is wider than [0, 1], where each measure lies (highs were 4.68)
        tiny = cdask.subsample_measure(measure, Y, P, size=5, seed=7)
        assert 0.0 <= tiny.low <= tiny.value <= tiny.high <= 1.0, (measure, tiny)
        # the same result type as in memory; every row (the exact value) when size >= n
        got = getattr(cdask, measure)(Y, P, size=1500, seed=7)
        assert type(got) is type(full) and got.n == 1500 and got.value == est.value  # reproducible
        same_result(getattr(cdask, measure)(Y, P, size=10 * N), full, scale=1e-12)


def test_analyze_parquet_entry_point(client, tmp_path):
    y, prob = binary_data()
    frame = pd.DataFrame({"y_true": y, "y_prob": prob})
    path = _write_parquet(tmp_path / "preds", frame, CHUNKS)
    result = cdask.analyze_parquet(path, scheduler=client, n_bins=10, alpha=0.1)
    assert result.summary.n == N
    same_result(result.interval, intervals.ece_interval(y, prob, n_bins=10, alpha=0.1), scale=1e-4)
    same_result(result.reliability, ece.reliability(y, prob, n_bins=10, alpha=0.1))
    assert result.tcal is not None and result.distance is not None
    assert "not available on Dask" in result.errors["smooth"]
    result.to_dict()  # JSON-able for `calviz check --json`


def borderline_data(n, seed, amp=0.03):
    """Slightly miscalibrated predictions (p-values near the level: the sequential rule resamples)."""
    rng = np.random.default_rng(seed)
    z = rng.random(n)
    z[: n // 50] = 0.5  # ties
    return (rng.random(n) < np.clip(z + amp * np.sin(8 * z), 0, 1)).astype(np.int64), z


@pytest.mark.parametrize("kwargs", [dict(n_resamples=500, seed=3), dict(seed=3), dict(seed=4, alpha=0.1),
                                    dict(seed=5, combine="max", n_resamples=300),
                                    dict(seed=6, resampling_risk=1e-2)])
def test_y_only_resampling_equals_in_memory(client, kwargs):
    # the same random streams (drawn by global sorted position) and the same decision rule — the default
    # sequential one included — on uneven partitions with empty ones: the same p-values
    import warnings

    tcal = _tcal_module()
    y, z = borderline_data(4000, 11)
    chunks = (0, 1500, 0, 900, 1, 1599)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a fixed count that cannot settle the decision warns)
        got = cdask.adaptive_tcal(*as_dask(y, z, chunks=chunks), **kwargs)
        want = tcal.adaptive_tcal(y, z, **kwargs)
    assert want.n_resamples > 0  # resampled, not settled by Cantelli's bound
    assert got.n_resamples == want.n_resamples and got.decision == want.decision and got.reason == want.reason
    np.testing.assert_array_equal(got.pvalues, want.pvalues)
    assert got.pvalue == want.pvalue and got.pvalue_interval == want.pvalue_interval
    scale = float(np.mean((y - z) ** 2)) / len(y)
    close(got.statistics, want.statistics, scale=scale)
    finite = np.isfinite(want.critical_values)
    np.testing.assert_array_equal(np.isfinite(got.critical_values), finite)
    close(got.critical_values[finite], want.critical_values[finite], scale=scale)


@pytest.mark.parametrize("target, class_index", [("top1", None), ("classwise", 2)])
def test_y_only_resampling_multiclass_targets(client, target, class_index):
    tcal = _tcal_module()
    y, prob = multiclass_data()
    kwargs = dict(target=target, class_index=class_index, seed=9)
    got = cdask.adaptive_tcal(*as_dask(y, prob), **kwargs)
    want = tcal.adaptive_tcal(y, prob, **kwargs)
    assert got.n_resamples == want.n_resamples and got.decision == want.decision
    np.testing.assert_array_equal(got.pvalues, want.pvalues)
    assert got.pvalue == want.pvalue


def test_y_only_partition_kernel_is_the_in_memory_scan():
    # the per-partition pieces of every resampled statistic add up to the in-memory kernel's rows, for
    # cuts anywhere (inside bins, on ties, empty runs)
    tcal = _tcal_module()
    from calviz._kernels import tcal as kernels
    from calviz._kernels.dask_scan import y_only_partition

    y, z = borderline_data(300, 2)
    zs, _ = tcal._sort_binary(z, y.astype(float))
    levels = 9
    split = kernels.dyadic_split_levels(zs, levels)
    base = np.uint64(12345)
    want = kernels.resampled_statistics_serial(split, levels, zs.reshape(-1, 1), kernels.SCALAR,
                                               kernels.Y_ONLY, base, 70, 5)
    for cuts in ([0, 300], [0, 0, 1, 150, 151, 151, 300], [0, 6, 7, 100, 299, 300]):
        total = np.zeros_like(want)
        edges = {lev: {} for lev in range(levels)}
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if b == a:
                continue
            part = zs[a:b]
            interior, f_s, f_q, l_s, l_q, f_n, l_n = y_only_partition(
                kernels.dyadic_split_levels(part, levels), levels, part, base, 5, 70, a)
            total += interior
            keys = np.minimum((part[[0, -1]] * 2.0**levels).astype(np.int64), 2**levels - 1)
            for lev in range(levels):
                for key, cnt, s, q in ((keys[0], f_n, f_s, f_q), (keys[1], l_n, l_s, l_q)):
                    if cnt[lev]:
                        k = int(key) >> (levels - 1 - lev)
                        old = edges[lev].get(k, (0, 0.0, 0.0))
                        edges[lev][k] = (old[0] + cnt[lev], old[1] + s[:, lev], old[2] + q[:, lev])
        for lev in range(levels):
            for cnt, s, q in edges[lev].values():
                if cnt >= 2:
                    total[:, lev] += (s * s - q) / cnt
        close(total / len(zs), want, scale=1e-3)


def independent_labels(n, seed, target):
    """Labels independent of the predictions — clearly miscalibrated: at small n the sequential y-only
    rule often rejects without resampling, by the Chernoff bound of
    :func:`calviz._tcal_decision._tail_bound_reject`."""
    rng = np.random.default_rng(seed)
    if target == "binary":
        return rng.integers(0, 2, n), rng.uniform(size=n)
    prob = rng.dirichlet(np.full(3, 0.3), size=n)
    return rng.integers(0, 3, n), prob


# (target, class_index, n, s, settled by the Chernoff bound in memory); s seeds the data and the test
@pytest.mark.parametrize("target, class_index, n, s, chernoff", [
    ("binary", None, 50, 0, True), ("binary", None, 50, 1, True), ("binary", None, 50, 3, True),
    ("binary", None, 80, 5, True), ("top1", None, 30, 1, True), ("top1", None, 30, 3, True),
    ("classwise", 1, 80, 0, True), ("binary", None, 50, 2, False), ("top1", None, 30, 4, False)])
def test_y_only_tail_bound_equals_in_memory(client, target, class_index, n, s, chernoff):
    # the in-memory sequential rule settles clear rejections by a Chernoff bound without resampling; the
    # Dask sample gives the same bound from its sorted partitions (bins cut by partition boundaries merged
    # by key), so the result is the in-memory one field by field — and where the bound does not settle,
    # both resample the same streams.  Uneven partitions with an empty one and one of a single row.
    tcal = _tcal_module()
    y, prob = independent_labels(n, s, target)
    kwargs = dict(resampling="y_only", seed=s, target=target, class_index=class_index)
    want = tcal.adaptive_tcal(y, prob, **kwargs)
    assert ("Chernoff" in want.reason) == chernoff and (want.n_resamples == 0) == chernoff
    got = cdask.adaptive_tcal(*as_dask(y, prob, chunks=(0, n // 7, 1, 0, n // 2, n - n // 7 - 1 - n // 2)),
                              **kwargs)
    assert got.n_resamples == want.n_resamples and got.decision == want.decision
    close(got.pvalue, want.pvalue)
    same_result(got, want, scale=1e-12, scaled=("statistics", "critical_values"))


def test_y_only_log_mgf_bounds_on_partitions_equal_in_memory(client):
    # the Chernoff certificate itself at every scale, for partitions that cut bins anywhere (a bin over
    # several partitions at the coarse scales, single rows, empty partitions)
    tcal = _tcal_module()
    from calviz._tcal_decision import CHERNOFF_THETAS
    from calviz.dask._data import as_dask_data
    from calviz.dask._tcal import DaskSample
    from calviz.targets import resolve

    y, z = borderline_data(300, 2)
    memory = tcal._MemorySample(z, y.astype(float), 2, "binary")
    levels = tcal.dyadic_scales(len(z), 2)[1]
    for chunks in ((300,), (0, 1, 150, 0, 1, 148), (6, 1, 93, 199, 1)):
        data = as_dask_data(*as_dask(y, z, chunks=chunks))
        sample = DaskSample(data, resolve(data, "binary", 1, 0), client=client, split_every=2, max_bins=2**21,
                            sort_fine_scales=True, discrete=None)
        for level in range(1, levels + 1):
            close(sample.y_only_log_mgf_bounds(levels, level, CHERNOFF_THETAS),
                  memory.y_only_log_mgf_bounds(levels, level, CHERNOFF_THETAS))


def test_adaptive_tcal_sorted_scan_all_scales(client):
    # max_bins too small for the merged bin sums: every scale by the global sort + scan, still exact
    tcal = _tcal_module()
    y, prob = binary_data()
    Y, P = as_dask(y, prob)
    want = tcal.adaptive_tcal(y, prob, resampling="analytic")
    got = cdask.adaptive_tcal(Y, P, resampling="analytic", max_bins=64)
    assert got.n_bins == want.n_bins and got.reason == want.reason
    close(got.statistics, want.statistics, scale=float(np.mean((y - prob) ** 2)) / len(y))
    close(got.pvalues, want.pvalues, scale=1e-12)
    close(got.critical_values, want.critical_values)


def test_analyze_parquet_multiclass_prefix_and_resampled(client, tmp_path):
    y, prob = multiclass_data()
    frame = pd.DataFrame({"label": y, **{f"prob{k}": prob[:, k] for k in range(prob.shape[1])}})
    path = _write_parquet(tmp_path / "mc", frame, CHUNKS)
    result = cdask.analyze_parquet(path, scheduler=client, y_true="label", prob_prefix="prob", target="top1",
                                   n_bins=10, resampling="y_only", n_resamples=300, seed=1)
    assert result.summary.n_classes == 3 and result.summary.target == "top1"
    same_result(result.interval, intervals.ece_interval(y, prob, n_bins=10, alpha=0.05), scale=1e-4)
    assert result.tcal_resampled is not None and result.tcal_resampled.method == "y_only"


@pytest.mark.parametrize("target, resampling", [("full", "y_only"), ("topk", "y_only"),
                                                ("top1", "consistency")])
def test_analyze_parquet_tcal_that_dask_cannot_resample_runs_on_the_gathered_rows(client, tmp_path, target,
                                                                                   resampling):
    """A resampled T-Cal Dask cannot draw (y-only resampling of the full vector, consistency resampling) is
    computed in memory on every row gathered from the cluster: the in-memory result, not an error."""
    from calviz import as_calibration_data
    from calviz.analysis import AnalysisOptions, compute_tcal

    y, prob = multiclass_data()
    frame = pd.DataFrame({"label": y, **{f"prob{k}": prob[:, k] for k in range(prob.shape[1])}})
    path = _write_parquet(tmp_path / "mc", frame, CHUNKS)
    options = dict(target=target, top_k=2, n_bins=10, resampling=resampling, n_resamples=200, seed=1)
    result = cdask.analyze_parquet(path, scheduler=client, y_true="label", prob_prefix="prob", **options)
    want = compute_tcal(as_calibration_data(y, prob), AnalysisOptions(**options))
    assert "tcal_resampled" not in result.errors, result.errors
    same_result(result.tcal_resampled, want)
    assert want.method == resampling and want.n == N


@pytest.mark.parametrize("K, target, k", [(4, "topk", 3), (3, "topk", 9), (4, "full", 2), (12, "full", 2),
                                          (2, "full", 2)])
def test_multi_reliability_equals_in_memory(client, K, target, k):
    """Per-rank / per-class reliability (one pass on Dask) equals calviz.analysis.compute_reliability,
    including the panel choice for K > 10 classes, k > K and binary data."""
    from calviz._data import as_calibration_data
    from calviz.analysis import AnalysisOptions, compute_reliability

    y, prob = binary_data() if K == 2 else multiclass_data(K=K)
    got = cdask.multi_reliability(*as_dask(y, prob), target=target, top_k=k, n_bins=15, alpha=0.05)
    want = compute_reliability(as_calibration_data(y, prob),
                               AnalysisOptions(target=target, top_k=k, n_bins=15, alpha=0.05))
    want_panels = (want,) if K == 2 else want.panels  # binary: the class-1 panel is the binary diagram
    if K > 2:
        assert got.labels == want.labels and got.n_omitted == want.n_omitted
        np.testing.assert_array_equal(got.index, want.index)
        np.testing.assert_array_equal(got.positives, want.positives)
    assert got.n == N and len(got.panels) == len(want_panels)
    for a, b in zip(got.panels, want_panels, strict=True):
        np.testing.assert_array_equal(a.counts, b.counts)
        for name in ("mean_confidence", "observed_frequency", "low", "high"):
            close(getattr(a, name), getattr(b, name))


TWINS = ["binned_ece", "debiased_ece", "unbiased_ece", "mce", "reliability", "ece_interval", "adaptive_tcal",
         "laplace_kce", "smce", "sintce", "lower_dce"]


@pytest.mark.parametrize("name", TWINS)
def test_twin_docstrings_are_numpydoc_and_their_examples_run(name):
    """Each driver's documentation: the in-memory sections (Parameters, Returns, References by authors and
    year) plus the distributed keywords, and an example comparing both that runs."""
    import doctest

    function = getattr(cdask, name)
    doc = function.__doc__
    for section in ("Parameters", "Other Parameters", "Returns", "Examples"):
        assert f"\n    {section}\n    {'-' * len(section)}\n" in doc, (name, section)
    assert "split_every : int" in doc and "seed 00" not in doc.lower()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = doctest.DocTestFinder().find(function, name, globs={})
    assert tests and tests[0].examples
    for test in tests:  # (on the module's cluster when it is the default client, else dask's threads)
        runner.run(test)
    assert runner.failures == 0


def test_public_functions_are_documented():
    for name in cdask.__all__:
        doc = getattr(cdask, name).__doc__ or ""
        assert len(doc) > 80 and "seed 00" not in doc.lower(), name
        if name in ("open_source", "analyze_parquet", "multi_reliability", "scale_sums", "subsample_measure",
                    "partition_sums", "uniform_subsample"):
            assert "\n    Returns\n    -------\n" in doc, name


@pytest.mark.parametrize("name", ["binned_ece", "smce", "adaptive_tcal", "partition_sums",
                                  "uniform_subsample"])
def test_client_must_be_a_client(name):
    """A client that is not one is refused before any work, with the uniform message (smce and its kin
    raised AttributeError from inside the subsample's gather)."""
    import dask.array as da

    rng = np.random.default_rng(0)
    p = rng.uniform(size=200)
    Y, P = da.from_array((rng.uniform(size=200) < p).astype(int), chunks=50), da.from_array(p, chunks=50)
    extra = {"size": 100} if name == "uniform_subsample" else {}
    with pytest.raises(InputError, match=rf"^The 'client' parameter of {name} must be None or a distributed"):
        getattr(cdask, name)(Y, P, client="tcp://not-a-client", **extra)


@pytest.mark.parametrize("name", ["smce", "sintce", "lower_dce"])
def test_subsampled_measures_treat_class_index_as_in_memory(name):
    """class_index is ignored unless the target is classwise, and then refused naming the function called
    (it was refused naming subsample_measure, even where the in-memory function ignores it)."""
    import dask.array as da

    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(3), size=240)
    labels = rng.integers(0, 3, size=240)
    L, P = da.from_array(labels, chunks=80), da.from_array(probs, chunks=(80, 3))
    import calviz

    twin, in_memory = getattr(cdask, name), getattr(calviz, name)
    assert np.isclose(twin(L, P, class_index=-1).value, in_memory(labels, probs, class_index=-1).value)
    refused = rf"^The 'class_index' parameter of {name} must be an int in \[0, 2\]"
    with pytest.raises(InputError, match=refused):
        twin(L, P, target="classwise", class_index=3)
    for target in ("full", "topk"):  # not scalar: refused as in memory, naming the function called
        with pytest.raises(InputError, match=rf"^The 'target' parameter of {name} must be a str among"):
            in_memory(labels, probs, target=target)
        with pytest.raises(InputError, match=rf"^The 'target' parameter of {name} must be a str among"):
            twin(L, P, target=target)


@pytest.mark.parametrize("name", ["uniform_subsample", "subsample_measure"])
def test_subsample_drivers_check_the_target_naming_themselves(name, monkeypatch):
    """The target and class_index of the subsample drivers are refused naming the function called (they were
    refused naming smce or the measure), before any partition is read and without running the measure on
    placeholder rows (for dCE_lower an LP)."""
    import dask.array as da

    from calviz import _distance

    rng = np.random.default_rng(2)
    probs = rng.dirichlet(np.ones(3), size=90)
    L, P = da.from_array(rng.integers(0, 3, size=90), chunks=30), da.from_array(probs, chunks=(30, 3))
    call = functools.partial(getattr(cdask, name), *(("lower_dce",) if name == "subsample_measure" else ()),
                             L, P, size=40, seed=0)
    for options, refused in [({"target": "topk"}, "target"), ({"target": "full"}, "target"),
                             ({"target": "classwise", "class_index": 3}, "class_index")]:
        with pytest.raises(InputError, match=rf"^The '{refused}' parameter of {name} must be"):
            call(**options)
    measured, original = [], _distance._sample
    monkeypatch.setattr(_distance, "_sample", lambda *a, **k: measured.append(a[0].n) or original(*a, **k))
    call(target="classwise", class_index=2)
    assert measured == ([40] if name == "subsample_measure" else [])  # the subsample's rows only


# -- inputs the drivers refused badly, and targets they mishandled ------------------------------------
def test_a_later_file_without_a_column_is_one_input_error(client, tmp_path):
    """The columns are picked from the first file's schema; a later file that lacks one failed on the
    worker with pandas' KeyError."""
    rng = np.random.default_rng(4)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    pd.DataFrame({"y_true": y[:150], "y_prob": p[:150]}).to_parquet(tmp_path / "part.0.parquet")
    pd.DataFrame({"y_true": y[150:], "score": p[150:]}).to_parquet(tmp_path / "part.1.parquet")
    for call in (lambda: cdask.debiased_ece(str(tmp_path)), lambda: cdask.debiased_ece(str(tmp_path),
                                                                                       client=client)):
        with pytest.raises(InputError, match=r"a file lacks a needed column .*'y_prob'.*every file needs "
                                             r"the columns 'y_true', 'y_prob'"):
            call()


@pytest.mark.parametrize("dtype", ["boolean", "bool[pyarrow]"])
def test_a_missing_value_in_a_boolean_label_column_names_its_row(dtype, tmp_path):
    rng = np.random.default_rng(4)
    p = rng.uniform(size=400)
    labels = pd.array(rng.uniform(size=400) < p, dtype=dtype)
    labels[300] = None
    frame = pd.DataFrame({"y_true": labels, "y_prob": p})
    with pytest.raises(InputError, match=r"'y_true' .*row 300 \(partition 2"):
        cdask.debiased_ece(dd.from_pandas(frame, npartitions=3))
    labels[300] = True  # without the missing value: the booleans are labels, as before
    frame = pd.DataFrame({"y_true": labels, "y_prob": p})
    expected = ece.debiased_ece(np.asarray(labels, dtype=int), p).value
    close(cdask.debiased_ece(dd.from_pandas(frame, npartitions=3)).value, expected)


def test_scale_drivers_refuse_topk_and_name_themselves():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), 300)
    y = rng.integers(0, 3, 300)
    Y, P_ = da.from_array(y, chunks=100), da.from_array(P, chunks=(100, 3))
    for driver in (cdask.multiscale_debiased_ece, cdask.scale_sums):
        with pytest.raises(InputError, match=rf"The 'target' parameter of {driver.__name__} must be a str "
                                             r"among \{'auto', 'binary', 'top1', 'classwise', 'full'\}; "
                                             r"got 'topk'"):
            driver(Y, P_, exponents=[2], target="topk")
    for driver, options in ((cdask.multiscale_debiased_ece, {"exponents": [2]}),
                            (cdask.scale_sums, {"exponents": [2]}), (cdask.partition_sums, {})):
        with pytest.raises(InputError, match=rf"'class_index' parameter of {driver.__name__} must be an int"):
            driver(Y, P_, target="classwise", class_index=3, **options)


def test_multi_reliability_panels_are_those_of_the_analysis():
    """Panels record their two classes, and a binary model's top-k is its full vector (one class-1 panel),
    as calviz.analysis.compute_multi_reliability gives."""
    from calviz import as_calibration_data
    from calviz.analysis import AnalysisOptions, compute_multi_reliability

    rng = np.random.default_rng(1)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    for target in ("topk", "full"):
        on_dask = cdask.multi_reliability(da.from_array(y, chunks=100), da.from_array(p, chunks=100),
                                          target=target)
        in_memory = compute_multi_reliability(as_calibration_data(y, p), AnalysisOptions(target=target))
        assert (on_dask.kind, on_dask.labels) == (in_memory.kind, in_memory.labels) == ("class", ("class 1",))
        assert [panel.n_classes for panel in on_dask.panels] == [p.n_classes for p in in_memory.panels]
        assert on_dask.positives.tolist() == in_memory.positives.tolist()


def test_column_names_with_arrays_are_refused():
    with pytest.raises(InputError, match="name the columns of a DataFrame or Parquet data; got ndarray"):
        cdask.binned_ece(np.array([0, 1, 1]), np.array([0.2, 0.6, 0.9]), y_true_column="label")


def test_full_target_interval_equals_in_memory():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=3000)
    y = (P.cumsum(axis=1) < rng.uniform(size=(3000, 1))).sum(axis=1)
    whole = intervals.ece_interval(y, P, target="full", n_bins=4)
    on_dask = cdask.ece_interval(da.from_array(y, chunks=700), da.from_array(P, chunks=(700, 3)),
                                 target="full", n_bins=4)
    assert on_dask.target == "full"
    for key, value in whole.to_dict().items():
        if isinstance(value, float):
            close(on_dask.to_dict()[key], value)
        else:
            assert on_dask.to_dict()[key] == value, key


def test_series_of_unknown_lengths_paired_by_position_must_match():
    """Series of unknown partition lengths are paired partition by partition: a pair of unequal lengths is
    refused naming the partition and the remedy, not with a row count that reads like the whole data's."""
    import dask.dataframe as dd

    y = dd.from_pandas(pd.Series(np.r_[np.zeros(5, int), np.ones(5, int)]), npartitions=2)
    p = dd.from_pandas(pd.Series(np.linspace(0.1, 0.9, 11)), npartitions=2)
    with pytest.raises(InputError, match=r"^partition 0 has 5 rows of y_true but 6 of y_prob; .*paired by "
                                         r"position.*lengths=True\)\)$"):
        cdask.binned_ece(y, p)


# -- the isotonic views: the rows gathered into one process (the fit sorts the whole sample) -----------------
@pytest.fixture(scope="module")
def corp_pairs():
    rng = np.random.default_rng(7)
    n = N
    p = np.round(rng.uniform(size=n), 2)  # ties
    y = (rng.uniform(size=n) < p ** 1.4).astype(int)
    probs = rng.dirichlet(np.ones(3), size=n)
    labels = (probs.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, 2)
    return {"binary": (y, p), "multiclass": (labels, probs)}


@pytest.mark.parametrize("kind, options", [
    ("binary", AnalysisOptions(scheme="corp", n_resamples=40, seed=2)),
    ("multiclass", AnalysisOptions(scheme="corp", target="classwise", class_index=1, n_resamples=40)),
    ("multiclass", AnalysisOptions(scheme="corp", target="topk", top_k=2, n_resamples=40, alpha=0.1)),
])
def test_decomposition_and_corp_on_dask_equal_in_memory(client, corp_pairs, kind, options):
    """The score decomposition and the CORP diagram on the cluster: every row gathered, equal to in memory
    bit for bit (no subsample, so no sampling error to state)."""
    import calviz

    y, p = corp_pairs[kind]
    chunks = (CHUNKS,) if p.ndim == 1 else (CHUNKS, (p.shape[1],))
    data = cdask.from_dask(da.from_array(y, chunks=(CHUNKS,)), da.from_array(p, chunks=chunks))
    memory = calviz.as_calibration_data(y, p)
    for view in ("decomposition", "corp"):
        on_dask, note = cdask.compute_view(view, data, options, client=client)
        in_memory = COMPUTE[view](memory, options)
        assert note is None  # every row: no subsample, nothing to state
        fields = (("mean_score", "mcb", "dsc", "unc") if view == "decomposition"
                  else ("x", "recalibrated", "band_x", "consistency_low", "consistency_high", "mcb"))
        for field in fields:
            np.testing.assert_array_equal(getattr(on_dask, field), getattr(in_memory, field), err_msg=field)
        assert on_dask.n == in_memory.n == N
