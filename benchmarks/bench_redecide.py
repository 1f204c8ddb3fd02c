"""An α change of the resampled views: resampled again (``run_view`` at the new α) against re-decided from
the stored resamples (the view's ``redecide``), on the same data in the same run.

    nice python benchmarks/bench_redecide.py --n 1000000 --repeat 3

Each view runs on the rows the dashboard gives it (``calviz.sampling``: the bootstrap on a 50,000-row
subsample, the resampled T-Cal on 200,000 rows, the smooth and CORP bands on every row).  Per view: the
median seconds of the computation at α = 0.05 → 0.1 (fresh, after one warm-up), of the re-decision from the
α = 0.05 result, whether the two results are equal (to 1e-12), and the resamples each drew.  Binary data
mildly over-confident (p^1.1), so that T-Cal's sequential rule has to resample.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time

import numpy as np


def _data(n: int, power: float):
    import calviz

    rng = np.random.default_rng(0)
    p = rng.uniform(0.02, 0.98, size=n)
    return calviz.as_calibration_data((rng.uniform(size=n) < p ** power).astype(np.int64), p)


def _close(a, b) -> bool:
    if dataclasses.is_dataclass(a):
        return all(_close(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a) if f.compare)
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=1e-12, atol=1e-14, equal_nan=True))
    if isinstance(a, float):
        return bool(np.isclose(a, b, rtol=1e-12, atol=1e-14) or (np.isnan(a) and np.isnan(b)))
    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _median(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def main() -> None:
    from calviz.analysis import AnalysisOptions, run_view
    from calviz.analysis.views import view

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--power", type=float, default=1.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--views", nargs="+", default=None, help="only these views")
    args = parser.parse_args()
    data = _data(args.n, args.power)
    cases = {"bootstrap": {}, "smooth": {}, "corp": {"scheme": "corp"},
             "tcal_resampled": {"resampling": "y_only"}}
    report = {"n": args.n, "cores": os.cpu_count(), "load_start": os.getloadavg()[:2], "views": {}}
    for name, where in cases.items():
        if args.views and name not in args.views:
            continue
        before = AnalysisOptions(alpha=0.05, **where)
        after = before.replace(alpha=0.1)
        base, _, note = run_view(name, data, before)  # (also the warm-up)
        run_view(name, data, after)
        fresh_s, (fresh, _, _) = _median(lambda: run_view(name, data, after), args.repeat)  # noqa: B023
        redecide = view(name).redecide
        again_s, again = _median(lambda: redecide(base, data, after), args.repeat)  # noqa: B023
        row = {"fresh s": fresh_s, "re-decided s": again_s, "ratio": fresh_s / again_s,
               "equal": _close(again, fresh), "note": note}
        if name == "tcal_resampled":
            row["resamples at 0.05 / 0.1"] = (base.n_resamples, fresh.n_resamples)
        report["views"][name] = row
        print(name, row, "load", os.getloadavg()[:2], flush=True)
    report["load_end"] = os.getloadavg()[:2]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
