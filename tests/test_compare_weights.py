"""Sample weights in the comparison of two models: the two score decompositions are weighted (= the
unweighted ones on the rows repeated by their integer weights, to 1e-12), the rest of the comparison is
not and every surface says so (calviz compare --weight-column, calviz check --compare --weight-column)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz._weights import with_weights
from calviz.analysis import AnalysisOptions
from calviz.analysis.comparisons import UNWEIGHTED_COMPARISON, compare_models
from calviz.cli import main

FIELDS = ("mean_score", "mcb", "dsc", "unc")


def _models(n=700, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.dirichlet(np.ones(classes), size=n)
    labels = np.array([rng.choice(classes, p=row) for row in a])
    b = 0.5 * a + 0.5 * rng.dirichlet(np.ones(classes), size=n)
    return labels, a, b, rng.integers(0, 4, size=n)


def test_weighted_decompositions_equal_the_repeated_rows_and_unit_weights_change_nothing():
    labels, a, b, w = _models()
    options = AnalysisOptions(resampling="analytic")
    data = calviz.as_calibration_data(labels, a)
    plain = compare_models(data, b, ("a", "b"), options)
    ones = compare_models(with_weights(data, np.ones(len(labels))), b, ("a", "b"), options)
    weighted = compare_models(with_weights(data, w.astype(float)), b, ("a", "b"), options)
    rows = np.repeat(np.arange(len(labels)), w)
    repeated = compare_models(calviz.as_calibration_data(labels[rows], a[rows]), b[rows], ("a", "b"), options)
    for split in ("decomposition_a", "decomposition_b"):
        for field in FIELDS:
            assert getattr(getattr(ones, split), field) == pytest.approx(
                getattr(getattr(plain, split), field), rel=1e-12, abs=1e-15)
            assert getattr(getattr(weighted, split), field) == pytest.approx(
                getattr(getattr(repeated, split), field), rel=1e-12, abs=1e-15)
        assert getattr(weighted, split).target == getattr(plain, split).target == "top1"
    # the equal-calibration test is not weighted: as without weights
    assert weighted.difference == plain.difference


def test_calviz_compare_and_check_weight_column(tmp_path, capsys):
    labels, a, b, w = _models(n=500, classes=2, seed=1)
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y_true": labels, "y_prob": a[:, 1], "p_new": b[:, 1], "w": w}).to_csv(path, index=False)
    expected = calviz.score_decomposition(labels, b[:, 1], sample_weight=w.astype(float))
    argv = ["compare", str(path), "--b-column", "p_new", "--weight-column", "w", "--resampling", "analytic"]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["weight_column"] == "w" and summary["not_weighted"] == list(UNWEIGHTED_COMPARISON)
    split = summary["comparison"]["models"]["preds.csv:p_new"]["decomposition"]
    for field in FIELDS:
        assert split[field] == pytest.approx(getattr(expected, field), rel=1e-12)
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith(summary["weights_note"] + "\n")
    other = tmp_path / "other.csv"
    pd.DataFrame({"y_true": labels, "y_prob": b[:, 1]}).to_csv(other, index=False)
    assert main(["check", str(path), "--compare", str(other), "--weight-column", "w", "--resampling",
                 "analytic", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["comparison"]["models"]["other.csv"]["decomposition"]
    assert shown["mcb"] == pytest.approx(expected.mcb, rel=1e-12)
    assert main([*argv[:-2], "--weight-column", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_the_apps_comparison_of_two_models_weights_as_the_command_line_does():
    """The dashboard's comparison mode on weighted data gives the numbers of the one comparison
    orchestration (compare_models on the weighted data, as ``calviz compare --weight-column``): weighted
    score decompositions and diagrams, the rest unweighted, and its note names what is not weighted."""
    from calviz._dashboard import CalvizApp
    from calviz.analysis.comparisons import unweighted_parts
    from calviz.datasets import load_dataset
    from calviz.present.text import weights_note

    a, b = load_dataset("tabular-gnb"), load_dataset("tabular-gnb-temperature")
    w = np.random.default_rng(5).integers(0, 4, a.n).astype(float)
    data = with_weights(a, w)
    app = CalvizApp(data, resampling="analytic")
    app.start()
    app.wait()
    mode = app.comparison
    mode.controls.other = "tabular-gnb-temperature"  # (the data were handed over: B is named)
    mode.controls.mode = "models"
    outcome = mode.store.entry.result
    shown = outcome.comparison
    options = app.controls.options(data.n)
    expected = compare_models(data, b.probs, shown.names, options)
    unweighted = compare_models(a, b.probs, shown.names, options)
    for split, model in (("decomposition_a", a), ("decomposition_b", b)):
        for field in FIELDS:
            assert getattr(getattr(shown, split), field) == getattr(getattr(expected, split), field)
        # the weighted decomposition itself, and not the unweighted one
        direct = calviz.score_decomposition(model, score="brier", sample_weight=w)
        assert getattr(shown, split).mcb == pytest.approx(direct.mcb, rel=1e-12)
        assert getattr(shown, split).mcb != getattr(unweighted, split).mcb
    assert (shown.difference, shown.pvalue) == (expected.difference, expected.pvalue)  # (unweighted parts)
    # the two diagrams weigh the rows: their bins hold the weights
    for diagram in outcome.reliability:
        assert diagram.counts.sum() == pytest.approx(w.sum(), rel=1e-12)
    assert weights_note("", unweighted_parts("models")) in mode.request().source
    assert unweighted_parts("models") == UNWEIGHTED_COMPARISON
