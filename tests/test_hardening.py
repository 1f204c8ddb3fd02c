"""Faults found by adversarial use, one test (or a few) each: the cost model bounds every estimator's work
(degenerate data takes the direct-sum path, oversize parameters are refused or degrade openly), interval
ends stay in their parameter's range, the CLI's exit codes, atomic reports, and input refused alike in
memory, in files and on Dask."""

from __future__ import annotations

import contextlib
import importlib
import io
import resource
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz import _distance as distance
from calviz import _intervals as intervals
from calviz import _smooth as smooth
from calviz import cli
from calviz._binning import assign_bins
from calviz._data import InputError
from calviz._sums import bin_sums
from calviz.analysis import AnalysisOptions
from calviz.io import read_predictions, read_predictions_bytes

# ------------------------------------------------------------------------------------------------------
# cost model: the smooth diagram


DEGENERATE = {
    "all ones": ([1, 1, 1], [1.0, 1.0, 1.0]),
    "predictions in {0, 1}": ([0, 1, 1, 0, 1], [0.0, 1.0, 1.0, 1.0, 0.0]),
    "one distinct value": ([0, 1, 1, 0, 1, 0], [0.3] * 6),
    "n < 10, near-perfect": ([1, 0, 1], [0.99999, 0.00001, 0.99999]),
}


@pytest.mark.parametrize("kernel", smooth.KERNELS)
@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_degenerate_data_take_the_direct_band(name, kernel):
    """Few distinct predictions: at a small bandwidth the band is computed by direct kernel sums at the
    occupied grid nodes (microseconds per resample) instead of FFTs over a grid of ~64/σ points (σ at its
    floor 10⁻⁴ made that 1 s per resample: 84 s for [1, 1, 1])."""
    y, p = DEGENERATE[name]
    bandwidth = calviz.smooth_ece(y, p, kernel=kernel).bandwidth
    problem = smooth._SmoothingProblem(np.asarray(p, float), np.asarray(y, float), kernel)
    method, level, resamples, note = problem._band_plan(bandwidth, 1001, 100)
    assert (resamples, note) == (100, "")
    # direct sums, or (a wide bandwidth) FFTs on a grid no finer than the coarsest one
    coarsest = 2 ** (smooth._MIN_LEVEL_REFLECTED + 1)
    assert method == "direct" or problem.grid_values(bandwidth, level) <= coarsest
    res = calviz.smooth_reliability(y, p, kernel=kernel, seed=0)
    assert res.n_resamples == 100 and res.band_note == ""
    assert np.all(res.band_low <= res.curve) and np.all(res.curve <= res.band_high)
    assert np.all(np.isfinite(res.band_low)) and np.all(np.isfinite(res.band_high))


@pytest.mark.parametrize("kernel", smooth.KERNELS)
def test_sparse_binning_equals_dense(kernel, monkeypatch):
    """A grid much finer than the sample is aggregated over the occupied categories only: the same
    aggregates, bit for bit, as the per-cell kernel (ties, atoms at 0 and 1, both labels)."""
    rng = np.random.default_rng(8)
    p = np.concatenate([rng.random(40), [0.0, 0.0, 1.0, 0.5, 0.5]])
    y = (rng.random(p.size) < p).astype(float)
    fields = ("cell", "label", "count", "low_weight", "high_weight", "low_residual", "high_residual")
    sparse = smooth._SmoothingProblem(p, y, kernel).binned(1e-3)
    monkeypatch.setattr(smooth, "_SPARSE_CELLS_PER_POINT", 10**12)
    dense = smooth._SmoothingProblem(p, y, kernel).binned(1e-3)
    assert sparse.n_cells > 8 * p.size
    for name in fields:
        np.testing.assert_array_equal(getattr(sparse, name), getattr(dense, name))


def _forced_band(problem, plan, sigma, grid, centered):
    original = problem._band_plan
    problem._band_plan = lambda *args: plan(original(*args))
    try:
        return problem.bootstrap_curves(sigma, grid, 40, np.random.default_rng(3), centered)[0]
    finally:
        problem._band_plan = original


@pytest.mark.parametrize("kernel", smooth.KERNELS)
@pytest.mark.parametrize("centered", [False, True])
def test_direct_band_equals_fft_band(kernel, centered):
    """The two ways of computing a resample's curve agree (same draws) to the FFT grid's linear-binning
    error, on data with ties, atoms at 0 and 1 and a small bandwidth.  Compared where the data are dense
    (gaps of a few σ at most): far from every drawn point the curve is only carried over from the nearest
    point where the density is reliable, and the two paths place those points differently."""
    rng = np.random.default_rng(11)
    p = np.concatenate([np.linspace(0.0, 0.08, 9), 0.3 + 0.4 * rng.random(50), [0.5, 0.5, 1.0]])
    y = (rng.random(p.size) < p).astype(float)
    sigma, grid = 0.01, np.linspace(0.0, 1.0, 201)
    problem = smooth._SmoothingProblem(p, y, kernel)
    assert problem._band_plan(sigma, grid.size, 40)[0] == "direct"
    direct = _forced_band(problem, lambda plan: plan, sigma, grid, centered)
    fft = _forced_band(problem, lambda plan: ("fft",) + plan[1:], sigma, grid, centered)
    dense = (grid >= 0.32) & (grid <= 0.68)
    np.testing.assert_allclose(direct[:, dense], fft[:, dense], atol=2e-3)


@pytest.mark.parametrize("kernel", smooth.KERNELS)
def test_direct_point_estimate_equals_fft(kernel, monkeypatch):
    """smECE, the curve and the density by direct sums near the occupied nodes equal the FFT's values
    (smECE to round-off: both are the sampled Gaussian convolution of the same grid masses), on data with
    atoms at 0 and 1 (the reflected images), ties and n = 3."""
    cases = [([1, 1, 1], [1.0, 1.0, 1.0], 1e-4), ([0, 1, 1, 0, 1], [0.0, 1.0, 0.7, 0.7, 0.02], 3e-3),
             ([1, 0, 1, 1, 0, 0, 1], [0.4, 0.41, 0.9, 0.93, 0.1, 0.0, 1.0], 0.02)]
    grid = np.linspace(0.0, 1.0, 101)
    for y, p, sigma in cases:
        for centered in (False, True):
            direct = calviz.smooth_reliability(y, p, bandwidth=sigma, kernel=kernel, centered=centered,
                                               n_resamples=0, grid_size=101)
            problem = smooth._SmoothingProblem(np.asarray(p, float), np.asarray(y, float), kernel)
            assert problem._uses_direct(sigma, problem.binned(sigma), grid.size)
            with monkeypatch.context() as m:
                m.setattr(smooth, "_DIRECT_MAX_ENTRIES", 0)
                fft = calviz.smooth_reliability(y, p, bandwidth=sigma, kernel=kernel, centered=centered,
                                                n_resamples=0, grid_size=101)
            assert direct.smooth_ece == pytest.approx(fft.smooth_ece, rel=1e-9, abs=1e-12)
            # compared within two kernel widths of a point, in the kernel's coordinate (gaps between
            # points carry the curve over from each path's own reliable points)
            if kernel == "reflected_gaussian":
                at, points, width = grid, np.asarray(p), sigma
            else:
                with np.errstate(divide="ignore"):
                    at = np.log(grid) - np.log1p(-grid)
                clipped = np.clip(p, smooth.LOGIT_CLIP, 1 - smooth.LOGIT_CLIP)
                points, width = np.log(clipped) - np.log1p(-clipped), 4 * sigma
            near = np.min(np.abs(at[:, None] - points[None, :]), axis=1) <= 2 * width
            np.testing.assert_allclose(direct.curve[near], fft.curve[near], atol=1e-3)
            # far from every point both densities are ~e⁻³² (each path clips there at its own margin)
            np.testing.assert_allclose(direct.density, fft.density, rtol=1e-3,
                                       atol=max(1e-6 * fft.density.max(), 1e-8))


def test_band_degrades_openly_above_its_budget(monkeypatch):
    """Many distinct predictions at a small bandwidth: above the work budget the band is computed on a
    coarser grid, then from fewer resamples, and the result says so."""
    rng = np.random.default_rng(2)
    p = rng.random(3000)
    y = (rng.random(p.size) < p).astype(float)
    monkeypatch.setattr(smooth, "BAND_WORK_BUDGET", 1 << 18)
    res = calviz.smooth_reliability(y, p, bandwidth=0.002, n_resamples=100, seed=0, alpha=0.05)
    assert res.n_resamples < 100
    assert "coarser" in res.band_note and f"{res.n_resamples} of the 100 resamples" in res.band_note
    assert np.all(res.band_low <= res.curve) and np.all(res.curve <= res.band_high)
    full = calviz.smooth_reliability(y, p, bandwidth=0.05, n_resamples=20, seed=0)
    assert full.band_note == "" and full.n_resamples == 20


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"grid_size": 10**10}, r"'grid_size' parameter of smooth_reliability .* \[2, 100001\]"),
        ({"n_resamples": 10**9}, r"'n_resamples' parameter of smooth_reliability .* \[0, 100000\]"),
        ({"n_resamples": 20_000, "grid_size": 10_001}, "n_resamples × grid_size must be at most"),
    ],
)
def test_oversize_smooth_parameters_are_refused(kwargs, match):
    with pytest.raises(InputError, match=match):
        calviz.smooth_reliability([0, 1, 1, 0], [0.2, 0.6, 0.7, 0.4], **kwargs)


# ------------------------------------------------------------------------------------------------------
# cost model: distance measures and intervals


def test_lp_grid_beyond_the_budget_is_refused():
    """grid_step = 1e-4 at n = 8 took about a minute in the LP; the limit is named."""
    y, p = [0, 1, 1, 0, 1, 0, 1, 1], [0.1, 0.9, 0.8, 0.3, 0.6, 0.2, 0.7, 0.55]
    for func in (calviz.lower_dce, calviz.distance_bounds):
        with pytest.raises(InputError, match=f"grid_step must be at least 1/{distance.MAX_LP_GRID}"):
            func(y, p, grid_step=1e-4)
    with pytest.raises(InputError, match="n_resamples must be at most 100 at grid_step 0.001"):
        calviz.distance_bounds(y, p, n_resamples=1000)
    with pytest.raises(InputError, match="n_resamples must be at most 17 at grid_step 0.0005"):
        calviz.distance_bounds(y, p, n_resamples=18, grid_step=5e-4)
    assert calviz.lower_dce(y, p, grid_step=1 / distance.MAX_LP_GRID).n == 8


def test_bootstrap_interval_degrades_openly_above_its_budget(monkeypatch):
    rng = np.random.default_rng(0)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    monkeypatch.setattr(intervals, "BOOTSTRAP_WORK_BUDGET", 500 * 40)
    res = calviz.ece_interval(y, p, method="bootstrap", n_resamples=1000, seed=0)
    assert res.regime.startswith("percentile bootstrap, 40 resamples") and "1000 asked" in res.regime
    with pytest.raises(InputError, match=r"'n_resamples' parameter of ece_interval .* \[2, 100000\]"):
        calviz.ece_interval(y, p, method="bootstrap", n_resamples=10**9)


def test_interval_ends_lie_in_the_parameter_range():
    """ECE ≤ 1 for a scalar target: the asymptotic upper end T₊ + z₂s could exceed it on tiny samples
    (1.017 on four top-1 rows); both ends are clipped to [0, 1] (ECE² ≤ 2 for a vector)."""
    rng = np.random.default_rng(0)
    clipped = 0
    for _ in range(400):
        probs = rng.dirichlet(np.full(3, 0.3), 4)
        labels = rng.integers(0, 3, 4)
        for top_k in (1, 3):
            res = calviz.ece_interval(labels, probs, n_bins=int(rng.integers(1, 16)), top_k=top_k)
            top = 1.0 if top_k == 1 else 2.0
            assert 0.0 <= res.low_sq <= res.estimate_sq <= res.high_sq <= top
            assert 0.0 <= res.low <= res.estimate <= res.high <= np.sqrt(top)
            if top_k == 1:
                t = max(res.statistic, 0.0)
                clipped += intervals._interval(res.statistic, res.se, res.null_sd, res.alpha)[1] > 1.0
                assert res.estimate_sq == min(t, 1.0)
    assert clipped > 0  # the rule would have left the range: the clipping was exercised


# ------------------------------------------------------------------------------------------------------
# clear errors at the API (item 8)


@pytest.fixture
def synchronous_dask():
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="synchronous"):
        yield pytest.importorskip("calviz.dask")


@pytest.mark.parametrize("y_true", [None, 1, np.array(1)])
def test_dask_refuses_missing_or_scalar_labels(synchronous_dask, y_true):
    with pytest.raises(InputError, match="y_true must be 1-D labels or a 2-D one-hot array"):
        synchronous_dask.binned_ece(y_true, np.array([0.2, 0.3, 0.4]))


@pytest.mark.parametrize("split_every", [None, 1, 2.5, True])
def test_dask_refuses_bad_fan_in(synchronous_dask, split_every):
    uniform = r"^The 'split_every' parameter of binned_ece must be an int in \[2, inf\); got "
    with pytest.raises(InputError, match=uniform):
        synchronous_dask.binned_ece(np.array([0, 1, 1]), np.array([0.2, 0.3, 0.4]), split_every=split_every)


@pytest.mark.parametrize("field", ["n_bins", "n_resamples", "top_k", "class_index", "seed", "n"])
@pytest.mark.parametrize("value", [float("inf"), float("nan"), -1, 2.5, True])
def test_analysis_options_refuse_non_integral_counts(field, value):
    with pytest.raises(InputError, match=rf"^The '{field}' parameter of AnalysisOptions must be an int in "):
        AnalysisOptions(**{field: value})


def test_interval_from_sums_refuses_infinite_bins():
    sums = bin_sums(assign_bins(np.array([0.2, 0.6, 0.7]), n_bins=5), np.array([0.2, 0.6, 0.7]),
                           np.array([0, 1, 1]))
    with pytest.raises(InputError, match="n_bins must be a positive integer"):
        intervals.interval_from_sums(sums, n_bins=float("inf"))
    assert intervals.interval_from_sums(sums, n_bins=5).n_bins == 5


def _npz() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, y_true=np.array([0, 1, 1]), y_prob=np.array([0.2, 0.6, 0.7]))
    return buffer.getvalue()


def _npy_claiming(shape) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buffer.getvalue() + b"\0" * 16


def test_npz_with_bad_crc_is_an_input_error():
    raw = bytearray(_npz())
    member = raw.find(b"\x93NUMPY", raw.find(b"y_prob.npy"))
    raw[member + 130] ^= 0xFF  # a data byte of y_prob: the stored CRC no longer matches
    with pytest.raises(InputError, match="a.npz: .*'y_prob'.*Bad CRC"):
        read_predictions_bytes(bytes(raw), "a.npz")


def test_npz_and_npy_declaring_huge_arrays_are_input_errors():
    """A few hundred bytes declaring 10¹² elements: refused from the header, nothing allocated."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as archive:
        archive.writestr("y_true.npy", _npy_claiming((10**12,)))
        archive.writestr("y_prob.npy", _npy_claiming((2,)))
    with pytest.raises(InputError, match=r"array 'y_true' declares shape \(1000000000000,\)"):
        read_predictions_bytes(raw.getvalue(), "a.npz")
    with pytest.raises(InputError, match="truncated or corrupt"):
        read_predictions_bytes(_npy_claiming((10**12, 2)), "a.npy")


# ------------------------------------------------------------------------------------------------------
# the same refusals in memory, in files and on Dask (item 9)

STRINGS = "'y_prob' must be real numbers; got strings (e.g. '0.5')"
BOOLEANS = "must be probabilities; got booleans"


@pytest.mark.parametrize("probs", [
    np.array(["0.5", "0.2", "0.3"]),
    np.array(["0.5", "0.2", "0.3"], dtype=object),
    pd.Series(["0.5", "0.2", "0.3"], dtype="string"),
    pd.Series(["0.5", "0.2", "0.3"], dtype=object),
])
def test_numeric_text_is_refused_in_memory(probs):
    with pytest.raises(InputError, match=STRINGS.replace("'y_prob'", "y_prob").replace("(", r"\(").replace(
            ")", r"\)")):
        calviz.as_calibration_data([0, 1, 1], probs)


def test_boolean_probabilities_are_refused_and_boolean_labels_accepted():
    for flags in (np.array([True, False, True]), pd.Series([True, False, True], dtype="boolean"),
                  np.array([True, 0.5, 0.2], dtype=object)):
        with pytest.raises(InputError, match=BOOLEANS):
            calviz.as_calibration_data([0, 1, 1], flags)
    data = calviz.as_calibration_data(np.array([False, True, True]), [0.2, 0.6, 0.7])
    assert data.labels.tolist() == [0, 1, 1]


def _parquet(tmp_path, frame) -> Path:
    path = tmp_path / "p.parquet"
    frame.to_parquet(path, index=False)
    return path


def test_files_refuse_what_memory_refuses(tmp_path):
    text = pd.DataFrame({"y_true": [0, 1, 1], "y_prob": ["0.5", "0.2", "0.3"]})
    with pytest.raises(InputError, match=f"p.parquet: {STRINGS}".replace("(", r"\(").replace(")", r"\)")):
        read_predictions(_parquet(tmp_path, text))
    flags = pd.DataFrame({"y_true": [0, 1, 1], "y_prob": [True, False, True]})
    with pytest.raises(InputError, match=f"p.parquet: 'y_prob' {BOOLEANS}"):
        read_predictions(_parquet(tmp_path, flags))
    with pytest.raises(InputError, match=f"a.csv: 'y_prob' {BOOLEANS}"):
        read_predictions_bytes(b"y_true,y_prob\n0,True\n1,False\n1,True\n", "a.csv")
    labels = read_predictions_bytes(b"y_true,y_prob\nFalse,0.2\nTrue,0.6\nTrue,0.7\n", "a.csv")
    assert labels.labels.tolist() == [0, 1, 1]


def test_duplicate_column_names_are_refused(tmp_path):
    message = "duplicate column name 'y_prob': each column must be named once"
    with pytest.raises(InputError, match=f"a.csv: {message}"):
        read_predictions_bytes(b"y_true,y_prob,y_prob\n0,0.2,0.9\n1,0.6,0.1\n", "a.csv")
    frame = pd.DataFrame([[0, 0.2, 0.9], [1, 0.6, 0.1]], columns=["y_true", "y_prob", "y_prob"])
    path = tmp_path / "d.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_arrays([pa.array(frame.iloc[:, i]) for i in range(3)],
                                        names=list(frame.columns)), path)
    with pytest.raises(InputError, match=message):
        read_predictions(path)


def test_csv_cut_mid_row_is_refused():
    """"0,0.35" cut to "0,0.3" still parses: a CSV must end its last row with a line break."""
    with pytest.raises(InputError, match=r"a.csv: the last line \(line 3\) does not end with a line break"):
        read_predictions_bytes(b"y_true,y_prob\n1,0.5\n0,0.3", "a.csv")
    assert read_predictions_bytes(b"y_true,y_prob\r\n1,0.5\r\n0,0.3\r\n", "a.csv").n == 2


def test_long_cells_are_cut_in_messages():
    cell = "x" * 5_000_000
    with pytest.raises(InputError) as info:
        read_predictions_bytes(f"y_true,y_prob\n1,0.5\n0,{cell}\n".encode(), "a.csv")
    assert len(str(info.value)) < 300 and "5,000,002 characters" in str(info.value)
    with pytest.raises(InputError) as info:
        calviz.as_calibration_data([0, 1], np.array([0.5, cell], dtype=object))
    assert len(str(info.value)) < 300


def test_dask_refuses_what_memory_refuses(synchronous_dask):
    dd = pytest.importorskip("dask.dataframe")
    # the in-memory file reader's messages, naming the table's column
    cases = [
        (pd.DataFrame({"y_true": [0, 1, 1], "y_prob": ["0.5", "0.2", "0.3"]}), STRINGS),
        (pd.DataFrame({"y_true": [0, 1, 1], "y_prob": pd.array(["0.5", "0.2", "0.3"], dtype="string")}),
         STRINGS),
        (pd.DataFrame({"y_true": [0, 1, 1], "y_prob": [True, False, True]}), f"'y_prob' {BOOLEANS}"),
        (pd.DataFrame([[0, 0.2, 0.9], [1, 0.6, 0.1]], columns=["y_true", "y_prob", "y_prob"]),
         "duplicate column name 'y_prob'"),
    ]
    for frame, message in cases:
        with pytest.raises(InputError) as info:
            synchronous_dask.binned_ece(dd.from_pandas(frame, npartitions=2))
        assert message in str(info.value)
    flags = pd.DataFrame({"y_true": [False, True, True, False], "y_prob": [0.2, 0.6, 0.7, 0.1]})
    assert synchronous_dask.binned_ece(dd.from_pandas(flags, npartitions=2)).n == 4


# ------------------------------------------------------------------------------------------------------
# calviz check / report (items 6 and 7)


@pytest.fixture
def predictions_csv(tmp_path) -> Path:
    rng = np.random.default_rng(4)
    p = rng.random(200)
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y_true": (rng.random(200) < p).astype(int), "y_prob": p}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("option", [["--target", "classwise", "--class-index", "-1"], ["--seed", "-1"],
                                    ["--target", "topk", "--top-k", "0"],
                                    ["--n-bins", "0"], ["--n-resamples", "0"], ["--alpha", "nan"],
                                    ["--bandwidth", "inf"], ["--subsample", "1"]])
def test_check_option_errors_exit_2_with_one_line(predictions_csv, option, capsys):
    assert cli.main(["check", str(predictions_csv), *option]) == cli.EXIT_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("calviz check: error:")


def test_failed_resampled_test_with_fail_on_reject_exits_3(predictions_csv, monkeypatch, capsys):
    """The resampled test asked for fails (here: MemoryError): the decision is unavailable — not the
    analytic one silently put in its place (which exited 0)."""
    tcal_module = importlib.import_module("calviz._tcal")  # `calviz.tcal` may be bound to the function
    analytic = tcal_module.adaptive_tcal
    # the comparison rules read adaptive_tcal's declared constraints when first imported: import them
    # before the stand-in replaces it, as a run of the whole suite would have
    importlib.import_module("calviz._comparison")

    def failing(*args, resampling="y_only", **kwargs):
        if resampling != "analytic":
            raise MemoryError("resampling ran out of memory")
        return analytic(*args, resampling=resampling, **kwargs)

    monkeypatch.setattr(tcal_module, "adaptive_tcal", failing)
    monkeypatch.setattr(importlib.import_module("calviz.analysis.compute"), "adaptive_tcal", failing)
    code = cli.main(["check", str(predictions_csv), "--resampling", "y_only", "--n-resamples", "50",
                     "--fail-on-reject"])
    assert code == cli.EXIT_ENGINE
    assert "T-Cal decision unavailable" in capsys.readouterr().err


def test_report_output_path_is_checked_before_computing(predictions_csv, tmp_path, monkeypatch, capsys):
    report_module = importlib.import_module("calviz.present.report")

    def no_analysis(*args, **kwargs):
        raise AssertionError("the analysis ran before the output path was checked")

    monkeypatch.setattr(report_module, "analyze", no_analysis)
    target = tmp_path / "missing" / "r.html"
    assert cli.main(["report", str(predictions_csv), "-o", str(target)]) == cli.EXIT_INPUT
    assert "cannot write" in capsys.readouterr().err
    # the output is checked before the input is even read
    assert cli.main(["report", str(tmp_path / "absent.csv"), "-o", str(target)]) == cli.EXIT_INPUT
    assert "cannot write" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError):
        calviz.report([0, 1, 1], [0.2, 0.6, 0.7], path=target)


def test_report_of_three_identical_rows(tmp_path, capsys):
    """The 3-row all-ones file that made `calviz report` run for 325 s: every view is computed (the smooth
    band by direct sums) and the report is written."""
    data = tmp_path / "ones.csv"
    data.write_text("y_true,y_prob\n1,1\n1,1\n1,1\n")
    out = tmp_path / "ones.html"
    assert cli.main(["report", str(data), "-o", str(out)]) == cli.EXIT_OK
    assert out.stat().st_size > 0 and "wrote" in capsys.readouterr().out


def test_failed_report_write_keeps_the_previous_report(predictions_csv, tmp_path, monkeypatch, capsys):
    """A write cut short (here: a 200 kB file-size limit while the report is written; the report is several
    MB) leaves the previous report untouched and no temporary file behind, and exits 2 with one line.
    (In this process: the limit holds only while calviz writes the report file, so nothing else this
    process writes meanwhile — numba's cache — can hit it; Python ignores SIGXFSZ, so the write fails
    with EFBIG as in any process.)"""
    files = importlib.import_module("calviz._files")
    atomic_text = files.atomic_text

    @contextlib.contextmanager
    def atomic_text_under_a_size_limit(*args, **kwargs):
        with atomic_text(*args, **kwargs) as handle:
            soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
            resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, hard))
            try:
                yield handle
                handle.flush()  # (the limit applies to what reaches the file)
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

    monkeypatch.setattr(files, "atomic_text", atomic_text_under_a_size_limit)
    out = tmp_path / "report.html"
    out.write_text("<html>previous good report</html>")
    assert cli.main(["report", str(predictions_csv), "-o", str(out)]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "cannot write" in err, err
    assert out.read_text() == "<html>previous good report</html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preds.csv", "report.html"]
