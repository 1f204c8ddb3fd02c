"""Every ```python block of README.md runs as pasted, each as one notebook cell, and the cells that end in
``calviz.dashboard(...)`` display the dashboard.

Each block is self-contained (it imports and loads what it uses); they run in sequence in one fresh kernel
(one kernel start for all), in an empty working directory."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

# (imported by the tests that run a kernel, not at collection: nbformat's import builds jsonschema's
# format checkers, 3 CPU-s in every test process)
pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(name) for name in ("nbformat", "nbclient")),
                                reason="nbformat and nbclient are not installed")

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: the MIME types through which Panel/Bokeh render a live model in Jupyter
DASHBOARD_MIME_TYPES = ("application/vnd.holoviews_exec.v0+json", "application/vnd.bokehjs_exec.v0+json")


def readme_python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_readme_has_the_blocks_a_newcomer_pastes():
    blocks = readme_python_blocks()
    assert len(blocks) >= 4
    assert any("calviz.dashboard(" in b for b in blocks)
    assert any("classical_tests" in b for b in blocks) and any("calibration_by_group" in b for b in blocks)


def _last_statement(source: str) -> str:
    lines = [line for line in source.strip().splitlines() if line.strip() and not line.startswith("#")]
    return lines[-1]


def test_every_readme_python_block_runs_as_one_cell(tmp_path, monkeypatch):
    import nbclient
    import nbformat

    # the Dask block needs the optional dask extra (CI installs it with the test extra)
    blocks = [b for b in readme_python_blocks() if "calviz.dask" not in b or not _dask_missing()]
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(b) for b in blocks])
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError (with the cell and the traceback) when a block fails
    for cell in nb.cells:
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        assert errors == [], cell.source
        if _last_statement(cell.source).startswith("calviz.dashboard("):
            mimes = {key for o in cell.outputs for key in o.get("data", {})}
            assert mimes & set(DASHBOARD_MIME_TYPES), f"no dashboard among {sorted(mimes)} of:\n{cell.source}"
    assert any("calviz.dashboard(" in _last_statement(c.source) for c in nb.cells)


def _dask_missing() -> bool:
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        return True
    return False
