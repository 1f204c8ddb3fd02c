"""Speed of MCE, ACE and the classical calibration tests at n = 10^6 (binary target), beside MAPIE's
published functions (Spiegelhalter, Kolmogorov–Smirnov, Kuiper: statistic and p-value), statsmodels
(Cox: logistic fit plus score test) and plain numpy references (MCE, ACE, Hosmer–Lemeshow) in the same
run.  Median of ``--repeats`` runs after one warm-up call (JIT compilation excluded), one process.

    python benchmarks/bench_classical.py [--n N] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

import calviz

OUT = Path(__file__).resolve().parent / "results"
TARGET_SECONDS = 0.3


def median_times(fn, repeats: int) -> tuple[float, float]:
    """Median wall-clock and median CPU time (this process) of ``fn`` after one warm-up call.  On a shared,
    loaded machine the CPU time is the robust one: it leaves out the time spent waiting for a core."""
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def numpy_mce(y, z, m=15):
    ids = np.minimum((z * m).astype(np.int64), m - 1)
    count = np.bincount(ids, minlength=m)
    gap = np.bincount(ids, weights=y - z, minlength=m)
    keep = count > 0
    return np.abs(gap[keep] / count[keep]).max()


def numpy_equal_mass_gaps(y, z, m):
    order = np.argsort(z)
    parts = np.array_split(order, m)
    return np.mean([abs(y[p].mean() - z[p].mean()) for p in parts])


def numpy_ace(y, z, m=15):
    return 0.5 * (numpy_equal_mass_gaps(y, z, m) + numpy_equal_mass_gaps(1 - y, 1 - z, m))


def numpy_hosmer_lemeshow(y, z, g=10):
    from scipy import stats

    order = np.argsort(z)
    o, e, c = (np.array([a[p].sum() for p in np.array_split(order, g)]) for a in (y, z, np.ones_like(z)))
    stat = np.sum((o - e) ** 2 / (e * (1 - e / c)))
    return stat, stats.chi2.sf(stat, g)


def statsmodels_cox(y, z):
    import statsmodels.api as sm

    x = np.log(z / (1 - z))
    X = sm.add_constant(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm.Logit(y, X).fit(disp=0)
        return sm.GLM(y, X, family=sm.families.Binomial()).score_test(np.array([0.0, 1.0]), k_constraints=2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    from mapie.metrics import calibration as mapie

    rng = np.random.default_rng(0)
    n = args.n
    z = np.clip(rng.random(n), 1e-9, 1 - 1e-9)
    y = (rng.random(n) < z).astype(np.int64)
    yf = y.astype(np.float64)
    load_before = os.getloadavg()
    rows = [
        ("MCE, 15 bins", lambda: calviz.mce(y, z), "numpy bincount", lambda: numpy_mce(yf, z)),
        ("ACE, 15 bins, 2 classes", lambda: calviz.ace(y, z), "numpy argsort + split",
         lambda: numpy_ace(yf, z)),
        ("Spiegelhalter", lambda: calviz.spiegelhalter_test(y, z), "MAPIE spiegelhalter_p_value",
         lambda: mapie.spiegelhalter_p_value(y, z)),
        ("Hosmer–Lemeshow, 10 groups", lambda: calviz.hosmer_lemeshow_test(y, z), "numpy argsort + split",
         lambda: numpy_hosmer_lemeshow(yf, z)),
        ("Cox (score test + fit)", lambda: calviz.cox_test(y, z), "statsmodels Logit.fit + GLM.score_test",
         lambda: statsmodels_cox(y, z)),
        ("Kolmogorov–Smirnov", lambda: calviz.kolmogorov_smirnov_test(y, z),
         "MAPIE kolmogorov_smirnov_p_value", lambda: mapie.kolmogorov_smirnov_p_value(y, z)),
        ("Kuiper", lambda: calviz.kuiper_test(y, z), "MAPIE kuiper_p_value",
         lambda: mapie.kuiper_p_value(y, z)),
        ("all five tests (classical_tests)", lambda: calviz.classical_tests(y, z), "", None),
    ]
    results = []
    for name, ours, ref_name, ref in rows:
        t_ours = median_times(ours, args.repeats)
        t_ref = median_times(ref, args.repeats) if ref is not None else None
        results.append((name, t_ours, ref_name, t_ref))
        print(name, "wall/cpu ms", [round(t * 1000) for t in t_ours], ref_name,
              "" if t_ref is None else [round(t * 1000) for t in t_ref], flush=True)
    load_after = os.getloadavg()
    lines = [
        "## MCE, ACE and the classical tests: speed", "",
        f"n = {n:,} binary predictions (Z ~ U[0,1], Y ~ Ber(Z)), median of {args.repeats} runs after a "
        f"warm-up call, one process on a {os.cpu_count()}-core machine shared with other jobs; target: each "
        f"under {TARGET_SECONDS} s.  Wall-clock and CPU time (the process's own; on a loaded machine the "
        "wall-clock time also counts waiting for a core).  The reference runs in the same process right "
        "after calviz (MAPIE 1.x functions compute the statistic and the p-value; statsmodels fits the "
        "recalibration model and computes the score test); the ratio is of CPU times.", "",
        f"Command: `python benchmarks/bench_classical.py` · load average before {load_before[0]:.2f}, after "
        f"{load_after[0]:.2f} (1-minute).", "",
        "| measure / test | calviz wall | calviz CPU | CPU under target | reference | reference CPU "
        "| reference / calviz |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (wall, cpu), ref_name, t_ref in results:
        ratio = "—" if t_ref is None else f"{t_ref[1] / cpu:.1f}×"
        ref_txt = "—" if t_ref is None else f"{t_ref[1] * 1000:.0f} ms"
        ok = "(all five)" if t_ref is None else ("yes" if cpu < TARGET_SECONDS else "NO")
        lines.append(f"| {name} | {wall * 1000:.0f} ms | {cpu * 1000:.0f} ms | {ok} | {ref_name or '—'} | "
                     f"{ref_txt} | {ratio} |")
    lines.append("")
    (OUT / "bench_classical.md").write_text("\n".join(lines))
    print(f"wrote {OUT / 'bench_classical.md'}")


if __name__ == "__main__":
    main()
