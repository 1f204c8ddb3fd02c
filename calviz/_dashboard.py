"""``calviz.dashboard``: the live dashboard (built in :mod:`calviz.app`).

``calviz.dashboard(y_true, y_prob)`` renders it inline in Jupyter; :func:`create_app` builds one served
session's page; :func:`shutdown_workers` stops the worker processes when a server stops.
"""

from __future__ import annotations

import sys
import types

from calviz.app.page import CalvizApp, create_app, dashboard
from calviz.app.sources import FALLBACK_DATASET, UPLOAD_LIMIT_BYTES
from calviz.app.store import shutdown_workers

__all__ = [
    "CalvizApp",
    "dashboard",
    "create_app",
    "shutdown_workers",
    "UPLOAD_LIMIT_BYTES",
    "FALLBACK_DATASET",
]


class _CallableModule(types.ModuleType):
    """``calviz.dashboard`` is both this module and the public function :func:`dashboard`: importing the
    submodule (``from calviz.dashboard import CalvizApp``) rebinds the package attribute to the module,
    so the module itself forwards calls to the function."""

    def __call__(self, *args, **kwargs):
        return dashboard(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
