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
import time

import numpy as np

import calviz


def median_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
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
    rng = np.random.default_rng(1)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int64)
    out = {}
    for name in ("consistency", "confidence"):
        out[f"calviz {name} band, 1000 resamples, n = {n:,}"] = median_time(
            lambda name=name: calviz.corp_reliability(y, p, n_resamples=1000, bands=[name], seed=0), repeats)
    out[f"calviz both bands, 1000 resamples, n = {n:,}"] = median_time(
        lambda: calviz.corp_reliability(y, p, n_resamples=1000, seed=0), repeats)
    try:
        import probcal

        out[f"probcal consistency band, 1000 resamples, n = {n:,}"] = median_time(
            lambda: probcal.corp_reliability(y, p, bands="consistency", n_resamples=1000), 1)
    except ImportError:
        pass
    return out


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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--band-n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--coverage-reps", type=int, default=400)
    parser.add_argument("--skip", nargs="*", default=[])
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()}")
    if "speed" not in args.skip:
        rows = speed(args.n, args.repeats)
        print(f"\n## speed at n = {args.n:,} (medians of {args.repeats} after warm-up)")
        for name, t in rows.items():
            print(f"| {name} | {t:.3f} s |")
        sort = rows["calviz's sort (packed (p, y) keys, radix sort)"]
        ours = rows["calviz.corp_reliability (curve + Brier decomposition, no bands)"]
        print(f"sort share of corp_reliability: {sort / ours:.0%}")
        peers_b = [v for k, v in rows.items() if "brier" in k and not k.startswith("calviz")] + \
            [v for k, v in rows.items() if k.startswith("probcal")]
        if peers_b:
            ratio = min(peers_b) / rows["calviz.score_decomposition brier"]
            print(f"corp_reliability vs fastest peer: {min(peers_b) / ours:.1f}x; score_decomposition brier "
                  f"vs fastest peer: {ratio:.1f}x")
    if "bands" not in args.skip:
        print(f"\n## bands (medians of {max(1, args.repeats // 2)})")
        for name, t in bands(args.band_n, max(1, args.repeats // 2)).items():
            print(f"| {name} | {t:.3f} s |")
    if "coverage" not in args.skip:
        cov, se = coverage(args.coverage_reps)
        print(f"\n## consistency band pointwise coverage, n = 300, alpha = 0.1, {args.coverage_reps} reps, "
              f"500 resamples; MC se per point {se:.4f}")
        print(f"mean {cov.mean():.4f}; points within 0.9 ± 2 se: {np.mean(np.abs(cov - 0.9) <= 2 * se):.1%}; "
              f"quantiles 5/25/50/75/95%: {np.round(np.quantile(cov, [0.05, 0.25, 0.5, 0.75, 0.95]), 4)}; "
              f"min {cov.min():.4f} max {cov.max():.4f}")
        print(f"middle half of points: mean {cov[75:225].mean():.4f}, within ±2 se: "
              f"{np.mean(np.abs(cov[75:225] - 0.9) <= 2 * se):.1%}")


if __name__ == "__main__":
    main()
