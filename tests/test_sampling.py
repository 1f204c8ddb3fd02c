"""Large data: the subsample policy of the costly views (calviz.sampling), the all-rows override, the T-Cal
scale-axis rule, the column-block Parquet reader and a 10⁶-row file through ``calviz check`` / ``report``."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re

import numpy as np
import pytest
from scipy import stats

from calviz import plots, sampling
from calviz._classical import classical_tests
from calviz._data import InputError, as_calibration_data
from calviz._distance import distance_bounds, smce
from calviz._intervals import ece_interval
from calviz._synthetic import dirichlet_temperature, temperature_family
from calviz._tcal import adaptive_tcal
from calviz.analysis import AnalysisOptions, analyze, run_view
from calviz.app.store import job_label, view_key
from calviz.cli import build_parser, main, options_from_args
from calviz.io import read_predictions, write_predictions


@pytest.fixture
def small_policy(monkeypatch):
    """The policy with small sizes, so that tests run on small data."""
    monkeypatch.setattr(sampling, "SAMPLED_ROWS", {"distance": 60, "tcal_resampled": 80, "bootstrap": 40})
    monkeypatch.setattr(sampling, "SAMPLED_VIEWS", frozenset(sampling.SAMPLED_ROWS))


def _binary(n, seed=1, beta=1.5):
    s = temperature_family(n, seed=seed, beta=beta)
    return as_calibration_data(s.y_true, s.y_prob)


def _rows_of(sample, data):
    """Row indices of ``sample`` in ``data`` (its probabilities are distinct)."""
    order = np.argsort(data.probs)
    return order[np.searchsorted(data.probs, sample.probs, sorter=order)]


def test_policy_sizes_and_override():
    opts = AnalysisOptions()
    for view, size in sampling.SAMPLED_ROWS.items():
        assert sampling.sampled_rows(view, size, opts) is None  # not more rows than the size: all rows
        assert sampling.sampled_rows(view, size + 1, opts) == size
        assert sampling.sampled_rows(view, 10**7, opts.replace(all_rows=True)) is None
    for view in ("reliability", "interval", "tcal", "smooth", "smooth_curve", "classical"):
        assert sampling.sampled_rows(view, 10**7, opts) is None  # one-pass views: every row
    with pytest.raises(InputError, match="all_rows"):
        AnalysisOptions(all_rows="yes")


def test_subsample_is_seeded_reproducible_and_without_replacement(small_policy):
    data = _binary(500)
    opts = AnalysisOptions(seed=7)
    a, note = sampling.sample_for_view("distance", data, opts)
    b, _ = sampling.sample_for_view("distance", as_calibration_data(data.labels, data.probs), opts)
    c, _ = sampling.sample_for_view("distance", data, opts.replace(seed=8))
    assert a.n == 60 and np.array_equal(a.probs, b.probs) and np.array_equal(a.labels, b.labels)
    assert not np.array_equal(a.probs, c.probs)
    rows = _rows_of(a, data)
    assert np.unique(rows).size == 60  # without replacement
    assert np.array_equal(data.labels[rows], a.labels)  # labels stay with their predictions
    assert "60 of 500 rows" in note and "seed 7" in note
    # the draw is CalibrationData.subsample with the policy's own stream
    want = data.subsample(60, seed=np.random.default_rng([7, sampling.SAMPLE_STREAM]))
    assert np.array_equal(want.probs, a.probs)


def test_subsample_is_uniform(small_policy):
    """Every row is equally likely: inclusion counts over 3000 seeds against the hypergeometric
    expectation (chi-square, 200 rows; a fixed set of seeds, so the test is deterministic)."""
    data = _binary(200)
    counts = np.zeros(200)
    for seed in range(3000):
        sample, _ = sampling.sample_for_view("bootstrap", data, AnalysisOptions(seed=seed))
        counts[_rows_of(sample, data)] += 1
    expected = 3000 * 40 / 200
    assert counts.sum() == 3000 * 40
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert stats.chi2.sf(chi2, df=199) > 1e-3
    # and not merely balanced on average: the first and second halves of the rows
    assert abs(counts[:100].sum() - counts[100:].sum()) < 6 * np.sqrt(3000 * 40 * 0.25)


def test_sampled_views_state_the_subsample_and_the_all_rows_override(small_policy):
    data = _binary(400)
    opts = AnalysisOptions(seed=3)
    result, _, note = run_view("distance", data, opts)
    sample = data.subsample(60, seed=np.random.default_rng([3, sampling.SAMPLE_STREAM]))
    want = distance_bounds(sample.labels, sample.probs)
    assert result[0].lower == want.lower and result[0].upper == want.upper
    assert "60 of 400 rows" in note
    # the note states where each measure's all-rows value lies: subsample_interval of the subsample's results
    pi = float(np.mean(sample.labels))
    stated = re.findall(r"(smCE|dCE_lower|SintCE) \[([0-9.e+-]+), ([0-9.e+-]+)\]", note)
    assert [name for name, _, _ in stated] == ["smCE", "dCE_lower", "SintCE"], note
    full_bounds = distance_bounds(data.labels, data.probs)
    for (name, low, high), (measure, res) in zip(stated, want.results().items(), strict=True):
        interval = sampling.subsample_interval(measure, res, n=400, positives=int(sample.labels.sum()),
                                               positive_fraction=pi)
        assert (float(low), float(high)) == pytest.approx(interval[:2], rel=0.06, abs=1e-12)
        assert float(low) <= getattr(full_bounds, measure) <= float(high) * 1.06, (name, note)
    full, _, none = run_view("distance", data, opts.replace(all_rows=True))
    assert none is None
    assert full[0].lower == distance_bounds(data.labels, data.probs).lower
    analysis = analyze(data, opts, views=("tcal", "tcal_resampled", "bootstrap", "interval"))
    assert set(analysis.errors) == {"tcal_resampled", "bootstrap"}
    assert analysis.tcal_resampled.n == 80 and analysis.bootstrap.n == 40
    assert analysis.tcal.n == 400 and analysis.interval.n == 400
    assert "80 of 400 rows" in analysis.errors["tcal_resampled"]
    # a user subsample comes first; the policy applies to its rows
    analysis = analyze(data, opts.replace(n=300), views=("distance",))
    assert "60 of 300 rows" in analysis.errors["distance"]


def test_one_pass_numbers_at_full_n_are_the_engine_calls():
    """check's one-pass statistics run on every row and equal the engine's own calls, with or without
    the all-rows override."""
    data = _binary(30_000)
    y, p = data.labels, data.probs
    for opts in (AnalysisOptions(), AnalysisOptions(all_rows=True)):
        a = analyze(data, opts, views=("tcal", "interval", "classical"))
        assert a.errors == {}
        t = adaptive_tcal(y, p, resampling="analytic", seed=0)
        assert a.tcal.pvalue == t.pvalue and np.array_equal(a.tcal.statistics, t.statistics)
        i = ece_interval(y, p, n_bins=15, alpha=0.05)
        assert (a.interval.estimate, a.interval.low, a.interval.high) == (i.estimate, i.low, i.high)
        c = classical_tests(y, p, target="binary", measures=True, n_bins=15)
        assert [r.statistic for r in a.classical.tests] == [r.statistic for r in c.tests]
        assert a.classical.measures["ace"].value == c.measures["ace"].value


def test_smce_sampling_error_holds_by_simulation():
    """The stated 95% bound on |smCE(S) − smCE(P)| for subsamples of k = 4000 of P = 40 000 rows: over 40
    draws it is never exceeded (at the nominal 5% the chance of 0/40 exceedances would be 13%; the bound
    is conservative: the largest error is far below it), and it is the formula's value."""
    data = _binary(40_000, beta=2.0)
    full = smce(data.labels, data.probs).value
    pi = float(np.mean(data.labels))
    bound = sampling.smce_sampling_error(4000, pi)
    lipschitz = 2 * (1 + np.sqrt(pi * (1 - pi))) / np.sqrt(4000)
    assert bound == pytest.approx(lipschitz + np.sqrt(2 * np.log(20) / 4000))
    rng = np.random.default_rng(11)
    errors = [abs(smce(s.labels, s.probs).value - full)
              for s in (data.subsample(4000, seed=rng) for _ in range(40))]
    assert max(errors) <= bound < 0.1


@pytest.mark.parametrize("measure, draws", [("smce", 40), ("sintce", 40), ("lower_dce", 15)])
def test_subsample_interval_covers_the_all_rows_value(measure, draws):
    """The interval :func:`calviz.sampling.subsample_interval` gives from subsamples of k = 1500 of P = 15 000
    rows holds the all-rows value in every one of ``draws`` draws: the bound is stated at 95 %, so an
    exact-level bound would miss 0 of 40 with probability 13 % (0 of 15: 46 %); the bounds of Błasiok et al.
    are conservative.  smCE's is the formula of :func:`calviz.sampling.smce_sampling_error`."""
    from calviz import _distance

    data = _binary(15_000, beta=2.0)
    function = getattr(_distance, measure)
    full = function(data.labels, data.probs).value
    pi = float(np.mean(data.labels))
    rng = np.random.default_rng(5)
    for _ in range(draws):
        s = data.subsample(1500, seed=rng)
        result = function(s.labels, s.probs)
        low, high, bound = sampling.subsample_interval(measure, result, n=data.n,
                                                       positives=int(s.labels.sum()), positive_fraction=pi)
        assert 0.0 <= low <= full <= high and bound
        assert low <= result.value <= high or measure == "sintce"  # SintCE's is around min_ε, not the value
        if measure == "smce":
            assert high - result.value == pytest.approx(sampling.smce_sampling_error(1500, pi))
    # every row: the value itself (dCE_lower: its own linear-programming interval)
    result = function(data.labels, data.probs)
    low, high, bound = sampling.subsample_interval(measure, result, n=data.n, positives=0,
                                                   positive_fraction=pi)
    expected = (result.lower, result.upper) if measure == "lower_dce" else (result.value, result.value)
    assert (low, high) == expected and bound.startswith("all rows used")
    with pytest.raises(ValueError, match="The 'measure' parameter of subsample_interval must be a str among"):
        sampling.subsample_interval("ece", result, n=data.n + 1, positives=0, positive_fraction=pi)


def test_tcal_axis_stops_where_bins_are_mostly_empty():
    data = _binary(12_000, beta=1.0)
    result = adaptive_tcal(data.labels, data.probs, resampling="analytic")
    scales = np.asarray(result.n_bins, dtype=float)
    assert scales.max() > 12_000  # Algorithm 2 tests scales with more bins than rows
    frame = plots.tcal_frame(result)
    shown = frame["table"]["bins"]
    assert not result.reject and shown.max() <= 12_000 < 2 * shown.max()
    assert frame["hidden"] == int((scales > 12_000).sum()) > 0
    # a finer scale that rejects stays off the axis (which would otherwise run to 16,384 bins for a few
    # hundred rows) and is counted in the caption's note
    # (a scale rejects by its p-value, TCalResult.scale_rejections; T^d = 0 never does)
    pvalues, statistics = (np.asarray(a, dtype=float).copy() for a in (result.pvalues, result.statistics))
    pvalues[-1], statistics[-1] = 0.0, 1e-3
    forced = dataclasses.replace(result, pvalues=pvalues, statistics=statistics)
    frame = plots.tcal_frame(forced)
    assert frame["table"]["bins"].max() <= 12_000
    assert frame["hidden"] == int((scales > 12_000).sum()) and frame["hidden_rejected"] == 1
    # full calibration counts cells: m^(K−1) ≤ n
    k3 = dirichlet_temperature(3000, seed=1, n_classes=3, beta=1.0)
    full = adaptive_tcal(k3.y_true, k3.y_prob, target="full", resampling="analytic")
    shown = plots.tcal_frame(full)["table"]["bins"]
    assert (shown.astype(float) ** 2 <= 3000).all() and (2 * shown.max()) ** 2 > 3000


def test_store_keys_and_status_name_the_rows(small_policy):
    data = _binary(500)
    opts = AnalysisOptions()
    assert view_key("distance", data, opts) != view_key("distance", data, opts.replace(all_rows=True))
    assert view_key("distance", data, opts) != view_key("distance", data, opts.replace(seed=1))
    assert view_key("interval", data, opts) == view_key("interval", data, opts.replace(all_rows=True))
    assert "60 of 500 rows" in job_label("distance", "distance", data, opts)
    assert "all 500 rows" in job_label("distance", "distance", data, opts.replace(all_rows=True))
    assert "≈" in job_label("bootstrap", "bootstrap", data, opts)


def test_store_computes_slow_one_pass_views_off_the_ui_thread_on_large_data(small_policy, monkeypatch):
    from calviz.app import store as store_module

    monkeypatch.setattr(importlib.import_module("calviz.analysis.views"), "LARGE_ROWS", 300)
    data, opts = _binary(500), AnalysisOptions(resampling="analytic")
    store = store_module.ResultStore(debounce=0)
    try:
        store.update(data, opts)
        assert store.classical.pending and store.tcal.pending  # background jobs, labelled with their rows
        assert "all 500 rows" in store.jobs["classical"]
        store.wait()
        assert store.classical.result is not None and store.tcal.result.n == 500 and not store.jobs
        small = _binary(200)
        store.update(small, opts)  # below the threshold: the analytic T-Cal at once (the classical tests
        # are always a background job: ~0.2 s at 10⁵ rows would delay every redraw)
        assert not store.tcal.pending and store.tcal.result.n == 200
    finally:
        store.close()


def test_cli_all_rows_flag():
    args = build_parser().parse_args(["check", "x.csv", "--all-rows"])
    assert options_from_args(args).all_rows is True
    assert options_from_args(build_parser().parse_args(["check", "x.csv"])).all_rows is False


@pytest.mark.parametrize("labels_dtype", [np.int64, np.float64])
def test_parquet_column_blocks_read_exactly(tmp_path, labels_dtype):
    import pyarrow as pa
    import pyarrow.parquet as pq

    s = dirichlet_temperature(70_000, seed=4, n_classes=4)
    path = write_predictions(tmp_path / "k4.parquet", s.y_true, s.y_prob)
    data = read_predictions(path)
    assert np.array_equal(data.labels, s.y_true) and np.array_equal(data.probs, s.y_prob)
    y = (s.y_true == 1).astype(labels_dtype)
    table = pa.table({"y_true": y, "y_prob": s.y_prob[:, 1]})
    pq.write_table(table, tmp_path / "b.parquet", row_group_size=30_000)  # 3 row groups
    binary = read_predictions(tmp_path / "b.parquet")
    assert np.array_equal(binary.probs, s.y_prob[:, 1]) and np.array_equal(binary.labels, y)
    # missing values fall back to the reader that names the cell
    probs = pa.array(np.where(np.arange(70_000) == 123, np.nan, s.y_prob[:, 1]), from_pandas=True)
    pq.write_table(pa.table({"y_true": y, "y_prob": probs}), tmp_path / "nan.parquet")
    with pytest.raises(InputError, match="row 123"):
        read_predictions(tmp_path / "nan.parquet")


def test_million_row_file_through_check_and_report(tmp_path, capsys):
    s = temperature_family(10**6, seed=5, beta=1.3)
    path = write_predictions(tmp_path / "big.parquet", s.y_true, s.y_prob)
    assert main(["check", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["n"] == 10**6 and out["decision"] == "reject"
    assert "200,000 of 1,000,000 rows" in out["errors"]["distance"]
    assert "200,000 of 1,000,000 rows" in out["errors"]["tcal_resampled"]
    # the interval is one pass over all rows; the resampled T-Cal ran on the subsample
    assert out["ece"]["n"] == 10**6 and out["tcal"]["n"] == 200_000
    report = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(report)]) == 0
    text = report.read_text()
    assert "50,000 of 1,000,000 rows" in text and "<h2>Notes</h2>" in text
