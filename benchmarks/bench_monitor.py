"""The calibration monitor: level under continuous monitoring, detection delay on drifts, and speed.

    nice python benchmarks/bench_monitor.py                 # all parts (level, power, speed)
    nice python benchmarks/bench_monitor.py level --paths 1000
    nice python benchmarks/bench_monitor.py cli              # calviz monitor on 10⁷ rows, in a child process

* level — calibrated logs of 10⁴ batches × 10 rows, several forecast distributions: the rate at which
  ``calviz.monitor_calibration`` ever alarms (E ≥ 1/α, α = 0.05) against the naive monitor that re-runs
  a fixed-sample test at every look: the ECE interval's test of calibration (Sun et al. 2024: reject iff
  the lower end > 0, i.e. T₊ ≥ z_{1−α} sd₀, on all rows so far) after every batch, and the analytic
  T-Cal test (α = 0.05) at 20 geometrically spaced looks on a subset of the paths.
* power — the same logs, calibrated for batches 0..4999 and drifting from batch 5000 on (calibration
  slope or intercept on the logit scale): the median detection delay in batches.
* speed — a 10⁷-row log over 365 days: ``calibration_over_time(window="1D")`` (every window statistic,
  T-Cal included) and ``monitor_calibration(window="1D")``, medians after warm-up, peak RSS; appending
  one day of 10⁵ rows.
* cli — ``calviz monitor LOG.parquet --time-column ts --window 1D --json`` on a generated 10⁷-row Parquet
  log in a child process: wall, CPU (user + system) and peak RSS of the child, medians of 3.

Results: benchmarks/results/bench_monitor.md (and .json, merged across separately run parts).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np

import calviz
from calviz._binning import equal_width_ids
from calviz._intervals import interval_from_sums
from calviz._sums import bin_sums

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
ALPHA = 0.05
Z1 = 1.6448536269514722  # Φ⁻¹(0.95)


def forecasts(kind: str, rng, size):
    if kind == "uniform(0.02, 0.98)":
        return rng.uniform(0.02, 0.98, size)
    if kind == "beta(2, 5)":
        return np.clip(rng.beta(2, 5, size), 1e-3, 1 - 1e-3)
    if kind == "beta(0.5, 0.5)":
        return np.clip(rng.beta(0.5, 0.5, size), 1e-3, 1 - 1e-3)
    raise ValueError(kind)


DISTRIBUTIONS = ("uniform(0.02, 0.98)", "beta(2, 5)", "beta(0.5, 0.5)")


def path(kind, seed, batches, size, drift=None, start=None):
    rng = np.random.default_rng(seed)
    z = forecasts(kind, rng, batches * size)
    truth = z
    if drift is not None:
        slope, shift = drift
        logit = np.log(z / (1 - z))
        drifted = 1 / (1 + np.exp(-(slope * logit + shift)))
        batch = np.arange(z.size) // size
        truth = np.where(batch >= start, drifted, z)
    y = (rng.uniform(size=z.size) < truth).astype(np.float64)
    return y, z


def naive_ece_looks(y, z, size, n_bins=15):
    """Per look (batch end): does the ECE interval's test reject on all rows so far?  Vectorised over the
    looks from cumulative per-bin sums (the formulas of calviz._sums.unbiased_ece_sq / null_variance)."""
    K = z.size // size
    bins = equal_width_ids(z, n_bins)
    cell = (np.arange(z.size) // size) * n_bins + bins
    v = y - z
    s = z * (1 - z)
    sums = [np.bincount(cell, weights=w, minlength=K * n_bins).reshape(K, n_bins).cumsum(axis=0)
            for w in (None, v, v * v, s, s * s)]
    N, S, Q, C, D = sums
    n = N.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        big = N >= 2
        T = np.where(big, (S * S - Q) / (N - 1), 0.0).sum(axis=1) / n
        var0 = 2 * np.where(big, np.maximum(C * C - D, 0) / (N - 1) ** 2, 0.0).sum(axis=1) / n**2
        # σ̂₁² of calviz._sums.miscalibrated_variance (1-D: M_b = Q_b/N_b), s = √(max(σ̂₁², 0)/n)
        u = np.where(N > 0, S / N, 0.0)
        pb = N / n[:, None]
        var1 = (pb * (4 * u * u * np.where(N > 0, Q / N, 0.0) - 3 * u**4)).sum(axis=1) \
            - (pb * u * u).sum(axis=1) ** 2
    t = np.maximum(T, 0)
    se = np.sqrt(np.maximum(var1, 0) / n)
    # the interval's lower end (Sun et al. 2024, Algorithm 1) is > 0 iff t ≥ z1·sd₀ (the test of calibration
    # rejects) and t > z1·s (the near regime's max(t − z1 s, 0); the middle and far regimes imply it)
    return (t >= Z1 * np.sqrt(var0)) & (t > Z1 * se) & (t > 0)


def check_naive_against_calviz(y, z, size):
    looks = naive_ece_looks(y, z, size)
    for k in range(0, z.size // size, 97):
        rows = (k + 1) * size
        ci = interval_from_sums(bin_sums(equal_width_ids(z[:rows], 15), z[:rows], y[:rows]), ALPHA)
        assert (ci.low > 0) == looks[k], (k, ci)


def part_level(paths, batches, size, tcal_paths, only=None, save=None):
    out = []
    for kind in DISTRIBUTIONS:
        if only is not None and kind not in only:
            continue
        alarms = naive = naive_tcal = 0
        looks = np.unique(np.geomspace(10, batches, 20).astype(int)) - 1
        t0 = time.perf_counter()
        for r in range(paths):
            y, z = path(kind, 10_000 * r + 17, batches, size)
            if r == 0:
                check_naive_against_calviz(y, z, size)
            batch = np.arange(z.size) // size
            alarms += calviz.monitor_calibration(y, z, time=batch, alpha=ALPHA).alarm
            naive += naive_ece_looks(y, z, size).any()
            if r < tcal_paths:
                naive_tcal += any(calviz.adaptive_tcal(y[:(k + 1) * size], z[:(k + 1) * size],
                                                       resampling="analytic", alpha=ALPHA).reject
                                  for k in looks)
        se = math.sqrt(ALPHA * (1 - ALPHA) / paths)
        rate = alarms / paths
        out.append(dict(distribution=kind, paths=paths, batches=batches, rows_per_batch=size,
                        monitor_rate=rate, monitor_se=math.sqrt(max(rate * (1 - rate), 1e-12) / paths),
                        bound=ALPHA + 2 * se, naive_ece_rate=naive / paths,
                        naive_ece_se=math.sqrt((naive / paths) * (1 - naive / paths) / paths),
                        tcal_paths=tcal_paths, naive_tcal_rate=naive_tcal / max(tcal_paths, 1),
                        naive_tcal_looks=int(len(looks)), seconds=time.perf_counter() - t0))
        print(out[-1], flush=True)
        if save is not None:
            save(out[-1])
    return out


DRIFTS = {"slope 1 → 0.7 (over-confident)": (0.7, 0.0), "slope 1 → 1.4 (under-confident)": (1.4, 0.0),
          "intercept 0 → +0.2 (logit)": (1.0, 0.2), "intercept 0 → −0.1 (logit)": (1.0, -0.1)}


def part_power(paths, batches, size):
    start = batches // 2
    out = []
    for name, drift in DRIFTS.items():
        for kind in DISTRIBUTIONS[:2]:
            delays, early, missed = [], 0, 0
            for r in range(paths):
                y, z = path(kind, 77_000 + r, batches, size, drift=drift, start=start)
                result = calviz.monitor_calibration(y, z, time=np.arange(z.size) // size, alpha=ALPHA)
                if result.alarm_index is None:
                    missed += 1
                elif result.alarm_index < start:
                    early += 1
                else:
                    delays.append(result.alarm_index - start + 1)
            d = np.array(delays)
            out.append(dict(drift=name, distribution=kind, paths=paths, start=start, rows_per_batch=size,
                            median_delay=float(np.median(d)) if d.size else None,
                            q90_delay=float(np.quantile(d, 0.9)) if d.size else None,
                            detected=len(delays), early=early, missed=missed))
            print(out[-1], flush=True)
    return out


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _cli_run(ts, y, p):
    """Wall time and peak RSS of ``calviz monitor LOG.parquet --time-column ts --window 1D --json`` in a
    fresh process (reading the file, every window statistic and the e-process, JIT from the cache)."""
    import subprocess
    import sys
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.parquet"
        pq.write_table(pa.table({"ts": ts, "y_true": y.astype(np.int64), "y_prob": p}), path)
        command = [sys.executable, "-m", "calviz", "monitor", str(path), "--time-column", "ts", "--window",
                   "1D", "--json"]
        t0 = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if done.returncode not in (0, 1):
            raise RuntimeError(done.stderr)
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def part_speed(n, days, repeats):
    rng = np.random.default_rng(5)
    seconds = np.sort(rng.integers(0, days * 86400, n))
    ts = np.datetime64("2025-01-01") + seconds.astype("timedelta64[s]")
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int8)
    small = slice(0, 20_000)
    calviz.calibration_over_time(y[small], p[small], time=ts[small], window="1D")  # JIT warm-up
    calviz.monitor_calibration(y[small], p[small], time=ts[small], window="1D")
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    c0 = time.process_time()
    windows = _median_time(lambda: calviz.calibration_over_time(y, p, time=ts, window="1D"), repeats)
    c1 = time.process_time()
    monitor = _median_time(lambda: calviz.monitor_calibration(y, p, time=ts, window="1D"), repeats)
    c2 = time.process_time()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # append one more day of 10^5 rows, in the steady state of a growing log (the dashboard's --watch):
    # the result appended to already holds room to grow (its first append made it); the first append
    # of a freshly computed result copies the log once and is timed separately
    last, before = n - 100_000, n - 200_000
    base = calviz.calibration_over_time(y[:before], p[:before], time=ts[:before], window="1D")
    base_monitor = calviz.monitor_calibration(y[:before], p[:before], time=ts[:before], window="1D")
    first_day, day = slice(before, last), slice(last, n)
    first_append, append, append_monitor = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        grown = base.append(y[first_day], p[first_day], time=ts[first_day])
        first_append.append(time.perf_counter() - t0)
        grown_monitor = base_monitor.append(y[first_day], p[first_day], time=ts[first_day])
        t0 = time.perf_counter()
        grown.append(y[day], p[day], time=ts[day])
        append.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        grown_monitor.append(y[day], p[day], time=ts[day])
        append_monitor.append(time.perf_counter() - t0)
    first_append, append, append_monitor = (float(np.median(v)) for v in (first_append, append,
                                                                          append_monitor))
    result = calviz.calibration_over_time(y, p, time=ts, window="1D")
    cli_s, cli_rss = _cli_run(ts, y, p)
    return dict(n=n, windows=int(result.n_windows), over_time_s=windows, monitor_s=monitor, cli_s=cli_s,
                over_time_cpu_s=(c1 - c0) / repeats, monitor_cpu_s=(c2 - c1) / repeats,
                cli_rss_mib=cli_rss,
                total_s=windows + monitor, append_rows=100_000, append_over_time_s=append,
                first_append_over_time_s=first_append,
                append_monitor_s=append_monitor, input_mib=(p.nbytes + y.nbytes + ts.nbytes) / 2**20,
                peak_rss_mib=rss1, rss_before_mib=rss0, load=load, repeats=repeats)


def part_append(n, days, repeats):
    """The steady-state append of the dashboard's ``--watch``: the last 10⁵ rows of the 10⁷-row log appended
    to a result that already holds room to grow, for each of the two results of the over-time view
    (``OverTime.append`` runs both); wall and process CPU seconds (CPU: load-independent), each from a
    fresh grown result, medians of ``repeats``."""
    rng = np.random.default_rng(5)
    seconds = np.sort(rng.integers(0, days * 86400, n))
    ts = np.datetime64("2025-01-01") + seconds.astype("timedelta64[s]")
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int8)
    last, before = n - 100_000, n - 200_000
    out = {"n": n, "rows": 100_000, "repeats": repeats, "load": os.getloadavg()[0]}
    for name, fn in (("over_time", calviz.calibration_over_time), ("monitor", calviz.monitor_calibration)):
        base = fn(y[:before], p[:before], time=ts[:before], window="1D")
        wall, cpu = [], []
        for _ in range(repeats):
            grown = base.append(y[before:last], p[before:last], time=ts[before:last])
            w0, c0 = time.perf_counter(), time.process_time()
            grown.append(y[last:], p[last:], time=ts[last:])
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
        out[f"{name}_wall_s"], out[f"{name}_cpu_s"] = float(np.median(wall)), float(np.median(cpu))
    return out


def _child(command) -> dict:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one child process running
    ``command`` (its own rusage, from wait4: not the maximum over every child so far)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
        child.returncode = code = os.waitstatus_to_exitcode(status)  # (reaped here, not by Popen)
        if code not in (0, 1):
            err.seek(0)
            raise RuntimeError(err.read().decode())
        size = out.tell()
    return dict(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, rss_mib=usage.ru_maxrss / 1024,
                exit=code, stdout_bytes=size)


def part_cli(n, days, repeats):
    """``calviz monitor LOG.parquet --time-column ts --window 1D --json`` in a fresh process on a generated
    log (n rows over ``days`` days, rows in time order): wall, CPU and peak RSS of the child, medians of
    ``repeats`` after a warm-up run on a small log (the JIT cache loaded from disk, as any later run)."""
    import sys
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in (("small", 20_000), ("log", n)):
            seconds = np.sort(rng.integers(0, days * 86400, rows))
            ts = np.datetime64("2025-01-01") + seconds.astype("timedelta64[s]")
            p = rng.uniform(size=rows)
            y = (rng.uniform(size=rows) < p).astype(np.int64)
            pq.write_table(pa.table({"ts": ts, "y_true": y, "y_prob": p}), Path(tmp) / f"{name}.parquet")
            del seconds, ts, p, y
        command = [sys.executable, "-m", "calviz", "monitor", "FILE", "--time-column", "ts", "--window", "1D",
                   "--json"]
        _child([c if c != "FILE" else str(Path(tmp) / "small.parquet") for c in command])  # warm-up
        load0 = os.getloadavg()[0]
        runs = [_child([c if c != "FILE" else str(Path(tmp) / "log.parquet") for c in command])
                for _ in range(repeats)]
        load1 = os.getloadavg()[0]
        size = (Path(tmp) / "log.parquet").stat().st_size / 2**20
    out = {k: float(np.median([r[k] for r in runs])) for k in ("wall_s", "cpu_s", "rss_mib")}
    out.update(n=n, days=days, repeats=repeats, runs=runs, load_start=load0, load_end=load1,
               file_mib=size, command="calviz monitor LOG.parquet --time-column ts --window 1D --json",
               when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    return out


def write(results):
    lines = ["# bench_monitor — the calibration monitor over time", "",
             f"Command: `nice python benchmarks/bench_monitor.py` · `os.cpu_count()` = {os.cpu_count()} · "
             f"Python {platform.python_version()} · numpy {np.__version__}.", ""]
    if "level" in results:
        lines += ["## Level under continuous monitoring (calibrated logs)", "",
                  "Each path: 10⁴ batches of 10 rows, outcomes y ~ Bernoulli(z) (calibrated), forecasts z "
                  "from the distribution named. *monitor*: `calviz.monitor_calibration(..., alpha=0.05)` "
                  "ever reaches E ≥ 1/α (checked after every batch). *naive ECE*: the ECE interval's test of "
                  "calibration (lower end > 0 at α = 0.05, 15 bins) re-run on all rows so far after every "
                  "batch (10⁴ looks; checked against `calviz._intervals.interval_from_sums`). *naive T-Cal*: "
                  "`calviz.adaptive_tcal(resampling='analytic')` at α = 0.05 re-run at 20 geometrically "
                  "spaced looks (fewer paths: it is slow). Monte Carlo se = √(r(1−r)/paths); the bound is "
                  "α + 2·√(α(1−α)/paths).", "",
                  "| forecasts | paths | monitor rate ± se | bound α + 2se | naive ECE rate ± se | "
                  "naive T-Cal rate (paths, looks) |", "|---|---:|---:|---:|---:|---:|"]
        for r in results["level"]:
            ok = "✅" if r["monitor_rate"] <= r["bound"] else "❌"
            lines.append(f"| {r['distribution']} | {r['paths']} | {r['monitor_rate']:.4f} ± "
                         f"{r['monitor_se']:.4f} {ok} | {r['bound']:.4f} | {r['naive_ece_rate']:.3f} ± "
                         f"{r['naive_ece_se']:.3f} | {r['naive_tcal_rate']:.3f} ({r['tcal_paths']}, "
                         f"{r['naive_tcal_looks']}) |")
        lines.append("")
    if "power" in results:
        p0 = results["power"][0]
        lines += ["## Detection delay on a drift", "",
                  f"Each path: calibrated for batches 0..{p0['start'] - 1}, then P(y = 1 | z) = "
                  f"σ(a·logit z + b) from batch {p0['start']} on; 10 rows per batch; delay = alarm batch − "
                  f"{p0['start']} + 1 (batches of data after the drift began). *early*: alarms before the "
                  f"drift (false alarms), *missed*: no alarm by batch 10⁴.", "",
                  "| drift | forecasts | paths | median delay (batches) | 90% quantile | detected | early | "
                  "missed |", "|---|---|---:|---:|---:|---:|---:|---:|"]
        for r in results["power"]:
            lines.append(f"| {r['drift']} | {r['distribution']} | {r['paths']} | {r['median_delay']} | "
                         f"{r['q90_delay']} | {r['detected']} | {r['early']} | {r['missed']} |")
        lines.append("")
    if "speed" in results:
        s = results["speed"]
        ok = "✅" if s["total_s"] < 10 and s["peak_rss_mib"] < 1024 else "❌"
        lines += ["## Speed: a 10⁷-row log over 365 days", "",
                  f"Rows sorted by time (random seconds over the year), binary predictions; medians of "
                  f"{s['repeats']} runs after JIT warm-up; 1-minute load average {s['load']:.1f} at the "
                  f"start (a shared 2-core machine: pessimistic). Peak RSS = the whole benchmark process "
                  f"(ru_maxrss), input arrays {s['input_mib']:.0f} MiB.", "",
                  "| work | n | windows | seconds |", "|---|---:|---:|---:|",
                  f"| `calibration_over_time(window='1D')` (ECE interval, rates, gap, analytic T-Cal per "
                  f"window, Holm) | {s['n']:,} | {s['windows']} | {s['over_time_s']:.2f} |",
                  f"| `monitor_calibration(window='1D')` (e-process, 6 experts: bins 1/4/16 × half-lives "
                  f"2,000/20,000 rows) | {s['n']:,} | "
                  f"{s['windows']} | {s['monitor_s']:.2f} |",
                  f"| **both** (target < 10 s, < 1 GiB) {ok} | | | **{s['total_s']:.2f}** (peak RSS "
                  f"{s['peak_rss_mib']:.0f} MiB) |",
                  f"| process CPU seconds of the two calls (all threads; mean of the runs) | | | "
                  f"{s.get('over_time_cpu_s', float('nan')):.2f} + "
                  f"{s.get('monitor_cpu_s', float('nan')):.2f} |",
                  f"| `CalibrationOverTime.append` of one day ({s['append_rows']:,} rows) to a growing log "
                  f"(the dashboard's `--watch`: merged sums, the new window's T-Cal) | | | "
                  f"{s['append_over_time_s']:.3f} |",
                  f"| its first append to a freshly computed result (copies the log once into room to grow) "
                  f"| | | {s.get('first_append_over_time_s', float('nan')):.3f} |",
                  f"| `CalibrationMonitor.append` of one day ({s['append_rows']:,} rows) | | | "
                  f"{s['append_monitor_s']:.3f} |",
                  f"| `calviz monitor LOG.parquet --time-column ts --window 1D --json` (fresh process: read, "
                  f"windows, e-process) | {s['n']:,} | {s['windows']} | {s['cli_s']:.2f} (peak RSS "
                  f"{s['cli_rss_mib']:.0f} MiB) |", ""]
    if "cli" in results:
        c = results["cli"]
        ok = "✅" if c["wall_s"] < 10 and c["rss_mib"] < 1024 else "❌"
        cpu_ok = "✅" if c["cpu_s"] < 10 else "❌"
        lines += ["## `calviz monitor` on a 10⁷-row log (fresh process)", "",
                  f"`nice python benchmarks/bench_monitor.py cli` ({c['when']}) — `{c['command']}` in a "
                  f"child process on a generated Parquet log ({c['n']:,} rows in time order over "
                  f"{c['days']} days, {c['file_mib']:.0f} MiB): reading the file, every window statistic "
                  "(T-Cal included) and "
                  f"the e-process; medians of {c['repeats']} runs after a warm-up run on a small log. Wall = "
                  f"the child's elapsed time, CPU = its user + system seconds (all threads), peak RSS = its "
                  f"ru_maxrss (wait4: this child's own). 1-minute load average {c['load_start']:.1f} at the "
                  f"start, {c['load_end']:.1f} at the end (a shared 2-core machine: CPU seconds are the "
                  "load-independent number).", "",
                  "| work | n | wall s | CPU s | peak RSS MiB |", "|---|---:|---:|---:|---:|",
                  f"| `calviz monitor` (target < 10 s, < 1 GiB) | {c['n']:,} | {c['wall_s']:.2f} {ok} | "
                  f"{c['cpu_s']:.2f} {cpu_ok} | {c['rss_mib']:.0f} |", "",
                  "Runs (wall / CPU / RSS): " + "; ".join(f"{r['wall_s']:.2f} s / {r['cpu_s']:.2f} s / "
                                                          f"{r['rss_mib']:.0f} MiB" for r in c["runs"]) + ".",
                  ""]
    if "append" in results:
        a = results["append"]
        both = a["over_time_wall_s"] + a["monitor_wall_s"]
        lines += ["## Appending one day to the over-time view", "",
                  f"`python benchmarks/bench_monitor.py append` — {a['rows']:,} rows appended to a "
                  f"{a['n'] - a['rows']:,}-row log (365 daily windows) already holding room to grow (the "
                  f"steady state of `--watch`); medians of {a['repeats']}; 1-minute load average "
                  f"{a['load']:.1f}. CPU = the process's CPU seconds (all threads; load-independent).", "",
                  "| result appended to | wall s | CPU s |", "|---|---:|---:|",
                  f"| `CalibrationOverTime.append` (merged sums, the changed windows' T-Cal, Holm) | "
                  f"{a['over_time_wall_s']:.3f} | {a['over_time_cpu_s']:.3f} |",
                  f"| `CalibrationMonitor.append` (the e-process continued) | {a['monitor_wall_s']:.3f} | "
                  f"{a['monitor_cpu_s']:.3f} |",
                  f"| **both** (`OverTime.append`, the view's result; target < 250 ms) "
                  f"{'✅' if both < 0.25 else '❌'} | **{both:.3f}** | "
                  f"{a['over_time_cpu_s'] + a['monitor_cpu_s']:.3f} |",
                  "", "This is the view's result; the dashboard's refresh also re-reads the changed file(s) "
                  "and redraws the card (not measured here).", ""]
    (RESULTS / "bench_monitor.md").write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=["level", "power", "speed"])
    parser.add_argument("--paths", type=int, default=1000)
    parser.add_argument("--power-paths", type=int, default=200)
    parser.add_argument("--tcal-paths", type=int, default=100)
    parser.add_argument("--batches", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=10)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--distributions", nargs="*", choices=DISTRIBUTIONS,
                        help="level: run only these forecast distributions (the others' stored rows stay)")
    args = parser.parse_args()
    store = RESULTS / "bench_monitor.json"
    results = json.loads(store.read_text()) if store.exists() else {}

    def save_level(row):  # one row per distribution, in DISTRIBUTIONS order, saved as each finishes
        rows = {r["distribution"]: r for r in results.get("level", [])}
        rows[row["distribution"]] = {k: v.item() if isinstance(v, np.generic) else v for k, v in row.items()}
        results["level"] = [rows[d] for d in DISTRIBUTIONS if d in rows]
        store.write_text(json.dumps(results, indent=1))

    if "level" in args.parts:
        part_level(args.paths, args.batches, args.size, args.tcal_paths, args.distributions, save_level)
    if "power" in args.parts:
        results["power"] = part_power(args.power_paths, args.batches, args.size)
        store.write_text(json.dumps(results, indent=1))
    if "speed" in args.parts:
        results["speed"] = part_speed(args.n, 365, args.repeats)
        print(results["speed"], flush=True)
        store.write_text(json.dumps(results, indent=1))
    if "cli" in args.parts:
        results["cli"] = part_cli(args.n, 365, args.repeats)
        print(results["cli"], flush=True)
        store.write_text(json.dumps(results, indent=1))
    if "append" in args.parts:
        results["append"] = part_append(args.n, 365, args.repeats)
        print(results["append"], flush=True)
        store.write_text(json.dumps(results, indent=1))
    write(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
