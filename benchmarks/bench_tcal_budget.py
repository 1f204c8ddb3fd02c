"""T-Cal's sequential test within its budget on borderline cases, against a 10⁷-resample reference.

    nice python benchmarks/bench_tcal_budget.py [--targets 0.045 0.055] [--seeds 2] [--reference 10000000]
                                                [--deadline 840]

Cases: n = 8,000 binary predictions with a sinusoidal miscalibration whose amplitude is tuned (bisection on
the analytic p-value) so that the adjusted p-value lies within 0.02 of α = 0.05.  Each case runs
``calviz.adaptive_tcal`` (y-only, sequential) for several seeds under two budgets — the default (a cap of
10⁵ resamples) and ``time_budget=10, max_resamples=10**6`` — timing each call, and a reference of
``--reference`` y-only resamples (another seed).  An explicit ``n_resamples`` stops at 10⁶, so the
reference draws its resamples in chunks of 5·10⁵ through the test's own resampling kernel (resample r always
comes from random stream r, so the chunks are the rows of one long run) and counts per scale the resampled
statistics ≥ the observed one (the test's tie tolerance); its adjusted p-value is B·min_b (1 + c_b)/(N + 1)
with the exact Clopper–Pearson interval at the test's resampling risk (Bonferroni over scales), as for a
fixed count.  ``--deadline`` bounds the whole run in seconds: a reference starts a chunk only if it should
end in time (at the pace of its chunks so far), so it may stop short of ``--reference``; its N and
interval say so.

Checked per run: the decision is "reject"/"accept" exactly when the reported Monte Carlo interval excludes
α (else "undecided" with that interval), it never contradicts the reference (a settled decision on the
other side of α from a reference whose own interval excludes α), and the call's wall time and resamples
against its budget.

Results: benchmarks/results/bench_tcal_budget.md (every run appended to bench_tcal_budget.jsonl).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

import calviz
from calviz import _tcal_decision as D
from calviz._kernels import tcal as _k
from calviz._tcal import _MemorySample

HERE = Path(__file__).resolve().parent
ALPHA = 0.05
N = 8000
CHUNK = D.MAX_RESAMPLES // 2
#: the budgets compared: (name, keyword arguments of adaptive_tcal, seconds allowed, resamples allowed)
BUDGETS = (("default", {}, None, D.DEFAULT_MAX_RESAMPLES),
           ("10 s / 10⁶", {"time_budget": 10.0, "max_resamples": D.MAX_RESAMPLES}, 10.0, D.MAX_RESAMPLES))


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


def reference(y, z, count, seed, stop_at):
    """(N drawn, adjusted p, interval, seconds) of ``count`` y-only resamples in chunks (fewer if the
    next chunk would end after ``stop_at``)."""
    t0 = time.perf_counter()
    sample = _MemorySample(np.ascontiguousarray(z, dtype=np.float64), y.astype(np.float64), 2, "binary")
    _, levels, _ = D.scale_plan(N, 2, False)
    t_obs = sample.observed(levels)
    base = D.base_seed(seed)
    exceed = np.zeros(levels, dtype=np.int64)
    drawn, tol, per_chunk = 0, None, 0.0
    # a chunk starts only if it should end before stop_at (at the pace of the chunks so far)
    while drawn < count and (drawn == 0 or time.perf_counter() + per_chunk < stop_at):
        step = min(CHUNK, count - drawn)
        boot = sample.resample(levels, _k.Y_ONLY, base, drawn, step)
        if tol is None:  # the test's tie tolerance, from the first chunk's spread (ties only: 1e-9 relative)
            sd = np.sqrt(np.concatenate([boot, t_obs[None, :]]).var(axis=0))
            tol = D._TIE_RTOL * (np.abs(t_obs) + sd)
        exceed += (boot >= (t_obs - tol)[None, :]).sum(axis=0)
        drawn += step
        per_chunk = (time.perf_counter() - t0) * CHUNK / drawn
        print(f"  reference: {drawn:,} resamples, {time.perf_counter() - t0:.0f} s", flush=True)
    p = float(min(1.0, levels * ((1.0 + exceed) / (drawn + 1.0)).min()))
    low, high = D.adjusted_interval(exceed, drawn, ALPHA / levels, D.RESAMPLING_RISK, "bonferroni", levels,
                                    sequential=False)
    return drawn, p, (low, high), time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=float, nargs="*", default=[0.045, 0.055],
                        help="target analytic p-values of the cases")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--reference", type=int, default=10_000_000)
    parser.add_argument("--deadline", type=float, default=840.0, help="seconds for the whole run")
    parser.add_argument("--first-case", type=int, default=0, help="number of the first case (its seed)")
    parser.add_argument("--table", metavar="STAMP",
                        help="only rewrite the table from the stored rows of the run started at STAMP")
    args = parser.parse_args()
    started = time.perf_counter()
    store = HERE / "results" / "bench_tcal_budget.jsonl"
    if args.table:
        rows = stored_rows(store, args.table)
        write_markdown(rows, rows[0]["load"], float("nan"), args.table, args.deadline)
        return 0
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    calviz.adaptive_tcal(*wiggle(2000, 0.05, 0), seed=0, max_resamples=1000)  # JIT warm-up
    load = os.getloadavg()[0]
    n_cases = len(args.targets)
    for case, target in enumerate(args.targets, start=args.first_case):
        amp = tuned(100 + case, target)
        y, z = wiggle(N, amp, 100 + case)
        analytic = calviz.adaptive_tcal(y, z, resampling="analytic").pvalue
        rows = []
        for budget, kwargs, seconds_allowed, resamples_allowed in BUDGETS:
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                r = calviz.adaptive_tcal(y, z, seed=seed, **kwargs)
                seconds = time.perf_counter() - t0
                low, high = r.pvalue_interval
                rows.append(dict(case=case, amp=amp, analytic=analytic, budget=budget, seed=seed,
                                 decision=r.decision, n_resamples=r.n_resamples, pvalue=r.pvalue, low=low,
                                 high=high, seconds=seconds,
                                 consistent=(r.decision != "undecided") == (high <= ALPHA or low > ALPHA),
                                 within=(seconds_allowed is None or seconds <= seconds_allowed)
                                 and r.n_resamples <= resamples_allowed))
                print(rows[-1], flush=True)
        # the reference gets what is left of the deadline, shared among the cases still to run
        left = n_cases - (case - args.first_case)
        stop_at = time.perf_counter() + max(0.0, (args.deadline - (time.perf_counter() - started)) / left)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref_n, ref_p, (ref_low, ref_high), ref_seconds = reference(y, z, args.reference, 999_999, stop_at)
        ref_side = "reject" if ref_high <= ALPHA else "accept" if ref_low > ALPHA else "either"
        for row in rows:
            row.update(ref_n=ref_n, ref_p=ref_p, ref_low=ref_low, ref_high=ref_high, ref_side=ref_side,
                       ref_seconds=ref_seconds, started=stamp, load=load,
                       contradicts=row["decision"] != "undecided" and ref_side != "either"
                       and row["decision"] != ref_side)
            with store.open("a") as f:
                f.write(json.dumps({k: v.item() if isinstance(v, np.generic) else v for k, v in row.items()})
                        + "\n")
    total = time.perf_counter() - started
    # the table: this run's rows (earlier runs stay in the store; --table STAMP lists another run's)
    write_markdown(stored_rows(store, stamp), load, total, stamp, args.deadline)
    return 0


def stored_rows(store: Path, stamp: str) -> list[dict]:
    """The rows of the run started at ``stamp`` in the store."""
    stored = [json.loads(line) for line in store.read_text().splitlines() if line.strip()]
    return [r for r in stored if "budget" in r and r.get("started") == stamp]


def write_markdown(rows, load, total, stamp, deadline):
    lines = ["# bench_tcal_budget — T-Cal's sequential test within its budget on borderline cases", "",
             f"Command: `python benchmarks/bench_tcal_budget.py --deadline {deadline:.0f}` (run "
             f"{stamp}, {total:.0f} s; each row's run start and 1-minute load average in "
             "bench_tcal_budget.jsonl) · "
             f"`os.cpu_count()` = {os.cpu_count()} · Python {platform.python_version()} · load {load:.1f} "
             "at the start of the last run (a shared 2-core machine).", "",
             f"n = {N:,} binary predictions, miscalibration amplitude tuned so the analytic adjusted p-value "
             "is near the target; `calviz.adaptive_tcal(y, z, seed=s)` (y-only, sequential, resampling "
             f"risk 10⁻³) under two budgets: *default* (cap {D.DEFAULT_MAX_RESAMPLES:,} resamples, no time "
             f"limit) and *10 s / 10⁶* (`time_budget=10, max_resamples=10**6`). Reference: *reference N* "
             "y-only resamples (seed 999999) drawn in chunks of 5·10⁵ through the test's resampling kernel, "
             "adjusted p-value B·min_b (1 + c_b)/(N + 1) with its exact Clopper–Pearson interval at risk "
             "10⁻³ (Bonferroni over the B scales); the Monte Carlo standard error of the reference p is "
             "about √(p·B/N) (B = number of scales). The reference stops short of 10⁷ resamples when the "
             f"run's deadline (`--deadline {deadline:.0f}` s for the whole run) comes first: its N and "
             "interval are then those drawn.", "",
             "*consistent*: decided exactly when the reported interval excludes α; *contradicts*: a settled "
             "decision on the other side of α from a reference whose interval excludes α (*either*: the "
             "reference's interval contains α, so no decision can contradict it); *within budget*: "
             "wall time and resamples within the budget's.", "",
             "| case | analytic p | reference N | reference p [interval] | side | budget | seed | decision | "
             "resamples | MC interval | seconds | consistent | contradicts | within budget |",
             "|---:|---:|---:|---|---|---|---:|---|---:|---|---:|:-:|:-:|:-:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['analytic']:.4f} | {r['ref_n']:,} | {r['ref_p']:.4f} "
                     f"[{r['ref_low']:.4f}, {r['ref_high']:.4f}] | {r['ref_side']} | {r['budget']} | "
                     f"{r['seed']} | {r['decision']} | {r['n_resamples']:,} | "
                     f"[{r['low']:.4f}, {r['high']:.4f}] | {r['seconds']:.1f} | "
                     f"{'✅' if r['consistent'] else '❌'} | {'❌' if r['contradicts'] else 'no'} | "
                     f"{'✅' if r['within'] else '❌'} |")
    decided = sum(r["decision"] != "undecided" for r in rows)
    refs = {r["case"]: (r["ref_n"], r["ref_seconds"]) for r in rows}
    contradicted = sum(r["contradicts"] for r in rows)
    lines += ["", f"{decided} of {len(rows)} runs decided; {contradicted} contradicted the reference; "
              f"{sum(not r['consistent'] for r in rows)} inconsistent; "
              f"{sum(not r['within'] for r in rows)} exceeded their budget; references: "
              + ", ".join(f"case {c}: {n:,} resamples in {s:.0f} s" for c, (n, s) in refs.items()) + ".", ""]
    (HERE / "results" / "bench_tcal_budget.md").write_text("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
