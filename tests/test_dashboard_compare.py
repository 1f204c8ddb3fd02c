"""The dashboard's comparison mode at the Python level: each mode's numbers are the engine's, the card
draws them, bad second inputs keep the loaded data, and background comparisons are never stale."""

from __future__ import annotations

import ast
import html
import inspect

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz._comparison import calibration_by_group, compare
from calviz._dashboard import CalvizApp
from calviz._recalibration import recalibrate
from calviz.app.comparison_mode import OTHER_COLUMNS, SECOND_FILE
from calviz.app.comparison_store import ComparisonRequest, ComparisonStore, compute_comparison
from calviz.app.store import ResultStore
from calviz.datasets import load_dataset


@pytest.fixture
def app():
    application = CalvizApp(resampling="analytic")  # the embedded default, tabular-gnb
    application.start()
    application.widgets()
    application.wait()
    yield application
    application.wait()


def _table(app) -> dict:
    return {k: list(v) for k, v in app.comparison.view.table.source.data.items()}


def _verdict(app) -> str:
    return html.unescape(app.comparison.view.verdict.text)


def test_mode_is_off_by_default_and_the_card_hidden(app):
    assert app.comparison.controls.mode == "off" and not app.comparison.panel.visible
    assert app.comparison.store.entry.result is None


def test_recalibration_mode_is_recalibrate_then_compare_on_held_out_rows(app):
    m = app.comparison
    m.controls.mode = "recalibration"
    assert m.panel.visible
    outcome = m.store.entry.result
    data = load_dataset("tabular-gnb")
    res = recalibrate(data, method="temperature", calibration_size=0.5, n_bins=15, seed=0)
    ref = compare(res.y_true, res.y_prob_before, res.y_prob, names=("before", "after"), resampling="analytic",
                  seed=0)
    c = outcome.comparison
    assert (c.difference, c.low, c.high, c.pvalue) == (ref.difference, ref.low, ref.high, ref.pvalue)
    assert c.n == res.n_eval == 6000 and outcome.recalibration["n_calibration"] == 6000
    assert outcome.recalibration["temperature"] == pytest.approx(res.temperature)
    assert outcome.reliability[1].n == res.n_eval  # the "after" diagram is on held-out rows only
    assert _table(app)["item"] == ["before", "after"]
    assert "held-out rows" in _verdict(app) and "after is better calibrated than before" in _verdict(app)
    # two lines on the shared axes, both T-Cal curves, both intervals
    view = m.view
    assert len(view.lines.data["xs"]) == 2 and len(view.tcal_source.data["xs"]) == 2
    assert list(view.interval_source.data["item"]) == ["before", "after"]
    m.controls.method = "isotonic"
    assert m.store.entry.result.recalibration["method"] == "isotonic" and "Isotonic" in _verdict(app)


def test_models_mode_defaults_to_the_recalibrated_partner_and_equals_compare(app):
    m = app.comparison
    m.controls.mode = "models"
    assert m.controls.other == "tabular-gnb-temperature"
    a, b = load_dataset("tabular-gnb"), load_dataset("tabular-gnb-temperature")
    ref = compare(a.labels, a.probs, b.probs, names=("tabular-gnb", "tabular-gnb-temperature"),
                  resampling="analytic", seed=0)
    c = m.store.entry.result.comparison
    assert (c.difference, c.se, c.pvalue, c.reject) == (ref.difference, ref.se, ref.pvalue, ref.reject)
    assert (c.tcal_a.pvalue, c.tcal_b.pvalue) == (ref.tcal_a.pvalue, ref.tcal_b.pvalue)
    assert _table(app)["item"] == ["tabular-gnb", "tabular-gnb-temperature"]
    assert ref.verdict in _verdict(app)
    # the two models' score decompositions side by side in the card's note (the engine's numbers)
    assert (c.decomposition_a.mcb, c.decomposition_b.dsc) == (ref.decomposition_a.mcb,
                                                              ref.decomposition_b.dsc)
    from calviz.present.comparisons import comparison_summary, decomposition_text

    for part in comparison_summary({"comparison": ref})["comparison"]["models"].values():
        assert decomposition_text(part["decomposition"]) in m.view.note.object
    # another embedded model of the same test set; the bin count reaches the comparison
    m.controls.other = "tabular-rf"
    app.controls.n_bins = 10
    c = m.store.entry.result.comparison
    assert c.names == ("tabular-gnb", "tabular-rf") and c.n_bins == 10
    # a recalibrated model's partner is its base model
    app.controls.dataset = "digits-gnb-platt"
    assert m.controls.other == "digits-gnb" and m.store.entry.result.comparison.n == 719


def test_the_card_changes_only_inside_the_apps_hold(app, monkeypatch):
    """Every change of the card's Bokeh models leaves under the app's hold, i.e. in Panel's one patch: a
    raw Bokeh change outside it is sent by Bokeh once the widget's callback returns, and could reach the
    browser before Panel's (queued) patch that defines the card ("reference pNNNN isn't known")."""
    from conftest import count_hold_depth

    depth = count_hold_depth(app, monkeypatch)
    view, changes = app.comparison.view, []
    watched = [(view.verdict, "text"), (view.lines, "data"), (view.table.source, "data"),
               (view.figures.interval.yaxis[0].ticker, "ticks")]
    for model, attr in watched:
        model.on_change(attr, lambda attr, old, new, model=model: changes.append((model, depth[0])))
    app.comparison.controls.mode = "models"  # as the widget's callback sets it
    app.comparison.controls.other = "tabular-rf"
    app.controls.n_bins = 10
    assert {id(m) for m, _ in changes} == {id(m) for m, _ in watched}  # (the table: its rows, in place)
    assert all(d > 0 for _, d in changes), [(type(m).__name__, d) for m, d in changes]


def test_models_of_another_test_set_are_refused_and_the_last_comparison_stays(app):
    m = app.comparison
    m.controls.mode = "models"
    shown = m.store.entry
    m.controls.other = "digits-gnb"  # 719 other examples
    assert m.view.alert.visible and "labels differ" in m.view.alert.object
    assert m.store.entry is shown and app.data.n == 12000


def _csv(frame) -> bytes:
    return frame.to_csv(index=False).encode()


def _upload_frame(n=1500, seed=4):
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.02, 0.98, n)
    y = (rng.random(n) < q).astype(int)
    over = 1 / (1 + np.exp(-3 * np.log(q / (1 - q))))
    region = rng.choice(["north", "south", "east"], n)
    region[:7] = "tiny"
    return pd.DataFrame({"y_true": y, "y_prob": over, "q": q, "region": region})


def test_second_file_bad_file_and_other_columns(app):
    frame = _upload_frame()
    assert app.load_file(_csv(frame[["y_true", "y_prob", "region", "q"]]), "mine.csv")
    m = app.comparison
    m.controls.mode = "models"
    assert m.controls.other == SECOND_FILE and m.view.alert.visible  # no second file yet
    assert "choose the second model" in m.view.alert.object
    m.controls.other = OTHER_COLUMNS
    assert "type model B's probability column" in m.view.alert.object
    m.controls.other_columns = "q_"
    assert "names no probability column" in m.view.alert.object  # the reader falls back to y_prob
    m.controls.other_columns = "q"
    assert not m.view.alert.visible
    c = m.store.entry.result.comparison
    ref = compare(frame.y_true, frame.y_prob, frame.q, names=("mine.csv", "q"), resampling="analytic", seed=0)
    assert (c.names, c.difference, c.pvalue) == (ref.names, ref.difference, ref.pvalue) and c.better == "q"
    # a second file of the same examples
    assert m.load_second(_csv(frame[["y_true", "q"]].rename(columns={"q": "y_prob"})), "calibrated.csv")
    assert m.controls.other == SECOND_FILE
    c = m.store.entry.result.comparison
    assert c.names == ("mine.csv", "calibrated.csv") and c.difference == ref.difference
    # bad second files: a message, the data and the comparison stay
    shown = m.store.entry
    assert not m.load_second(b"y_true,y_prob\n1,0.3\n0,banana\n", "broken.csv")
    assert m.view.alert.visible and "broken.csv" in m.view.alert.object
    short = frame[["y_true", "q"]].iloc[:100].rename(columns={"q": "y_prob"})
    assert not m.load_second(_csv(short), "short.csv")
    assert "labels differ" in m.view.alert.object
    assert m.store.entry is shown and app.data.n == 1500 and m.second[0] == "calibrated.csv"


def test_group_mode_by_column_with_a_tiny_group(app):
    frame = _upload_frame()
    app.load_file(_csv(frame), "mine.csv")
    m = app.comparison
    m.controls.mode = "groups"
    labels = [str(g.group) for g in m.store.entry.result.groups.groups]
    assert labels == ["0", "1"]  # the default groups: the label
    m.controls.group_column = "region"
    groups = m.store.entry.result.groups
    ref = calibration_by_group(frame.y_true.to_numpy(), frame.y_prob.to_numpy(), frame.region.to_numpy(),
                               resampling="analytic", seed=0)
    assert [(g.group, g.n, g.status, g.adjusted_pvalue) for g in groups.groups] == \
        [(g.group, g.n, g.status, g.adjusted_pvalue) for g in ref.groups]
    table = _table(app)
    assert table["item"] == ["east", "north", "south", "tiny"]
    assert table["status"][3].startswith("too small") and table["tcal"][3] == "—"
    assert "too small to test" in _verdict(app) and "tiny" in _verdict(app)
    assert len(m.view.interval_source.data["item"]) == 3  # the tiny group has no interval, but is listed
    m.controls.group_column = "nope"
    assert m.view.alert.visible and "nope" in m.view.alert.object and m.store.entry.result.groups is groups


def test_group_column_of_an_embedded_dataset_is_refused(app):
    m = app.comparison
    m.controls.mode = "groups"
    m.controls.group_column = "region"
    assert m.view.alert.visible and "no column 'region'" in m.view.alert.object


def test_background_comparison_is_published_once_and_never_stale():
    """Served: the comparison runs in the session's worker process after the debounce; a request
    superseded during the debounce never starts, and only the wanted result is shown."""
    results = ResultStore(debounce=0)
    published = []
    store = ComparisonStore(results, debounce=0.3, inline=False)
    store.param.watch(lambda e: published.append(e.new), "entry")
    data = load_dataset("tabular-gnb")
    options = calviz.analysis.AnalysisOptions(resampling="analytic")
    first = ComparisonRequest("recalibration", data, options, method="platt")
    wanted = ComparisonRequest("recalibration", data, options, method="temperature")
    try:
        store.update(first)
        store.update(wanted)
        assert store.entry.pending and store.entry.result is None
        store.wait(300)
        assert store.entry.key == wanted.key and store.entry.result.recalibration["method"] == "temperature"
        assert store.calls == 1  # platt was superseded before its job started
        shown = [e.result.recalibration["method"] for e in published if e.result is not None]
        assert shown == ["temperature"]
        direct = compute_comparison("recalibration", data.labels, data.probs, None, None, ("A", "B"),
                                    "temperature", options)
        assert store.entry.result.comparison.difference == direct.comparison.difference
    finally:
        results.close()


def test_comparison_views_compute_no_statistics():
    from calviz.app import comparison_mode, comparison_view

    for module in (comparison_view, comparison_mode):
        tree = ast.parse(inspect.getsource(module))
        modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        names = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                 for alias in node.names}
        assert not modules & {"calviz._ece", "calviz._tcal", "calviz._intervals", "calviz._recalibration",
                              "concurrent.futures"}, module
        assert not names & {"compare", "calibration_by_group", "recalibrate", "compute_comparison",
                            "threading", "multiprocessing"}, module


def test_exported_report_has_the_comparison_shown(app):
    assert "Model comparison" not in app.export_report().getvalue().decode()
    m = app.comparison
    m.controls.mode = "recalibration"
    text = app.export_report().getvalue().decode()
    assert "Before / after temperature recalibration" in text and "6000 rows" in text
    m.controls.mode = "models"
    text = html.unescape(app.export_report().getvalue().decode())
    assert "Model comparison: tabular-gnb vs tabular-gnb-temperature" in text
    assert m.store.entry.result.comparison.verdict in text
    m.controls.mode = "groups"
    assert "Calibration by group" in app.export_report().getvalue().decode()


def test_group_table_status_follows_each_groups_holm_decision():
    """The group table's status is the group's Holm decision in words — an undecided group (resampling
    cap reached at its Holm level) is neither "rejected" nor a plain "tested" — with the reason."""
    import dataclasses
    import types

    from calviz.app.comparison_view import summary_table

    rng = np.random.default_rng(3)
    z = rng.uniform(size=900)
    y = (rng.uniform(size=900) < z).astype(int)
    labels = np.repeat(["a", "b", "c"], 300)
    z[labels == "c"] = z[labels == "c"] ** 3  # miscalibrated: rejected
    groups = calibration_by_group(y, z, labels, seed=0)
    undecided = dataclasses.replace(groups.groups[1], reject=False, decision="undecided",
                                    reason="undecided at the Holm level α/2 = 0.025 (…): not rejected")
    groups = dataclasses.replace(groups, groups=(groups.groups[0], undecided, groups.groups[2]))
    rows = summary_table(types.SimpleNamespace(groups=groups))
    assert rows["status"] == ["not rejected (Holm)",
                              "undecided (Holm): undecided at the Holm level α/2 = 0.025 (…): not rejected",
                              "rejected (Holm)"], rows["status"]
