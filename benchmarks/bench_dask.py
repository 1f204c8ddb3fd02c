"""calviz on Dask: out-of-core throughput on Parquet, and the ratio to the in-memory engine.

    python benchmarks/bench_dask.py            # 10^8 binary predictions (~0.9 GB of Parquet), 10^7 comparison
    python benchmarks/bench_dask.py --quick    # 10^6 rows, 10^6 comparison

Data: binary predictions p ~ U(0, 1), y ~ Ber(p^1.1) (mildly mis-calibrated), written in chunks of 10^6
rows (one Parquet file each) under --dir (default: $TMPDIR/calviz_bench_dask; not in the repository).
Cluster: dask.distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
memory_limit="2GB") — the data (~0.9-1.6 GB in memory) is larger than one worker's limit, so the
computation must stream partitions.

Timed (medians of --repeats runs after one warm-up run that also compiles the kernels on the workers):
the one-pass estimators calviz.dask.binned_ece, debiased_ece, ece_interval, reliability (each is a full
pass over the Parquet data), adaptive T-Cal with analytic critical values (two passes), and — on the
comparison subset only — the exact Laplace kCE (global sort + scan).  The comparison subset (the first
10^7 rows, i.e. the first 10 files; --quick: all 10^6 rows) is also loaded into memory and run through the
in-memory engine; "ratio" = in-memory rows/s ÷ Dask rows/s on the same rows (how much slower Dask is,
including Parquet reading) and the results are checked to agree.
Writes benchmarks/results/bench_dask.md.
"""

from __future__ import annotations

import argparse
import glob
import importlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

def chunk_rows(n_rows: int) -> int:
    """Rows per Parquet file: 10^6, or n/10 for small runs (so that there are several partitions)."""
    return max(1, min(1_000_000, n_rows // 10))


def generate(directory: Path, n_rows: int, seed: int = 2024) -> float:
    """Write n_rows binary predictions as Parquet files of chunk_rows(n_rows) rows; returns seconds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    chunk = chunk_rows(n_rows)
    n_files = (n_rows + chunk - 1) // chunk
    seqs = np.random.SeedSequence(seed).spawn(n_files)
    for i in range(n_files):
        path = directory / f"part.{i:05d}.parquet"
        if path.exists():
            continue
        rows = min(chunk, n_rows - i * chunk)
        rng = np.random.default_rng(seqs[i])
        p = rng.random(rows)
        y = (rng.random(rows) < p**1.1).astype(np.int8)
        table = pa.table({"y_true": y, "y_prob": p})
        tmp = path.with_suffix(".tmp")
        pq.write_table(table, tmp, compression="snappy")
        tmp.rename(path)
    return time.perf_counter() - start


def _settle(timeout: float = 30.0) -> None:
    """Wait until the scheduler holds no task of the previous run, so that a repeated graph (same keys)
    is recomputed instead of reusing results that are still in worker memory."""
    try:
        import distributed

        client = distributed.get_client()
    except (ImportError, ValueError):
        return
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0:
            return
        time.sleep(0.05)


def timed(fn, repeats: int, warmup: bool = True):
    if warmup:
        fn()  # warm-up (kernel compilation on the workers, file-system cache)
    times = []
    result = None
    for _ in range(repeats):
        _settle()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10^6 rows")
    parser.add_argument("--rows", type=int, default=None, help="rows of the big data set (default 10^8)")
    parser.add_argument("--compare-rows", type=int, default=None, help="rows of the in-memory comparison")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "calviz_bench_dask"))
    parser.add_argument("--keep", action="store_true", help="keep the generated Parquet files")
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--heavy-budget", type=float, default=1500.0,
                        help="skip a sort-based estimator on the big data when its time extrapolated "
                             "from the comparison run exceeds this many seconds")
    args = parser.parse_args(argv)
    load_start = os.getloadavg()[0]
    n_rows = args.rows or (10**6 if args.quick else 10**8)
    n_cmp = min(args.compare_rows or (10**6 if args.quick else 10**7), n_rows)
    repeats = args.repeats or (3 if args.quick else 1)

    import dask
    import distributed
    import pandas as pd

    import calviz.dask as cdask

    ece = importlib.import_module("calviz._ece")
    intervals = importlib.import_module("calviz._intervals")
    tcal = importlib.import_module("calviz._tcal")
    distance = importlib.import_module("calviz._distance")

    directory = Path(args.dir) / f"n{n_rows}"
    gen_s = generate(directory, n_rows)
    files = sorted(glob.glob(str(directory / "*.parquet")))
    size_gb = sum(os.path.getsize(f) for f in files) / 1e9
    chunk = chunk_rows(n_rows)
    cmp_files = files[: max(1, n_cmp // chunk)]
    n_cmp = min(n_cmp, len(cmp_files) * chunk)
    print(f"command: {' '.join([sys.executable] + sys.argv)}")
    print(f"n = {n_rows:,} rows in {len(files)} Parquet files ({size_gb:.2f} GB, generated in {gen_s:.1f} s);"
          f" comparison n = {n_cmp:,}; os.cpu_count() = {os.cpu_count()}; dask {dask.__version__}")

    lines = []
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=args.memory_limit, dashboard_address=None)
    client = distributed.Client(cluster)
    failures = []
    skipped = []
    big_rows = []
    cmp_rows = []
    try:
        big = cdask.from_parquet(str(directory), y_true="y_true", y_prob="y_prob")
        small = cdask.from_parquet(cmp_files, y_true="y_true", y_prob="y_prob")
        # comparison on the same rows in memory
        frame = pd.concat([pd.read_parquet(f) for f in cmp_files], ignore_index=True)
        y = frame["y_true"].to_numpy(np.int64)
        p = frame["y_prob"].to_numpy(np.float64)
        del frame
        in_memory = {
            "binned_ece (ℓ1, 15 bins)": (lambda: ece.binned_ece(y, p, n_bins=15),
                                         lambda: cdask.binned_ece(small, n_bins=15)),
            "debiased_ece (T^d, 15 bins)": (lambda: ece.debiased_ece(y, p, n_bins=15),
                                            lambda: cdask.debiased_ece(small, n_bins=15)),
            "ece_interval (Sun et al. (2024), 15 bins)": (lambda: intervals.ece_interval(y, p, n_bins=15),
                                                 lambda: cdask.ece_interval(small, n_bins=15)),
            "reliability (15 bins, Wilson)": (lambda: ece.reliability(y, p, n_bins=15),
                                              lambda: cdask.reliability(small, n_bins=15)),
            "adaptive_tcal analytic": (lambda: tcal.adaptive_tcal(y, p, resampling="analytic"),
                                       lambda: cdask.adaptive_tcal(small, resampling="analytic")),
            "laplace_kce (exact, global sort)": (lambda: distance.laplace_kce(y, p),
                                                 lambda: cdask.laplace_kce(small)),
            "adaptive_tcal y-only (256 resamples, seed 0)": (
                lambda: _quiet(tcal.adaptive_tcal, y, p, n_resamples=256, seed=0),
                lambda: _quiet(cdask.adaptive_tcal, small, n_resamples=256, seed=0)),
        }
        cmp_rows = []
        cmp_seconds = {}
        for name, (mem_fn, dask_fn) in in_memory.items():
            try:
                mem_s, mem_res = timed(mem_fn, max(repeats, 3))
                dk_s, dk_res = timed(dask_fn, repeats)
                agree = _agreement(mem_res, dk_res)
                cmp_rows.append((name, mem_s, dk_s, agree))
                cmp_seconds[name] = dk_s
                print(f"[n={n_cmp:,}] {name}: in-memory {mem_s:.3f} s, dask {dk_s:.2f} s, "
                      f"ratio {dk_s / mem_s:.1f}x, agreement {agree}", flush=True)
            except Exception as exc:
                failures.append(f"{name} comparison: {type(exc).__name__}: {exc}")
                print("FAILED", failures[-1])
        one_pass = {
            "binned_ece (ℓ1, 15 bins)": lambda d: cdask.binned_ece(d, n_bins=15),
            "debiased_ece (T^d, 15 bins)": lambda d: cdask.debiased_ece(d, n_bins=15),
            "ece_interval (Sun et al. (2024), 15 bins)": lambda d: cdask.ece_interval(d, n_bins=15),
            "reliability (15 bins, Wilson)": lambda d: cdask.reliability(d, n_bins=15),
        }
        big_rows = []
        for name, fn in one_pass.items():
            try:
                # kernels are warm from the comparison runs; a warm-up pass over 10^8 rows is not repeated
                sec, _ = timed(lambda fn=fn: fn(big), repeats, warmup=args.quick)
                big_rows.append((name, sec, n_rows / sec))
                print(f"[dask n={n_rows:,}] {name}: {sec:.2f} s, {n_rows / sec:,.0f} rows/s", flush=True)
            except Exception as exc:  # report, do not hide
                failures.append(f"{name} on n={n_rows}: {type(exc).__name__}: {exc}")
                print("FAILED", failures[-1])
        heavy = {  # not one-pass: two passes (T-Cal) or a global sort (kCE; T-Cal fine scales)
            "adaptive_tcal analytic (all scales, exact)":
                (lambda d: cdask.adaptive_tcal(d, resampling="analytic"), "adaptive_tcal analytic"),
            "laplace_kce (exact, global sort + scan)":
                (lambda d: cdask.laplace_kce(d), "laplace_kce (exact, global sort)"),
        }
        for name, (fn, cmp_name) in heavy.items():
            estimate = cmp_seconds.get(cmp_name, 0.0) * n_rows / n_cmp
            if estimate > args.heavy_budget:
                skipped.append(f"{name} on n={n_rows:,}: skipped, estimated {estimate:.0f} s from the "
                               f"{n_cmp:,}-row run exceeds --heavy-budget {args.heavy_budget:.0f} s")
                print(skipped[-1], flush=True)
                continue
            try:
                sec, res = timed(lambda fn=fn: fn(big), repeats, warmup=args.quick)
                label = name if not hasattr(res, "n_bins") else f"{name}, {len(res.n_bins)} scales"
                big_rows.append((label, sec, n_rows / sec))
                print(f"[dask n={n_rows:,}] {label}: {sec:.2f} s, {n_rows / sec:,.0f} rows/s")
            except Exception as exc:
                failures.append(f"{name} on n={n_rows}: {type(exc).__name__}: {exc}")
                print("FAILED", failures[-1])

        rss = client.run(_rss_mb)
    finally:
        client.close()
        cluster.close()
        if not args.keep and not args.quick:
            shutil.rmtree(directory, ignore_errors=True)

    lines.append("# calviz on Dask (benchmarks/bench_dask.py)\n")
    lines.append(f"Command: `python benchmarks/bench_dask.py{' --quick' if args.quick else ''}`; "
                 f"os.cpu_count() = {os.cpu_count()}; dask {dask.__version__}; LocalCluster with 2 worker "
                 f"processes × 1 thread, memory_limit = {args.memory_limit} per worker; medians of {repeats} "
                 "run(s) after warm-up (on the big data the kernels are warmed by the comparison runs "
                 f"first).  1-min load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at "
                 "the end (2 cores: above ~2 other work shared the machine).\n")
    lines.append(f"Data: {n_rows:,} binary predictions in {len(files)} Parquet files ({size_gb:.2f} GB on "
                 "disk), read out of core with `dask.dataframe.read_parquet`; each estimator is a full pass "
                 "over the files (Parquet decoding included).\n")
    lines.append(f"## Throughput on n = {n_rows:,}\n")
    lines.append("| estimator | median s | rows/s |\n|---|---:|---:|")
    for name, sec, rate in big_rows:
        lines.append(f"| {name} | {sec:.2f} | {rate:,.0f} |")
    lines.append(f"\nWorker memory after the run (RSS, MB): {', '.join(f'{v:.0f}' for v in rss.values())}.\n")
    lines.append(f"## Same {n_cmp:,} rows: in-memory engine vs Dask\n")
    lines.append("| estimator | in-memory s | Dask s | Dask rows/s | Dask / in-memory time | results agree |")
    lines.append("|---|---:|---:|---:|---:|---|")
    for name, mem_s, dk_s, agree in cmp_rows:
        lines.append(f"| {name} | {mem_s:.3f} | {dk_s:.2f} | {n_cmp / dk_s:,.0f} | {dk_s / mem_s:.1f}× "
                     f"| {agree} |")
    lines.append("\nThe in-memory times exclude reading the data (it is already in numpy arrays); the Dask "
                 "times include reading and decoding Parquet, scheduling and the tree reduction.  The Dask "
                 "engine "
                 "exists for data that does not fit in one process, not to beat the in-memory engine on data "
                 "that does.\n")
    if skipped:
        lines.append("## Skipped\n")
        lines.extend(f"* {x}" for x in skipped)
        lines.append("")
    if failures:
        lines.append("## Failures\n")
        lines.extend(f"* {f}" for f in failures)
    else:
        lines.append("No task failed, no worker was restarted (no spilling failures).\n")
    lines.append("Agreement is the largest relative difference over the float fields of the two result "
                 "objects (the field is named).  Analytic T-Cal is computed from compensated per-bin sums "
                 "shared by both engines (calviz.BinSums with compensated sums), so its statistics, critical "
                 "values and p-values agree to the last bit even far in the tail.  Y-only resampled T-Cal "
                 "draws the same random streams on both (by global sorted position), so with the same seed "
                 "its p-values are the same.\n")
    out = ROOT / "benchmarks" / "results" / "bench_dask.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 1 if failures else 0


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 1e6


def _quiet(func, *args, **kwargs):
    """func(*args, **kwargs) without warnings (a fixed resample count warns that it cannot reject)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _agreement(a, b) -> str:
    """Largest relative difference over the float fields of two result objects."""
    import dataclasses

    worst, where = 0.0, ""
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        try:
            xa = np.asarray(x, dtype=np.float64)
            ya = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if xa.shape != ya.shape:
            return f"shape differs in {f.name}"
        ok = np.isfinite(xa) & np.isfinite(ya)
        if ok.any():
            rel = float((np.abs(xa[ok] - ya[ok]) / np.maximum(np.abs(xa[ok]), 1e-300)).max())
            if rel > worst:
                worst, where = rel, f.name
    return f"max rel diff {worst:.1e}" + (f" ({where})" if where else "")


if __name__ == "__main__":
    sys.exit(main())
