"""Weights in the classical view and in calviz check: classical_tests(sample_weight=) runs the tests with a
standard weighted form (Spiegelhalter, Hosmer–Lemeshow) and the MCE/ACE weighted — equal to the unweighted
ones on the rows repeated by their integer weights — and lists Cox, Kolmogorov–Smirnov and Kuiper as not
computed, saying why; calviz check --weight-column prints the weighted ECE (text and --json)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz._weights import with_weights
from calviz.analysis import AnalysisOptions
from calviz.analysis.compute import compute_classical
from calviz.analysis.views import unweighted_views, view
from calviz.cli import main


def _sample(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.02, 0.98, n), 2)  # ties
    return (rng.random(n) < p ** 1.3).astype(int), p, rng.integers(0, 4, size=n)


def _tests(result) -> dict:
    return {t.name: t for t in result.tests}


def test_weighted_classical_tests_equal_the_repeated_rows_and_name_the_tests_without_weights():
    y, p, w = _sample()
    weighted = calviz.classical_tests(y, p, sample_weight=w, measures=True, n_bins=10)
    rows = np.repeat(np.arange(len(y)), w)
    repeated = calviz.classical_tests(y[rows], p[rows], measures=True, n_bins=10)
    got, want = _tests(weighted), _tests(repeated)
    assert set(got) == {"spiegelhalter", "hosmer_lemeshow"}
    for name in got:
        assert got[name].statistic == pytest.approx(want[name].statistic, rel=1e-10)
        assert got[name].pvalue == pytest.approx(want[name].pvalue, rel=1e-8, abs=1e-300)
    for name in ("mce", "ace"):
        assert weighted.measures[name].value == pytest.approx(repeated.measures[name].value, rel=1e-12)
    assert set(weighted.errors) == {"cox", "kolmogorov_smirnov", "kuiper"}
    assert "no weighted Cox intercept/slope test" in weighted.errors["cox"]
    assert "Spiegelhalter z, Hosmer–Lemeshow" in weighted.errors["kuiper"]
    # unit weights: the tests as without weights
    ones = _tests(calviz.classical_tests(y, p, sample_weight=np.ones(len(y))))
    plain = _tests(calviz.classical_tests(y, p))
    for name in ones:
        assert ones[name].statistic == pytest.approx(plain[name].statistic, rel=1e-12)
    with pytest.raises(calviz.InputError, match="non-negative"):
        calviz.classical_tests(y, p, sample_weight=-np.ones(len(y)))


def test_the_classical_view_uses_the_datas_weights():
    y, p, w = _sample(seed=1)
    data = with_weights(calviz.as_calibration_data(y, p), w.astype(float))
    options = AnalysisOptions(n_bins=12)
    shown = compute_classical(data, options)
    direct = calviz.classical_tests(y, p, sample_weight=w, measures=True, n_bins=12)
    assert {k: t.statistic for k, t in _tests(shown).items()} == {k: t.statistic for k, t in
                                                                 _tests(direct).items()}
    assert shown.errors == direct.errors
    assert view("classical").weighted
    assert "other tests" not in unweighted_views(data, options)


def test_calviz_check_prints_the_weighted_ece(tmp_path, capsys):
    y, p, w = _sample(n=1200, seed=2)
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y_true": y, "y_prob": p, "w": w}).to_csv(path, index=False)
    argv = ["check", str(path), "--weight-column", "w", "--resampling", "analytic", "--n-bins", "10"]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = np.repeat(np.arange(len(y)), w)
    expected = calviz.binned_ece(y[rows], p[rows], n_bins=10).value
    assert summary["weighted_ece"]["value"] == pytest.approx(expected, rel=1e-12)
    assert summary["weighted_ece"]["target"] == "binary"
    assert "cox" in summary["classical"]["errors"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"weighted ECE {expected:.4f} (ℓ1 plug-in, 10 equal-width bins, binary target)" in out
    assert "no weighted Kuiper test" in out
    assert main(argv[:2] + ["--resampling", "analytic", "--json"]) == 0  # no weights: no weighted ECE
    assert "weighted_ece" not in json.loads(capsys.readouterr().out)
