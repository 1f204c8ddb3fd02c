"""Property-based fuzzing of every keyword option of the public estimators, tests, intervals and distances.

Each public function of ``calviz`` that takes ``(y_true, y_prob, *, options)`` (and ``compare``,
``calibration_by_group``, ``recalibrate``, ``analyze``) is called on a small valid dataset — binary or
3-class, n = 60, on which every default call computes a result — with ONE keyword option replaced by a
value from a broad strategy: ints (0, -1, huge ones up to 2**64 and beyond), floats (NaN, ±inf, 1e-300,
the smallest subnormal, 1e300, -0.0), numpy scalars (np.int64, np.uint64, np.float32, np.float16,
np.bool_, ...), bools, None, strings (empty, the option's own choices in upper case), lists, tuples, sets,
dicts, arrays and arbitrary objects, plus the values at and just outside the option's declared range.

Every option also meets each value of ``HOSTILE`` (one of each kind that broke an option somewhere) on
both datasets, deterministically; the random examples add the rest of the strategy.

The product standard: the call returns a result or refuses with :class:`calviz.InputError` — never
another exception from deep inside (TypeError, ZeroDivisionError, OverflowError, a bare numpy
ValueError, ...).  A refusal of the fuzzed option with the uniform message names the function that was
called (not an inner one); a result has a finite-or-NaN ``statistic`` / ``value`` and a p-value in
[0, 1]; ``analyze`` computes every view that reads the fuzzed option (a view it cannot compute is an
option analyze accepted but its engine refuses; the views that do not read it compute as with the
defaults); ``calibration_by_group`` tests both of its 30-row groups.

There is no wall-clock assertion.  Instead the strategy leaves out the legal values that mean a lot of
work on purpose: resample / permutation counts and grid sizes are drawn up to ``CHEAP_COUNT`` (values
above it come only from the out-of-range huge ints, which must be refused), and the declared upper bound
of such an option is not drawn when it is above ``CHEAP_COUNT`` (adaptive_tcal(n_resamples=10**6) is
legal and takes seconds even at n = 60).

The hypothesis profile is test_fuzz's (derandomised, no example database) without its deadline, so CI
runs the same examples everywhere.
"""

from __future__ import annotations

import dataclasses
import decimal
import fractions
import functools
import inspect
import math
import types
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz import EXAMPLE_LIMIT, PROFILE, time_limit

import calviz
from calviz._params import InvalidParameterError
from calviz.analysis import AnalysisOptions
from calviz.analysis.views import REGISTRY
from calviz.targets import TARGETS

#: random examples per (function, option); about 170 pairs
EXAMPLES = 14
#: analyze runs the views reading the option on an accepted value (up to ~0.3 s): fewer examples per option
ANALYZE_EXAMPLES = 8
FUZZ = settings(**{**PROFILE, "deadline": None}, max_examples=EXAMPLES)

# ------------------------------------------------------------------------------------------------------
# data: valid, and every function computes on it with its defaults (test_defaults_compute)

N = 60
_rng = np.random.default_rng(2)
P_BINARY = _rng.uniform(0.02, 0.98, N)
Y_BINARY = (_rng.random(N) < P_BINARY).astype(np.int64)
P_MULTI = _rng.dirichlet(np.ones(3), N)
Y_MULTI = np.array([_rng.choice(3, p=row) for row in P_MULTI])
DATA = {"binary": (Y_BINARY, P_BINARY), "multi": (Y_MULTI, P_MULTI)}
GROUPS = np.arange(N) % 2  # two groups of 30 rows: min_group_size's default, so both are tested

# ------------------------------------------------------------------------------------------------------
# the functions: name -> keywords every call needs

SIX_HOURLY = np.datetime64("2026-01-01") + np.arange(N) * np.timedelta64(6, "h")
#: keywords every call starts from: the required ones, and a coarser LP grid for the distance bounds
#: (0.005 s instead of 0.1 s per call; grid_step itself is fuzzed like every other option)
BASE = {"rintce": {"width": 0.1}, "smce_test": {"eps0": 0.01, "eps1": 0.3}, "lower_dce": {"grid_step": 0.01},
        "distance_bounds": {"grid_step": 0.01},
        # the time of each row is data, not an option: every 6 hours (the default window is one day)
        "calibration_over_time": {"time": SIX_HOURLY}, "monitor_calibration": {"time": SIX_HOURLY}}
#: callables of calviz.__all__ that are not (y_true, y_prob, *, options) estimators
NOT_ESTIMATORS = {"as_calibration_data", "from_logits", "read_predictions", "dashboard", "report"}
#: keyword arguments that are data, not options
DATA_KEYWORDS = {("analyze", "group"), ("calibration_over_time", "time"), ("monitor_calibration", "time")}


def _public(name):
    obj = getattr(calviz, name)
    return getattr(obj, name) if isinstance(obj, types.ModuleType) else obj


ESTIMATORS = sorted(name for name in calviz.__all__
                    if name[0].islower() and callable(getattr(calviz, name)) and name not in NOT_ESTIMATORS)


def _options(name) -> list[str]:
    params = inspect.signature(_public(name)).parameters.values()
    options = [p.name for p in params if p.kind is p.KEYWORD_ONLY and (name, p.name) not in DATA_KEYWORDS]
    if name == "analyze":  # its **option_values are the fields of AnalysisOptions
        options += list(AnalysisOptions.parameter_constraints)
    return options


def _constraint(name, option):
    if name == "analyze" and option in AnalysisOptions.parameter_constraints:
        return AnalysisOptions.parameter_constraints[option]
    return getattr(_public(name), "parameter_constraints", {}).get(option)


def _call(name, kind, /, **options):
    y, p = DATA[kind]
    kwargs = {**BASE.get(name, {}), **options}
    func = _public(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "cannot settle", RuntimeWarnings of extreme levels, ...
        if name == "compare":
            return func(y, p, p[::-1], **kwargs)
        if name == "calibration_by_group":
            return func(y, p, GROUPS, **kwargs)
        if name == "analyze":
            return func((y, p), **{"views": _views_reading(options), **kwargs})
        return func(y, p, **kwargs)


def _views_reading(options) -> tuple[str, ...] | None:
    """The views of the analysis that read the fields of AnalysisOptions in ``options`` (the registry's
    ``reads``, from which the dashboard's cache keys are made too); None (every view) for any other
    keyword.  A view that reads none of them computes as with the defaults (test_defaults_compute), so
    analyze runs only the views a fuzzed option can reach."""
    if not options or not set(options) <= set(AnalysisOptions.parameter_constraints):
        return None
    return tuple(r.name for r in REGISTRY if r.in_analysis and set(options) & set(r.reads)) or None


# ------------------------------------------------------------------------------------------------------
# values

INF, NAN = float("inf"), float("nan")
TINY = 5e-324  # the smallest positive float (subnormal)
#: counts whose legal values are work: drawn in-range only up to CHEAP_COUNT
COSTLY = {"n_resamples", "max_resamples", "n_permutations", "grid_size"}
CHEAP_COUNT = 300

HUGE_INTS = [10**12, 2**31, 2**32, 2**40 + 1, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 10**30, -(2**63), -1]
ODD_FLOATS = [NAN, INF, -INF, 1e-300, TINY, 2.2250738585072014e-308, 1e-310, 1e300, -0.0, 0.0, 1e-15,
              0.5, 1.0, 1.0 - 2.0**-53, 1.0 + 2.0**-52, 2.5, -0.5]
NUMPY_ODD = [np.float32(NAN), np.float32(INF), np.float16(0.1), np.float64(TINY), np.uint64(2**64 - 1),
             np.int64(2**63 - 1), np.int64(-(2**63)), np.int8(-1), np.uint8(200), np.int32(2), np.bool_(True),
             np.bool_(False), np.longdouble(0.5), np.complex128(1.0)]
OBJECTS = [object(), 1j, fractions.Fraction(1, 2), decimal.Decimal("0.5"), decimal.Decimal("NaN"),
           np.array(5), np.array([5]), np.array([]), np.array(0.5), b"auto", bytearray(b"x"), range(3),
           slice(1), Ellipsis, type, print, AnalysisOptions()]
STRINGS = ["", " ", "auto", "15", "0.1", "nan", "inf", "None", "True", "x" * 70, "\x00", "équal"]


def _ints(option):
    if option in COSTLY:  # (the huge ones are out of every declared range: they must be refused)
        return st.one_of(st.integers(-3, CHEAP_COUNT), st.sampled_from(HUGE_INTS))
    return st.one_of(st.integers(-3, 64), st.integers(), st.sampled_from(HUGE_INTS))


def _walk(constraint):
    """The constraint and the constraints inside it (NoneOr, ListOf, AnyOf)."""
    if constraint is None:
        return
    yield constraint
    yield from _walk(getattr(constraint, "inner", None))
    for inner in getattr(constraint, "constraints", ()):
        yield from _walk(inner)


def _edges(interval, option) -> list:
    """An Interval's bounds and the values just outside them (the upper bound of a costly count only
    when it is cheap)."""
    values = []
    for bound, outward in ((interval.low, -INF), (interval.high, INF)):
        if bound is None:
            continue
        if not (option in COSTLY and outward == INF and bound > CHEAP_COUNT):
            values += [bound, np.int64(bound) if interval.kind is int else np.float32(bound)]
        if interval.kind is int:
            values += [int(bound) + (1 if outward == INF else -1), float(bound)]
        else:
            values += [float(np.nextafter(bound, outward)), float(bound)]
    return values


def _special(name, option) -> list:
    """Values read from the option's declaration: its choices (and in upper case), its bounds."""
    values = []
    for c in _walk(_constraint(name, option)):
        for v in getattr(c, "values", ()):
            values.append(v)
            if isinstance(v, str):
                values += [v.upper(), v.title(), v + " ", [v], (v,)]
        if hasattr(c, "low") and hasattr(c, "kind"):
            values += _edges(c, option)
    if option == "target":
        values += list(TARGETS) + [t.upper() for t in TARGETS] + ["Top1", "top-1"]
    if option in ("top_k", "class_index"):
        values += [0, 1, 2, 3, 4, -1, np.int64(2), 2.0]
    if option in ("views", "tests"):
        values += [[], (), frozenset(), {"x": 1}, ["reliability", 1]]
    if option == "names":
        values += [("x", "y"), ["P", "Q"], ("a", "a"), ("A", "B", "C"), ("A", 1), "AB"]
    return values or [None]


@functools.cache
def _values(name, option):
    """The strategy of the values of ``option`` of ``name`` (built once: hypothesis works out a strategy's
    properties the first time it draws from it, which cost more than the draw itself when the strategy was
    built anew for each example)."""
    ints = _ints(option)
    return st.one_of(
        st.sampled_from(_special(name, option)),
        ints,
        st.sampled_from(ODD_FLOATS),
        st.floats(),  # NaN and ±inf included
        ints.filter(lambda v: -(2**63) <= v < 2**63).map(np.int64),
        st.floats(width=32).map(np.float32),
        st.sampled_from(NUMPY_ODD),
        st.booleans(),
        st.none(),
        st.sampled_from(STRINGS),
        st.text(max_size=6),
        st.lists(st.one_of(ints, st.sampled_from(_special(name, option))), max_size=3),
        st.lists(st.one_of(ints, st.text(max_size=3)), max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), ints, max_size=2),
        st.sampled_from(OBJECTS),
        st.integers(0, 9).map(np.random.default_rng),  # (a fresh Generator: a valid seed)
    )


# ------------------------------------------------------------------------------------------------------
# the checks


def _finite_or_nan(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not math.isinf(float(x))


def _check_result(name, result):
    for field in ("statistic", "value"):
        x = getattr(result, field, None)
        if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool):
            assert _finite_or_nan(x), f"{name}: {field} = {x!r}"
    pvalue = getattr(result, "pvalue", None)
    if isinstance(pvalue, (float, np.floating)):
        assert math.isnan(pvalue) or 0.0 <= pvalue <= 1.0, f"{name}: pvalue = {pvalue!r}"
    if name == "analyze":
        # on valid data every view computes: a view that failed or refused is an option analyze
        # accepted but its engine did not (or a crash the analysis recorded instead of raising)
        assert result.errors == {}, f"views not computed: {result.errors}"
    if name == "calibration_by_group":
        reasons = [(g.group, g.reason) for g in result.groups if g.status == "not testable"]
        assert not reasons, f"groups not testable: {reasons}"


def only_returns_or_refuses(name, kind, option, value):
    """``name(data, option=value)`` returns a sound result or refuses with an InputError (the uniform
    message naming ``name`` when it is about ``option``); else an AssertionError saying what happened."""
    try:
        with time_limit(EXAMPLE_LIMIT):  # a hang fails the test (or ends the run) instead of stalling it
            result = _call(name, kind, **{option: value})
    except calviz.InputError as error:
        if isinstance(error, InvalidParameterError) and f"'{option}' parameter" in str(error):
            # the uniform message names the function the user called, not one it delegates to
            assert str(error).startswith(f"The '{option}' parameter of {name} must be "), f"refused: {error}"
        return
    except Exception as error:  # anything but a refusal is a defect
        raise AssertionError(f"raised {type(error).__name__}: {error}") from error
    _check_result(name, result)


CASES = [(name, option) for name in ESTIMATORS for option in _options(name)]

#: one value of each kind that broke an option somewhere, tried on every option of every function with
#: both datasets (deterministic: the random examples below may not draw each of them for each option)
HOSTILE = [0, -1, 2**31, 10**12, 2**63, 2**64, NAN, INF, -INF, TINY, 1e-310, 1e-300, 1e300, -0.0, 2.5,
           np.int64(10**12), np.uint64(2**64 - 1), np.float32(0.0), np.float32(NAN), np.bool_(True), True,
           None, "", [], (1, 2), {"a": 1}, np.array([]), np.array([1, 2]), object()]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_hostile_values_of_every_option(name):
    failures = []
    for option in _options(name):
        for value in HOSTILE:
            for kind in DATA:
                try:
                    only_returns_or_refuses(name, kind, option, value)
                except AssertionError as error:
                    first = str(error).splitlines()[0]
                    failures.append(f"{name}({option}={value!r}) on {kind} data: {first}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name, option", CASES, ids=[f"{n}-{o}" for n, o in CASES])
@FUZZ
@given(data=st.data())
def test_one_option_returns_or_refuses(name, option, data):
    if name == "analyze" and data.draw(st.integers(0, EXAMPLES - 1), label="skip") >= ANALYZE_EXAMPLES:
        return  # (keeps analyze's share of the budget: each accepted value runs the views reading it)
    kind = data.draw(st.sampled_from(sorted(DATA)), label="data")
    value = data.draw(_values(name, option), label=option)
    only_returns_or_refuses(name, kind, option, value)


def test_resample_count_of_distance_bounds_is_capped_whatever_the_grid():
    """Two options together: a coarse grid made the LP budget admit any count (grid_step=0.5,
    n_resamples=10**5 took 200 s at n = 60; 10**8 was accepted), each resample redoing every measure."""
    with pytest.raises(InvalidParameterError, match=r"^The 'n_resamples' parameter of distance_bounds must "
                                                    r"be an int in \[0, 10000\]; got 100000000\.$"):
        calviz.distance_bounds(Y_BINARY, P_BINARY, grid_step=0.5, n_resamples=10**8)


# ------------------------------------------------------------------------------------------------------
# the fuzzing above is meaningful only if the defaults compute and every function is fuzzed

@pytest.mark.parametrize("kind", sorted(DATA))
@pytest.mark.parametrize("name", ESTIMATORS)
def test_defaults_compute(name, kind):
    """With its defaults every function computes on the data (no early data refusal would hide the
    options' paths)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _call(name, kind)
    _check_result(name, result)
    assert dataclasses.is_dataclass(result) or name == "analyze"


def test_every_estimator_and_option_is_fuzzed():
    assert len(ESTIMATORS) >= 32
    assert {"binned_ece", "analyze", "compare", "calibration_by_group", "recalibrate"} <= set(ESTIMATORS)
    for name in ESTIMATORS:
        params = list(inspect.signature(_public(name)).parameters.values())
        assert params[0].name in ("y_true", "data"), name  # an estimator of (y_true, y_prob, ...) data
        assert _options(name), name
    assert len(CASES) > 160
