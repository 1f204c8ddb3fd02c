"""Worst case found by the fuzz suite beside the typical case (the cost model of calviz.smooth,
calviz.distance and calviz.intervals).

1. Every in-memory entry point of ``tests/test_fuzz.py`` is run over the suite's own examples (same
   strategies, same fixed derandomised profile, ``--examples`` per entry point), timing each example; the
   slowest examples are listed.
2. The overall worst example is re-timed (median of ``--repeats`` after a warm-up) beside the typical
   case of the same entry point: default options on n = 10 000 (binary, Beta(2, 3) predictions).
3. The degenerate inputs of the hardening issue, before (figures of the report that found them) and now.

    python benchmarks/bench_hardening.py   (writes benchmarks/results/bench_hardening.md)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_fuzz import BINARY, ENTRY_POINTS, MULTICLASS, PAIRS, PROFILE, REQUIRED_VALUES, _keywords  # noqa: E402

import calviz  # noqa: E402


def _describe(y, p, kwargs) -> str:
    def short(a):
        if isinstance(a, np.ndarray):
            if a.size <= 6:
                return np.array2string(a, precision=3, separator=",")
            return f"array{a.shape}"
        return repr(a)[:40]

    options = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"y={short(y)}, p={short(p)}" + (f", {options}" if options else "")


def fuzz_timings(examples: int) -> list[tuple[float, str, tuple]]:
    """(seconds, entry point, (y, p, kwargs)) of every fuzz example."""
    records = []

    def timed(name, func, optional, required):
        @settings(max_examples=examples, **PROFILE)
        @given(data=st.data())
        def run(data):
            y, p = data.draw(PAIRS)
            kwargs = data.draw(_keywords(optional, required))
            start = time.perf_counter()
            try:
                func(y, p, **kwargs)
            except (ValueError, TypeError):
                pass
            records.append((time.perf_counter() - start, name, (y, p, kwargs)))

        return run

    for name, (func, optional, required) in sorted(ENTRY_POINTS.items()):
        for y, p in (BINARY, MULTICLASS):  # warm-up: JIT compilation is not the example's cost
            _refusing(func, y, p, **{k: REQUIRED_VALUES[k] for k in required})()
        timed(name, func, optional, required)()
    return records


def median_time(call, repeats: int) -> float:
    call()  # warm-up (JIT, caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _refusing(func, *args, **kwargs):
    def call():
        try:
            func(*args, **kwargs)
        except (ValueError, TypeError):
            pass

    return call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    load_before = os.getloadavg()
    started = time.perf_counter()
    records = fuzz_timings(args.examples)
    fuzz_seconds = time.perf_counter() - started
    records.sort(key=lambda r: r[0], reverse=True)

    rng = np.random.default_rng(0)
    p = rng.beta(2, 3, 10_000)
    y = (rng.random(p.size) < p).astype(np.int64)

    # the slowest distinct examples re-timed (medians are robust to a loaded machine; single times not)
    slowest, seen = [], set()
    for _, name, example in records:
        key = (name, _describe(*example))
        if key not in seen:
            seen.add(key)
            slowest.append((name, example))
        if len(slowest) == 5:
            break
    retimed = []
    for name, (ey, ep, ekw) in slowest:
        func, _, required = ENTRY_POINTS[name]
        worst = median_time(_refusing(func, ey, ep, **ekw), args.repeats)
        typical_call = _refusing(func, y, p, **{k: REQUIRED_VALUES[k] for k in required})
        typical = median_time(typical_call, args.repeats)
        retimed.append((worst, typical, name, (ey, ep, ekw)))
    retimed.sort(key=lambda r: r[0], reverse=True)

    degenerate = [
        ("`smooth_reliability([1, 1, 1], [1., 1., 1.])` (100 resamples)", "84 s",
         lambda: calviz.smooth_reliability([1, 1, 1], [1.0, 1.0, 1.0])),
        ("`smooth_reliability`, predictions in {0, 1}, n = 5, logit kernel", "—",
         lambda: calviz.smooth_reliability([0, 1, 1, 0, 1], [0.0, 1.0, 1.0, 1.0, 0.0],
                                           kernel="logit_gaussian")),
        ("`analyze` of 3 rows all ones (every view, 500 resamples, as `calviz report`)", "325 s (report)",
         lambda: calviz.analyze(([1, 1, 1], [1.0, 1.0, 1.0]))),
        ("`distance_bounds(grid_step=1e-4)` at n = 8", "54–126 s",
         _refusing(calviz.distance_bounds, [0, 1] * 4, np.linspace(0.1, 0.9, 8), grid_step=1e-4)),
        ("`smooth_reliability(grid_size=10**10)`", "hang / MemoryError",
         _refusing(calviz.smooth_reliability, [0, 1, 1, 0], [0.2, 0.6, 0.7, 0.4], grid_size=10**10)),
    ]
    degenerate_rows = [(label, before, median_time(call, args.repeats)) for label, before, call in degenerate]
    typical_rows = [
        ("`smooth_reliability` (100 resamples)", median_time(lambda: calviz.smooth_reliability(y, p),
                                                              args.repeats)),
        ("`analyze` (every view, 500 resamples)", median_time(lambda: calviz.analyze((y, p)), args.repeats)),
    ]
    load_after = os.getloadavg()

    lines = [
        "# bench_hardening — worst case found by the fuzz suite, beside the typical case",
        "",
        f"Command: `python benchmarks/bench_hardening.py --examples {args.examples} "
        f"--repeats {args.repeats}` · "
        f"`os.cpu_count()` = {os.cpu_count()} · Python {sys.version.split()[0]} · numpy {np.__version__} · "
        f"medians of {args.repeats} runs after a warm-up, one process.  Load average (1, 5, 15 min) "
        f"before {tuple(round(x, 2) for x in load_before)}, after {tuple(round(x, 2) for x in load_after)} "
        "(shared 2-core machine: absolute times are pessimistic, compare the rows with each other).",
        "",
        f"The fuzz suite's in-memory entry points ({len(ENTRY_POINTS)}) over {args.examples} examples each "
        f"({len(records)} calls, {fuzz_seconds:.0f} s in all, after one warm-up call per entry point).  "
        "Slowest distinct examples (single runs; of an example hypothesis replays, the slowest run):",
        "",
        "| entry point | example | time (s) |",
        "|---|---|---:|",
    ]
    shown = set()
    for seconds, name, example in records:
        key = (name, _describe(*example))
        if key not in shown and len(shown) < 8:
            shown.add(key)
            lines.append(f"| `{name}` | {key[1].replace('|', '/')} | {seconds:.3f} |")
    lines += [
        "",
        "The five slowest distinct examples re-timed (median of "
        f"{args.repeats}), beside the typical case of the same entry point (default options, n = 10 000 "
        "binary, Beta(2, 3) predictions); the first row is the worst case:",
        "",
        "| entry point | example | worst fuzz example (s) | typical case, n = 10 000 (s) | ratio |",
        "|---|---|---:|---:|---:|",
    ]
    for worst, typical, name, example in retimed:
        lines.append(f"| `{name}` | {_describe(*example).replace('|', '/')} | {worst:.3f} | {typical:.3f} | "
                     f"{worst / typical:.2f} |")
    lines += [
        "",
        "Inputs that stalled the engine before the cost model (the *before* column is the time reported "
        "when the fault was found, on a similar machine):",
        "",
        "| input | before | now (s) |",
        "|---|---|---:|",
    ]
    lines += [f"| {label} | {before} | {now:.3f} |" for label, before, now in degenerate_rows]
    lines += ["", "Typical case for comparison (n = 10 000 binary):", "", "| workload | time (s) |",
              "|---|---:|"]
    lines += [f"| {label} | {seconds:.3f} |" for label, seconds in typical_rows]
    out = HERE / "results" / "bench_hardening.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
