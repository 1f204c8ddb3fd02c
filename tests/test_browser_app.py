"""The served dashboard in real headless Chromium (Playwright).

Widgets are changed the way the browser changes them: by setting the value of the widget's Bokeh model
in the page (exactly what a slider drag or a select does on the client), which Bokeh syncs to the
server; the checks then read what the page shows (Bokeh data sources, rendered text).  Screenshots of
each state go to ``artifacts/`` (git-ignored).
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

pytestmark = pytest.mark.browser

LOAD_TIMEOUT = 180_000  # ms: first page of a fresh server trains the demo models and compiles kernels
# ms: a hang guard, not a speed requirement (a page waits on the change it made; an upload's views took
# over 60 s at load 20 on 2 cores)
UPDATE_TIMEOUT = 180_000

# -- page helpers (JavaScript run in the page) --------------------------------------------------------

_ALL_MODELS = (
    "(() => { const out = []; for (const d of Bokeh.documents) for (const m of d.all_models) out.push(m);"
    " return out; })()"
)

JS_SET_WIDGET = f"""([title, value]) => {{
    for (const m of {_ALL_MODELS}) {{
        if (m.title === title && m.properties && 'value' in m.properties) {{ m.value = value; return true; }}
    }}
    return false;
}}"""

JS_WIDGET_VALUE = f"""(title) => {{
    for (const m of {_ALL_MODELS})
        if (m.title === title && m.properties && 'value' in m.properties) return m.value;
    return null;
}}"""

# lengths of the reliability bars' data sources (the bar source is the one with a 'status' column) and
# of the confidence histograms (columns 'c1' and 'count'); ColumnDataSource.data may be an object or a Map
JS_BAR_COUNTS = f"""() => {{
    const bars = [], hist = [];
    for (const m of {_ALL_MODELS}) {{
        const data = m.data;
        if (!data || m.selected === undefined) continue;
        const get = (k) => data instanceof Map ? data.get(k) : data[k];
        if (get('status') !== undefined && get('frequency') !== undefined) bars.push(get('frequency').length);
        if (get('c1') !== undefined && get('count') !== undefined) hist.push(get('count').length);
    }}
    return {{bars, hist}};
}}"""

JS_TEXT_CONTAINING = f"""(needle) => {{
    for (const m of {_ALL_MODELS}) if (typeof m.text === 'string' && m.text.includes(needle)) return m.text;
    return null;
}}"""
# the same in the views only: not the status line (it names the computations it timed), its line of running
# jobs (it names the views it computes) or the cards' headings (their tooltips give each view's mathematics),
# each known by its CSS class
JS_VIEW_TEXT_CONTAINING = f"""(needle) => {{
    const skipped = ['calviz-status', 'calviz-jobs', 'calviz-card-head'];
    for (const m of {_ALL_MODELS})
        if (typeof m.text === 'string' && m.text.includes(needle)
            && !(m.css_classes || []).some((c) => skipped.includes(c)))
            return m.text;
    return null;
}}"""


def open_app(browser, url, *, width=1280, height=800):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console",
        lambda msg: errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None,
    )
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("requestfailed", lambda req: errors.append(f"requestfailed: {req.url}"))
    scripts: list[str] = []  # the URLs of the scripts the page requested
    page.on("request", lambda req: scripts.append(req.url) if req.resource_type == "script" else None)
    page.goto(url, timeout=LOAD_TIMEOUT)
    page.wait_for_function(
        f"() => window.Bokeh && Bokeh.documents.length > 0 && ({JS_BAR_COUNTS})().hist.length > 0",
        timeout=LOAD_TIMEOUT,
    )
    wait_tcal(page)
    page.errors = errors
    page.scripts = scripts
    return context, page


def wait_tcal(page):
    page.wait_for_function(f"() => ({JS_VIEW_TEXT_CONTAINING})('T-Cal (') !== null", timeout=UPDATE_TIMEOUT)


def set_widget(page, title, value):
    assert page.evaluate(JS_SET_WIDGET, [title, value]), f"no widget titled {title!r} in the page"


def bar_counts(page) -> dict:
    return page.evaluate(JS_BAR_COUNTS)


def wait_hist(page, n_bins):
    page.wait_for_function(f"() => ({JS_BAR_COUNTS})().hist.includes({int(n_bins)})", timeout=UPDATE_TIMEOUT)


def wait_text(page, needle, *, polling=None):
    """Wait until a text of the page contains ``needle`` (``polling="raf"``: at every animation frame, for
    a text that may show for less than conftest's polling interval)."""
    page.wait_for_function(f"(s) => ({JS_TEXT_CONTAINING})(s) !== null", arg=needle, timeout=UPDATE_TIMEOUT,
                           polling=polling)


def wait_text_changed(page, needle, before):
    """Wait until the text containing ``needle`` is shown and differs from ``before``."""
    page.wait_for_function(
        f"([s, before]) => {{ const t = ({JS_TEXT_CONTAINING})(s); return t !== null && t !== before; }}",
        arg=[needle, before],
        timeout=UPDATE_TIMEOUT,
    )


def wait_widget(page, title, value):
    page.wait_for_function(
        f"([title, value]) => ({JS_WIDGET_VALUE})(title) === value",
        arg=[title, value],
        timeout=UPDATE_TIMEOUT,
    )


def tcal_text(page) -> str:
    return page.evaluate(JS_VIEW_TEXT_CONTAINING, "T-Cal (") or ""


def status_text(page) -> str:
    return page.evaluate(JS_TEXT_CONTAINING, "last update") or ""


def status_n(page) -> int:
    text = re.sub(r"<[^>]+>", "", html.unescape(status_text(page)))
    match = re.search(r"n\s*=\s*([\d,]+)\s+of", text)
    assert match, text
    return int(match.group(1).replace(",", ""))


# resolves after the browser has painted two more frames: what the page holds now is on the screen
JS_PAINTED = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"

# true once no view is computing or preparing (the jobs line and the "preparing" line are gone or hidden):
# nothing more arrives from the server for the page's current state
JS_SETTLED = f"""() => !({_ALL_MODELS}).some((m) => typeof m.text === 'string' && m.visible !== false
    && (m.text.includes('computing: ') || m.text.includes('preparing:')))"""


def wait_painted(page):
    page.evaluate(JS_PAINTED)


def wait_settled(page):
    page.wait_for_function(JS_SETTLED, timeout=UPDATE_TIMEOUT)


def shot(page, artifacts_dir, name):
    wait_painted(page)
    page.screenshot(path=str(artifacts_dir / f"{name}.png"))


# -- tests ---------------------------------------------------------------------------------------------


def test_loads_without_console_errors_and_screenshot(served_app, chromium_browser, artifacts_dir):
    """The page loads without console errors and draws its views; it loads no MathJax (no text of the
    page needs it, so the browser does not load and parse 1.8 MB before it draws); the bins slider
    changes the number of bars.  (One page for the three: each page is a session the server builds.)"""
    context, page = open_app(chromium_browser, served_app)
    try:
        wait_settled(page)
        shot(page, artifacts_dir, "dashboard")  # 1280×800: checked by eye for layout/overlap
        assert not page.errors, page.errors
        counts = bar_counts(page)
        assert 15 in counts["hist"], counts
        assert "REJECT" in tcal_text(page) or "not rejected" in tcal_text(page)
        # no MathJax: the page requested BokehJS and no MathJax script, and drew its views without it
        assert any("bokeh.min.js" in url for url in page.scripts), f"no BokehJS requested: {page.scripts}"
        mathjax = [url for url in page.scripts if "mathjax" in url.lower()]
        assert not mathjax, f"MathJax loaded: {mathjax}"
        # the bins slider changes the number of bars
        n_bars_before = max(counts["bars"])
        set_widget(page, "bins (m)", 40)
        wait_hist(page, 40)
        after = bar_counts(page)
        assert 40 in after["hist"] and 15 not in after["hist"], f"bins 40: histograms {after}"
        assert max(after["bars"]) > n_bars_before, f"bins 40: no more bars than before ({counts}, {after})"
        shot(page, artifacts_dir, "bins_40")
        assert not page.errors, page.errors
    finally:
        context.close()


# every animation frame from the page's first script on: the visible texts of the first Bokeh document
# drawn (before any patch from the server), and whether a "preparing" line was ever visible
JS_WATCH_FIRST_DOCUMENT = """
window.__firstTexts = null;
(function tick() {
    const docs = window.Bokeh ? Bokeh.documents : [];
    if (window.__firstTexts === null && docs.length > 0 && docs[0].all_models.size > 0) {
        window.__firstTexts = [];
        for (const d of docs) for (const m of d.all_models)
            if (typeof m.text === 'string' && m.visible !== false) window.__firstTexts.push(m.text);
    }
    requestAnimationFrame(tick);
})();
"""


def test_first_document_says_preparing_until_the_views_arrive(served_app, chromium_browser, artifacts_dir):
    """The first document the browser draws already holds the "preparing" line (never a blank page while
    the server loads its kernels and computes); the line is gone once the four views are drawn."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.add_init_script(JS_WATCH_FIRST_DOCUMENT)
    try:
        page.goto(served_app, timeout=LOAD_TIMEOUT)
        page.wait_for_function("() => window.__firstTexts !== null", timeout=LOAD_TIMEOUT)
        first = page.evaluate("() => window.__firstTexts")
        assert any("preparing:" in text for text in first), first
        page.wait_for_function(f"() => ({JS_BAR_COUNTS})().hist.length > 0", timeout=LOAD_TIMEOUT)
        wait_tcal(page)
        wait_text(page, "% interval")
        wait_text(page, "implied dCE")
        page.wait_for_function(
            f"() => !({_ALL_MODELS}).some(m => typeof m.text === 'string' && m.text.includes('preparing:')"
            " && m.visible !== false)",
            timeout=UPDATE_TIMEOUT,
        )
        assert page.locator("#calviz-preparing").count() == 1  # (sent before the session was built)
        assert not page.locator("#calviz-preparing").is_visible()
        shot(page, artifacts_dir, "first_views")
    finally:
        context.close()


def test_page_html_says_preparing_before_bokehjs_has_drawn(served_app, chromium_browser, artifacts_dir):
    """Before BokehJS has run (here: never — its script is blocked), the page's own HTML and CSS already
    show the "preparing" line where the status card will be drawn: on a first run the browser spends about
    a second loading BokehJS and Panel, and the page must not be blank meanwhile."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.route("**/static/js/bokeh.min.js*", lambda route: route.abort())
    try:
        page.goto(served_app, timeout=LOAD_TIMEOUT, wait_until="domcontentloaded")
        shown = page.evaluate(
            "() => { const d = document.querySelector('#main > .card-margin:first-child [data-root-id]');"
            " return d && d.matches(':empty') ? getComputedStyle(d, '::before').content : null; }"
        )
        assert shown is not None and "preparing:" in shown, shown
        box = page.evaluate(
            "() => document.querySelector('#main > .card-margin:first-child [data-root-id]')"
            ".parentElement.getBoundingClientRect().height"
        )
        assert box > 10  # the text takes room on the page: it is drawn, not only styled
        shot(page, artifacts_dir, "preparing_html")
    finally:
        context.close()


@pytest.fixture
def slow_session_server():
    """``(url, release)``: a Panel server set up as ``calviz serve`` sets it up (:func:`say_preparing_first`),
    in this process, whose sessions are built only after ``release`` is set (a session built while a first
    run compiles); each session is a Fast template with one card, as the dashboard's page."""
    import threading

    import panel as pn
    from conftest import panel_server_in_thread

    from calviz.app.page import say_preparing_first

    release = threading.Event()

    def new_session():
        release.wait(120)
        return pn.template.FastListTemplate(title="slow", main=[pn.pane.Markdown("the session's card")])

    with panel_server_in_thread(new_session, prepare=say_preparing_first) as (url, installed):
        assert installed, "the page handler of the Panel server was not found"
        try:
            yield url, release
        finally:
            release.set()


def test_first_bytes_say_preparing_before_the_session_is_built(slow_session_server):
    """``calviz serve`` answers a page request at once with a "preparing" line, while the session is
    still being built; the session's page follows in the same response."""
    import http.client
    from urllib.parse import urlsplit

    url, release = slow_session_server
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    try:
        connection.request("GET", "/")
        response = connection.getresponse()
        assert response.status == 200 and response.getheader("Content-Type").startswith("text/html")
        first = response.read1(65536).decode()
        assert not release.is_set()  # (the session is not built yet)
        assert first.startswith("<!DOCTYPE html>") and "preparing:" in first and "Bokeh" not in first
        release.set()
        page = first + response.read().decode()
    finally:
        connection.close()
    # (then the session's whole page: its document, and the scripts that draw it)
    assert page.count("<!DOCTYPE html>") == 2 and "docs_json" in page and "bokeh.min.js" in page


def test_preparing_line_shows_at_once_and_goes_when_the_page_draws(slow_session_server, chromium_browser,
                                                                    artifacts_dir):
    """In Chromium: the "preparing" line is drawn while the session is built, and hidden once the page's
    status card is there (the session's own page then draws normally, in standards mode)."""
    url, release = slow_session_server
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(url, timeout=LOAD_TIMEOUT, wait_until="commit")
        line = page.locator("#calviz-preparing")
        line.wait_for(state="visible", timeout=LOAD_TIMEOUT)
        assert "preparing:" in line.inner_text() and line.bounding_box()["height"] > 10
        assert not release.is_set()
        shot(page, artifacts_dir, "preparing_first_bytes")
        release.set()
        page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=LOAD_TIMEOUT)
        page.get_by_text("the session's card").wait_for(timeout=LOAD_TIMEOUT)
        assert not line.is_visible()
        assert page.evaluate("() => document.compatMode") == "CSS1Compat"
        assert page.title() == "slow"
    finally:
        context.close()


def _flip_case():
    """An embedded dataset whose analytic T-Cal p-value lies well inside the α slider's range, and a pair
    of levels around it: rejected at the larger α, not rejected at the smaller one."""
    from calviz.analysis import AnalysisOptions, compute_tcal
    from calviz.datasets import list_datasets, load_dataset

    preferred = ["digits-rf-isotonic", "breast-cancer-rf-platt", "scenario-beta_calibrated"]
    names = preferred + [d.name for d in list_datasets() if d.name not in preferred]
    for name in names:
        data = load_dataset(name)
        p = float(compute_tcal(data, AnalysisOptions(), resampling="analytic").pvalue)
        if 0.006 < p < 0.2:
            return name, data.n, round(min(2 * p, 0.45), 3), round(p / 2, 3)
    pytest.fail("no embedded dataset has an analytic T-Cal p-value in (0.006, 0.2)")


def test_alpha_flips_tcal_decision(served_app, chromium_browser, artifacts_dir):
    """Changing α across the p-value flips the decision (e.g. digits-rf-isotonic, p ≈ 0.04)."""
    name, n, alpha_reject, alpha_keep = _flip_case()
    context, page = open_app(chromium_browser, served_app)
    try:
        set_widget(page, "dataset", name)
        page.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('of {n:,}') !== null", timeout=UPDATE_TIMEOUT)
        set_widget(page, "level α", alpha_reject)
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('REJECT calibration at α = {alpha_reject:g};') !== null",
            timeout=UPDATE_TIMEOUT,
        )
        shot(page, artifacts_dir, "alpha_reject")
        set_widget(page, "level α", alpha_keep)
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('calibration not rejected at α = {alpha_keep:g};') !== null",
            timeout=UPDATE_TIMEOUT,
        )
        shot(page, artifacts_dir, "alpha_not_rejected")
        assert not page.errors, page.errors
    finally:
        context.close()


def _upload(page, name, content: bytes, mime="text/csv"):
    page.locator("input[type=file]").set_input_files(
        files=[{"name": name, "mimeType": mime, "buffer": content}]
    )


def _csv(n, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < p**1.6).astype(int)  # miscalibrated: P(y=1 | p) = p^1.6
    rows = ["y_true,y_prob"] + [f"{a},{b:.6f}" for a, b in zip(y, p, strict=True)]
    return ("\n".join(rows) + "\n").encode()


def test_upload_valid_csv_updates_n_and_views(served_app, chromium_browser, artifacts_dir):
    context, page = open_app(chromium_browser, served_app)
    try:
        n_before = status_n(page)
        # the distance bounds arrive from the background worker
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('implied dCE') !== null", timeout=UPDATE_TIMEOUT
        )
        dist_before = page.evaluate(JS_TEXT_CONTAINING, "implied dCE")
        interval_before = page.evaluate(JS_TEXT_CONTAINING, "interval for the ℓ2-ECE")
        _upload(page, "mine.csv", _csv(3_000))
        page.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('of 3,000') !== null", timeout=UPDATE_TIMEOUT)
        assert status_n(page) == 3_000 != n_before
        assert "binary" in status_text(page)
        # the server sends each view's and each widget's change as its own patch, so what the status line
        # already shows may still be on its way for the others: wait for each one (a loaded CI machine
        # delivered the dataset selector's new value after the status line)
        wait_widget(page, "dataset", "uploaded: mine.csv")
        # every view now shows the uploaded data
        wait_hist(page, 15)
        wait_text(page, "n = 3,000")  # reliability diagram title
        wait_tcal(page)
        wait_text_changed(page, "implied dCE", dist_before)
        wait_text_changed(page, "interval for the ℓ2-ECE", interval_before)
        counts = bar_counts(page)
        assert max(counts["bars"]) <= 15
        shot(page, artifacts_dir, "upload_valid")
        assert not page.errors, page.errors
    finally:
        context.close()


def test_upload_malformed_shows_error_and_app_keeps_working(served_app, chromium_browser, artifacts_dir):
    context, page = open_app(chromium_browser, served_app)
    try:
        n_before = status_n(page)
        _upload(page, "broken.csv", b"y_true,y_prob\n1,0.3\n0,banana\n1,1.7\n")
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('Input refused') !== null", timeout=UPDATE_TIMEOUT
        )
        alert = page.evaluate(JS_TEXT_CONTAINING, "Input refused")
        assert "broken.csv" in alert
        assert status_n(page) == n_before  # the previous dataset stays loaded
        shot(page, artifacts_dir, "upload_malformed")
        set_widget(page, "bins (m)", 25)  # and the app still answers the next widget change
        wait_hist(page, 25)
        assert status_n(page) == n_before
        # ... and the alert, about the refused file, goes with that change
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('Input refused') === null", timeout=UPDATE_TIMEOUT
        )
    finally:
        context.close()


def test_two_sessions_do_not_share_state(served_app, chromium_browser, artifacts_dir):
    ctx_a, page_a = open_app(chromium_browser, served_app)
    ctx_b, page_b = open_app(chromium_browser, served_app)
    try:
        set_widget(page_a, "bins (m)", 33)
        wait_hist(page_a, 33)
        set_widget(page_b, "level α", 0.2)
        page_b.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('α = 0.2') !== null", timeout=UPDATE_TIMEOUT)
        wait_settled(page_b)  # (everything B's change brings has arrived)
        assert 33 not in bar_counts(page_b)["hist"] and 15 in bar_counts(page_b)["hist"]
        assert page_b.evaluate(JS_WIDGET_VALUE, "bins (m)") == 15
        assert abs(page_a.evaluate(JS_WIDGET_VALUE, "level α") - 0.05) < 1e-12
        assert "α = 0.2" not in tcal_text(page_a)
        shot(page_a, artifacts_dir, "session_a")
        shot(page_b, artifacts_dir, "session_b")
    finally:
        ctx_a.close()
        ctx_b.close()


# -- vector targets: one curve per rank (top-k), one panel per class (full) ----------------------------

# models the page currently draws: the models of the live views under Bokeh.index's roots (a document's
# all_models may still list figures a pane has just replaced)
_LIVE_VIEWS = (
    "(() => { const out = [], seen = new Set();"
    " const walk = (v) => { if (!v || seen.has(v)) return; seen.add(v); out.push(v);"
    " if (typeof v.children === 'function') for (const c of v.children()) walk(c); };"
    " for (const r of Object.values(Bokeh.index)) walk(r); return out; })()"
)
_LIVE_MODELS = f"({_LIVE_VIEWS}).map((v) => v.model)"

# distinct legend labels of the reliability diagram's rank curves ("rank 1 (top-1)", "rank 2", …) and the
# number of glyph renderers behind them (LegendItem.label is a value spec {value: …} or a plain string)
JS_RANK_LEGEND = f"""() => {{
    const labels = new Set();
    let renderers = 0;
    for (const legend of {_LIVE_MODELS}) {{
        if (!legend.properties || !('items' in legend.properties)) continue;
        for (const item of legend.items) {{
            const spec = item.label;
            const text = spec !== null && typeof spec === 'object' ? spec.value : spec;
            if (typeof text === 'string' && text.startsWith('rank ')) {{
                labels.add(text);
                renderers += item.renderers.length;
            }}
        }}
    }}
    return {{labels: [...labels].sort(), renderers}};
}}"""

# titles of the per-class reliability panels drawn now ("class 3 · 73 …")
JS_CLASS_PANELS = f"""() => {{
    const classes = new Set();
    for (const m of {_LIVE_MODELS})
        if (typeof m.text === 'string' && /^class \\d+ · /.test(m.text)) classes.add(m.text.split(' · ')[0]);
    return [...classes].sort();
}}"""


# scroll the template's main area (the page itself does not scroll); returns the new scrollTop
JS_SCROLL_MAIN = """(dy) => {
    const main = document.querySelector('#main') || document.querySelector('.main');
    if (!main) return -1;
    main.scrollTop += dy;
    return main.scrollTop;
}"""


def test_topk_and_full_reliability_views(served_app, chromium_browser, artifacts_dir):
    """digits-gnb (K = 10): target topk with k = 3 draws 3 rank curves; full draws 10 class panels."""
    context, page = open_app(chromium_browser, served_app)
    try:
        set_widget(page, "dataset", "digits-gnb")
        page.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('of 719') !== null", timeout=UPDATE_TIMEOUT)
        set_widget(page, "calibration target", "topk")
        set_widget(page, "k (top-1-to-k)", 3)
        page.wait_for_function(
            f"() => ({JS_RANK_LEGEND})().labels.length === 3 && ({JS_TEXT_CONTAINING})('top-3 ·') !== null",
            timeout=UPDATE_TIMEOUT,
        )
        legend = page.evaluate(JS_RANK_LEGEND)
        assert legend["labels"] == ["rank 1 (top-1)", "rank 2", "rank 3"], legend
        assert legend["renderers"] >= 3, legend
        wait_text(page, "one curve per rank r = 1..3")
        note = page.evaluate(JS_TEXT_CONTAINING, "one curve per rank r = 1..3")
        assert note is not None and "omitted" in note  # smooth curve / witness: scalar targets only
        assert page.evaluate(JS_TEXT_CONTAINING, "top-1 reduction.)") is None  # the old fallback note
        assert page.evaluate(JS_CLASS_PANELS) == []
        shot(page, artifacts_dir, "reliability_topk3")
        set_widget(page, "calibration target", "full")
        page.wait_for_function(f"() => ({JS_CLASS_PANELS})().length === 10", timeout=UPDATE_TIMEOUT)
        assert page.evaluate(JS_CLASS_PANELS) == sorted(f"class {c}" for c in range(10))
        assert page.evaluate(JS_RANK_LEGEND)["labels"] == []
        wait_text(page, "one panel per class")
        wait_settled(page)
        shot(page, artifacts_dir, "reliability_full")
        # the per-class grid is taller than the default card: the rest of the page scrolls below it
        assert page.evaluate(JS_SCROLL_MAIN, 450) > 0
        shot(page, artifacts_dir, "reliability_full_scrolled")
        assert not page.errors, page.errors
    finally:
        context.close()


def test_rapid_target_switches_keep_the_page_consistent(served_app, chromium_browser):
    """The target select applies a switch on the session's next tick (no Panel wait).  Switches that build
    new figures (top-k's rank curves, full's class panels) and switches to the scalar diagram, sent back to
    back and while the previous one is being drawn, leave the page without an error (a patch naming a model
    the browser does not know yet would be one) and drawing the last target asked for."""
    context, page = open_app(chromium_browser, served_app)
    try:
        set_widget(page, "dataset", "digits-gnb")
        page.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('of 719') !== null", timeout=UPDATE_TIMEOUT)
        for target in ("full", "top1", "topk", "classwise", "full", "topk", "top1"):  # back to back
            set_widget(page, "calibration target", target)
        for target, drawn in (("full", f"({JS_CLASS_PANELS})().length > 0"),  # each while the last is drawn
                              ("topk", f"({JS_RANK_LEGEND})().labels.length > 0"),
                              ("full", f"({JS_CLASS_PANELS})().length > 0"),
                              ("classwise", f"({JS_TEXT_CONTAINING})('classwise · ') !== null")):
            set_widget(page, "calibration target", target)
            page.wait_for_function(f"() => {drawn}", timeout=UPDATE_TIMEOUT)
        set_widget(page, "calibration target", "full")
        page.wait_for_function(f"() => ({JS_CLASS_PANELS})().length === 10", timeout=UPDATE_TIMEOUT)
        wait_settled(page)
        assert page.evaluate(JS_RANK_LEGEND)["labels"] == []
        assert not page.errors, page.errors
    finally:
        context.close()


# the status line's Div view and a counter of the layouts of its card's root (which a Div's re-render
# computes in full: every element's style and box, every figure's layout)
JS_COUNT_STATUS_LAYOUTS = f"""() => {{
    const found = ({_LIVE_VIEWS}).find(
        (v) => v.model && (v.model.css_classes || []).includes('calviz-status'));
    const root = found.root;
    const compute = root.compute_layout;
    window.__status = {{view: found, layouts: 0}};
    root.compute_layout = function () {{ window.__status.layouts += 1; return compute.call(this); }};
    return true;
}}"""
JS_SET_STATUS_TEXT = """async (text) => {
    const {view} = window.__status;
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    window.__status.layouts = 0;
    const height = view.el.getBoundingClientRect().height;
    view.model.text = text;
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    return {layouts: window.__status.layouts, shown: view.markup_el.innerHTML,
            grew: view.el.getBoundingClientRect().height - height};
}"""


def test_a_new_text_is_written_in_place_and_a_resized_one_lays_its_card_out(served_app, chromium_browser):
    """A Div whose text alone changes is written in place: BokehJS would re-render it and lay out its whole
    card (every element's style and box, every figure), per text.  A new text of the same size lays out
    nothing; a taller one lays the card out (Bokeh's size observer) and the card grows."""
    context, page = open_app(chromium_browser, served_app)
    try:
        wait_settled(page)
        assert page.evaluate(JS_COUNT_STATUS_LAYOUTS)
        page.evaluate(JS_SET_STATUS_TEXT, "one line of text, A")
        same_size = page.evaluate(JS_SET_STATUS_TEXT, "one line of text, B")
        assert same_size["shown"] == "one line of text, B"
        assert same_size["layouts"] == 0 and same_size["grew"] == 0, same_size
        taller = page.evaluate(JS_SET_STATUS_TEXT, "<br>".join(f"line {i}" for i in range(12)))
        assert taller["shown"].count("line ") == 12
        assert taller["layouts"] >= 1 and taller["grew"] > 100, taller
        assert not page.errors, page.errors
    finally:
        context.close()


# the confidence histogram's PlotView: the figure whose y-axis is "count"
_HISTOGRAM_VIEW = (
    f"({_LIVE_VIEWS}).find((v) => v.model && Array.isArray(v.model.left)"
    " && v.model.left.some((a) => a.axis_label === 'count'))"
)
# a counter of the histogram's layouts
JS_COUNT_HISTOGRAM_LAYOUTS = f"""() => {{
    const view = {_HISTOGRAM_VIEW};
    if (view === undefined) return false;
    const compute = view.compute_layout;
    window.__histogram = {{layouts: 0}};
    view.compute_layout = function () {{ window.__histogram.layouts += 1; return compute.call(this); }};
    return true;
}}"""
# the largest count of the histogram's bins
JS_HISTOGRAM_PEAK = f"""() => {{
    const data = {_HISTOGRAM_VIEW}.model.renderers[0].data_source.data;
    return Math.max(...(data instanceof Map ? data.get('count') : data.count));
}}"""


def test_new_counts_do_not_lay_the_histogram_out_again(served_app, chromium_browser):
    """The histogram's count labels are written along its y-axis: counts with another number of digits (a
    smaller subsample, another target) do not resize the axis.  Written across it, a wider or narrower
    label resized the axis, and BokehJS laid the whole figure out again before it painted the change
    (40-60 ms of a change of target at 10⁷ rows)."""
    context, page = open_app(chromium_browser, served_app)
    try:
        wait_settled(page)
        assert page.evaluate(JS_COUNT_HISTOGRAM_LAYOUTS)
        full = page.evaluate(JS_WIDGET_VALUE, "sample size n (subsample)")
        peaks = [page.evaluate(JS_HISTOGRAM_PEAK)]
        for title, value in (("sample size n (subsample)", 40), ("calibration target", "classwise"),
                             ("sample size n (subsample)", full), ("calibration target", "top1")):
            set_widget(page, title, value)
            page.wait_for_function("(before) => (" + JS_HISTOGRAM_PEAK + ")() !== before", arg=peaks[-1],
                                   timeout=UPDATE_TIMEOUT)
            wait_settled(page)
            peaks.append(page.evaluate(JS_HISTOGRAM_PEAK))
        assert len({len(str(int(peak))) for peak in peaks}) > 1, peaks  # (labels of other widths were drawn)
        assert page.evaluate("() => window.__histogram.layouts") == 0
        assert not page.errors, page.errors
    finally:
        context.close()


def _children(pid: int) -> set[int]:
    import subprocess

    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


def _alive(pids) -> set[int]:
    import os

    alive = set()
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for its reaper is gone for our purpose
            if f.read().split(") ")[-1].startswith("Z"):
                continue
        alive.add(pid)
    return alive


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().split(") ")[-1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _busy_workers(server: int, attempts: int = 600) -> set[int]:
    """The server's child processes once one of them uses CPU (the long job is running in it, not merely
    queued; a superseded job's worker is replaced, so the children are listed again each time)."""
    import time

    for _ in range(attempts):  # a hang guard, not a speed requirement
        before = {pid: _cpu_ticks(pid) for pid in _alive(_children(server))}
        time.sleep(0.5)
        alive = _alive(before)
        if any(_cpu_ticks(pid) - before[pid] >= 5 for pid in alive):
            return set(before)
    raise AssertionError("no worker process started the long job")


STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGKILL"]


@pytest.fixture(scope="module")
def servers_to_stop(request, tmp_path_factory):
    """``{signal name: (process, url)}``: a server of its own for each signal that
    :func:`test_stopped_server_leaves_no_worker_processes` sends in this run, all launched at once (the
    later ones start while the first test runs: a server's start was most of each test's 20 s)."""
    from conftest import launch_server, stop_server

    wanted = [name for name in STOP_SIGNALS
              if any(getattr(item, "callspec", None) is not None
                     and item.originalname == "test_stopped_server_leaves_no_worker_processes"
                     and item.callspec.params.get("signal_name") == name for item in request.session.items)]
    servers = {}
    try:
        for name in wanted:
            servers[name] = launch_server(tmp_path_factory.mktemp(f"calviz-serve-{name}"))
        yield servers
    finally:
        for proc, _ in servers.values():
            stop_server(proc)  # (also closes the server log)


@pytest.mark.parametrize("signal_name", STOP_SIGNALS)
def test_stopped_server_leaves_no_worker_processes(servers_to_stop, chromium_browser, signal_name):
    """`calviz serve` runs resampling and distance jobs in worker processes: SIGTERM and Ctrl+C (SIGINT)
    stop the server with exit status 0 even with a long job running, and shut the workers down with it;
    after SIGKILL (no chance to clean up) the worker dies with the server, also in the middle of a job."""
    import signal
    import time

    from conftest import stop_server, wait_for_server

    proc, url = servers_to_stop[signal_name]
    wait_for_server(proc, url)
    try:
        context, page = open_app(chromium_browser, url)
        page.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('implied dCE') !== null",
                               timeout=UPDATE_TIMEOUT)
        set_widget(page, "bootstrap resamples", 5000)  # a long job, running when the signal arrives
        set_widget(page, "T-Cal critical values", "consistency")
        wait_text(page, "resampling running", polling="raf")
        workers = _busy_workers(proc.pid)
        proc.send_signal(getattr(signal, signal_name))
        code = proc.wait(timeout=120)  # a hang guard, not a speed requirement
        if signal_name != "SIGKILL":
            assert code == 0, f"exit status {code} after {signal_name}"
        context.close()
        deadline = time.monotonic() + 120  # a hang guard, not a speed requirement (it ends when they do)
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert not _alive(workers), f"worker processes {sorted(_alive(workers))} outlived the server"
    finally:
        stop_server(proc)  # (also closes the server log)


# -- live updates: a slider drag, a stale job ----------------------------------------------------------

# every animation frame: the texts of the T-Cal caption seen in the page (to prove a stale one never was)
JS_RECORD_TCAL = f"""() => {{
    window.__tcal = new Set();
    const tick = () => {{
        const t = ({JS_VIEW_TEXT_CONTAINING})('T-Cal (');
        if (t !== null) window.__tcal.add(t);
        if (window.__recording) requestAnimationFrame(tick);
    }};
    window.__recording = true; requestAnimationFrame(tick);
}}"""


def test_slider_drag_ends_on_the_released_value(served_app, chromium_browser, artifacts_dir):
    """A drag sends a value per frame; the page keeps answering and ends showing the released value."""
    context, page = open_app(chromium_browser, served_app)
    try:
        for value in [10 + (k % 30) for k in range(60)]:  # 3 s of dragging, a value every 50 ms
            set_widget(page, "bins (m)", value)
            page.wait_for_timeout(50)
        set_widget(page, "bins (m)", 44)
        wait_hist(page, 44)
        wait_text(page, "· 44 bins")  # the interval view too
        wait_settled(page)  # every job of the drag has ended or was dropped: nothing of it arrives afterwards
        assert 44 in bar_counts(page)["hist"] and page.evaluate(JS_WIDGET_VALUE, "bins (m)") == 44
        set_widget(page, "level α", 0.1)  # and the next change is answered
        wait_text(page, "α = 0.1;")
        assert not page.errors, page.errors
    finally:
        context.close()


# counts the views the page's accessible-names walk visits (calviz.app.page: one query of each view's shadow
# root for file choosers), from now on, in ``window.__walked``
JS_COUNT_WALKS = """() => {
    window.__walked = 0;
    const query = DocumentFragment.prototype.querySelectorAll;
    DocumentFragment.prototype.querySelectorAll = function (selector) {
        if (selector === 'input[type=file]') window.__walked += 1;
        return query.call(this, selector);
    };
}"""


# whether a slider handle of the page (in any view's shadow root) has this accessible name
JS_NAMED = """(name) => {
    const find = (root) => {
        for (const el of root.querySelectorAll('*')) {
            if (el.getAttribute('role') === 'slider' && el.getAttribute('aria-label') === name) return true;
            if (el.shadowRoot && find(el.shadowRoot)) return true;
        }
        return false;
    };
    return find(document);
}"""


def test_a_control_value_starts_no_accessible_names_walk(served_app, chromium_browser, artifacts_dir):
    """The page names its unnamed controls again after a change that may draw one (a widget shown, new
    children), not after a control's new value and the change it answers: while a slider is dragged, a walk
    of every view per frame would compete with drawing each step.  A control a change shows has its name."""
    context, page = open_app(chromium_browser, served_app)
    try:
        wait_settled(page)
        # the cards drawn after the first paint: their tables' columns are new models (and a walk)
        page.wait_for_function(f"() => ({_ALL_MODELS}).filter((m) => m.type === 'DataTable')"
                               ".every((m) => m.columns.length > 0)", timeout=UPDATE_TIMEOUT)
        wait_painted(page)
        page.evaluate(JS_COUNT_WALKS)
        for value in (23, 24):  # (the second: its drawing follows the first one's other cards)
            set_widget(page, "bins (m)", value)
            wait_hist(page, value)
            wait_text(page, f"· {value} bins")
            wait_settled(page)
            wait_painted(page)
        assert page.evaluate("() => window.__walked") == 0
        set_widget(page, "calibration target", "classwise")  # (shows the class slider)
        wait_text(page, "target <strong>classwise</strong>")
        wait_painted(page)
        assert page.evaluate("() => window.__walked") > 0
        assert page.evaluate(JS_NAMED, "class (classwise)")
        assert not page.errors, page.errors
    finally:
        context.close()


def test_stale_resampling_job_is_never_painted(served_app, chromium_browser, artifacts_dir):
    """A resampling job for α = 0.02 is superseded by one for α = 0.03 before it is done: the page ends
    on the α = 0.03 result and never paints a resampled result for α = 0.02 (the analytic preview of
    each value is shown at once by design)."""
    context, page = open_app(chromium_browser, served_app)
    try:
        set_widget(page, "T-Cal critical values", "y_only")
        wait_text(page, "T-Cal (Y-only resampling)")
        page.evaluate(JS_RECORD_TCAL)
        set_widget(page, "level α", 0.02)
        set_widget(page, "level α", 0.03)
        latest = (f"() => {{ const t = ({JS_TEXT_CONTAINING})('T-Cal (Y-only resampling)');"
                  " return t && t.includes('α = 0.03'); }")
        page.wait_for_function(latest, timeout=120_000)
        wait_settled(page)  # (no job is left that could still paint)
        assert "α = 0.03" in tcal_text(page)
        seen = page.evaluate("() => [...window.__tcal]")
        assert not [t for t in seen if "T-Cal (Y-only resampling)" in t and "α = 0.02" in t], seen
        assert not page.errors, page.errors
    finally:
        context.close()


# -- fairness between sessions, uploads near the size limit ---------------------------------------------

# B's views have settled on bins = m: the interval's title names m bins without a pending bootstrap, the
# smooth curve has its band, and the progress line lists no running job
JS_SETTLED_ON_BINS = f"""(m) => {{
    let title = false, band = false, busy = false;
    for (const model of {_ALL_MODELS}) {{
        const t = model.text;
        if (typeof t !== 'string') continue;
        if (t.endsWith(`· ${{m}} bins`)) title = true;
        if (t.includes('with its pointwise band')) band = true;
        if (t.includes('computing: ')) busy = true;
    }}
    return title && band && !busy;
}}"""


def _change_seed_and_bins(page, n_bins: int, seed: int, *, timeout: float = UPDATE_TIMEOUT) -> None:
    """Change the seed and the bins and wait until the page shows every view for them: the seed restarts
    the smooth band's resampling, the bins the bootstrap interval (both background jobs).  The seed is
    set first, so the bins' title cannot settle before the seed's jobs were planned."""
    set_widget(page, "seed", seed)
    set_widget(page, "bins (m)", n_bins)
    page.wait_for_function(JS_SETTLED_ON_BINS, arg=n_bins, timeout=timeout)


def test_degenerate_upload_in_one_session_does_not_slow_another(served_app, chromium_browser, artifacts_dir):
    """Session A uploads 3 rows with every prediction 1.0 and every label 1 (the smooth band's bandwidth
    then falls to its floor: the worst case for its resampling) and changes the seed; session B's change
    of seed and bins meanwhile is answered in full, A keeps its own data, and A's jobs end.

    No clock here: that B's jobs never wait behind A's queue is checked on the worker pool's own order of
    hand-outs (tests/test_workers.py::test_a_session_never_waits_behind_another_sessions_queue); this
    test checks the served app end to end."""
    ctx_a, page_a = open_app(chromium_browser, served_app)
    ctx_b, page_b = open_app(chromium_browser, served_app)
    try:
        for page in (page_a, page_b):  # (a fresh server's first jobs load or compile the kernels)
            page.wait_for_function(
                f"() => ({JS_TEXT_CONTAINING})('implied dCE') !== null", timeout=LOAD_TIMEOUT
            )
        _upload(page_a, "ones.csv", b"y_true,y_prob\n1,1.0\n1,1.0\n1,1.0\n")
        wait_widget(page_a, "dataset", "uploaded: ones.csv")
        set_widget(page_a, "seed", 11)
        # A's resampling jobs on the degenerate data are in flight
        wait_text(page_a, "computing: ", polling="raf")
        _change_seed_and_bins(page_b, 19, 4, timeout=LOAD_TIMEOUT)
        shot(page_b, artifacts_dir, "session_b_beside_degenerate_upload")
        assert status_n(page_a) == 3  # A's session kept its own data
        page_a.wait_for_function(  # and A's own jobs end (within the job time limit at worst)
            f"() => ({JS_TEXT_CONTAINING})('computing: ') === null", timeout=LOAD_TIMEOUT
        )
        assert not page_a.errors and not page_b.errors, (page_a.errors, page_b.errors)
    finally:
        ctx_a.close()
        ctx_b.close()


def _binary_csv_of_size(path, n_bytes: int, seed: int) -> int:
    """Write a binary y_true,y_prob CSV of at least ``n_bytes`` bytes (full-precision probabilities keep
    the row count, and so the reading time, down); return its number of rows."""
    rng = np.random.default_rng(seed)
    row_bytes = len("1,0.12345678901234567\n")
    n = n_bytes // row_bytes + 1
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < p).astype(int)
    body = "\n".join(f"{a},{b:.17f}" for a, b in zip(y, p, strict=True))
    path.write_text(f"y_true,y_prob\n{body}\n")
    assert path.stat().st_size >= n_bytes
    return n


def _files_near_and_above_the_limit(tmp_path):
    """A CSV between 15 MB and the upload limit (its row count) and one above the limit."""
    from calviz.app.sources import UPLOAD_LIMIT_BYTES

    near = tmp_path / "near_limit.csv"
    n_near = _binary_csv_of_size(near, UPLOAD_LIMIT_BYTES - 3 * 1024 * 1024, seed=1)
    assert 15 * 1024 * 1024 < near.stat().st_size < UPLOAD_LIMIT_BYTES
    above = tmp_path / "above_limit.csv"
    _binary_csv_of_size(above, UPLOAD_LIMIT_BYTES + 512 * 1024, seed=2)
    return near, n_near, above


def _upload_near_then_above_the_limit(page, tmp_path, artifacts_dir, name: str) -> None:
    """The file near the limit loads; the one above it gets the app's message, the data stays and the
    session keeps answering."""
    near, n_near, above = _files_near_and_above_the_limit(tmp_path)
    page.locator("input[type=file]").set_input_files(str(near))
    page.wait_for_function(
        f"() => ({JS_TEXT_CONTAINING})('of {n_near:,}') !== null", timeout=2 * UPDATE_TIMEOUT
    )
    wait_widget(page, "dataset", "uploaded: near_limit.csv")
    n_shown = status_n(page)
    status = status_text(page)
    shot(page, artifacts_dir, f"{name}_near_limit")

    page.locator("input[type=file]").set_input_files(str(above))
    wait_text(page, "above the upload limit")
    alert = page.evaluate(JS_TEXT_CONTAINING, "above the upload limit")
    assert "above_limit.csv" in alert
    shot(page, artifacts_dir, f"{name}_above_limit")
    assert status_n(page) == n_shown, (status, status_text(page))
    assert f"of {n_near:,}" in status_text(page), (status, status_text(page))
    assert page.evaluate(JS_WIDGET_VALUE, "dataset") == "uploaded: near_limit.csv"
    set_widget(page, "bins (m)", 21)  # and the session still answers
    wait_hist(page, 21)
    assert not page.errors, page.errors


def test_upload_near_the_limit_loads_and_above_it_is_refused(
    served_app, chromium_browser, artifacts_dir, tmp_path
):
    """A file between 15 MB and the upload limit reaches the server and loads (the session survives the
    large upload); one above the limit gets the app's own message and the data stays."""
    context, page = open_app(chromium_browser, served_app)
    try:
        _upload_near_then_above_the_limit(page, tmp_path, artifacts_dir, "upload")
    finally:
        context.close()


def test_panel_serve_checks_the_upload_size_in_the_browser(tmp_path, chromium_browser, artifacts_dir):
    """Under `panel serve apps/calviz_app.py` with Bokeh's default websocket message limit (20 MB), a file
    between 15 MB and the upload limit still loads (it is sent in pieces: one message would exceed the
    limit and close the session), and a larger one is refused in the browser with the app's message,
    before it is sent; the session keeps working."""
    import subprocess
    import sys

    from conftest import REPO, _serve_env, free_port, stop_server, wait_for_http

    port = free_port()
    cmd = [sys.executable, "-m", "panel", "serve", str(REPO / "apps" / "calviz_app.py"), "--port", str(port),
           "--address", "127.0.0.1", "--allow-websocket-origin", f"127.0.0.1:{port}"]
    log = open(tmp_path / "server.log", "wb")  # noqa: SIM115 - closed by stop_server
    proc = subprocess.Popen(cmd, cwd=REPO, env=_serve_env(tmp_path), stdout=log, stderr=subprocess.STDOUT)
    proc._calviz_log = log
    try:
        url = f"http://127.0.0.1:{port}/calviz_app"
        wait_for_http(proc, url, tmp_path / "server.log", timeout=300, name="panel serve")
        context, page = open_app(chromium_browser, url)
        try:
            _upload_near_then_above_the_limit(page, tmp_path, artifacts_dir, "panel_serve_upload")
        finally:
            context.close()
    finally:
        stop_server(proc)


# -- the CORP mode and the score decomposition card --------------------------------------------------------

JS_SET_RADIO = f"""(label) => {{
    for (const m of {_ALL_MODELS})
        if (Array.isArray(m.labels) && m.labels.includes(label) && m.properties
                && 'active' in m.properties) {{
            m.active = m.labels.indexOf(label); return true;
        }}
    return false;
}}"""

# the CORP band's source (columns x, low, high and no 'y'): its 'low' column, or null before it is drawn
JS_CORP_BAND = f"""() => {{
    for (const m of {_ALL_MODELS}) {{
        const data = m.data;
        if (!data || m.selected === undefined) continue;
        const get = (k) => data instanceof Map ? data.get(k) : data[k];
        if (get('low') !== undefined && get('high') !== undefined && get('y') === undefined
                && get('x') !== undefined && get('x').length > 0) return Array.from(get('low'));
    }}
    return null;
}}"""

# page boxes [left, top, right, bottom, what] of every visible Bokeh Div with text and every figure
JS_TEXT_BOXES = """() => {
    const out = [], seen = new Set();
    const roots = Bokeh.index instanceof Map ? [...Bokeh.index.values()] : Object.values(Bokeh.index);
    function walk(view) {
        if (!view || seen.has(view)) return;
        seen.add(view);
        const m = view.model, type = m ? m.type : '';
        if (view.el && (type === 'Div' || type === 'Figure') && m.visible !== false) {
            const r = view.el.getBoundingClientRect();
            const text = type === 'Div' ? view.el.innerText || '' : '';
            if (r.width > 0 && r.height > 0 && (type === 'Figure' || text.trim()))
                out.push([r.left, r.top, r.right, r.bottom, type + ': ' + text.slice(0, 40)]);
        }
        let children = [];
        try { children = [...view.children()]; } catch (e) { children = view.child_views || []; }
        for (const child of children) walk(child);
    }
    for (const root of roots) walk(root);
    return out;
}"""


def _overlapping_texts(boxes) -> list:
    """Pairs of boxes that overlap by more than a pixel, at least one of them a text (figures may share an
    edge with their neighbours)."""
    pairs = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if not (a[4].startswith("Div") or b[4].startswith("Div")):
                continue
            if a[0] < b[2] - 1 and a[2] > b[0] + 1 and a[1] < b[3] - 1 and a[3] > b[1] + 1:
                pairs.append((a[4], b[4]))
    return pairs


def test_corp_mode_and_decomposition_card_follow_alpha_bins_and_target(served_app, chromium_browser,
                                                                       artifacts_dir):
    """The CORP (isotonic) mode draws its curve and consistency band; an α change redraws the band, a bins
    change keeps it; the decomposition card shows its caption and follows a target switch; no text
    overlaps another or a figure at 1280×800."""
    context, page = open_app(chromium_browser, served_app)
    try:
        wait_text(page, "= miscalibration ")  # the decomposition card's caption
        decomposition = page.evaluate(JS_VIEW_TEXT_CONTAINING, "= miscalibration ")
        assert page.evaluate(JS_SET_RADIO, "CORP (isotonic)")
        page.wait_for_function(f"() => ({JS_CORP_BAND})() !== null", timeout=UPDATE_TIMEOUT)
        wait_text(page, "consistency band at ")  # the caption, once the band has been resampled
        band = page.evaluate(JS_CORP_BAND)
        shot(page, artifacts_dir, "corp_mode")
        assert _overlapping_texts(page.evaluate(JS_TEXT_BOXES)) == []
        set_widget(page, "level α", 0.3)
        page.wait_for_function(f"(before) => {{ const b = ({JS_CORP_BAND})(); return b !== null && "
                               "JSON.stringify(b) !== JSON.stringify(before); }", arg=band,
                               timeout=UPDATE_TIMEOUT)
        wait_text(page, "70% consistency band")
        band = page.evaluate(JS_CORP_BAND)
        set_widget(page, "bins (m)", 25)
        wait_widget(page, "bins (m)", 25)
        assert page.evaluate(JS_CORP_BAND) == band  # no bins in the CORP diagram
        set_widget(page, "calibration target", "classwise")
        wait_text_changed(page, "= miscalibration ", decomposition)
        wait_text(page, "classwise · CORP (isotonic)")
        page.wait_for_function(f"() => ({JS_CORP_BAND})() !== null", timeout=UPDATE_TIMEOUT)
        shot(page, artifacts_dir, "corp_mode_classwise")
        assert _overlapping_texts(page.evaluate(JS_TEXT_BOXES)) == []
        assert not page.errors, page.errors
    finally:
        context.close()
