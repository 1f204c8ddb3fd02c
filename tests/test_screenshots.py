"""Screenshots of the served app and of the report at 1280×800 in headless Chromium (Playwright), with two
checks on every one: no legend overlaps the data, and no visible text cites internal file names.

One server serves every app state (default data, an under-confident model, a binary model, the top-k and
the full target), one after the other in one page.  Screenshots go to ``artifacts/screenshots/``
(git-ignored; CI keeps them as artifacts).

Legends vs data: every glyph of a Bokeh figure is clipped to its frame (the axes' rectangle), so a legend
whose box does not intersect the frame cannot cover a bar, a band, a marker or a line.  The check reads
the boxes BokehJS laid out (legend and frame, in the figure's coordinates).
"""

from __future__ import annotations

import re

import pytest

from calviz.present.frames import CALIBRATED, MISCALIBRATED

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 800
LOAD_TIMEOUT = 180_000  # ms: a fresh server trains the embedded models and compiles the kernels
UPDATE_TIMEOUT = 120_000
INTERNAL = re.compile(r"seed[ -]?00|estimators\.md", re.IGNORECASE)

_ROOT_VIEWS = "(Bokeh.index instanceof Map ? [...Bokeh.index.values()] : Object.values(Bokeh.index))"

#: [figure title, legend box, frame box] of every visible legend (boxes as [left, top, right, bottom])
JS_LEGEND_BOXES = f"""() => {{
    const out = [], seen = new Set();
    function walk(view, figure) {{
        if (!view || seen.has(view)) return;
        seen.add(view);
        const type = view.model ? view.model.type : '';
        if (view.frame !== undefined && view.frame.bbox) figure = view;
        if (type === 'Legend' && figure && view.model.visible && view.bbox && view.bbox.width > 0
                && view.model.items.length > 0) {{
            const f = figure.frame.bbox, l = view.bbox;
            const title = figure.model.title ? String(figure.model.title.text || '') : '';
            out.push([title, [l.left, l.top, l.right, l.bottom], [f.left, f.top, f.right, f.bottom]]);
        }}
        let children = [];
        try {{ children = [...view.children()]; }} catch (e) {{ children = view.child_views || []; }}
        for (const child of children) walk(child, figure);
    }}
    for (const root of {_ROOT_VIEWS}) walk(root, null);
    return out;
}}"""

#: every string a Bokeh model of the page holds (titles and tick labels are drawn on canvas, outside
#: the DOM's text), plus the DOM's visible text
JS_ALL_TEXT = """() => {
    const out = [document.body.innerText];
    for (const doc of Bokeh.documents) for (const m of doc.all_models) {
        for (const prop of Object.values(m.properties || {})) {
            let v;
            try { v = prop.get_value(); } catch (e) { continue; }
            if (typeof v === 'string') out.push(v);
            else if (v && typeof v === 'object' && typeof v.value === 'string') out.push(v.value);
        }
    }
    return out.join('\\n');
}"""

JS_SET_WIDGET = """([title, value]) => {
    for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (m.title === title && m.properties && 'value' in m.properties) { m.value = value; return true; }
    return false;
}"""

JS_STATUS = """() => {
    for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (typeof m.text === 'string' && m.text.includes('last update')) return m.text;
    return '';
}"""

#: true once no background job runs ("computing: …" gone) and every view has drawn for the current state
JS_SETTLED = """() => {
    for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (typeof m.text === 'string' && (m.text.startsWith('computing') || m.text.startsWith('preparing'))
            && m.visible !== false) return false;
    return true;
}"""


#: every axis' drawn tick labels as [figure title, axis dimension (0: x), [[start, end], …]] — each label's
#: extent along the axis in canvas pixels (the text measured in the axis' label font: width for a
#: horizontal axis, the font's height for a vertical one), in tick order
JS_TICK_LABELS = f"""() => {{
    const out = [], seen = new Set();
    const ctx = document.createElement('canvas').getContext('2d');
    function walk(view, figure) {{
        if (!view || seen.has(view)) return;
        seen.add(view);
        const type = view.model ? view.model.type : '';
        if (view.frame !== undefined && view.frame.bbox) figure = view;
        if (type.endsWith('Axis') && figure && view.model.visible && view.model.major_label_text_font_size) {{
            let dim;
            try {{ dim = view.dimension; }} catch (e) {{ return; }}  // (not laid out: a hidden figure)
            const ticks = view.tick_coords.major[dim];
            const labels = view.compute_labels(ticks).items.map((t) => String(t.text));
            const size = parseFloat(view.model.major_label_text_font_size) *
                (String(view.model.major_label_text_font_size).endsWith('pt') ? 4 / 3 : 1);
            ctx.font = `${{size}}px ${{view.model.major_label_text_font}}`;
            const scale = dim === 0 ? view.coordinates.x_scale : view.coordinates.y_scale;
            const spans = ticks.map((v, i) => {{
                const c = scale.compute(v);
                const half = (dim === 0 ? ctx.measureText(labels[i]).width : size) / 2;
                return [c - half, c + half];
            }}).sort((a, b) => a[0] - b[0]);
            const title = figure.model.title ? String(figure.model.title.text || '') : '';
            out.push([title, dim, spans, labels]);
            return;
        }}
        let children = [];
        try {{ children = [...view.children()]; }} catch (e) {{ children = view.child_views || []; }}
        for (const child of children) walk(child, figure);
    }}
    for (const root of {_ROOT_VIEWS}) walk(root, null);
    return out;
}}"""

#: every figure title whose text is wider than the room it has (from the frame's left edge to the canvas'
#: right edge: Bokeh draws titles on the canvas, which cuts them there), as [title, text px, room px]
JS_CUT_TITLES = f"""() => {{
    const out = [], seen = new Set();
    const ctx = document.createElement('canvas').getContext('2d');
    function walk(view) {{
        if (!view || seen.has(view)) return;
        seen.add(view);
        if (view.frame !== undefined && view.frame.bbox && view.model.title && view.model.title.text) {{
            const t = view.model.title;
            const size = parseFloat(t.text_font_size) * (String(t.text_font_size).endsWith('pt') ? 4 / 3 : 1);
            ctx.font = `${{t.text_font_style}} ${{size}}px ${{t.text_font}}`;
            const width = Math.max(...String(t.text).split('\\n').map((line) => ctx.measureText(line).width));
            const room = view.el.getBoundingClientRect().width - view.frame.bbox.left;
            if (width > room) out.push([String(t.text), width, room]);
        }}
        let children = [];
        try {{ children = [...view.children()]; }} catch (e) {{ children = view.child_views || []; }}
        for (const child of children) walk(child);
    }}
    for (const root of {_ROOT_VIEWS}) walk(root);
    return out;
}}"""

#: every table whose columns are wider than the table (cut: a column is hidden until scrolled to), every
#: button whose label is wider than the button, and
#: every card (the cards' outermost Bokeh roots) wider than the page's main area, as text
JS_CUT_BOXES = """() => {
    const out = [];
    const walk = (root) => {
        for (const e of root.querySelectorAll('*')) {
            if (e.classList && e.classList.contains('slick-viewport') && e.clientWidth > 0
                    && e.scrollWidth > e.clientWidth + 1)
                out.push(`table: ${e.scrollWidth} px of columns in ${e.clientWidth} px`);
            if (e.classList && e.classList.contains('bk-btn') && e.clientWidth > 0
                    && e.scrollWidth > e.clientWidth + 1)
                out.push(`button "${e.textContent}": ${e.scrollWidth} px in ${e.clientWidth} px`);
            if (e.shadowRoot) walk(e.shadowRoot);
        }
    };
    walk(document);
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width + 1)
        out.push(`page: ${document.documentElement.scrollWidth} px wide in a ${width} px window`);
    return out;
}"""


def check_layout(page, name: str) -> None:
    """No tick labels run together, no figure title is cut, no table or card is wider than its room."""
    for title, dim, spans, labels in page.evaluate(JS_TICK_LABELS):
        for (_, end), (start, _), a, b in zip(spans, spans[1:], labels, labels[1:], strict=False):
            assert end <= start + 0.5, (
                f"{name}: tick labels {a!r} and {b!r} of the {'xy'[dim]} axis of {title!r} overlap")
    assert page.evaluate(JS_CUT_TITLES) == [], f"{name}: cut titles"
    assert page.evaluate(JS_CUT_BOXES) == [], f"{name}: cut tables or cards"


def _intersects(a, b) -> bool:
    return a[0] < b[2] and a[2] > b[0] and a[1] < b[3] and a[3] > b[1]


def check_page(page, name: str, artifacts) -> None:
    """Screenshot at 1280×800, then: no legend box inside its figure's frame, no internal citations."""
    # the last patches are painted: two more animation frames
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.screenshot(path=str(artifacts / f"{name}.png"))
    page.screenshot(path=str(artifacts / f"{name}-full-page.png"), full_page=True)  # the views below the fold
    for title, legend, frame in page.evaluate(JS_LEGEND_BOXES):
        assert not _intersects(legend, frame), f"{name}: the legend of {title!r} overlaps its data"
    check_layout(page, name)
    text = page.evaluate(JS_ALL_TEXT)
    match = INTERNAL.search(text)
    assert match is None, f"{name}: the page shows {text[max(0, match.start() - 60):match.end() + 60]!r}"


@pytest.fixture(scope="module")
def screenshots(artifacts_dir):
    folder = artifacts_dir / "screenshots"
    folder.mkdir(exist_ok=True)
    return folder


def _set(page, title, value) -> None:
    before = page.evaluate(JS_STATUS)
    assert page.evaluate(JS_SET_WIDGET, [title, value]), f"no widget titled {title!r}"
    page.wait_for_function("(before) => (" + JS_STATUS + ")() !== before", arg=before, timeout=UPDATE_TIMEOUT)
    page.wait_for_function(JS_SETTLED, timeout=UPDATE_TIMEOUT)


#: the T-Cal card's caption (its only text naming the top-k target's test)
JS_TCAL_NOTE = """() => {
    for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (typeof m.text === 'string' && m.text.includes('T-Cal (') && m.text.includes('Solid line'))
            return m.text;
    return '';
}"""

JS_COMPARISON_VERDICT = """() => {
    for (const doc of Bokeh.documents) for (const m of doc.all_models)
        if (m.name === 'comparison_verdict') return m.text;
    return null;
}"""

#: a control in the accessibility tree without a name: ``- slider`` (nothing after the role but its state)
UNNAMED_CONTROL = re.compile(r"^\s*- (slider|combobox|checkbox|textbox|spinbutton|button)(\s*\[[^\]]*\])*:?$")


def unnamed_controls(snapshot: str) -> list[str]:
    """The controls of a Playwright ARIA snapshot that have no accessible name."""
    return [line.strip() for line in snapshot.splitlines() if UNNAMED_CONTROL.match(line)]


def check_accessible_names(page, name: str) -> None:
    """Every control of the page has an accessible name (Playwright's ARIA snapshot of the page)."""
    snapshot = page.locator("body").aria_snapshot()
    assert unnamed_controls(snapshot) == [], f"{name}: controls without an accessible name"
    assert sum(line.strip().startswith("- slider") for line in snapshot.splitlines()) >= 4


def test_app_screenshots(served_app, chromium_browser, screenshots):
    context = chromium_browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    try:
        page.goto(served_app, timeout=LOAD_TIMEOUT)
        page.wait_for_function("() => (" + JS_STATUS + ")() !== ''", timeout=LOAD_TIMEOUT)
        page.wait_for_function(JS_SETTLED, timeout=LOAD_TIMEOUT)
        check_page(page, "app-default", screenshots)
        check_accessible_names(page, "app-default")
        status = re.sub(r"<[^>]+>", "", page.evaluate(JS_STATUS))
        assert "_" not in status and "tcal" not in status, status  # statistics in words
        # the first-run step, named, with its measured time
        assert re.search(r"kernels (compiled|loaded from the cache) in \d", status), status
        _set(page, "calibration target", "topk")
        check_page(page, "app-topk", screenshots)
        assert "no top-k form" in page.evaluate(JS_TCAL_NOTE)
        _set(page, "calibration target", "classwise")
        check_page(page, "app-classwise", screenshots)
        _set(page, "calibration target", "full")
        check_page(page, "app-full", screenshots)
        assert "no top-k form" not in page.evaluate(JS_TCAL_NOTE)  # (the top-k caption stayed after top-k)
        _set(page, "calibration target", "auto")
        _set(page, "dataset", "tabular-rf")  # a random forest: under-confident
        check_page(page, "app-underconfident", screenshots)
        _set(page, "dataset", "breast-cancer-gnb")
        check_page(page, "app-binary", screenshots)
        modes = (("before / after recalibration", "recalibration"), ("model A vs model B", "models"),
                 ("by group (column)", "groups"))
        for mode, name in modes:
            before = page.evaluate(JS_COMPARISON_VERDICT)
            assert page.evaluate(JS_SET_WIDGET, ["compare", mode])
            page.wait_for_function(
                "(before) => { const t = (" + JS_COMPARISON_VERDICT + ")(); return t !== null && t !== before"
                " && !t.startsWith('computing'); }", arg=before, timeout=UPDATE_TIMEOUT)
            page.wait_for_function(JS_SETTLED, timeout=UPDATE_TIMEOUT)
            page.get_by_text("5 · Comparison").scroll_into_view_if_needed()
            check_page(page, f"app-compare-{name}", screenshots)
            check_accessible_names(page, f"app-compare-{name}")  # (the mode's own controls too)
            verdict = page.evaluate(JS_COMPARISON_VERDICT)
            if "after is better calibrated" in verdict:  # good news is not drawn in the colour of bad news
                assert CALIBRATED in verdict and MISCALIBRATED not in verdict, verdict
    finally:
        context.close()


def test_report_screenshot(tmp_path, chromium_browser, screenshots):
    from calviz.analysis import AnalysisOptions
    from calviz.datasets import load_dataset
    from calviz.present.report import render_report

    path = tmp_path / "report.html"
    path.write_text(render_report(load_dataset("tabular-rf"), AnalysisOptions(n_resamples=100),
                                  source="dataset:tabular-rf"), encoding="utf-8")
    context = chromium_browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, offline=True)
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        page.wait_for_function(f"() => window.Bokeh && Bokeh.index && {_ROOT_VIEWS}.length >= 4",
                               timeout=LOAD_TIMEOUT)
        check_page(page, "report", screenshots)
    finally:
        context.close()


#: rows of the large-file screenshot (the size the app is promised to stay interactive at)
LARGE_ROWS = 10_000_000
#: the 10⁷-row file is one sample of this many rows repeated: the server reads, sorts and analyses 10⁷ rows
#: all the same, and the test writes the file in about a second instead of drawing and validating 10⁷
#: random rows (about 25 s of the test at CI's load)
LARGE_SAMPLE_ROWS = 100_000


def test_app_screenshot_ten_million_rows(tmp_path, chromium_browser, screenshots):
    """``calviz serve FILE`` on a 10⁷-row binary Parquet file: the page draws its views (a background
    job may still show its progress), states the rows the subsampled views used, and passes the same
    legend and wording checks."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from conftest import start_server, stop_server

    from calviz._synthetic import temperature_family

    sample = temperature_family(LARGE_SAMPLE_ROWS, seed=1, beta=1.2)
    repeats = LARGE_ROWS // LARGE_SAMPLE_ROWS
    path = tmp_path / "ten_million.parquet"
    pq.write_table(pa.table({"y_true": np.tile(sample.y_true, repeats),
                             "y_prob": np.tile(sample.y_prob, repeats)}), path)
    assert pq.read_metadata(path).num_rows == LARGE_ROWS
    proc, url = start_server(tmp_path, extra_args=(str(path),))
    context = chromium_browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    try:
        page.goto(url, timeout=LOAD_TIMEOUT)
        page.wait_for_function("() => (" + JS_STATUS + ")() !== ''", timeout=LOAD_TIMEOUT)
        page.wait_for_function(JS_SETTLED, timeout=3 * LOAD_TIMEOUT)
        check_page(page, "app-ten-million-rows", screenshots)
        text = page.evaluate(JS_ALL_TEXT)
        assert "10,000,000" in text, "the page does not say how many rows it analyses"
        assert "200,000 of 10,000,000 rows" in text, "the subsample of the distance bounds is not stated"
    finally:
        context.close()
        stop_server(proc)
