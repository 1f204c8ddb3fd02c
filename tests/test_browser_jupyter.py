"""The README's notebook cell in real JupyterLab, Jupyter Notebook 7 and classic notebook (nbclassic)
servers, offline, in headless Chromium (Playwright).

Each front end's server runs on loopback with a token in a temporary notebook folder; the page may reach
nothing but that server (every other request is aborted and recorded), so the dashboard must bring
BokehJS and Panel inline.  The cell is run as a user runs it (Shift+Enter); the checks read what the page
shows: the four views' titles, non-empty Bokeh canvases, and a redraw after the bins slider moves (the
slider's Bokeh model is set in the page, exactly what a drag does, and the kernel answers over the comm).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

import pytest
from conftest import REPO, free_port, stop_server, wait_for_http

pytestmark = pytest.mark.browser

README_CELL = (
    "import calviz\n"
    "from calviz.datasets import load_dataset\n"
    'data = load_dataset("digits-gnb")\n'
    "calviz.dashboard(data.labels, data.probs)"
)
# a plot function alone in a fresh kernel: HoloViews loads BokehJS for it
PLOT_CELL = (
    "import calviz\n"
    "from calviz.datasets import load_dataset\n"
    'confidence, correct = load_dataset("digits-gnb").top1()\n'
    "calviz.plots.tcal_plot(calviz.adaptive_tcal(correct, confidence))"
)
VIEW_TITLES = (
    "1 · Reliability diagram",
    "2 · Multi-scale T-Cal",
    "3 · ECE with confidence interval",
    "4 · Distance to calibration",
)
# hang guards, not speed requirements: each wait ends on its event (the README cell's whole run, kernel
# start to redraw, took 105-120 s at load 12-16 on 2 cores; a served page's update took over 60 s at load 20)
SERVER_TIMEOUT = 300.0  # s: JupyterLab's first start on a loaded machine
RUN_TIMEOUT = 300_000  # ms: kernel start, imports, the first (possibly compiling) analysis
UPDATE_TIMEOUT = 180_000

_LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}

# every Bokeh model of the documents embedded in the page
_ALL_MODELS = (
    "(() => { const out = []; if (!window.Bokeh) return out;"
    " for (const d of Bokeh.documents) for (const m of d.all_models) out.push(m); return out; })()"
)
JS_SET_WIDGET = f"""([title, value]) => {{
    for (const m of {_ALL_MODELS}) {{
        if (m.title === title && m.properties && 'value' in m.properties) {{ m.value = value; return true; }}
    }}
    return false;
}}"""
# lengths of the confidence histograms' sources (columns 'c1' and 'count'); data may be an object or a Map
JS_HIST_COUNTS = f"""() => {{
    const out = [];
    for (const m of {_ALL_MODELS}) {{
        const data = m.data;
        if (!data || m.selected === undefined) continue;
        const get = (k) => data instanceof Map ? data.get(k) : data[k];
        if (get('c1') !== undefined && get('count') !== undefined) out.push(get('count').length);
    }}
    return out;
}}"""
JS_TEXT_CONTAINING = f"""(needle) => {{
    for (const m of {_ALL_MODELS}) if (typeof m.text === 'string' && m.text.includes(needle)) return m.text;
    return null;
}}"""
# canvases inside the cells' outputs (the front end's output selector) with a drawn area and at least one
# non-transparent pixel
JS_DRAWN_CANVASES = """(outputs) => {
    const found = [];
    const visit = (root) => {
        for (const el of root.querySelectorAll('*')) {
            if (el.tagName === 'CANVAS') found.push(el);
            if (el.shadowRoot) visit(el.shadowRoot);
        }
    };
    for (const out of document.querySelectorAll(outputs)) visit(out);
    let drawn = 0;
    for (const c of found) {
        if (c.width < 50 || c.height < 50) continue;
        const ctx = c.getContext('2d');
        if (!ctx) continue;
        const px = ctx.getImageData(0, 0, c.width, c.height).data;
        for (let i = 3; i < px.length; i += 4 * 97) if (px[i] !== 0) { drawn++; break; }
    }
    return drawn;
}"""


# whether every drawn figure and table of the cells' outputs lies inside its output area (nothing cut at
# the right edge) and no output scrolls sideways
JS_OUTPUTS_CUT = """(outputs) => {
    const cut = [];
    for (const out of document.querySelectorAll(outputs)) {
        const box = out.getBoundingClientRect();
        if (box.width === 0) continue;
        if (out.scrollWidth > out.clientWidth + 1)
            cut.push(`output scrolls: ${out.scrollWidth} > ${out.clientWidth}`);
        const visit = (root) => {
            for (const el of root.querySelectorAll('*')) {
                if (el.tagName === 'CANVAS' || (el.classList && el.classList.contains('slick-viewport'))) {
                    const r = el.getBoundingClientRect();
                    if (r.width > 0 && r.right > box.right + 1)
                        cut.push(`${el.tagName} ${el.className} ends at ${r.right} > ${box.right}`);
                }
                if (el.shadowRoot) visit(el.shadowRoot);
            }
        };
        visit(out);
    }
    return cut;
}"""


def check_narrow_lab(page, outputs: str, artifacts_dir) -> list[str]:
    """JupyterLab at 1280×800 with the file browser open: screenshots, then what is cut — figures or
    tables past the output's right edge, overlapping tick labels, cut titles (empty: nothing)."""
    from test_screenshots import check_layout

    page.set_viewport_size({"width": 1280, "height": 800})
    if not page.locator("#filebrowser").is_visible():
        page.locator('.jp-SideBar [data-id="filebrowser"]').first.click()
    page.locator("#filebrowser").wait_for(state="visible", timeout=UPDATE_TIMEOUT)
    try:  # (the layout follows the new width within a few frames)
        page.wait_for_function(f"(s) => ({JS_OUTPUTS_CUT})(s).length === 0", arg=outputs,
                               timeout=UPDATE_TIMEOUT)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: reported below
        pass
    folder = artifacts_dir / "screenshots"
    folder.mkdir(exist_ok=True)
    page.screenshot(path=str(folder / "jupyterlab-file-browser-1280x800.png"))
    problems = list(page.evaluate(JS_OUTPUTS_CUT, outputs))
    # the notebook scrolls inside JupyterLab's panel (a full-page screenshot shows the first screen only):
    # one screenshot per view, scrolled to it, shows every card
    for number, title in enumerate(VIEW_TITLES, start=1):
        page.locator(outputs).get_by_text(title, exact=True).first.scroll_into_view_if_needed()
        page.screenshot(path=str(folder / f"jupyterlab-file-browser-1280x800-view-{number}.png"))
    try:
        check_layout(page, "jupyterlab-1280x800")
    except AssertionError as exc:
        problems.append(str(exc))
    return problems


# whether the cells' outputs hold the dashboard's sliders (at least 4), each with an aria-label
JS_SLIDERS_NAMED = """(outputs) => {
    const sliders = [];
    const visit = (root) => {
        for (const el of root.querySelectorAll('*')) {
            if (el.getAttribute && el.getAttribute('role') === 'slider') sliders.push(el);
            if (el.shadowRoot) visit(el.shadowRoot);
        }
    };
    for (const out of document.querySelectorAll(outputs)) visit(out);
    return sliders.length >= 4 && sliders.every((el) => el.getAttribute('aria-label'));
}"""


def notebook_controls_unnamed(page, outputs: str) -> dict:
    """The controls of the cells' outputs without an accessible name (Playwright's ARIA snapshot of each
    output), once the page has named them, and whether it holds the dashboard's sliders."""
    from test_screenshots import unnamed_controls

    try:  # (the names are given when the output's document is ready, within a frame or two)
        page.wait_for_function(JS_SLIDERS_NAMED, arg=outputs, timeout=UPDATE_TIMEOUT)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: the snapshot below says what is missing
        pass
    snapshots = [output.aria_snapshot() for output in page.locator(outputs).all()]
    sliders = sum(line.strip().startswith("- slider") for text in snapshots for line in text.splitlines())
    unnamed = [line for text in snapshots for line in unnamed_controls(text)]
    return {"unnamed": unnamed, "sliders": sliders >= 4}


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@dataclass(frozen=True)
class FrontEnd:
    """A Jupyter front end: the module that serves it, a notebook's URL path, options that keep the server
    from reaching out, and the CSS selectors of its code cells, their editors, input prompts and outputs,
    and of its kernel's idle state."""

    module: str
    path: str
    quiet: tuple[str, ...]
    cell: str
    editor: str
    prompt: str
    output: str
    idle: str


_LAB_PARTS = dict(cell=".jp-Notebook .jp-Cell.jp-CodeCell", editor=".jp-InputArea-editor",
                  prompt=".jp-InputPrompt", output=".jp-OutputArea-output")
FRONT_ENDS = {
    # each notebook in a workspace of its own: JupyterLab reopens a workspace's notebooks beside the new one
    "jupyterlab": FrontEnd("jupyterlab", "/lab/workspaces/{0}/tree/{0}.ipynb", (
        "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly"), idle='.jp-StatusBar-Widget:has-text("Idle")', **_LAB_PARTS),
    # Jupyter Notebook 7: JupyterLab's components in a one-notebook page
    "notebook": FrontEnd("notebook", "/notebooks/{}.ipynb",
                         ("--JupyterNotebookApp.extension_manager=readonly",),
                         idle='.jp-Notebook-ExecutionIndicator[data-status="idle"]', **_LAB_PARTS),
    # the classic notebook (Notebook 6's interface)
    "nbclassic": FrontEnd("nbclassic", "/nbclassic/notebooks/{}.ipynb", (), cell=".cell.code_cell",
                          editor=".CodeMirror", prompt=".input_prompt", output=".output_subarea",
                          idle="#kernel_indicator_icon.kernel_idle_icon"),
}


@pytest.fixture(scope="module", params=sorted(FRONT_ENDS))
def jupyter(request, jupyter_server):
    """``(url of a notebook by name, server log, front end)``: each of :data:`FRONT_ENDS` on the module's
    one Jupyter server, with notebooks of its own (the README cell, a plot function), each run in a kernel
    of its own; the front end's kernels are shut down afterwards."""
    front_end = request.param
    try:
        __import__(FRONT_ENDS[front_end].module)
    except ImportError:
        if _in_ci():
            pytest.fail(f"{front_end} is not installed (CI=true: browser tests must run)")
        pytest.skip(f"{front_end} is not installed")
    base, token, log_path = jupyter_server
    try:
        # (the notebooks named NAME-FRONT_END: a notebook opened in two front ends would share its kernel)
        path = FRONT_ENDS[front_end].path.format("{0}-" + front_end)
        yield f"{base}{path}?token={token}", log_path, front_end
    finally:
        _shut_down_kernels(base, token)


def _shut_down_kernels(base: str, token: str) -> None:
    """Shut down every kernel of the server (the front end's notebooks are done with)."""
    headers = {"Authorization": f"token {token}"}
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels", headers=headers),
                                    timeout=30) as response:
            kernels = json.load(response)
        for kernel in kernels:
            request = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}", method="DELETE",
                                             headers=headers)
            urllib.request.urlopen(request, timeout=30).close()
    except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
        pass  # (the server is stopped with the module anyway)


@pytest.fixture(scope="module")
def jupyter_server(tmp_path_factory):
    """``(base URL, token, server log)`` of one Jupyter server for every front end (JupyterLab, Notebook 7
    and nbclassic are extensions of the same Jupyter server: one start instead of three) on loopback,
    serving a temporary folder that holds each front end's notebooks; the server is killed afterwards."""
    yield from _jupyter_server(tmp_path_factory)


def _jupyter_server(tmp_path_factory):
    installed = [spec for spec in FRONT_ENDS.values() if importlib.util.find_spec(spec.module)]
    if not installed:
        if _in_ci():
            pytest.fail("no Jupyter front end is installed (CI=true: browser tests must run)")
        pytest.skip("no Jupyter front end is installed")
    # (JupyterLab's application when it is installed: it serves the other front ends as extensions)
    module = installed[0].module
    root = tmp_path_factory.mktemp("jupyter")
    notebooks, home = root / "notebooks", root / "home"
    notebooks.mkdir()
    home.mkdir()
    for front_end in FRONT_ENDS:
        for name, source in (("readme", README_CELL), ("plot", PLOT_CELL)):
            notebook = {
                "cells": [{"cell_type": "code", "execution_count": None, "id": name, "metadata": {},
                           "outputs": [], "source": source}],
                "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                            "name": "python3"}},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
            (notebooks / f"{name}-{front_end}.ipynb").write_text(json.dumps(notebook))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    # the kernel imports this working tree; Jupyter's state stays in the temporary folder
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["JUPYTER_CONFIG_DIR"] = str(home / "config")
    env["JUPYTER_RUNTIME_DIR"] = str(home / "runtime")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(home / "workspaces")
    env["JUPYTERLAB_SETTINGS_DIR"] = str(home / "settings")
    # JupyterLab's toast asking whether to fetch Jupyter's news covered the cards' lower right corner: no
    # news (which also keeps the page from reaching out)
    notification = home / "settings" / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    cmd = [
        sys.executable, "-m", module,
        "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={notebooks}",
        # nothing on the server side reaches out either: no news, update or extension-index checks
        *(option for spec in installed for option in spec.quiet),
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers run CI as root
        cmd.append("--allow-root")
    log_path = root / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed by stop_server
    proc = subprocess.Popen(cmd, cwd=notebooks, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc._calviz_log = log  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(proc, f"{base}/api/status?token={token}", log_path, timeout=SERVER_TIMEOUT,
                      name=module, request_timeout=10)
        yield base, token, log_path
    finally:
        stop_server(proc)


def _offline_page(browser):
    """A page whose requests beyond loopback are aborted; returns (context, page, blocked, errors)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked: list[str] = []

    def route(request_route):
        url = request_route.request.url
        host = urllib.parse.urlsplit(url).hostname or ""
        if url.startswith(("data:", "blob:")) or host in _LOOPBACK:
            request_route.continue_()
        else:
            blocked.append(url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
    return context, page, blocked, errors


@contextlib.contextmanager
def notebook_page(browser, jupyter, name, artifacts_dir):
    """An offline page on notebook ``name`` with its cell run; yields (page, blocked).  On failure: a
    screenshot and the blocked requests, console errors and server log."""
    url, log_path, front_end = jupyter
    context, page, blocked, errors = _offline_page(browser)
    try:
        page.goto(url.format(name), timeout=RUN_TIMEOUT)
        cell = page.locator(FRONT_ENDS[front_end].cell).first
        cell.wait_for(timeout=RUN_TIMEOUT)
        run_cell(page, cell, FRONT_ENDS[front_end])
        yield page, blocked
    except Exception:
        page.screenshot(path=str(artifacts_dir / f"{front_end}_{name}_failure.png"), full_page=True)
        print(f"blocked: {blocked}\nerrors: {errors[-20:]}\nserver log:\n{log_path.read_text()[-3000:]}")
        raise
    finally:
        context.close()


def run_cell(page, cell, front_end: FrontEnd):
    """Shift+Enter in ``cell`` once its kernel is idle; pressed again if the kernel was not yet listening
    (the prompt then stays ``[ ]``)."""
    page.locator(front_end.idle).first.wait_for(timeout=RUN_TIMEOUT)
    prompt = cell.locator(front_end.prompt)
    for _ in range(5):
        # Notebook 7 may ask which kernel to start although the notebook names one (its session start
        # races under load): take the kernel it proposes, as a user would
        accept = page.locator(".jp-Dialog", has_text="Select Kernel").locator(".jp-mod-accept")
        if accept.count():
            accept.first.click()
        try:
            cell.locator(front_end.editor).click(timeout=15_000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: a dialog came up meanwhile
            continue
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function(
                "(el) => /\\[(\\*|\\d+)\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=15_000
            )
            return
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: press again
            continue
    pytest.fail("the cell did not start running")


@pytest.fixture(scope="module")
def readme_run(jupyter, chromium_browser, artifacts_dir):
    """Run the README cell, wait for the four views, move the bins slider and wait for the redraw.
    Returns the requests beyond loopback that the page made (and that were aborted): ``at_render``
    up to the first full render, ``after_update`` after the slider change."""
    front_end = jupyter[2]
    outputs = FRONT_ENDS[front_end].output
    with notebook_page(chromium_browser, jupyter, "readme", artifacts_dir) as (page, blocked):
        for title in VIEW_TITLES:
            page.locator(outputs).get_by_text(title, exact=True).first.wait_for(
                timeout=RUN_TIMEOUT
            )
        page.wait_for_function(f"(s) => ({JS_DRAWN_CANVASES})(s) >= 4", arg=outputs, timeout=RUN_TIMEOUT)
        page.wait_for_function(f"() => ({JS_HIST_COUNTS})().includes(15)", timeout=RUN_TIMEOUT)
        page.screenshot(path=str(artifacts_dir / f"{front_end}_dashboard.png"), full_page=True)
        unnamed = notebook_controls_unnamed(page, outputs)
        narrow = check_narrow_lab(page, outputs, artifacts_dir) if front_end == "jupyterlab" else None
        page.set_viewport_size({"width": 1400, "height": 1000})
        at_render = list(blocked)

        # a widget change goes to the kernel over the comm and the views redraw
        assert page.evaluate(JS_SET_WIDGET, ["bins (m)", 40]), "no 'bins (m)' slider in the output"
        page.wait_for_function(
            f"() => {{ const c = ({JS_HIST_COUNTS})(); return c.includes(40) && !c.includes(15); }}",
            timeout=UPDATE_TIMEOUT,
        )
        # the interval view's title (drawn on its canvas) names the new number of bins
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('intervals · 40 bins') !== null", timeout=UPDATE_TIMEOUT
        )
        page.screenshot(path=str(artifacts_dir / f"{front_end}_bins_40.png"), full_page=True)
        return {"at_render": at_render, "after_update": blocked[len(at_render):], "narrow": narrow,
                "unnamed": unnamed}


def test_readme_cell_renders_offline_and_redraws(readme_run):
    # the first render needs nothing but the notebook server: BokehJS, Panel, their CSS all inline
    assert readme_run["at_render"] == [], f"requests beyond loopback: {readme_run['at_render']}"


def test_jupyterlab_with_the_file_browser_open_cuts_nothing(readme_run):
    if readme_run["narrow"] is None:
        pytest.skip("checked in JupyterLab only")
    assert readme_run["narrow"] == []


def test_every_control_of_the_notebook_dashboard_has_a_name(readme_run):
    """Sliders, selects, inputs, buttons and check boxes of the cell's output, in Playwright's ARIA
    snapshot: each has an accessible name (a screen reader says what it sets)."""
    assert readme_run["unnamed"] == {"unnamed": [], "sliders": True}


def test_updates_request_nothing_beyond_loopback(readme_run):
    # an update re-sends the changed panes: their stylesheets must stay inline too
    assert readme_run["after_update"] == [], readme_run["after_update"]


def test_plot_function_renders_offline(jupyter, chromium_browser, artifacts_dir):
    """A plot function's HoloViews object in a notebook: BokehJS, Panel and every stylesheet inline."""
    with notebook_page(chromium_browser, jupyter, "plot", artifacts_dir) as (page, blocked):
        outputs = FRONT_ENDS[jupyter[2]].output
        page.wait_for_function(f"(s) => ({JS_DRAWN_CANVASES})(s) >= 1", arg=outputs, timeout=RUN_TIMEOUT)
        page.wait_for_function(f"() => ({JS_TEXT_CONTAINING})('T-Cal') !== null", timeout=RUN_TIMEOUT)
        page.screenshot(path=str(artifacts_dir / f"{jupyter[2]}_tcal_plot.png"), full_page=True)
        scripts = [u for u in blocked if not urllib.parse.urlsplit(u).path.endswith(".css")]
        assert scripts == [], f"scripts requested beyond loopback: {scripts}"
        assert blocked == [], f"requests beyond loopback: {blocked}"
