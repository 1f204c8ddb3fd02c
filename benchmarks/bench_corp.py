"""CORP reliability and score decomposition: speed against model-diagnostics and probcal in the same run,
the bands' cost, and the consistency band's pointwise coverage under calibration (simulation).

    nice python benchmarks/bench_corp.py [--n 1000000] [--repeats 5] [--coverage-reps 400]

Speed: medians of ``--repeats`` runs after one warm-up (JIT compiled, caches warm), binary predictions
with 3 decimals (ties) and y ~ Bernoulli(p^1.3).  calviz's sort (a radix sort of packed (prediction,
label) keys) is timed separately to state its share.  Coverage: fixed predictions (n = 300, uniform),
calibrated labels redrawn per replication, band from 500 resamples at α = 0.1; reports pointwise
coverage with its Monte Carlo se.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

import calviz

CPU = {}


def median_time(fn, repeats):
    """Median wall time; the median CPU time of the same runs (all threads) is kept in CPU under the
    same call order, since on a loaded shared machine CPU seconds / cores estimates the quiet wall time."""
    fn()  # warm-up
    times, cpu = [], []
    for _ in range(repeats):
        c, t = time.process_time(), time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    CPU[len(CPU)] = statistics.median(cpu)
    return statistics.median(times)


def speed(n, repeats):
    rng = np.random.default_rng(0)
    p = np.round(rng.uniform(0.001, 0.999, size=n), 3)
    y = (rng.uniform(size=n) < p ** 1.3).astype(np.int64)
    from calviz._kernels.sorting import radix_sort_keys
    from calviz._kernels.tcal import binary_sort_keys

    rows = {}
    rows["calviz's sort (packed (p, y) keys, radix sort)"] = median_time(
        lambda: radix_sort_keys(binary_sort_keys(p, y).view(np.int64)), repeats)
    rows["np.argsort(p) (the comparison sort the peers and weighted calviz use)"] = median_time(
        lambda: np.argsort(p, kind="stable"), repeats)
    rows["calviz.corp_reliability (curve + Brier decomposition, no bands)"] = median_time(
        lambda: calviz.corp_reliability(y, p, n_resamples=0), repeats)
    rows["calviz.score_decomposition brier"] = median_time(lambda: calviz.score_decomposition(y, p), repeats)
    rows["calviz.score_decomposition log"] = median_time(
        lambda: calviz.score_decomposition(y, p, score="log"), repeats)
    try:
        from model_diagnostics.scoring import LogLoss, SquaredError, decompose

        rows["model-diagnostics decompose brier"] = median_time(
            lambda: decompose(y, p, scoring_function=SquaredError()), repeats)
        rows["model-diagnostics decompose log"] = median_time(
            lambda: decompose(y, p, scoring_function=LogLoss()), repeats)
    except ImportError:
        pass
    try:
        import probcal

        rows["probcal corp_reliability (curve + Brier and log decompositions, no bands)"] = median_time(
            lambda: probcal.corp_reliability(y, p, bands=None), repeats)
    except ImportError:
        pass
    return rows


def bands(n, repeats):
    """Yields (name, wall seconds, CPU seconds) as each timing completes."""
    rng = np.random.default_rng(1)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int64)
    runs = [(f"calviz {name} band, 1000 resamples",
             lambda name=name: calviz.corp_reliability(y, p, n_resamples=1000, bands=[name], seed=0))
            for name in ("consistency", "confidence")]
    runs.append(("calviz both bands, 1000 resamples", lambda: calviz.corp_reliability(y, p, n_resamples=1000,
                                                                                       seed=0)))
    from calviz.analysis import AnalysisOptions
    from calviz.analysis.compute import compute_corp

    data = calviz.as_calibration_data(y, p)
    # what the dashboard's background job computes in the CORP mode: the curve and its consistency band
    runs.append(("the app's CORP view (compute_corp: curve + consistency band, 1000 resamples)",
                 lambda: compute_corp(data, AnalysisOptions(scheme="corp", n_resamples=1000))))
    try:
        import probcal

        # probcal refits in Python per resample: 100 resamples (its cost is linear in them)
        runs.append(("probcal consistency band, 100 resamples",
                     lambda: probcal.corp_reliability(y, p, bands="consistency", n_resamples=100)))
    except ImportError:
        pass
    for name, fn in runs:
        wall = median_time(fn, repeats)
        yield name, wall, CPU[len(CPU) - 1]


def coverage(reps, n=300, alpha=0.1, resamples=500):
    rng = np.random.default_rng(2024)
    z = np.sort(rng.uniform(size=n))
    inside = []
    for r in range(reps):
        y = (rng.uniform(size=n) < z).astype(np.int64)
        corp = calviz.corp_reliability(y, z, n_resamples=resamples, bands=["consistency"], alpha=alpha,
                                       seed=r)
        curve = corp.predict(corp.band_x)
        inside.append((curve >= corp.consistency_low) & (curve <= corp.consistency_high))
    cov = np.mean(inside, axis=0)
    se = np.sqrt(alpha * (1 - alpha) / reps)
    return cov, se


RESULT = Path(__file__).resolve().parent / "results" / "bench_corp.md"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--band-n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--coverage-reps", type=int, default=400)
    parser.add_argument("--skip", nargs="*", default=[])
    args = parser.parse_args()
    lines = []

    def emit(text=""):
        print(text, flush=True)
        lines.append(text)
        if not args.skip:  # written as it goes: a run cut short keeps what it measured
            RESULT.write_text("\n".join(lines) + "\n")

    command = "nice python benchmarks/bench_corp.py " + " ".join(sys.argv[1:])
    emit("# bench_corp — CORP reliability diagrams and score decompositions")
    emit()
    emit(f"Command: `{command.strip()}` · `os.cpu_count()` = {os.cpu_count()} · numba threads "
         f"{numba.get_num_threads()} · 1-minute load average at start {os.getloadavg()[0]:.1f} "
         "(shared machine: absolute timings are pessimistic and noisy; the ratios are from the same run).")
    if "speed" not in args.skip:
        rows = speed(args.n, args.repeats)
        emit()
        emit(f"## Speed at n = {args.n:,}: calviz against model-diagnostics and probcal (medians of "
             f"{args.repeats} after warm-up; binary, 3-decimal predictions)")
        emit()
        emit("| computation | seconds |")
        emit("|---|---:|")
        for name, t in rows.items():
            emit(f"| {name} | {t:.3f} |")
        sort = rows["calviz's sort (packed (p, y) keys, radix sort)"]
        ours = rows["calviz.corp_reliability (curve + Brier decomposition, no bands)"]
        emit()
        emit(f"calviz's sort is {sort / ours:.0%} of `corp_reliability`; the peers sort with a comparison "
             "sort (the np.argsort row) — with sample weights calviz does too.")
        peers = [v for k, v in rows.items() if not k.startswith(("calviz", "np."))]
        if peers:
            fastest = min(peers)
            ratio = fastest / rows["calviz.score_decomposition brier"]
            emit(f"Ratio to the fastest peer ({fastest:.3f} s): `corp_reliability` {fastest / ours:.1f}×, "
                 f"`score_decomposition` (Brier) {ratio:.1f}× (target ≥ 3×).")
    if "bands" not in args.skip:
        reps = max(1, args.repeats // 2)
        emit()
        emit(f"## Bands: 1000 resamples at n = {args.band_n:,} (medians of {reps} after warm-up; target "
             "≤ 2 s on 2 quiet cores)")
        emit()
        emit("| computation | wall seconds | CPU seconds (all threads) | CPU seconds / 2 cores |")
        emit("|---|---:|---:|---:|")
        for name, t, cpu in bands(args.band_n, reps):
            emit(f"| {name} | {t:.3f} | {cpu:.3f} | {cpu / 2:.3f} |")
        emit()
        emit("On the loaded machine the wall time is mostly waiting for a core; CPU seconds / 2 is the wall "
             "time the same work takes on 2 otherwise idle cores (both bands' kernels run on numba threads).")
    if "coverage" not in args.skip:
        cov, se = coverage(args.coverage_reps)
        middle = cov[75:225]
        emit()
        emit(f"## Consistency band: pointwise coverage under calibration (n = 300 fixed uniform predictions, "
             f"α = 0.1, {args.coverage_reps} replications, 500 resamples each)")
        emit()
        emit(f"Monte Carlo se of one point's coverage: √(0.9·0.1/{args.coverage_reps}) = {se:.4f}.")
        emit()
        emit("| points | mean coverage | within 0.9 ± 2 se | 5% / 50% / 95% quantile | min / max |")
        emit("|---|---:|---:|---|---|")
        for label, c in (("all 300", cov), ("middle 150 (ranks 75–224)", middle)):
            q = np.quantile(c, [0.05, 0.5, 0.95])
            emit(f"| {label} | {c.mean():.4f} | {np.mean(np.abs(c - 0.9) <= 2 * se):.1%} | "
                 f"{q[0]:.3f} / {q[1]:.3f} / {q[2]:.3f} | {c.min():.3f} / {c.max():.3f} |")
        emit()
        emit("The bands use outward quantiles (the lower α/2 quantile rounded down, the upper rounded up), "
             "so where the refitted curve is discrete — the few rows of the first and last PAV blocks — they "
             "cover more than 1 − α.")
    emit(f"\n1-minute load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
