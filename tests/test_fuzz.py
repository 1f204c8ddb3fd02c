"""Property-based fuzzing of every public entry point: whatever the arguments, a call returns a result or
refuses with a ValueError / TypeError (calviz's InputError is a ValueError) — never another exception,
never a hang.

Inputs mix valid data (binary and multi-class, with the degenerate cases: all predictions in {0, 1}, a
single distinct value, perfect predictions, n from 2) with broken data (NaN, out-of-range, strings and
numeric text, booleans as probabilities, None and scalars, ragged and mismatched arrays) and hostile
option values (0, negative, huge, inf, NaN, wrong types).

Each example runs under a limit of CPU time, not of wall time (a loaded machine slows every call, but
does not make it do more work): SIGPROF interrupts it after ``EXAMPLE_LIMIT`` CPU-seconds of this process
(and the CPU time is checked afterwards, for work that swallowed the interruption), and a faulthandler
watchdog ends the whole run, printing every thread's stack, if a call is stuck (waiting, or where no
signal reaches it) for ``WATCHDOG_LIMIT`` seconds of wall time.  The limit is far above the cost model's
worst case (about a second on one core), so only a real hang — a cost the model does not bound — trips
it.

The profile is fixed (derandomised, a bounded number of examples per entry point, no example database),
so the suite runs the same examples everywhere and stays within a few minutes on two cores.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import math
import signal
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calviz
from calviz._binning import assign_bins
from calviz._intervals import interval_from_sums
from calviz._sums import bin_sums
from calviz.analysis import AnalysisOptions

#: CPU-seconds one example may use before it counts as a hang
EXAMPLE_LIMIT = 60.0
#: the watchdog ends the run when a call is stuck this long in wall time (waiting, or no signal handler
#: could run): a hang guard only, so far above what any load makes of EXAMPLE_LIMIT's work
WATCHDOG_LIMIT = 10 * EXAMPLE_LIMIT

PROFILE = dict(
    derandomize=True,
    database=None,
    deadline=None,  # (a wall-clock deadline would fail on a loaded machine: time_limit counts CPU time)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                           HealthCheck.function_scoped_fixture],
    print_blob=True,
)


class ExampleTookTooLong(AssertionError):
    """An example exceeded EXAMPLE_LIMIT: a cost the cost model does not bound."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail the block when it uses more than ``seconds`` of this process's CPU time (every thread's; the
    waits do not count), interrupting it then; end the run when it is stuck for ``WATCHDOG_LIMIT``."""
    def interrupt(signum, frame):
        raise ExampleTookTooLong(f"interrupted after {seconds:g} CPU-s")

    previous = signal.signal(signal.SIGPROF, interrupt)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    faulthandler.dump_traceback_later(WATCHDOG_LIMIT, exit=True)
    start = time.process_time()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0.0)
        signal.signal(signal.SIGPROF, previous)
        faulthandler.cancel_dump_traceback_later()
    used = time.process_time() - start
    if used > seconds:
        raise ExampleTookTooLong(f"used {used:.1f} CPU-s (limit {seconds:g} CPU-s)")


def test_the_time_limit_counts_cpu_time_and_interrupts_a_runaway_call():
    with pytest.raises(ExampleTookTooLong, match="CPU-s"):
        with time_limit(0.05):
            while True:  # a call whose cost nothing bounds
                pass


def only_refuses(func, *args, **kwargs):
    """Call under the time limit; a ValueError/TypeError is a refusal (returns None), anything else
    escapes and fails the test."""
    with time_limit(EXAMPLE_LIMIT):
        try:
            return func(*args, **kwargs)
        except (ValueError, TypeError):
            return None


# ------------------------------------------------------------------------------------------------------
# data

NICE = [0.0, 1.0, 0.5, 0.25, 1e-300, 5e-324, 1.0 - 2.0**-53, 1e-9, 0.999999, 1.0 / 3.0]
PROB = st.one_of(st.sampled_from(NICE), st.floats(0.0, 1.0))


@st.composite
def binary_pairs(draw):
    n = draw(st.integers(2, 24))
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int64)
    kind = draw(st.sampled_from(["any", "zero_one", "constant", "perfect", "two_values"]))
    if kind == "any":
        probs = draw(st.lists(PROB, min_size=n, max_size=n))
    elif kind == "zero_one":
        probs = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    elif kind == "constant":
        probs = [draw(PROB)] * n
    elif kind == "perfect":
        probs = labels.astype(float).tolist()
    else:
        a, b = draw(PROB), draw(PROB)
        probs = [a if i % 2 else b for i in range(n)]
    return labels, np.array(probs, dtype=np.float64)


@st.composite
def multiclass_pairs(draw):
    n = draw(st.integers(2, 16))
    k = draw(st.integers(2, 5))
    rows = []
    for _ in range(n):
        if draw(st.booleans()):
            row = np.zeros(k)
            row[draw(st.integers(0, k - 1))] = 1.0
        else:
            row = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=k, max_size=k)))
            row = row / row.sum() if row.sum() > 0 else np.full(k, 1.0 / k)
        rows.append(row)
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    return labels, np.array(rows)


FAULTS = ["nan", "inf", "negative", "above_one", "strings", "numeric_text", "pandas_text", "booleans",
          "true_none", "true_scalar", "prob_scalar", "prob_none", "short", "three_d", "empty", "one_row",
          "label_two", "fractional_label", "complex", "object_none", "ragged", "one_column"]


def with_fault(y: np.ndarray, p: np.ndarray, fault: str):
    """Valid binary data (y, p) broken in one way."""
    y, p = (y.astype(object) if fault == "object_none" else y), p.copy()
    if fault == "nan":
        p[0] = np.nan
    elif fault == "inf":
        p[-1] = np.inf
    elif fault == "negative":
        p[0] = -0.1
    elif fault == "above_one":
        p[0] = 1.5
    elif fault == "strings":
        p = p.astype(str)
    elif fault == "numeric_text":
        p = p.astype(str).astype(object)
    elif fault == "pandas_text":
        p = pd.Series(p.astype(str), dtype="string")
    elif fault == "booleans":
        p = p > 0.5
    elif fault == "true_none":
        y = None
    elif fault == "true_scalar":
        y = 1
    elif fault == "prob_scalar":
        p = 0.5
    elif fault == "prob_none":
        p = None
    elif fault == "short":
        y = y[:-1]
    elif fault == "three_d":
        p = p.reshape(1, 1, -1)
    elif fault == "empty":
        y, p = y[:0], p[:0]
    elif fault == "one_row":
        y, p = y[:1], p[:1]
    elif fault == "label_two":
        y = y.copy()
        y[0] = 2
    elif fault == "fractional_label":
        y = y + 0.5
    elif fault == "complex":
        p = p.astype(complex)
    elif fault == "object_none":
        p = p.astype(object)
        p[0] = None
    elif fault == "ragged":
        p = [[0.1], [0.2, 0.3]] + [[0.5]] * (len(y) - 2)
    elif fault == "one_column":
        p = p.reshape(-1, 1)
    return y, p


@st.composite
def broken_pairs(draw):
    y, p = draw(binary_pairs())
    return with_fault(y, p, draw(st.sampled_from(FAULTS)))


PAIRS = st.one_of(binary_pairs(), binary_pairs(), multiclass_pairs(), broken_pairs())
VALID_PAIRS = st.one_of(binary_pairs(), multiclass_pairs())

# ------------------------------------------------------------------------------------------------------
# options: mostly ordinary values, sometimes hostile ones

INF, NAN = float("inf"), float("nan")
#: hostile values of each kind of option (each also tried alone, on valid data, by test_hostile_option)
HOSTILE = {
    "target": ["bogus", None, 3],
    "class_index": [-1, 10**20, 1.5, None, True, "0"],
    "top_k": [0, -1, 10**20, 2.0, None, True],
    "n_bins": [0, -1, 2**20, 2**40, 2**63, 10**30, INF, NAN, 2.5, True, None, "15"],
    "alpha": [0.0, 1.0, -0.1, NAN, INF, 1e-300, None, "x"],
    "seed": [-1, None, 2**70, 1.5, "s"],
    "scheme": ["grid", "simplex", "distinct", "bogus", None],
    "bandwidth": [0.0, -1.0, INF, NAN, 1e-4, 1e-5, "w"],
    "kernel": ["gaussian", None],
    "n_resamples": [-1, 10**6, 10**10, 2.5, None, True],
    "grid_size": [0, 1, 10**5, 10**7, 10**10, 2.5, None],
    "grid_step": [1e-4, 1e-6, 1e-9, 0.003, 0.0, -1.0, NAN, INF, 1.0, 2.0],
    "positive": [0.0, -1.0, NAN, INF, 1e-300, 1e300, None],
    "choice": ["x", None],
}
TARGET = st.sampled_from(["auto", "auto", "binary", "top1", "topk", "classwise", "full", *HOSTILE["target"]])
CLASS_INDEX = st.one_of(st.integers(0, 5), st.sampled_from(HOSTILE["class_index"]))
TOP_K = st.one_of(st.integers(1, 5), st.sampled_from(HOSTILE["top_k"]))
N_BINS = st.one_of(st.integers(1, 60), st.sampled_from(HOSTILE["n_bins"]))
ALPHA = st.one_of(st.floats(0.001, 0.999), st.sampled_from(HOSTILE["alpha"]))
SEED = st.one_of(st.integers(0, 2**32), st.sampled_from(HOSTILE["seed"]))
SCHEME = st.sampled_from(["equal_width", "equal_mass", *HOSTILE["scheme"]])
BANDWIDTH = st.one_of(st.none(), st.floats(1e-5, 20.0), st.sampled_from(HOSTILE["bandwidth"]))
KERNEL = st.sampled_from(["reflected_gaussian", "logit_gaussian", *HOSTILE["kernel"]])
N_RESAMPLES = st.one_of(st.integers(0, 120), st.sampled_from(HOSTILE["n_resamples"]))
GRID_SIZE = st.one_of(st.integers(2, 3000), st.sampled_from(HOSTILE["grid_size"]))
GRID_STEP = st.sampled_from([1e-2, 2e-2, 1e-3, 5e-4, *HOSTILE["grid_step"]])
POSITIVE = st.one_of(st.floats(1e-9, 10.0), st.sampled_from(HOSTILE["positive"]))
#: the hostile values of each shared strategy
HOSTILE_OF = {id(TARGET): "target", id(CLASS_INDEX): "class_index", id(TOP_K): "top_k", id(N_BINS): "n_bins",
              id(ALPHA): "alpha", id(SEED): "seed", id(SCHEME): "scheme", id(BANDWIDTH): "bandwidth",
              id(KERNEL): "kernel", id(N_RESAMPLES): "n_resamples", id(GRID_SIZE): "grid_size",
              id(GRID_STEP): "grid_step", id(POSITIVE): "positive"}
VIEW = {"target": TARGET, "class_index": CLASS_INDEX}

# T-Cal (calviz.tcal) bounds its own resampling; its strategies stay within the ranges that module
# guarantees (level in [0.01, 0.5], at most a few hundred resamples)
TCAL_ALPHA = st.floats(0.01, 0.5)
TCAL_RESAMPLES = st.one_of(st.none(), st.integers(2, 200))


def _bytes_of(y, p) -> bytes:
    frame = pd.DataFrame({"y_true": np.asarray(y).tolist(), "y_prob": np.asarray(p).tolist()})
    return frame.to_csv(index=False).encode()


def _sums_of(y, p):
    return bin_sums(assign_bins(np.asarray(p, dtype=float), n_bins=10), p, y)


BINNED = {"n_bins": N_BINS, "scheme": SCHEME, **VIEW}
INTERVAL_KINDS = st.sampled_from(["wilson", "jeffreys", "x"])
RESAMPLINGS = st.sampled_from(["analytic", "y_only", "consistency", "threshold", "x"])
SMOOTH = {"bandwidth": BANDWIDTH, "kernel": KERNEL, **VIEW}

#: name -> (callable(y_true, y_prob, **kw), keyword strategies (each optional), required keywords)
ENTRY_POINTS = {
    "as_calibration_data": (calviz.as_calibration_data,
                            {"renormalize": st.booleans(), "min_samples": st.integers(-1, 30)}, {}),
    "from_logits": (lambda y, p, **kw: calviz.from_logits(np.asarray(p) * 40.0 - 20.0, y_true=y), {}, {}),
    "read_predictions": (lambda y, p, **kw: calviz.read_predictions(io.BytesIO(_bytes_of(y, p)), **kw),
                         {"renormalize": st.booleans(), "format": st.sampled_from(["csv", "npz", None])}, {}),
    "binned_ece": (calviz.binned_ece, {**BINNED, "p": st.sampled_from([1, 2, 0, 1.5]), "top_k": TOP_K}, {}),
    "debiased_ece": (calviz.debiased_ece, {**BINNED, "top_k": TOP_K}, {}),
    "unbiased_ece": (calviz.unbiased_ece, {**BINNED, "top_k": TOP_K}, {}),
    "kumar_debiased_ece": (calviz.kumar_debiased_ece, BINNED, {}),
    "reliability": (calviz.reliability, {**BINNED, "alpha": ALPHA, "interval": INTERVAL_KINDS}, {}),
    "assign_bins": (lambda y, p, **kw: assign_bins(p, **kw), {"n_bins": N_BINS, "scheme": SCHEME}, {}),
    "ece_interval": (calviz.ece_interval, {"n_bins": N_BINS, "alpha": ALPHA, "top_k": TOP_K, "seed": SEED,
                                           "method": st.sampled_from(["asymptotic", "bootstrap", "x"]),
                                           "n_resamples": N_RESAMPLES, **VIEW}, {}),
    "interval_from_sums": (lambda y, p, **kw: interval_from_sums(_sums_of(y, p), **kw),
                           {"alpha": ALPHA, "n_bins": N_BINS}, {}),
    "tcal": (calviz.tcal, {"alpha": TCAL_ALPHA, "n_bins": st.one_of(st.none(), st.integers(1, 60)),
                           "smoothness": st.floats(0.1, 5.0), **VIEW}, {}),
    "adaptive_tcal": (calviz.adaptive_tcal, {"alpha": TCAL_ALPHA, "n_resamples": TCAL_RESAMPLES, "seed": SEED,
                                             "resampling": RESAMPLINGS,
                                             "combine": st.sampled_from(["bonferroni", "x"]), **VIEW}, {}),
    "split_tcal": (calviz.split_tcal, {"alpha": TCAL_ALPHA, "n_permutations": TCAL_RESAMPLES, "seed": SEED,
                                       "smoothness": st.floats(0.1, 5.0), **VIEW}, {}),
    "smce": (calviz.smce, VIEW, {}),
    "smce_witness": (calviz.smce_witness, VIEW, {}),
    "lower_dce": (calviz.lower_dce, {"grid_step": GRID_STEP, **VIEW}, {}),
    "rintce": (calviz.rintce, VIEW, {"width": POSITIVE}),
    "sintce": (calviz.sintce, VIEW, {}),
    "laplace_kce": (calviz.laplace_kce, {"bandwidth": POSITIVE, "squared": st.booleans(), **VIEW}, {}),
    "binned_ece_with_width": (calviz.binned_ece_with_width, BINNED, {}),
    "distance_bounds": (calviz.distance_bounds,
                        {"grid_step": GRID_STEP, "n_resamples": N_RESAMPLES, "alpha": ALPHA, "seed": SEED,
                         "n_bins": st.one_of(N_BINS, st.lists(st.integers(1, 60), max_size=3)), **VIEW}, {}),
    "smce_test": (calviz.smce_test, VIEW, {"eps0": POSITIVE, "eps1": POSITIVE}),
    "smooth_ece": (calviz.smooth_ece, SMOOTH, {}),
    "smooth_reliability": (calviz.smooth_reliability,
                           {**SMOOTH, "alpha": ALPHA, "centered": st.booleans(), "n_resamples": N_RESAMPLES,
                            "grid_size": GRID_SIZE, "seed": SEED}, {}),
    "mce": (calviz.mce, {**BINNED, "top_k": TOP_K}, {}),
    "ace": (calviz.ace, {"n_bins": N_BINS,
                         "target": st.sampled_from(["classwise", "binary", "top1", "x"])}, {}),
    "spiegelhalter_test": (calviz.spiegelhalter_test, VIEW, {}),
    "cox_test": (calviz.cox_test, VIEW, {}),
    "kolmogorov_smirnov_test": (calviz.kolmogorov_smirnov_test, VIEW, {}),
    "kuiper_test": (calviz.kuiper_test, VIEW, {}),
    "hosmer_lemeshow_test": (calviz.hosmer_lemeshow_test,
                             {"n_groups": N_BINS, "fitted": st.booleans(), "min_expected": POSITIVE, **VIEW},
                             {}),
    "classical_tests": (calviz.classical_tests, {"alpha": ALPHA, "n_bins": N_BINS, "measures": st.booleans(),
                                                 "n_groups": N_BINS, **VIEW}, {}),
    "recalibrate": (calviz.recalibrate,
                    {"method": st.sampled_from(["temperature", "platt", "isotonic", "histogram", "x"]),
                     "calibration_size": st.one_of(st.floats(0.05, 0.95),
                                                   st.sampled_from([0.0, 1.0, -1, NAN])),
                     "n_bins": N_BINS, "seed": SEED}, {}),
    "compare": (lambda y, p, **kw: calviz.compare(y, p, np.asarray(p)[::-1] if np.ndim(p) else p, **kw),
                {"alpha": TCAL_ALPHA, "n_bins": N_BINS, "resampling": RESAMPLINGS,
                 "n_resamples": TCAL_RESAMPLES,
                 "seed": SEED, **VIEW}, {}),
    "corp_reliability": (calviz.corp_reliability,
                         {"alpha": ALPHA, "n_resamples": N_RESAMPLES, "seed": SEED,
                          "bands": st.sampled_from([("consistency",), ["confidence"], ("x",), "consistency"]),
                          **VIEW}, {}),
    "score_decomposition": (calviz.score_decomposition,
                            {"score": st.sampled_from(["brier", "log", "x"]), "alpha": ALPHA,
                             "n_resamples": N_RESAMPLES, "seed": SEED, **VIEW}, {}),
    "murphy_decomposition": (calviz.murphy_decomposition, BINNED, {}),
    "ici": (calviz.ici, SMOOTH, {}),
    "top_label_ece": (calviz.top_label_ece, {"n_bins": N_BINS, "scheme": SCHEME}, {}),
    "calibration_over_time": (lambda y, p, **kw: calviz.calibration_over_time(
                                  y, p, time=np.arange(np.size(y)), **kw),
                              {"window": st.sampled_from([None, "2 rows", 3.0, "1D", "x", 0, -1.0]),
                               "mode": st.sampled_from(["fixed", "expanding", "since_reference", "x"]),
                               "alpha": ALPHA, "n_bins": N_BINS, "target": TARGET}, {}),
    "monitor_calibration": (lambda y, p, **kw: calviz.monitor_calibration(y, p, time=np.arange(np.size(y)),
                                                                          **kw),
                            {"window": st.sampled_from([None, "2 rows", 3.0, "x", 0]), "alpha": ALPHA,
                             "prior_count": st.sampled_from([20.0, 0.5, 0, -1.0, NAN]), "target": TARGET},
                            {}),
    "calibration_by_group": (lambda y, p, **kw: calviz.calibration_by_group(y, p, np.arange(np.size(y)) % 2,
                                                                            **kw),
                             {"alpha": TCAL_ALPHA, "n_bins": N_BINS, "min_group_size": st.integers(-1, 40),
                              "resampling": RESAMPLINGS, "n_resamples": TCAL_RESAMPLES, "seed": SEED, **VIEW},
                             {}),
}

OPTION_FIELDS = {
    "target": TARGET, "class_index": CLASS_INDEX, "top_k": TOP_K,
    "n": st.one_of(st.none(), st.integers(-1, 30)),
    "scheme": SCHEME, "n_bins": N_BINS, "kernel": KERNEL, "bandwidth": BANDWIDTH, "alpha": ALPHA,
    "resampling": st.sampled_from(["analytic", "y_only", "x"]),
    "n_resamples": st.one_of(st.integers(1, 120), st.sampled_from([0, -1, 10**10, INF, None])), "seed": SEED,
}


def _keywords(optional: dict, required: dict):
    return st.fixed_dictionaries(required, optional=optional)


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@settings(max_examples=40, **PROFILE)
@given(data=st.data())
def test_entry_point_only_refuses(name, data):
    func, optional, required = ENTRY_POINTS[name]
    y, p = data.draw(PAIRS, label="data")
    kwargs = data.draw(_keywords(optional, required), label="keywords")
    only_refuses(func, y, p, **kwargs)


# every single fault and every single hostile option value, on fixed valid data (deterministic: the
# random examples above combine them, these make sure each one is tried)
_RNG = np.random.default_rng(7)
BINARY = (np.array([0, 1, 1, 0, 1, 0, 1, 1]), np.array([0.1, 0.9, 0.8, 0.3, 0.6, 0.0, 1.0, 0.55]))
MULTICLASS = (np.array([0, 2, 1, 1, 0, 2, 2, 1]), _RNG.dirichlet(np.ones(3), 8))
REQUIRED_VALUES = {"width": 0.1, "eps0": 0.01, "eps1": 0.1}


def _hostile_cases():
    for name, (_, optional, required) in sorted(ENTRY_POINTS.items()):
        for key, strategy in {**optional, **required}.items():
            for value in HOSTILE.get(HOSTILE_OF.get(id(strategy)), []):
                yield pytest.param(name, key, value, id=f"{name}-{key}={value!r}"[:80])


@pytest.mark.parametrize("name, key, value", list(_hostile_cases()))
def test_hostile_option(name, key, value):
    func, _, required = ENTRY_POINTS[name]
    kwargs = {k: REQUIRED_VALUES[k] for k in required}
    kwargs[key] = value
    for y, p in (BINARY, MULTICLASS):
        only_refuses(func, y, p, **kwargs)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_broken_data(name, fault):
    func, _, required = ENTRY_POINTS[name]
    only_refuses(func, *with_fault(*BINARY, fault), **{k: REQUIRED_VALUES[k] for k in required})


def _engine_failures(analysis) -> dict:
    """Views whose engine raised something other than a refusal (the analysis records instead of
    raising, so a crash would otherwise pass unnoticed)."""
    refusals = ("failed: ValueError", "failed: TypeError", "failed: InputError")
    return {view: message for view, message in analysis.errors.items()
            if " failed: " in message and not any(r in message for r in refusals)}


def _options(data) -> AnalysisOptions | None:
    values = data.draw(_keywords({k: v for k, v in OPTION_FIELDS.items() if k != "resampling"}, {}),
                       label="options")
    values.setdefault("n_resamples", 50)
    return only_refuses(AnalysisOptions, **values)


@settings(max_examples=30, **PROFILE)
@given(data=st.data())
def test_analysis_options_only_refuse(data):
    values = data.draw(_keywords(OPTION_FIELDS, {}), label="options")
    options = only_refuses(AnalysisOptions, **values)
    if options is not None:
        assert options.replace() == options


@settings(max_examples=20, **PROFILE)
@given(data=st.data())
def test_analyze_only_refuses(data):
    y, p = data.draw(PAIRS, label="data")
    options = _options(data)
    if options is None:
        return
    analysis = only_refuses(calviz.analyze, (y, p), options)
    if analysis is not None:
        assert _engine_failures(analysis) == {}


@settings(max_examples=6, **PROFILE)
@given(data=st.data())
def test_report_only_refuses(data, tmp_path):
    y, p = data.draw(st.one_of(VALID_PAIRS, broken_pairs()), label="data")
    options = _options(data)
    if options is None:
        return
    path = tmp_path / "report.html"
    written = only_refuses(calviz.report, y, p, path=path, **options.to_dict())
    if written is not None:
        assert path.stat().st_size > 0
    assert not list(tmp_path.glob(".*.partial"))  # a refused report leaves no temporary file behind


@settings(max_examples=5, **PROFILE)
@given(data=st.data())
def test_dashboard_only_refuses(data):
    y, p = data.draw(st.one_of(VALID_PAIRS, broken_pairs()), label="data")
    params = data.draw(_keywords({"n_bins": st.integers(1, 40), "alpha": st.floats(0.01, 0.3)}, {}),
                       label="params")
    only_refuses(calviz.dashboard, y, p, **params)


# ------------------------------------------------------------------------------------------------------
# calviz.dask on a LocalCluster

def _dask_entry_points():
    cdask = pytest.importorskip("calviz.dask")
    view = {"target": TARGET, "class_index": CLASS_INDEX}
    fan_in = st.sampled_from([2, 8, 1, 0, None, 2.5])
    binned = {"n_bins": N_BINS, "top_k": TOP_K, "split_every": fan_in, **view}
    return {
        "binned_ece": (cdask.binned_ece, binned),
        "mce": (cdask.mce, binned),
        "debiased_ece": (cdask.debiased_ece, binned),
        "unbiased_ece": (cdask.unbiased_ece, binned),
        "partition_sums": (cdask.partition_sums, binned),
        "ece_interval": (cdask.ece_interval, {**binned, "alpha": ALPHA,
                                              "method": st.sampled_from(["asymptotic", "bootstrap", "x"])}),
        "reliability": (cdask.reliability, {"n_bins": N_BINS, "alpha": ALPHA, **view}),
        "multi_reliability": (cdask.multi_reliability, {"n_bins": N_BINS, "alpha": ALPHA, "top_k": TOP_K,
                                                        "target": st.sampled_from(["topk", "full", "x"])}),
        "scale_sums": (cdask.scale_sums, {"exponents": st.lists(st.integers(-2, 12), max_size=3), **view}),
        "multiscale_debiased_ece": (cdask.multiscale_debiased_ece,
                                    {"exponents": st.lists(st.integers(-2, 12), max_size=3), **view}),
        "adaptive_tcal": (cdask.adaptive_tcal, {"alpha": TCAL_ALPHA, **view}),
        "resampled_tcal": (cdask.resampled_tcal, {"alpha": TCAL_ALPHA, "n_resamples": TCAL_RESAMPLES,
                                                  "seed": SEED, **view}),
        "laplace_kce": (cdask.laplace_kce, {"bandwidth": POSITIVE, **view}),
        "uniform_subsample": (cdask.uniform_subsample, {"size": st.one_of(st.integers(-1, 40),
                                                                          st.sampled_from([10**12, None])),
                                                        "seed": SEED, **view}),
        "smce": (cdask.smce, {"size": st.integers(2, 40), "delta": POSITIVE, "seed": SEED, **view}),
        "sintce": (cdask.sintce, {"size": st.integers(2, 40), "seed": SEED, **view}),
        "lower_dce": (cdask.lower_dce, {"size": st.integers(2, 40), "grid_step": GRID_STEP, **view}),
    }


def _distributed(y, p, chunks: int):
    """Dask arrays of (y, p) in ``chunks`` row blocks when they are arrays, else the values as given."""
    da = pytest.importorskip("dask.array")
    out = []
    for a in (y, p):
        if isinstance(a, np.ndarray) and a.ndim >= 1 and a.dtype.kind in "biuf" and len(a):
            out.append(da.from_array(a, chunks=(max(1, math.ceil(len(a) / chunks)),) + a.shape[1:]))
        else:
            out.append(a)
    return out


DASK_NAMES = ["adaptive_tcal", "binned_ece", "debiased_ece", "ece_interval", "laplace_kce", "lower_dce",
              "mce", "multi_reliability", "multiscale_debiased_ece", "partition_sums", "reliability",
              "resampled_tcal", "scale_sums", "sintce", "smce", "uniform_subsample", "unbiased_ece"]
#: the other public functions of calviz.dask: analyze_parquet (its own test below) and those it reaches
#: (from_parquet, from_dataframe, compute_view), the constructors every call goes through (as_dask_data,
#: from_dask), subsample_measure (behind smce, sintce, lower_dce); open_source and get_client are the
#: served app's plumbing and are not fuzzed here
DASK_REACHED = {"analyze_parquet", "from_parquet", "from_dataframe", "compute_view", "as_dask_data",
                "from_dask", "subsample_measure", "open_source", "get_client"}
#: public functions of calviz.dask that take a prediction log (a Parquet source or a dask DataFrame with a
#: time column), not (y_true, y_prob): not fuzzed here; their equality and refusals are in
#: tests/test_dask_windows.py
DASK_LOG_FUNCTIONS = {"calibration_over_time"}


@pytest.mark.parametrize("name", DASK_NAMES)
@settings(max_examples=6, **PROFILE)
@given(data=st.data())
def test_dask_entry_point_only_refuses(name, data, local_cluster_client):
    func, optional = _dask_entry_points()[name]
    y, p = data.draw(PAIRS, label="data")
    chunks = data.draw(st.integers(1, 3), label="partitions")
    kwargs = data.draw(_keywords({k: v for k, v in optional.items() if k != "exponents"},
                                 {k: v for k, v in optional.items() if k == "exponents"}), label="keywords")
    only_refuses(func, *_distributed(y, p, chunks), **kwargs)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("name", ["adaptive_tcal", "binned_ece", "smce"])
def test_dask_broken_data(name, fault, local_cluster_client):
    """Each fault through the three kinds of distributed computation: per-partition sums, the scan of
    adaptive T-Cal and the uniform subsample of the distance measures."""
    func, _ = _dask_entry_points()[name]
    only_refuses(func, *_distributed(*with_fault(*BINARY, fault), 2))


def _frame_of(y, p):
    """The Parquet layout of (y, p) (y_true + y_prob, or y_true + p_0..p_K-1), or None when not tabular."""
    y, p = np.asarray(y, dtype=object), np.asarray(p, dtype=object)
    if y.ndim != 1 or p.ndim not in (1, 2) or len(y) != len(p):
        return None
    columns = {"y_prob": list(p)} if p.ndim == 1 else {f"p_{j}": list(p[:, j]) for j in range(p.shape[1])}
    return pd.DataFrame({"y_true": list(y), **columns}).infer_objects()


@settings(max_examples=8, **PROFILE)
@given(data=st.data())
def test_analyze_parquet_only_refuses(data, tmp_path, local_cluster_client):
    """A Parquet file of valid or broken data, analysed on the cluster with random options."""
    cdask = pytest.importorskip("calviz.dask")
    frame = _frame_of(*data.draw(st.one_of(VALID_PAIRS, broken_pairs()), label="data"))
    options = _options(data)
    if frame is None or options is None:
        return
    path = tmp_path / "data.parquet"
    try:
        frame.to_parquet(path, index=False)
    except Exception:  # a column pyarrow cannot store (mixed objects): not a Parquet file anyone has
        return
    analysis = only_refuses(cdask.analyze_parquet, path, scheduler=local_cluster_client, options=options)
    if analysis is not None:
        assert _engine_failures(analysis) == {}


def test_dask_entry_points_listed():
    """Every public function of calviz.dask is fuzzed or reached through a fuzzed one."""
    cdask = pytest.importorskip("calviz.dask")
    assert sorted(_dask_entry_points()) == sorted(DASK_NAMES)
    public = {name for name in cdask.__all__ if callable(getattr(cdask, name)) and name[0].islower()}
    assert public - set(DASK_NAMES) - DASK_REACHED - DASK_LOG_FUNCTIONS == set()


def test_every_public_function_is_fuzzed():
    """Every public function of ``calviz`` is covered by one of the tests above."""
    covered = set(ENTRY_POINTS) | {"analyze", "report", "dashboard", "ece_ci", "bin_sums"}
    public = {name for name in calviz.__all__ if callable(getattr(calviz, name)) and name[0].islower()}
    assert public - covered == set()
