"""The example notebook executes top to bottom and its output carries the Panel/Bokeh bundle."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

# (imported by the tests that run a kernel, not at collection: nbformat's import builds jsonschema's
# format checkers, 3 CPU-s in every test process)
pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(name) for name in ("nbformat", "nbclient")),
                                reason="nbformat and nbclient are not installed")

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
    import nbclient
    import nbformat

    # the kernel inherits the environment: the working tree importable, the run's dataset cache
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
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


def test_a_cell_that_writes_a_report_prints_no_bokehjs(tmp_path, monkeypatch):
    """calviz.report only writes a file: its cell output stays empty (it held ~3 MB of BokehJS); the first
    plot displayed afterwards still brings BokehJS to the page, so it renders."""
    import nbclient
    import nbformat

    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    setup = ("import numpy as np, calviz\nfrom calviz import plots\nrng = np.random.default_rng(0)\n"
             "p = rng.uniform(size=300)\ny = (rng.uniform(size=300) < p ** 2).astype(int)")
    write = "path = calviz.report(y, p, path='r.html', resampling='analytic')"
    show = "plots.reliability_plot(calviz.reliability(y, p))"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (setup, write, show)])
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert (tmp_path / "r.html").stat().st_size > 100_000
    assert nb.cells[1].outputs == []
    shown = {key for o in nb.cells[2].outputs for key in o.get("data", {})}
    assert shown & set(BUNDLE_MIME_TYPES), shown
