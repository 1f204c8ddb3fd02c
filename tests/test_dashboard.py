"""calviz.analysis and calviz.dashboard at the Python level: options, recompute-only-what-changed,
background resampling, upload errors, independent sessions, Jupyter layout."""

from __future__ import annotations

import io
import json

import holoviews as hv
import numpy as np
import panel as pn
import pytest

from calviz.analysis import VIEW_INPUTS, AnalysisOptions, MultiReliability, analyze, view_key
from calviz.dashboard import CalvizApp, dashboard
from calviz.data import InputError, as_calibration_data


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
    before = dict(app.calls)
    app.param.update(**change)
    app.wait()
    return {
        k: app.calls.get(k, 0) - before.get(k, 0)
        for k in set(app.calls) | set(before)
        if app.calls.get(k, 0) != before.get(k, 0)
    }


def test_bin_count_recomputes_only_binned_views(app):
    delta = _delta(app, {"n_bins": 23})
    assert delta == {"reliability": 1, "interval": 1, "bootstrap": 1}, delta


def test_alpha_recomputes_dependent_views_not_distance(app):
    delta = _delta(app, {"alpha": 0.1})
    assert set(delta) == {"reliability", "smooth", "tcal", "interval", "bootstrap"}, delta
    assert all(v == 1 for v in delta.values())


def test_alpha_redraws_only_the_panels_it_changes(app):
    """An α change moves the bars' whiskers: the main panel gets new elements, the confidence histogram
    and the witness panel keep theirs (nothing is sent to their figures)."""
    app.layout().get_root()
    before = app.shown("reliability")
    app.alpha = 0.1
    app.wait()
    after = app.shown("reliability")
    assert after["main"] is not before["main"]
    assert after["hist"] is before["hist"] and after["witness"] is before["witness"]
    app.n_bins = 9  # new bins: the histogram is redrawn too
    app.wait()
    assert app.shown("reliability")["hist"] is not before["hist"]


def test_one_change_recomputes_the_bokeh_document_once(monkeypatch):
    """Every view a change touches is updated inside one freeze of the served document: Bokeh walks
    the page's model graph once per change, not once per updated plot (that walk was 40 % of the
    server's time for an α change)."""
    from bokeh.document import Document

    doc = Document()
    with pn.io.server.set_curdoc(doc):
        app = CalvizApp(_data(), n_resamples=100)
        app._inline_jobs = True  # background results applied synchronously, as in a notebook
        doc.add_root(app.layout().get_root(doc))
    walks = []
    original = type(doc.models).recompute
    monkeypatch.setattr(type(doc.models), "recompute", lambda self: (walks.append(1), original(self)))
    app._submit = lambda kind, view, data, options: None  # no background jobs: count this change only
    app.alpha = 0.1
    assert len(walks) == 1, walks
    assert app.shown("tcal") is not None


def test_kernel_recomputes_only_smooth(app):
    # the curve at once, its resampled band in the background
    assert _delta(app, {"kernel": "logit_gaussian"}) == {"smooth_curve": 1, "smooth": 1}


def test_bandwidth_recomputes_smooth_and_distance(app):
    assert _delta(app, {"bandwidth": 0.05}) == {"smooth_curve": 1, "smooth": 1, "distance": 1}


def test_returning_to_previous_value_uses_cache(app):
    _delta(app, {"n_bins": 30})
    assert _delta(app, {"n_bins": 15}) == {}


def test_status_line_shows_n_k_and_time(app):
    app.n = 1000
    app.wait()
    text = app.status.object
    assert "1,000 of 2,000" in text and "**K** = 2" in text and " ms" in text


# -- background resampling ---------------------------------------------------------------------------


def test_resampled_tcal_replaces_analytic(app):
    app.resampling = "y_only"
    assert "analytic" in app.tcal_note.object  # shown at once, while resampling runs
    app.wait()
    assert "y_only" in app.tcal_note.object
    assert app.calls["tcal_resampled"] == 1


def test_newer_change_supersedes_stale_resampling(app):
    app.resampling = "y_only"
    app.alpha = 0.1  # before the first job is done (or queued): its result must not be shown
    app.wait()
    shown = app.tcal_note.object
    latest = app.result("tcal_resampled")
    assert latest.alpha == 0.1
    assert "y_only" in shown


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
    assert app.alert.visible and "bad.csv" in app.alert.object
    assert app.data is data_before
    app.n_bins = 9  # the app keeps working
    app.wait()
    assert app.calls["reliability"] >= 2


def test_upload_over_size_limit_is_refused(app):
    app.upload_limit = 100
    assert not app.load_file(b"x" * 101, "big.csv")
    assert "upload limit" in app.alert.object


def test_valid_upload_replaces_data_and_clears_error(app):
    app.load_file(b"garbage", "bad.npy")
    assert app.alert.visible
    assert app.load_file(_csv(400), "mine.csv")
    assert not app.alert.visible
    assert app.data.n == 400 and app.n == 400
    assert app.dataset == "uploaded: mine.csv"
    assert "400 of 400" in app.status.object


# -- sessions, Jupyter ---------------------------------------------------------------------------------


def test_two_apps_do_not_share_state():
    a, b = CalvizApp(_data(600)), CalvizApp(_data(600, seed=5))
    a.n_bins = 40
    assert b.n_bins == 15
    assert a.reliability_pane.object is not b.reliability_pane.object
    assert a._cache is not b._cache
    a.wait()
    b.wait()


def test_dashboard_returns_inline_layout():
    data = _data(500)
    layout = dashboard(data.labels, data.probs, n_bins=8, alpha=0.1)
    assert isinstance(layout, pn.Row)
    assert layout.app.n_bins == 8 and layout.app.alpha == 0.1
    model = layout.get_root()  # renders as a Bokeh model (what a notebook displays)
    assert model is not None
    layout.app.wait()


def test_multiclass_targets_and_class_selector():
    app = CalvizApp(_data(1500, classes=3))
    app.target = "classwise"
    app.class_index = 2
    app.wait()
    assert app.param.class_index.bounds == (0, 2)
    assert "classwise" in app.status.object
    app.target = "topk"
    app.top_k = 3
    app.wait()
    assert app.result("interval") is not None


def test_topk_and_full_reliability_views_and_what_they_recompute():
    app = CalvizApp(_data(1500, classes=3), n_resamples=60, resampling="analytic")
    app.wait()
    # top-1 → top-k: the per-rank diagram, T-Cal of the full vector, the top-k interval; the distance
    # family keeps using the top-1 reduction and the smooth curve is not computed for top-k
    delta = _delta(app, {"target": "topk"})
    assert delta == {"reliability": 1, "tcal": 1, "interval": 1, "bootstrap": 1}, delta
    assert app._structure["reliability"] == ("rank", 2)
    main = app.reliability_pane.object
    assert len(main) == 2  # per-rank curves + their histograms (no witness panel)
    shown = app.shown("reliability")
    labels = [el.label for el in shown["main"] if isinstance(el, hv.Curve) and el.label]
    assert labels == ["rank 1 (top-1)", "rank 2"]
    note = app.reliability_note.object
    assert "one curve per rank" in note and "omitted" in note and "top-1 reduction" not in note
    assert "top-1 reduction" in app.distance_note.object
    # k: the reliability diagram and the interval only
    delta = _delta(app, {"top_k": 3})
    assert delta == {"reliability": 1, "interval": 1, "bootstrap": 1}, delta
    assert app._structure["reliability"] == ("rank", 3)
    shown = app.shown("reliability")["main"]
    assert [el.label for el in shown if isinstance(el, hv.Curve) and el.label][-1] == "rank 3"
    # top-3 of K = 3 → full: same T-Cal and interval (top-K), only the reliability view changes
    assert _delta(app, {"target": "full"}) == {"reliability": 1}
    kind, keys, ncols = app._structure["reliability"]
    assert kind == "class" and keys == ("class 0", "class 1", "class 2") and ncols == 3
    assert len(app.reliability_pane.object) == 3  # one panel per class
    assert "one panel per class" in app.reliability_note.object
    assert app.reliability_pane.get_root() is not None
    # bins: recomputed, streamed into the same figures
    pipe = app._pipes["reliability"]
    assert _delta(app, {"n_bins": 7}) == {"reliability": 1, "interval": 1, "bootstrap": 1}
    assert app._pipes["reliability"] is pipe
    # back to top-1: everything cached, the scalar diagram with its smooth curve again
    assert _delta(app, {"target": "top1", "n_bins": 15}) == {}
    assert app._structure["reliability"] == ("scalar",) and len(app.reliability_pane.object) == 3
    assert "Blue: smooth curve" in app.reliability_note.object
    exported = app.analysis()
    assert not isinstance(exported.reliability, MultiReliability) and exported.smooth is not None


def test_binary_data_topk_is_the_binary_diagram(app):
    app.target = "topk"
    app.wait()
    assert app._structure["reliability"] == ("scalar",)
    assert "binary diagram" in app.reliability_note.object
    assert "omitted" not in app.reliability_note.object


def test_export_report_html(app):
    out = app._export_report()
    assert isinstance(out, io.BytesIO)
    assert b"<html" in out.getvalue()[:2000].lower()


def test_calviz_dashboard_is_callable_even_after_submodule_import():
    import calviz
    import calviz.dashboard as module  # rebinds the package attribute to the module

    data = _data(300)
    assert callable(calviz.dashboard) and callable(module)
    layout = calviz.dashboard(data.labels, data.probs)
    assert isinstance(layout, pn.Row)
    layout.app.wait()
