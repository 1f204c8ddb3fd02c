"""Level of the classical calibration tests under calibration (calviz.classical_tests).

Scenarios: Z ~ U[0, 1] and Z ~ Beta(5, 0.5) with Y ~ Ber(Z) (binary target), and the calibrated K = 2
model of calviz.synthetic.logit_distorted (β = 1) on the top-1 target; n ∈ {500, 5000}; R repetitions
(default 4000).  A test passes iff its rejection rate at α = 0.05 is ≤ α + 2 Monte Carlo s.e.,
s.e. = √(α(1−α)/R).  Hosmer–Lemeshow is run both ways: χ²(g) for held-out predictions (calviz's default)
and χ²(g − 2) (``fitted=True``, the 1980 setting of a model fitted on the same sample) — the latter is
reported to show why it is not the default.

    python benchmarks/classical_level.py [--reps R] [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

import calviz
from calviz import _synthetic as synthetic
from calviz._classical import TEST_NAMES

ALPHA = 0.05
OUT = Path(__file__).resolve().parent / "results"
SCENARIOS = {
    "Z ~ U[0,1] (binary)": lambda n, rng: synthetic.tcal_p0(n, seed=rng),
    "Z ~ Beta(5, 0.5) (binary)": lambda n, rng: synthetic.beta_calibrated(n, seed=rng),
    "K = 2, uniform simplex (top-1)": lambda n, rng: synthetic.logit_distorted(n, seed=rng, beta=1.0),
}
COLUMNS = TEST_NAMES + ("hosmer_lemeshow_g-2",)


def run(reps: int, sizes, seed: int = 2026):
    rng = np.random.default_rng(seed)
    rows = []
    for scenario, make in SCENARIOS.items():
        for n in sizes:
            rejections = dict.fromkeys(COLUMNS, 0)
            t0 = time.perf_counter()
            for _ in range(reps):
                sc = make(n, rng)
                y, z = np.asarray(sc.y_true), np.asarray(sc.y_prob)
                res = calviz.classical_tests(y, z, alpha=ALPHA)
                for t in res.tests:
                    rejections[t.name] += t.rejects(ALPHA)
                fitted = calviz.hosmer_lemeshow_test(y, z, fitted=True)
                rejections["hosmer_lemeshow_g-2"] += fitted.rejects(ALPHA)
            seconds = time.perf_counter() - t0
            rows.append({"scenario": scenario, "n": n, "reps": reps, "seconds": seconds,
                         "rates": {k: v / reps for k, v in rejections.items()}})
            print(scenario, n, {k: round(v / reps, 4) for k, v in rejections.items()}, f"{seconds:.0f} s",
                  flush=True)
    return rows


def render(rows, command: str, load: str) -> str:
    reps = rows[0]["reps"]
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    bound = ALPHA + 2 * se
    labels = {"spiegelhalter": "Spiegelhalter", "hosmer_lemeshow": "HL χ²(g)", "cox": "Cox",
              "kolmogorov_smirnov": "KS", "kuiper": "Kuiper", "hosmer_lemeshow_g-2": "HL χ²(g−2)"}
    lines = [
        "## Classical calibration tests: level under calibration", "",
        f"Rejection rate at α = {ALPHA} over R = {reps} repetitions per row (fixed seed); Monte Carlo s.e. "
        f"√(α(1−α)/R) = {se:.4f}, pass iff rate ≤ α + 2 s.e. = {bound:.4f}.  Hosmer–Lemeshow uses 10 groups "
        "(deciles of risk); calviz's default compares it with χ²(g) because held-out predictions have no "
        "parameter fitted on the sample; the χ²(g − 2) column (`fitted=True`, the 1980 setting) is shown to "
        "explain that default — it over-rejects calibrated held-out predictions.", "",
        f"Command: `{command}` · load average before the run: {load}.", "",
        "| scenario | n | " + " | ".join(labels[c] for c in COLUMNS) + " | all default tests pass |",
        "|---|---|" + "---|" * len(COLUMNS) + "---|",
    ]
    for r in rows:
        cells = [f"{r['rates'][c]:.4f}" + ("" if r["rates"][c] <= bound else " ✗") for c in COLUMNS]
        ok = all(r["rates"][c] <= bound for c in TEST_NAMES)
        lines.append(f"| {r['scenario']} | {r['n']} | " + " | ".join(cells) + f" | {'yes' if ok else 'NO'} |")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--quick", action="store_true", help="100 repetitions, n = 500, written to /tmp")
    args = ap.parse_args()
    reps, sizes = (100, (500,)) if args.quick else (args.reps, (500, 5000))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = run(reps, sizes)
    command = "python benchmarks/classical_level.py" + (f" --reps {args.reps}" if args.reps != 4000 else "")
    out = Path("/tmp") if args.quick else OUT
    (out / "classical_level.json").write_text(json.dumps({"rows": rows, "command": command, "load": load},
                                                         indent=1))
    (out / "classical_level.md").write_text(render(rows, command, load))
    print(f"wrote {out / 'classical_level.md'}")


if __name__ == "__main__":
    main()
