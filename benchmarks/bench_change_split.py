"""Where a dashboard change's time goes: the server's turn and the browser's, per change, for this checkout
and an earlier commit served side by side (as ``bench_dashboard.py``).

Per measured change (the kinds of ``bench_dashboard.py``: ``--kinds n,bins``), in real Chromium:

* **server**: from the page sending the widget's change over the WebSocket until the first message of the
  server's answer arrives (the session's turn; the loopback adds well under a millisecond);
* **browser**: from that arrival until the page shows every view the change touches, plus two animation
  frames (painted): applying the patches, laying out, painting;
* the messages and events the page received until then, and of those events the ``Div`` text changes and
  the events by model type and attribute (load-independent);
* Chromium's own CPU time over the change (CDP ``Performance.getMetrics``: script, layout, style
  recalculation, and the layouts and style recalculations counted).

``--drag``: the 5-second bins drag of ``bench_dashboard.py`` (a value every 50 ms), with the values sent,
the document patches received, their gaps (the server's turns) and the browser's apply time per patch.

Writes nothing to ``benchmarks/results``: it prints a table and, with ``--json FILE``, the raw rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import Counter
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import (  # noqa: E402
    CHROMIUM_ARGS,
    JS_FOUR_VIEWS,
    JS_FRAMES,
    JS_HIST,
    JS_RECORD,
    LARGE_CACHE,
    REPO,
    Server,
    _set,
    _text,
    change_kinds,
    make_predictions,
    settle,
    warm_up,
)

# Before the page's scripts run: every WebSocket frame sent and received, timed; a second message
# listener, added once Bokeh has set its own handler (at the first send), marks when Bokeh has applied a
# received frame (it applies a patch synchronously in its handler).  Every document change the page
# applies, with its model's type and attribute.
INIT_JS = """
(() => {
  const log = window.__wslog = [];
  const Native = window.WebSocket;
  const size = (d) => typeof d === 'string' ? d.length : (d.byteLength ?? d.size ?? 0);
  class Logged extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => log.push(['recv', performance.now(), size(e.data),
        typeof e.data === 'string' ? e.data.slice(0, 200) : null]));
    }
    send(data) {
      if (!this.__after) {
        this.__after = true;
        this.addEventListener('message', () => log.push(['applied', performance.now()]));
      }
      log.push(['send', performance.now(), size(data), typeof data === 'string' ? data.slice(0, 200) : null]);
      return super.send(data);
    }
  }
  window.WebSocket = Logged;
  // the accessible-names walk of the page (calviz.app.page) visits each view's shadow root with this query
  window.__walked = 0;
  const query = DocumentFragment.prototype.querySelectorAll;
  DocumentFragment.prototype.querySelectorAll = function (selector) {
    if (selector === 'input[type=file]') window.__walked += 1;
    return query.call(this, selector);
  };
  window.__events = [];
  const hook = () => {
    if (!window.Bokeh || !Bokeh.documents.length) { setTimeout(hook, 50); return; }
    for (const doc of Bokeh.documents)
      doc.on_change((ev) => {
        const m = ev.model;
        window.__events.push([performance.now(), ev.constructor.name, m ? m.type : null,
                              ev.attr ?? null]);
      });
  };
  hook();
})();
"""



def _patch(frame: str | None) -> bool:
    """Whether ``frame`` (its first characters) is the header of a Bokeh document patch (``{"msgid": …,
    "msgtype": "PATCH-DOC", …}``; the browser writes it without spaces)."""
    return bool(frame) and '"msgtype"' in frame and "PATCH-DOC" in frame


METRICS = ("ScriptDuration", "LayoutDuration", "RecalcStyleDuration", "TaskDuration", "LayoutCount",
           "RecalcStyleCount")


def metrics(cdp) -> dict:
    got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {k: got.get(k, 0.0) for k in METRICS}


def _applied(log: list, i: int) -> float | None:
    """When the browser had applied the message whose header is ``log[i]``: a message is its header,
    metadata, content and buffers, applied by Bokeh's handler after its last frame (the last mark before the
    next message's header)."""
    done = None
    for entry in log[i + 1:]:
        if entry[0] == "recv" and entry[3] and '"msgtype"' in entry[3]:
            break
        if entry[0] == "applied":
            done = entry[1]
    return done


def cpu_delta(before: dict, after: dict) -> dict:
    """Chromium's metrics between two readings: durations in ms, counts as counted."""
    return {k: 1000 * (after[k] - before[k]) if k.endswith("Duration") else after[k] - before[k]
            for k in METRICS}


def start_profile(cdp) -> None:
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 200})
    cdp.send("Profiler.start")


def stop_profile(cdp, profile: Counter) -> None:
    """The JavaScript CPU profile's self samples since :func:`start_profile`, by function, added to
    ``profile``."""
    for node in cdp.send("Profiler.stop")["profile"]["nodes"]:
        frame = node["callFrame"]
        name = f"{frame['functionName'] or '(anonymous)'} {Path(frame['url']).name}:{frame['lineNumber']}"
        profile[name] += node.get("hitCount", 0)


def measure_change(page, cdp, act, condition: str, *, profile: Counter | None = None) -> dict:
    """One change: ``act()``, then wait (every animation frame) until ``condition`` holds, plus two frames.
    ``profile``: the JavaScript CPU profile's self samples of the change, by function, added to it."""
    page.evaluate("() => { window.__wslog.length = 0; window.__events.length = 0; window.__walked = 0; }")
    if profile is not None:
        start_profile(cdp)
    before = metrics(cdp)
    t_set = page.evaluate("() => performance.now()")
    act()
    t_shown = page.evaluate(
        f"""() => new Promise(r => {{ const tick = () => {{ if (({condition})) r(performance.now());
        else requestAnimationFrame(tick); }}; tick(); }})""")
    page.evaluate(JS_FRAMES)
    t_painted = page.evaluate("() => performance.now()")
    after = metrics(cdp)
    if profile is not None:
        stop_profile(cdp, profile)
    log = page.evaluate("() => window.__wslog.slice()")
    events = page.evaluate("() => window.__events.slice()")
    walked = page.evaluate("() => window.__walked")
    sends = [e for e in log if e[0] == "send" and e[1] >= t_set]
    t_send = sends[0][1] if sends else t_set
    recvs = [e for e in log if e[0] == "recv" and e[1] >= t_send and e[1] <= t_painted]
    first_i = next((i for i, e in enumerate(log) if e[0] == "recv" and e[1] >= t_send and _patch(e[3])), None)
    headers = [e for e in recvs if _patch(e[3])]
    first = None if first_i is None else log[first_i][1]
    applied = None if first_i is None else _applied(log, first_i)
    shown_events = [e for e in events if e[0] <= t_shown]
    cpu = cpu_delta(before, after)
    return {
        "total_ms": t_painted - t_set,
        "shown_ms": t_shown - t_set,
        "set_to_send_ms": t_send - t_set,
        "server_ms": None if first is None else first - t_send,
        "browser_ms": None if first is None else t_painted - first,
        "first_apply_ms": None if applied is None else applied - first,
        "messages_until_painted": len(headers),
        "bytes_until_painted": sum(e[2] for e in recvs),
        "events_until_shown": len(shown_events),
        "views_walked": walked,
        "div_text_until_shown": sum(1 for e in shown_events if e[2] == "Div" and e[3] == "text"),
        "event_kinds_until_shown": dict(Counter(f"{e[2]}:{e[3]}" for e in shown_events)),
        "cpu": cpu,
    }


def measure_drag(page, cdp, seconds: float = 5.0, step_ms: int = 50, profile: Counter | None = None) -> dict:
    """``bench_dashboard.drag`` with the WebSocket log: values sent, patches received and their gaps."""
    values = [10 + (k % 40) for k in range(int(seconds * 1000 / step_ms))]
    page.evaluate("() => { window.__wslog.length = 0; window.__events.length = 0; window.__walked = 0; }")
    page.evaluate(JS_RECORD)
    if profile is not None:
        start_profile(cdp)
    before = metrics(cdp)
    t0 = page.evaluate("() => performance.now()")
    for value in values:
        _set(page, "bins (m)", value)
        page.wait_for_timeout(step_ms)
    t_release = page.evaluate("() => performance.now()")
    after = metrics(cdp)
    if profile is not None:
        stop_profile(cdp, profile)
    _set(page, "bins (m)", 71)
    page.wait_for_function(f"({JS_HIST})().includes(71) && {_text('· 71 bins')}", timeout=120_000,
                           polling="raf")
    page.evaluate(JS_FRAMES)
    page.evaluate("() => { window.__recording = false; }")
    log = page.evaluate("() => window.__wslog.slice()")
    redraws = page.evaluate("() => window.__redraws")
    walked = page.evaluate("() => window.__walked")
    during = [r for r in redraws[1:] if r[0] <= t_release]
    # (the slider's values: the browser's other patches are its answers to the tickets, plot sizes, ranges)
    sends = [e for e in log if e[0] == "send" and e[1] < t_release and e[3] and '"attr":"value"' in e[3]]
    headers = [e[1] for e in log if e[0] == "recv" and e[1] < t_release and _patch(e[3])]
    recv_i = [i for i, e in enumerate(log) if e[0] == "recv" and e[1] < t_release and _patch(e[3])]
    applies = [t - log[i][1] for i in recv_i if (t := _applied(log, i)) is not None]
    gaps = np.diff(headers) if len(headers) > 1 else np.array([])
    return {
        "seconds": (t_release - t0) / 1000,
        "values_sent": len(sends),
        "patches_received": len(headers),
        "redraws_per_s": len(during) / ((t_release - t0) / 1000),
        "gap_median_ms": float(np.median(gaps)) if gaps.size else None,
        "apply_median_ms": float(np.median(applies)) if applies else None,
        "views_walked": walked,
        "cpu_during_drag": cpu_delta(before, after),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=str(LARGE_CACHE / "worktree-d7293ed"),
                        help="checkout served as 'before' (default: the kept worktree of d7293ed)")
    parser.add_argument("--also", action="append", default=[],
                        help="NAME=DIR: one more checkout served beside the two")
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--kinds", default="n,bins")
    parser.add_argument("--drag", action="store_true")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--json", help="write the raw rows here")
    parser.add_argument("--profile", action="store_true",
                        help="the browser's JavaScript CPU profile of the changes (self samples by function)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    kinds = set(args.kinds.split(",")) if args.kinds else set()
    repos = {"before": Path(args.before), **{name: Path(path) for name, path in
                                              (item.split("=", 1) for item in args.also)}, "now": REPO}
    print(f"load {os.getloadavg()}", flush=True)
    rows: dict = {"changes": {}, "drag": {}, "load": [os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        labels, probs = make_predictions(args.n)
        npz = tmp / "predictions.npz"
        np.savez(npz, y_true=labels, y_prob=probs)
        servers, pages, cdps = {}, {}, {}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            try:
                for name, repo in repos.items():
                    warm_up(repo, npz, tmp, browser)
                    servers[name] = Server(repo, npz, tmp)
                    context = browser.new_context(viewport={"width": 1280, "height": 800})
                    context.add_init_script(INIT_JS)
                    pages[name] = context.new_page()
                    pages[name].goto(servers[name].url, timeout=600_000)
                    pages[name].wait_for_function(JS_FOUR_VIEWS, timeout=600_000, polling="raf")
                    cdps[name] = context.new_cdp_session(pages[name])
                    cdps[name].send("Performance.enable")
                both = list(pages.values())
                for page in both:  # warm-up changes, not measured
                    for value in (16, 15):
                        _set(page, "bins (m)", value)
                        page.wait_for_timeout(1500)
                for kind, prepare, act, condition in change_kinds(args.n, args.reps):
                    if kind not in kinds:
                        continue
                    out = rows["changes"][kind] = {name: [] for name in pages}
                    profiles = {name: Counter() for name in pages} if args.profile else {}
                    for i in range(args.reps):
                        for name, page in pages.items():
                            if prepare is not None:
                                prepare(page, i)
                            settle(both)
                            out[name].append(measure_change(page, cdps[name], partial(act, page, i),
                                                            condition(i), profile=profiles.get(name)))
                        print(kind, i, {name: round(out[name][-1]["total_ms"]) for name in pages}, flush=True)
                    for name, profile in profiles.items():
                        total = sum(profile.values()) or 1
                        rows.setdefault("profiles", {}).setdefault(kind, {})[name] = [
                            [f, round(100 * c / total, 1)] for f, c in profile.most_common(40)]
                if args.drag:
                    for name, page in pages.items():
                        _set(page, "calibration target", "top1")
                        settle(both)
                        profile = Counter() if args.profile else None
                        rows["drag"][name] = measure_drag(page, cdps[name], profile=profile)
                        if profile is not None:
                            total = sum(profile.values()) or 1
                            rows.setdefault("profiles", {}).setdefault("drag", {})[name] = [
                                [f, round(100 * c / total, 1)] for f, c in profile.most_common(40)]
                        print("drag", name, rows["drag"][name], flush=True)
            finally:
                for server in servers.values():
                    server.stop()
                browser.close()
    rows["load"].append(os.getloadavg())
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    report(rows)
    return 0


def report(rows: dict) -> None:
    print(f"load (1, 5, 15 min) before {rows['load'][0]}, after {rows['load'][-1]}")
    for kind, by_name in rows["changes"].items():
        print(f"\n{kind} (medians over {len(next(iter(by_name.values())))} changes)")
        keys = ["total_ms", "server_ms", "browser_ms", "first_apply_ms", "messages_until_painted",
                "bytes_until_painted", "events_until_shown", "div_text_until_shown", "views_walked"]
        print("| |" + " | ".join(by_name) + " |")
        for key in keys:
            cells = []
            for changes in by_name.values():
                values = [c[key] for c in changes if c[key] is not None]
                cells.append(f"{statistics.median(values):,.1f}" if values else "—")
            print(f"| {key} | " + " | ".join(cells) + " |")
        for metric in METRICS:
            cells = [f"{statistics.median(c['cpu'][metric] for c in changes):,.1f}"
                     for changes in by_name.values()]
            print(f"| chrome {metric} | " + " | ".join(cells) + " |")
        for name, changes in by_name.items():
            kinds = Counter()
            for c in changes:
                kinds.update(c["event_kinds_until_shown"])
            print(f"events until shown, {name} (total):", dict(kinds.most_common()))
    for kind, by_name in rows.get("profiles", {}).items():
        for name, top in by_name.items():
            print(f"\nJavaScript self time, {kind}, {name} (% of samples):")
            for function, share in top[:25]:
                print(f"  {share:5.1f} {function}")
    for name, d in rows["drag"].items():
        print(f"drag {name}: {d}")


if __name__ == "__main__":
    sys.exit(main())
