"""Benchmark: the distance-to-calibration family (calviz.distance) against named alternatives, same run.

    python benchmarks/bench_distance.py           # full sizes (smCE 2^15 and 1e6, kCE 1e7, SintCE 1e6, ...)
    python benchmarks/bench_distance.py --quick   # smoke run (smaller n, fewer repeats)

* smce: exact O(n log n) DP (numba) vs scipy HiGHS on the LP at n = 2^12, and vs a plain-Python
  version of the same dynamic program (written below) at n = 2^12.  Data: the Table 3 setup of Hu et al.
  (2024) (v ~ U[0, 0.99], y ~ Ber(v + 0.01)).
* laplace_kce: exact O(n log n) recursion vs the paper's estimator (10n random pairs, numpy) and,
  at n = 2^12, vs the exact O(n²) double sum (numpy).
* sintce: exact (all shifts, all scales until the exact stopping rule) vs the paper's estimator with
  m random shifts per scale (numpy), at the same n.
* distance_bounds (no bootstrap) at n = 1e5.

Times are medians of repeated runs after JIT warm-up, single process; each call includes input
validation and sorting.  Writes benchmarks/results/bench_distance.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import calviz  # noqa: E402
from calviz._synthetic import shifted_uniform  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def median_time(fn, repeats):
    times = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


# ------------------------------------------------------------------------------------------------
# alternatives
# ------------------------------------------------------------------------------------------------
def smce_highs(v, y):
    """smCE by scipy's HiGHS on the LP max Σ r_i x_i, |x_i| ≤ 1, |x_i − x_{i+1}| ≤ v_{i+1} − v_i."""
    order = np.argsort(v, kind="stable")
    v, r = v[order], (y - v)[order]
    n = v.size
    d = np.diff(v)
    rows = np.repeat(np.arange(n - 1), 2)
    cols = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1).ravel()
    diff = sparse.csr_matrix((np.tile([1.0, -1.0], n - 1), (rows, cols)), shape=(n - 1, n))
    res = linprog(-r, A_ub=sparse.vstack([diff, -diff]), b_ub=np.concatenate([d, d]),
                  bounds=[(-1, 1)] * n, method="highs")
    return -res.fun / n


def smce_plain_python(v, y):
    """The same conjugate dynamic program as calviz's kernel, in plain Python (lists, Fenwick trees)."""
    pairs = sorted(zip(v.tolist(), y.tolist(), strict=True))
    vs = [p[0] for p in pairs]
    b = [p[1] - p[0] for p in pairs]
    n = len(vs)
    prefix = [0.0]
    for x in b:
        prefix.append(prefix[-1] + x)
    pos = [-prefix[j] for j in range(n)]
    order = sorted(range(n), key=pos.__getitem__)
    rank = [0] * n
    for r, j in enumerate(order):
        rank[j] = r
    sorted_pos = [pos[j] for j in order]
    fm = [0.0] * (n + 1)
    fl = [0] * (n + 1)
    mass = [0.0] * n
    top = 1
    while top * 2 <= n:
        top *= 2

    def add(i, dm, dl):
        i += 1
        while i <= n:
            fm[i] += dm
            fl[i] += dl
            i += i & -i

    def prefix_mass(c):
        s = 0.0
        while c > 0:
            s += fm[c]
            c -= c & -c
        return s

    def kth(k):
        p, step = 0, top
        while step:
            if p + step <= n and fl[p + step] < k:
                p += step
                k -= fl[p]
            step >>= 1
        return p

    import bisect

    mass[rank[0]] = 2.0
    add(rank[0], 2.0, 1)
    live = 1
    lo, hi = [0.0] * n, [0.0] * n
    for i in range(n):
        if i:
            d = vs[i] - vs[i - 1]
            if d > 0:
                k = rank[i]
                mass[k] = 2 * d
                add(k, 2 * d, 1)
                live += 1
                for side in (0, 1):
                    rem = d
                    while rem > 0 and live:
                        k = kth(1 if side == 0 else live)
                        if mass[k] <= rem:
                            rem -= mass[k]
                            add(k, -mass[k], -1)
                            mass[k] = 0.0
                            live -= 1
                        else:
                            mass[k] -= rem
                            add(k, -rem, 0)
                            rem = 0.0
        q = -prefix[i + 1]
        s_minus = -1 + prefix_mass(bisect.bisect_left(sorted_pos, q))
        s_plus = -1 + prefix_mass(bisect.bisect_right(sorted_pos, q))
        lo[i], hi[i] = min(max(-s_plus, -1), 1), min(max(-s_minus, -1), 1)
    x = [0.0] * n
    x[-1] = min(max(0.0, lo[-1]), hi[-1])
    for i in range(n - 2, -1, -1):
        d = vs[i + 1] - vs[i]
        t = min(max(x[i + 1], lo[i]), hi[i])
        x[i] = min(max(t, x[i + 1] - d), x[i + 1] + d)
    return sum(bi * xi for bi, xi in zip(b, x, strict=True)) / n


def kce_sampled(v, y, rng, pairs_per_sample=10):
    """Seed 004 Sec. 8.4: average of 10n random terms of the double sum (squared kCE)."""
    n = v.size
    m = pairs_per_sample * n
    i = rng.integers(0, n, m)
    j = rng.integers(0, n, m)
    r = y - v
    return float(np.mean(r[i] * r[j] * np.exp(-np.abs(v[i] - v[j]))))


def kce_double_sum(v, y):
    r = y - v
    return float(r @ np.exp(-np.abs(v[:, None] - v[None, :])) @ r) / v.size ** 2


def sintce_sampled(v, y, rng, eps=0.01, shifts=100):
    """Seed 004 Sec. 6.2 estimator: scales k = 0..k* (ε/4 < 2^-k* ≤ ε/2), m random shifts each."""
    r = y - v
    n = v.size
    k_star = int(np.ceil(np.log2(2 / eps)))
    best = np.inf
    for k in range(k_star + 1):
        w = 2.0 ** -k
        vals = []
        for s in rng.random(shifts) * w:
            ids = np.floor((v - s) / w).astype(np.int64) + 1
            vals.append(np.abs(np.bincount(ids, r)).sum() / n)
        best = min(best, float(np.mean(vals)) + w)
    return best


# ------------------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    quick = args.quick
    reps = 3 if quick else 7
    rng = np.random.default_rng(0)

    def data(n, seed=1):
        sc = shifted_uniform(n, seed=seed, epsilon=0.01)
        return np.asarray(sc.y_true, float), np.asarray(sc.y_prob, float)

    # JIT warm-up of every kernel
    y0, v0 = data(200)
    calviz.distance_bounds(y0, v0)
    calviz.rintce(y0, v0, width=0.1)

    rows = []  # (workload, n, calviz s, alternative, alt s, ratio, target)

    # smCE
    n_small = 2 ** 12
    y, v = data(n_small)
    t_cv, res = median_time(lambda: calviz.smce(y, v), reps)
    t_lp, val_lp = median_time(lambda: smce_highs(v, y), 3)
    t_py, val_py = median_time(lambda: smce_plain_python(v, y), 1 if quick else 3)
    assert abs(val_lp - res.value) < 1e-9 and abs(val_py - res.value) < 1e-9, (res.value, val_lp, val_py)
    rows.append(("smce", n_small, t_cv, "scipy linprog (HiGHS) on the smCE LP", t_lp, "—"))
    rows.append(("smce", n_small, t_cv, "same DP in plain Python", t_py, "—"))
    for n, target in ((2 ** 15, 0.05), (10 ** 5 if quick else 10 ** 6, 2.0 if not quick else None)):
        y, v = data(n)
        t_cv, res = median_time(lambda y=y, v=v: calviz.smce(y, v), reps if n < 10 ** 6 else 5)
        alt, t_alt = "", None
        # Hu et al. (2024), Table 3 column: 10.6 s plain Python, 2.05 s PyPy for its O(n log² n) DP
        if n == 2 ** 15:
            t_alt, val_py = median_time(lambda y=y, v=v: smce_plain_python(v, y), 1)
            assert abs(val_py - res.value) < 1e-9
            alt = "same DP in plain Python"
        rows.append(("smce", n, t_cv, alt, t_alt, target))

    # Laplace kCE
    y, v = data(n_small)
    t_cv, res = median_time(lambda: calviz.laplace_kce(y, v, squared=True), reps)
    t_ds, ref = median_time(lambda: kce_double_sum(v, y), 3)
    assert abs(ref - res.value) <= 1e-10 * abs(ref)
    rows.append(("laplace_kce (exact)", n_small, t_cv, "exact O(n²) double sum (numpy)", t_ds, "—"))
    n_big = 10 ** 6 if quick else 10 ** 7
    y, v = data(n_big)
    t_cv, _ = median_time(lambda: calviz.laplace_kce(y, v), reps)
    n_alt = min(n_big, 10 ** 6)
    t_sa, _ = median_time(lambda: kce_sampled(v[:n_alt], y[:n_alt], rng), 3)
    alt = f"Błasiok et al. (2023) §8.4 sampled, 10n pairs (numpy, n = {n_alt:,})"
    rows.append(("laplace_kce (exact)", n_big, t_cv, alt, t_sa * n_big / n_alt, None if quick else 3.0))

    # SintCE
    n_si = 10 ** 5 if quick else 10 ** 6
    y, v = data(n_si)
    t_cv, res = median_time(lambda: calviz.sintce(y, v), reps)
    t_sa, _ = median_time(lambda: sintce_sampled(v, y, rng, shifts=20 if quick else 100), 1)
    shifts = 20 if quick else 100
    alt = f"Błasiok et al. (2023) §6.2 estimator, ε = 0.01, m = {shifts} shifts per scale (numpy)"
    rows.append(("sintce (exact)", n_si, t_cv, alt, t_sa, None if quick else 3.0))
    levels = res.rintce_values.size

    # lower dCE LP and distance_bounds
    y, v = data(10 ** 5)
    t_lp, _ = median_time(lambda: calviz.lower_dce(y, v), reps)
    rows.append(("lower_dce (HiGHS LP, ε = 1e-3)", 10 ** 5, t_lp, "", None, None))
    t_b, _ = median_time(lambda: calviz.distance_bounds(y, v), reps)
    rows.append(("distance_bounds (no bootstrap)", 10 ** 5, t_b, "", None, 1.0))

    cmd = "python benchmarks/bench_distance.py" + (" --quick" if quick else "")
    lines = [
        "# bench_distance — smCE, dCE_lower, SintCE, kCE and the distance bounds",
        "",
        f"Command: `{cmd}` · `os.cpu_count()` = {os.cpu_count()} · Python {platform.python_version()} · "
        f"numpy {np.__version__} · medians of {reps} runs after JIT warm-up (plain Python / LP: 1–3 runs), "
        "single process; every calviz call includes validation and sorting.",
        "",
        "**Caveat:** measured on a shared 2-core machine while other jobs were running tests and "
        "benchmarks, so absolute timings are pessimistic (repeat on a quiet machine).",
        "",
        "Data: the setup of Hu et al. (2024) (v ~ U[0, 0.99], y ~ Ber(v + 0.01)) from "
        "`calviz.synthetic.shifted_uniform`. "
        "The smCE DP, the HiGHS LP and the plain-Python DP agree to < 1e-9 (asserted in the run); the exact "
        "kCE agrees with the O(n²) double sum to 1e-10 relative.",
        "",
        "| workload | n | calviz (s) | alternative | alternative (s) | alternative / calviz | target (s) |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for name, n, t, alt, t_alt, target in rows:
        ratio = f"{t_alt / t:,.1f}" if t_alt is not None else "—"
        alt_s = f"{t_alt:.4f}" if t_alt is not None else "—"
        if target in (None, "—"):
            tgt = "—"
        else:
            tgt = f"< {target:g} {'✅' if t < target else '❌'}"
        lines.append(f"| {name} | {n:,} | {t:.4f} | {alt or '—'} | {alt_s} | {ratio} | {tgt} |")
    lines += [
        "",
        f"SintCE at n = {n_si:,} evaluated {levels} dyadic scales before the exact stopping rule fired "
        "(RintCE(2^-k) is nondecreasing in k, so once it reaches the best RintCE + width no finer scale "
        "can win). Seed 001 reports 2.05 s at n = 2^15 for its best (PyPy) implementation of its DP and "
        "245 s for CVXPY (Table 3). The sampled kCE alternative's time is scaled linearly from n = 10^6 when "
        "n = 10^7.",
        "",
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_distance.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
