"""A distributed twin of an in-memory function: its signature, option checks and documentation.

:func:`twin` gives a driver ``driver(data, options, **dask_keywords)`` the signature of the in-memory
function plus the distributed keywords, binds every call against it (so unknown or positional options
fail as in memory), turns the data into :class:`DaskCalibrationData`, checks the options with the
in-memory function's declared constraints (the same messages) and writes the numpydoc docstring from the
in-memory one: its Parameters, Returns and References, then the distributed keywords and an example that
compares both."""

from __future__ import annotations

import functools
import inspect
import re

from calviz._params import Interval, check_param
from calviz.dask._data import SPLIT_EVERY, as_dask_data

#: a tree step merges at least two partial results
SPLIT_EVERY_RULE = Interval(int, 2, None)


class _Client:
    """Where to compute: None (dask's current scheduler) or a ``distributed.Client`` — anything with its
    ``compute``, ``persist`` and ``gather`` (the drivers call them), so a client need not be imported."""

    def __str__(self) -> str:
        return "None or a distributed.Client"

    def accepts(self, value) -> bool:
        needed = ("compute", "persist", "gather")
        return value is None or all(callable(getattr(value, m, None)) for m in needed)


CLIENT_RULE = _Client()

#: the keywords every driver adds: name → (default, constraint or None, documentation)
DASK_KEYWORDS = {
    "split_every": (SPLIT_EVERY, SPLIT_EVERY_RULE, "int, default 8\n        Fan-in of the tree reduction "
                    "of the per-partition sums (depth ⌈log_split_every P⌉ for P partitions)."),
    "client": (None, CLIENT_RULE, "distributed.Client, optional\n        Where to compute (default: dask's "
               "current scheduler)."),
    "y_true_column": (None, None, "str, optional\n        The label column of DataFrame / Parquet input "
                      "(detected when omitted, see :func:`calviz.dask.from_dataframe`)."),
    "y_prob_columns": (None, None, "str or list of str, optional\n        The probability column(s) of "
                       "DataFrame / Parquet input."),
}

_EXAMPLE = """
    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> Y, P = da.from_array(y, chunks=700), da.from_array(p, chunks=700)
    >>> on_dask = calviz.dask.{name}(Y, P{options})
    >>> bool(np.isclose(on_dask.statistic, calviz.{name}(y, p{options}).statistic, rtol=1e-12))
    True
"""


def inherited(in_memory, *names: str, **more) -> dict:
    """Constraints of a distributed-only function: those ``in_memory`` declares for ``names``, ``more``, and
    the rules of ``split_every`` and ``client`` (for :func:`calviz._params.validate_params`)."""
    return {**{name: in_memory.parameter_constraints[name] for name in names}, **more,
            "split_every": SPLIT_EVERY_RULE, "client": CLIENT_RULE}


def twin(in_memory, *, extra: dict | None = None, example: str = ""):
    """Decorator: the distributed twin of ``in_memory`` (module docstring); ``extra`` adds keywords
    (name → (default, constraint, documentation)) before the common ones of :data:`DASK_KEYWORDS`."""
    base = inspect.signature(in_memory)
    added = {**(extra or {}), **DASK_KEYWORDS}
    keyword = inspect.Parameter.KEYWORD_ONLY
    signature = base.replace(parameters=[*base.parameters.values(), *(
        inspect.Parameter(name, keyword, default=spec[0]) for name, spec in added.items())])
    #: the constraints the in-memory function declares and those of the added keywords
    constraints = {**getattr(in_memory, "parameter_constraints", {}), **{k: s[1] for k, s in added.items()}}

    def decorate(driver):
        @functools.wraps(driver)
        def call(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            options = dict(bound.arguments)
            y_true, y_prob = options.pop("y_true"), options.pop("y_prob")
            names = {k: v for k in ("y_true_column", "y_prob_columns") if (v := options.pop(k)) is not None}
            for name, constraint in constraints.items():  # (checked with the in-memory messages)
                if name in options and constraint is not None:
                    check_param(options[name], name, constraint, in_memory.__name__)
            data = as_dask_data(y_true, y_prob, **names)
            dask_options = {k: options.pop(k) for k in list(options) if k in added}
            return driver(data, options, **dask_options)

        call.__signature__ = signature
        call.__name__ = call.__qualname__ = in_memory.__name__
        call.__module__ = "calviz.dask"
        call.__doc__ = _document(in_memory, driver.__doc__ or "", added, example)
        call.in_memory = in_memory
        return call

    return decorate


def _document(in_memory, note: str, added: dict, example: str) -> str:
    """The in-memory docstring with ``note`` after its first paragraph, the distributed keywords as
    "Other Parameters" and a distributed example instead of the in-memory one."""
    name = in_memory.__name__
    doc = inspect.cleandoc(in_memory.__doc__ or name)
    doc = re.split(r"\nExamples\n-+\n", doc)[0].rstrip()
    head, _, body = doc.partition("\n\n")
    others = "Other Parameters\n----------------\n" + "\n".join(
        f"{key} : {spec[2]}".replace("\n        ", "\n    ") for key, spec in added.items()) + "\n\n"
    body = body.replace("Returns\n-------", others + "Returns\n-------", 1)
    text = (f"{head}\n\nOn Dask: :func:`calviz.{name}` with the same arguments, defaults and result, "
            f"computed partition by partition. {inspect.cleandoc(note)}\n\n{body}")
    return "\n    ".join(text.splitlines()).replace("\n    \n", "\n\n") + "\n" + (
        _EXAMPLE.format(name=name, options=example))
