"""The CORP mode of the reliability diagram (scheme "corp"): one registry view (with a curve-only stand-in),
shown by every surface that iterates the registry — analyze, calviz check (text and --json), the report's
reliability section, the dashboard's reliability card."""

from __future__ import annotations

import json

import numpy as np
import pytest

import calviz
from calviz._dashboard import CalvizApp
from calviz.analysis import AnalysisOptions, analyze, prepare
from calviz.analysis.compute import compute_corp
from calviz.analysis.views import view
from calviz.cli import main
from calviz.present.report import render_analysis
from calviz.present.verification import corp_caption, corp_tables, is_corp


def _binary(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.02, 0.98, n), 2)  # ties: pooled by the isotonic fit
    return (rng.random(n) < p ** 1.5).astype(int), p


def _multiclass(n=900, classes=4, seed=1):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(classes), size=n)
    labels = (probs.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, classes - 1)
    return labels, probs


def _same(a, b):
    for field in ("x", "recalibrated", "band_x", "consistency_low", "consistency_high"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    assert (a.mcb, a.n, a.target, a.alpha, a.n_resamples) == (b.mcb, b.n, b.target, b.alpha, b.n_resamples)


@pytest.mark.parametrize("target, class_index, engine_target", [
    ("auto", 0, "top1"), ("classwise", 2, "classwise"), ("topk", 0, "top1"), ("full", 0, "top1"),
])
def test_the_view_is_the_engine_on_the_scalar_target(target, class_index, engine_target):
    y, p = _multiclass()
    options = AnalysisOptions(scheme="corp", target=target, class_index=class_index, alpha=0.1,
                              n_resamples=60, seed=4)
    result = compute_corp(calviz.as_calibration_data(y, p), options)
    _same(result, calviz.corp_reliability(y, p, target=engine_target, class_index=class_index, alpha=0.1,
                                          n_resamples=60, bands=["consistency"], seed=4))
    assert result.confidence_low is None


def test_the_stand_in_is_the_curve_and_a_subsample_is_the_engine_on_it():
    y, p = _binary()
    data = calviz.as_calibration_data(y, p)
    options = AnalysisOptions(scheme="corp", n=500, seed=3, n_resamples=40)
    sample = prepare(data, options)
    _same(compute_corp(data, options), calviz.corp_reliability(sample, n_resamples=40, bands=["consistency"],
                                                              alpha=0.05, seed=3))
    curve = view("corp_curve").compute(data, options)
    assert curve.consistency_low is None and curve.n_resamples == 0
    np.testing.assert_array_equal(curve.recalibrated, compute_corp(data, options).recalibrated)


def test_the_mode_replaces_the_bins_and_reads_no_bins():
    corp, binned = view("corp"), view("reliability")
    assert "corp" in AnalysisOptions.parameter_constraints["scheme"].values
    assert corp.slot == binned.slot == "reliability" and corp.stand_in == "corp_curve"
    assert corp.background == "always" and corp.in_check and "n_bins" not in corp.reads
    y, p = _binary(400)
    data = calviz.as_calibration_data(y, p)
    on, off = AnalysisOptions(scheme="corp"), AnalysisOptions()
    assert corp.applies(data, on) and not binned.applies(data, on)
    assert binned.applies(data, off) and not corp.applies(data, off)
    # the smooth overlay belongs to the binned diagram
    assert not view("smooth").applies(data, on)


def test_calviz_check_shows_it(tmp_path, capsys):
    y, p = _binary()
    path = tmp_path / "preds.csv"
    np.savetxt(path, np.c_[y, p], delimiter=",", header="y_true,y_prob", comments="", fmt=["%d", "%.2f"])
    args = ["check", str(path), "--resampling", "analytic", "--scheme", "corp", "--n-resamples", "80"]
    expected = calviz.corp_reliability(y, p, n_resamples=80, bands=["consistency"], alpha=0.05, seed=0)
    assert main([*args, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["corp"]
    assert shown["mcb"] == pytest.approx(expected.mcb, rel=1e-12)
    assert shown["consistency_low"] == expected.consistency_low.tolist()
    # the steps are the curve: the value at every distinct prediction is the one of its step
    steps = np.asarray(shown["steps"]["x"])
    at = np.asarray(shown["steps"]["recalibrated"])[np.searchsorted(steps, expected.x, side="right") - 1]
    np.testing.assert_array_equal(at, expected.recalibrated)
    assert shown["caption"] == corp_caption(expected)
    assert main(args) == 0
    assert "CORP     " + corp_caption(expected)[:60] in capsys.readouterr().out
    assert main(["check", str(path), "--resampling", "analytic", "--json"]) == 0
    assert "corp" not in json.loads(capsys.readouterr().out)  # the binned modes: no CORP entry


def test_the_report_draws_it_in_the_reliability_section():
    y, p = _binary()
    result = analyze((y, p), scheme="corp", n_resamples=50, resampling="analytic", resampled=False)
    assert result.reliability is None and result.corp is not None
    page = render_analysis(result)
    assert corp_caption(result.corp) in page and "1. Reliability diagram" in page


def test_the_dashboard_card_draws_the_curve_and_band_and_keeps_them_on_bins_changes():
    y, p = _binary()
    app = CalvizApp(calviz.as_calibration_data(y, p), n_resamples=50, resampling="analytic")
    app.start()
    app.wait()
    app.controls.param.update(scheme="corp")
    app.wait()
    card = app.views[0]
    entry = app.store.reliability
    assert is_corp(entry.result) and entry.result.consistency_low is not None
    tables = corp_tables(entry.result)
    assert card.structure == ("corp",)
    assert {k: list(v) for k, v in card.sources["band"].data.items()} == {
        k: list(v) for k, v in tables["band"].items()}
    assert "CORP (isotonic)" in card.figures[0].title.text
    calls = app.store.calls["corp"]
    app.controls.param.update(n_bins=23)  # no bins: the cached result stays
    app.wait()
    assert app.store.calls["corp"] == calls
    app.controls.param.update(alpha=0.2)  # a new level: a new band
    app.wait()
    assert app.store.calls["corp"] == calls + 1
    assert app.store.reliability.result.alpha == pytest.approx(0.2)
    app.controls.param.update(scheme="equal_mass")  # back to bins
    app.wait()
    assert card.structure == ("scalar",)
