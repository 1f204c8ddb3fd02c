"""``calviz check`` and ``calviz report`` on 10⁷-row files: wall time and peak memory (max RSS).

    python benchmarks/bench_bigdata.py                      # n = 10⁷, writes results/bench_bigdata.md
    python benchmarks/bench_bigdata.py --n 1000000 --repeats 3
    python benchmarks/bench_bigdata.py --baseline /path/to/older/calviz/tree   # ratios in the same run

Files (generated once into ``--data-dir`` by :mod:`calviz.synthetic`): a binary model
(``temperature_family``, β = 1.2) as Parquet, NPZ and CSV, and a 10-class model
(``dirichlet_temperature``, β = 1.5, top-1 target) as Parquet, NPZ (compressed) and CSV
(``--skip-csv`` leaves the CSV files out).  Each command runs in a fresh process under
``/usr/bin/time -v`` (so the time includes Python start-up and imports, as a user sees it); the table
gives the median over ``--repeats`` runs after one warm-up run on a small file (numba's cache;
``--full-warm-up``: and one untimed run of each file).
``--baseline DIR`` runs the same commands with ``PYTHONPATH=DIR`` (e.g. an older commit unpacked with
``git archive``) interleaved with the current tree, so the ratios are measured under the same load.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

TARGETS = {"check_seconds": 10.0, "check_rss_mb": 1024.0, "report_seconds": 30.0}


def make_files(n: int, directory: Path, csv: bool = True, only: str = "") -> dict[str, Path]:
    """The benchmark files for ``n`` rows (written once; reused when present); ``csv=False`` leaves out
    the CSV file, ``only`` every file whose label does not contain it."""
    import numpy as np

    from calviz._synthetic import dirichlet_temperature, temperature_family
    from calviz.io import write_predictions

    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "binary, Parquet": directory / f"binary_{n}.parquet",
        "binary, NPZ": directory / f"binary_{n}.npz",
        "binary, CSV": directory / f"binary_{n}.csv",
        "K = 10 top-1, Parquet": directory / f"k10_{n}.parquet",
        "K = 10 top-1, NPZ": directory / f"k10_{n}.npz",
        "K = 10 top-1, CSV": directory / f"k10_{n}.csv",
    }
    if not csv:
        files = {k: p for k, p in files.items() if "CSV" not in k}
    files = {k: p for k, p in files.items() if only in k}
    if not all(p.exists() for k, p in files.items() if "binary" in k):
        binary = temperature_family(n, seed=1, beta=1.2)
        for key in (k for k in files if "binary" in k and not files[k].exists()):
            write_predictions(files[key], binary.y_true, binary.y_prob)
        del binary
    if not all(p.exists() for k, p in files.items() if "K = 10" in k):
        multi = dirichlet_temperature(n, seed=2, n_classes=10, beta=1.5)
        for key in (k for k in files if "K = 10" in k and not files[k].exists()):
            write_predictions(files[key], multi.y_true, np.asarray(multi.y_prob))
    return files


def run(tree: Path, args: list[str], timeout: float | None = None) -> tuple[float, float, float]:
    """(wall seconds, max RSS in MB, CPU seconds: user + system) of ``python -m calviz ARGS`` with
    ``PYTHONPATH=tree``; a run stopped after ``timeout`` seconds gives (inf, nan, nan)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "calviz", *args]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(),
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return float("inf"), float("nan"), float("nan")
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr).group(1)
    seconds = sum(float(part) * 60**i for i, part in enumerate(reversed(wall.split(":"))))
    rss = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1)) / 1024.0
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): (\S+)", done.stderr).group(1))
              for kind in ("User", "System"))
    print(f"  {tree}: {' '.join(args[:1])} wall {seconds:.1f} s, CPU (user + system) {cpu:.1f} s, "
          f"max RSS {rss:.0f} MB, load {load()}", flush=True)
    return seconds, rss, cpu


def _ram() -> str:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return "RAM unknown"
    return f"{pages * size / 2**30:.0f} GB RAM"


def _niceness() -> str:
    nice = os.nice(0)
    return f", run at niceness {nice} (times stretch with the load; peak memory does not)" if nice else ""


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "calviz_bigdata")
    parser.add_argument("--baseline", type=Path, help="source tree of another calviz version to compare")
    parser.add_argument("--baseline-commands", default="check,report",
                        help="commands also run on the baseline tree (comma-separated)")
    parser.add_argument("--skip-csv", action="store_true", help="leave out the CSV files (slow to write)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds after which a run is stopped")
    parser.add_argument("--files", default="", help="run only the files whose label contains this text, "
                        "e.g. 'K = 10 top-1, Parquet'")
    parser.add_argument("--commands", default="check,report", help="commands run (comma-separated)")
    parser.add_argument("--full-warm-up", action="store_true",
                        help="also one untimed check of every file per tree before timing (a tree whose "
                        "numba cache is cold compiles the large inputs' kernels in its first run otherwise)")
    parser.add_argument("--output", type=Path, default=RESULTS / "bench_bigdata.md")
    args = parser.parse_args()
    files = make_files(args.n, args.data_dir, csv=not args.skip_csv, only=args.files)
    trees = {"this tree": ROOT}
    if args.baseline is not None:
        trees["baseline"] = args.baseline.resolve()
    small = make_files(2000, args.data_dir, csv=False, only=args.files)
    load_before = load()
    for tree in trees.values():  # warm-up: numba's cache for this tree
        for path in small.values():
            if path.suffix == ".parquet":
                run(tree, ["check", str(path)])
        if args.full_warm_up:  # the kernels only large inputs take (threaded paths) compiled too
            for path in files.values():
                run(tree, ["check", str(path)], timeout=args.timeout)
    rows = []
    out_dir = Path(tempfile.mkdtemp(prefix="calviz_bench_report_"))
    commands = args.commands.split(",")
    jobs = [("check", name, path) for name, path in files.items() if "check" in commands]
    jobs += [("report", name, path) for name, path in files.items()
             if "Parquet" in name and "report" in commands]
    for command, name, path in jobs:
        times: dict[str, list] = {label: [] for label in trees}
        for _ in range(args.repeats):
            for label, tree in trees.items():  # interleaved: both trees see the same load
                if label == "baseline" and command not in args.baseline_commands.split(","):
                    times[label].append((float("nan"),) * 3)
                    continue
                extra = ["-o", str(out_dir / "report.html")] if command == "report" else []
                times[label].append(run(tree, [command, str(path), *extra], timeout=args.timeout))
        row = {"command": command, "file": name}
        for label, values in times.items():
            row[label] = tuple(statistics.median(v[i] for v in values) for i in range(3))
            row[label + " runs"] = values
        rows.append(row)
        print(row, flush=True)
        write(args, rows, trees, load_before, load(), complete=len(rows) == len(jobs))  # after every row
    return 0


def write(args, rows, trees, load_before, load_after, complete: bool = True) -> None:
    labels = list(trees)
    head = "| command | file | " + " | ".join(
        f"{lb}: time | {lb}: CPU | {lb}: peak RSS | {lb}: runs (wall / CPU)" for lb in labels)
    if "baseline" in trees:
        head += " | time ratio (baseline / this) | RSS ratio"
    lines = [head + " |", "|" + "---|" * head.count("|")]
    for row in rows:
        cells = [row["command"], row["file"]]
        for label in labels:
            seconds, rss, cpu = row[label]
            if seconds != seconds:  # not run
                cells += ["not run", "—", "—", "—"]
                continue
            cells += [f"{seconds:.1f} s" if seconds < float("inf") else f"> {args.timeout:g} s (stopped)",
                      f"{cpu:.1f} s" if cpu == cpu else "—", f"{rss:,.0f} MB" if rss == rss else "—",
                      ", ".join(f"{w:.1f} / {c:.1f} s" for w, _, c in row[label + " runs"])]
        if "baseline" in trees:
            (base_s, base_mb, _), (this_s, this_mb, _) = row["baseline"], row["this tree"]
            finite = base_s < float("inf")
            if base_s != base_s:
                cells += ["—", "—"]
                lines.append("| " + " | ".join(cells) + " |")
                continue
            cells.append(f"{base_s / this_s:.2f}×" if finite else f"> {args.timeout / this_s:.0f}×")
            cells.append(f"{base_mb / this_mb:.2f}×" if base_mb == base_mb else "—")
        lines.append("| " + " | ".join(cells) + " |")
    flags = [f"--n {args.n}" if args.n != 10**7 else "",
             f"--repeats {args.repeats}" if args.repeats != 1 else "",
             "--skip-csv" if args.skip_csv else "",
             "--baseline BASELINE_TREE" if args.baseline else "",
             f"--baseline-commands {args.baseline_commands}" if args.baseline
             and args.baseline_commands != "check,report" else "",
             f"--files '{args.files}'" if args.files else "",
             f"--commands {args.commands}" if args.commands != "check,report" else "",
             "--full-warm-up" if args.full_warm_up else ""]
    command = " ".join(["python benchmarks/bench_bigdata.py", *filter(None, flags)])
    text = f"""## Large files: `calviz check` and `calviz report` at n = {args.n:,}

Command: `{command}` — each run a fresh process under `/usr/bin/time -v` (start-up and imports included),
median of {args.repeats} run(s) after a warm-up; {os.cpu_count()} cores ({platform.machine()}), {_ram()}, load
average (1, 5, 15 min) {load_before} before and {load_after} after{_niceness()}.  Targets: `check` under
{TARGETS['check_seconds']:g} s and {TARGETS['check_rss_mb']:g} MB peak RSS, `report` under
{TARGETS['report_seconds']:g} s.  Files from `calviz.synthetic`: binary `temperature_family` (β = 1.2) and
10-class `dirichlet_temperature` (β = 1.5, top-1 target); NPZ files as `write_predictions` writes them
(compressed).  CSV and Parquet files are read a block of rows at a time, and so are multiclass NPZ and NPY
arrays; for the top-1 target a 10-class file keeps only the labels, the confidence and the correctness in
memory (24 bytes a row; each class's column goes to a temporary file for the classwise ACE), never the
(n, K) matrix (`read_predictions(..., keep_matrix=False)`).  The distance bounds and the resampled T-Cal
run on a uniform subsample of 200,000 rows and the bootstrap interval on 50,000 (`calviz.sampling`, stated
in the output); every other number uses all rows.  `--all-rows` computes everything on all rows.

{chr(10).join(lines)}

Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}{"" if complete else
                                                           " (partial: the run was still going)"}.
"""
    args.output.write_text(text)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    sys.exit(main())
