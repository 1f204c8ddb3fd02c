"""The dashboard session's work per control change at 10⁷ rows × K = 10, this checkout against another
checkout, in the same run.

What one change costs the session before its views can draw (``ResultStore.update``: the plan, the cache
keys and every computation answered on the session's thread — what the page shows as "visible"), for
bins, α, binning scheme and target (top-1 ↔ classwise, a fresh bin count first so no change hits a
cache), on n = 10⁷ top-1 / classwise predictions of a 10-class model.  Background jobs are not started
(their debounce outlasts the measurement).  This checkout first builds the sorted views of the two targets
(in its worker process, once per server; the build time and the bytes held are reported); then the two
implementations run in their own subprocesses, alternating change by change so load hits both alike;
medians and 90th percentiles after one warm-up round.  Also reported: the passes over the rows each
change made (``ResultStore.passes``: 0 when every view was answered from a sorted view or a cache).

    nice python benchmarks/bench_store_large.py --base /tmp/base --reps 10

``--base``: a checkout (a worktree of the commit compared against), read only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, time
import numpy as np
from calviz._data import as_calibration_data
from calviz.app.store import ResultStore
from calviz.app.controls import Controls

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS"))

def main():
    n, K = int(sys.argv[1]), 10
    rng = np.random.default_rng(0)
    probs = np.empty((n, K))
    labels = np.empty(n, dtype=np.int64)
    for s in range(0, n, 1_000_000):  # (in blocks: no 10⁷ × K temporaries)
        e = min(n, s + 1_000_000)
        logits = rng.normal(size=(e - s, K)) * 2.0
        p = np.exp(logits - logits.max(axis=1, keepdims=True)); p /= p.sum(axis=1, keepdims=True)
        probs[s:e] = p
        labels[s:e] = (p.cumsum(axis=1) < rng.random((e - s, 1))).sum(axis=1).clip(0, K - 1)
    data = as_calibration_data(labels, probs)
    del probs
    try:  # as a server holds it: one copy in shared memory, mapped by the worker processes
        from calviz.app.workers import share_data
        data = share_data(data)
    except ImportError:
        pass
    controls = Controls()
    controls.param.update(**controls.fit_to(n, K, False))
    store = ResultStore(debounce=3600.0)  # background jobs never start during the measurement
    info = {"rss_data": rss()}
    start = time.perf_counter()
    store.update(data, controls.options(n))
    info["first_update"] = time.perf_counter() - start
    try:
        from calviz.app import precomputed
    except ImportError:
        precomputed = None
    if precomputed is not None:  # build both targets' sorted views (in the worker), timed
        start = time.perf_counter()
        for target in (("top1", 0), ("classwise", 0)):
            future = precomputed.SORTED.request(data, target, store._build_sorted)
            future.result(timeout=3600)
        info["build_s"] = time.perf_counter() - start
        info["sorted_bytes"] = precomputed.SORTED.nbytes()
    info["rss_ready"] = rss()
    print(json.dumps(info), flush=True)
    CHANGES = {
        "bins": [("n_bins", v) for v in (10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)],
        "alpha": [("alpha", v) for v in (0.04, 0.03, 0.02, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.13)],
        "scheme": [("scheme", v) for v in ("equal_mass", "equal_width") * 6],
        "target": [("target", v) for v in ("classwise", "top1") * 6],
    }
    for line in sys.stdin:
        kind, r = line.split()
        r = int(r)
        name, value = CHANGES[kind][r % len(CHANGES[kind])]
        if kind in ("scheme", "target"):  # a fresh bin count first: no change hits a cache
            controls.n_bins = 31 + (r % 60)
            store.update(data, controls.options(n))
        passes = sum(getattr(store, "passes", {}).values())
        setattr(controls, name, value)
        start = time.perf_counter()
        store.update(data, controls.options(n))
        seconds = time.perf_counter() - start
        after = sum(getattr(store, "passes", {}).values())
        print(json.dumps({"s": seconds, "passes": after - passes if hasattr(store, "passes") else None}),
              flush=True)
    store.close()

if __name__ == "__main__":
    main()
"""


def start(checkout: Path, n: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    script = Path(f"/tmp/bench_store_large_{os.getpid()}_{checkout.name}.py")
    script.write_text(CHILD)  # (a file: the worker processes are spawned and re-import __main__)
    return subprocess.Popen([sys.executable, str(script), str(n)], env=env, cwd=checkout,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def change(process: subprocess.Popen, kind: str, r: int) -> dict:
    process.stdin.write(f"{kind} {r}\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def p90(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="/tmp/base", help="checkout compared against (read only)")
    parser.add_argument("--reps", type=int, default=10, help="measured changes per kind")
    parser.add_argument("--n", type=int, default=10_000_000, help="rows")
    args = parser.parse_args(argv)
    print(f"n = {args.n:,}, K = 10; cores = {os.cpu_count()}; load {os.getloadavg()}", flush=True)
    processes = {"base": start(Path(args.base), args.n), "now": start(REPO, args.n)}
    for name, process in processes.items():  # (one after the other: the data and the builds)
        print(name, process.stdout.readline().strip(), flush=True)
    times = {"base": {}, "now": {}}
    passes = {"base": {}, "now": {}}
    started = time.monotonic()
    for r in range(args.reps + 1):  # round 0 warms the kernels
        for kind in ("bins", "alpha", "scheme", "target"):
            order = ("base", "now") if r % 2 else ("now", "base")
            for name in order:
                out = change(processes[name], kind, r)
                if r:
                    times[name].setdefault(kind, []).append(out["s"])
                    passes[name].setdefault(kind, []).append(out["passes"])
    for process in processes.values():
        process.stdin.close()
        process.wait(timeout=600)
    print(f"load after {os.getloadavg()}; {time.monotonic() - started:.0f} s of changes")
    count = len(times["now"]["bins"])
    print(f"{'change':<8} {'base median':>12} {'base p90':>9} {'now median':>11} {'now p90':>9} {'ratio':>7} "
          f"{'passes/change (now)':>20}  (ms; {count} changes each)")
    for kind in times["now"]:
        b, nw = times["base"][kind], times["now"][kind]
        print(f"{kind:<8} {statistics.median(b) * 1e3:>12.1f} {p90(b) * 1e3:>9.1f} "
              f"{statistics.median(nw) * 1e3:>11.1f} {p90(nw) * 1e3:>9.1f} "
              f"{statistics.median(b) / statistics.median(nw):>7.1f} "
              f"{statistics.mean(passes['now'][kind]):>20.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
