"""The one error type of refused input, in a module of its own: the data validation (:mod:`calviz._data`)
and the parameter validation (:mod:`calviz._params`) both raise it, and neither imports the other for it."""

from __future__ import annotations


class InputError(ValueError):
    """Input that calviz refuses, with a message naming the row/column and the rule broken."""


InputError.__module__ = "calviz"  # tracebacks name it where users import it from: calviz.InputError
