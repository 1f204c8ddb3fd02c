"""Speed of calviz.compare: two models at n = 10⁶ (top-1 of K = 4 classes) against analysing one.

"Analysing one model" is what ``calviz check`` reports for it: ``calviz.adaptive_tcal`` and
``calviz.ece_interval`` on the (n, K) predictions, with the library's default T-Cal rule (sequential
y-only resampling) or the analytic test.  ``calviz.compare`` does the same for both models (each
model's top-1 view is reduced once and handed to both estimators) plus the paired difference.
Target: compare ≤ 2 × one model.  Two pairs: a calibrated model against an overconfident one, and
the worst case for the sequential rule, two calibrated models (the same model twice: both tests
resample until they accept).  Runs are interleaved (one A, one B, compare, ...) after a warm-up;
medians of wall time and of the process's CPU time (all threads) are reported with the ratio of
compare to each single model and to their mean.

Run: ``nice python benchmarks/bench_compare.py [--repeats 3]``.  Writes benchmarks/results/bench_compare.md.
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
RULES = {"analytic": "analytic", "sequential y-only (default)": "y_only"}
NOTE = (
    "compare runs each model's own T-Cal and ECE interval — the same work as analysing that model — and "
    "shares only the label validation and each model's top-1 reduction; nothing of one model's resampling "
    "test can serve the other's (each resamples labels from its own predictions).  So compare costs about "
    "the sum of analysing A and analysing B: at most 2 × the slower of the two, and 2 × their mean up to "
    "what is shared.  With the sequential rule a clearly miscalibrated model is rejected without "
    "resampling (Cantelli bound), so a comparison against it costs little more than analysing the other "
    "model; two calibrated models are the worst case (both tests resample until they accept)."
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


#: the seeds compare(..., seed=0) hands to model A's and model B's T-Cal: a single model is analysed with
#: the same seed, so that its sequential test draws the same resamples (and stops at the same count)
SEEDS = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(0).spawn(2)]


def one(y, p, resampling, seed):
    calviz.adaptive_tcal(y, p, resampling=resampling, seed=seed)
    calviz.ece_interval(y, p)


def both(y, a, b, resampling):
    calviz.compare(y, a, b, resampling=resampling, seed=0)


def timed(f, *args) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process — all its threads) of one call.  On a loaded shared
    machine the wall time of the same work varies by 2× from run to run; the CPU time measures the work."""
    t, c = time.perf_counter(), time.process_time()
    f(*args)
    return time.perf_counter() - t, time.process_time() - c


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    y, calibrated, over = data()
    pairs = {"calibrated vs overconfident": (calibrated, over),
             "calibrated vs calibrated": (calibrated, calibrated)}
    rows = []
    for pair, (a, b) in pairs.items():
        for rule, resampling in RULES.items():
            one(y, a, resampling, SEEDS[0])
            one(y, b, resampling, SEEDS[1])
            both(y, a, b, resampling)  # warm-up (JIT cache loads)
            t_a, t_b, t_both = [], [], []
            for _ in range(args.repeats):
                t_a.append(timed(one, y, a, resampling, SEEDS[0]))
                t_b.append(timed(one, y, b, resampling, SEEDS[1]))
                t_both.append(timed(both, y, a, b, resampling))
            wall = [float(np.median([t[0] for t in ts])) for ts in (t_a, t_b, t_both)]
            cpu = [float(np.median([t[1] for t in ts])) for ts in (t_a, t_b, t_both)]
            rows.append((pair, rule, wall, cpu, os.getloadavg()[0]))
            print(rows[-1], flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=RESULTS.parent.parent).stdout.strip()
    lines = [
        "# Comparing two models: speed (`calviz.compare`)\n",
        f"Command: `nice python benchmarks/bench_compare.py --repeats {args.repeats}`. n = {N:,} examples, "
        f"K = {K} classes, top-1 target, 15 bins; medians of {args.repeats} interleaved runs after a "
        f"warm-up; os.cpu_count() = {os.cpu_count()} (the resampling kernels use both cores); shared "
        f"machine, 1-minute load average in the table (measured after each row). calviz "
        f"{calviz.__version__}, commit {commit}.\n",
        "One model = `adaptive_tcal` + `ece_interval` on the (n, K) predictions; compare = "
        "`calviz.compare(y, a, b)` (both models' T-Cal and ECE interval, and the paired difference), each "
        "with the T-Cal rule of the row; each single model uses the seed compare gives that model's T-Cal "
        "(the same resamples, so the sequential rule stops at the same count). Target: compare ≤ 2 × one "
        "model.\n",
        "| models | T-Cal rule | clock | one model A (s) | one model B (s) | compare (s) | ÷ A | ÷ B "
        "| ÷ mean(A, B) | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for pair, rule, wall, cpu, load in rows:
        for clock, (ma, mb, m2) in (("wall", wall), ("CPU", cpu)):
            lines.append(f"| {pair} | {rule} | {clock} | {ma:.3f} | {mb:.3f} | {m2:.3f} | {m2 / ma:.2f} | "
                         f"{m2 / mb:.2f} | {2 * m2 / (ma + mb):.2f} | {load:.1f} |")
    lines += ["", NOTE]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_compare.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
