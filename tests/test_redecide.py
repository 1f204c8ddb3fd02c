"""An α change re-decides the resampled views from their stored resamples: the bootstrap interval's and
the smooth and CORP bands' quantiles, and the sequential resampled T-Cal, whose stopping rule depends on α,
reuses the resamples already drawn and draws only those beyond them.  Every re-decided result equals a
fresh computation with the same seed to 1e-12; the dashboard's store resamples nothing for an α change."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import calviz
from calviz import _tcal
from calviz._data import InputError
from calviz._intervals import bootstrap_at_alpha
from calviz.analysis import REGISTRY, AnalysisOptions, run_view
from calviz.analysis.views import view
from calviz.app import precomputed
from calviz.app.store import ResultStore

RTOL = 1e-12
ATOL = 1e-14
REDECIDED = tuple(record.name for record in REGISTRY if record.redecided_by)


def _same(a, b, path="result"):
    """Two results equal field by field (arrays and floats to 1e-12); fields not compared by the result's
    own equality (its stored resamples) are skipped."""
    assert type(a) is type(b), path
    if dataclasses.is_dataclass(a):
        for field in dataclasses.fields(a):
            if field.compare:
                _same(getattr(a, field.name), getattr(b, field.name), f"{path}.{field.name}")
    elif isinstance(a, np.ndarray) and a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=path)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(a, float):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=path)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for name in a:
            _same(a[name], b[name], f"{path}[{name!r}]")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


def _binary(n=1500, power=1.15, seed=1):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, size=n)
    p[: n // 5] = rng.integers(1, 10, size=n // 5) / 10  # ties, values on bin edges
    return calviz.as_calibration_data((rng.uniform(size=n) < p ** power).astype(int), p)


def _multiclass(n=1500, K=4, seed=0):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(K) * 0.7, size=n)
    sharper = probs ** 1.3 / (probs ** 1.3).sum(1, keepdims=True)
    labels = (rng.uniform(size=(n, 1)) > np.cumsum(sharper, axis=1)).sum(axis=1).clip(0, K - 1)
    return calviz.as_calibration_data(labels, probs)


# every resampled view, on inputs where it applies (binary and K-class, both label resamplings of T-Cal)
CASES = [
    ("bootstrap", _binary, {}),
    ("bootstrap", _multiclass, {"target": "topk", "top_k": 2}),
    ("smooth", _binary, {}),
    ("corp", _binary, {"scheme": "corp"}),
    ("tcal_resampled", _binary, {"resampling": "y_only"}),
    ("tcal_resampled", _binary, {"resampling": "consistency"}),
    ("tcal_resampled", _multiclass, {"resampling": "y_only", "target": "full"}),
    ("tcal_resampled", lambda: _binary(power=1.6), {"resampling": "y_only"}),  # clear: rejected at once
]


def test_every_resampled_view_declares_what_only_re_decides_it():
    assert set(REDECIDED) == {"bootstrap", "smooth", "corp", "tcal_resampled"}
    for record in REGISTRY:
        assert set(record.redecided_by) <= set(record.reads), record.name
        assert (record.redecide is None) == (not record.redecided_by), record.name
    assert {name for name, _, _ in CASES} == set(REDECIDED)


@pytest.mark.parametrize(("name", "make", "where"), CASES)
def test_a_re_decided_result_equals_a_fresh_one(name, make, where):
    data = make()
    record = view(name)
    first = AnalysisOptions(alpha=0.05, n_resamples=200, seed=3, **where)
    result, _, note = run_view(name, data, first)
    assert result is not None and result._draws is not None, note
    for alpha in (0.01, 0.2, 0.05, 0.5):  # smaller, larger, the same, far larger
        options = first.replace(alpha=alpha)
        fresh, _, fresh_note = run_view(name, data, options)
        again = record.redecide(result, data, options)
        _same(again, fresh)
        assert note == fresh_note
        result = again  # (a chain of α changes, each from the previous result)


def _counting(monkeypatch):
    drawn = []
    resample = _tcal._MemorySample.resample

    def counted(self, levels, source, base, start, count):
        drawn.append(count)
        return resample(self, levels, source, base, start, count)

    monkeypatch.setattr(_tcal._MemorySample, "resample", counted)
    return drawn


def test_the_sequential_t_cal_draws_only_the_resamples_beyond_those_stored(monkeypatch):
    data = _binary(n=600, power=1.15, seed=3)
    drawn = _counting(monkeypatch)
    first = calviz.adaptive_tcal(data, alpha=0.05, seed=0)
    stored = first._draws.statistics.shape[0]
    assert sum(drawn) == first.n_resamples == stored
    for alpha in (0.01, 0.2, 0.5, 0.3):
        drawn.clear()
        fresh = calviz.adaptive_tcal(data, alpha=alpha, seed=0)
        needed = fresh.n_resamples
        drawn.clear()
        again = calviz.adaptive_tcal(data, alpha=alpha, seed=0, reuse=first)
        _same(again, fresh)
        assert sum(drawn) == max(needed - stored, 0), alpha
        assert again._draws.statistics.shape[0] == max(needed, stored)  # every resample drawn is kept
        first, stored = again, max(needed, stored)
    fixed = calviz.adaptive_tcal(data, alpha=0.05, seed=0, n_resamples=400)
    drawn.clear()
    _same(calviz.adaptive_tcal(data, alpha=0.2, seed=0, n_resamples=400, reuse=fixed),
          calviz.adaptive_tcal(data, alpha=0.2, seed=0, n_resamples=400))
    assert sum(drawn) == 400  # (the fresh one's; the reuse drew none)


def test_resamples_of_other_data_seed_or_resampling_are_refused():
    data = _binary(n=600, seed=3)
    first = calviz.adaptive_tcal(data, alpha=0.05, seed=0)
    for kwargs in ({"seed": 1}, {"resampling": "consistency"}):
        with pytest.raises(InputError, match="not this test's"):
            calviz.adaptive_tcal(data, alpha=0.1, reuse=first, **{"seed": 0, **kwargs})
    with pytest.raises(InputError, match="not this test's"):
        calviz.adaptive_tcal(_binary(n=600, seed=4), alpha=0.1, seed=0, reuse=first)
    with pytest.raises(InputError, match="keeps its resamples"):
        calviz.adaptive_tcal(data, seed=0, reuse=calviz.adaptive_tcal(data, resampling="analytic"))
    with pytest.raises(InputError, match="carries its resamples"):
        bootstrap_at_alpha(calviz.ece_interval(data), 0.1)  # (the asymptotic interval: no resamples)


@pytest.fixture
def shared_caches():
    yield
    precomputed.RESULTS.clear()
    precomputed.DRAWN.clear()


def test_the_store_answers_an_alpha_change_from_the_stored_resamples(shared_caches):
    """Computed on this thread (``inline``): an α change passes over no row for the resampled views, their
    results equal the direct computations, and the shown results do not carry their resamples (kept once,
    in the server's bounded cache of resampled results)."""
    data = _binary(n=1200, seed=5)
    store = ResultStore()
    try:
        for scheme in ("equal_width", "corp"):
            options = AnalysisOptions(resampling="y_only", n_resamples=200, scheme=scheme, alpha=0.05)
            store.update(data, options, inline=True)
            passes = dict(store.passes)
            for alpha in (0.1, 0.01):
                store.update(data, options.replace(alpha=alpha), inline=True)
                # (the analytic views of so few rows pass over them: no sorted view below its threshold)
                passed = {name for name, k in store.passes.items() if passes.get(name) != k}
                assert not passed & set(REDECIDED)
                for slot in ResultStore.SLOTS:
                    entry = getattr(store, slot)
                    if entry.key is not None and entry.key[0] in REDECIDED:
                        direct, _, note = run_view(entry.key[0], data, options.replace(alpha=alpha))
                        _same(entry.result, direct)
                        assert entry.error == note and getattr(entry.result, "_draws", None) is None
            shown = {getattr(store, slot).key[0] for slot in ResultStore.SLOTS if getattr(store, slot).key}
            assert shown & set(REDECIDED) == ({"bootstrap", "smooth", "tcal_resampled"} if scheme != "corp"
                                              else {"bootstrap", "corp", "tcal_resampled"})
    finally:
        store.close()


def test_a_served_alpha_change_re_decides_t_cal_in_the_worker_and_the_bands_at_once(shared_caches):
    """A served session (background jobs): the α change shows the bootstrap and smooth bands at once (no
    job), and T-Cal's job re-decides in the session's worker process from the stored resamples."""
    data = _binary(n=1200, seed=6)
    store = ResultStore(debounce=0)
    try:
        options = AnalysisOptions(resampling="y_only", n_resamples=200, alpha=0.05)
        store.update(data, options, start_now=True)
        store.wait()
        passes = dict(store.passes)
        changed = options.replace(alpha=0.2)
        store.update(data, changed, start_now=True)
        assert store.bootstrap.pending is None and store.smooth.pending is None  # answered in the update
        store.wait()
        passed = {name for name, k in store.passes.items() if passes.get(name) != k}
        assert not passed & set(REDECIDED)  # nothing resampled from the rows
        for slot, name in (("bootstrap", "bootstrap"), ("smooth", "smooth"), ("tcal", "tcal_resampled")):
            _same(getattr(store, slot).result, run_view(name, data, changed)[0])
    finally:
        store.close()
