"""``cox_test`` on all of numba's threads against one thread, in the same process, alternating.

    nice python benchmarks/bench_cox_threads.py --sizes 1000000 10000000 --repeat 5

The threaded logistic sums (from ``calviz._classical.THREADED_ROWS`` rows) give the same sums bit for bit
(checked here); the one-thread run sets ``numba.set_num_threads(1)`` around the call, which the row chunks
of :func:`calviz._threads.map_chunks` follow.  Medians of ``--repeat`` runs per setting after one warm-up
run each, the settings alternating run by run so that a change of the machine's load hits both.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numba
import numpy as np


def _data(n: int):
    rng = np.random.default_rng(0)
    p = rng.uniform(0.01, 0.99, size=n)
    y = (rng.uniform(size=n) < p ** 1.2).astype(np.int64)
    return p, y


def _timed(fn, threads: int) -> tuple[float, object]:
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        start = time.perf_counter()
        result = fn()
        return time.perf_counter() - start, result
    finally:
        numba.set_num_threads(previous)


def main() -> None:
    import calviz

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    threads = numba.get_num_threads()
    report = {"cores": os.cpu_count(), "numba_threads": threads, "load_start": os.getloadavg()[:2],
              "sizes": {}}
    for n in args.sizes:
        p, y = _data(n)
        fn = lambda y=y, p=p: calviz.cox_test(y, p)  # noqa: E731
        times = {1: [], threads: []}
        results = {}
        for k in times:  # warm-up (JIT, caches)
            _, results[k] = _timed(fn, k)
        one, many = results[1], results[threads]
        assert one.statistic == many.statistic and one.pvalue == many.pvalue  # (bit for bit)
        for _ in range(args.repeat):
            for k in times:
                times[k].append(_timed(fn, k)[0])
        report["sizes"][n] = {f"{k} thread(s) ms": float(np.median(v) * 1e3) for k, v in times.items()}
        report["sizes"][n]["threaded / one"] = float(np.median(times[threads]) / np.median(times[1]))
        print(n, report["sizes"][n], "load", os.getloadavg()[:2], flush=True)
    report["load_end"] = os.getloadavg()[:2]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
