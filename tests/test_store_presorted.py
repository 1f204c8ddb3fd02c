"""The dashboard's store answers its scalar views from each target's sorted view (calviz.app.precomputed),
shares results between sessions, and recomputes on a change only what the change's option reads.

Equality with the direct computations (run_view on the rows) is to 1e-12; every wait is on an event or a
future (no clock)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading

import numpy as np
import pytest

import calviz
from calviz._presorted import ClasswiseACE, Presorted
from calviz.analysis import AnalysisOptions, run_view
from calviz.app import precomputed
from calviz.app.store import ResultStore

WAIT_S = 300  # a hang guard only: a worker process starts (imports the engine) in seconds, minutes at load 20
RTOL = 1e-12
ATOL = 1e-14


def _same(a, b, path="result"):
    """Two results equal field by field (arrays and floats to 1e-12)."""
    assert type(a) is type(b), path
    if dataclasses.is_dataclass(a):
        for field in dataclasses.fields(a):
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


def _multiclass(n=3000, K=4, seed=0):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(K) * 0.7, size=n)
    probs[: n // 5] = np.round(probs[: n // 5], 1)  # ties, values on bin edges
    probs[: n // 5] /= probs[: n // 5].sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(K, p=p) for p in probs ** 1.3 / (probs ** 1.3).sum(1, keepdims=True)])
    return calviz.as_calibration_data(labels, probs)


def _binary(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    p[: n // 4] = rng.integers(0, 11, size=n // 4) / 10
    return calviz.as_calibration_data((rng.uniform(size=n) < p ** 1.4).astype(int), p)


@pytest.fixture(autouse=True)
def _every_size(monkeypatch):
    monkeypatch.setattr(precomputed, "PRESORT_MIN_ROWS", 0)
    yield
    precomputed.RESULTS.clear()
    precomputed.SORTED.clear()
    precomputed.ACE_TABLES.clear()
    precomputed.BOOTSTRAPS.clear()


def _built(data, target):
    """A finished sorted view in the server's store (built here, not in a worker)."""
    def build(data, target):
        future = concurrent.futures.Future()
        future.set_result(Presorted.from_data(data, target[0], class_index=target[1]))
        return future
    precomputed.SORTED.request(data, target, build)


@pytest.mark.parametrize("make", [_binary, _multiclass])
def test_answers_equal_the_direct_computations(make):
    data = make()
    store = ResultStore()
    targets = (["auto", "top1"] if data.is_binary else ["auto", "top1", "classwise"])
    for target in targets:
        for class_index in ((0, 2) if target == "classwise" else (0,)):
            base = AnalysisOptions(target=target, class_index=class_index)
            for view in precomputed.ANSWERED:
                _built(data, precomputed.sorted_target(view, data, base))
            for scheme, n_bins, alpha in (("equal_width", 15, 0.05), ("equal_mass", 7, 0.1),
                                          ("equal_width", 1, 0.3), ("equal_mass", 200, 0.01)):
                options = base.replace(scheme=scheme, n_bins=n_bins, alpha=alpha)
                for view in precomputed.ANSWERED:
                    assert store._answer(view, data, options) is not None, (view, target)
                    _same(store.result(view, data, options), run_view(view, data, options)[0], view)
    assert not store.passes  # every one from the sorted views


def test_only_scalar_targets_of_all_rows_are_answered():
    data = _multiclass()
    for view in precomputed.ANSWERED:
        assert precomputed.sorted_target(view, data, AnalysisOptions(target="full")) is None
        assert precomputed.sorted_target(view, data, AnalysisOptions(n=1000)) is None
    assert precomputed.sorted_target("classical", data, AnalysisOptions()) is None
    assert precomputed.sorted_target("reliability", data, AnalysisOptions(target="topk", top_k=2)) is None


def _delta(after: dict, before: dict) -> dict:
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


def test_changes_recompute_only_what_they_read_and_a_new_tab_reuses_the_results():
    """Built in a worker process: then an α change passes over no row (the resampled views re-decide from
    their stored resamples), a bin change only for the bin-dependent ones, a revisited target
    builds nothing and computes nothing, and a second session on the same data computes nothing."""
    data = _multiclass(seed=3)
    store = ResultStore()
    try:
        options = AnalysisOptions(resampling="analytic")  # (the analytic T-Cal: no resampled job)
        store.update(data, options, show_smooth=False, inline=True)
        for view in precomputed.ANSWERED:  # the builds this update started, in the session's worker
            target = precomputed.sorted_target(view, data, options)
            assert precomputed.SORTED.request(data, target, None).result(timeout=WAIT_S) is not None
        passes, calls, builds = dict(store.passes), dict(store.calls), precomputed.SORTED.builds

        store.update(data, options.replace(alpha=0.1), show_smooth=False, inline=True)
        assert not _delta(store.passes, passes)  # (the bootstrap's percentiles: from its stored resamples)
        assert {"reliability", "tcal", "interval"} <= set(_delta(store.calls, calls))
        passes, calls = dict(store.passes), dict(store.calls)

        store.update(data, options.replace(alpha=0.1, n_bins=9, scheme="equal_mass"), show_smooth=False,
                     inline=True)
        # bins: the sorted views answer the diagram and the interval; of the classical tests only the MCE and
        # ACE read the bins (Hosmer-Lemeshow has its own groups): the tests are kept; the bootstrap resamples
        assert set(_delta(store.passes, passes)) <= {"bootstrap"}
        assert set(_delta(store.calls, calls)) == {"reliability", "interval", "classical", "bootstrap"}
        rebinned = options.replace(alpha=0.1, n_bins=9, scheme="equal_mass")
        # (the classical view does not read α: its decisions are redrawn at the inputs' α from its p-values)
        _same(store.classical.result, run_view("classical", data, rebinned.replace(alpha=0.05))[0])

        store.update(data, options.replace(target="classwise", class_index=1), show_smooth=False, inline=True)
        for view in precomputed.ANSWERED:
            target = precomputed.sorted_target(view, data, options.replace(target="classwise", class_index=1))
            precomputed.SORTED.request(data, target, None).result(timeout=WAIT_S)
        builds, calls = precomputed.SORTED.builds, dict(store.calls)
        store.update(data, options, show_smooth=False, inline=True)  # back: every result cached
        assert precomputed.SORTED.builds == builds and store.calls == calls

        tab = ResultStore()  # a new tab on the server's same data
        try:
            tab.update(data, options, show_smooth=False, inline=True)
            assert tab.calls == {} and tab.passes == {}
            for slot in ResultStore.SLOTS:
                assert getattr(tab, slot).result is getattr(store, slot).result
        finally:
            tab.close()
    finally:
        store.close()


def test_a_pending_job_is_answered_when_the_sorted_view_is_built(monkeypatch):
    """T-Cal as a background job (large data): once its target's sorted view is built, the slot shows the
    analytic T-Cal from it and the job is dropped (it never passes over the rows)."""
    import calviz.analysis.views as views

    monkeypatch.setattr(views, "LARGE_ROWS", 1000)  # T-Cal runs in the background from 1000 rows
    data = _binary(seed=4)
    shown = threading.Event()
    store = ResultStore(debounce=3600)  # the job would start in an hour: the build answers it first
    store.param.watch(lambda event: shown.set() if event.new.pending is None else None, ["tcal"])
    try:
        options = AnalysisOptions(resampling="analytic")
        store.update(data, options, show_smooth=False)
        assert store.tcal.pending is not None or precomputed.SORTED.ready(
            data, precomputed.sorted_target("tcal", data, options)) is not None
        assert shown.wait(WAIT_S)
        _same(store.tcal.result, run_view("tcal", data, options)[0])
        assert "tcal" not in store.passes and "tcal" not in store.jobs
    finally:
        store.close()


def test_a_first_visit_shows_the_diagram_and_interval_from_the_rows_while_the_sorted_view_is_built(
        monkeypatch):
    """A target not visited before (large data, its sorted view building): the diagram and the ECE interval
    are computed from the rows in the update itself (equal to the direct computations), T-Cal waits for the
    sorted view and is answered from it when built; a bin change meanwhile is answered from the rows too."""
    import calviz.analysis.views as views

    monkeypatch.setattr(views, "LARGE_ROWS", 1000)  # the three views run in the background from 1000 rows
    data = _multiclass(seed=9)
    building: dict = {}

    def build(data, target):  # (the build finishes when the test says so)
        building[target] = concurrent.futures.Future()
        return building[target]

    shown = threading.Event()
    store = ResultStore(debounce=3600)  # (no job starts during the test)
    monkeypatch.setattr(store, "_build_sorted", build)
    monkeypatch.setattr(store, "_build_table", lambda data, target: concurrent.futures.Future())
    store.param.watch(lambda event: shown.set() if event.new.pending is None else None, ["tcal"])
    try:
        options = AnalysisOptions(resampling="analytic", target="classwise", class_index=2, n_bins=7)
        for changed in (options, options.replace(n_bins=10, scheme="equal_mass")):
            store.update(data, changed, show_smooth=False)
            assert ("classwise", 2) in building and not building[("classwise", 2)].done()
            for slot in ("reliability", "interval"):
                entry = getattr(store, slot)
                assert entry.pending is None and slot not in store.jobs
                _same(entry.result, run_view(slot, data, changed)[0], slot)
            assert store.tcal.pending is not None and store.tcal.result is None
        assert store.passes == {"reliability": 2, "interval": 2}
        building[("classwise", 2)].set_result(Presorted.from_data(data, "classwise", class_index=2))
        assert shown.wait(WAIT_S)
        _same(store.tcal.result, run_view("tcal", data, changed)[0])
        assert "tcal" not in store.passes
    finally:
        store.close()


def test_a_first_visit_of_a_class_is_answered_from_its_bin_table_while_the_sorted_view_is_built(monkeypatch):
    """With the dataset's ACE table built (the server's start) and a class's sorted view not yet: the diagram
    and the ECE interval of the class come from its bin table — no pass over the rows, equal to the direct
    computations in both schemes — and a bin count beyond the table from the rows."""
    import calviz.analysis.views as views

    monkeypatch.setattr(views, "LARGE_ROWS", 1000)
    data = _multiclass(seed=12)
    precomputed.ACE_TABLES.request(data, precomputed.ACE_TABLE,
                                   lambda d, t: _done(ClasswiseACE.from_data(d, max_bins=30)))
    building: dict = {}

    def build(data, target):  # (never finishes during the test)
        building[target] = concurrent.futures.Future()
        return building[target]

    store = ResultStore(debounce=3600)  # (no job starts during the test)
    monkeypatch.setattr(store, "_build_sorted", build)
    try:
        base = AnalysisOptions(resampling="analytic", target="classwise", n_bins=7)
        for changed in (base.replace(class_index=1),
                        base.replace(class_index=3, scheme="equal_mass", n_bins=30),
                        base.replace(class_index=3, alpha=0.2)):
            store.update(data, changed, show_smooth=False)
            for slot in ("reliability", "interval"):
                entry = getattr(store, slot)
                assert entry.pending is None and slot not in store.jobs
                _same(entry.result, run_view(slot, data, changed)[0], slot)
        assert ("classwise", 3) in building and not building[("classwise", 3)].done()
        assert not store.passes
        beyond = base.replace(class_index=3, n_bins=31)  # beyond the table: from the rows
        store.update(data, beyond, show_smooth=False)
        assert store.passes == {"reliability": 1, "interval": 1}
        _same(store.reliability.result, run_view("reliability", data, beyond)[0])
    finally:
        store.close()


def test_a_stand_in_that_passes_over_the_rows_is_shown_after_the_changes_other_views(monkeypatch):
    """Large data in a served session: the smooth curve without its band (the smooth band's stand-in, a
    pass over the rows) is computed on the session's next turn, after the change's diagram was published,
    and shown while the band's job still runs; equal to the direct computation."""
    import calviz.analysis.views as views

    monkeypatch.setattr(views, "LARGE_ROWS", 1000)
    data = _binary(seed=10)
    turns: list = []
    store = ResultStore(schedule=turns.append, debounce=3600)  # (the session's next turns, run below)
    monkeypatch.setattr(store, "_build_sorted", lambda data, target: concurrent.futures.Future())
    monkeypatch.setattr(store, "_build_table", lambda data, target: concurrent.futures.Future())
    try:
        options = AnalysisOptions(resampling="analytic")
        store.update(data, options, show_smooth=True)
        assert store.reliability.result is not None and store.reliability.pending is None
        assert store.smooth.pending is not None and store.smooth.result is None
        assert "smooth_curve" not in store.passes
        for turn in turns:
            turn()
        assert store.smooth.pending is not None and store.smooth.key[0] == "smooth"
        _same(store.smooth.result, run_view("smooth_curve", data, options)[0])
        assert "smooth_curve" in store.timings
    finally:
        store.close()


def test_what_only_the_later_cards_show_is_computed_after_the_change_is_published(monkeypatch):
    """A served page's cards drawn after the four views (the classical tests, the score decomposition, the
    smooth-curve summaries): what only they show and a change computes on the session's thread (here the
    decomposition) is computed on the session's next turn, after the change's other slots were published,
    equal to the direct computation; of two changes before that turn, only the last one's results are
    computed."""
    data = _binary(seed=11)
    turns: list = []
    store = ResultStore(schedule=turns.append, debounce=3600)  # (the session's next turns, run below)
    monkeypatch.setattr(store, "_build_sorted", lambda data, target: concurrent.futures.Future())
    monkeypatch.setattr(store, "_build_table", lambda data, target: concurrent.futures.Future())
    later = ("decomposition",)  # (the classical tests and the smooth summaries: background jobs here)
    store.compute_later(("classical", "smooth_summaries", *later))
    try:
        options = AnalysisOptions(resampling="analytic", n=2000)
        store.update(data, options, show_smooth=False)
        assert store.reliability.result is not None and store.interval.result is not None
        assert all(getattr(store, slot).result is None and slot not in store.calls for slot in later)
        superseding = options.replace(n=2500)
        store.update(data, superseding, show_smooth=False)
        for turn in turns:
            turn()
        for slot in later:
            entry = getattr(store, slot)
            assert entry.pending is None and entry.options == superseding, slot
            assert store.calls[slot] == 1, slot  # (the first change's turn found itself superseded)
            _same(entry.result, run_view(slot, data, superseding)[0], slot)
            assert slot in store.timings
    finally:
        store.close()


def test_a_bin_change_of_the_classical_tests_is_answered_from_the_sorted_view_and_the_ace_table():
    """With the target's sorted view and the dataset's ACE table built, a bin change shows the classical
    tests at once (no job, no pass over the rows), equal to computing them again; above the table's bin
    counts, or before the table is built, the change is a job as before."""
    data = _multiclass(seed=6)
    options = AnalysisOptions(resampling="analytic")
    _built(data, ("top1", 0))
    store = ResultStore(debounce=0)  # (no builds, no jobs of its own: each change below is on this thread)
    try:
        store.update(data, options, show_smooth=False, inline=True)  # the first result: from the rows
        assert store.passes["classical"] == 1
        changed = options.replace(n_bins=23)
        assert not store._sorted_ready("classical", data, changed)  # (no table yet)
        precomputed.ACE_TABLES.request(data, precomputed.ACE_TABLE,
                                       lambda d, t: _done(ClasswiseACE.from_data(d, max_bins=30)))
        assert store._sorted_ready("classical", data, changed)
        assert not store._sorted_ready("classical", data, options.replace(n_bins=31))  # beyond the table
        store.update(data, changed, show_smooth=False)
        assert store.classical.pending is None and store.passes["classical"] == 1
        _same(store.classical.result, run_view("classical", data, changed)[0])
        assert store.classical.result.measures["ace"].n_bins == 23
    finally:
        store.close()


def test_the_server_start_computes_the_first_page_and_sessions_share_running_jobs():
    """The server's start computes the first page's views (the slow ones in worker processes) with the
    sorted view and the ACE table; a page opened meanwhile waits for those jobs instead of running its own
    (each job computed once in all), and a page opened after computes nothing."""
    data = _multiclass(seed=7)
    options = AnalysisOptions(resampling="analytic")
    builds = precomputed.BOOTSTRAPS.builds
    started = precomputed.precompute_first_views(data, options)
    first = ResultStore()
    try:
        first.update(data, options, start_now=True)
        server = started.result(timeout=WAIT_S)
        first.wait(WAIT_S)
        # (the bootstrap interval: its table of every bin count built once, each session reading it)
        jobs = [v for v in {**server.calls, **first.calls}
                if ResultStore._in_background(v, data, options) and v != "bootstrap"]
        assert jobs and all(server.passes.get(v, 0) + first.passes.get(v, 0) == 1 for v in jobs), (
            server.passes, first.passes)
        assert precomputed.BOOTSTRAPS.builds == builds + 1
        assert not precomputed.IN_FLIGHT
    finally:
        first.close()
    assert precomputed.ACE_TABLES.ready(data, precomputed.ACE_TABLE) is not None
    assert precomputed.SORTED.ready(data, precomputed.sorted_target("reliability", data, options)) is not None
    later = ResultStore()
    try:
        later.update(data, options, start_now=True)
        later.wait(WAIT_S)
        assert later.calls == {} and later.passes == {} and not later.jobs
    finally:
        later.close()
    assert precomputed.first_options(data) == AnalysisOptions()


def test_the_bootstrap_interval_of_every_bin_count_is_drawn_once():
    """The bootstrap interval's first job draws the replicates of every bin count 1..100 in the session's
    worker; a bin change is then answered on the session's thread (no job), equal to the direct
    computation; above the table's bin counts it is a job again."""
    data = _binary(n=4000, seed=8)
    options = AnalysisOptions(resampling="analytic", n_resamples=40)
    store = ResultStore()
    try:
        store.update(data, options, show_smooth=False, start_now=True)
        store.wait(WAIT_S)
        direct = precomputed.without_draws(run_view("bootstrap", data, options)[0])
        _same(store.bootstrap.result, direct)
        for n_bins in (1, 7, 100):
            changed = options.replace(n_bins=n_bins, alpha=0.1)
            store.update(data, changed, show_smooth=False)
            assert store.bootstrap.pending is None and "bootstrap" not in store.jobs
            _same(store.bootstrap.result, precomputed.without_draws(run_view("bootstrap", data, changed)[0]))
        assert "bootstrap" not in store.passes
        store.update(data, options.replace(n_bins=101), show_smooth=False)
        assert store.bootstrap.pending is not None
    finally:
        store.close()


def test_bounded_and_forgotten_with_their_data():
    data = _binary(seed=5)
    cache = precomputed.ResultCache(entries=2)
    for i in range(3):
        cache.put(("v", id(data), i), data, i, None)
    assert len(cache) == 2 and not cache.get(("v", id(data), 0))[0]
    views = precomputed.SortedViews(max_bytes=1)
    first = Presorted.from_data(data)
    for target in (("binary", 0), ("top1", 0)):
        views.request(data, target, lambda d, t: _done(Presorted.from_data(d, t[0])))
    assert views.ready(data, ("top1", 0)) is not None and views.ready(data, ("binary", 0)) is None
    assert views.nbytes() == first.nbytes
    del data
    import gc

    gc.collect()
    assert len(cache) == 0 and views.nbytes() == 0


def _done(value):
    future = concurrent.futures.Future()
    future.set_result(value)
    return future


def test_published_changes_never_interleave_without_a_session_thread():
    """Without a session thread (a notebook, a script) each job publishes from its own thread: two jobs
    finishing together each read and replace ``jobs``, so their changes run one at a time (an interleaving
    lost one slot's end: the slot stayed pending for ever).  The second callback, scheduled while the first
    runs, starts only once the first returned."""
    store = ResultStore(debounce=0)
    log: list[str] = []
    inside, second_ran = threading.Event(), threading.Event()

    def first():
        log.append("first in")
        inside.set()
        second_ran.wait(0.5)  # (it may not run meanwhile: the wait ends at its timeout)
        log.append("first out")

    def second():
        log.append("second")
        second_ran.set()

    threads = [threading.Thread(target=store._schedule, args=(first,))]
    threads[0].start()
    assert inside.wait(WAIT_S)
    threads.append(threading.Thread(target=store._schedule, args=(second,)))
    threads[1].start()
    for thread in threads:
        thread.join(WAIT_S)
    assert log == ["first in", "first out", "second"]


def test_callbacks_queued_before_the_sessions_turn_run_in_that_one_turn_in_order():
    """What the store hands the session's thread (job results, a sorted view's answers, the later cards'
    computations) and is queued before the session gets to it runs in one turn — a served page's one tick,
    one message — in the order queued; one queued during that turn gets a turn of its own; a failing
    callback does not drop the others, and its error is raised."""
    from functools import partial

    turns: list = []
    store = ResultStore(schedule=turns.append, debounce=3600)
    ran: list = []
    try:
        for i in range(3):
            store._schedule(partial(ran.append, i))
        assert len(turns) == 1 and ran == []
        turns.pop()()
        assert ran == [0, 1, 2] and turns == []
        store._schedule(lambda: (ran.append("a"), store._schedule(partial(ran.append, "b"))))
        turns.pop()()
        assert ran[-1] == "a" and len(turns) == 1
        turns.pop()()
        assert ran[-1] == "b" and turns == []

        def fails():
            raise RuntimeError("this callback fails")

        store._schedule(fails)
        store._schedule(partial(ran.append, "after"))
        with pytest.raises(RuntimeError, match="this callback fails"):
            turns.pop()()
        assert ran[-1] == "after" and turns == []
    finally:
        store.close()
