"""Level of calviz.compare's test of equal calibration at small n, by simulation.

Two equally miscalibrated binary models of the same examples: z ~ U(0, 1), y ~ Bernoulli(z), model a
predicts z + 0.05 and model b z − 0.05 (clipped to [0, 1]), so θ_a = θ_b and H₀ holds.  The paired
statistic and its standard error are those of ``calviz.compare`` (``paired_difference``, 15 equal-width
bins); the test rejects when the two-sided normal p-value is ≤ α = 0.05.  The rejection rate is reported
with its Monte Carlo standard error √(0.05·0.95/R).

Run: ``python benchmarks/compare_small_n.py`` (``--reps 4000``, ``--seed 99``).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import stats

from calviz._comparison import paired_difference


def rejection_rate(n: int, reps: int, rng: np.random.Generator, n_bins: int = 15,
                   alpha: float = 0.05) -> float:
    rejected = 0
    for _ in range(reps):
        z = rng.uniform(size=n)
        y = (rng.uniform(size=n) < z).astype(float)
        d = paired_difference(np.clip(z + 0.05, 0, 1), y, np.clip(z - 0.05, 0, 1), y, n_bins=n_bins)
        rejected += d.se > 0 and 2 * stats.norm.sf(abs(d.difference / d.se)) <= alpha
    return rejected / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    print("| n | rejection rate at α = 0.05 | Monte Carlo s.e. |\n|---|---|---|")
    for n in (100, 300):
        print(f"| {n} | {rejection_rate(n, args.reps, rng):.3f} | {np.sqrt(0.05 * 0.95 / args.reps):.4f} |")
    print(f"\n{args.reps} data sets per row, seed {args.seed}, os.cpu_count() = {os.cpu_count()}, "
          f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
