"""Dashboard latency in real Chromium, this implementation against the one before the rebuild.

n = 10⁵ top-1 predictions of a 10-class model, served with ``calviz serve FILE`` twice in the same run:
from this checkout ("now") and from a git worktree of the commit before the live-app rebuild
(``--before``, default 06ca4ac: "before"; the worktree ``--large`` keeps in ``--cache-dir`` when there is one,
its numba cache filled).  Both servers run side by side; every measured change is made
on one page after both apps are idle (no background job running), alternating between the two, so slow
phases of a shared machine hit both alike and the ratio before/now is robust to load.

Measured per change (change → pixels): from setting the widget's value in the page (what a slider drag or
a select does on the client) until the page shows the new state of every view that change touches
(checked on every animation frame) plus two more animation frames (the canvas is painted); and the events
and bytes of the change's first document patch (the WebSocket message the browser applies before it can
show the change: load-independent).

* bins, α, n (subsample size), binning scheme (each after an untimed bin-count change, so no change hits
  a cache), target top-1 ↔ classwise (each after an untimed α change);
* a 5-second drag of the bins slider (a new value every 50 ms): redraws per second seen in the page and
  the time from release until the released value is shown;
* start-up: ``calviz serve FILE``, the browser opened as soon as the server listens (as ``calviz serve``
  opens it; probed with a static file, so no session is built before the browser's) → the page's whole
  HTTP response, → the "preparing" line visible (the implementation before has none), → all four views
  drawn; with a warm numba cache (a server of the same checkout ran before) for both implementations, and
  with a cold one (``NUMBA_CACHE_DIR`` empty: the views' time is the compile time) for this checkout.
  ``--only startup --startup-reps N`` starts each implementation N times warm (alternating) and this
  checkout N times cold, and reports the medians.

Writes benchmarks/results/bench_dashboard.md.  ``--reps N`` changes per kind (default 15), ``--quick``:
n = 10⁴, 4 changes per kind, no cold start.  ``--only KIND,...``: those kinds (or ``drag``, ``startup``)
only, written to bench_dashboard_only.md (a partial run does not replace the full run's record);
``--only startup`` measures the start-ups alone (with the cold cache unless ``--no-cold``), written to
bench_dashboard_startup.md.

``--large``: the 10⁷-row scenario (:func:`run_large`): a Parquet file of ``--n`` rows (default 10⁷) × K = 10
classes, written once into ``--cache-dir`` and read once before measuring (it is in the page cache), served
with ``calviz serve FILE`` by both implementations side by side (the one before: a git worktree of
``--before``, default d7293ed, kept in ``--cache-dir`` so its numba cache stays filled; ``--skip-before``:
this checkout only, for a re-run on a quiet machine).  Per change, ``visible`` (the first view shows the
new state) and ``settled`` (every view the change touches shows it and no background job runs: the jobs
line, CSS class ``calviz-jobs``, is empty); bins, binning scheme, α, a target switch to a class never
shown before and back to top-1 (shown before); first views after the page; the server's process-tree
memory (RSS and PSS) with two tabs open, and its peak during the run.  The implementation before takes
10–30 s per change at 10⁷ rows: it is measured in the first ``--before-reps`` repetitions only (default 2;
then its server is stopped and this checkout goes on alone), and each of its steps (a change, its first
page, its second tab) is limited to ``--before-cap`` seconds (default 60): a time past the limit is
censored ("> 60 s" in the table; a median that depends on one is its lower bound); the first page gets
up to :data:`FIRST_PAGE_CAPS` limits in all to settle (untimed: every change is measured on it), a change
one more limit (untimed), and if it does not settle, the page is replaced by a new one (a new session, as
a user would reload) and the rest of that repetition is skipped on that side; a page that does not
settle within its limits ends that side's changes.  ``--only KIND,...``: those kinds of change only
(the changes they assume are made before them, unmeasured: see :data:`LARGE_NEEDS`).
Writes benchmarks/results/bench_dashboard_large.md (another ``--n``: bench_dashboard_large_<n>.md; with
``--only``: …_only.md), with the document patches the browser received per change (messages, events,
bytes, events by kind).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from functools import partial
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

_ALL_MODELS = (
    "(() => { const out = []; for (const d of Bokeh.documents) for (const m of d.all_models)"
    " out.push(m); return out; })()"
)
JS_SET = f"""([title, value]) => {{
    for (const m of {_ALL_MODELS})
        if (m.title === title && m.properties && 'value' in m.properties) {{ m.value = value; return true; }}
    return false;
}}"""
# the value's label: "equal_mass" before the rebuild, "equal mass" since the choices have human labels
JS_SET_RADIO = f"""(value) => {{
    for (const m of {_ALL_MODELS})
        for (const label of [value, value.replace('_', ' ')])
            if (Array.isArray(m.labels) && m.labels.includes(label) && 'active' in m.properties) {{
                m.active = m.labels.indexOf(label); return true; }}
    return false;
}}"""
# the cards' headings (whose tooltips give each view's mathematics) are not a view's state
JS_TEXT = f"""(needle) => {{
    for (const m of {_ALL_MODELS})
        if (typeof m.text === 'string' && m.text.includes(needle)
            && !(m.css_classes || []).includes('calviz-card-head')) return true;
    return false;
}}"""
JS_HIST = f"""() => {{
    const out = [];
    for (const m of {_ALL_MODELS}) {{
        const d = m.data; if (!d || m.selected === undefined) continue;
        const get = (k) => d instanceof Map ? d.get(k) : d[k];
        if (get('c1') !== undefined && get('count') !== undefined) out.push(get('count').length);
    }}
    return out;
}}"""
JS_IDLE = (
    # the jobs line is plain text in a Div (now) or escaped HTML in a <pre> (before the rebuild)
    f"() => !({_ALL_MODELS}).some(m => typeof m.text === 'string' && m.text.includes('computing:')"
    " && m.visible)"
)
JS_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
JS_FOUR_VIEWS = (
    f"() => window.Bokeh && Bokeh.documents.length > 0 && ({JS_HIST})().length > 0"
    f" && ({JS_TEXT})('T-Cal (') && ({JS_TEXT})('implied dCE') && ({JS_TEXT})('% interval')"
)
# the "preparing" line: in the page's first bytes, sent before the session is built, then in the page's
# HTML until BokehJS has drawn the status card (a CSS text on its empty placeholder), then in the card
# (before the rebuild: only there)
JS_PREPARING = (
    "() => { const s = document.getElementById('calviz-preparing');"
    " if (s && getComputedStyle(s).display !== 'none' && s.textContent.includes('preparing')) return true;"
    " const d = document.querySelector('#main > .card-margin:first-child [data-root-id]');"
    " if (d && d.matches(':empty') && getComputedStyle(d, '::before').content.includes('preparing'))"
    f" return true; return !!(window.Bokeh && Bokeh.documents.length > 0 && ({JS_TEXT})('preparing')); }}"
)
# every animation frame: record when the reliability histogram's bin count changes (a redraw during a drag)
JS_RECORD = f"""() => {{
    window.__redraws = []; let last = null;
    const tick = () => {{
        const h = ({JS_HIST})(); const m = h.length ? Math.max(...h) : null;
        if (m !== last) {{ window.__redraws.push([performance.now(), m]); last = m; }}
        if (window.__recording) requestAnimationFrame(tick);
    }};
    window.__recording = true; requestAnimationFrame(tick);
}}"""


def make_predictions(n: int, seed: int = 0):
    """An overconfident 10-class model: labels from softmax(logits / 1.6), predictions softmax(logits)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 10)) * 2.5
    logits[np.arange(n), rng.integers(0, 10, n)] += 3.0
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    tempered = np.exp((logits - logits.max(axis=1, keepdims=True)) / 1.6)
    tempered /= tempered.sum(axis=1, keepdims=True)
    u = rng.random(n)[:, None]
    labels = (tempered.cumsum(axis=1) < u).sum(axis=1).clip(0, 9)
    return labels.astype(np.int64), probs


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``calviz serve FILE --no-show`` of the checkout ``repo`` (its own PYTHONPATH), on a free port."""

    def __init__(
        self, repo: Path, npz: Path, workdir: Path, *, numba_cache: Path | None = None, probe: str = ""
    ):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = dict(os.environ, PYTHONPATH=str(repo), CALVIZ_CACHE_DIR=str(workdir / "datasets"))
        if numba_cache is not None:
            env["NUMBA_CACHE_DIR"] = str(numba_cache)
        self.log = open(workdir / f"server-{self.port}.log", "wb")  # noqa: SIM115 - closed in stop()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "calviz", "serve", str(npz), "--no-show", "--port", str(self.port)],
            cwd=repo,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        # probe "": the page itself (its first HTTP 200 builds a session); a static file: the server listens
        self.http_s = self._wait_http(self.url + probe)

    def _wait_http(self, url: str, timeout: float = 600.0) -> float:
        while time.perf_counter() - self.started < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {Path(self.log.name).read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url, timeout=30) as response:
                    if response.status == 200:
                        return time.perf_counter() - self.started
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.05)
        raise RuntimeError("server did not answer")

    def wait_log(self, text: str, timeout: float = 900.0) -> float | None:
        """Seconds from the start until the server's output says ``text`` (None: not within ``timeout``)."""
        while time.perf_counter() - self.started < timeout and self.proc.poll() is None:
            if text in Path(self.log.name).read_text(errors="replace"):
                return time.perf_counter() - self.started
            time.sleep(0.1)
        return None

    def stop(self) -> None:
        import psutil

        try:  # (an implementation that ignores SIGTERM is killed: its worker processes must not outlive it)
            workers = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            workers = []
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        _, alive = psutil.wait_procs(workers, timeout=10)
        for worker in alive:
            worker.kill()
        self.log.close()


def open_page(browser, server: Server):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    start = time.perf_counter()
    page.goto(server.url, timeout=600_000)
    page.wait_for_function(JS_FOUR_VIEWS, timeout=600_000, polling="raf")
    page.evaluate(JS_FRAMES)
    return page, time.perf_counter() - start


def settle(pages, timeout_ms: int = 120_000, caps: dict | None = None) -> list:
    """Both apps idle: no background job (bootstrap, smooth band, distance) competes with the change.
    ``caps``: a page's own limit (page → seconds; no error past it); returns the pages not idle within it."""
    late = []
    for page in pages:
        page.wait_for_timeout(300)
        if caps is not None and page in caps:
            if not _wait(page, JS_IDLE, caps[page]):
                late.append(page)
        else:
            page.wait_for_function(JS_IDLE, timeout=timeout_ms)
    pages[0].wait_for_timeout(300)
    return late


def timed(page, act, condition: str) -> float:
    """Seconds from ``act()`` (a widget change in the page) until ``condition`` holds and is painted."""
    start = time.perf_counter()
    act()
    page.wait_for_function(condition, timeout=120_000, polling="raf")
    page.evaluate(JS_FRAMES)
    return time.perf_counter() - start


def _set(page, title, value):
    assert page.evaluate(JS_SET, [title, value]), f"no widget {title!r}"


def _text(needle: str) -> str:
    return f"({JS_TEXT})({needle!r})"


def change_kinds(n_rows: int, reps: int):
    """(name, prepare(page, i) or None, act(page, i), condition(i)) of every measured kind of change."""

    def bins(i):
        return 17 + i

    def alpha(i):
        return round(0.06 + 0.01 * i, 3)

    def subsample(i):
        return n_rows // 2 + 997 * (i + 1)

    def scheme(i):
        return "equal_mass" if i % 2 == 0 else "equal_width"

    def target(i):
        return "classwise" if i % 2 == 0 else "top1"

    return [
        (
            "bins",
            None,
            lambda page, i: _set(page, "bins (m)", bins(i)),
            lambda i: f"({JS_HIST})().includes({bins(i)}) && {_text(f'· {bins(i)} bins')}",
        ),
        (
            "α",
            None,
            lambda page, i: _set(page, "level α", alpha(i)),
            lambda i: f"{_text(f'α = {alpha(i):g};')} && {_text(f'{100 * (1 - alpha(i)):.0f}% interval')}",
        ),
        (
            "n",
            None,
            lambda page, i: _set(page, "sample size n (subsample)", subsample(i)),
            lambda i: f"{_text(f'n = {subsample(i):,}')} && {_text(f'{subsample(i):,} of')}",
        ),
        (
            "binning scheme",
            lambda page, i: _set(page, "bins (m)", 60 + i),
            lambda page, i: page.evaluate(JS_SET_RADIO, scheme(i)),
            lambda i: f"{_text(f'· {60 + i} ' + scheme(i).replace('_', '-') + ' bins')}",
        ),
        (
            "target top-1 ↔ classwise",
            lambda page, i: _set(page, "level α", round(0.3 + 0.01 * i, 3)),
            lambda page, i: _set(page, "calibration target", target(i)),
            # the status line: escaped HTML in a Markdown pane (before), HTML in a Bokeh Div (now)
            lambda i: (
                f"{_text(target(i) + ' · ')} && ({_text(f'target &lt;strong&gt;{target(i)}&lt;/strong&gt;')}"
                f" || {_text(f'target <strong>{target(i)}</strong>')})"
            ),
        ),
    ]


def drag(page, seconds: float = 5.0, step_ms: int = 50) -> dict:
    """Drag the bins slider for ``seconds`` (a new value every ``step_ms``), then release on a value."""
    values = [10 + (k % 40) for k in range(int(seconds * 1000 / step_ms))]
    released = 71
    page.evaluate(JS_RECORD)
    start = time.perf_counter()
    for value in values:
        _set(page, "bins (m)", value)
        page.wait_for_timeout(step_ms)
    _set(page, "bins (m)", released)
    release = time.perf_counter()
    page.wait_for_function(
        f"({JS_HIST})().includes({released}) && {_text(f'· {released} bins')}", timeout=120_000, polling="raf"
    )
    page.evaluate(JS_FRAMES)
    end = time.perf_counter()
    page.evaluate("() => { window.__recording = false; }")
    redraws = page.evaluate("() => window.__redraws")
    t0 = redraws[0][0]
    during = [r for r in redraws[1:] if r[0] - t0 <= 1000 * (release - start)]
    final = redraws[-1][1]
    return {
        "redraws_per_s": len(during) / (release - start),
        "release_to_final_ms": 1000 * (end - release),
        "ends_on_released": final == released,
        "redraws": len(redraws) - 1,
    }


def summary(values, censored=None, cap: float | None = None) -> dict:
    """Median, p90 and every value of ``values`` (seconds) in ms.  ``censored[i]``: ``values[i]`` was not
    reached within ``cap`` seconds (it is longer than the cap, hence than every time that was reached, so
    the order of all of them is known): each statistic is computed with the censored times at the cap — a
    lower bound — and flagged (``median_censored``, ``p90_censored``) when it depends on a censored time;
    ``all`` holds None for a censored time."""
    censored = censored or [False] * len(values)

    def stats(at: float) -> tuple[float, float]:
        ms = [1000 * (at if c else v) for v, c in zip(values, censored, strict=True)]
        return statistics.median(ms), float(np.percentile(ms, 90))

    (median, p90), (median_above, p90_above) = stats(cap or 0.0), stats(2 * (cap or 0.0) + 1)
    return {
        "median": median,
        "p90": p90,
        "median_censored": median != median_above,
        "p90_censored": p90 != p90_above,
        "n": len(values),
        "censored": sum(censored),
        "all": [None if c else round(1000 * v) for v, c in zip(values, censored, strict=True)],
    }


def warm_up(repo: Path, npz: Path, workdir: Path, browser) -> None:
    """A first server of this checkout until its page shows every view: fills its numba cache."""
    server = Server(repo, npz, workdir)
    try:
        page, _ = open_page(browser, server)
        page.close()
    finally:
        server.stop()


def first_patch(frames: list) -> tuple[int, int]:
    """(events, bytes) of the first document patch among a page's received WebSocket ``frames``: a Bokeh
    message is a JSON header, metadata and content, then its binary buffers (load-independent: what one
    change makes the browser apply before it can show it)."""
    for i, frame in enumerate(frames):
        if isinstance(frame, str) and '"msgtype"' in frame and json.loads(frame)["msgtype"] == "PATCH-DOC":
            events = len(json.loads(frames[i + 2]).get("events", [])) if i + 2 < len(frames) else 0
            end = i + 3
            while end < len(frames) and not isinstance(frames[end], str):
                end += 1
            return events, sum(len(f) for f in frames[i:end])
    return 0, 0


def start_up(repo: Path, npz: Path, workdir: Path, browser, *, cold: bool = False,
             frames: list | None = None):
    """``calviz serve FILE`` of ``repo``, opened in the browser as soon as the server listens (as ``calviz
    serve`` opens it; the server is probed with a static file, so no session is built before the
    browser's).  Times after the server process started: listening, the page's whole HTTP response, the
    "preparing" line visible (None if the page never showed it: the implementation before the rebuild),
    all four views drawn.  ``cold``: an empty numba cache (the views' time is then the compile time).
    Returns ``(times, server, page)``; the caller stops the server."""
    cache = Path(tempfile.mkdtemp(prefix="numba-cold-", dir=workdir)) if cold else None
    server = Server(repo, npz, workdir, numba_cache=cache, probe="favicon.ico")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    if frames is not None:  # every WebSocket frame the page receives, appended to ``frames``
        page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: frames.append(frame)))
    opened = time.perf_counter()
    page.goto(server.url, timeout=600_000, wait_until="commit")
    page.wait_for_function(f"() => ({JS_PREPARING})() || ({JS_FOUR_VIEWS})()", timeout=900_000, polling="raf")
    preparing = time.perf_counter() - server.started if page.evaluate(JS_PREPARING) else None
    page.wait_for_function(JS_FOUR_VIEWS, timeout=900_000, polling="raf")
    page.evaluate(JS_FRAMES)
    views = time.perf_counter() - server.started
    response = page.evaluate("() => performance.getEntriesByType('navigation')[0].responseEnd") / 1000
    times = {"listening_s": server.http_s, "http_s": opened - server.started + response,
             "preparing_s": preparing, "views_s": views}
    return times, server, page


def measured_start(repo: Path, npz: Path, workdir: Path, browser, *, cold: bool = False) -> dict:
    """The times of :func:`start_up`, server stopped."""
    times, server, page = start_up(repo, npz, workdir, browser, cold=cold)
    page.close()
    server.stop()
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="commit of the implementation compared against (default 06ca4ac; "
                                         f"with --large {LARGE_BEFORE})")
    parser.add_argument("--reps", type=int, help="measured changes per kind (default 15; with --large 10)")
    parser.add_argument("--large", action="store_true",
                        help="the 10⁷-row × K = 10 Parquet scenario (visible / settled, two tabs' memory)")
    parser.add_argument("--n", type=int, default=LARGE_N, help="rows of the --large file (default 10⁷)")
    parser.add_argument("--cache-dir", default=str(LARGE_CACHE), help="where the --large file is kept")
    parser.add_argument("--skip-before", action="store_true", help="--large: this checkout only")
    parser.add_argument("--before-reps", type=int, default=2,
                        help="--large: the repetitions in which the checkout before is measured too "
                             "(default 2)")
    parser.add_argument("--before-cap", type=float, default=60.0,
                        help="--large: seconds each step of the checkout before may take (default 60; past "
                             "it: censored)")
    parser.add_argument("--quick", action="store_true", help="n = 10⁴, 4 changes per kind, no cold start")
    parser.add_argument(
        "--only", help="comma-separated kinds to measure (e.g. 'target top-1 ↔ classwise,drag'; with --large "
                       "e.g. 'bins,α'); the results go to a file of their own (…_only.md)"
    )
    parser.add_argument("--resume", help="JSON of an earlier run whose results this run completes")
    parser.add_argument("--startup-reps", type=int, default=1, help="start-ups of each implementation")
    parser.add_argument("--no-cold", action="store_true", help="no cold-cache start-up")
    args = parser.parse_args(argv)
    if args.large:
        return run_large(args)
    args.before = args.before or "06ca4ac"
    args.reps = 15 if args.reps is None else args.reps
    n = 10_000 if args.quick else 100_000
    reps = 4 if args.quick else args.reps
    load_before = os.getloadavg()
    command = "python benchmarks/bench_dashboard.py" + (" --quick" if args.quick else f" --reps {reps}")
    if args.only:
        command += f' --only "{args.only}"'
    if args.startup_reps != 1:
        command += f" --startup-reps {args.startup_reps}"
    if args.before != "06ca4ac":
        command += f" --before {args.before}"
    print(f"command: {command}; n = {n:,}; cores = {os.cpu_count()}; load {load_before}", flush=True)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # the worktree --large keeps (its numba cache filled: a new worktree compiles for minutes), else a
        # temporary one
        before_repo = Path(args.cache_dir) / f"worktree-{args.before}"
        temporary = not before_repo.exists()
        if temporary:
            before_repo = tmp / "before"
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(before_repo), args.before],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
        try:
            labels, probs = make_predictions(n)
            npz = tmp / "predictions.npz"
            np.savez(npz, y_true=labels, y_prob=probs)
            only = set(args.only.split(",")) if args.only else None
            earlier = json.loads(Path(args.resume).read_text()) if args.resume else {}
            repos = {"before": before_repo, "now": REPO}
            if only == {"startup"}:
                results = {**earlier, **startups(tmp, npz, repos, sync_playwright, args.startup_reps,
                                                 cold=not args.no_cold)}
            else:
                results = run(
                    tmp,
                    npz,
                    n,
                    reps,
                    repos,
                    sync_playwright,
                    cold=not args.quick and only is None and not args.no_cold,
                    only=only,
                    earlier=earlier,
                )
        finally:
            if temporary:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(before_repo)], cwd=REPO, capture_output=True
                )
    results["load"] = (load_before, os.getloadavg())
    write_markdown(command, n, reps, args.before, results, startup_only=only == {"startup"},
                   stem=latency_stem(only))
    return 0


def startups(tmp, npz, repos, sync_playwright, reps: int, *, cold: bool) -> dict:
    """Start-ups only: each implementation ``reps`` times with a warm numba cache (after one unmeasured
    warm-up start), alternating between the implementations, then, when ``cold``, this checkout ``reps``
    times with an empty cache; medians, and every run."""
    runs = {"startup": {name: [] for name in repos}, "cold": {name: [] for name in repos}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            for repo in repos.values():
                warm_up(repo, npz, tmp, browser)
            for kind in ("startup", "cold") if cold else ("startup",):
                for i in range(reps):
                    for name, repo in repos.items():
                        if kind == "cold" and name != "now":
                            continue  # the implementation before has no "preparing" state to wait for
                        runs[kind][name].append(measured_start(repo, npz, tmp, browser, cold=kind == "cold"))
                        print(f"{kind} ({name}, {i + 1}):", runs[kind][name][-1], flush=True)
        finally:
            browser.close()
    out = {"startup": {}, "cold": {}, "changes": {}, "drag": {}}
    for kind, by_name in runs.items():
        for name, rows in by_name.items():
            if rows:
                out[kind][name] = {k: statistics.median(v) if (v := [r[k] for r in rows if r[k] is not None])
                                   else None for k in rows[0]}
                out[kind][name]["runs"] = rows
    return out


def run(tmp, npz, n, reps, repos, sync_playwright, *, cold: bool, only=None, earlier=None) -> dict:
    results = {"startup": {}, "changes": {}, "drag": {}, **(earlier or {})}
    saved = RESULTS / f"{latency_stem(only)}.json"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        if cold:
            results["cold"] = {"now": measured_start(REPO, npz, tmp, browser, cold=True)}
            print("cold start (now):", results["cold"]["now"], flush=True)
        servers, pages = {}, {}
        frames = {name: [] for name in repos}
        try:
            for name, repo in repos.items():
                warm_up(repo, npz, tmp, browser)
                times, servers[name], pages[name] = start_up(repo, npz, tmp, browser, frames=frames[name])
                if only is None or "startup" in only:
                    results["startup"][name] = times
                    print(f"start-up ({name}):", results["startup"][name], flush=True)
            both = list(pages.values())
            for page in both:  # warm-up changes, not measured
                for value in (16, 15):
                    _set(page, "bins (m)", value)
                    page.wait_for_timeout(1500)
            for kind, prepare, act, condition in change_kinds(n, reps):
                if only is not None and kind not in only:
                    continue
                times = {name: [] for name in pages}
                patches = {name: [] for name in pages}
                for i in range(reps):
                    for name, page in pages.items():
                        if prepare is not None:
                            prepare(page, i)
                        settle(both)
                        frames[name].clear()
                        times[name].append(timed(page, partial(act, page, i), condition(i)))
                        patches[name].append(first_patch(frames[name]))
                results["changes"][kind] = {name: summary(t) for name, t in times.items()}
                for name, rows in patches.items():  # medians of the change's first patch
                    results["changes"][kind][name]["first_patch"] = [
                        statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)]
                print(
                    kind,
                    {k: (round(v["median"]), round(v["p90"])) for k, v in results["changes"][kind].items()},
                    flush=True,
                )
                saved.write_text(json.dumps(results, indent=1))  # a crash later keeps what was measured
            for name, page in pages.items() if only is None or "drag" in only else ():
                _set(page, "calibration target", "top1")
                settle(both)
                results["drag"][name] = drag(page)
                print(f"drag ({name}):", results["drag"][name], flush=True)
        finally:
            for server in servers.values():
                server.stop()
            browser.close()
    return results


TARGETS = {
    "bins": "≤ 250 ms median, ≤ 400 ms p90, ≥ 3×",
    "α": "≤ 250 ms median, ≤ 400 ms p90, ≥ 3×",
    "n": "≤ 250 ms median, ≤ 400 ms p90, ≥ 3×",
    "binning scheme": "≤ 250 ms median, ≤ 400 ms p90, ≥ 3×",
    "target top-1 ↔ classwise": "≤ 600 ms",
}


def latency_stem(only: set | None) -> str:
    """The latency run's results file (without suffix): a run of some kinds (``--only``) has its own, so that
    it does not replace the full run's record."""
    return "bench_dashboard" if only is None else "bench_dashboard_only"


def write_markdown(command, n, reps, before, results, *, startup_only: bool = False,
                   stem: str = "bench_dashboard"):
    RESULTS.mkdir(parents=True, exist_ok=True)
    (l1, l5, _), (m1, m5, _) = results["load"]
    if startup_only:  # its own section: a start-up run does not replace the latency run's results
        lines = [
            "# Dashboard start-up (`benchmarks/bench_dashboard.py --only startup`)",
            "",
            f"Command: `{command}`; `calviz serve FILE` of n = {n:,} top-1 predictions of a 10-class model "
            f"(an NPZ file); `os.cpu_count()` = {os.cpu_count()}; headless Chromium. \"preparing\" "
            "visible: in the page's first bytes (sent before the session is built), in its HTML or in the "
            "status card. "
            f"**before** = a git worktree of `{before}`, **now** = this checkout, started in turn in the "
            f"same run. Load average (1/5 min) {l1:.1f}/{l5:.1f} before the run, {m1:.1f}/{m5:.1f} after "
            "it (on a shared machine compare before and now, not the absolute times).",
        ]
        _startup_lines(lines, results)
        (RESULTS / "bench_dashboard_startup.md").write_text("\n".join(lines))
        print(f"wrote {RESULTS / 'bench_dashboard_startup.md'}")
        return
    lines = [
        "# Dashboard latency (`benchmarks/bench_dashboard.py`)",
        "",
        f"Command: `{command}`; n = {n:,} top-1 predictions of a 10-class model (`calviz serve FILE`); "
        f"`os.cpu_count()` = {os.cpu_count()}; headless Chromium; {reps} changes per kind, each to a new "
        f"value, after both apps were idle. **before** = a git worktree of `{before}` (the app before the "
        "rebuild), **now** = this checkout, both served side by side in the same run; changes alternate "
        "between them. Change → pixels: from setting the widget's value in the page until every view the "
        f"change touches shows the new state, plus two animation frames. Load average (1/5 min) {l1:.1f}/"
        f"{l5:.1f} before the run, {m1:.1f}/{m5:.1f} after it (other jobs shared the machine: compare the "
        "ratios, not the absolute times).",
        "",
        "| change | before: median / p90 | now: median / p90 | ratio (medians) | target |",
        "|---|---|---|---|---|",
    ]
    for kind, row in results["changes"].items():
        b, a = row["before"], row["now"]
        lines.append(
            f"| {kind} | {b['median']:.0f} / {b['p90']:.0f} ms | {a['median']:.0f} / {a['p90']:.0f} ms "
            f"| {b['median'] / a['median']:.2f}× | {TARGETS[kind]} |"
        )
    lines += ["", "First document patch of a change (medians; what the browser applies before it can show "
              "the change, load-independent): events / bytes", ""]
    for kind, row in results["changes"].items():
        patch = {name: row[name].get("first_patch") for name in ("before", "now")}
        if all(patch.values()):
            lines.append(f"* {kind}: before {patch['before'][0]:.0f} / {patch['before'][1]:,.0f}; now "
                         f"{patch['now'][0]:.0f} / {patch['now'][1]:,.0f}")
    lines += ["", "All times (ms, in order):", ""]
    for kind, row in results["changes"].items():
        lines.append(
            f"* {kind}: before {row['before'].get('all', 'see the note')}; now "
            f"{row['now'].get('all', 'see the note')}"
        )
    lines += [
        "",
        "| 5-s drag of the bins slider (a value every 50 ms) | redraws per second | release → released "
        "value shown | ends on the released value | target |",
        "|---|---|---|---|---|",
    ]
    for name, d in results["drag"].items():
        lines.append(
            f"| {name} | {d['redraws_per_s']:.1f} | {d['release_to_final_ms']:.0f} ms | "
            f"{'yes' if d['ends_on_released'] else 'NO'} | ≥ 3 redraws/s, ends on the released value |"
        )
    _startup_lines(lines, results)
    lines.append("")
    (RESULTS / f"{stem}.md").write_text("\n".join(lines))
    print(f"wrote {RESULTS / f'{stem}.md'}")


def _startup_lines(lines: list, results: dict) -> None:
    lines += [
        "",
        "Start-up: `calviz serve FILE`, the browser opened when the server listens; seconds after the server "
        "process started (warm: numba cache filled by an earlier server of the same checkout; cold: "
        "`NUMBA_CACHE_DIR` empty, the views' time is the compile time).",
        "",
        "| start-up | listening | page response | \"preparing\" visible | all four views drawn | target |",
        "|---|---|---|---|---|---|",
    ]

    def cell(row, key, digits=2):
        value = row.get(key)
        return "—" if value is None else f"{value:.{digits}f} s"

    for kind, label, target in (("startup", "warm", "page ≤ 3 s, views ≤ 8 s"),
                                ("cold", "cold", "a visible progress state within 3 s")):
        rows = results.get(kind) or {}
        if "http_s" in rows:  # (a results file of an earlier version of this script)
            rows = {"now": rows}
        for name, row in rows.items():
            lines.append(f"| {name}, {label} | {cell(row, 'listening_s')} | {cell(row, 'http_s')} | "
                         f"{cell(row, 'preparing_s')} | {cell(row, 'views_s')} | {target} |")
    runs = [(kind, name, r) for kind in ("startup", "cold") for name, row in (results.get(kind) or {}).items()
            if isinstance(row, dict) for r in row.get("runs", [])]
    if runs:
        lines += ["", "Start-up runs (s after `calviz serve` started; medians above):", ""]
        for kind, name, r in runs:
            label = "warm" if kind == "startup" else "cold"
            shown = ", ".join(f"{k} {v:.2f}" for k, v in r.items() if v is not None)
            lines.append(f"* {name}, {label}: {shown}")
    lines.append("")



# -- the 10⁷-row scenario (--large) ----------------------------------------------------------------------
LARGE_N = 10_000_000
LARGE_K = 10
LARGE_BEFORE = "d7293ed"
LARGE_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "calviz-bench"
LARGE_WAIT_MS = 900_000  # the implementation before takes 10–30 s per change at 10⁷ rows
_FIRST_VIEW = f"() => window.Bokeh && Bokeh.documents.length > 0 && ({JS_HIST})().length > 0"
JS_STATUS = f"""() => {{
    for (const m of {_ALL_MODELS})
        if ((m.css_classes || []).includes('calviz-status') && typeof m.text === 'string') return m.text;
    return '';
}}"""
LARGE_TARGETS = {
    "bins": "visible ≤ 250 ms median, ≤ 500 ms p90; settled ≤ 1 s",
    "binning scheme": "visible ≤ 250 ms median, ≤ 500 ms p90; settled ≤ 1 s",
    "α": "visible ≤ 250 ms median, ≤ 500 ms p90; settled ≤ 1 s",
    "target → a class not shown before": "visible ≤ 2 s",
    "target → a class shown before": "visible ≤ 250 ms",
    "target → top-1 (shown before)": "visible ≤ 250 ms",
}
#: the first page of a capped implementation may take this many caps (untimed past the first) before its
#: changes are given up: every change is measured on it
FIRST_PAGE_CAPS = 5
_TARGET_KINDS = ("target → a class not shown before", "target → a class shown before",
                 "target → top-1 (shown before)")
#: the kinds of change (:func:`large_steps`) a kind assumes were made before it (under ``--only`` they are
#: made, not measured): a scheme change's condition names the repetition's bin count, a switch to a class
#: starts from top-1 (where the repetition before ended) and the switch to top-1 from the class
LARGE_NEEDS = {"binning scheme": {"bins"}, **{kind: set(_TARGET_KINDS) for kind in _TARGET_KINDS}}


def large_file(n: int, cache_dir: Path, seed: int = 0) -> Path:
    """The ``n``-row Parquet file (``y_true``, ``p_0`` … ``p_9``) of :func:`make_predictions`, written once
    into ``cache_dir`` a block of 10⁶ rows at a time (no 10⁷ × K temporaries) and reused."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = cache_dir / f"calviz-dashboard-{n}x{LARGE_K}-seed{seed}.parquet"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("y_true", pa.int64())] + [(f"p_{k}", pa.float64()) for k in range(LARGE_K)])
    written = path.with_name(f"{path.name}.{os.getpid()}.part")
    block = 1_000_000
    with pq.ParquetWriter(written, schema) as writer:
        for start in range(0, n, block):
            labels, probs = make_predictions(min(block, n - start), seed=[seed, start // block])
            columns = [pa.array(labels)] + [pa.array(probs[:, k]) for k in range(LARGE_K)]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))
    written.rename(path)
    return path


def read_through(path: Path) -> float:
    """Read the whole file once (into the page cache); seconds."""
    start = time.perf_counter()
    with open(path, "rb") as file:
        while file.read(1 << 24):
            pass
    return time.perf_counter() - start


def tree_memory(pid: int) -> dict:
    """Bytes of the server process ``pid`` and its worker processes: the server's RSS, the tree's summed
    RSS (shared pages counted in every process mapping them) and summed PSS (shared pages divided among
    them: the tree's share of the machine's memory), and the shared blocks (``/dev/shm``) the server made."""
    import psutil

    out = {"server_rss": 0, "rss": 0, "pss": 0, "processes": 0}
    try:
        processes = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return out
    for process in processes:
        try:
            with open(f"/proc/{process.pid}/smaps_rollup") as file:
                fields = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in file
                          if line.startswith(("Rss:", "Pss:"))}
        except OSError:
            continue
        out["rss"] += fields.get("Rss", 0)
        out["pss"] += fields.get("Pss", 0)
        out["processes"] += 1
        if process.pid == pid:
            out["server_rss"] = fields.get("Rss", 0)
    shm = Path("/dev/shm")
    out["shm"] = sum(f.stat().st_size for f in shm.glob(f"calviz-{pid}-*")) if shm.is_dir() else 0
    return out


class MemoryPeaks:
    """The largest :func:`tree_memory` of each server, sampled every second on a thread during the run."""

    def __init__(self):
        self.pids: dict[str, int] = {}
        self.peaks: dict[str, dict] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            for name, pid in list(self.pids.items()):
                now = tree_memory(pid)
                peak = self.peaks.setdefault(name, dict(now))
                for key, value in now.items():
                    peak[key] = max(peak.get(key, 0), value)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def large_page(browser, server: Server, cap: float | None = None) -> tuple:
    """Open the server's page; seconds from the page's request until its response ended, the first view
    (the reliability diagram) is drawn, all four views are drawn, and no background job runs.  ``cap``
    (seconds from the request): a stage not reached within it is None (censored) and so are the later
    ones; the page is returned as it is then."""
    from playwright.sync_api import Error as PageError
    from playwright.sync_api import TimeoutError as PageTimeout

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.frames_received = []  # every WebSocket frame the page receives (see patch_messages)
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: page.frames_received.append(frame)))
    opened = time.perf_counter()
    times = {"response_s": None, "first_view_s": None, "four_views_s": None, "settled_s": None}
    try:
        page.goto(server.url, timeout=_left_ms(opened, cap), wait_until="commit")
        for key, condition in (("first_view_s", _FIRST_VIEW), ("four_views_s", JS_FOUR_VIEWS)):
            page.wait_for_function(condition, timeout=_left_ms(opened, cap), polling="raf")
            page.evaluate(JS_FRAMES)
            times[key] = time.perf_counter() - opened
        page.wait_for_function(JS_IDLE, timeout=_left_ms(opened, cap), polling=250)
        times["settled_s"] = time.perf_counter() - opened
    except PageTimeout:
        if cap is None:
            raise
    # (the navigation's entry has no end while the response is still coming: a page not served in the cap)
    try:
        response = page.evaluate("() => { const e = performance.getEntriesByType('navigation')[0];"
                                 " return e && e.responseEnd > 0 ? e.responseEnd : null; }")
    except PageError:  # (the page navigated meanwhile)
        response = None
    times["response_s"] = None if response is None else response / 1000
    return page, times


def _left_ms(start: float, cap: float | None) -> float:
    """Playwright's timeout (ms) of a wait that must end ``cap`` seconds after ``start`` (no cap: 15 min)."""
    if cap is None:
        return LARGE_WAIT_MS
    return max(1.0, 1000 * (cap - (time.perf_counter() - start)))


def large_steps(reps: int):
    """Per repetition ``i``, the changes in order: ``(kind or None (not measured), act(page), any, all)``;
    ``any``: conditions of which one holding means a view shows the change (visible), ``all``: every one
    (settled, with no job running).  Each kind's values are new (no change is a result-cache hit): the
    class of the classwise target is one not shown before for i < K (shown before from then on), the bins
    a new count, α a new level; the switch back to top-1 finds the options changed since top-1 was shown
    (its sorted view is reused, its results are not cached)."""

    def status(target):  # the status line: escaped HTML in a Markdown pane (before), HTML in a Div (now)
        return (f"({_text(f'target &lt;strong&gt;{target}&lt;/strong&gt;')}"
                f" || {_text(f'target <strong>{target}</strong>')})")

    steps = []
    for i in range(reps):
        bins, alpha = 17 + i, round(0.06 + 0.01 * i, 3)
        scheme = "equal_mass" if i % 2 == 0 else "equal_width"
        first = "target → a class not shown before" if i < LARGE_K else "target → a class shown before"
        steps.append([
            (None, partial(_set_value, "class (classwise)", i % LARGE_K), [], []),
            (first, partial(_set_value, "calibration target", "classwise"),
             [_text("classwise · ")], [_text("classwise · "), status("classwise")]),
            ("bins", partial(_set_value, "bins (m)", bins),
             [f"({JS_HIST})().includes({bins})", _text(f"· {bins} bins")],
             [f"({JS_HIST})().includes({bins})", _text(f"· {bins} bins")]),
            ("binning scheme", partial(_set_scheme, scheme),
             [_text(f"· {bins} " + scheme.replace("_", "-") + " bins")],
             [_text(f"· {bins} " + scheme.replace("_", "-") + " bins")]),
            ("α", partial(_set_value, "level α", alpha),
             [_text(f"α = {alpha:g};"), _text(f"{100 * (1 - alpha):.0f}% interval")],
             [_text(f"α = {alpha:g};"), _text(f"{100 * (1 - alpha):.0f}% interval")]),
            ("target → top-1 (shown before)", partial(_set_value, "calibration target", "top1"),
             [_text("top1 · ")], [_text("top1 · "), status("top1")]),
        ])
    return steps


def _set_value(title, value, page):
    _set(page, title, value)


def _set_scheme(value, page):
    assert page.evaluate(JS_SET_RADIO, value), f"no binning scheme {value!r}"


def patch_messages(frames: list) -> dict:
    """The document patches among WebSocket ``frames`` (a Bokeh message: a JSON header, metadata and
    content, then its binary buffers): their count, events and bytes, and the events by kind and
    attribute (``ModelChanged:text``, ``ColumnDataChanged``, …) — what the browser applies for one change,
    independent of the load."""
    messages, events, size, kinds = 0, 0, 0, Counter()
    i = 0
    while i < len(frames):
        frame = frames[i]
        header = json.loads(frame) if isinstance(frame, str) and '"msgtype"' in frame else {}
        if header.get("msgtype") == "PATCH-DOC":
            messages += 1
            content = json.loads(frames[i + 2]).get("events", []) if i + 2 < len(frames) else []
            events += len(content)
            kinds.update(f"{e.get('kind')}:{e['attr']}" if "attr" in e else str(e.get("kind"))
                         for e in content)
            end = i + 3
            while end < len(frames) and not isinstance(frames[end], str):
                end += 1
            size += sum(len(f) for f in frames[i:end])
            i = end
            continue
        i += 1
    return {"messages": messages, "events": events, "bytes": size, "kinds": dict(kinds.most_common())}


def timed_large(page, act, visible: list, settled: list,
                cap: float | None = None) -> tuple[float | None, float | None]:
    """Seconds from ``act(page)`` until one of ``visible`` holds (painted), and until all of ``settled``
    hold with no background job running (painted); ``page.last_patches``: the change's document patches
    (:func:`patch_messages`).  ``cap`` (seconds from the change): a time not reached within it is None
    (censored; a visible time past the cap makes the settled one censored too)."""
    from playwright.sync_api import TimeoutError as PageTimeout

    before = len(page.frames_received)
    start = time.perf_counter()
    shown = done = None
    act(page)
    try:
        page.wait_for_function(f"() => {' || '.join(visible)}", timeout=_left_ms(start, cap), polling="raf")
        page.evaluate(JS_FRAMES)
        shown = time.perf_counter() - start
        page.evaluate(JS_FRAMES)  # (the rest of the change's messages: the jobs line comes with its views)
        page.wait_for_function(_settled(settled), timeout=_left_ms(start, cap), polling="raf")
        page.evaluate(JS_FRAMES)
        done = time.perf_counter() - start
    except PageTimeout:
        if cap is None:
            raise
    page.last_patches = patch_messages(page.frames_received[before:])
    return shown, done


def _settled(conditions: list) -> str:
    """Every one of ``conditions`` holds and no background job runs (the jobs line is empty)."""
    return f"() => {' && '.join([*conditions, f'({JS_IDLE})()'])}"


def _wait(page, condition: str, seconds: float) -> bool:
    """Whether ``condition`` holds in the page within ``seconds`` (an untimed wait)."""
    from playwright.sync_api import TimeoutError as PageTimeout

    try:
        page.wait_for_function(condition, timeout=1000 * seconds, polling=250)
    except PageTimeout:
        return False
    return True


def run_large(args) -> int:
    """``--large``: both implementations serve the same ``--n``-row Parquet file side by side; see the
    module docstring.  Results: benchmarks/results/bench_dashboard_large.{md,json} (another ``--n``:
    bench_dashboard_large_<n>.{md,json}: the development size does not replace the 10⁷ run; with ``--only``:
    ``…_only.{md,json}``: a partial run does not replace the full one)."""
    from playwright.sync_api import sync_playwright

    n, before = args.n, args.before or LARGE_BEFORE
    reps = 10 if args.reps is None else args.reps
    before_reps, cap = min(reps, args.before_reps), args.before_cap
    only = large_only(args.only)
    needed = None if only is None else only | {kind for each in only for kind in LARGE_NEEDS.get(each, ())}
    command = (f"python benchmarks/bench_dashboard.py --large --n {n} --reps {reps}"
               + (" --skip-before" if args.skip_before
                  else f" --before {before} --before-reps {before_reps} --before-cap {cap:g}")
               + (f' --only "{args.only}"' if args.only else ""))
    path = large_file(n, Path(args.cache_dir))
    read_s = read_through(path)
    load_before = os.getloadavg()
    print(f"command: {command}; {path} ({path.stat().st_size / 1e6:,.0f} MB, read in {read_s:.1f} s); "
          f"cores = {os.cpu_count()}; load {load_before}", flush=True)
    results: dict = {"command": command, "n": n, "file_bytes": path.stat().st_size, "reps": {"now": reps},
                     "startup": {}, "second_tab": {}, "memory": {}, "changes": {}, "status": {}, "notes": []}
    saved = RESULTS / f"{large_stem(n, partial=only is not None)}.json"
    RESULTS.mkdir(parents=True, exist_ok=True)
    peaks = MemoryPeaks()
    # the checkout before is limited: ``cap`` seconds per step (a step past it is censored, "> cap"), and
    # its changes in the first ``before_reps`` repetitions only (it takes 10–30 s per change at 10⁷ rows)
    caps = {"now": None}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        repos = {"now": REPO}
        if not args.skip_before:
            # kept between runs: a new worktree's numba cache is empty (minutes of compiling on 2 cores)
            repos = {"before": Path(args.cache_dir) / f"worktree-{before}", **repos}
            caps["before"] = cap
            results["reps"]["before"] = before_reps
            results["before_cap_s"] = cap
            if not repos["before"].exists():
                subprocess.run(["git", "worktree", "add", "--detach", str(repos["before"]), before],
                               cwd=REPO, check=True, capture_output=True)
        servers: dict = {}
        live: set = set()  # the implementations still served (the one before stops early: see stop())

        def note(text: str) -> None:
            results["notes"].append(text)
            print(text, flush=True)

        def stop(name: str, why: str) -> None:
            """Stop ``name``'s server (its memory recorded first): it no longer shares the 2 cores (nor 5 GB
            of memory) with the measured changes of the other one."""
            results["memory"][name]["end"] = tree_memory(servers[name].proc.pid)
            peaks.pids.pop(name, None)
            servers[name].stop()
            live.discard(name)
            note(f"{name}: server stopped ({why})")

        try:
            labels, probs = make_predictions(10_000)
            small = tmp / "warm.npz"
            np.savez(small, y_true=labels, y_prob=probs)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)

                def reload(name: str, why: str) -> None:
                    """A fair next step after a page that is past its cap: a new page (a new session, as a
                    user would reload); past the cap as well, the implementation is measured no further."""
                    pages[name].close()
                    pages[name], times = large_page(browser, servers[name], cap=caps[name])
                    if times["settled_s"] is None:
                        stop(name, f"{why}; a new page did not settle within {caps[name]:g} s either: no "
                                   "further change measured")
                    else:
                        note(f"{name}: {why}; a new page opened (settled in {times['settled_s']:.1f} s), the "
                             "rest of the repetition skipped")

                try:
                    for repo in repos.values():  # fills each checkout's numba cache
                        warm_up(repo, small, tmp, browser)
                    pages = {}
                    for name, repo in repos.items():  # one after the other: each reads the file
                        servers[name] = Server(repo, path, tmp, probe="favicon.ico")
                        peaks.pids[name] = servers[name].proc.pid
                        live.add(name)
                        # (this checkout computes the first page's views at its start: the page is opened
                        # once it says so; the checkout before says nothing and is opened at once)
                        ready_s = servers[name].wait_log("first views computed") if name == "now" else None
                        pages[name], times = large_page(browser, servers[name], cap=caps[name])
                        results["startup"][name] = {"listening_s": servers[name].http_s,
                                                    "first_views_computed_s": ready_s, **times}
                        print(f"start-up ({name}):", results["startup"][name], flush=True)
                        results["memory"][name] = {"one_tab": tree_memory(servers[name].proc.pid)}
                        if times["settled_s"] is None:  # (only with a cap) the changes need the page drawn
                            more = (FIRST_PAGE_CAPS - 1) * caps[name]
                            if _wait(pages[name], _settled([f"({JS_FOUR_VIEWS})()"]), more):
                                note(f"{name}: the first page settled within another {more:g} s (untimed)")
                            else:
                                stop(name, f"the first page not settled within {FIRST_PAGE_CAPS} times the "
                                           f"cap ({FIRST_PAGE_CAPS * caps[name]:g} s)")
                    for name in [name for name in servers if name in live]:  # a second tab: idle from then on
                        second, times = large_page(browser, servers[name], cap=caps[name])
                        results["second_tab"][name] = times
                        results["memory"][name]["two_tabs"] = tree_memory(servers[name].proc.pid)
                        print(f"second tab ({name}):", results["second_tab"][name],
                              results["memory"][name], flush=True)
                        if results["second_tab"][name]["settled_s"] is None:  # (only with a cap)
                            # (a session still being built would compete with the changes measured next)
                            drawn = _wait(second, _settled([f"({JS_FOUR_VIEWS})()"]), caps[name])
                            note(f"{name}: the second tab {'settled' if drawn else 'did not settle'} within "
                                 f"another {caps[name]:g} s (untimed); the changes started then")
                    changes = {}
                    for i, steps in enumerate(large_steps(reps)):
                        if "before" in live and i == before_reps:
                            stop("before", f"its {before_reps} repetitions made")
                        order = [name for name in pages if name in live]
                        order = order if i % 2 == 0 else order[::-1]
                        skipped: set = set()  # reloaded in this repetition (its next steps assume its state)
                        for kind, act, visible, settled in steps:
                            if kind is not None and needed is not None and kind not in needed:
                                continue
                            for name in order:
                                if name in skipped or name not in live:
                                    continue
                                if kind is None:
                                    act(pages[name])
                                    continue
                                capped = {pages[k]: caps[k] for k in live if caps[k] is not None}
                                for late in settle([pages[k] for k in order if k in live], LARGE_WAIT_MS,
                                                   caps=capped):
                                    late_name = next(k for k in live if pages[k] is late)
                                    reload(late_name, f"repetition {i + 1}: not idle within "
                                                      f"{caps[late_name]:g} s before {kind}")
                                    skipped.add(late_name)
                                if name in skipped or name not in live:
                                    continue
                                shown, done = timed_large(pages[name], act, visible, settled, cap=caps[name])
                                if only is None or kind in only:
                                    row = changes.setdefault(kind, {}).setdefault(name, {
                                        "visible": [], "settled": [], "visible_censored": [],
                                        "settled_censored": [], "patches": []})
                                    for key, value in (("visible", shown), ("settled", done)):
                                        row[key].append(caps[name] if value is None else value)
                                        row[f"{key}_censored"].append(value is None)
                                    row["patches"].append(pages[name].last_patches)
                                    results["status"].setdefault(name, []).append(
                                        [kind, shown and round(shown, 3), done and round(done, 3),
                                         pages[name].evaluate(JS_STATUS)])
                                if done is None:  # past the cap: the page gets one more cap to settle
                                    if _wait(pages[name], _settled(settled), caps[name]):
                                        note(f"{name}: repetition {i + 1}, {kind}: past {caps[name]:g} s, "
                                             f"settled within another {caps[name]:g} s (untimed)")
                                    else:
                                        reload(name, f"repetition {i + 1}, {kind}: not settled within twice "
                                                     f"the cap ({2 * caps[name]:g} s)")
                                        skipped.add(name)
                        results["changes"] = {kind: {name: {k: summary(row[k], row[f"{k}_censored"],
                                                                       caps[name])
                                                            for k in ("visible", "settled")}
                                                     for name, row in by_name.items()}
                                              for kind, by_name in changes.items()}
                        results["patches"] = {kind: {name: row["patches"] for name, row in by_name.items()}
                                              for kind, by_name in changes.items()}
                        results["memory_peak"] = dict(peaks.peaks)
                        saved.write_text(json.dumps(results, indent=1))  # (a crash keeps what was measured)
                        print(f"repetition {i + 1} (ms; None: past the cap):",
                              {kind: {name: [s["all"][-1] for s in row.values()]
                                      for name, row in by_name.items() if name in order}
                               for kind, by_name in results["changes"].items()}, flush=True)
                    for name in list(live):
                        results["memory"][name]["end"] = tree_memory(servers[name].proc.pid)
                finally:
                    browser.close()
        finally:
            peaks.stop()
            for name in live:
                servers[name].stop()
    results["memory_peak"] = dict(peaks.peaks)
    results["load"] = (load_before, os.getloadavg())
    saved.write_text(json.dumps(results, indent=1))
    write_large_markdown(results, before, partial=only is not None)
    return 0


def large_only(only: str | None) -> set | None:
    """The kinds of change ``--only`` names with ``--large`` (None: every kind); an unknown kind is an
    error."""
    if only is None:
        return None
    kinds = set(only.split(","))
    known = {kind for steps in large_steps(LARGE_K + 1) for kind, *_ in steps if kind is not None}
    if not kinds <= known:
        raise SystemExit(f"--only with --large: {', '.join(sorted(kinds - known))} is not one of "
                         f"{', '.join(sorted(known))}")
    return kinds


def large_stem(n: int, *, partial: bool = False) -> str:
    """The results' file name (without suffix) of the ``--large`` run of ``n`` rows (``partial``: a run of
    some kinds, ``--only``)."""
    stem = "bench_dashboard_large" if n == LARGE_N else f"bench_dashboard_large_{n}"
    return f"{stem}_only" if partial else stem


def write_large_markdown(results: dict, before: str, *, partial: bool = False) -> None:
    (l1, l5, _), (m1, m5, _) = results["load"]
    names = list(results["startup"])
    reps, cap = results["reps"], results.get("before_cap_s")
    gb = 1 << 30

    def ms(stat: dict, key: str) -> str:  # a statistic that depends on a time past the cap: its lower bound
        return f"{'> ' if stat[f'{key}_censored'] else ''}{stat[key]:,.0f}"

    def ratio(row: dict, key: str) -> str:
        b, a = row["before"][key], row["now"][key]
        return f"{'> ' if b['median_censored'] else ''}{b['median'] / a['median']:.1f}×"

    def sec(value) -> str:  # (None: past the cap)
        return f"> {cap:g} s" if value is None else f"{value:.1f} s"

    lines = [
        f"# Dashboard at {'10⁷' if results['n'] == LARGE_N else format(results['n'], ',')} rows "
        "(`benchmarks/bench_dashboard.py --large`)",
        "",
        f"Command: `{results['command']}`; `calviz serve FILE` of a Parquet file of "
        f"n = {results['n']:,} rows × K = {LARGE_K} ({results['file_bytes'] / 1e6:,.0f} MB, read once "
        "before: in the page cache); "
        f"`os.cpu_count()` = {os.cpu_count()}; headless Chromium; {reps['now']} changes of each kind, each "
        "to a new value (no result-cache hit), after both apps were idle"
        + ("" if "before" not in names else
           f"; **before** = a git worktree of `{before}`, **now** = this checkout, served side by side in "
           f"the same run, changes alternating between them in the first {reps['before']} repetitions (the "
           f"before side's changes: n in the table), then the server before stopped and now alone; each "
           f"step of before (a change, its first page and second tab) limited to {cap:g} s: a time past "
           "it is censored, \"> x\" (a median or p90 that depends on one is its lower bound, the censored "
           "times counted at the limit), and a change past it gets another limit to settle, untimed (the "
           f"first page {FIRST_PAGE_CAPS} limits in all), then a new page (the rest of that repetition "
           "skipped on before); see the notes")
        + ". Visible: from setting the widget in the page until one view shows the change (painted); "
        "settled: until every view the change touches shows it and no background job runs (the jobs line is "
        "empty). "
        f"Load average (1/5 min) {l1:.1f}/{l5:.1f} before the run, {m1:.1f}/{m5:.1f} after it.",
        "",
        "| change | "
        + " | ".join(f"{name}: visible median / p90 | {name}: settled median / p90" for name in names)
        + (" | ratio before / now (visible, settled medians) | n (before, now)" if "before" in names else "")
        + " | target |",
        "|---|" + "---|" * (2 * len(names) + 2 * ("before" in names) + 1),
    ]
    for kind, row in results["changes"].items():
        cells = [f"{ms(row[name]['visible'], 'median')} / {ms(row[name]['visible'], 'p90')} ms | "
                 f"{ms(row[name]['settled'], 'median')} / {ms(row[name]['settled'], 'p90')} ms"
                 if name in row else "— | —" for name in names]
        extra = ""
        if "before" in names:
            counts = ", ".join(str(row[name]["visible"]["n"]) if name in row else "0" for name in names)
            both = "before" in row and "now" in row
            extra = (f" | {ratio(row, 'visible')}, {ratio(row, 'settled')}" if both else " | —")
            extra += f" | {counts}"
        lines.append(f"| {kind} | " + " | ".join(cells) + extra + f" | {LARGE_TARGETS.get(kind, '')} |")
    if results.get("patches"):
        lines += ["", "What the browser applies per change (document patches received from the change until "
                  "it settled, or until the limit; medians over the changes; load-independent):", "",
                  "| change | implementation | messages | events | bytes | most frequent events (total over "
                  "the changes) |", "|---|---|---:|---:|---:|---|"]
        for kind, by_name in results["patches"].items():
            for name, patches in by_name.items():
                kinds = Counter()
                for patch in patches:
                    kinds.update(patch["kinds"])
                top = ", ".join(f"{k} {v}" for k, v in kinds.most_common(6))
                lines.append(f"| {kind} | {name} | {statistics.median(p['messages'] for p in patches):.0f} | "
                             f"{statistics.median(p['events'] for p in patches):.0f} | "
                             f"{statistics.median(p['bytes'] for p in patches):,.0f} | {top} |")
    lines += ["", "| start-up | listening | page response | first view | all four views | no job running "
              "| second tab: first view / four views / no job | target |",
              "|---|---|---|---|---|---|---|---|"]
    for name in names:
        s, t = results["startup"][name], results["second_tab"].get(name)
        second = ("— (not opened)" if t is None else
                  f"{sec(t['first_view_s'])} / {sec(t['four_views_s'])} / {sec(t['settled_s'])}")
        lines.append(f"| {name} | {s['listening_s']:.1f} s | {sec(s['response_s'])} | "
                     f"{sec(s['first_view_s'])} | {sec(s['four_views_s'])} | {sec(s['settled_s'])} | "
                     f"{second} | first views ≤ 5 s after the page |")
    lines.append("")
    lines.append("Start-up times: the server from its start until it listens (it reads and validates the "
                 "file first); the page's times from the browser's request.")
    for name in names:
        ready = results["startup"][name].get("first_views_computed_s")
        if ready is not None:
            lines.append(f"{name}: the server said its first page's views were computed {ready:.1f} s after "
                         "its start; the page was opened then.")
    lines += ["", "| server memory (process tree) | one tab: RSS of the server / tree RSS / tree PSS "
              "| two tabs | at the end (or when stopped) | peak during the run | shared blocks (/dev/shm), "
              "two tabs | target |",
              "|---|---|---|---|---|---|---|"]

    def mem(m):
        return "—" if not m else f"{m['server_rss'] / gb:.2f} / {m['rss'] / gb:.2f} / {m['pss'] / gb:.2f} GB"

    for name in names:
        m = results["memory"][name]
        two = m.get("two_tabs")
        lines.append(f"| {name} ({(two or m['one_tab'])['processes']} processes) | {mem(m['one_tab'])} | "
                     f"{mem(two)} | {mem(m.get('end'))} | {mem(results.get('memory_peak', {}).get(name))} | "
                     f"{'—' if two is None else format(two['shm'] / gb, '.2f') + ' GB'} "
                     "| ≤ 2 GB with two tabs |")
    lines += ["", "Tree RSS counts the shared data once per process mapping it; PSS divides shared pages "
              "among the processes (the tree's share of the machine's memory)."]
    if results.get("notes"):
        lines += ["", "Notes (in order):", ""] + [f"* {text}" for text in results["notes"]]
    lines += ["", "All times (ms, in order; > x: past the limit):", ""]

    def times(values) -> str:
        return ", ".join(f"> {1000 * cap:,.0f}" if v is None else f"{v:,}" for v in values)

    for kind, row in results["changes"].items():
        for name in names:
            if name in row:
                lines.append(f"* {kind}, {name}: visible {times(row[name]['visible']['all'])}; settled "
                             f"{times(row[name]['settled']['all'])}")
    lines.append("")
    written = RESULTS / f"{large_stem(results['n'], partial=partial)}.md"
    written.write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"wrote {written}")



if __name__ == "__main__":
    sys.exit(main())
