"""What the test suite's numba cache fill (tests/conftest.py, run under ``pytest -n N``) costs.

Runs the fill's three processes at once, as the suite's start does, into an empty numba cache (a fresh
clone: every kernel compiled) and then twice more into the filled one (a re-run: the kernels loaded), and
reports the wall time and the CPU time of the three processes, with the load; and one process that only
imports calviz (the floor of each).

    nice python benchmarks/bench_test_cache_fill.py
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(commands, env) -> tuple[float, float]:
    cpu, start = _children_cpu(), time.perf_counter()
    processes = [subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for command in commands]
    for process in processes:
        process.wait()
    return time.perf_counter() - start, _children_cpu() - cpu


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import conftest

    cache = tempfile.mkdtemp(prefix="calviz-numba-cache-")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    try:
        for label in ("empty cache", "filled cache", "filled cache"):
            with conftest.cache_fill(env) as (commands, fill_env):  # (each fill its own job counter)
                wall, cpu = _timed(commands, fill_env)
            print(f"{label}: wall {wall:.1f} s, CPU {cpu:.1f} s (3 processes), load {os.getloadavg()}",
                  flush=True)
        wall, cpu = _timed([[sys.executable, "-c", "import calviz, calviz.dask, calviz.app.workers"]], env)
        print(f"import only: wall {wall:.1f} s, CPU {cpu:.1f} s")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
