"""``calviz.dashboard``: the live dashboard (built in :mod:`calviz.app`).

``calviz.dashboard(y_true, y_prob)`` renders it inline in Jupyter; :func:`create_app` builds one served
session's page; :func:`shutdown_workers` stops the worker processes when a server stops.
"""

from __future__ import annotations

from calviz.app.page import CalvizApp, create_app, dashboard
from calviz.app.sources import FALLBACK_DATASET, UPLOAD_LIMIT_BYTES
from calviz.app.workers import shutdown_workers

__all__ = [
    "CalvizApp",
    "dashboard",
    "create_app",
    "shutdown_workers",
    "UPLOAD_LIMIT_BYTES",
    "FALLBACK_DATASET",
]

