"""Many sessions on one server: memory and another session's latency, in real Chromium.

``calviz serve --no-show`` on the embedded default data; ``--sessions S`` pages (default 40) are opened one
after another in one Chromium, each waiting for its four views (so every session has computed its
results, and queued its background jobs, in the server's worker pool).  Then:

* the server's memory: RSS of the server process, of each worker process, and of the whole tree (RSS
  counts the shared data once per process that touched it: an upper bound), and the number of processes;
* a bins change in one more session while the others are open (their background jobs may still run):
  seconds from setting the widget in the page until the reliability diagram shows the new bin count and
  is painted (two animation frames), ``--reps`` times (new bin counts: never from the cache); median, p90.

Run: ``nice python benchmarks/bench_sessions.py [--sessions 40] [--reps 10] [--workers N]``; prints a
markdown table (paste it into BENCHMARKS.md with the command, machine and load).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import JS_FOUR_VIEWS, JS_FRAMES, JS_HIST, JS_IDLE, JS_SET  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _tree_memory(pid: int) -> dict:
    import psutil

    root = psutil.Process(pid)
    children = root.children(recursive=True)
    workers = [c for c in children if "spawn_main" in " ".join(c.cmdline())]
    rss = {p.pid: p.memory_info().rss for p in [root, *children]}
    return {
        "server_rss_gb": rss[pid] / 2**30,
        "worker_rss_gb": [rss[p.pid] / 2**30 for p in workers],
        "tree_rss_gb": sum(rss.values()) / 2**30,
        "processes": 1 + len(children),
    }


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url, timeout=900_000)
    page.wait_for_function(JS_FOUR_VIEWS, timeout=900_000, polling=500)
    return page


def _bins_change(page, m: int) -> float:
    start = time.perf_counter()
    assert page.evaluate(JS_SET, ["bins (m)", m])
    page.wait_for_function(f"() => ({JS_HIST})().includes({m})", timeout=600_000, polling="raf")
    page.evaluate(JS_FRAMES)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(REPO), CALVIZ_CACHE_DIR=str(Path(tmp) / "datasets"))
        cmd = [sys.executable, "-m", "calviz", "serve", "--no-show", "--port", "0"]
        if args.workers:
            cmd += ["--workers", str(args.workers)]
        server = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, text=True)
        try:
            url = next(line.split("dashboard at", 1)[1].split()[0]
                       for line in server.stdout if "dashboard at" in line)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
                started = time.perf_counter()
                pages = []
                for i in range(args.sessions):
                    pages.append(_open(browser, url))
                    print(f"session {i + 1} open ({time.perf_counter() - started:.0f} s)", flush=True)
                memory_open = _tree_memory(server.pid)
                probe = _open(browser, url)
                times = [_bins_change(probe, 17 + i) for i in range(args.reps)]
                busy = sum(not page.evaluate(JS_IDLE) for page in pages)
                memory_end = _tree_memory(server.pid)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=120)
    times.sort()
    p90 = times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]
    print()
    print("| sessions | processes | server RSS | worker RSS (each) | tree RSS | bins change median | p90 |")
    print("|---|---|---|---|---|---|---|")
    for label, memory in (("open", memory_open), ("after the changes", memory_end)):
        each = ", ".join(f"{w:.2f}" for w in memory["worker_rss_gb"])
        median = statistics.median(times)
        print(f"| {args.sessions} + 1 ({label}) | {memory['processes']} | {memory['server_rss_gb']:.2f} GB "
              f"| {each} GB | {memory['tree_rss_gb']:.2f} GB | {median:.2f} s | {p90:.2f} s |")
    print(f"\nsessions still computing after the changes: {busy} of {args.sessions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
