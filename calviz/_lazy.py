"""A module imported at its first use, for large dependencies that few code paths need at once."""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module ``name``: the first attribute read imports it.  (``scipy.stats`` and
    HoloViews take about 0.4 s each to import, which ``calviz serve`` would otherwise pay before it
    sends its first page.)"""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported at first use>"
