"""``calviz serve DIR``: a Parquet directory analysed on Dask (a LocalCluster started by the server), in
real headless Chromium — the page loads without console errors, the views show every row, a widget change
recomputes on Dask, and a bad path typed into the sidebar shows an error while the app keeps working."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import start_server, stop_server
from test_browser_app import (
    JS_TEXT_CONTAINING,
    UPDATE_TIMEOUT,
    bar_counts,
    open_app,
    set_widget,
    shot,
    status_text,
    tcal_text,
    wait_hist,
    wait_text,
)

pytestmark = pytest.mark.browser
pytest.importorskip("distributed")

SIZES = (2500, 0, 4000, 1500)


@pytest.fixture(scope="module")
def served_dask_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("calviz-dask-serve")
    directory = root / "preds"
    directory.mkdir()
    rng = np.random.default_rng(7)
    for i, size in enumerate(SIZES):
        p = rng.random(size)
        y = (rng.random(size) < p**1.5).astype(np.int64)
        pd.DataFrame({"y_true": y, "y_prob": p}).to_parquet(directory / f"part.{i}.parquet", index=False)
    proc, url = start_server(root, extra_args=(str(directory), "--data-root", str(root)))
    try:
        yield url
    finally:
        stop_server(proc)


def test_serve_parquet_directory_on_dask(served_dask_app, chromium_browser, artifacts_dir):
    context, page = open_app(chromium_browser, served_dask_app)
    try:
        page.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('Dask') !== null", timeout=UPDATE_TIMEOUT)
        status = status_text(page)
        assert "Dask" in status and f"of {sum(SIZES):,}" in status, status
        wait_text(page, "REJECT")  # P(y=1 | p) = p^1.5 on 8000 rows: the T-Cal job on the workers
        assert "REJECT" in tcal_text(page)
        wait_text(page, f"n = {sum(SIZES):,}")  # diagram title
        shot(page, artifacts_dir, "dask_dashboard")

        set_widget(page, "bins (m)", 40)  # recomputed by the Dask workers
        wait_hist(page, 40)
        assert 15 not in bar_counts(page)["hist"]

        set_widget(page, "Parquet file or directory (on this machine)", "/nonexistent/predictions")
        page.get_by_role("button", name="Open on Dask").click()
        wait_text(page, "Input refused")
        wait_text(page, "/nonexistent/predictions")  # in the alert
        shot(page, artifacts_dir, "dask_bad_path")
        set_widget(page, "bins (m)", 25)  # the app still answers, on the same data
        wait_hist(page, 25)
        assert f"of {sum(SIZES):,}" in status_text(page)
        assert not page.errors, page.errors
    finally:
        context.close()
