"""Parameter validation, the default levels and the seed policy, in one place.

Every public function declares the constraints of its options with :func:`validate_params` (in the
spirit of scikit-learn's ``validate_params``) and refuses a bad value with one uniform message::

    The 'n_bins' parameter of binned_ece must be an int in [1, inf); got 0.

The error is an :class:`InvalidParameterError`, both a ``ValueError`` (an :class:`calviz.InputError`)
and a ``TypeError``, whichever way the value is wrong.

Defaults: calibration *tests* use the level ``ALPHA`` = 0.05; confidence *intervals* and bands use the
confidence level ``CONFIDENCE_LEVEL`` = 0.9 (``alpha = 1 − CONFIDENCE_LEVEL`` = 0.1), the smooth
reliability band included.

Randomness: a ``seed`` is ``None``, a non-negative int or a ``numpy.random.Generator``;
:func:`as_generator` turns it into a Generator and :func:`kernel_seed` into the integer seed of a jitted
kernel's SplitMix64 stream (one draw from that Generator), so a fixed seed reproduces every result.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import warnings
from collections.abc import Callable, Iterable

import numpy as np

from calviz._errors import InputError

__all__ = [
    "ALPHA",
    "CONFIDENCE_LEVEL",
    "INTERVAL_ALPHA",
    "InvalidParameterError",
    "Interval",
    "Options",
    "Seed",
    "Boolean",
    "NoneOr",
    "Instance",
    "ListOf",
    "AnyOf",
    "validate_params",
    "check_param",
    "check_int_in",
    "check_keywords",
    "parameter_message",
    "as_generator",
    "kernel_seed",
    "spawn_seeds",
    "positional_deprecated",
    "MAX_CLASSES",
    "MAX_GROUPS",
    "LimitExceeded",
    "check_n_classes",
    "check_n_groups",
]

#: Default level α of every calibration test (reject H₀ "calibrated" when p ≤ α).
ALPHA = 0.05
#: Default confidence level of every confidence interval (reported as ``level`` on the results).
CONFIDENCE_LEVEL = 0.9
#: ``1 − CONFIDENCE_LEVEL``: the default ``alpha`` argument of the interval estimators.
INTERVAL_ALPHA = 0.1


class InvalidParameterError(InputError, TypeError):
    """An option outside its documented range or of the wrong type (both a ValueError and a TypeError)."""


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parameter_message(name: str, caller: str | None, rule: str, value) -> str:
    """The one wording: "The 'name' parameter of caller must be <rule>; got <value>."."""
    where = f" of {caller}" if caller else ""
    return f"The {name!r} parameter{where} must be {rule}; got {_show(value)}."


# ------------------------------------------------------------------------------------------------
# constraints
# ------------------------------------------------------------------------------------------------
class Interval:
    """A number in an interval: ``Interval(int, 1, None)`` is "an int in [1, inf)",
    ``Interval(float, 0, 1, closed="neither")`` "a float in (0, 1)".  Floats accept ints and
    numpy scalars; ints accept integral numpy integers only (never bools, never floats)."""

    def __init__(self, kind: type, low: float | None, high: float | None, *, closed: str = "both"):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def __str__(self) -> str:
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        low = "-inf" if self.low is None else _number(self.low)
        high = "inf" if self.high is None else _number(self.high)
        return f"{'an int' if self.kind is int else 'a float'} in {left}{low}, {high}{right}"

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is int:
            if not isinstance(value, (int, np.integer)):
                return False
        elif not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
            return False
        # compared as a Python number: a numpy scalar compares in its own precision, where a bound can
        # round (1e-300 is 0.0 in float32, so np.float32(0.0) passed "[1e-300, 1)")
        number = int(value) if isinstance(value, (int, np.integer)) else float(value)
        if not math.isfinite(number):  # (a long double beyond the float range)
            return False
        if self.low is not None:
            if number < self.low or (number == self.low and self.closed not in ("both", "left")):
                return False
        if self.high is not None:
            if number > self.high or (number == self.high and self.closed not in ("both", "right")):
                return False
        return True


def _number(x) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


class Options:
    """One of a fixed set of values: "a str among {'wilson', 'jeffreys'}"."""

    def __init__(self, values: Iterable):
        self.values = tuple(values)

    def __str__(self) -> str:
        kinds = {type(v) for v in self.values}
        kind = "a str" if kinds == {str} else "a value"
        return f"{kind} among {{{', '.join(repr(v) for v in self.values)}}}"

    def accepts(self, value) -> bool:
        return any(_same_kind(value, v) and value == v for v in self.values)


def _same_kind(value, option) -> bool:
    """1 == True and 1 == 1.0 in Python; an option list means the value of the option's own kind."""
    if isinstance(option, str):
        return isinstance(value, str)
    if isinstance(option, (bool, np.bool_)):
        return isinstance(value, (bool, np.bool_))
    if isinstance(option, int):
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    return type(value) is type(option)


class Seed:
    """None, a non-negative int or a numpy Generator."""

    def __str__(self) -> str:
        return "None, an int in [0, inf) or a numpy.random.Generator"

    def accepts(self, value) -> bool:
        if value is None or isinstance(value, np.random.Generator):
            return True
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= 0


class Boolean:
    """True or False (numpy bools too)."""

    def __str__(self) -> str:
        return "a bool"

    def accepts(self, value) -> bool:
        return isinstance(value, (bool, np.bool_))


class NoneOr:
    """``None`` or a value of another constraint."""

    def __init__(self, inner):
        self.inner = inner

    def __str__(self) -> str:
        return f"{self.inner} or None"

    def accepts(self, value) -> bool:
        return value is None or self.inner.accepts(value)


class Instance:
    """A value of a type: ``Instance(str)`` is "a str", ``Instance((str, os.PathLike), "a str or
    path-like")`` takes a description when the type names do not say it."""

    def __init__(self, kinds: type | tuple[type, ...], description: str | None = None):
        self.kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        self.description = description or " or ".join(
            f"{'an' if k.__name__[0] in 'AEIOUaeiou' else 'a'} {k.__name__}" for k in self.kinds)

    def __str__(self) -> str:
        return self.description

    def accepts(self, value) -> bool:
        return isinstance(value, self.kinds)


class ListOf:
    """A list, tuple or set whose items all satisfy another constraint (a str is not a list of its
    characters): "a list, tuple or set, each item a str among {'tcal', 'interval'}"; ``length`` = (min,
    max) bounds its number of items ("a non-empty list, ..." for (1, None))."""

    def __init__(self, inner, length: tuple[int, int | None] = (0, None)):
        self.inner, self.length = inner, length

    def __str__(self) -> str:
        low, high = self.length
        size = ("a non-empty " if (low, high) == (1, None) else
                "a " if (low, high) == (0, None) else
                f"a {low}-item " if low == high else f"a {low} to {high}-item ")
        return f"{size}list, tuple or set, each item {self.inner}"

    def accepts(self, value) -> bool:
        low, high = self.length
        return (isinstance(value, (list, tuple, set, frozenset)) and low <= len(value)
                and (high is None or len(value) <= high) and all(self.inner.accepts(v) for v in value))


class AnyOf:
    """A value that one of several constraints accepts: "an int in [1, inf) or a non-empty list, ..."."""

    def __init__(self, *constraints):
        self.constraints = constraints

    def __str__(self) -> str:
        return " or ".join(str(c) for c in self.constraints)

    def accepts(self, value) -> bool:
        return any(c.accepts(value) for c in self.constraints)


def check_param(value, name: str, constraint, caller: str | None = None):
    """Return ``value`` if ``constraint`` accepts it, else raise :class:`InvalidParameterError`."""
    if not constraint.accepts(value):
        raise InvalidParameterError(parameter_message(name, caller, str(constraint), value))
    return value


def check_keywords(values: dict, constraints: dict, caller: str, kind: str) -> dict:
    """``values`` (keyword → value, e.g. a function's ``**options``) if every keyword is one of
    ``constraints`` and its value meets it (None: not checked here), else the uniform message naming
    ``caller``; an unknown keyword is a TypeError listing the ``kind`` ("the analysis options are …")."""
    unknown = [name for name in values if name not in constraints]
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}; the {kind} are "
                        f"{', '.join(constraints)}")
    for name, value in values.items():
        if constraints[name] is not None:
            check_param(value, name, constraints[name], caller)
    return values


def check_int_in(value, name: str, low: int, high: int, caller: str, note: str = "") -> int:
    """``value`` as an int if it is one in [low, high] — a range known only with the data, such as
    [1, K] — else the uniform message, with ``note`` after the range ("(the number of classes)")."""
    constraint = Interval(int, low, high)
    if not constraint.accepts(value):
        raise InvalidParameterError(parameter_message(name, caller, f"{constraint}{note}", value))
    return int(value)


#: the public functions that take ``sample_weight`` (a row of integer weight k counts as k copies of the
#: row); every other function declared with :func:`validate_params` refuses it naming these
WEIGHTED_FUNCTIONS = ("binned_ece", "mce", "ace", "top_label_ece", "reliability", "corp_reliability",
                      "score_decomposition", "murphy_decomposition", "spiegelhalter_test",
                      "hosmer_lemeshow_test", "classical_tests", "recalibrate")


def weights_refused(caller: str) -> InvalidParameterError:
    """The one message of a function that cannot take sample weights."""
    return InvalidParameterError(
        f"{caller} does not take sample_weight (calviz has no weighted version of it); the functions that "
        f"take sample weights are {', '.join(WEIGHTED_FUNCTIONS)}.")


def validate_params(constraints: dict, *, caller: str | None = None) -> Callable:
    """Decorator: check the arguments a call passes against ``constraints`` (parameter name →
    constraint) before the function runs; defaults are not re-checked.  Errors name the function; a
    ``sample_weight`` passed to a function without that parameter is refused naming the functions
    that take weights (:data:`WEIGHTED_FUNCTIONS`)."""

    def decorate(func):
        signature = inspect.signature(func)
        name = caller or func.__name__
        unknown = set(constraints) - set(signature.parameters)
        if unknown:  # a typo in a declaration would silently check nothing
            raise RuntimeError(f"{name} has no parameter(s) {sorted(unknown)}")
        takes_weights = "sample_weight" in signature.parameters or any(
            p.kind is p.VAR_KEYWORD for p in signature.parameters.values())

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if "sample_weight" in kwargs and not takes_weights:
                raise weights_refused(name)
            bound = signature.bind(*args, **kwargs)
            for param, value in bound.arguments.items():
                constraint = constraints.get(param)
                if constraint is not None:
                    check_param(value, param, constraint, name)
            return func(*args, **kwargs)

        wrapper.parameter_constraints = dict(constraints)
        return wrapper

    return decorate


# ------------------------------------------------------------------------------------------------
# frequently used constraints
# ------------------------------------------------------------------------------------------------
#: α of a test or 1 − confidence level of an interval
UNIT_OPEN = Interval(float, 0, 1, closed="neither")
#: α of a test whose decision divides it among scales or classes (T-Cal: α/B, α/(3K)) and then divides
#: by that: far below 1e-300 it underflows to 0 or its inverse overflows (adaptive_tcal(alpha=5e-324)
#: raised ZeroDivisionError, split_tcal(alpha=1e-308) OverflowError)
TEST_LEVEL = Interval(float, 1e-300, 1, closed="left")
POSITIVE_INT = Interval(int, 1, None)
NON_NEGATIVE_INT = Interval(int, 0, None)
POSITIVE_REAL = Interval(float, 0, None, closed="neither")
SEED = Seed()
BOOLEAN = Boolean()
STR = Instance(str)
#: a file's path: what ``open`` and ``pathlib.Path`` take (bytes paths are not)
PATH = Instance((str, os.PathLike), "a str or path-like")


# ------------------------------------------------------------------------------------------------
# limits: costs that grow with the data's shape, refused in O(1) with the way around them
# ------------------------------------------------------------------------------------------------
#: Most classes (probability columns) a model may have.  Per-class views (classwise, the ACE, the
#: classwise T-Cal) cost a pass over the data per class plus a fixed cost per class (the equal-mass bin
#: table), so cost grows with K even at n = 2: ``calviz check`` of two rows took 13.6 CPU-s at 10⁴
#: classes and over 68 CPU-s and 2 GB at 2·10⁵; about 1.4 CPU-s at 10³ (ImageNet's 1,000 classes fit).
MAX_CLASSES = 1_000
#: Most groups :func:`calviz.calibration_by_group` compares: each group is a reliability diagram, an
#: interval and a test, so cost grows with the number of groups whatever their size.
MAX_GROUPS = 1_000


class LimitExceeded(InputError):
    """Input refused for its size alone (classes, groups, a file's bytes or decoded size), before the
    work it would cost; the message names the limit and the way around it."""


def check_n_classes(n_classes: int) -> None:
    """Refuse more than :data:`MAX_CLASSES` classes, naming the limit and the ways around it."""
    if int(n_classes) > MAX_CLASSES:
        raise LimitExceeded(
            f"{int(n_classes):,} classes exceed calviz's limit of MAX_CLASSES = {MAX_CLASSES:,} probability "
            "columns: pass the top-1 form instead (columns 'confidence' + 'correct': each row's largest "
            "probability and whether it was the label), or merge rare classes into one column"
        )


def check_n_groups(n_groups: int) -> None:
    """Refuse more than :data:`MAX_GROUPS` groups, naming the limit and the ways around it."""
    if int(n_groups) > MAX_GROUPS:
        raise LimitExceeded(
            f"{int(n_groups):,} groups exceed calviz's limit of MAX_GROUPS = {MAX_GROUPS:,}: group by a "
            "coarser variable (merge small groups into one), or pass the rows of the groups of interest"
        )


# ------------------------------------------------------------------------------------------------
# seed policy
# ------------------------------------------------------------------------------------------------
def as_generator(seed, caller: str | None = None) -> np.random.Generator:
    """A numpy Generator from ``seed`` (None, an int or a Generator, which is returned itself)."""
    check_param(seed, "seed", SEED, caller)
    return np.random.default_rng(seed)


def kernel_seed(seed, *, high: int = 2**63 - 1, caller: str | None = None) -> int:
    """The integer seed of a jitted kernel's SplitMix64 stream: one draw in [0, high) from
    :func:`as_generator` (a Generator passed in advances by that draw)."""
    return int(as_generator(seed, caller).integers(0, high))


def spawn_seeds(seed, k: int) -> list:
    """``k`` independent seeds for ``k`` sub-computations (e.g. one per model or group): child
    Generators of a Generator, else integer seeds from ``numpy.random.SeedSequence(seed).spawn(k)``."""
    if isinstance(seed, np.random.Generator):
        return list(seed.spawn(k))
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(k)]


# ------------------------------------------------------------------------------------------------
# keyword-only options
# ------------------------------------------------------------------------------------------------
def positional_deprecated(*names: str) -> Callable:
    """Decorator for a function whose options ``names`` used to be positional after ``(y_true, y_prob)``
    and are keyword-only now: old positional calls still work for one release, with a
    ``DeprecationWarning`` naming the keywords to use."""

    def decorate(func):
        n_positional = sum(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            for p in inspect.signature(func).parameters.values()
        )

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            extra = args[n_positional:]
            if extra:
                if len(extra) > len(names):
                    raise TypeError(f"{func.__name__}() takes {n_positional + len(names)} positional "
                                    f"arguments but {len(args)} were given")
                moved = dict(zip(names, extra, strict=False))
                clash = set(moved) & set(kwargs)
                if clash:
                    raise TypeError(f"{func.__name__}() got multiple values for {sorted(clash)}")
                warnings.warn(
                    f"passing {', '.join(moved)} of {func.__name__} by position is deprecated; pass "
                    + ", ".join(f"{k}={v!r}" for k, v in moved.items()) + " by keyword",
                    DeprecationWarning, stacklevel=2)
                args, kwargs = args[:n_positional], {**kwargs, **moved}
            return func(*args, **kwargs)

        return wrapper

    return decorate
