"""One test of the conventions every public function and result follows.

* argument order ``(y_true, y_prob, *, options)``: the options are keyword-only;
* options are validated with one message form
  ("The 'n_bins' parameter of binned_ece must be an int in [1, inf); got 0.");
* results have ``statistic`` (float), ``pvalue`` (tests), ``level`` and ``confidence_interval()``
  (intervals), ``n``, ``n_classes``, ``target``, a readable ``repr`` and a JSON-ready ``to_dict()``;
* validated ``CalibrationData`` gives the same result as the raw arrays;
* a fixed seed reproduces every random procedure.

The distributed twins of these functions (``calviz.dask``) join the same checks through
:data:`DASK_TWINS` (name → callable with the in-memory signature).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
import types
import warnings

import numpy as np
import pytest

import calviz
from calviz._data import InputError, as_calibration_data
from calviz._params import ALPHA, CONFIDENCE_LEVEL, AnyOf, Interval, ListOf, NoneOr, Options
from calviz._results import ConfidenceInterval
from calviz.targets import TARGETS

# a fixed resample count keeps these runs short; its "cannot settle" warning is about the decision only
pytestmark = pytest.mark.filterwarnings("ignore:n_resamples = .* cannot settle:UserWarning")

N = 240
_rng = np.random.default_rng(20240601)
P_MULTI = _rng.dirichlet(np.ones(3), size=N)
Y_MULTI = np.array([_rng.choice(3, p=row) for row in P_MULTI])
P_BINARY = _rng.uniform(0.02, 0.98, size=N)
Y_BINARY = (_rng.random(N) < P_BINARY).astype(np.int64)

# name -> (keyword options for a quick valid call, "multi" if (n, K) input is accepted)
FUNCTIONS = {
    "binned_ece": ({}, True),
    "debiased_ece": ({}, True),
    "unbiased_ece": ({}, True),
    "kumar_debiased_ece": ({}, True),
    "mce": ({}, True),
    "ace": ({}, True),
    "reliability": ({}, True),
    "ece_interval": ({}, True),
    "tcal": ({}, True),
    "adaptive_tcal": ({"resampling": "y_only", "n_resamples": 299}, True),
    "split_tcal": ({"n_permutations": 99}, True),
    "classical_tests": ({}, True),
    "spiegelhalter_test": ({}, True),
    "hosmer_lemeshow_test": ({}, True),
    "cox_test": ({}, True),
    "kolmogorov_smirnov_test": ({}, True),
    "kuiper_test": ({}, True),
    "smce": ({}, True),
    "smce_witness": ({}, True),
    "lower_dce": ({"grid_step": 0.01}, True),
    "rintce": ({"width": 0.1}, True),
    "sintce": ({}, True),
    "laplace_kce": ({}, True),
    "binned_ece_with_width": ({}, True),
    "distance_bounds": ({"grid_step": 0.01, "n_resamples": 5}, True),
    "smce_test": ({"eps0": 0.01, "eps1": 0.3}, True),
    "smooth_ece": ({}, True),
    "smooth_reliability": ({"n_resamples": 10, "grid_size": 51}, True),
    "corp_reliability": ({"n_resamples": 20}, True),
    "score_decomposition": ({"n_resamples": 20}, True),
    "murphy_decomposition": ({}, True),
    "ici": ({}, True),
}
#: functions whose data arguments are more than (y_true, y_prob)
OTHER_DATA = {"compare": ("y_true", "y_prob_a", "y_prob_b"),
              "calibration_by_group": ("y_true", "y_prob", "groups"), "recalibrate": ("y_true", "y_prob"),
              "top_label_ece": ("y_true", "y_prob")}
#: results that collect other results (each of those follows the conventions itself)
COLLECTIONS = ("ClassicalTests", "DistanceBounds", "GroupCalibration")
#: results of calibration tests: they carry a p-value
TESTS = ("TCalResult", "CalibrationTestResult", "CoxTestResult", "ModelComparison")


def _dask_twins() -> dict:
    try:
        import calviz.dask as cdask
    except ImportError:  # the dask extra is not installed: the in-memory checks still run
        return {}
    return {name: getattr(cdask, name) for name in (
        "binned_ece", "debiased_ece", "unbiased_ece", "mce", "reliability", "ece_interval", "adaptive_tcal",
        "laplace_kce", "smce", "sintce", "lower_dce")}


#: Distributed twins, ``name -> callable`` with the in-memory signature and result type: the
#: ``calviz.dask`` drivers (numpy input is split into row partitions); every check below runs on them too.
DASK_TWINS: dict = _dask_twins()


def _dask(name):
    import calviz.dask as cdask

    return getattr(cdask, name)


def _public(name):
    """``calviz.<name>`` (the function, also where the name is shared with its module, as for tcal)."""
    obj = getattr(calviz, name)
    return getattr(obj, name) if isinstance(obj, types.ModuleType) else obj


def _function(name):
    return DASK_TWINS[name[5:]] if name.startswith("dask:") else _public(name)


ALL = sorted(FUNCTIONS) + [f"dask:{name}" for name in sorted(DASK_TWINS)]


def _call(name, y_true, y_prob, **extra):
    kwargs, _ = FUNCTIONS[name.removeprefix("dask:")]
    return _function(name)(y_true, y_prob, **{**kwargs, **extra})


# -- argument order and keyword-only options ------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FUNCTIONS) + sorted(OTHER_DATA))
def test_data_first_then_keyword_only_options(name):
    params = list(inspect.signature(_public(name)).parameters.values())
    data = OTHER_DATA.get(name, ("y_true", "y_prob"))
    assert [p.name for p in params[: len(data)]] == list(data)
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params[: len(data)])
    options = params[len(data):]
    assert options, name
    not_keyword = [p.name for p in options if p.kind is not p.KEYWORD_ONLY]
    assert not not_keyword, f"{name}: {not_keyword} must be keyword-only"


@pytest.mark.parametrize("name, old, new", [
    ("rintce", (0.1,), {"width": 0.1}),
    ("smce_test", (0.01, 0.3), {"eps0": 0.01, "eps1": 0.3}),
])
def test_options_that_were_positional_still_work_with_a_deprecation_warning(name, old, new):
    func = _public(name)
    with pytest.warns(DeprecationWarning, match="by keyword"):
        by_position = func(Y_BINARY, P_BINARY, *old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_keyword = func(Y_BINARY, P_BINARY, **new)
    assert by_position == by_keyword
    with pytest.raises(TypeError):
        func(Y_BINARY, P_BINARY, *old, 0.5, 0.5)


# -- uniform validation messages ------------------------------------------------------------------
def _bad_values(constraint) -> list:
    """Values the constraint refuses: one of the wrong type and, for numbers, one just outside."""
    bad = ["__invalid__"]
    inner = constraint.inner if isinstance(constraint, NoneOr) else constraint
    if isinstance(inner, Interval):
        bad.append(True)  # bools are not numbers here
        if inner.low is not None:
            bad.append(inner.low - 1)
        if inner.high is not None:
            bad.append(inner.high + 1)
        if inner.kind is int:
            bad.append(2.5)
        else:
            bad.append(float("nan"))
    if isinstance(inner, Options) and all(isinstance(v, str) for v in inner.values):
        bad.append(inner.values[0].upper() + "?")
    if isinstance(inner, ListOf):  # a str is not a list of its characters; an item the inner rule refuses
        bad += ["abc", *([[b] for b in _bad_values(inner.inner)][:2])]
    if isinstance(inner, AnyOf):  # what every alternative refuses
        bad += [b for c in inner.constraints for b in _bad_values(c) if not inner.accepts(b)]
    return list({repr(b): b for b in bad if not constraint.accepts(b)}.values())


def _message(param, name):
    return rf"^The '{param}' parameter of {name} must be .+; got .+\.$"


VALIDATED = [(name, param, bad)
             for name in sorted(FUNCTIONS) + ["compare", "calibration_by_group", "recalibrate"]
             for param, constraint in getattr(_public(name), "parameter_constraints", {}).items()
             for bad in _bad_values(constraint)]


#: options whose allowed range depends on the data (K classes), checked by calviz.targets.resolve with the
#: uniform message (see test_unknown_target_gives_the_uniform_message)
RESOLVED_OPTIONS = {"target", "top_k", "class_index"}
#: keyword arguments that are data: per-row weights, checked against the rows (calviz._weights)
DATA_OPTIONS = {"sample_weight"}
#: keyword arguments that are data or plumbing between calviz's own modules, not user options
NOT_OPTIONS = {
    ("analyze", "group"): "a column of the data (checked against its rows)",
    ("from_logits", "y_true"): "labels (the data)",
    ("calibration_over_time", "time"): "a column of the data (checked against its rows)",
    ("monitor_calibration", "time"): "a column of the data (checked against its rows)",
    ("sample_note", "bounds"): "a result object",
    ("adaptive_tcal", "reuse"): "an earlier result (checked against its data, seed and resampling)",
    ("resolve", "allowed"): "the targets the calling estimator supports (internal)",
    ("resolve", "caller"): "the calling estimator's name, for the message (internal)",
    ("multi_reliability_panels", "n_classes"): "the data's shape (shared by the in-memory and Dask drivers)",
    ("multi_reliability_panels", "is_binary"): "the data's shape",
    ("multi_reliability_panels", "top_k"): "already resolved against the data",
    ("multi_reliability_panels", "support"): "the data's per-panel counts",
}
PUBLIC_MODULES = ("calviz", "calviz.analysis", "calviz.io", "calviz.datasets", "calviz.sampling",
                  "calviz.targets")


def _keyword_options():
    import importlib

    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            func = getattr(module, name)
            if inspect.isclass(func) or not callable(func):
                continue
            for param in inspect.signature(func).parameters.values():
                if param.kind is inspect.Parameter.KEYWORD_ONLY:
                    yield f"{module_name}.{name}", func, param.name


def test_every_keyword_option_of_every_public_function_is_declared():
    """Each keyword-only option of a public function has a declared constraint (so a bad value gets the
    uniform message before any work), is a target option resolved against the data, or is listed above
    as data or plumbing with the reason."""
    options = list(_keyword_options())
    assert len(options) > 150
    undeclared = [f"{where}({option}=)" for where, func, option in options
                  if option not in getattr(func, "parameter_constraints", {})
                  and option not in RESOLVED_OPTIONS | DATA_OPTIONS
                  and (where.rsplit(".", 1)[1], option) not in NOT_OPTIONS]
    assert not undeclared
    listed = {(where.rsplit(".", 1)[1], option) for where, _, option in options}
    assert set(NOT_OPTIONS) <= listed  # no stale entry


def test_every_public_function_declares_its_options():
    undeclared = [name for name in sorted(FUNCTIONS) + ["compare", "calibration_by_group"]
                  if not hasattr(_public(name), "parameter_constraints")
                  and name not in ("smce", "smce_witness", "sintce", "spiegelhalter_test", "cox_test",
                                   "kolmogorov_smirnov_test", "kuiper_test")]  # target/class_index only
    assert not undeclared


@pytest.mark.parametrize("name, param, bad", VALIDATED, ids=[f"{n}-{p}-{b!r}" for n, p, b in VALIDATED])
def test_bad_option_gives_the_uniform_message(name, param, bad):
    func = _public(name)
    data = {"compare": (Y_BINARY, P_BINARY, P_BINARY), "calibration_by_group": (
        Y_BINARY, P_BINARY, np.arange(N) % 2)}.get(name, (Y_BINARY, P_BINARY))
    kwargs = dict(FUNCTIONS.get(name, ({}, True))[0])
    kwargs[param] = bad
    with pytest.raises(InputError, match=_message(param, name)) as info:
        func(*data, **kwargs)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ALL)
def test_unknown_target_gives_the_uniform_message(name):
    base = name.removeprefix("dask:")
    with pytest.raises(InputError, match=_message("target", base)):
        _call(name, Y_MULTI, P_MULTI, target="no-such-target")


def test_uniform_message_example_from_the_documentation():
    with pytest.raises(InputError) as info:
        calviz.binned_ece(Y_BINARY, P_BINARY, n_bins=0)
    assert str(info.value) == "The 'n_bins' parameter of binned_ece must be an int in [1, inf); got 0."


# -- result conventions ---------------------------------------------------------------------------
def _check_result(result, *, n, n_classes):
    cls = type(result).__name__
    assert dataclasses.is_dataclass(result)
    assert result.n == n
    assert result.n_classes == n_classes
    assert result.target in TARGETS and result.target != "auto"
    if cls not in COLLECTIONS:
        assert isinstance(result.statistic, float), cls
    if cls in TESTS:
        assert isinstance(result.pvalue, float) and 0.0 <= result.pvalue <= 1.0
    if hasattr(result, "confidence_interval"):
        ci = result.confidence_interval()
        assert isinstance(ci, ConfidenceInterval)
        assert 0.0 < result.level < 1.0
        low, high = (np.asarray(v, dtype=float) for v in ci)
        ok = np.isnan(low) | np.isnan(high) | (low <= high)
        assert ok.all()
    text = repr(result)
    # a screenful: DistanceBounds, the longest, carries each bound's one-line derivation with its citation
    assert text.startswith(f"{cls}(") and len(text) < 6000 and "array([" not in text
    as_dict = result.to_dict()
    json.dumps(as_dict, default=str)
    for key in ("n", "n_classes", "target"):
        assert as_dict[key] == getattr(result, key)
    if cls not in COLLECTIONS:
        assert as_dict["statistic"] == result.statistic or (
            math.isnan(as_dict["statistic"]) and math.isnan(result.statistic))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("kind", ["binary", "multi"])
def test_result_conventions(name, kind):
    y, p = (Y_BINARY, P_BINARY) if kind == "binary" else (Y_MULTI, P_MULTI)
    result = _call(name, y, p, **({"seed": 1} if "seed" in _params(name) else {}))
    _check_result(result, n=N, n_classes=2 if kind == "binary" else 3)
    for inner in getattr(result, "tests", ()):
        _check_result(inner, n=N, n_classes=2 if kind == "binary" else 3)


def test_comparison_results_follow_the_conventions():
    other = np.clip(P_BINARY + 0.1, 0, 1)
    _check_result(calviz.compare(Y_BINARY, P_BINARY, other, seed=0), n=N, n_classes=2)
    by_group = calviz.calibration_by_group(Y_BINARY, P_BINARY, np.arange(N) % 2, seed=0)
    _check_result(by_group, n=N, n_classes=2)


@pytest.mark.skipif(not DASK_TWINS, reason="the dask extra is not installed")
@pytest.mark.parametrize("kind", ["binary", "multi"])
def test_results_of_the_distributed_only_functions_follow_the_conventions(kind):
    """The public ``calviz.dask`` functions without an in-memory twin return convention-following results
    too (or tuples of them)."""
    import calviz.dask as cdask

    y, p = (Y_BINARY, P_BINARY) if kind == "binary" else (Y_MULTI, P_MULTI)
    k = 2 if kind == "binary" else 3
    for measure in ("smce", "sintce", "lower_dce"):
        estimate = cdask.subsample_measure(measure, y, p, size=200, seed=1)
        _check_result(estimate, n=N, n_classes=k)
        assert estimate.level == 0.95 and estimate.confidence_interval() == (estimate.low, estimate.high)
        with pytest.warns(DeprecationWarning, match="use .level"):
            assert estimate.confidence == estimate.level  # the field's name before the conventions
    for result in cdask.multiscale_debiased_ece(y, p, exponents=[1, 2]):
        _check_result(result, n=N, n_classes=k)
    _check_result(cdask.resampled_tcal(y, p, n_resamples=300, seed=1), n=N, n_classes=k)
    panels = cdask.multi_reliability(y, p, target="topk", top_k=2)
    assert panels.n == N and panels.n_classes == k
    for panel in panels.panels:
        _check_result(dataclasses.replace(panel, n_classes=k), n=N, n_classes=k)


def _params(name):
    return inspect.signature(_function(name)).parameters


def test_default_levels():
    """One α for tests (0.05) and one confidence level for intervals and bands (0.9)."""
    for name in ("tcal", "adaptive_tcal", "split_tcal", "classical_tests", "compare", "calibration_by_group"):
        assert _params_of(name)["alpha"].default == ALPHA == 0.05
    for name in ("ece_interval", "reliability", "distance_bounds", "smooth_reliability"):
        assert _params_of(name)["alpha"].default == pytest.approx(1 - CONFIDENCE_LEVEL)
    assert calviz.ece_interval(Y_BINARY, P_BINARY).level == pytest.approx(CONFIDENCE_LEVEL)


def _params_of(name):
    return inspect.signature(_public(name)).parameters


# -- validated data, seeds --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_calibration_data_gives_the_same_result(name):
    data = as_calibration_data(Y_MULTI, P_MULTI)
    seed = {"seed": 3} if "seed" in _params(name) else {}
    from_arrays = _call(name, Y_MULTI, P_MULTI, **seed)
    from_data = _function(name)(data, **FUNCTIONS[name.removeprefix("dask:")][0], **seed)
    assert _comparable(from_arrays) == _comparable(from_data)


def _comparable(result) -> str:
    return json.dumps(result.to_dict(), default=str, sort_keys=True)


SEEDED = [name for name in ALL if "seed" in _params(name)]


@pytest.mark.parametrize("name", SEEDED)
def test_fixed_seed_reproduces_the_result(name):
    a = _call(name, Y_MULTI, P_MULTI, seed=11)
    b = _call(name, Y_MULTI, P_MULTI, seed=11)
    c = _call(name, Y_MULTI, P_MULTI, seed=np.random.default_rng(11))
    assert _comparable(a) == _comparable(b) == _comparable(c)


def test_seeded_functions_are_the_random_ones():
    assert set(SEEDED) >= {"adaptive_tcal", "split_tcal", "ece_interval", "distance_bounds",
                           "smooth_reliability"}


@pytest.mark.parametrize("name", SEEDED)
def test_seed_must_be_none_an_int_or_a_generator(name):
    base = name.removeprefix("dask:")
    for bad in (-1, 1.5, "0"):
        with pytest.raises(InputError, match=re.escape(f"The 'seed' parameter of {base} must be None, ")):
            _call(name, Y_BINARY, P_BINARY, seed=bad)


#: the public ``calviz.dask`` functions without an in-memory twin: the keywords a valid call needs
DISTRIBUTED_ONLY = {"partition_sums": {}, "scale_sums": {"exponents": [1, 2]},
                    "multiscale_debiased_ece": {"exponents": [1, 2]}, "multi_reliability": {},
                    "uniform_subsample": {"size": 100}, "subsample_measure": {"measure": "smce", "size": 100},
                    "resampled_tcal": {"n_resamples": 300}}
DISTRIBUTED_VALIDATED = [(name, param, bad) for name in DISTRIBUTED_ONLY if DASK_TWINS
                         for param, constraint in _dask(name).parameter_constraints.items()
                         for bad in _bad_values(constraint)] if DASK_TWINS else []


@pytest.mark.parametrize("name, param, bad", DISTRIBUTED_VALIDATED,
                         ids=[f"{n}-{p}-{b!r}" for n, p, b in DISTRIBUTED_VALIDATED])
def test_distributed_only_function_refuses_with_the_uniform_message(name, param, bad):
    """Their options are declared (with the in-memory constraints where the option is shared) and a bad
    value names the distributed function, before any partition is read."""
    with pytest.raises(InputError, match=_message(param, name)):
        _dask(name)(y_true=Y_BINARY, y_prob=P_BINARY, **{**DISTRIBUTED_ONLY[name], param: bad})


# -- the distributed twins: the same function on partitioned data ----------------------------------
@pytest.mark.parametrize("name", sorted(DASK_TWINS))
def test_dask_twin_has_the_in_memory_signature(name):
    """The in-memory parameters first, in order, with the same kinds and defaults; then keyword-only
    distributed options (partition fan-in, client, columns, the subsample of the distance measures)."""
    ours = list(inspect.signature(DASK_TWINS[name]).parameters.values())
    theirs = list(inspect.signature(_public(name)).parameters.values())
    assert [(p.name, p.kind, p.default) for p in ours[: len(theirs)]] == [
        (p.name, p.kind, p.default) for p in theirs]
    assert all(p.kind is p.KEYWORD_ONLY for p in ours[len(theirs):])
    assert {"split_every", "client"} <= {p.name for p in ours[len(theirs):]}
    assert DASK_TWINS[name].__doc__.startswith(_public(name).__doc__.split("\n")[0])


TWIN_VALIDATED = [case for case in VALIDATED if case[0] in DASK_TWINS]


@pytest.mark.parametrize("name, param, bad", TWIN_VALIDATED,
                         ids=[f"{n}-{p}-{b!r}" for n, p, b in TWIN_VALIDATED])
def test_dask_twin_refuses_with_the_in_memory_message(name, param, bad):
    kwargs = {**FUNCTIONS[name][0], param: bad}
    with pytest.raises(InputError) as memory:
        _public(name)(Y_BINARY, P_BINARY, **kwargs)
    with pytest.raises(InputError) as on_dask:
        DASK_TWINS[name](Y_BINARY, P_BINARY, **kwargs)
    assert str(on_dask.value) == str(memory.value)
    assert isinstance(on_dask.value, TypeError) and isinstance(on_dask.value, ValueError)


def _numbers(value):
    """Every number of a result's ``to_dict()``, flattened in key order (strings compared exactly)."""
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in _numbers(value[key])]
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _numbers(item)]
    return [value]


@pytest.mark.parametrize("name", sorted(DASK_TWINS))
@pytest.mark.parametrize("kind", ["binary", "multi"])
def test_dask_twin_equals_in_memory(name, kind):
    """The same result type and the same numbers (1e-12 relative), the seeded ones included."""
    y, p = (Y_BINARY, P_BINARY) if kind == "binary" else (Y_MULTI, P_MULTI)
    seed = {"seed": 5} if "seed" in _params_of(name) else {}
    want = _call(name, y, p, **seed)
    got = _call(f"dask:{name}", y, p, **seed)
    assert type(got) is type(want)
    a, b = _numbers(got.to_dict()), _numbers(want.to_dict())
    assert len(a) == len(b)
    for x, w in zip(a, b, strict=True):
        if isinstance(w, float) and math.isnan(w):
            assert isinstance(x, float) and math.isnan(x), name
        elif isinstance(w, float):
            assert x == pytest.approx(w, rel=1e-12, abs=1e-15), name
        else:
            assert x == w, name
