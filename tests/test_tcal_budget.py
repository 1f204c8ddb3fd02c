"""T-Cal's sequential resampled test within a budget of resamples or time: it continues while undecided
until the budget, then says "undecided" with the Monte Carlo interval and the analytic p-value.  The time
budget is checked with an injected clock that advances with the work done (no wall-clock assertions)."""

from __future__ import annotations

import numpy as np
import pytest

import calviz
import calviz._tcal as T
from calviz import InputError
from calviz import _tcal_decision as D

SECONDS_PER_RESAMPLE = 1e-4


def wiggle(n, amp, seed, freq=4.0):
    rng = np.random.default_rng(seed)
    z = rng.random(n)
    g = np.clip(z + amp * np.sin(2 * np.pi * freq * z), 0.0, 1.0)
    return (rng.random(n) < g).astype(np.int64), z


#: adjusted y-only p-value ≈ 0.044: borderline at α = 0.05
BORDERLINE = dict(n=600, amp=0.11176359611890802, seed=3)


@pytest.fixture
def work_clock(monkeypatch):
    """The budget's clock reads SECONDS_PER_RESAMPLE × resamples drawn so far."""
    drawn = {"n": 0}
    original = T._MemorySample.resample

    def resample(self, levels, source, base, start, count):
        drawn["n"] += count
        return original(self, levels, source, base, start, count)

    monkeypatch.setattr(T._MemorySample, "resample", resample)
    monkeypatch.setattr(D, "clock", lambda: drawn["n"] * SECONDS_PER_RESAMPLE)
    return drawn


def test_the_default_budget_is_documented():
    assert D.DEFAULT_MAX_RESAMPLES == 100_000 and D.DEFAULT_TIME_BUDGET is None and D.MAX_RESAMPLES == 10**6
    assert T.resample_cap(None, 8000) == 100_000  # n = 8,000: the default resample budget is 10⁵
    assert T.resample_cap(10**6, 8000) == 10**6  # and 10⁶ when asked
    import inspect
    assert inspect.signature(calviz.adaptive_tcal).parameters["time_budget"].default is None


def test_resample_budget_undecided_reports_the_interval_and_the_analytic_pvalue():
    y, z = wiggle(**BORDERLINE)
    r = calviz.adaptive_tcal(y, z, seed=0, max_resamples=2000, time_budget=None)
    assert r.decision == "undecided" and not r.reject and r.n_resamples <= 2000
    low, high = r.pvalue_interval
    assert low <= r.alpha < high
    analytic = calviz.adaptive_tcal(y, z, resampling="analytic")
    assert r.analytic_pvalue == pytest.approx(analytic.pvalue, rel=1e-12)
    assert "cap 2000 resamples reached" in r.reason and f"analytic p-value {analytic.pvalue:.3g}" in r.reason
    assert r.to_dict()["analytic_pvalue"] == r.analytic_pvalue


def test_time_budget_stops_undecided_within_the_budget(work_clock):
    y, z = wiggle(**BORDERLINE)
    budget = 3.0  # 30,000 resamples of the work clock
    r = calviz.adaptive_tcal(y, z, seed=0, time_budget=budget)
    assert r.decision == "undecided" and "time budget of 3 s of resampling spent" in r.reason
    assert work_clock["n"] == r.n_resamples  # every resample drawn is counted in the result
    assert r.n_resamples * SECONDS_PER_RESAMPLE <= budget  # never beyond the budget
    assert r.n_resamples >= 0.5 * budget / SECONDS_PER_RESAMPLE  # and most of it used
    assert r.pvalue_interval[0] <= r.alpha < r.pvalue_interval[1] and r.analytic_pvalue is not None


def test_a_larger_budget_continues_and_decides_as_the_reference(work_clock):
    """The same seed with a larger budget draws the same first resamples and more: the interval narrows,
    and a settled decision agrees with a long fixed-count reference."""
    y, z = wiggle(**BORDERLINE)
    small = calviz.adaptive_tcal(y, z, seed=0, time_budget=3.0)
    large = calviz.adaptive_tcal(y, z, seed=0, time_budget=15.0)
    assert large.n_resamples > small.n_resamples

    def width(r):
        return r.pvalue_interval[1] - r.pvalue_interval[0]

    assert width(large) < width(small)
    if large.decision != "undecided":
        assert (large.decision == "reject") == (large.pvalue_interval[1] <= large.alpha)


def test_clear_cases_decide_long_before_any_budget(work_clock):
    y, z = wiggle(2000, 0.0, 1)
    r = calviz.adaptive_tcal(y, z, seed=0, time_budget=1.0)
    assert r.decision == "accept" and r.analytic_pvalue is None and r.n_resamples < 10_000


def test_classwise_shares_one_time_budget(work_clock):
    rng = np.random.default_rng(4)
    probs = rng.dirichlet(np.ones(4), 600)
    labels = np.array([rng.choice(4, p=row) for row in probs])  # calibrated: each class must resample
    budget = 2.0
    result = calviz.adaptive_tcal(labels, probs, target="classwise", seed=0, time_budget=budget)
    assert result.n_resamples == work_clock["n"] > 0 and work_clock["n"] * SECONDS_PER_RESAMPLE <= budget


@pytest.mark.parametrize("bad", [0, -1.0, "10s", float("inf")])
def test_bad_time_budget_is_refused(bad):
    y, z = wiggle(100, 0.0, 2)
    with pytest.raises(InputError, match="'time_budget' parameter of adaptive_tcal"):
        calviz.adaptive_tcal(y, z, time_budget=bad)
