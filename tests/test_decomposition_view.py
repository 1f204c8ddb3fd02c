"""The score decomposition view: one registry record, shown by every surface that iterates the registry
(analyze, calviz check, the report, the dashboard's table card)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import calviz
from calviz._dashboard import CalvizApp
from calviz.analysis import AnalysisOptions, analyze
from calviz.analysis.compute import compute_decomposition
from calviz.analysis.views import REGISTRY, view
from calviz.cli import main
from calviz.present.labels import format_value
from calviz.present.report import render_analysis
from calviz.present.verification import decomposition_caption, decomposition_frame


def _binary(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.02, 0.98, n), 2)  # ties: the isotonic fit pools them
    return (rng.random(n) < p ** 1.5).astype(int), p


def _multiclass(n=900, classes=4, seed=1):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(classes), size=n)
    labels = np.array([rng.choice(classes, p=row) for row in probs])
    return labels, probs


def _same(a, b):
    for field in ("score", "mean_score", "mcb", "dsc", "unc", "n", "target"):
        assert getattr(a, field) == getattr(b, field), field


@pytest.mark.parametrize("target, class_index, engine_target", [
    ("auto", 0, "top1"), ("top1", 0, "top1"), ("classwise", 2, "classwise"), ("topk", 0, "top1"),
    ("full", 0, "top1"),
])
def test_the_view_is_the_engine_on_the_scalar_target(target, class_index, engine_target):
    y, p = _multiclass()
    data = calviz.as_calibration_data(y, p)
    result = compute_decomposition(data, AnalysisOptions(target=target, class_index=class_index))
    _same(result, calviz.score_decomposition(y, p, score="brier", target=engine_target,
                                             class_index=class_index))
    assert result.mean_score == pytest.approx(result.mcb - result.dsc + result.unc, abs=1e-12)


def test_the_view_is_the_engine_on_binary_data_and_a_subsample():
    y, p = _binary()
    data = calviz.as_calibration_data(y, p)
    _same(compute_decomposition(data, AnalysisOptions()), calviz.score_decomposition(y, p))
    # the subsample of the other views (options.n): the engine on the same rows
    from calviz.analysis import prepare

    options = AnalysisOptions(n=400, seed=3)
    sample = prepare(data, options)
    _same(compute_decomposition(data, options), calviz.score_decomposition(sample))
    assert compute_decomposition(data, options).n == 400


def test_its_record_reads_no_bins_no_alpha():
    record = view("decomposition")
    assert record in REGISTRY and record.in_check and record.slot == "decomposition"
    assert record.title == "Score decomposition"
    assert not {"n_bins", "alpha", "scheme", "n_resamples", "seed"} & set(record.reads)
    assert record.dask == "gathered" and record.not_on_dask is None  # every row gathered: one sort


def test_calviz_check_shows_it(tmp_path, capsys):
    y, p = _binary()
    path = tmp_path / "preds.csv"
    np.savetxt(path, np.c_[y, p], delimiter=",", header="y_true,y_prob", comments="", fmt=["%d", "%.2f"])
    expected = calviz.score_decomposition(y, p)
    assert main(["check", str(path), "--resampling", "analytic", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    shown = summary["decomposition"]
    assert shown["mcb"] == pytest.approx(expected.mcb, rel=1e-12)
    assert shown["mean_score"] == pytest.approx(expected.mean_score, rel=1e-12)
    assert shown["caption"].startswith(decomposition_caption(expected))
    assert main(["check", str(path), "--resampling", "analytic"]) == 0
    out = capsys.readouterr().out
    assert "score decomposition: " + decomposition_caption(expected) in " ".join(out.split())


def test_the_report_has_its_section_with_the_numbers():
    y, p = _binary()
    result = analyze((y, p), resampling="analytic", resampled=False)
    page = render_analysis(result)
    expected = calviz.score_decomposition(y, p)
    numbers = {title: int(k) for k, title in re.findall(r"<h2>(\d+)\. ([^<]+)</h2>", page)}
    # The decomposition has its own numbered section, before the classical tests that close the report.
    assert numbers["Score decomposition"] < numbers["Other calibration tests"] == max(numbers.values())
    for value in (expected.mean_score, expected.mcb, expected.dsc, expected.unc):
        assert f"<td>{format_value(value)}</td>" in page
    assert decomposition_caption(expected) in page


def test_the_dashboard_card_shows_it_and_keeps_it_on_bins_and_alpha_changes():
    y, p = _binary()
    app = CalvizApp(calviz.as_calibration_data(y, p), n_resamples=50, resampling="analytic")
    app.start()
    app.wait()
    card = next(t for t in app.tables if t.name == "decomposition")
    expected = calviz.score_decomposition(y, p)
    rows = {k: list(v) for k, v in card.table.source.data.items()}
    assert rows == decomposition_frame(expected)
    assert format_value(expected.mcb) in card.caption.text
    assert app.store.calls["decomposition"] == 1
    for change in ({"n_bins": 23}, {"alpha": 0.1}, {"n_bins": 7, "alpha": 0.01}):
        app.controls.param.update(**change)
        app.wait()
    assert app.store.calls["decomposition"] == 1
    app.controls.param.update(n=600)  # a new subsample: a new decomposition
    app.wait()
    assert app.store.calls["decomposition"] == 2
    assert card.caption.text.endswith("n = 600).")
    app.wait()
