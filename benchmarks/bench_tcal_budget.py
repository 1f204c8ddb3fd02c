"""T-Cal's sequential resampled test within its default budget (10 s or 10⁶ resamples) on borderline cases.

    nice python benchmarks/bench_tcal_budget.py [--cases 4] [--seeds 3] [--reference 1000000]

Cases: n = 8,000 binary predictions with a sinusoidal miscalibration whose amplitude is tuned (bisection on
the analytic p-value) so that the adjusted p-value lies within 0.02 of α = 0.05.  Each case runs
``calviz.adaptive_tcal`` (y-only, sequential, default budgets) for several seeds, timing each call, and a
reference with a fixed count of resamples (the hard limit, 10⁶; another seed).  Checked per run: the
decision is "reject"/"accept" exactly when the reported Monte Carlo interval excludes α (else
"undecided" with that interval), it never contradicts the reference (a settled decision on the other
side of α from a reference whose own interval excludes α), and the call's wall time against the budget.

Results: benchmarks/results/bench_tcal_budget.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

import calviz
from calviz import _tcal_decision as D

HERE = Path(__file__).resolve().parent
ALPHA = 0.05
N = 8000


def wiggle(n, amp, seed, freq=4.0):
    rng = np.random.default_rng(seed)
    z = rng.random(n)
    g = np.clip(z + amp * np.sin(2 * np.pi * freq * z), 0.0, 1.0)
    return (rng.random(n) < g).astype(np.int64), z


def tuned(seed, target):
    lo, hi = 0.0, 0.2
    for _ in range(25):
        mid = 0.5 * (lo + hi)
        p = calviz.adaptive_tcal(*wiggle(N, mid, seed), resampling="analytic").pvalue
        lo, hi = (mid, hi) if p > target else (lo, mid)
    return 0.5 * (lo + hi)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--reference", type=int, default=D.MAX_RESAMPLES)
    args = parser.parse_args()
    targets = np.linspace(0.035, 0.065, args.cases)
    calviz.adaptive_tcal(*wiggle(2000, 0.05, 0), seed=0, max_resamples=1000)  # JIT warm-up
    rows = []
    load = os.getloadavg()[0]
    for case, target in enumerate(targets):
        amp = tuned(100 + case, target)
        y, z = wiggle(N, amp, 100 + case)
        analytic = calviz.adaptive_tcal(y, z, resampling="analytic").pvalue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            ref = calviz.adaptive_tcal(y, z, n_resamples=args.reference, seed=999_999)
            ref_seconds = time.perf_counter() - t0
        ref_low, ref_high = ref.pvalue_interval
        ref_side = "reject" if ref_high <= ALPHA else "accept" if ref_low > ALPHA else "either"
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            r = calviz.adaptive_tcal(y, z, seed=seed)
            seconds = time.perf_counter() - t0
            low, high = r.pvalue_interval
            excludes = high <= ALPHA or low > ALPHA
            consistent = (r.decision != "undecided") == excludes
            contradicts = r.decision != "undecided" and ref_side != "either" and r.decision != ref_side
            within = seconds <= D.DEFAULT_TIME_BUDGET and r.n_resamples <= D.DEFAULT_MAX_RESAMPLES
            rows.append(dict(case=case, amp=amp, analytic=analytic, ref_p=ref.pvalue, ref_low=ref_low,
                             ref_high=ref_high, ref_side=ref_side, ref_seconds=ref_seconds, seed=seed,
                             decision=r.decision, n_resamples=r.n_resamples, low=low, high=high,
                             seconds=seconds, consistent=consistent, contradicts=contradicts, within=within))
            print(rows[-1], flush=True)
    lines = ["# bench_tcal_budget — T-Cal's sequential test within its budget on borderline cases", "",
             f"Command: `nice python benchmarks/bench_tcal_budget.py --cases {args.cases} --seeds "
             f"{args.seeds} --reference {args.reference}` · `os.cpu_count()` = {os.cpu_count()} · Python "
             f"{platform.python_version()} · 1-minute load average {load:.1f} at the start (a shared 2-core "
             f"machine: the time budget buys fewer resamples than on a quiet one).", "",
             f"n = {N:,} binary predictions, miscalibration amplitude tuned so the analytic adjusted p-value "
             f"is near the target; `calviz.adaptive_tcal(y, z, seed=s)` with the defaults (y-only, "
             f"sequential, resampling risk 10⁻³, budget {D.DEFAULT_TIME_BUDGET:g} s or "
             f"{D.DEFAULT_MAX_RESAMPLES:,} resamples). Reference: {args.reference:,} resamples (fixed count, "
             f"seed 999999; 10⁶ is the hard limit of an explicit count — a 10⁷ reference was not run).",
             "", "*consistent*: decided exactly when the reported interval excludes α; *contradicts*: a "
             "settled decision on the other side of α from a reference whose interval excludes α; *within "
             f"budget*: wall time ≤ {D.DEFAULT_TIME_BUDGET:g} s and resamples ≤ "
             f"{D.DEFAULT_MAX_RESAMPLES:,}.", "",
             "| case | analytic p | reference p [interval] | seed | decision | resamples | MC interval | "
             "seconds | consistent | contradicts | within budget |",
             "|---:|---:|---|---:|---|---:|---|---:|:-:|:-:|:-:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['analytic']:.4f} | {r['ref_p']:.4f} [{r['ref_low']:.4f}, "
                     f"{r['ref_high']:.4f}] | {r['seed']} | {r['decision']} | {r['n_resamples']:,} | "
                     f"[{r['low']:.4f}, {r['high']:.4f}] | {r['seconds']:.1f} | "
                     f"{'✅' if r['consistent'] else '❌'} | {'❌' if r['contradicts'] else 'no'} | "
                     f"{'✅' if r['within'] else '❌'} |")
    decided = sum(r["decision"] != "undecided" for r in rows)
    contradicted = sum(r["contradicts"] for r in rows)
    over = sum(not r["within"] for r in rows)
    ref_median = float(np.median([r["ref_seconds"] for r in rows]))
    lines += ["", f"{decided} of {len(rows)} runs decided; {contradicted} contradicted the reference; "
              f"{over} exceeded the budget; reference runs took {ref_median:.0f} s (median).", ""]
    (HERE / "results" / "bench_tcal_budget.md").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
