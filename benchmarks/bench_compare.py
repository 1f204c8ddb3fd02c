"""Speed of calviz.compare: two models at n = 10⁶ (top-1 of K = 4 classes) against analysing one.

"Analysing one model" is what ``calviz check`` reports for it: ``calviz.adaptive_tcal`` and
``calviz.ece_interval`` on the (n, K) predictions.  ``calviz.compare`` does the same for both models
(each model's top-1 view is reduced once and handed to both estimators) plus the paired difference.
Target: compare ≤ 2 × one model.  Runs are interleaved (one, compare, one, compare, ...) after a
warm-up, and the ratio of medians is reported for analytic and for y-only resampled T-Cal.

Run: ``nice python benchmarks/bench_compare.py [--repeats 5]``.  Writes benchmarks/results/bench_compare.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import calviz  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
N, K = 1_000_000, 4
NOTE = (
    "With resampled T-Cal nearly all the time is the two models' own resampling tests (one per model, "
    "nothing to share between them), so the ratio cannot fall below 2; with the analytic test (the "
    "default of `compare`, the app and `calviz check`) the shared label validation and the single top-1 "
    "reduction per model keep it below 2 (ratios vary by ±0.3 with the load of this shared machine)."
)


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(N, K)) * 1.5
    q = np.exp(logits)
    q /= q.sum(axis=1, keepdims=True)
    y = (q.cumsum(axis=1) < rng.random((N, 1))).sum(axis=1)  # y ~ Categorical(q)
    over = np.exp(1.6 * logits)
    over /= over.sum(axis=1, keepdims=True)
    return y, q, over


def one(y, p, resampling):
    calviz.adaptive_tcal(y, p, resampling=resampling, seed=0)
    calviz.ece_interval(y, p)


def both(y, a, b, resampling):
    calviz.compare(y, a, b, resampling=resampling, seed=0)


def timed(f, *args) -> float:
    t = time.perf_counter()
    f(*args)
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    y, a, b = data()
    rows = []
    for resampling in ("analytic", "y_only"):
        one(y, a, resampling)
        both(y, a, b, resampling)  # warm-up (JIT cache loads)
        t_one, t_both = [], []
        for _ in range(args.repeats):
            t_one.append(timed(one, y, a, resampling))
            t_both.append(timed(both, y, a, b, resampling))
        m1, m2 = float(np.median(t_one)), float(np.median(t_both))
        rows.append((resampling, m1, m2, m2 / m1, os.getloadavg()[0]))
        print(rows[-1], flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=RESULTS.parent.parent).stdout.strip()
    lines = [
        "# Comparing two models: speed (`calviz.compare`)\n",
        f"Command: `python benchmarks/bench_compare.py --repeats {args.repeats}`. n = {N:,} examples, "
        f"K = {K} classes, top-1 target, 15 bins; medians of {args.repeats} interleaved runs after a "
        f"warm-up; os.cpu_count() = {os.cpu_count()} (the resampling kernels use both cores); shared "
        f"machine, load average in the table. calviz {calviz.__version__}, commit {commit}.\n",
        "One model = `adaptive_tcal` + `ece_interval` on the (n, K) predictions; compare = "
        "`calviz.compare(y, a, b)` (both models' T-Cal and ECE interval, and the paired difference). "
        "Target: ratio ≤ 2.\n",
        "| T-Cal resampling | one model (s) | compare two (s) | ratio | load average |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {r} | {m1:.3f} | {m2:.3f} | {ratio:.2f} | {load:.1f} |" for r, m1, m2, ratio, load in rows]
    lines += ["", NOTE]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_compare.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
