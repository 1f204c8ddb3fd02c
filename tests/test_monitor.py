"""The anytime-valid calibration monitor (calviz.monitor_calibration): the jitted e-process against a direct
implementation of its formula, batching, appending, its level under calibration (small simulation, Monte
Carlo error stated; the large one is benchmarks/bench_monitor.py) and its power on a drift."""

from __future__ import annotations

import math

import numpy as np
import pytest

import calviz
from calviz import InputError


def direct_log_eprocess(z, y, batch, bins=(1, 4, 16), kappa=20.0, half_life=None):
    """ln E_k at every batch end by the formula of monitor_calibration's docstring, term by term: for every
    row, the weighted bin sums S_b, N_b recomputed from all rows of earlier batches (slow, pure Python)."""
    z = [float(v) for v in z]
    y = [float(v) for v in y]
    batch = list(batch)
    n = len(z)
    ends = [i for i in range(n) if i == n - 1 or batch[i + 1] != batch[i]]
    logs = {m: 0.0 for m in bins}
    out = []
    for k_end in ends:
        first = max([e for e in ends if e < k_end], default=-1) + 1  # first row of this batch
        # weight of an earlier row j: 2^(-r/h), r = rows of the batches after j's batch and before this one
        own_end = [min(e for e in ends if e >= j) for j in range(first)]  # last row of j's batch
        w = [1.0 if half_life is None else 0.5 ** ((first - 1 - own_end[j]) / half_life)
             for j in range(first)]
        for i in range(first, k_end + 1):
            for m in bins:
                b = min(int(z[i] * m), m - 1)
                S = sum(w[j] * (y[j] - z[j]) for j in range(first) if min(int(z[j] * m), m - 1) == b)
                N = sum(w[j] for j in range(first) if min(int(z[j] * m), m - 1) == b)
                if not 0.0 < z[i] < 1.0:
                    continue
                shift = min(max(S / (N + kappa), -z[i] / 2), (1 - z[i]) / 2)
                q = z[i] + shift
                f = q / z[i] if y[i] == 1.0 else (1 - q) / (1 - z[i])
                logs[m] += math.log(f)
        out.append(math.log(sum(math.exp(v) for v in logs.values()) / len(bins)))
    return np.array(out)


def _drifting(n_batches, size, seed, start=None, shift=0.0, slope=1.0):
    rng = np.random.default_rng(seed)
    batch = np.repeat(np.arange(n_batches), size)
    z = rng.uniform(0.02, 0.98, size=batch.size)
    truth = z.copy()
    if start is not None:
        logit = np.log(z / (1 - z))
        drifted = 1 / (1 + np.exp(-(slope * logit + shift)))
        truth = np.where(batch >= start, drifted, z)
    y = (rng.uniform(size=z.size) < truth).astype(np.int64)
    return y, z, batch


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_eprocess_equals_the_direct_formula(seed):
    rng = np.random.default_rng(seed)
    n = 160
    z = rng.uniform(size=n)
    z[:5] = [0.0, 1.0, 0.25, 0.5, 0.75]  # a sure prediction (no bet), bin edges
    z = np.round(z, 2)  # ties in z
    y = (rng.uniform(size=n) < np.clip(z + 0.2, 0, 1)).astype(np.int64)
    batch = np.sort(rng.integers(0, 12, size=n))  # uneven batches, ties in time
    fast = calviz.monitor_calibration(y, z, time=batch, prior_count=3.0, half_life=None)
    slow = direct_log_eprocess(z, y, batch, kappa=3.0)
    np.testing.assert_allclose(fast.log_evalues, slow, rtol=0, atol=1e-10)
    fast = calviz.monitor_calibration(y, z, time=batch, prior_count=3.0, half_life=25)
    slow = direct_log_eprocess(z, y, batch, kappa=3.0, half_life=25)
    np.testing.assert_allclose(fast.log_evalues, slow, rtol=0, atol=1e-10)
    assert fast.batch_n.tolist() == np.bincount(batch)[np.bincount(batch) > 0].tolist()


def test_fast_eprocess_equals_the_direct_formula_for_one_resolution_and_top1():
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(3), size=90)
    labels = np.array([rng.choice(3, p=row) for row in probs])
    batch = np.repeat(np.arange(9), 10)
    fast = calviz.monitor_calibration(labels, probs, time=batch, n_bins=[7], prior_count=1.0, half_life=30)
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(float)
    np.testing.assert_allclose(fast.log_evalues, direct_log_eprocess(conf, correct, batch, (7,), 1.0, 30),
                               rtol=0, atol=1e-10)
    assert fast.target == "top1" and fast.n_classes == 3


def test_rows_are_sorted_by_time_and_batch_order_within_a_batch_does_not_matter():
    y, z, batch = _drifting(20, 30, 3, start=10, shift=0.5)
    a = calviz.monitor_calibration(y, z, time=batch)
    perm = np.random.default_rng(0).permutation(z.size)
    b = calviz.monitor_calibration(y[perm], z[perm], time=batch[perm])
    np.testing.assert_allclose(a.log_evalues, b.log_evalues, rtol=0, atol=1e-9)


def test_append_continues_exactly():
    y, z, batch = _drifting(30, 40, 4, start=15, shift=0.6)
    whole = calviz.monitor_calibration(y, z, time=batch, half_life=100)
    for cut in (400, 410, 2, 1199):  # at a batch boundary, inside a batch (it continues), one row added
        part = calviz.monitor_calibration(y[:cut], z[:cut], time=batch[:cut], half_life=100)
        part = part.append(y[cut:], z[cut:], time=batch[cut:])
        np.testing.assert_allclose(part.log_evalues, whole.log_evalues, rtol=0, atol=1e-9)
        assert part.batch_n.tolist() == whole.batch_n.tolist()
        assert part.alarm_index == whole.alarm_index and part.n == whole.n
    with pytest.raises(InputError, match="append-only"):
        whole.append(y[:3], z[:3], time=np.zeros(3, dtype=int))


def test_without_time_every_row_is_a_batch_and_row_windows_group():
    y, z, _ = _drifting(10, 10, 6)
    one = calviz.monitor_calibration(y, z)
    assert one.batch_n.tolist() == [1] * 100
    grouped = calviz.monitor_calibration(y, z, window="10 rows")
    assert grouped.batch_n.tolist() == [10] * 10
    batch = np.repeat(np.arange(10), 10)
    slow = [direct_log_eprocess(z, y, batch, half_life=h) for h in (2000, 20_000)]
    np.testing.assert_allclose(grouped.log_evalues, np.logaddexp(*slow) - np.log(2), atol=1e-10)
    assert len(grouped.experts) == 6 and grouped.log_evalues_by_expert.shape == (6, 10)


def test_datetime_batches_and_alarm_time():
    y, z, batch = _drifting(40, 200, 7, start=20, shift=0.8)
    time = np.datetime64("2026-03-01T00:00") + (batch * 24).astype("timedelta64[h]") \
        + np.timedelta64(5, "h")
    result = calviz.monitor_calibration(y, z, time=time, window="1D")
    assert result.alarm and result.alarm_index >= 20
    assert result.alarm_time == result.end[result.alarm_index]
    assert result.start[0] == np.datetime64("2026-03-01T00:00")
    assert result.pvalue <= 0.05 and result.evalues[result.alarm_index] >= 20
    frame = result.to_frame()
    assert list(frame["alarm"]).index(True) == result.alarm_index


def test_bad_input_is_refused_clearly():
    y, z, batch = _drifting(3, 5, 8)
    with pytest.raises(InputError, match="NaT"):
        calviz.monitor_calibration(y, z, time=np.array(["2026-01-01"] * 14 + ["NaT"], dtype="datetime64[s]"))
    with pytest.raises(InputError, match="rows"):
        calviz.monitor_calibration(y, z, time=batch[:-1])
    with pytest.raises(InputError, match="alpha"):
        calviz.monitor_calibration(y, z, time=batch, alpha=1.5)
    with pytest.raises(InputError, match="n_bins"):
        calviz.monitor_calibration(y, z, time=batch, n_bins=[0])
    with pytest.raises(InputError, match="duration"):
        calviz.monitor_calibration(y, z, time=batch, window="1D")


def test_false_alarm_rate_under_calibration_is_at_most_alpha():
    """200 calibrated logs of 200 batches × 20 rows, alarm at E ≥ 1/α = 10 (α = 0.1): Ville's bound
    P(alarm) ≤ 0.1; the observed rate (Monte Carlo se ≤ √(0.1·0.9/200) = 0.021) must be ≤ α + 2 se."""
    alpha, runs = 0.1, 200
    alarms = 0
    for seed in range(runs):
        y, z, batch = _drifting(200, 20, 1000 + seed)
        alarms += calviz.monitor_calibration(y, z, time=batch, alpha=alpha).alarm
    rate = alarms / runs
    se = math.sqrt(alpha * (1 - alpha) / runs)
    assert rate <= alpha + 2 * se


def test_power_an_intercept_drift_is_detected_after_it_starts():
    delays = []
    for seed in range(10):
        y, z, batch = _drifting(100, 100, 2000 + seed, start=50, shift=0.4)
        result = calviz.monitor_calibration(y, z, time=batch)
        assert result.alarm and result.alarm_index >= 50
        delays.append(result.alarm_index - 50)
    assert np.median(delays) <= 20


def _same(a, b):
    """Every attribute of two monitors equal, bit for bit (NaN equal to NaN)."""
    for name in ("start", "end", "batch_n", "log_evalues", "log_evalues_by_expert"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    for name in ("alarm", "alarm_index", "alarm_time", "threshold", "pvalue", "alpha", "n_bins",
                 "prior_count", "half_life", "n", "target", "window", "n_classes"):
        assert getattr(a, name) == getattr(b, name), name


def _shared_cases():
    rng = np.random.default_rng(8)
    n = 3000
    # ties in time and in prediction, days without rows (windows not listed), unsorted rows
    days = rng.choice([0, 1, 2, 5, 6, 9], size=n)
    seconds = days * 86400 + rng.integers(0, 40, n) * 1800
    time = np.datetime64("2026-03-01") + seconds.astype("timedelta64[s]")
    z = np.round(rng.uniform(size=n), 2)
    z[:50] = 0.0
    z[50:90] = 1.0
    y = (rng.uniform(size=n) < z).astype(np.int64)
    yield "ties, gaps, unsorted", (y, z), dict(time=time, window="1D")
    yield "one row per window", (y[:40], z[:40]), dict(time=np.arange(40)[::-1], window=None)
    yield "windows of one row and of two", (y[:9], z[:9]), dict(time=np.array([0, 0, 3, 7, 7, 7, 9, 12, 12]),
                                                                window=2.0)
    yield "all right", (np.ones(500, np.int64), z[:500]), dict(time=days[:500], window=None)
    yield "all wrong", (np.zeros(500, np.int64), z[:500]), dict(time=days[:500], window="100 rows")
    labels = rng.integers(0, 3, n)
    probs = rng.dirichlet(np.ones(3), size=n)
    yield "top-1, batch ids", (labels, probs), dict(time=np.array([f"b{d}" for d in days]), window=None)


@pytest.mark.parametrize("case", list(_shared_cases()), ids=lambda c: c[0])
def test_the_monitor_of_an_over_time_result_equals_the_separate_call(case):
    from calviz._monitor import monitor_of_over_time

    _, (y, p), kw = case
    over = calviz.calibration_over_time(y, p, alpha=0.1, **kw)
    shared = monitor_of_over_time(over)
    alone = calviz.monitor_calibration(y, p, alpha=0.1, **kw)
    _same(shared, alone)
    assert shared.batch_n.tolist() == over.n.tolist()
