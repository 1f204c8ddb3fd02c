"""The dashboard's per-change work in Python, this checkout against another commit, in the same run.

What one control change costs the session before anything is drawn: ``ResultStore.update`` (the plan,
the cache keys, the computations answered on the session's thread) and ``Controls.options``, for each
change kind of ``bench_dashboard.py`` (bins, α, n, binning scheme, target top-1 ↔ classwise) on
n = 10⁵ top-1 predictions of a 10-class model.  Background jobs are not started (their debounce outlasts
the measurement).  Each implementation runs in its own subprocess (``PYTHONPATH`` = its checkout),
alternating change by change, so load hits both alike; medians after one warm-up round.

    python benchmarks/bench_store_update.py --base d7293ed --reps 15

The base checkout is a detached git worktree made (and removed) by this script, or an existing checkout
of the base commit (``--checkout DIR``, left as it is).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import numpy as np
from calviz._data import as_calibration_data
from calviz.app.store import ResultStore
from calviz.app.controls import Controls

rng = np.random.default_rng(0)
n, K = 100_000, 10
logits = rng.normal(size=(n, K)) * 2.0
probs = np.exp(logits - logits.max(axis=1, keepdims=True)); probs /= probs.sum(axis=1, keepdims=True)
labels = (probs.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, K - 1)
data = as_calibration_data(labels, probs)
controls = Controls()
controls.param.update(**controls.fit_to(n, K, False))
store = ResultStore(debounce=3600.0)  # background jobs never start during the measurement
CHANGES = {
    "bins": [("n_bins", v) for v in (10, 12, 14, 16, 18, 20, 22)],
    "alpha": [("alpha", v) for v in (0.04, 0.03, 0.02, 0.06, 0.07, 0.08, 0.09)],
    "n": [("n", v) for v in (50_000, 60_000, 70_000, 80_000, 90_000, 40_000, 30_000)],
    "scheme": [("scheme", v) for v in ("equal_mass", "equal_width") * 4],
    "target": [("target", v) for v in ("classwise", "top1") * 4],
}
store.update(data, controls.options(n))
# one measured change per line read on stdin ("kind round"), its seconds written back: the parent
# alternates the two implementations change by change, so the machine's load hits both alike
for line in sys.stdin:
    kind, r = line.split()
    r = int(r)
    name, value = CHANGES[kind][r % len(CHANGES[kind])]
    if kind in ("scheme", "target"):  # a fresh bin count first: no change hits a cache
        controls.n_bins = 5 + (r % 60)
        store.update(data, controls.options(n))
    setattr(controls, name, value)
    start = time.perf_counter()
    store.update(data, controls.options(n))
    print(time.perf_counter() - start, flush=True)
store.close()
"""


def start(checkout: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    return subprocess.Popen([sys.executable, "-c", CHILD], env=env, cwd=checkout, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def change(process: subprocess.Popen, kind: str, r: int) -> float:
    process.stdin.write(f"{kind} {r}\n")
    process.stdin.flush()
    return float(process.stdout.readline())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="d7293ed", help="the commit compared against")
    parser.add_argument("--reps", type=int, default=15, help="measured changes per kind")
    parser.add_argument("--checkout", type=Path, help="an existing checkout of the base (left as it is)")
    args = parser.parse_args(argv)
    print(f"n = 100,000, K = 10; cores = {os.cpu_count()}; load {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = args.checkout.resolve() if args.checkout else Path(tmp) / "base"
        if not args.checkout:
            subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=REPO, check=True,
                           capture_output=True)
        try:
            processes = {"base": start(base), "now": start(REPO)}
            times = {"base": {}, "now": {}}
            for r in range(args.reps + 1):  # round 0 warms the kernels
                for kind in ("bins", "alpha", "n", "scheme", "target"):
                    order = ("base", "now") if r % 2 else ("now", "base")
                    for name in order:
                        seconds = change(processes[name], kind, r)
                        if r:
                            times[name].setdefault(kind, []).append(seconds)
            for process in processes.values():
                process.stdin.close()
                process.wait(timeout=120)
        finally:
            if not args.checkout:
                subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=REPO,
                               capture_output=True)
    print(f"load after {os.getloadavg()}")
    count = len(times["now"]["bins"])
    print(f"{'change':<8} {'base ms':>9} {'now ms':>9} {'base/now':>9}  (medians of {count})")
    for kind in times["now"]:
        b, n = statistics.median(times["base"][kind]) * 1e3, statistics.median(times["now"][kind]) * 1e3
        print(f"{kind:<8} {b:>9.1f} {n:>9.1f} {b / n:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
