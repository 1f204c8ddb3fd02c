"""Small-sample coverage of the asymptotic ECE interval (Sun et al. 2024) and of the percentile bootstrap.

The interval's guarantee is asymptotic.  This script measures its coverage of the binned ECE²_m of the bins
used (``Scenario.binned_ece_sq``) at n ∈ {100, 200, 500} at the 90 % level, with
calviz's default 15 equal-width bins, for calibrated and miscalibrated models:

* Setting 1 (``logit_distorted``): K = 2, Z uniform, P(Y = 0 | Z) = σ(β logit Z₀), top-1 target;
  β = 1 calibrated; β = 0.8 mildly and β = 0.5 clearly miscalibrated (logits shrunk by β).
* Setting 2 (``beta_top1``): as Setting 1 with the top-1 probability ~ Beta(5, 0.5) (a confident model);
  β = 1 calibrated, β = 0.8 and 0.5 miscalibrated.

Each cell: ``--reps`` data sets (default 1000), the asymptotic interval and the percentile bootstrap
(``--resamples``, default 200, as Sun et al.); coverage ± its Monte Carlo standard error
√(c(1 − c)/reps).  A cell fails when coverage < 0.9 − 2·√(0.9·0.1/reps).

Run: ``nice python benchmarks/interval_small_n.py`` (single process; ``--quick`` for a smoke run).
Writes benchmarks/results/interval_small_n.md (the table copied into BENCHMARKS.md); ``--sizes 20 30 50
--name interval_tiny_n`` measures where the coverage gives way.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LEVEL = 0.9
N_BINS = 15
SIZES = (100, 200, 500)
#: (setting label, scenario, parameter, value, calibrated?)
CASES = (
    ("1: uniform Z", "logit_distorted", "beta", 1.0, True),
    ("1: uniform Z", "logit_distorted", "beta", 0.8, False),
    ("1: uniform Z", "logit_distorted", "beta", 0.5, False),
    ("2: Z ~ Beta(5, 0.5)", "beta_top1", "beta", 1.0, True),
    ("2: Z ~ Beta(5, 0.5)", "beta_top1", "beta", 0.8, False),
    ("2: Z ~ Beta(5, 0.5)", "beta_top1", "beta", 0.5, False),
)
RESULTS = Path(__file__).resolve().parent / "results"


def run_cell(case_index: int, n: int, reps: int, resamples: int) -> dict:
    import calviz
    from calviz import _synthetic as synthetic

    label, name, param, value, calibrated = CASES[case_index]
    generator = synthetic.SCENARIOS[name]
    target = generator(10, 0, **{param: value}).binned_ece_sq(N_BINS)
    asym_cover = boot_cover = 0
    asym_len = boot_len = 0.0
    for rep in range(reps):
        data_seed, boot_seed = np.random.SeedSequence([case_index, n, rep]).spawn(2)
        sc = generator(n, np.random.default_rng(data_seed), **{param: value})
        asym = calviz.ece_interval(sc.y_true, sc.y_prob, n_bins=N_BINS, alpha=1 - LEVEL)
        boot = calviz.ece_interval(sc.y_true, sc.y_prob, n_bins=N_BINS, alpha=1 - LEVEL, method="bootstrap",
                                   n_resamples=resamples, seed=np.random.default_rng(boot_seed))
        asym_cover += asym.low_sq <= target <= asym.high_sq
        boot_cover += boot.low_sq <= target <= boot.high_sq
        asym_len += asym.high_sq - asym.low_sq
        boot_len += boot.high_sq - boot.low_sq
    return {"label": label, "value": value, "calibrated": calibrated, "n": n, "target": target,
            "asym": asym_cover / reps, "boot": boot_cover / reps, "asym_len": asym_len / reps,
            "boot_len": boot_len / reps, "reps": reps}


def _pm(c: float, reps: int) -> str:
    return f"{c:.3f} ± {math.sqrt(max(c * (1 - c), 1e-12) / reps):.3f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="smoke run: 100 reps, 200 resamples")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="sample sizes n")
    parser.add_argument("--name", default="interval_small_n", help="results file stem")
    args = parser.parse_args(argv)
    reps, resamples = (100, 200) if args.quick else (args.reps, args.resamples)
    command = "nice python benchmarks/interval_small_n.py " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    start = time.perf_counter()
    rows = []
    for i in range(len(CASES)):
        for n in args.sizes:
            row = run_cell(i, n, reps, resamples)
            rows.append(row)
            print(f"{row['label']} β={row['value']} n={n}: asym {_pm(row['asym'], reps)}, "
                  f"boot {_pm(row['boot'], reps)}", flush=True)
    elapsed = time.perf_counter() - start
    se = math.sqrt(LEVEL * (1 - LEVEL) / reps)
    floor = LEVEL - 2 * se
    lines = [
        "# Small-sample coverage of the asymptotic ECE interval (`calviz.ece_interval`)",
        "",
        f"Command: `{command.strip()}`. {reps} data sets per cell, {resamples} bootstrap resamples, level"
        f" {LEVEL:.0%}, {N_BINS} equal-width bins (the default), 1 process, os.cpu_count() ="
        f" {os.cpu_count()}, load {os.getloadavg()[0]:.1f} at the end, wall time {elapsed:.0f} s (shared"
        f" machine). calviz commit"
        f" {commit}.",
        "",
        f"Target: the binned ECE²_m of the 15 bins. Coverage ± Monte Carlo s.e. √(c(1 − c)/{reps}); a cell "
        f"fails (✗) below {LEVEL} − 2·{se:.4f} = {floor:.3f}. Mean length on the ECE² scale.",
        "",
        "| setting | β | calibrated | n | ECE²_m | asymptotic coverage | bootstrap coverage "
        "| asym. length | boot. length |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mark = lambda c: "" if c >= floor else " ✗"  # noqa: E731
        lines.append(
            f"| {r['label']} | {r['value']:g} | {'yes' if r['calibrated'] else 'no'} | {r['n']} | "
            f"{r['target']:.4g} | {_pm(r['asym'], reps)}{mark(r['asym'])} | {_pm(r['boot'], reps)}"
            f"{mark(r['boot'])} | {r['asym_len']:.4g} | {r['boot_len']:.4g} |")
    failing = sorted({r["n"] for r in rows if r["asym"] < floor})
    lines += ["", f"Sizes where the asymptotic interval under-covers in some case: {failing or 'none'}."]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
