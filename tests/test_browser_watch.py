"""``calviz serve LOG --time-column ts --watch`` in headless Chromium: rows appended to the watched file
reach the open page — the over-time card's windows, caption and the newest window's diagram — without a
reload (the test waits on the page's Bokeh models changing, never on a fixed delay)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import start_server, stop_server

pytestmark = pytest.mark.browser

LOAD_TIMEOUT = 180_000  # ms: a fresh server compiles kernels before the first views
UPDATE_TIMEOUT = 60_000

_ALL_MODELS = (
    "(() => { const out = []; for (const d of Bokeh.documents) for (const m of d.all_models) out.push(m);"
    " return out; })()"
)
JS_TEXT_OF = f"""(name) => {{
    for (const m of {_ALL_MODELS}) if (m.name === name && typeof m.text === 'string') return m.text;
    return null;
}}"""
JS_WINDOW_COUNTS = f"""() => {{
    for (const m of {_ALL_MODELS}) {{
        const data = m.data;
        if (!data || m.selected === undefined) continue;
        const get = (k) => data instanceof Map ? data.get(k) : data[k];
        if (get('evalue') !== undefined && get('ece_low') !== undefined) return Array.from(get('n'));
    }}
    return null;
}}"""


def _rows(rng, day: int, n: int, drift: bool = False) -> pd.DataFrame:
    seconds = np.sort(rng.integers(0, 86400, n))
    time = pd.Timestamp("2026-02-01") + pd.Timedelta(days=day) + pd.to_timedelta(seconds, unit="s")
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < (p ** 3 if drift else p)).astype(int)
    return pd.DataFrame({"ts": time, "y_true": y, "y_prob": p})


def test_appended_rows_reach_the_open_page(chromium_browser, tmp_path, artifacts_dir):
    rng = np.random.default_rng(5)
    log = tmp_path / "log.csv"
    pd.concat([_rows(rng, day, 400) for day in range(3)]).to_csv(log, index=False)
    proc, url = start_server(tmp_path, extra_args=(str(log), "--time-column", "ts", "--time-window", "1D",
                                                   "--watch", "--watch-period", "0.2"))
    page = None
    try:
        page = chromium_browser.new_page(viewport={"width": 1400, "height": 2400})
        page.goto(url)
        page.wait_for_function(f"() => window.Bokeh && ({JS_WINDOW_COUNTS})() !== null && "
                               f"({JS_WINDOW_COUNTS})().length === 3", timeout=LOAD_TIMEOUT)
        caption = page.evaluate(f"({JS_TEXT_OF})('over_time_caption')")
        assert "3 windows (1D, 1,200 rows)" in caption
        assert "window 2026-02-03" in page.evaluate(f"({JS_TEXT_OF})('over_time_diagram_title')")
        page.evaluate("() => { window.__calvizSame = true; }")
        _rows(rng, 3, 900, drift=True).to_csv(log, mode="a", header=False, index=False)
        page.wait_for_function(f"() => {{ const n = ({JS_WINDOW_COUNTS})(); return n && n.length === 4; }}",
                               timeout=UPDATE_TIMEOUT)
        assert page.evaluate(f"({JS_WINDOW_COUNTS})()") == [400, 400, 400, 900]
        page.wait_for_function(f"() => ({JS_TEXT_OF})('over_time_diagram_title').includes('2026-02-04')",
                               timeout=UPDATE_TIMEOUT)
        page.wait_for_function(f"() => ({JS_TEXT_OF})('over_time_caption').includes('4 windows')",
                               timeout=UPDATE_TIMEOUT)
        assert page.evaluate("() => window.__calvizSame === true")  # the same page: no reload
        page.screenshot(path=str(artifacts_dir / "watch_after_append.png"))
    finally:
        if page is not None:  # (the run's browser is shared: a page left open keeps reconnecting)
            page.close()
        stop_server(proc)
