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
