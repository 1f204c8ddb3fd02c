"""The example notebook executes top to bottom and its output carries the Panel/Bokeh bundle."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "examples" / "calviz_tour.ipynb"

#: MIME types through which HoloViews/Panel/Bokeh ship their JavaScript to Jupyter
BUNDLE_MIME_TYPES = (
    "application/vnd.holoviews_load.v0+json",
    "application/vnd.holoviews_exec.v0+json",
    "application/vnd.bokehjs_load.v0+json",
    "application/vnd.bokehjs_exec.v0+json",
)


def test_tour_notebook_executes_and_embeds_the_dashboard(tmp_path, monkeypatch):
    # the kernel inherits the environment: make the working tree importable and the cache private
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("CALVIZ_CACHE_DIR", str(tmp_path / "cache"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()

    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
    mime_types = {key for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  for key in o.get("data", {})}
    assert mime_types & set(BUNDLE_MIME_TYPES), f"no Panel/Bokeh bundle among {sorted(mime_types)}"
    # the dashboard cell renders a Panel model (not a text repr)
    dashboard_cell = next(c for c in nb.cells if c.cell_type == "code" and "calviz.dashboard(" in c.source)
    dashboard_mimes = {key for o in dashboard_cell.outputs for key in o.get("data", {})}
    assert dashboard_mimes & set(BUNDLE_MIME_TYPES), dashboard_mimes
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "reject calibration: True" in text and "wrote " in text
