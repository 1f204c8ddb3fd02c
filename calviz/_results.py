"""Shared plumbing for the frozen result objects (readable repr in the style of scipy.stats)."""

from __future__ import annotations

import dataclasses

import numpy as np


def _short(value) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            return np.array2string(value, precision=4, separator=", ", suppress_small=True)
        return f"array(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, tuple) and len(value) > 8:
        return f"({len(value)} items)"
    if isinstance(value, tuple) and value and all(dataclasses.is_dataclass(v) for v in value):
        return f"({len(value)} × {type(value[0]).__name__})"  # nested results: one line, not a screenful
    return repr(value)


class ResultMixin:
    """Mixin for frozen result dataclasses: a one-field-per-line repr that abbreviates long arrays
    and hides fields whose name starts with an underscore."""

    def __repr__(self) -> str:
        fields = [f for f in dataclasses.fields(self) if not f.name.startswith("_") and f.repr]
        body = ",\n".join(f"    {f.name}={_short(getattr(self, f.name))}" for f in fields)
        return f"{type(self).__name__}(\n{body}\n)"

    def to_dict(self) -> dict:
        """Plain-Python dict (arrays as lists) for JSON output."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            out[f.name] = _jsonable(value)
        return out


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict() if hasattr(value, "to_dict") else dataclasses.asdict(value)
    return value
