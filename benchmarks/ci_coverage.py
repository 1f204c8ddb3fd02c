"""Coverage and length of the ECE interval of Sun et al. (2024) vs the percentile bootstrap (their Sec. 4.1).

Reproduces the paper's three simulations with n = 1000 at the 90 % level:

* Setting 1 (``calviz.synthetic.logit_distorted``): K = 2, Z uniform, P(Y = 0 | Z) = σ(β logit Z₀),
  top-1 target, 50 equal-width bins, β ∈ {0, 0.05, …, 1} (β = 1 calibrated).
* Setting 2 (``beta_top1``): as Setting 1 with the top-1 probability ~ Beta(5, 0.5).
* Setting 3 (``perturbed_top2``): K = 10, Z uniform on Δ₉, ε moved from the top-1 to the top-2 class,
  top-1-to-2 target, 20 bins per axis, ε ∈ {0, 0.005, …, 0.095} (ε = 0 calibrated).

For every grid point it draws ``--reps`` data sets, computes ``calviz.ece_interval(..., method=
"asymptotic")`` and ``method="bootstrap"`` and records whether each covers the *binned* target ECE²_m =
Σ_b P(B_b)‖E[y − z | z ∈ B_b]‖² of the bins actually used (``Scenario.binned_ece_sq``: adaptive
quadrature for Settings 1–2, exactly 2ε² for Setting 3).  Coverage must be ≥ 0.9 − 2 MC s.e. (s.e. =
√(0.9·0.1/reps)) at every point and the asymptotic interval must be shorter on average than the
bootstrap's.  The coverage of the un-binned ECE² (the paper's plotted target) is reported for reference.

Run: ``python benchmarks/ci_coverage.py`` (full: 1000 reps, 1000 bootstrap resamples = calviz's default;
the authors used 200: ``--resamples 200``; 2 processes) or
``--quick`` (a smoke run).  Writes benchmarks/results/ci_coverage.md and ci_coverage.png.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

# run from a checkout without installing: make the repository root importable (spawned workers inherit it)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LEVEL = 0.9
ALPHA = 1.0 - LEVEL
N = 1000
RESULTS = Path(__file__).resolve().parent / "results"
VERSION = "unknown"

# name, generator, grid parameter, grid, bins per axis, top_k
SETTINGS = {
    1: ("logit_distorted", "beta", np.round(np.arange(0.0, 1.0001, 0.05), 3), 50, 1),
    2: ("beta_top1", "beta", np.round(np.arange(0.0, 1.0001, 0.05), 3), 50, 1),
    3: ("perturbed_top2", "epsilon", np.round(np.arange(0.0, 0.0951, 0.005), 3), 20, 2),
}


def run_point(task):
    """All repetitions of one (setting, grid value): coverage indicators and lengths on the ECE² scale."""
    setting, index, value, reps, n_resamples = task
    import calviz
    from calviz import _synthetic as synthetic

    name, param, _, n_bins, top_k = SETTINGS[setting]
    generator = synthetic.SCENARIOS[name]
    first = generator(N, 0, **{param: value})
    target_sq = first.binned_ece_sq(n_bins)
    true_sq = first.true_ece**2
    out = {
        "asym_cover": [],
        "boot_cover": [],
        "asym_len": [],
        "boot_len": [],
        "asym_cover_true": [],
        "boot_cover_true": [],
        "asym_low0": [],
    }
    for rep in range(reps):
        ss = np.random.SeedSequence([setting, index, rep])
        data_seed, boot_seed = ss.spawn(2)
        sc = generator(N, np.random.default_rng(data_seed), **{param: value})
        asym = calviz.ece_interval(
            sc.y_true, sc.y_prob, n_bins=n_bins, alpha=ALPHA, top_k=top_k, method="asymptotic"
        )
        boot = calviz.ece_interval(
            sc.y_true,
            sc.y_prob,
            n_bins=n_bins,
            alpha=ALPHA,
            top_k=top_k,
            method="bootstrap",
            n_resamples=n_resamples,
            seed=np.random.default_rng(boot_seed),
        )
        for key, iv in (("asym", asym), ("boot", boot)):
            out[f"{key}_cover"].append(iv.low_sq <= target_sq <= iv.high_sq)
            out[f"{key}_cover_true"].append(iv.low_sq <= true_sq <= iv.high_sq)
            out[f"{key}_len"].append(iv.high_sq - iv.low_sq)
        out["asym_low0"].append(asym.low_sq == 0.0)
    summary = {k: float(np.mean(v)) for k, v in out.items()}
    summary.update(
        setting=setting,
        index=index,
        value=float(value),
        target_sq=target_sq,
        true_sq=true_sq,
        reps=reps,
        n_bins=n_bins,
        top_k=top_k,
    )
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 100 reps, every 5th grid point")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per grid point (default 1000)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 1000)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--settings", type=int, nargs="*", default=[1, 2, 3])
    parser.add_argument(
        "--values",
        type=float,
        nargs="*",
        default=None,
        help="only these grid values (a targeted follow-up run)",
    )
    parser.add_argument("--name", default="ci_coverage", help="results file stem (default ci_coverage)")
    args = parser.parse_args(argv)
    reps = args.reps or (100 if args.quick else 1000)
    # ece_interval's default (Efron's recommendation for percentile intervals); the authors used 200, which
    # gives slightly shorter (and noisier) percentile intervals: --resamples 200
    resamples = args.resamples or 1000
    step = 5 if args.quick else 1
    processes = max(1, min(args.processes, 2))  # shared 2-core machine: never more than 2

    tasks = []
    for setting in args.settings:
        grid = SETTINGS[setting][2]
        tasks += [
            (setting, i, float(grid[i]), reps, resamples)
            for i in range(0, len(grid), step)
            if args.values is None or any(abs(grid[i] - v) < 1e-9 for v in args.values)
        ]
    command = "python benchmarks/ci_coverage.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(
        f"command: {command.strip()}\nn = {N}, reps = {reps}, bootstrap resamples = {resamples}, "
        f"processes = {processes}, os.cpu_count() = {os.cpu_count()}, grid points = {len(tasks)}",
        flush=True,
    )
    global VERSION
    VERSION = _code_version()
    print(f"calviz commit {VERSION}", flush=True)
    start = time.perf_counter()
    results = []
    with mp.get_context("spawn").Pool(processes) as pool:
        for res in pool.imap_unordered(run_point, tasks):
            results.append(res)
            print(
                f"  setting {res['setting']} {SETTINGS[res['setting']][1]}={res['value']:.3f}: coverage "
                f"asym {res['asym_cover']:.3f} boot {res['boot_cover']:.3f}; mean length asym "
                f"{res['asym_len']:.5f} boot {res['boot_len']:.5f}",
                flush=True,
            )
    elapsed = time.perf_counter() - start
    results.sort(key=lambda r: (r["setting"], r["index"]))
    ok = write_report(results, reps, resamples, processes, elapsed, command.strip(), args.name)
    print(f"elapsed {elapsed:.1f} s; {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def _code_version() -> str:
    """The commit the engine came from, flagging uncommitted changes to the interval code."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--",
                "calviz/intervals.py",
                "calviz/ece.py",
                "calviz/binning.py",
                "calviz/_kernels",
                "calviz/data.py",
                "calviz/synthetic.py",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" + uncommitted engine changes" if dirty else "")


def write_report(results, reps, resamples, processes, elapsed, command, name="ci_coverage") -> bool:
    se = np.sqrt(LEVEL * (1.0 - LEVEL) / reps)
    threshold = LEVEL - 2.0 * se
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Coverage of the Sun et al. (2024) ECE interval (asymptotic) vs the percentile bootstrap",
        "",
        f"Command: `{command}`. n = {N}, {reps} data sets per grid point, {resamples} bootstrap resamples, "
        f"level {LEVEL:.0%}, {processes} worker processes, os.cpu_count() = {os.cpu_count()}, "
        f"wall time {elapsed:.0f} s (shared machine). calviz commit {VERSION}.",
        "",
        f"Target: the binned ECE²_m of the bins used (quadrature; 2ε² in Setting 3). Pass rule: coverage ≥ "
        f"0.9 − 2·MC s.e. = {threshold:.4f} (s.e. = √(0.9·0.1/{reps}) = {se:.4f}) at every point and mean "
        "length (ECE² scale) shorter than the bootstrap's. `cover(ECE²)` = coverage of the un-binned true "
        "ECE² (the paper's plotted target), for reference. `L=0` = share of asymptotic intervals whose lower "
        "end is 0.",
        "",
    ]
    all_ok = True
    for setting in sorted({r["setting"] for r in results}):
        scenario, param, _, n_bins, top_k = SETTINGS[setting]
        rows = [r for r in results if r["setting"] == setting]
        lines += [
            f"## Setting {setting}: `calviz.synthetic.{scenario}`, top_k = {top_k}, {n_bins} bins per axis",
            "",
            f"| {param} | ECE²_m target | ECE² (unbinned) | cover asym | cover boot | len asym | "
            "len boot | boot/asym | cover(ECE²) asym | L=0 | pass |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            ok = r["asym_cover"] >= threshold and r["asym_len"] < r["boot_len"]
            all_ok &= ok
            lines.append(
                f"| {r['value']:.3f} | {r['target_sq']:.3e} | {r['true_sq']:.3e} | {r['asym_cover']:.3f} | "
                f"{r['boot_cover']:.3f} | {r['asym_len']:.3e} | {r['boot_len']:.3e} | "
                f"{r['boot_len'] / r['asym_len']:.2f} | {r['asym_cover_true']:.3f} | {r['asym_low0']:.2f} | "
                f"{'yes' if ok else '**NO**'} |"
            )
        worst = min(rows, key=lambda r: r["asym_cover"])
        min_boot = min(r["boot_cover"] for r in rows)
        lines += [
            "",
            f"Minimum asymptotic coverage {worst['asym_cover']:.3f} at {param} = "
            f"{worst['value']:.3f}; minimum bootstrap coverage {min_boot:.3f}.",
            "",
        ]
    lines += [
        f"**Overall: {'PASS' if all_ok else 'FAIL'}** — every point meets the coverage and length rule."
        if all_ok
        else "**Overall: FAIL** — see rows marked NO.",
        "",
    ]
    (RESULTS / f"{name}.md").write_text("\n".join(lines))
    plot(results, threshold, name)
    return all_ok


def plot(results, threshold, name="ci_coverage") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = sorted({r["setting"] for r in results})
    fig, axes = plt.subplots(2, len(settings), figsize=(4.2 * len(settings), 6.5), squeeze=False)
    for col, setting in enumerate(settings):
        scenario, param, _, n_bins, top_k = SETTINGS[setting]
        rows = [r for r in results if r["setting"] == setting]
        x = [r["value"] for r in rows]
        ax = axes[0, col]
        ax.plot(x, [r["asym_cover"] for r in rows], "o-", label="calviz asymptotic (Sun et al. (2024))")
        ax.plot(x, [r["boot_cover"] for r in rows], "s--", label="percentile bootstrap")
        ax.axhline(LEVEL, color="k", lw=0.8)
        ax.axhline(threshold, color="k", lw=0.8, ls=":", label="0.9 − 2 MC s.e.")
        ax.set_ylim(0.0, 1.02)
        ax.set_title(f"Setting {setting} ({scenario}, top-{top_k}, m={n_bins})", fontsize=9)
        ax.set_ylabel("coverage of binned ECE²")
        ax.set_xlabel(param)
        ax = axes[1, col]
        ax.plot(x, [r["asym_len"] for r in rows], "o-", label="calviz asymptotic")
        ax.plot(x, [r["boot_len"] for r in rows], "s--", label="percentile bootstrap")
        ax.set_ylabel("mean interval length (ECE² scale)")
        ax.set_xlabel(param)
    axes[0, 0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"90 % intervals for the binned ECE², n = {N}", fontsize=11)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name}.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
