"""Speed of adaptive T-Cal (issue 3 acceptance), medians of repeated runs after JIT warm-up.

* n = 10⁴ binary predictions (P₀), 1000 y-only resamples, all B = 24 dyadic scales: calviz vs a
  straightforward numpy implementation of the same procedure (bin ids per scale precomputed and
  compressed with np.unique, then per resample fresh labels and per scale np.bincount), same run.
  Target: < 0.5 s and ≥ 30× faster.
* n = 10⁶, 200 y-only resamples (target < 20 s); consistency resampling for comparison.
* "analytic" on n = 10⁶ (target < 0.3 s), against the same test computed from per-scale bin sums
  (calviz.binning.equal_width_ids + calviz.ece.bin_sums at each of the B scales + analytic_tcal_from_sums;
  Satterthwaite there, so p-values differ slightly from the in-memory third-cumulant version).
* full calibration (K = 3, simplex partition), n = 10⁵: analytic and 200 y-only resamples (no target).

    python benchmarks/bench_tcal.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np

import calviz
import calviz.tcal as T
from calviz.binning import equal_width_ids
from calviz.ece import bin_sums

OUT = Path(__file__).resolve().parent / "results"


def numpy_adaptive_tcal(y, z, n_resamples, alpha, rng):
    """Straightforward numpy adaptive T-Cal with y-only resampling (the comparison baseline)."""
    n = z.shape[0]
    _, levels = T.dyadic_scales(n, 2)
    scales = []
    for b in range(1, levels + 1):
        m = 2**b
        raw = np.minimum(np.floor(z * m).astype(np.int64), m - 1)
        _, ids = np.unique(raw, return_inverse=True)
        k = int(ids.max()) + 1
        scales.append((ids, k, np.bincount(ids, minlength=k)))

    def statistic(v):
        out = np.empty(levels)
        for i, (ids, k, count) in enumerate(scales):
            s = np.bincount(ids, weights=v, minlength=k)
            q = np.bincount(ids, weights=v * v, minlength=k)
            out[i] = ((s * s - q) / count).sum() / n
        return out

    t_obs = statistic(y - z)
    boot = np.empty((n_resamples, levels))
    for r in range(n_resamples):
        ystar = (rng.random(n) < z).astype(np.float64)
        boot[r] = statistic(ystar - z)
    p = (1.0 + (boot >= t_obs).sum(axis=0)) / (n_resamples + 1.0)
    return bool(p.min() <= alpha / levels), p


def timed(fn, repeats):
    fn()  # warm-up (JIT compile, caches)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller n for a smoke run")
    args = ap.parse_args()
    quick = args.quick
    cmd = "python benchmarks/" + Path(__file__).name + " " + " ".join(sys.argv[1:])
    load_start = os.getloadavg()[0]
    header = (f"{cmd}\nos.cpu_count()={os.cpu_count()} numba threads={numba.get_num_threads()} "
              f"load average={load_start:.1f}")
    print(header, flush=True)
    rng = np.random.default_rng(0)
    rows = []

    def record(name, n, median, times, target=None, ratio=None, note=""):
        rows.append((name, n, median, len(times), target, ratio, note))
        extra = f" ratio {ratio:.1f}x" if ratio is not None else ""
        print(f"{name:55s} n={n:>8d} median {median:.4f} s over {len(times)} runs{extra} {note}", flush=True)

    # 1. n = 1e4, 1000 y-only resamples vs numpy
    n = 10_000
    z = rng.random(n)
    y = (rng.random(n) < z).astype(np.int64)
    med, ts = timed(lambda: calviz.adaptive_tcal(y, z, n_resamples=1000, seed=1), 3 if quick else 7)
    base_rng = np.random.default_rng(5)
    base_med, base_ts = timed(lambda: numpy_adaptive_tcal(y, z.astype(float), 1000, 0.05, base_rng),
                              1 if quick else 3)
    record("adaptive T-Cal, y-only, 1000 resamples (calviz)", n, med, ts, 0.5, base_med / med)
    record("same procedure, straightforward numpy (np.bincount)", n, base_med, base_ts)
    ours = calviz.adaptive_tcal(y, z, n_resamples=1000, seed=1)
    _, p_np = numpy_adaptive_tcal(y, z.astype(float), 1000, 0.05, np.random.default_rng(5))
    print(f"  statistics agree; p-values (different random streams): calviz min {ours.pvalues.min():.3f}, "
          f"numpy min {p_np.min():.3f}", flush=True)
    med_c, ts_c = timed(lambda: calviz.adaptive_tcal(y, z, resampling="consistency", n_resamples=1000,
                                                     seed=1), 3 if quick else 5)
    record("adaptive T-Cal, consistency, 1000 resamples", n, med_c, ts_c)

    # 2. n = 1e6
    n = 100_000 if quick else 1_000_000
    z = rng.random(n)
    y = (rng.random(n) < z).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 200 resamples cannot reject over B = 37 scales: a speed test
        med, ts = timed(lambda: calviz.adaptive_tcal(y, z, n_resamples=200, seed=2), 3)
        record("adaptive T-Cal, y-only, 200 resamples", n, med, ts, 20.0)
        med, ts = timed(
            lambda: calviz.adaptive_tcal(y, z, resampling="consistency", n_resamples=200, seed=2), 3)
        record("adaptive T-Cal, consistency, 200 resamples", n, med, ts)
    med, ts = timed(lambda: calviz.adaptive_tcal(y, z, resampling="analytic"), 3 if quick else 7)
    r = calviz.adaptive_tcal(y, z, resampling="analytic")

    def per_scale_sums():
        # one binning + BinSums pass per scale; ids compressed to the non-empty bins (dense_ids), since
        # the fine scales have up to 2^37 bins
        yf = y.astype(float)
        sums = [bin_sums(equal_width_ids(z, m), z, yf) for m in r.n_bins]
        return T.analytic_tcal_from_sums(sums, r.n_bins)

    med_s, ts_s = timed(per_scale_sums, 1 if quick else 3)
    record("adaptive T-Cal, analytic (one pass, all scales)", n, med, ts, 0.3, med_s / med)
    record("analytic from per-scale bin sums (B passes)", n, med_s, ts_s)
    med, ts = timed(lambda: calviz.adaptive_tcal(y, z, resampling="threshold"), 3)
    record("adaptive T-Cal, Chebyshev thresholds", n, med, ts)

    # 3. full calibration, K = 3
    n = 20_000 if quick else 100_000
    zf = rng.dirichlet(np.ones(3), n)
    lf = (zf.cumsum(1) < rng.random(n)[:, None]).sum(1).clip(0, 2)
    med, ts = timed(lambda: calviz.adaptive_tcal(lf, zf, target="full", resampling="analytic"), 3)
    record("full K=3 (simplex), analytic", n, med, ts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        med, ts = timed(lambda: calviz.adaptive_tcal(lf, zf, target="full", n_resamples=200, seed=3), 3)
    record("full K=3 (simplex), y-only, 200 resamples", n, med, ts)

    OUT.mkdir(exist_ok=True)
    lines = [
        "# T-Cal speed",
        "",
        f"Command: `{cmd}`; os.cpu_count() = {os.cpu_count()}; numba threads = {numba.get_num_threads()}; "
        f"1-min load average {load_start:.1f} at start, {os.getloadavg()[0]:.1f} at the end. Medians after a "
        "warm-up run. NOTE: measured on a "
        "2-core machine shared by several developers at the same time — timings are pessimistic.",
        "",
        "| what | n | median (s) | runs | target (s) | ratio to the alternative below it |",
        "|---|---|---|---|---|---|",
    ]
    for name, n, med, runs, target, ratio, _ in rows:
        t = f"< {target}" + (" ✓" if med < target else " ✗") if target else ""
        r = f"{ratio:.1f}×" if ratio else ""
        lines.append(f"| {name} | {n:,} | {med:.4f} | {runs} | {t} | {r} |")
    lines += ["", "Baseline: bin ids per scale precomputed and compressed once; per resample fresh labels "
              "(rng.random(n) < z) and per scale two np.bincount calls (residual sums, squared sums).",
              f"B = {T.dyadic_scales(10_000)[1]} scales at n = 10⁴, {T.dyadic_scales(1_000_000)[1]} at "
              "n = 10⁶ (B = ⌈2 log₂(n/√ln n)⌉)."]
    (OUT / "bench_tcal.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT / 'bench_tcal.md'}", flush=True)


if __name__ == "__main__":
    main()
