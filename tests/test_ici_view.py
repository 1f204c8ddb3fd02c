"""The smooth-curve summaries view (ICI, E50, E90, Emax): one registry record, shown by every surface that
iterates the registry (analyze, calviz check text and --json, the report, the dashboard's table card).
The engine itself is tested against a direct kernel sum and LOESS in test_ici.py."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import calviz
from calviz.analysis import AnalysisOptions, analyze, prepare
from calviz.analysis.compute import compute_ici
from calviz.analysis.views import view
from calviz.cli import main
from calviz.present.labels import format_value
from calviz.present.report import render_analysis
from calviz.present.smooth_summaries import ici_caption, ici_frame

FIELDS = ("ici", "e50", "e90", "emax", "bandwidth", "kernel", "n", "target")


def _binary(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.02, 0.98, n), 2)  # ties
    return (rng.random(n) < p ** 1.5).astype(int), p


def _same(a, b):
    for field in FIELDS:
        assert getattr(a, field) == getattr(b, field), field


@pytest.mark.parametrize("target, class_index, engine_target", [
    ("auto", 0, "top1"), ("classwise", 2, "classwise"), ("topk", 0, "top1"), ("full", 0, "top1"),
])
def test_the_view_is_the_engine_on_the_scalar_target(target, class_index, engine_target):
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(4), size=900)
    labels = np.array([rng.choice(4, p=row) for row in probs])
    data = calviz.as_calibration_data(labels, probs)
    result = compute_ici(data, AnalysisOptions(target=target, class_index=class_index))
    _same(result, calviz.ici(labels, probs, target=engine_target, class_index=class_index))
    if target == "classwise":  # the curve and the distances are of the same class (a direct kernel sum)
        from test_ici import direct_kernel_curve

        z, y = probs[:, 2], (labels == 2).astype(float)
        d = np.abs(direct_kernel_curve(z, y, result.bandwidth, z) - z)
        assert result.ici == pytest.approx(d.mean(), abs=1e-4)


def test_the_view_reads_the_smooth_options_and_a_subsample():
    y, p = _binary()
    data = calviz.as_calibration_data(y, p)
    options = AnalysisOptions(n=400, seed=3, kernel="logit_gaussian", bandwidth=0.08)
    _same(compute_ici(data, options), calviz.ici(prepare(data, options), kernel="logit_gaussian",
                                                 bandwidth=0.08))
    record = view("smooth_summaries")
    assert record.in_check and record.slot == "smooth_summaries" and not record.weighted
    assert {"kernel", "bandwidth"} <= set(record.reads)
    assert not {"n_bins", "alpha", "scheme", "n_resamples"} & set(record.reads)
    assert record.dask is None and "whole sample" in record.not_on_dask


def test_calviz_check_shows_it_in_text_and_json(tmp_path, capsys):
    y, p = _binary()
    path = tmp_path / "preds.csv"
    np.savetxt(path, np.c_[y, p], delimiter=",", header="y_true,y_prob", comments="", fmt=["%d", "%.2f"])
    expected = calviz.ici(y, p)
    assert main(["check", str(path), "--resampling", "analytic", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["smooth_summaries"]
    for field in ("ici", "e50", "e90", "emax", "bandwidth"):
        assert shown[field] == pytest.approx(getattr(expected, field), rel=1e-12)
    assert shown["caption"] == ici_caption(expected) and "not LOESS" in shown["caption"]
    assert main(["check", str(path), "--resampling", "analytic"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "smooth-curve summaries: " + ici_caption(expected) in out


def test_the_report_has_its_section_with_the_numbers():
    y, p = _binary()
    result = analyze((y, p), resampling="analytic", resampled=False)
    page = render_analysis(result)
    expected = calviz.ici(y, p)
    numbers = {title: int(k) for k, title in re.findall(r"<h2>(\d+)\. ([^<]+)</h2>", page)}
    assert numbers["Smooth-curve summaries (ICI)"] < numbers["Other calibration tests"]
    for value in (expected.ici, expected.e50, expected.e90, expected.emax):
        assert f"<td>{format_value(value)}</td>" in page
    assert ici_caption(expected).replace("'", "&#x27;") in page


def test_the_dashboard_card_shows_it_and_keeps_it_on_bins_and_alpha_changes():
    from calviz._dashboard import CalvizApp

    y, p = _binary()
    app = CalvizApp(calviz.as_calibration_data(y, p), n_resamples=50, resampling="analytic")
    app.start()
    app.wait()
    card = next(t for t in app.tables if t.name == "smooth_summaries")
    expected = calviz.ici(y, p)
    assert {k: list(v) for k, v in card.table.source.data.items()} == ici_frame(expected)
    assert format_value(expected.e90) in card.caption.text
    assert app.store.calls["smooth_summaries"] == 1
    for change in ({"n_bins": 23}, {"alpha": 0.1}):
        app.controls.param.update(**change)
        app.wait()
    assert app.store.calls["smooth_summaries"] == 1
    app.controls.param.update(bandwidth=0.05)  # the smooth curve's bandwidth: new summaries
    app.wait()
    assert app.store.calls["smooth_summaries"] == 2
    assert "σ = 0.0500" in card.caption.text
