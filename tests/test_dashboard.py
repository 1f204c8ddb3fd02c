"""calviz.analysis and the dashboard (calviz.app) at the Python level: options, recompute-only-what-
changed, in-place updates, background jobs and stale results, upload errors, independent sessions,
Jupyter layout."""

from __future__ import annotations

import html
import io
import json
import re
import threading
import time
import types

import numpy as np
import panel as pn
import pytest

from calviz._dashboard import CalvizApp, dashboard
from calviz._data import InputError, as_calibration_data
from calviz.analysis import AnalysisOptions, MultiReliability, analyze, compute_distance
from calviz.app import store as store_module
from calviz.app import workers as workers_module
from calviz.app.store import VIEW_INPUTS, view_key


def _data(n=2000, power=1.5, seed=0, classes=None):
    rng = np.random.default_rng(seed)
    if classes:
        logits = rng.normal(size=(n, classes)) * 2
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        labels = np.array([rng.choice(classes, p=row) for row in probs])
        return as_calibration_data(labels, probs)
    p = rng.uniform(0.02, 0.98, n)
    return as_calibration_data((rng.random(n) < p**power).astype(int), p)


@pytest.fixture
def app():
    # starts on the analytic preview so that the tests below switch resampling on themselves
    application = CalvizApp(_data(), n_resamples=100, resampling="analytic")
    application.start()
    application.wait()
    yield application
    application.wait()


# -- analysis ---------------------------------------------------------------------------------------


def test_options_validate():
    with pytest.raises(InputError):
        AnalysisOptions(alpha=1.5)
    with pytest.raises(InputError):
        AnalysisOptions(target="nonsense")
    with pytest.raises(InputError):
        AnalysisOptions(n_bins=0)
    with pytest.raises(InputError):
        AnalysisOptions(n=1)
    assert AnalysisOptions().replace(n_bins=7).n_bins == 7


def test_analyze_returns_every_result_and_json():
    data = _data(1500)
    result = analyze(data, AnalysisOptions(n_bins=10, n_resamples=60, resampling="y_only"))
    for name in (
        "reliability",
        "smooth",
        "tcal",
        "tcal_resampled",
        "interval",
        "bootstrap",
        "distance",
        "witness",
    ):
        assert getattr(result, name) is not None, (name, result.errors)
    assert not result.errors
    assert result.summary.n == 1500 and result.summary.n_classes == 2
    assert set(result.timings) >= {"reliability", "tcal", "interval", "distance"}
    text = json.dumps(result.to_dict())
    assert '"options"' in text and '"timings"' in text


def test_analyze_subsample_and_targets():
    data = _data(3000, classes=4)
    result = analyze(data, AnalysisOptions(n=800, target="classwise", class_index=2), resampled=False)
    assert result.summary.n == 800 and result.summary.n_total == 3000
    assert result.summary.target == "classwise"
    assert result.reliability.n == 800
    topk = analyze(
        data, AnalysisOptions(target="topk", top_k=2), resampled=False, views=("interval", "reliability")
    )
    assert topk.interval is not None and len(topk.reliability) == 2  # one diagram per rank
    full = analyze(data, AnalysisOptions(target="full", n_bins=8), resampled=False)
    assert isinstance(full.reliability, MultiReliability) and list(full.reliability.index) == [0, 1, 2, 3]
    assert full.smooth is None and "smooth" not in full.errors  # the smooth curve is for scalar targets
    assert full.witness is not None  # the distance family (top-1 reduction) is still computed
    json.dumps(full.to_dict())


def test_view_key_uses_the_effective_target():
    multi, binary = _data(500, classes=4), _data(500)
    o = AnalysisOptions()
    # auto = top1 on multi-class data; class_index / top_k only count where they are read
    assert view_key("reliability", multi, o) == view_key("reliability", multi, o.replace(target="top1"))
    assert view_key("reliability", multi, o.replace(class_index=3)) == view_key("reliability", multi, o)
    topk = o.replace(target="topk", top_k=2)
    assert view_key("reliability", multi, topk) != view_key("reliability", multi, topk.replace(top_k=3))
    for view in ("tcal", "distance", "smooth"):  # T-Cal tests full; scalar views use the top-1 reduction
        assert view_key(view, multi, topk) == view_key(view, multi, topk.replace(top_k=3, target="full"))
    assert view_key("distance", multi, topk) == view_key("distance", multi, o)
    # full calibration's interval is the top-K interval
    assert view_key("interval", multi, o.replace(target="full")) == view_key("interval", multi, topk.replace(
        top_k=4))
    # binary data: topk / full reliability is the binary diagram
    assert view_key("reliability", binary, o.replace(target="full")) == view_key("reliability", binary, o)
    assert "top_k" not in VIEW_INPUTS["tcal"] and "top_k" not in VIEW_INPUTS["distance"]


def test_view_key_uses_seed_only_for_subsamples():
    data = _data(500)
    a, b = AnalysisOptions(seed=1), AnalysisOptions(seed=2)
    assert view_key("reliability", data, a) == view_key("reliability", data, b)
    assert view_key("reliability", data, a.replace(n=100)) != view_key("reliability", data, b.replace(n=100))
    assert view_key("tcal_resampled", data, a) != view_key("tcal_resampled", data, b)
    assert "n_bins" not in VIEW_INPUTS["tcal"] and "n_bins" not in VIEW_INPUTS["distance"]


# -- recompute only the views whose inputs changed --------------------------------------------------


def _delta(app, change):
    calls = app.store.calls
    before = dict(calls)
    app.controls.param.update(**change)
    app.wait()
    return {k: calls.get(k, 0) - before.get(k, 0) for k in set(calls) | set(before)
            if calls.get(k, 0) != before.get(k, 0)}


def test_bin_count_recomputes_only_binned_views(app):
    delta = _delta(app, {"n_bins": 23})
    # classical: the MCE and ACE beside the classical tests use the bins too
    assert delta == {"reliability": 1, "interval": 1, "bootstrap": 1, "classical": 1}, delta


def test_alpha_recomputes_dependent_views_not_distance(app):
    delta = _delta(app, {"alpha": 0.1})
    delta.pop("smooth_curve", None)  # the band-less curve shown while the band (α) is resampled
    assert set(delta) == {"reliability", "smooth", "tcal", "interval", "bootstrap"}, delta
    assert all(v == 1 for v in delta.values())


def test_kernel_recomputes_only_smooth(app):
    # the curve at once, its resampled band in the background
    # (and the smooth-curve summaries ICI, E50, E90, Emax of the same curve)
    assert _delta(app, {"kernel": "logit_gaussian"}) == {"smooth_curve": 1, "smooth": 1,
                                                         "smooth_summaries": 1}


def test_the_smooth_curve_legend_and_settings_follow_the_checkbox(app):
    view = app.views[0]
    assert view.smooth_legend.visible and view.sources["smooth"].data["x"].size
    settings = [w for w in app.widgets().select(pn.widgets.Widget) if w.name in (
        "kernel", "smooth-curve bandwidth (0 = automatic)")]
    assert len(settings) == 2 and not any(w.disabled for w in settings)
    app.controls.show_smooth = False
    assert not view.smooth_legend.visible and not view.sources["smooth"].data["x"].size
    assert all(w.disabled for w in settings)  # the curve's settings wait for the curve
    app.controls.show_smooth = True
    assert view.smooth_legend.visible and not any(w.disabled for w in settings)


def test_the_tcal_card_says_a_topk_target_is_tested_through_the_full_vector():
    application = CalvizApp(_data(600, classes=4), target="topk", top_k=2, resampling="analytic")
    application.start()
    application.wait()
    assert application.store.tcal.result.target == "full"
    assert "T-Cal has no top-k form: it tests the full probability vector" in application.views[1].note.object


def test_bandwidth_drives_the_smooth_curve_only(app):
    """The bandwidth control is the smooth curve's: the kCE of the distance family has the fixed Laplace
    bandwidth 1 (its consistent form), so a bandwidth change recomputes the curve and nothing else, and
    the distance view's caption says so."""
    assert _delta(app, {"bandwidth": 0.05}) == {"smooth_curve": 1, "smooth": 1, "smooth_summaries": 1}
    assert "bandwidth" not in VIEW_INPUTS["distance"]
    assert "bandwidth 1 (the smooth-curve bandwidth option does not change it)" in app.views[3].note.object
    bounds = {bw: compute_distance(app.data, AnalysisOptions(bandwidth=bw))[0] for bw in (0.05, 0.4)}
    assert bounds[0.05].measures["laplace_kce"].value == bounds[0.4].measures["laplace_kce"].value


def test_returning_to_previous_value_uses_cache(app):
    _delta(app, {"n_bins": 30})
    assert _delta(app, {"n_bins": 15}) == {}


def test_status_line_shows_n_k_and_time(app):
    app.controls.n = 1000
    app.wait()
    text = app.status.text.object
    assert "1,000 of 2,000" in text and "<b>K</b> = 2" in text and " ms" in text


# -- in-place updates ----------------------------------------------------------------------------------


def _figures(doc) -> set:
    from bokeh.models import Plot

    return {m.id for m in doc.models if isinstance(m, Plot)}


def test_changes_replace_data_not_figures(app):
    """α, bins, n, scheme, resampling and seed update the existing figures' data sources: the page keeps
    the same Bokeh figures; an α change leaves the histogram's and the witness's data untouched."""
    from bokeh.document import Document

    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    figures = _figures(doc)
    reliability = app.views[0]
    hist, witness, bars = (reliability.sources[k].data for k in ("hist", "witness", "bars"))
    app.controls.alpha = 0.1
    app.wait()
    assert reliability.sources["hist"].data is hist and reliability.sources["witness"].data is witness
    assert reliability.sources["bars"].data is not bars
    for change in ({"n_bins": 9}, {"n": 1500}, {"scheme": "equal_mass"}, {"resampling": "y_only"},
                   {"seed": 3}):
        app.controls.param.update(**change)
        app.wait()
        assert _figures(doc) == figures, change
    assert len(reliability.sources["hist"].data["count"]) == 9


def _sent(events, model) -> list:
    """The changes of ``model`` among recorded document events: ``data`` per data replacement, else the
    attribute changed."""
    from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent

    return [("data" if isinstance(e, ColumnDataChangedEvent) else e.attr) for e in events
            if isinstance(e, (ColumnDataChangedEvent, ModelChangedEvent)) and e.model is model]


def test_an_alpha_change_sends_only_what_it_changes(monkeypatch):
    """Large data (the analytic T-Cal is a background job too, so no stand-in is shown while the resampled
    T-Cal is re-decided at the new α from its stored resamples): the T-Cal figure keeps the test drawn until
    the new decision arrives — its source is sent once and its x axis (the same scales) never, instead of
    being emptied and refilled — and the views whose numbers α does not change (the histogram, the smCE
    witness, the distance bounds, the diagram's axes) send nothing, while those whose numbers it changes
    (the bars' intervals, the smooth band, T-Cal, the ECE interval) are updated."""
    from bokeh.document import Document

    import calviz.analysis.views as registry

    monkeypatch.setattr(registry, "LARGE_ROWS", 1000)
    app = CalvizApp(_data(3000), n_resamples=100)  # (Y-only resampling: T-Cal re-decided in a job)
    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    app.start()
    app.wait()
    reliability, tcal, interval, distance = app.views
    assert tcal.source.data["statistic"].size and "α = 0.05;" in tcal.note.object
    drawn = tcal.source.data["statistic"]
    events, release, redecide = [], threading.Event(), app.store._redecided

    def held(view, data, options, slot=None, key=None):
        if slot == "tcal":
            release.wait()  # the job waits until its pending state has been checked (an event, no clock)
        return redecide(view, data, options, slot, key)

    monkeypatch.setattr(app.store, "_redecided", held)
    doc.on_change(events.append)
    try:
        app.controls.alpha = 0.1
        assert app.store.tcal.pending and app.store.tcal.result is None  # (nothing to show meanwhile)
        assert "(the test at α = 0.05 is shown meanwhile)" in tcal.note.object
        assert not _sent(events, tcal.source)
    finally:
        release.set()
    app.wait()
    assert "α = 0.1;" in tcal.note.object and not app.store.tcal.pending
    np.testing.assert_array_equal(tcal.source.data["statistic"], drawn)  # (α only re-decides)
    assert _sent(events, tcal.source) == ["data"]
    assert not _sent(events, tcal.figure.x_range)
    assert _sent(events, tcal.figure.title) == ["text", "text"]  # the job running, then its verdict
    unchanged = [reliability.sources["hist"], reliability.sources["witness"], distance.source, distance.band,
                 distance.figure.x_range, distance.figure.y_range, distance.figure.title,
                 *(r for f in reliability.figures for r in (f.x_range, f.y_range))]
    assert not [m for m in unchanged if _sent(events, m)]
    for source in (reliability.sources["bars"], reliability.sources["smooth"], interval.source):
        assert _sent(events, source) == ["data"]


def test_a_target_switch_empties_the_tcal_figure_but_keeps_its_axes(monkeypatch):
    """Back to top-1 from a class (large data: nothing to show while T-Cal runs for the target): the T-Cal
    figure is emptied while its test runs, its axes are left as they are — the top-1 test's scales are the
    class's, so its x axis sends nothing, instead of a reset to the empty figure's and back."""
    from bokeh.document import Document

    import calviz.analysis.views as registry

    monkeypatch.setattr(registry, "LARGE_ROWS", 1000)
    app = CalvizApp(_data(3000, classes=4), n_resamples=100, target="classwise", class_index=2)
    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    app.start()
    app.wait()
    tcal = app.views[1]
    events, release, original = [], threading.Event(), store_module._run_remote

    def run(view, data, options, **kwargs):
        if view == "tcal_resampled":
            release.wait()  # the job waits until its pending state has been checked (an event, no clock)
        return original(view, data, options, **kwargs)

    monkeypatch.setattr(store_module, "_run_remote", run)
    doc.on_change(events.append)
    try:
        app.controls.target = "top1"
        assert app.store.tcal.pending and app.store.tcal.result is None and not tcal.source.data["bins"].size
    finally:
        release.set()
    app.wait()
    assert app.store.tcal.result.target == "top1" and tcal.source.data["bins"].size
    assert _sent(events, tcal.source) == ["data", "data"]  # emptied, then the top-1 test
    assert not _sent(events, tcal.figure.x_range)


def test_sidebar_applies_data_changes_without_panels_wait(app):
    """Panel applies a browser change to a widget 50 ms after it arrives (``Reactive._debounce``), to fold
    bursts; the controls whose change only updates data apply it on the next tick (the store debounces
    the slow work itself), the target's too (its new figures go in the views' held message); the dataset
    keeps Panel's wait."""
    wait = {w.name: w._debounce for w in app.widgets().select(pn.widgets.Widget)}
    live = ["bins (m)", "level α", "sample size n (subsample)", "kernel", "T-Cal critical values", "seed",
            "bootstrap resamples", "class (classwise)", "k (top-1-to-k)", "calibration target"]
    assert {name: wait[name] for name in live} == dict.fromkeys(live, 0)
    assert wait["dataset"] == 50
    assert pn.widgets.IntSlider._debounce == 50  # the class default (other Panel objects) is untouched


def test_target_switch_rebuilds_only_the_reliability_figures():
    from bokeh.document import Document

    app = CalvizApp(_data(1500, classes=3), n_resamples=60, resampling="analytic")
    app.start()
    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    others = {v.figure.id for v in app.views[1:]}
    app.controls.target = "full"
    app.wait()
    assert others <= _figures(doc)
    assert app.views[0].structure[0] == "class"


# -- background jobs: never stale ----------------------------------------------------------------------


def test_resampled_tcal_replaces_analytic(app, monkeypatch):
    release = threading.Event()
    original = store_module._run_remote

    def run(view, data, options, **kwargs):
        if view == "tcal_resampled":
            release.wait()  # resampling runs until the analytic result has been checked (an event, no time)
        return original(view, data, options, **kwargs)

    monkeypatch.setattr(store_module, "_run_remote", run)
    try:
        app.controls.resampling = "y_only"
        assert "analytic" in app.views[1].note.object  # shown at once, while resampling runs
    finally:
        release.set()
    app.wait()
    assert "Y-only resampling" in app.views[1].note.object
    assert app.store.calls["tcal_resampled"] == 1


def test_slow_stale_job_overtaken_by_a_fast_one_is_never_painted(app, monkeypatch):
    """A slow resampling job (α = 0.06) is superseded by a fast one (α = 0.07) that finishes first: the
    view shows the fast one's result, and still shows it after the slow one has finished."""
    release, slow_started = threading.Event(), threading.Event()
    original = store_module._run_remote

    def run(view, data, options, **kwargs):
        if view == "tcal_resampled" and options.alpha == 0.06:
            slow_started.set()
            release.wait()  # the slow job: until the fast one is shown (an event, not a time)
        return original(view, data, options, **kwargs)

    monkeypatch.setattr(store_module, "_run_remote", run)
    try:
        app.controls.param.update(resampling="y_only", alpha=0.06)
        assert slow_started.wait(600)  # the slow job is running (a hang guard, not a speed requirement)
        app.controls.alpha = 0.07
        deadline = time.monotonic() + 600  # (a hang guard only)
        while app.store.tcal.pending and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app.store.tcal.result.alpha == 0.07 and app.store.tcal.result.method == "y_only"
    finally:
        release.set()
    app.wait()
    assert app.store.tcal.result.alpha == 0.07
    assert "Y-only resampling" in app.views[1].note.object and not app.store.jobs
    app.controls.alpha = 0.06  # wanted again: shown once computed
    app.wait()
    assert app.store.tcal.result.alpha == 0.06 and not app.store.tcal.pending


def test_superseded_job_never_starts(monkeypatch):
    """A drag: each value supersedes the last within the debounce time, so only the last value's job
    starts.  The debounce ends when the drag has ended (an event), not after 0.3 s of wall-clock time,
    which four changes can outlast on a loaded machine (each recomputes the fast views on this thread)."""
    app = CalvizApp(_data(), n_resamples=100, resampling="analytic")
    app.store._debounce = 0.3
    app.start()
    app.wait()
    started = []
    original = store_module._run_remote
    drag_over = threading.Event()

    def run(view, *args, **kwargs):
        started.append((view, args[1].alpha))
        return original(view, *args, **kwargs)

    def sleep(seconds):
        if threading.current_thread().name == "calviz-job":  # a job's debounce: until the drag is over
            drag_over.wait(timeout=120)
        else:
            time.sleep(seconds)

    monkeypatch.setattr(store_module, "_run_remote", run)
    monkeypatch.setattr(store_module, "time", types.SimpleNamespace(
        sleep=sleep, monotonic=time.monotonic, perf_counter=time.perf_counter))
    app.controls.resampling = "y_only"
    for alpha in (0.06, 0.07, 0.08, 0.09):  # a drag: each value supersedes the last within the debounce time
        app.controls.alpha = alpha
    drag_over.set()
    app.wait()
    assert {a for view, a in started if view == "tcal_resampled"} == {0.09}, started
    assert app.store.tcal.result.alpha == 0.09


def test_resting_served_session_caches_the_other_binning_scheme(app, monkeypatch):
    """Once the controls rest, a served session (one with a debounce) computes the diagram of the binning
    scheme it does not show, so toggling the scheme draws from the cache; the values a drag passes
    through never get one; a notebook session (no debounce) computes nothing unasked."""

    def cached(n_bins, scheme):
        options = app.controls.options(app.data.n).replace(n_bins=n_bins, scheme=scheme)
        return app.store.cached("reliability", app.data, options) is not None

    app.controls.n_bins = 20
    app.wait()
    assert not cached(20, "equal_mass")  # the fixture's session is a notebook's
    app.store._debounce = 0.3
    monkeypatch.setattr(store_module, "PREFETCH_DELAY_S", 1.0)  # a drag's values come well within it
    for n_bins in (21, 22, 23):  # a drag
        app.controls.n_bins = n_bins
    app.wait()
    assert cached(23, "equal_mass") and not cached(21, "equal_mass") and not cached(22, "equal_mass")
    computed = app.store.calls["reliability"]
    app.controls.scheme = "equal_mass"
    app.wait()
    assert app.store.calls["reliability"] == computed
    assert app.store.reliability.result.scheme == "equal_mass" and app.store.reliability.result.n_bins == 23


def test_status_line_times_each_change_itself(app):
    """The status line's "last update" is the latest change's own computations — a background job's
    time joins them when it ends — and a change served wholly from the cache says so, instead of
    repeating the previous change's timings."""
    app.controls.n_bins = 20
    app.wait()
    first = dict(app.store.timings)
    assert "reliability" in first and re.search(r"\d m?s\b", app.status.text.object.split("last update")[1])
    app.controls.n_bins = 15  # the fixture's own results: every view from the cache
    app.wait()
    assert app.store.timings == {}
    assert "from the cache" in app.status.text.object.split("last update")[1], app.status.text.object
    app.controls.resampling = "y_only"  # resampled T-Cal: a background job; its time is reported
    app.wait()
    assert "tcal_resampled" in app.store.timings and "from the cache" not in app.status.text.object


def test_stopping_a_worker_resolves_every_job_it_held():
    """Stopping a session's jobs resolves every one of them — the running one fails with
    ``BrokenProcessPool`` (the job threads then run it again or drop it), the waiting ones are cancelled,
    also those queued behind one that was cancelled while it waited — so no job thread waits out the job
    time limit.  (One process, so the session's later jobs wait in its queue: no race with the pool.)"""
    import concurrent.futures
    from concurrent.futures.process import BrokenProcessPool

    pool, session = workers_module.WorkerPool(1, 1 << 30), object()
    try:
        running = pool.submit(session, time.sleep, (600,), 900.0)
        queued = [pool.submit(session, time.sleep, (0,), 60.0) for _ in range(4)]
        assert queued[2].cancel()
        pool.stop_session(session)
        for job in (running, *queued):
            with pytest.raises((concurrent.futures.CancelledError, BrokenProcessPool)):
                job.result(timeout=120)  # (a hang guard: they are resolved at once)
    finally:
        pool.shutdown()


def test_progress_is_visible_while_jobs_run(app):
    # the labels as the store publishes them: a job on 2,000 rows can finish (and leave ``jobs``) on its
    # own thread before this thread reads ``jobs`` again on a busy machine
    published = []
    watcher = app.store.param.watch(lambda event: published.extend(event.new.values()), "jobs")
    try:
        app.controls.resampling = "y_only"
    finally:
        app.store.param.unwatch(watcher)
    assert any(label.startswith("T-Cal (") for label in published)  # with rows and duration
    app.wait()
    assert not app.store.jobs and not app.status.progress.visible


# -- data: upload path -------------------------------------------------------------------------------


def _csv(n=400, seed=1) -> bytes:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, n)
    y = (rng.random(n) < p).astype(int)
    lines = ["y_true,y_prob"] + [f"{a},{b:.6f}" for a, b in zip(y, p, strict=True)]
    return ("\n".join(lines) + "\n").encode()


def test_bad_upload_keeps_previous_data(app):
    data_before = app.data
    assert not app.load_file(b"y_true,y_prob\n1,0.5\n0,banana\n", "bad.csv")
    assert app.status.alert.visible and "bad.csv" in app.status.alert.object
    assert ". The previous dataset stays loaded." in app.status.alert.object  # (one sentence each)
    assert ".. The previous" not in app.status.alert.object
    assert app.data is data_before
    app.controls.n_bins = 9  # the app keeps working, and the alert goes with the next change
    app.wait()
    assert app.store.calls["reliability"] >= 2
    assert not app.status.alert.visible and app.status.alert.object == ""
    # ... a change of the comparison controls too
    assert not app.load_file(b"y_true,y_prob\n1,0.5\n0,banana\n", "bad.csv")
    assert app.status.alert.visible
    app.comparison.controls.mode = "recalibration"
    app.wait()
    assert not app.status.alert.visible


def test_upload_over_size_limit_is_refused(app):
    app.upload_limit = 100
    assert not app.load_file(b"x" * 101, "big.csv")
    assert "upload limit" in app.status.alert.object


def test_valid_upload_replaces_data_and_clears_error(app):
    app.load_file(b"garbage", "bad.npy")
    assert app.status.alert.visible
    assert app.load_file(_csv(400), "mine.csv")
    assert not app.status.alert.visible
    assert app.data.n == 400 and app.controls.n == 400
    assert app.controls.dataset == "uploaded: mine.csv"
    assert "400 of 400" in app.status.text.object


def test_a_tiny_upload_is_loaded_with_a_visible_warning(app):
    assert app.load_file(_csv(5), "tiny.csv")
    assert app.data.n == 5 and app.controls.dataset == "uploaded: tiny.csv"
    assert app.status.alert.visible and "Few rows." in app.status.alert.object
    assert "Only 5 rows" in app.status.alert.object
    assert app.load_file(_csv(400), "mine.csv") and not app.status.alert.visible  # a full sample: no note


# -- sessions, Jupyter ---------------------------------------------------------------------------------


def test_two_apps_do_not_share_state():
    a, b = CalvizApp(_data(600)), CalvizApp(_data(600, seed=5))
    a.start()
    b.start()
    a.controls.n_bins = 40
    assert b.controls.n_bins == 15
    assert a.views[0].pane.object is not b.views[0].pane.object
    assert a.store._cache is not b.store._cache
    a.wait()
    b.wait()


def test_dashboard_returns_inline_layout():
    data = _data(500)
    layout = dashboard(data.labels, data.probs, n_bins=8, alpha=0.1)
    assert isinstance(layout, pn.Row)
    assert layout.app.controls.n_bins == 8 and layout.app.controls.alpha == 0.1
    model = layout.get_root()  # renders as a Bokeh model (what a notebook displays)
    assert model is not None
    assert layout.app.store.distance.result is not None  # the first results are there when it renders
    layout.app.wait()


def test_multiclass_targets_and_class_selector():
    app = CalvizApp(_data(1500, classes=3))
    app.start()
    app.controls.target = "classwise"
    app.controls.class_index = 2
    app.wait()
    assert app.controls.param.class_index.bounds == (0, 2)
    assert "classwise" in app.status.text.object
    app.controls.target = "topk"
    app.controls.top_k = 3
    app.wait()
    assert app.store.interval.result is not None


def _legend_labels(reliability) -> list[str]:
    main = reliability.figures[0]
    return [item.label.value for legend in main.legend for item in legend.items]


def test_topk_and_full_reliability_views_and_what_they_recompute():
    app = CalvizApp(_data(1500, classes=3), n_resamples=60, resampling="analytic")
    app.start()
    app.wait()
    reliability = app.views[0]
    # top-1 → top-k: the per-rank diagram, T-Cal of the full vector, the top-k interval; the distance
    # family keeps using the top-1 reduction and the smooth curve is not computed for top-k
    delta = _delta(app, {"target": "topk"})
    assert delta == {"reliability": 1, "tcal": 1, "interval": 1, "bootstrap": 1}, delta
    assert reliability.structure == ("rank", ("rank 1 (top-1)", "rank 2"))
    assert len(reliability.figures) == 2  # per-rank curves + their histograms (no witness panel)
    assert _legend_labels(reliability) == ["rank 1 (top-1)", "rank 2"]
    note = reliability.note.object
    assert "one curve per rank" in note and "omitted" in note and "top-1 reduction" not in note
    assert "top-1 reduction" in app.views[3].note.object
    # k: the reliability diagram and the interval only
    delta = _delta(app, {"top_k": 3})
    assert delta == {"reliability": 1, "interval": 1, "bootstrap": 1}, delta
    assert _legend_labels(reliability)[-1] == "rank 3"
    # top-3 of K = 3 → full: same T-Cal and interval (top-K), only the reliability view changes
    assert _delta(app, {"target": "full"}) == {"reliability": 1}
    assert reliability.structure == ("class", ("class 0", "class 1", "class 2"))
    assert [f.title.text.split(" · ")[0] for f in reliability.figures] == ["class 0", "class 1", "class 2"]
    assert "one panel per class" in reliability.note.object
    # bins: recomputed, drawn into the same figures
    figures = list(reliability.figures)
    assert _delta(app, {"n_bins": 7}) == {"reliability": 1, "interval": 1, "bootstrap": 1, "classical": 1}
    assert reliability.figures == figures
    # back to top-1: everything cached, the scalar diagram with its smooth curve again
    assert _delta(app, {"target": "top1", "n_bins": 15}) == {}
    assert reliability.structure == ("scalar",) and len(reliability.figures) == 3
    assert "Blue: smooth curve" in reliability.note.object
    exported = app.analysis()
    assert not isinstance(exported.reliability, MultiReliability) and exported.smooth is not None


def test_binary_data_topk_is_the_binary_diagram(app):
    app.controls.target = "topk"
    app.wait()
    assert app.views[0].structure == ("scalar",)
    assert "binary diagram" in app.views[0].note.object
    assert "omitted" not in app.views[0].note.object


def test_export_report_html(app):
    from calviz.present.report import DEFAULT_REPORT_NAME

    out = app.export_report()
    assert isinstance(out, io.BytesIO)
    assert b"<html" in out.getvalue()[:2000].lower()
    # the button's file name is that of calviz.report and calviz report (test_cli)
    buttons = [w for w in app.widgets().select(pn.widgets.FileDownload)]
    assert [b.filename for b in buttons] == [DEFAULT_REPORT_NAME]


def test_views_compute_no_statistics():
    """The views read the store and draw: no engine module, no analysis compute function, no thread."""
    import ast
    import inspect

    from calviz.app import page, sidebar, sources, views

    for module in (views, page, sidebar, sources):
        tree = ast.parse(inspect.getsource(module))
        names = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                 for alias in node.names}
        modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not names & {"concurrent.futures", "multiprocessing"}, module
        assert not {m for m in modules if m} & {"calviz._ece", "calviz._tcal", "calviz._intervals",
                                                "calviz._distance", "calviz._smooth", "concurrent.futures"}
        assert not any(n.startswith("compute_") or n in ("run_view", "analyze") for n in names), module


def test_calviz_dashboard_is_callable_even_after_submodule_import(monkeypatch):
    import sys

    import calviz

    monkeypatch.delitem(sys.modules, "calviz.dashboard", raising=False)
    monkeypatch.setitem(vars(calviz), "dashboard", calviz.dashboard)  # restored afterwards
    with pytest.warns(DeprecationWarning, match="calviz.dashboard is deprecated"):
        import calviz.dashboard as module  # the old path binds the package attribute to the module

    data = _data(300)
    assert calviz.dashboard is module and callable(module)
    layout = calviz.dashboard(data.labels, data.probs)
    assert isinstance(layout, pn.Row)
    layout.app.wait()


# -- server files, uploads -----------------------------------------------------------------------------


def test_paths_only_under_the_data_root_with_one_message(tmp_path):
    from calviz.app.sources import path_under_root

    root = tmp_path / "root"
    (root / "preds").mkdir(parents=True)
    (tmp_path / "secret.parquet").write_bytes(b"x")
    (root / "link").symlink_to(tmp_path / "secret.parquet")
    assert path_under_root("preds", root) == (root / "preds").resolve()
    assert path_under_root(str(root / "preds"), root) == (root / "preds").resolve()
    messages = set()
    for path in ("../secret.parquet", str(tmp_path / "secret.parquet"), "link", "missing", "/etc/shadow",
                 "http://example.com/x.parquet", "file:///etc/passwd", "s3://bucket/x"):
        with pytest.raises(InputError) as info:
            path_under_root(path, root)
        messages.add(str(info.value).replace(path, "PATH"))
    assert messages == {"PATH: no readable Parquet file or directory under the data root"}


def test_the_dask_box_needs_a_data_root():
    assert "Open on Dask" not in str(CalvizApp(_data(300)).widgets())
    app = CalvizApp(_data(300), data_root="/nonexistent-root")
    assert any(getattr(w, "name", "") == "Open on Dask" for w in app.widgets().objects)
    app.open_dask_in_background("../../etc", "local", {})
    assert "under the data root" in app.status.alert.object


def test_refusals_change_the_status_only_inside_the_apps_hold(monkeypatch):
    """The sidebar's refusals (Open on Dask, an upload, a dataset) change the status line's Bokeh Divs
    only inside the app's hold: Panel may run a button's click outside the session's document lock (when
    another widget's change is pending), where a raw Bokeh change raised in Bokeh's session and the
    refusal never reached the page; held, Panel sends the changes as one patch."""
    from conftest import count_hold_depth

    app = CalvizApp(_data(300), data_root="/nonexistent-root")
    depth, changes = count_hold_depth(app, monkeypatch), []
    for text in (app.status.alert, app.status.progress_text, app.status.text):
        for attr in ("text", "visible"):
            text.div.on_change(attr, lambda attr, old, new: changes.append((attr, depth[0])))
    widgets = {getattr(w, "name", ""): w for w in app.widgets().objects}
    button = widgets["Open on Dask"]
    button.clicks += 1  # the path box is empty
    assert "Enter the path" in app.status.alert.object
    app.status.clear_error()
    changes.clear()
    widgets["Parquet file or directory (on this machine)"].value = "/nonexistent/predictions"
    button.clicks += 1
    assert "under the data root" in app.status.alert.object
    assert not app.load_file(b"", "empty.csv")

    def unreadable(name):
        raise OSError("gone")

    monkeypatch.setattr(app, "_load", unreadable)
    app._on_dataset(type("Event", (), {"new": "broken"})())  # as the dataset selector's watcher
    assert "Could not load dataset" in app.status.alert.object
    assert changes and all(d > 0 for _, d in changes), changes


def test_empty_upload_and_long_messages_are_refused_readably(app):
    assert not app.load_file(b"", "empty.csv")
    assert "empty.csv: the file is empty" in app.status.alert.object
    cell = "9" * 100_000
    assert not app.load_file(f"y_true,y_prob\n1,{cell}x\n".encode(), "huge.csv")
    assert len(app.status.alert.object) < 1000


def test_a_job_over_the_time_limit_is_stopped_and_says_so():
    app = CalvizApp(_data(3000), n_resamples=5000, resampling="analytic")
    app.start()
    # a limit no resampled test can meet (5000 consistency resamples of 3000 rows take far longer than a
    # millisecond on any machine), so the stop does not depend on the machine's speed
    app.store._job_limit = 0.001
    app.controls.resampling = "consistency"
    app.wait()
    assert "T-Cal: stopped: took longer than 0.001 s" in app.views[1].note.object
    assert app.store.tcal.result.method == "analytic" and not app.store.jobs  # the analytic test stays
    assert app.store.timings == {"tcal_resampled": 0.001}  # the status line reports the time it was given
    app.store._job_limit = 120.0
    app.controls.alpha = 0.06  # the session's worker was replaced: the next job runs
    app.wait()
    assert app.store.tcal.result.method == "consistency"


# -- words: what the page says -------------------------------------------------------------------------


def _page_text(app) -> str:
    """Every string the page sends to the browser: the Bokeh document of the whole layout (titles, hover
    tooltips, Markdown, widget labels, tooltips of the ⓘ icons)."""
    from bokeh.core.json_encoder import serialize_json
    from bokeh.document import Document

    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    strings = []

    def collect(node) -> None:
        if isinstance(node, str):
            strings.append(html.unescape(html.unescape(node)))  # Markdown panes escape their HTML once more
        elif isinstance(node, dict):
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(json.loads(serialize_json(doc.to_json())))
    return "\n".join(strings)


def test_page_names_papers_and_explains_every_view(app):
    from calviz import plots

    for target in ("auto", "topk", "full"):
        app.controls.target = target
        app.wait()
        text = _page_text(app)
        assert not re.search(r"seed[ -]?00", text, flags=re.I) and "estimators.md" not in text
    for view in ("reliability", "tcal", "interval", "distance"):
        sentence, maths = plots.VIEW_EXPLANATIONS[view]
        assert maths[:60] in text and sentence in text, view  # the sentence, and the mathematics in a tooltip
    assert "Lee, Huang, Hassani and Dobriban" in text and "Sun, Chaudhari, Barnett and Dobriban" in text


def test_upload_messages_name_the_sidebar_controls(app):
    rows = b"y_true,p_0,p_1\n0,0.5,0.6\n1,0.2,0.8\n1,0.3,0.7\n"
    assert not app.load_file(rows, "rows.csv")
    alert = app.status.alert.object
    assert "rescale rows to sum to 1" in alert and "renormalize=True" not in alert
    assert app.load_file(rows, "rows.csv", renormalize=True)  # what the sidebar box passes
    over = b"y_true,p_0,p_1\n0,1.045,0.055\n1,0.22,0.88\n1,0.33,0.77\n"  # rows summing to 1.1, one value > 1
    assert not app.load_file(over, "over.csv")
    assert "rescale rows to sum to 1" in app.status.alert.object and "logits" not in app.status.alert.object
    scores = b"y_true,p_0,p_1\n0,2.5,-1.0\n1,-0.3,0.8\n1,0.1,3.0\n0,1.0,1.0\n"
    assert not app.load_file(scores, "scores.csv")
    assert "scores are logits" in app.status.alert.object
    assert app.load_file(scores, "scores.csv", logits=True)
    assert app.data.n == 4 and np.allclose(app.data.probs.sum(axis=1), 1.0)


def test_resamples_box_keeps_its_bounds_visibly(app):
    box = next(w for w in app.widgets().select(pn.widgets.IntInput) if w.name == "bootstrap resamples")
    low, high = app.controls.param.n_resamples.bounds
    box.value = high * 3
    assert box.value == high and app.controls.n_resamples == high
    note = next(p.object for p in app.widgets().select(pn.pane.Bokeh) if "must be between" in p.object.text)
    assert note.visible and str(high) in note.text
    box.value = 300
    assert app.controls.n_resamples == 300 and not note.visible
    box.value = 1
    assert box.value == low and app.controls.n_resamples == low


def test_resamples_note_changes_only_inside_the_apps_hold(monkeypatch):
    """The resamples box's note changes with the box and the views in one held patch, as the other sidebar
    callbacks (see test_refusals_change_the_status_only_inside_the_apps_hold)."""
    from conftest import count_hold_depth

    app = CalvizApp(_data(300), n_resamples=100, resampling="analytic")
    depth, changes = count_hold_depth(app, monkeypatch), []
    box = next(w for w in app.widgets().select(pn.widgets.IntInput) if w.name == "bootstrap resamples")
    note = next(p.object for p in app.widgets().select(pn.pane.Bokeh) if p.object.text == "")
    for attr in ("text", "visible"):
        note.on_change(attr, lambda attr, old, new: changes.append((attr, depth[0])))
    box.value = app.controls.param.n_resamples.bounds[1] * 3
    box.value = 300
    assert [attr for attr, _ in changes] == ["text", "visible", "text", "visible"]
    assert all(d > 0 for _, d in changes), changes


def test_a_worker_whose_server_died_while_it_started_exits_at_once():
    """The worker is told its server's pid: started after that server died (re-parented), it exits before
    its first job instead of waiting for a parent-death signal that can no longer come."""
    import subprocess
    import sys

    code = (
        "import os; from calviz.app.workers import _warm_worker; "
        "_warm_worker(os.getppid()); print('alive with its server', flush=True); "
        "_warm_worker(os.getppid() + 1); print('alive without it')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["alive with its server"], done.stdout


def test_controls_that_depend_on_the_data_can_be_given_with_it():
    """class_index, top_k and n are bounded by the data (10 classes, 600 rows here): given with the data,
    they are checked against its bounds and used from the first computation on."""
    app = CalvizApp(_data(600, classes=10), target="classwise", class_index=7, top_k=4, n=300, n_bins=12)
    controls = app.controls
    assert (controls.class_index, controls.top_k, controls.n, controls.n_bins) == (7, 4, 300, 12)
    options = controls.options(app.data.n)
    assert (options.target, options.class_index, options.top_k, options.n) == ("classwise", 7, 4, 300)
    layout = dashboard(_data(600, classes=10), target="topk", top_k=4)
    assert layout.app.controls.top_k == 4
    # n beyond the rows means all rows, as for analyze(n=...) (it was refused: "an int in [20, 600]")
    everything = CalvizApp(_data(600, classes=10), n=5000)
    assert everything.controls.n == 600 and everything.controls.options(600).n is None


def _refused_controls():
    from calviz.app.controls import Controls

    cases = [("class_index", 10), ("top_k", 11), ("n", 1),  # bounds of 10 classes, 600 rows (n ≥ 2)
             ("bandwidth", 5e-5)]  # inside the slider's range but below the smooth diagram's smallest
    for name in Controls.ANALYSIS:
        rule = Controls.rule(Controls.param[name])
        cases += [(name, value) for value in ("__invalid__", 2.5, -1, 10**6, None) if not rule.accepts(value)
                  and name not in Controls.DATA_DEPENDENT][:3]
    return cases


@pytest.mark.parametrize("name, value", _refused_controls())
def test_a_bad_control_gives_the_uniform_message(name, value):
    with pytest.raises(InputError, match=rf"^The '{name}' parameter of CalvizApp must be .+; got .+\.$"):
        CalvizApp(_data(600, classes=10), **{name: value})


def test_an_unknown_control_names_the_controls():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nbins'; the controls are dataset, .*"):
        dashboard(_data(300), nbins=10)


def test_a_target_the_data_cannot_have_is_not_offered_and_a_refused_setting_is_said(app):
    """"binary" on 4-class data froze every view with nothing on the page (the error only reached the
    server log), and so did switching a binary model's "binary" target to multiclass data."""
    assert app.data.is_binary and "binary" in app.controls.param.target.objects
    app.controls.target = "binary"
    app.wait()
    app._add_dataset("four classes", _data(classes=4))
    app.wait()
    assert app.controls.target == "auto" and app.data.n_classes == 4
    assert "binary" not in app.controls.param.target.objects
    assert app.status.data is app.data and not app.status.alert.visible
    # a setting refused anyway (here forced past the selector) is said, and the control goes back
    n_calls = app.store.calls["reliability"]
    app.controls.param.target.objects = [*app.controls.param.target.objects, "binary"]
    app.controls.target = "binary"
    app.wait()
    assert app.controls.target == "auto"
    assert app.status.alert.visible and "Setting refused." in app.status.alert.object
    assert "binary target needs binary predictions" in app.status.alert.object
    app.controls.n_bins = 9  # the app keeps working
    app.wait()
    assert app.store.calls["reliability"] > n_calls and not app.status.alert.visible


def test_tcal_title_and_status_line_fit_their_place(app):
    """The T-Cal card's title is the decision and p-value (the caption names the method: at 1280 px a
    title with both was cut at the card's edge); the status line names computations in words."""
    app.controls.show_smooth = True
    app.wait()
    title = app.views[1].figure.title.text
    assert title.split(" · ")[0] in ("REJECT", "not rejected", "UNDECIDED") and "(" not in title, title
    assert "T-Cal (analytic critical values)" in app.views[1].note.object
    assert "_" not in app.status.text.object.split("last update")[1], app.status.text.object


def test_an_n_change_refills_the_tables_in_place():
    """A change of n redraws the tables (classical tests, decomposition, smooth-curve summaries) by new
    rows in their own sources — a data patch each, which the source's callback makes the browser refill
    the grid's cells with — and never by a change of a table's own properties (which makes the browser
    rebuild the whole grid: its DOM, stylesheets and layout)."""
    from bokeh.document import Document
    from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent
    from bokeh.models import DataTable

    app = CalvizApp(_data(3000, classes=4), n_resamples=100, resampling="analytic")
    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    app.start()
    app.wait()
    tables = [m for m in doc.models if isinstance(m, DataTable)]
    assert {"classical_tests", "decomposition_table"} <= {t.name for t in tables}
    for table in tables:  # every table of the page refills its rows when its source's data change
        code = [c.code for c in table.source.js_property_callbacks.get("change:data", [])
                if c.args.get("table") is table]
        assert code == ["table.view.change.emit()"], table.name
    events = []
    doc.on_change(events.append)
    before = {t.name: dict(t.source.data) for t in tables}
    doc.hold("combine")
    app.controls.n = 2001
    doc.unhold()
    app.wait()
    refilled = {e.model for e in events if isinstance(e, ColumnDataChangedEvent)}
    assert [t.name for t in tables if t.source in refilled] == [
        t.name for t in tables if not all(np.array_equal(before[t.name][k], v)
                                          for k, v in t.source.data.items())]
    assert {t.name for t in tables if t.source in refilled} >= {"classical_tests", "decomposition_table"}
    changed = [e for e in events if isinstance(e, ModelChangedEvent)]
    assert not [(type(e.model).__name__, e.attr) for e in changed if isinstance(e.model, DataTable)]


def _app_drawn_on_a_document(painted: list):
    """An app on a Bokeh document, started, its jobs done and its later cards drawn; ``painted`` collects
    what runs once the browser has painted (as :meth:`CalvizApp.draw_after_main_views` schedules it)."""
    from bokeh.document import Document

    app = CalvizApp(_data(3000, classes=4), n_resamples=100, resampling="analytic")
    app.draw_after_main_views(painted.append)
    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    app.start()
    app.wait()
    while painted:
        painted.pop(0)()
    return app, doc


def test_a_change_sends_the_four_views_before_the_other_cards():
    """On a served page the cards other than the four views and the status line (the overall verdict, the
    classical tests, the tables, the over-time card) redraw on the next tick: a change's first message to
    the browser carries only the four views' and the status line's changes, which the browser then shows
    without first applying and laying out the other cards; those follow, drawn from the store's state."""
    ticks = []  # what a served page runs on its next tick
    app, doc = _app_drawn_on_a_document(ticks)
    later = {m for root in (app.verdict.text.div, app.classical.panel.object, app.over_time.pane.object,
                            *(t.pane.object for t in app.tables)) for m in root.references()}
    events = []
    doc.on_change(events.append)
    app.controls.n = 2001  # (new results in every card; the background jobs' redraws come later)
    first = list(events)
    assert first and not [e for e in first if getattr(e, "model", None) in later]
    app.wait()
    assert ticks  # the other cards' draws, not lost
    del events[:]
    while ticks:
        ticks.pop(0)()
    redrawn = {e.model for e in events}
    decomposition = next(t for t in app.tables if t.name == "decomposition")
    assert decomposition.table.source in redrawn and redrawn <= later


def test_a_change_of_n_sends_nothing_between_its_views_and_their_paint():
    """A subsample change of a served page computes the score decomposition (drawn only by its card, after
    the four views are painted) on the session's next tick.  That tick sends the browser nothing: its
    seconds join the change's timings without redrawing the status line, which went with the four views
    (a second message there was applied and laid out before the change was painted); the status line
    shows them with the change's next redraw (here the first job's result)."""
    from bokeh.document.events import ModelChangedEvent

    session, painted = [], []  # the session's next ticks; what runs once the browser has painted
    app, doc = _app_drawn_on_a_document(painted)
    app.store._on_session = session.append  # (from here on, as served: the store's ticks run below)
    status = app.status.text.div
    events = []
    doc.on_change(events.append)
    app.controls.n = 2001
    sent = [e for e in events if isinstance(e, ModelChangedEvent) and e.model is status]
    assert sent and "score decomposition" not in sent[-1].new  # (not computed yet)
    del events[:]
    assert session  # the decomposition's tick
    session.pop(0)()
    assert app.store.decomposition.result is not None and "decomposition" in app.store.timings
    assert not events  # nothing sent before the paint
    while painted:
        painted.pop(0)()
    decomposition = next(t for t in app.tables if t.name == "decomposition")
    assert decomposition.table.source in {e.model for e in events}
    assert not [e for e in events if getattr(e, "model", None) is status]
    app.wait()  # the jobs; their results are published on the session's ticks
    while session or painted:
        (session or painted).pop(0)()
    assert "score decomposition" in status.text


def test_the_other_cards_wait_until_the_browser_has_painted_the_four_views():
    """Served, the other cards are drawn once the browser answers the ticket sent with the four views (two
    animation frames after it applied that message: it has painted them), all in one message; an answer
    to an older ticket runs nothing, and without any answer the fallback timeout runs them."""
    from bokeh.document import Document
    from bokeh.document.events import ModelChangedEvent

    from calviz.app.painted import FALLBACK_MS, AfterPaint

    app = CalvizApp(_data(3000, classes=4), n_resamples=100, resampling="analytic")
    ticks, timeouts = [], []
    after_paint = AfterPaint(app.status.text.div, ticks.append, lambda cb, ms: timeouts.append((cb, ms)))
    app.draw_after_main_views(after_paint)
    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    assert "answer.tags = [ticket]" in after_paint.ticket.js_property_callbacks["change:tags"][0].code
    assert {after_paint.ticket, after_paint.answer} <= set(doc.models)  # (no view draws on their changes)
    app.start()
    app.wait()

    def answer(ticket):  # what the browser sends back (a change of the answer model's tags)
        after_paint.answer.tags = [ticket]
        while ticks:
            ticks.pop(0)()

    answer(after_paint.waiting)
    later = {m for root in (app.verdict.text.div, app.classical.panel.object, app.over_time.pane.object,
                            *(t.pane.object for t in app.tables)) for m in root.references()}
    events = []
    doc.on_change(events.append)
    app.controls.n = 2001
    app.wait()
    ticket = after_paint.waiting
    assert ticket is not None and not [e for e in events if getattr(e, "model", None) in later]
    assert [e.new for e in events if isinstance(e, ModelChangedEvent) and e.attr == "tags"] == [[ticket]]
    assert [ms for _, ms in timeouts] and timeouts[-1][1] == FALLBACK_MS
    while ticks:  # the session's next ticks (store's own work) draw none of the other cards
        ticks.pop(0)()
    assert not [e for e in events if getattr(e, "model", None) in later]
    answer(ticket - 1)  # an older ticket's answer
    assert after_paint.waiting == ticket and not [e for e in events if getattr(e, "model", None) in later]
    answer(ticket)
    assert after_paint.waiting is None and {e.model for e in events} & later
    decomposition = next(t for t in app.tables if t.name == "decomposition")
    assert decomposition.table.source in {e.model for e in events}
    # no answer: the fallback timeout draws them
    del events[:]
    app.controls.n = 2002
    app.wait()
    ticket = after_paint.waiting
    assert not [e for e in events if getattr(e, "model", None) in later]
    timeouts[-1][0]()
    while ticks:
        ticks.pop(0)()
    assert after_paint.waiting is None and decomposition.table.source in {e.model for e in events}
    timeouts[-2][0]()  # (an earlier ticket's timeout, answered long ago: nothing)
    assert after_paint.waiting is None and not ticks


def test_a_newer_change_renews_the_ticket_so_the_other_cards_wait_for_its_paint():
    """A change sent while a ticket is unanswered (a slider being dragged) sends a new ticket: the answer to
    the older one runs nothing, the newer one's runs the queued callbacks once; with nothing queued a
    renewal sends nothing.  The ticket rides on a model no view draws (a Div re-renders on any change)."""
    from bokeh.models import CustomJS, Div

    from calviz.app.painted import AfterPaint

    anchor, ticks, timeouts, ran = Div(text="status"), [], [], []
    after_paint = AfterPaint(anchor, ticks.append, lambda cb, ms: timeouts.append(cb))
    assert isinstance(after_paint.ticket, CustomJS) and after_paint.ticket in anchor.references()
    after_paint.renew()
    assert after_paint.waiting is None and after_paint.ticket.tags == [] and not timeouts
    after_paint(lambda: ran.append("card"))
    first = after_paint.waiting
    assert after_paint.ticket.tags == [first] and anchor.tags == [after_paint.ticket, after_paint.answer]
    for _ in range(3):  # three drag steps
        after_paint.renew()
    newest = after_paint.waiting
    assert newest == first + 3 and after_paint.ticket.tags == [newest] and len(timeouts) == 4
    after_paint.answer.tags = [first]  # the browser painted the first step
    timeouts[0]()  # and its fallback fires
    assert not ticks and after_paint.waiting == newest
    after_paint.answer.tags = [newest]
    assert after_paint.waiting is None and len(ticks) == 1
    ticks.pop()()
    assert ran == ["card"]
    timeouts[-1]()  # (the answered ticket's fallback: nothing)
    assert not ticks


def test_the_served_page_walks_its_model_graph_once_while_it_is_built(monkeypatch):
    """Bokeh walks every model of a document whenever a model joins it; the served page is built (Panel
    adding the template's roots) and its first update drawn (the views building their figures and tables)
    with the graph frozen: one walk each instead of one per root or figure (17 and 5 before)."""
    from bokeh.document import Document
    from bokeh.document.models import DocumentModelManager

    app = CalvizApp(_data(2000, classes=4), n_resamples=100, resampling="analytic")
    walks = []
    recompute = DocumentModelManager.recompute
    monkeypatch.setattr(DocumentModelManager, "recompute",
                        lambda self: (walks.append(threading.current_thread()), recompute(self))[1])
    doc = Document()
    app.template().server_doc(doc)
    assert len(walks) == 1 and doc.get_model_by_id(app.status.text.div.id) is app.status.text.div
    del walks[:]
    app._doc = doc
    app._first_refresh()
    app.wait()
    assert walks.count(threading.main_thread()) == 1  # (background jobs publish from their own threads here)
    figures = [m for m in doc.models if type(m).__name__ == "figure"]  # (the views' figures joined it)
    assert len(figures) >= 4 and all(f.document is doc for f in figures)


def test_callbacks_queued_before_the_browser_has_the_document_wait_for_its_load():
    """Changes made before the browser has pulled the page's document go out in the document itself, where
    a ticket would never be answered: the callbacks queued meanwhile send no ticket (and start no fallback)
    until the page has loaded; then they run after the next paint, as usual."""
    from bokeh.models import Div

    from calviz.app.painted import AfterPaint

    ticks, timeouts, ran = [], [], []
    after_paint = AfterPaint(Div(text="status"), ticks.append, lambda cb, ms: timeouts.append(cb))
    after_paint.wait_for_load()
    after_paint(lambda: ran.append("card"))
    after_paint.renew()  # (a change before the load: still nothing sent)
    assert after_paint.waiting is None and after_paint.ticket.tags == [] and not timeouts and not ticks
    after_paint.load()
    ticket = after_paint.waiting
    assert ticket is not None and after_paint.ticket.tags == [ticket] and len(timeouts) == 1
    after_paint.answer.tags = [ticket]
    ticks.pop()()
    assert ran == ["card"] and after_paint.waiting is None
    after_paint.load()  # (nothing queued: nothing sent)
    assert after_paint.waiting is None and len(timeouts) == 1


class _SessionContext:
    """What makes a document a served session's for the app (``Document.session_context``); Panel reads
    the request's arguments from it."""

    request = types.SimpleNamespace(arguments={}, route_params={}, cookies={}, headers={})
    token_payload: dict = {}
    id = "a-session"


def _served_app(data, **params):
    """A CalvizApp built as in a server session (its document has a session context); its document's
    next-tick callbacks are collected, not run."""
    import weakref

    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc, context = Document(), _SessionContext()
    doc._session_context = weakref.ref(context)
    with set_curdoc(doc):
        app = CalvizApp(data, **params)
        app.template().server_doc(doc)
    app._context = context  # (the document holds it weakly)
    return app, doc


def _run_next_ticks(doc) -> None:
    from panel.io.state import set_curdoc

    with set_curdoc(doc):
        while callbacks := [cb for cb in doc.session_callbacks if type(cb).__name__ == "NextTickCallback"]:
            for callback in callbacks:
                doc.remove_next_tick_callback(callback)
                callback.callback()


def test_a_served_page_whose_first_views_the_server_computed_draws_them_into_its_first_document(monkeypatch):
    """On data whose first page the server's start computed (large data), every result of the page cached, the
    session draws its views on its first tick — before the browser, still loading BokehJS, pulls the
    document, so they arrive with it — computing nothing and waiting for no kernel warm-up; the other cards
    wait for the browser's load.  Other pages (nothing cached; or small data, computed by an earlier tab)
    wait for the page's load and say "preparing" meanwhile, as before."""
    from calviz.app import precomputed

    monkeypatch.setattr(precomputed, "PRESORT_MIN_ROWS", 0)  # (the server's start prepares data this small)
    data, params = _data(3000, classes=4), {"n_resamples": 100, "resampling": "analytic"}
    try:
        cold, cold_doc = _served_app(data, **params)
        _run_next_ticks(cold_doc)
        assert not cold.views[0].sources and cold.store.inputs is None  # (nothing drawn before the load)
        earlier = CalvizApp(data, **params)  # an earlier tab: the server's cache holds every result
        earlier.start()
        earlier.wait()
        small, small_doc = _served_app(data, **params)
        assert small.store.all_cached(data, earlier.controls.options(data.n))
        _run_next_ticks(small_doc)
        assert small.store.inputs is None and "preparing" in small.status.progress_text.object
        options = earlier.controls.options(data.n)
        precomputed.precompute_first_views(data, options).result(timeout=300)
        assert precomputed.first_views_done(data)
        app, doc = _served_app(data, **params)
        assert app.store.inputs is None
        _run_next_ticks(doc)
        assert app.store.inputs is not None and app.store.calls == {} and not app.store.jobs
        assert len(app.views[0].sources["hist"].data["count"]) > 0
        assert "preparing" not in app.status.progress_text.object
        assert all(figure.document is doc for view in app.views for figure in getattr(view, "figures", []))
        assert app.after_paint.waiting is None and app.after_paint.ticket.tags == []  # (the cards: at load)
        assert app.after_paint._queue  # (the other cards' draws, queued for the load)
    finally:
        for cache in (precomputed.RESULTS, precomputed.SORTED, precomputed.ACE_TABLES,
                      precomputed.BOOTSTRAPS):
            cache.clear()
