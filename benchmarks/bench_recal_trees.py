"""The binary recalibration maps' fit and application in two source trees, alternating in fresh processes:
process CPU time (``time.process_time``, less sensitive to other processes than wall time).

    nice python benchmarks/bench_recal_trees.py --base /tmp/peers_base --n 1000000 --rounds 3

``--base`` holds a ``calviz`` package of an earlier commit (``git archive 45c32f5 calviz | tar -x -C
/tmp/peers_base``).  Per tree and round: ``_fit_map(method, column_stack([1 − p, p]), y, 15)`` and its
``.transform(p)`` on ``bench_kernels.binary_data(n)``, medians of ``--repeat`` calls after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def worker(n: int, repeat: int) -> dict:
    from bench_kernels import binary_data

    from calviz._recalibration import _fit_map

    p, y = binary_data(n)
    full = np.column_stack([1.0 - p, p])
    out = {}
    for method in ("isotonic", "temperature", "platt"):
        fitted = _fit_map(method, full, y, 15)
        fitted.transform(p)
        for part, fn in (("fit", lambda m=method: _fit_map(m, full, y, 15)),
                         ("application", lambda f=fitted: f.transform(p))):
            times = []
            for _ in range(repeat):
                start = time.process_time()
                fn()
                times.append(time.process_time() - start)
            out[f"{method} {part}"] = float(np.median(times) * 1e3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=False, default=None)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.n, args.repeat)))
        return
    here = str(Path(__file__).resolve().parents[1])
    runs = {"base": [], "new": []}
    for _ in range(args.rounds):
        for tree, root in (("base", args.base), ("new", here)):
            env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{Path(__file__).resolve().parent}"}
            cmd = [sys.executable, __file__, "--worker", "--n", str(args.n), "--repeat", str(args.repeat)]
            load = os.getloadavg()[0]
            ms = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
            runs[tree].append(ms)
            print(tree, f"load {load:.1f}", ms, file=sys.stderr, flush=True)
    print(f"| {args.n:,} rows, CPU ms | base (rounds) | new (rounds) | base / new |\n|---|---|---|---:|")
    for name in runs["new"][0]:
        b = [r[name] for r in runs["base"]]
        m = [r[name] for r in runs["new"]]
        print(f"| {name} | {', '.join(f'{v:.0f}' for v in b)} | {', '.join(f'{v:.0f}' for v in m)} | "
              f"{np.median(b) / np.median(m):.1f}× |")


if __name__ == "__main__":
    main()
