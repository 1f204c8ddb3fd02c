"""A weight column of a predictions file: ``--weight-column`` of check / report / serve and the app's box.

Integer weights are checked against the file with each row repeated by its weight (frequency weights);
bad columns get one line and exit status 2; the views that cannot take weights are named once."""

from __future__ import annotations

import json

import numpy as np
import pytest

from calviz._weights import with_weights
from calviz.analysis import AnalysisOptions
from calviz.analysis.compute import compute_reliability
from calviz.analysis.views import REGISTRY, unweighted_views
from calviz.cli import main

RNG = np.random.default_rng(7)
N = 80
P = np.round(RNG.uniform(0.02, 0.98, N), 2)  # (ties)
Y = (RNG.random(N) < P**1.3).astype(int)
W = RNG.integers(0, 4, N)
W[0] = 2


def _csv(path, y, p, w=None):
    rows = ["y_true,y_prob" + (",w" if w is not None else "")]
    rows += [f"{a},{float(b)!r}" + (f",{c}" if w is not None else "") for a, b, c in
             zip(y, p, w if w is not None else [None] * len(y), strict=True)]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("weights")
    return (_csv(d / "weighted.csv", Y, P, W), _csv(d / "repeated.csv", np.repeat(Y, W), np.repeat(P, W)))


def _check(capsys, *args) -> dict:
    assert main(["check", *map(str, args), "--json", "--resampling", "analytic"]) == 0
    return json.loads(capsys.readouterr().out)


def test_integer_weights_equal_repeated_rows_through_check_json(files, capsys):
    weighted, repeated = files
    a = _check(capsys, weighted, "--weight-column", "w", "--scheme", "corp")
    b = _check(capsys, repeated, "--scheme", "corp")
    assert a["weight_column"] == "w" and "weight_column" not in b
    for key in ("mean_score", "mcb", "dsc", "unc"):
        assert a["decomposition"][key] == pytest.approx(b["decomposition"][key], abs=1e-12, rel=0)
    for key in ("mean_brier", "mcb", "dsc", "unc"):
        assert a["corp"][key] == pytest.approx(b["corp"][key], abs=1e-12, rel=0)
    assert a["corp"]["steps"]["x"] == b["corp"]["steps"]["x"]
    np.testing.assert_allclose(a["corp"]["steps"]["recalibrated"], b["corp"]["steps"]["recalibrated"],
                               atol=1e-12, rtol=0)
    # an unweighted view analyses the rows as they are: differs from the repeated file, and says so
    assert a["summary"]["n"] == N
    assert "ECE interval" in a["not_weighted"] and "T-Cal (analytic)" in a["not_weighted"]
    assert "score decomposition" not in a["not_weighted"]
    assert a["weights_note"].startswith("Rows weighted by column 'w'; not weighted: ")


def test_the_text_output_names_the_unweighted_views_once(files, capsys):
    assert main(["check", str(files[0]), "--weight-column", "w", "--resampling", "analytic"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "not weighted" in line]
    assert len(lines) == 1 and "T-Cal (analytic)" in lines[0] and "ECE interval" in lines[0]


@pytest.mark.parametrize("column, message", [
    ("-1", "must be non-negative; row 1 has -1.0"),
    ("", "must be finite; row 1 has nan"),
    ("inf", "must be finite; row 1 has inf"),
    ("heavy", "must be numbers; row 1 has 'heavy'"),
    (None, "the weights are all zero"),
])
def test_bad_weight_columns_give_one_line_and_exit_2(tmp_path, capsys, column, message):
    w = [0, 0, 0] if column is None else ["1", column, "2"]
    path = _csv(tmp_path / "bad.csv", [1, 0, 1], [0.9, 0.2, 0.6], w)
    assert main(["check", str(path), "--weight-column", "w", "--resampling", "analytic"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "weight column 'w'" in err, err


def test_a_missing_weight_column_and_a_wrong_length_are_input_errors(tmp_path, capsys):
    path = _csv(tmp_path / "ok.csv", [1, 0, 1], [0.9, 0.2, 0.6], [1, 1, 1])
    assert main(["check", str(path), "--weight-column", "nope", "--resampling", "analytic"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
    from calviz import as_calibration_data
    from calviz._errors import InputError

    with pytest.raises(InputError, match="has 2 entries but the data have 3 rows"):
        with_weights(as_calibration_data([1, 0, 1], [0.9, 0.2, 0.6]), [1, 2])


def test_reliability_and_subsamples_keep_the_weights():
    from calviz import as_calibration_data

    data = with_weights(as_calibration_data(Y, P), W)
    repeated = as_calibration_data(np.repeat(Y, W), np.repeat(P, W))
    for scheme in ("equal_width", "equal_mass"):
        options = AnalysisOptions(n_bins=7, scheme=scheme, resampling="analytic")
        a, b = compute_reliability(data, options), compute_reliability(repeated, options)
        np.testing.assert_allclose(a.mean_confidence, b.mean_confidence, atol=1e-12, rtol=0)
        np.testing.assert_allclose(a.observed_frequency, b.observed_frequency, atol=1e-12, rtol=0)
    part = data.subsample(30, seed=1)
    rows = data.subsample_rows(30, seed=1)
    np.testing.assert_array_equal(part.weights, W[rows])


def test_the_registry_declares_the_weighted_views_in_one_place():
    assert {r.name for r in REGISTRY if r.weighted} == {"reliability", "corp", "corp_curve", "decomposition",
                                                        "classical"}
    from calviz import as_calibration_data

    plain = as_calibration_data(Y, P)
    options = AnalysisOptions(resampling="analytic")
    assert unweighted_views(plain, options) == ()
    labels = unweighted_views(with_weights(plain, W), options)
    assert "T-Cal (analytic)" in labels and "reliability diagram" not in labels


def test_the_app_store_gives_weighted_reliability_and_names_the_unweighted_views(monkeypatch):
    from calviz import as_calibration_data
    from calviz._dashboard import CalvizApp
    from calviz.app import precomputed

    rng = np.random.default_rng(3)
    n = 3000
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.random(n) < p**1.5).astype(int)
    w = rng.integers(0, 4, n)
    data = with_weights(as_calibration_data(y, p), w)
    repeated = as_calibration_data(np.repeat(y, w), np.repeat(p, w))
    # the dashboard's sorted views are unweighted: never used for weighted data
    monkeypatch.setattr(precomputed, "PRESORT_MIN_ROWS", 0)
    assert precomputed.sorted_target("reliability", data, AnalysisOptions()) is None
    assert precomputed.sorted_target("reliability", repeated, AnalysisOptions()) is not None
    monkeypatch.undo()
    app = CalvizApp(data, n_resamples=50, resampling="analytic")
    app.start()
    app.wait()
    options = app.controls.options(data.n)
    shown = app.store.result("reliability", data, options)
    expected = compute_reliability(repeated, options)
    np.testing.assert_allclose(shown.observed_frequency, expected.observed_frequency, atol=1e-12, rtol=0)
    np.testing.assert_allclose(shown.mean_confidence, expected.mean_confidence, atol=1e-12, rtol=0)
    np.testing.assert_allclose(shown.counts, expected.counts, atol=1e-9, rtol=0)  # weighted counts
    note = app.status.text.object.split("Rows weighted by their sample weights; not weighted: ")[1]
    assert "T-Cal (analytic)" in note and "ECE interval" in note and "reliability diagram" not in note
    app.comparison.controls.mode = "recalibration"  # the comparisons are unweighted, and say so
    assert "not weighted: this comparison" in app.comparison.request().source


def test_the_upload_reads_the_weight_column_box():
    from calviz.app import sources

    csv = b"y_true,y_prob,w\n1,0.9,2\n0,0.2,0\n1,0.7,1\n0,0.4,3\n"
    data = sources.read_upload(csv, "up.csv", limit=10**6, columns={"weight_column": "w"})
    np.testing.assert_array_equal(data.weights, [2, 0, 1, 3])
    with pytest.raises(ValueError, match=r"up.csv: weight column 'w' must be non-negative; row 1 has -1.0"):
        sources.read_upload(csv.replace(b",0\n", b",-1\n"), "up.csv", limit=10**6,
                            columns={"weight_column": "w"})


def test_the_report_says_which_views_ignore_the_weights(files, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(files[0]), "--weight-column", "w", "--resampling", "analytic",
                 "-o", str(out)]) == 0
    page = out.read_text()
    assert page.count("Rows weighted by their sample weights; not weighted: ") == 1
    assert "<h2>Sample weights</h2>" in page


def test_a_matrix_kept_on_disk_carries_its_weights(tmp_path):
    import pandas as pd

    from calviz import as_calibration_data
    from calviz.analysis.compute import compute_decomposition
    from calviz.io import read_predictions

    rng = np.random.default_rng(0)
    n = 300
    probs = rng.dirichlet([1, 1, 1], n)
    y = np.array([rng.choice(3, p=row) for row in probs])
    w = rng.integers(0, 3, n)
    path = tmp_path / "m.csv"
    pd.DataFrame({"y_true": y, "p_0": probs[:, 0], "p_1": probs[:, 1], "p_2": probs[:, 2]}).to_csv(path,
                                                                                                   index=False)
    data = with_weights(read_predictions(path, keep_matrix=False), w)
    assert type(data).__name__ == "FileBackedData"
    np.testing.assert_array_equal(data.subsample(100, seed=1).weights, w[data.subsample_rows(100, seed=1)])
    repeated = as_calibration_data(np.repeat(y, w), np.repeat(probs, w, axis=0))
    a, b = compute_decomposition(data, AnalysisOptions()), compute_decomposition(repeated, AnalysisOptions())
    assert (a.mean_score, a.mcb, a.dsc) == pytest.approx((b.mean_score, b.mcb, b.dsc), abs=1e-12, rel=0)


def test_a_weight_column_is_refused_where_it_would_be_dropped(tmp_path, capsys):
    assert main(["check", str(tmp_path), "--weight-column", "w"]) == 2
    assert "--weight-column needs a predictions file loaded in memory" in capsys.readouterr().err
