"""Validity of calviz.compare (paired ECE² difference) and calviz.calibration_by_group (Holm) by simulation.

Binary predictions; the true probability is q = σ(1.5 g), g ~ N(0, 1), and y ~ Bernoulli(q).  Models are
maps of q, optionally with noise ε (shared structure between the two models through a correlation ρ):

* ``calibrated pair``: a = q and b = E[q | decile of g] (both exactly calibrated, different) — H₀ true,
  θ_a = θ_b = 0 (the degenerate case).
* ``exchangeable``: a = σ(1.5 logit q + ε_a), b = σ(1.5 logit q + ε_b), sd(ε) = 0.5, corr 0.8 — H₀ true by
  symmetry (θ_a = θ_b > 0).
* ``over vs less over``: a = σ(2 logit q + ε_a), b = σ(1.2 logit q + ε_b), sd 0.3, corr 0.8.
* ``calibrated vs under``: a = q, b = σ(0.8 logit q).
* ``top-1 K=4``: four classes, q = softmax(1.5 G), G ~ N(0, I); a = softmax(3 G) (overconfident) and b = a
  temperature-scaled by 1.6; top-1 target (the two models' correctness indicators differ).

θ = Σ_b P(bin b)(E[q − z | bin b])² (15 equal-width bins of each model's prediction) is computed from
4·10⁶ draws of q (no label noise).  Coverage of the 95 % interval for θ_a − θ_b and the level of the
test of equal calibration are estimated from ``--reps`` data sets per setting and n; pass rule:
coverage ≥ 0.95 − 2 MC s.e., level ≤ 0.05 + 2 MC s.e.  Power: a = q against b = σ(β logit q) with β
chosen so that b's binned ℓ2-ECE is 0.01 … 0.05.

Subgroups: five groups of 10 (too small), 40, 150, 400 and 1000 rows, calibrated in every group; the
family-wise error rate of ``calibration_by_group`` (Holm over the tested groups, α = 0.05) with analytic
and y-only resampling T-Cal; then one group made overconfident (σ(2 logit q)) to show how often it is
rejected and named the worst group.

Run: ``nice python benchmarks/compare_validity.py`` (``--reps 500``) or ``--quick``.
Writes benchmarks/results/compare_validity.{md,png,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import calviz  # noqa: E402
from calviz._comparison import calibration_by_group, compare  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
ALPHA = 0.05
N_BINS = 15
SCALE = 1.5
DECILES = np.quantile(np.random.default_rng(12345).normal(size=2_000_000), np.linspace(0, 1, 11)[1:-1])


def _decile_means() -> np.ndarray:
    """E[q | decile of g] for q = σ(1.5 g), by fine quadrature of the normal density."""
    g = np.linspace(-9, 9, 2_000_001)
    w = np.exp(-0.5 * g * g)
    q = expit(SCALE * g)
    cell = np.searchsorted(DECILES, g)
    return np.bincount(cell, weights=w * q, minlength=10) / np.bincount(cell, weights=w, minlength=10)


DECILE_MEANS = _decile_means()
TOP1 = "top-1 K=4: over vs temperature-scaled"
TOP1_K = 4


def models(setting: str, g: np.ndarray, rng: np.random.Generator, beta: float = 1.0):
    q = expit(SCALE * g)
    if setting == "calibrated pair":
        return q, q, DECILE_MEANS[np.searchsorted(DECILES, g)]
    if setting == "calibrated vs under":
        return q, q, expit(0.8 * SCALE * g)
    if setting == "power":
        return q, q, expit(beta * SCALE * g)
    sd, coef = {"exchangeable": (0.5, (1.5, 1.5)), "over vs less over": (0.3, (2.0, 1.2))}[setting]
    e1 = rng.normal(size=g.shape[0])
    e2 = 0.8 * e1 + 0.6 * rng.normal(size=g.shape[0])
    return q, expit(coef[0] * SCALE * g + sd * e1), expit(coef[1] * SCALE * g + sd * e2)


def _seed(*parts) -> int:
    """A seed that is the same in every run (Python's hash of a string is not)."""
    return zlib.crc32(repr(parts).encode())


def binned_theta(q: np.ndarray, z: np.ndarray) -> float:
    ids = np.minimum((z * N_BINS).astype(np.int64), N_BINS - 1)
    cnt = np.bincount(ids, minlength=N_BINS)
    s = np.bincount(ids, weights=q - z, minlength=N_BINS)
    keep = cnt > 0
    return float(((s[keep] / cnt[keep]) ** 2 * cnt[keep]).sum() / q.shape[0])


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def top1_models(n: int, rng: np.random.Generator):
    """K = 4: q = softmax(1.5 G); a = softmax(3 G) (overconfident), b = a after temperature 1.6."""
    logits = 1.5 * rng.normal(size=(n, TOP1_K))
    return _softmax(logits), _softmax(2.0 * logits), _softmax(2.0 * logits / 1.6)


def top1_theta(q: np.ndarray, z: np.ndarray) -> float:
    """Binned top-1 ECE²: the confidence max z against the probability q[argmax z] that it is right."""
    pred = z.argmax(axis=1)
    rows = np.arange(z.shape[0])
    return binned_theta(q[rows, pred], z[rows, pred])


def true_difference(setting: str, beta: float = 1.0) -> tuple[float, float]:
    rng = np.random.default_rng(2024)
    if setting == TOP1:
        q, a, b = top1_models(2_000_000, rng)
        return top1_theta(q, a), top1_theta(q, b)
    g = rng.normal(size=4_000_000)
    q, a, b = models(setting, g, rng, beta)
    return binned_theta(q, a), binned_theta(q, b)


def draw(setting: str, n: int, rng: np.random.Generator, beta: float = 1.0):
    if setting == TOP1:
        q, a, b = top1_models(n, rng)
        y = (q.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1)  # y ~ Categorical(q)
        return y, a, b
    g = rng.normal(size=n)
    q, a, b = models(setting, g, rng, beta)
    y = (rng.random(n) < q).astype(np.int64)
    return y, a, b


def run_pairs(reps: int, ns: list[int]) -> list[dict]:
    rows = []
    for setting in ("calibrated pair", "exchangeable", "over vs less over", "calibrated vs under", TOP1):
        ta, tb = true_difference(setting)
        target = ta - tb
        for n in ns:
            rng = np.random.default_rng(_seed(setting, n))
            cover = reject = 0
            lengths = []
            for _ in range(reps):
                y, a, b = draw(setting, n, rng)
                c = compare(y, a, b, n_bins=N_BINS, alpha=ALPHA, tcal=False)
                cover += c.low <= target <= c.high
                reject += c.reject
                lengths.append(c.high - c.low)
            rows.append({"setting": setting, "n": n, "theta_a": ta, "theta_b": tb, "target": target,
                         "coverage": cover / reps, "reject": reject / reps,
                         "h0": abs(target) < 1e-12 or setting in ("calibrated pair", "exchangeable"),
                         "mean_length": float(np.mean(lengths)), "reps": reps})
            print(rows[-1], flush=True)
    return rows


def _beta_for_ece(ece: float) -> float:
    from scipy.optimize import brentq

    return brentq(lambda beta: np.sqrt(true_difference("power", beta)[1]) - ece, 1.0, 3.0, xtol=1e-4)


def run_power(reps: int, ns: list[int], eces: list[float]) -> list[dict]:
    rows = []
    for ece in eces:
        beta = _beta_for_ece(ece)
        ta, tb = true_difference("power", beta)
        for n in ns:
            rng = np.random.default_rng(_seed("power", ece, n))
            reject = sum(compare(*draw("power", n, rng, beta), n_bins=N_BINS, alpha=ALPHA, tcal=False).reject
                         for _ in range(reps))
            rows.append({"ece_b": ece, "beta": beta, "theta_a": ta, "theta_b": tb, "n": n,
                         "power": reject / reps, "reps": reps})
            print(rows[-1], flush=True)
    return rows


def run_groups(reps: int) -> list[dict]:
    sizes = [10, 40, 150, 400, 1000]
    labels = np.repeat(np.array(["g10", "g40", "g150", "g400", "g1000"]), sizes)
    rows = []
    for resampling in ("analytic", "y_only"):
        for bad in (None, "g400"):
            rng = np.random.default_rng(7 + (bad is not None))
            any_reject = bad_reject = bad_worst = listed = 0
            for r in range(reps):
                g = rng.normal(size=labels.shape[0])
                q = expit(SCALE * g)
                z = q.copy()
                if bad is not None:
                    z[labels == bad] = expit(2.0 * SCALE * g[labels == bad])
                y = (rng.random(q.shape[0]) < q).astype(np.int64)
                res = calibration_by_group(y, z, labels, alpha=ALPHA, resampling=resampling, seed=r)
                wrong = [x for x in res.rejected if x != bad]
                any_reject += bool(wrong)
                listed += res.too_small == ("g10",) and len(res.groups) == 5
                if bad is not None:
                    bad_reject += bad in res.rejected
                    bad_worst += res.worst_group == bad
            label = "y_only, sequential rule (default)" if resampling == "y_only" else resampling
            rows.append({"resampling": label, "miscalibrated_group": bad, "fwer": any_reject / reps,
                         "bad_rejected": bad_reject / reps if bad else None,
                         "bad_named_worst": bad_worst / reps if bad else None,
                         "small_group_listed": listed / reps, "reps": reps})
            print(rows[-1], flush=True)
    return rows


def _rate(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _se(p: float, reps: int) -> float:
    return float(np.sqrt(p * (1 - p) / reps))


def write(pairs, power, groups, args, seconds) -> None:
    RESULTS.mkdir(exist_ok=True)
    payload = {"pairs": pairs, "power": power, "groups": groups}
    (RESULTS / "compare_validity.json").write_text(json.dumps(payload, indent=1))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=RESULTS.parent.parent).stdout.strip()
    reps = args.reps
    se_cov = _se(1 - ALPHA, reps)
    se_lvl = _se(ALPHA, reps)
    lines = [
        "# Comparing two models and subgroups: coverage, level, power (`calviz.compare`, "
        "`calviz.calibration_by_group`)\n",
        f"Command: `python benchmarks/compare_validity.py{' --quick' if args.quick else ''}"
        f"{' --groups-only' if args.groups_only else ''}` (groups only: the pair and power rows are those of "
        f"the previous full run, kept in compare_validity.json). {reps} data "
        f"sets per row, binary predictions (one top-1 setting, K = 4), {N_BINS} equal-width bins, "
        f"α = {ALPHA} (95 % intervals), single process, os.cpu_count() = {os.cpu_count()}, "
        f"wall time {seconds:.0f} s, load average "
        f"{os.getloadavg()[0]:.1f} at the end (shared machine). calviz {calviz.__version__}, "
        f"commit {commit}.\n",
        "Data: q = σ(1.5 g), g ~ N(0, 1), y ~ Bernoulli(q); models are maps of q (see the script's "
        "docstring). θ = Σ_b P(bin b)(E[q − z | bin b])² of each model's own bins from 4·10⁶ draws of q; "
        "target θ_a − θ_b. "
        f"Pass rule: coverage ≥ {1 - ALPHA:.2f} − 2 s.e. = {1 - ALPHA - 2 * se_cov:.4f} (s.e. {se_cov:.4f}); "
        f"where H₀ (θ_a = θ_b) holds the rejection rate is the level: ≤ {ALPHA} + 2 s.e. = "
        f"{ALPHA + 2 * se_lvl:.4f} (s.e. {se_lvl:.4f}).\n",
        "## Paired interval and test of equal calibration\n",
        "| setting | n | θ_a | θ_b | θ_a − θ_b | coverage | rejection rate | H₀ true | mean length | pass |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in pairs:
        ok = r["coverage"] >= 1 - ALPHA - 2 * se_cov and (not r["h0"] or r["reject"] <= ALPHA + 2 * se_lvl)
        lines.append(f"| {r['setting']} | {r['n']} | {r['theta_a']:.3e} | {r['theta_b']:.3e} | "
                     f"{r['target']:.3e} | {r['coverage']:.3f} | {r['reject']:.3f} | "
                     f"{'yes' if r['h0'] else 'no'} | {r['mean_length']:.2e} | {'yes' if ok else 'NO'} |")
    lines += [
        "",
        "The variance adds the influence-function term and the degenerate pair term (see "
        "`calviz.compare`), so the interval is conservative where both models are calibrated (the "
        "degenerate case).\n",
        "## Power of the test of equal calibration: a calibrated model against b = σ(β logit q)\n",
        "| ECE of b (binned ℓ2) | β | θ_b | n | power |",
        "|---|---|---|---|---|",
    ]
    for r in power:
        lines.append(f"| {r['ece_b']:.2f} | {r['beta']:.3f} | {r['theta_b']:.3e} | {r['n']} | "
                     f"{r['power']:.3f} |")
    lines += [
        "",
        "## Subgroups: family-wise error rate with Holm's correction\n",
        "Groups of 10 (below `min_group_size` = 30: listed as too small, not tested), 40, 150, 400 and 1000 "
        "rows. FWER = share of data sets in which calibration was rejected in a group where it holds; "
        f"pass: ≤ {ALPHA} + 2 s.e. = {ALPHA + 2 * se_lvl:.4f}.\n",
        "| T-Cal resampling | miscalibrated group | FWER | pass | miscalibrated group rejected | "
        "named worst | small group listed |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in groups:
        ok = r["fwer"] <= ALPHA + 2 * se_lvl
        bad = r["miscalibrated_group"] or "none"
        lines.append(f"| {r['resampling']} | {bad} | {r['fwer']:.3f} | {'yes' if ok else 'NO'} | "
                     f"{_rate(r['bad_rejected'])} | {_rate(r['bad_named_worst'])} | "
                     f"{r['small_group_listed']:.3f} |")
    lines += ["", "![coverage, level and power](benchmarks/results/compare_validity.png)", ""]
    (RESULTS / "compare_validity.md").write_text("\n".join(lines))
    _plot(pairs, power, reps)


def _plot(pairs, power, reps) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    labels = [f"{r['setting']}\nn={r['n']}" for r in pairs]
    x = np.arange(len(pairs))
    ax1.bar(x - 0.2, [r["coverage"] for r in pairs], 0.4, label="coverage")
    ax1.bar(x + 0.2, [r["reject"] for r in pairs], 0.4, label="rejection rate")
    se = _se(1 - ALPHA, reps)
    ax1.axhline(1 - ALPHA - 2 * se, color="k", ls="--", lw=0.8, label="0.95 − 2 s.e.")
    ax1.axhline(ALPHA, color="r", ls=":", lw=0.8, label="α")
    ax1.set_xticks(x, labels, rotation=60, ha="right", fontsize=7)
    ax1.set_title("paired interval coverage and test rejection rate")
    ax1.legend(fontsize=7)
    for ece in sorted({r["ece_b"] for r in power}):
        rs = [r for r in power if r["ece_b"] == ece]
        ax2.plot([r["n"] for r in rs], [r["power"] for r in rs], marker="o", label=f"ECE(b) = {ece:.2f}")
    ax2.set_xscale("log")
    ax2.axhline(ALPHA, color="r", ls=":", lw=0.8)
    ax2.set_xlabel("n")
    ax2.set_ylabel("power")
    ax2.set_title("power: calibrated a vs b with known ECE")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "compare_validity.png", dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--groups-only", action="store_true",
                        help="re-run the subgroup rows only; the pair and power rows are read from the last "
                             "results (compare_validity.json)")
    args = parser.parse_args()
    if args.quick:
        args.reps = 40
    t0 = time.perf_counter()
    if args.groups_only:
        stored = json.loads((RESULTS / "compare_validity.json").read_text())
        pairs, power = stored["pairs"], stored["power"]
    else:
        pairs = run_pairs(args.reps, [1000, 10000])
        power = run_power(args.reps, [1000, 3000, 10000], [0.01, 0.02, 0.03, 0.05])
    groups = run_groups(args.reps)
    write(pairs, power, groups, args, time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
