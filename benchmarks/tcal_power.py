"""Power of T-Cal on the oscillating alternative P_{1,m} (seed 000, Sec. 4.1, Fig. 3b, Fig. 4, Example 1,
Sec. 6.1 / Fig. 7).

P_{1,m}: Z ~ U[0,1], Y ~ Ber(g_m(Z)), g_m(z) = z + ρ m^{−s} Σ_j (−1)^j ζ(2mz − m/2 − j) (calviz.synthetic);
larger m = narrower bumps = smaller ℓ2-ECE = harder.  Type II error = fraction of repetitions that do not
reject at α = 0.05.

A (Fig. 3b shape): type II error vs ℓ2-ECE for n ∈ {2000, 5000, 10000}: adaptive T-Cal (y-only resampling
  and analytic), the fixed-scale debiased test at m* = ⌊n^{2/(4s+1)}⌋ and the usual 15-bin ℓ1 plug-in ECE
  test — the last two with oracle Monte Carlo critical values from P₀ (as in the paper).
B (Fig. 4 shape): at m*, debiased ℓ2 (T-Cal) vs biased ℓ2 vs ℓ1 plug-in statistics, oracle critical values.
C (Example 1 / Fig. 2): mean of the biased statistic T^b and of T^d under P₀ and under Example 1's P₁.
D (Sec. 6.1 / Fig. 7): sample-splitting test (calviz.split_tcal) beside T-Cal at n = 20000.

    python benchmarks/tcal_power.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

import calviz
from calviz import synthetic
from calviz.ece import binned_sums, debiased_ece_sq, plugin_ece_l1, plugin_ece_sq

ALPHA = 0.05
# A: slowly decaying amplitude so that fine oscillations keep a sizeable ECE (ρ m^{-s} e^{-4} ≤ 1/4 for m ≥ 2)
S_A, RHO_A, M_A = 0.25, 16.0, (2, 4, 8, 16, 24, 32, 64)
# B, D: s = 1/2, where m* = ⌊n^{2/(4s+1)}⌋ = ⌊n^{2/3}⌋
S, RHO, M_ALT = 0.5, 19.0, (2, 4, 6, 8, 12, 16)
OUT = Path(__file__).resolve().parent / "results"


def stats_at(z, y, m):
    sums = binned_sums(z, y.astype(float), n_bins=m)[0]
    return debiased_ece_sq(sums), plugin_ece_sq(sums), plugin_ece_l1(sums)


def oracle_critical(n, m, sims, rng):
    """95% quantiles under P₀ of (T^d, T^b, ℓ1) at m bins — oracle Monte Carlo (P_Z known)."""
    vals = np.array([stats_at(*xy, m) for xy in (p0(n, rng) for _ in range(sims))])
    return np.quantile(vals, 1 - ALPHA, axis=0, method="higher")


def p0(n, rng):
    sc = synthetic.tcal_p0(n, seed=rng)
    return np.asarray(sc.y_prob), np.asarray(sc.y_true)


def p1(n, m, rng, s=S, rho=RHO):
    sc = synthetic.tcal_p1m(n, seed=rng, m=m, s=s, rho=rho)
    return np.asarray(sc.y_prob), np.asarray(sc.y_true), sc.true_ece


def experiment_a(sizes, reps, sims, rng, log):
    rows = []
    for n in sizes:
        crit_15 = oracle_critical(n, 15, sims, rng)
        for m in M_A:
            miss = {"adaptive T-Cal (y-only)": 0, "adaptive T-Cal (analytic)": 0,
                    "ℓ1 plug-in, 15 bins (oracle)": 0}
            t0 = time.perf_counter()
            for rep in range(reps):
                z, y, ece = p1(n, m, rng, S_A, RHO_A)
                miss["adaptive T-Cal (y-only)"] += not calviz.adaptive_tcal(y, z, seed=rep).reject
                analytic = calviz.adaptive_tcal(y, z, resampling="analytic")
                miss["adaptive T-Cal (analytic)"] += not analytic.reject
                miss["ℓ1 plug-in, 15 bins (oracle)"] += not stats_at(z, y, 15)[2] > crit_15[2]
            for name, k in miss.items():
                rows.append((n, m, ece, name, k / reps, reps))
            log(f"A n={n} m={m} ece={ece:.4f} " + ", ".join(f"{k}: {v / reps:.2f}" for k, v in miss.items())
                + f" ({time.perf_counter() - t0:.0f} s)")
    return rows


def experiment_b(n, reps, sims, rng, log):
    m_star = math.floor(n ** (2 / (4 * S + 1)) + 1e-9)
    crit = oracle_critical(n, m_star, sims, rng)
    rows = []
    for m in M_ALT:
        miss = np.zeros(3)
        for _ in range(reps):
            z, y, ece = p1(n, m, rng)
            miss += ~(np.array(stats_at(z, y, m_star)) > crit)
        for name, k in zip(("debiased ℓ2 (T-Cal)", "biased ℓ2", "ℓ1"), miss, strict=True):
            rows.append((n, m, ece, name, k / reps, reps))
        log(f"B n={n} m={m} ece={ece:.4f} type II (debiased, biased, l1) = {np.round(miss / reps, 3)}")
    return rows, m_star


def experiment_c(n, reps, rng, log):
    s_ex = 0.3
    sc = synthetic.tcal_example1(n, seed=rng, s=s_ex, rho=100.0)
    m = sc.params["m"]
    vals = {"P0": [], "P1": []}
    for _ in range(reps):
        z, y = p0(n, rng)
        vals["P0"].append(stats_at(z, y, m)[:2])
        e1 = synthetic.tcal_example1(n, seed=rng, s=s_ex, rho=100.0)
        vals["P1"].append(stats_at(np.asarray(e1.y_prob), np.asarray(e1.y_true), m)[:2])
    out = {k: np.array(v) for k, v in vals.items()}
    log(f"C n={n} m*={m}: mean T^b P0 {out['P0'][:, 1].mean():.5f} P1 {out['P1'][:, 1].mean():.5f}; "
        f"mean T^d P0 {out['P0'][:, 0].mean():.6f} P1 {out['P1'][:, 0].mean():.6f}")
    return out, m, sc.true_ece


def experiment_d(n, reps, sims, rng, log):
    m_star = math.floor(n ** (2 / (4 * S + 1)) + 1e-9)
    crit = oracle_critical(n, m_star, sims, rng)
    rows = []
    for m in M_ALT:
        miss = {"split_tcal (Alg. 3)": 0, "adaptive T-Cal (analytic)": 0, "debiased, m* (oracle)": 0}
        for rep in range(reps):
            z, y, ece = p1(n, m, rng)
            miss["split_tcal (Alg. 3)"] += not calviz.split_tcal(y, z, seed=rep).reject
            miss["adaptive T-Cal (analytic)"] += not calviz.adaptive_tcal(y, z, resampling="analytic").reject
            miss["debiased, m* (oracle)"] += not stats_at(z, y, m_star)[0] > crit[0]
        for name, k in miss.items():
            rows.append((n, m, ece, name, k / reps, reps))
        log(f"D n={n} m={m} ece={ece:.4f} " + ", ".join(f"{k}: {v / reps:.2f}" for k, v in miss.items()))
    return rows


def plot(rows_a, rows_b, ex_c, rows_d, sizes):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    colors = dict(zip(sizes, ("tab:blue", "tab:orange", "tab:green"), strict=False))
    for n in sizes:
        for name, style in (("adaptive T-Cal (y-only)", "-o"), ("ℓ1 plug-in, 15 bins (oracle)", "--s")):
            pts = sorted((e, t) for nn, _, e, nm, t, _ in rows_a if nn == n and nm == name)
            ax.plot(*zip(*pts, strict=True), style, color=colors[n], label=f"{name}, n={n}", ms=4)
    ax.set_xscale("log")
    ax.set_xlabel("ℓ2-ECE of P_{1,m}")
    ax.set_ylabel("type II error")
    ax.set_title("Fig. 3b shape: T-Cal improves with n, the 15-bin ℓ1 test does not")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(OUT / "tcal_power_fig3b.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, style in (("debiased ℓ2 (T-Cal)", "-o"), ("biased ℓ2", "--s"), ("ℓ1", ":^")):
        pts = sorted((e, t) for _, _, e, nm, t, _ in rows_b if nm == name)
        ax.plot(*zip(*pts, strict=True), style, label=name)
    ax.set_xscale("log")
    ax.set_xlabel("ℓ2-ECE of P_{1,m}")
    ax.set_ylabel("type II error")
    ax.set_title("Fig. 4 shape: statistics at m*, oracle critical values")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "tcal_power_fig4.png", dpi=120)
    plt.close(fig)

    vals, m, _ = ex_c
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, col, name in ((axes[0], 1, "biased T^b"), (axes[1], 0, "debiased T^d")):
        for key, color in (("P0", "tab:blue"), ("P1", "tab:red")):
            ax.hist(vals[key][:, col], bins=40, alpha=0.5, color=color, label=key)
            ax.axvline(vals[key][:, col].mean(), color=color, ls="--")
        ax.set_title(f"Example 1, {name} at m* = {m}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "tcal_power_example1.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, style in (("split_tcal (Alg. 3)", "--s"), ("adaptive T-Cal (analytic)", "-o"),
                        ("debiased, m* (oracle)", ":^")):
        pts = sorted((e, t) for _, _, e, nm, t, _ in rows_d if nm == name)
        ax.plot(*zip(*pts, strict=True), style, label=name)
    ax.set_xscale("log")
    ax.set_xlabel("ℓ2-ECE of P_{1,m}")
    ax.set_ylabel("type II error")
    ax.set_title("Fig. 7 shape: sample splitting vs T-Cal")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "tcal_power_split.png", dpi=120)
    plt.close(fig)


def table(rows, title):
    ms = sorted({r[1] for r in rows})
    names = list(dict.fromkeys(r[3] for r in rows))
    ns = sorted({r[0] for r in rows})
    lines = [f"**{title}** (type II error; reps per cell: {rows[0][5]})", "",
             "| n | test | " + " | ".join(f"m={m} (ECE {next(r[2] for r in rows if r[1] == m):.4f})"
                                       for m in ms) + " |",
             "|---|---|" + "---|" * len(ms)]
    for n in ns:
        for name in names:
            vals = {r[1]: r[4] for r in rows if r[0] == n and r[3] == name}
            if vals:
                lines.append(f"| {n} | {name} | " + " | ".join(f"{vals[m]:.2f}" for m in ms) + " |")
    return lines + [""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    quick = args.quick
    reps_a, reps_b, reps_c, reps_d, sims = (10, 20, 30, 5, 100) if quick else (100, 200, 300, 50, 1000)
    sizes = (2000, 5000) if quick else (2000, 5000, 10000)
    cmd = "python benchmarks/" + Path(__file__).name + " " + " ".join(sys.argv[1:])
    print(f"{cmd}\ncpu_count={os.cpu_count()}", flush=True)
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(2023)
    t0 = time.perf_counter()
    log_lines = []

    def log(msg):
        print(msg, flush=True)
        log_lines.append(msg)

    rows_a = experiment_a(sizes, reps_a, sims, rng, log)
    rows_b, m_star_b = experiment_b(10000 if not quick else 5000, reps_b, sims, rng, log)
    ex_c = experiment_c(10000 if not quick else 5000, reps_c, rng, log)
    rows_d = experiment_d(20000 if not quick else 5000, reps_d, sims // 2, rng, log)
    plot(rows_a, rows_b, ex_c, rows_d, sizes)
    vals, m_c, ece_c = ex_c
    se = lambda a: a.std(ddof=1) / math.sqrt(a.shape[0])  # noqa: E731
    lines = [
        "# T-Cal power on P_{1,m} (seed 000 Sec. 4.1, Figs. 3b, 4, 7; Example 1)",
        "",
        f"Command: `{cmd}`; os.cpu_count() = {os.cpu_count()}; wall time {time.perf_counter() - t0:.0f} s. "
        f"P_{{1,m}} with s = {S_A}, ρ = {RHO_A} in A and s = {S}, ρ = {RHO} in B, D; α = {ALPHA}; "
        f"oracle critical values from {sims} P₀ simulations "
        "(D: half as many). Adaptive T-Cal uses its defaults (y-only: max(999, ⌈2B/α⌉) resamples).",
        "",
    ]
    lines += table(rows_a, "A. Fig. 3b shape — type II error vs ℓ2-ECE") + [
        "![fig3b](tcal_power_fig3b.png)", ""]
    lines += table(rows_b, f"B. Fig. 4 shape — statistics at m* = {m_star_b}, oracle critical values") + [
        "![fig4](tcal_power_fig4.png)", ""]
    lines += [
        f"**C. Example 1** (n = {10000 if not quick else 5000}, s = 0.3, ρ = 100, m* = {m_c}, "
        f"ℓ2-ECE(P₁) = {ece_c:.4f}; {vals['P0'].shape[0]} reps; mean ± s.e.)",
        "",
        "| statistic | mean under P₀ | mean under P₁ (miscalibrated) |",
        "|---|---|---|",
        f"| biased T^b | {vals['P0'][:, 1].mean():.6f} ± {se(vals['P0'][:, 1]):.6f} | "
        f"{vals['P1'][:, 1].mean():.6f} ± {se(vals['P1'][:, 1]):.6f} |",
        f"| debiased T^d | {vals['P0'][:, 0].mean():.6f} ± {se(vals['P0'][:, 0]):.6f} | "
        f"{vals['P1'][:, 0].mean():.6f} ± {se(vals['P1'][:, 0]):.6f} |",
        "",
        "![example1](tcal_power_example1.png)",
        "",
    ]
    lines += table(rows_d, "D. Sample splitting (Sec. 6.1) beside T-Cal")
    lines += ["![split](tcal_power_split.png)", ""]
    lines += ["Log:", "", "```", *log_lines, "```"]
    (OUT / "tcal_power.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT / 'tcal_power.md'}", flush=True)


if __name__ == "__main__":
    main()
