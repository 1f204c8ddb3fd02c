"""Calibration over time (calviz.calibration_over_time): the time column, windows, and every per-window
statistic against the public estimator run on the window's rows; expanding and since-reference windows;
appending rows; Holm's correction against a direct implementation."""

from __future__ import annotations

import datetime as dt
import itertools

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz import InputError
from calviz._windows import as_time, holm, parse_window


def _log(n=3000, days=5, seed=0, drift_day=None):
    rng = np.random.default_rng(seed)
    seconds = np.sort(rng.integers(0, days * 86400, n))
    time = np.datetime64("2026-02-01T00:00:00") + seconds.astype("timedelta64[s]")
    p = rng.uniform(size=n)
    truth = p if drift_day is None else np.where(seconds >= drift_day * 86400, p**2, p)
    y = (rng.uniform(size=n) < truth).astype(np.int64)
    return y, p, time


def _rows_of(time, start, end):
    return (time >= start) & (time < end)


def test_each_window_equals_the_estimators_on_its_rows():
    y, p, time = _log(drift_day=3)
    perm = np.random.default_rng(1).permutation(y.size)  # unsorted input: sorted once inside
    result = calviz.calibration_over_time(y[perm], p[perm], time=time[perm], window="1D", n_bins=10)
    assert result.n_windows == 5 and result.n.sum() == y.size
    for i in range(result.n_windows):
        rows = _rows_of(time, result.start[i], result.end[i])
        assert rows.sum() == result.n[i]
        ci = calviz.ece_interval(y[rows], p[rows], n_bins=10, alpha=0.1)
        assert result.ece[i] == pytest.approx(ci.estimate, abs=1e-12)
        assert result.ece_low[i] == pytest.approx(ci.low, abs=1e-12)
        assert result.ece_high[i] == pytest.approx(ci.high, abs=1e-12)
        tc = calviz.adaptive_tcal(y[rows], p[rows], resampling="analytic")
        assert result.tcal_pvalue[i] == pytest.approx(tc.pvalue, rel=1e-9)
        assert result.mean_prediction[i] == pytest.approx(p[rows].mean(), abs=1e-12)
        assert result.observed_rate[i] == pytest.approx(y[rows].mean(), abs=1e-12)
        v = y[rows] - p[rows]
        half = 1.6448536269514722 * v.std(ddof=1) / np.sqrt(v.size)
        assert result.gap[i] == pytest.approx(v.mean(), abs=1e-12)
        assert result.gap_high[i] - result.gap[i] == pytest.approx(half, rel=1e-9)
        assert result.observed_low[i] <= result.observed_rate[i] <= result.observed_high[i]
    assert result.start[0] == np.datetime64("2026-02-01") and result.end[0] == np.datetime64("2026-02-02")
    assert result.reject.tolist() == [False, False, False, True, True]


def test_holm_equals_a_direct_implementation():
    rng = np.random.default_rng(2)
    for _ in range(20):
        p = rng.uniform(size=7) ** 3
        p[rng.uniform(size=7) < 0.2] = np.nan
        ok = [i for i in range(7) if np.isfinite(p[i])]
        m = len(ok)
        ranked = sorted(ok, key=lambda i: p[i])
        expected = np.full(7, np.nan)
        running = 0.0
        for j, i in enumerate(ranked):
            running = max(running, min(1.0, (m - j) * p[i]))
            expected[i] = running
        np.testing.assert_allclose(holm(p), expected)


def test_expanding_and_since_reference_windows_merge_the_fixed_ones():
    y, p, time = _log(seed=3)
    fixed = calviz.calibration_over_time(y, p, time=time, window="1D", tcal=False)
    expanding = calviz.calibration_over_time(y, p, time=time, window="1D", mode="expanding")
    since = calviz.calibration_over_time(y, p, time=time, window="1D", mode="since_reference", reference=1)
    assert expanding.n.tolist() == np.cumsum(fixed.n).tolist()
    assert since.n.tolist() == np.cumsum(fixed.n[2:]).tolist()
    for i in range(expanding.n_windows):
        rows = time < expanding.end[i]
        assert expanding.ece[i] == pytest.approx(calviz.ece_interval(y[rows], p[rows]).estimate, abs=1e-12)
        assert expanding.tcal_pvalue[i] == pytest.approx(
            calviz.adaptive_tcal(y[rows], p[rows], resampling="analytic").pvalue, rel=1e-9)
    rows = (time >= since.start[-1]) & (time < since.end[-1])
    assert rows.sum() == since.n[-1] and since.start[-1] == fixed.start[2]
    assert since.ece[-1] == pytest.approx(calviz.ece_interval(y[rows], p[rows]).estimate, abs=1e-12)
    assert np.isnan(fixed.tcal_pvalue).all() and not fixed.reject.any()
    ref = since.reference_reliability()
    first = (time < fixed.end[1]) & (time >= fixed.start[1])
    assert ref.counts.sum() == first.sum()


def test_append_merges_into_the_open_window_and_equals_the_whole_log():
    y, p, time = _log(seed=4, drift_day=2)
    whole = calviz.calibration_over_time(y, p, time=time, window="1D")
    for cut in (1000, 1700, 2999):
        part = calviz.calibration_over_time(y[:cut], p[:cut], time=time[:cut], window="1D")
        grown = part.append(y[cut:], p[cut:], time=time[cut:])
        for name in ("n", "ece", "ece_low", "ece_high", "tcal_pvalue", "tcal_pvalue_adjusted", "gap",
                     "mean_prediction_low", "observed_high"):
            np.testing.assert_allclose(getattr(grown, name), getattr(whole, name), rtol=1e-9, atol=1e-12,
                                       err_msg=name)
        assert grown.start.tolist() == whole.start.tolist()
    expanding = calviz.calibration_over_time(y[:1500], p[:1500], time=time[:1500], mode="expanding")
    grown = expanding.append(y[1500:], p[1500:], time=time[1500:])
    np.testing.assert_allclose(grown.ece, calviz.calibration_over_time(y, p, time=time, mode="expanding").ece,
                               rtol=1e-9)
    with pytest.raises(InputError, match="append-only"):
        whole.append(y[:5], p[:5], time=time[:5])


def test_row_windows_batch_ids_and_numbers():
    y, p, _ = _log(n=1000, seed=5)
    rows = calviz.calibration_over_time(y, p, time=np.zeros(1000), window="300 rows")
    assert rows.n.tolist() == [300, 300, 300, 100]
    ids = np.array([f"b{i // 250:02d}" for i in range(1000)])[::-1]  # unsorted string batch ids
    by_id = calviz.calibration_over_time(y, p, time=ids, window=None)
    assert by_id.start.tolist() == ["b00", "b01", "b02", "b03"] and by_id.n.tolist() == [250] * 4
    numbers = calviz.calibration_over_time(y, p, time=np.arange(1000) * 0.01, window=2.5)
    assert numbers.n.tolist() == [250] * 4 and numbers.start.tolist() == [0.0, 2.5, 5.0, 7.5]
    frame = numbers.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 4 and "tcal_pvalue_adjusted" in frame
    assert numbers.reliability(0).counts.sum() == 250


def test_top1_target():
    rng = np.random.default_rng(6)
    probs = rng.dirichlet(np.ones(4), size=800)
    labels = np.array([rng.choice(4, p=row) for row in probs])
    result = calviz.calibration_over_time(labels, probs, time=np.arange(800) // 200, window=None)
    assert result.target == "top1" and result.n_classes == 4
    conf, correct = probs.max(axis=1), (probs.argmax(axis=1) == labels).astype(int)
    assert result.ece[1] == pytest.approx(calviz.ece_interval(correct[200:400], conf[200:400]).estimate)


def test_time_column_validation():
    n = 4
    assert as_time(np.array([3, 1, 1, 2]), n).kind == "number"
    aware = pd.Series(pd.date_range("2026-01-01", periods=n, freq="h", tz="Europe/Zurich"))
    converted = as_time(aware, n)
    assert converted.kind == "datetime" and converted.show(converted.values[:1])[0] == np.datetime64(
        "2025-12-31T23:00")
    assert as_time([dt.datetime(2026, 1, 1)] * n, n).kind == "datetime"
    for bad, match in [(np.array([1.0, np.nan, 2, 3]), "row 1"),
                       (np.array(["2026-01-01", "NaT", "2026-01-01", "2026-01-01"], dtype="datetime64[D]"),
                        "NaT"), (np.array([1, 2, 3]), "3 rows"), (np.array([True] * 4), "booleans"),
                       (np.array([1.0, np.inf, 2, 3]), "not finite"), (None, "required"),
                       ([1, "a", 2.0, None], "mixed")]:
        with pytest.raises(InputError, match=match):
            as_time(bad, n)


def test_window_validation():
    assert parse_window("6h", "datetime").size == 6 * 3600 * 10**9
    assert parse_window(np.timedelta64(30, "m"), "datetime").size == 1800 * 10**9
    assert parse_window("10000 rows", "number").size == 10000
    for window, kind, match in [("1M", "datetime", "months"), ("1D", "number", "duration"),
                                (0, "number", "window"), (-1.0, "number", "window"),
                                ("soon", "datetime", "window"), (5, "datetime", "duration"),
                                ("0 rows", "number", "window")]:
        with pytest.raises(InputError, match=match):
            parse_window(window, kind)
    y, p, time = _log(n=100, seed=7)
    for kwargs, match in [({"mode": "sliding"}, "mode"), ({"reference": 9}, "reference"),
                          ({"alpha": 0}, "alpha"), ({"level": 1.0}, "level")]:
        with pytest.raises(InputError, match=match):
            calviz.calibration_over_time(y, p, time=time, **kwargs)


def test_tiny_windows_give_nan_not_errors():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.2, 0.7, 0.9, 0.4, 0.5])
    result = calviz.calibration_over_time(y, p, time=[0, 1, 1, 2, 2], window=None)
    assert result.n.tolist() == [1, 2, 2]
    assert np.isnan(result.tcal_pvalue[0]) and np.isnan(result.gap_low[0])
    assert all(np.isfinite(result.ece)) and list(itertools.chain(result.reject)) == [False] * 3


def test_all_windows_tcal_in_one_pass_equals_the_per_window_test():
    # windows of every kind the one-pass kernel meets: empty, 1 and 2 rows, below and above the asymptotic
    # minimum, ties, a discrete predictor (binomial test), predictions at 0 and 1, all-correct and all-wrong
    # labels, labels impossible under calibration; overlapping (expanding) ranges too
    from calviz._windows import tcal_analytic_pvalue, window_tcal_pvalues

    rng = np.random.default_rng(11)
    parts = []
    for kind, m in [("u", 0), ("u", 1), ("u", 2), ("u", 3), ("ties", 40), ("discrete", 60), ("u", 499),
                    ("u", 500), ("edges", 700), ("right", 300), ("wrong", 300), ("impossible", 50),
                    ("ties", 3000), ("u", 5000)]:
        z = rng.uniform(size=m)
        if kind == "ties":
            z = np.round(z, 2)
        elif kind == "discrete":
            z = rng.choice([0.1, 0.4, 0.8], m)
        elif kind == "edges":
            z[::7], z[1::7] = 0.0, 1.0
        y = (rng.uniform(size=m) < z ** 1.2).astype(np.float64)
        if kind == "edges":
            y[::7], y[1::7] = 0.0, 1.0
        elif kind == "right":
            y = (z > 0.5).astype(np.float64)
        elif kind == "wrong":
            y = (z <= 0.5).astype(np.float64)
        elif kind == "impossible":
            z[0], y[0] = 0.0, 1.0
        parts.append((z, y))
    z = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    ends = np.cumsum([p[0].size for p in parts])
    first = np.concatenate(([0], ends[:-1]))
    first = np.concatenate((first, np.zeros(3, np.int64)))  # and three expanding windows
    ends = np.concatenate((ends, ends[[4, 9, -1]]))
    batch = window_tcal_pvalues(z, y, first, ends, 0.05, "binary")
    each = np.array([tcal_analytic_pvalue(z[a:b], y[a:b], 0.05, "binary")
                     for a, b in zip(first, ends, strict=True)])
    assert np.array_equal(np.isnan(batch), np.isnan(each)) and np.isnan(batch[:2]).all()
    ok = ~np.isnan(each)
    np.testing.assert_allclose(batch[ok], each[ok], rtol=1e-12, atol=0)
    assert (batch[ok] < 1e-6).any() and (batch[ok] == 1.0).any()
    assert ((batch[ok] > 0.01) & (batch[ok] < 1)).any()


def test_all_windows_bin_sums_in_one_pass_equal_each_windows_sums():
    from calviz._sums import equal_width_1d_sums
    from calviz._windows import window_sums

    rng = np.random.default_rng(12)
    z = np.concatenate((rng.uniform(size=900), np.linspace(0, 1, 101), [1.0, 0.0, 0.5]))
    y = (rng.uniform(size=z.size) < z).astype(np.float64)
    starts = np.array([0, 0, 1, 3, 400, 400, 1001, z.size])  # empty, 1-row, 2-row and edge-value windows
    for got, (a, b) in zip(window_sums(z, y, starts, 7), zip(starts[:-1], starts[1:], strict=True),
                           strict=True):
        want = equal_width_1d_sums(z[a:b], y[a:b], 7)
        for field in ("keys", "count", "resid_sum", "resid_sq_sum", "z_sum", "y_sum", "null_cov_sum",
                      "null_cov_sq_trace"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field
        assert got.n_total == want.n_total == b - a


@pytest.mark.parametrize("window, kind", [("1D", "datetime"), ("7 rows", "datetime"), (None, "number"),
                                          (2.5, "number"), (3, "number"), (None, "label")])
def test_windows_cut_a_block_at_a_time_equal_the_whole_log_at_once(monkeypatch, window, kind):
    from calviz import _windows as W

    rng = np.random.default_rng(4)
    steps = rng.integers(0, 3, 500)
    if kind == "datetime":
        t = np.datetime64("2026-01-01") + (np.cumsum(steps) * 3600).astype("timedelta64[s]")
    elif kind == "label":
        t = np.array([f"{v:04d}" for v in np.cumsum(steps) // 4])
    else:
        t = np.cumsum(steps) * 0.75 - 40
    column = as_time(t, t.shape[0])
    spec = parse_window(window, column.kind)
    whole = W.TimeWindows.of(column.values, spec, first_row=3)
    for block in (1, 2, 7, 64, 499, 500):
        monkeypatch.setattr(W, "_KEY_BLOCK", block)
        cut = W.TimeWindows.of(column.values, spec, first_row=3)
        for name in ("keys", "starts", "first", "last"):
            a, b = getattr(cut, name), getattr(whole, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), (block, name)
        unsorted = column.values.copy()
        i = block if block < unsorted.shape[0] else 1  # a swap across the block boundary
        unsorted[[i - 1, i]] = unsorted[[i, i - 1]]
        expect = bool(np.all(np.diff(unsorted) >= 0))
        assert W.is_sorted(unsorted) == expect and W.is_sorted(column.values)
